/*
 * search.c — q_search: the query pipeline, stage by stage (query_int.h
 * names each stage's file):
 *
 *   parse -> route -> expand -> identify -> plan -> retrieve -> fuse ->
 *   rerank -> explain
 *
 * The order differs from the design's sketch where the data demands it:
 * route decides on the query as written, because whether the top level's
 * words bind decides which of them the glossary expands; identify reads
 * the expanded query, as the plan does. Each retrieval source hands over a
 * candidate list; fuse makes one pool of them; rerank (when a reranker is
 * given) reorders its best; explain alone builds what the caller sees.
 *
 * Search options are checked here; those of versions 1 to 3 are read into
 * the current layout first (q_search_opts_upgrade, for fathom_search).
 *
 * All per-query memory comes from one arena released at the end.
 */
#include <stdio.h>

#include "query/query_int.h"
#include "util/worker.h"

/* The one check of fathom_search_opts (fathom_search comes through
 * here); the bounds are query.h's, published by fathom_limit(). */
static int check_opts(const fathom_search_opts *o)
{
	if (o->version != FATHOM_SEARCH_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_search_opts version %u, expected %u",
		              o->version, FATHOM_SEARCH_OPTS_VERSION);
	if (!(o->time_limit >= 0 && o->time_limit <= Q_MAX_TIME_LIMIT))
		return fa_err(FATHOM_EINVAL, "time_limit must be from 0 to %g seconds", Q_MAX_TIME_LIMIT);
	if (o->k == 0 || o->k > Q_MAX_K)
		return fa_err(FATHOM_EINVAL, "k must be between 1 and %d", Q_MAX_K);
	if (o->match < FATHOM_MATCH_AUTO || o->match > FATHOM_MATCH_ANY)
		return fa_err(FATHOM_EINVAL, "unknown match mode %d", o->match);
	if (!(o->k1 >= 0.0f && o->k1 <= Q_MAX_K1) || !(o->b >= 0.0f && o->b <= 1.0f))
		return fa_err(FATHOM_EINVAL, "k1 must be in [0, %g] and b in [0, 1]", Q_MAX_K1);
	if (o->n_field_weights > FATHOM_NFIELDS || (o->n_field_weights && !o->field_weights))
		return fa_err(FATHOM_EINVAL, "%zu field weights for %d fields", o->n_field_weights,
		              FATHOM_NFIELDS);
	for (size_t f = 0; o->field_weights && f < o->n_field_weights; f++)
		if (!(o->field_weights[f] >= 0.0f && o->field_weights[f] <= Q_MAX_FIELD_WEIGHT))
			return fa_err(FATHOM_EINVAL, "field weight of %s must be in [0, %g]",
			              fathom_field_name((int)f), Q_MAX_FIELD_WEIGHT);
	if (!(o->phrase_bonus >= Q_MIN_BONUS && o->phrase_bonus <= Q_MAX_BONUS) ||
	    !(o->prefix_bonus >= Q_MIN_BONUS && o->prefix_bonus <= Q_MAX_BONUS))
		return fa_err(FATHOM_EINVAL, "bonuses are multipliers in [%g, %g]", Q_MIN_BONUS,
		              Q_MAX_BONUS);
	return 0;
}

/* The layout of versions 1 and 2: the weights inline, after match. */
typedef struct search_opts_v2 {
	unsigned version;
	uint32_t k;
	int match;
	float field_weight[FATHOM_NFIELDS];
	float k1, b;
	float phrase_bonus;
	float prefix_bonus;
	const char *const *filters;
	size_t n_filters;
	const char *path_glob;
	const char *lang;
	int exhaustive;
	uint32_t snippet_bytes;
	double time_limit;             /* version 2 */
} search_opts_v2;

