/*
 * test_settings.c — per-index settings (fathom_config_*): set, get and
 * unset; validation (a bad value names the setting and changes nothing);
 * persistence across reopen and refresh; an index without settings; the
 * stored record layout (corrupt values refused, unknown names kept); and
 * that searches and indexing runs take them where their caller leaves an
 * option unset, while an option the caller sets wins.
 */
#include <math.h>
#include <sys/stat.h>

#include "fathom.h"
#include "api/api.h"
#include "embed/embed.h"
#include "query/query.h"
#include "test.h"

static fathom_index *open_ix(const char *dir, unsigned flags)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = flags;
	fathom_index *ix = NULL;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	return ix;
}

static char *get(fathom_index *ix, const char *name, int *set)
{
	static char buf[256];
	char *v = NULL;
	int s = -1;
	CHECK_OK(fathom_config_get(&v, &s, ix, name));
	snprintf(buf, sizeof buf, "%s", v ? v : "(null)");
	fathom_free(v);
	if (set)
		*set = s;
	return buf;
}

static void add(fathom_index *w, const char *id, const char *title, const char *body)
{
	fathom_doc d = { id, title, body, strlen(body), NULL, NULL, 0, NULL, 0, NULL };
	CHECK_OK(fathom_add_doc(w, &d, NULL));
}

/* The hit of document id, or NULL. */
static const fathom_hit *hit_of(const fathom_results *r, const char *id)
{
	for (size_t i = 0; i < fathom_results_count(r); i++)
		if (strcmp(fathom_results_hit(r, i)->doc_id, id) == 0)
			return fathom_results_hit(r, i);
	return NULL;
}

static size_t count(fathom_index *ix, const char *q, uint32_t k)
{
	fathom_results *r = NULL;
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.k = k;
	if (fathom_search(&r, ix, q, &so) != 0)
		return (size_t)-1;
	size_t n = fathom_results_count(r);
	fathom_results_free(r);
	return n;
}

/* The table's defaults are the values an unset option takes. */
static void test_table_defaults(void)
{
	CHECK(fathom_setting_at(API_NSETTINGS) == NULL);
	CHECK(fathom_setting_find("nope") == NULL);
	CHECK_STR(fathom_setting_find("k")->default_value, "10");
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT, tmp;
	float w[FATHOM_NFIELDS];
	const fathom_search_opts *o;
	static const float wd[FATHOM_NFIELDS] = FATHOM_FIELD_WEIGHTS_INIT;
	float neg[FATHOM_NFIELDS] = { -1, -1, -1, -1, -1 };
	so.field_weights = neg;
	so.n_field_weights = FATHOM_NFIELDS;
	q_search_opts_fill(&so, &tmp, w, &o);
	CHECK_EQ(o->k, atoi(fathom_setting_find("k")->default_value));
	CHECK_EQ(o->snippet_bytes, atoi(fathom_setting_find("snippet-bytes")->default_value));
	CHECK(o->k1 == (float)atof(fathom_setting_find("k1")->default_value));
	CHECK(o->b == (float)atof(fathom_setting_find("b")->default_value));
	CHECK_EQ(o->match, FATHOM_MATCH_AUTO);
	CHECK_STR(fathom_setting_find("match")->default_value, "auto");
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		char name[64];
		snprintf(name, sizeof name, "weight.%s", fathom_field_name(f));
		CHECK(fathom_setting_find(name) != NULL);
		CHECK(o->field_weights[f] == wd[f]);
		CHECK(wd[f] == (float)atof(fathom_setting_find(name)->default_value));
	}
	CHECK_EQ(strtoull(fathom_setting_find("max-size")->default_value, NULL, 10),
	         API_DEFAULT_MAX_SIZE);
	CHECK_EQ(strtoull(fathom_setting_find("grep-max-size")->default_value, NULL, 10),
	         API_DEFAULT_GREP_MAX_SIZE);
	em_ppmi_opts po;
	em_ppmi_defaults(&po);
	CHECK_EQ(strtoull(fathom_setting_find("embedder.seed")->default_value, NULL, 10), po.seed);
	/* the bounds are the checks' own, as fathom_limit publishes them */
	static const struct { const char *name; int limit; } same[] = {
		{ "k", FATHOM_LIMIT_K }, { "k1", FATHOM_LIMIT_K1 }, { "b", FATHOM_LIMIT_B },
		{ "weight.body", FATHOM_LIMIT_FIELD_WEIGHT },
		{ "snippet-bytes", FATHOM_LIMIT_SNIPPET_BYTES },
	};
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		double lo, hi;
		CHECK_OK(fathom_limit(same[i].limit, &lo, &hi));
		CHECK(fathom_setting_find(same[i].name)->min == lo);
		CHECK(fathom_setting_find(same[i].name)->max == hi);
	}
	/* the old _init of search options keeps the old defaults */
	fathom_search_opts v4;
	CHECK_OK(fathom_search_opts_init(&v4, 4));
	CHECK_EQ(v4.k, 10);
	CHECK(v4.k1 == 1.5f);
	CHECK_EQ(v4.snippet_bytes, 240);
}

