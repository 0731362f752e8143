/*
 * explain.c — the last stage: what the caller sees. For the best k of the
 * final pool, a fathom_hit each: the document, the chunk's place in it,
 * every source's score and rank, and what each source has to say about the
 * chunk (the keyword receipt, matching lines), then a snippet. For the
 * query, its receipt: the terms as analysed, the identifiers, the glossary
 * groups that fired, the filters, and why an empty answer is empty.
 *
 * It runs after every ranking stage, so a reranker has read the chunks
 * before anything is presented, and nothing is made for a chunk that is
 * not shown. Every string a hit points to lives in the result set's arena.
 */
#include "query/query_int.h"

static const char *dup_str(fa_arena *a, const char *s)
{
	return fa_arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

/* The sources of a pooled chunk, in pipeline order: the lists that found
 * it, then fusion, then the reranker. */
static int hit_sources(fathom_results *r, const q_pool *pool, const q_pooled *p, fathom_hit *h)
{
	fathom_source_score *v = fa_arena_alloc(q_results_arena(r),
	                                        (p->nfound + 2) * sizeof *v);
	if (!v)
		return fa_err(FATHOM_ENOMEM, "hit sources");
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->nfound; i++) {
		const q_cand *c = q_found_cand(pool, &p->found[i]);
		v[n++] = (fathom_source_score){ pool->lists[p->found[i].list].src->id, p->found[i].rank,
		                                c->score };
	}
	if (p->fused_rank)
		v[n++] = (fathom_source_score){ FATHOM_SOURCE_FUSED, p->fused_rank, p->fused };
	if (p->rerank_rank)
		v[n++] = (fathom_source_score){ FATHOM_SOURCE_RERANK, p->rerank_rank, p->rerank };
	h->sources = v;
	h->n_sources = n;
	return 0;
}

static int build_hit(fathom_results *r, ix_index *ix, const q_pool *pool, size_t rank,
                     uint32_t snippet_bytes, fbuf *text)
{
	const q_pooled *p = &pool->v[rank];
	ix_segment *s = ix_segment_at(ix, p->seg);
	fa_arena *a = q_results_arena(r);
	ix_chunk_info ci;
	ix_doc_info di;
	int rc = seg_chunk(s, p->chunk, &ci);
	if (!rc)
		rc = seg_doc(s, ci.doc, &di);
	if (rc)
		return rc;
	fathom_hit *h = q_results_next_hit(r);
	h->chunk_id = ((uint64_t)seg_id(s) << 32) | p->chunk;
	h->doc_id = dup_str(a, di.key);
	h->path = dup_str(a, di.path);
	h->title = dup_str(a, di.title);
	h->url = dup_str(a, di.url);
	if (!h->doc_id || !h->path || !h->title || !h->url)
		return fa_err(FATHOM_ENOMEM, "hit");
	h->chunk_order = ci.order;
	h->line_start = ci.line_start;
	h->line_end = ci.line_end;
	h->byte_start = ci.byte_start;
	h->byte_end = ci.byte_end;
	h->score = p->score;
	h->bonus = 1.0;
	if ((rc = hit_sources(r, pool, p, h)))
		return rc;
	for (uint32_t i = 0; i < p->nfound; i++) {
		const q_source *src = pool->lists[p->found[i].list].src;
		if (src->receipt &&
		    (rc = src->receipt(src, q_found_cand(pool, &p->found[i]), &ci, h, r)))
			return rc;
	}
	/* snippet_bytes 0: the caller wants ids and scores only (batch runs,
	 * benchmarks), so skip reading and decompressing the text, and the
	 * stat that tells whether the file changed since (grep's rule), which
	 * is about the text shown. */
	if (snippet_bytes)
		h->stale = ix_doc_stale(ix, &di);
	if (h->snippet || snippet_bytes == 0) {
		if (!h->snippet)
			h->snippet = "";
		return 0;
	}
	h->snippet = "";
	for (uint32_t i = 0; i < p->nfound; i++) {
		const q_source *src = pool->lists[p->found[i].list].src;
		if (!src->snippet)
			continue;
		if ((rc = q_chunk_text(ix, p->seg, &ci, text)))
			return rc;
		return src->snippet(src, q_found_cand(pool, &p->found[i]), (const char *)text->data,
		                    text->len, snippet_bytes, ci.line_start, h, r);
	}
	return 0;
}

