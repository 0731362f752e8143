/*
 * hnsw_int.h — the HNSW graph's inside, shared by hnsw.c (building,
 * searching, merging) and hnsw_io.c (the "HNSW" section: writing it, and
 * a read-only view over its bytes).
 *
 * The arrays are laid out as the section lays them out, so that the builder
 * and a view run the same search code over the same shapes:
 *   level   u8 per node: its top layer
 *   l0      per node 1 + 2m words: the count of layer 0's links, then 2m slots
 *   upoff   per node: where its layers above 0 start in pool (words)
 *   pool    per node with level L > 0, L blocks of 1 + m words: count, m slots
 * In a builder they are its own (the w* pointers, growing); in a view they
 * point into the caller's bytes (or into `copy`, when those could not be
 * read in place), and the w* pointers are NULL.
 */
#ifndef FATHOM_HNSW_INT_H
#define FATHOM_HNSW_INT_H

#include <stddef.h>
#include <stdint.h>

#include "vec/vec.h"

/* The rows a search scores: float32 (f), or int8 (q) with one scale per row
 * and optionally an offset (s, o: row i ~ o[i] + q[i] * s[i]), scored
 * against the float query (asymmetric: q . row = o[i] * sum(q) + s[i] *
 * (q . q[i])), or with sym set against the query quantised too
 * (em_dot_i8). */
typedef struct vx_rows {
	const float *f;
	const int8_t *q;
	const float *s;
	const float *o;     /* NULL: offsets 0 */
	uint32_t dim;
	int sym;
} vx_rows;

struct vx_hnsw {
	uint32_t dim, n, cap;
	vx_params p;
	vx_rows rows;
	const uint8_t *level;
	const uint32_t *l0;
	const uint32_t *upoff;
	const uint32_t *pool;
	size_t pool_len;     /* words in use */
	uint32_t entry;
	int top;             /* the entry's layer; -1 while empty */
	int view;            /* read-only: vx_hnsw_add refuses */
	/* a builder's own, writable (NULL in a view) */
	float *wv;
	uint8_t *wlevel;
	uint32_t *wl0, *wupoff, *wpool;
	size_t pool_cap;
	uint64_t rng;
	uint32_t *stamp;     /* insertion's visited marks (cap), this pass's = mark */
	uint32_t mark;
	/* a view's own: the graph's words, when the bytes were not usable in place */
	void *copy;
};

#endif /* FATHOM_HNSW_INT_H */
