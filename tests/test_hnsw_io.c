/*
 * test_hnsw_io.c — the HNSW graph on disk (src/vec/hnsw_io.c) and merged
 * (vx_hnsw_merge): a view over the written bytes searches exactly as the
 * graph it was written from, in place and from a copy (unaligned bytes);
 * every truncation and sampled damage is refused or leaves a graph whose
 * searches return valid ids; int8 rows lose under 0.01 of recall@10;
 * merged graphs with deletes hold recall against brute force over the kept
 * vectors and never return a deleted one. The data is a Gaussian mixture,
 * as in test_hnsw.c.
 */
#include <math.h>

#include "test.h"
#include "vecmix.h"
#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"
#include "vec/vec.h"

enum { DIM = 48, N = 6000, NQ = 200, CLUSTERS = 40, K = 10 };

/* the vectors, then the queries */
static uint64_t rng = 4242;
static float *vecs, *queries;

static vx_hnsw *build(const float *v, uint32_t n, uint64_t seed)
{
	vx_params p;
	vx_params_for(n, &p);
	p.seed = seed;
	vx_hnsw *h = NULL;
	CHECK_OK(vx_hnsw_new(&h, DIM, &p));
	for (uint32_t i = 0; h && i < n; i++)
		CHECK_OK(vx_hnsw_add(h, v + (size_t)i * DIM));
	return h;
}

/* a and b give the same hits (ids and scores) for every query */
static int same_hits(const vx_hnsw *a, const vx_hnsw *b, uint32_t ef, const vx_filter *f)
{
	for (int q = 0; q < NQ; q++) {
		vx_hit x[K], y[K];
		uint32_t nx = 0, ny = 0;
		CHECK_OK(vx_hnsw_search(a, queries + (size_t)q * DIM, K, ef, f, x, &nx));
		CHECK_OK(vx_hnsw_search(b, queries + (size_t)q * DIM, K, ef, f, y, &ny));
		if (nx != ny || memcmp(x, y, nx * sizeof *x) != 0)
			return 0;
	}
	return 1;
}

static void test_roundtrip(void)
{
	vx_hnsw *h = build(vecs, N, 7);
	if (!h)
		return;
	unsigned char *b = NULL, *b2 = NULL;
	size_t len = 0, len2 = 0;
	CHECK_OK(vx_hnsw_write(h, &b, &len));
	vx_hnsw *v = NULL;
	CHECK_OK(vx_hnsw_view(&v, b, len, vecs, N, DIM, "seg-1.fseg"));
	if (!v) {
		free(b);
		vx_hnsw_free(h);
		return;
	}
	CHECK_EQ(vx_hnsw_count(v), N);
	CHECK(vx_hnsw_vectors(v) == vecs);   /* the rows not copied */
	CHECK(same_hits(h, v, 40, NULL));
	CHECK(same_hits(h, v, 100, NULL));
	static uint8_t bits[N / 8 + 1];
	uint64_t count = 0;
	for (uint32_t i = 0; i < N; i++)
		if (vm_unif(&rng) < 0.3) {
			bits[i >> 3] |= (uint8_t)(1u << (i & 7));
			count++;
		}
	vx_filter f = { bits, count, 0 };
	CHECK(same_hits(h, v, 60, &f));
	/* written again from the view: the same bytes (the layout is canonical) */
	CHECK_OK(vx_hnsw_write(v, &b2, &len2));
	CHECK(len2 == len && b2 && memcmp(b, b2, len) == 0);
	/* a view takes no vectors */
	CHECK_EQ(vx_hnsw_add(v, vecs), FATHOM_EINVAL);
	vx_hnsw_free(v);
	/* bytes off 4-byte alignment: read from a copy, the same hits */
	unsigned char *odd = malloc(len + 1);
	memcpy(odd + 1, b, len);
	v = NULL;
	CHECK_OK(vx_hnsw_view(&v, odd + 1, len, vecs, N, DIM, "odd"));
	if (v)
		CHECK(same_hits(h, v, 40, NULL));
	vx_hnsw_free(v);
	free(odd);
	/* the wrong rows */
	v = NULL;
	CHECK_EQ(vx_hnsw_view(&v, b, len, vecs, N - 1, DIM, "short"), FATHOM_ECORRUPT);
	CHECK_EQ(vx_hnsw_view(&v, b, len, vecs, N, DIM - 1, "narrow"), FATHOM_ECORRUPT);
	CHECK(strstr(fathom_errmsg(), "narrow") != NULL);
	CHECK(v == NULL);
	fa_free(b);
	fa_free(b2);
	vx_hnsw_free(h);
}