int q_explain_hits(fathom_results *r, ix_index *ix, const q_pool *pool, uint32_t k,
                   uint32_t snippet_bytes)
{
	size_t n = FA_MIN(pool->n, (size_t)k);
	int rc = q_results_reserve(r, n);
	if (rc)
		return rc;
	fbuf text;
	fbuf_init(&text, Q_CHUNK_READ_MAX + 4096);
	for (size_t i = 0; i < n && !rc; i++)
		rc = build_hit(r, ix, pool, i, snippet_bytes, &text);
	fbuf_free(&text);
	return rc;
}

/* ---- the query's receipt -------------------------------------------------------- */

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

/* Is the term typed inside an applied identifier (its own words)? */
static int in_applied_ident(const q_plan *p, const q_term *qt)
{
	for (uint32_t k = 0; k < p->nidents; k++) {
		const q_ident *x = &p->idents[k];
		if (x->applied && qt->src >= x->text && qt->src + qt->src_len <= x->text + x->len)
			return 1;
	}
	return 0;
}

/* A word of the query beside its identifiers: required (a ranked query:
 * scored), typed, and not inside an applied identifier. */
static int other_word(const q_plan *p, const q_term *qt, int ranked)
{
	return (ranked ? qt->scored : qt->required) && qt->src && !in_applied_ident(p, qt);
}

/* The identifiers filter, and the chunks holding them hold none of the
 * other words (required ones; a ranked query's scored ones): name both.
 * "identifier CD169 occurs in 4 chunks, but none of them has "xyzzy"".
 * *said: 1 when it said so (else why holds a start to discard). Several
 * identifiers in a ranked query: a chunk needs one of them. */
