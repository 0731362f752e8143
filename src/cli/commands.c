/*
 * commands.c — the table of fathom's commands, and the help printed from
 * it. Each command's options are rows in the file that parses them
 * (cli_opts_*); this table names them. cli_getopt builds getopt_long's
 * arguments from the same rows, and docgen.c the man page and the shell
 * completions, so what help lists is what the parser takes.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum { OPT_G_INDEX = 9000, OPT_G_MAN };

/* Taken before the command too: fathom --index DIR COMMAND. */
const cli_opt cli_opts_global[] = {
	{ "index", 0, required_argument, OPT_G_INDEX, "DIR",
	  "the index folder (default: $FATHOM_INDEX, else .fathom),\n"
	  "before the command or after it", NULL },
	{ "version", 'V', no_argument, 0, NULL, "print the version", NULL },
	{ "help", 'h', no_argument, 0, NULL, "the commands, or after one its options", NULL },
	CLI_OPT_END,
};

static const cli_opt opts_help[] = {
	{ "man", 0, no_argument, OPT_G_MAN, NULL, "the manual page fathom(1), as roff (man -l -)",
	  NULL },
	CLI_OPT_END,
};

static const cli_opt opts_none[] = { CLI_OPT_END };

const cli_command cli_commands[] = {
	{ "index", "PATH...", "index files and folders (incremental: only changes are re-read)",
	  "fathom index [--index DIR] [options] PATH...", NULL, { cli_opts_index }, NULL,
	  "When 'fathom serve' holds the index, the run goes through it.\n"
	  "Read as text: Markdown, reStructuredText and AsciiDoc split at their headings\n"
	  "(the heading trail goes with each chunk); HTML without its tags, script and\n"
	  "style, its <title> the title, h1-h6 the headings, lines those of the file;\n"
	  ".gz files decompressed (kind from the inner name: x.html.gz is HTML), and\n"
	  "grep reads them so too. Skipped with the reason: binary, corrupt gzip.",
	  CLI_ARGS_FILES, NULL,
	  cmd_index },
	{ "add", "--jsonl FILE", "add documents from JSON lines (- for stdin)",
	  "fathom add [--index DIR] [options] --jsonl FILE|-",
	  "one JSON object per line: id (or _id), title, body (or text), url, tags,\n"
	  "and any other string members as metadata",
	  { cli_opts_add }, NULL, NULL, CLI_ARGS_FILES, NULL, cmd_add },
	{ "search", "QUERY...", "search; exit 1 when nothing matches",
	  "fathom search [--index DIR] [options] QUERY...\n"
	  "fathom search [--index DIR] [options] -- QUERY...   (QUERY holding -word)",
	  "an argument starting with '-' is an option; after --, -word is the query's\n"
	  "NOT word (docs/QUERY.md)",
	  { cli_opts_search, cli_opts_search_ranking, cli_opts_search_batch }, NULL,
	  "each hit leads with path:line: (its first line holding a query word), then\n"
	  "its title and score, then the snippet's lines as ripgrep shows context:\n"
	  "13:text holds a query word, 12-text is around it. Paths are relative to\n"
	  "the current folder when the file is inside it, else absolute. Errors and\n"
	  "'no results: why' go to stderr; with --json a failed query is JSON too",
	  CLI_ARGS_NONE, NULL, cmd_search },
	{ "get", "ID[:FROM[:COUNT]]", "print a document, or COUNT lines of it from line FROM",
	  "fathom get [--index DIR] ID[:FROM[:COUNT]]\n"
	  "fathom get [--index DIR] --chunk CHUNK_ID",
	  "prints the document reassembled from its chunks, or COUNT lines from line FROM",
	  { cli_opts_get }, NULL, NULL, CLI_ARGS_FILES, NULL, cmd_get },
	{ "list", NULL, "list the indexed documents", "fathom list [--index DIR] [--json]", NULL,
	  { cli_opts_list }, NULL, NULL, CLI_ARGS_NONE, NULL, cmd_list },
	{ "delete", "ID...", "remove documents", "fathom delete [--index DIR] ID...", NULL,
	  { cli_opts_delete }, NULL, NULL, CLI_ARGS_FILES, NULL, cmd_delete },
	{ "stats", NULL, "documents, chunks, terms, segments, bytes per structure",
	  "fathom stats [--index DIR] [--json]", NULL, { cli_opts_stats }, NULL, NULL,
	  CLI_ARGS_NONE, NULL, cmd_stats },
	{ "verify", NULL, "check every checksum of every index file", "fathom verify [--index DIR]",
	  NULL, { cli_opts_verify }, NULL, "exit 0 when every file passes its checks, 2 otherwise",
	  CLI_ARGS_NONE, NULL, cmd_verify },
	{ "optimize", NULL, "merge every segment into one: smaller and faster",
	  "fathom optimize [--index DIR] [-q]",
	  "merges every segment into one and drops deleted documents for good;\n"
	  "takes about as long as a fresh build. Searches keep working meanwhile.",
	  { cli_opts_optimize }, NULL, NULL, CLI_ARGS_NONE, NULL, cmd_optimize },
	{ "vocab", "[PREFIX]", "the exact identifiers found at ingest (TC-1001, v2.0.1...)",
	  "fathom vocab [--index DIR] [--category C] [--json] [PREFIX]",
	  "lists the identifiers detected at ingest: canonical key, category, chunks,\n"
	  "the spellings seen and the first document. PREFIX is matched on the key, so\n"
	  "TC-10, tc_10 and \"TC 10\" all list tc-1000 ... tc-1099. Exit 1 when none.",
	  { cli_opts_vocab }, NULL, NULL, CLI_ARGS_NONE, NULL, cmd_vocab },
	{ "glossary", "SUB ...", "alias groups, protected names, the curation queue",
	  "fathom glossary [--index DIR] [--json] SUBCOMMAND ...", NULL, { cli_opts_glossary },
	  cli_glossary_subs,
	  "Terms are compared NFKC, case folded, with hyphens and spaces folded.\n"
	  "All-caps acronyms, code identifiers and protected names never join a group.",
	  CLI_ARGS_NONE, NULL, cmd_glossary },
	{ "config", "[KEY [VALUE...]]", "the index's own defaults: k, match, k1, b, weights, ignore...",
	  "fathom config [--index DIR] [--json]              (list every setting)\n"
	  "fathom config [--index DIR] [--json] KEY          (print one)\n"
	  "fathom config [--index DIR] KEY VALUE...          (set it)\n"
	  "fathom config [--index DIR] --unset KEY           (its default again)",
	  "settings kept with the index, committed atomically with it: search,\n"
	  "index, watch, the daemon and MCP take them where no option is given;\n"
	  "an option on the command line (or in a request) still wins for it",
	  { cli_opts_config }, NULL,
	  "ignore takes one pattern per VALUE (.gitignore syntax); a value out of\n"
	  "range is an error naming the setting, and nothing is written.\n"
	  "While 'fathom serve' holds the index, a change goes through it\n"
	  "(POST /config).",
	  CLI_ARGS_SETTINGS, NULL, cmd_config },
	{ "grep", "PATTERN [PATH]", "regex or literal search of the indexed files, line by line",
	  "fathom grep [--index DIR] [options] [--] PATTERN [PATH...]",
	  "ripgrep's options and output (docs/QUERY.md: the table); PCRE2\n"
	  "syntax; the trigram index picks the files to read; PATH...: only\n"
	  "files under these paths, printed under the PATH as typed, as rg",
	  { cli_opts_grep }, NULL,
	  "files are read as they are on disk now; a file changed since indexing is\n"
	  "searched even where the index would rule it out, and named on stderr\n"
	  "with \"(changed since indexing)\" (--json: changed_since_indexing in\n"
	  "the file's begin)\n"
	  "exit 0 when a line matches, 1 when none does, 2 on error",
	  CLI_ARGS_FILES, NULL, cmd_grep },
	{ "serve", NULL, "the search daemon: JSON over HTTP, MCP at /mcp, /metrics",
	  "fathom serve [--index DIR] [--listen 127.0.0.1:7700] [options]",
	  "the search daemon: one warm index for many clients, JSON over HTTP\n"
	  "(docs/API.md), MCP at /mcp, Prometheus metrics at /metrics",
	  { cli_opts_serve }, NULL,
	  "'fathom index/add/delete/glossary/config/optimize' on this index go through the\n"
	  "daemon (SERVE in the index folder names it)\n"
	  "SIGTERM or Ctrl-C: requests in flight finish; every acknowledged write is\n"
	  "committed before it is answered",
	  CLI_ARGS_NONE, NULL, cmd_serve },
	{ "mcp", NULL, "a Model Context Protocol server on stdin/stdout, for agents",
	  "fathom mcp [--index DIR] [--read-only] [--max-reply-bytes N]",
	  "a Model Context Protocol server on stdin/stdout (JSON-RPC, one message per\n"
	  "line) with the tools search, get_full_content, grep, list_sources,\n"
	  "glossary_pending and glossary_review (not with --read-only)",
	  { cli_opts_mcp }, NULL, NULL, CLI_ARGS_NONE, NULL, cmd_mcp },
	{ "chunk", "PATH...", "print the chunks fathom would index, as JSON lines",
	  "fathom chunk [options] PATH...",
	  "prints {\"id\",\"title\",\"text\",\"path\",\"lines\",\"headings\"} per chunk",
	  { cli_opts_chunk }, NULL, NULL, CLI_ARGS_FILES, NULL, cmd_chunk },
	{ "eval", NULL, "BEIR evaluation: nDCG@10, Recall@100, MRR@10, latency",
	  "fathom eval --corpus corpus.jsonl --queries queries.jsonl --qrels qrels.tsv\n"
	  "fathom eval [--index DIR] [-k 100] [--run FILE] [search options] ...",
	  "indexes the corpus (or reuses --index if it holds documents), runs every\n"
	  "query of the qrels and prints nDCG@10, Recall@100, MRR@10, latency p50/p99\n"
	  "and how many queries returned anything",
	  { cli_opts_eval, cli_opts_search_ranking }, NULL, NULL, CLI_ARGS_NONE, NULL, cmd_eval },
	{ "help", "[COMMAND]", "this text, or a command's options",
	  "fathom help [COMMAND]\nfathom help --man", NULL, { opts_help }, NULL, NULL,
	  CLI_ARGS_COMMANDS, NULL, cmd_help },
	{ "version", NULL, "print the version (also -V, --version)", "fathom version", NULL,
	  { opts_none }, NULL, NULL, CLI_ARGS_NONE, NULL, cmd_version },
	{ "completion", "bash|zsh", "the shell completion script for bash or zsh",
	  "fathom completion bash|zsh",
	  "installed by make install; to try it: source <(fathom completion bash)",
	  { opts_none }, NULL, NULL, CLI_ARGS_WORDS, "bash zsh", cmd_completion },
};
const size_t cli_ncommands = sizeof cli_commands / sizeof cli_commands[0];

