/*
 * parse.c — the query string into a flat list of clauses: words separated
 * by whitespace, and "quoted phrases". This is the whole dialect for now;
 * the later dialect (OR groups, negation, field scopes) replaces this
 * function with one producing an AST, and plan.c keeps consuming clauses.
 */
#include "query/query_int.h"

static int is_space(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

static int add_clause(q_clause *cl, size_t *n, int kind, const char *s, size_t len)
{
	if (len == 0)
		return 0;
	if (*n >= Q_MAX_CLAUSES)
		return fa_err(FATHOM_ETOOBIG, "query has more than %d words", Q_MAX_CLAUSES);
	cl[*n].kind = kind;
	cl[*n].text = s;
	cl[*n].len = len;
	(*n)++;
	return 0;
}

int q_parse(fa_arena *a, const char *query, size_t len, q_clause **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (len > Q_MAX_QUERY_BYTES)
		return fa_err(FATHOM_ETOOBIG, "query of %zu bytes (at most %d)", len,
		              Q_MAX_QUERY_BYTES);
	q_clause *cl = fa_arena_alloc(a, Q_MAX_CLAUSES * sizeof *cl);
	if (!cl)
		return fa_err(FATHOM_ENOMEM, "query clauses");
	size_t i = 0, count = 0;
	int rc;
	while (i < len) {
		unsigned char ch = (unsigned char)query[i];
		if (is_space(ch)) {
			i++;
		} else if (ch == '"') {
			size_t start = ++i;
			while (i < len && query[i] != '"')
				i++;
			if ((rc = add_clause(cl, &count, Q_CLAUSE_PHRASE, query + start, i - start)))
				return rc;
			if (i < len)
				i++; /* the closing quote */
		} else {
			size_t start = i;
			while (i < len && !is_space((unsigned char)query[i]) && query[i] != '"')
				i++;
			if ((rc = add_clause(cl, &count, Q_CLAUSE_WORD, query + start, i - start)))
				return rc;
		}
	}
	*out = cl;
	*n = count;
	return 0;
}
