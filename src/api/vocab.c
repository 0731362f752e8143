/*
 * vocab.c — the identifier vocabulary: every exact identifier the index
 * holds (TC-1001, v2.0.1, AuthService, ...) with its category, the
 * spellings seen, how many chunks hold it and the first document that did.
 *
 * The vocabulary is not a file of its own: each identifier occurrence was
 * indexed as the term IX_IDENT_MARK key IX_IDENT_SEP category spelling
 * (docs/FORMAT.md), so this walks those terms in every segment and merges
 * them by key. The category is a property of each occurrence (CD169 is a
 * model number in one abstract and reads as a call in another, CD169(+)):
 * an entry lists every role seen, the most frequent first, and a category
 * asked for lists the entries seen in that role.
 */
#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"

#define VOCAB_MAX_VARIANTS 8

typedef struct ventry {
	char *key;
	uint64_t by_cat[TEXT_IDENT_NCAT];  /* occurrences in each role */
	const char *cats[TEXT_IDENT_NCAT]; /* the roles seen, most frequent first */
	size_t ncats;
	char *variants[VOCAB_MAX_VARIANTS];
	size_t nvar;
	uint64_t chunks, occurrences;
	uint32_t first_seg, first_chunk;   /* UINT32_MAX: none yet */
	char *first;
} ventry;

typedef struct vwalk {
	fa_arena a;
	fa_strmap map;       /* key -> index + 1 in v */
	ventry *v;
	size_t n, cap;
	int cat;             /* -1: all */
	uint32_t seg_index;
	ix_segment *s;
	/* The chunks of the entry being visited in this segment: its spellings
	 * are adjacent in the dictionary, so a chunk holding two spellings is
	 * counted once. */
	size_t cur;          /* index + 1 in v, 0 for none */
	uint32_t *buf;
	size_t nbuf, capbuf;
	int err;
} vwalk;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void flush_entry(vwalk *w)
{
	if (w->cur && w->nbuf) {
		qsort(w->buf, w->nbuf, sizeof *w->buf, cmp_u32);
		uint64_t distinct = 0;
		for (size_t i = 0; i < w->nbuf; i++)
			distinct += i == 0 || w->buf[i] != w->buf[i - 1];
		w->v[w->cur - 1].chunks += distinct;
	}
	w->nbuf = 0;
	w->cur = 0;
}

/* The live chunks of the term: into buf, with occurrences and the first. */
static int scan_postings(vwalk *w, ventry *e, int cat, const ix_term_info *ti)
{
	ix_postings p;
	int rc = ix_post_open(&p, w->s, ti);
	while (!rc && p.doc != IX_END) {
		if (!seg_is_deleted(w->s, p.doc)) {
			uint16_t tf[FATHOM_NFIELDS];
			ix_post_tf(&p, tf);
			for (int f = 0; f < FATHOM_NFIELDS; f++) {
				e->occurrences += tf[f];
				e->by_cat[cat] += tf[f];
			}
			if (fa_grow((void **)&w->buf, &w->capbuf, w->nbuf + 1, sizeof *w->buf))
				return fa_err(FATHOM_ENOMEM, "vocabulary");
			w->buf[w->nbuf++] = p.doc;
			if (e->first_seg == UINT32_MAX ||
			    (e->first_seg == w->seg_index && p.doc < e->first_chunk)) {
				e->first_seg = w->seg_index;
				e->first_chunk = p.doc;
			}
		}
		rc = ix_post_next(&p);
	}
	return rc;
}

static int visit(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	vwalk *w = ctx;
	/* MARK key SEP cat spelling */
	const char *sep = memchr(term, IX_IDENT_SEP, len);
	if (!sep || sep == term + 1 || (size_t)(sep - term) + 2 > len)
		return 0;   /* not a vocabulary term: skip */
	int cat = sep[1] - '0';
	if (cat < 0 || cat >= TEXT_IDENT_NCAT)
		return 0;
	size_t klen = (size_t)(sep - term) - 1;
	const char *spell = sep + 2;
	size_t slen = len - (size_t)(spell - term);
	/* An index written before keys left the category keyed a call
	 * "name()": the same entry as name. */
	if (klen > 2 && memcmp(term + 1 + klen - 2, "()", 2) == 0)
		klen -= 2;
	int is_new = 0;
	fa_strmap_slot *slot = fa_strmap_upsert(&w->map, term + 1, klen, &is_new);
	if (!slot)
		return w->err = fa_err(FATHOM_ENOMEM, "vocabulary");
	if (is_new) {
		if (fa_grow((void **)&w->v, &w->cap, w->n + 1, sizeof *w->v))
			return w->err = fa_err(FATHOM_ENOMEM, "vocabulary");
		ventry *e = &w->v[w->n];
		memset(e, 0, sizeof *e);
		e->key = fa_arena_strndup(&w->a, term + 1, klen);
		e->first_seg = UINT32_MAX;
		if (!e->key)
			return w->err = fa_err(FATHOM_ENOMEM, "vocabulary");
		slot->value = ++w->n;
	}
	if (w->cur != slot->value) {
		flush_entry(w);
		w->cur = slot->value;
	}
	ventry *e = &w->v[slot->value - 1];
	int have = 0;
	for (size_t i = 0; i < e->nvar; i++)
		have |= strlen(e->variants[i]) == slen && memcmp(e->variants[i], spell, slen) == 0;
	if (!have && e->nvar < VOCAB_MAX_VARIANTS) {
		if (!(e->variants[e->nvar] = fa_arena_strndup(&w->a, spell, slen)))
			return w->err = fa_err(FATHOM_ENOMEM, "vocabulary");
		e->nvar++;
	}
	int rc = scan_postings(w, e, cat, ti);
	return rc ? (w->err = rc) : 0;
}

