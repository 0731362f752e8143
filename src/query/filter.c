/*
 * filter.c — restrictions applied before ranking: metadata "key=value"
 * pairs (all must hold), a glob over the document path, and a language.
 * A pair matches what fathom_list_meta() (GET /sources, list_sources)
 * counts under it, so every value listed there works as a filter: "lang"
 * is the detected language as well as any "lang" metadata.
 *
 * A filtered query builds one bitmap of allowed chunks per segment by
 * walking the segment's documents, so the retrieval loops test a bit per
 * candidate; an unfiltered query builds nothing and tests nothing.
 */
#include <fnmatch.h>

#include "query/query_int.h"

int q_filter_init(q_filter *f, fa_arena *a, const fathom_search_opts *o, const q_ast *t)
{
	memset(f, 0, sizeof *f);
	if (o->n_filters > 0 && !o->filters)
		return fa_err(FATHOM_EINVAL, "%zu filters but no filter array", o->n_filters);
	if (o->n_filters > 256)
		return fa_err(FATHOM_ETOOBIG, "more than 256 filters");
	size_t nq = t ? t->nfilters : 0;
	if (o->n_filters + nq > 0) {
		f->keys = fa_arena_alloc(a, (o->n_filters + nq) * sizeof *f->keys);
		f->values = fa_arena_alloc(a, (o->n_filters + nq) * sizeof *f->values);
		f->key_lens = fa_arena_alloc(a, (o->n_filters + nq) * sizeof *f->key_lens);
		if (!f->keys || !f->values || !f->key_lens)
			return fa_err(FATHOM_ENOMEM, "filters");
	}
	if (o->n_filters > 0) {
		for (size_t i = 0; i < o->n_filters; i++) {
			const char *s = o->filters[i];
			const char *eq = s ? strchr(s, '=') : NULL;
			if (!eq || eq == s)
				return fa_err(FATHOM_EINVAL, "filter \"%s\" is not key=value",
				              s ? s : "(null)");
			f->keys[i] = fa_arena_strndup(a, s, (size_t)(eq - s));
			f->key_lens[i] = (size_t)(eq - s);
			f->values[i] = eq + 1;
			if (!f->keys[i])
				return fa_err(FATHOM_ENOMEM, "filters");
		}
		f->n = o->n_filters;
	}
	if (o->path_glob && *o->path_glob) {
		f->glob = o->path_glob;
		f->glob_base = strchr(o->path_glob, '/') == NULL;
	}
	if (o->lang && *o->lang)
		f->lang = o->lang;
	/* library:X version:Y system:Z lang:L written in the query */
	for (size_t i = 0; i < nq; i++) {
		const q_qfilter *qf = &t->filter[i];
		char *v = fa_arena_strndup(a, qf->value, qf->vlen);
		if (!v)
			return fa_err(FATHOM_ENOMEM, "filters");
		if (strcmp(qf->key, "lang") == 0) {
			if (f->lang && strcmp(f->lang, v) != 0)
				return fa_err(FATHOM_EINVAL, "two languages asked for: %s and %s", f->lang, v);
			f->lang = v;
			continue;
		}
		f->keys[f->n] = qf->key;
		f->key_lens[f->n] = strlen(qf->key);
		f->values[f->n] = v;
		f->n++;
	}
	f->active = f->n > 0 || f->glob || f->lang;
	return 0;
}

/* Does the document have key=value? What fathom_list_meta() lists is
 * what matches: every metadata pair (a key may have several values), and
 * "lang" for the language detected at ingest as well. */
static int doc_has(const ix_doc_info *d, const char *key, size_t kl, const char *value)
{
	const char *m = d->meta;
	for (uint32_t i = 0; m && i < d->n_meta; i++) {
		size_t l = strlen(m);
		if (l > kl && memcmp(m, key, kl) == 0 && m[kl] == '=' && strcmp(m + kl + 1, value) == 0)
			return 1;
		m += l + 1;
	}
	return strcmp(key, "lang") == 0 && d->lang && strcmp(d->lang, value) == 0;
}

