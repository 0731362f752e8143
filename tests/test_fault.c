/*
 * test_fault.c — every allocation failing in turn in commit, merge and
 * search (SQLite's fts5fault*.test, curl's torture mode). For n = 0, 1,
 * 2, ... the operation runs with the nth allocation and every one after it
 * refused (fa_alloc_fail_after), until a run ends without meeting the
 * countdown. Each run must end in FATHOM_OK or FATHOM_ENOMEM, never a
 * crash or a leak (make sanitize runs this with leak detection), and leave
 * an index that, reopened without faults, passes fathom_verify and answers
 * as the commit before or the commit after, nothing in between. The handle
 * stays usable: a writer retries (after a rollback when its staged changes
 * were lost), a reader answers the next search correctly.
 */
#include <unistd.h>

#include "fathom.h"
#include "serve/serve.h"
#include "test.h"
#include "util/util.h"

/* Each loop stops long before this; it only guards against a loop that
 * never ends because an operation keeps meeting the countdown. */
#define MAX_RUNS 20000

/* The queries whose answers tell one commit from another: plain terms,
 * an identifier (a hard filter), a glossary expansion, a phrase. */
static const char *const queries[] = {
	"session tokens", "TC-1001", "auth", "walrus", "\"expired token\"", "clams OR tls",
};
#define NQUERIES (sizeof queries / sizeof queries[0])

static void add(fathom_index *w, const char *id, const char *body)
{
	fathom_doc d = { id, "Title", body, strlen(body), NULL, NULL, 0, NULL, 0, NULL };
	CHECK_OK(fathom_add_doc(w, &d, NULL));
}

/* The answer to one query as text: ids, snippets, highlights, receipts. */
static void describe(char *out, size_t cap, const fathom_results *r)
{
	size_t n = 0;
	n += (size_t)snprintf(out + n, cap - n, "[%s]", fathom_results_parsed(r));
	for (size_t i = 0; i < fathom_results_nidents(r) && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, " id:%s/%d", fathom_results_ident(r, i)->key,
		                      fathom_results_ident(r, i)->applied);
	for (size_t i = 0; i < fathom_results_nexpansions(r) && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, " gloss:%s/%zu",
		                      fathom_results_expansion(r, i)->text,
		                      fathom_results_expansion(r, i)->n_aliases);
	for (size_t i = 0; i < fathom_results_count(r) && n < cap; i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		n += (size_t)snprintf(out + n, cap - n, " %s:%s:%u", h->doc_id, h->snippet,
		                      h->n_highlights);
	}
	if (n < cap)
		snprintf(out + n, cap - n, " why:%s\n", fathom_results_why(r));
}

static const fathom_search_opts *search_opts(void)
{
	static fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.k = 20;
	return &so;
}

/* Every query's answer, one line each, into out; "" on an error. */
static void answers(char *out, size_t cap, fathom_index *ix)
{
	size_t n = 0;
	out[0] = '\0';
	for (size_t q = 0; q < NQUERIES; q++) {
		fathom_results *r = NULL;
		int rc = fathom_search(&r, ix, queries[q], search_opts());
		CHECK_OK(rc);
		if (rc) {
			out[0] = '\0';
			return;
		}
		describe(out + n, cap - n, r);
		n += strlen(out + n);
		fathom_results_free(r);
	}
}

/* The first commit: two segments (a merge has work), a glossary group. */
/* With big_base, each commit of the base also adds a long document, so
 * that each segment has a text dictionary and a merge copies their frames
 * (the copy path of merge.c) instead of recompressing. */
static int big_base;

