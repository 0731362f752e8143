/*
 * test_remote_cli.c — the `remote` embedder end to end: `fathom add
 * --embedder remote:URL` and `fathom search` (the binary, run as a user
 * runs it) against the test embeddings server of embed_server.h, in this
 * process.
 *
 *   success     the documents are embedded by the service, with the API
 *               key from the environment variable the settings name; a
 *               semantic search embeds the query through the same service
 *               and ranks as the cosines computed here; hybrid works
 *   down        nothing listens at the URL (the index's own, or a new
 *               one): the add fails naming the URL, exit 2
 *   midway      the service answers some requests, then 500 for ever
 *   wrong dim   the service answers some requests, then another dimension
 *   kill -9     the add killed at moments spread over its run, while the
 *               service embeds: the commit before or the new one, every
 *               chunk with its vector; the add run again completes
 *
 * After each failure the index is exactly as before the add: the same
 * stats (generation, documents, chunks, bytes), the same files in its
 * folder (no segment left behind), the same search answers, verify
 * passes. A failed first add leaves no index. Skips (77) when the fathom
 * binary is not built.
 *
 * Through the library, with a flush budget so small that every document
 * goes to a segment file of its own while the add runs: a failure midway
 * leaves those files until fathom_rollback removes them, or
 * fathom_close; the committed state is the one before either way (the
 * files a kill leaves, the next writer removes: e2e/crash_vectors.sh).
 */
#include <dirent.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "api/api.h"
#include "embed_server.h"
#include "fathom.h"
#include "index/index_int.h"
#include "test.h"

extern char **environ;

static char bin[4096], dir[256], ix[300], out_path[300], err_path[300];
static char out[1 << 16], err[1 << 14];

static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* Start fathom with argv (argv[0] is bin), stdout to out_path, stderr to
 * err_path. */
static pid_t spawn_fathom(const char *const *argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t pid;
	int rc = posix_spawn(&pid, bin, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "  cannot run %s\n", bin);
		exit(2);
	}
	return pid;
}

/* Wait for it: its exit status (128 + the signal when one killed it);
 * stdout into out, stderr into err. */
static int wait_fathom(pid_t pid)
{
	int st = 0;
	if (waitpid(pid, &st, 0) != pid) {
		fprintf(stderr, "  waitpid: %s\n", strerror(errno));
		exit(2);
	}
	slurp(out_path, out, sizeof out);
	slurp(err_path, err, sizeof err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Run fathom with the arguments (NULL-terminated), as wait_fathom. */
static int fathom(const char *a0, ...)
{
	const char *argv[32];
	int n = 0;
	argv[n++] = bin;
	va_list ap;
	va_start(ap, a0);
	for (const char *a = a0; a && n < 31; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	return wait_fathom(spawn_fathom(argv));
}

static int has(const char *text, const char *part)
{
	if (strstr(text, part))
		return 1;
	fprintf(stderr, "  \"%.600s\" lacks \"%s\"\n", text, part);
	return 0;
}

/* ---- the documents and what the service makes of them ------------------------ */

#define NDOCS 60
static const char *const WORDS[] = { "kernel", "thread", "socket", "garden", "chord",
	"index", "packet", "melody", "seed", "mutex", "router", "leaf" };

static void doc_text(int i, char *title, size_t tcap, char *body, size_t bcap)
{
	snprintf(title, tcap, "Note %d", i);
	snprintf(body, bcap, "%s %s and %s, entry %d", WORDS[i % 12], WORDS[(i * 7 + 3) % 12],
	         WORDS[(i * 5 + 1) % 12], i);
}

static void write_docs(const char *path, int from, int to)
{
	FILE *f = fopen(path, "w");
	for (int i = from; i < to && f; i++) {
		char t[64], b[256];
		doc_text(i, t, sizeof t, b, sizeof b);
		fprintf(f, "{\"id\":\"d%d\",\"title\":\"%s\",\"body\":\"%s\"}\n", i, t, b);
	}
	if (f)
		fclose(f);
}

/* The cosine the index should give document i for the query q: the
 * service's vectors of the query and of the text ingest embeds (title,
 * then the chunk: ix_embed_text), both unit. */
static double cosine(int i, const char *q)
{
	char t[64], b[256];
	doc_text(i, t, sizeof t, b, sizeof b);
	fbuf e;
	fbuf_init(&e, 0);
	if (ix_embed_text(&e, t, NULL, 0, b, strlen(b)) || fbuf_putc(&e, '\0'))
		return -2;
	float qv[SDIM], dv[SDIM];
	expected(q, qv);
	expected((const char *)e.data, dv);
	fbuf_free(&e);
	double s = 0;
	for (int k = 0; k < SDIM; k++)
		s += (double)qv[k] * dv[k];
	return s;
}

/* ---- the index's state ----------------------------------------------------------- */

typedef struct state {
	char stats[1 << 16], files[4096], search[1 << 17];
} state;

static const char *const QUERY = "garden melody seed";

static void files_of(char *buf, size_t cap)
{
	char *names[256];
	int n = 0;
	DIR *d = opendir(ix);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL && n < 256)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	if (d)
		closedir(d);
	for (int i = 1; i < n; i++)   /* sorted: an insertion sort */
		for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *x = names[j];
			names[j] = names[j - 1];
			names[j - 1] = x;
		}
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s ", names[i]);
		free(names[i]);
	}
}

