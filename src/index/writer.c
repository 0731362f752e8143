/*
 * writer.c — the in-memory buffer of documents not yet written to a segment.
 *
 * Each distinct term gets a growing byte buffer that records its
 * occurrences as they are analysed, in (chunk, field, position) order:
 *
 *   varint((chunk gap) << 3 | 7)        a new chunk (posting) starts
 *   varint(zigzag(pos delta) << 3 | f)  an occurrence in field f; the delta
 *                                       restarts from 0 at each new field
 *
 * which costs one or two bytes per token and no per-posting structure. The
 * documents themselves (tables, strings, compressed text) go straight into a
 * segment writer in memory.
 *
 * Adding is two steps. ix_analyse_doc (any thread) tokenizes the fields of
 * each chunk and finds its identifiers into an ix_analysis, which holds each
 * distinct term of its documents once, with its hash, and the (term,
 * position) tokens in the order they will be appended. ix_add_analysed (the
 * writer) maps the analysis' terms to ids of the pending buffer, once per
 * term, and appends the occurrences. ix_add_doc does both in a row. When the
 * buffer passes its budget, or at commit, the terms are sorted and their
 * buffers replayed into the segment writer as postings: that is a flush.
 *
 * A flush encodes the postings on a pool (ix_ds_thread_count threads), as a
 * merge does: the calling thread hands out batches of terms in dictionary
 * order, a worker replays and encodes a batch's terms (ix_term_enc) into the
 * batch's buffer, and the calling thread appends the batches' terms in
 * order. So the bytes are those one thread writes.
 */
#include <stdio.h>
#include <stdlib.h>

#include <math.h>

#include "index/index_int.h"
#include "util/pool.h"

#define F_PATH FATHOM_FIELD_PATH
#define F_TITLE FATHOM_FIELD_TITLE
#define F_HEADINGS FATHOM_FIELD_HEADINGS
#define F_TAGS FATHOM_FIELD_TAGS
#define F_BODY FATHOM_FIELD_BODY

typedef struct pend_term {
	unsigned char *buf;
	uint32_t len, cap;
	uint32_t last_chunk;    /* UINT32_MAX before the first posting */
	uint32_t last_pos;
	uint8_t last_field;     /* 0xff at the start of a posting */
	uint8_t keylen;
	char key[];             /* the term, next to what every token updates */
} pend_term;

/* The term table: open addressing over 8-byte slots (hash, index + 1), so
 * the table stays small enough to sit in cache; the term bytes live in the
 * record the token is about to update anyway. */
typedef struct term_slot {
	uint32_t hash, idx;
} term_slot;

/* A token of an analysis: its term (the analysis' number) and position. */
typedef struct tok_ref {
	uint32_t term, pos;
} tok_ref;

struct ix_pending {
	term_slot *slots;
	size_t slot_cap;        /* a power of two, or 0 */
	fa_arena recs;          /* the pend_term records */
	pend_term **tv;         /* by term id */
	size_t ntv, tv_cap;
	size_t term_bytes;
	ix_segw *w;
	fa_strmap keys;         /* key -> pending doc */
	uint8_t *deleted;       /* per pending doc */
	size_t deleted_cap;
	uint32_t ndeleted;
	fbuf strs;
	uint32_t chunk;         /* the chunk being appended */
	uint64_t serial;        /* tells this buffer's term ids from another's */
	ix_analysis *scratch;   /* ix_add_doc's analysis */
	int err;                /* sticky: the buffer is unusable until rollback */
};

int ix_pending_new(ix_pending **out)
{
	*out = NULL;
	ix_pending *p = fa_calloc(1, sizeof *p);
	if (!p)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	fa_arena_init(&p->recs, 1 << 20, 0);
	fa_strmap_init(&p->keys);
	fbuf_init(&p->strs, 0);
	static uint64_t next_serial;
	p->serial = __atomic_add_fetch(&next_serial, 1, __ATOMIC_RELAXED);
	int rc = ix_segw_new(&p->w, 0);
	if (rc) {
		ix_pending_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void ix_pending_free(ix_pending *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->ntv; i++)
		fa_free(p->tv[i]->buf);
	fa_free(p->tv);
	fa_free(p->slots);
	fa_arena_free(&p->recs);
	fa_strmap_free(&p->keys);
	fa_free(p->deleted);
	fbuf_free(&p->strs);
	ix_analysis_free(p->scratch);
	ix_segw_free(p->w);
	fa_free(p);
}

int ix_pending_empty(const ix_pending *p)
{
	return ix_segw_ndocs(p->w) == 0;
}

static size_t pending_mem(const ix_pending *p)
{
	/* Term buffers, the term records, the map (load <= 1/2) and its keys. */
	return p->term_bytes + p->recs.total + p->slot_cap * sizeof(term_slot) +
	       p->tv_cap * sizeof(pend_term *) +
	       ix_segw_mem(p->w) + p->keys.count * (2 * sizeof(fa_strmap_slot) + 32);
}

/* ---- recording occurrences ---------------------------------------------- */

static int grow_slots(ix_pending *p)
{
	size_t ncap = p->slot_cap ? p->slot_cap * 2 : 1024;
	term_slot *ns = fa_calloc(ncap, sizeof *ns);
	if (!ns)
		return fa_err(FATHOM_ENOMEM, "out of memory (term table of %zu slots)", ncap);
	for (size_t i = 0; i < p->slot_cap; i++) {
		term_slot sl = p->slots[i];
		if (!sl.idx)
			continue;
		size_t j = sl.hash & (ncap - 1);
		while (ns[j].idx)
			j = (j + 1) & (ncap - 1);
		ns[j] = sl;
	}
	fa_free(p->slots);
	p->slots = ns;
	p->slot_cap = ncap;
	return 0;
}

static int add_occurrence(ix_pending *p, uint32_t id, int field, uint32_t pos)
{
	pend_term *t = p->tv[id];
	unsigned char tmp[24];
	size_t n = 0;
	if (t->last_chunk != p->chunk) {
		/* UINT32_MAX before the first posting makes the gap chunk + 1. */
		n += fa_varint_put(tmp, ((uint64_t)(uint32_t)(p->chunk - t->last_chunk) << 3) | 7);
		t->last_chunk = p->chunk;
		t->last_field = 0xff;
	}
	if (field != t->last_field) {
		t->last_pos = 0;
		t->last_field = (uint8_t)field;
	}
	int64_t delta = (int64_t)pos - (int64_t)t->last_pos;
	uint64_t zz = ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63);
	n += fa_varint_put(tmp + n, (zz << 3) | (uint64_t)field);
	t->last_pos = pos;
	if (t->len + n > t->cap) {
		uint64_t ncap = t->cap ? (uint64_t)t->cap * 2 : 8;
		while (ncap < (uint64_t)t->len + n)
			ncap *= 2;
		if (ncap > UINT32_MAX)
			return fa_err(FATHOM_ETOOBIG, "a term occurs too often for one segment");
		unsigned char *nb = fa_realloc(t->buf, (size_t)ncap);
		if (!nb)
			return fa_err(FATHOM_ENOMEM, "out of memory (postings buffer)");
		p->term_bytes += (size_t)ncap - t->cap;
		t->buf = nb;
		t->cap = (uint32_t)ncap;
	}
	for (size_t k = 0; k < n; k++)   /* one or two bytes: no memcpy call */
		t->buf[t->len + k] = tmp[k];
	t->len += (uint32_t)n;
	return 0;
}

