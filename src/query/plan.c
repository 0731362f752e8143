/*
 * plan.c — two stages on the (expanded) AST. identify (q_identify): the
 * exact identifiers of the query's top level (TC-1001, v2.0.1,
 * AuthService), looked up in the index; one it holds becomes a pre-filter
 * and frees the words it covers. The plan (q_plan_build): the terms a
 * search scores, the tree a chunk must satisfy, and which terms every
 * match must hold.
 *
 * Every word and phrase goes through the index's own analyser, so query
 * terms meet indexed terms in one form. One leaf can give several units:
 *   a word or number           one term
 *   an identifier              its whole form (getusername) when some
 *                              segment holds it, else the phrase of its parts
 *                              (get user name), which also finds prose
 *   CJK text                   the phrase of its bigrams
 *   a "quoted phrase"          the phrase of its tokens (identifier parts
 *                              rather than wholes, as parts match both forms)
 *   a prefix (auth*)           an OR of the indexed terms it begins, the 16
 *                              most frequent
 * A leaf matches when all its units do.
 *
 * The match tree mirrors the AST (AND, OR, NOT) with units as leaves. The
 * words of the query's top level (its items outside parentheses, OR and
 * negation) are required or optional as route.c decided (the matching
 * mode; under AUTO, from the count of those words' units that
 * q_plan_top_units makes here, so both see the same units). Optional
 * units only score; quoted phrases, OR groups and negations always bind.
 *
 * Terms of negated leaves are looked up but never scored (idf 0), so they
 * add nothing to any bound. The terms of the top level, in order, also form
 * the sequence (plan->seq) that the phrase and prefix bonuses look for.
 */
#include "query/query_int.h"

#define Q_MAX_TOKENS 1024
#define Q_MAX_PREFIX_TERMS 16
#define Q_MAX_TERM_BYTES 255    /* the longest indexed term */
#define Q_MIN_PREFIX 2        /* characters before the '*' */
#define Q_SEQ_BASE 0          /* positions of the top level's tokens */
#define Q_OTHER_BASE (1u << 24) /* positions of the other leaves' tokens */

/* A leaf of the AST, as the analyser sees it. */
enum { Q_CLAUSE_WORD = 0, Q_CLAUSE_PHRASE = 1 };
typedef struct q_clause {
	int kind;
	const char *text;    /* into the query string, not NUL-terminated */
	size_t len;
	uint32_t node;       /* in the AST */
	int must;            /* reached from the root through AND only, not negated */
	int top;             /* a direct child of the root */
	int negated;
} q_clause;

typedef struct q_tok {
	const char *term;
	uint32_t len;
	uint32_t pos;
	uint32_t start, end;  /* in the clause text */
	uint8_t kind;
	uint32_t clause;
} q_tok;

typedef struct tok_list {
	fa_arena *a;
	q_tok *t;
	size_t n;
	uint32_t clause;
	int err;
} tok_list;

enum unit_kind { U_WORD, U_IDENT, U_CJK, U_QUOTED };

typedef struct q_unit {
	int kind;
	int stopword;
	int required;
	int32_t whole;        /* token of the single-term form, or -1 */
	uint32_t *elems;      /* tokens of the phrase form */
	uint32_t nelems;
	int use_phrase;       /* decided: the phrase form (else the whole) */
	uint32_t clause;      /* the leaf it comes from */
	int also_whole;       /* with the parts, the whole too (optional units) */
} q_unit;

static int collect_token(void *ctx, const text_token *tok)
{
	tok_list *l = ctx;
	/* A query reads a CJK run through its bigrams; the characters the
	 * index holds beside them serve a query of one character, which the
	 * tokenizer gives as a lone TOK_CJK. */
	if (tok->kind == TOK_CJK_CHAR)
		return 0;
	if (l->n >= Q_MAX_TOKENS) {
		l->err = fa_err(FATHOM_ETOOBIG, "query has more than %d tokens", Q_MAX_TOKENS);
		return l->err;
	}
	q_tok *t = &l->t[l->n];
	t->term = fa_arena_strndup(l->a, tok->term, tok->len);
	if (!t->term) {
		l->err = fa_err(FATHOM_ENOMEM, "query token");
		return l->err;
	}
	t->len = tok->len;
	t->pos = tok->pos;
	t->start = tok->start;
	t->end = tok->end;
	t->kind = tok->kind;
	t->clause = l->clause;
	l->n++;
	return 0;
}

/* Is the token, normalised but not stemmed, a stop word? */
static int token_is_stopword(const q_clause *c, const q_tok *t, fbuf *scratch)
{
	if (t->kind != TOK_WORD || t->end > c->len || t->start >= t->end)
		return 0;
	fbuf_reset(scratch);
	if (text_normalize(scratch, c->text + t->start, t->end - t->start) != 0)
		return 0;
	return text_is_stopword((const char *)scratch->data, scratch->len);
}

