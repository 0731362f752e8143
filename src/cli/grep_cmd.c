/*
 * grep_cmd.c — fathom grep: ripgrep-like output over the indexed files.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct gout {
	int files_only, count, line_numbers, json, color, quiet;
	uint32_t before, after;
	uint64_t matched_lines;
	int first_group;
} gout;

/* Offsets of the starts of lines first..last (1-based) of text. */
static size_t line_start(const char *t, size_t len, size_t from, uint32_t back)
{
	size_t p = from;
	while (back-- > 0 && p > 0) {
		p--;   /* onto the previous line's newline */
		while (p > 0 && t[p - 1] != '\n')
			p--;
	}
	(void)len;
	return p;
}

static void print_line(const gout *o, const fathom_grep_file *f, uint32_t no, size_t s, size_t e,
                       char sep, const fathom_grep_line *m)
{
	cli_put_path(stdout, f->path, o->color);
	fputc(sep, stdout);
	if (o->line_numbers)
		printf(o->color ? CLI_SGR_LINE "%u" CLI_SGR_RESET "%c" : "%u%c", no, sep);
	if (m && o->color && m->match_end > m->match_start) {
		fwrite(f->text + s, 1, m->match_start - s, stdout);
		fputs(CLI_SGR_MATCH, stdout);
		fwrite(f->text + m->match_start, 1, m->match_end - m->match_start, stdout);
		fputs(CLI_SGR_RESET, stdout);
		fwrite(f->text + m->match_end, 1, e - m->match_end, stdout);
	} else {
		fwrite(f->text + s, 1, e - s, stdout);
	}
	fputc('\n', stdout);
}

/* A file there but not searched: named on stderr, as grep does. */
static void on_skip(void *ctx, const char *path, const char *why)
{
	(void)ctx;
	fprintf(stderr, "%s: ", cli_prog);
	cli_put_name(stderr, path);
	fprintf(stderr, ": %s\n", why);
}

static int on_file(void *ctx, const fathom_grep_file *f)
{
	gout *o = ctx;
	o->matched_lines += f->n_lines;
	if (o->quiet)
		return 1;   /* one match answers the question */
	if (f->fresh_from_disk && !o->json) {
		/* on stderr, as grep's notes about a file are, so path:line:text
		 * (and -l's paths) stay what scripts and editors read */
		fflush(stdout);
		fprintf(stderr, "%s: ", cli_prog);
		cli_put_name(stderr, f->path);
		fputs(" " CLI_STALE_NOTE ": read as it is on disk now; the index has an older copy\n",
		      stderr);
	}
	/* the paths of -l and -c coloured as ripgrep colours them */
	if (o->files_only || f->n_lines == 0) {
		cli_put_path(stdout, f->path, o->color);
		fputc('\n', stdout);
		return 0;
	}
	if (o->count) {
		cli_put_path(stdout, f->path, o->color);
		printf(":%zu\n", f->n_lines);
		return 0;
	}
	if (o->json) {
		for (size_t i = 0; i < f->n_lines; i++) {
			const fathom_grep_line *l = &f->lines[i];
			fputs("{\"path\":", stdout);
			cli_json_str(stdout, f->path, strlen(f->path));
			printf(",\"line\":%u,\"text\":", l->line);
			cli_json_str(stdout, f->text + l->start, (size_t)(l->end - l->start));
			printf(",\"match\":[%llu,%llu]%s}\n", (unsigned long long)(l->match_start - l->start),
			       (unsigned long long)(l->match_end - l->start),
			       f->fresh_from_disk ? ",\"changed_since_indexing\":true" : "");
		}
		return 0;
	}
	/* Lines with context: groups of nearby lines, "--" between groups. */
	uint32_t printed_to = 0;   /* last line number printed */
	for (size_t i = 0; i < f->n_lines; i++) {
		const fathom_grep_line *l = &f->lines[i];
		uint32_t first = l->line > o->before ? l->line - o->before : 1;
		if (first <= printed_to)
			first = printed_to + 1;
		if ((o->before || o->after) && !o->first_group && first > printed_to + 1)
			printf(o->color ? "\033[36m--\033[0m\n" : "--\n");
		o->first_group = 0;
		size_t s = line_start(f->text, f->len, (size_t)l->start, l->line - first);
		for (uint32_t no = first; no < l->line; no++) {
			const char *nl = memchr(f->text + s, '\n', (size_t)l->start - s);
			size_t e = nl ? (size_t)(nl - f->text) : (size_t)l->start;
			print_line(o, f, no, s, e, '-', NULL);
			s = e + 1;
		}
		print_line(o, f, l->line, (size_t)l->start, (size_t)l->end, ':', l);
		printed_to = l->line;
		/* after-context, up to the next match */
		size_t p = (size_t)l->end;
		uint32_t limit = i + 1 < f->n_lines ? f->lines[i + 1].line - 1 : UINT32_MAX;
		for (uint32_t k = 0; k < o->after && p < f->len && printed_to < limit; k++) {
			size_t s2 = p + 1;
			if (s2 > f->len)
				break;
			const char *nl = memchr(f->text + s2, '\n', f->len - s2);
			size_t e2 = nl ? (size_t)(nl - f->text) : f->len;
			if (s2 == f->len)
				break;
			print_line(o, f, ++printed_to, s2, e2, '-', NULL);
			p = e2;
		}
	}
	return 0;
}

