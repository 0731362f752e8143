/* cli.h — shared pieces of the fathom command (src/cli). */
#ifndef FATHOM_CLI_H
#define FATHOM_CLI_H

#include <stdint.h>
#include <getopt.h>
#include <stdio.h>

#include <jansson.h>

#include "fathom.h"
#include "serve/serve.h"

extern const char *cli_prog;

/* Print "fathom: WHAT: detail (error name)" to stderr. */
void cli_die_api(int rc, const char *what);
/* Print a usage error; returns 2. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int cli_parse_float(const char *s, double lo, double hi, double *out);
/* The library's bounds for a FATHOM_LIMIT_* (fathom_limit), and values
 * parsed within them. */
void cli_limit(int which, double *lo, double *hi);
int cli_parse_limit(const char *s, int which, uint64_t *out);
/* A name (a path, an id, a title) in human output, control characters,
 * invalid UTF-8 and backslashes escaped C-style (\n, \t, \xNN, \\), so no
 * name can forge an output line or drive the terminal. */
void cli_put_name(FILE *f, const char *s);
/* The note after a path whose file changed on disk since it was indexed
 * (a hit's stale flag, a grep file's fresh_from_disk, get's info.stale):
 * the words the daemon's MCP text uses, one definition for both. */
#define CLI_STALE_NOTE SV_STALE_NOTE
/* getopt_long for every command, argv[0] being the command's name: -h and
 * --help print the command's help to stdout and exit 0; an unknown option,
 * a missing value or a value given to a flag is reported with a hint and
 * returned as '?' (the callers' default case: exit 2). */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *lo);
void cli_json_str(FILE *f, const char *s, size_t n);
void cli_json_cstr(FILE *f, const char *s);
const char *cli_default_index(void);

/* Open the index; prints the error and returns non-zero on failure. */
int cli_open(fathom_index **out, const char *dir, unsigned flags, const char *stem);

/* Search options shared by search and eval: returns 1 if the option was
 * consumed, 0 if not a search option, -1 on a bad value (already reported). */
int cli_search_opt(fathom_search_opts *so, int opt, const char *arg);
/* getopt_long entries of the search options, terminated by a zero entry. */
extern const struct option cli_search_longopts[];
/* The search options followed by a command's own (extra, zero-terminated)
 * into out, zero-terminated; cap is out's length. */
void cli_search_longopts_with(struct option *out, size_t cap, const struct option *extra);
enum {
	OPT_MATCH = 1000, OPT_FILTER, OPT_PATH, OPT_LANG, OPT_WEIGHT, OPT_K1, OPT_B,
	OPT_PHRASE, OPT_PREFIX, OPT_EXHAUSTIVE, OPT_STRICT, OPT_SEARCH_LAST
};
/* Filter strings collected by cli_search_opt (so->filters points here). */
#define CLI_MAX_FILTERS 64

/* Run one query and report its time; shared by search --batch and eval. */
int cli_run_query(fathom_index *ix, const char *q, const fathom_search_opts *so,
                  fathom_results **out, double *ms);

int cmd_index(int argc, char **argv);
int cmd_add(int argc, char **argv);
int cmd_chunk(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_vocab(int argc, char **argv);
int cmd_glossary(int argc, char **argv);
int cmd_grep(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_eval(int argc, char **argv);

/* Shared by index/add/chunk. */
#define CLI_MAX_META 256
typedef struct cli_ingest {
	fathom_ingest_opts io;
	const char *meta[CLI_MAX_META];   /* the library takes FATHOM_LIMIT_META */
	int verbose, quiet, tty;
	double t_last;
} cli_ingest;
void cli_ingest_init(cli_ingest *ci);
void cli_ingest_report(const cli_ingest *ci, const fathom_ingest_stats *st, const char *verb);

/* Writes through a running daemon (remote.c). */
typedef struct cli_remote {
	char url[320];
	char token[512];   /* "" when the daemon wants none */
	long pid;
} cli_remote;
/* The daemon serving index (its SERVE file, a live pid): 0 found, -1 none,
 * -2 found but its token is unreadable (reported). */
int cli_remote_find(const char *index, cli_remote *r);
/* Open for writing: 0 opened; 1 the lock is held by a daemon, send the
 * write to r; 2 failed (reported). */
int cli_open_write(fathom_index **out, const char *dir, unsigned flags, const char *stem,
                   cli_remote *r);
/* One request; 0 with *reply the 2xx JSON answer, else 2 (reported). */
int cli_remote_call(const cli_remote *r, const char *method, const char *target,
                    const char *ctype, const char *body, size_t len, json_t **reply);
/* POST a JSON object (stolen). */
int cli_remote_post(const cli_remote *r, const char *target, json_t *args, json_t **reply);
int cli_pct_encode(const char *s, char *out, size_t cap);
/* paths (relative to the current folder) as a daemon working in the
 * index's root folder must get them so files keep the keys a local run
 * gives them; NULL on error (reported). */
json_t *cli_daemon_paths(const char *index, char **paths, int n);
/* Add an ingest reply's counts to st. */
void cli_remote_stats(json_t *reply, fathom_ingest_stats *st);

#endif