int q_plan_lookup(q_plan *p, fa_arena *a, ix_index *ix, const char *term, uint32_t len,
                  const q_lookup **out)
{
	for (uint32_t i = 0; i < p->nlookups; i++) {
		if (p->lookups[i].len == len && memcmp(p->lookups[i].text, term, len) == 0) {
			*out = &p->lookups[i];
			return 0;
		}
	}
	/* Past the cache's size (a query of many identifiers), the last entry
	 * is reused: correct, only slower. */
	q_lookup *l = &p->lookups[p->nlookups < Q_MAX_LOOKUPS ? p->nlookups++ : Q_MAX_LOOKUPS - 1];
	size_t nseg = ix_nsegments(ix);
	l->text = term;
	l->len = len;
	l->df = 0;
	l->ti = fa_arena_alloc(a, (nseg ? nseg : 1) * sizeof *l->ti);
	l->found = fa_arena_calloc(a, nseg ? nseg : 1, 1);
	if (!l->ti || !l->found) {
		l->len = UINT32_MAX; /* never matches */
		return fa_err(FATHOM_ENOMEM, "term lookup");
	}
	for (size_t i = 0; i < nseg; i++) {
		int rc = seg_term(ix_segment_at(ix, i), term, len, &l->ti[i]);
		if (rc == FATHOM_ENOTFOUND)
			continue;
		if (rc) {
			l->len = UINT32_MAX;
			return rc;
		}
		l->found[i] = 1;
		l->df += l->ti[i].df;
	}
	*out = l;
	return 0;
}

/* Is token i a whole followed by its parts (getUserName, or the number
 * 2.0.1 with parts 2, 0, 1)? */
static int starts_parts(const q_tok *tok, size_t ntok, size_t i)
{
	return i + 1 < ntok && tok[i].kind != TOK_PART && tok[i + 1].kind == TOK_PART &&
	       tok[i + 1].clause == tok[i].clause && tok[i + 1].start >= tok[i].start &&
	       tok[i + 1].end <= tok[i].end;
}

/* Split the token list into units, in order. */
static int make_units(fa_arena *a, const q_clause *cl, const q_tok *tok, size_t ntok,
                      q_unit **out, size_t *nout)
{
	q_unit *u = fa_arena_calloc(a, ntok ? ntok : 1, sizeof *u);
	uint32_t *elems = fa_arena_alloc(a, (ntok ? ntok : 1) * sizeof *elems);
	if (!u || !elems)
		return fa_err(FATHOM_ENOMEM, "query units");
	size_t nu = 0, ne = 0, i = 0;
	fbuf scratch;
	fbuf_init(&scratch, 4096);
	while (i < ntok) {
		const q_clause *c = &cl[tok[i].clause];
		q_unit *x = &u[nu++];
		x->elems = elems + ne;
		x->clause = tok[i].clause;
		x->whole = -1;
		if (c->kind == Q_CLAUSE_PHRASE) {
			/* The whole clause is one unit; the whole of an identifier
			 * stands aside for its parts. */
			uint32_t cid = tok[i].clause;
			x->kind = U_QUOTED;
			for (; i < ntok && tok[i].clause == cid; i++)
				if (!starts_parts(tok, ntok, i))
					x->elems[x->nelems++] = (uint32_t)i;
			if (x->nelems == 1)
				x->whole = (int32_t)x->elems[0];
		} else if (tok[i].kind == TOK_IDENT || starts_parts(tok, ntok, i)) {
			x->kind = U_IDENT;
			x->whole = (int32_t)i;
			uint32_t s = tok[i].start, e = tok[i].end, cid = tok[i].clause;
			for (i++; i < ntok && tok[i].clause == cid && tok[i].kind == TOK_PART &&
			          tok[i].start >= s && tok[i].end <= e; i++)
				x->elems[x->nelems++] = (uint32_t)i;
		} else if (tok[i].kind == TOK_CJK) {
			x->kind = U_CJK;
			uint32_t cid = tok[i].clause;
			for (; i < ntok && tok[i].clause == cid && tok[i].kind == TOK_CJK; i++)
				x->elems[x->nelems++] = (uint32_t)i;
			if (x->nelems == 1)
				x->whole = (int32_t)x->elems[0];
		} else {
			/* A word, a number, or a part without its whole. */
			x->kind = U_WORD;
			x->whole = (int32_t)i;
			x->elems[x->nelems++] = (uint32_t)i;
			x->stopword = token_is_stopword(c, &tok[i], &scratch);
			i++;
		}
		ne += x->nelems;
		if (x->nelems == 0 && x->whole < 0)
			nu--; /* a quoted clause of identifiers with no parts: nothing */
	}
	fbuf_free(&scratch);
	*out = u;
	*nout = nu;
	return 0;
}

static int phrase_alloc(q_phrase *ph, fa_arena *a, uint32_t n)
{
	ph->n = 0;
	ph->term = fa_arena_alloc(a, (n ? n : 1) * sizeof *ph->term);
	ph->off = fa_arena_alloc(a, (n ? n : 1) * sizeof *ph->off);
	if (!ph->term || !ph->off)
		return fa_err(FATHOM_ENOMEM, "query phrase");
	return 0;
}

static void phrase_add(q_phrase *ph, uint32_t term, uint32_t pos, uint32_t pos0)
{
	ph->term[ph->n] = term;
	ph->off[ph->n] = (int32_t)((int64_t)pos - (int64_t)pos0);
	ph->n++;
}

/* Required or optional, for the units of the top level's plain words
 * (route.c decided: top_binds, coord); every other unit binds (required where it
 * is a must, else through the tree). */
static void decide_required(q_unit *u, size_t nu, const q_clause *cl, int top_binds, int coord)
{
	for (size_t i = 0; i < nu; i++) {
		const q_clause *c = &cl[u[i].clause];
		u[i].required = 1;
		if (!c->top || c->negated || u[i].kind == U_QUOTED)
			continue;
		/* A keyword query's identifier is one exact token, not words:
		 * it binds as it did when the query's words were required
		 * (free_ident_units frees it where the identifier filter
		 * applies). */
		u[i].required = top_binds || (coord && u[i].kind == U_IDENT);
	}
}

