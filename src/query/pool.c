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

/* a candidate, and where it stands in the keyword list */
typedef struct icand {
	uint32_t seg, chunk;
	double score;          /* its keyword score; 0 when full text did not rank it */
	uint32_t kw_rank;      /* 1-based; UINT32_MAX: not ranked */
} icand;

static int by_kw_rank(const void *pa, const void *pb)
{
	const icand *a = pa, *b = pb;
	if (a->kw_rank != b->kw_rank)
		return a->kw_rank < b->kw_rank ? -1 : 1;
	if (a->seg != b->seg)
		return a->seg < b->seg ? -1 : 1;
	return (a->chunk > b->chunk) - (a->chunk < b->chunk);
}

/* The keyword rank of (seg, chunk) in kw, or UINT32_MAX. A linear scan:
 * the list holds at most the fetch depth. */
static uint32_t kw_rank_of(const q_cand_list *kw, uint32_t seg, uint32_t chunk, double *score)
{
	for (size_t i = 0; kw && i < kw->n; i++)
		if (kw->v[i].seg == seg && kw->v[i].chunk == chunk) {
			*score = kw->v[i].score;
			return (uint32_t)(i + 1);
		}
	*score = 0;
	return UINT32_MAX;
}

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
	/* every allowed chunk holding the identifiers, up to a bound: the
	 * keyword list's first, in its order, then the rest in index order */
	size_t cap = (size_t)fetch * 4 + (kw ? kw->n : 0), n = 0;
	icand *v = fa_arena_alloc(work, cap * sizeof *v);
	if (!v)
		return fa_err(FATHOM_ENOMEM, "identifier candidates");
	size_t nseg = ix_nsegments(ix);
	for (size_t si = 0; si < nseg && n < cap; si++) {
		ix_segment *s = ix_segment_at(ix, si);
		uint8_t *allowed = NULL;
		int rc;
		if ((rc = q_filter_bitmap(filter, work, s, &allowed)) ||
		    (rc = q_ident_bitmap(plan, work, s, &allowed, FATHOM_SOURCE_IDENT)))
			return rc;
		if (!allowed)
			continue;
		uint32_t nc = seg_nchunks(s);
		for (uint32_t c = 0; c < nc && n < cap; c++) {
			if (!(allowed[c >> 3] & (1u << (c & 7))) || seg_is_deleted(s, c))
				continue;
			icand *x = &v[n++];
			x->seg = (uint32_t)si;
			x->chunk = c;
			x->kw_rank = kw_rank_of(kw, x->seg, c, &x->score);
		}
	}
	qsort(v, n, sizeof *v, by_kw_rank);
	n = FA_MIN(n, (size_t)fetch);
	for (size_t i = 0; i < n; i++) {
		int rc = q_cands_add(out, work, v[i].seg, v[i].chunk, v[i].score, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

int q_grep_cands(fa_arena *work, ix_index *ix, q_plan *plan, const q_filter *filter,
                 q_grep_fn grep, void *grep_ctx, uint32_t fetch, q_cand_list *out)
{
	memset(out, 0, sizeof *out);
	out->src = &q_grep_source;
	if (!grep || fetch == 0)
		return 0;
	/* one grep per applied identifier, as typed (caseless, literal) */
	q_cand_list all;
	memset(&all, 0, sizeof all);
	uint32_t greps = 0;
	for (uint32_t i = 0; i < plan->nidents && greps < Q_POOL_MAX_GREPS; i++) {
		const q_ident *x = &plan->idents[i];
		if (!x->applied || x->len == 0)
			continue;
		q_cand_list one;
		memset(&one, 0, sizeof one);
		int rc = grep(grep_ctx, x->text, x->len, fetch, work, &one);
		if (rc)
			return rc;
		greps++;
		for (size_t k = 0; k < one.n; k++) {
			/* a chunk several identifiers' greps found: its lines add up,
			 * the first receipt stays */
			size_t j = 0;
			while (j < all.n && (all.v[j].seg != one.v[k].seg || all.v[j].chunk != one.v[k].chunk))
				j++;
			if (j < all.n) {
				all.v[j].score += one.v[k].score;
				continue;
			}
			if ((rc = q_cands_add(&all, work, one.v[k].seg, one.v[k].chunk, one.v[k].score,
			                      one.v[k].receipt)))
				return rc;
		}
	}
	/* the filters and identifier pre-filters, segment by segment */
	size_t nseg = ix_nsegments(ix);
	uint8_t **bits = fa_arena_calloc(work, nseg ? nseg : 1, sizeof *bits);
	uint8_t *done = fa_arena_calloc(work, nseg ? nseg : 1, 1);
	if (!bits || !done)
		return fa_err(FATHOM_ENOMEM, "grep candidates");
	size_t w = 0;
	for (size_t k = 0; k < all.n; k++) {
		uint32_t si = all.v[k].seg, c = all.v[k].chunk;
		if (si >= nseg)
			continue;
		ix_segment *s = ix_segment_at(ix, si);
		if (!done[si]) {
			int rc;
			if ((rc = q_filter_bitmap(filter, work, s, &bits[si])) ||
			    (rc = q_ident_bitmap(plan, work, s, &bits[si], FATHOM_SOURCE_GREP)))
				return rc;
			done[si] = 1;
		}
		if (c >= seg_nchunks(s) || seg_is_deleted(s, c) ||
		    (bits[si] && !(bits[si][c >> 3] & (1u << (c & 7)))))
			continue;
		all.v[w++] = all.v[k];
	}
	all.n = w;
	/* most matching lines first, then as grep found them */
	for (size_t k = 1; k < all.n; k++) {
		q_cand t = all.v[k];
		size_t j = k;
		while (j > 0 && all.v[j - 1].score < t.score) {
			all.v[j] = all.v[j - 1];
			j--;
		}
		all.v[j] = t;
	}
	all.n = FA_MIN(all.n, (size_t)fetch);
	all.src = &q_grep_source;
	*out = all;
	return 0;
}