/* --chunks: grep as a retrieval source, the chunks with matching lines. */
static int print_chunks(fathom_index *ix, const char *pattern, const fathom_grep_opts *go,
                        uint32_t k, int json)
{
	fathom_results *r;
	int rc = fathom_grep_chunks(&r, ix, pattern, go, k);
	if (rc) {
		cli_die_api(rc, "grep");
		return 2;
	}
	size_t n = fathom_results_count(r);
	if (json) {
		/* the result set as fathom search --json writes it: one serializer */
		char *text = NULL;
		size_t len = 0;
		rc = fathom_results_json(&text, &len, r, NULL);
		if (!rc)
			printf("%.*s\n", (int)len, text);
		fathom_free(text);
		fathom_results_free(r);
		if (rc) {
			cli_die_api(rc, "grep");
			return 2;
		}
		return n ? 0 : 1;
	}
	for (size_t i = 0; i < n; i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		cli_put_name(stdout, h->path);
		printf(":%u-%u\t%g matching line%s\tchunk %llu\t%s\n", h->line_start,
		       h->line_end, h->score, h->score == 1 ? "" : "s",
		       (unsigned long long)h->chunk_id, h->snippet);
	}
	fathom_results_free(r);
	return n ? 0 : 1;
}

enum { O_INDEX = 5000, O_GLOB, O_LANG, O_JSON, O_COLOR, O_STATS, O_TRUST, O_EXPLAIN, O_CHUNKS };

const cli_opt cli_opts_grep[] = {
	CLI_OPT_INDEX(O_INDEX),
	{ "fixed-strings", 'F', no_argument, 0, NULL,
	  "the pattern is a literal string (its lines: any of them)", NULL },
	{ "ignore-case", 'i', no_argument, 0, NULL, "ignore case", NULL },
	{ "word-regexp", 'w', no_argument, 0, NULL, "whole words only", NULL },
	{ "files-with-matches", 'l', no_argument, 0, NULL, "the matching files only", NULL },
	{ "count", 'c', no_argument, 0, NULL, "a count of matching lines per file", NULL },
	{ "line-number", 'n', no_argument, 0, NULL, "line numbers (the default)", NULL },
	{ "no-line-number", 'N', no_argument, 0, NULL, "no line numbers", NULL },
	{ "context", 'C', required_argument, 0, "N", "N lines of context around each match", NULL },
	{ "after-context", 'A', required_argument, 0, "N", "N lines of context after", NULL },
	{ "before-context", 'B', required_argument, 0, "N", "N lines of context before", NULL },
	{ "max-count", 'm', required_argument, 0, "N", "at most N matching lines per file", NULL },
	{ "glob", 0, required_argument, O_GLOB, "GLOB",
	  "only paths matching GLOB (or whose base name does)", NULL },
	{ "lang", 0, required_argument, O_LANG, "LANG", "only files of this language", NULL },
	{ "json", 0, no_argument, O_JSON, NULL, "one JSON object per matching line", NULL },
	{ "quiet", 'q', no_argument, 0, NULL,
	  "print nothing: the exit status says whether a line matched", NULL },
	{ "query", 'Q', no_argument, 0, NULL,
	  "PATTERN is a boolean query, as in Zoekt:\n"
	  "  error AND handler     both in the file (AND is optional)\n"
	  "  lock OR mutex         either; -word or NOT word: without it\n"
	  "  file:auth.c lang:c    path regex; language; (parentheses)\n"
	  "  \"two words\"           quoted: a literal string; case:yes|no|auto", NULL },
	{ "trust-index", 0, no_argument, O_TRUST, NULL,
	  "read only the files the index lists, without checking the\n"
	  "others for changes made since indexing (faster)", NULL },
	{ "threads", 'j', required_argument, 0, "N", "worker threads (default: one per CPU)", NULL },
	{ "explain", 0, no_argument, O_EXPLAIN, NULL,
	  "print the trigram query the pattern is planned into", NULL },
	{ "chunks", 0, optional_argument, O_CHUNKS, "K",
	  "the indexed chunks holding matching lines, most first (at\n"
	  "most K, default 100): grep as a source for hybrid search", NULL },
	{ "stats", 0, no_argument, O_STATS, NULL,
	  "how many files the index let grep skip (on stderr)", NULL },
	{ "color", 0, required_argument, O_COLOR, "WHEN",
	  "auto (the default: colour on a terminal, unless NO_COLOR\n"
	  "is set or TERM is dumb), always or never", "auto always never" },
	CLI_OPT_END,
};

