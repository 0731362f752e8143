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
 *   hnsw_io.c the graph as a segment's "HNSW" section (docs/FORMAT.md 5.13):
 *            vx_hnsw_write lays it out, vx_hnsw_view searches it in place
 *            over mapped bytes (links and vectors not copied), after one
 *            O(size) check of everything a search reads
 *
 * Vectors are float32 rows, or int8 rows with one scale each and optionally
 * an offset (em_quantize_i8, em_quantize_i8_affine; the float query is
 * scored against them with em_dot_f32_i8, times the row's scale, plus its
 * offset times the query's sum: asymmetric, no error on the query's side),
 * optionally with the float32 rows at hand to rescore the beam. A graph is built on
 * float32 rows; a view may search it over either. Merging builds one graph
 * from several, leaving deleted vectors out.
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
	int walk;            /* walk the graph whatever the count (tests, benches) */
} vx_filter;

/* Below this share of the vectors allowed, a filtered search scores the
 * allowed ones one by one instead of walking the graph: exact, and cheaper
 * than a walk that passes mostly vectors it may not return. It does so
 * too when the c allowed of n are fewer than sqrt(ef * 2m * n), what such
 * a walk scores (ef / (c / n) nodes of 2m links): measured, 10% of 100k
 * 384-d vectors is the break-even (746 QPS scoring them, 805 walking at
 * ef 40 with recall 0.965), 10% of 9,500 50-d GloVe vectors 6x faster
 * scored. */
#define VX_BRUTE_SHARE 0.02

typedef struct vx_hnsw vx_hnsw;

int vx_hnsw_new(vx_hnsw **out, uint32_t dim, const vx_params *p);
void vx_hnsw_free(vx_hnsw *h);
/* Add a vector (dim values, unit length expected; copied); its id is the
 * count before. An all-zero vector (a segment's chunk without one) is a
 * hole: it takes its id but is linked to nothing, so no search reaches it
 * (only a brute-force pass could score it: pass a filter without it). */
int vx_hnsw_add(vx_hnsw *h, const float *v);
/* n rows (row after row) added as vx_hnsw_add would add them one by one,
 * but in batches whose searches, choices of links and links back run on
 * up to `threads` threads (after the first VX_BATCH_FROM nodes, linked one
 * by one): a node links to what the graph held before its batch and to
 * its batch's earlier nodes. The graph is the same whatever the thread
 * count (not the one vx_hnsw_add builds: batches change what each node
 * saw). */
/* 16: on the 100k mixture, recall@10 at ef 40 as one by one (0.9923 and
 * 0.9890 for two seeds, both ways); batches of 64 gave 0.9857 and 0.9853 */
#define VX_BATCH 16u
#define VX_BATCH_FROM 1024u
#define VX_BUILD_MAX_THREADS 64u
int vx_hnsw_add_rows(vx_hnsw *h, const float *rows, uint32_t n, unsigned threads);
uint32_t vx_hnsw_count(const vx_hnsw *h);
/* The k best of the allowed vectors for q, best first, into out (room for
 * k); *n the number found. ef 0: the graph's ef_search. */
int vx_hnsw_search(const vx_hnsw *h, const float *q, uint32_t k, uint32_t ef,
                   const vx_filter *f, vx_hit *out, uint32_t *n);
/* The same, exact: every allowed vector scored. */
int vx_brute(const float *vecs, uint32_t count, uint32_t dim, const float *q, uint32_t k,
             const vx_filter *f, vx_hit *out, uint32_t *n);
/* The same over int8 rows (row i ~ offsets[i] + rows[i] * scales[i];
 * offsets NULL: 0), scored against the float query (em_dot_f32_i8 times
 * the scale, plus the offset times the query's sum): approximate only by
 * the rows' rounding. */
int vx_brute_i8(const int8_t *rows, const float *scales, const float *offsets, uint32_t count,
                uint32_t dim, const float *q, uint32_t k, const vx_filter *f, vx_hit *out,
                uint32_t *n);
