/*
 * hnsw_bench.c — fathom's HNSW (src/vec/) on synthetic clustered vectors:
 * a Gaussian mixture (CENTRES centres with N(0,1) components, each vector a
 * centre plus N(0, sigma^2) noise, unit length), queries drawn the same way.
 * Prints the build time, then per ef recall@10 (against float32 brute force)
 * and single-thread queries per second (the median of 5 passes), for
 * float32 rows, int8 rows (scored asymmetrically, the float query against
 * them: with a scale and an offset per row, as a segment stored as int8 is
 * searched, and with a scale alone; and symmetrically, the query quantised
 * too) and int8 rows with the beam scored again on float32 (int8-rescore);
 * then the merge of two graphs (rebuilding versus inserting into a copy of
 * the larger). With -o DIR it writes the vectors for bench/vec/peers.py:
 * DIR/base.f32, DIR/queries.f32 (raw little-endian float32, row after
 * row), DIR/truth.i32 (10 ids per query) and DIR/meta.txt (n dim nq).
 * Then filtered searches: a seeded random tenth and hundredth of the
 * vectors allowed (vx_filter, as a segment's filters reach the graph),
 * recall@10 against brute force over the allowed ones and QPS; with -o,
 * DIR/filter<P>.u8 (the bitmap) and DIR/truth<P>.i32 for the peers.
 *
 *   hnsw_bench [-n 100000] [-d 384] [-c 1000] [-s 1.0] [-q 500] [-o DIR]
 *   hnsw_bench -g GLOVE.txt [-q 500] [-o DIR]
 *   hnsw_bench -x INDEX -Q QUERIES.jsonl [-q 300] [-o DIR]
 *
 * The vectors are tests/vecmix.h's; with -g, word vectors of a GloVe text
 * file (normalised; the last q words are the queries, the others the
 * base); with -x, the chunk vectors of a fathom index (its VECS rows that
 * hold a vector) and as queries the "text" of each JSON line of QUERIES
 * (BEIR's queries.jsonl) embedded by the index's embedder. Built by `make
 * bench` ($(BUILD)/bench/hnsw_bench), not by `make test`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "api/api.h"
#include "embed/embed.h"
#include "fathom.h"
#include "index/index.h"
#include "util/util.h"
#include "vec/vec.h"
#include "vecmix.h"   /* tests/: the Gaussian mixture */

enum { K = 10 };

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int write_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len) {
		perror(path);
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

/* A graph of the n rows as a segment builds it (vx_hnsw_add_rows: batches
 * searched on `threads` threads), or threads 0: one vx_hnsw_add at a time. */
static vx_hnsw *build(const float *v, uint32_t n, uint32_t dim, uint64_t seed, unsigned threads)
{
	vx_params p;
	vx_params_for(n, &p);
	p.m = 16, p.ef_construction = 64;   /* hnswlib's M 16, efC 64 for the peers */
	p.seed = seed;
	vx_hnsw *h = NULL;
	if (vx_hnsw_new(&h, dim, &p) != 0)
		return NULL;
	if (threads) {
		if (vx_hnsw_add_rows(h, v, n, threads) == 0)
			return h;
		vx_hnsw_free(h);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		if (vx_hnsw_add(h, v + (size_t)i * dim) != 0) {
			vx_hnsw_free(h);
			return NULL;
		}
	return h;
}

/* Passes over the queries that a figure of queries per second takes the
 * median of (peers.py does the same): one pass of GloVe's 500 queries
 * lasts 2 to 26 ms, and single passes moved its ratio to hnswlib between
 * 91% and 110% across runs (docs/BENCHMARKS.md). */
#define PASSES 5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* recall@10 against truth, and queries per second on one thread: the
 * median of PASSES passes over the queries (f: a filter, or NULL; qps
 * NULL: recall alone, one pass) */
static void measure(const vx_hnsw *h, const float *qs, uint32_t nq, uint32_t dim,
                    const uint32_t *truth, uint32_t ef, const vx_filter *f, double *recall,
                    double *qps)
{
	double pass[PASSES];
	uint64_t found = 0;
	int passes = qps ? PASSES : 1;
	for (int p = 0; p < passes; p++) {
		double t0 = now();
		for (uint32_t q = 0; q < nq; q++) {
			vx_hit a[K];
			uint32_t na = 0;
			if (vx_hnsw_search(h, qs + (size_t)q * dim, K, ef, f, a, &na) != 0)
				exit(1);
			if (p == 0)
				for (uint32_t i = 0; i < na; i++)
					for (uint32_t j = 0; j < K; j++)
						found += a[i].id == truth[(size_t)q * K + j];
		}
		pass[p] = nq / (now() - t0);
	}
	if (qps) {
		qsort(pass, PASSES, sizeof *pass, cmp_double);
		*qps = pass[PASSES / 2];
	}
	*recall = (double)found / ((double)nq * K);
}

static void unit(float *x, uint32_t dim)
{
	double ss = 0;
	for (uint32_t k = 0; k < dim; k++)
		ss += (double)x[k] * x[k];
	if (ss > 0)
		for (uint32_t k = 0; k < dim; k++)
			x[k] = (float)(x[k] / sqrt(ss));
}

/* A GloVe text file: word then the values, a line each; *n rows of *dim. */
static float *read_glove(const char *path, uint32_t *n, uint32_t *dim)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return NULL;
	}
	size_t cap = 0, rows = 0;
	float *v = NULL;
	char *line = NULL;
	size_t lcap = 0;
	*dim = 0;
	while (getline(&line, &lcap, f) > 0) {
		char *p = strchr(line, ' '), *end;
		uint32_t d = 0;
		float row[VX_MAX_DIM];
		while (p && d < VX_MAX_DIM) {
			float x = strtof(p, &end);
			if (end == p)
				break;
			row[d++] = x;
			p = end;
		}
		if (!d || (*dim && d != *dim))
			continue;
		*dim = d;
		if (rows == cap) {
			cap = cap ? 2 * cap : 4096;
			float *nv = realloc(v, cap * d * sizeof *v);
			if (!nv)
				exit(1);
			v = nv;
		}
		unit(row, d);
		memcpy(v + rows * d, row, d * sizeof *row);
		rows++;
	}
	free(line);
	fclose(f);
	*n = (uint32_t)rows;
	return v;
}

