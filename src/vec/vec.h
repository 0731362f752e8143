/*
 * vec.h — vector search (issue 15, under way): an HNSW graph in memory
 * over unit vectors, scored by dot product (cosine), with filters applied
 * during the search and an exact brute-force path.
 *
 *   hnsw.c   the graph (Malkov & Yashunin, 2016/2018): layers drawn with a
 *            seeded generator, neighbours chosen by the paper's heuristic,
 *            search with an ef-sized beam; brute force, which the tests hold
 *            the graph to, and which a filter selecting few vectors uses
 *            instead of the graph
 *
 * Not yet: storage in the segments (format 7 sections), deletes, merges,
 * int8 storage.
 */
#ifndef FATHOM_VEC_H
#define FATHOM_VEC_H

#include <stddef.h>
#include <stdint.h>

#define VX_MAX_DIM 4096u
#define VX_MAX_M 64u
#define VX_MAX_LEVEL 16u
#define VX_MAX_K 10000u

typedef struct vx_params {
	uint32_t m;                /* links a node keeps above layer 0 (2m on it) */
	uint32_t ef_construction;  /* beam while inserting */
	uint32_t ef_search;        /* beam while searching (at least k is used) */
	uint64_t seed;             /* the layers drawn: same seed, same graph */
} vx_params;

/* The parameters for a collection of n vectors (Nexus's table: under 100k
 * m 16, efC 64, ef 40; to 1M 24 / 128 / 100; beyond 32 / 200 / 200). */
void vx_params_for(uint64_t n, vx_params *p);

typedef struct vx_hit {
	uint32_t id;               /* insertion order, from 0 */
	float score;               /* dot product with the query */
} vx_hit;

/* Which vectors may be returned: bit id of bits set (NULL: all), and how
 * many are set (the search's choice of path reads it). */
typedef struct vx_filter {
	const uint8_t *bits;
	uint64_t count;
} vx_filter;

/* Below this share of the vectors allowed, a filtered search scores the
 * allowed ones one by one instead of walking the graph: exact, and cheaper
 * than a walk that passes mostly vectors it may not return. */
#define VX_BRUTE_SHARE 0.02

typedef struct vx_hnsw vx_hnsw;

int vx_hnsw_new(vx_hnsw **out, uint32_t dim, const vx_params *p);
void vx_hnsw_free(vx_hnsw *h);
/* Add a vector (dim values, unit length expected; copied); its id is the
 * count before. */
int vx_hnsw_add(vx_hnsw *h, const float *v);
uint32_t vx_hnsw_count(const vx_hnsw *h);
/* The k best of the allowed vectors for q, best first, into out (room for
 * k); *n the number found. ef 0: the graph's ef_search. */
int vx_hnsw_search(const vx_hnsw *h, const float *q, uint32_t k, uint32_t ef,
                   const vx_filter *f, vx_hit *out, uint32_t *n);
/* The same, exact: every allowed vector scored. */
int vx_brute(const float *vecs, uint32_t count, uint32_t dim, const float *q, uint32_t k,
             const vx_filter *f, vx_hit *out, uint32_t *n);
/* The graph's vectors (count * dim). */
const float *vx_hnsw_vectors(const vx_hnsw *h);

#endif /* FATHOM_VEC_H */
