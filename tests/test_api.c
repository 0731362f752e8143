/*
 * test_api.c — the public API's one-of-each pieces: fathom_limit() and the
 * checks it publishes (a bound accepted, one past it refused, for search
 * and ingest options alike), and fathom_results_json(), the one
 * serializer: its shape read back with jansson, invalid UTF-8 repaired,
 * and every allocation failing in turn; a writer's open of a folder that
 * holds no index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "fathom.h"
#include "test.h"
#include "util/util.h"

static const char *docs =
	"{\"id\":\"a\",\"title\":\"Session tokens\",\"url\":\"https://x/a\",\"tags\":[\"auth\"],"
	"\"body\":\"The login service validates session tokens. TC-1001 covers expiry.\"}\n"
	"{\"id\":\"b\",\"title\":\"Ops\",\"body\":\"Rotate the session key \\u00e9 daily.\"}\n"
	"{\"id\":\"c\\u00ff\",\"body\":\"nothing to see\"}\n";

/* A new index in a scratch folder holding the JSON lines. */
static fathom_index *make_index_of(char **dir, const char *lines, const fathom_ingest_opts *io)
{
	*dir = test_tmpdir("api");
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	fathom_index *ix = NULL;
	CHECK_OK(fathom_open(&ix, *dir, &oo));
	if (!ix)
		exit(2);
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_add_jsonl_mem(ix, lines, strlen(lines), "docs", io, &st));
	CHECK_OK(fathom_commit(ix));
	return ix;
}

static fathom_index *make_index(char **dir)
{
	return make_index_of(dir, docs, NULL);
}

static void test_limits_published(void)
{
	for (int id = FATHOM_LIMIT_K; id <= FATHOM_LIMIT_THREADS; id++) {
		double lo = -1, hi = -1;
		CHECK_OK(fathom_limit(id, &lo, &hi));
		CHECK(lo >= 0 && lo <= hi);
	}
	double lo, hi;
	CHECK_EQ(fathom_limit(0, &lo, &hi), FATHOM_EINVAL);
	CHECK_EQ(fathom_limit(9999, NULL, NULL), FATHOM_EINVAL);
	CHECK_OK(fathom_limit(FATHOM_LIMIT_K, NULL, &hi));
	CHECK(hi >= 1000);
}

/* A bound the library publishes is the bound it checks: the maximum
 * passes, one past it is FATHOM_EINVAL. */