static void test_empty(void)
{
	vx_params p;
	vx_params_for(0, &p);
	vx_hnsw *h = NULL, *v = NULL;
	CHECK_OK(vx_hnsw_new(&h, DIM, &p));
	if (!h)
		return;
	unsigned char *b = NULL;
	size_t len = 0;
	CHECK_OK(vx_hnsw_write(h, &b, &len));
	CHECK_EQ(len, 64);
	CHECK_OK(vx_hnsw_view(&v, b, len, NULL, 0, DIM, "empty"));
	vx_hit out[K];
	uint32_t n = 9;
	if (v)
		CHECK_OK(vx_hnsw_search(v, queries, K, 0, NULL, out, &n));
	CHECK_EQ(n, 0);
	vx_hnsw_free(v);
	fa_free(b);
	vx_hnsw_free(h);
}

/* A view over damaged bytes, if it opens, returns only ids below n. */
static int searches_safely(const unsigned char *b, size_t len, const float *v, uint32_t n,
                           int *opened)
{
	vx_hnsw *h = NULL;
	int rc = vx_hnsw_view(&h, b, len, v, n, DIM, "damaged");
	*opened = rc == 0;
	if (rc)
		return (rc == FATHOM_ECORRUPT || rc == FATHOM_EVERSION) && h == NULL;
	int ok = 1;
	for (int q = 0; q < 8 && ok; q++) {
		vx_hit out[K];
		uint32_t nh = 0;
		ok = vx_hnsw_search(h, queries + (size_t)q * DIM, K, 20, NULL, out, &nh) == 0;
		for (uint32_t i = 0; i < nh; i++)
			ok &= out[i].id < n;
	}
	vx_hnsw_free(h);
	return ok;
}

static void test_damage(void)
{
	enum { SMALL = 700 };
	vx_hnsw *h = build(vecs, SMALL, 3);
	if (!h)
		return;
	unsigned char *b = NULL;
	size_t len = 0;
	CHECK_OK(vx_hnsw_write(h, &b, &len));
	int opened, bad = 0;
	for (size_t cut = 0; cut < len; cut++) {
		if (!searches_safely(b, cut, vecs, SMALL, &opened) || opened)
			bad++;
	}
	CHECK_EQ(bad, 0);   /* every truncation refused */
	unsigned char *c = malloc(len);
	int nopen = 0;
	for (int t = 0; t < 4000; t++) {
		memcpy(c, b, len);
		/* the header's bytes often, the rest at random */
		size_t at = (size_t)(vm_unif(&rng) * (t % 4 == 0 ? 64.0 : (double)len));
		c[at] ^= (unsigned char)(1 + vm_unif(&rng) * 255);
		if (!searches_safely(c, len, vecs, SMALL, &opened))
			bad++;
		nopen += opened;
	}
	printf("     %zu bytes: every truncation refused; 4000 damaged copies, %d opened and "
	       "searched safely, the rest refused\n", len, nopen);
	CHECK_EQ(bad, 0);
	free(c);
	fa_free(b);
	vx_hnsw_free(h);
}

/* ---- damage aimed at each check: every one must be refused ---------------- */

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* the copy c of a graph of n nodes refused with code rc */
static int refused(const unsigned char *c, size_t len, uint32_t n, int rc)
{
	vx_hnsw *h = NULL;
	int got = vx_hnsw_view(&h, c, len, vecs, n, DIM, "crafted");
	vx_hnsw_free(h);
	return got == rc && (rc || h);
}

