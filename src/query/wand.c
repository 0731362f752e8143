/*
 * wand.c — retrieval with dynamic pruning over one segment, sharing the
 * top-k threshold with the segments before it.
 *
 * Ranked disjunction (no required term): block-max MaxScore (Turtle &
 * Flood 1995; block bounds as in Ding & Suel, SIGIR 2011). The terms are
 * ordered once by their whole-list bound. The lists with the smallest bounds
 * become non-essential while those bounds, summed with the bonus they could
 * earn, cannot beat the threshold: a chunk that holds only their terms
 * cannot enter the top k. Candidates are the docs of the essential lists,
 * in doc order. A candidate's score parts are exact from the start (its
 * field lengths are read once). The non-essential lists are probed, largest
 * bound first, only while the parts found so far plus the bounds of the
 * lists not yet probed can still beat the threshold. The positions for the
 * phrase and prefix bonuses are read last, only for a chunk that can still
 * enter (match.c).
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
	uint64_t pos;        /* seq positions of the terms in may */
} bound_sum;

static void add_block(const q_ctx *c, bound_sum *bs, q_cursor *qc)
{
	bs->ub += block_bound(c, qc);
	bs->may |= qc->bit;
	bs->pos |= qc->seq_pos;
	bs->title |= qc->bb_title_bit;
	bs->head |= qc->bb_head_bit;
}

static void add_list(bound_sum *bs, const q_cursor *qc)
{
	bs->ub += qc->ub;
	bs->may |= qc->bit;
	bs->pos |= qc->seq_pos;
	bs->title |= qc->title_bit;
	bs->head |= qc->head_bit;
}

static int sum_cannot_beat(const q_ctx *c, const bound_sum *bs, double theta)
{
	if (!q_cannot_beat(bs->ub, 1.0, theta))
		return 0; /* every bonus is >= 1: no need to work it out */
	return q_cannot_beat(bs->ub, q_bonus_bound_pos(c, bs->may, bs->title, bs->head, bs->pos),
	                     theta);
}

/* MaxScore's state for one segment: the scored cursors by ascending list
 * bound, with prefix sums of the bounds and of the masks q_bonus_bound
 * takes. s[0 .. ne) are the non-essential lists: a chunk holding none but
 * their terms cannot beat theta, so candidates come from s[ne .. n). */
typedef struct maxscore {
	q_cursor *s[Q_MAX_TERMS];
	bound_sum pre[Q_MAX_TERMS + 1];    /* pre[i]: the bounds and masks of s[0 .. i) */
	uint32_t n, ne;
	double theta;                      /* the threshold ne was set for */
} maxscore;

static void ms_init(const q_ctx *c, maxscore *m)
{
	m->n = c->nscore;
	for (uint32_t i = 0; i < m->n; i++) {
		/* insertion sort by (ub, term): a stable order */
		q_cursor *x = &c->cur[i];
		uint32_t j = i;
		while (j > 0 && (m->s[j - 1]->ub > x->ub ||
		                 (m->s[j - 1]->ub == x->ub && m->s[j - 1]->term > x->term))) {
			m->s[j] = m->s[j - 1];
			j--;
		}
		m->s[j] = x;
	}
	m->pre[0] = (bound_sum){ 0.0, 0, 0, 0, 0 };
	for (uint32_t i = 0; i < m->n; i++) {
		m->pre[i + 1] = m->pre[i];
		add_list(&m->pre[i + 1], m->s[i]);
	}
	m->ne = 0;
	m->theta = -HUGE_VAL;
}

/* Move lists into the non-essential set while the threshold allows: the
 * split changes only when theta rises. */
static void ms_split(const q_ctx *c, maxscore *m, double theta)
{
	m->theta = theta;
	while (m->ne < m->n && sum_cannot_beat(c, &m->pre[m->ne + 1], theta))
		m->ne++;
}

/* Note the term of qc present at d, with its score part. */
static double gather_part(q_ctx *c, const q_cursor *qc, const double *norm, bound_sum *got)
{
	uint32_t t = qc->term;
	q_gather(c, qc, &got->may, &got->title, &got->head);
	got->pos |= qc->seq_pos;
	c->part[t] = q_saturate(&c->sc, c->plan->terms[t].idf, q_tf_tilde_norm(&c->sc, c->tf[t], norm));
	return c->part[t];
}

/* Candidate d, which some essential list holds: score what the essential
 * lists say, then probe the non-essential lists, largest bound first, for
 * as long as d can still beat theta with the bounds of those not probed. */