static void test_limits_are_the_checks(void)
{
	char *dir;
	fathom_index *ix = make_index(&dir);
	double lo, hi;
	fathom_results *r = NULL;
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;

	CHECK_OK(fathom_limit(FATHOM_LIMIT_K, &lo, &hi));
	so.k = (uint32_t)hi;
	CHECK_OK(fathom_search(&r, ix, "session", &so));
	fathom_results_free(r);
	so.k = (uint32_t)hi + 1;
	CHECK_EQ(fathom_search(&r, ix, "session", &so), FATHOM_EINVAL);
	so.k = (uint32_t)lo - 1;   /* 0: unset in version 5, invalid before */
	so.version = 4;
	CHECK_EQ(fathom_search(&r, ix, "session", &so), FATHOM_EINVAL);
	so.version = FATHOM_SEARCH_OPTS_VERSION;
	so.k = 10;

	CHECK_OK(fathom_limit(FATHOM_LIMIT_K1, &lo, &hi));
	so.k1 = (float)hi;
	CHECK_OK(fathom_search(&r, ix, "session", &so));
	fathom_results_free(r);
	so.k1 = (float)hi * 1.01f;
	CHECK_EQ(fathom_search(&r, ix, "session", &so), FATHOM_EINVAL);
	so.k1 = 1.2f;

	CHECK_OK(fathom_limit(FATHOM_LIMIT_BONUS, &lo, &hi));
	so.phrase_bonus = (float)lo * 0.99f;
	CHECK_EQ(fathom_search(&r, ix, "session", &so), FATHOM_EINVAL);
	so.phrase_bonus = 1.25f;

	CHECK_OK(fathom_limit(FATHOM_LIMIT_TIME_LIMIT, &lo, &hi));
	so.time_limit = hi * 2;
	CHECK_EQ(fathom_search(&r, ix, "session", &so), FATHOM_EINVAL);
	so.time_limit = 0;

	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	const char *one = "{\"id\":\"z\",\"body\":\"zebra\"}\n";
	CHECK_OK(fathom_limit(FATHOM_LIMIT_CHUNK_TARGET, &lo, &hi));
	io.chunk_target = (uint32_t)lo - 1;
	CHECK_EQ(fathom_add_jsonl_mem(ix, one, strlen(one), "x", &io, &st), FATHOM_EINVAL);
	io.chunk_target = (uint32_t)lo;
	CHECK_OK(fathom_add_jsonl_mem(ix, one, strlen(one), "x", &io, &st));
	CHECK_OK(fathom_limit(FATHOM_LIMIT_CHUNK_MAX, &lo, &hi));
	io.chunk_target = 1500;
	io.chunk_max = (uint32_t)hi + 1;
	CHECK_EQ(fathom_add_jsonl_mem(ix, one, strlen(one), "x", &io, &st), FATHOM_EINVAL);
	io.chunk_max = 6000;
	CHECK_OK(fathom_limit(FATHOM_LIMIT_IDENT_MAX, &lo, &hi));
	io.ident_max = (uint32_t)hi + 1;
	CHECK_EQ(fathom_add_jsonl_mem(ix, one, strlen(one), "x", &io, &st), FATHOM_EINVAL);
	io.ident_max = 50;
	CHECK_OK(fathom_limit(FATHOM_LIMIT_META, &lo, &hi));
	const char **meta = calloc((size_t)hi + 1, sizeof *meta);
	for (size_t i = 0; i <= (size_t)hi; i++)
		meta[i] = "k=v";
	io.meta = meta;
	io.n_meta = (size_t)hi;
	CHECK_OK(fathom_add_jsonl_mem(ix, one, strlen(one), "x", &io, &st));
	io.n_meta = (size_t)hi + 1;
	CHECK_EQ(fathom_add_jsonl_mem(ix, one, strlen(one), "x", &io, &st), FATHOM_EINVAL);
	free(meta);
	CHECK_OK(fathom_rollback(ix));

	CHECK_OK(fathom_limit(FATHOM_LIMIT_GLOSSARY_TERMS, &lo, &hi));
	char (*words)[24] = calloc((size_t)hi + 1, sizeof *words);
	const char **terms = calloc((size_t)hi + 1, sizeof *terms);
	for (size_t i = 0; i <= (size_t)hi; i++) {
		/* plain words: "w0" would be a code identifier, protected */
		snprintf(words[i], sizeof words[i], "word%c%c", 'a' + (int)(i / 26), 'a' + (int)(i % 26));
		terms[i] = words[i];
	}
	uint32_t group = 0;
	CHECK(fathom_glossary_add(ix, terms, (size_t)hi + 1, &group) != 0);
	CHECK(fathom_glossary_add(ix, terms, (size_t)lo - 1, &group) != 0);
	CHECK_OK(fathom_glossary_add(ix, terms, (size_t)hi, &group));
	CHECK_OK(fathom_rollback(ix));
	free(terms);
	free(words);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

static json_t *search_json(fathom_index *ix, const char *q, const char *echo, char **text)
{
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, q, NULL));
	fathom_json_opts jo = FATHOM_JSON_OPTS_INIT;
	jo.query = echo;
	size_t len = 0;
	*text = NULL;
	CHECK_OK(fathom_results_json(text, &len, r, &jo));
	fathom_results_free(r);
	CHECK(*text && strlen(*text) == len);
	json_error_t je;
	json_t *j = *text ? json_loadb(*text, len, JSON_REJECT_DUPLICATES, &je) : NULL;
	CHECK(j != NULL);
	return j;
}