void q_search_opts_upgrade(const fathom_search_opts *opts, fathom_search_opts *tmp,
                           float tmp_weights[FATHOM_NFIELDS], const fathom_search_opts **out)
{
	*out = opts;
	if (opts && opts->version == 5) {
		/* a prefix of version 6, whose new fields read as unset */
		fathom_search_opts cur = FATHOM_SEARCH_OPTS_INIT;
		memcpy(&cur, opts, offsetof(fathom_search_opts, mode));
		cur.version = FATHOM_SEARCH_OPTS_VERSION;
		*tmp = cur;
		*out = tmp;
		return;
	}
	if (opts && (opts->version == 3 || opts->version == 4)) {
		/* a prefix of version 5 (version 3: strict, 0, is new), whose
		 * values were all given: one that version 5 reads as unset was
		 * invalid then, and stays so */
		fathom_search_opts cur = FATHOM_SEARCH_OPTS_INIT;
		memcpy(&cur, opts, opts->version == 3 ? offsetof(fathom_search_opts, strict)
		                                      : offsetof(fathom_search_opts, mode));
		cur.version = FATHOM_SEARCH_OPTS_VERSION;
		if (cur.k == 0)
			cur.k = UINT32_MAX;
		if (cur.match == FATHOM_MATCH_DEFAULT)
			cur.match = FATHOM_MATCH_ANY + 1;
		if (cur.k1 < 0)
			cur.k1 = NAN;
		if (cur.b < 0)
			cur.b = NAN;
		if (cur.snippet_bytes == FATHOM_UNSET_SNIPPET)
			cur.snippet_bytes = Q_SNIPPET_MAX;
		if (cur.field_weights && cur.n_field_weights <= FATHOM_NFIELDS) {
			int neg = 0;
			for (size_t f = 0; f < cur.n_field_weights; f++)
				neg |= cur.field_weights[f] < 0;
			if (neg) {
				for (size_t f = 0; f < cur.n_field_weights; f++)
					tmp_weights[f] = cur.field_weights[f] < 0 ? NAN : cur.field_weights[f];
				cur.field_weights = tmp_weights;
			}
		}
		*tmp = cur;
		*out = tmp;
		return;
	}
	if (!opts || (opts->version != 1 && opts->version != 2))
		return;
	/* A version 1 caller's struct ends before time_limit: read no further. */
	search_opts_v2 old;
	memset(&old, 0, sizeof old);
	memcpy(&old, opts, opts->version == 1 ? offsetof(search_opts_v2, time_limit) : sizeof old);
	fathom_search_opts cur = FATHOM_SEARCH_OPTS_INIT;
	cur.k = old.k;
	cur.match = old.match;
	cur.k1 = old.k1;
	cur.b = old.b;
	cur.phrase_bonus = old.phrase_bonus;
	cur.prefix_bonus = old.prefix_bonus;
	cur.filters = old.filters;
	cur.n_filters = old.n_filters;
	cur.path_glob = old.path_glob;
	cur.lang = old.lang;
	cur.exhaustive = old.exhaustive;
	cur.snippet_bytes = old.snippet_bytes;
	cur.time_limit = old.time_limit;
	memcpy(tmp_weights, old.field_weight, sizeof old.field_weight);
	cur.field_weights = tmp_weights;
	cur.n_field_weights = FATHOM_NFIELDS;
	/* read as version 4 is, so that nothing reads as unset */
	cur.version = 4;
	q_search_opts_upgrade(&cur, tmp, tmp_weights, out);
}

void q_search_opts_fill(const fathom_search_opts *opts, fathom_search_opts *tmp,
                        float tmp_weights[FATHOM_NFIELDS], const fathom_search_opts **out)
{
	*out = opts;
	int neg = 0;
	for (size_t f = 0; opts->field_weights && f < opts->n_field_weights && f < FATHOM_NFIELDS; f++)
		neg |= opts->field_weights[f] < 0;
	if (opts->k && opts->match != FATHOM_MATCH_DEFAULT && !(opts->k1 < 0) && !(opts->b < 0) &&
	    opts->snippet_bytes != FATHOM_UNSET_SNIPPET && !neg)
		return;
	*tmp = *opts;
	if (!tmp->k)
		tmp->k = Q_DEFAULT_K;
	if (tmp->match == FATHOM_MATCH_DEFAULT)
		tmp->match = Q_DEFAULT_MATCH;
	if (tmp->k1 < 0)
		tmp->k1 = Q_DEFAULT_K1;
	if (tmp->b < 0)
		tmp->b = Q_DEFAULT_B;
	if (tmp->snippet_bytes == FATHOM_UNSET_SNIPPET)
		tmp->snippet_bytes = Q_DEFAULT_SNIPPET;
	if (neg) {
		static const float defaults[FATHOM_NFIELDS] = FATHOM_FIELD_WEIGHTS_INIT;
		for (size_t f = 0; f < opts->n_field_weights && f < FATHOM_NFIELDS; f++)
			tmp_weights[f] = opts->field_weights[f] < 0 ? defaults[f] : opts->field_weights[f];
		tmp->field_weights = tmp_weights;
	}
	*out = tmp;
}

