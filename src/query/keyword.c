/*
 * keyword.c — BM25F as a retrieval source: look the plan's terms up in
 * every segment, retrieve segment by segment into one top k (wand.c, or
 * exhaustive.c as the reference), and hand the pipeline the best as a
 * candidate list. A candidate's receipt is its entry of the top k; the
 * source's explain hooks turn it into the hit's field parts, matched terms
 * and bonus, and make the snippet from the chunk's text, for the hits
 * presented only.
 *
 * The retrieval loops allocate nothing. Work is proportional to the
 * query's postings, not to the corpus, except that filters walk each
 * segment's document table once to build their bitmap.
 */
#include <time.h>

#include "query/query_int.h"

/* Keep the term frequencies of the top k in memory up to this size. */
#define Q_MAX_HIT_TF (8u << 20)

/* Look every term up in every segment; sum df, find the largest tf. */
static int lookup_terms(q_ctx *c, fa_arena *a, q_plan *plan)
{
	size_t nseg = ix_nsegments(c->ix), cells;
	if (fa_mul(nseg ? nseg : 1, plan->nterms, &cells))
		return fa_err(FATHOM_ENOMEM, "term table");
	c->ti = fa_arena_alloc(a, cells * sizeof *c->ti);
	c->ti_found = fa_arena_calloc(a, cells, 1);
	if (!c->ti || !c->ti_found)
		return fa_err(FATHOM_ENOMEM, "term table");
	for (uint32_t t = 0; t < plan->nterms; t++) {
		q_term *qt = &plan->terms[t];
		const q_lookup *lk;
		int rc = q_plan_lookup(plan, a, c->ix, qt->text, qt->len, &lk);
		if (rc)
			return rc;
		qt->df = lk->df;
		for (size_t s = 0; s < nseg; s++) {
			if (!lk->found[s])
				continue;
			const ix_term_info *ti = &lk->ti[s];
			c->ti[s * plan->nterms + t] = *ti;
			c->ti_found[s * plan->nterms + t] = 1;
			for (int f = 0; f < FATHOM_NFIELDS; f++)
				qt->max_tf = FA_MAX(qt->max_tf, (uint32_t)ti->bound.max_tf[f]);
		}
		/* A term only negated adds nothing to any score or bound. */
		qt->idf = qt->scored ? q_idf(ix_total_chunks(c->ix), qt->df) : 0.0;
		if (qt->max_tf == 0)
			qt->max_tf = 1;
	}
	return 0;
}

static int alloc_scratch(q_ctx *c, fa_arena *a)
{
	uint32_t n = c->plan->nterms;
	c->cur = fa_arena_alloc(a, (size_t)n * sizeof *c->cur);
	c->by_term = fa_arena_calloc(a, n, sizeof *c->by_term);
	c->tf = fa_arena_calloc(a, n, sizeof *c->tf);
	c->present = fa_arena_calloc(a, n, 1);
	c->part = fa_arena_calloc(a, n, sizeof *c->part);
	c->pos = fa_arena_calloc(a, n, sizeof *c->pos);
	c->pos_n = fa_arena_calloc(a, n, sizeof *c->pos_n);
	c->pos_tag = fa_arena_calloc(a, n, sizeof *c->pos_tag);
	if (!c->cur || !c->by_term || !c->tf || !c->present || !c->part || !c->pos || !c->pos_n ||
	    !c->pos_tag)
		return fa_err(FATHOM_ENOMEM, "query scratch");
	size_t keep;
	if (!fa_mul((size_t)c->top.k, (size_t)n * sizeof *c->hit_tf, &keep) && keep <= Q_MAX_HIT_TF)
		c->hit_tf = fa_arena_alloc(a, keep ? keep : 1); /* NULL: read again later */
	for (uint32_t t = 0; t < n; t++) {
		c->pos[t] = fa_arena_alloc(a, (size_t)c->plan->terms[t].max_tf * sizeof **c->pos);
		if (!c->pos[t])
			return fa_err(FATHOM_ENOMEM, "position buffer");
	}
	return 0;
}