static void test_crafted(void)
{
	enum { SMALL = 700 };
	vx_hnsw *h = build(vecs, SMALL, 3);
	if (!h)
		return;
	unsigned char *b = NULL, *c = NULL;
	size_t len = 0;
	CHECK_OK(vx_hnsw_write(h, &b, &len));
	c = malloc(len);
	if (!b || !c)
		goto done;
	const uint32_t n = SMALL, m = rd32(b + 16), st = 1 + 2 * m, P = rd32(b + 48);
	const size_t l0 = 64 + ((n + 3) & ~3u), up = l0 + (size_t)n * st * 4, pool = up + n * 4;
	/* nodes: one of level 0 with spare slots, one above 0 with a link on layer 1 */
	uint32_t low = n, high = n;
	for (uint32_t i = 0; i < n; i++) {
		if (b[64 + i] == 0 && rd32(b + l0 + (size_t)i * st * 4) < 2 * m && low == n)
			low = i;
		if (b[64 + i] > 0 && rd32(b + pool + 4 * (size_t)rd32(b + up + 4 * i)) > 0 &&
		    high == n)
			high = i;
	}
	CHECK(low < n && high < n);
	if (low == n || high == n)
		goto done;
	const size_t lowl0 = l0 + (size_t)low * st * 4;
	const size_t highup = pool + 4 * (size_t)rd32(b + up + 4 * high);
	memcpy(c, b, len);
	CHECK(refused(c, len, n, 0));   /* untouched: taken */
#define EDIT(what, at, v, code)                                              \
	do {                                                                 \
		memcpy(c, b, len);                                           \
		wr32(c + (at), (v));                                         \
		if (!refused(c, len, n, (code)))                             \
			printf("     not refused: %s\n", what), fails++;   \
	} while (0)
	int fails = 0;
	EDIT("version 2", 4, 2, FATHOM_EVERSION);
	EDIT("m0 not 2m", 20, 2 * m + 2, FATHOM_ECORRUPT);
	EDIT("ef_search 0", 28, 0, FATHOM_ECORRUPT);
	EDIT("a reserved byte", 56, 1, FATHOM_ECORRUPT);
	EDIT("entry past n", 40, n, FATHOM_ECORRUPT);
	EDIT("entry below the top", 40, low, FATHOM_ECORRUPT);
	EDIT("top not the entry's level", 44, rd32(b + 44) + 1, FATHOM_ECORRUPT);
	EDIT("layer 0 count past its slots", lowl0, 2 * m + 1, FATHOM_ECORRUPT);
	EDIT("layer 0 link past n", lowl0 + 4, n, FATHOM_ECORRUPT);
	EDIT("an unused slot not zero", lowl0 + 4 * (size_t)2 * m, 1, FATHOM_ECORRUPT);
	EDIT("layer 1 count past its slots", highup, m + 1, FATHOM_ECORRUPT);
	EDIT("layer 1 link to a node of level 0", highup + 4, low, FATHOM_ECORRUPT);
	EDIT("an upper offset moved", up + 4 * (size_t)high, rd32(b + up + 4 * high) + m + 1,
	     FATHOM_ECORRUPT);
	EDIT("a level-0 node with an offset", up + 4 * (size_t)low, 1, FATHOM_ECORRUPT);
	/* a level past the limit (the padding word holds levels too: set one byte) */
	memcpy(c, b, len);
	c[64 + low] = VX_MAX_LEVEL + 1;
	if (!refused(c, len, n, FATHOM_ECORRUPT))
		printf("     not refused: a level past %u\n", VX_MAX_LEVEL), fails++;
	/* the pool one word short, its size and P agreeing: the last blocks run past */
	unsigned char *s = malloc(len - 4);   /* exactly: ASan sees a read past it */
	memcpy(s, b, len - 4);
	wr32(s + 48, P - 1);
	if (!refused(s, len - 4, n, FATHOM_ECORRUPT))
		printf("     not refused: a pool one word short\n"), fails++;
	free(s);
#undef EDIT
	CHECK_EQ(fails, 0);
done:
	free(c);
	fa_free(b);
	vx_hnsw_free(h);
}

