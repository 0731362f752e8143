/*
 * test_hybrid.c — vectors through the whole pipeline: fusion arithmetic
 * against hand-computed values, vectors that come with the documents
 * (external), the four modes, strict never answering what full text does
 * not, a refused query vector and embedder, a damaged VECS section, and
 * vectors kept through a merge.
 */
#include <math.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fathom.h"
#include "query/query_int.h"
#include "test.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) < 1e-9)

/* ---- fusion arithmetic ---------------------------------------------------------- */

static void set_list(q_cand_list *l, q_cand *v, size_t n)
{
	memset(l, 0, sizeof *l);
	l->v = v;
	l->n = l->cap = n;
}

static const q_pooled *find(const q_pool *p, uint32_t chunk)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].chunk == chunk)
			return &p->v[i];
	return NULL;
}

static void test_fusion_arithmetic(void)
{
	/* keyword: chunks 1 (score 10), 2 (6), 3 (2); vector: 3 (0.9), 4 (0.5),
	 * 1 (0.1) */
	q_cand kw[3] = { { 0, 1, 10, NULL }, { 0, 2, 6, NULL }, { 0, 3, 2, NULL } };
	q_cand vc[3] = { { 0, 3, 0.9, NULL }, { 0, 4, 0.5, NULL }, { 0, 1, 0.1, NULL } };
	q_cand_list lists[2];
	set_list(&lists[0], kw, 3);
	set_list(&lists[1], vc, 3);
	fa_arena a;
	fa_arena_init(&a, 4096, 0);
	q_pool p;

	/* RRF: 1 = 1/61 + 1/63, 2 = 1/62, 3 = 1/63 + 1/61, 4 = 1/62 */
	CHECK_OK(q_fuse_by(&p, &a, lists, 2, NULL));
	CHECK_EQ(p.n, 4);
	CHECK(find(&p, 1) && NEAR(find(&p, 1)->fused, 1.0 / 61 + 1.0 / 63));
	CHECK(find(&p, 4) && NEAR(find(&p, 4)->fused, 1.0 / 62));
	/* 1 and 3 tie; 1's best rank (1 in keyword) comes before 3's (1 in
	 * vector): the earlier list wins the tie */
	CHECK_EQ(p.v[0].chunk, 1);
	CHECK_EQ(p.v[1].chunk, 3);

	/* convex, alpha 0.7: keyword normalised (s - 2) / 8, vector
	 * (s - 0.1) / 0.8 */
	q_fusion f = { FATHOM_FUSION_CONVEX, { 0.7, 0.3 } };
	CHECK_OK(q_fuse_by(&p, &a, lists, 2, &f));
	CHECK(find(&p, 1) && NEAR(find(&p, 1)->fused, 0.7 * 1.0 + 0.3 * 0.0));
	CHECK(find(&p, 2) && NEAR(find(&p, 2)->fused, 0.7 * 0.5));
	CHECK(find(&p, 3) && NEAR(find(&p, 3)->fused, 0.7 * 0.0 + 0.3 * 1.0));
	CHECK(find(&p, 4) && NEAR(find(&p, 4)->fused, 0.3 * 0.5));
	CHECK_EQ(p.v[0].chunk, 1);
	CHECK_EQ(p.v[1].chunk, 2);
	CHECK_EQ(p.v[2].chunk, 3);
	CHECK_EQ(p.v[3].chunk, 4);
	CHECK_EQ(p.v[3].fused_rank, 4);

	/* rrf-weighted, alpha 0.25 */
	q_fusion w = { FATHOM_FUSION_RRF_WEIGHTED, { 0.25, 0.75 } };
	CHECK_OK(q_fuse_by(&p, &a, lists, 2, &w));
	CHECK(find(&p, 3) && NEAR(find(&p, 3)->fused, 0.25 / 63 + 0.75 / 61));
	CHECK(find(&p, 2) && NEAR(find(&p, 2)->fused, 0.25 / 62));
	CHECK_EQ(p.v[0].chunk, 3);

	/* a convex tie is broken by reciprocal rank under the same weights:
	 * keyword 1 (10), 2 (6), 5 (2); vector 4 (0.9), 3 (0.5). At alpha 1,
	 * 5 (keyword's last, normalised 0), 4 and 3 (vector only) tie at 0,
	 * and full text's order is kept whole, the vectors' chunks after it
	 * in their order (by best rank alone 4 would come before 5); at
	 * alpha 0, the vectors' order, then full text's */
	q_cand kw2[3] = { { 0, 1, 10, NULL }, { 0, 2, 6, NULL }, { 0, 5, 2, NULL } };
	q_cand vc2[2] = { { 0, 4, 0.9, NULL }, { 0, 3, 0.5, NULL } };
	q_cand_list tl[2];
	set_list(&tl[0], kw2, 3);
	set_list(&tl[1], vc2, 2);
	q_fusion one = { FATHOM_FUSION_CONVEX, { 1.0, 0.0 } };
	CHECK_OK(q_fuse_by(&p, &a, tl, 2, &one));
	CHECK(p.n == 5 && p.v[0].chunk == 1 && p.v[1].chunk == 2 && p.v[2].chunk == 5 &&
	      p.v[3].chunk == 4 && p.v[4].chunk == 3);
	q_fusion zero = { FATHOM_FUSION_CONVEX, { 0.0, 1.0 } };
	CHECK_OK(q_fuse_by(&p, &a, tl, 2, &zero));
	CHECK(p.n == 5 && p.v[0].chunk == 4 && p.v[1].chunk == 3 && p.v[2].chunk == 1 &&
	      p.v[3].chunk == 2 && p.v[4].chunk == 5);

	/* a list whose scores are all equal normalises to 1 */
	q_cand same[2] = { { 0, 7, 5, NULL }, { 0, 8, 5, NULL } };
	set_list(&lists[1], same, 2);
	CHECK_OK(q_fuse_by(&p, &a, lists, 2, &f));
	CHECK(find(&p, 7) && NEAR(find(&p, 7)->fused, 0.3));
	fa_arena_free(&a);
}