/* Open the cursors of segment s; none when a required term is missing. */
static int open_segment(q_ctx *c, uint32_t s)
{
	const q_plan *p = c->plan;
	uint64_t may = 0, title = 0, head = 0;
	c->ncur = 0;
	for (uint32_t t = 0; t < p->nterms; t++) {
		c->by_term[t] = NULL;
		c->pos_tag[t] = 0;
	}
	for (uint32_t t = 0; t < p->nterms; t++) {
		size_t cell = (size_t)s * p->nterms + t;
		if (p->terms[t].required && (!c->ti_found[cell] || c->ti[cell].df == 0))
			return 0; /* before decoding anything */
	}
	/* Scored terms first: retrieval walks c->cur[0 .. nscore); the cursors
	 * of terms only negated follow, and q_eval moves them on demand. */
	c->nscore = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t t = 0; t < p->nterms; t++) {
			size_t cell = (size_t)s * p->nterms + t;
			if (!c->ti_found[cell] || c->ti[cell].df == 0 || p->terms[t].scored != !pass)
				continue;
			q_cursor *qc = &c->cur[c->ncur];
			int rc = ix_post_open(&qc->p, c->seg, &c->ti[cell]);
			if (rc)
				return rc;
			const ix_bound *b = &c->ti[cell].bound;
			qc->term = t;
			qc->stale = 0;
			qc->ub = q_term_bound(&c->sc, p->terms[t].idf, b);
			qc->bit = 1ull << t;
			qc->title_bit = b->max_tf[FATHOM_FIELD_TITLE] ? qc->bit : 0;
			qc->head_bit = b->max_tf[FATHOM_FIELD_HEADINGS] ? qc->bit : 0;
			qc->seq_pos = 0;
			for (uint32_t i = 0; i < p->seq.n && i < 64; i++)
				if (p->seq.term[i] == t)
					qc->seq_pos |= 1ull << i;
			qc->bb_block = UINT32_MAX;
			if (!pass) {
				may |= qc->bit;
				title |= qc->title_bit;
				head |= qc->head_bit;
			}
			c->by_term[t] = qc;
			c->ncur++;
		}
		if (!pass)
			c->nscore = c->ncur;
	}
	c->seg_bonus = q_bonus_bound(c, may, title, head);
	return 0;
}

/* ---- explain's hooks ------------------------------------------------------------ */

/* The term frequencies of chunk d in segment s, per term (0 when absent). */
static int hit_tf(const q_ctx *c, ix_postings *p, uint32_t s, uint32_t d,
                  uint16_t (*tf)[FATHOM_NFIELDS])
{
	const q_plan *pl = c->plan;
	for (uint32_t t = 0; t < pl->nterms; t++) {
		size_t cell = (size_t)s * pl->nterms + t;
		memset(tf[t], 0, sizeof tf[t]);
		if (!c->ti_found[cell] || c->ti[cell].df == 0)
			continue;
		int rc = ix_post_open(p, ix_segment_at(c->ix, s), &c->ti[cell]);
		if (!rc)
			rc = ix_post_advance(p, d);
		if (rc)
			return rc;
		if (p->doc == d)
			ix_post_tf(p, tf[t]);
	}
	return 0;
}

/* The words of the query sequence the chunk lacks (tf 0 in every field),
 * as typed, each term once, in query order. */
static int missing_words(const q_plan *pl, uint16_t (*tf)[FATHOM_NFIELDS], fa_arena *a,
                         fathom_hit *h)
{
	uint64_t seen = 0;
	uint32_t n = 0;
	const char **v = fa_arena_alloc(a, (pl->seq.n ? pl->seq.n : 1) * sizeof *v);
	if (!v)
		return fa_err(FATHOM_ENOMEM, "hit receipt");
	for (uint32_t i = 0; i < pl->seq.n; i++) {
		uint32_t t = pl->seq.term[i];
		if (t >= 64 || (seen >> t & 1))
			continue;
		seen |= 1ull << t;
		int held = 0;
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			held |= tf[t][f] > 0;
		if (held)
			continue;
		const q_term *qt = &pl->terms[t];
		const char *w = qt->src ? fa_arena_strndup(a, qt->src, qt->src_len)
		                        : fa_arena_strndup(a, qt->text, qt->len);
		if (!w)
			return fa_err(FATHOM_ENOMEM, "hit receipt");
		v[n++] = w;
	}
	h->missing = v;
	h->n_missing = n;
	return 0;
}