/* The id of a term whose hash the analysis computed already. */
static int term_id_hashed(ix_pending *p, const char *term, size_t len, uint32_t h, uint32_t *id)
{
	int rc;
	/* Load factor at most 1/2 keeps probes short. */
	if ((p->ntv + 1) * 2 > p->slot_cap && (rc = grow_slots(p)) != 0)
		return rc;
	size_t mask = p->slot_cap - 1, i = h & mask;
	for (;;) {
		term_slot *sl = &p->slots[i];
		if (!sl->idx)
			break;
		if (sl->hash == h) {
			const pend_term *t = p->tv[sl->idx - 1];
			if (t->keylen == len && ix_mem_term_eq(t->key, term, len)) {
				*id = sl->idx - 1;
				return 0;
			}
		}
		i = (i + 1) & mask;
	}
	if (p->ntv >= UINT32_MAX - 1)
		return fa_err(FATHOM_ETOOBIG, "too many distinct terms for one segment");
	if ((rc = fa_grow((void **)&p->tv, &p->tv_cap, p->ntv + 1, sizeof *p->tv)) != 0)
		return rc;
	pend_term *t = fa_arena_alloc(&p->recs, sizeof *t + len + 1);
	if (!t)
		return fa_err(FATHOM_ENOMEM, "out of memory (terms)");
	*t = (pend_term){ NULL, 0, 0, UINT32_MAX, 0, 0xff, (uint8_t)len };
	memcpy(t->key, term, len);
	t->key[len] = '\0';
	p->tv[p->ntv] = t;
	p->slots[i] = (term_slot){ h, (uint32_t)++p->ntv };
	*id = (uint32_t)(p->ntv - 1);
	return 0;
}

/* ---- analysis: any thread ------------------------------------------------------ */

/* A term of the analysis: its bytes in the analysis' term buffer. */
typedef struct an_term {
	uint32_t off, hash;
	uint8_t len;
} an_term;

/* A classified identifier of the chunk being analysed: where it starts and
 * its key. */
typedef struct an_classified {
	uint32_t start;
	uint32_t key_len;
	char key[TEXT_IDENT_MAX_KEY + 1];
} an_classified;

/* The token ranges (into tok) of one chunk: headings, body, identifiers. */
typedef struct an_chunk {
	uint32_t head, body, ident, end;
} an_chunk;

/* One document: its path, title and tags tokens (analysed once for all its
 * chunks), then its chunks. */
typedef struct an_doc {
	uint32_t path, title, tags, end;
	uint32_t chunk0, nchunks;
} an_doc;

struct ix_analysis {
	fbuf bytes;             /* the terms, back to back */
	an_term *terms;         /* each distinct term once */
	size_t nterms, cap_terms;
	uint32_t *slots;        /* open addressing: term index + 1; a power of two */
	size_t slot_cap;
	tok_ref *tok;           /* (term, position) in analysis order */
	size_t ntok, cap_tok;
	an_chunk *chunks;
	size_t nchunks, cap_chunks;
	an_doc *docs;
	size_t ndocs, cap_docs;
	char ident[IX_MAX_TERM];
	/* The chunk body's whole tokens of several parts (TOK_IDENT): byte
	 * ranges, for their identifier keys (add_idents). */
	uint32_t *runs;          /* start, end pairs */
	size_t nruns, cap_runs;  /* in pairs */
	/* The chunk's classified identifiers, by start: a whole token of the
	 * same start and key needs no token key (the vocabulary term marks
	 * its chunk already). */
	an_classified *classified;
	size_t nclassified, cap_classified;
	/* The last path or title analysed, and its tokens [memo_from, memo_to).
	 * A chunk corpus repeats them (a file's chunks come as consecutive
	 * documents, and the title is often the path); the same text gives the
	 * same tokens, so a repeat copies them instead of analysing again. */
	fbuf memo;
	uint32_t memo_from, memo_to;
	int memo_ok;            /* memo holds a field of this batch */
	int no_reuse;           /* analyse every field (tests compare the two) */
	/* The writer's side: term -> id in the pending buffer numbered serial. */
	uint32_t *gid;
	size_t cap_gid, ngid;   /* ngid: terms mapped (or marked unmapped) */
	uint64_t gid_serial;
};

int ix_analysis_new(ix_analysis **out)
{
	*out = fa_calloc(1, sizeof **out);
	if (!*out)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	fbuf_init(&(*out)->bytes, 0);
	fbuf_init(&(*out)->memo, 0);
	return 0;
}

void ix_analysis_set_reuse(ix_analysis *a, int on)
{
	a->no_reuse = !on;
	a->memo_ok = 0;
}

void ix_analysis_reset(ix_analysis *a)
{
	fbuf_reset(&a->bytes);
	if (a->nterms)
		memset(a->slots, 0, a->slot_cap * sizeof *a->slots);
	a->nterms = a->ntok = a->nchunks = a->ndocs = a->ngid = 0;
	a->memo_ok = 0;
}