/* ---- vectors that come with the documents ------------------------------------------ */

/* Four documents on 4-d axes; "d" has no vector. */
static const char docs[] =
	"{\"id\":\"a\",\"title\":\"Alpha\",\"body\":\"kestrel nests on cliffs\",\"vector\":[1,0,0,0]}\n"
	"{\"id\":\"b\",\"title\":\"Beta\",\"body\":\"heron wades in marsh\",\"vector\":[0,1,0,0]}\n"
	"{\"id\":\"c\",\"title\":\"Gamma\",\"body\":\"kestrel hovers\",\"vector\":[0,0.6,0.8,0]}\n"
	"{\"id\":\"d\",\"title\":\"Delta\",\"body\":\"kestrel and heron\"}\n";

static fathom_index *make(char **dir)
{
	*dir = test_tmpdir("hybrid");
	fathom_index *ix = test_open(*dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(ix, "embedder.model", "axes"));
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_add_jsonl_mem(ix, docs, strlen(docs), "docs", NULL, &st));
	CHECK_OK(fathom_commit(ix));
	return ix;
}

static const char *top(fathom_index *ix, const char *q, int mode, const float *v, uint32_t dim,
                       size_t *n)
{
	static char id[64];
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = mode;
	so.query_vector = v;
	so.query_vector_dim = dim;
	fathom_results *r = NULL;
	int rc = fathom_search(&r, ix, q, &so);
	*n = 0;
	id[0] = '\0';
	if (rc) {
		snprintf(id, sizeof id, "error %d", rc);
		return id;
	}
	*n = fathom_results_count(r);
	if (*n)
		snprintf(id, sizeof id, "%s", fathom_results_hit(r, 0)->doc_id);
	fathom_results_free(r);
	return id;
}

