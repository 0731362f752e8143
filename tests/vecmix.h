/*
 * vecmix.h — clustered unit vectors for the vector tests and
 * bench/vec/hnsw_bench.c: a Gaussian mixture (uniform random vectors have
 * no neighbourhoods, and a nearest-neighbour search on them measures
 * nothing). Each vector is one of `centres` centres (components N(0,1))
 * plus N(0, sigma^2) noise, scaled to unit length; the generator is seeded,
 * so each run draws the same vectors.
 */
#ifndef FATHOM_TEST_VECMIX_H
#define FATHOM_TEST_VECMIX_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* xorshift64, 53 bits into (0, 1) */
static inline double vm_unif(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

static inline double vm_gauss(uint64_t *s)
{
	double u = vm_unif(s);
	return sqrt(-2.0 * log(u)) * cos(2.0 * 3.14159265358979323846 * vm_unif(s));
}

/* count vectors of dim (malloc'd, row after row; NULL out of memory) */
static inline float *vm_mixture(uint64_t *s, uint32_t count, uint32_t dim, uint32_t centres,
                                double sigma)
{
	float *c = malloc(sizeof(float) * centres * dim);
	float *v = malloc(sizeof(float) * count * dim);
	if (!c || !v) {
		free(c);
		free(v);
		return NULL;
	}
	for (size_t i = 0; i < (size_t)centres * dim; i++)
		c[i] = (float)vm_gauss(s);
	for (uint32_t i = 0; i < count; i++) {
		float *x = v + (size_t)i * dim;
		const float *ci = c + (size_t)(vm_unif(s) * centres) * dim;
		double ss = 0;
		for (uint32_t k = 0; k < dim; k++) {
			x[k] = ci[k] + (float)(sigma * vm_gauss(s));
			ss += (double)x[k] * x[k];
		}
		for (uint32_t k = 0; k < dim; k++)
			x[k] = (float)(x[k] / sqrt(ss));
	}
	free(c);
	return v;
}

#endif /* FATHOM_TEST_VECMIX_H */