void ix_analysis_free(ix_analysis *a)
{
	if (!a)
		return;
	fbuf_free(&a->bytes);
	fbuf_free(&a->memo);
	fa_free(a->terms);
	fa_free(a->slots);
	fa_free(a->tok);
	fa_free(a->runs);
	fa_free(a->classified);
	fa_free(a->chunks);
	fa_free(a->docs);
	fa_free(a->gid);
	fa_free(a);
}

static int an_grow_slots(ix_analysis *a)
{
	size_t ncap = a->slot_cap ? a->slot_cap * 2 : 4096;
	uint32_t *ns = fa_calloc(ncap, sizeof *ns);
	if (!ns)
		return fa_err(FATHOM_ENOMEM, "out of memory (analysis terms)");
	for (size_t i = 0; i < a->nterms; i++) {
		size_t j = a->terms[i].hash & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = (uint32_t)i + 1;
	}
	fa_free(a->slots);
	a->slots = ns;
	a->slot_cap = ncap;
	return 0;
}

/* The analysis' own number for a term, added when new. */
static int an_term_id(ix_analysis *a, const char *term, size_t len, uint32_t *id)
{
	int rc;
	if ((a->nterms + 1) * 2 > a->slot_cap && (rc = an_grow_slots(a)) != 0)
		return rc;
	uint32_t h = ix_mem_term_hash(term, len);
	size_t mask = a->slot_cap - 1, i = h & mask;
	for (;;) {
		uint32_t s = a->slots[i];
		if (!s)
			break;
		const an_term *t = &a->terms[s - 1];
		if (t->hash == h && t->len == len &&
		    ix_mem_term_eq((const char *)a->bytes.data + t->off, term, len)) {
			*id = s - 1;
			return 0;
		}
		i = (i + 1) & mask;
	}
	if (a->bytes.len > UINT32_MAX - IX_MAX_TERM || a->nterms >= UINT32_MAX - 1)
		return fa_err(FATHOM_ETOOBIG, "too many terms for one batch");
	if ((rc = fa_grow((void **)&a->terms, &a->cap_terms, a->nterms + 1, sizeof *a->terms)) != 0)
		return rc;
	a->terms[a->nterms] = (an_term){ (uint32_t)a->bytes.len, h, (uint8_t)len };
	if ((rc = fbuf_append(&a->bytes, term, len)) != 0)
		return rc;
	a->slots[i] = (uint32_t)++a->nterms;
	*id = (uint32_t)(a->nterms - 1);
	return 0;
}

static int an_push(ix_analysis *a, const char *term, size_t len, uint32_t pos)
{
	uint32_t id;
	int rc = an_term_id(a, term, len, &id);
	if (rc)
		return rc;
	if (a->ntok == a->cap_tok) {
		if (a->ntok >= UINT32_MAX - 1)
			return fa_err(FATHOM_ETOOBIG, "too many tokens for one batch");
		if ((rc = fa_grow((void **)&a->tok, &a->cap_tok, a->ntok + 1, sizeof *a->tok)) != 0)
			return rc;
	}
	a->tok[a->ntok++] = (tok_ref){ id, pos };
	return 0;
}

static int on_token(void *ctx, const text_token *tok)
{
	if (tok->len == 0 || tok->len > IX_MAX_TERM)
		return 0;
	return an_push(ctx, tok->term, tok->len, tok->pos);
}

static int analyse_text(ix_analysis *a, text_analyzer *an, const char *s, size_t n,
                        uint32_t *pos)
{
	return n ? text_analyze(an, s, n, pos, on_token, a, NULL) : 0;
}

/* A body token; a whole token of several parts is also kept for its key. */
static int on_body_token(void *ctx, const text_token *tok)
{
	ix_analysis *a = ctx;
	int rc = on_token(ctx, tok);
	if (rc || tok->kind != TOK_IDENT)
		return rc;
	if ((rc = fa_grow((void **)&a->runs, &a->cap_runs, a->nruns + 1, 2 * sizeof *a->runs)) != 0)
		return rc;
	a->runs[2 * a->nruns] = tok->start;
	a->runs[2 * a->nruns + 1] = tok->end;
	a->nruns++;
	return 0;
}

/* Append a copy of the tokens [from, to) (earlier in tok). */
static int copy_tokens(ix_analysis *a, uint32_t from, uint32_t to)
{
	size_t n = to - from;
	if (n == 0)
		return 0;
	if (a->ntok > UINT32_MAX - 1 - n)
		return fa_err(FATHOM_ETOOBIG, "too many tokens for one batch");
	int rc = fa_grow((void **)&a->tok, &a->cap_tok, a->ntok + n, sizeof *a->tok);
	if (rc)
		return rc;
	memcpy(a->tok + a->ntok, a->tok + from, n * sizeof *a->tok);
	a->ntok += n;
	return 0;
}

/* A path or title (positions from 0): analysed, or copied from the last
 * one when the text is the same. */
static int analyse_name(ix_analysis *a, text_analyzer *an, const char *s)
{
	size_t n = strlen(s);
	if (a->memo_ok && a->memo.len == n && (n == 0 || memcmp(a->memo.data, s, n) == 0))
		return copy_tokens(a, a->memo_from, a->memo_to);
	uint32_t from = (uint32_t)a->ntok, pos = 0;
	int rc = analyse_text(a, an, s, n, &pos);
	if (rc || a->no_reuse)
		return rc;
	fbuf_reset(&a->memo);
	/* Without room for the copy, the next name is analysed: no error. */
	a->memo_ok = fbuf_append(&a->memo, s, n) == 0;
	a->memo_from = from;
	a->memo_to = (uint32_t)a->ntok;
	return 0;
}

/* ---- exact identifiers ------------------------------------------------------ */

typedef struct ident_ctx {
	ix_analysis *a;
	const char *text;
	uint32_t pos;
} ident_ctx;