/* ---- the match tree ---------------------------------------------------------- */

typedef struct mbuild {
	q_plan *p;
	fa_arena *a;
	uint32_t *stack;     /* children being collected */
	uint32_t sp;
} mbuild;

static int m_new(mbuild *b, int kind, uint8_t fields, uint32_t idx, uint32_t *out)
{
	q_plan *p = b->p;
	if (p->nm >= Q_MAX_MNODES)
		return fa_err(FATHOM_ETOOBIG, "query too complex (more than %d parts)", Q_MAX_MNODES);
	p->m[p->nm] = (q_mnode){ (uint8_t)kind, fields, idx, 0, 0 };
	*out = p->nm++;
	return 0;
}

static int m_push(mbuild *b, uint32_t node)
{
	if (b->sp >= Q_MAX_MNODES)
		return fa_err(FATHOM_ETOOBIG, "query too complex (more than %d parts)", Q_MAX_MNODES);
	b->stack[b->sp++] = node;
	return 0;
}

static void m_adopt(mbuild *b, uint32_t node, uint32_t base)
{
	q_plan *p = b->p;
	p->m[node].first = p->nmkid;
	p->m[node].n = b->sp - base;
	memcpy(p->mkid + p->nmkid, b->stack + base, (b->sp - base) * sizeof *p->mkid);
	p->nmkid += b->sp - base;
	b->sp = base;
}

/* What the analysis made of each AST leaf: its units' match nodes. */
typedef struct leaf_out {
	uint32_t first, n;   /* in units_m */
	int is_leaf;
} leaf_out;

typedef struct plan_work {
	const q_ast *t;
	uint32_t *leaf_of;   /* AST node -> clause index, or UINT32_MAX */
	uint32_t *unit_m;    /* per unit: its match node, or UINT32_MAX (optional) */
	uint32_t *unit_first; /* per clause: first unit */
	uint32_t *unit_n;     /* per clause: unit count */
	uint32_t *prefix_m;  /* per clause: the OR node of a prefix, or UINT32_MAX */
} plan_work;

/* Build the match node of AST node `node`; UINT32_MAX when it binds nothing
 * (a leaf whose units are all optional). */
static int build_tree(mbuild *b, plan_work *w, uint32_t node, uint32_t *out)
{
	const q_ast *t = w->t;
	const q_node *n = &t->node[node];
	int rc;
	*out = UINT32_MAX;
	if (n->kind == QN_WORD || n->kind == QN_PHRASE) {
		uint32_t c = w->leaf_of[node];
		if (c == UINT32_MAX)
			return 0;
		if (w->prefix_m[c] != UINT32_MAX) {
			*out = w->prefix_m[c];
			return 0;
		}
		uint32_t base = b->sp;
		for (uint32_t k = 0; k < w->unit_n[c]; k++) {
			uint32_t m = w->unit_m[w->unit_first[c] + k];
			if (m != UINT32_MAX && (rc = m_push(b, m)))
				return rc;
		}
		if (b->sp - base == 1) {
			*out = b->stack[--b->sp];
			return 0;
		}
		if (b->sp == base)
			return 0;
		if ((rc = m_new(b, QM_AND, 0, 0, out)))
			return rc;
		m_adopt(b, *out, base);
		return 0;
	}
	uint32_t base = b->sp;
	for (uint32_t k = 0; k < n->n; k++) {
		uint32_t m;
		if ((rc = build_tree(b, w, t->kid[n->first + k], &m)))
			return rc;
		if (m != UINT32_MAX && (rc = m_push(b, m)))
			return rc;
	}
	if (b->sp == base && n->kind != QN_OR)
		return 0;   /* nothing binds (an OR of nothing never matches) */
	int kind = n->kind == QN_AND ? QM_AND : n->kind == QN_OR ? QM_OR : QM_NOT;
	if (kind != QM_NOT && b->sp - base == 1) {
		*out = b->stack[--b->sp];
		return 0;
	}
	if ((rc = m_new(b, kind, 0, 0, out)))
		return rc;
	m_adopt(b, *out, base);
	return 0;
}

/* ---- leaves ------------------------------------------------------------------- */

typedef struct leaf_walk {
	q_clause *cl;
	size_t n;
	uint32_t *leaf_of;
} leaf_walk;

static void collect_leaves(leaf_walk *lw, const q_ast *t, uint32_t node, int must, int negated,
                           int top)
{
	const q_node *n = &t->node[node];
	if (n->kind == QN_WORD || n->kind == QN_PHRASE) {
		q_clause *c = &lw->cl[lw->n];
		c->kind = n->kind == QN_PHRASE ? Q_CLAUSE_PHRASE : Q_CLAUSE_WORD;
		c->text = n->text;
		c->len = n->len;
		c->node = node;
		c->must = must && !negated;
		c->top = top && !negated;
		c->negated = negated;
		lw->leaf_of[node] = (uint32_t)lw->n++;
		return;
	}
	for (uint32_t k = 0; k < n->n; k++)
		collect_leaves(lw, t, t->kid[n->first + k], must && n->kind == QN_AND,
		               negated || n->kind == QN_NOT, node == t->root);
}

