/*
 * harness.h — the driver every peer benchmark shares.
 *
 * Each peer (SQLite FTS5, Xapian, PostgreSQL) fills in a struct
 * bench_engine with a handful of callbacks; harness_main() does the rest the
 * same way for all of them: it reads the chunks JSONL and times the build,
 * reads the queries, times every query in-process, writes a TREC run file,
 * and prints one JSON line of figures. Keeping that code in one place is
 * what makes the figures comparable between engines.
 */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Up to run-k hits of one query, in rank order. The engine appends with
 * bench_hits_add(); ids are copied. */
typedef struct bench_hits bench_hits;
void bench_hits_add(bench_hits *h, const char *id, size_t id_len, double score);

typedef struct bench_engine {
	const char *name;
	/* Start a fresh, empty index at `where` (a path or a conninfo). */
	int (*build_begin)(void *ctx, const char *where);
	/* Add one chunk. Strings are NUL-terminated and may hold no NUL. */
	int (*build_add)(void *ctx, const char *id, const char *title, size_t title_len,
	                 const char *text, size_t text_len);
	/* Make the index complete and durable (commit, optimise, GIN build). */
	int (*build_end)(void *ctx);
	/* Bytes the finished index takes on disk; < 0 if unknown. */
	int64_t (*index_bytes)(void *ctx, const char *where);
	/* Open the index at `where` for searching. */
	int (*search_open)(void *ctx, const char *where);
	/* Top-k for one query; match_all = 1 for AND, 0 for OR. Returns 0 or -1
	 * on an error (the query then counts as unanswered). */
	int (*search)(void *ctx, const char *query, int match_all, unsigned k, bench_hits *out);
	void (*close)(void *ctx);
} bench_engine;

/* Parse the command line (see usage in harness.c), run, print the figures.
 * Returns the process exit status. */
int harness_main(int argc, char **argv, const bench_engine *engine, void *ctx);

/* Helpers the engines share. */
double bench_now(void);                          /* monotonic seconds */
int64_t bench_path_bytes(const char *path);      /* a file, or a folder summed */
void bench_die(const char *fmt, ...);            /* print to stderr, exit 2 */

#ifdef __cplusplus
}
#endif
#endif