/* Each identifier is one occurrence of the vocabulary term
 * IX_IDENT_MARK key IX_IDENT_SEP category spelling (docs/FORMAT.md) in the
 * body field: its postings are the chunks holding that spelling. It does
 * not count in the field's length, so BM25 is unchanged. */
static int on_ident(void *ctx, const text_ident *id)
{
	ident_ctx *x = ctx;
	char *term = x->a->ident;
	size_t n = 0, sl = id->end - id->start;
	term[n++] = IX_IDENT_MARK;
	memcpy(term + n, id->key, id->key_len);
	n += id->key_len;
	term[n++] = IX_IDENT_SEP;
	term[n++] = (char)('0' + id->cat);
	if (sl > sizeof x->a->ident - n)
		sl = sizeof x->a->ident - n;
	memcpy(term + n, x->text + id->start, sl);
	n += sl;
	int rc = an_push(x->a, term, n, x->pos++);
	ix_analysis *a = x->a;
	if (rc || (rc = fa_grow((void **)&a->classified, &a->cap_classified, a->nclassified + 1,
	                        sizeof *a->classified)) != 0)
		return rc;
	an_classified *c = &a->classified[a->nclassified++];
	c->start = id->start;
	c->key_len = id->key_len;
	memcpy(c->key, id->key, id->key_len);
	return 0;
}

/* Did the scanner classify an identifier of this key starting at start? */
static int classified_at(const ix_analysis *a, uint32_t start, const char *key, uint32_t kl)
{
	for (size_t i = 0; i < a->nclassified; i++) {
		const an_classified *c = &a->classified[i];
		if (c->start == start && c->key_len == kl && memcmp(c->key, key, kl) == 0)
			return 1;
	}
	return 0;
}

/* Each whole token of several parts (spin_lock, IKK-beta, CD169) is also
 * one occurrence of IX_IDENT_MARK key IX_IDENT_SEP IX_IDENT_TOKEN, unless
 * the scanner classified it there (same start, same key), however many the
 * chunk holds, so that an identifier's filter
 * finds every spelling of its key the tokenizer kept whole, split however
 * (docs/FORMAT.md). A token with a byte past ASCII has no key of its own
 * (CD169β is not CD169). */
static int add_token_keys(ix_analysis *a, const char *text, size_t n)
{
	uint32_t pos = 0;
	for (size_t i = 0; i < a->nruns; i++) {
		uint32_t s = a->runs[2 * i], e = a->runs[2 * i + 1];
		if (s >= e || e > n)
			continue;
		int ascii = 1;
		for (uint32_t k = s; k < e && ascii; k++)
			ascii = (unsigned char)text[k] < 0x80;
		char *term = a->ident;
		uint32_t kl;
		if (!ascii || text_ident_key(text + s, e - s, term + 1, TEXT_IDENT_MAX_KEY + 1, &kl) != 0 ||
		    classified_at(a, s, term + 1, kl))
			continue;
		term[0] = IX_IDENT_MARK;
		term[kl + 1] = IX_IDENT_SEP;
		term[kl + 2] = IX_IDENT_TOKEN;
		int rc = an_push(a, term, kl + 3, pos++);
		if (rc)
			return rc;
	}
	return 0;
}