/* Expand prefix leaf c: the indexed terms it begins, most frequent first. */
typedef struct prefix_hit {
	char term[Q_MAX_TERM_BYTES + 1];
	uint32_t len;
	uint64_t df;
} prefix_hit;

typedef struct prefix_ctx {
	prefix_hit *hit;
	uint32_t n;
	uint64_t seen;
} prefix_ctx;

static int prefix_visit(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	prefix_ctx *pc = ctx;
	pc->seen++;
	for (uint32_t i = 0; i < pc->n; i++) {
		if (pc->hit[i].len == len && memcmp(pc->hit[i].term, term, len) == 0) {
			pc->hit[i].df += ti->df;
			return 0;
		}
	}
	/* Keep the Q_MAX_PREFIX_TERMS most frequent: replace the rarest. */
	uint32_t slot = pc->n;
	if (pc->n == Q_MAX_PREFIX_TERMS) {
		slot = 0;
		for (uint32_t i = 1; i < pc->n; i++)
			if (pc->hit[i].df < pc->hit[slot].df)
				slot = i;
		if (pc->hit[slot].df >= ti->df)
			return 0;
	} else {
		pc->n++;
	}
	memcpy(pc->hit[slot].term, term, len);
	pc->hit[slot].term[len] = '\0';
	pc->hit[slot].len = (uint32_t)len;
	pc->hit[slot].df = ti->df;
	return 0;
}

static int intern_text(q_plan *p, fa_arena *a, const char *text, uint32_t len, uint32_t *idx);

/* Remember where a term came from in the query, for messages. */
static void term_source(q_term *t, const char *src, uint32_t len)
{
	if (!t->src) {
		t->src = src;
		t->src_len = len;
	}
}

static int expand_prefix(q_plan *p, fa_arena *a, ix_index *ix, text_analyzer *an,
                         const q_clause *c, uint8_t fields, int scored, mbuild *b, uint32_t *out)
{
	fbuf norm;
	fbuf_init(&norm, 4096);
	int rc = text_normalize(&norm, c->text, c->len);
	if (rc || norm.err) {
		fbuf_free(&norm);
		return rc ? rc : norm.err;
	}
	size_t chars = 0;
	for (size_t i = 0; i < norm.len; i++)
		chars += (norm.data[i] & 0xC0) != 0x80;
	if (chars < Q_MIN_PREFIX || norm.len > Q_MAX_TERM_BYTES) {
		fbuf_free(&norm);
		if (chars >= Q_MIN_PREFIX)
			return fa_err(FATHOM_ETOOBIG, "a prefix of %zu bytes (at most %d)", norm.len,
			              Q_MAX_TERM_BYTES);
		return fa_err(FATHOM_EINVAL, "a prefix needs at least %d characters before '*'",
		              Q_MIN_PREFIX);
	}
	prefix_hit *hit = fa_arena_alloc(a, Q_MAX_PREFIX_TERMS * sizeof *hit);
	if (!hit) {
		fbuf_free(&norm);
		return fa_err(FATHOM_ENOMEM, "prefix terms");
	}
	prefix_ctx pc = { hit, 0, 0 };
	/* The prefix as typed, and its stem: indexed prose is stemmed, so
	 * "authenticat*" must also meet "authent". */
	size_t slen = 0;
	const char *stem = text_stem(an, (const char *)norm.data, norm.len, &slen);
	for (size_t s = 0; s < ix_nsegments(ix) && !rc; s++) {
		rc = seg_terms(ix_segment_at(ix, s), (const char *)norm.data, norm.len, prefix_visit, &pc);
		if (!rc && stem && slen && slen < norm.len)
			rc = seg_terms(ix_segment_at(ix, s), stem, slen, prefix_visit, &pc);
	}
	fbuf_free(&norm);
	if (rc)
		return rc;
	uint32_t base = b->sp;
	for (uint32_t i = 0; i < pc.n; i++) {
		uint32_t idx, m = 0;
		if ((rc = intern_text(p, a, hit[i].term, hit[i].len, &idx)))
			return rc;
		term_source(&p->terms[idx], c->text, c->len);
		p->terms[idx].scored |= scored;
		if ((rc = m_new(b, QM_TERM, fields, idx, &m)) || (rc = m_push(b, m)))
			return rc;
	}
	if ((rc = m_new(b, QM_OR, 0, 0, out)))
		return rc;
	m_adopt(b, *out, base);
	p->prefix_truncated |= pc.n == Q_MAX_PREFIX_TERMS && pc.seen > pc.n;
	if (pc.n == 0 && !p->empty_prefix) {
		p->empty_prefix = c->text;
		p->empty_prefix_len = (uint32_t)c->len;
	}
	return 0;
}

static int intern_text(q_plan *p, fa_arena *a, const char *text, uint32_t len, uint32_t *idx)
{
	for (uint32_t i = 0; i < p->nterms; i++) {
		if (p->terms[i].len == len && memcmp(p->terms[i].text, text, len) == 0) {
			*idx = i;
			return 0;
		}
	}
	if (p->nterms >= Q_MAX_TERMS)
		return fa_err(FATHOM_ETOOBIG, "query has more than %d distinct terms", Q_MAX_TERMS);
	q_term *x = &p->terms[p->nterms];
	memset(x, 0, sizeof *x);
	x->text = fa_arena_strndup(a, text, len);
	if (!x->text)
		return fa_err(FATHOM_ENOMEM, "query term");
	x->len = len;
	*idx = p->nterms++;
	return 0;
}