static void test_external_modes(void)
{
	char *dir;
	fathom_index *ix = make(&dir);
	char *kind = NULL;
	CHECK_OK(fathom_config_get(&kind, NULL, ix, "embedder"));
	CHECK_STR(kind, "external");
	fathom_free(kind);
	size_t n;
	float qc[4] = { 0, 0.5f, 1.0f, 0 };  /* nearest: c, then b */
	/* semantic: by cosine alone; d (no vector) is never found */
	CHECK_STR(top(ix, "anything", FATHOM_MODE_SEMANTIC, qc, 4, &n), "c");
	CHECK_EQ(n, 3);
	/* keyword: "heron" is in b and d */
	top(ix, "heron", FATHOM_MODE_KEYWORD, NULL, 0, &n);
	CHECK_EQ(n, 2);
	/* strict reorders them by cosine: b (0.45 with qc) above d (none) */
	CHECK_STR(top(ix, "heron", FATHOM_MODE_STRICT, qc, 4, &n), "b");
	/* strict: only what full text found (b, d), reordered; a query whose
	 * words occur nowhere answers nothing, whatever the vectors say */
	top(ix, "heron", FATHOM_MODE_STRICT, qc, 4, &n);
	CHECK_EQ(n, 2);
	top(ix, "zebra", FATHOM_MODE_STRICT, qc, 4, &n);
	CHECK_EQ(n, 0);
	/* hybrid: full text's and the vectors' candidates together */
	top(ix, "heron", FATHOM_MODE_HYBRID, qc, 4, &n);
	CHECK_EQ(n, 4);
	/* a hit found by both carries both sources */
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = FATHOM_MODE_HYBRID;
	so.query_vector = qc;
	so.query_vector_dim = 4;
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, "heron", &so));
	int both = 0;
	for (size_t i = 0; r && i < fathom_results_count(r); i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		if (strcmp(h->doc_id, "b") == 0)
			both = fathom_hit_source(h, FATHOM_SOURCE_KEYWORD) &&
			       fathom_hit_source(h, FATHOM_SOURCE_VECTOR) &&
			       fathom_hit_source(h, FATHOM_SOURCE_FUSED);
	}
	CHECK(both);
	/* the route receipt: three vectors scored one by one (no graph in so
	 * small a segment), d's chunk without one */
	const fathom_route_receipt *rt = fathom_results_route(r);
	CHECK(rt && rt->mode == FATHOM_MODE_HYBRID && rt->vector_scored == 3 &&
	      rt->vector_graphs == 0 && rt->vector_missing == 1);
	fathom_results_free(r);
	/* a phrase that matches nothing is relaxed to its words in hybrid
	 * mode as in keyword mode: the vectors' hits do not stop it */
	r = NULL;
	CHECK_OK(fathom_search(&r, ix, "\"heron kestrel\"", &so));
	CHECK(r && fathom_results_count(r) == 4);
	int relaxed_kw = 0;
	for (size_t i = 0; r && i < fathom_results_count(r); i++)
		relaxed_kw += fathom_hit_source(fathom_results_hit(r, i), FATHOM_SOURCE_KEYWORD) != NULL;
	CHECK_EQ(relaxed_kw, 4);   /* a, c (kestrel), b (heron), d (both) */
	fathom_results_free(r);
	/* min-similarity drops vector-only hits below it */
	so.min_similarity = 0.95f;
	CHECK_OK(fathom_search(&r, ix, "heron", &so));
	CHECK(r && fathom_results_count(r) == 3);   /* b, d (keyword) and c (0.98) */
	fathom_results_free(r);
	/* a query vector of another dimension, or none: refused */
	CHECK_STR(top(ix, "x", FATHOM_MODE_SEMANTIC, qc, 3, &n), "error -4");
	CHECK_STR(top(ix, "x", FATHOM_MODE_SEMANTIC, NULL, 0, &n), "error -4");
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* ---- the late-fusion pool: identifier and grep candidates ------------------------------ */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	test_write(path, text);
}

static fathom_results *search_mode(fathom_index *ix, const char *q, int mode, const char *glob)
{
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = mode;
	so.path_glob = glob;
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, q, &so));
	return r;
}

static const fathom_hit *hit_of(const fathom_results *r, const char *base)
{
	for (size_t i = 0; r && i < fathom_results_count(r); i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		const char *s = strrchr(h->path, '/');
		if (s && strcmp(s + 1, base) == 0)
			return h;
	}
	return NULL;
}

