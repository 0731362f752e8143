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

/* ---- term at a time, for small segments -------------------------------------- */

uint32_t q_taat_max_chunks = 1u << 14;

/* The relative margin between the sums of the first pass (reciprocal norms,
 * another rounding) and the exact score parts: far above any rounding
 * difference, far below any difference a bound could use. */
#define Q_TAAT_MARGIN 1e-6

/* A list not read is walked whole, not skipped through, when the chunks
 * left are at least its length over this: they then sit in most of its
 * blocks, which skipping decodes anyway, and a skip (about 40 cycles)
 * costs what walking 8 postings does. 2, 4, 8 and 16 measured within 3%
 * of each other on SciFact and CoSQA. */
#define Q_TAAT_WALK 8

static int taat_alloc(q_ctx *c, uint32_t n)
{
	if (c->taat_cap >= n)
		return 0;
	if (!c->work)
		return fa_err(FATHOM_EINVAL, "term-at-a-time scratch");
	c->taat_acc = fa_arena_alloc(c->work, (size_t)n * sizeof *c->taat_acc);
	c->taat_may = fa_arena_alloc(c->work, (size_t)n * sizeof *c->taat_may);
	c->taat_docs = fa_arena_alloc(c->work, (size_t)n * sizeof *c->taat_docs);
	c->taat_pos = fa_arena_alloc(c->work, (size_t)n * sizeof *c->taat_pos);
	if (!c->taat_acc || !c->taat_may || !c->taat_docs || !c->taat_pos)
		return fa_err(FATHOM_ENOMEM, "term-at-a-time scratch");
	c->taat_cap = n;
	return 0;
}

