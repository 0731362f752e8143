/*
 * test_abi.c — the rules of the public structs: the _init() functions give
 * what the _INIT macros give, for each version the library takes and no
 * other; output structs are filled as far as the caller's version goes
 * and a version the library does not know is refused; the error codes.
 * (tests/e2e/exports.sh checks the exported symbols.)
 */
#include "fathom.h"
#include "test.h"
#include "util/util.h"

static void test_opts_init(void)
{
	fathom_open_opts oo, om = FATHOM_OPEN_OPTS_INIT;
	memset(&oo, 0xff, sizeof oo);
	CHECK_OK(fathom_open_opts_init(&oo, FATHOM_OPEN_OPTS_VERSION));
	CHECK(oo.version == om.version && oo.flags == om.flags && oo.stem_language == NULL);

	fathom_ingest_opts io, im = FATHOM_INGEST_OPTS_INIT;
	memset(&io, 0xff, sizeof io);
	CHECK_OK(fathom_ingest_opts_init(&io, FATHOM_INGEST_OPTS_VERSION));
	CHECK(io.version == im.version && io.max_file_size == im.max_file_size &&
	      io.chunk_target == im.chunk_target && io.chunk_max == im.chunk_max &&
	      io.follow_symlinks == 1 && io.use_gitignore == 1 && io.remove_missing == 1 &&
	      io.meta == NULL && io.progress == NULL && io.ident_min_len == im.ident_min_len &&
	      io.grep_max_file_size == im.grep_max_file_size && io.grep_only == 0 &&
	      io.confine_root == NULL);
	/* version 1: the fields of version 1, nothing after them touched */
	memset(&io, 0xff, sizeof io);
	CHECK_OK(fathom_ingest_opts_init(&io, 1));
	CHECK(io.version == 1 && io.chunk_target == im.chunk_target && io.cb_ctx == NULL);
	CHECK(io.ident_min_len == 0xffffffffu && io.grep_only == -1);
	/* version 4: up to threads; confine_root (version 5) untouched */
	memset(&io, 0xff, sizeof io);
	CHECK_OK(fathom_ingest_opts_init(&io, 4));
	CHECK(io.version == 4 && io.threads == 0 && io.confine_root == (const char *)(~(uintptr_t)0));

	fathom_search_opts so, sm = FATHOM_SEARCH_OPTS_INIT;
	memset(&so, 0xff, sizeof so);
	CHECK_OK(fathom_search_opts_init(&so, FATHOM_SEARCH_OPTS_VERSION));
	CHECK(so.version == sm.version && so.k == sm.k && so.match == sm.match && so.k1 == sm.k1 &&
	      so.b == sm.b && so.snippet_bytes == sm.snippet_bytes && so.time_limit == 0 &&
	      so.filters == NULL && so.path_glob == NULL && so.field_weights == NULL &&
	      so.n_field_weights == 0 && so.strict == 0);
	/* version 3: up to n_field_weights; strict (version 4) untouched */
	memset(&so, 0xff, sizeof so);
	CHECK_OK(fathom_search_opts_init(&so, 3));
	CHECK(so.version == 3 && so.k == 10 && so.n_field_weights == 0 && so.strict == -1);
	/* before version 5 nothing was unset: the built-in values */
	CHECK(so.k1 == 1.5f && so.b == 0.9f && so.snippet_bytes == 240 && so.match == FATHOM_MATCH_AUTO);
	/* version 5: unset (the index's settings, else the built-in values) */
	CHECK(sm.k == 0 && sm.match == FATHOM_MATCH_DEFAULT && sm.k1 < 0 && sm.b < 0 &&
	      sm.snippet_bytes == FATHOM_UNSET_SNIPPET);
	/* versions 1 and 2 are read by their own layout, never made by _init */
	CHECK_EQ(fathom_search_opts_init(&so, 1), FATHOM_EINVAL);
	CHECK_EQ(fathom_search_opts_init(&so, 2), FATHOM_EINVAL);

	fathom_grep_opts go, gm = FATHOM_GREP_OPTS_INIT;
	memset(&go, 0xff, sizeof go);
	CHECK_OK(fathom_grep_opts_init(&go, FATHOM_GREP_OPTS_VERSION));
	CHECK(go.version == gm.version && go.literal == 0 && go.glob == NULL && go.threads == 0 &&
	      go.on_skip == NULL && go.skip_ctx == NULL);
	/* grep takes version 3 alone: an _init never makes what is refused */
	CHECK_EQ(fathom_grep_opts_init(&go, 1), FATHOM_EINVAL);

	/* unknown versions: 0, newer than the library; and no struct */
	CHECK_EQ(fathom_open_opts_init(&oo, 0), FATHOM_EINVAL);
	CHECK_EQ(fathom_open_opts_init(&oo, FATHOM_OPEN_OPTS_VERSION + 1), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "fathom_open_opts"));
	CHECK_EQ(fathom_search_opts_init(&so, FATHOM_SEARCH_OPTS_VERSION + 1), FATHOM_EINVAL);
	CHECK_EQ(fathom_ingest_opts_init(&io, 1000), FATHOM_EINVAL);
	CHECK_EQ(fathom_search_opts_init(NULL, FATHOM_SEARCH_OPTS_VERSION), FATHOM_EINVAL);
}