static void test_pool(void)
{
	char *dir = test_tmpdir("pool");
	char src[1024], idx[1024];
	snprintf(src, sizeof src, "%s/src", dir);
	snprintf(idx, sizeof idx, "%s/ix", dir);
	CHECK(mkdir(src, 0700) == 0);
	write_file(src, "a.md", "Ticket TC-1001: login fails when the password has a space.\n");
	write_file(src, "b.md", "Release notes.\n\nFixed TC-1001 and TC-1002 in the web client.\n");
	write_file(src, "c.md", "TC-1002: logout hangs forever.\n");
	write_file(src, "d.md", "Unrelated text about kestrels.\n");
	fathom_index *ix = test_open(idx, FATHOM_OPEN_CREATE);
	const char *paths[1] = { src };
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_index_paths(ix, paths, 1, NULL, &st));
	CHECK_OK(fathom_commit(ix));

	/* an identifier lookup: full text, the identifier's chunks and grep
	 * meet in one pool; each hit names every source that found it */
	fathom_results *r = search_mode(ix, "TC-1001", FATHOM_MODE_DEFAULT, NULL);
	const fathom_route_receipt *rt = fathom_results_route(r);
	CHECK(rt && rt->shape == FATHOM_SHAPE_IDENTIFIER && rt->mode == FATHOM_MODE_KEYWORD);
	CHECK(rt && (rt->sources >> FATHOM_SOURCE_IDENT & 1) && (rt->sources >> FATHOM_SOURCE_GREP & 1));
	CHECK(rt && rt->fusion == FATHOM_FUSION_RRF);
	CHECK_EQ(fathom_results_count(r), 2);
	const fathom_hit *a = hit_of(r, "a.md"), *b = hit_of(r, "b.md");
	CHECK(a && fathom_hit_source(a, FATHOM_SOURCE_KEYWORD) &&
	      fathom_hit_source(a, FATHOM_SOURCE_IDENT) && fathom_hit_source(a, FATHOM_SOURCE_GREP) &&
	      fathom_hit_source(a, FATHOM_SOURCE_FUSED));
	/* grep's receipt: the matching line */
	CHECK(b && b->n_match_lines == 1 && b->match_lines[0] == 3);
	CHECK(!hit_of(r, "c.md") && !hit_of(r, "d.md"));
	/* the identifier's chunks counted once, whatever the sources */
	CHECK(fathom_results_nidents(r) == 1 && fathom_results_ident(r, 0)->chunks == 2);
	fathom_results_free(r);

	/* filters bind every source: grep does not bring back a filtered
	 * file */
	r = search_mode(ix, "TC-1001", FATHOM_MODE_DEFAULT, "*a.md");
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK(hit_of(r, "a.md") != NULL);
	fathom_results_free(r);

	/* a word beside the identifier is a condition grep cannot check: the
	 * pool confirms what full text found (the same chunks), and an empty
	 * answer stays empty, with its reason */
	r = search_mode(ix, "TC-1002 logout", FATHOM_MODE_DEFAULT, NULL);
	fathom_results *kw = search_mode(ix, "TC-1002 logout", FATHOM_MODE_KEYWORD, NULL);
	CHECK_EQ(fathom_results_count(r), fathom_results_count(kw));
	for (size_t i = 0; i < fathom_results_count(kw); i++)
		CHECK(hit_of(r, strrchr(fathom_results_hit(kw, i)->path, '/') + 1) != NULL);
	CHECK(hit_of(r, "c.md") && fathom_hit_source(hit_of(r, "c.md"), FATHOM_SOURCE_GREP));
	fathom_results_free(kw);
	fathom_results_free(r);
	{
		fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
		so.match = FATHOM_MATCH_ALL;
		CHECK_OK(fathom_search(&r, ix, "TC-1001 kestrels", &so));
		CHECK_EQ(fathom_results_count(r), 0);
		CHECK(strstr(fathom_results_why(r), "kestrel") != NULL);
		fathom_results_free(r);
		/* both identifiers required: only the chunk holding both, though
		 * grep finds each in other files */
		CHECK_OK(fathom_search(&r, ix, "TC-1001 TC-1002", &so));
		CHECK_EQ(fathom_results_count(r), 1);
		CHECK(hit_of(r, "b.md") != NULL);
		fathom_results_free(r);
	}

	/* natural language asks no pool */
	r = search_mode(ix, "why does the login fail", FATHOM_MODE_DEFAULT, NULL);
	rt = fathom_results_route(r);
	CHECK(rt && rt->shape == FATHOM_SHAPE_QUESTION && rt->sources == 1u << FATHOM_SOURCE_KEYWORD);
	for (size_t i = 0; r && i < fathom_results_count(r); i++)
		CHECK_EQ(fathom_results_hit(r, i)->n_sources, 1);
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* ---- the corpus embedder: stats and the drift of a retraining ----------------------- */

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void add_body(fathom_index *ix, int d, const char *body, size_t len)
{
	char key[32];
	snprintf(key, sizeof key, "doc%d", d);
	fathom_doc doc = { 0 };
	doc.id = key;
	doc.body = body;
	doc.body_len = len;
	CHECK_OK(fathom_add_doc(ix, &doc, NULL));
}

