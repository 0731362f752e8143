/*
 * vector.c — nearest neighbours of the query's embedding as a retrieval
 * source. Each segment's chunk vectors (the VECS section) are scored by
 * dot product with the query vector (cosine: both are unit vectors), under
 * the same filters and identifier pre-filters as the keyword source, which
 * are applied while scoring, never after: a filter that keeps 1% of the
 * chunks still returns the best k of that 1%.
 *
 * A segment with an HNSW graph (docs/FORMAT.md 5.13; segments of at least
 * IX_HNSW_MIN_VECTORS vectors have one) is searched over it: the chunks
 * the filters allow, that have a vector and are not deleted, are a bitmap
 * the walk consults before it lets a node into its results (never to decide
 * where to walk), with a beam of max(the graph's ef_search, fetch); when
 * they are under VX_BRUTE_SHARE of the graph, vx_hnsw_search scores just
 * them, exactly. Other segments take the exact path: every allowed vector
 * scored (ix_vecs_score: em_dot on float32 rows; on int8 rows the float
 * query against the int8 values times the row's scale, em_dot_f32_i8, plus
 * the row's offset times the query's sum, the query never quantised). A
 * score that is not finite (a damaged row, scale or offset) is
 * FATHOM_ECORRUPT naming the segment. FATHOM_VECTOR_EXACT in the
 * environment forces the exact path everywhere (tests and evaluations
 * compare the two). Segments made by another embedder (another
 * fingerprint) or without vectors are counted, and the receipt says so,
 * not searched.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "query/query_int.h"
#include "vec/vec.h"

typedef struct vhit {
	float score;
	uint32_t seg, chunk;
} vhit;

/* "better": higher score, then earlier segment, then lower chunk */
static inline int vbetter(const vhit *a, const vhit *b)
{
	if (a->score != b->score)
		return a->score > b->score;
	if (a->seg != b->seg)
		return a->seg < b->seg;
	return a->chunk < b->chunk;
}

/* a min-heap of the k best: the worst on top */
static void sift_down(vhit *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, w = i;
		if (l < n && vbetter(&h[w], &h[l]))
			w = l;
		if (r < n && vbetter(&h[w], &h[r]))
			w = r;
		if (w == i)
			return;
		vhit t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

static void sift_up(vhit *h, uint32_t i)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!vbetter(&h[p], &h[i]))
			return;
		vhit t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

static int cmp_vhit(const void *pa, const void *pb)
{
	const vhit *a = pa, *b = pb;
	return vbetter(a, b) ? -1 : vbetter(b, a) ? 1 : 0;
}

int q_snippet_opening(const q_source *self, const q_cand *c, const char *text, size_t len,
                          uint32_t target, uint32_t line0, fathom_hit *h, fathom_results *r)
{
	(void)self;
	(void)c;
	(void)line0;
	/* the chunk's opening: the vector source matched its meaning, not
	 * words that could be highlighted */
	size_t n = len < target ? len : text_utf8_floor(text, len, target);
	char *s = fa_arena_alloc(q_results_arena(r), n + 1);
	if (!s)
		return fa_err(FATHOM_ENOMEM, "snippet");
	for (size_t i = 0; i < n; i++)
		s[i] = text[i] == '\n' || text[i] == '\r' || text[i] == '\t' ? ' ' : text[i];
	s[n] = '\0';
	h->snippet = s;
	return 0;
}

/* The vector source, with an empty candidate list of its own. */
static void source_init(q_vector *vs, q_cand_list *out)
{
	memset(vs, 0, sizeof *vs);
	vs->src.id = FATHOM_SOURCE_VECTOR;
	vs->src.snippet = q_snippet_opening;
	vs->src.ctx = vs;
	memset(out, 0, sizeof *out);
	out->src = &vs->src;
}

