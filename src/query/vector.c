/*
 * vector.c — nearest neighbours of the query's embedding as a retrieval
 * source. Each segment's chunk vectors (the VECS section) are scored by
 * dot product with the query vector (cosine: both are unit vectors), under
 * the same filters and identifier pre-filters as the keyword source, which
 * are applied while scoring, never after: a filter that keeps 1% of the
 * chunks still returns the best k of that 1%.
 *
 * This is the exact path: every allowed vector is scored (em_dot, SIMD).
 * Segments made by another embedder (another fingerprint) or without
 * vectors are counted, and the receipt says so, not searched.
 */
#include <stdlib.h>

#include "embed/embed.h"
#include "query/query_int.h"

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

int q_vector_retrieve(q_vector *vs, fa_arena *work, ix_index *ix, q_plan *plan,
                      const q_filter *filter, const q_vquery *qv, uint32_t fetch,
                      q_cand_list *out)
{
	memset(vs, 0, sizeof *vs);
	vs->src.id = FATHOM_SOURCE_VECTOR;
	vs->src.snippet = q_snippet_opening;
	vs->src.ctx = vs;
	memset(out, 0, sizeof *out);
	out->src = &vs->src;
	if (!qv || !qv->v || fetch == 0)
		return 0;
	vhit *heap = fa_arena_alloc(work, (size_t)fetch * sizeof *heap);
	if (!heap)
		return fa_err(FATHOM_ENOMEM, "vector candidates");
	uint32_t n = 0;
	size_t nseg = ix_nsegments(ix);
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
		for (uint32_t c = 0; c < v.count; c++) {
			if (!(v.bits[c >> 3] & (1u << (c & 7))))
				continue;
			if (allowed && !(allowed[c >> 3] & (1u << (c & 7))))
				continue;
			if (seg_is_deleted(s, c))
				continue;
			vhit x = { em_dot(qv->v, v.rows + (size_t)c * v.dim, v.dim), (uint32_t)si, c };
			vs->scored++;
			if (!(x.score == x.score))
				return fa_err(FATHOM_ECORRUPT, "%s: chunk %u's vector is not finite",
				              seg_path(s), c);
			if (n < fetch) {
				heap[n] = x;
				sift_up(heap, n++);
			} else if (vbetter(&x, &heap[0])) {
				heap[0] = x;
				sift_down(heap, n, 0);
			}
		}
	}
	qsort(heap, n, sizeof *heap, cmp_vhit);
	for (uint32_t i = 0; i < n; i++) {
		int rc = q_cands_add(out, work, heap[i].seg, heap[i].chunk, heap[i].score, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

int q_vector_rescore(q_vector *vs, fa_arena *work, ix_index *ix, const q_vquery *qv,
                     const q_cand_list *kw, q_cand_list *out)
{
	memset(vs, 0, sizeof *vs);
	vs->src.id = FATHOM_SOURCE_VECTOR;
	vs->src.snippet = q_snippet_opening;
	vs->src.ctx = vs;
	memset(out, 0, sizeof *out);
	out->src = &vs->src;
	if (!qv || !qv->v || !kw->n)
		return 0;
	size_t nseg = ix_nsegments(ix);
	ix_vecs *vv = fa_arena_calloc(work, nseg ? nseg : 1, sizeof *vv);
	uint8_t *state = fa_arena_calloc(work, nseg ? nseg : 1, 1);   /* 1 usable, 2 not */
	vhit *h = fa_arena_alloc(work, kw->n * sizeof *h);
	if (!vv || !state || !h)
		return fa_err(FATHOM_ENOMEM, "vector rescoring");
	uint32_t n = 0;
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
		h[n++] = (vhit){ em_dot(qv->v, vv[si].rows + (size_t)c * qv->dim, qv->dim), si, c };
		vs->scored++;
	}
	qsort(h, n, sizeof *h, cmp_vhit);
	for (uint32_t i = 0; i < n; i++) {
		int rc = q_cands_add(out, work, h[i].seg, h[i].chunk, h[i].score, NULL);
		if (rc)
			return rc;
	}
	return 0;
}
