/*
 * test_vecseg.c — HNSW graphs in segments, end to end through the public
 * API: documents with vectors (the external embedder) in segments large
 * enough for a graph (IX_HNSW_MIN_VECTORS), searched over the graph and
 * held to the exact path (FATHOM_VECTOR_EXACT): recall@10 unfiltered and
 * under filters keeping 50%, 10% and 1% of the documents (k results each
 * time), chunks without a vector (holes) and deleted documents never
 * returned, a merge (optimize) of segments with and without graphs and with
 * deletes giving one segment whose graph has only the live chunks, and a
 * damaged HNSW section failing with FATHOM_ECORRUPT naming the file (its
 * page CRC caught, and, resealed, the graph's own check).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "fathom.h"
#include "index/index_int.h"
#include "query/query_int.h"
#include "test.h"
#include "util/util.h"
#include "vec/hnsw_int.h"
#include "vec/vec.h"
#include "vecmix.h"

#define DIM 16
#define N1 4000          /* first segment: a graph */
#define N2 3000          /* second: a graph */
#define N3 500           /* third: too few for one */
#define NQ 60
#define K 10

static float *vecs;      /* (N1 + N2 + N3) rows */
static float *queries;   /* NQ rows */

/* Doc i: no vector when i % 97 == 3 (a hole in its segment's graph). */
static int has_vec(uint32_t i)
{
	return i % 97 != 3;
}

/* JSON lines for docs [from, to): metadata p50, p10, p1 = "y" on 50%, 10%
 * and 1% of them. */
static char *jsonl(uint32_t from, uint32_t to, size_t *len)
{
	size_t cap = (size_t)(to - from) * (DIM * 16 + 160) + 1, n = 0;
	char *s = malloc(cap);
	CHECK(s != NULL);
	if (!s)
		exit(2);
	for (uint32_t i = from; i < to; i++) {
		n += (size_t)snprintf(s + n, cap - n,
		                      "{\"id\":\"d%u\",\"body\":\"word%u common\",\"p50\":\"%s\","
		                      "\"p10\":\"%s\",\"p1\":\"%s\"",
		                      i, i, i % 2 ? "n" : "y", i % 10 ? "n" : "y", i % 100 ? "n" : "y");
		if (has_vec(i)) {
			n += (size_t)snprintf(s + n, cap - n, ",\"vector\":[");
			for (uint32_t k = 0; k < DIM; k++)
				n += (size_t)snprintf(s + n, cap - n, "%s%.8g", k ? "," : "",
				                      (double)vecs[(size_t)i * DIM + k]);
			n += (size_t)snprintf(s + n, cap - n, "]");
		}
		n += (size_t)snprintf(s + n, cap - n, "}\n");
	}
	*len = n;
	return s;
}

static void add_docs(fathom_index *ix, uint32_t from, uint32_t to)
{
	size_t len;
	char *s = jsonl(from, to, &len);
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_add_jsonl_mem(ix, s, len, "docs", NULL, &st));
	CHECK_OK(fathom_commit(ix));
	free(s);
}

/* The top K doc numbers for query q (n of them), graph or exact; a
 * filter "key=y" or NULL. Returns the search's error code. */
static int search(fathom_index *ix, uint32_t q, const char *filter, int exact, uint32_t *ids,
                  size_t *n)
{
	if (exact)
		setenv("FATHOM_VECTOR_EXACT", "1", 1);
	else
		unsetenv("FATHOM_VECTOR_EXACT");
	char kv[32];
	const char *filters[1] = { kv };
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = FATHOM_MODE_SEMANTIC;
	so.k = K;
	so.query_vector = queries + (size_t)q * DIM;
	so.query_vector_dim = DIM;
	if (filter) {
		snprintf(kv, sizeof kv, "%s=y", filter);
		so.filters = filters;
		so.n_filters = 1;
	}
	fathom_results *r = NULL;
	int rc = fathom_search(&r, ix, "anything", &so);
	unsetenv("FATHOM_VECTOR_EXACT");
	*n = 0;
	if (rc)
		return rc;
	for (size_t i = 0; i < fathom_results_count(r) && i < K; i++)
		ids[(*n)++] = (uint32_t)strtoul(fathom_results_hit(r, i)->doc_id + 1, NULL, 10);
	fathom_results_free(r);
	return 0;
}

/* Mean recall@K of the graph against the exact path over the queries; each
 * search must return want results (0: K), none of them a document without
 * a vector, deleted (dead[i]) or outside the filter. */