/* The index as a user sees it: stats, files, semantic and hybrid answers
 * (the service answering well). */
static void snapshot(state *s)
{
	int mode = S.mode, ff = S.fail_first;
	server_mode(M_OK, 0);
	CHECK_EQ(fathom("stats", "--index", ix, "--json", NULL), 0);
	snprintf(s->stats, sizeof s->stats, "%s", out);
	files_of(s->files, sizeof s->files);
	CHECK_EQ(fathom("search", "--index", ix, "--mode", "semantic", "-k", "5", "--json", QUERY,
	                NULL), 0);
	snprintf(s->search, sizeof s->search, "%s", out);
	CHECK_EQ(fathom("search", "--index", ix, "--mode", "hybrid", "-k", "5", "--json", QUERY,
	                NULL), 0);
	size_t l = strlen(s->search);
	snprintf(s->search + l, sizeof s->search - l, "%s", out);
	CHECK_EQ(fathom("verify", "--index", ix, NULL), 0);
	server_mode(mode, ff);
}

static void same_state(const state *a, const char *what)
{
	state b;
	snapshot(&b);
	if (strcmp(a->stats, b.stats) != 0)
		fprintf(stderr, "  %s: stats %s, before %s\n", what, b.stats, a->stats);
	CHECK(strcmp(a->stats, b.stats) == 0);
	if (strcmp(a->files, b.files) != 0)
		fprintf(stderr, "  %s: files %s, before %s\n", what, b.files, a->files);
	CHECK(strcmp(a->files, b.files) == 0);
	CHECK(strcmp(a->search, b.search) == 0);
}

static long long stat_num_of(const char *d, const char *key)
{
	CHECK_EQ(fathom("stats", "--index", d, "--json", NULL), 0);
	json_t *j = json_loads(out, 0, NULL);
	long long v = j ? json_integer_value(json_object_get(j, key)) : -1;
	json_decref(j);
	return v;
}

static long long stat_num(const char *key)
{
	return stat_num_of(ix, key);
}

/* ---- the cases --------------------------------------------------------------------- */

static char url[128], docs1[300], docs2[300];

/* A first add with the service down leaves no index; one with the
 * service up embeds every document with the key of FATHOM_EMBED_API_KEY. */
