/*
 * results.c — the result set handed to the caller and its accessors: the
 * hits (explain.c builds them), the analysed query terms, and the query's
 * receipt. Every string a hit points to lives in the result set's own
 * arena, so fathom_results_free releases it all at once.
 */
#include "query/query_int.h"

struct fathom_results {
	fa_arena arena;
	fathom_hit *hits;
	size_t n;
	size_t cap;           /* hits allocated (q_results_reserve) */
	uint64_t scored;
	const char **terms;
	int *required;
	int *negated;
	size_t nterms;
	const char *parsed;   /* the query's canonical form */
	const char *why;      /* an empty answer's reason */
	const char *literal;  /* what the lenient parse read literally */
	const char *filters;  /* the filters applied, as key=value ... */
	fathom_ident_receipt *idents;
	size_t nidents;
	fathom_expansion *exps;
	size_t nexps;
	fathom_route_receipt route;
};

size_t fathom_results_nexpansions(const fathom_results *r)
{
	return r ? r->nexps : 0;
}

const fathom_expansion *fathom_results_expansion(const fathom_results *r, size_t i)
{
	return r && i < r->nexps ? &r->exps[i] : NULL;
}

int q_results_set_expansions(fathom_results *r, const q_ast *t)
{
	if (!t->nexp)
		return 0;
	r->exps = fa_arena_calloc(&r->arena, t->nexp, sizeof *r->exps);
	if (!r->exps)
		return fa_err(FATHOM_ENOMEM, "results");
	for (uint32_t i = 0; i < t->nexp; i++) {
		const q_expansion *e = &t->exp[i];
		fathom_expansion *o = &r->exps[i];
		const char **al = fa_arena_alloc(&r->arena, (e->nterms ? e->nterms : 1) * sizeof *al);
		o->text = fa_arena_strndup(&r->arena, e->text, e->len);
		if (!al || !o->text)
			return fa_err(FATHOM_ENOMEM, "results");
		for (uint32_t k = 0; k < e->nterms; k++)
			if (!(al[k] = fa_arena_strndup(&r->arena, e->terms[k], strlen(e->terms[k]))))
				return fa_err(FATHOM_ENOMEM, "results");
		o->group = e->group;
		o->aliases = al;
		o->n_aliases = e->nterms;
		r->nexps = i + 1;
	}
	return 0;
}

size_t fathom_results_nidents(const fathom_results *r)
{
	return r ? r->nidents : 0;
}

const fathom_ident_receipt *fathom_results_ident(const fathom_results *r, size_t i)
{
	return r && i < r->nidents ? &r->idents[i] : NULL;
}

const char *fathom_results_parsed(const fathom_results *r)
{
	return r && r->parsed ? r->parsed : "";
}

int fathom_results_term_negated(const fathom_results *r, size_t i)
{
	return r && i < r->nterms && r->negated ? r->negated[i] : 0;
}

const char *fathom_results_filters(const fathom_results *r)
{
	return r && r->filters ? r->filters : "";
}

int q_results_set_filters(fathom_results *r, const char *s, size_t n)
{
	r->filters = fa_arena_strndup(&r->arena, s, n);
	return r->filters ? 0 : fa_err(FATHOM_ENOMEM, "results");
}

const char *fathom_results_why(const fathom_results *r)
{
	return r && r->why ? r->why : "";
}

const char *fathom_results_literal(const fathom_results *r)
{
	return r && r->literal ? r->literal : "";
}

int q_results_set_literal(fathom_results *r, const char *s, size_t n)
{
	r->literal = fa_arena_strndup(&r->arena, s, n);
	return r->literal ? 0 : fa_err(FATHOM_ENOMEM, "results");
}

int q_results_set_why(fathom_results *r, const char *s, size_t n)
{
	r->why = fa_arena_strndup(&r->arena, s, n);
	return r->why ? 0 : fa_err(FATHOM_ENOMEM, "results");
}

int q_results_set_parsed(fathom_results *r, const char *s, size_t n)
{
	r->parsed = fa_arena_strndup(&r->arena, s, n);
	return r->parsed ? 0 : fa_err(FATHOM_ENOMEM, "results");
}

size_t fathom_results_count(const fathom_results *r)
{
	return r ? r->n : 0;
}

const fathom_hit *fathom_results_hit(const fathom_results *r, size_t i)
{
	return r && i < r->n ? &r->hits[i] : NULL;
}

uint64_t fathom_results_scored(const fathom_results *r)
{
	return r ? r->scored : 0;
}

size_t fathom_results_nterms(const fathom_results *r)
{
	return r ? r->nterms : 0;
}

const char *fathom_results_term(const fathom_results *r, size_t i, int *required)
{
	if (!r || i >= r->nterms) {
		if (required)
			*required = 0;
		return NULL;
	}
	if (required)
		*required = r->required[i];
	return r->terms[i];
}

