/*
 * pool.c — the late-fusion candidate pool's other sources (issue 15): the
 * chunks holding the query's exact identifiers, and grep's chunks whose
 * lines hold an identifier as typed. The route stage asks for them on an
 * identifier lookup; with full text and vectors they meet in one pool
 * (fuse.c), each chunk once, and the receipt names every source that
 * found it. The pool is what a reranker reads (rerank.c); until a
 * cross-encoder comes, it is fused by reciprocal rank.
 *
 * Both lists pass the same filters and identifier pre-filters as full
 * text and vectors (q_filter_bitmap, q_ident_bitmap): a source never
 * brings in a chunk another source could not have returned. Grep itself
 * lives in src/grep; the API layer hands it in as a function (q_hybrid),
 * so the query module does not depend on it.
 */
#include <stdlib.h>

#include "query/query_int.h"

#define Q_POOL_MAX_GREPS 4    /* identifiers grepped for, at most */

static const q_source ident_source = { FATHOM_SOURCE_IDENT, NULL, q_snippet_opening, NULL };

int q_ident_cands(fa_arena *work, ix_index *ix, q_plan *plan, const q_filter *filter,
                  const q_cand_list *kw, uint32_t fetch, q_cand_list *out)
{
	memset(out, 0, sizeof *out);
	out->src = &ident_source;
	uint32_t applied = 0;
	for (uint32_t i = 0; i < plan->nidents; i++)
		applied += plan->idents[i].applied != 0;
	if (!applied || fetch == 0)
		return 0;
	/* Full text's chunks all hold the identifiers (it searched under the
	 * same pre-filter): they come first, in its order and with its
	 * scores; then the other chunks holding them, in index order, at 0. */
	size_t nseg = ix_nsegments(ix);
	uint8_t **in_kw = fa_arena_calloc(work, nseg ? nseg : 1, sizeof *in_kw);
	if (!in_kw)
		return fa_err(FATHOM_ENOMEM, "identifier candidates");
	for (size_t i = 0; kw && i < kw->n && out->n < fetch; i++) {
		const q_cand *c = &kw->v[i];
		if (c->seg >= nseg)
			continue;
		if (!in_kw[c->seg] &&
		    !(in_kw[c->seg] = fa_arena_calloc(work, seg_nchunks(ix_segment_at(ix, c->seg)) / 8 + 1,
		                                      1)))
			return fa_err(FATHOM_ENOMEM, "identifier candidates");
		in_kw[c->seg][c->chunk >> 3] |= (uint8_t)(1u << (c->chunk & 7));
		int rc = q_cands_add(out, work, c->seg, c->chunk, c->score, NULL);
		if (rc)
			return rc;
	}
	for (size_t si = 0; si < nseg && out->n < fetch; si++) {
		ix_segment *s = ix_segment_at(ix, si);
		uint8_t *allowed = NULL;
		int rc;
		if ((rc = q_filter_bitmap(filter, work, s, &allowed)) ||
		    (rc = q_ident_bitmap(plan, work, s, &allowed, FATHOM_SOURCE_IDENT)))
			return rc;
		if (!allowed)
			continue;
		uint32_t nc = seg_nchunks(s);
		for (uint32_t c = 0; c < nc && out->n < fetch; c++) {
			uint8_t bit = (uint8_t)(1u << (c & 7));
			if (!(allowed[c >> 3] & bit) || (in_kw[si] && (in_kw[si][c >> 3] & bit)) ||
			    seg_is_deleted(s, c))
				continue;
			if ((rc = q_cands_add(out, work, (uint32_t)si, c, 0.0, NULL)))
				return rc;
		}
	}
	return 0;
}

/* a grep candidate and the place grep found it in (first grep first) */
typedef struct gcand {
	q_cand c;
	uint32_t order;
} gcand;

static int by_chunk_order(const void *pa, const void *pb)
{
	const gcand *a = pa, *b = pb;
	if (a->c.seg != b->c.seg)
		return a->c.seg < b->c.seg ? -1 : 1;
	if (a->c.chunk != b->c.chunk)
		return a->c.chunk < b->c.chunk ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

static int by_lines_order(const void *pa, const void *pb)
{
	const gcand *a = pa, *b = pb;
	if (a->c.score != b->c.score)
		return a->c.score > b->c.score ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

int q_grep_cands(fa_arena *work, ix_index *ix, q_plan *plan, const q_filter *filter,
                 q_grep_fn grep, void *grep_ctx, uint32_t fetch, q_cand_list *out)
{
	memset(out, 0, sizeof *out);
	out->src = &q_grep_source;
	if (!grep || fetch == 0)
		return 0;
	/* one grep per applied identifier, as typed (caseless, literal) */
	q_cand_list one[Q_POOL_MAX_GREPS];
	uint32_t greps = 0;
	size_t total = 0;
	for (uint32_t i = 0; i < plan->nidents && greps < Q_POOL_MAX_GREPS; i++) {
		const q_ident *x = &plan->idents[i];
		if (!x->applied || x->len == 0)
			continue;
		memset(&one[greps], 0, sizeof one[greps]);
		int rc = grep(grep_ctx, x->text, x->len, fetch, work, &one[greps]);
		if (rc)
			return rc;
		total += one[greps++].n;
	}
	gcand *v = fa_arena_alloc(work, (total ? total : 1) * sizeof *v);
	if (!v)
		return fa_err(FATHOM_ENOMEM, "grep candidates");
	size_t n = 0;
	for (uint32_t g = 0; g < greps; g++)
		for (size_t k = 0; k < one[g].n; k++, n++)
			v[n] = (gcand){ one[g].v[k], (uint32_t)n };
	/* a chunk several greps found: its lines add up, the first receipt
	 * stays; then the filters and identifier pre-filters, segment by
	 * segment (the chunks are in segment order now) */
	qsort(v, n, sizeof *v, by_chunk_order);
	size_t nseg = ix_nsegments(ix), w = 0;
	uint8_t *bits = NULL;
	uint32_t bits_seg = UINT32_MAX;
	for (size_t k = 0; k < n; k++) {
		if (w && v[w - 1].c.seg == v[k].c.seg && v[w - 1].c.chunk == v[k].c.chunk) {
			v[w - 1].c.score += v[k].c.score;
			continue;
		}
		uint32_t si = v[k].c.seg, c = v[k].c.chunk;
		if (si >= nseg)
			continue;
		ix_segment *s = ix_segment_at(ix, si);
		if (si != bits_seg) {
			int rc;
			bits = NULL;
			bits_seg = si;
			if ((rc = q_filter_bitmap(filter, work, s, &bits)) ||
			    (rc = q_ident_bitmap(plan, work, s, &bits, FATHOM_SOURCE_GREP)))
				return rc;
		}
		if (c >= seg_nchunks(s) || seg_is_deleted(s, c) ||
		    (bits && !(bits[c >> 3] & (1u << (c & 7)))))
			continue;
		v[w++] = v[k];
	}
	/* most matching lines first, then as grep found them */
	qsort(v, w, sizeof *v, by_lines_order);
	for (size_t k = 0; k < w && k < fetch; k++) {
		int rc = q_cands_add(out, work, v[k].c.seg, v[k].c.chunk, v[k].c.score, v[k].c.receipt);
		if (rc)
			return rc;
	}
	return 0;
}
