/*
 * ingest.h — getting documents in: walking a tree (VCS folders, .gitignore,
 * binaries, size caps, symlink loops) and reading JSON lines.
 *
 * These functions only find and read documents; analysing and indexing them
 * is the index subsystem's job (the API layer in src/api joins the two).
 */
#ifndef FATHOM_INGEST_H
#define FATHOM_INGEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/util.h"

/* ---- tree walk (ingest/walk.c, ingest/gitignore.c) -------------------------- */

typedef struct walk_entry {
	const char *path;      /* as reached from the root given (root + "/" + rel) */
	uint64_t size;
	int64_t mtime_ns;
	uint64_t dev, ino;
} walk_entry;

typedef struct walk_opts {
	int follow_symlinks;   /* follow links to files and folders; loops are
	                        * detected by (dev, ino) of the folders on the
	                        * current path and skipped */
	int use_gitignore;     /* .gitignore (and .ignore, .fathomignore) in every
	                        * folder, plus .git/info/exclude at a repo root */
	uint64_t max_file_size;/* larger files: FATHOM_SKIP_TOO_BIG (0 = none) */
	/* Called for each regular file that passes the name-based rules. The
	 * binary check needs the content and is done by the caller via
	 * walk_looks_binary(). Non-zero return stops the walk. */
	int (*on_file)(void *ctx, const walk_entry *e);
	/* Called for each skipped path with a FATHOM_SKIP_* reason. */
	void (*on_skip)(void *ctx, const char *path, int reason);
	void *ctx;
	/* A folder never entered nor reported (the index's own, when it lies
	 * inside the tree). */
	int has_skip_dir;
	uint64_t skip_dev, skip_ino;
	/* A folder nothing walked may lie outside, by real path (links
	 * resolved): a root or a followed link that resolves outside it is
	 * FATHOM_SKIP_OUTSIDE_ROOT. NULL: none. */
	const char *confine;
	/* More ignore rules, matched against the path relative to root, below
	 * every ignore file of the tree (as git's core.excludesFile is); with
	 * use_gitignore only. NULL: none. */
	const struct gi_set *extra;
} walk_opts;

/* Walk root (a folder or a single file). Returns 0, the callback's non-zero
 * value, or an error when root itself cannot be read. Unreadable entries
 * below root are reported through on_skip, not as errors. Entries are
 * visited in a deterministic (sorted by name) order. */
int walk_tree(const char *root, const walk_opts *opts);

/* Is this the name of a version-control folder (.git, .hg, .svn, .bzr,
 * _darcs, CVS, .jj, .pijul, .fossil-settings)? */
int walk_is_vcs_dir(const char *name);

/* A content sniff over the first bytes of a file: NUL bytes, or a high share
 * of invalid UTF-8 / control bytes, mean binary. */
int walk_looks_binary(const unsigned char *data, size_t n);

/* .gitignore matching, exposed for tests. A gitignore set holds the patterns
 * of one file, relative to the folder that holds it. */
typedef struct gi_set gi_set;
/* Parse patterns (the text of a .gitignore). base: the folder, relative to
 * the walk root, "" for the root. */
int gi_parse(gi_set **out, const char *text, size_t n, const char *base);
void gi_free(gi_set *s);
/* relpath relative to the walk root, with '/' separators. Returns 1 ignored,
 * -1 explicitly re-included (!pattern), 0 no rule matched. Later rules win. */
int gi_match(const gi_set *s, const char *relpath, int is_dir);

/* ---- JSON lines (ingest/jsonl.c) ------------------------------------------- */

typedef struct jsonl_doc {
	const char *id;           /* "id" or "_id" (numbers are turned into strings) */
	const char *title;        /* "" when absent */
	const char *body;         /* "body", else "text", else "content"; "" when absent */
	size_t body_len;
	const char *url;          /* "" when absent */
	const char *path;         /* "path" when present, else NULL */
	const char *const *tags;  /* "tags": array of strings, or one string */
	size_t n_tags;
	const char *const *meta;  /* every other string/number/bool member as "key=value" */
	size_t n_meta;
	const float *vector;      /* "vector": an array of numbers (NULL: none) */
	uint32_t vector_dim;
	uint64_t line_no;
} jsonl_doc;

typedef struct jsonl_stats {
	uint64_t lines, docs, blank, errors;
} jsonl_stats;

/* Read a JSONL stream. Each good line is delivered to on_doc (pointers valid
 * during the call). A bad line (not JSON, not an object, no id, over
 * max_line bytes) goes to on_error with its line number and a message, and
 * reading continues. A non-zero return from a callback stops. */
typedef struct jsonl_opts {
	size_t max_line;  /* default 64 MiB when 0 */
	int (*on_doc)(void *ctx, const jsonl_doc *d);
	void (*on_error)(void *ctx, uint64_t line_no, const char *msg);
	void *ctx;
} jsonl_opts;

#define JSONL_MSG_MAX 256
#define JSONL_MAX_VECTOR 4096u      /* values of a "vector" (as EM_MAX_DIM) */
#define JSONL_DEFAULT_MAX_LINE ((size_t)64 << 20)

/* The two halves of reading, for callers that parse lines elsewhere (on
 * other threads): a reader hands out whole lines, jsonl_parse_doc parses
 * one. */
typedef struct jsonl_reader jsonl_reader;
/* max_line: 0 for the default; st (may be NULL) counts lines, blank lines
 * and over-long ones (errors). */
int jsonl_reader_new(jsonl_reader **out, FILE *f, size_t max_line, jsonl_stats *st);
void jsonl_reader_free(jsonl_reader *r);
/* The next line that is not blank, without its '\n', '\r' or byte order
 * mark (valid until the next call): 1, with *line NULL for a line over
 * max_line; 0 at the end; or an error. */
int jsonl_reader_next(jsonl_reader *r, const char **line, size_t *len, uint64_t *line_no);
/* Parse a line into d. Its strings live in a, idbuf (for a numeric id,
 * idcap >= 32) and *root, which jsonl_doc_release frees. FATHOM_ESYNTAX
 * with the reason in msg (JSONL_MSG_MAX bytes) for a bad line. Thread-safe
 * (each thread with its own a, idbuf and msg). */
int jsonl_parse_doc(jsonl_doc *d, void **root, const char *line, size_t n, uint64_t line_no,
                    fa_arena *a, char *idbuf, size_t idcap, char *msg);
void jsonl_doc_release(void *root);
/* Tests: off sends every line to jansson (the reference of the fast path). */
void jsonl_set_fast_path(int on);

/* Read from an open stdio stream (the caller opens the file or stdin). */
int jsonl_read_stream(FILE *f, const jsonl_opts *opts, jsonl_stats *st);
/* Parse one line (no newline) — the unit the fuzz target drives. Returns 0
 * and calls on_doc, or FATHOM_ESYNTAX with the detail in fathom_errmsg(). */
int jsonl_parse_line(const char *line, size_t n, uint64_t line_no, const jsonl_opts *opts);

#endif /* FATHOM_INGEST_H */