static int add_idents(ix_analysis *a, const ix_doc_in *d, const char *text, size_t n)
{
	text_ident_opts o = { d->ident_min_len ? d->ident_min_len : 3,
	                      d->ident_max ? d->ident_max : 50 };
	ident_ctx x = { a, text, 0 };
	a->nclassified = 0;
	int rc = text_idents(text, n, &o, on_ident, &x);
	return rc ? rc : add_token_keys(a, text, n);
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

static int check_doc(const ix_doc_in *d)
{
	if (!d->key || !*d->key)
		return fa_err(FATHOM_EINVAL, "a document needs a key");
	if (d->text_len && !d->text)
		return fa_err(FATHOM_EINVAL, "%s: text is NULL", d->key);
	if (d->text_len > UINT32_MAX)
		return fa_err(FATHOM_ETOOBIG, "%s: documents over 4 GiB are not supported", d->key);
	if (d->n_tags > UINT16_MAX || d->n_meta > UINT16_MAX)
		return fa_err(FATHOM_ETOOBIG, "%s: too many tags or metadata", d->key);
	if (d->n_chunks && !d->chunks)
		return fa_err(FATHOM_EINVAL, "%s: chunks is NULL", d->key);
	if (d->grep_only && d->n_chunks)
		return fa_err(FATHOM_EINVAL, "%s: a grep-only document has no chunks", d->key);
	if (d->raw_len && !d->raw)
		return fa_err(FATHOM_EINVAL, "%s: raw is NULL", d->key);
	for (size_t i = 0; i < d->n_chunks; i++) {
		const ix_chunk_in *c = &d->chunks[i];
		if (c->byte_start > c->byte_end || c->byte_end > d->text_len ||
		    (c->headings_len && !c->headings))
			return fa_err(FATHOM_EINVAL, "%s: chunk %zu is out of range", d->key, i);
	}
	if (d->vecs && (d->vec_dim == 0 || d->vec_dim > IX_VEC_MAX_DIM))
		return fa_err(FATHOM_EINVAL, "%s: vectors of %u dimensions (1..%u)", d->key,
		              d->vec_dim, IX_VEC_MAX_DIM);
	for (size_t i = 0; d->vecs && i < (size_t)d->n_chunks * d->vec_dim; i++)
		if (!isfinite(d->vecs[i]))
			return fa_err(FATHOM_EINVAL, "%s: a vector value that is not finite", d->key);
	for (size_t i = 0; i < d->n_tags; i++)
		if (!d->tags[i])
			return fa_err(FATHOM_EINVAL, "%s: tag %zu is NULL", d->key, i);
	for (size_t i = 0; i < d->n_meta; i++)
		if (!d->meta[i] || !strchr(d->meta[i], '='))
			return fa_err(FATHOM_EINVAL, "%s: metadata %zu is not key=value", d->key, i);
	return 0;
}

static int analyse_doc(ix_analysis *a, text_analyzer *an, const ix_doc_in *d)
{
	int rc;
	if ((rc = fa_grow((void **)&a->docs, &a->cap_docs, a->ndocs + 1, sizeof *a->docs)) != 0)
		return rc;
	an_doc *ad = &a->docs[a->ndocs];
	memset(ad, 0, sizeof *ad);
	ad->chunk0 = (uint32_t)a->nchunks;
	if (d->grep_only)
		return 0;   /* no chunks: nothing to analyse */
	/* Path, title and tags are the same for every chunk: analysed once. */
	ad->path = (uint32_t)a->ntok;
	if ((rc = analyse_name(a, an, nz(d->path))) != 0)
		return rc;
	ad->title = (uint32_t)a->ntok;
	if ((rc = analyse_name(a, an, nz(d->title))) != 0)
		return rc;
	uint32_t pos = 0;
	ad->tags = (uint32_t)a->ntok;
	for (size_t i = 0; i < d->n_tags; i++) {
		/* A gap between tags keeps a phrase from spanning two. */
		if (i)
			pos++;
		if ((rc = analyse_text(a, an, d->tags[i], strlen(d->tags[i]), &pos)) != 0)
			return rc;
	}
	ad->end = (uint32_t)a->ntok;
	if (a->nchunks + d->n_chunks > UINT32_MAX)
		return fa_err(FATHOM_ETOOBIG, "too many chunks for one batch");
	if ((rc = fa_grow((void **)&a->chunks, &a->cap_chunks, a->nchunks + d->n_chunks,
	                  sizeof *a->chunks)) != 0)
		return rc;
	for (size_t i = 0; i < d->n_chunks; i++) {
		const ix_chunk_in *c = &d->chunks[i];
		an_chunk *ac = &a->chunks[a->nchunks + i];
		const char *body = d->text + c->byte_start;
		size_t blen = c->byte_end - c->byte_start;
		ac->head = (uint32_t)a->ntok;
		pos = 0;
		if ((rc = analyse_text(a, an, c->headings, c->headings_len, &pos)) != 0)
			return rc;
		ac->body = (uint32_t)a->ntok;
		pos = 0;
		a->nruns = 0;
		if (blen && (rc = text_analyze(an, body, blen, &pos, on_body_token, a, NULL)) != 0)
			return rc;
		ac->ident = (uint32_t)a->ntok;
		if (blen && (rc = add_idents(a, d, body, blen)) != 0)
			return rc;
		ac->end = (uint32_t)a->ntok;
	}
	a->nchunks += d->n_chunks;
	ad->nchunks = (uint32_t)d->n_chunks;
	return 0;
}

int ix_analyse_doc(ix_analysis *a, text_analyzer *an, const ix_doc_in *doc, uint32_t *handle)
{
	int rc = check_doc(doc);
	if (rc)
		return rc;
	if (a->ndocs >= UINT32_MAX - 1)
		return fa_err(FATHOM_ETOOBIG, "too many documents for one batch");
	if ((rc = analyse_doc(a, an, doc)) != 0)
		return fa_err_wrap(rc, "%s", doc->key);
	*handle = (uint32_t)a->ndocs++;
	return 0;
}

/* ---- appending an analysed document: the writer ----------------------------- */

/* Give every token of [from, to) its id in the pending buffer (new terms
 * are added), so that the appends below know their records in advance. */
static int resolve_tokens(ix_pending *p, ix_analysis *a, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++) {
		uint32_t term = a->tok[i].term;
		if (a->gid[term] != UINT32_MAX)
			continue;
		const an_term *at = &a->terms[term];
		int rc = term_id_hashed(p, (const char *)a->bytes.data + at->off, at->len, at->hash,
		                        &a->gid[term]);
		if (rc)
			return rc;
	}
	return 0;
}

/* How many tokens ahead the appends fetch a term's record, and then the
 * end of its buffer: each token's term is a likely cache miss. */
#define PREFETCH_AHEAD 8
#define PREFETCH_BUF_AHEAD 3

/* Append the tokens [from, to) of the analysis (resolved) as occurrences
 * in field. */
static int append_tokens(ix_pending *p, const ix_analysis *a, uint32_t from, uint32_t to,
                         int field)
{
	const tok_ref *tok = a->tok;
	const uint32_t *gid = a->gid;
	for (uint32_t i = from; i < to; i++) {
		if (i + PREFETCH_AHEAD < to)
			__builtin_prefetch(p->tv[gid[tok[i + PREFETCH_AHEAD].term]]);
		if (i + PREFETCH_BUF_AHEAD < to) {
			const pend_term *t = p->tv[gid[tok[i + PREFETCH_BUF_AHEAD].term]];
			if (t->buf)
				__builtin_prefetch(t->buf + t->len, 1);
		}
		int rc = add_occurrence(p, gid[tok[i].term], field, tok[i].pos);
		if (rc)
			return rc;
	}
	return 0;
}

/* The analysis' terms map to the ids of this pending buffer (a flush starts
 * a new one, with new ids). */
static int map_terms(ix_pending *p, ix_analysis *a)
{
	if (a->gid_serial != p->serial) {
		a->ngid = 0;
		a->gid_serial = p->serial;
	}
	if (a->ngid == a->nterms)
		return 0;
	int rc = fa_grow((void **)&a->gid, &a->cap_gid, a->nterms, sizeof *a->gid);
	if (rc)
		return rc;
	memset(a->gid + a->ngid, 0xff, (a->nterms - a->ngid) * sizeof *a->gid);
	a->ngid = a->nterms;
	return 0;
}