/* recall@K against float brute force over the N vectors */
static double recall(const vx_hnsw *h, uint32_t ef, const int8_t *q8, const float *s8,
                     const float *o8)
{
	uint64_t found = 0, want = 0;
	for (int q = 0; q < NQ; q++) {
		vx_hit a[K], b[K];
		uint32_t na = 0, nb = 0;
		const float *qv = queries + (size_t)q * DIM;
		if (h)
			CHECK_OK(vx_hnsw_search(h, qv, K, ef, NULL, a, &na));
		else
			CHECK_OK(vx_brute_i8(q8, s8, o8, N, DIM, qv, K, NULL, a, &na));
		CHECK_OK(vx_brute(vecs, N, DIM, qv, K, NULL, b, &nb));
		want += nb;
		for (uint32_t i = 0; i < na; i++)
			for (uint32_t j = 0; j < nb; j++)
				found += a[i].id == b[j].id;
	}
	return (double)found / (double)want;
}

static void test_int8(void)
{
	vx_hnsw *h = build(vecs, N, 7);
	if (!h)
		return;
	int8_t *q8 = malloc((size_t)N * DIM);
	float *s8 = malloc(sizeof(float) * N), *o8 = malloc(sizeof(float) * N);
	/* rows as segments store them: a scale and an offset each */
	for (uint32_t i = 0; i < N; i++)
		s8[i] = em_quantize_i8_affine(vecs + (size_t)i * DIM, DIM, q8 + (size_t)i * DIM, &o8[i]);
	unsigned char *b = NULL;
	size_t len = 0;
	CHECK_OK(vx_hnsw_write(h, &b, &len));
	/* int8 rows alone, and int8 rows walked with the floats to rerank */
	vx_hnsw *v = NULL, *vr = NULL;
	CHECK_OK(vx_hnsw_view_i8(&v, b, len, q8, s8, o8, NULL, N, DIM, "int8"));
	CHECK_OK(vx_hnsw_view_i8(&vr, b, len, q8, s8, o8, vecs, N, DIM, "int8+rerank"));
	if (v && vr) {
		CHECK(vx_hnsw_vectors(v) == NULL);
		double rb = recall(NULL, 0, q8, s8, o8);
		const uint32_t efs[] = { 20, 40, 100 };
		for (int e = 0; e < 3; e++) {
			double rf = recall(h, efs[e], NULL, NULL, NULL), ri = recall(v, efs[e], NULL, NULL, NULL);
			double rr = recall(vr, efs[e], NULL, NULL, NULL);
			printf("     recall@10 at ef %u: float32 %.4f, int8 %.4f, int8 reranked on "
			       "float32 %.4f\n", efs[e], rf, ri, rr);
			/* int8 alone: the graph's loss (float32's) and the rows'
			 * rounding's (int8 brute force: its scores swap near-tied
			 * neighbours) add up at most; reranked: float32's */
			CHECK(ri >= rf - (1.0 - rb) - 0.01);
			CHECK(rr >= rf - 0.01);
		}
		printf("     int8 brute force: recall@10 %.4f of float32's\n", rb);
		CHECK(rb >= 0.97);
		/* reranked scores are the float dot products */
		vx_hit a[K];
		uint32_t na = 0;
		CHECK_OK(vx_hnsw_search(vr, queries, K, 40, NULL, a, &na));
		for (uint32_t i = 0; i < na; i++)
			CHECK(a[i].score == em_dot(queries, vecs + (size_t)a[i].id * DIM, DIM));
		/* int8 alone: the float query against the int8 row times its
		 * scale, plus its offset times the query's sum (asymmetric);
		 * symmetric, the query quantised too */
		float qsum = 0;
		for (uint32_t k = 0; k < DIM; k++)
			qsum += queries[k];
		CHECK_OK(vx_hnsw_search(v, queries, K, 40, NULL, a, &na));
		for (uint32_t i = 0; i < na; i++)
			CHECK(a[i].score == em_dot_f32_i8(queries, q8 + (size_t)a[i].id * DIM, DIM) *
			                    s8[a[i].id] + o8[a[i].id] * qsum);
		int8_t qq[DIM];
		float qs = em_quantize_i8(queries, DIM, qq);
		vx_hnsw_i8_symmetric(v, 1);
		CHECK_OK(vx_hnsw_search(v, queries, K, 40, NULL, a, &na));
		for (uint32_t i = 0; i < na; i++)
			CHECK(a[i].score == (float)em_dot_i8(qq, q8 + (size_t)a[i].id * DIM, DIM) *
			                    (qs * s8[a[i].id]) + o8[a[i].id] * qsum);
		vx_hnsw_i8_symmetric(v, 0);
	}
	vx_hnsw_free(vr);
	/* a scale that is not a number is refused */
	s8[5] = NAN;
	vx_hnsw *w = NULL;
	CHECK_EQ(vx_hnsw_view_i8(&w, b, len, q8, s8, o8, NULL, N, DIM, "int8"), FATHOM_ECORRUPT);
	/* and so is an offset that is not finite */
	s8[5] = 0.01f;
	o8[7] = INFINITY;
	CHECK_EQ(vx_hnsw_view_i8(&w, b, len, q8, s8, o8, NULL, N, DIM, "int8"), FATHOM_ECORRUPT);
	free(o8);
	vx_hnsw_free(v);
	fa_free(b);
	free(q8);
	free(s8);
	vx_hnsw_free(h);
}

