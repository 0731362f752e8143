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
 */
#include "query/query_int.h"

#define Q_AUTO_MAX_KEYWORDS 4

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

int q_route_query(q_route *r, fa_arena *a, const q_ast *t, text_analyzer *an, const char *query,
                  const fathom_search_opts *o, uint32_t rerank_depth)
{
	memset(r, 0, sizeof *r);
	r->k = o->k;
	/* Each source fetches what the last ranking stage reads: the k hits,
	 * or a reranker's deeper pool. */
	r->fetch = FA_MAX(o->k, FA_MIN(rerank_depth, (uint32_t)Q_MAX_RERANK));
	if (o->match == FATHOM_MATCH_ALL || (o->match == FATHOM_MATCH_AUTO && t->strict)) {
		r->top_binds = 1;
		return 0;
	}
	uint32_t keywords = 0, stopwords = 0;
	int rc = q_plan_top_units(t, an, a, &keywords, &stopwords);
	if (rc)
		return rc;
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