/* n documents of words drawn from topic groups (a fixed generator): the
 * corpus model learns which words go together. */
static void add_topics(fathom_index *ix, int first, int n, int mix)
{
	static const char *const topic[4][6] = {
		{ "kestrel", "heron", "marsh", "nest", "feather", "wing" },
		{ "kernel", "driver", "module", "interrupt", "register", "device" },
		{ "protein", "cell", "gene", "mutation", "receptor", "tissue" },
		{ "river", "valley", "glacier", "delta", "basin", "flood" },
	};
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(first + 1);
	for (int d = first; d < first + n; d++) {
		char body[2048];
		size_t len = 0;
		int t = d % 4;
		for (int w = 0; w < 40; w++) {
			next_rand(&x);
			/* mix: how often a word comes from the next topic instead */
			int tt = (int)(x % 100) < mix ? (t + 1) % 4 : t;
			len += (size_t)snprintf(body + len, sizeof body - len, "%s ",
			                        topic[tt][(x >> 8) % 6]);
		}
		add_body(ix, d, body, len);
	}
}

static void test_corpus_drift(void)
{
	char *dir = test_tmpdir("drift");
	fathom_index *ix = test_open(dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(ix, "embedder", "corpus"));
	add_topics(ix, 0, 200, 5);
	CHECK_OK(fathom_commit(ix));
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&st, ix));
	CHECK_STR(st.embedder, "corpus");
	CHECK_EQ(st.vector_chunks, 200);
	CHECK(st.vector_dim > 0);
	/* the vectors are counted, and in the total (200 rows at least) */
	CHECK(st.bytes_vectors >= 200ull * st.vector_dim * 4);
	CHECK_EQ(st.bytes_total, st.bytes_dict + st.bytes_postings + st.bytes_positions +
	                         st.bytes_docstore + st.bytes_docs + st.bytes_chunks +
	                         st.bytes_trigrams + st.bytes_vectors + st.bytes_other);
	CHECK(st.embedder_drift == -1.0);   /* trained once, never retrained */
	/* retrained on the same chunks: the same model (deterministic) */
	CHECK_OK(fathom_optimize(ix));
	CHECK_OK(fathom_stats_get(&st, ix));
	CHECK(st.embedder_drift_pairs > 100 && st.embedder_drift < 1e-6);
	/* new chunks that mix the topics: the model moves, and says so */
	add_topics(ix, 200, 200, 45);
	CHECK_OK(fathom_commit(ix));
	uint64_t gen = fathom_stats_get(&st, ix) == 0 ? st.generation : 0;
	CHECK_OK(fathom_optimize(ix));
	CHECK_OK(fathom_stats_get(&st, ix));
	CHECK(st.embedder_drift > 1e-3 && st.embedder_drift <= 2.0);
	CHECK_EQ(st.embedder_drift_generation, gen);
	CHECK_EQ(st.vector_chunks, 400);
	fathom_close(ix);
	/* an index without an embedder: lexical only */
	char *dir2 = test_tmpdir("drift-none");
	ix = test_open(dir2, FATHOM_OPEN_CREATE);
	add_topics(ix, 0, 3, 0);
	CHECK_OK(fathom_commit(ix));
	CHECK_OK(fathom_stats_get(&st, ix));
	CHECK_STR(st.embedder, "none");
	CHECK(st.vector_chunks == 0 && st.vector_dim == 0 && st.embedder_drift == -1.0);
	CHECK_EQ(st.bytes_vectors, 0);
	fathom_close(ix);
	test_rmrf(dir);
	test_rmrf(dir2);
	free(dir);
	free(dir2);
}

