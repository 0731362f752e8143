/*
 * main.c — the fathom command. A client of the public API only
 * (include/fathom.h); it parses arguments, prints, and sets exit codes:
 * 0 success, 1 no results (as grep), 2 error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fathom.h"
#include "cli.h"

const char *cli_prog = "fathom";

void cli_die_api(int rc, const char *what)
{
	const char *detail = fathom_errmsg();
	if (detail && *detail)
		fprintf(stderr, "%s: %s: %s (%s)\n", cli_prog, what, detail, fathom_strerror(rc));
	else
		fprintf(stderr, "%s: %s: %s\n", cli_prog, what, fathom_strerror(rc));
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see '%s help')\n", cli_prog);
	return 2;
}

/* Parse a number with a range check and nothing trailing. */
int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mult = 1;
	if (*end == 'k' || *end == 'K')
		mult = 1024, end++;
	else if (*end == 'M')
		mult = 1024 * 1024, end++;
	else if (*end == 'G')
		mult = 1024ull * 1024 * 1024, end++;
	if (errno || *end || v > hi / mult || v * mult < lo)
		return -1;
	*out = v * mult;
	return 0;
}

int cli_parse_float(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	if (!s || !*s)
		return -1;
	double v = strtod(s, &end);
	if (errno || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

/* The library's bounds for one of its limits: options are checked against
 * what it publishes, never a copy. */
void cli_limit(int which, double *lo, double *hi)
{
	*lo = *hi = 0;
	fathom_limit(which, lo, hi);
}

int cli_parse_limit(const char *s, int which, uint64_t *out)
{
	double lo, hi;
	cli_limit(which, &lo, &hi);
	return cli_parse_u64(s, (uint64_t)lo, (uint64_t)hi, out);
}

/* ---- JSON output ---------------------------------------------------------- */

void cli_json_str(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

void cli_json_cstr(FILE *f, const char *s)
{
	cli_json_str(f, s ? s : "", s ? strlen(s) : 0);
}

/* ---- names in human output ------------------------------------------------ */

/* A file name can hold any byte but '/' and NUL: a newline in one would
 * forge an output line, an escape sequence would drive the terminal. So
 * names are written C-style, as ls -b does: \n, \t, \r, \\ for a
 * backslash, and \xNN for every other control character (C0, DEL, and
 * the C1 controls U+0080-U+009F byte by byte) and every byte that is not
 * part of valid UTF-8. Everything else is written as it is, so the
 * output reads back unambiguously; --json gives the exact bytes. */
void cli_put_name(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	const unsigned char *end = p + strlen((const char *)p);
	while (*p) {
		size_t n = sv_utf8_char(p, (size_t)(end - p));
		int c1 = n == 2 && p[0] == 0xC2 && p[1] < 0xA0;
		if (n > 1 && !c1) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		if (n == 1 && *p >= 0x20 && *p != 0x7F && *p != '\\') {
			fputc(*p++, f);
			continue;
		}
		switch (*p) {
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		case '\\': fputs("\\\\", f); break;
		default: fprintf(f, "\\x%02x", *p); break;
		}
		p++;
	}
}

/* ---- help ------------------------------------------------------------------ */

static const char usage_text[] =
"fathom — search for documentation and code\n"
"\n"
"usage: fathom COMMAND [options] [args]\n"
"\n"
"commands:\n"
"  index PATH...        index files and folders (incremental: only changes are re-read)\n"
"  add --jsonl FILE     add documents from JSON lines (- for stdin)\n"
"  search QUERY...      search; exit 1 when nothing matches\n"
"  get ID[:FROM[:COUNT]]  print a document, or COUNT lines of it from line FROM\n"
"  list                 list the indexed documents\n"
"  delete ID...         remove documents\n"
"  stats                documents, chunks, terms, segments, bytes per structure\n"
"  verify               check every checksum of every index file\n"
"  optimize             merge every segment into one: smaller and faster\n"
"  vocab [PREFIX]       the exact identifiers found at ingest (TC-1001, v2.0.1...)\n"
"  glossary SUB ...     alias groups, protected names, the curation queue\n"
"  grep PATTERN [PATH]  regex or literal search of the indexed files, line by line\n"
"  serve                the search daemon: JSON over HTTP, MCP at /mcp, /metrics\n"
"  mcp                  a Model Context Protocol server on stdin/stdout, for agents\n"
"  chunk PATH...        print the chunks fathom would index, as JSON lines\n"
"  eval                 BEIR evaluation: nDCG@10, Recall@100, MRR@10, latency\n"
"  help [COMMAND]       this text, or a command's options\n"
"  version              print the version\n"
"\n"
"common options:\n"
"  --index DIR          the index folder (default: $FATHOM_INDEX, else .fathom)\n"
"  -h, --help           the command's options\n"
"  --                   the end of the options: what follows is arguments, even\n"
"                       when it starts with '-' (an unknown option is an error)\n"
"\n"
"Names in human output are written with C-style escapes (\\n, \\t, \\\\, \\xNN\n"
"for control characters and bytes that are not UTF-8); --json gives them exact.\n"
"\n"
"Run 'fathom help COMMAND' for the options of a command.\n";

static const struct { const char *cmd, *text; } cmd_help[] = {
	{ "index",
	  "usage: fathom index [--index DIR] [options] PATH...\n"
	  "  --meta KEY=VALUE     tag every document of this run (repeatable)\n"
	  "  --max-size N         full-text index files up to N bytes (default 4M; k/M/G suffixes);\n"
	  "                       for a .gz file, N bounds the decompressed size\n"
	  "  --grep-max-size N    larger files, up to N bytes, go to the grep index alone\n"
	  "                       (default 256M; 0: skip them)\n"
	  "  --grep-only          index files for fathom grep alone: the trigram index and\n"
	  "                       the file table, no full text (fast to build, small)\n"
	  "  --chunk-target N     target chunk size in bytes (default 1500)\n"
	  "  --chunk-overlap N    bytes repeated from the previous chunk (default 0)\n"
	  "  --chunk-max N        hard cap on a chunk (default 6000)\n"
	  "  --ident-min-len N    exact identifiers: shortest spelling kept (default 3)\n"
	  "  --ident-max N        exact identifiers: at most N per chunk (default 50)\n"
	  "  --threads N          threads reading and analysing files (default: one per CPU;\n"
	  "                       1: one thread); the index is the same whatever N\n"
	  "  --no-ignore          do not honour .gitignore files\n"
	  "  --no-follow          do not follow symbolic links (by default links to files\n"
	  "                       and folders are followed, wherever they lead; loops are\n"
	  "                       skipped). Through 'fathom serve' without a token, nothing\n"
	  "                       whose real path lies outside the index's root is read\n"
	  "  --keep-missing       keep documents whose files are gone\n"
	  "  --stem LANG          stemming language when creating the index (default english; none)\n"
	  "  -v, --verbose        list every skipped path with the reason\n"
	  "  -q, --quiet          no progress line and no summary\n"
	  "  --watch              then keep watching (inotify): what changes is re-indexed\n"
	  "                       and committed, a batch per quiet moment, until Ctrl-C\n"
	  "  --debounce SECONDS   quiet time before a batch (default 0.2)\n"
	  "  When 'fathom serve' holds the index, the run goes through it.\n"
	  "  Read as text: Markdown, reStructuredText and AsciiDoc split at their headings\n"
	  "  (the heading trail goes with each chunk); HTML without its tags, script and\n"
	  "  style, its <title> the title, h1-h6 the headings, lines those of the file;\n"
	  "  .gz files decompressed (kind from the inner name: x.html.gz is HTML), and\n"
	  "  grep reads them so too. Skipped with the reason: binary, corrupt gzip.\n" },
	{ "add",
	  "usage: fathom add [--index DIR] --jsonl FILE|- [--meta KEY=VALUE]...\n"
	  "  one JSON object per line: id (or _id), title, body (or text), url, tags,\n"
	  "  and any other string members as metadata. Chunk options and --threads N\n"
	  "  (threads parsing and analysing lines) as for index.\n" },
	{ "search",
	  "usage: fathom search [--index DIR] [options] QUERY...\n"
	  "       fathom search [--index DIR] [options] -- QUERY...   (QUERY holding -word)\n"
	  "  an argument starting with '-' is an option; after --, -word is the query's\n"
	  "  NOT word (docs/QUERY.md)\n"
	  "  -k N                 number of results (default 10)\n"
	  "  --match MODE         auto (default): ranked, any word may match, a short\n"
	  "                       keyword query's chunks holding more words first; all:\n"
	  "                       every word required; any: plain ranked disjunction\n"
	  "  --filter KEY=VALUE   metadata filter, applied before ranking (repeatable)\n"
	  "  --path GLOB          only documents whose path matches GLOB\n"
	  "  --lang LANG          only source files of this language (c, python, markdown...)\n"
	  "  --weight FIELD=W     BM25F field weight (path, title, headings, tags, body)\n"
	  "  --k1 X, --b X        BM25 parameters (default 1.5, 0.9)\n"
	  "  --phrase-bonus X     multiplier when the query terms are adjacent (default 1.25)\n"
	  "  --prefix-bonus X     multiplier when a title/heading starts with the query (1.15)\n"
	  "  --json               JSON output (schema in docs/QUERY.md)\n"
	  "  --explain            print the score parts of each hit\n"
	  "  --exhaustive         score every candidate (no pruning; the reference)\n"
	  "  --strict             a query that is not well formed fails with its column;\n"
	  "                       by default it is read literally (--explain says what)\n"
	  "  --batch FILE         run every line of FILE (or a BEIR queries .jsonl) as a query\n"
	  "  --run FILE           with --batch: write a TREC run file\n"
	  "  --timing-json        with --batch: print one JSON line of latency figures\n"
	  "  --warmup             with --batch: run each query once untimed before timing it\n"
	  "  --snippets           with --batch: build each hit's snippet, as a single search\n"
	  "                       does (by default a batch times ids and scores alone)\n" },
	{ "get",
	  "usage: fathom get [--index DIR] ID[:FROM[:COUNT]]\n"
	  "       fathom get [--index DIR] --chunk CHUNK_ID\n"
	  "  prints the document reassembled from its chunks, or COUNT lines from line FROM\n" },
	{ "list", "usage: fathom list [--index DIR] [--json]\n" },
	{ "delete", "usage: fathom delete [--index DIR] ID...\n" },
	{ "stats", "usage: fathom stats [--index DIR] [--json]\n" },
	{ "verify", "usage: fathom verify [--index DIR]\n  exit 0 when every file passes its checks, 2 otherwise\n" },
	{ "grep",
	  "usage: fathom grep [--index DIR] [options] [--] PATTERN [PATH...]\n"
	  "  PCRE2 syntax by default; the trigram index picks the files to read\n"
	  "  -F                   the pattern is a literal string (its lines: any of them)\n"
	  "  -i, -w               ignore case; whole words only\n"
	  "  -l, -c               the matching files only; a count per file\n"
	  "  -n, -N               line numbers (default) or none\n"
	  "  -C N, -A N, -B N     lines of context around, after, before\n"
	  "  -m N, --max-count N  at most N matching lines per file\n"
	  "  --glob GLOB          only paths matching GLOB (or whose base name does)\n"
	  "  --lang LANG          only files of this language\n"
	  "  --json               one JSON object per matching line\n"
	  "  -q, --quiet          print nothing: the exit status says whether a line matched\n"
	  "  -Q, --query          PATTERN is a boolean query, as in Zoekt:\n"
	  "                         error AND handler     both in the file (AND is optional)\n"
	  "                         lock OR mutex         either; -word or NOT word: without it\n"
	  "                         file:auth.c lang:c    path regex; language; (parentheses)\n"
	  "                         \"two words\"           quoted: a literal string; case:yes|no|auto\n"
	  "  --trust-index        read only the files the index lists, without checking the\n"
	  "                       others for changes made since indexing (faster)\n"
	  "  -j N, --threads N    worker threads (default: one per CPU)\n"
	  "  --explain            print the trigram query the pattern is planned into\n"
	  "  --chunks[=K]         the indexed chunks holding matching lines, most first (at\n"
	  "                       most K, default 100): grep as a source for hybrid search\n"
	  "  --stats              how many files the index let grep skip (on stderr)\n"
	  "  --color WHEN         always, never or auto (the default: on a terminal)\n"
	  "  PATH...              only files under these paths\n"
	  "  files are read as they are on disk now; a file changed since indexing is\n"
	  "  searched even where the index would rule it out, and named on stderr\n"
	  "  with \"(changed since indexing)\" (--json: changed_since_indexing)\n"
	  "  exit 0 when a line matches, 1 when none does, 2 on error\n" },
	{ "serve",
	  "usage: fathom serve [--index DIR] [--listen 127.0.0.1:7700] [options]\n"
	  "  the search daemon: one warm index for many clients, JSON over HTTP\n"
	  "  (docs/API.md), MCP at /mcp, Prometheus metrics at /metrics\n"
	  "  --listen HOST:PORT   address (default 127.0.0.1:7700; port 0: any free one)\n"
	  "  --token-file FILE    require 'Authorization: Bearer TOKEN' (TOKEN: the file)\n"
	  "  --allow-host NAME    accept this Host/Origin name too (DNS rebinding guard)\n"
	  "  --allow-origin URL   let a browser client from this origin (http://HOST:PORT)\n"
	  "                       call the daemon (CORS: preflight OPTIONS answered)\n"
	  "  --max-body BYTES     largest request body (default 64 MiB)\n"
	  "  --timeout SECONDS    time a search, grep or ingest may run (default 30; 0: none)\n"
	  "  --max-connections N  concurrent connections (default 256; one client address\n"
	  "                       may hold all but N/16, at least one, of them)\n"
	  "  --idle-timeout S     close a connection silent this long (default 30)\n"
	  "  --head-timeout S     close a connection whose request head (or, kept alive,\n"
	  "                       its next one) takes longer than this in all (default 10)\n"
	  "  --read-only          never take the writer lock\n"
	  "  --watch PATH         keep PATH's files indexed as they change (inotify;\n"
	  "                       repeatable; as given to 'fathom index')\n"
	  "  --debounce SECONDS   quiet time before a watch batch (default 0.2)\n"
	  "  --max-reply-bytes N  largest MCP tool reply at /mcp (default 256 KiB); a\n"
	  "                       larger one comes in pages (the tools' offset)\n"
	  "  'fathom index/add/delete/glossary/optimize' on this index go through the\n"
	  "  daemon (SERVE in the index folder names it)\n"
	  "  SIGTERM or Ctrl-C: requests in flight finish; every acknowledged write is\n"
	  "  committed before it is answered\n" },
	{ "mcp",
	  "usage: fathom mcp [--index DIR] [--read-only] [--max-reply-bytes N]\n"
	  "  a Model Context Protocol server on stdin/stdout (JSON-RPC, one message per\n"
	  "  line) with the tools search, get_full_content, grep, list_sources,\n"
	  "  glossary_pending and glossary_review (not with --read-only)\n"
	  "  --max-reply-bytes N  largest tool reply (default 256 KiB, from 16384); a\n"
	  "                       larger one comes in pages: reply_truncated, next_offset,\n"
	  "                       and the same call with offset=next_offset goes on\n" },
	{ "glossary",
	  "usage: fathom glossary [--index DIR] [--json] SUBCOMMAND ...\n"
	  "  add TERM TERM...     make the terms one alias group (auth authentication sign-in)\n"
	  "  list [KIND]          groups, protected names and candidates (KIND: group,\n"
	  "                       protected, candidate)\n"
	  "  remove ID|TERM       drop a group, or a term from its group\n"
	  "  protect NAME         never group or expand NAME; unprotect NAME undoes it\n"
	  "  propose              scan the corpus for candidates (acronym definitions,\n"
	  "                       spelling variants)\n"
	  "  pending              the candidates waiting for a decision\n"
	  "  approve ID           the candidate becomes a group\n"
	  "  reject ID            never propose it again\n"
	  "  Terms are compared NFKC, case folded, with hyphens and spaces folded.\n"
	  "  All-caps acronyms, code identifiers and protected names never join a group.\n" },
	{ "vocab",
	  "usage: fathom vocab [--index DIR] [--category C] [--json] [PREFIX]\n"
	  "  lists the identifiers detected at ingest: canonical key, category, chunks,\n"
	  "  the spellings seen and the first document. C is one of testcase, ticket,\n"
	  "  version, class, function, model, error. PREFIX is matched on the key, so\n"
	  "  TC-10, tc_10 and \"TC 10\" all list tc-1000 ... tc-1099. Exit 1 when none.\n" },
	{ "optimize",
	  "usage: fathom optimize [--index DIR] [-q]\n"
	  "  merges every segment into one and drops deleted documents for good;\n"
	  "  takes about as long as a fresh build. Searches keep working meanwhile.\n" },
	{ "chunk", "usage: fathom chunk [chunk options as for index] PATH...\n"
	  "  prints {\"id\",\"title\",\"text\",\"path\",\"lines\",\"headings\"} per chunk\n" },
	{ "eval",
	  "usage: fathom eval --corpus corpus.jsonl --queries queries.jsonl --qrels qrels.tsv\n"
	  "                   [--index DIR] [-k 100] [--run FILE] [search options]\n"
	  "  indexes the corpus (or reuses --index if it holds documents), runs every\n"
	  "  query of the qrels and prints nDCG@10, Recall@100, MRR@10, latency p50/p99\n"
	  "  and how many queries returned anything.\n"
	  "  --chunk-target N     chunk documents (default: one chunk per document)\n" },
};

static const char *help_of(const char *cmd)
{
	for (size_t i = 0; i < sizeof cmd_help / sizeof cmd_help[0]; i++)
		if (strcmp(cmd, cmd_help[i].cmd) == 0)
			return cmd_help[i].text;
	return NULL;
}

static int cmd_help_fn(int argc, char **argv)
{
	if (argc > 1) {
		const char *text = help_of(argv[1]);
		if (!text)
			return cli_usage_error("no command '%s'", argv[1]);
		fputs(text, stdout);
		return 0;
	}
	fputs(usage_text, stdout);
	return 0;
}

/* ---- options ----------------------------------------------------------------- */

/* The long option that the element "--name[=value]" names (a unique
 * prefix, as getopt_long takes it), or NULL. */
static const struct option *long_named(const struct option *lo, const char *elem)
{
	const char *name = elem + 2, *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name);
	const struct option *found = NULL;
	for (; lo && lo->name; lo++) {
		if (strncmp(lo->name, name, n) != 0)
			continue;
		if (strlen(lo->name) == n)
			return lo;
		if (found)
			return NULL;   /* ambiguous */
		found = lo;
	}
	return found;
}

static int bad_option(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad_option(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s %s: ", cli_prog, cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (strcmp(cmd, "search") == 0)
		fprintf(stderr, "\n(-word in a query excludes word: put such a query after --, as in "
		                "%s search -- '-word other words'; %s search --help lists the options)\n",
		        cli_prog, cli_prog);
	else
		fprintf(stderr, "\n(arguments that start with '-' go after --; %s %s --help lists "
		                "the options)\n", cli_prog, cmd);
	return '?';
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *lo)
{
	const char *cmd = argv[0];
	char sopts[64];
	/* a leading ':' tells a missing value (':') from the rest ('?') */
	if (snprintf(sopts, sizeof sopts, ":%s", shortopts) >= (int)sizeof sopts)
		return bad_option(cmd, "too many short options");
	opterr = 0;
	int c = getopt_long(argc, argv, sopts, lo, NULL);
	if (c != '?' && c != ':')
		return c;
	/* A missing value ends argv, and an unknown or mis-valued long option
	 * is a whole element: either way it is argv[optind - 1]. An unknown
	 * short option may sit inside a bundle (-xvf), so it is named by
	 * its letter. */
	const char *elem = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	int is_long = strncmp(elem, "--", 2) == 0 && elem[2];
	const struct option *o = is_long ? long_named(lo, elem) : NULL;
	if (c == ':') {
		if (is_long)
			return bad_option(cmd, "option '--%s' wants a value", o ? o->name : elem + 2);
		return bad_option(cmd, "option '-%c' wants a value", optopt);
	}
	if (is_long && optopt && o && o->val == optopt && o->has_arg == no_argument)
		return bad_option(cmd, "option '--%s' takes no value", o->name);
	if ((is_long && !optopt && strcmp(elem, "--help") == 0) ||
	    (!(is_long && !optopt) && optopt == 'h')) {
		const char *text = help_of(cmd);
		fputs(text ? text : usage_text, stdout);
		exit(fflush(stdout) == 0 ? 0 : 2);
	}
	if (is_long && !optopt) {
		const char *eq = strchr(elem, '=');
		int n = eq ? (int)(eq - elem) : (int)strlen(elem), prefixed = 0;
		for (const struct option *p = lo; p && p->name; p++)
			prefixed += strncmp(p->name, elem + 2, (size_t)n - 2) == 0;
		return bad_option(cmd, prefixed > 1 ? "option '%.*s' is ambiguous" : "unknown option '%.*s'",
		                  n, elem);
	}
	/* Inside a bundle getopt has not moved past it yet (argv[optind]); on
	 * its last letter it has (argv[optind - 1]). Name the whole argument
	 * too when it is more than the letter: "-folding" is likelier a query
	 * word than a bundle of options. */
	const char *bundle = optind < argc && argv[optind][0] == '-' && argv[optind][1] != '-' &&
	                     strchr(argv[optind] + 1, optopt) ? argv[optind] : elem;
	if (bundle[0] == '-' && bundle[1] && bundle[2])
		return bad_option(cmd, "unknown option '-%c' in '%s'", optopt, bundle);
	return bad_option(cmd, "unknown option '-%c'", optopt);
}

const char *cli_default_index(void)
{
	const char *e = getenv("FATHOM_INDEX");
	return e && *e ? e : ".fathom";
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	argc--;
	argv++;
	if (strcmp(cmd, "index") == 0)
		return cmd_index(argc, argv);
	if (strcmp(cmd, "add") == 0)
		return cmd_add(argc, argv);
	if (strcmp(cmd, "search") == 0)
		return cmd_search(argc, argv);
	if (strcmp(cmd, "get") == 0)
		return cmd_get(argc, argv);
	if (strcmp(cmd, "list") == 0)
		return cmd_list(argc, argv);
	if (strcmp(cmd, "delete") == 0)
		return cmd_delete(argc, argv);
	if (strcmp(cmd, "stats") == 0)
		return cmd_stats(argc, argv);
	if (strcmp(cmd, "verify") == 0)
		return cmd_verify(argc, argv);
	if (strcmp(cmd, "grep") == 0)
		return cmd_grep(argc, argv);
	if (strcmp(cmd, "serve") == 0)
		return cmd_serve(argc, argv);
	if (strcmp(cmd, "mcp") == 0)
		return cmd_mcp(argc, argv);
	if (strcmp(cmd, "glossary") == 0)
		return cmd_glossary(argc, argv);
	if (strcmp(cmd, "vocab") == 0)
		return cmd_vocab(argc, argv);
	if (strcmp(cmd, "optimize") == 0)
		return cmd_optimize(argc, argv);
	if (strcmp(cmd, "chunk") == 0)
		return cmd_chunk(argc, argv);
	if (strcmp(cmd, "eval") == 0)
		return cmd_eval(argc, argv);
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
		return cmd_help_fn(argc, argv);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		printf("fathom %s\n", FATHOM_VERSION_STRING);
		return 0;
	}
	return cli_usage_error("unknown command '%s'", cmd);
}