int q_search(fathom_results **out, ix_index *ix, text_analyzer *an,
             const char *query, const fathom_search_opts *opts)
{
	return q_search_in(out, ix, an, query, opts, NULL, NULL);
}

/* One reading of the query, from route to rerank: what explain reads. */
typedef struct q_pass {
	q_ast ast;
	q_route route;
	q_plan plan;
	q_filter filter;
	q_keyword kw;
	q_vector vec;
	q_cand_list lists[Q_MAX_LISTS]; /* keyword, vector, identifier, grep */
	q_pool pool;
	fathom_route_receipt receipt;
} q_pass;

enum { L_KEYWORD = 0, L_VECTOR = 1, L_IDENT = 2, L_GREP = 3 };

/* Drop the pool's vector-only chunks whose cosine is below min. */
static void drop_weak(q_pool *pool, double min)
{
	size_t w = 0;
	for (size_t i = 0; i < pool->n; i++) {
		const q_pooled *p = &pool->v[i];
		int weak = p->nfound == 1 &&
		           pool->lists[p->found[0].list].src->id == FATHOM_SOURCE_VECTOR &&
		           q_found_cand(pool, &p->found[0])->score < min;
		if (!weak)
			pool->v[w++] = pool->v[i];
	}
	pool->n = w;
	for (size_t i = 0; i < pool->n; i++)
		if (pool->v[i].fused_rank)
			pool->v[i].fused_rank = (uint32_t)i + 1;
}

/* Keep only the candidates of l that full text found (strict mode: every
 * source only reorders what full text found; a query with words beside its
 * identifiers: the pool only confirms). */
static void keep_found(q_cand_list *l, const q_cand_list *kw)
{
	size_t w = 0;
	for (size_t i = 0; i < l->n; i++) {
		int in = 0;
		for (size_t k = 0; k < kw->n && !in; k++)
			in = kw->v[k].seg == l->v[i].seg && kw->v[k].chunk == l->v[i].chunk;
		if (in)
			l->v[w++] = l->v[i];
	}
	l->n = w;
}

/* The late-fusion pool's identifier and grep lists (route.pool). */
static int pool_sources(q_pass *p, fa_arena *work, ix_index *ix, const q_hybrid *hy,
                        uint32_t fetch)
{
	int rc;
	if ((rc = q_ident_cands(work, ix, &p->plan, &p->filter, &p->lists[L_KEYWORD], fetch,
	                        &p->lists[L_IDENT])) ||
	    (rc = q_grep_cands(work, ix, &p->plan, &p->filter, hy ? hy->grep : NULL,
	                       hy ? hy->grep_ctx : NULL, fetch, &p->lists[L_GREP])))
		return rc;
	p->receipt.sources |= 1u << FATHOM_SOURCE_IDENT;
	if (hy && hy->grep)
		p->receipt.sources |= 1u << FATHOM_SOURCE_GREP;
	if (p->route.mode == FATHOM_MODE_STRICT || !p->route.pool_adds) {
		keep_found(&p->lists[L_IDENT], &p->lists[L_KEYWORD]);
		keep_found(&p->lists[L_GREP], &p->lists[L_KEYWORD]);
	}
	return 0;
}

/* fuse: one list as it is; keyword and vector lists by the fusion asked;
 * with the pool's lists, every non-empty list by reciprocal rank. */