int q_filter_doc(const q_filter *f, const ix_doc_info *d)
{
	for (size_t i = 0; i < f->n; i++)
		if (!doc_has(d, f->keys[i], f->key_lens[i], f->values[i]))
			return 0;
	if (f->lang && !doc_has(d, "lang", 4, f->lang))
		return 0;
	if (f->glob) {
		const char *path = d->path ? d->path : "";
		if (fnmatch(f->glob, path, 0) != 0) {
			const char *base = strrchr(path, '/');
			if (!f->glob_base || !base || fnmatch(f->glob, base + 1, 0) != 0)
				return 0;
		}
	}
	return 1;
}

int q_filter_bitmap(const q_filter *f, fa_arena *a, ix_segment *s, uint8_t **out)
{
	*out = NULL;
	if (!f->active)
		return 0;
	uint32_t nchunks = seg_nchunks(s), ndocs = seg_ndocs(s);
	uint8_t *bits = fa_arena_calloc(a, (size_t)nchunks / 8 + 1, 1);
	if (!bits)
		return fa_err(FATHOM_ENOMEM, "filter bitmap of %u chunks", nchunks);
	for (uint32_t d = 0; d < ndocs; d++) {
		if (seg_doc_is_deleted(s, d))
			continue;
		ix_doc_info di;
		int rc = seg_doc(s, d, &di);
		if (rc)
			return rc;
		if (!q_filter_doc(f, &di))
			continue;
		if (di.first_chunk > nchunks || di.n_chunks > nchunks - di.first_chunk)
			return fa_err(FATHOM_ECORRUPT, "%s: doc %u has chunks past the end",
			              seg_path(s), d);
		for (uint32_t c = di.first_chunk; c < di.first_chunk + di.n_chunks; c++)
			bits[c >> 3] |= (uint8_t)(1u << (c & 7));
	}
	*out = bits;
	return 0;
}

/* ---- exact identifiers ----------------------------------------------------- */

/* The vocabulary terms of one key: 0x02 key 0x1f, any category. */
static int key_terms(ix_segment *s, const char *key, uint32_t key_len, const char *suffix,
                     int (*cb)(void *ctx, const char *term, size_t len, const ix_term_info *ti),
                     void *ctx)
{
	char prefix[TEXT_IDENT_MAX_KEY + 8];
	size_t sl = strlen(suffix);
	if (key_len + sl + 2 > sizeof prefix)
		return fa_err(FATHOM_EINVAL, "identifier key too long");
	prefix[0] = IX_IDENT_MARK;
	memcpy(prefix + 1, key, key_len);
	memcpy(prefix + 1 + key_len, suffix, sl);
	prefix[key_len + sl + 1] = IX_IDENT_SEP;
	return seg_terms(s, prefix, key_len + sl + 2, cb, ctx);
}

int q_ident_terms(ix_segment *s, const q_ident *x, int wholes,
                  int (*cb)(void *ctx, const char *term, size_t len, const ix_term_info *ti),
                  void *ctx)
{
	/* Every occurrence the scanner classified, in any role, and every
	 * whole token of the key; an index written before keys left the
	 * category (docs/FORMAT.md) keyed a call "name()". */
	int rc = key_terms(s, x->key, x->key_len, "", cb, ctx);
	if (!rc)
		rc = key_terms(s, x->key, x->key_len, "()", cb, ctx);
	if (!wholes)
		return rc;
	/* And every whole token of its case- and delimiter-variants, which
	 * the tokenizer indexed wherever it stood (in prose, past the 50
	 * identifiers a chunk keeps, called or not). */
	for (uint32_t i = 0; i < x->nwholes && !rc; i++) {
		ix_term_info ti;
		rc = seg_term(s, x->wholes[i], x->whole_len[i], &ti);
		if (rc == FATHOM_ENOTFOUND) {
			rc = 0;
			continue;
		}
		if (!rc)
			rc = cb(ctx, x->wholes[i], x->whole_len[i], &ti);
	}
	return rc;
}

