/*
 * search.c — q_search: parse, plan, look the terms up in every segment,
 * retrieve segment by segment into one top k, and build the hits.
 *
 * All per-query memory comes from one arena released at the end; the
 * retrieval loops allocate nothing. Work is proportional to the query's
 * postings, not to the corpus, except that filters walk each segment's
 * document table once to build their bitmap.
 */
#include <time.h>

#include "query/query_int.h"

/* Keep the term frequencies of the top k in memory up to this size. */
#define Q_MAX_HIT_TF (8u << 20)

static int check_opts(const fathom_search_opts *o)
{
	if (o->version != FATHOM_SEARCH_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_search_opts version %u, expected %u",
		              o->version, FATHOM_SEARCH_OPTS_VERSION);
	if (o->k == 0 || o->k > Q_MAX_K)
		return fa_err(FATHOM_EINVAL, "k must be between 1 and %d", Q_MAX_K);
	if (o->match < FATHOM_MATCH_AUTO || o->match > FATHOM_MATCH_ANY)
		return fa_err(FATHOM_EINVAL, "unknown match mode %d", o->match);
	if (!(o->k1 >= 0.0f && o->k1 <= 100.0f) || !(o->b >= 0.0f && o->b <= 1.0f))
		return fa_err(FATHOM_EINVAL, "k1 must be in [0, 100] and b in [0, 1]");
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		if (!(o->field_weight[f] >= 0.0f && o->field_weight[f] <= 1000.0f))
			return fa_err(FATHOM_EINVAL, "field weight %d must be in [0, 1000]", f);
	/* Bonuses below 1 would let a bonus-free bound undercount. */
	if (!(o->phrase_bonus >= 1.0f && o->phrase_bonus <= 100.0f) ||
	    !(o->prefix_bonus >= 1.0f && o->prefix_bonus <= 100.0f))
		return fa_err(FATHOM_EINVAL, "bonuses are multipliers in [1, 100]");
	return 0;
}

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
	c->pos = fa_arena_calloc(a, n, sizeof *c->pos);
	c->pos_n = fa_arena_calloc(a, n, sizeof *c->pos_n);
	c->pos_tag = fa_arena_calloc(a, n, sizeof *c->pos_tag);
	if (!c->cur || !c->by_term || !c->tf || !c->present || !c->pos || !c->pos_n || !c->pos_tag)
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

/* Does any live document of the index pass filter f? */
static int filter_passes_any(ix_index *ix, const q_filter *f, int *any)
{
	*any = 0;
	for (size_t s = 0; s < ix_nsegments(ix) && !*any; s++) {
		ix_segment *seg = ix_segment_at(ix, s);
		for (uint32_t d = 0; d < seg_ndocs(seg) && !*any; d++) {
			ix_doc_info di;
			if (seg_doc_is_deleted(seg, d))
				continue;
			int rc = seg_doc(seg, d, &di);
			if (rc)
				return rc;
			*any = q_filter_doc(f, &di);
		}
	}
	return 0;
}

/* Why an answer is empty, in words, into why. */
static int explain_empty(ix_index *ix, const q_plan *p, const q_filter *f, fbuf *why)
{
	for (uint32_t k = 0; k < p->nidents; k++) {
		if (!p->idents[k].applied) {
			fbuf_printf(why, "identifier %.*s occurs in no document", (int)p->idents[k].len,
			            p->idents[k].text);
			return 0;
		}
	}
	for (uint32_t t = 0; t < p->nterms; t++) {
		const q_term *qt = &p->terms[t];
		if (qt->required && qt->df == 0 && qt->src) {
			fbuf_printf(why, "\"%.*s\" occurs in no document", (int)qt->src_len, qt->src);
			return 0;
		}
	}
	if (p->empty_prefix) {
		fbuf_printf(why, "\"%.*s*\" begins no indexed word", (int)p->empty_prefix_len,
		            p->empty_prefix);
		return 0;
	}
	if (f->active) {
		/* One filter at a time: which one passes nothing? */
		q_filter one;
		int any = 0, rc;
		for (size_t i = 0; i < f->n; i++) {
			memset(&one, 0, sizeof one);
			one.keys = &f->keys[i];
			one.values = &f->values[i];
			one.n = 1;
			one.active = 1;
			if ((rc = filter_passes_any(ix, &one, &any)))
				return rc;
			if (!any) {
				fbuf_printf(why, "filter %s=%s matches no document", f->keys[i], f->values[i]);
				return 0;
			}
		}
		if (f->lang) {
			memset(&one, 0, sizeof one);
			one.lang = f->lang;
			one.active = 1;
			if ((rc = filter_passes_any(ix, &one, &any)))
				return rc;
			if (!any) {
				fbuf_printf(why, "no document is in the language %s", f->lang);
				return 0;
			}
		}
		if (f->glob) {
			memset(&one, 0, sizeof one);
			one.glob = f->glob;
			one.glob_base = f->glob_base;
			one.active = 1;
			if ((rc = filter_passes_any(ix, &one, &any)))
				return rc;
			if (!any) {
				fbuf_printf(why, "no document's path matches %s", f->glob);
				return 0;
			}
		}
		if ((rc = filter_passes_any(ix, f, &any)))
			return rc;
		if (!any) {
			fbuf_puts(why, "no document passes all the filters together");
			return 0;
		}
	}
	/* Every part exists somewhere, but not together. */
	uint32_t named = 0;
	fbuf_puts(why, "no chunk matches the whole query");
	for (uint32_t t = 0; t < p->nterms; t++) {
		const q_term *qt = &p->terms[t];
		if (!qt->required || !qt->src)
			continue;
		fbuf_printf(why, "%s\"%.*s\"", named++ ? ", " : ": no chunk holds ", (int)qt->src_len,
		            qt->src);
	}
	if (named > 1)
		fbuf_puts(why, " together");
	if (f->active)
		fbuf_puts(why, named ? " among the documents the filters allow" : "");
	for (uint32_t k = 0; k < p->nidents; k++)
		if (p->idents[k].applied)
			fbuf_printf(why, "%s with identifier %.*s", named++ ? "," : ": no chunk holds it",
			            (int)p->idents[k].len, p->idents[k].text);
	if (p->nphrases)
		fbuf_puts(why, named ? " (or not as the phrase asked)" : " (a phrase is never met)");
	return 0;
}

