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
/* The command running ("search"), for the hint after a usage error; NULL
 * before one is known. */
extern const char *cli_cmd;

/* Print "fathom: WHAT: detail (error name)" to stderr. */
void cli_die_api(int rc, const char *what);
/* The end of a write: rc, the change's result (0: commit it); a failure,
 * the change's (as what) or the commit's, is printed and rolled back.
 * Closes ix; 0, or 2. */
int cli_commit_close(fathom_index *ix, int rc, const char *what);
/* Print a usage error, "fathom: MESSAGE (see 'fathom help COMMAND')", to
 * stderr; returns 2. */
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

/* ---- the terminal (term.c) ----------------------------------------------------
 * --color's words, and the decision: always and never win; auto colours a
 * terminal only, and not under NO_COLOR (set, not "") or TERM unset or
 * "dumb", as ripgrep decides. */
enum { CLI_COLOR_NEVER, CLI_COLOR_ALWAYS, CLI_COLOR_AUTO };
/* CLI_COLOR_* for "never", "always", "auto"; -1 for another word. */
int cli_color_parse(const char *when);
/* 1: fd is a terminal that takes escape sequences (TERM set, not dumb). */
int cli_term_ok(int fd);
/* 1: colour what goes to fd. */
int cli_color_on(int when, int fd);
/* ripgrep's default colours: magenta paths, green line numbers, bold red
 * matches. */
#define CLI_SGR_PATH "\033[35m"
#define CLI_SGR_LINE "\033[32m"
#define CLI_SGR_MATCH "\033[1;31m"
#define CLI_SGR_RESET "\033[0m"

/* Paths as grep shows them: relative to the current folder when the file
 * is inside it, absolute otherwise. Index keys are absolute or relative to
 * the index's root folder (fathom_root). */
typedef struct cli_paths {
	char cwd[4096], root[4096];
	size_t cwd_len, root_len;   /* 0: unknown */
} cli_paths;
void cli_paths_init(cli_paths *p, const char *root);
/* The path to show for key: key itself, a part of it, or buf (cap bytes). */
const char *cli_path_show(const cli_paths *p, const char *key, char *buf, size_t cap);
/* A shown path, escaped (cli_put_name), magenta when color. */
void cli_put_path(FILE *f, const char *shown, int color);
/* ---- the table of commands and options (commands.c) -------------------------
 * One row per option of a command. The parser (cli_getopt), 'fathom help',
 * the man page ('fathom help --man') and the shell completions ('fathom
 * completion bash|zsh') all read these rows, so none of them can know an
 * option the others do not (tests/e2e/install.sh checks the outputs). */
typedef struct cli_opt {
	const char *name;      /* the long name without "--"; NULL: a letter alone */
	int letter;            /* the short option's letter; 0: none */
	int has_arg;           /* no_argument, required_argument or optional_argument */
	int val;               /* what cli_getopt returns for it; 0: the letter */
	const char *arg;       /* the value's name in help (N, FILE, DIR...); NULL: none */
	const char *help;      /* what it does: lines separated by '\n' */
	const char *choices;   /* the values it takes, space-separated; NULL: any */
} cli_opt;
#define CLI_OPT_END { NULL, 0, 0, 0, NULL, NULL, NULL }
#define CLI_OPT_INDEX(val)                                                               \
	{ "index", 0, required_argument, (val), "DIR",                                        \
	  "the index folder (default: $FATHOM_INDEX, else .fathom)", NULL }
/* The largest number of options one command takes. */
#define CLI_MAX_OPTS 64

/* A subcommand (glossary add, ...), for help and completion. */
typedef struct cli_sub {
	const char *name, *args, *help;
} cli_sub;

/* What a command's arguments are, for completion. */
enum { CLI_ARGS_NONE, CLI_ARGS_FILES, CLI_ARGS_COMMANDS, CLI_ARGS_WORDS,
       CLI_ARGS_SETTINGS /* the names of the index settings (fathom_setting_at) */ };

typedef struct cli_command {
	const char *name;
	const char *args;         /* its arguments in the command list: "PATH..." */
	const char *summary;      /* one line */
	const char *usage;        /* usage lines ('\n' between), each "fathom NAME ..." */
	const char *about;        /* lines before the options, or NULL */
	const cli_opt *opts[4];   /* option tables in help order, NULL after the last */
	const cli_sub *subs;      /* subcommands, NULL-terminated; or NULL */
	const char *notes;        /* lines after the options, or NULL */
	int args_are;             /* CLI_ARGS_* */
	const char *arg_words;    /* with CLI_ARGS_WORDS: the words, space-separated */
	int (*run)(int argc, char **argv);
} cli_command;