static void test_set_get_unset(void)
{
	char *dir = test_tmpdir("settings");
	fathom_index *w = open_ix(dir, FATHOM_OPEN_CREATE);
	int set = -1;
	CHECK_STR(get(w, "k", &set), "10");
	CHECK_EQ(set, 0);
	CHECK_OK(fathom_config_set(w, "k", "3"));
	CHECK_STR(get(w, "k", &set), "3");   /* staged: the writer sees it */
	CHECK_EQ(set, 1);
	CHECK_OK(fathom_config_set(w, "k1", "1.20"));
	CHECK_STR(get(w, "k1", NULL), "1.2");
	CHECK_OK(fathom_config_set(w, "match", "all"));
	CHECK_OK(fathom_config_set(w, "ignore", "*.log\nbuild/"));
	/* validation: an error naming the setting, nothing changed */
	CHECK_EQ(fathom_config_set(w, "k", "0"), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "k wants an integer from 1 to 100000") != NULL);
	CHECK_EQ(fathom_config_set(w, "k", "12x"), FATHOM_EINVAL);
	CHECK_EQ(fathom_config_set(w, "k", "-1"), FATHOM_EINVAL);
	CHECK_EQ(fathom_config_set(w, "b", "1.5"), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "b wants a number from 0 to 1") != NULL);
	CHECK_EQ(fathom_config_set(w, "k1", "nan"), FATHOM_EINVAL);
	CHECK_EQ(fathom_config_set(w, "k1", "inf"), FATHOM_EINVAL);
	CHECK_EQ(fathom_config_set(w, "k1", ""), FATHOM_EINVAL);
	CHECK_EQ(fathom_config_set(w, "match", "most"), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "match wants one of auto all any") != NULL);
	CHECK_EQ(fathom_config_set(w, "nosuch", "1"), FATHOM_EINVAL);
	CHECK_EQ(fathom_config_set(w, "weight.body", "1001"), FATHOM_EINVAL);
	CHECK_STR(get(w, "k", NULL), "3");
	CHECK_STR(get(w, "b", NULL), "0.9");
	CHECK_OK(fathom_commit(w));
	fathom_close(w);

	/* persisted; a reader sees it */
	fathom_index *r = open_ix(dir, FATHOM_OPEN_READONLY);
	CHECK_STR(get(r, "k", &set), "3");
	CHECK_EQ(set, 1);
	CHECK_STR(get(r, "match", NULL), "all");
	CHECK_STR(get(r, "ignore", NULL), "*.log\nbuild/");
	CHECK_EQ(fathom_config_set(r, "k", "4"), FATHOM_EREADONLY);

	/* unset, committed; the reader follows on refresh */
	w = open_ix(dir, FATHOM_OPEN_WRITE);
	CHECK_OK(fathom_config_unset(w, "k"));
	CHECK_OK(fathom_config_unset(w, "k"));   /* not set: no error */
	CHECK_OK(fathom_config_set(w, "b", "0.5"));
	CHECK_OK(fathom_commit(w));
	CHECK_STR(get(r, "k", NULL), "3");
	int changed = 0;
	CHECK_OK(fathom_refresh(r, &changed));
	CHECK_EQ(changed, 1);
	CHECK_STR(get(r, "k", &set), "10");
	CHECK_EQ(set, 0);
	CHECK_STR(get(r, "b", NULL), "0.5");
	/* a rollback drops what was staged */
	CHECK_OK(fathom_config_set(w, "k", "7"));
	CHECK_OK(fathom_rollback(w));
	CHECK_STR(get(w, "k", NULL), "10");
	fathom_close(w);
	fathom_close(r);
	test_rmrf(dir);
	free(dir);
}