static int add_doc(ix_pending *p, const ix_doc_in *d, ix_analysis *a, uint32_t handle)
{
	fbuf *s = &p->strs;
	fbuf_reset(s);
	const char *fixed[5] = { d->key, nz(d->path), nz(d->title), nz(d->url), nz(d->lang) };
	for (int i = 0; i < 5; i++)
		fbuf_append(s, fixed[i], strlen(fixed[i]) + 1);
	for (size_t i = 0; i < d->n_tags; i++)
		fbuf_append(s, d->tags[i], strlen(d->tags[i]) + 1);
	for (size_t i = 0; i < d->n_meta; i++)
		fbuf_append(s, d->meta[i], strlen(d->meta[i]) + 1);
	if (s->err)
		return s->err;

	uint32_t doc = ix_segw_ndocs(p->w);
	ix_doc_rec rec = { d->size, d->mtime_ns, d->content_hash, d->kind, (uint32_t)d->n_tags,
	                   (uint32_t)d->n_meta, d->trigrams || d->grep_only, d->grep_only, 0 };
	const char *tri = d->raw ? d->raw : d->text;
	size_t tri_len = d->raw ? d->raw_len : d->text_len;
	int rc = ix_segw_add_doc(p->w, &rec, (const char *)s->data, s->len,
	                         d->grep_only ? "" : d->text, d->grep_only ? 0 : d->text_len, tri,
	                         tri_len);
	if (rc)
		return rc;
	if ((rc = fa_grow((void **)&p->deleted, &p->deleted_cap, (size_t)doc + 1, 1)) != 0)
		return rc;
	p->deleted[doc] = 0;
	fa_strmap_slot *ks = fa_strmap_upsert(&p->keys, d->key, strlen(d->key), NULL);
	if (!ks)
		return fa_err(FATHOM_ENOMEM, "out of memory (key map)");
	ks->value = doc;
	if (d->grep_only)
		return 0;   /* no chunks */
	if ((rc = map_terms(p, a)) != 0)
		return rc;

	/* Each chunk's fields in order: path, title, headings, tags, body, then
	 * the identifiers (in the body field, outside its length). */
	const an_doc *ad = &a->docs[handle];
	uint32_t last = ad->nchunks ? a->chunks[ad->chunk0 + ad->nchunks - 1].end : ad->end;
	if ((rc = resolve_tokens(p, a, ad->path, last)) != 0)
		return rc;
	for (uint32_t i = 0; i < ad->nchunks; i++) {
		const ix_chunk_in *c = &d->chunks[i];
		const an_chunk *ac = &a->chunks[ad->chunk0 + i];
		uint32_t field_len[FATHOM_NFIELDS] = { 0 };
		field_len[F_PATH] = ad->title - ad->path;
		field_len[F_TITLE] = ad->tags - ad->title;
		field_len[F_HEADINGS] = ac->body - ac->head;
		field_len[F_TAGS] = ad->end - ad->tags;
		field_len[F_BODY] = ac->ident - ac->body;
		p->chunk = ix_segw_nchunks(p->w);
		if ((rc = append_tokens(p, a, ad->path, ad->title, F_PATH)) != 0 ||
		    (rc = append_tokens(p, a, ad->title, ad->tags, F_TITLE)) != 0 ||
		    (rc = append_tokens(p, a, ac->head, ac->body, F_HEADINGS)) != 0 ||
		    (rc = append_tokens(p, a, ad->tags, ad->end, F_TAGS)) != 0 ||
		    (rc = append_tokens(p, a, ac->body, ac->ident, F_BODY)) != 0 ||
		    (rc = append_tokens(p, a, ac->ident, ac->end, F_BODY)) != 0)
			return rc;
		rc = ix_segw_add_chunk(p->w, c->line_start, c->line_end, c->byte_start, c->byte_end,
		                       c->headings, c->headings_len, field_len);
		if (!rc && d->vecs)
			rc = ix_segw_chunk_vector(p->w, ix_segw_nchunks(p->w) - 1,
			                          d->vecs + (size_t)i * d->vec_dim, d->vec_dim, d->vec_fp);
		if (rc)
			return rc;
	}
	return 0;
}

/* Tombstone the live document with this key wherever it is (writer view). */
static int delete_live(ix_index *ix, const char *key)
{
	int rc = ix_pending_delete(ix->pend, key);
	if (rc != FATHOM_ENOTFOUND)
		return rc;
	for (size_t i = ix->nw; i-- > 0;) {
		ix_wseg *w = &ix->w[i];
		uint32_t doc;
		const uint8_t *del = w->del_docs ? w->del_docs : w->seg->del_docs;
		rc = seg_find_doc_live(w->seg, key, del, &doc);
		if (rc == FATHOM_ENOTFOUND)
			continue;
		if (rc)
			return rc;
		if (ix_bit_get(del, doc))
			continue;
		return ix_wseg_delete_doc(w, doc);
	}
	return FATHOM_ENOTFOUND;
}

int ix_add_analysed(ix_index *ix, const ix_doc_in *doc, ix_analysis *a, uint32_t handle)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	ix_pending *p = ix->pend;
	if (p->err)
		return fa_err(p->err, "%s: an earlier add failed; roll back first", ix->dir);
	int rc = check_doc(doc);
	if (rc)
		return rc;
	if (handle >= a->ndocs || a->docs[handle].nchunks != (doc->grep_only ? 0 : doc->n_chunks))
		return fa_err(FATHOM_EINVAL, "%s: not the document analysed", doc->key);
	if (doc->vecs && !ix_segw_vectors_fit(p->w, doc->vec_dim, doc->vec_fp))
		return fa_err(FATHOM_EINVAL,
		              "%s: its vectors (%u dimensions) are not those of the documents before "
		              "it in this commit", doc->key, doc->vec_dim);
	rc = delete_live(ix, doc->key);
	if (rc && rc != FATHOM_ENOTFOUND)
		return rc;
	fa_err_clear();
	if ((rc = add_doc(p, doc, a, handle)) != 0) {
		/* Half a document is in the buffer: refuse more until rollback. */
		p->err = rc;
		return fa_err_wrap(rc, "%s", doc->key);
	}
	if (pending_mem(p) >= ix->flush_budget)
		return ix_pending_flush(ix);
	return 0;
}

int ix_add_doc(ix_index *ix, text_analyzer *an, const ix_doc_in *doc)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	ix_pending *p = ix->pend;
	if (p->err)
		return fa_err(p->err, "%s: an earlier add failed; roll back first", ix->dir);
	int rc;
	if (!p->scratch && (rc = ix_analysis_new(&p->scratch)) != 0)
		return rc;
	ix_analysis_reset(p->scratch);
	uint32_t handle;
	if ((rc = ix_analyse_doc(p->scratch, an, doc, &handle)) != 0)
		return rc;
	return ix_add_analysed(ix, doc, p->scratch, handle);
}

