/*
 * fuzz_hnsw.c — arbitrary bytes as an "HNSW" section (docs/FORMAT.md 5.13)
 * over vectors made up to fit its header (dim and n, when small; otherwise
 * none, which the view must refuse). A view either fails, leaving nothing,
 * or holds together: searches over float rows, int8 rows and int8 rows
 * reranked on floats return only ids below n, best first, and writing the
 * view out again gives back the very bytes (the layout is canonical, so
 * anything the view takes is what the writer would have written).
 *
 * The seeds in fuzz/corpus/fuzz_hnsw/ are vx_hnsw_write's output for
 * graphs over the rows row() makes (n 0, 1, 60 and 300; dim 8; m 2 to 6).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "embed/embed.h"
#include "util/util.h"
#include "vec/vec.h"

enum { MAX_N = 2048, MAX_DIM = 16, K = 5 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* vector i (unit length): the seeds' graphs were built over the same */
static void row(uint32_t i, uint32_t dim, float *v)
{
	double ss = 0;
	for (uint32_t k = 0; k < dim; k++) {
		v[k] = (float)sin(0.37 * i + 1.3 * k + 0.01 * i * k);
		ss += (double)v[k] * v[k];
	}
	for (uint32_t k = 0; k < dim; k++)
		v[k] = (float)(v[k] / sqrt(ss));
}

static float vf[MAX_N * MAX_DIM], sc[MAX_N], of[MAX_N];
static int8_t vq[MAX_N * MAX_DIM];

static void search_all(const vx_hnsw *h, uint32_t n, uint32_t dim)
{
	for (uint32_t t = 0; t < 3; t++) {
		float q[MAX_DIM];
		row(1000003u * t + 17, dim, q);
		vx_hit out[K];
		uint32_t nh = 99;
		if (vx_hnsw_search(h, q, K, 4 + 8 * t, NULL, out, &nh) != 0 || nh > K ||
		    (n && nh == 0))
			__builtin_trap();
		for (uint32_t i = 0; i < nh; i++)
			if (out[i].id >= n || (i && out[i].score > out[i - 1].score))
				__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t dim = 8, n = 0;
	if (size >= 16) {
		dim = get32(data + 8);
		n = get32(data + 12);
		if (dim == 0 || dim > MAX_DIM || n > MAX_N)
			dim = 8, n = 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		row(i, dim, vf + (size_t)i * dim);
		sc[i] = em_quantize_i8_affine(vf + (size_t)i * dim, dim, vq + (size_t)i * dim, &of[i]);
	}
	for (int mode = 0; mode < 3; mode++) {
		vx_hnsw *h = NULL;
		int rc = mode == 0 ? vx_hnsw_view(&h, data, size, vf, n, dim, "fuzz")
		                   : vx_hnsw_view_i8(&h, data, size, vq, sc, of, mode == 2 ? vf : NULL,
		                                     n, dim, "fuzz");
		if (rc) {
			if (h)
				__builtin_trap();   /* an error leaves nothing behind */
			return 0;
		}
		if (vx_hnsw_count(h) != n || vx_hnsw_add(h, vf) == 0)
			__builtin_trap();
		search_all(h, n, dim);
		unsigned char *b = NULL;
		size_t len = 0;
		if (vx_hnsw_write(h, &b, &len) != 0 || len != size || memcmp(b, data, size) != 0)
			__builtin_trap();
		fa_free(b);
		vx_hnsw_free(h);
	}
	return 0;
}