int q_results_new(fathom_results **out, const char *parsed)
{
	*out = NULL;
	fathom_results *r = fa_calloc(1, sizeof *r);
	if (!r)
		return fa_err(FATHOM_ENOMEM, "results");
	fa_arena_init(&r->arena, 16 * 1024, 0);
	r->parsed = fa_arena_strndup(&r->arena, parsed ? parsed : "", parsed ? strlen(parsed) : 0);
	r->why = r->filters = r->literal = "";
	r->route.shape = FATHOM_SHAPE_KEYWORDS;
	r->route.fusion = -1;
	r->route.embedder = "";
	if (!r->parsed) {
		fathom_results_free(r);
		return fa_err(FATHOM_ENOMEM, "results");
	}
	*out = r;
	return 0;
}

fa_arena *q_results_arena(fathom_results *r)
{
	return &r->arena;
}

int q_results_reserve(fathom_results *r, size_t n)
{
	if (n <= r->cap - r->n)
		return 0;
	size_t want, bytes;
	if (fa_add(r->n, n, &want) || fa_mul(want, sizeof *r->hits, &bytes))
		return fa_err(FATHOM_ETOOBIG, "results");
	fathom_hit *nh = fa_arena_alloc(&r->arena, bytes);
	if (!nh)
		return fa_err(FATHOM_ENOMEM, "results");
	if (r->n)
		memcpy(nh, r->hits, r->n * sizeof *nh);
	r->hits = nh;
	r->cap = want;
	return 0;
}

fathom_hit *q_results_next_hit(fathom_results *r)
{
	fathom_hit *h = &r->hits[r->n++];
	memset(h, 0, sizeof *h);
	return h;
}

void q_results_set_scored(fathom_results *r, uint64_t scored)
{
	r->scored = scored;
}

const char *const *q_results_terms(const fathom_results *r)
{
	return r->terms;
}

int q_results_set_terms(fathom_results *r, const q_plan *pl)
{
	size_t n = pl->nterms ? pl->nterms : 1;
	r->terms = fa_arena_alloc(&r->arena, n * sizeof *r->terms);
	r->required = fa_arena_alloc(&r->arena, n * sizeof *r->required);
	r->negated = fa_arena_alloc(&r->arena, n * sizeof *r->negated);
	r->idents = fa_arena_calloc(&r->arena, pl->nidents ? pl->nidents : 1, sizeof *r->idents);
	if (!r->terms || !r->required || !r->negated || !r->idents)
		return fa_err(FATHOM_ENOMEM, "results");
	for (uint32_t i = 0; i < pl->nidents; i++) {
		const q_ident *x = &pl->idents[i];
		fathom_ident_receipt *y = &r->idents[i];
		y->text = fa_arena_strndup(&r->arena, x->text, x->len);
		y->key = fa_arena_strndup(&r->arena, x->key, x->key_len);
		y->category = text_ident_cat_name(x->cat);
		y->applied = x->applied;
		y->chunks = x->chunks;
		if (!y->text || !y->key)
			return fa_err(FATHOM_ENOMEM, "results");
		r->nidents = i + 1;
	}
	for (uint32_t t = 0; t < pl->nterms; t++) {
		r->terms[t] = fa_arena_strndup(&r->arena, pl->terms[t].text, pl->terms[t].len);
		r->required[t] = pl->terms[t].required;
		r->negated[t] = !pl->terms[t].scored;
		if (!r->terms[t])
			return fa_err(FATHOM_ENOMEM, "results");
		r->nterms = t + 1;
	}
	return 0;
}

const char *fathom_source_name(int source)
{
	switch (source) {
	case FATHOM_SOURCE_KEYWORD: return "keyword";
	case FATHOM_SOURCE_GREP: return "grep";
	case FATHOM_SOURCE_VECTOR: return "vector";
	case FATHOM_SOURCE_FUSED: return "fused";
	case FATHOM_SOURCE_RERANK: return "rerank";
	case FATHOM_SOURCE_IDENT: return "ident";
	default: return NULL;
	}
}

const fathom_source_score *fathom_hit_source(const fathom_hit *h, int source)
{
	for (uint32_t i = 0; h && i < h->n_sources; i++)
		if (h->sources[i].source == source)
			return &h->sources[i];
	return NULL;
}

void fathom_results_free(fathom_results *r)
{
	if (!r)
		return;
	fa_arena_free(&r->arena);
	fa_free(r);
}


const char *fathom_shape_name(int shape)
{
	switch (shape) {
	case FATHOM_SHAPE_KEYWORDS: return "keywords";
	case FATHOM_SHAPE_QUESTION: return "question";
	case FATHOM_SHAPE_IDENTIFIER: return "identifier";
	case FATHOM_SHAPE_COMPARISON: return "comparison";
	default: return NULL;
	}
}

const fathom_route_receipt *fathom_results_route(const fathom_results *r)
{
	return r ? &r->route : NULL;
}

int q_results_set_route(fathom_results *r, const fathom_route_receipt *rt)
{
	r->route = *rt;
	r->route.embedder = fa_arena_strndup(&r->arena, rt->embedder ? rt->embedder : "",
	                                     rt->embedder ? strlen(rt->embedder) : 0);
	return r->route.embedder ? 0 : fa_err(FATHOM_ENOMEM, "results");
}
