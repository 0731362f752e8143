/*
 * results.c — the result set handed to the caller: one fathom_hit per top-k
 * entry with its document, its receipt (per-field score parts, bonus,
 * matched terms per field) and its snippet, plus the analysed query terms.
 * Every string a hit points to lives in the result set's own arena, so
 * fathom_results_free releases it all at once.
 */
#include "query/query_int.h"

#define Q_SNIPPET_MAX 65536
/* A snippet never needs more of a chunk than this. */
#define Q_SNIPPET_READ_MAX (1u << 20)

struct fathom_results {
	fa_arena arena;
	fathom_hit *hits;
	size_t n;
	size_t cap;           /* hits allocated (q_results_add) */
	uint64_t scored;
	const char **terms;
	int *required;
	int *negated;
	size_t nterms;
	const char *parsed;   /* the query's canonical form */
	const char *why;      /* an empty answer's reason */
	const char *filters;  /* the filters applied, as key=value ... */
	fathom_ident_receipt *idents;
	size_t nidents;
	fathom_expansion *exps;
	size_t nexps;
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
	r->why = r->filters = "";
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

int q_results_add(fathom_results *r, const fathom_hit *h)
{
	if (r->n == r->cap) {
		/* the hits live in the arena: a new array twice the size */
		size_t want = r->cap ? r->cap * 2 : 16;
		fathom_hit *nh = fa_arena_alloc(&r->arena, want * sizeof *nh);
		if (!nh)
			return fa_err(FATHOM_ENOMEM, "results");
		if (r->n)
			memcpy(nh, r->hits, r->n * sizeof *nh);
		r->hits = nh;
		r->cap = want;
	}
	r->hits[r->n++] = *h;
	return 0;
}

void fathom_results_free(fathom_results *r)
{
	if (!r)
		return;
	fa_arena_free(&r->arena);
	fa_free(r);
}

static const char *dup_str(fa_arena *a, const char *s)
{
	return fa_arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

/* The term frequencies of chunk d in segment s, per term (0 when absent). */
static int hit_tf(q_ctx *c, ix_postings *p, uint32_t s, uint32_t d,
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

/* Field parts of the score and the matched terms of each field. Each
 * term's score is split across fields in proportion to the field's share
 * of its tf~. */
static int hit_receipt(fathom_results *r, q_ctx *c, fathom_hit *h,
                       uint16_t (*tf)[FATHOM_NFIELDS], const ix_chunk_info *ci)
{
	const q_plan *pl = c->plan;
	const q_scorer *sc = &c->sc;
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		uint32_t n = 0;
		for (uint32_t t = 0; t < pl->nterms; t++)
			n += tf[t][f] > 0;
		const char **m = fa_arena_alloc(&r->arena, (n ? n : 1) * sizeof *m);
		if (!m)
			return fa_err(FATHOM_ENOMEM, "hit receipt");
		n = 0;
		for (uint32_t t = 0; t < pl->nterms; t++)
			if (tf[t][f] > 0)
				m[n++] = r->terms[t];
		h->matched[f] = m;
		h->n_matched[f] = n;
		h->field_score[f] = 0.0;
	}
	for (uint32_t t = 0; t < pl->nterms; t++) {
		double x = q_tf_tilde(sc, tf[t], ci->field_len);
		if (!(x > 0.0))
			continue;
		double s = q_saturate(sc, pl->terms[t].idf, x);
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			if (tf[t][f])
				h->field_score[f] += s * (sc->w[f] * (double)tf[t][f] /
				                          q_field_norm(sc, f, (double)ci->field_len[f])) / x;
	}
	return 0;
}

static int build_hit(fathom_results *r, q_ctx *c, text_analyzer *an, q_snip_work *w,
                     const q_hitref *ref, fathom_hit *h, ix_postings *p,
                     uint16_t (*tf)[FATHOM_NFIELDS], fbuf *text)
{
	ix_segment *s = ix_segment_at(c->ix, ref->seg);
	ix_chunk_info ci;
	ix_doc_info di;
	int rc = seg_chunk(s, ref->chunk, &ci);
	if (!rc)
		rc = seg_doc(s, ci.doc, &di);
	if (rc)
		return rc;
	memset(h, 0, sizeof *h);
	h->chunk_id = ((uint64_t)seg_id(s) << 32) | ref->chunk;
	h->doc_id = dup_str(&r->arena, di.key);
	h->path = dup_str(&r->arena, di.path);
	h->title = dup_str(&r->arena, di.title);
	h->url = dup_str(&r->arena, di.url);
	if (!h->doc_id || !h->path || !h->title || !h->url)
		return fa_err(FATHOM_ENOMEM, "hit");
	h->chunk_order = ci.order;
	h->line_start = ci.line_start;
	h->line_end = ci.line_end;
	h->byte_start = ci.byte_start;
	h->byte_end = ci.byte_end;
	h->score = ref->score;
	h->bonus = ref->bonus;
	if (c->hit_tf)
		tf = c->hit_tf + (size_t)ref->slot * c->plan->nterms;
	else if ((rc = hit_tf(c, p, ref->seg, ref->chunk, tf)))
		return rc;
	if ((rc = hit_receipt(r, c, h, tf, &ci)))
		return rc;

	/* snippet_bytes 0: the caller wants ids and scores only (batch runs,
	 * benchmarks), so skip reading and decompressing the text. */
	h->snippet = "";
	if (c->opts->snippet_bytes == 0)
		return 0;
	uint32_t target = FA_MIN(c->opts->snippet_bytes, (uint32_t)Q_SNIPPET_MAX);
	uint64_t len = ci.byte_end > ci.byte_start ? ci.byte_end - ci.byte_start : 0;
	len = FA_MIN(len, (uint64_t)Q_SNIPPET_READ_MAX);
	fbuf_reset(text);
	if (len && (rc = seg_doc_text(s, ci.doc, ci.byte_start, len, text)))
		return rc;
	fathom_span *hl;
	uint32_t *lines;
	rc = q_snippet(&r->arena, w, an, c->plan, (const char *)text->data, text->len, target,
	               ci.line_start, &h->snippet, &hl, &h->n_highlights, &lines, &h->n_match_lines);
	h->highlights = hl;
	h->match_lines = lines;
	return rc;
}

int q_results_build(fathom_results **out, q_ctx *c, text_analyzer *an, fa_arena *scratch)
{
	*out = NULL;
	fathom_results *r = fa_calloc(1, sizeof *r);
	if (!r)
		return fa_err(FATHOM_ENOMEM, "results");
	fa_arena_init(&r->arena, 16 * 1024, 0);
	const q_plan *pl = c->plan;
	int rc = 0;
	fbuf text;
	fbuf_init(&text, Q_SNIPPET_READ_MAX + 4096);
	r->scored = c->scored;
	r->nterms = pl->nterms;
	r->terms = fa_arena_alloc(&r->arena, (pl->nterms ? pl->nterms : 1) * sizeof *r->terms);
	r->required = fa_arena_alloc(&r->arena, (pl->nterms ? pl->nterms : 1) * sizeof *r->required);
	r->negated = fa_arena_alloc(&r->arena, (pl->nterms ? pl->nterms : 1) * sizeof *r->negated);
	r->idents = fa_arena_calloc(&r->arena, pl->nidents ? pl->nidents : 1, sizeof *r->idents);
	for (uint32_t i = 0; r->idents && i < pl->nidents; i++) {
		const q_ident *x = &pl->idents[i];
		fathom_ident_receipt *y = &r->idents[i];
		y->text = fa_arena_strndup(&r->arena, x->text, x->len);
		y->key = fa_arena_strndup(&r->arena, x->key, x->key_len);
		y->category = text_ident_cat_name(x->cat);
		y->applied = x->applied;
		y->chunks = x->chunks;
		if (y->text && y->key)
			r->nidents = i + 1;
	}
	r->hits = fa_arena_calloc(&r->arena, c->top.n ? c->top.n : 1, sizeof *r->hits);
	ix_postings *p = fa_arena_alloc(scratch, sizeof *p);
	uint16_t (*tf)[FATHOM_NFIELDS] = fa_arena_alloc(scratch,
	                                    (pl->nterms ? pl->nterms : 1) * sizeof *tf);
	q_snip_work w;
	if (!r->terms || !r->required || !r->hits || !p || !tf ||
	    q_snip_work_init(&w, scratch, pl->nterms) != 0) {
		rc = fa_err(FATHOM_ENOMEM, "results");
		goto fail;
	}
	for (uint32_t t = 0; t < pl->nterms; t++) {
		r->terms[t] = fa_arena_strndup(&r->arena, pl->terms[t].text, pl->terms[t].len);
		r->required[t] = pl->terms[t].required;
		if (r->negated)
			r->negated[t] = !pl->terms[t].scored;
		if (!r->terms[t]) {
			rc = fa_err(FATHOM_ENOMEM, "results");
			goto fail;
		}
	}
	for (uint32_t i = 0; i < c->top.n; i++) {
		if ((rc = build_hit(r, c, an, &w, &c->top.h[i], &r->hits[i], p, tf, &text)))
			goto fail;
		r->n++;
	}
	fbuf_free(&text);
	*out = r;
	return 0;
fail:
	fbuf_free(&text);
	fathom_results_free(r);
	return rc;
}
