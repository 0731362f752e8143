/*
 * grep.h — indexed grep, the subsystem's one internal header, divided into
 * sections "interface to code in X.c" (after SQLite's fts5Int.h).
 *
 * A search goes through the files in this order:
 *
 *   query.c         a boolean query (`error AND file:\.c$`) into an
 *                   expression of patterns and filters (-Q only)
 *   regex_parse.c   the PCRE2 syntax reader: a pattern read by recursive
 *                   descent into what its parts match (for plan.c), and the
 *                   literal strings every match contains
 *   plan.c          the trigram planner: what a pattern's parts match, as
 *                   sets of strings and trigram queries, after Russ Cox,
 *                   "Regular Expression Matching with a Trigram Index"
 *   search.c        the search: the trigram query over each segment gives
 *                   the candidate files; batches of documents go through
 *                   the library's thread pool (util/pool.h), the results
 *                   come back in index order on the calling thread
 *   files.c         paths (the index's root, the user's current folder,
 *                   PATH arguments) and files read from disk, with the
 *                   check for files changed since indexing
 *   regex.c         PCRE2: compiling with grep's options (-F -i -w),
 *                   matching within bounds, allocating through fa_malloc
 *   scan.c          a text's matching lines, as grep sees them
 *
 * The public entry points (fathom_grep, fathom_grep_chunks,
 * fathom_grep_explain) are in api/grep_api.c: they unwrap the public
 * handle and call g_search and g_explain, which take the internal index.
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

enum g_flags {
	G_LITERAL = 1,    /* -F: the pattern is a string (lines of it: any of them) */
	G_CASELESS = 2,   /* -i */
	G_WORD = 4,       /* -w (g_regex_compile only) */
	G_MULTILINE = 8   /* ^ and $ at every line (g_regex_compile only) */
};

#define G_MAX_DEPTH 64        /* group nesting the planner follows */
#define G_MAX_TRIGRAMS 4096   /* trigrams one query keeps */
#define G_MAX_PATTERN 16384   /* longer patterns are not planned (read every file) */

/* ---- interface to code in plan.c: trigram queries ---------------------------- */

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

/* The query a file must satisfy to possibly match pattern (PCRE2 syntax, or
 * a literal with G_LITERAL). Never wrong in the unsafe direction: whatever
 * the planner does not understand becomes GQ_ALL. The query lives in a. */
int g_plan(fa_arena *a, const char *pattern, size_t len, unsigned flags, g_query **out);

/* "(and "abc" "bcd" (or ...))", ALL, NONE: for tests and --explain. */
void g_query_format(const g_query *q, fbuf *out);

/* Does a file whose trigram set answers has(ctx, tri) satisfy q? */
int g_query_eval(const g_query *q, int (*has)(void *ctx, uint32_t tri), void *ctx);

/* The AND and the OR of n queries, simplified (ALL and NONE folded in). */
g_query *g_query_and(fa_arena *a, g_query *const *q, uint32_t n);
g_query *g_query_or(fa_arena *a, g_query *const *q, uint32_t n);

/* ---- interface to code in plan.c: what a part of a pattern matches -----------
 * The planner's algebra, which the syntax reader (regex_parse.c) applies as
 * it reads: for each part of the pattern, what any string it matches
 * looks like (plan.c's header comment tells how the operations work). */

typedef struct g_str {
	const unsigned char *p;
	uint32_t n;
} g_str;

typedef struct g_set {
	g_str *v;
	uint32_t n;
} g_set;

typedef struct g_info {
	int can_empty;          /* it can match the empty string */
	int has_exact;
	g_set exact;            /* every string it can match, while few */
	g_set prefix, suffix;   /* when !has_exact: one of them starts (ends)
	                         * every match */
	g_query *match;         /* a trigram query every match satisfies */
} g_info;

/* The state of planning one pattern: the reader's position in it, and
 * what stops the planner (memory, a construct it does not follow). */
typedef struct g_planner {
	fa_arena *a;
	const unsigned char *p, *end;
	int caseless;
	int depth;
	int global_unsupported;   /* the whole pattern is beyond the planner */
	int err;
} g_planner;

/* Memory for the plan (NULL, with g->err or g->global_unsupported set). */
void *g_plan_alloc(g_planner *g, size_t n);
/* A set of room for cap strings, and the set of one string (copied). */
g_set g_set_new(g_planner *g, uint32_t cap);
g_set g_set_one(g_planner *g, const unsigned char *p, uint32_t n);