static int ms_eval(q_ctx *c, const maxscore *m, uint32_t d, q_cursor *const *at, uint32_t na)
{
	const q_plan *p = c->plan;
	int rc = q_admit(c, d);
	if (rc <= 0)
		return rc;
	uint16_t field_len[FATHOM_NFIELDS];
	if ((rc = seg_chunk_field_len(c->seg, d, field_len)))
		return rc;
	double norm[FATHOM_NFIELDS];
	q_field_norms(&c->sc, field_len, norm);
	memset(c->present, 0, p->nterms);
	double theta = m->theta, part = 0.0;
	int prune = theta > -HUGE_VAL;
	bound_sum got = { 0.0, 0, 0, 0, 0 };
	for (uint32_t k = 0; k < na; k++)
		part += gather_part(c, at[k], norm, &got);
	for (uint32_t i = m->ne; i-- > 0;) {
		q_cursor *qc = m->s[i];
		const bound_sum *rest = &m->pre[i + 1];
		if (prune && q_cannot_beat(part + rest->ub, 1.0, theta) &&
		    q_cannot_beat(part + rest->ub,
		                           q_bonus_bound_pos(c, got.may | rest->may, got.title | rest->title,
		                                             got.head | rest->head, got.pos | rest->pos),
		                           theta))
			return 0;
		if ((rc = q_cursor_seek(qc, d)))
			return rc;
		if (qc->p.doc == d)
			part += gather_part(c, qc, norm, &got);
	}
	/* the cursors of terms only negated, for the match tree */
	for (uint32_t i = c->nscore; i < c->ncur; i++) {
		q_cursor *qc = &c->cur[i];
		if ((rc = q_cursor_seek(qc, d)))
			return rc;
		if (qc->p.doc == d)
			gather_part(c, qc, norm, &got);
	}
	/* the score as q_eval sums it: in plan order */
	double base = 0.0;
	for (uint32_t t = 0; t < p->nterms; t++)
		if (c->present[t])
			base += c->part[t];
	return q_eval_scored(c, d, prune, got.may, got.title, got.head, got.pos, base);
}

/* Backing off the block check where it does not pay (retrieve_disjunctive). */
#define Q_BLOCK_COLD 64
#define Q_BLOCK_EVERY 16

/* Ranked disjunction by block-max MaxScore (Turtle & Flood 1995; block
 * bounds after Ding & Suel 2011): candidates are the docs of the essential
 * lists in order; before anything is decoded for one, the block bounds of
 * the essential lists that hold it and the whole-list bounds of the others
 * are summed, and when that cannot beat theta, the essential lists jump
 * past the nearest block end. Every cursor only moves forward and none is
 * left stale. */
static int retrieve_disjunctive(q_ctx *c)
{
	maxscore m;
	uint32_t cold = 0, round = 0;
	int rc;
	ms_init(c, &m);
	for (;;) {
		double theta = q_topk_threshold(&c->top);
		if (theta != m.theta)
			ms_split(c, &m, theta);
		/* the candidate: the smallest doc of the essential lists, and the
		 * lists at it */
		q_cursor *at[Q_MAX_TERMS];
		uint32_t na = 0, d = IX_END;
		for (uint32_t i = m.ne; i < m.n; i++)
			d = FA_MIN(d, m.s[i]->p.doc);
		if (d == IX_END)
			return 0; /* no doc left in this segment can enter the top k */
		/* without branches: which list holds d is a coin toss */
		for (uint32_t i = m.ne; i < m.n; i++) {
			at[na] = m.s[i];
			na += m.s[i]->p.doc == d;
		}
		/* The block check costs about as much as a tenth of a candidate.
		 * Where the block bounds are close to the list bounds it almost
		 * never skips: after Q_BLOCK_COLD checks in a row that did not
		 * skip, only one round in Q_BLOCK_EVERY checks, until one skips.
		 * Skipping the check never changes the result, only the work. */
		round++;
		if (theta > -HUGE_VAL && (cold < Q_BLOCK_COLD || round % Q_BLOCK_EVERY == 0)) {
			/* [d, next): only the lists at d hold docs there, within
			 * the blocks they are in */
			uint32_t next = IX_END;
			for (uint32_t i = m.ne; i < m.n; i++) {
				uint32_t x = m.s[i]->p.doc;
				next = FA_MIN(next, x == d ? IX_END : x);
			}
			bound_sum bs = m.pre[m.ne];
			for (uint32_t k = 0; k < na; k++) {
				uint32_t bl = ix_post_block_last(&at[k]->p);
				add_block(c, &bs, at[k]);
				next = FA_MIN(next, bl >= IX_END - 1 ? IX_END : bl + 1);
			}
			if (sum_cannot_beat(c, &bs, theta)) {
				cold = 0;
				for (uint32_t k = 0; k < na; k++)
					if ((rc = ix_post_advance(&at[k]->p, next)))
						return rc;
				continue;
			}
			cold++;
		}
		if ((rc = ms_eval(c, &m, d, at, na)))
			return rc;
		for (uint32_t k = 0; k < na; k++)
			if ((rc = ix_post_next(&at[k]->p)))
				return rc;
	}
}

static int retrieve_conjunctive(q_ctx *c)
{
	const q_plan *pl = c->plan;
	q_cursor *req[Q_MAX_TERMS];
	uint32_t nreq = 0;
	bound_sum opt = { 0.0, 0, 0, 0, 0 };
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