static void test_results_json_shape(void)
{
	char *dir, *text;
	fathom_index *ix = make_index(&dir);
	json_t *j = search_json(ix, "session tokens", "session tokens", &text);
	CHECK_STR(json_string_value(json_object_get(j, "query")), "session tokens");
	/* the default ranks: "a" holds both words, the other one of them and
	 * names the one it lacks */
	CHECK_EQ(json_integer_value(json_object_get(j, "count")), 2);
	json_t *h2 = json_array_get(json_object_get(j, "results"), 1);
	CHECK_EQ(json_array_size(json_object_get(h2, "missing")), 1);
	CHECK_EQ(json_array_size(json_object_get(json_array_get(json_object_get(j, "results"), 0),
	                                          "missing")), 0);
	CHECK(json_object_get(j, "why") == NULL);
	json_t *h = json_array_get(json_object_get(j, "results"), 0);
	CHECK_EQ(json_integer_value(json_object_get(h, "rank")), 1);
	CHECK_STR(json_string_value(json_object_get(h, "id")), "a");
	CHECK_STR(json_string_value(json_object_get(h, "url")), "https://x/a");
	CHECK_EQ(json_integer_value(json_object_get(h, "chunk")), 0);
	CHECK(json_is_array(json_object_get(h, "bytes")));
	CHECK(json_is_array(json_object_get(h, "lines")));
	json_t *parts = json_object_get(h, "score_parts");
	const char *fields[] = { "path", "title", "headings", "tags", "body", "bonus" };
	for (size_t i = 0; i < 6; i++)
		CHECK(json_is_real(json_object_get(parts, fields[i])));   /* "0.0", never "0" */
	CHECK(json_real_value(json_object_get(parts, "body")) > 0);
	CHECK(json_is_real(json_object_get(h, "score")));
	json_t *src = json_array_get(json_object_get(h, "sources"), 0);
	CHECK_STR(json_string_value(json_object_get(src, "source")), "keyword");
	CHECK_EQ(json_integer_value(json_object_get(src, "rank")), 1);
	CHECK(json_array_size(json_object_get(json_object_get(h, "matched"), "body")) >= 1);
	CHECK(json_array_size(json_object_get(h, "highlights")) >= 1);
	json_t *rc = json_object_get(j, "receipt");
	CHECK(json_is_string(json_object_get(rc, "parsed")));
	CHECK_EQ(json_array_size(json_object_get(rc, "terms")), 2);
	CHECK(json_is_array(json_object_get(rc, "identifiers")));
	CHECK(json_is_array(json_object_get(rc, "glossary")));
	json_decref(j);
	fathom_free(text);

	/* no query echoed; an empty answer says why */
	j = search_json(ix, "kubernetes", NULL, &text);
	CHECK(json_object_get(j, "query") == NULL);
	CHECK_EQ(json_integer_value(json_object_get(j, "count")), 0);
	CHECK(strstr(json_string_value(json_object_get(j, "why")), "kubernetes") != NULL);
	json_decref(j);
	fathom_free(text);

	/* bytes that are not UTF-8 (a query echoed as given) become U+FFFD */
	j = search_json(ix, "nothing", "nothing \xff\xfe see", &text);
	CHECK_STR(json_string_value(json_object_get(j, "query")), "nothing \xef\xbf\xbd\xef\xbf\xbd see");
	json_decref(j);
	fathom_free(text);

	/* bad arguments */
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, "session", NULL));
	fathom_json_opts bad;
	CHECK_OK(fathom_json_opts_init(&bad, FATHOM_JSON_OPTS_VERSION));
	CHECK(bad.version == FATHOM_JSON_OPTS_VERSION && bad.query == NULL);
	CHECK_EQ(fathom_json_opts_init(&bad, FATHOM_JSON_OPTS_VERSION + 1), FATHOM_EINVAL);
	bad.version = 99;
	CHECK_EQ(fathom_results_json(&text, NULL, r, &bad), FATHOM_EINVAL);
	CHECK(text == NULL);
	CHECK_EQ(fathom_results_json(&text, NULL, NULL, NULL), FATHOM_EINVAL);
	CHECK_EQ(fathom_results_json(NULL, NULL, r, NULL), FATHOM_EINVAL);
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* Every allocation failing in turn: FATHOM_ENOMEM and nothing returned,
 * or the whole text, identical to an unhindered run. */