int cmd_grep(int argc, char **argv)
{
	const char *index = cli_default_index();
	fathom_grep_opts go = FATHOM_GREP_OPTS_INIT;
	gout o = { 0, 0, 1, 0, CLI_COLOR_AUTO, 0, 0, 0, 0, 1 };
	int c, show_stats = 0, explain = 0, chunks = 0;
	uint32_t chunks_k = 0;
	uint64_t v;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case O_INDEX: index = optarg; break;
		case 'F': go.literal = 1; break;
		case 'i': go.caseless = 1; break;
		case 'w': go.word = 1; break;
		case 'l': o.files_only = 1; break;
		case 'c': o.count = 1; break;
		case 'n': o.line_numbers = 1; break;
		case 'N': o.line_numbers = 0; break;
		case 'C': case 'A': case 'B':
			if (cli_parse_u64(optarg, 0, 100000, &v))
				return cli_usage_error("-%c wants a number of lines", c);
			if (c != 'B')
				o.after = (uint32_t)v;
			if (c != 'A')
				o.before = (uint32_t)v;
			break;
		case 'm':
			if (cli_parse_u64(optarg, 1, UINT32_MAX, &v))
				return cli_usage_error("--max-count wants a positive number");
			go.max_count = (uint32_t)v;
			break;
		case 'Q': go.boolean = 1; break;
		case 'q': o.quiet = 1; break;
		case 'j':
			if (cli_parse_u64(optarg, 1, 256, &v))
				return cli_usage_error("--threads wants a number from 1 to 256");
			go.threads = (uint32_t)v;
			break;
		case O_TRUST: go.no_fresh_check = 1; break;
		case O_EXPLAIN: explain = 1; break;
		case O_CHUNKS:
			chunks = 1;
			if (optarg && cli_parse_limit(optarg, FATHOM_LIMIT_K, &v)) {
				double kmin, kmax;   /* as many as a search returns */
				cli_limit(FATHOM_LIMIT_K, &kmin, &kmax);
				return cli_usage_error("--chunks wants a number of chunks from %g to %g", kmin,
				                       kmax);
			}
			chunks_k = optarg ? (uint32_t)v : 0;
			break;
		case O_GLOB: go.glob = optarg; break;
		case O_LANG: go.lang = optarg; break;
		case O_JSON: o.json = 1; break;
		case O_STATS: show_stats = 1; break;
		case O_COLOR:
			if ((o.color = cli_color_parse(optarg)) < 0)
				return cli_usage_error("--color wants auto, always or never, got '%s'", optarg);
			break;
		default: return 2;
		}
	}
	if (optind >= argc)
		return cli_usage_error("grep: what pattern? (fathom grep PATTERN [PATH...])");
	const char *pattern = argv[optind++];
	go.prefixes = (const char *const *)(argv + optind);
	go.n_prefixes = (size_t)(argc - optind);
	o.color = o.json ? 0 : cli_color_on(o.color, 1);
	go.files_only = o.files_only || o.quiet;
	go.count_only = o.count && !go.files_only;
	if (explain) {
		char *plan;
		if (fathom_grep_explain(&plan, pattern, &go)) {
			cli_die_api(FATHOM_EINVAL, "grep");
			return 2;
		}
		printf("%s\n", plan);
		fathom_free(plan);
		return 0;
	}
	fathom_index *ix;
	if (cli_open(&ix, index, FATHOM_OPEN_READONLY, NULL))
		return 2;
	if (chunks) {
		int crc = print_chunks(ix, pattern, &go, chunks_k, o.json);
		fathom_close(ix);
		return crc;
	}
	fathom_grep_stats st = FATHOM_GREP_STATS_INIT;
	go.on_skip = on_skip;
	int rc = fathom_grep(ix, pattern, &go, on_file, &o, &st);
	fathom_close(ix);
	if (rc == FATHOM_EINTERRUPTED && o.quiet)
		return 0;   /* -q stops at the first match */
	if (rc) {
		cli_die_api(rc, "grep");
		return 2;
	}
	if (show_stats)
		fprintf(stderr,
		        "%llu files, %llu read (%s), %llu matched, %llu lines; %llu changed since "
		        "indexing, %llu gone, %llu not readable; %llu bytes read, %u threads\n",
		        (unsigned long long)st.files, (unsigned long long)st.candidates,
		        st.planned ? "trigram index" : "no trigram to use: all read",
		        (unsigned long long)st.matched, (unsigned long long)o.matched_lines,
		        (unsigned long long)st.changed, (unsigned long long)st.missing,
		        (unsigned long long)st.skipped, (unsigned long long)st.bytes_read, st.threads);
	if (st.skipped)
		return 2;   /* as grep: a file it could not search is an error */
	return st.matched ? 0 : 1;
}