/* Field parts of the score and the matched terms of each field. Each
 * term's score is split across fields in proportion to the field's share
 * of its tf~. */
static int kw_receipt(const q_source *self, const q_cand *cand, const ix_chunk_info *ci,
                      fathom_hit *h, fathom_results *r)
{
	q_keyword *kw = self->ctx;
	const q_ctx *c = &kw->c;
	const q_hitref *ref = cand->receipt;
	const q_plan *pl = c->plan;
	const q_scorer *sc = &c->sc;
	fa_arena *a = q_results_arena(r);
	const char *const *terms = q_results_terms(r);
	uint16_t (*tf)[FATHOM_NFIELDS] = kw->tf;
	int rc;
	if (c->hit_tf)
		tf = c->hit_tf + (size_t)ref->slot * pl->nterms;
	else if ((rc = hit_tf(c, kw->p, ref->seg, ref->chunk, tf)))
		return rc;
	double *fs = fa_arena_calloc(a, FATHOM_NFIELDS, sizeof *fs);
	uint32_t *nm = fa_arena_calloc(a, FATHOM_NFIELDS, sizeof *nm);
	const char *const **matched = fa_arena_calloc(a, FATHOM_NFIELDS, sizeof *matched);
	if (!fs || !nm || !matched)
		return fa_err(FATHOM_ENOMEM, "hit receipt");
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		uint32_t n = 0;
		for (uint32_t t = 0; t < pl->nterms; t++)
			n += tf[t][f] > 0;
		const char **m = fa_arena_alloc(a, (n ? n : 1) * sizeof *m);
		if (!m)
			return fa_err(FATHOM_ENOMEM, "hit receipt");
		n = 0;
		for (uint32_t t = 0; t < pl->nterms; t++)
			if (tf[t][f] > 0)
				m[n++] = terms[t];
		matched[f] = m;
		nm[f] = n;
	}
	for (uint32_t t = 0; t < pl->nterms; t++) {
		double x = q_tf_tilde(sc, tf[t], ci->field_len);
		if (!(x > 0.0))
			continue;
		double s = q_saturate(sc, pl->terms[t].idf, x);
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			if (tf[t][f])
				fs[f] += s * (sc->w[f] * (double)tf[t][f] /
				              q_field_norm(sc, f, (double)ci->field_len[f])) / x;
	}
	h->n_fields = FATHOM_NFIELDS;
	h->field_score = fs;
	h->n_matched = nm;
	h->matched = matched;
	h->bonus = ref->bonus;
	return missing_words(pl, tf, a, h);
}

/* The window of the chunk's text holding the most distinct query terms. */
static int kw_snippet(const q_source *self, const q_cand *cand, const char *text, size_t len,
                      uint32_t target, uint32_t line0, fathom_hit *h, fathom_results *r)
{
	(void)cand;
	q_keyword *kw = self->ctx;
	fathom_span *hl;
	uint32_t *lines;
	int rc = q_snippet(q_results_arena(r), &kw->w, kw->an, kw->c.plan, text, len,
	                   FA_MIN(target, (uint32_t)Q_SNIPPET_MAX), line0, &h->snippet, &hl,
	                   &h->n_highlights, &lines, &h->n_match_lines);
	h->highlights = hl;
	h->match_lines = lines;
	return rc;
}

/* ---- retrieval ------------------------------------------------------------------ */