static void test_results_json_alloc_failures(void)
{
	char *dir, *want = NULL;
	fathom_index *ix = make_index(&dir);
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, "session", NULL));
	CHECK_OK(fathom_results_json(&want, NULL, r, NULL));
	int saw_ok = 0, saw_enomem = 0;
	for (long n = 0; n < 200 && !saw_ok; n++) {
		char *got = (char *)1;
		fa_alloc_fail_after(n);
		int rc = fathom_results_json(&got, NULL, r, NULL);
		fa_alloc_fail_after(-1);
		CHECK(rc == 0 || rc == FATHOM_ENOMEM);
		if (rc == 0) {
			saw_ok = 1;
			CHECK_STR(got, want);
		} else {
			saw_enomem = 1;
			CHECK(got == NULL);
		}
		if (rc == 0)
			fathom_free(got);
	}
	CHECK(saw_ok && saw_enomem);
	fathom_free(want);
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* What fathom_list_meta() lists (GET /sources, the MCP list_sources) is
 * what a filter selects: every key=value it reports, used as a search
 * filter, finds exactly the documents it counted. "lang" was once listed
 * but never matched as a filter (only --lang and lang:X did). */
typedef struct facet_check {
	fathom_index *ix;
	size_t seen;
	int has_lang_c, has_team_b;
} facet_check;

static int check_facet(void *ctx, const char *key, const char *value, uint64_t ndocs)
{
	facet_check *fc = ctx;
	char kv[256];
	snprintf(kv, sizeof kv, "%s=%s", key, value);
	const char *filters[] = { kv };
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.filters = filters;
	so.n_filters = 1;
	so.k = 100;
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, fc->ix, "common", &so));
	size_t n = r ? fathom_results_count(r) : 0;
	if (n != ndocs)
		fprintf(stderr, "  filter %s: %zu hits, list_meta counted %llu\n", kv, n,
		        (unsigned long long)ndocs);
	CHECK_EQ(n, ndocs);
	fathom_results_free(r);
	fc->seen++;
	fc->has_lang_c |= strcmp(kv, "lang=c") == 0;
	fc->has_team_b |= strcmp(kv, "team=b") == 0;
	return 0;
}