/* ---- glossary candidates from the corpus model's word space ------------------------ */

typedef struct cand_find {
	const char *a, *b;
	uint32_t id;
	const char *status;
	int found;
} cand_find;

static int find_cand(void *ctx, const fathom_gloss_item *it)
{
	cand_find *f = ctx;
	if (strcmp(it->kind, "candidate") != 0 || it->n_terms != 2 ||
	    strcmp(it->source, "neighbour") != 0)
		return 0;
	if ((strcmp(it->terms[0], f->a) == 0 && strcmp(it->terms[1], f->b) == 0) ||
	    (strcmp(it->terms[0], f->b) == 0 && strcmp(it->terms[1], f->a) == 0)) {
		f->found++;
		f->id = it->id;
		f->status = it->status;
	}
	return 0;
}

static int has_cand(fathom_index *ix, const char *a, const char *b, cand_find *f)
{
	memset(f, 0, sizeof *f);
	f->a = a;
	f->b = b;
	CHECK_OK(fathom_glossary_list(ix, "candidate", find_cand, f));
	return f->found;
}

static void test_glossary_neighbours(void)
{
	static const char *const topic[3][5] = {
		{ "kestrel", "heron", "marsh", "nest", "feather" },
		{ "kernel", "driver", "module", "interrupt", "register" },
		{ "river", "valley", "glacier", "delta", "basin" },
	};
	char *dir = test_tmpdir("gloss-nb");
	fathom_index *ix = test_open(dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(ix, "embedder", "corpus"));
	uint64_t x = 88172645463325252ull;
	for (int d = 0; d < 300; d++) {
		char body[2048];
		size_t len = 0;
		int t = d % 3;
		for (int w = 0; w < 30; w++) {
			next_rand(&x);
			const char *word = topic[t][(x >> 8) % 5];
			/* topic 0 spells one word two ways, a document one of them
			 * (substitutes: same company, never together); topic 1's
			 * documents say "bone marrow" (a collocation) */
			if (t == 0 && w % 3 == 0)
				word = (d / 3) % 2 ? "tumour" : "tumor";
			if (t == 1 && w % 5 == 0)
				word = "bone marrow";
			len += (size_t)snprintf(body + len, sizeof body - len, "%s ", word);
		}
		add_body(ix, d, body, len);
	}
	CHECK_OK(fathom_commit(ix));
	size_t proposed = 0;
	CHECK_OK(fathom_glossary_propose(ix, &proposed));
	CHECK_OK(fathom_commit(ix));
	cand_find f;
	/* the substitutes are proposed; words the model puts together because
	 * they share their chunks (a topic's words, a collocation) are not */
	CHECK(has_cand(ix, "tumor", "tumour", &f) == 1 && strcmp(f.status, "pending") == 0);
	CHECK(has_cand(ix, "heron", "nest", &f) == 0);
	CHECK(has_cand(ix, "kestrel", "marsh", &f) == 0);
	CHECK(has_cand(ix, "interrupt", "register", &f) == 0);
	CHECK(has_cand(ix, "bone", "marrow", &f) == 0);
	/* a rejection is remembered: proposing again leaves it rejected */
	CHECK(has_cand(ix, "tumor", "tumour", &f) == 1);
	CHECK_OK(fathom_glossary_decide(ix, f.id, 0));
	CHECK_OK(fathom_commit(ix));
	CHECK_OK(fathom_glossary_propose(ix, &proposed));
	CHECK_OK(fathom_commit(ix));
	CHECK(has_cand(ix, "tumor", "tumour", &f) == 1 && strcmp(f.status, "rejected") == 0);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

static void test_refused_embedder(void)
{
	char *dir;
	fathom_index *ix = make(&dir);
	/* vectors of another model: refused, both named */
	CHECK_OK(fathom_config_set(ix, "embedder.model", "other"));
	const char more[] = "{\"id\":\"e\",\"body\":\"egret\",\"vector\":[0,0,0,1]}\n";
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	int rc = fathom_add_jsonl_mem(ix, more, strlen(more), "more", NULL, &st);
	CHECK_EQ(rc, FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "model=axes") && strstr(fathom_errmsg(), "model=other"));
	fathom_rollback(ix);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

static void test_vectors_survive_merge(void)
{
	char *dir;
	fathom_index *ix = make(&dir);
	const char more[] = "{\"id\":\"e\",\"body\":\"egret\",\"vector\":[0,0,0,1]}\n";
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_add_jsonl_mem(ix, more, strlen(more), "more", NULL, &st));
	CHECK_OK(fathom_delete_doc(ix, "a"));
	CHECK_OK(fathom_commit(ix));
	CHECK_OK(fathom_optimize(ix));
	size_t n;
	float qe[4] = { 0, 0, 0, 1 }, qa[4] = { 1, 0, 0, 0 };
	CHECK_STR(top(ix, "x", FATHOM_MODE_SEMANTIC, qe, 4, &n), "e");
	/* the deleted document is gone from the vectors too */
	top(ix, "x", FATHOM_MODE_SEMANTIC, qa, 4, &n);
	CHECK_EQ(n, 3);
	fathom_results *r = NULL;
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = FATHOM_MODE_SEMANTIC;
	so.query_vector = qa;
	so.query_vector_dim = 4;
	CHECK_OK(fathom_search(&r, ix, "x", &so));
	for (size_t i = 0; r && i < fathom_results_count(r); i++)
		CHECK(strcmp(fathom_results_hit(r, i)->doc_id, "a") != 0);
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* A byte of the VECS section changed (its page CRC left as it was): a
 * search reading the vectors fails with ECORRUPT naming the file, never a
 * wrong answer or a crash; a keyword search, which does not read them,
 * still answers. */
static void test_damaged_vectors(void)
{
	char *dir;
	fathom_index *ix = make(&dir);
	fathom_close(ix);
	char seg[1024];
	snprintf(seg, sizeof seg, "%s/seg-00000001.fseg", dir);
	size_t size;
	unsigned char *buf = test_read_file(seg, &size);
	uint64_t off = 0, len = 0;
	CHECK(test_find_section(buf, size, "VECS", &off, &len));
	CHECK(off > 0 && len > 100 && off + len <= (uint64_t)size);
	buf[off + 100] ^= 0x40;
	test_write_file(seg, buf, size);
	free(buf);
	ix = test_open(dir, 0);
	size_t n;
	float q[4] = { 1, 0, 0, 0 };
	CHECK_STR(top(ix, "x", FATHOM_MODE_SEMANTIC, q, 4, &n), "error -3");
	CHECK(strstr(fathom_errmsg(), "seg-00000001.fseg") != NULL);
	top(ix, "heron", FATHOM_MODE_KEYWORD, NULL, 0, &n);
	CHECK_EQ(n, 2);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* ---- the steps of a long commit, told ------------------------------------------------ */

typedef struct steps_seen {
	char order[8][32];
	int n;
	uint64_t last_done, last_total;
	int backwards, ends;
} steps_seen;

static void on_step(void *ctx, const char *step, uint64_t done, uint64_t total)
{
	steps_seen *s = ctx;
	if (s->n == 0 || strcmp(s->order[s->n - 1], step) != 0) {
		if (s->n < 8)
			snprintf(s->order[s->n++], sizeof s->order[0], "%s", step);
		s->last_done = 0;
	}
	s->backwards += done < s->last_done || done > total;
	s->ends += done == total;
	s->last_done = done;
	s->last_total = total;
}

/* The corpus embedder's first commit tells its four steps in order, each
 * counting up to its total (the chunks; factorising 0 then 1 of 1); a
 * commit with nothing to train tells nothing. */
static void test_step_progress(void)
{
	char *dir = test_tmpdir("steps");
	fathom_index *ix = test_open(dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(ix, "embedder", "corpus"));
	add_topics(ix, 0, 120, 10);
	steps_seen s;
	memset(&s, 0, sizeof s);
	fathom_set_step_progress(ix, on_step, &s);
	CHECK_OK(fathom_commit(ix));
	CHECK_EQ(s.n, 4);
	CHECK_STR(s.order[0], "counting words");
	CHECK_STR(s.order[1], "co-occurrences");
	CHECK_STR(s.order[2], "factorising");
	CHECK_STR(s.order[3], "embedding");
	CHECK_EQ(s.backwards, 0);
	CHECK(s.ends >= 4);
	CHECK(s.last_done == 120 && s.last_total == 120);
	memset(&s, 0, sizeof s);
	add_topics(ix, 120, 5, 10);
	CHECK_OK(fathom_commit(ix));   /* trained already: nothing long */
	CHECK_EQ(s.n, 0);
	fathom_set_step_progress(ix, NULL, NULL);
	CHECK_OK(fathom_optimize(ix));   /* retrains, not told */
	CHECK_EQ(s.n, 0);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* ---- hybrid's vector side on the helper thread ---------------------------------------- */

/* Every hit of q in hybrid mode, as "id score;" (scores to the bit). */
static void hybrid_hits(fathom_index *ix, const char *q, char *out, size_t cap)
{
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = FATHOM_MODE_HYBRID;
	so.k = 20;
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, q, &so));
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; r && i < fathom_results_count(r) && len < cap; i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		len += (size_t)snprintf(out + len, cap - len, "%s %a;", h->doc_id, h->score);
	}
	fathom_results_free(r);
}

