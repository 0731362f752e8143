/*
 * test_pipeline.c — the stages between retrieval and presentation: fuse's
 * contract on synthetic candidate lists (one list is the identity, several
 * are fused by reciprocal rank, each chunk once), and fathom grep's chunks
 * entering the pipeline as a candidate list of their own source.
 */
#include <sys/stat.h>

#include "test.h"
#include "query/query_int.h"

static q_cand_list list_of(const q_source *src, const uint32_t (*sc)[2], const double *score,
                           size_t n, q_cand *store)
{
	for (size_t i = 0; i < n; i++)
		store[i] = (q_cand){ sc[i][0], sc[i][1], score[i], NULL };
	q_cand_list l = { src, store, n, n };
	return l;
}

static void test_fuse(void)
{
	static const q_source kw = { FATHOM_SOURCE_KEYWORD, NULL, NULL, NULL };
	static const q_source gr = { FATHOM_SOURCE_GREP, NULL, NULL, NULL };
	fa_arena a;
	fa_arena_init(&a, 4096, 0);
	/* A: chunks 1, 2, 3 of segment 0; B: 3, 4 of segment 0, then 1 */
	static const uint32_t ca[3][2] = { { 0, 1 }, { 0, 2 }, { 0, 3 } };
	static const uint32_t cb[3][2] = { { 0, 3 }, { 1, 4 }, { 0, 1 } };
	static const double sa[3] = { 10.0, 8.0, 5.0 }, sb[3] = { 4.0, 3.0, 2.0 };
	q_cand va[3], vb[3];
	q_cand_list lists[2] = { list_of(&kw, ca, sa, 3, va), list_of(&gr, cb, sb, 3, vb) };

	/* one list: the identity, scores and order as given, not fused */
	q_pool p;
	CHECK_OK(q_fuse(&p, &a, lists, 1));
	CHECK_EQ(p.n, 3);
	for (size_t i = 0; i < p.n && i < 3; i++) {
		CHECK_EQ(p.v[i].seg, ca[i][0]);
		CHECK_EQ(p.v[i].chunk, ca[i][1]);
		CHECK(p.v[i].score == sa[i]);
		CHECK_EQ(p.v[i].fused_rank, 0);
		CHECK_EQ(p.v[i].nfound, 1);
		CHECK_EQ(p.v[i].found[0].rank, i + 1);
		CHECK(q_found_cand(&p, &p.v[i].found[0]) == &va[i]);
	}

	/* two lists: each chunk once, by the sum of 1 / (60 + rank). (0,1) and
	 * (0,3) tie (ranks 1 and 3 each): the better best rank ties too, so
	 * the earlier list's goes first; (0,2) and (1,4) tie at rank 2 alike. */
	CHECK_OK(q_fuse(&p, &a, lists, 2));
	CHECK_EQ(p.n, 4);
	static const uint32_t want[4][2] = { { 0, 1 }, { 0, 3 }, { 0, 2 }, { 1, 4 } };
	for (size_t i = 0; i < p.n && i < 4; i++) {
		CHECK_EQ(p.v[i].seg, want[i][0]);
		CHECK_EQ(p.v[i].chunk, want[i][1]);
		CHECK_EQ(p.v[i].fused_rank, i + 1);
		CHECK(p.v[i].score == p.v[i].fused);
	}
	if (p.n == 4) {
		CHECK(p.v[0].fused == 1.0 / 61 + 1.0 / 63);
		CHECK(p.v[2].fused == 1.0 / 62);
		CHECK(p.v[0].fused > p.v[2].fused);
		/* (0,1): rank 1 in A, rank 3 in B, in list order */
		CHECK_EQ(p.v[0].nfound, 2);
		CHECK(p.v[0].found[0].list == 0 && p.v[0].found[0].rank == 1);
		CHECK(p.v[0].found[1].list == 1 && p.v[0].found[1].rank == 3);
		CHECK(q_found_cand(&p, &p.v[0].found[1])->score == 2.0);
		CHECK_EQ(p.v[3].nfound, 1);
		CHECK_EQ(p.v[3].found[0].list, 1);
	}

	/* a list naming a chunk twice counts its better rank once */
	static const uint32_t cd[2][2] = { { 0, 9 }, { 0, 9 } };
	static const double sd[2] = { 2.0, 1.0 };
	q_cand vd[2];
	q_cand_list dup[2] = { list_of(&kw, cd, sd, 2, vd), list_of(&gr, cd, sd, 1, vb) };
	CHECK_OK(q_fuse(&p, &a, dup, 2));
	CHECK_EQ(p.n, 1);
	CHECK(p.n == 1 && p.v[0].nfound == 2 && p.v[0].fused == 1.0 / 61 + 1.0 / 61);

	/* empty lists, and too many */
	q_cand_list none[2] = { { &kw, NULL, 0, 0 }, { &gr, NULL, 0, 0 } };
	CHECK_OK(q_fuse(&p, &a, none, 2));
	CHECK_EQ(p.n, 0);
	q_cand_list many[Q_MAX_LISTS + 1];
	memset(many, 0, sizeof many);
	CHECK_EQ(q_fuse(&p, &a, many, Q_MAX_LISTS + 1), FATHOM_EINVAL);

	/* q_cands_add grows a list in the arena */
	q_cand_list grown = { &kw, NULL, 0, 0 };
	for (uint32_t i = 0; i < 100; i++)
		CHECK_OK(q_cands_add(&grown, &a, 0, i, 100.0 - i, NULL));
	CHECK_EQ(grown.n, 100);
	CHECK(grown.n == 100 && grown.v[99].chunk == 99 && grown.v[99].score == 1.0);
	fa_arena_free(&a);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	test_write(path, text);
}