static void test_first_add(void)
{
	unsigned port;
	int fd = listen_loopback(&port);   /* bound, never listening: refused */
	char dead[128], spec[160];
	snprintf(dead, sizeof dead, "http://127.0.0.1:%u/v1", port);
	snprintf(spec, sizeof spec, "remote:%s", dead);
	CHECK_EQ(fathom("add", "-q", "--index", ix, "--embedder", spec, "--jsonl", docs1, NULL), 2);
	CHECK(has(err, dead));
	CHECK(has(err, "nothing committed"));
	struct stat st;
	CHECK(stat(ix, &st) != 0);   /* no index left */
	close(fd);

	server_mode(M_OK, 0);
	setenv("FATHOM_EMBED_API_KEY", "sk-default-1", 1);
	snprintf(spec, sizeof spec, "remote:%s", url);
	CHECK_EQ(fathom("add", "-q", "--index", ix, "--embedder", spec, "--jsonl", docs1, NULL), 0);
	unsetenv("FATHOM_EMBED_API_KEY");
	CHECK_STR(S.auth, "Bearer sk-default-1");
	CHECK_STR(S.path, "/v1/embeddings");
	CHECK_EQ(S.texts, 1 + NDOCS / 2);   /* the probe, then one chunk each */
	CHECK_EQ(stat_num("documents"), NDOCS / 2);
	CHECK_EQ(fathom("config", "--index", ix, "embedder", NULL), 0);
	CHECK(has(out, "remote"));
	CHECK_EQ(fathom("verify", "--index", ix, NULL), 0);
}

/* The query embedded by the service, the ranking its cosines give. */
static void test_search(void)
{
	server_mode(M_OK, 0);
	CHECK_EQ(fathom("search", "--index", ix, "--mode", "semantic", "-k", "3", "--json", QUERY,
	                NULL), 0);
	CHECK_STR(S.input, QUERY);   /* the query went to the service */
	int best = -1;
	double bs = -2;
	for (int i = 0; i < NDOCS / 2; i++) {
		double c = cosine(i, QUERY);
		if (c > bs) {
			bs = c;
			best = i;
		}
	}
	json_t *j = json_loads(out, 0, NULL);
	json_t *r0 = json_array_get(json_object_get(j, "results"), 0);
	char want[16];
	snprintf(want, sizeof want, "d%d", best);
	CHECK_STR(json_string_value(json_object_get(r0, "id")), want);
	double score = json_real_value(json_object_get(r0, "score"));
	if (fabs(score - bs) > 1e-4)
		fprintf(stderr, "  top score %.6f, cosine %.6f\n", score, bs);
	CHECK(fabs(score - bs) < 1e-4);
	json_decref(j);
	/* hybrid, the index's default with an embedder: both lists */
	CHECK_EQ(fathom("search", "--index", ix, "-k", "3", "--json", QUERY, NULL), 0);
	CHECK(has(out, "\"source\":\"vector\""));
	CHECK(has(out, "keyword"));
}

/* The index's own URL with nothing listening there. */
static void test_down(void)
{
	state before;
	snapshot(&before);
	MHD_stop_daemon(S.d);
	S.d = NULL;
	CHECK_EQ(fathom("add", "-q", "--index", ix, "--jsonl", docs2, NULL), 2);
	CHECK(has(err, url));
	CHECK(has(err, "after 4 tries"));
	CHECK(has(err, "nothing committed"));
	/* a search that needs the service says so too */
	CHECK_EQ(fathom("search", "--index", ix, "--mode", "semantic", QUERY, NULL), 2);
	CHECK(has(err, url));
	server_start();   /* the same port again */
	same_state(&before, "service down");
}

/* Some requests answered, then the service goes wrong (mode, after
 * `after` requests): the add fails saying so, and nothing is committed. */