/* ---- exact identifiers ----------------------------------------------------------- */

typedef struct ident_find {
	q_plan *p;
	const char *base;      /* the text being scanned */
	size_t limit;          /* identifiers starting from here belong to
	                        * later clauses (the arguments of "name (") */
} ident_find;

static int on_query_ident(void *ctx, const text_ident *id)
{
	ident_find *f = ctx;
	q_plan *p = f->p;
	if (p->nidents >= Q_MAX_IDENTS || id->start >= f->limit)
		return 0;
	/* In a sentence a capitalised word (MicroRNA, RhoA) is more often a
	 * name than a class of the code: there it ranks as a word, and only a
	 * keyword query filters on it. */
	if (id->cat == TEXT_IDENT_CLASS && p->ident_any)
		return 0;
	for (uint32_t i = 0; i < p->nidents; i++)
		if (p->idents[i].key_len == id->key_len && memcmp(p->idents[i].key, id->key, id->key_len) == 0)
			return 0;
	q_ident *x = &p->idents[p->nidents];
	memset(x, 0, sizeof *x);
	x->text = f->base + id->start;
	x->len = id->end - id->start;
	x->cat = id->cat;
	memcpy(x->key, id->key, id->key_len + 1);
	x->key_len = id->key_len;
	p->nidents++;
	return 0;
}

typedef struct whole_add {
	q_ident *x;
	fa_arena *a;
	text_analyzer *an;
	uint32_t cap;
} whole_add;

static int add_whole_term(whole_add *w, const char *term, size_t len)
{
	q_ident *x = w->x;
	for (uint32_t i = 0; i < x->nwholes; i++)
		if (x->whole_len[i] == len && memcmp(x->wholes[i], term, len) == 0)
			return 0;
	if (x->nwholes == w->cap) {
		uint32_t cap = w->cap ? 2 * w->cap : 16;
		const char **v = fa_arena_alloc(w->a, cap * sizeof *v);
		uint8_t *l = fa_arena_alloc(w->a, cap);
		if (!v || !l)
			return fa_err(FATHOM_ENOMEM, "identifier variants");
		if (x->nwholes) {
			memcpy(v, x->wholes, x->nwholes * sizeof *v);
			memcpy(l, x->whole_len, x->nwholes);
		}
		x->wholes = v;
		x->whole_len = l;
		w->cap = cap;
	}
	if (!(x->wholes[x->nwholes] = fa_arena_strndup(w->a, term, len)))
		return fa_err(FATHOM_ENOMEM, "identifier variants");
	x->whole_len[x->nwholes++] = (uint8_t)len;
	return 0;
}

/* A whole token of a variant; one of letters alone is also a plain word,
 * indexed stemmed (SPINLOCK, Spinlock). */
static int on_variant(void *ctx, const char *term, size_t len)
{
	whole_add *w = ctx;
	int rc = add_whole_term(w, term, len);
	int letters = len > 0;
	for (size_t i = 0; i < len && letters; i++)
		letters = term[i] >= 'a' && term[i] <= 'z';
	if (rc || !letters)
		return rc;
	size_t sl = 0;
	const char *st = text_stem(w->an, term, len, &sl);
	return st && sl > 0 && sl <= TEXT_MAX_TERM ? add_whole_term(w, st, sl) : 0;
}

/* Count the chunks where the scanner classified the identifier (in any
 * role): that the index holds it as an identifier is what applies its
 * filter. The whole tokens of its variants widen the filter's chunks, but
 * alone do not make a word of a sentence a filter (PGE2 written in an
 * abstract does not turn the claim's "PGE 2" into one). */
static int count_ident(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	const char *sep = len > 2 && term[0] == IX_IDENT_MARK ? memchr(term, IX_IDENT_SEP, len) : NULL;
	if (sep && sep + 1 < term + len && sep[1] != IX_IDENT_TOKEN)
		*(uint64_t *)ctx += ti->df;
	return 0;
}

static int all_of(const char *s, size_t n, int digits)
{
	for (size_t i = 0; i < n; i++) {
		int d = s[i] >= '0' && s[i] <= '9', up = s[i] >= 'A' && s[i] <= 'Z';
		if (digits ? !d : !up)
			return 0;
	}
	return n > 0;
}

/* The identify stage: find the identifiers of the query's top-level words
 * and phrases (not in OR or negation) and look each up. "TC 1001" typed as
 * two words is one identifier. A keyword query needs all its identifiers;
 * a ranked one (a sentence, ident_any) one of them. */
/* How far the clause at text[0..len) reaches for the identifier scan: to
 * the end of "name (args)" when the query goes on that way (a GNU-style
 * call, text_idents decides), else len. The query is t->src. */
static size_t call_reach(const q_ast *t, const char *text, size_t len)
{
	if (!t->src || text < t->src || text + len > t->src + t->src_len)
		return len;   /* a glossary word: not in the query */
	size_t room = t->src_len - (size_t)(text - t->src);
	if (len + 1 >= room || (text[len] != ' ' && text[len] != '\t') || text[len + 1] != '(')
		return len;
	size_t e = len + 2;
	while (e < room && e < len + 2 + 256 && text[e] != ')')
		e++;
	return e < room ? e + 1 : e;
}