/* A fathom index's chunk vectors (*n rows of *dim) and the queries of a
 * BEIR queries.jsonl embedded by its embedder (*nq rows, at most *nq). */
static float *read_index(const char *dir, const char *queries, uint32_t *n, uint32_t *dim,
                         float **qs, uint32_t *nq)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	fathom_index *fx = NULL;
	fathom_embedder *e = NULL;
	if (fathom_open(&fx, dir, &oo) || fathom_embedder_open(&e, fx) || !e) {
		fprintf(stderr, "%s: %s\n", dir, fathom_errmsg());
		exit(1);
	}
	*dim = fathom_embedder_dim(e);
	size_t rows = 0, cap = 0;
	float *v = NULL;
	for (size_t si = 0; si < ix_nsegments(fx->ix); si++) {
		ix_vecs vv;
		if (seg_vectors(ix_segment_at(fx->ix, si), &vv) || vv.dim != *dim)
			continue;
		for (uint32_t c = 0; c < vv.count; c++) {
			if (!(vv.bits[c >> 3] >> (c & 7) & 1) ||
			    seg_is_deleted(ix_segment_at(fx->ix, si), c))
				continue;
			if (rows == cap) {
				cap = cap ? 2 * cap : 4096;
				if (!(v = realloc(v, cap * *dim * sizeof *v)))
					exit(1);
			}
			/* an int8 index's rows scaled back to floats */
			float *dst = v + rows++ * *dim;
			const float *row = ix_vecs_row(&vv, c, dst);
			if (row != dst)
				memcpy(dst, row, *dim * sizeof *v);
		}
	}
	*n = (uint32_t)rows;
	FILE *f = fopen(queries, "r");
	if (!f) {
		perror(queries);
		exit(1);
	}
	*qs = malloc((size_t)*nq * *dim * sizeof **qs);
	char *line = NULL;
	size_t lcap = 0;
	uint32_t got = 0;
	while (*qs && got < *nq && getline(&line, &lcap, f) > 0) {
		json_t *j = json_loads(line, 0, NULL);
		const char *t = j ? json_string_value(json_object_get(j, "text")) : NULL;
		size_t len = t ? strlen(t) : 0;
		if (t && fathom_embed(e, &t, &len, 1, *qs + (size_t)got * *dim) == 0)
			got++;
		json_decref(j);
	}
	free(line);
	fclose(f);
	*nq = got;
	fathom_embedder_free(e);
	fathom_close(fx);
	return v;
}

/* Filtered search: a seeded share of the n vectors allowed; fathom's graph
 * under that filter against brute force over the allowed ones. */