static void failing_add(int mode, int after, const char *says, const char *what)
{
	state before;
	snapshot(&before);
	server_mode(mode, after);
	CHECK_EQ(fathom("add", "-q", "--index", ix, "--jsonl", docs2, NULL), 2);
	CHECK(S.requests > after);
	CHECK(has(err, url));
	CHECK(has(err, says));
	CHECK(has(err, "nothing committed"));
	same_state(&before, what);
}

static void test_midway(void)
{
	failing_add(M_FAIL_AFTER, 8, "HTTP 500 (after 4 tries): {\"error\":\"the model crashed\"}",
	            "failing midway");
}

static void test_wrong_dim(void)
{
	failing_add(M_DIM_AFTER, 6, "not the dimension 8", "wrong dimension");
}

/* The key from the variable the settings name; never in the index. */
static void test_key_env(void)
{
	CHECK_EQ(fathom("config", "--index", ix, "embedder.key-env", "FATHOM_TEST_E2E_KEY", NULL), 0);
	setenv("FATHOM_TEST_E2E_KEY", "sk-e2e-42", 1);
	setenv("FATHOM_EMBED_API_KEY", "sk-not-this-one", 1);
	server_mode(M_OK, 0);
	CHECK_EQ(fathom("add", "-q", "--index", ix, "--jsonl", docs2, NULL), 0);
	CHECK_STR(S.auth, "Bearer sk-e2e-42");
	CHECK_EQ(stat_num("documents"), NDOCS);
	server_mode(M_OK, 0);
	CHECK_EQ(fathom("search", "--index", ix, "--mode", "semantic", "-k", "2", QUERY, NULL), 0);
	CHECK_STR(S.auth, "Bearer sk-e2e-42");
	unsetenv("FATHOM_TEST_E2E_KEY");
	unsetenv("FATHOM_EMBED_API_KEY");
	/* no key anywhere in the index's files */
	DIR *d = opendir(ix);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		char p[600];
		snprintf(p, sizeof p, "%s/%s", ix, e->d_name);
		static char data[1 << 22];
		FILE *f = fopen(p, "rb");
		size_t n = f ? fread(data, 1, sizeof data, f) : 0;
		if (f)
			fclose(f);
		CHECK(memmem(data, n, "sk-e2e", 6) == NULL && memmem(data, n, "sk-default", 10) == NULL);
	}
	if (d)
		closedir(d);
	CHECK_EQ(fathom("verify", "--index", ix, NULL), 0);
}

/* A flat folder: copied, removed. */
static void copy_dir(const char *from, const char *to)
{
	mkdir(to, 0755);
	DIR *d = opendir(from);
	struct dirent *e;
	static char data[1 << 16];
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char a[600], b[600];
		snprintf(a, sizeof a, "%s/%s", from, e->d_name);
		snprintf(b, sizeof b, "%s/%s", to, e->d_name);
		FILE *in = fopen(a, "rb"), *o = fopen(b, "wb");
		size_t n;
		while (in && o && (n = fread(data, 1, sizeof data, in)) > 0)
			CHECK(fwrite(data, 1, n, o) == n);
		CHECK(in && o);
		if (in)
			fclose(in);
		if (o)
			fclose(o);
	}
	if (d)
		closedir(d);
}

static void rm_dir(const char *d)
{
	DIR *dd = opendir(d);
	struct dirent *e;
	while (dd && (e = readdir(dd)) != NULL) {
		char p[600];
		snprintf(p, sizeof p, "%s/%s", d, e->d_name);
		if (e->d_name[0] != '.')
			unlink(p);
	}
	if (dd)
		closedir(dd);
	rmdir(d);
}

/* kill -9 `fathom add` while the service embeds its documents (each reply
 * a few ms late, so that the run lasts): the index left has the documents
 * of the commit before or of the new one, every chunk with its vector,
 * passes verify and answers a semantic query; the add run again
 * completes. The kills are spread in strata from 10% to 130% of a run. */
