/*
 * route.c — the query's shape sets how it is searched: whether the words of
 * its top level are required (the matching mode, and under AUTO the one
 * decision between a keyword query and natural language), how many hits it
 * presents (k) and how many candidates each source retrieves for them (the
 * over-fetch). Every later stage reads this decision; none makes its own.
 *
 * AUTO, the default, never starves: the top level's words are optional, so
 * a ranked disjunction answers every query any of whose words occur
 * (requiring them all left a tenth of CoSQA's short questions unanswered).
 * It still tells keyword queries from natural language: at most
 * Q_AUTO_MAX_KEYWORDS keywords (non-stopword units of the top level, as
 * plan.c splits it into units) with no stop word among them and no
 * sentence punctuation at the end is a keyword query, whose chunks earn
 * the coordination bonus for holding more of its words (Q_COORD_BONUS
 * for all of them), so those holding all rank first unless BM25 says
 * clearly otherwise; anything else (a question, a claim) ranks by BM25
 * alone. ALL, or any operator in the query, requires the words; ANY never,
 * and earns no coordination bonus.
 *
 * The router (issue 15) reads the query's shape from its words, with no
 * model (a scan of the query, well under 0.1 ms), and sets the mix of
 * sources from it:
 *
 *   identifier  exact identifiers (TC-1001, AuthService, handle_login())
 *               and at most Q_ROUTE_IDENT_OTHERS other word: a lookup.
 *               Full text finds, vectors only reorder (hybrid becomes
 *               strict: a neighbour in meaning is the wrong ticket), the
 *               chunks holding the identifiers and grep's matching lines
 *               join the pool, and nothing is over-fetched. With no other
 *               word they may add chunks full text did not rank; with one,
 *               a condition they cannot check, they only confirm (their
 *               candidates kept only where full text found them), so the
 *               pool never answers what full text calls empty.
 *   comparison  "A vs B", "A versus B", "compare A and B", "difference(s)
 *               between A and B": two subjects, each needing its share of
 *               the pool, so hybrid over-fetches twice as deep.
 *   keywords    the keyword query above (coordination bonus).
 *   question    anything else: natural language.
 *
 * keywords and question keep the mode and over-fetch asked: they are what
 * the evaluation sets measure, and the defaults were chosen there. The
 * decision is in the receipt (fathom_results_route, --explain's "route").
 */
#include <ctype.h>

#include "query/query_int.h"

#define Q_AUTO_MAX_KEYWORDS 4
#define Q_ROUTE_IDENT_OTHERS 1u     /* other words an identifier lookup may have */
#define Q_ROUTE_COMPARE_OVERFETCH 2u /* a comparison's hybrid over-fetch, times */

/* Does the query end as a sentence does (".", "?" or "!")? AUTO reads that
 * as natural language. */
static int ends_like_sentence(const char *q)
{
	size_t n = strlen(q);
	while (n && (q[n - 1] == ' ' || q[n - 1] == '\t' || q[n - 1] == '\n' || q[n - 1] == '\r'))
		n--;
	return n > 1 && (q[n - 1] == '.' || q[n - 1] == '?' || q[n - 1] == '!');
}

/* A keyword query under AUTO: a few words with no stop word, or one of
 * stop words alone (nothing else to rank by). */
static int keyword_query(uint32_t keywords, uint32_t stopwords, int sentence)
{
	if (keywords == 0)
		return 1;
	if (stopwords || sentence)
		return 0;
	return keywords <= Q_AUTO_MAX_KEYWORDS;
}

/* ---- the query's shape ---------------------------------------------------------- */

#define Q_ROUTE_MAX_WORDS 64
#define Q_ROUTE_MAX_IDENTS 64

typedef struct shape_scan {
	uint32_t start[Q_ROUTE_MAX_IDENTS], end[Q_ROUTE_MAX_IDENTS];  /* spellings */
	uint32_t n;
} shape_scan;

static int note_ident(void *ctx, const text_ident *id)
{
	shape_scan *s = ctx;
	if (s->n < Q_ROUTE_MAX_IDENTS) {
		s->start[s->n] = id->start;
		s->end[s->n] = id->end;
		s->n++;
	}
	return 0;
}

/* Is the word w (len bytes) lit, in any case? */
static int word_is(const char *w, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	if (len != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)w[i]) != lit[i])
			return 0;
	return 1;
}

static int says_compare(const char *const *w, const size_t *wl, uint32_t nw)
{
	static const char *const words[] = { "vs", "vs.", "versus", "compare", "comparing",
	                                     "comparison" };
	for (uint32_t i = 0; i < nw && nw >= 3; i++) {
		for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
			if (word_is(w[i], wl[i], words[k]))
				return 1;
		if ((word_is(w[i], wl[i], "difference") || word_is(w[i], wl[i], "differences")) &&
		    i + 1 < nw && word_is(w[i + 1], wl[i + 1], "between"))
			return 1;
	}
	return 0;
}