/* Two graphs of N/2, a share of each deleted, merged: recall against brute
 * force over the kept vectors, and the kept vectors exactly, in order. */
static void check_merge(int how, double del0, double del1)
{
	enum { H = N / 2 };
	vx_hnsw *in[2] = { build(vecs, H, 5), build(vecs + (size_t)H * DIM, H, 6) };
	static uint8_t keep0[H / 8 + 1], keep1[H / 8 + 1];
	memset(keep0, 0, sizeof keep0);
	memset(keep1, 0, sizeof keep1);
	float *kv = malloc(sizeof(float) * N * DIM);
	uint32_t nk = 0;
	for (int g = 0; g < 2; g++)
		for (uint32_t i = 0; i < H; i++) {
			if (vm_unif(&rng) < (g ? del1 : del0))
				continue;
			(g ? keep1 : keep0)[i >> 3] |= (uint8_t)(1u << (i & 7));
			memcpy(kv + (size_t)nk++ * DIM, vecs + ((size_t)g * H + i) * DIM,
			       sizeof(float) * DIM);
		}
	const uint8_t *keep[2] = { keep0, keep1 };
	vx_params p;
	vx_params_for(N, &p);
	vx_hnsw *m = NULL;
	if (in[0] && in[1])
		CHECK_OK(vx_hnsw_merge(&m, (const vx_hnsw *const *)in, 2, keep, &p, how, 2));
	if (m) {
		CHECK_EQ(vx_hnsw_count(m), nk);
		/* new id j is the j-th kept vector: nothing deleted is there to return */
		CHECK(memcmp(vx_hnsw_vectors(m), kv, sizeof(float) * nk * DIM) == 0);
		uint64_t found = 0, want = 0;
		for (int q = 0; q < NQ; q++) {
			vx_hit a[K], b[K];
			uint32_t na = 0, nb = 0;
			const float *qv = queries + (size_t)q * DIM;
			CHECK_OK(vx_hnsw_search(m, qv, K, 100, NULL, a, &na));
			CHECK_OK(vx_brute(kv, nk, DIM, qv, K, NULL, b, &nb));
			want += nb;
			for (uint32_t i = 0; i < na; i++) {
				CHECK(a[i].id < nk);
				for (uint32_t j = 0; j < nb; j++)
					found += a[i].id == b[j].id;
			}
		}
		double r = (double)found / (double)want;
		printf("     merge (%s, %.0f%% and %.0f%% deleted): %u vectors, recall@10 %.4f at "
		       "ef 100\n", how == VX_MERGE_REUSE ? "reusing the first" : how ==
		       VX_MERGE_REBUILD ? "rebuilt" : "auto", del0 * 100, del1 * 100, nk, r);
		CHECK(r >= 0.99);
		/* the merged graph is a graph like any other: written, viewed */
		unsigned char *b = NULL;
		size_t len = 0;
		vx_hnsw *v = NULL;
		CHECK_OK(vx_hnsw_write(m, &b, &len));
		CHECK_OK(vx_hnsw_view(&v, b, len, kv, nk, DIM, "merged"));
		if (v)
			CHECK(same_hits(m, v, 40, NULL));
		vx_hnsw_free(v);
		/* the inserted vectors are linked in batches on the threads: the
		 * same graph, byte for byte, on 1 and 3 of them */
		for (unsigned t = 1; t <= 3; t += 2) {
			vx_hnsw *mt = NULL;
			unsigned char *bt = NULL;
			size_t lt = 0;
			CHECK_OK(vx_hnsw_merge(&mt, (const vx_hnsw *const *)in, 2, keep, &p, how, t));
			if (mt)
				CHECK_OK(vx_hnsw_write(mt, &bt, &lt));
			CHECK(bt && lt == len && memcmp(bt, b, len) == 0);
			fa_free(bt);
			vx_hnsw_free(mt);
		}
		fa_free(b);
	}
	vx_hnsw_free(m);
	vx_hnsw_free(in[0]);
	vx_hnsw_free(in[1]);
	free(kv);
}