#define KILLS 8
static void test_kill_during_add(void)
{
	char docs3[300], kx[300];
	snprintf(docs3, sizeof docs3, "%s/docs3.jsonl", dir);
	snprintf(kx, sizeof kx, "%s/killed", dir);
	write_docs(docs3, NDOCS, 2 * NDOCS);
	server_mode(M_OK, 0);
	__atomic_store_n(&S.delay_ms, 3, __ATOMIC_RELAXED);
	copy_dir(ix, kx);
	double t0 = now_s();
	CHECK_EQ(fathom("add", "-q", "--index", kx, "--jsonl", docs3, NULL), 0);
	double full = now_s() - t0;
	CHECK_EQ(stat_num_of(kx, "documents"), 2 * NDOCS);
	rm_dir(kx);
	srand((unsigned)getpid());
	int seen[2] = { 0, 0 };
	for (int run = 0; run < KILLS; run++) {
		copy_dir(ix, kx);
		const char *argv[] = { bin, "add", "-q", "--index", kx, "--jsonl", docs3, NULL };
		pid_t pid = spawn_fathom(argv);
		double at = full * (0.1 + 1.2 * (run + rand() / (RAND_MAX + 1.0)) / KILLS);
		sleep_ms((int)(at * 1000));
		kill(pid, SIGKILL);
		wait_fathom(pid);
		CHECK_EQ(fathom("verify", "--index", kx, NULL), 0);
		long long docs = stat_num_of(kx, "documents");
		if (docs != NDOCS && docs != 2 * NDOCS)
			fprintf(stderr, "  kill %d at %.0f ms: %lld documents\n", run, at * 1000, docs);
		CHECK(docs == NDOCS || docs == 2 * NDOCS);
		seen[docs == 2 * NDOCS]++;
		CHECK_EQ(stat_num_of(kx, "vector_chunks"), stat_num_of(kx, "chunks"));
		CHECK_EQ(fathom("search", "--index", kx, "--mode", "semantic", "-k", "3", QUERY, NULL), 0);
		CHECK_EQ(fathom("add", "-q", "--index", kx, "--jsonl", docs3, NULL), 0);
		CHECK_EQ(stat_num_of(kx, "documents"), 2 * NDOCS);
		CHECK_EQ(stat_num_of(kx, "vector_chunks"), stat_num_of(kx, "chunks"));
		rm_dir(kx);
	}
	__atomic_store_n(&S.delay_ms, 0, __ATOMIC_RELAXED);
	unlink(docs3);
	printf("  %d kills during a remote add (a run %.0f ms): %d left the old commit, %d the new\n",
	       KILLS, full * 1000, seen[0], seen[1]);
}

/* The files of folder d, "LOCK" aside. */
static int nfiles(const char *d)
{
	DIR *dd = opendir(d);
	struct dirent *e;
	int n = 0;
	while (dd && (e = readdir(dd)) != NULL)
		n += e->d_name[0] != '.' && strcmp(e->d_name, "LOCK") != 0;
	if (dd)
		closedir(dd);
	return n;
}

static fathom_index *lib_open(const char *d)
{
	fathom_index *fx = test_open(d, FATHOM_OPEN_CREATE);
	ix_set_flush_budget(fx->ix, 1);   /* a segment file per document */
	return fx;
}

static void lib_same(fathom_index *fx, const fathom_stats *want, int files, const char *d)
{
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&st, fx));
	CHECK_EQ(st.generation, want->generation);
	CHECK_EQ(st.docs, want->docs);
	CHECK_EQ(st.vector_chunks, want->vector_chunks);
	CHECK_EQ(nfiles(d), files);
	CHECK_OK(fathom_verify(fx));
}

