/*
 * test_hnsw.c — the HNSW graph (src/vec/hnsw.c) against brute force on
 * clustered vectors (a Gaussian mixture: uniform random vectors have no
 * neighbourhoods and would measure nothing): recall@10 with and without
 * filters at several selectivities, the brute-force path exact, the same
 * seed the same graph, and bad input refused; vx_hnsw_add_rows (batches
 * searched on threads) the same graph on 1, 2 and 3 threads, holes and a
 * start one row at a time included, with the recall of the one-by-one
 * build.
 */
#include <math.h>

#include "test.h"
#include "vecmix.h"
#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"
#include "vec/vec.h"

enum { DIM = 48, N = 6000, NQ = 200, CLUSTERS = 40, K = 10 };

static uint64_t rng = 42;

static double unif(void)
{
	return vm_unif(&rng);
}

static float *vecs, *queries;

static void make_data(void)
{
	vecs = vm_mixture(&rng, N + NQ, DIM, CLUSTERS, 1.0);
	queries = vecs + (size_t)N * DIM;
}

static vx_hnsw *build(uint64_t seed)
{
	vx_params p;
	vx_params_for(N, &p);
	p.seed = seed;
	vx_hnsw *h = NULL;
	CHECK_OK(vx_hnsw_new(&h, DIM, &p));
	for (int i = 0; h && i < N; i++)
		CHECK_OK(vx_hnsw_add(h, vecs + (size_t)i * DIM));
	return h;
}

/* recall@K of the graph against brute force over the queries, under f */
static double recall(const vx_hnsw *h, uint32_t ef, const vx_filter *f, int *exact_scores)
{
	uint64_t found = 0, want = 0;
	*exact_scores = 1;
	for (int q = 0; q < NQ; q++) {
		vx_hit a[K], b[K];
		uint32_t na = 0, nb = 0;
		const float *qv = queries + (size_t)q * DIM;
		CHECK_OK(vx_hnsw_search(h, qv, K, ef, f, a, &na));
		CHECK_OK(vx_brute(vecs, N, DIM, qv, K, f, b, &nb));
		want += nb;
		for (uint32_t i = 0; i < na; i++) {
			/* every hit allowed, scored exactly, in order */
			if (f && f->bits && !(f->bits[a[i].id >> 3] >> (a[i].id & 7) & 1))
				*exact_scores = 0;
			if (a[i].score != em_dot(qv, vecs + (size_t)a[i].id * DIM, DIM))
				*exact_scores = 0;
			if (i && a[i].score > a[i - 1].score)
				*exact_scores = 0;
			for (uint32_t j = 0; j < nb; j++)
				found += a[i].id == b[j].id;
		}
	}
	return want ? (double)found / (double)want : 1.0;
}

static void test_recall(void)
{
	vx_hnsw *h = build(7);
	if (!h)
		return;
	CHECK_EQ(vx_hnsw_count(h), N);
	int exact;
	double r40 = recall(h, 40, NULL, &exact);
	CHECK(exact);
	double r100 = recall(h, 100, NULL, &exact);
	printf("     %d clustered %d-d vectors: recall@10 %.4f at ef 40, %.4f at ef 100\n", N, DIM,
	       r40, r100);
	CHECK(r40 >= 0.95);
	CHECK(r100 >= 0.99);
	vx_hnsw_free(h);
}

static void test_filtered(void)
{
	vx_hnsw *h = build(7);
	if (!h)
		return;
	static uint8_t bits[N / 8 + 1];
	/* 1% (brute force: exact), 5%, 25%, 50% (the graph, filtered as it walks) */
	const double share[] = { 0.01, 0.05, 0.25, 0.5 };
	for (int s = 0; s < 4; s++) {
		memset(bits, 0, sizeof bits);
		uint64_t count = 0;
		for (uint32_t i = 0; i < N; i++)
			if (unif() < share[s]) {
				bits[i >> 3] |= (uint8_t)(1u << (i & 7));
				count++;
			}
		/* the walk, even where scoring the allowed would be cheaper */
		vx_filter f = { bits, count, share[s] >= VX_BRUTE_SHARE };
		int exact;
		double r = recall(h, 100, &f, &exact);
		printf("     filter keeping %.0f%% (%llu vectors): recall@10 %.4f\n", share[s] * 100,
		       (unsigned long long)count, r);
		CHECK(exact);
		CHECK(r >= (share[s] < VX_BRUTE_SHARE ? 1.0 : 0.95));
	}
	/* nothing allowed: nothing found */
	memset(bits, 0, sizeof bits);
	vx_filter none = { bits, 0, 0 };
	vx_hit a[K];
	uint32_t na = 99;
	CHECK_OK(vx_hnsw_search(h, queries, K, 0, &none, a, &na));
	CHECK_EQ(na, 0);
	vx_hnsw_free(h);
}

static void test_deterministic(void)
{
	vx_hnsw *a = build(11), *b = build(11);
	if (!a || !b) {
		vx_hnsw_free(a);
		vx_hnsw_free(b);
		return;
	}
	int same = 1;
	for (int q = 0; q < NQ && same; q++) {
		vx_hit x[K], y[K];
		uint32_t nx = 0, ny = 0;
		CHECK_OK(vx_hnsw_search(a, queries + (size_t)q * DIM, K, 40, NULL, x, &nx));
		CHECK_OK(vx_hnsw_search(b, queries + (size_t)q * DIM, K, 40, NULL, y, &ny));
		same = nx == ny && memcmp(x, y, nx * sizeof *x) == 0;
	}
	CHECK(same);
	vx_hnsw_free(a);
	vx_hnsw_free(b);
}