g_info g_info_any_char(g_planner *g);    /* any one character */
g_info g_info_any_match(g_planner *g);   /* anything, the empty string too */
g_info g_info_empty(g_planner *g);       /* the empty string */
g_info g_info_exact(g_set s);            /* exactly the strings of s */
/* One character's bytes: exact (folded) or, under -i where folding is more
 * than ASCII, any character. */
g_info g_info_char(g_planner *g, const unsigned char *bytes, uint32_t n);
g_info g_info_concat(g_planner *g, g_info x, g_info y);
g_info g_info_alternate(g_planner *g, g_info x, g_info y);
/* x{min,max} (max UINT32_MAX: no bound). */
g_info g_info_repeat(g_planner *g, g_info x, uint32_t min, uint32_t max);

/* ---- interface to code in regex_parse.c: the PCRE2 syntax reader ------------- */

/* The pattern at g->p to its end (or an unbalanced ')'), as one info. */
g_info g_read_regex(g_planner *g);
/* A -F string at g->p: the lines of it, any of them. */
g_info g_read_literal(g_planner *g);

/* Does the pattern name inline option opt anywhere ((?i), (?-i:...))?
 * Over-counts (inside \Q...\E or a class), never misses. */
int g_inline_option(const unsigned char *p, const unsigned char *end, char opt);

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

/* ---- interface to code in query.c: boolean queries ---------------------------
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

/* ---- interface to code in regex.c: PCRE2 -------------------------------------
 * Every PCRE2 object grep makes (compiled patterns, match data, match
 * contexts, JIT stacks) allocates through fa_malloc, so tests can fail
 * its allocations too. Matching is bounded: PCRE2's match limit (and,
 * without JIT, its depth limit) stop a hostile pattern with FATHOM_ETOOBIG
 * instead of running away. */

typedef struct g_regex g_regex;       /* a compiled pattern */
typedef struct g_matcher g_matcher;   /* one thread's matching state */

/* Compile pat (flags: G_LITERAL, G_CASELESS, G_WORD, G_MULTILINE). A bad
 * pattern is FATHOM_EINVAL, "bad <what> at column <at + its column>". */
int g_regex_compile(g_regex **out, const char *pat, size_t plen, unsigned flags,
                    const char *what, size_t at);
void g_regex_free(g_regex *re);
/* Does a match depend on text beyond its line (\A, lookarounds, verbs)?
 * Such a pattern is matched one line at a time (scan.c). */
int g_regex_per_line(const g_regex *re);

int g_matcher_new(g_matcher **out);
void g_matcher_free(g_matcher *m);

/* One match of re in [s, s+n) from start: 1 found (*ms, *me), 0 none,
 * < 0 error (FATHOM_ETOOBIG past the limits, FATHOM_ENOMEM). */
int g_regex_match(g_matcher *m, const g_regex *re, const char *s, size_t n, size_t start,
                  size_t *ms, size_t *me);

/* ---- interface to code in scan.c: matching lines ----------------------------- */

typedef struct g_lines {
	fathom_grep_line *v;
	size_t n, cap;
	int state;             /* search.c: -1 not matched yet, 0 no line, 1 some */
} g_lines;

int g_lines_add(g_lines *l, const fathom_grep_line *line);

/* The lines of text[from, len) that re matches, as grep sees them (a match
 * must lie within one line), at most limit of them (0: all), into out
 * (emptied first). Line numbers count from the text's start. */
int g_scan(g_matcher *m, const g_regex *re, const char *text, size_t len, size_t from,
           uint32_t limit, g_lines *out);

/* The lines of n sources merged into out in line order (one entry per
 * line: its earliest match), at most limit of them (0: all). */
int g_lines_merge(g_lines *out, g_lines *const *src, uint32_t n, uint32_t limit);

/* ---- interface to code in files.c: paths and files on disk ------------------- */

/* Where files are and where the user is: the index's root folder (relative
 * document paths are under it), the current folder, the PATH arguments
 * and the glob and language that limit the search. */