static void test_library_flushed(void)
{
	char *d = test_tmpdir("remote-lib");
	fathom_index *fx = lib_open(d);
	server_mode(M_OK, 0);
	CHECK_OK(fathom_config_set(fx, "embedder", "remote"));
	CHECK_OK(fathom_config_set(fx, "embedder.url", url));
	CHECK_OK(fathom_add_jsonl(fx, docs1, NULL, NULL));
	CHECK_OK(fathom_commit(fx));
	fathom_stats before = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&before, fx));
	CHECK_EQ(before.docs, NDOCS / 2);
	CHECK_EQ(before.vector_chunks, NDOCS / 2);
	int files = nfiles(d);

	/* failing after 8 requests: segments were written, the rollback
	 * removes them */
	server_mode(M_FAIL_AFTER, 8);
	CHECK_EQ(fathom_add_jsonl(fx, docs2, NULL, NULL), FATHOM_EIO);
	CHECK(has(fathom_errmsg(), url));
	CHECK(nfiles(d) > files);
	CHECK_OK(fathom_rollback(fx));
	lib_same(fx, &before, files, d);

	/* again, another failure, and the handle closed with the failed add
	 * pending: closing removes them */
	server_mode(M_DIM_AFTER, 8);
	CHECK_EQ(fathom_add_jsonl(fx, docs2, NULL, NULL), FATHOM_ECORRUPT);
	CHECK(nfiles(d) > files);
	fathom_close(fx);
	fx = lib_open(d);
	lib_same(fx, &before, files, d);

	/* and with the service well, every chunk of every flushed segment
	 * has its vector */
	server_mode(M_OK, 0);
	CHECK_OK(fathom_add_jsonl(fx, docs2, NULL, NULL));
	CHECK_OK(fathom_commit(fx));
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&st, fx));
	CHECK_EQ(st.docs, NDOCS);
	CHECK_EQ(st.vector_chunks, NDOCS);
	CHECK_OK(fathom_verify(fx));
	fathom_close(fx);
	test_rmrf(d);
	free(d);
}

static void remove_tree(void)
{
	rm_dir(ix);
	unlink(docs1);
	unlink(docs2);
	unlink(out_path);
	unlink(err_path);
	rmdir(dir);
}

int main(void)
{
	const char *fb = getenv("FATHOM_BIN");
	if (fb && *fb) {
		snprintf(bin, sizeof bin, "%s", fb);
	} else {
		/* build/tests/test_remote_cli -> build/fathom */
		char self[4000];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		self[n > 0 ? n : 0] = '\0';
		char *slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		snprintf(bin, sizeof bin, "%s/../fathom", self);
	}
	if (access(bin, X_OK) != 0) {
		printf("skip: no fathom binary at %s (make build/fathom)\n", bin);
		return 77;
	}
	static const char *const proxies[] = { "http_proxy", "HTTP_PROXY", "https_proxy",
	                                        "HTTPS_PROXY", "all_proxy", "ALL_PROXY" };
	for (size_t i = 0; i < FA_ARRAY_LEN(proxies); i++)
		unsetenv(proxies[i]);
	unsetenv("FATHOM_EMBED_API_KEY");
	unsetenv("FATHOM_INDEX");
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/fathom-remote-cli-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(ix, sizeof ix, "%s/ix", dir);
	snprintf(out_path, sizeof out_path, "%s/out", dir);
	snprintf(err_path, sizeof err_path, "%s/err", dir);
	snprintf(docs1, sizeof docs1, "%s/docs1.jsonl", dir);
	snprintf(docs2, sizeof docs2, "%s/docs2.jsonl", dir);
	write_docs(docs1, 0, NDOCS / 2);
	write_docs(docs2, NDOCS / 2, NDOCS);
	server_start();
	snprintf(url, sizeof url, "%s", base_url("/v1"));
	RUN(test_first_add);
	RUN(test_search);
	RUN(test_down);
	RUN(test_midway);
	RUN(test_wrong_dim);
	RUN(test_key_env);
	RUN(test_kill_during_add);
	RUN(test_library_flushed);
	server_mode(M_OK, 0);
	MHD_stop_daemon(S.d);
	remove_tree();
	return TEST_DONE();
}