const cli_command *cli_command_find(const char *name)
{
	for (size_t i = 0; name && i < cli_ncommands; i++)
		if (strcmp(name, cli_commands[i].name) == 0)
			return &cli_commands[i];
	return NULL;
}

const cli_opt *cli_command_opt(const cli_command *c, const char *name, size_t n)
{
	for (size_t t = 0; t < sizeof c->opts / sizeof c->opts[0] && c->opts[t]; t++)
		for (const cli_opt *o = c->opts[t]; o->name || o->letter; o++)
			if (o->name && strlen(o->name) == n && strncmp(o->name, name, n) == 0)
				return o;
	return NULL;
}

/* ---- help --------------------------------------------------------------------- */

/* Help's columns: options and subcommands are labels in the first 20
 * characters, what they do from column 23 (a longer label has a line of
 * its own). */
#define LABEL_WIDTH 19

void cli_opt_label(char *buf, size_t cap, const cli_opt *o)
{
	size_t n = 0;
	buf[0] = '\0';
	if (o->letter)
		n += (size_t)snprintf(buf + n, cap - n, "-%c%s", o->letter, o->name ? ", " : "");
	if (n < cap && o->name)
		n += (size_t)snprintf(buf + n, cap - n, "--%s", o->name);
	if (n < cap && o->arg)
		snprintf(buf + n, cap - n, o->has_arg == optional_argument ? "[=%s]" : " %s", o->arg);
}