typedef struct ident_bits {
	ix_segment *s;
	uint8_t *bits;       /* the identifier's chunks, being built */
	uint64_t set;        /* bits newly set */
	int err;
} ident_bits;

static int mark_postings(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	(void)term;
	(void)len;
	ident_bits *ib = ctx;
	ix_postings p;
	int rc = ix_post_open(&p, ib->s, ti);
	while (!rc && p.doc != IX_END) {
		uint8_t bit = (uint8_t)(1u << (p.doc & 7));
		ib->set += !(ib->bits[p.doc >> 3] & bit);
		ib->bits[p.doc >> 3] |= bit;
		rc = ix_post_next(&p);
	}
	return rc ? (ib->err = rc) : 0;
}

int q_ident_bitmap(q_plan *p, fa_arena *a, ix_segment *s, uint8_t **bits, int source)
{
	uint32_t nchunks = seg_nchunks(s);
	size_t nb = (size_t)nchunks / 8 + 1;
	uint8_t *all = NULL, *one = NULL;
	uint32_t applied = 0;
	for (uint32_t k = 0; k < p->nidents; k++)
		applied += p->idents[k].applied != 0;
	for (uint32_t k = 0; k < p->nidents; k++) {
		q_ident *x = &p->idents[k];
		if (!x->applied)
			continue;
		/* One identifier (the usual case): mark straight into the
		 * result; several: one at a time, then AND (or OR) them in. */
		int direct = applied == 1;
		if (!all) {
			if (!(all = fa_arena_alloc(a, nb)))
				return fa_err(FATHOM_ENOMEM, "identifier bitmap");
			memset(all, direct || p->ident_any ? 0x00 : 0xff, nb);
		}
		if (!direct && !one && !(one = fa_arena_alloc(a, nb)))
			return fa_err(FATHOM_ENOMEM, "identifier bitmap");
		if (!direct)
			memset(one, 0, nb);
		ident_bits ib = { s, direct ? all : one, 0, 0 };
		int rc = q_ident_terms(s, x, 1, mark_postings, &ib);
		if (ib.err || rc)
			return ib.err ? ib.err : rc;
		if (source == p->ident_counter)
			x->chunks += ib.set;
		if (!direct)
			for (size_t i = 0; i < nb; i++)
				all[i] = p->ident_any ? (uint8_t)(all[i] | one[i]) : (uint8_t)(all[i] & one[i]);
	}
	if (!all)
		return 0;
	if (*bits) {
		for (size_t i = 0; i < nb; i++)
			(*bits)[i] &= all[i];
	} else {
		*bits = all;
	}
	return 0;
}

int q_ident_count(ix_index *ix, const q_ident *x, uint64_t *n)
{
	*n = 0;
	for (size_t si = 0; si < ix_nsegments(ix); si++) {
		ix_segment *s = ix_segment_at(ix, si);
		uint32_t nchunks = seg_nchunks(s);
		uint8_t *bits = fa_calloc((size_t)nchunks / 8 + 1, 1);
		if (!bits)
			return fa_err(FATHOM_ENOMEM, "identifier count");
		ident_bits ib = { s, bits, 0, 0 };
		int rc = q_ident_terms(s, x, 1, mark_postings, &ib);
		if (!rc)
			rc = ib.err;
		for (uint32_t c = 0; !rc && c < nchunks; c++) {
			if (!(bits[c >> 3] >> (c & 7) & 1))
				continue;
			ix_chunk_info ci;
			if ((rc = seg_chunk(s, c, &ci)) == 0)
				*n += !seg_doc_is_deleted(s, ci.doc);
		}
		fa_free(bits);
		if (rc)
			return rc;
	}
	return 0;
}
