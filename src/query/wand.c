/*
 * wand.c — retrieval with dynamic pruning over one segment, sharing the
 * top-k threshold with the segments before it.
 *
 * Ranked disjunction (no required term): block-max WAND (Ding & Suel,
 * SIGIR 2011). Cursors sorted by doc; the pivot is the first cursor at which
 * the summed whole-list bounds could beat the threshold; the blocks holding
 * the pivot doc are then checked with their own, tighter bounds, moving only
 * the block pointers (ix_post_shallow), and when even those cannot beat the
 * threshold every cursor up to the pivot jumps past the nearest block end.
 *
 * Required terms: a conjunction led by the rarest required term. Before
 * the other required cursors decode anything, the bounds of the blocks that
 * could hold the lead's doc (plus the whole-list bounds of the optional
 * terms) are summed; if that sum cannot beat the threshold the conjunction
 * skips to the end of the nearest block.
 *
 * Pruning never changes the result: every bound is >= the score it bounds
 * (see score.c), multiplied by the largest bonus product the chunks it
 * covers can earn (q_bonus_bound) and by Q_BOUND_MARGIN,
 * and a chunk is skipped only when its bound is <= the threshold, where
 * q_topk_push would reject it anyway.
 */
#include "query/query_int.h"

/* The bound of the cursor's current block (cached per block), and the
 * fields its term may occupy there. */
static double block_bound(const q_ctx *c, q_cursor *qc)
{
	if (qc->bb_block != qc->p.block) {
		const ix_bound *b = ix_post_block_bound(&qc->p);
		qc->bb = q_term_bound(&c->sc, c->plan->terms[qc->term].idf, b);
		qc->bb_title_bit = b->max_tf[FATHOM_FIELD_TITLE] ? qc->bit : 0;
		qc->bb_head_bit = b->max_tf[FATHOM_FIELD_HEADINGS] ? qc->bit : 0;
		qc->bb_block = qc->p.block;
	}
	return qc->bb;
}

/* Sums of block bounds and the masks q_bonus_bound takes. */
typedef struct bound_sum {
	double ub;
	uint64_t may, title, head;
} bound_sum;

static void add_block(const q_ctx *c, bound_sum *bs, q_cursor *qc)
{
	bs->ub += block_bound(c, qc);
	bs->may |= qc->bit;
	bs->title |= qc->bb_title_bit;
	bs->head |= qc->bb_head_bit;
}

static void add_list(bound_sum *bs, const q_cursor *qc)
{
	bs->ub += qc->ub;
	bs->may |= qc->bit;
	bs->title |= qc->title_bit;
	bs->head |= qc->head_bit;
}

static int sum_cannot_beat(const q_ctx *c, const bound_sum *bs, double theta)
{
	return q_cannot_beat(bs->ub, q_bonus_bound(c, bs->may, bs->title, bs->head), theta);
}

/* Insertion sort by doc: between rounds only the cursors up to the pivot
 * move, so the array is nearly sorted. */
static void sort_by_doc(q_cursor **s, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		q_cursor *x = s[i];
		uint32_t xd = x->p.doc, j = i;
		while (j > 0 && s[j - 1]->p.doc > xd) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = x;
	}
}

/* Every branch of a round leaves the cursors it moved decoded (none stale),
 * so rounds start from p.doc. Skipping decodes the landing block at once:
 * measured, deferring it until a candidate needs the cursor cost more in
 * re-checked bounds than it saved in decoding. */