/* Insert x into the min-heap h of the k largest values seen (n of them). */
static void lb_push(double *h, uint32_t *n, uint32_t k, double x)
{
	uint32_t i;
	if (*n < k) {
		i = (*n)++;
		while (i > 0 && h[(i - 1) / 2] > x) {
			h[i] = h[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		h[i] = x;
		return;
	}
	if (!(x > h[0]))
		return;
	i = 0;
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		double v = x;
		if (l < k && h[l] < v)
			m = l, v = h[l];
		if (l + 1 < k && h[l + 1] < v)
			m = l + 1;
		if (m == i)
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

/* The k-th largest lower bound of a live, admitted chunk's score among n
 * chunks (-inf with fewer): the top k will reach it. A chunk's final score
 * is at least its summed parts so far (less the margin), times the
 * smallest coordination share its words so far allow, times the smallest
 * phrase and prefix shares. The chunks' sums and masks are acc[idx[j]] and
 * may[idx[j]], or acc[j] and may[j] without idx. */
static double taat_reach(const q_ctx *c, const double *acc, const uint64_t *may,
                         const uint32_t *idx, uint32_t n, const double *lo_coord,
                         double lo_share, double *h)
{
	uint32_t k = c->top.k, nh = 0;
	if (k == 0)
		return -HUGE_VAL;
	/* the largest factor a lower bound takes: a chunk whose sum times it
	 * cannot pass the k-th lower bound so far is not worked out */
	double hi = 0.0;
	for (uint32_t j = 0; j <= Q_MAX_TERMS; j++)
		hi = FA_MAX(hi, lo_coord[j]);
	hi *= FA_MAX(lo_share, 1.0);
	for (uint32_t j = 0; j < n; j++) {
		uint32_t d = idx ? idx[j] : j;
		if (nh == k && !(acc[d] * hi > h[0]))
			continue;
		double lb = acc[d] * (1.0 - Q_TAAT_MARGIN) *
		            lo_coord[q_popcount(may[d] & c->seq_mask)] * lo_share * (1.0 - Q_TAAT_MARGIN);
		if (nh < k || lb > h[0])
			lb_push(h, &nh, k, lb);
	}
	return nh == k ? h[0] : -HUGE_VAL;
}

/* Do k of the chunks docs[0 .. nt) have lower bounds (taat_reach's)
 * above x, so that x < reach? Stops at the k-th. */
static int taat_k_above(const q_ctx *c, const double *acc, const uint64_t *may,
                        const uint32_t *docs, uint32_t nt, const double *lo_coord,
                        double lo_share, double x)
{
	uint32_t k = c->top.k, n = 0;
	if (k == 0)
		return 0;
	double hi = 0.0;
	for (uint32_t j = 0; j <= Q_MAX_TERMS; j++)
		hi = FA_MAX(hi, lo_coord[j]);
	hi *= FA_MAX(lo_share, 1.0);
	for (uint32_t j = 0; j < nt; j++) {
		uint32_t d = docs[j];
		if (!(acc[d] * hi > x))
			continue;
		double lb = acc[d] * (1.0 - Q_TAAT_MARGIN) *
		            lo_coord[q_popcount(may[d] & c->seq_mask)] * lo_share * (1.0 - Q_TAAT_MARGIN);
		if (lb > x && ++n == k)
			return 1;
	}
	return 0;
}

/* Can no chunk whose parts are bounded by ub, with the bonus masks of bs,
 * reach `reach` (a score k chunks reach) or beat theta? */
static int taat_out(const q_ctx *c, double ub, const bound_sum *bs, double reach, double theta)
{
	double bonus = q_bonus_bound_pos(c, bs->may, bs->title, bs->head, bs->pos);
	return ub * (1.0 + Q_TAAT_MARGIN) * bonus * Q_BOUND_MARGIN < reach ||
	       q_cannot_beat(ub * (1.0 + Q_TAAT_MARGIN), bonus, theta);
}

#define Q_TAAT_DEAD UINT64_MAX   /* taat_may of a chunk deleted or filtered out */

/* The chunks met and still in, in doc order, after the first pass: their
 * sums, masks and seq places side by side (in the first pass's arrays,
 * indexed by chunk until then), so the passes over them read memory in
 * order. */
typedef struct taat_live {
	uint32_t *doc;
	double *acc;
	uint64_t *may, *pos;
	uint32_t n;
} taat_live;

/* Can chunk j of lv, with the lists s[0 .. e) not read for it, not enter? */
static int taat_drop(const q_ctx *c, const maxscore *m, uint32_t e, const taat_live *lv,
                     uint32_t j, double reach)
{
	uint64_t md = lv->may[j];
	bound_sum bs = m->pre[e];
	bs.ub += lv->acc[j];
	/* every bonus is >= 1, and at most seg_bonus: most chunks are settled
	 * without working the chunk's bonus bound out */
	double theta = q_topk_threshold(&c->top), ub = bs.ub * (1.0 + Q_TAAT_MARGIN);
	if (ub * c->seg_bonus * Q_BOUND_MARGIN < reach || q_cannot_beat(ub, c->seg_bonus, theta))
		return 1;
	if (!(ub * Q_BOUND_MARGIN < reach) && !q_cannot_beat(ub, 1.0, theta))
		return 0;
	bs.may |= md;
	bs.title |= md & m->pre[m->n].title;
	bs.head |= md & m->pre[m->n].head;
	bs.pos |= lv->pos[j];
	return taat_out(c, bs.ub, &bs, reach, theta);
}

/* Score chunk j of lv exactly (ms_eval, every list it holds and every list
 * not read), unless it can no longer enter. The lists m->s[i] with bit i
 * of *rewind set start over first (once, for the second sweep). */
static int taat_exact(q_ctx *c, maxscore *m, uint32_t e, const taat_live *lv, uint32_t j,
                      double reach, uint64_t *rewind)
{
	uint32_t d = lv->doc[j];
	int rc;
	if (taat_drop(c, m, e, lv, j, reach))
		return 0;
	q_cursor *at[Q_MAX_TERMS];
	uint32_t na = 0;
	for (uint32_t i = 0; i < m->n; i++) {
		q_cursor *qc = m->s[i];
		if (i >= e && !(lv->may[j] & qc->bit))
			continue;
		if (*rewind >> i & 1) {
			ix_term_info ti = qc->p.ti;
			if ((rc = ix_post_open(&qc->p, c->seg, &ti)))
				return rc;
			qc->bb_block = UINT32_MAX;
			qc->stale = 0;
			*rewind &= ~(1ull << i);
		}
		if ((rc = q_cursor_seek(qc, d)))
			return rc;
		if (qc->p.doc == d)
			at[na++] = qc;
		else if (i >= e)
			return fa_err(FATHOM_ECORRUPT, "a posting list reads differently twice");
	}
	m->theta = q_topk_threshold(&c->top);
	return ms_eval(c, m, d, at, na);
}

/* w_f / norm_f of every chunk's fields, the scorer's weights, b and
 * average lengths being the key: worked out once per segment and key (the
 * divisions cost more than the first pass's other work on a chunk) and
 * kept with the segment (seg_query_cache). Single precision: its relative
 * error (2^-24) is far inside Q_TAAT_MARGIN, and the exact pass does not
 * use it. */
typedef struct taat_norms {
	double key[2 * FATHOM_NFIELDS + 1];
	uint32_t n;
	float rn[][FATHOM_NFIELDS];
} taat_norms;

static int taat_norms_get(q_ctx *c, uint32_t n, const float (**out)[FATHOM_NFIELDS])
{
	double key[2 * FATHOM_NFIELDS + 1];
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		key[f] = c->sc.w[f];
		key[FATHOM_NFIELDS + f] = c->sc.avg[f];
	}
	key[2 * FATHOM_NFIELDS] = c->sc.b;
	void **slot = seg_query_cache(c->seg);
	taat_norms *tn = *slot;
	if (!tn || tn->n != n || memcmp(tn->key, key, sizeof key) != 0) {
		const uint16_t (*lens)[FATHOM_NFIELDS];
		int rc = seg_field_lens(c->seg, &lens);
		if (rc)
			return rc;
		fa_free(tn);
		*slot = tn = fa_malloc(sizeof *tn + (size_t)n * sizeof tn->rn[0]);
		if (!tn)
			return fa_err(FATHOM_ENOMEM, "field norms of %u chunks", n);
		memcpy(tn->key, key, sizeof key);
		tn->n = n;
		/* a field no chunk uses (average length 0) has no tf to weigh */
		for (uint32_t d = 0; d < n; d++)
			for (int f = 0; f < FATHOM_NFIELDS; f++) {
				double norm = q_field_norm(&c->sc, f, (double)lens[d][f]);
				tn->rn[d][f] = c->sc.avg[f] > 0.0 && norm > 0.0 ?
				               (float)(c->sc.w[f] / norm) : 0.0f;
			}
	}
	*out = (const float (*)[FATHOM_NFIELDS])tn->rn;
	return 0;
}

/* The score part of posting i of r's decoded block, from the chunk's rn:
 * the first pass's sum (within Q_TAAT_MARGIN of the exact part). */
static inline double taat_part(const q_ctx *c, const ix_postings *r, uint32_t i, unsigned fm,
                               double idf, const float rn[FATHOM_NFIELDS])
{
	double x = 0.0;
	for (unsigned b = fm; b; b &= b - 1) {
		unsigned f = (unsigned)__builtin_ctz(b);
		x += (double)r->tf[f][i] * (double)rn[f];
	}
	return q_saturate(&c->sc, idf, x);
}

/* A plain ranked disjunction over a small segment, term at a time:
 * 1. the scored lists are read whole, largest bound first, a block at a
 *    time; each posting's score part (with w_f / norm_f of the chunk's
 *    fields, worked out when it is first met) is added into a dense
 *    per-chunk sum, and the term into the chunk's mask;
 * 2. after each list, the k-th largest lower bound of the chunks met so far
 *    (taat_reach) is a score the top k will reach. Once the lists not yet
 *    read, bounds summed with the largest bonus their terms allow, cannot
 *    reach it, they are not read: a chunk that only they hold cannot enter;
 * 3. the lists not read are read for the chunks met only, largest bound
 *    first, dropping after each the chunks that can no longer enter;
 * 4. the chunks left, whose upper bound (their sum, the margin, the largest
 *    bonus) reaches it, are scored exactly, in doc order, through ms_eval
 *    with the lists of the terms they hold (their masks are complete now):
 *    the same parts summed in plan order, the same bonuses, so the same
 *    score bit for bit as MaxScore and the exhaustive reference. */
static int retrieve_taat(q_ctx *c, uint32_t nchunks)
{
	const q_plan *p = c->plan;
	int rc;
	if ((rc = taat_alloc(c, nchunks)))
		return rc;
	double *acc = c->taat_acc;
	uint64_t *may = c->taat_may;
	const float (*rn)[FATHOM_NFIELDS] = NULL;
	if ((rc = taat_norms_get(c, nchunks, &rn)))
		return rc;
	uint32_t *docs = c->taat_docs, nt = 0;
	uint64_t *pos = c->taat_pos;
	memset(may, 0, (size_t)nchunks * sizeof *may);   /* acc and pos: when met */
	/* the smallest shares a chunk's bonuses can take */
	double lo_share = 1.0, lo_coord[Q_MAX_TERMS + 1];
	if (p->seq.n >= 2 && c->phrase_bonus != 1.0)
		for (uint32_t j = 0; j < p->seq.n; j++)
			lo_share = FA_MIN(lo_share, q_phrase_share(c, j));
	lo_share *= FA_MIN(1.0, c->prefix_bonus);
	double hi_coord = c->coord_n >= 2 ? c->coord_share[c->coord_n] : 1.0;
	for (uint32_t j = Q_MAX_TERMS + 1; j-- > 0;) {
		double share = c->coord_n < 2 ? 1.0 : c->coord_share[FA_MIN(j, c->coord_n)];
		lo_coord[j] = j == Q_MAX_TERMS ? share : FA_MIN(lo_coord[j + 1], share);
		hi_coord = FA_MAX(hi_coord, share);
	}
	uint32_t k = c->top.k;
	double *h = fa_arena_alloc(c->work, (size_t)(k ? k : 1) * sizeof *h);
	if (!h)
		return fa_err(FATHOM_ENOMEM, "term-at-a-time scratch");
	maxscore m;
	ms_init(c, &m);
	double reach = -HUGE_VAL, top_acc = 0.0;
	uint32_t e = m.n;            /* the lists s[e .. n) are read */
	while (e > 0) {
		if (e < m.n) {
			/* a chunk that only the lists not read hold */
			const bound_sum *bs = &m.pre[e];
			double out = bs->ub * (1.0 + Q_TAAT_MARGIN) *
			             q_bonus_bound_pos(c, bs->may, bs->title, bs->head, bs->pos) *
			             Q_BOUND_MARGIN;
			if (out <= q_topk_threshold(&c->top) ||
			    (out < top_acc * hi_coord && /* else no k chunks can pass out */
			     taat_k_above(c, acc, may, docs, nt, lo_coord, lo_share, out)))
				break;
		}
		q_cursor *qc = m.s[--e];
		ix_postings rr = qc->p, *r = &rr;   /* just opened: at its first posting */
		double idf = p->terms[qc->term].idf;
		uint64_t bit = qc->bit, seq_pos = qc->seq_pos;
		if ((rc = q_over_time(c)))
			return rc;
		for (; r->doc != IX_END; rc = ix_post_next_block(r)) {
			if (rc || (rc = ix_post_block_tf(r)))
				return rc;
			unsigned fm = r->field_mask;
			for (uint32_t i = r->i; i < r->n; i++) {
				uint32_t d = r->docs[i];
				if (d >= nchunks)
					return fa_err(FATHOM_ECORRUPT, "posting past the segment's chunks");
				uint64_t md = may[d];
				if (md == Q_TAAT_DEAD)
					continue;
				if (!md) {
					if ((c->allowed && !(c->allowed[d >> 3] & (1u << (d & 7)))) ||
					    seg_is_deleted(c->seg, d)) {
						may[d] = Q_TAAT_DEAD;
						continue;
					}
					docs[nt++] = d;
					acc[d] = 0.0;
					pos[d] = 0;
				}
				double a = acc[d] + taat_part(c, r, i, fm, idf, rn[d]);
				acc[d] = a;
				top_acc = FA_MAX(top_acc, a);
				may[d] = md | bit;
				pos[d] |= seq_pos;
			}
		}
		if (rc)
			return rc;
	}
	/* the chunks met, in doc order (without a branch to mispredict) */
	nt = 0;
	for (uint32_t d = 0; d < nchunks; d++) {
		docs[nt] = d;
		nt += may[d] - 1 < Q_TAAT_DEAD - 1;   /* neither 0 nor dead */
	}
	/* side by side, in place: docs[j] >= j, so entry j is written only
	 * once the chunks before it have been read */
	taat_live lv = { docs, acc, may, pos, nt };
	uint16_t *slot = NULL;   /* chunk -> its place in lv + 1 (walked lists) */
	for (uint32_t j = 0; j < nt; j++) {
		uint32_t d = docs[j];
		lv.acc[j] = acc[d];
		lv.may[j] = may[d];
		lv.pos[j] = pos[d];
	}
	reach = taat_reach(c, lv.acc, lv.may, NULL, lv.n, lo_coord, lo_share, h);
	/* the lists not read, largest bound first, for the chunks met only;
	 * before each, the chunks that can no longer enter are dropped */
	while (e > 0) {
		/* each chunk's bound: its sum, the bounds of the lists not read and
		 * the bonus its words so far and theirs allow (taat_drop's test,
		 * without a branch to mispredict: the chunks stay or go at random) */
		double theta = q_topk_threshold(&c->top), rest = m.pre[e].ub;
		const bound_sum *un = &m.pre[e], *all = &m.pre[m.n];
		uint32_t kept = 0;
		for (uint32_t j = 0; j < lv.n; j++) {
			double ub = (rest + lv.acc[j]) * (1.0 + Q_TAAT_MARGIN);
			uint64_t md = lv.may[j];
			double bonus = q_bonus_bound_pos(c, md | un->may, un->title | (md & all->title),
			                                 un->head | (md & all->head), un->pos | lv.pos[j]);
			double v = ub * bonus * Q_BOUND_MARGIN;
			lv.doc[kept] = lv.doc[j];
			lv.acc[kept] = lv.acc[j];
			lv.may[kept] = md;
			lv.pos[kept] = lv.pos[j];
			kept += !(v < reach) & (v > theta);
		}
		lv.n = kept;
		/* few left: the exact pass reads the rest for each, and would
		 * read them again after this list for any it did not drop
		 * (2k measured best on SciFact's claims, docs/BENCHMARKS.md) */
		if (lv.n <= 2 * c->top.k)
			break;
		q_cursor *qc = m.s[--e];
		ix_postings rr = qc->p, *r = &rr;
		double idf = p->terms[qc->term].idf;
		if ((rc = q_over_time(c)))
			return rc;
		if ((uint64_t)lv.n * Q_TAAT_WALK >= r->ti.df && nchunks < UINT16_MAX) {
			/* chunks left in most blocks of the list: walk it, finding
			 * each posting's chunk by a map, rather than skip to each */
			if (!slot && !(slot = fa_arena_alloc(c->work, (size_t)nchunks * sizeof *slot)))
				return fa_err(FATHOM_ENOMEM, "term-at-a-time scratch");
			memset(slot, 0, (size_t)nchunks * sizeof *slot);
			for (uint32_t j = 0; j < lv.n; j++)
				slot[lv.doc[j]] = (uint16_t)(j + 1);
			for (; r->doc != IX_END; rc = ix_post_next_block(r)) {
				if (rc)
					return rc;
				for (uint32_t i = r->i; i < r->n; i++) {
					uint32_t j = slot[r->docs[i]];
					if (!j--)
						continue;
					if ((rc = ix_post_block_tf(r)))
						return rc;
					lv.acc[j] += taat_part(c, r, i, r->field_mask, idf, rn[lv.doc[j]]);
					lv.may[j] |= qc->bit;
					lv.pos[j] |= qc->seq_pos;
				}
			}
			if (rc)
				return rc;
		} else {
			for (uint32_t j = 0; j < lv.n; j++) {
				uint32_t d = lv.doc[j];
				if (r->doc < d && (rc = ix_post_advance(r, d)))
					return rc;
				if (r->doc == IX_END)
					break;
				if (r->doc != d)
					continue;
				if ((rc = ix_post_block_tf(r)))
					return rc;
				lv.acc[j] += taat_part(c, r, r->i, r->field_mask, idf, rn[d]);
				lv.may[j] |= qc->bit;
				lv.pos[j] |= qc->seq_pos;
			}
		}
		reach = taat_reach(c, lv.acc, lv.may, NULL, lv.n, lo_coord, lo_share, h);
	}
	/* the exact pass, in two sweeps in doc order: first the k chunks with
	 * the largest sums, the likeliest winners, so that the threshold is
	 * near its last value when the others are weighed (most are then
	 * dropped without reading a list) */
	double first = -HUGE_VAL;
	if (lv.n > c->top.k && c->top.k > 0) {
		uint32_t nh = 0;
		for (uint32_t j = 0; j < lv.n; j++)
			lb_push(h, &nh, c->top.k, lv.acc[j]);
		first = h[0];
	}
	m.theta = -HUGE_VAL;
	uint64_t rewind = 0;
	for (int sweep = 0; sweep < 2; sweep++) {
		for (uint32_t j = 0; j < lv.n; j++) {
			if ((lv.acc[j] >= first) != (sweep == 0))
				continue;
			if ((rc = taat_exact(c, &m, e, &lv, j, reach, &rewind)))
				return rc;
		}
		if (first == -HUGE_VAL)
			break;   /* every chunk was in the first sweep */
		rewind = m.n < 64 ? (1ull << m.n) - 1 : ~0ull;
	}
	return 0;
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
	uint32_t n = seg_nchunks(c->seg);
	if (n <= q_taat_max_chunks && c->plan->mroot == UINT32_MAX && c->ncur == c->nscore &&
	    c->nscore < Q_MAX_TERMS)
		return retrieve_taat(c, n);
	return retrieve_disjunctive(c);
}