/* Does the query end as a sentence does (".", "?" or "!")? AUTO mode reads
 * that as natural language. */
static int ends_like_sentence(const char *q)
{
	size_t n = strlen(q);
	while (n && (q[n - 1] == ' ' || q[n - 1] == '\t' || q[n - 1] == '\n' || q[n - 1] == '\r'))
		n--;
	return n > 1 && (q[n - 1] == '.' || q[n - 1] == '?' || q[n - 1] == '!');
}

int q_search(fathom_results **out, ix_index *ix, text_analyzer *an,
             const char *query, const fathom_search_opts *opts)
{
	return q_search_in(out, ix, an, query, opts, NULL, NULL);
}

/* Counting the top level's keywords and stop words as plan.c does: one per
 * word, identifier (not its parts) or run of CJK. */
typedef struct unit_count {
	const char *text;
	uint32_t keywords, stopwords;
	int in_cjk;
	fbuf norm;
} unit_count;

static int count_unit(void *ctx, const text_token *tok)
{
	unit_count *u = ctx;
	if (tok->kind == TOK_PART)
		return 0;
	if (tok->kind == TOK_CJK) {
		if (!u->in_cjk)
			u->keywords++;
		u->in_cjk = 1;
		return 0;
	}
	u->in_cjk = 0;
	int stop = 0;
	if (tok->kind == TOK_WORD) {
		fbuf_reset(&u->norm);
		if (text_normalize(&u->norm, u->text + tok->start, tok->end - tok->start) == 0 &&
		    !u->norm.err)
			stop = text_is_stopword((const char *)u->norm.data, u->norm.len);
	}
	if (stop)
		u->stopwords++;
	else
		u->keywords++;
	return 0;
}

/* Are the top level's words required (so a glossary may expand them)? The
 * same answer as plan.c's decide_required: operators, or a short keyword
 * query without stop words or sentence punctuation. */
static int top_words_bind(const q_ast *t, text_analyzer *an, int match, int sentence)
{
	if (match == FATHOM_MATCH_ALL)
		return 1;
	if (match == FATHOM_MATCH_ANY)
		return 0;
	if (t->strict)
		return 1;
	const q_node *root = &t->node[t->root];
	unit_count u = { NULL, 0, 0, 0, { 0 } };
	fbuf_init(&u.norm, 4096);
	for (uint32_t k = 0; k < root->n; k++) {
		const q_node *c = &t->node[t->kid[root->first + k]];
		if (c->kind != QN_WORD)
			continue;
		uint32_t pos = 0;
		u.text = c->text;
		u.in_cjk = 0;
		text_analyze(an, c->text, c->len, &pos, count_unit, &u, NULL);
	}
	fbuf_free(&u.norm);
	fa_err_clear();
	if (u.keywords == 0)
		return 1;
	if (u.stopwords || sentence)
		return 0;
	return u.keywords <= 4;
}