static void test_merge(void)
{
	check_merge(VX_MERGE_REBUILD, 0.1, 0.2);
	check_merge(VX_MERGE_AUTO, 0.1, 0.2);     /* both lost nodes: rebuilt */
	check_merge(VX_MERGE_REUSE, 0.0, 0.3);
	check_merge(VX_MERGE_REUSE, 0.3, 0.0);    /* the reused graph second */
	/* nothing to reuse */
	vx_hnsw *a = build(vecs, 100, 1), *m = NULL;
	uint8_t k[100 / 8 + 1] = { 0xfe };
	const uint8_t *keep[1] = { k };
	vx_params p;
	vx_params_for(100, &p);
	if (a) {
		CHECK_EQ(vx_hnsw_merge(&m, (const vx_hnsw *const *)&a, 1, keep, &p, VX_MERGE_REUSE, 1),
		         FATHOM_EINVAL);
		/* everything deleted: an empty graph */
		memset(k, 0, sizeof k);
		CHECK_OK(vx_hnsw_merge(&m, (const vx_hnsw *const *)&a, 1, keep, &p, VX_MERGE_AUTO, 1));
		if (m)
			CHECK_EQ(vx_hnsw_count(m), 0);
	}
	vx_hnsw_free(m);
	m = NULL;
	/* an input over int8 rows: its vectors scaled back to floats */
	int8_t q8[100 * DIM];
	float s8[100];
	unsigned char *b = NULL;
	size_t len = 0;
	vx_hnsw *v = NULL;
	for (uint32_t i = 0; i < 100; i++)
		s8[i] = em_quantize_i8(vecs + (size_t)i * DIM, DIM, q8 + (size_t)i * DIM);
	if (a && vx_hnsw_write(a, &b, &len) == 0 &&
	    vx_hnsw_view_i8(&v, b, len, q8, s8, NULL, NULL, 100, DIM, "int8") == 0) {
		CHECK_OK(vx_hnsw_merge(&m, (const vx_hnsw *const *)&v, 1, NULL, &p, VX_MERGE_AUTO, 1));
		int same = m && vx_hnsw_count(m) == 100;
		for (uint32_t i = 0; same && i < 100 * DIM; i++)
			same = vx_hnsw_vectors(m)[i] == (float)q8[i] * s8[i / DIM];
		CHECK(same);
	} else {
		CHECK(0);
	}
	vx_hnsw_free(m);
	vx_hnsw_free(v);
	fa_free(b);
	vx_hnsw_free(a);
}

int main(void)
{
	vecs = vm_mixture(&rng, N + NQ, DIM, CLUSTERS, 1.0);
	if (!vecs)
		return 1;
	queries = vecs + (size_t)N * DIM;
	RUN(test_roundtrip);
	RUN(test_empty);
	RUN(test_damage);
	RUN(test_crafted);
	RUN(test_int8);
	RUN(test_merge);
	free(vecs);
	return TEST_DONE();
}
