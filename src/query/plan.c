/*
 * plan.c — clauses into the terms a search scores, the phrases it requires,
 * and which terms are required.
 *
 * Every clause goes through the index's own analyser, so query terms meet
 * indexed terms in one form. One clause can give several units:
 *   a word or number           one term
 *   an identifier              its whole form (getusername) when some
 *                              segment holds it, else the phrase of its parts
 *                              (get user name), which also finds prose
 *   CJK text                   the phrase of its bigrams
 *   a "quoted phrase"          the phrase of its tokens (identifier parts
 *                              rather than wholes, as parts match both forms)
 * Positions run on across clauses, so the whole query is also one sequence
 * (plan->seq) that the phrase and prefix bonuses look for.
 *
 * Matching modes: ALL requires every unit, ANY none. AUTO tells keyword
 * queries from natural language: a query of at most 4 keywords (non-stopword
 * units) with no stop word among them and no sentence punctuation at its end
 * is a keyword query and requires every keyword; anything else (a question,
 * a claim, a sentence) ranks disjunctively, as BM25 baselines do, because
 * requiring every word of a sentence answers almost nothing. A query of
 * stopwords only requires them all. Quoted phrases are always required. A
 * required phrase requires its terms too.
 */
#include "query/query_int.h"

#define Q_MAX_TOKENS 1024
#define Q_AUTO_MAX_KEYWORDS 4

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
	int also_whole;       /* with the parts, the whole too (optional units) */
} q_unit;

static int collect_token(void *ctx, const text_token *tok)
{
	tok_list *l = ctx;
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

/* Index of term in the plan, adding it when new. */
static int intern_term(q_plan *p, const q_tok *t, int required, uint32_t *idx)
{
	for (uint32_t i = 0; i < p->nterms; i++) {
		if (p->terms[i].len == t->len && memcmp(p->terms[i].text, t->term, t->len) == 0) {
			p->terms[i].required |= required;
			*idx = i;
			return 0;
		}
	}
	if (p->nterms >= Q_MAX_TERMS)
		return fa_err(FATHOM_ETOOBIG, "query has more than %d distinct terms", Q_MAX_TERMS);
	q_term *x = &p->terms[p->nterms];
	memset(x, 0, sizeof *x);
	x->text = t->term;
	x->len = t->len;
	x->required = required;
	*idx = p->nterms++;
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

static void decide_required(q_unit *u, size_t nu, int match, int sentence)
{
	size_t keywords = 0, stopwords = 0;
	for (size_t i = 0; i < nu; i++) {
		if (u[i].kind == U_QUOTED)
			continue;
		if (u[i].stopword)
			stopwords++;
		else
			keywords++;
	}
	if (keywords && (stopwords || sentence))
		keywords += Q_AUTO_MAX_KEYWORDS + 1; /* natural language: rank, don't require */
	for (size_t i = 0; i < nu; i++) {
		if (u[i].kind == U_QUOTED)
			u[i].required = 1;
		else if (match == FATHOM_MATCH_ALL)
			u[i].required = 1;
		else if (match == FATHOM_MATCH_ANY)
			u[i].required = 0;
		else if (keywords == 0)
			u[i].required = 1;
		else if (keywords <= Q_AUTO_MAX_KEYWORDS)
			u[i].required = !u[i].stopword;
		else
			u[i].required = 0;
	}
}

int q_plan_build(q_plan *p, fa_arena *a, ix_index *ix, text_analyzer *an,
                 const q_clause *c, size_t nc, int match, int sentence)
{
	p->nlookups = 0;
	p->terms = NULL;
	p->nterms = p->nrequired = p->nphrases = 0;
	p->phrases = NULL;
	memset(&p->seq, 0, sizeof p->seq);
	tok_list tl = { a, NULL, 0, 0, 0 };
	tl.t = fa_arena_alloc(a, Q_MAX_TOKENS * sizeof *tl.t);
	p->terms = fa_arena_alloc(a, Q_MAX_TERMS * sizeof *p->terms);
	if (!tl.t || !p->terms)
		return fa_err(FATHOM_ENOMEM, "query plan");
	uint32_t pos = 0;
	int rc;
	for (size_t i = 0; i < nc; i++) {
		tl.clause = (uint32_t)i;
		rc = text_analyze(an, c[i].text, c[i].len, &pos, collect_token, &tl, NULL);
		if (tl.err)
			return tl.err;
		if (rc)
			return rc;
	}

	q_unit *u = NULL;
	size_t nu = 0;
	if ((rc = make_units(a, c, tl.t, tl.n, &u, &nu)))
		return rc;
	if (nu == 0)
		return fa_err(FATHOM_EINVAL, "the query has no searchable terms");

	decide_required(u, nu, match, sentence);
	/* An identifier nobody indexed falls back to the phrase of its parts. */
	size_t total_elems = 0;
	for (size_t i = 0; i < nu; i++) {
		q_unit *x = &u[i];
		x->use_phrase = x->whole < 0;
		if (x->kind == U_IDENT && x->nelems >= 1) {
			const q_tok *w = &tl.t[x->whole];
			const q_lookup *lk;
			if ((rc = q_plan_lookup(p, a, ix, w->term, w->len, &lk)))
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
			 * exact spelling on top. Required ones stay exact. */
			if (!x->required && x->nelems >= 2) {
				x->use_phrase = 1;
				x->also_whole = lk->df > 0;
			}
		}
		total_elems += x->use_phrase ? x->nelems : 1;
	}
	if (total_elems > Q_MAX_ELEMS)
		return fa_err(FATHOM_ETOOBIG, "query has more than %d terms", Q_MAX_ELEMS);

	size_t nph = 0;
	for (size_t i = 0; i < nu; i++)
		if (u[i].use_phrase && u[i].required && u[i].nelems >= 2)
			nph++;
	p->phrases = fa_arena_calloc(a, nph ? nph : 1, sizeof *p->phrases);
	if (!p->phrases)
		return fa_err(FATHOM_ENOMEM, "query phrases");
	if ((rc = phrase_alloc(&p->seq, a, (uint32_t)total_elems)))
		return rc;

	uint32_t seq_pos0 = 0;
	for (size_t i = 0; i < nu; i++) {
		q_unit *x = &u[i];
		uint32_t idx;
		if (!x->use_phrase) {
			const q_tok *t = &tl.t[x->whole];
			if ((rc = intern_term(p, t, x->required, &idx)))
				return rc;
			if (p->seq.n == 0)
				seq_pos0 = t->pos;
			phrase_add(&p->seq, idx, t->pos, seq_pos0);
			continue;
		}
		q_phrase *ph = NULL;
		if (x->required && x->nelems >= 2) {
			ph = &p->phrases[p->nphrases++];
			if ((rc = phrase_alloc(ph, a, x->nelems)))
				return rc;
		}
		uint32_t pos0 = tl.t[x->elems[0]].pos;
		if (x->also_whole) {
			if ((rc = intern_term(p, &tl.t[x->whole], 0, &idx)))
				return rc;
		}
		for (uint32_t j = 0; j < x->nelems; j++) {
			const q_tok *t = &tl.t[x->elems[j]];
			if ((rc = intern_term(p, t, x->required, &idx)))
				return rc;
			if (ph)
				phrase_add(ph, idx, t->pos, pos0);
			if (p->seq.n == 0)
				seq_pos0 = t->pos;
			phrase_add(&p->seq, idx, t->pos, seq_pos0);
		}
	}
	for (uint32_t i = 0; i < p->nterms; i++)
		p->nrequired += p->terms[i].required != 0;
	return 0;
}