/* text's lines, each after indent; the first after first if given. */
static void put_lines(FILE *f, const char *text, const char *first, const char *indent)
{
	const char *p = text;
	for (int i = 0; p && *p; i++) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		fprintf(f, "%s%.*s\n", i == 0 && first ? first : indent, n, p);
		p = nl ? nl + 1 : NULL;
	}
}

static void put_labelled(FILE *f, const char *label, const char *text)
{
	char first[64];
	if (strlen(label) > LABEL_WIDTH) {
		fprintf(f, "  %s\n", label);
		put_lines(f, text, NULL, "                       ");
		return;
	}
	snprintf(first, sizeof first, "  %-*s  ", LABEL_WIDTH, label);
	put_lines(f, text, first, "                       ");
}

static void put_opts(FILE *f, const cli_opt *o)
{
	char label[96];
	for (; o && (o->name || o->letter); o++) {
		cli_opt_label(label, sizeof label, o);
		put_labelled(f, label, o->help);
	}
}

void cli_help_command(FILE *f, const cli_command *c)
{
	put_lines(f, c->usage, "usage: ", "       ");
	put_lines(f, c->about, NULL, "  ");
	for (size_t i = 0; i < sizeof c->opts / sizeof c->opts[0] && c->opts[i]; i++)
		put_opts(f, c->opts[i]);
	if (c->subs)
		fputs("subcommands:\n", f);
	for (const cli_sub *s = c->subs; s && s->name; s++) {
		char label[96];
		snprintf(label, sizeof label, "%s%s%s", s->name, s->args ? " " : "", s->args ? s->args : "");
		put_labelled(f, label, s->help);
	}
	put_lines(f, c->notes, NULL, "  ");
	if (c->args_are == CLI_ARGS_SETTINGS) {
		fputs("settings (the library's table: name, type, default, range):\n", f);
		const fathom_setting_info *s;
		for (size_t i = 0; (s = fathom_setting_at(i)) != NULL; i++) {
			char label[96], text[512];
			snprintf(label, sizeof label, "%s", s->name);
			cli_setting_line(text, sizeof text, s);
			put_labelled(f, label, text);
		}
	}
}