static void add_long(fathom_index *w, const char *id, unsigned seed)
{
	static const char *const words[] = { "kernel", "mutex", "spin", "lock", "queue",
	                                     "buffer", "driver", "probe", "page", "ring" };
	size_t cap = 300u << 10, n = 0;
	char *text = malloc(cap + 16);
	if (!text)
		return;
	while (n < cap) {
		seed = seed * 1103515245u + 12345u;
		const char *wd = words[(seed >> 16) % (sizeof words / sizeof *words)];
		size_t l = strlen(wd);
		memcpy(text + n, wd, l);
		n += l;
		text[n++] = (seed >> 8) % 9 ? ' ' : '\n';
	}
	fathom_doc d = { id, "Long", text, n, NULL, NULL, 0, NULL, 0, NULL };
	CHECK_OK(fathom_add_doc(w, &d, NULL));
	free(text);
}

static void build_base(const char *dir)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	fathom_index *w;
	CHECK_OK(fathom_open(&w, dir, &oo));
	add(w, "a", "The login service validates session tokens. Authentication first.");
	add(w, "b", "TC-1001 covers an expired token in AuthService.");
	add(w, "c", "the walrus eats clams");
	if (big_base)
		add_long(w, "long1", 1);
	const char *g[] = { "auth", "authentication" };
	CHECK_OK(fathom_glossary_add(w, g, 2, NULL));
	CHECK_OK(fathom_commit(w));
	add(w, "d", "Transport Layer Security (TLS) protects session tokens on the wire.");
	add(w, "e", "the walrus sleeps; auth is checked by TC-1001");
	if (big_base)
		add_long(w, "long2", 2);
	CHECK_OK(fathom_commit(w));
	fathom_close(w);
}

/* The changes of the second commit: adds, a replacement, deletes, and a
 * glossary change. */
static void stage_changes(fathom_index *w)
{
	add(w, "f", "a walrus swims past the expired token");
	add(w, "b", "TC-1001 now covers a revoked session token");
	CHECK_OK(fathom_delete_doc(w, "c"));
	CHECK_OK(fathom_delete_doc(w, "d"));
	const char *g[] = { "token", "credential" };
	CHECK_OK(fathom_glossary_add(w, g, 2, NULL));
	CHECK_OK(fathom_glossary_remove(w, "authentication"));
}

static fathom_index *open_writer(const char *dir)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_WRITE;
	fathom_index *w = NULL;
	CHECK_OK(fathom_open(&w, dir, &oo));
	return w;
}

/* Reopen without faults: verify, and the answers as one of the commits
 * (0: before, 1: after; -1: neither). */
static int which_commit(const char *dir, const char *before, const char *after, long n)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	fathom_index *r = NULL;
	int rc = fathom_open(&r, dir, &oo);
	CHECK_OK(rc);
	if (rc)
		return -1;
	rc = fathom_verify(r);
	if (rc)
		fprintf(stderr, "  run %ld: verify: %s\n", n, fathom_errmsg());
	CHECK_OK(rc);
	static char got[16384];
	answers(got, sizeof got, r);
	fathom_close(r);
	if (strcmp(got, after) == 0)
		return 1;
	if (strcmp(got, before) == 0)
		return 0;
	fprintf(stderr, "  run %ld: the index answers as neither commit:\n%s", n, got);
	return -1;
}

/* The answers before and after an operation, from a run without faults. */
static void reference(const char *dir, char *before, char *after, size_t cap,
                      int (*op)(fathom_index *w, int stage))
{
	build_base(dir);
	fathom_index *w = open_writer(dir);
	if (!w)
		return;
	answers(before, cap, w);
	CHECK_OK(op(w, 0));
	CHECK_OK(op(w, 1));
	answers(after, cap, w);
	fathom_close(w);
	test_rmrf(dir);
}

/* Run op on a fresh copy of the base with allocations failing in turn:
 * op(w, 0) prepares without faults, op(w, 1) is the operation under test. */