static int explain_ident_alone(ix_index *ix, const q_plan *p, fbuf *why, int *said)
{
	*said = 0;
	int ranked = p->nrequired == 0, rc;
	uint32_t applied = 0, others = 0;
	for (uint32_t k = 0; k < p->nidents; k++)
		applied += p->idents[k].applied != 0;
	for (uint32_t t = 0; t < p->nterms; t++)
		others += other_word(p, &p->terms[t], ranked);
	if (applied == 0)
		return 0;
	uint32_t named = 0;
	for (uint32_t k = 0; k < p->nidents; k++) {
		const q_ident *x = &p->idents[k];
		uint64_t n = 0;
		if (!x->applied)
			continue;
		if ((rc = q_ident_count(ix, x, &n)))
			return rc;
		fbuf_printf(why, "%sidentifier %.*s occurs in %llu chunk%s", named++ ? ", " : "",
		            (int)x->len, x->text, (unsigned long long)n, n == 1 ? "" : "s");
	}
	if (others == 0) {
		/* identifiers alone, required together */
		fbuf_puts(why, applied > 1 ? ", but never together" : "");
		*said = applied > 1;
		return 0;
	}
	fbuf_puts(why, applied > 1 && !p->ident_any ? ", but none of those holding them all has "
	                                           : ", but none of them has ");
	if (!ranked && others > 1)
		fbuf_puts(why, "all of ");
	named = 0;
	uint32_t absent = 0;
	for (uint32_t t = 0; t < p->nterms; t++) {
		const q_term *qt = &p->terms[t];
		if (!other_word(p, qt, ranked))
			continue;
		fbuf_printf(why, "%s\"%.*s\"", named++ ? (ranked ? " or " : ", ") : "", (int)qt->src_len,
		            qt->src);
		absent += qt->df == 0;
	}
	if (absent) {
		fbuf_puts(why, " (");
		named = 0;
		for (uint32_t t = 0; t < p->nterms; t++) {
			const q_term *qt = &p->terms[t];
			if (other_word(p, qt, ranked) && qt->df == 0)
				fbuf_printf(why, "%s\"%.*s\"", named++ ? ", " : "", (int)qt->src_len, qt->src);
		}
		fbuf_puts(why, absent > 1 ? " occur in no document)" : " occurs in no document)");
	}
	*said = 1;
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
	/* Only where the words alone decide (no OR, phrase or filter that
	 * could be what failed). */
	if (!f->active && p->nidents && !p->nphrases && (p->trivial || p->mroot == UINT32_MAX)) {
		int said = 0, rc = explain_ident_alone(ix, p, why, &said);
		if (rc || said)
			return rc;
		fbuf_reset(why);
	}
	for (uint32_t t = 0; t < p->nterms; t++) {
		const q_term *qt = &p->terms[t];
		if (qt->required && qt->df == 0 && qt->src) {
			fbuf_printf(why, "\"%.*s\" occurs in no document", (int)qt->src_len, qt->src);
			return 0;
		}
	}
	/* A ranked query (no word required) is empty when none of its words
	 * occurs, or the filters leave none. */
	int ranked = p->nrequired == 0;
	uint32_t words = 0, absent = 0;
	for (uint32_t t = 0; ranked && t < p->nterms; t++) {
		const q_term *qt = &p->terms[t];
		if (!qt->scored || !qt->src)
			continue;
		words++;
		absent += qt->df == 0;
	}
	if (ranked && words && absent == words && !p->empty_prefix) {
		uint32_t named = 0;
		for (uint32_t t = 0; t < p->nterms; t++) {
			const q_term *qt = &p->terms[t];
			if (qt->scored && qt->src)
				fbuf_printf(why, "%s\"%.*s\"", named++ ? ", " : words > 1 ? "none of " : "",
				            (int)qt->src_len, qt->src);
		}
		fbuf_puts(why, words > 1 ? " occurs in any document" : " occurs in no document");
		return 0;
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
			one.key_lens = &f->key_lens[i];
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
		if (!(ranked ? qt->scored : qt->required) || !qt->src)
			continue;
		fbuf_printf(why, "%s\"%.*s\"", named++ ? ", " : ranked && words > 1 ? ": no chunk holds any of " : ": no chunk holds ", (int)qt->src_len,
		            qt->src);
	}
	if (named > 1 && !ranked)
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

int q_explain_query(fathom_results *r, ix_index *ix, const q_plan *plan, const q_ast *t,
                    const q_filter *filter, int empty)
{
	int rc = q_results_set_terms(r, plan);
	if (rc)
		return rc;
	fbuf f;
	fbuf_init(&f, 0);
	q_ast_format(t, &f);
	rc = f.err ? f.err : q_results_set_parsed(r, f.len ? (const char *)f.data : "", f.len);
	if (!rc)
		rc = q_results_set_expansions(r, t);
	if (!rc && t->nlit) {
		fbuf_reset(&f);
		q_ast_format_literal(t, &f);
		rc = f.err ? f.err : q_results_set_literal(r, f.len ? (const char *)f.data : "", f.len);
	}
	if (!rc && filter->active) {
		fbuf_reset(&f);
		for (size_t i = 0; i < filter->n; i++)
			fbuf_printf(&f, "%s%s=%s", i ? " " : "", filter->keys[i], filter->values[i]);
		if (filter->lang)
			fbuf_printf(&f, "%slang=%s", f.len ? " " : "", filter->lang);
		if (filter->glob)
			fbuf_printf(&f, "%spath=%s", f.len ? " " : "", filter->glob);
		rc = f.err ? f.err : q_results_set_filters(r, f.len ? (const char *)f.data : "", f.len);
	}
	if (!rc && empty) {
		fbuf_reset(&f);
		rc = explain_empty(ix, plan, filter, &f);
		if (!rc)
			rc = f.err ? f.err : q_results_set_why(r, f.len ? (const char *)f.data : "", f.len);
	}
	fbuf_free(&f);
	return rc;
}

/* ---- one source alone ----------------------------------------------------------- */

int q_results_from(fathom_results **out, ix_index *ix, const q_cand_list *l, uint32_t k,
                   const char *parsed)
{
	*out = NULL;
	fa_arena work;
	fa_arena_init(&work, 16 * 1024, 0);
	q_pool pool;
	int rc = q_fuse(&pool, &work, l, 1);
	if (!rc)
		rc = q_results_new(out, parsed);
	/* the source made its snippets itself: the chunk text is not read */
	if (!rc)
		rc = q_explain_hits(*out, ix, &pool, k, 0);
	fa_arena_free(&work);
	if (rc) {
		fathom_results_free(*out);
		*out = NULL;
	}
	return rc;
}