/* vx_hnsw_add_rows: threads change nothing; recall as one by one */
static unsigned char *graph_bytes(const float *rows, uint32_t n, uint32_t first, unsigned threads,
                                  size_t *len, vx_hnsw **keep)
{
	vx_params p;
	vx_params_for(n, &p);
	p.seed = 5;
	vx_hnsw *h = NULL;
	unsigned char *b = NULL;
	*len = 0;
	CHECK_OK(vx_hnsw_new(&h, DIM, &p));
	for (uint32_t i = 0; h && i < first; i++)
		CHECK_OK(vx_hnsw_add(h, rows + (size_t)i * DIM));
	if (h) {
		CHECK_OK(vx_hnsw_add_rows(h, rows + (size_t)first * DIM, n - first, threads));
		CHECK_EQ(vx_hnsw_count(h), n);
		CHECK_OK(vx_hnsw_write(h, &b, len));
	}
	if (keep)
		*keep = h;
	else
		vx_hnsw_free(h);
	return b;
}

static void test_batched(void)
{
	/* with holes (zero rows: one in 97, some in the first batch) and a
	 * start of 100 rows one at a time */
	float *rows = malloc((size_t)N * DIM * sizeof *rows);
	if (!rows)
		return;
	memcpy(rows, vecs, (size_t)N * DIM * sizeof *rows);
	for (uint32_t i = 5; i < N; i += 97)
		memset(rows + (size_t)i * DIM, 0, DIM * sizeof *rows);
	size_t len[3];
	unsigned char *b[3];
	vx_hnsw *h = NULL;
	for (unsigned t = 1; t <= 3; t++)
		b[t - 1] = graph_bytes(rows, N, 100, t, &len[t - 1], t == 2 ? &h : NULL);
	CHECK(b[0] && b[1] && b[2]);
	if (b[0] && b[1] && b[2]) {
		CHECK(len[0] == len[1] && memcmp(b[0], b[1], len[0]) == 0);
		CHECK(len[0] == len[2] && memcmp(b[0], b[2], len[0]) == 0);
	}
	/* no search reaches a hole */
	int holes_found = 0;
	for (int q = 0; h && q < NQ; q++) {
		vx_hit a[K];
		uint32_t na = 0;
		CHECK_OK(vx_hnsw_search(h, queries + (size_t)q * DIM, K, 100, NULL, a, &na));
		CHECK_EQ(na, K);
		for (uint32_t i = 0; i < na; i++)
			holes_found += a[i].id % 97 == 5;
	}
	CHECK_EQ(holes_found, 0);
	vx_hnsw_free(h);
	for (int k = 0; k < 3; k++)
		fa_free(b[k]);
	free(rows);
	/* recall over the whole rows, against brute force, as test_recall's */
	size_t l;
	fa_free(graph_bytes(vecs, N, 0, 2, &l, &h));
	if (!h)
		return;
	int exact;
	double r40 = recall(h, 40, NULL, &exact);
	CHECK(exact);
	double r100 = recall(h, 100, NULL, &exact);
	printf("     batched on 2 threads: recall@10 %.4f at ef 40, %.4f at ef 100\n", r40, r100);
	CHECK(r40 >= 0.95);
	CHECK(r100 >= 0.99);
	vx_hnsw_free(h);
}

static void test_edges(void)
{
	vx_params p;
	vx_params_for(10, &p);
	CHECK_EQ(p.m, 16);
	vx_params_for(500000, &p);
	CHECK_EQ(p.m, 24);
	CHECK_EQ(p.ef_search, 100);
	vx_params_for(5000000, &p);
	CHECK_EQ(p.ef_construction, 200);
	vx_params_for(10, &p);
	vx_hnsw *h = NULL;
	CHECK_EQ(vx_hnsw_new(&h, 0, &p), FATHOM_EINVAL);
	CHECK_EQ(vx_hnsw_new(&h, VX_MAX_DIM + 1, &p), FATHOM_EINVAL);
	p.m = 1;
	CHECK_EQ(vx_hnsw_new(&h, 4, &p), FATHOM_EINVAL);
	CHECK(h == NULL);
	vx_params_for(10, &p);
	CHECK_OK(vx_hnsw_new(&h, 4, &p));
	if (!h)
		return;
	vx_hit out[4];
	uint32_t n = 9;
	float q[4] = { 1, 0, 0, 0 }, bad[4] = { 1, NAN, 0, 0 };
	CHECK_OK(vx_hnsw_search(h, q, 3, 0, NULL, out, &n));   /* empty graph */
	CHECK_EQ(n, 0);
	CHECK_EQ(vx_hnsw_add(h, bad), FATHOM_EINVAL);
	CHECK_OK(vx_hnsw_add(h, q));
	CHECK_OK(vx_hnsw_search(h, q, 3, 0, NULL, out, &n));   /* fewer than k */
	CHECK_EQ(n, 1);
	CHECK(out[0].id == 0 && out[0].score == 1.0f);
	CHECK_EQ(vx_hnsw_search(h, q, VX_MAX_K + 1, 0, NULL, out, &n), FATHOM_EINVAL);
	/* rows in bulk: a count past the limit refused before a row is read,
	 * a NaN anywhere refused before any is added */
	CHECK_EQ(vx_hnsw_add_rows(h, q, UINT32_MAX, 2), FATHOM_ETOOBIG);
	float two[8] = { 0, 1, 0, 0, 1, NAN, 0, 0 };
	CHECK_EQ(vx_hnsw_add_rows(h, two, 2, 2), FATHOM_EINVAL);
	CHECK_EQ(vx_hnsw_count(h), 1);
	vx_hnsw_free(h);
}

int main(void)
{
	make_data();
	RUN(test_recall);
	RUN(test_filtered);
	RUN(test_deterministic);
	RUN(test_batched);
	RUN(test_edges);
	free(vecs);
	return TEST_DONE();
}
