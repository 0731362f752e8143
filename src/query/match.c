/*
 * match.c — one candidate chunk, start to finish: is it live and allowed,
 * does it hold the required terms and phrases, what is its BM25F score,
 * which bonuses does it earn. The pruned and the exhaustive paths both end
 * here, so they cannot disagree on a score.
 *
 * Terms are summed in plan order and fields in field order, always, so the
 * floating-point sum of a chunk is the same however it was found.
 */
#include <time.h>

#include "query/query_int.h"

/* Positions of term t in field f of the current candidate, decoded once
 * per candidate and field. */
static int term_positions(q_ctx *c, uint32_t t, int f, const uint32_t **pos, uint32_t *n)
{
	uint64_t tag = (c->serial << 3) | (uint64_t)f;
	if (c->pos_tag[t] != tag) {
		q_cursor *qc = c->by_term[t];
		uint32_t cap = c->plan->terms[t].max_tf;
		c->pos_n[t] = 0;
		int rc = ix_post_positions(&qc->p, f, c->pos[t], cap, &c->pos_n[t]);
		if (rc)
			return rc;
		if (c->pos_n[t] > cap)
			c->pos_n[t] = cap;
		c->pos_tag[t] = tag;
	}
	*pos = c->pos[t];
	*n = c->pos_n[t];
	return 0;
}