/* fathom grep's chunks: the grep source's score and rank, no keyword
 * receipt, the lines and the snippet from the source's receipt. */
static void test_grep_chunks(void)
{
	char *dir = test_tmpdir("pipeline");
	char src[4096], ixdir[4096];
	snprintf(src, sizeof src, "%s/src", dir);
	snprintf(ixdir, sizeof ixdir, "%s/ix", dir);
	CHECK(mkdir(src, 0755) == 0);
	write_file(src, "a.txt", "one lock\ntwo\nthree lock lock\nfour lock\n");
	write_file(src, "b.txt", "nothing here\nbut one lock\n");
	write_file(src, "c.txt", "no match at all\n");
	fathom_index *ix = NULL;
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	CHECK_OK(fathom_open(&ix, ixdir, &oo));
	if (!ix)
		goto out;
	const char *paths[] = { src };
	CHECK_OK(fathom_index_paths(ix, paths, 1, NULL, NULL));
	CHECK_OK(fathom_commit(ix));
	fathom_results *r = NULL;
	CHECK_OK(fathom_grep_chunks(&r, ix, "lock", NULL, 10));
	CHECK_EQ(fathom_results_count(r), 2);
	const fathom_hit *h = fathom_results_hit(r, 0);
	if (h && fathom_results_count(r) == 2) {
		CHECK(strstr(h->path, "a.txt") != NULL);
		CHECK_EQ(h->n_sources, 1);
		CHECK_EQ(h->sources[0].source, FATHOM_SOURCE_GREP);
		CHECK_EQ(h->sources[0].rank, 1);
		CHECK(h->sources[0].score == 3.0 && h->score == 3.0);
		CHECK(fathom_hit_source(h, FATHOM_SOURCE_GREP) == &h->sources[0]);
		CHECK(fathom_hit_source(h, FATHOM_SOURCE_KEYWORD) == NULL);
		CHECK_EQ(h->n_fields, 0);
		CHECK(h->field_score == NULL && h->matched == NULL && h->bonus == 1.0);
		CHECK_EQ(h->n_match_lines, 3);
		CHECK(h->n_match_lines == 3 && h->match_lines[0] == 1 && h->match_lines[2] == 4);
		CHECK_STR(h->snippet, "one lock");
		CHECK(h->n_highlights == 1 && h->highlights[0].start == 4 && h->highlights[0].len == 4);
		const fathom_hit *h2 = fathom_results_hit(r, 1);
		CHECK(strstr(h2->path, "b.txt") != NULL);
		CHECK(h2->sources[0].rank == 2 && h2->score == 1.0);
		CHECK(h2->n_match_lines == 1 && h2->match_lines[0] == 2);
	}
	fathom_results_free(r);
	/* k cuts the list */
	CHECK_OK(fathom_grep_chunks(&r, ix, "lock", NULL, 1));
	CHECK_EQ(fathom_results_count(r), 1);
	fathom_results_free(r);
	fathom_close(ix);
out:
	test_rmrf(dir);
	free(dir);
}

static void test_source_names(void)
{
	CHECK_STR(fathom_source_name(FATHOM_SOURCE_KEYWORD), "keyword");
	CHECK_STR(fathom_source_name(FATHOM_SOURCE_GREP), "grep");
	CHECK_STR(fathom_source_name(FATHOM_SOURCE_VECTOR), "vector");
	CHECK_STR(fathom_source_name(FATHOM_SOURCE_FUSED), "fused");
	CHECK_STR(fathom_source_name(FATHOM_SOURCE_RERANK), "rerank");
	CHECK_STR(fathom_source_name(FATHOM_SOURCE_IDENT), "ident");
	CHECK(fathom_source_name(6) == NULL && fathom_source_name(-1) == NULL);
	CHECK(fathom_hit_source(NULL, FATHOM_SOURCE_KEYWORD) == NULL);
}

int main(void)
{
	RUN(test_fuse);
	RUN(test_grep_chunks);
	RUN(test_source_names);
	return TEST_DONE();
}