static void test_filters_match_sources(void)
{
	static const char lines[] =
		"{\"id\":\"c1\",\"path\":\"src/a.c\",\"body\":\"common int main\",\"library\":\"libc\"}\n"
		"{\"id\":\"p1\",\"path\":\"src/b.py\",\"body\":\"common def main\",\"version\":\"3\"}\n"
		"{\"id\":\"m1\",\"path\":\"docs/c.md\",\"body\":\"common words\",\"system\":\"unix\"}\n"
		"{\"id\":\"j1\",\"body\":\"common french\",\"lang\":\"fr\",\"kind\":\"note\"}\n";
	/* a key with two values on every document */
	const char *meta[] = { "team=a", "team=b" };
	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	io.meta = meta;
	io.n_meta = 2;
	char *dir;
	fathom_index *ix = make_index_of(&dir, lines, &io);
	facet_check fc = { ix, 0, 0, 0 };
	CHECK_OK(fathom_list_meta(ix, check_facet, &fc));
	/* library, version, system, kind, team=a, team=b, lang c python markdown text fr */
	CHECK_EQ(fc.seen, 11);
	CHECK(fc.has_lang_c && fc.has_team_b);
	/* --lang and lang:X select the same documents as the filter lang=X */
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.lang = "fr";
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, "common", &so));
	CHECK_EQ(r ? fathom_results_count(r) : 0, 1);
	fathom_results_free(r);
	r = NULL;
	CHECK_OK(fathom_search(&r, ix, "common lang:c", NULL));
	CHECK(r && fathom_results_count(r) == 1 && strcmp(fathom_results_hit(r, 0)->doc_id, "c1") == 0);
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* fathom_grep_matcher: every match of a line, with fathom_grep's flags. */
static void test_grep_matcher(void)
{
	fathom_grep_opts go = FATHOM_GREP_OPTS_INIT;
	fathom_grep_matcher *m = NULL;
	size_t s, e;
	const char *line = "foo Foo foobar foo";
	go.word = 1;
	go.caseless = 1;
	CHECK_EQ(fathom_grep_matcher_new(&m, "foo", &go), 0);
	size_t want[][2] = { { 0, 3 }, { 4, 7 }, { 15, 18 } }, k = 0, p = 0;
	while (m && fathom_grep_matcher_next(m, line, strlen(line), p, &s, &e) == 1 && k < 4) {
		CHECK(k < 3);
		if (k < 3) {
			CHECK_EQ(s, want[k][0]);
			CHECK_EQ(e, want[k][1]);
		}
		k++;
		p = e;
	}
	CHECK_EQ(k, 3);
	CHECK_EQ(fathom_grep_matcher_next(m, line, 3, 4, &s, &e), FATHOM_EINVAL);   /* from > len */
	fathom_grep_matcher_free(m);
	/* a literal: metacharacters are characters */
	go = (fathom_grep_opts)FATHOM_GREP_OPTS_INIT;
	go.literal = 1;
	CHECK_EQ(fathom_grep_matcher_new(&m, "a.b", &go), 0);
	CHECK_EQ(fathom_grep_matcher_next(m, "axb", 3, 0, &s, &e), 0);
	CHECK_EQ(fathom_grep_matcher_next(m, "x a.b", 5, 0, &s, &e), 1);
	CHECK_EQ(s, 2);
	fathom_grep_matcher_free(m);
	/* a bad pattern, a boolean query, a wrong version: errors, no matcher */
	go = (fathom_grep_opts)FATHOM_GREP_OPTS_INIT;
	m = (fathom_grep_matcher *)&go;
	CHECK_EQ(fathom_grep_matcher_new(&m, "a(b", &go), FATHOM_EINVAL);
	CHECK(m == NULL);
	go.boolean = 1;
	CHECK_EQ(fathom_grep_matcher_new(&m, "a AND b", &go), FATHOM_EINVAL);
	go.boolean = 0;
	go.version = 99;
	CHECK_EQ(fathom_grep_matcher_new(&m, "a", &go), FATHOM_EINVAL);
	fathom_grep_matcher_free(NULL);
}

/* Opened to write, not to create, a folder with no index (there or
 * missing) is FATHOM_ENOTFOUND saying so, and gets no LOCK file. */
static void test_write_needs_index(void)
{
	char *dir = test_tmpdir("api-noindex");
	char lock[4096], missing[4096];
	snprintf(lock, sizeof lock, "%s/LOCK", dir);
	snprintf(missing, sizeof missing, "%s/none", dir);
	const char *dirs[] = { dir, missing };
	for (size_t i = 0; i < 2; i++) {
		fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
		oo.flags = FATHOM_OPEN_WRITE;
		fathom_index *ix = NULL;
		CHECK_EQ(fathom_open(&ix, dirs[i], &oo), FATHOM_ENOTFOUND);
		CHECK(ix == NULL);
		CHECK(strstr(fathom_errmsg(), "no index here") != NULL);
	}
	struct stat st;
	CHECK(stat(lock, &st) != 0);
	CHECK(stat(missing, &st) != 0);
	/* created, it opens to write */
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	fathom_index *ix = NULL;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	fathom_close(ix);
	oo.flags = FATHOM_OPEN_WRITE;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	RUN(test_limits_published);
	RUN(test_limits_are_the_checks);
	RUN(test_results_json_shape);
	RUN(test_results_json_alloc_failures);
	RUN(test_filters_match_sources);
	RUN(test_grep_matcher);
	RUN(test_write_needs_index);
	return TEST_DONE();
}