static int fuse_lists(q_pass *p, fa_arena *work, const q_hybrid *hy)
{
	int mode = p->route.mode;
	if (!p->route.pool || (!p->lists[L_IDENT].n && !p->lists[L_GREP].n)) {
		if (mode == FATHOM_MODE_KEYWORD)
			return q_fuse(&p->pool, work, &p->lists[L_KEYWORD], 1);
		if (mode == FATHOM_MODE_SEMANTIC)
			return q_fuse(&p->pool, work, &p->lists[L_VECTOR], 1);
		p->receipt.fusion = hy->fusion.method;
		p->receipt.alpha = hy->fusion.weight[0];
		return q_fuse_by(&p->pool, work, p->lists, 2, &hy->fusion);
	}
	/* the pool: the lists that found something, fused by rank */
	q_cand_list *l = fa_arena_alloc(work, Q_MAX_LISTS * sizeof *l);
	if (!l)
		return fa_err(FATHOM_ENOMEM, "pool");
	uint32_t n = 0;
	for (uint32_t i = 0; i < Q_MAX_LISTS; i++)
		if (p->lists[i].n)
			l[n++] = p->lists[i];
	if (n > 1) {
		p->receipt.fusion = FATHOM_FUSION_RRF;
		p->receipt.alpha = 0.5;
	}
	return q_fuse(&p->pool, work, l, n);
}

/* Hybrid's vector side as a task for the helper thread: it reads the
 * pass's plan and filter, which full text only adds to in fields the
 * vectors do not read (the terms' statistics, the identifiers' counts:
 * plan.ident_counter is the keyword source), and writes the pass's vector
 * source and list alone, in memory of its own (hy->vwork). Its error and
 * message come back in the task: fathom_errmsg() is the thread's. */
typedef struct vector_job {
	q_pass *p;
	const q_hybrid *hy;
	ix_index *ix;
	uint32_t fetch;
	int rc;
	char msg[512];
} vector_job;

static void vector_side(void *arg)
{
	vector_job *j = arg;
	j->rc = q_vector_retrieve(&j->p->vec, j->hy->vwork, j->ix, &j->p->plan, &j->p->filter,
	                          &j->hy->qv, j->fetch, &j->p->lists[L_VECTOR]);
	if (j->rc)
		snprintf(j->msg, sizeof j->msg, "%s", fathom_errmsg());
}

