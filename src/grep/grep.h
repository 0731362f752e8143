/*
 * grep.h — indexed grep: what a pattern needs in a file, as a boolean query
 * over trigrams (after Russ Cox, "Regular Expression Matching with a
 * Trigram Index"), the trigrams of a text, and the query's evaluation.
 *
 * Trigrams are three consecutive bytes with ASCII letters folded to lower
 * case, packed as b0 << 16 | b1 << 8 | b2: one index serves case-sensitive
 * and -i searches alike (the regex engine verifies every candidate).
 */
#ifndef FATHOM_GREP_H
#define FATHOM_GREP_H

#include <stddef.h>
#include <stdint.h>

#include "index/index.h"

enum g_qop {
	GQ_ALL = 0,   /* every file may match: no trigram to use */
	GQ_NONE,      /* no file can match */
	GQ_TRI,       /* files holding one trigram */
	GQ_AND,
	GQ_OR
};

typedef struct g_query {
	int op;
	uint32_t tri;               /* GQ_TRI */
	struct g_query **kid;       /* GQ_AND, GQ_OR */
	uint32_t n;
} g_query;

enum g_flags {
	G_LITERAL = 1,    /* -F: the pattern is a string (lines of it: any of them) */
	G_CASELESS = 2    /* -i */
};

#define G_MAX_DEPTH 64        /* group nesting the planner follows */
#define G_MAX_TRIGRAMS 4096   /* trigrams one query keeps */

/* The query a file must satisfy to possibly match pattern (PCRE2 syntax, or
 * a literal with G_LITERAL). Never wrong in the unsafe direction: whatever
 * the planner does not understand becomes GQ_ALL. The query lives in a. */
int g_plan(fa_arena *a, const char *pattern, size_t len, unsigned flags, g_query **out);

/* Strings every match of pattern contains, byte for byte (case kept):
 * the literal runs of its top level (outside groups and alternatives), at
 * most max of them, longest first. None for a caseless pattern or one with
 * a top-level alternative. A file lacking one cannot match, which a memmem
 * tells faster than the regex engine. */
typedef struct g_lit {
	const char *p;
	uint32_t n;
} g_lit;
int g_required(fa_arena *a, const char *pattern, size_t len, unsigned flags, g_lit *out,
               uint32_t max, uint32_t *n);

/* "(and "abc" "bcd" (or ...))", ALL, NONE: for tests and --explain. */
void g_query_format(const g_query *q, fbuf *out);

/* Does a file whose trigram set answers has(ctx, tri) satisfy q? */
int g_query_eval(const g_query *q, int (*has)(void *ctx, uint32_t tri), void *ctx);

/* The AND and the OR of n queries, simplified (ALL and NONE folded in). */
g_query *g_query_and(fa_arena *a, g_query *const *q, uint32_t n);
g_query *g_query_or(fa_arena *a, g_query *const *q, uint32_t n);

/* ---- boolean queries (grep/query.c) ----------------------------------------
 * Zoekt-style: `error AND handler`, `file:auth.c error`, `lang:c spin_lock`,
 * `(foo OR bar) -test`. Words next to each other must all occur in the file
 * (AND); OR (or `or`) between two gives either; `-x` and NOT x exclude
 * files; file: (f:) is a regex over the path, lang: (l:) the language,
 * content: (c:) a pattern even if it looks like an operator, case:yes|no|auto
 * sets case for the whole query. A word is a PCRE2 regex (a literal string
 * with G_LITERAL); "quoted text" keeps spaces and is a literal string. */
enum g_xop {
	GX_TERM = 0,   /* the file holds a line matching a pattern */
	GX_FILE,       /* the path matches a regex */
	GX_LANG,       /* the file is of a language */
	GX_AND,
	GX_OR,
	GX_NOT
};

typedef struct g_expr {
	int op;
	const char *text;          /* GX_TERM, GX_FILE, GX_LANG: NUL-terminated */
	size_t len;
	int literal;               /* GX_TERM: a string, not a regex */
	int caseless;              /* GX_TERM, GX_FILE */
	uint32_t term;             /* GX_TERM: its number, 0 .. nterms-1 */
	size_t at;                 /* where text starts in the query (0-based) */
	struct g_expr **kid;       /* GX_AND, GX_OR (n >= 2), GX_NOT (n == 1) */
	uint32_t n;
} g_expr;

#define G_MAX_TERMS 256       /* patterns in one boolean query */

/* Parse q (flags: G_LITERAL, G_CASELESS as defaults for its words) into an
 * expression in a. FATHOM_ESYNTAX naming the column on a bad query. */
int g_parse_query(fa_arena *a, const char *q, size_t len, unsigned flags, g_expr **out,
                  uint32_t *nterms);

/* "(and (term \"x\") (not (file \"y\")))": for tests and --stats. */
void g_expr_format(const g_expr *x, fbuf *out);

/* The trigram query a file satisfying x must satisfy: terms planned by
 * g_plan, everything else (paths, languages, negations) requires nothing. */
int g_expr_plan(fa_arena *a, const g_expr *x, g_query **out);

#endif /* FATHOM_GREP_H */