extern const cli_command cli_commands[];
extern const size_t cli_ncommands;
/* The common options, before a command or after it (main.c reads them). */
extern const cli_opt cli_opts_global[];
const cli_command *cli_command_find(const char *name);
/* The command's option whose long name is name's first n bytes, or NULL. */
const cli_opt *cli_command_opt(const cli_command *c, const char *name, size_t n);
/* The command list and common options ('fathom help'), or one command's. */
void cli_help_overview(FILE *f);
void cli_help_command(FILE *f, const cli_command *c);
/* The setting names, space-separated (completions). */
void cli_put_setting_names(FILE *f);
/* A setting's help with its type, range and default (help, man page). */
void cli_setting_line(char *buf, size_t cap, const fathom_setting_info *s);
/* The label of an option in help: "-m, --max-count N". */
void cli_opt_label(char *buf, size_t cap, const cli_opt *o);

/* docgen.c: the man page (roff) and the completion scripts. */
void cli_write_man(FILE *f);
/* shell: "bash" or "zsh"; -1 for another. */
int cli_write_completion(FILE *f, const char *shell);

/* getopt_long over the option table of the command argv[0] names: -h and
 * --help print the command's help to stdout and exit 0; an unknown option,
 * a missing value or a value given to a flag is reported with a hint and
 * returned as '?' (the callers' default case: exit 2). */
int cli_getopt(int argc, char **argv);
void cli_json_str(FILE *f, const char *s, size_t n);
void cli_json_cstr(FILE *f, const char *s);
const char *cli_default_index(void);

/* Open the index; prints the error and returns non-zero on failure. */
int cli_open(fathom_index **out, const char *dir, unsigned flags, const char *stem);

/* Search options shared by search and eval: returns 1 if the option was
 * consumed, 0 if not a search option, -1 on a bad value (already reported). */
int cli_search_opt(fathom_search_opts *so, int opt, const char *arg);
/* The rows of those options. */
extern const cli_opt cli_opts_search_ranking[];
enum {
	OPT_MATCH = 1000, OPT_FILTER, OPT_PATH, OPT_LANG, OPT_WEIGHT, OPT_K1, OPT_B,
	OPT_PHRASE, OPT_PREFIX, OPT_EXHAUSTIVE, OPT_STRICT, OPT_MODE, OPT_FUSION, OPT_ALPHA,
	OPT_MIN_SIM, OPT_VECTOR, OPT_SEARCH_LAST
};
/* Filter strings collected by cli_search_opt (so->filters points here). */
#define CLI_MAX_FILTERS 64

/* How search prints its hits (search_out.c). */
typedef struct cli_hits_out {
	fathom_index *ix;          /* for the hits' chunks */
	int color, explain;
	int vimgrep;               /* one "path:line:col:text" line per hit */
	uint32_t snippet_bytes;    /* bounds the lines printed */
	cli_paths paths;
	char *doc, *doc_id;        /* the last document read whole (search_out.c) */
	size_t doc_len;
} cli_hits_out;
/* The hits of r to stdout: each "path:line: title score" and then its
 * snippet's lines ("12-" context, "13:" a line with a query term), or
 * with vimgrep one line per hit; with explain the receipt first and each
 * hit's score parts. */
void cli_print_hits(const fathom_results *r, cli_hits_out *o);

/* Run one query and report its time; shared by search --batch and eval. */
int cli_run_query(fathom_index *ix, const char *q, const fathom_search_opts *so,
                  fathom_results **out, double *ms);

/* Each command's options (in the file that parses them) and its entry. */
extern const cli_opt cli_opts_index[], cli_opts_add[], cli_opts_chunk[], cli_opts_delete[],
	cli_opts_optimize[], cli_opts_search[], cli_opts_search_batch[], cli_opts_get[],
	cli_opts_list[], cli_opts_stats[], cli_opts_verify[], cli_opts_vocab[], cli_opts_glossary[],
	cli_opts_grep[], cli_opts_serve[], cli_opts_mcp[], cli_opts_eval[], cli_opts_config[];
extern const cli_sub cli_glossary_subs[];

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
int cmd_config(int argc, char **argv);
int cmd_grep(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_completion(int argc, char **argv);

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
