/*
 * hnsw_bench.c — fathom's HNSW (src/vec/) on synthetic clustered vectors:
 * a Gaussian mixture (CENTRES centres with N(0,1) components, each vector a
 * centre plus N(0, sigma^2) noise, unit length), queries drawn the same way.
 * Prints the build time, then per ef recall@10 (against float32 brute force)
 * and single-thread queries per second, for float32 rows, int8 rows and
 * int8 rows reranked on float32; then the merge of two graphs (rebuilding
 * versus inserting into a copy of the larger). With -o DIR it writes the
 * vectors for bench/vec/peers.py: DIR/base.f32, DIR/queries.f32 (raw
 * little-endian float32, row after row), DIR/truth.i32 (10 ids per query)
 * and DIR/meta.txt (n dim nq).
 *
 *   hnsw_bench [-n 100000] [-d 384] [-c 1000] [-s 1.0] [-q 500] [-o DIR]
 *
 * The vectors are tests/vecmix.h's. Built by `make bench`
 * ($(BUILD)/bench/hnsw_bench), not by `make test`.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "embed/embed.h"
#include "fathom.h"
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

static vx_hnsw *build(const float *v, uint32_t n, uint32_t dim, uint64_t seed)
{
	vx_params p;
	vx_params_for(n, &p);
	p.m = 16, p.ef_construction = 64;   /* hnswlib's M 16, efC 64 for the peers */
	p.seed = seed;
	vx_hnsw *h = NULL;
	if (vx_hnsw_new(&h, dim, &p) != 0)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (vx_hnsw_add(h, v + (size_t)i * dim) != 0) {
			vx_hnsw_free(h);
			return NULL;
		}
	return h;
}

/* recall@10 against truth and queries per second, one thread */
static void measure(const vx_hnsw *h, const float *qs, uint32_t nq, uint32_t dim,
                    const uint32_t *truth, uint32_t ef, double *recall, double *qps)
{
	uint64_t found = 0;
	double t0 = now();
	for (uint32_t q = 0; q < nq; q++) {
		vx_hit a[K];
		uint32_t na = 0;
		if (vx_hnsw_search(h, qs + (size_t)q * dim, K, ef, NULL, a, &na) != 0)
			exit(1);
		for (uint32_t i = 0; i < na; i++)
			for (uint32_t j = 0; j < K; j++)
				found += a[i].id == truth[(size_t)q * K + j];
	}
	*qps = nq / (now() - t0);
	*recall = (double)found / ((double)nq * K);
}

int main(int argc, char **argv)
{
	uint32_t n = 100000, dim = 384, centres = 1000, nq = 500;
	double sigma = 1.0;
	const char *dir = NULL;
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
	}
	if (n < 2 || dim == 0 || dim > VX_MAX_DIM || centres == 0 || nq == 0) {
		fprintf(stderr, "usage: hnsw_bench [-n N] [-d DIM] [-c CENTRES] [-s SIGMA] [-q NQ] [-o DIR]\n");
		return 2;
	}
	uint64_t rng = 20261124;
	float *v = vm_mixture(&rng, n + nq, dim, centres, sigma);
	uint32_t *truth = malloc(sizeof(uint32_t) * nq * K);
	if (!v || !truth)
		return 1;
	const float *qs = v + (size_t)n * dim;
	printf("%u vectors of %u dimensions (%u centres, sigma %.2f), %u queries; kernel %s\n", n,
	       dim, centres, sigma, nq, em_dist_kernel());
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
	vx_hnsw *h = build(v, n, dim, 1);
	double tbuild = now() - t0;
	if (!h)
		return 1;
	unsigned char *g = NULL;
	size_t glen = 0;
	int8_t *q8 = malloc((size_t)n * dim);
	float *sc = malloc(sizeof(float) * n);
	vx_hnsw *vi = NULL, *vr = NULL;
	if (!q8 || !sc || vx_hnsw_write(h, &g, &glen))
		return 1;
	for (uint32_t i = 0; i < n; i++)
		sc[i] = em_quantize_i8(v + (size_t)i * dim, dim, q8 + (size_t)i * dim);
	if (vx_hnsw_view_i8(&vi, g, glen, q8, sc, NULL, n, dim, "bench") ||
	    vx_hnsw_view_i8(&vr, g, glen, q8, sc, v, n, dim, "bench"))
		return 1;
	printf("build (m 16, ef_construction 64, one thread): %.1f s; HNSW section %zu bytes "
	       "(%.1f per vector)\n\n", tbuild, glen, (double)glen / n);
	printf("  ef | float32 recall   QPS | int8 recall   QPS | int8+rerank recall   QPS\n");
	const uint32_t efs[] = { 10, 20, 40, 80, 160 };
	for (int e = 0; e < 5; e++) {
		double rf, qf, ri, qi, rr, qr;
		measure(h, qs, nq, dim, truth, efs[e], &rf, &qf);
		measure(vi, qs, nq, dim, truth, efs[e], &ri, &qi);
		measure(vr, qs, nq, dim, truth, efs[e], &rr, &qr);
		printf(" %3u |        %.4f %6.0f |     %.4f %5.0f |            %.4f %5.0f\n", efs[e],
		       rf, qf, ri, qi, rr, qr);
	}
	vx_hnsw_free(vi);
	vx_hnsw_free(vr);
	fa_free(g);
	vx_hnsw_free(h);

	/* merging two graphs of 20k (or n/2) each */
	uint32_t half = FA_MIN(20000u, n / 2);
	vx_hnsw *in[2] = { build(v, half, dim, 2), build(v + (size_t)half * dim, half, dim, 3) };
	if (!in[0] || !in[1])
		return 1;
	printf("\nmerging 2 x %u vectors:\n", half);
	for (int how = VX_MERGE_REUSE; how <= VX_MERGE_REBUILD; how++) {
		vx_params p;
		vx_params_for(2 * half, &p);
		p.m = 16, p.ef_construction = 64;
		vx_hnsw *m = NULL;
		t0 = now();
		if (vx_hnsw_merge(&m, (const vx_hnsw *const *)in, 2, NULL, &p, how))
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
	free(truth);
	free(q8);
	free(sc);
	return 0;
}