/* The roles of e, most frequent first (ties: in category order). */
static void rank_roles(ventry *e)
{
	e->ncats = 0;
	uint8_t done[TEXT_IDENT_NCAT] = { 0 };
	for (;;) {
		int best = -1;
		for (int c = 0; c < TEXT_IDENT_NCAT; c++)
			if (!done[c] && e->by_cat[c] && (best < 0 || e->by_cat[c] > e->by_cat[best]))
				best = c;
		if (best < 0)
			return;
		done[best] = 1;
		e->cats[e->ncats++] = text_ident_cat_name(best);
	}
}

/* The id of the document of the entry's first chunk. */
static int first_doc(vwalk *w, ventry *e, fathom_index *fx)
{
	if (e->first_seg == UINT32_MAX)
		return 0;
	ix_segment *s = ix_segment_at(fx->ix, e->first_seg);
	ix_chunk_info ci;
	ix_doc_info di;
	int rc = seg_chunk(s, e->first_chunk, &ci);
	if (!rc)
		rc = seg_doc(s, ci.doc, &di);
	if (!rc && !(e->first = fa_arena_strndup(&w->a, di.key, strlen(di.key))))
		rc = fa_err(FATHOM_ENOMEM, "vocabulary");
	return rc;
}

static int by_key(const void *a, const void *b)
{
	const ventry *x = a, *y = b;
	return strcmp(x->key, y->key);
}

int fathom_vocab(fathom_index *fx, const char *category, const char *prefix, fathom_vocab_cb cb,
                 void *ctx)
{
	fa_err_clear();
	if (!fx || !cb)
		return fa_err(FATHOM_EINVAL, "no index or no callback");
	int cat = -1;
	if (category && *category && (cat = text_ident_cat_parse(category)) < 0)
		return fa_err(FATHOM_EINVAL, "no identifier category \"%s\" (testcase, ticket, version, "
		              "class, function, model, error)", category);
	char want[TEXT_IDENT_MAX_KEY + 4];
	size_t wlen = 1;
	want[0] = IX_IDENT_MARK;
	if (prefix && *prefix) {
		uint32_t kl;
		/* The prefix as a key: "TC-10" finds tc-1001; keep a trailing
		 * delimiter's meaning by not adding one. */
		if (text_ident_key(prefix, strlen(prefix), want + 1, sizeof want - 1, &kl) != 0)
			return fa_err(FATHOM_EINVAL, "prefix \"%s\" has no letter or digit", prefix);
		wlen += kl;
	}
	int rc = ix_check_mapped(fx->ix);
	if (rc)
		return rc;
	vwalk w;
	memset(&w, 0, sizeof w);
	fa_arena_init(&w.a, 64 * 1024, 0);
	fa_strmap_init(&w.map);
	w.cat = cat;
	for (size_t i = 0; i < ix_nsegments(fx->ix) && !rc; i++) {
		w.s = ix_segment_at(fx->ix, i);
		w.seg_index = (uint32_t)i;
		rc = seg_terms(w.s, want, wlen, visit, &w);
		if (w.err)
			rc = w.err;
		flush_entry(&w);
	}
	for (size_t i = 0; i < w.n && !rc; i++)
		rc = first_doc(&w, &w.v[i], fx);
	if (!rc && w.n)
		qsort(w.v, w.n, sizeof *w.v, by_key);
	for (size_t i = 0; i < w.n && !rc; i++) {
		const ventry *e = &w.v[i];
		if (e->chunks == 0 || (cat >= 0 && e->by_cat[cat] == 0))
			continue;   /* every chunk holding it was deleted, or not that role */
		ventry *m = &w.v[i];
		rank_roles(m);
		fathom_vocab_entry out = { e->key, m->ncats ? m->cats[0] : "?",
		                           (const char *const *)e->variants, e->nvar, e->chunks,
		                           e->occurrences, e->first ? e->first : "",
		                           m->cats, m->ncats };
		rc = cb(ctx, &out);
	}
	fa_free(w.buf);
	fa_free(w.v);
	fa_strmap_free(&w.map);
	fa_arena_free(&w.a);
	return ix_checked(fx->ix, rc);
}