static int has_position(const uint32_t *pos, uint32_t n, int64_t want)
{
	if (want < 0 || want > UINT32_MAX)
		return 0;
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (pos[mid] < (uint32_t)want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && pos[lo] == (uint32_t)want;
}

/* Does the phrase occur in field f? Anchored: starting at position 0.
 * 1 yes, 0 no, < 0 an error. */
static int phrase_in_field(q_ctx *c, const q_phrase *ph, int f, int anchored)
{
	uint32_t rarest = 0;
	for (uint32_t i = 0; i < ph->n; i++) {
		uint32_t t = ph->term[i];
		if (!c->present[t] || c->tf[t][f] == 0)
			return 0;
		if (c->tf[t][f] < c->tf[ph->term[rarest]][f])
			rarest = i;
	}
	const uint32_t *pos;
	uint32_t n;
	int rc;
	if (anchored) {
		int32_t min_off = 0;
		for (uint32_t i = 0; i < ph->n; i++)
			min_off = FA_MIN(min_off, ph->off[i]);
		for (uint32_t i = 0; i < ph->n; i++) {
			if ((rc = term_positions(c, ph->term[i], f, &pos, &n)))
				return rc;
			if (!has_position(pos, n, (int64_t)ph->off[i] - min_off))
				return 0;
		}
		return 1;
	}
	const uint32_t *lead;
	uint32_t nlead;
	if ((rc = term_positions(c, ph->term[rarest], f, &lead, &nlead)))
		return rc;
	for (uint32_t k = 0; k < nlead; k++) {
		int64_t start = (int64_t)lead[k] - ph->off[rarest];
		uint32_t i;
		for (i = 0; i < ph->n; i++) {
			if (i == rarest)
				continue;
			if ((rc = term_positions(c, ph->term[i], f, &pos, &n)))
				return rc;
			if (!has_position(pos, n, start + ph->off[i]))
				break;
		}
		if (i == ph->n)
			return 1;
	}
	return 0;
}

static int phrase_anywhere(q_ctx *c, const q_phrase *ph)
{
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		int rc = phrase_in_field(c, ph, f, 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* Does term t occur in one of the fields (0: any field)? */
static int in_fields(const q_ctx *c, uint32_t t, uint8_t fields)
{
	if (!c->present[t])
		return 0;
	if (!fields)
		return 1;
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		if ((fields >> f & 1) && c->tf[t][f])
			return 1;
	return 0;
}

enum { M_FALSE = 0, M_TRUE = 1, M_MAYBE = 2 };

/* The match tree at the current candidate. Without exact, phrases are not
 * read: a phrase whose terms are all there is "maybe", and the answer is
 * three-valued (Kleene); with exact it is true or false. < 0: an error. */
static int tree_eval(q_ctx *c, uint32_t node, int exact)
{
	const q_plan *p = c->plan;
	const q_mnode *m = &p->m[node];
	switch (m->kind) {
	case QM_TERM:
		return in_fields(c, m->idx, m->fields) ? M_TRUE : M_FALSE;
	case QM_PHRASE: {
		const q_phrase *ph = &p->phrases[m->idx];
		for (uint32_t i = 0; i < ph->n; i++)
			if (!in_fields(c, ph->term[i], m->fields))
				return M_FALSE;
		if (!exact)
			return M_MAYBE;
		for (int f = 0; f < FATHOM_NFIELDS; f++) {
			if (m->fields && !(m->fields >> f & 1))
				continue;
			int rc = phrase_in_field(c, ph, f, 0);
			if (rc)
				return rc;
		}
		return M_FALSE;
	}
	case QM_NOT: {
		int v = tree_eval(c, p->mkid[m->first], exact);
		return v < 0 ? v : v == M_MAYBE ? M_MAYBE : v == M_TRUE ? M_FALSE : M_TRUE;
	}
	default: {
		int and = m->kind == QM_AND, maybe = 0;
		for (uint32_t k = 0; k < m->n; k++) {
			int v = tree_eval(c, p->mkid[m->first + k], exact);
			if (v < 0)
				return v;
			if (v == M_MAYBE)
				maybe = 1;
			else if (v == (and ? M_FALSE : M_TRUE))
				return v;
		}
		return maybe ? M_MAYBE : and ? M_TRUE : M_FALSE;
	}
	}
}

/* A bound of the candidate's score from its tfs alone: each field length is
 * at least the smallest one in the posting's block (or list). */
static double tf_bound(const q_ctx *c)
{
	if (q_topk_threshold(&c->top) == -HUGE_VAL)
		return HUGE_VAL; /* nothing to prune against yet */
	const q_plan *p = c->plan;
	double ub = 0.0;
	for (uint32_t t = 0; t < p->nterms; t++) {
		if (!c->present[t])
			continue;
		const ix_postings *pp = &c->by_term[t]->p;
		const ix_bound *b = pp->block == pp->block_decoded ? ix_post_block_bound(pp) : &pp->ti.bound;
		ub += q_saturate(&c->sc, p->terms[t].idf, q_tf_tilde(&c->sc, c->tf[t], b->min_len));
	}
	return ub;
}

/* The time limit, looked at every 1024 candidates (a clock read costs
 * about as much as scoring one). */
int q_over_time(q_ctx *c)
{
	if (!c->deadline_ns || (++c->ticks & 1023) != 0)
		return 0;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec < c->deadline_ns)
		return 0;
	return fa_err(FATHOM_ETIMEOUT, "the search ran past its time limit (%.3g s)",
	              c->opts->time_limit);
}

/* The phrase and prefix parts of the bonus, formed as q_bonus_bound forms
 * them (bonus holds the coordination share). With prune, the pairs are
 * looked for only while the chunk can still beat the threshold with the
 * pairs not yet looked at, and the prefix only if it can with it: *beaten
 * says that it cannot (the bonus is then not complete). */
static int phrase_bonuses(q_ctx *c, double base, int prune, uint64_t title, uint64_t head,
                          double *bonus, int *beaten)
{
	const q_plan *p = c->plan;
	double theta = prune ? q_topk_threshold(&c->top) : -HUGE_VAL;
	double prefix_max = 1.0;
	int rc;
	*beaten = 0;
	if (p->seq.n >= 1 && c->prefix_bonus != 1.0 &&
	    ((c->seq_mask & ~title) == 0 || (c->seq_mask & ~head) == 0))
		prefix_max = c->prefix_bonus;
	if (p->seq.n >= 2 && c->phrase_bonus != 1.0) {
		uint32_t pairs = 0, open = 0, term[2];
		int32_t off[2];
		q_phrase pair = { 2, term, off };
		for (uint32_t i = 0; i + 1 < p->seq.n; i++)
			open += c->present[p->seq.term[i]] && c->present[p->seq.term[i + 1]];
		for (uint32_t i = 0; i + 1 < p->seq.n; i++) {
			if (!c->present[p->seq.term[i]] || !c->present[p->seq.term[i + 1]])
				continue;
			if (q_cannot_beat(base, *bonus * q_phrase_share(c, pairs + open) * prefix_max,
			                  theta)) {
				*beaten = 1;
				return 0;
			}
			open--;
			term[0] = p->seq.term[i];
			term[1] = p->seq.term[i + 1];
			off[0] = 0;
			off[1] = p->seq.off[i + 1] - p->seq.off[i];
			if ((rc = phrase_anywhere(c, &pair)) < 0)
				return rc;
			pairs += rc > 0;
		}
		*bonus *= q_phrase_share(c, pairs);
	}
	if (prefix_max != 1.0) {
		if (q_cannot_beat(base, *bonus * prefix_max, theta)) {
			*beaten = 1;
			return 0;
		}
		if ((rc = phrase_in_field(c, &p->seq, FATHOM_FIELD_TITLE, 1)) == 0)
			rc = phrase_in_field(c, &p->seq, FATHOM_FIELD_HEADINGS, 1);
		if (rc < 0)
			return rc;
		if (rc)
			*bonus *= c->prefix_bonus;
	}
	return 0;
}

/* The tree with its phrases, the bonus, the top k: for a chunk whose base
 * score is known and may beat the threshold. */
static int finish(q_ctx *c, uint32_t d, int prune, uint64_t may, uint64_t title, uint64_t head,
                  double base)
{
	const q_plan *p = c->plan;
	int rc;
	c->serial++;
	if (!p->trivial && p->mroot != UINT32_MAX) {
		rc = tree_eval(c, p->mroot, 1);
		if (rc <= 0)
			return rc;
	}
	/* Formed in the order of q_bonus_bound, so the bound holds exactly. */
	double bonus = 1.0;
	int beaten;
	if (c->coord_n >= 2)
		bonus *= q_coord_share(c, may);
	if ((rc = phrase_bonuses(c, base, prune, title, head, &bonus, &beaten)) || beaten)
		return rc;
	q_hitref h = { base * bonus, bonus, c->seg_index, d, 0 };
	uint32_t slot = q_topk_push(&c->top, &h);
	if (slot != UINT32_MAX && c->hit_tf) {
		uint16_t (*keep)[FATHOM_NFIELDS] = c->hit_tf + (size_t)slot * p->nterms;
		for (uint32_t t = 0; t < p->nterms; t++) {
			if (c->present[t])
				memcpy(keep[t], c->tf[t], sizeof keep[t]);
			else
				memset(keep[t], 0, sizeof keep[t]);
		}
	}
	return 0;
}

int q_eval_scored(q_ctx *c, uint32_t d, int prune, uint64_t may, uint64_t title, uint64_t head,
                  uint64_t pos, double base)
{
	const q_plan *p = c->plan;
	if (may == 0)
		return 0;
	if (!p->trivial && p->mroot != UINT32_MAX && tree_eval(c, p->mroot, 0) == M_FALSE)
		return 0;
	c->scored++;
	if (prune && q_cannot_beat(base, q_bonus_bound_pos(c, may, title, head, pos),
	                           q_topk_threshold(&c->top)))
		return 0;
	return finish(c, d, prune, may, title, head, base);
}

int q_eval_gathered(q_ctx *c, uint32_t d, int prune, uint64_t may, uint64_t title, uint64_t head,
                    double tfb)
{
	const q_plan *p = c->plan;
	int rc;
	if (may == 0)
		return 0;
	/* Every cursor is settled: the tree, phrases aside. */
	if (!p->trivial && p->mroot != UINT32_MAX && tree_eval(c, p->mroot, 0) == M_FALSE)
		return 0;
	double bonus_bound = q_bonus_bound(c, may, title, head);
	if (prune && q_cannot_beat(tfb < 0.0 ? tf_bound(c) : tfb, bonus_bound,
	                           q_topk_threshold(&c->top)))
		return 0; /* without reading the chunk's field lengths */

	uint16_t field_len[FATHOM_NFIELDS];
	if ((rc = seg_chunk_field_len(c->seg, d, field_len)))
		return rc;
	double base = 0.0;
	for (uint32_t t = 0; t < p->nterms; t++)
		if (c->present[t])
			base += q_saturate(&c->sc, p->terms[t].idf,
			                   q_tf_tilde(&c->sc, c->tf[t], field_len));
	c->scored++;
	if (prune && q_cannot_beat(base, bonus_bound, q_topk_threshold(&c->top)))
		return 0;
	return finish(c, d, prune, may, title, head, base);
}

int q_eval(q_ctx *c, uint32_t d, int prune)
{
	const q_plan *p = c->plan;
	int rc = q_admit(c, d);
	if (rc <= 0)
		return rc;
	/* First what the cursors already at d say; a cursor behind d may or
	 * may not hold it. When even "may" cannot beat the threshold, nothing
	 * is decoded. */
	uint64_t may = 0, title = 0, head = 0, unknown = 0;
	uint64_t unknown_title = 0, unknown_head = 0;
	double unknown_ub = 0.0;
	for (uint32_t t = 0; t < p->nterms; t++) {
		q_cursor *qc = c->by_term[t];
		c->present[t] = 0;
		if (qc && !qc->stale && qc->p.doc == d) {
			q_gather(c, qc, &may, &title, &head);
		} else if (qc && q_cursor_doc(qc) <= d) {
			unknown |= qc->bit;
			unknown_title |= qc->title_bit;
			unknown_head |= qc->head_bit;
			unknown_ub += qc->ub;
		} else if (p->terms[t].required) {
			return 0;
		}
	}
	if (unknown) {
		if (prune && q_cannot_beat(tf_bound(c) + unknown_ub,
		                           q_bonus_bound(c, may | unknown, title | unknown_title,
		                                         head | unknown_head),
		                           q_topk_threshold(&c->top)))
			return 0;
		for (uint32_t t = 0; t < p->nterms; t++) {
			q_cursor *qc = c->by_term[t];
			if (!qc || !(unknown & qc->bit))
				continue;
			if ((rc = q_cursor_seek(qc, d)))
				return rc;
			if (qc->p.doc == d)
				q_gather(c, qc, &may, &title, &head);
			else if (p->terms[t].required)
				return 0;
		}
	}
	return q_eval_gathered(c, d, prune, may, title, head, -1.0);
}