static double recall(fathom_index *ix, const char *filter, const uint8_t *dead, size_t want)
{
	size_t found = 0, total = 0;
	uint32_t mod = !filter ? 1 : strcmp(filter, "p50") == 0 ? 2 : strcmp(filter, "p10") == 0 ? 10 : 100;
	for (uint32_t q = 0; q < NQ; q++) {
		uint32_t g[K], e[K];
		size_t ng, ne;
		CHECK_OK(search(ix, q, filter, 0, g, &ng));
		CHECK_OK(search(ix, q, filter, 1, e, &ne));
		CHECK_EQ(ng, want ? want : K);
		CHECK_EQ(ne, want ? want : K);
		for (size_t i = 0; i < ng; i++) {
			CHECK(has_vec(g[i]));
			CHECK(g[i] % mod == 0);
			CHECK(!dead || !dead[g[i]]);
			for (size_t j = 0; j < ne; j++)
				found += g[i] == e[j];
		}
		total += ne;
	}
	return total ? (double)found / (double)total : 0;
}

/* Segment i's graph: its node count, or -1 when it has none. */
static long graph_nodes(fathom_index *fx, size_t i)
{
	ix_segment *s = ix_segment_at(fx->ix, i);
	const vx_hnsw *g;
	int rc = seg_graph(s, &g);
	if (rc == FATHOM_ENOTFOUND)
		return -1;
	CHECK_OK(rc);
	return rc ? -2 : (long)vx_hnsw_count(g);
}