/* The n hits of h, best first, as the list's candidates. */
static int emit_sorted(q_cand_list *out, fa_arena *work, vhit *h, uint32_t n)
{
	qsort(h, n, sizeof *h, cmp_vhit);
	for (uint32_t i = 0; i < n; i++) {
		int rc = q_cands_add(out, work, h[i].seg, h[i].chunk, h[i].score, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

static int exact_forced(void)
{
	const char *e = getenv("FATHOM_VECTOR_EXACT");
	return e && *e && strcmp(e, "0") != 0;
}

/* Keep x if it is among the fetch best so far. */
static void heap_offer(vhit *heap, uint32_t *n, uint32_t fetch, vhit x)
{
	if (*n < fetch) {
		heap[*n] = x;
		sift_up(heap, (*n)++);
	} else if (vbetter(&x, &heap[0])) {
		heap[0] = x;
		sift_down(heap, *n, 0);
	}
}

/* Segment si through its graph: the allowed chunks (allowed NULL: all)
 * that have a vector and are not deleted, as the walk's filter. */
static int graph_segment(q_vector *vs, fa_arena *work, const ix_segment *s, uint32_t si,
                         const vx_hnsw *g, const ix_vecs *v, const uint8_t *allowed,
                         const q_vquery *qv, uint32_t fetch, uint32_t ef, vhit *heap,
                         uint32_t *n)
{
	size_t nb = ((size_t)v->count + 7) / 8;
	uint8_t *bits = fa_arena_alloc(work, nb ? nb : 1);
	vx_hit *hits = fa_arena_alloc(work, (size_t)fetch * sizeof *hits);
	if (!bits || !hits)
		return fa_err(FATHOM_ENOMEM, "vector candidates");
	const uint8_t *del = seg_deleted_chunks(s);
	uint64_t count = 0;
	for (size_t i = 0; i < nb; i++) {
		uint8_t b = v->bits[i];
		if (allowed)
			b &= allowed[i];
		if (del)
			b &= (uint8_t)~del[i];
		bits[i] = b;
		count += (uint64_t)__builtin_popcount(b);
	}
	if (count == 0)
		return 0;
	vx_filter f = { bits, count, 0 };
	uint32_t nh;
	/* the beam: hnsw.ef-search, else the graph's own; at least fetch */
	int rc = vx_hnsw_search(g, qv->v, fetch, ef, &f, hits, &nh);
	if (rc)
		return rc;
	vs->graph_segments++;
	for (uint32_t i = 0; i < nh; i++) {
		if (!isfinite(hits[i].score))
			return fa_err(FATHOM_ECORRUPT, "%s: chunk %u's vector is not finite", seg_path(s),
			              hits[i].id);
		heap_offer(heap, n, fetch, (vhit){ hits[i].score, si, hits[i].id });
	}
	return 0;
}

int q_vector_retrieve(q_vector *vs, fa_arena *work, ix_index *ix, q_plan *plan,
                      const q_filter *filter, const q_vquery *qv, uint32_t fetch,
                      q_cand_list *out)
{
	source_init(vs, out);
	if (!qv || !qv->v || fetch == 0)
		return 0;
	vhit *heap = fa_arena_alloc(work, (size_t)fetch * sizeof *heap);
	if (!heap)
		return fa_err(FATHOM_ENOMEM, "vector candidates");
	uint32_t n = 0;
	size_t nseg = ix_nsegments(ix);
	float qsum = em_sum(qv->v, qv->dim);   /* for int8 rows' offsets */
	int exact = exact_forced() || fetch > VX_MAX_K;
	for (size_t si = 0; si < nseg; si++) {
		ix_segment *s = ix_segment_at(ix, si);
		ix_vecs v;
		int rc = seg_vectors(s, &v);
		if (rc == FATHOM_ENOTFOUND) {
			fa_err_clear();
			vs->chunks_without += seg_nchunks(s);
			continue;
		}
		if (rc)
			return rc;
		if (v.dim != qv->dim || (qv->fp && v.fp != qv->fp)) {
			vs->chunks_other += seg_nchunks(s);
			continue;
		}
		vs->chunks_without += v.count - v.present;
		uint8_t *allowed = NULL;
		if ((rc = q_filter_bitmap(filter, work, s, &allowed)) ||
		    (rc = q_ident_bitmap(plan, work, s, &allowed, FATHOM_SOURCE_VECTOR)))
			return rc;
		const vx_hnsw *g = NULL;
		if (!exact && (rc = seg_graph(s, &g)) == FATHOM_ENOTFOUND)
			fa_err_clear();
		else if (rc)
			return rc;
		if (g) {
			if ((rc = graph_segment(vs, work, s, (uint32_t)si, g, &v, allowed, qv, fetch,
			                        ix_graph_opts_of(ix)->ef_search, heap, &n)))
				return rc;
			continue;
		}
		for (uint32_t c = 0; c < v.count; c++) {
			if (!(v.bits[c >> 3] & (1u << (c & 7))))
				continue;
			if (allowed && !(allowed[c >> 3] & (1u << (c & 7))))
				continue;
			if (seg_is_deleted(s, c))
				continue;
			vhit x = { ix_vecs_score(&v, qv->v, qsum, c), (uint32_t)si, c };
			vs->scored++;
			if (!isfinite(x.score))
				return fa_err(FATHOM_ECORRUPT, "%s: chunk %u's vector is not finite",
				              seg_path(s), c);
			heap_offer(heap, &n, fetch, x);
		}
	}
	return emit_sorted(out, work, heap, n);
}

int q_vector_rescore(q_vector *vs, fa_arena *work, ix_index *ix, const q_vquery *qv,
                     const q_cand_list *kw, q_cand_list *out)
{
	source_init(vs, out);
	if (!qv || !qv->v || !kw->n)
		return 0;
	size_t nseg = ix_nsegments(ix);
	ix_vecs *vv = fa_arena_calloc(work, nseg ? nseg : 1, sizeof *vv);
	uint8_t *state = fa_arena_calloc(work, nseg ? nseg : 1, 1);   /* 1 usable, 2 not */
	vhit *h = fa_arena_alloc(work, kw->n * sizeof *h);
	if (!vv || !state || !h)
		return fa_err(FATHOM_ENOMEM, "vector rescoring");
	uint32_t n = 0;
	float qsum = em_sum(qv->v, qv->dim);
	for (size_t i = 0; i < kw->n; i++) {
		uint32_t si = kw->v[i].seg, c = kw->v[i].chunk;
		if (si >= nseg)
			continue;
		if (!state[si]) {
			int rc = seg_vectors(ix_segment_at(ix, si), &vv[si]);
			if (rc == FATHOM_ENOTFOUND)
				fa_err_clear();
			else if (rc)
				return rc;
			state[si] = !rc && vv[si].dim == qv->dim && (!qv->fp || vv[si].fp == qv->fp) ? 1
			                                                                               : 2;
		}
		if (state[si] != 1 || c >= vv[si].count || !(vv[si].bits[c >> 3] & (1u << (c & 7)))) {
			vs->chunks_without++;
			continue;
		}
		h[n] = (vhit){ ix_vecs_score(&vv[si], qv->v, qsum, c), si, c };
		if (!isfinite(h[n].score))
			return fa_err(FATHOM_ECORRUPT, "%s: chunk %u's vector is not finite",
			              seg_path(ix_segment_at(ix, si)), c);
		n++;
		vs->scored++;
	}
	return emit_sorted(out, work, h, n);
}