static void fail_each_allocation(const char *tag, int (*op)(fathom_index *w, int stage),
                                 int may_be_unchanged)
{
	static char before[16384], after[16384];
	char *dir = test_tmpdir(tag);
	reference(dir, before, after, sizeof before, op);
	CHECK(before[0] && after[0]);
	CHECK(may_be_unchanged || strcmp(before, after) != 0);
	long n, enomem = 0;
	int failed_before = test_failed_checks;
	for (n = 0; n < MAX_RUNS; n++) {
		build_base(dir);
		fathom_index *w = open_writer(dir);
		if (!w)
			break;
		op(w, 0);
		fa_alloc_fail_after(n);
		int rc = op(w, 1);
		long hit = fa_alloc_failed();
		fa_alloc_fail_after(-1);
		if (rc != 0 && rc != FATHOM_ENOMEM)
			fprintf(stderr, "  run %ld: %s (%s)\n", n, fathom_strerror(rc), fathom_errmsg());
		CHECK(rc == 0 || rc == FATHOM_ENOMEM);
		enomem += rc == FATHOM_ENOMEM;
		/* the handle stays usable: the operation again, without faults,
		 * succeeds, or (a commit whose staged changes were lost) says
		 * so until a rollback, after which the writer works */
		int again = rc ? op(w, 1) : 0;
		if (again) {
			CHECK_EQ(again, FATHOM_ENOMEM);
			CHECK_OK(fathom_rollback(w));
			CHECK_OK(op(w, 1));
		}
		fathom_close(w);
		int state = which_commit(dir, before, after, n);
		CHECK(state >= 0);
		if (!again)
			CHECK_EQ(state, 1);   /* a success, or its retry, is the new commit */
		test_rmrf(dir);
		if (test_failed_checks != failed_before) {
			fprintf(stderr, "  %s: run %ld failed\n", tag, n);
			break;
		}
		if (!hit) {
			CHECK_OK(rc);
			break;
		}
	}
	CHECK(n < MAX_RUNS);
	CHECK(enomem > 0);
	printf("     %s: %ld runs, %ld ended in FATHOM_ENOMEM\n", tag, n + 1, enomem);
	free(dir);
}

static int op_commit(fathom_index *w, int stage)
{
	if (stage == 0) {
		stage_changes(w);
		return 0;
	}
	return fathom_commit(w);
}

static void test_commit_faults(void)
{
	fail_each_allocation("fault-commit", op_commit, 0);
}

static int op_optimize(fathom_index *w, int stage)
{
	return stage == 1 ? fathom_optimize(w) : 0;
}

static void test_merge_faults(void)
{
	fail_each_allocation("fault-merge", op_optimize, 1);
}

/* The same over segments with text dictionaries: the merge copies their
 * frames and dictionaries (docs/FORMAT.md 5.4). */
/* Whether a segment file of dir names the section tag (its directory
 * entry holds the four bytes): the copy path writes TDCS. */
static int dir_has_tag(const char *dir, const char *tag)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "grep -qa %s %s/seg-*.fseg", tag, dir);
	return system(cmd) == 0;
}

static void test_merge_copy_faults(void)
{
	big_base = 1;
	/* the base's two segments each have a dictionary of their own, so a
	 * merge copies their frames and keeps both (TDCS) */
	char *dir = test_tmpdir("fault-copy-check");
	build_base(dir);
	fathom_index *w = open_writer(dir);
	CHECK(!dir_has_tag(dir, "TDCS"));
	CHECK_OK(fathom_optimize(w));
	fathom_close(w);
	CHECK(dir_has_tag(dir, "TDCS"));
	test_rmrf(dir);
	free(dir);
	fail_each_allocation("fault-merge-copy", op_optimize, 1);
	big_base = 0;
}