static int run_pass(q_pass *p, fa_arena *work, ix_index *ix, text_analyzer *an, const char *query,
                    const fathom_search_opts *opts, const struct q_glossary *gloss,
                    const q_reranker *rr, const q_hybrid *hy)
{
	int asked = hy ? hy->mode : FATHOM_MODE_KEYWORD;
	int rc;
	/* route, on the query as written */
	if ((rc = q_route_query(&p->route, work, &p->ast, an, query, opts,
	                        rr && rr->score ? rr->depth : 0, asked, hy ? hy->overfetch : 1)))
		return rc;
	int mode = p->route.mode;
	/* expand */
	if (gloss) {
		uint32_t *stack = fa_arena_alloc(work, Q_MAX_NODES * sizeof *stack);
		if (!stack)
			return fa_err(FATHOM_ENOMEM, "query expansion");
		/* A keyword query's glossary words expand as they did when
		 * its words were required: into a group that binds. */
		if ((rc = q_expand(&p->ast, gloss, p->route.top_binds || p->route.coord, stack)))
			return rc;
	}
	/* identify, then the plan */
	if ((rc = q_identify(&p->plan, work, ix, an, &p->ast, p->route.ident_any)) ||
	    (rc = q_plan_build(&p->plan, work, ix, an, &p->ast, p->route.top_binds, p->route.coord)))
		return rc;
	/* the source that searches every segment counts the identifiers'
	 * chunks for the receipt */
	p->plan.ident_counter = mode == FATHOM_MODE_SEMANTIC ? FATHOM_SOURCE_VECTOR
	                                                     : FATHOM_SOURCE_KEYWORD;
	/* retrieve: full text (in every mode but semantic, which still
	 * builds the plan: its identifiers pre-filter the vectors), vectors,
	 * and the pool's other sources */
	uint32_t fetch = p->route.fetch;
	if (mode == FATHOM_MODE_HYBRID && fetch <= UINT32_MAX / p->route.overfetch)
		fetch = FA_MIN(fetch * p->route.overfetch, (uint32_t)Q_MAX_K);
	p->receipt = (fathom_route_receipt){ p->route.shape, asked, mode, -1, 1.0, p->route.k,
	                                     fetch, 0, hy && hy->embedder ? hy->embedder : "",
	                                     0, 0, 0 };
	if ((rc = q_filter_init(&p->filter, work, opts, &p->ast)))
		return rc;
	/* hybrid: the vectors on the helper thread, full text here */
	vector_job job;
	int beside = mode == FATHOM_MODE_HYBRID && hy->qv.v && fa_worker_usable(hy->worker) &&
	             hy->vwork;
	if (beside) {
		job = (vector_job){ .p = p, .hy = hy, .ix = ix, .fetch = fetch };
		fa_worker_post(hy->worker, vector_side, &job);
	}
	if (mode == FATHOM_MODE_SEMANTIC) {
		/* the keyword source's state stays empty: explain reads it */
		if ((rc = q_keyword_retrieve(&p->kw, work, ix, an, &p->plan, &p->filter, opts, 0,
		                             &p->lists[L_KEYWORD])))
			return rc;
	} else if ((rc = q_keyword_retrieve(&p->kw, work, ix, an, &p->plan, &p->filter, opts, fetch,
	                                    &p->lists[L_KEYWORD]))) {
		if (beside)
			fa_worker_finish(hy->worker);
		return rc;
	} else {
		p->receipt.sources |= 1u << FATHOM_SOURCE_KEYWORD;
	}
	if (beside) {
		fa_worker_finish(hy->worker);
		if ((rc = job.rc))
			return fa_err(rc, "%s", job.msg);
	} else if (mode == FATHOM_MODE_SEMANTIC || mode == FATHOM_MODE_HYBRID)
		rc = q_vector_retrieve(&p->vec, work, ix, &p->plan, &p->filter, &hy->qv, fetch,
		                       &p->lists[L_VECTOR]);
	else if (mode == FATHOM_MODE_STRICT)
		rc = q_vector_rescore(&p->vec, work, ix, &hy->qv, &p->lists[L_KEYWORD],
		                      &p->lists[L_VECTOR]);
	if (rc)
		return rc;
	if (mode != FATHOM_MODE_KEYWORD && hy->qv.v) {
		p->receipt.sources |= 1u << FATHOM_SOURCE_VECTOR;
		p->receipt.vector_scored = p->vec.scored;
		p->receipt.vector_graphs = (uint32_t)FA_MIN(p->vec.graph_segments, (uint64_t)UINT32_MAX);
		p->receipt.vector_missing = p->vec.chunks_without + p->vec.chunks_other;
	}
	if (p->route.pool && (rc = pool_sources(p, work, ix, hy, fetch)))
		return rc;
	/* fuse, rerank */
	if ((rc = fuse_lists(p, work, hy)))
		return rc;
	if (mode != FATHOM_MODE_KEYWORD && hy->min_similarity > 0)
		drop_weak(&p->pool, hy->min_similarity);
	if (rr && rr->score)
		p->receipt.sources |= 1u << FATHOM_SOURCE_RERANK;
	return q_rerank(&p->pool, ix, rr, query, p->route.k, work);
}

/* The default mode never starves on a phrase: when the query's quoted
 * phrases leave it with no answer, their words are ranked instead, and the
 * receipt says so. Only under auto; --strict and --match all (and any) keep
 * the phrase, and its empty answer's reason. */
static int phrases_may_relax(const fathom_search_opts *o)
{
	return o->match == FATHOM_MATCH_AUTO && !o->strict;
}

/* Whether a pass's words found anything: full text's list in the modes
 * that run it (hybrid's vectors find something for any query, and must
 * not keep a phrase that matches nothing from being relaxed, as it is in
 * keyword mode), else the pool. */