static void test_graph_search(void)
{
	char *dir = test_tmpdir("vecseg");
	fathom_index *ix = test_open(dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(ix, "embedder.model", "mix"));
	add_docs(ix, 0, N1);
	CHECK_EQ(ix_nsegments(ix->ix), 1);
	CHECK_EQ(graph_nodes(ix, 0), N1);

	/* the vector source walked the graph (scoring no row one by one), or,
	 * forced exact, scored every vector */
	for (int exact = 0; exact < 2; exact++) {
		if (exact)
			setenv("FATHOM_VECTOR_EXACT", "1", 1);
		fa_arena a;
		fa_arena_init(&a, 1 << 16, 0);
		q_plan plan;
		q_filter f;
		memset(&plan, 0, sizeof plan);
		memset(&f, 0, sizeof f);
		q_vquery qv = { queries, DIM, 0 };
		q_vector vs;
		q_cand_list out;
		CHECK_OK(q_vector_retrieve(&vs, &a, ix->ix, &plan, &f, &qv, K, &out));
		CHECK_EQ(out.n, K);
		CHECK_EQ(vs.graph_segments, exact ? 0 : 1);
		uint32_t holes = 0;
		for (uint32_t i = 0; i < N1; i++)
			holes += !has_vec(i);
		CHECK_EQ(vs.scored, exact ? N1 - holes : 0);
		fa_arena_free(&a);
		unsetenv("FATHOM_VECTOR_EXACT");
	}

	double r = recall(ix, NULL, NULL, 0);
	printf("  recall@%d: %.4f unfiltered\n", K, r);
	CHECK(r >= 0.95);
	const char *flt[] = { "p50", "p10", "p1" };
	for (int i = 0; i < 3; i++) {
		r = recall(ix, flt[i], NULL, 0);
		printf("  recall@%d: %.4f with %s\n", K, r, flt[i]);
		CHECK(r >= 0.95);
	}

	/* delete the exact top 5 of the first queries: never returned again */
	uint8_t *dead = calloc(N1 + N2 + N3, 1);
	for (uint32_t q = 0; q < 8; q++) {
		uint32_t e[K];
		size_t ne;
		CHECK_OK(search(ix, q, NULL, 1, e, &ne));
		for (size_t i = 0; i < 5 && i < ne; i++) {
			char key[32];
			snprintf(key, sizeof key, "d%u", e[i]);
			if (!dead[e[i]])
				CHECK_OK(fathom_delete_doc(ix, key));
			dead[e[i]] = 1;
		}
	}
	CHECK_OK(fathom_commit(ix));
	CHECK_EQ(graph_nodes(ix, 0), N1);   /* tombstones: the same segment */
	r = recall(ix, NULL, dead, 0);
	printf("  recall@%d: %.4f after deletes\n", K, r);
	CHECK(r >= 0.95);

	/* a segment with a graph, one too small for one, then one merge */
	add_docs(ix, N1, N1 + N2);
	add_docs(ix, N1 + N2, N1 + N2 + N3);
	size_t nseg = ix_nsegments(ix->ix);
	CHECK(nseg >= 2);
	CHECK_EQ(graph_nodes(ix, nseg - 1), -1);
	CHECK_OK(fathom_optimize(ix));
	CHECK_EQ(ix_nsegments(ix->ix), 1);
	uint32_t ndead = 0;
	for (uint32_t i = 0; i < N1 + N2 + N3; i++)
		ndead += dead[i];
	CHECK_EQ(graph_nodes(ix, 0), (long)(N1 + N2 + N3 - ndead));
	r = recall(ix, NULL, dead, 0);
	printf("  recall@%d: %.4f after the merge\n", K, r);
	CHECK(r >= 0.95);
	/* p50 (3,700 of 7,400): the filtered walk; p10: the allowed scored */
	r = recall(ix, "p50", dead, 0);
	printf("  recall@%d: %.4f after the merge, with p50\n", K, r);
	CHECK(r >= 0.95);
	r = recall(ix, "p10", dead, 0);
	printf("  recall@%d: %.4f after the merge, with p10\n", K, r);
	CHECK(r >= 0.95);
	CHECK_OK(fathom_verify(ix));
	free(dead);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* The directory entry of tag in a segment image: its offset and length. */
/* A byte of the HNSW section changed: with its page CRC as it was (the
 * CRC catches it), and resealed (the graph's own check catches it). Either
 * way a graph search is FATHOM_ECORRUPT naming the file; the exact path
 * and a keyword search, which do not read the graph, still answer. */
static void test_damaged_graph(void)
{
	for (int reseal = 0; reseal < 2; reseal++) {
		char *dir = test_tmpdir("vecseg");
		fathom_index *ix = test_open(dir, FATHOM_OPEN_CREATE);
		CHECK_OK(fathom_config_set(ix, "embedder.model", "mix"));
		add_docs(ix, 0, N1);
		fathom_close(ix);
		char seg[1024];
		snprintf(seg, sizeof seg, "%s/seg-00000001.fseg", dir);
		size_t size;
		unsigned char *buf = test_read_file(seg, &size);
		uint64_t off = 0, len = 0;
		CHECK(test_find_section(buf, size, "HNSW", &off, &len));
		CHECK(off % 64 == 0 && len > 4096);
		/* a layer-0 link of node 0 (after the 64-byte header and levels)
		 * pointing past the nodes */
		size_t at = (size_t)off + 64 + ((N1 + 3) & ~3u) + 4;
		uint32_t bad = N1 + 7;
		memcpy(buf + at, &bad, 4);
		if (reseal) {
			/* every checksum made good again (the manifest names the old
			 * footer's, so the segment is opened alone) */
			ix_seg_reseal(buf, size);
			test_write_file(seg, buf, size);
			free(buf);
			ix_segment *s = NULL;
			CHECK_OK(seg_open_file(&s, seg));
			const vx_hnsw *g;
			CHECK_EQ(s ? seg_graph(s, &g) : 0, FATHOM_ECORRUPT);
			CHECK(strstr(fathom_errmsg(), "seg-00000001.fseg") != NULL);
			CHECK(strstr(fathom_errmsg(), "HNSW node 0 links to") != NULL);
			seg_close(s);
			test_rmrf(dir);
			free(dir);
			continue;
		}
		test_write_file(seg, buf, size);
		free(buf);
		ix = test_open(dir, 0);
		uint32_t ids[K];
		size_t n;
		int rc = search(ix, 0, NULL, 0, ids, &n);
		CHECK_EQ(rc, FATHOM_ECORRUPT);
		CHECK(strstr(fathom_errmsg(), "seg-00000001.fseg") != NULL);
		CHECK_OK(search(ix, 0, NULL, 1, ids, &n));
		CHECK_EQ(n, K);
		CHECK_EQ(fathom_verify(ix), FATHOM_ECORRUPT);
		fathom_close(ix);
		test_rmrf(dir);
		free(dir);
	}
}

/* The hnsw.* settings: a lower threshold gives a small segment a graph,
 * built with the m asked for; the highest gives none. */
static void test_graph_settings(void)
{
	char *dir = test_tmpdir("vecseg");
	fathom_index *ix = test_open(dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(ix, "embedder.model", "mix"));
	CHECK_OK(fathom_config_set(ix, "hnsw.min-vectors", "400"));
	CHECK_OK(fathom_config_set(ix, "hnsw.m", "8"));
	CHECK_OK(fathom_config_set(ix, "hnsw.ef-search", "64"));
	CHECK_EQ(fathom_config_set(ix, "hnsw.m", "65"), FATHOM_EINVAL);
	/* the table's default is the writer's */
	CHECK_EQ(strtoul(fathom_setting_find("hnsw.min-vectors")->default_value, NULL, 10),
	         IX_HNSW_MIN_VECTORS);
	add_docs(ix, 0, N3);
	CHECK_EQ(graph_nodes(ix, 0), N3);
	const vx_hnsw *g;
	CHECK_OK(seg_graph(ix_segment_at(ix->ix, 0), &g));
	CHECK(g && g->p.m == 8 && g->p.ef_search == 64);
	CHECK_EQ(ix_graph_opts_of(ix->ix)->ef_search, 64);
	CHECK_OK(fathom_config_set(ix, "hnsw.min-vectors", "4294967295"));
	add_docs(ix, N3, 2 * N3);
	CHECK_EQ(graph_nodes(ix, ix_nsegments(ix->ix) - 1), -1);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* ---- allocation failures ------------------------------------------------------------ */

/* Every allocation failing in turn (fa_alloc_fail_after, as test_fault)
 * while a commit writes a segment with a graph (what = 0) and while an
 * optimize merges two such segments (what = 1): each run ends in FATHOM_OK
 * or FATHOM_ENOMEM, and the index reopened passes fathom_verify and answers
 * as the commit before or the one after. */
#define SMALL 40
static void small_base(const char *dir)
{
	test_rmrf(dir);
	fathom_index *ix = test_open(dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(ix, "embedder.model", "mix"));
	CHECK_OK(fathom_config_set(ix, "hnsw.min-vectors", "16"));
	add_docs(ix, 0, SMALL);
	fathom_close(ix);
}

/* Semantic hits for query 0 (k 100): how many documents the index has. */
static size_t live_docs(const char *dir)
{
	fathom_index *ix = test_open(dir, 0);
	CHECK_OK(fathom_verify(ix));
	uint32_t ids[K];
	size_t n = 0;
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = FATHOM_MODE_SEMANTIC;
	so.k = 100;
	so.query_vector = queries;
	so.query_vector_dim = DIM;
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, "anything", &so));
	n = r ? fathom_results_count(r) : 0;
	fathom_results_free(r);
	(void)ids;
	fathom_close(ix);
	return n;
}