static int filtered(const vx_hnsw *h, const float *v, uint32_t n, uint32_t dim, const float *qs,
                    uint32_t nq, double share, const char *dir)
{
	size_t nb = (size_t)n / 8 + 1;
	uint8_t *bits = calloc(nb, 1);
	uint32_t *truth = malloc(sizeof(uint32_t) * nq * K);
	if (!bits || !truth)
		return 1;
	uint64_t rng = 7, count = 0;
	for (uint32_t i = 0; i < n; i++)
		if (vm_unif(&rng) < share) {
			bits[i >> 3] |= (uint8_t)(1u << (i & 7));
			count++;
		}
	vx_filter f = { bits, count, 0 }, walk = { bits, count, 1 };
	double t0 = now();
	for (uint32_t q = 0; q < nq; q++) {
		vx_hit b[K];
		uint32_t nbh = 0;
		vx_brute(v, n, dim, qs + (size_t)q * dim, K, &f, b, &nbh);
		for (uint32_t j = 0; j < K; j++)
			truth[(size_t)q * K + j] = j < nbh ? b[j].id : UINT32_MAX;
	}
	double bqps = nq / (now() - t0);
	int pct = (int)(share * 100 + 0.5);
	printf("\nfiltered: %d%% allowed (%llu vectors)\n", pct, (unsigned long long)count);
	printf("  brute force over the allowed: recall@10 1, %.0f QPS\n", bqps);
	const uint32_t efs[] = { 40, 80, 160 };
	for (int e = 0; e < 6; e++) {
		double rec, qps;
		measure(h, qs, nq, dim, truth, efs[e % 3], e < 3 ? &walk : &f, &rec, &qps);
		printf("  %s ef %3u: recall@10 %.4f, %.0f QPS\n",
		       e < 3 ? "walk, filter inside:" : "vx_hnsw_search's choice:", efs[e % 3], rec,
		       qps);
	}
	if (dir) {
		char a[64], b[64];
		snprintf(a, sizeof a, "filter%d.u8", pct);
		snprintf(b, sizeof b, "truth%d.i32", pct);
		if (write_file(dir, a, bits, nb) || write_file(dir, b, truth, sizeof(uint32_t) * nq * K))
			return 1;
	}
	free(bits);
	free(truth);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t n = 100000, dim = 384, centres = 1000, nq = 500;
	double sigma = 1.0;
	const char *dir = NULL, *glove = NULL, *index = NULL, *queries = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			n = (uint32_t)atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-d"))
			dim = (uint32_t)atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-c"))
			centres = (uint32_t)atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-s"))
			sigma = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "-q"))
			nq = (uint32_t)atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-o"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "-g"))
			glove = argv[i + 1];
		else if (!strcmp(argv[i], "-x"))
			index = argv[i + 1];
		else if (!strcmp(argv[i], "-Q"))
			queries = argv[i + 1];
	}
	if (n < 2 || dim == 0 || dim > VX_MAX_DIM || centres == 0 || nq == 0) {
		fprintf(stderr, "usage: hnsw_bench [-n N] [-d DIM] [-c CENTRES] [-s SIGMA] [-q NQ] [-o DIR]\n");
		return 2;
	}
	uint64_t rng = 20261124;
	float *v = NULL, *qown = NULL;
	const float *qs;
	if (glove) {
		uint32_t all;
		if (!(v = read_glove(glove, &all, &dim)) || all < 2 * nq)
			return 1;
		n = all - nq;
		qs = v + (size_t)n * dim;
		printf("%s: %u word vectors of %u dimensions, the last %u the queries; kernel %s\n",
		       glove, n, dim, nq, em_dist_kernel());
	} else if (index) {
		if (!queries || !(v = read_index(index, queries, &n, &dim, &qown, &nq)) || n < 2 ||
		    !nq)
			return 1;
		qs = qown;
		printf("%s: %u chunk vectors of %u dimensions, %u queries (%s) embedded; kernel %s\n",
		       index, n, dim, nq, queries, em_dist_kernel());
	} else {
		v = vm_mixture(&rng, n + nq, dim, centres, sigma);
		if (!v)
			return 1;
		qs = v + (size_t)n * dim;
		printf("%u vectors of %u dimensions (%u centres, sigma %.2f), %u queries; kernel %s\n",
		       n, dim, centres, sigma, nq, em_dist_kernel());
	}
	uint32_t *truth = malloc(sizeof(uint32_t) * nq * K);
	if (!truth)
		return 1;
	double t0 = now();
	for (uint32_t q = 0; q < nq; q++) {
		vx_hit b[K];
		uint32_t nb = 0;
		vx_brute(v, n, dim, qs + (size_t)q * dim, K, NULL, b, &nb);
		for (uint32_t j = 0; j < K; j++)
			truth[(size_t)q * K + j] = j < nb ? b[j].id : UINT32_MAX;
	}
	double tb = now() - t0;
	printf("brute force float32: %.1f queries/s\n", nq / tb);
	if (dir) {
		char meta[128];
		int ml = snprintf(meta, sizeof meta, "%u %u %u\n", n, dim, nq);
		if (write_file(dir, "base.f32", v, sizeof(float) * n * dim) ||
		    write_file(dir, "queries.f32", qs, sizeof(float) * nq * dim) ||
		    write_file(dir, "truth.i32", truth, sizeof(uint32_t) * nq * K) ||
		    write_file(dir, "meta.txt", meta, (size_t)ml))
			return 1;
	}

	t0 = now();
	vx_hnsw *h = build(v, n, dim, 1, 1);
	double tbuild = now() - t0;
	if (!h)
		return 1;
	unsigned char *g = NULL;
	size_t glen = 0;
	/* int8 rows two ways: a scale and an offset each, as segments store
	 * them (em_quantize_i8_affine), and a scale alone (em_quantize_i8) */
	int8_t *q8 = malloc((size_t)n * dim), *a8 = malloc((size_t)n * dim);
	float *sc = malloc(sizeof(float) * n), *as = malloc(sizeof(float) * n);
	float *ao = malloc(sizeof(float) * n);
	vx_hnsw *va = NULL, *vi = NULL, *vs = NULL, *vr = NULL;
	if (!q8 || !sc || !a8 || !as || !ao || vx_hnsw_write(h, &g, &glen))
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		sc[i] = em_quantize_i8(v + (size_t)i * dim, dim, q8 + (size_t)i * dim);
		as[i] = em_quantize_i8_affine(v + (size_t)i * dim, dim, a8 + (size_t)i * dim, &ao[i]);
	}
	if (vx_hnsw_view_i8(&va, g, glen, a8, as, ao, NULL, n, dim, "bench") ||
	    vx_hnsw_view_i8(&vi, g, glen, q8, sc, NULL, NULL, n, dim, "bench") ||
	    vx_hnsw_view_i8(&vs, g, glen, q8, sc, NULL, NULL, n, dim, "bench") ||
	    vx_hnsw_view_i8(&vr, g, glen, a8, as, ao, v, n, dim, "bench"))
		return 1;
	vx_hnsw_i8_symmetric(vs, 1);
	printf("build (m 16, ef_construction 64, one thread): %.1f s; HNSW section %zu bytes "
	       "(%.1f per vector)\n", tbuild, glen, (double)glen / n);
	{
		/* the same graph on two threads (batches searched in parallel,
		 * vx_hnsw_add_rows); and one vx_hnsw_add at a time, for recall */
		t0 = now();
		vx_hnsw *h2 = build(v, n, dim, 1, 2);
		double t2 = now() - t0;
		t0 = now();
		vx_hnsw *h1 = build(v, n, dim, 1, 0);
		double t1 = now() - t0;
		unsigned char *g2 = NULL;
		size_t g2len = 0;
		if (!h2 || !h1 || vx_hnsw_write(h2, &g2, &g2len))
			return 1;
		double rb[2], r1[2];
		for (int e = 0; e < 2; e++) {
			measure(h, qs, nq, dim, truth, e ? 80 : 40, NULL, &rb[e], NULL);
			measure(h1, qs, nq, dim, truth, e ? 80 : 40, NULL, &r1[e], NULL);
		}
		printf("the same on two threads: %.1f s, %s graph; one at a time: %.1f s; "
		       "recall@10 at ef 40 / 80: batched %.4f / %.4f, one at a time %.4f / %.4f\n\n",
		       t2, g2len == glen && memcmp(g2, g, glen) == 0 ? "the same" : "ANOTHER", t1,
		       rb[0], rb[1], r1[0], r1[1]);
		fa_free(g2);
		vx_hnsw_free(h2);
		vx_hnsw_free(h1);
	}
	/* int8, the float query against the rows (asymmetric): rows with a
	 * scale and an offset (what a segment stored as int8 is searched
	 * with), rows with a scale alone; then those with the query quantised
	 * too (symmetric); and the first, its beam scored again on the float rows
	 * (what a segment stored as int8-rescore is searched with) */
	printf("  ef | float32 recall   QPS | int8 recall   QPS | int8-scale recall   QPS | "
	       "int8-sym recall   QPS | int8-rescore recall   QPS\n");
	const uint32_t efs[] = { 10, 20, 40, 80, 160 };
	for (int e = 0; e < 5; e++) {
		double rf, qf, ra, qa, ri, qi, rs, qsy, rr, qr;
		measure(h, qs, nq, dim, truth, efs[e], NULL, &rf, &qf);
		measure(va, qs, nq, dim, truth, efs[e], NULL, &ra, &qa);
		measure(vi, qs, nq, dim, truth, efs[e], NULL, &ri, &qi);
		measure(vs, qs, nq, dim, truth, efs[e], NULL, &rs, &qsy);
		measure(vr, qs, nq, dim, truth, efs[e], NULL, &rr, &qr);
		printf(" %3u |        %.4f %6.0f |     %.4f %5.0f |           %.4f %5.0f |"
		       "         %.4f %5.0f |             %.4f %5.0f\n", efs[e], rf, qf, ra, qa, ri, qi,
		       rs, qsy, rr, qr);
	}
	/* exact int8 (every row scored): what quantisation alone costs */
	uint64_t hits8 = 0, hitsa = 0;
	for (uint32_t q = 0; q < nq; q++) {
		vx_hit b[K], c[K];
		uint32_t nb = 0, nc = 0;
		vx_brute_i8(q8, sc, NULL, n, dim, qs + (size_t)q * dim, K, NULL, b, &nb);
		vx_brute_i8(a8, as, ao, n, dim, qs + (size_t)q * dim, K, NULL, c, &nc);
		for (uint32_t j = 0; j < K; j++) {
			for (uint32_t i = 0; i < nb; i++)
				hits8 += b[i].id == truth[(size_t)q * K + j];
			for (uint32_t i = 0; i < nc; i++)
				hitsa += c[i].id == truth[(size_t)q * K + j];
		}
	}
	printf("int8 brute force (asymmetric): recall@10 %.4f with offsets, %.4f scale alone\n",
	       (double)hitsa / ((double)nq * K), (double)hits8 / ((double)nq * K));
	vx_hnsw_free(va);
	vx_hnsw_free(vi);
	vx_hnsw_free(vs);
	free(a8);
	free(as);
	free(ao);
	vx_hnsw_free(vr);
	fa_free(g);
	if (filtered(h, v, n, dim, qs, nq, 0.10, dir) || filtered(h, v, n, dim, qs, nq, 0.01, dir))
		return 1;
	vx_hnsw_free(h);

	/* merging two graphs of 20k (or n/2) each */
	uint32_t half = FA_MIN(20000u, n / 2);
	vx_hnsw *in[2] = { build(v, half, dim, 2, 1),
		           build(v + (size_t)half * dim, half, dim, 3, 1) };
	if (!in[0] || !in[1])
		return 1;
	printf("\nmerging 2 x %u vectors:\n", half);
	for (int how = VX_MERGE_REUSE; how <= VX_MERGE_REBUILD; how++) {
		vx_params p;
		vx_params_for(2 * half, &p);
		p.m = 16, p.ef_construction = 64;
		vx_hnsw *m = NULL;
		t0 = now();
		if (vx_hnsw_merge(&m, (const vx_hnsw *const *)in, 2, NULL, &p, how, 1))
			return 1;
		double tm = now() - t0;
		uint64_t found = 0;
		for (uint32_t q = 0; q < nq; q++) {
			vx_hit a[K], b[K];
			uint32_t na = 0, nb = 0;
			vx_hnsw_search(m, qs + (size_t)q * dim, K, 40, NULL, a, &na);
			vx_brute(v, 2 * half, dim, qs + (size_t)q * dim, K, NULL, b, &nb);
			for (uint32_t i = 0; i < na; i++)
				for (uint32_t j = 0; j < nb; j++)
					found += a[i].id == b[j].id;
		}
		printf("  %-28s %6.1f s, recall@10 at ef 40 %.4f\n",
		       how == VX_MERGE_REUSE ? "insert into the larger's copy" : "rebuild from scratch",
		       tm, (double)found / ((double)nq * K));
		vx_hnsw_free(m);
	}
	vx_hnsw_free(in[0]);
	vx_hnsw_free(in[1]);
	free(v);
	free(qown);
	free(truth);
	free(q8);
	free(sc);
	return 0;
}