int q_search_in(fathom_results **out, ix_index *ix, text_analyzer *an,
                const char *query, const fathom_search_opts *opts, fa_arena *shared,
                const struct q_glossary *gloss)
{
	fathom_search_opts def = FATHOM_SEARCH_OPTS_INIT;
	if (!out)
		return fa_err(FATHOM_EINVAL, "no output for the results");
	*out = NULL;
	if (!ix || !an || !query)
		return fa_err(FATHOM_EINVAL, "no index, analyser or query");
	if (!opts)
		opts = &def;
	int rc = check_opts(opts);
	if (rc)
		return rc;

	fa_arena own, *work = shared;
	if (!work) {
		fa_arena_init(&own, 64 * 1024, 0);
		work = &own;
	}
	q_ast ast;
	q_plan plan;
	q_ctx c;
	memset(&c, 0, sizeof c);
	if ((rc = q_parse(&ast, work, query, strlen(query))))
		goto cleanup;
	if (gloss) {
		uint32_t *stack = fa_arena_alloc(work, Q_MAX_NODES * sizeof *stack);
		if (!stack) {
			rc = fa_err(FATHOM_ENOMEM, "query expansion");
			goto cleanup;
		}
		if ((rc = q_expand(&ast, gloss, top_words_bind(&ast, an, opts->match,
		                                               ends_like_sentence(query)), stack)))
			goto cleanup;
	}
	if ((rc = q_plan_build(&plan, work, ix, an, &ast, opts->match,
	                        ends_like_sentence(query))))
		goto cleanup;

	c.ix = ix;
	c.opts = opts;
	c.plan = &plan;
	if (opts->time_limit > 0) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		c.deadline_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
		                (uint64_t)(opts->time_limit * 1e9);
	}
	q_scorer_init(&c.sc, opts, ix);
	c.phrase_bonus = opts->phrase_bonus;
	c.prefix_bonus = opts->prefix_bonus;
	for (uint32_t i = 0; i < plan.seq.n; i++)
		c.seq_mask |= 1ull << plan.seq.term[i];
	if ((rc = lookup_terms(&c, work, &plan)) || (rc = q_topk_init(&c.top, work, opts->k)) ||
	    (rc = alloc_scratch(&c, work)))
		goto cleanup;
	q_filter filter;
	if ((rc = q_filter_init(&filter, work, opts, &ast)))
		goto cleanup;

	size_t nseg = ix_nsegments(ix);
	for (size_t s = 0; s < nseg; s++) {
		c.ticks = 1023;   /* a look at the clock before every segment */
		if ((rc = q_over_time(&c)))
			goto cleanup;
		c.seg_index = (uint32_t)s;
		c.seg = ix_segment_at(ix, s);
		if ((rc = open_segment(&c, (uint32_t)s)))
			goto cleanup;
		if (c.nscore == 0)
			continue;
		uint8_t *allowed = NULL;
		if ((rc = q_filter_bitmap(&filter, work, c.seg, &allowed)) ||
		    (rc = q_ident_bitmap(&plan, work, c.seg, &allowed)))
			goto cleanup;
		c.allowed = allowed;
		rc = opts->exhaustive ? q_retrieve_exhaustive(&c) : q_retrieve_pruned(&c);
		if (rc)
			goto cleanup;
	}
	q_topk_sort(&c.top);
	rc = q_results_build(out, &c, an, work);
	if (!rc) {
		fbuf f;
		fbuf_init(&f, 0);
		q_ast_format(&ast, &f);
		rc = f.err ? f.err : q_results_set_parsed(*out, f.len ? (const char *)f.data : "", f.len);
		if (!rc)
			rc = q_results_set_expansions(*out, &ast);
		if (!rc && filter.active) {
			fbuf_reset(&f);
			for (size_t i = 0; i < filter.n; i++)
				fbuf_printf(&f, "%s%s=%s", i ? " " : "", filter.keys[i], filter.values[i]);
			if (filter.lang)
				fbuf_printf(&f, "%slang=%s", f.len ? " " : "", filter.lang);
			if (filter.glob)
				fbuf_printf(&f, "%spath=%s", f.len ? " " : "", filter.glob);
			rc = f.err ? f.err : q_results_set_filters(*out, f.len ? (const char *)f.data : "", f.len);
		}
		if (!rc && c.top.n == 0) {
			fbuf_reset(&f);
			rc = explain_empty(ix, &plan, &filter, &f);
			if (!rc)
				rc = f.err ? f.err : q_results_set_why(*out, f.len ? (const char *)f.data : "", f.len);
		}
		fbuf_free(&f);
		if (rc) {
			fathom_results_free(*out);
			*out = NULL;
		}
	}

cleanup:
	if (shared)
		fa_arena_reset(work);
	else
		fa_arena_free(work);
	return rc;
}