static void test_alloc_failures(void)
{
	char *dir = test_tmpdir("vecseg");
	size_t holes1 = 0, holes2 = 0;
	for (uint32_t i = 0; i < SMALL; i++)
		holes1 += !has_vec(i);
	for (uint32_t i = SMALL; i < 2 * SMALL; i++)
		holes2 += !has_vec(i);
	for (int what = 0; what < 2; what++) {
		long n, enomem = 0;
		for (n = 0; n < 20000; n += 2) {
			small_base(dir);
			fathom_index *w = test_open(dir, FATHOM_OPEN_WRITE);
			size_t len;
			char *more = jsonl(SMALL, 2 * SMALL, &len);
			fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
			CHECK_OK(fathom_add_jsonl_mem(w, more, len, "docs", NULL, &st));
			free(more);
			if (what) {   /* a delete: the merge's graph must leave it out */
				CHECK_OK(fathom_delete_doc(w, "d5"));
				CHECK_OK(fathom_commit(w));
			}
			fa_alloc_fail_after(n);
			int rc = what ? fathom_optimize(w) : fathom_commit(w);
			long hit = fa_alloc_failed();
			fa_alloc_fail_after(-1);
			CHECK(rc == 0 || rc == FATHOM_ENOMEM);
			enomem += rc == FATHOM_ENOMEM;
			if (rc)
				fathom_rollback(w);
			fathom_close(w);
			size_t docs = live_docs(dir);
			CHECK(docs == 2 * SMALL - holes1 - holes2 - (size_t)what ||
			      (!what && docs == SMALL - holes1));
			if (!hit)
				break;
		}
		printf("  %s: %ld runs (every second allocation failing in turn), %ld ended in "
		       "ENOMEM\n", what ? "optimize" : "commit", n / 2 + 1, enomem);
		CHECK(enomem > 0);
	}
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	/* 16-d, 100 centres, sigma 1: at ef 40 the graph's recall@10 is about
	 * 0.99 here (noisier 32-d mixtures need a larger hnsw.ef-search) */
	vecs = vm_mixture(&seed, N1 + N2 + N3, DIM, 100, 1.0);
	queries = vm_mixture(&seed, NQ, DIM, 100, 1.0);
	if (!vecs || !queries)
		return 2;
	RUN(test_graph_search);
	RUN(test_damaged_graph);
	RUN(test_graph_settings);
	RUN(test_alloc_failures);
	free(vecs);
	free(queries);
	return TEST_DONE();
}