typedef struct g_scope {
	const char *root;          /* the index's root folder ("": the current one) */
	int root_fd;               /* relative paths are opened from here */
	char *sub;                 /* the current folder under the root ("" the root
	                            * itself; NULL outside it or no root) */
	char **prefixes;           /* the PATH arguments as index paths */
	size_t nprefixes;
	const char *glob, *lang;   /* NULL or "": none */
	char *confine;             /* G_CONFINE: the root's real path (g_search's) */
} g_scope;

/* A path argument as the index names it: arg resolved against cwd (the
 * current folder, absolute), then relative to root when under it (""
 * for root itself), else absolute; with no root ("": files have absolute
 * keys), absolute. So a path means the same files from any current
 * folder. A new string (fa_free), NULL when out of memory. */
char *g_index_path(const char *root, const char *cwd, const char *arg);
/* The scope of a search of an index rooted at root (ix_root) with opts.
 * g_scope_free frees it, also after a failed init. */
int g_scope_init(g_scope *s, const char *root, const fathom_grep_opts *opts);
void g_scope_free(g_scope *s);
/* Is a document path under a PATH argument and matched by the glob? */
int g_scope_has_path(const g_scope *s, const char *path);
/* ... and is the document of the language? */
int g_scope_has_doc(const g_scope *s, const ix_doc_info *di);
/* The path to print for a document path (fa_free it; NULL: no memory). */
char *g_display_path(const g_scope *s, const char *path);

/* One thread's reader of files: the folder of the last file opened (files
 * of one folder follow each other in a segment) and a buffer for the text. */
#define G_WHY_LEN 256
typedef struct g_reader {
	const g_scope *scope;
	char dir[4096];
	size_t dlen;
	int dfd;
	int have_dir;
	char *buf;                 /* the file read last */
	size_t buf_cap;
	char why[G_WHY_LEN];       /* why the last file could not be read */
} g_reader;

void g_reader_init(g_reader *r, const g_scope *s);
void g_reader_free(g_reader *r);
/* A handle on the folder of path (relative to the root, or absolute), -1
 * when it cannot be opened; *name is the file's name within it. */
int g_reader_dir(g_reader *r, const char *path, const char **name);
/* Read a file into r->buf: 1 read (*len, *changed: since indexing), 0 gone
 * or not a regular file, 2 there but not read (r->why says why), < 0 error. */
int g_read_file(g_reader *r, int dfd, const char *name, const ix_doc_info *di, size_t *len,
                int *changed);
/* -l with one pattern: read the file a piece at a time, each piece's whole
 * lines matched as they come, and stop at the first matching line, so a
 * large file that matches early is not read to its end. As g_read_file,
 * with *found set and the line in *line. */
int g_read_first_match(g_reader *r, int dfd, const char *name, const ix_doc_info *di,
                       g_matcher *m, const g_regex *re, g_lines *line, size_t *len,
                       int *changed, int *found);

/* ---- interface to code in search.c: the search ------------------------------- */

/* One file's result, handed to emit on the calling thread in index order. */
typedef struct g_file {
	const char *key;
	char *path;                /* as the user's shell sees it */
	char *text;                /* NULL when the caller gets no text */
	size_t len;
	fathom_grep_line *lines;
	size_t nlines;
	int fresh;                 /* changed on disk since indexing */
	uint32_t seg, doc;         /* where the index has it */
	char *skipped;             /* why the file was not read (the result
	                            * reports that alone, to opts->on_skip) */
} g_file;

typedef int (*g_emit_fn)(void *ctx, const g_file *f);

/* The search of ix for pattern with opts (checked by the caller, not
 * NULL): matching files handed to emit in index order, from the calling
 * thread. emit returning > 0 stops it (FATHOM_EINTERRUPTED), < 0 is an
 * error returned as is. keep_text: emit gets the text even for -c.
 * stats may be NULL. */
/* flags of g_search */
#define G_KEEP_TEXT 1              /* the callback gets the text (not files_only) */
#define G_CONFINE 2                /* read no file whose real path lies outside
                                    * the index's root (FATHOM_OPEN_CONFINE) */
int g_search(ix_index *ix, const char *pattern, const fathom_grep_opts *opts, g_emit_fn emit,
             void *ctx, fathom_grep_stats *stats, unsigned flags);

/* The trigram query of a pattern (and the expression of a boolean query),
 * as fathom_grep_explain gives it; *out is fa_free'd. */
int g_explain(char **out, const char *pattern, const fathom_grep_opts *opts);

#endif /* FATHOM_GREP_H */