/* The same answers whether the vectors run beside full text on the helper
 * thread or after it on the calling one, query after query on one handle,
 * and in a forked child (where the parent's thread does not exist). */
static void test_helper_thread(void)
{
	static const char *const q[] = { "kestrel heron", "kernel driver interrupt", "gene",
	                                 "flood basin valley", "marsh OR module", "wing -nest" };
	char *dir = test_tmpdir("helper");
	fathom_index *ix = test_open(dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(ix, "embedder", "corpus"));
	add_topics(ix, 0, 300, 20);
	CHECK_OK(fathom_commit(ix));
	fathom_close(ix);
	static char serial[6][4096], beside[6][4096], again[4096];
	setenv("FATHOM_HYBRID_SERIAL", "1", 1);
	ix = test_open(dir, 0);
	for (int i = 0; i < 6; i++)
		hybrid_hits(ix, q[i], serial[i], sizeof serial[i]);
	fathom_close(ix);
	unsetenv("FATHOM_HYBRID_SERIAL");
	ix = test_open(dir, 0);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 6; i++) {
			hybrid_hits(ix, q[i], beside[i], sizeof beside[i]);
			CHECK(strlen(serial[i]) > 0);
			CHECK_STR(beside[i], serial[i]);
		}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		/* the child: its own helper, the same answers */
		hybrid_hits(ix, q[1], again, sizeof again);
		_exit(strcmp(again, serial[1]) == 0 ? 0 : 3);
	}
	int status = 0;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	hybrid_hits(ix, q[2], again, sizeof again);
	CHECK_STR(again, serial[2]);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	RUN(test_fusion_arithmetic);
	RUN(test_external_modes);
	RUN(test_pool);
	RUN(test_corpus_drift);
	RUN(test_glossary_neighbours);
	RUN(test_refused_embedder);
	RUN(test_vectors_survive_merge);
	RUN(test_damaged_vectors);
	RUN(test_helper_thread);
	RUN(test_step_progress);
	return TEST_DONE();
}