static void test_search_faults(void)
{
	char *dir = test_tmpdir("fault-search");
	build_base(dir);
	fathom_index *w = open_writer(dir);   /* a tombstone to skip, too */
	if (w) {
		CHECK_OK(fathom_delete_doc(w, "c"));
		CHECK_OK(fathom_commit(w));
		fathom_close(w);
	}
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	fathom_index *r = NULL;
	CHECK_OK(fathom_open(&r, dir, &oo));
	if (!r)
		return;
	static char want[NQUERIES][4096], got[4096];
	for (size_t q = 0; q < NQUERIES; q++) {
		fathom_results *res = NULL;
		CHECK_OK(fathom_search(&res, r, queries[q], search_opts()));
		describe(want[q], sizeof want[q], res);
		fathom_results_free(res);
	}
	/* identifiers, the glossary and snippets each took part */
	CHECK(strstr(want[1], "id:tc-1001/1") && strstr(want[2], "gloss:auth/2"));
	long runs = 0;
	int failed_before = test_failed_checks;
	/* each query on a fresh handle (the glossary and the working memory
	 * are loaded by its first search), then on one that searched before */
	for (size_t qf = 0; qf < 2 * NQUERIES; qf++) {
		size_t q = qf % NQUERIES;
		int fresh = qf < NQUERIES;
		long n;
		for (n = 0; n < MAX_RUNS; n++, runs++) {
			fathom_index *h = r;
			if (fresh)
				CHECK_OK(fathom_open(&h, dir, &oo));
			fathom_results *res = NULL;
			fa_alloc_fail_after(n);
			int rc = fathom_search(&res, h, queries[q], search_opts());
			long hit = fa_alloc_failed();
			fa_alloc_fail_after(-1);
			CHECK(rc == 0 || rc == FATHOM_ENOMEM);
			if (rc == 0) {
				describe(got, sizeof got, res);
				CHECK_STR(got, want[q]);
				fathom_results_free(res);
			} else {
				CHECK(res == NULL);
			}
			/* the handle still answers as it should */
			res = NULL;
			CHECK_OK(fathom_search(&res, h, queries[q], search_opts()));
			if (res) {
				describe(got, sizeof got, res);
				CHECK_STR(got, want[q]);
				fathom_results_free(res);
			}
			if (h != r)
				fathom_close(h);
			if (!hit || test_failed_checks != failed_before) {
				if (test_failed_checks != failed_before)
					fprintf(stderr, "  query \"%s\"%s, run %ld\n", queries[q],
					        fresh ? " (fresh handle)" : "", n);
				break;
			}
		}
		CHECK(n < MAX_RUNS);
		if (test_failed_checks != failed_before)
			break;
	}
	printf("     fault-search: %ld runs over %zu queries, fresh and warm handles\n", runs,
	       NQUERIES);
	fathom_close(r);
	test_rmrf(dir);
	free(dir);
}

/* The "count" of a search reply; -1 if it has none. */
static long long reply_count(const sv_reply *r)
{
	json_t *j = json_loadb(r->body, r->len, 0, NULL);
	json_t *c = json_object_get(j, "count");
	long long n = json_is_integer(c) ? json_integer_value(c) : -1;
	json_decref(j);
	return n;
}

/* The daemon's state on dir, read-only; max_reply: the MCP reply budget
 * (0: the default). */
static sv_state *open_serve(const char *dir, size_t max_reply)
{
	sv_opts o = { dir, 1, 0, 1u << 20, 0, 0, max_reply, 0 };
	sv_state *s = NULL;
	char why[256];
	CHECK_OK(sv_open(&s, &o, why, sizeof why));
	return s;
}

/* The daemon allocates through the same seam (its own buffers and
 * jansson's): a search request with every allocation failing in turn is
 * answered, with its result or with an error status, and leaks nothing. */
static void test_serve_faults(void)
{
	char *dir = test_tmpdir("fault-serve");
	build_base(dir);
	sv_state *s = open_serve(dir, 0);
	if (!s)
		return;
	static const char body[] = "{\"query\": \"auth TC-1001\", \"k\": 5, \"explain\": true}";
	sv_reply want;
	sv_handle(s, "POST", "/search", body, strlen(body), &want);
	CHECK_EQ(want.status, 200);
	long n, errors = 0;
	for (n = 0; n < MAX_RUNS; n++) {
		sv_reply r;
		memset(&r, 0, sizeof r);
		fa_alloc_fail_after(n);
		sv_handle(s, "POST", "/search", body, strlen(body), &r);
		long hit = fa_alloc_failed();
		fa_alloc_fail_after(-1);
		CHECK(r.status == 200 || r.status == 500);
		if (r.status == 200)
			CHECK_EQ(reply_count(&r), reply_count(&want));
		errors += r.status != 200;
		sv_reply_free(&r);
		if (!hit)
			break;
	}
	CHECK(n < MAX_RUNS);
	CHECK(errors > 0);
	printf("     fault-serve: %ld runs, %ld answered with an error\n", n + 1, errors);
	sv_reply_free(&want);
	sv_close(s);
	test_rmrf(dir);
	free(dir);
}