/* The stored records: unknown names kept through a change, a value this
 * build does not take read as unset, a broken layout refused. */
static void test_records(void)
{
	api_settings s;
	memset(&s, 0, sizeof s);
	static const unsigned char good[] = "\001k\0" "5\0" "future.key\0" "x\0" "b\0" "7\0";
	CHECK_OK(api_settings_parse(&s, good, sizeof good - 1));
	CHECK_EQ(s.set, (uint64_t)1 << API_S_K);   /* b=7 is out of range: unset */
	CHECK(s.num[API_S_K] == 5);
	static const unsigned char dup[] = "\001k\0" "5\0" "k\0" "6\0";
	CHECK_EQ(api_settings_parse(&s, dup, sizeof dup - 1), FATHOM_ECORRUPT);
	static const unsigned char open_end[] = "\001k\0" "5";
	CHECK_EQ(api_settings_parse(&s, open_end, sizeof open_end - 1), FATHOM_ECORRUPT);
	static const unsigned char no_value[] = "\001k\0";
	CHECK_EQ(api_settings_parse(&s, no_value, sizeof no_value - 1), FATHOM_ECORRUPT);
	static const unsigned char bad_name[] = "\001K!\0" "5\0";
	CHECK_EQ(api_settings_parse(&s, bad_name, sizeof bad_name - 1), FATHOM_ECORRUPT);
	static const unsigned char newer[] = "\002k\0" "5\0";
	CHECK_EQ(api_settings_parse(&s, newer, sizeof newer - 1), FATHOM_EVERSION);
	CHECK_OK(api_settings_parse(&s, (const unsigned char *)"\001", 1));
	CHECK_EQ(s.set, 0);
	api_settings_free(&s);
}

/* Searches take the settings for what they leave unset; what they set wins. */
static void test_search_defaults(void)
{
	char *dir = test_tmpdir("settings-search");
	fathom_index *w = open_ix(dir, FATHOM_OPEN_CREATE);
	char id[16], body[64];
	for (int i = 0; i < 12; i++) {
		snprintf(id, sizeof id, "d%02d", i);
		snprintf(body, sizeof body, "walrus number %d", i);
		add(w, id, NULL, body);
	}
	add(w, "t", "walrus", "a title about it");
	add(w, "both", NULL, "walrus clams together");
	CHECK_OK(fathom_commit(w));
	CHECK_EQ(count(w, "walrus", 0), 10);        /* built-in k */
	CHECK_OK(fathom_config_set(w, "k", "4"));
	CHECK_OK(fathom_commit(w));
	fathom_index *r = open_ix(dir, FATHOM_OPEN_READONLY);
	CHECK_EQ(count(r, "walrus", 0), 4);         /* the index's k */
	CHECK_EQ(count(r, "walrus", 6), 6);         /* the caller's k wins */
	/* a version 4 caller gave every value: the index's k does not apply */
	fathom_search_opts v4;
	CHECK_OK(fathom_search_opts_init(&v4, 4));
	fathom_results *res = NULL;
	CHECK_OK(fathom_search(&res, r, "walrus", &v4));
	CHECK_EQ(fathom_results_count(res), 10);
	fathom_results_free(res);
	v4.k = 0;   /* invalid in version 4, and still so */
	CHECK_EQ(fathom_search(&res, r, "walrus", &v4), FATHOM_EINVAL);
	/* matching mode: all requires both words */
	CHECK_EQ(count(r, "walrus clams", 100), 14);
	CHECK_OK(fathom_config_set(w, "match", "all"));
	CHECK_OK(fathom_commit(w));
	CHECK_OK(fathom_refresh(r, NULL));
	CHECK_EQ(count(r, "walrus clams", 100), 1);
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.match = FATHOM_MATCH_ANY;
	so.k = 100;
	CHECK_OK(fathom_search(&res, r, "walrus clams", &so));
	CHECK_EQ(fathom_results_count(res), 14);
	fathom_results_free(res);
	/* the title's weight: 0 in the index takes the title hit's lead away;
	 * a caller's weight for the title wins */
	so = (fathom_search_opts)FATHOM_SEARCH_OPTS_INIT;
	so.k = 100;
	CHECK_OK(fathom_search(&res, r, "walrus", &so));
	const fathom_hit *h = hit_of(res, "t");
	CHECK(h != NULL);
	double title_score = h ? h->field_score[FATHOM_FIELD_TITLE] : 0;
	CHECK(title_score > 0);
	fathom_results_free(res);
	CHECK_OK(fathom_config_set(w, "weight.title", "0"));
	CHECK_OK(fathom_config_set(w, "snippet-bytes", "0"));
	CHECK_OK(fathom_commit(w));
	CHECK_OK(fathom_refresh(r, NULL));
	so.k = 100;
	CHECK_OK(fathom_search(&res, r, "walrus", &so));
	for (size_t i = 0; i < fathom_results_count(res); i++) {
		CHECK(fathom_results_hit(res, i)->field_score[FATHOM_FIELD_TITLE] == 0);
		CHECK(fathom_results_hit(res, i)->snippet == NULL ||
		      !*fathom_results_hit(res, i)->snippet);
	}
	fathom_results_free(res);
	float wts[FATHOM_NFIELDS] = { -1, 2.5f, -1, -1, -1 };
	so.field_weights = wts;
	so.n_field_weights = FATHOM_NFIELDS;
	so.snippet_bytes = 100;
	CHECK_OK(fathom_search(&res, r, "walrus", &so));
	h = hit_of(res, "t");
	CHECK(h && h->field_score[FATHOM_FIELD_TITLE] == title_score);
	CHECK(h && h->snippet && *h->snippet);
	fathom_results_free(res);
	fathom_close(r);
	fathom_close(w);
	test_rmrf(dir);
	free(dir);
}