static int retrieve_disjunctive(q_ctx *c)
{
	q_cursor *s[Q_MAX_TERMS];
	uint32_t n = c->nscore;
	int rc;
	for (uint32_t i = 0; i < n; i++)
		s[i] = &c->cur[i];
	for (;;) {
		sort_by_doc(s, n);
		while (n > 0 && s[n - 1]->p.doc == IX_END)
			n--;
		if (n == 0)
			return 0;
		double theta = q_topk_threshold(&c->top);

		/* The pivot: the first cursor where the bounds add up. */
		double acc = 0.0;
		uint32_t p;
		for (p = 0; p < n; p++) {
			acc += s[p]->ub;
			if (!q_cannot_beat(acc, c->seg_bonus, theta))
				break;
		}
		if (p == n)
			return 0; /* no doc left in this segment can enter the top k */
		uint32_t d = s[p]->p.doc;
		while (p + 1 < n && s[p + 1]->p.doc == d)
			p++;

		if (theta > -HUGE_VAL) {
			bound_sum bs = { 0.0, 0, 0, 0 };
			uint32_t last = IX_END;
			for (uint32_t i = 0; i <= p; i++) {
				q_cursor *qc = s[i];
				uint32_t bl;
				if (qc->p.doc == d) {
					bl = ix_post_block_last(&qc->p);
				} else {
					bl = ix_post_shallow(&qc->p, d);
					if (qc->p.err)
						return qc->p.err;
					q_cursor_skip(qc, bl == IX_END ? IX_END : d);
					if (bl == IX_END)
						continue;
				}
				add_block(c, &bs, qc);
				last = FA_MIN(last, bl);
			}
			if (sum_cannot_beat(c, &bs, theta)) {
				/* No doc in [d, next) can beat theta: only cursors
				 * 0..p can hold one, within the blocks just checked. */
				uint32_t next = last >= IX_END - 1 ? IX_END : last + 1;
				if (p + 1 < n && s[p + 1]->p.doc < next)
					next = s[p + 1]->p.doc;
				for (uint32_t i = 0; i <= p; i++)
					if ((rc = q_cursor_seek(s[i], next)))
						return rc;
				continue;
			}
		}
		if (s[0]->p.doc == d && !s[0]->stale) {
			/* 0..p all at d (sorted, none shallowed when s[0] is at d) */
			if ((rc = q_eval(c, d, 1)))
				return rc;
			for (uint32_t i = 0; i <= p; i++)
				if ((rc = ix_post_next(&s[i]->p)))
					return rc;
		} else {
			for (uint32_t i = 0; i <= p; i++)
				if ((rc = q_cursor_seek(s[i], d)))
					return rc;
		}
	}
}

static int retrieve_conjunctive(q_ctx *c)
{
	const q_plan *pl = c->plan;
	q_cursor *req[Q_MAX_TERMS];
	uint32_t nreq = 0;
	bound_sum opt = { 0.0, 0, 0, 0 };
	int rc;
	for (uint32_t i = 0; i < c->nscore; i++) {
		q_cursor *qc = &c->cur[i];
		if (pl->terms[qc->term].required)
			req[nreq++] = qc;
		else
			add_list(&opt, qc);
	}
	if (nreq < pl->nrequired || nreq == 0)
		return 0; /* a required term is absent from this segment */
	/* Rarest first: it leads, the others only confirm. */
	for (uint32_t i = 1; i < nreq; i++) {
		q_cursor *x = req[i];
		uint32_t j = i;
		while (j > 0 && req[j - 1]->p.ti.df > x->p.ti.df) {
			req[j] = req[j - 1];
			j--;
		}
		req[j] = x;
	}
	q_cursor *lead = req[0];
	uint32_t d = 0;
	for (;;) {
		if (d == IX_END)
			return 0;
		if ((rc = q_cursor_seek(lead, d)))
			return rc;
		d = lead->p.doc;
		if (d == IX_END)
			return 0;
		double theta = q_topk_threshold(&c->top);
		if (theta > -HUGE_VAL) {
			bound_sum bs = opt;
			add_block(c, &bs, lead);
			uint32_t last = ix_post_block_last(&lead->p), jump = d;
			for (uint32_t i = 1; i < nreq && jump == d; i++) {
				q_cursor *qc = req[i];
				uint32_t bl;
				if (!qc->stale && qc->p.doc >= d) {
					if (qc->p.doc > d) {
						jump = qc->p.doc; /* d lacks this term */
						continue;
					}
					bl = ix_post_block_last(&qc->p);
				} else {
					bl = ix_post_shallow(&qc->p, d);
					if (qc->p.err)
						return qc->p.err;
					if (bl == IX_END)
						return 0;
					q_cursor_skip(qc, d);
				}
				add_block(c, &bs, qc);
				last = FA_MIN(last, bl);
			}
			if (jump != d) {
				d = jump;
				continue;
			}
			if (sum_cannot_beat(c, &bs, theta)) {
				d = last >= IX_END - 1 ? IX_END : last + 1;
				continue;
			}
		}
		uint32_t i;
		for (i = 1; i < nreq; i++) {
			if ((rc = q_cursor_seek(req[i], d)))
				return rc;
			if (req[i]->p.doc != d)
				break;
		}
		if (i < nreq) {
			d = req[i]->p.doc;
			if (d == IX_END)
				return 0;
			continue;
		}
		if ((rc = q_eval(c, d, 1)))
			return rc;
		d++;
	}
}

int q_retrieve_pruned(q_ctx *c)
{
	if (c->plan->nrequired > 0)
		return retrieve_conjunctive(c);
	return retrieve_disjunctive(c);
}