/* The graph's float vectors (count * dim); for a view over int8 rows, its
 * rerank rows (NULL without). */
const float *vx_hnsw_vectors(const vx_hnsw *h);

/* ---- on disk (hnsw_io.c) ----------------------------------------------------
 *
 * vx_hnsw_write: the graph alone (links and levels, not the vectors, which
 * the segment keeps in its VECS section, row i for node i), little-endian,
 * into *out (fa_malloc'd, the caller fa_frees), *len bytes.
 *
 * vx_hnsw_view: a read-only graph over those bytes and n rows of dim floats
 * (vx_hnsw_view_i8: int8 rows, one scale per row and optionally one offset
 * (NULL: 0; row i ~ offsets[i] + rows[i] * scales[i]); with float rows in
 * rerank, too, the walk reads the int8 rows and the beam's ef survivors
 * are scored again on the floats: exact scores, float recall, while the
 * float pages touched are ef per query). Neither is copied
 * (except the graph's words when the bytes are not 4-byte aligned or the
 * host is big-endian): both must outlive the view. Everything a search
 * reads is checked once, in O(len): FATHOM_ECORRUPT naming `name` when the
 * bytes fail. vx_hnsw_search works on a view as on a built graph;
 * vx_hnsw_add refuses it (FATHOM_EINVAL); vx_hnsw_free frees what the view
 * allocated, never the bytes or the rows. Searches only read the graph (each
 * allocates its own beam), so any number may run at once on one graph while
 * nothing is added to it. */
int vx_hnsw_write(const vx_hnsw *h, unsigned char **out, size_t *len);
int vx_hnsw_view(vx_hnsw **out, const unsigned char *graph, size_t len, const float *vecs,
                 uint32_t n, uint32_t dim, const char *name);
int vx_hnsw_view_i8(vx_hnsw **out, const unsigned char *graph, size_t len, const int8_t *rows,
                    const float *scales, const float *offsets, const float *rerank, uint32_t n,
                    uint32_t dim, const char *name);
/* For comparisons (bench/vec): a view over int8 rows scores them with the
 * query quantised too (em_dot_i8, symmetric) when on, asymmetrically (the
 * default) when not. Call before the view is shared; no effect on a graph
 * that is not a view. */
void vx_hnsw_i8_symmetric(vx_hnsw *h, int on);

/* ---- merging (hnsw.c) -------------------------------------------------------
 *
 * One graph of the kept vectors of in[0], then of in[1], ... (keep[g] bit i:
 * node i of in[g] stays; keep NULL or keep[g] NULL: all stay), new ids in
 * that order, built with p. VX_MERGE_REUSE copies the links of the largest
 * input that lost no node (same m, float rows) and inserts the others into
 * it; VX_MERGE_REBUILD inserts every vector afresh; VX_MERGE_AUTO reuses
 * when it can (measured: half the time for 2 x 20k at the same recall). A
 * deleted node is never in the result: a graph that lost nodes is rebuilt,
 * not patched. int8 inputs are scaled back to floats. The vectors inserted
 * are linked as vx_hnsw_add_rows links them (batches searched on up to
 * `threads` threads): the result does not depend on the thread count. */
/* A merge input that is rows alone (a segment too small for a graph): n
 * nodes, no links, nothing copied (vecs must outlive it); vx_hnsw_search
 * finds nothing in it. Free with vx_hnsw_free. */
int vx_hnsw_rows(vx_hnsw **out, const float *vecs, uint32_t n, uint32_t dim);
enum { VX_MERGE_AUTO = 0, VX_MERGE_REUSE = 1, VX_MERGE_REBUILD = 2 };
int vx_hnsw_merge(vx_hnsw **out, const vx_hnsw *const *in, size_t nin,
                  const uint8_t *const *keep, const vx_params *p, int how, unsigned threads);

#endif /* FATHOM_VEC_H */