static void write_file(const char *dir, const char *name, size_t size)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	for (size_t i = 0; i < size; i++)
		fputc(i % 64 == 63 ? '\n' : 'a' + (int)(i % 26), f);
	fclose(f);
}

/* Indexing runs take the size caps and ignore rules. */
static void test_ingest_defaults(void)
{
	char *root = test_tmpdir("settings-ingest");
	char tree[600], ixdir[600];
	snprintf(tree, sizeof tree, "%s/tree", root);
	snprintf(ixdir, sizeof ixdir, "%s/ix", root);
	mkdir(tree, 0755);
	write_file(tree, "small.txt", 100);
	write_file(tree, "big.txt", 5000);
	write_file(tree, "x.log", 100);
	fathom_index *w = open_ix(ixdir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(w, "max-size", "1000"));
	CHECK_OK(fathom_config_set(w, "grep-max-size", "0"));
	CHECK_OK(fathom_config_set(w, "ignore", "*.log"));
	CHECK_OK(fathom_commit(w));
	const char *paths[] = { tree };
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_index_paths(w, paths, 1, NULL, &st));
	CHECK_EQ(st.files_indexed, 1);
	CHECK_EQ(st.skipped_by_reason[FATHOM_SKIP_TOO_BIG], 1);
	CHECK_EQ(st.skipped_by_reason[FATHOM_SKIP_IGNORED], 1);
	CHECK_OK(fathom_commit(w));
	/* the caller's options win: a cap, and no ignore rules */
	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	io.max_file_size = 10000;
	io.ignore = "";
	st = (fathom_ingest_stats)FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_index_paths(w, paths, 1, &io, &st));
	CHECK_EQ(st.files_indexed, 2);
	CHECK_EQ(st.files_skipped, 0);
	/* --no-ignore (use_gitignore 0) turns the index's rules off too */
	io = (fathom_ingest_opts)FATHOM_INGEST_OPTS_INIT;
	io.use_gitignore = 0;
	io.max_file_size = 10000;
	st = (fathom_ingest_stats)FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_index_paths(w, paths, 1, &io, &st));
	CHECK_EQ(st.files_skipped, 0);
	/* a version 5 caller gave its caps: no ignore rules of the index */
	fathom_ingest_opts v5;
	CHECK_OK(fathom_ingest_opts_init(&v5, 5));
	CHECK_EQ(v5.max_file_size, 4u << 20);
	st = (fathom_ingest_stats)FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_index_paths(w, paths, 1, &v5, &st));
	CHECK_EQ(st.files_skipped, 0);
	fathom_close(w);
	test_rmrf(root);
	free(root);
}

int main(void)
{
	RUN(test_table_defaults);
	RUN(test_set_get_unset);
	RUN(test_records);
	RUN(test_search_defaults);
	RUN(test_ingest_defaults);
	return TEST_DONE();
}