int q_identify(q_plan *p, fa_arena *a, ix_index *ix, text_analyzer *an, const q_ast *t,
               int ident_any)
{
	memset(p, 0, sizeof *p);
	p->mroot = UINT32_MAX;
	p->ident_any = ident_any;
	q_clause *cl = fa_arena_calloc(a, t->nnodes ? t->nnodes : 1, sizeof *cl);
	uint32_t *leaf_of = fa_arena_alloc(a, (t->nnodes ? t->nnodes : 1) * sizeof *leaf_of);
	if (!cl || !leaf_of)
		return fa_err(FATHOM_ENOMEM, "query identifiers");
	leaf_walk lw = { cl, 0, leaf_of };
	collect_leaves(&lw, t, t->root, 1, 0, 0);
	size_t ncl = lw.n;
	text_ident_opts o = { 3, Q_MAX_IDENTS };
	for (size_t i = 0; i < ncl; i++) {
		/* A scoped word keeps its field; a prefix is not one identifier. */
		const q_node *qn = &t->node[cl[i].node];
		if (!cl[i].must || qn->fields || qn->prefix)
			continue;
		ident_find f = { p, cl[i].text, cl[i].len };
		/* Two words "TC" "1001", one space apart in the query. */
		if (cl[i].kind == Q_CLAUSE_WORD && i + 1 < ncl && cl[i + 1].must &&
		    !t->node[cl[i + 1].node].fields && !t->node[cl[i + 1].node].prefix &&
		    cl[i + 1].kind == Q_CLAUSE_WORD && cl[i + 1].text == cl[i].text + cl[i].len + 1 &&
		    cl[i].text[cl[i].len] == ' ' && cl[i].len >= 2 && cl[i].len <= 10 &&
		    all_of(cl[i].text, cl[i].len, 0) && all_of(cl[i + 1].text, cl[i + 1].len, 1)) {
			uint32_t before = p->nidents;
			int rc = text_idents(cl[i].text, cl[i].len + 1 + cl[i + 1].len, &o, on_query_ident, &f);
			if (rc)
				return rc;
			if (p->nidents > before) {
				i++;
				continue;
			}
		}
		size_t reach = cl[i].kind == Q_CLAUSE_WORD ? call_reach(t, cl[i].text, cl[i].len) : cl[i].len;
		int rc = text_idents(cl[i].text, reach, &o, on_query_ident, &f);
		if (rc)
			return rc;
	}
	for (uint32_t k = 0; k < p->nidents; k++) {
		q_ident *x = &p->idents[k];
		for (size_t s = 0; s < ix_nsegments(ix); s++) {
			int rc = q_ident_terms(ix_segment_at(ix, s), x, 0, count_ident, &x->chunks);
			if (rc)
				return rc;
		}
		x->applied = x->chunks > 0;
		x->chunks = 0;   /* counted exactly when the filter is built */
		/* the whole tokens the filter also reads */
		whole_add w = { x, a, an, 0 };
		int rc = x->applied ? text_ident_variants(x->text, x->len, on_variant, &w) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

/* Free the word units an applied identifier covers: it filters exactly, so
 * its words only score (TC-1001 then also meets tc_1001); one found
 * nowhere leaves them as they were. */
static void free_ident_units(const q_plan *p, const q_clause *cl, q_unit *u, size_t nu,
                             const q_tok *tok)
{
	for (uint32_t k = 0; k < p->nidents; k++) {
		const q_ident *x = &p->idents[k];
		if (!x->applied)
			continue;
		for (size_t i = 0; i < nu; i++) {
			if (u[i].kind == U_QUOTED)
				continue;
			const char *base = cl[u[i].clause].text;
			const q_tok *t0 = &tok[u[i].whole >= 0 ? (uint32_t)u[i].whole : u[i].elems[0]];
			uint32_t start = t0->start, end = t0->end;
			for (uint32_t j = 0; j < u[i].nelems; j++) {
				start = FA_MIN(start, tok[u[i].elems[j]].start);
				end = FA_MAX(end, tok[u[i].elems[j]].end);
			}
			if (base + start >= x->text && base + end <= x->text + x->len)
				u[i].required = 0;
		}
	}
}

/* Is the whole tree an AND of terms the required flags already enforce? */
static int tree_trivial(const q_plan *p)
{
	if (p->mroot == UINT32_MAX)
		return 1;
	const q_mnode *r = &p->m[p->mroot];
	if (r->kind == QM_TERM)
		return r->fields == 0 && p->terms[r->idx].required;
	if (r->kind != QM_AND)
		return 0;
	for (uint32_t k = 0; k < r->n; k++) {
		const q_mnode *c = &p->m[p->mkid[r->first + k]];
		if (c->kind != QM_TERM || c->fields || !p->terms[c->idx].required)
			return 0;
	}
	return 1;
}

/* Analyse clause i into tl's tokens, positions from *pos on: the one way
 * route (q_plan_top_units) and the plan (q_plan_build) read a word. */
static int analyse_clause(text_analyzer *an, const q_clause *cl, size_t i, uint32_t *pos,
                          tok_list *tl)
{
	tl->clause = (uint32_t)i;
	int rc = text_analyze(an, cl[i].text, cl[i].len, pos, collect_token, tl, NULL);
	return tl->err ? tl->err : rc;
}

int q_plan_top_units(const q_ast *t, text_analyzer *an, fa_arena *a, uint32_t *keywords,
                     uint32_t *stopwords)
{
	*keywords = *stopwords = 0;
	tok_list tl = { a, NULL, 0, 0, 0 };
	tl.t = fa_arena_alloc(a, Q_MAX_TOKENS * sizeof *tl.t);
	q_clause *cl = fa_arena_calloc(a, t->nnodes ? t->nnodes : 1, sizeof *cl);
	uint32_t *leaf_of = fa_arena_alloc(a, (t->nnodes ? t->nnodes : 1) * sizeof *leaf_of);
	if (!tl.t || !cl || !leaf_of)
		return fa_err(FATHOM_ENOMEM, "query plan");
	leaf_walk lw = { cl, 0, leaf_of };
	collect_leaves(&lw, t, t->root, 1, 0, 0);
	/* Only the top level's words, analysed as q_plan_build analyses them:
	 * units never span clauses, so the others cannot change these. */
	uint32_t pos = Q_SEQ_BASE;
	for (size_t i = 0; i < lw.n; i++) {
		if (!cl[i].top || cl[i].kind != Q_CLAUSE_WORD || t->node[cl[i].node].prefix)
			continue;
		int rc = analyse_clause(an, cl, i, &pos, &tl);
		if (rc)
			return rc;
	}
	q_unit *u = NULL;
	size_t nu = 0;
	int rc = make_units(a, cl, tl.t, tl.n, &u, &nu);
	if (rc)
		return rc;
	for (size_t i = 0; i < nu; i++) {
		if (u[i].kind == U_QUOTED || !cl[u[i].clause].top)
			continue;
		if (u[i].stopword)
			(*stopwords)++;
		else
			(*keywords)++;
	}
	return 0;
}

int q_plan_build(q_plan *p, fa_arena *a, ix_index *ix, text_analyzer *an, const q_ast *t,
                 int top_binds, int coord)
{
	/* p holds what q_identify found */
	tok_list tl = { a, NULL, 0, 0, 0 };
	tl.t = fa_arena_alloc(a, Q_MAX_TOKENS * sizeof *tl.t);
	p->terms = fa_arena_alloc(a, Q_MAX_TERMS * sizeof *p->terms);
	p->m = fa_arena_alloc(a, Q_MAX_MNODES * sizeof *p->m);
	p->mkid = fa_arena_alloc(a, Q_MAX_MNODES * sizeof *p->mkid);
	q_clause *cl = fa_arena_calloc(a, t->nnodes ? t->nnodes : 1, sizeof *cl);
	plan_work w = { t, NULL, NULL, NULL, NULL, NULL };
	w.leaf_of = fa_arena_alloc(a, (t->nnodes ? t->nnodes : 1) * sizeof *w.leaf_of);
	uint32_t *mstack = fa_arena_alloc(a, Q_MAX_MNODES * sizeof *mstack);
	if (!tl.t || !p->terms || !p->m || !p->mkid || !cl || !w.leaf_of || !mstack)
		return fa_err(FATHOM_ENOMEM, "query plan");
	for (uint32_t i = 0; i < t->nnodes; i++)
		w.leaf_of[i] = UINT32_MAX;
	leaf_walk lw = { cl, 0, w.leaf_of };
	collect_leaves(&lw, t, t->root, 1, 0, 0);
	size_t ncl = lw.n;

	/* Analyse: the top level's leaves in one run of positions (the bonus
	 * sequence), the others in another; prefixes are expanded, not
	 * analysed. */
	uint32_t pos_top = Q_SEQ_BASE, pos_other = Q_OTHER_BASE;
	int rc;
	for (size_t i = 0; i < ncl; i++) {
		if (t->node[cl[i].node].prefix)
			continue;
		if ((rc = analyse_clause(an, cl, i, cl[i].must ? &pos_top : &pos_other, &tl)))
			return rc;
	}

	q_unit *u = NULL;
	size_t nu = 0;
	if ((rc = make_units(a, cl, tl.t, tl.n, &u, &nu)))
		return rc;
	decide_required(u, nu, cl, top_binds, coord);
	free_ident_units(p, cl, u, nu, tl.t);

	/* An identifier nobody indexed falls back to the phrase of its parts. */
	size_t total_elems = 0, nph = 0;
	for (size_t i = 0; i < nu; i++) {
		q_unit *x = &u[i];
		x->use_phrase = x->whole < 0;
		if (x->kind == U_IDENT && x->nelems >= 1) {
			const q_tok *wt = &tl.t[x->whole];
			const q_lookup *lk;
			if ((rc = q_plan_lookup(p, a, ix, wt->term, wt->len, &lk)))
				return rc;
			if (lk->df == 0) {
				if (x->nelems == 1)
					x->whole = (int32_t)x->elems[0];
				else
					x->use_phrase = 1;
			}
			/* Ranked (optional) identifiers score by their parts,
			 * as BM25 tokenizers split them, so "fast-twitch" also
			 * meets "fast twitch"; the whole, when indexed, adds the
			 * exact spelling on top. Binding ones stay exact. */
			if (!x->required && x->nelems >= 2) {
				x->use_phrase = 1;
				x->also_whole = lk->df > 0;
			}
		}
		total_elems += x->use_phrase ? x->nelems : 1;
		nph += x->use_phrase && x->required && x->nelems >= 2;
	}
	if (total_elems > Q_MAX_ELEMS)
		return fa_err(FATHOM_ETOOBIG, "query has more than %d terms", Q_MAX_ELEMS);
	p->phrases = fa_arena_calloc(a, nph ? nph : 1, sizeof *p->phrases);
	w.unit_m = fa_arena_alloc(a, (nu ? nu : 1) * sizeof *w.unit_m);
	w.unit_first = fa_arena_calloc(a, ncl ? ncl : 1, sizeof *w.unit_first);
	w.unit_n = fa_arena_calloc(a, ncl ? ncl : 1, sizeof *w.unit_n);
	w.prefix_m = fa_arena_alloc(a, (ncl ? ncl : 1) * sizeof *w.prefix_m);
	if (!p->phrases || !w.unit_m || !w.unit_first || !w.unit_n || !w.prefix_m)
		return fa_err(FATHOM_ENOMEM, "query phrases");
	if ((rc = phrase_alloc(&p->seq, a, (uint32_t)total_elems)))
		return rc;
	mbuild b = { p, a, mstack, 0 };

	/* Units into terms, phrases and match nodes. */
	uint32_t seq_pos0 = 0;
	for (size_t i = 0; i < ncl; i++)
		w.prefix_m[i] = UINT32_MAX;
	for (size_t i = nu; i-- > 0;)
		w.unit_first[u[i].clause] = (uint32_t)i;
	for (size_t i = 0; i < nu; i++) {
		q_unit *x = &u[i];
		const q_clause *c = &cl[x->clause];
		const q_node *an_node = &t->node[c->node];
		int scored = !c->negated, in_seq = c->must;
		int required = x->required && c->must;
		int binds = x->required;
		uint32_t idx;
		w.unit_n[x->clause]++;
		w.unit_m[i] = UINT32_MAX;
		if (!x->use_phrase) {
			const q_tok *tk = &tl.t[x->whole];
			if ((rc = intern_text(p, a, tk->term, tk->len, &idx)))
				return rc;
			term_source(&p->terms[idx], c->text + tk->start, tk->end - tk->start);
			p->terms[idx].required |= required;
			p->terms[idx].scored |= scored;
			if (in_seq) {
				if (p->seq.n == 0)
					seq_pos0 = tk->pos;
				phrase_add(&p->seq, idx, tk->pos, seq_pos0);
			}
			if (binds && (rc = m_new(&b, QM_TERM, an_node->fields, idx, &w.unit_m[i])))
				return rc;
			continue;
		}
		q_phrase *ph = NULL;
		uint32_t phi = p->nphrases;
		if (binds && x->nelems >= 2) {
			ph = &p->phrases[p->nphrases++];
			if ((rc = phrase_alloc(ph, a, x->nelems)))
				return rc;
		}
		uint32_t pos0 = tl.t[x->elems[0]].pos;
		if (x->also_whole) {
			const q_tok *tk = &tl.t[x->whole];
			if ((rc = intern_text(p, a, tk->term, tk->len, &idx)))
				return rc;
			term_source(&p->terms[idx], c->text + tk->start, tk->end - tk->start);
			p->terms[idx].scored |= scored;
		}
		uint32_t base = b.sp;
		for (uint32_t j = 0; j < x->nelems; j++) {
			const q_tok *tk = &tl.t[x->elems[j]];
			if ((rc = intern_text(p, a, tk->term, tk->len, &idx)))
				return rc;
			term_source(&p->terms[idx], c->text + tk->start, tk->end - tk->start);
			p->terms[idx].required |= required;
			p->terms[idx].scored |= scored;
			if (ph)
				phrase_add(ph, idx, tk->pos, pos0);
			if (in_seq) {
				if (p->seq.n == 0)
					seq_pos0 = tk->pos;
				phrase_add(&p->seq, idx, tk->pos, seq_pos0);
			}
			if (binds && !ph) {
				uint32_t m = 0;
				if ((rc = m_new(&b, QM_TERM, an_node->fields, idx, &m)) || (rc = m_push(&b, m)))
					return rc;
			}
		}
		if (ph) {
			if ((rc = m_new(&b, QM_PHRASE, an_node->fields, phi, &w.unit_m[i])))
				return rc;
		} else if (binds) {
			if (b.sp - base == 1) {
				w.unit_m[i] = b.stack[--b.sp];
			} else if ((rc = m_new(&b, QM_AND, 0, 0, &w.unit_m[i])) == 0) {
				m_adopt(&b, w.unit_m[i], base);
			} else {
				return rc;
			}
		}
	}
	for (size_t i = 0; i < ncl; i++) {
		if (!t->node[cl[i].node].prefix)
			continue;
		if ((rc = expand_prefix(p, a, ix, an, &cl[i], t->node[cl[i].node].fields, !cl[i].negated,
		                        &b, &w.prefix_m[i])))
			return rc;
	}
	if ((rc = build_tree(&b, &w, t->root, &p->mroot)))
		return rc;
	for (uint32_t i = 0; i < p->nterms; i++)
		p->nrequired += p->terms[i].required != 0;
	/* Nothing to search for: an error, unless a prefix simply began no
	 * indexed term (then the answer is empty). */
	int any_scored = 0, prefixes = 0;
	for (uint32_t i = 0; i < p->nterms; i++)
		any_scored |= p->terms[i].scored;
	for (size_t i = 0; i < ncl; i++)
		prefixes += t->node[cl[i].node].prefix && !cl[i].negated;
	if (!any_scored && !prefixes)
		return fa_err(FATHOM_EINVAL, "the query has no searchable terms");
	p->trivial = tree_trivial(p);
	p->coord = coord;
	return 0;
}