void cli_setting_line(char *buf, size_t cap, const fathom_setting_info *s)
{
	const char *dflt = *s->default_value ? s->default_value : "none";
	if (s->type == FATHOM_SETTING_INT || s->type == FATHOM_SETTING_NUMBER)
		snprintf(buf, cap, "%s\n(%s from %.17g to %.17g; default %s)", s->help,
		         s->type == FATHOM_SETTING_INT ? "integer" : "number", s->min, s->max, dflt);
	else if (s->type == FATHOM_SETTING_CHOICE)
		snprintf(buf, cap, "%s\n(one of: %s; default %s)", s->help, s->choices, dflt);
	else
		snprintf(buf, cap, "%s\n(at most %.0f bytes; default %s)", s->help, s->max, dflt);
}

void cli_put_setting_names(FILE *f)
{
	const fathom_setting_info *s;
	for (size_t i = 0; (s = fathom_setting_at(i)) != NULL; i++)
		fprintf(f, "%s%s", i ? " " : "", s->name);
}

void cli_help_overview(FILE *f)
{
	fputs("fathom — search for documentation and code\n"
	      "\n"
	      "usage: fathom [--index DIR] COMMAND [options] [args]\n"
	      "\n"
	      "commands:\n", f);
	for (size_t i = 0; i < cli_ncommands; i++) {
		const cli_command *c = &cli_commands[i];
		char label[96];
		snprintf(label, sizeof label, "%s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
		put_labelled(f, label, c->summary);
	}
	fputs("\ncommon options:\n", f);
	put_opts(f, cli_opts_global);
	put_labelled(f, "--", "the end of the options: what follows is arguments, even\n"
	                      "when it starts with '-' (an unknown option is an error)");
	fputs("\n"
	      "Names in human output are written with C-style escapes (\\n, \\t, \\\\, \\xNN\n"
	      "for control characters and bytes that are not UTF-8); --json gives them exact.\n"
	      "\n"
	      "Run 'fathom help COMMAND' for the options of a command.\n", f);
}

int cmd_help(int argc, char **argv)
{
	int c, man = 0;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		if (c != OPT_G_MAN)
			return 2;
		man = 1;
	}
	if (man) {
		if (optind < argc)
			return cli_usage_error("help --man takes no command");
		cli_write_man(stdout);
	} else if (optind < argc) {
		const cli_command *cmd = cli_command_find(argv[optind]);
		if (!cmd)
			return cli_usage_error("no command '%s'", argv[optind]);
		cli_help_command(stdout, cmd);
	} else {
		cli_help_overview(stdout);
	}
	return fflush(stdout) == 0 ? 0 : 2;
}

int cmd_version(int argc, char **argv)
{
	optind = 1;
	if (cli_getopt(argc, argv) != -1)
		return 2;
	if (optind < argc)
		return cli_usage_error("version takes no arguments");
	printf("fathom %s\n", FATHOM_VERSION_STRING);
	return fflush(stdout) == 0 ? 0 : 2;
}

int cmd_completion(int argc, char **argv)
{
	optind = 1;
	if (cli_getopt(argc, argv) != -1)
		return 2;
	if (argc - optind != 1)
		return cli_usage_error("completion: which shell? (fathom completion bash|zsh)");
	if (cli_write_completion(stdout, argv[optind]))
		return cli_usage_error("completion: no script for '%s' (bash or zsh)", argv[optind]);
	return fflush(stdout) == 0 ? 0 : 2;
}