int q_route_shape(const char *query, uint32_t keywords, uint32_t stopwords, uint32_t *others_out)
{
	*others_out = UINT32_MAX;
	/* the words as typed: runs of non-space bytes, less the sentence
	 * punctuation that ends them */
	const char *w[Q_ROUTE_MAX_WORDS];
	size_t wl[Q_ROUTE_MAX_WORDS];
	uint32_t nw = 0;
	size_t qlen = strlen(query);
	for (size_t i = 0; i < qlen && nw < Q_ROUTE_MAX_WORDS;) {
		while (i < qlen && isspace((unsigned char)query[i]))
			i++;
		size_t b = i;
		while (i < qlen && !isspace((unsigned char)query[i]))
			i++;
		size_t e = i;
		while (e > b && (query[e - 1] == '?' || query[e - 1] == ',' || query[e - 1] == '!'))
			e--;
		if (e > b) {
			w[nw] = query + b;
			wl[nw++] = e - b;
		}
	}
	if (says_compare(w, wl, nw))
		return FATHOM_SHAPE_COMPARISON;
	/* identifier: every word but Q_ROUTE_IDENT_OTHERS overlaps an
	 * identifier's spelling, and none is a stop word */
	shape_scan sc;
	sc.n = 0;
	if (stopwords == 0 && text_idents(query, qlen, NULL, note_ident, &sc) == 0 && sc.n > 0) {
		uint32_t others = 0;
		for (uint32_t i = 0; i < nw; i++) {
			size_t b = (size_t)(w[i] - query), e = b + wl[i];
			int inside = 0;
			for (uint32_t k = 0; k < sc.n && !inside; k++)
				inside = b < sc.end[k] && e > sc.start[k];
			others += !inside;
		}
		*others_out = others;
		if (others <= Q_ROUTE_IDENT_OTHERS)
			return FATHOM_SHAPE_IDENTIFIER;
	}
	return keyword_query(keywords, stopwords, ends_like_sentence(query)) ? FATHOM_SHAPE_KEYWORDS
	                                                                      : FATHOM_SHAPE_QUESTION;
}

/* The mode mix, over-fetch and pool of the shape. */
static void route_mix(q_route *r, int mode, uint32_t overfetch)
{
	r->mode = mode;
	r->overfetch = overfetch ? overfetch : 1;
	if (r->shape == FATHOM_SHAPE_IDENTIFIER) {
		if (mode == FATHOM_MODE_HYBRID)
			r->mode = FATHOM_MODE_STRICT;
		r->overfetch = 1;
		r->pool = mode != FATHOM_MODE_SEMANTIC;
	} else if (r->shape == FATHOM_SHAPE_COMPARISON && mode == FATHOM_MODE_HYBRID &&
	           r->overfetch <= UINT32_MAX / Q_ROUTE_COMPARE_OVERFETCH) {
		r->overfetch *= Q_ROUTE_COMPARE_OVERFETCH;
	}
}

int q_route_query(q_route *r, fa_arena *a, const q_ast *t, text_analyzer *an, const char *query,
                  const fathom_search_opts *o, uint32_t rerank_depth, int mode,
                  uint32_t overfetch)
{
	memset(r, 0, sizeof *r);
	r->k = o->k;
	/* Each source fetches what the last ranking stage reads: the k hits,
	 * or a reranker's deeper pool. */
	r->fetch = FA_MAX(o->k, FA_MIN(rerank_depth, (uint32_t)Q_MAX_RERANK));
	uint32_t keywords = 0, stopwords = 0;
	int rc = q_plan_top_units(t, an, a, &keywords, &stopwords);
	if (rc)
		return rc;
	uint32_t others;
	r->shape = q_route_shape(query, keywords, stopwords, &others);
	route_mix(r, mode, overfetch);
	/* a word beside the identifiers is a condition the pool's other
	 * sources cannot check: they then only confirm what full text found */
	r->pool_adds = r->pool && others == 0;
	if (o->match == FATHOM_MATCH_ALL || (o->match == FATHOM_MATCH_AUTO && t->strict)) {
		r->top_binds = 1;
		return 0;
	}
	/* The words stay optional: a ranked disjunction answers every query
	 * any of whose words occur. A keyword query's chunks that hold more of
	 * its words earn the coordination bonus (all of them: the full one);
	 * a sentence's do not, since measured, coordination over a
	 * sentence's words ranks worse than plain BM25. */
	r->coord = o->match == FATHOM_MATCH_AUTO &&
	           keyword_query(keywords, stopwords, ends_like_sentence(query));
	/* Expansion leaves optional words as they are, so these units are
	 * also the plan's. A keyword query's identifiers filter as they did
	 * when its words were required (all of them; a class name too). */
	r->ident_any = !r->coord && keywords + stopwords > 0;   /* top_binds is 0 here */
	return 0;
}