/* ---- lookups ------------------------------------------------------------------- */

static int pending_doc(ix_pending *p, const char *key, uint32_t *doc)
{
	fa_strmap_slot *ks = fa_strmap_find(&p->keys, key, strlen(key));
	if (!ks || p->deleted[ks->value])
		return FATHOM_ENOTFOUND;
	*doc = (uint32_t)ks->value;
	return 0;
}

int ix_pending_lookup(ix_pending *p, const char *key, ix_doc_state *out)
{
	uint32_t doc;
	if (pending_doc(p, key, &doc))
		return FATHOM_ENOTFOUND;
	ix_segw_doc_state(p->w, doc, out);
	return 0;
}

int ix_pending_delete(ix_pending *p, const char *key)
{
	uint32_t doc;
	if (pending_doc(p, key, &doc))
		return FATHOM_ENOTFOUND;
	p->deleted[doc] = 1;
	p->ndeleted++;
	return 0;
}

int ix_pending_foreach(ix_pending *p, int (*cb)(void *ctx, const char *key), void *ctx)
{
	for (size_t i = 0; i < p->keys.cap; i++) {
		const fa_strmap_slot *s = &p->keys.slots[i];
		if (!s->key || p->deleted[s->value])
			continue;
		int rc = cb(ctx, s->key);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- flushing ------------------------------------------------------------------ */

typedef struct term_ref {
	uint64_t head;          /* the first 8 bytes, big-endian, zero-padded */
	const pend_term *t;
} term_ref;

/* The first 8 bytes of a term as a number that orders as they do: terms
 * that differ there compare without memcmp (most do: a flush sorts a
 * million terms on the writer's thread). */
static uint64_t term_head(const char *key, size_t len)
{
	uint64_t h = 0;
	for (size_t i = 0; i < 8; i++)
		h = h << 8 | (i < len ? (unsigned char)key[i] : 0);
	return h;
}

/* Byte order, a prefix first. Zero padding keeps the heads in that order;
 * equal heads (or a term holding a zero byte) fall back on the bytes. */
static int term_ref_cmp(const void *a, const void *b)
{
	const term_ref *x = a, *y = b;
	if (x->head != y->head)
		return x->head < y->head ? -1 : 1;
	const pend_term *s = x->t, *t = y->t;
	int c = memcmp(s->key, t->key, FA_MIN(s->keylen, t->keylen));
	if (c)
		return c;
	return s->keylen < t->keylen ? -1 : s->keylen > t->keylen;
}

typedef struct pos_buf {
	uint32_t *v[FATHOM_NFIELDS];
	size_t cap[FATHOM_NFIELDS];
	uint32_t n[FATHOM_NFIELDS];
} pos_buf;

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int emit_posting(ix_term_enc *e, uint32_t chunk, pos_buf *pb)
{
	uint16_t tf[FATHOM_NFIELDS];
	const uint32_t *pos[FATHOM_NFIELDS];
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		uint32_t n = pb->n[f];
		for (uint32_t k = 1; k < n; k++) {
			if (pb->v[f][k] < pb->v[f][k - 1]) {
				qsort(pb->v[f], n, sizeof(uint32_t), u32_cmp);
				break;
			}
		}
		tf[f] = (uint16_t)n;
		pos[f] = pb->v[f];
	}
	return ix_term_enc_posting(e, chunk, tf, pos);
}

/* Replay one term's occurrence buffer as postings. */
static int replay_term(ix_term_enc *e, const pend_term *t, pos_buf *pb)
{
	const unsigned char *q = t->buf, *end = t->buf + t->len;
	uint32_t chunk = UINT32_MAX, last_pos = 0;
	int have = 0, last_field = -1, rc;
	while (q < end) {
		uint64_t v;
		if (fa_varint_get(&q, end, &v))
			return fa_err(FATHOM_ECORRUPT, "writer: damaged postings buffer");
		unsigned code = (unsigned)(v & 7);
		if (code == 7) {
			if (have && (rc = emit_posting(e, chunk, pb)) != 0)
				return rc;
			chunk += (uint32_t)(v >> 3);
			/* its chunk record (field lengths) is read when the posting
			 * is encoded, after its positions: fetch it now */
			if (chunk < e->nchunks)
				__builtin_prefetch(e->chunks + (size_t)chunk * IX_CHUNK_REC + 28);
			memset(pb->n, 0, sizeof pb->n);
			have = 1;
			last_field = -1;
			continue;
		}
		if (code >= FATHOM_NFIELDS || !have)
			return fa_err(FATHOM_ECORRUPT, "writer: damaged postings buffer");
		uint64_t zz = v >> 3;
		int64_t delta = (int64_t)(zz >> 1) ^ -(int64_t)(zz & 1);
		if ((int)code != last_field) {
			last_pos = 0;
			last_field = (int)code;
		}
		uint32_t pos = (uint32_t)((int64_t)last_pos + delta);
		last_pos = pos;
		/* tf saturates at 65535; so do the positions kept. */
		if (pb->n[code] >= IX_MAX_TF)
			continue;
		if (pb->n[code] == pb->cap[code] &&
		    (rc = fa_grow((void **)&pb->v[code], &pb->cap[code], (size_t)pb->n[code] + 1,
		                  sizeof(uint32_t))) != 0)
			return rc;
		pb->v[code][pb->n[code]++] = pos;
	}
	return have ? emit_posting(e, chunk, pb) : 0;
}

/* ---- the postings, encoded on the pool ---------------------------------------- */

/* A batch ends at whichever comes first (occurrence buffer bytes stand for
 * its postings); a window of batches is in flight. */
#define FLUSH_BATCH_TERMS 1024
#define FLUSH_BATCH_BYTES ((size_t)1 << 20)

typedef struct fl_slot {
	size_t first, n;         /* the batch: refs[first, first + n) */
} fl_slot;

typedef struct fl_ctx {
	const ix_pending *p;
	const term_ref *refs;
	size_t nrefs, next;
	const unsigned char *chunks;
	uint32_t nchunks;
	ix_term_pool tp;
	fl_slot *slots;          /* tp.window */
	pos_buf *pb;             /* tp.nworkers */
} fl_ctx;

/* The next batch of terms, in dictionary order. */
static int fl_produce(void *ctx, size_t slot)
{
	fl_ctx *c = ctx;
	fl_slot *sl = &c->slots[slot];
	size_t bytes = 0;
	sl->first = c->next;
	sl->n = 0;
	while (c->next < c->nrefs && sl->n < FLUSH_BATCH_TERMS && bytes < FLUSH_BATCH_BYTES) {
		bytes += c->refs[c->next].t->len;
		c->next++;
		sl->n++;
	}
	return sl->n > 0;
}

/* Replay and encode the batch's terms. */
#define FLUSH_PREFETCH 8
#define FLUSH_PREFETCH_BUF 4

static int fl_work(void *ctx, unsigned worker, size_t slot)
{
	fl_ctx *c = ctx;
	const fl_slot *sl = &c->slots[slot];
	ix_term_enc *e = &c->tp.enc[worker];
	fbuf *out = &c->tp.out[slot];
	fbuf_reset(out);
	const term_ref *refs = c->refs + sl->first;
	for (size_t i = 0; i < sl->n; i++) {
		/* Each term's record and buffer are a cache miss (a million
		 * terms, in the order they first came): fetch ahead. */
		if (i + FLUSH_PREFETCH < sl->n)
			__builtin_prefetch(refs[i + FLUSH_PREFETCH].t);
		if (i + FLUSH_PREFETCH_BUF < sl->n)
			__builtin_prefetch(refs[i + FLUSH_PREFETCH_BUF].t->buf);
		const pend_term *t = refs[i].t;
		if (t->len == 0)
			continue;   /* seen only in a field cache, never in a chunk */
		ix_term_enc_begin(e, c->chunks, c->nchunks);
		int rc = replay_term(e, t, &c->pb[worker]);
		if (!rc)
			rc = ix_term_enc_end(e);
		if (rc || (rc = ix_term_enc_save(e, out, &c->tp.saved[slot][i])) != 0)
			return rc;
	}
	return 0;
}

/* The batch's terms to the segment, in order. */
static int fl_emit(void *ctx, size_t slot)
{
	fl_ctx *c = ctx;
	const fl_slot *sl = &c->slots[slot];
	for (size_t i = 0; i < sl->n; i++) {
		const pend_term *t = c->refs[sl->first + i].t;
		if (t->len == 0)
			continue;
		int rc = ix_segw_term_put_saved(c->p->w, t->key, t->keylen, &c->tp.out[slot],
		                                &c->tp.saved[slot][i]);
		if (rc)
			return rc;
	}
	return 0;
}

/* The sorted terms' postings to the pending segment writer. */
static int flush_postings(ix_pending *p, const term_ref *refs, size_t n)
{
	if (n == 0)
		return 0;
	int rc = ix_segw_start_terms(p->w);
	fl_ctx c = { .p = p, .refs = refs, .nrefs = n, .chunks = ix_segw_chunk_recs(p->w),
	             .nchunks = ix_segw_nchunks(p->w) };
	if (rc || (rc = ix_term_pool_open(&c.tp, FLUSH_BATCH_TERMS)) != 0)
		return rc;
	c.slots = fa_calloc(c.tp.window, sizeof *c.slots);
	c.pb = fa_calloc(c.tp.nworkers, sizeof *c.pb);
	if (!c.slots || !c.pb)
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
	if (!rc) {
		fa_pipeline fns = { fl_produce, fl_work, fl_emit };
		rc = ix_term_pool_run(&c.tp, &fns, &c);
	}
	for (size_t i = 0; c.pb && i < c.tp.nworkers; i++)
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			fa_free(c.pb[i].v[f]);
	fa_free(c.pb);
	fa_free(c.slots);
	ix_term_pool_close(&c.tp);
	return rc;
}

int ix_pending_flush(ix_index *ix)
{
	ix_pending *p = ix->pend;
	if (p->err)
		return fa_err(p->err, "%s: an earlier add failed; roll back first", ix->dir);
	if (ix_pending_empty(p))
		return 0;
	uint32_t id = ix_next_seg_id(ix);
	char name[64];
	ix_seg_name(name, sizeof name, id);
	char *path = fa_path_join(ix->dir, name);
	term_ref *refs = NULL;
	ix_segment *seg = NULL;
	uint64_t file_len = 0;
	int rc = 0;
	if (!path || (p->ntv && !(refs = fa_malloc(p->ntv * sizeof *refs)))) {
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
		goto cleanup;
	}
	/* The pending segment writer was created before its id was known. */
	ix_segw_set_id(p->w, id);
	ix_segw_set_graph_opts(p->w, &ix->graph);
	if ((rc = ix_segw_open_file(p->w, path)) != 0)
		goto cleanup;
	size_t n = 0;
	for (size_t i = 0; i < p->ntv; i++)
		refs[n++] = (term_ref){ term_head(p->tv[i]->key, p->tv[i]->keylen), p->tv[i] };
	if (n)
		qsort(refs, n, sizeof *refs, term_ref_cmp);
	rc = flush_postings(p, refs, n);
	if (!rc)
		rc = ix_segw_finish(p->w, &file_len);
	if (!rc)
		rc = seg_open_file(&seg, path);
	if (!rc)
		rc = ix_wseg_append(ix, seg, file_len);
	if (rc) {
		seg_close(seg);
		if (file_len)
			remove(path);
		goto cleanup;
	}
	{
		ix_wseg *ws = &ix->w[ix->nw - 1];
		uint32_t ndocs = seg_ndocs(seg);
		for (uint32_t d = 0; d < ndocs && !rc; d++)
			if (p->deleted[d])
				rc = ix_wseg_delete_doc(ws, d);
	}
	if (!rc) {
		/* Start a fresh buffer. */
		ix_pending *np;
		if ((rc = ix_pending_new(&np)) == 0) {
			ix_pending_free(ix->pend);
			ix->pend = np;
		}
	}
cleanup:
	if (rc)
		p->err = rc;   /* the buffer is half written: only rollback helps */
	fa_free(refs);
	fa_free(path);
	return rc;
}