int q_keyword_retrieve(q_keyword *kw, fa_arena *work, ix_index *ix, text_analyzer *an,
                       q_plan *plan, const q_filter *filter,
                       const fathom_search_opts *opts, uint32_t fetch, q_cand_list *out)
{
	q_ctx *c = &kw->c;
	memset(kw, 0, sizeof *kw);
	memset(out, 0, sizeof *out);
	kw->src.id = FATHOM_SOURCE_KEYWORD;
	kw->src.receipt = kw_receipt;
	kw->src.snippet = kw_snippet;
	kw->src.ctx = kw;
	kw->an = an;
	out->src = &kw->src;
	c->ix = ix;
	c->opts = opts;
	c->plan = plan;
	if (opts->time_limit > 0) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		c->deadline_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
		                 (uint64_t)(opts->time_limit * 1e9);
	}
	q_scorer_init(&c->sc, opts, ix);
	c->phrase_bonus = opts->phrase_bonus;
	c->prefix_bonus = opts->prefix_bonus;
	for (uint32_t i = 0; i < plan->seq.n; i++)
		c->seq_mask |= 1ull << plan->seq.term[i];
	if (plan->coord)
		c->coord_n = q_popcount(c->seq_mask);
	/* the bonus shares, once: bounds and scores read the same numbers */
	for (uint32_t i = 0; c->coord_n && i <= c->coord_n; i++)
		c->coord_share[i] = 1.0 + (Q_COORD_BONUS - 1.0) * ((double)i / (double)c->coord_n);
	c->phrase_share = fa_arena_alloc(work, (plan->seq.n ? plan->seq.n : 1) * sizeof *c->phrase_share);
	if (!c->phrase_share)
		return fa_err(FATHOM_ENOMEM, "query bonus shares");
	for (uint32_t i = 0; plan->seq.n >= 2 && i < plan->seq.n; i++)
		c->phrase_share[i] = 1.0 + ((double)c->phrase_bonus - 1.0) * (double)i /
		                           (double)(plan->seq.n - 1);
	/* lookup_terms fills the plan's df, idf and max_tf */
	int rc;
	if ((rc = lookup_terms(c, work, plan)) || (rc = q_topk_init(&c->top, work, fetch)) ||
	    (rc = alloc_scratch(c, work)))
		return rc;
	c->work = work;
	/* fetch 0 (semantic mode): the plan's terms are looked up for the
	 * receipt, nothing is retrieved */
	if (fetch == 0)
		return 0;

	size_t nseg = ix_nsegments(ix);
	for (size_t s = 0; s < nseg; s++) {
		c->ticks = 1023;   /* a look at the clock before every segment */
		if ((rc = q_over_time(c)))
			return rc;
		c->seg_index = (uint32_t)s;
		c->seg = ix_segment_at(ix, s);
		if ((rc = open_segment(c, (uint32_t)s)))
			return rc;
		if (c->nscore == 0)
			continue;
		uint8_t *allowed = NULL;
		if ((rc = q_filter_bitmap(filter, work, c->seg, &allowed)) ||
		    (rc = q_ident_bitmap(plan, work, c->seg, &allowed, FATHOM_SOURCE_KEYWORD)))
			return rc;
		c->allowed = allowed;
		rc = opts->exhaustive ? q_retrieve_exhaustive(c) : q_retrieve_pruned(c);
		if (rc)
			return rc;
	}
	q_topk_sort(&c->top);

	/* explain's working memory, allocated once for all the hits */
	kw->p = fa_arena_alloc(work, sizeof *kw->p);
	kw->tf = fa_arena_alloc(work, (plan->nterms ? plan->nterms : 1) * sizeof *kw->tf);
	out->v = fa_arena_alloc(work, (c->top.n ? c->top.n : 1) * sizeof *out->v);
	if (!kw->p || !kw->tf || !out->v || q_snip_work_init(&kw->w, work, plan->nterms) != 0)
		return fa_err(FATHOM_ENOMEM, "query candidates");
	out->cap = c->top.n ? c->top.n : 1;
	for (uint32_t i = 0; i < c->top.n; i++) {
		const q_hitref *h = &c->top.h[i];
		out->v[out->n++] = (q_cand){ h->seg, h->chunk, h->score, h };
	}
	return 0;
}