static int found_words(const q_pass *p)
{
	if (p->route.mode == FATHOM_MODE_SEMANTIC)
		return p->pool.n > 0;
	return p->lists[L_KEYWORD].n > 0;
}

int q_search_run(fathom_results **out, ix_index *ix, text_analyzer *an, const char *query,
                 const fathom_search_opts *opts, fa_arena *shared,
                 const struct q_glossary *gloss, const q_reranker *rr)
{
	return q_search_hybrid(out, ix, an, query, opts, shared, gloss, rr, NULL);
}

int q_search_hybrid(fathom_results **out, ix_index *ix, text_analyzer *an, const char *query,
                    const fathom_search_opts *opts, fa_arena *shared,
                    const struct q_glossary *gloss, const q_reranker *rr, const q_hybrid *hy)
{
	fathom_search_opts def = FATHOM_SEARCH_OPTS_INIT, filled;
	float weights[FATHOM_NFIELDS];
	if (!out)
		return fa_err(FATHOM_EINVAL, "no output for the results");
	*out = NULL;
	if (!ix || !an || !query)
		return fa_err(FATHOM_EINVAL, "no index, analyser or query");
	if (!opts)
		opts = &def;
	if (opts->version == FATHOM_SEARCH_OPTS_VERSION)
		q_search_opts_fill(opts, &filled, weights, &opts);
	int rc = check_opts(opts);
	if (rc)
		return rc;

	fa_arena own, *work = shared;
	if (!work) {
		fa_arena_init(&own, 64 * 1024, 0);
		work = &own;
	}
	q_pass *p = fa_arena_alloc(work, 2 * sizeof *p), *use = p;
	fathom_results *r = NULL;
	if (!p) {
		rc = fa_err(FATHOM_ENOMEM, "query");
		goto cleanup;
	}
	memset(p, 0, 2 * sizeof *p);
	/* parse, then route ... rerank */
	if ((rc = q_parse(&p[0].ast, work, query, strlen(query), opts->strict)) ||
	    (rc = run_pass(&p[0], work, ix, an, query, opts, gloss, rr, hy)))
		goto cleanup;
	uint32_t nrelaxed = 0;
	if (!found_words(&p[0]) && phrases_may_relax(opts)) {
		/* the phrases' words; kept only when they find something, so an
		 * empty answer still gives the reason of the query as written */
		rc = q_parse_relaxed(&p[1].ast, work, query, strlen(query), &p[0].ast, &nrelaxed);
		if (rc == FATHOM_ENOMEM)
			goto cleanup;
		if (rc) {
			/* the phrases' words pass the node limit: the query as
			 * written is the answer */
			fa_err_clear();
			nrelaxed = 0;
			rc = 0;
		}
		if (nrelaxed && (rc = run_pass(&p[1], work, ix, an, query, opts, gloss, rr, hy)))
			goto cleanup;
		if (nrelaxed && found_words(&p[1]))
			use = &p[1];
	}
	/* explain */
	if ((rc = q_results_new(&r, NULL)))
		goto cleanup;
	q_results_set_scored(r, p[0].kw.c.scored + (use == &p[1] ? p[1].kw.c.scored : 0));
	if ((rc = q_results_set_route(r, &use->receipt)) ||
	    (rc = q_explain_query(r, ix, &use->plan, &use->ast, &use->filter, use->pool.n == 0)) ||
	    (rc = q_explain_hits(r, ix, &use->pool, use->route.k, opts->snippet_bytes)))
		goto cleanup;
	*out = r;
	r = NULL;

cleanup:
	fathom_results_free(r);
	if (shared)
		fa_arena_reset(work);
	else
		fa_arena_free(work);
	return rc;
}

int q_search_in(fathom_results **out, ix_index *ix, text_analyzer *an,
                const char *query, const fathom_search_opts *opts, fa_arena *shared,
                const struct q_glossary *gloss)
{
	return q_search_run(out, ix, an, query, opts, shared, gloss, NULL);
}