static void test_output_structs(void)
{
	fathom_ingest_stats is;
	memset(&is, 0xff, sizeof is);
	CHECK_OK(fathom_ingest_stats_init(&is, FATHOM_INGEST_STATS_VERSION));
	CHECK(is.version == FATHOM_INGEST_STATS_VERSION && is.files_seen == 0 &&
	      is.skipped_by_reason[FATHOM_SKIP_SLOTS - 1] == 0 && is.files_grep_only == 0);
	fathom_stats st;
	CHECK_EQ(fathom_stats_init(&st, 0), FATHOM_EINVAL);
	CHECK_OK(fathom_stats_init(&st, FATHOM_STATS_VERSION));
	fathom_grep_stats gs;
	CHECK_EQ(fathom_grep_stats_init(&gs, FATHOM_GREP_STATS_VERSION + 1), FATHOM_EINVAL);

	/* the copy out stops at the caller's version's size */
	struct { fathom_stats s; unsigned char after[64]; } room;
	memset(&room, 0xab, sizeof room);
	room.s.version = FATHOM_STATS_VERSION;
	fathom_stats full = FATHOM_STATS_INIT;
	full.docs = 7;
	fa_struct_copy_out(FA_STATS, &room.s, &full);
	CHECK(room.s.docs == 7 && room.s.version == FATHOM_STATS_VERSION);
	int untouched = 1;
	for (size_t i = 0; i < sizeof room.after; i++)
		untouched &= room.after[i] == 0xab;
	CHECK(untouched);
	CHECK_EQ(fa_struct_size(FA_INGEST_OPTS, 1), offsetof(fathom_ingest_opts, ident_min_len));
	CHECK_EQ(fa_struct_size(FA_INGEST_OPTS, 4), offsetof(fathom_ingest_opts, confine_root));
	/* search options 1 and 2 are no prefix of 3 (read by their own layout) */
	CHECK_EQ(fa_struct_size(FA_SEARCH_OPTS, 1), 0);
	CHECK_EQ(fa_struct_size(FA_SEARCH_OPTS, 2), 0);
	CHECK_EQ(fa_struct_size(FA_STATS, 1), offsetof(fathom_stats, embedder));
	CHECK_EQ(fa_struct_size(FA_STATS, 2), offsetof(fathom_stats, bytes_vectors));
	CHECK_EQ(fa_struct_size(FA_STATS, 4), 0);

	/* the library refuses what it cannot fill, and fills what it can */
	char *dir = test_tmpdir("abi");
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	fathom_index *ix = NULL;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	if (!ix)
		return;
	const char *body = "the walrus eats clams";
	fathom_doc d = { "a", NULL, body, strlen(body), NULL, NULL, 0, NULL, 0, NULL };
	CHECK_OK(fathom_add_doc(ix, &d, NULL));
	CHECK_OK(fathom_commit(ix));
	st.version = FATHOM_STATS_VERSION + 1;
	CHECK_EQ(fathom_stats_get(&st, ix), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "fathom_stats version"));
	st.version = 0;
	CHECK_EQ(fathom_stats_get(&st, ix), FATHOM_EINVAL);
	fathom_stats ok = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&ok, ix));
	CHECK(ok.version == FATHOM_STATS_VERSION && ok.docs == 1 && ok.segments == 1);
	CHECK_STR(ok.stem_language, "english");

	const char *jl = "{\"id\": \"j\", \"body\": \"a seal\"}\n";
	is.version = 0;
	CHECK_EQ(fathom_add_jsonl_mem(ix, jl, strlen(jl), NULL, NULL, &is), FATHOM_EINVAL);
	CHECK_EQ(fathom_add_jsonl_mem(ix, jl, 0, NULL, NULL, &is), FATHOM_EINVAL);
	fathom_ingest_stats is_ok = FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_add_jsonl_mem(ix, jl, strlen(jl), NULL, NULL, &is_ok));
	CHECK(is_ok.version == FATHOM_INGEST_STATS_VERSION && is_ok.docs_added == 1 &&
	      is_ok.files_seen == 1);
	CHECK_OK(fathom_commit(ix));
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

static void test_error_codes(void)
{
	CHECK_EQ(FATHOM_EINTERRUPTED, -12);
	CHECK_EQ(FATHOM_ETIMEOUT, -13);
	CHECK(strcmp(fathom_strerror(FATHOM_ETIMEOUT), fathom_strerror(FATHOM_EINTERRUPTED)) != 0);
	CHECK(strcmp(fathom_strerror(FATHOM_ETIMEOUT), "unknown error") != 0);
	CHECK_STR(fathom_strerror(-14), "unknown error");
}

static void test_allocator(void)
{
	char *p = fathom_malloc(0);
	CHECK(p != NULL);
	p = fathom_realloc(p, 16);
	CHECK(p != NULL);
	fathom_free(p);
	int *z = fathom_calloc(4, sizeof *z);
	CHECK(z && z[0] == 0 && z[3] == 0);
	fathom_free(z);
	/* the public allocator is the seam: the countdown reaches it */
	fa_alloc_fail_after(0);
	p = fathom_malloc(8);
	long failed = fa_alloc_failed();
	fa_alloc_fail_after(-1);
	CHECK(p == NULL && failed == 1);
}

int main(void)
{
	RUN(test_opts_init);
	RUN(test_output_structs);
	RUN(test_error_codes);
	RUN(test_allocator);
	return TEST_DONE();
}
