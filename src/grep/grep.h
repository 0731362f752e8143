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

/* "(and "abc" "bcd" (or ...))", ALL, NONE: for tests and --explain. */
void g_query_format(const g_query *q, fbuf *out);

/* Does a file whose trigram set answers has(ctx, tri) satisfy q? */
int g_query_eval(const g_query *q, int (*has)(void *ctx, uint32_t tri), void *ctx);

#endif /* FATHOM_GREP_H */