/* The MCP server through the same seam: tools/list (its schemas parsed
 * from the built-in docs/openapi.json on first use) and a tool reply cut
 * into pages by a small budget, with every allocation failing in turn:
 * each answer is JSON-RPC (the result, an error, or a tool error), and the
 * first run that meets no failure answers as a run with none would. */
static void test_mcp_faults(void)
{
	char *dir = test_tmpdir("fault-mcp");
	build_base(dir);
	fathom_index *w = open_writer(dir);   /* a document longer than one page */
	if (!w)
		return;
	char body[3000];
	for (size_t i = 0; i + 1 < sizeof body; i++)
		body[i] = i % 50 == 49 ? '\n' : (char)('a' + i % 26);
	body[sizeof body - 1] = '\0';
	add(w, "long", body);
	for (int i = 0; i < 40; i++) {   /* list_sources over a page: 40 metadata values */
		char id[16], tag[32];
		snprintf(id, sizeof id, "m%d", i);
		snprintf(tag, sizeof tag, "library=library-%02d", i);
		const char *meta[] = { tag };
		fathom_doc d = { id, "Title", "tagged", 6, NULL, NULL, 0, meta, 1, NULL };
		CHECK_OK(fathom_add_doc(w, &d, NULL));
	}
	CHECK_OK(fathom_commit(w));
	fathom_close(w);
	sv_state *s = open_serve(dir, 1200);
	if (!s)
		return;
	static const char *const msgs[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"get_full_content\",\"arguments\":{\"id\":\"long\",\"offset\":5}}}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"list_sources\",\"arguments\":{\"offset\":3}}}",
	};
	for (size_t m = 0; m < sizeof msgs / sizeof msgs[0]; m++) {
		long n, errors = 0;
		char *last = NULL;
		for (n = 0; n < MAX_RUNS; n++) {
			fa_alloc_fail_after(n);
			char *got = sv_mcp_message(s, msgs[m], strlen(msgs[m]));
			long hit = fa_alloc_failed();
			fa_alloc_fail_after(-1);
			json_t *j = got ? json_loads(got, 0, NULL) : NULL;
			json_t *res = json_object_get(j, "result");
			CHECK(!got || json_object_get(j, "error") || res);
			errors += !got || !res || json_is_true(json_object_get(res, "isError"));
			json_decref(j);
			if (!hit) {
				last = got;
				break;
			}
			fathom_free(got);
		}
		CHECK(n < MAX_RUNS);
		char *want = sv_mcp_message(s, msgs[m], strlen(msgs[m]));
		CHECK(want && last && strcmp(want, last) == 0);
		if (m >= 1)
			CHECK(want && strstr(want, "\"next_offset\""));   /* the reply was cut */
		printf("     fault-mcp %zu: %ld runs, %ld answered with an error\n", m, n + 1, errors);
		fathom_free(want);
		fathom_free(last);
	}
	sv_close(s);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	/* Hundreds of commits, each with its fsyncs: in memory when we can,
	 * which keeps the test quick on a busy disk. */
	if (access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 1);
	RUN(test_commit_faults);
	RUN(test_merge_faults);
	RUN(test_merge_copy_faults);
	RUN(test_search_faults);
	RUN(test_serve_faults);
	RUN(test_mcp_faults);
	return TEST_DONE();
}
