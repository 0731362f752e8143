/*
 * grep_cmd.c — fathom grep: ripgrep-like output over the indexed files.
 */
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* ripgrep's types for the common languages: the same names and globs as
 * its --type-list (ripgrep 13). */
typedef struct gtype {
	const char *name, *globs;   /* globs space-separated */
} gtype;
static const gtype gtypes[] = {
	{ "asciidoc", "*.adoc *.asc *.asciidoc" },
	{ "c", "*.[chH] *.[chH].in *.cats" },
	{ "cmake", "*.cmake CMakeLists.txt" },
	{ "cpp", "*.[ChH] *.[ChH].in *.[ch]pp *.[ch]pp.in *.[ch]xx *.[ch]xx.in *.cc *.cc.in *.hh "
	         "*.hh.in *.inl" },
	{ "css", "*.css *.scss" },
	{ "csv", "*.csv" },
	{ "diff", "*.diff *.patch" },
	{ "go", "*.go" },
	{ "html", "*.ejs *.htm *.html" },
	{ "java", "*.java *.jsp *.jspx *.properties" },
	{ "js", "*.js *.jsx *.vue" },
	{ "json", "*.json composer.lock" },
	{ "lua", "*.lua" },
	{ "make", "*.mak *.mk [Gg][Nn][Uu]makefile [Gg][Nn][Uu]makefile.am [Gg][Nn][Uu]makefile.in "
	          "[Mm]akefile [Mm]akefile.am [Mm]akefile.in" },
	{ "man", "*.[0-9][cEFMmpSx] *.[0-9lnpx]" },
	{ "markdown", "*.markdown *.md *.mdown *.mkdn" },
	{ "md", "*.markdown *.md *.mdown *.mkdn" },
	{ "perl", "*.PL *.perl *.pl *.plh *.plx *.pm *.t" },
	{ "php", "*.php *.php3 *.php4 *.php5 *.phtml" },
	{ "py", "*.py" },
	{ "rst", "*.rst" },
	{ "ruby", "*.gemspec *.rb *.rbw .irbrc Gemfile Rakefile config.ru" },
	{ "rust", "*.rs" },
	{ "sh", "*.bash *.bashrc *.csh *.cshrc *.ksh *.kshrc *.sh *.tcsh *.zsh .bash_login "
	        ".bash_logout .bash_profile .bashrc .cshrc .kshrc .login .logout .profile .tcshrc "
	        ".zlogin .zlogout .zprofile .zshenv .zshrc bash_login bash_logout bash_profile bashrc "
	        "profile zlogin zlogout zprofile zshenv zshrc" },
	{ "sql", "*.psql *.sql" },
	{ "tex", "*.bib *.cls *.dtx *.ins *.ltx *.sty *.tex" },
	{ "toml", "*.toml Cargo.lock" },
	{ "ts", "*.ts *.tsx" },
	{ "txt", "*.txt" },
	{ "vim", "*.vim" },
	{ "xml", "*.dtd *.rng *.sch *.xhtml *.xjb *.xml *.xml.dist *.xsd *.xsl *.xslt" },
	{ "yaml", "*.yaml *.yml" },
};
#define N_GTYPES (sizeof gtypes / sizeof gtypes[0])
#define G_MAX_ARGS 64   /* -e, -g, -t, -T each */

static const gtype *gtype_find(const char *name)
{
	for (size_t i = 0; i < N_GTYPES; i++)
		if (!strcmp(gtypes[i].name, name))
			return &gtypes[i];
	return NULL;
}

/* Does base name match one of a type's globs? */
static int gtype_has(const gtype *t, const char *base)
{
	char g[128];
	const char *p = t->globs;
	while (*p) {
		size_t n = strcspn(p, " ");
		if (n < sizeof g) {
			memcpy(g, p, n);
			g[n] = 0;
			if (!fnmatch(g, base, 0))
				return 1;
		}
		p += n;
		p += strspn(p, " ");
	}
	return 0;
}

/* A file's output, held for --sort path. */
typedef struct gheld {
	char *path, *text;
	size_t len;
	size_t argi;                  /* the PATH argument it is under */
} gheld;

typedef struct gout {
	FILE *out;                    /* stdout, or the file's buffer (sort) */
	int sort;                     /* --sort path: output in path order */
	gheld *held;
	size_t nheld, held_cap;
	int files_only, count, line_numbers, json, color, quiet;
	int invert, only, vimgrep, heading, without, with_name, column, count_matches;
	int all_mode;                 /* -v, -L: every file read, lines tested here */
	uint32_t before, after, max_count;
	uint64_t matched_lines;
	int first_group, first_file;
	fathom_grep_matcher *mt;
	const char *globs[G_MAX_ARGS];
	size_t nglobs, npos_globs;
	const gtype *types[G_MAX_ARGS], *types_not[G_MAX_ARGS];
	size_t ntypes, ntypes_not;
	/* the PATH arguments as typed, and as absolute paths */
	char *const *args;
	char *abs[G_MAX_ARGS];
	size_t nargs;
	char cwd[4096];
	/* the selected lines of the file at hand */
	fathom_grep_line *sel;
	size_t nsel, sel_cap;
	int err;
	uint64_t files_out;           /* files with a selected line (or -L's) */
	/* --json's counts: the file's and the run's */
	uint64_t j_lines, j_matches, j_bytes, j_printed;
	uint64_t t_lines, t_matches, t_bytes, t_printed, t_searches, t_with_match;
} gout;

/* Lexically clean an absolute path in place: no "." or ".." parts, no
 * repeated or trailing '/'. */
static void path_clean(char *p)
{
	char *out = p, *in = p;
	while (*in) {
		while (*in == '/')
			in++;
		const char *part = in;
		size_t n = strcspn(in, "/");
		in += n;
		if (n == 0 || (n == 1 && part[0] == '.'))
			continue;
		if (n == 2 && part[0] == '.' && part[1] == '.') {
			while (out > p && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		memmove(out, part, n);
		out += n;
	}
	if (out == p)
		*out++ = '/';
	*out = 0;
}

/* The absolute, clean form of a path relative to cwd (NULL: no memory). */
static char *path_abs(const char *cwd, const char *path)
{
	size_t n = strlen(cwd) + strlen(path) + 2;
	char *a = malloc(n);
	if (!a)
		return NULL;
	if (path[0] == '/')
		snprintf(a, n, "%s", path);
	else
		snprintf(a, n, "%s/%s", cwd, path);
	path_clean(a);
	return a;
}

/* The path as ripgrep prints it: under the PATH argument as typed
 * ("./x", "dir/x", "/abs/x"), or as the engine gives it (relative to the
 * current folder) with no PATH. *rel: the part below the argument. */
static const char *show_path(const gout *o, const char *path, char *buf, size_t cap,
                             const char **rel, size_t *argi)
{
	*rel = path;
	*argi = 0;
	if (!o->nargs)
		return path;
	char *a = path_abs(o->cwd, path);
	if (!a)
		return path;
	const char *shown = path;
	for (size_t i = 0; i < o->nargs; i++) {
		const char *x = o->abs[i];
		size_t n = strlen(x);
		if (!strcmp(a, x)) {   /* the argument names the file itself */
			snprintf(buf, cap, "%s", o->args[i]);
			const char *b = strrchr(path, '/');
			*rel = b ? b + 1 : path;
			shown = buf;
			*argi = i;
			break;
		}
		if (n == 1)
			n = 0;   /* "/" */
		if (!strncmp(a, x, n) && a[n] == '/') {
			const char *t = o->args[i];
			size_t tl = strlen(t);
			int slash = tl > 0 && t[tl - 1] == '/';
			int w = snprintf(buf, cap, "%s%s%s", t, slash ? "" : "/", a + n + 1);
			if (w > 0 && (size_t)w < cap) {
				*rel = path + strlen(path) - strlen(a + n + 1);
				if (*rel < path)
					*rel = path;
				shown = buf;
			}
			*argi = i;
			break;
		}
	}
	free(a);
	return shown;
}

/* Does glob g match rel (a path below the search's root)? As ripgrep's
 * globs: one without '/' matches the base name or, for an exclusion, any
 * folder on the way; one with '/' the whole relative path. */
static int glob_match(const char *g, const char *rel, int folders)
{
	if (g[0] == '/')
		g++;
	if (strchr(g, '/')) {
		/* "**": any folders (fnmatch's '*' then crosses '/') */
		int flags = strstr(g, "**") ? 0 : FNM_PATHNAME;
		return !fnmatch(g, rel, flags) || (!strncmp(g, "**/", 3) && !fnmatch(g + 3, rel, flags));
	}
	const char *p = rel;
	for (;;) {
		const char *slash = strchr(p, '/');
		if (!slash)
			return !fnmatch(g, p, 0);
		if (folders) {
			char part[256];
			size_t n = (size_t)(slash - p);
			if (n < sizeof part) {
				memcpy(part, p, n);
				part[n] = 0;
				if (!fnmatch(g, part, 0))
					return 1;
			}
		}
		p = slash + 1;
	}
}

/* -g and -t/-T: is the file in? The last glob that matches decides (a
 * '!' one excludes); with none matching, a file is out when some glob
 * includes; then the types. */
static int path_wanted(const gout *o, const char *rel)
{
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	for (size_t i = o->nglobs; i-- > 0;) {
		const char *g = o->globs[i];
		int neg = g[0] == '!';
		if (glob_match(g + neg, rel, neg))
			return !neg;
	}
	if (o->npos_globs)
		return 0;
	const char *b = strrchr(rel, '/');
	b = b ? b + 1 : rel;
	for (size_t i = 0; i < o->ntypes_not; i++)
		if (gtype_has(o->types_not[i], b))
			return 0;
	if (!o->ntypes)
		return 1;
	for (size_t i = 0; i < o->ntypes; i++)
		if (gtype_has(o->types[i], b))
			return 1;
	return 0;
}

/* Offsets of the starts of lines first..last (1-based) of text. */
static size_t line_start(const char *t, size_t from, uint32_t back)
{
	size_t p = from;
	while (back-- > 0 && p > 0) {
		p--;   /* onto the previous line's newline */
		while (p > 0 && t[p - 1] != '\n')
			p--;
	}
	return p;
}

/* The next match in line [s, e) of text from p: 1 found, 0 none; empty
 * matches skipped, as ripgrep skips them. */
static int next_match(gout *o, const char *text, size_t s, size_t e, size_t *p, size_t *ms,
                      size_t *me)
{
	while (*p <= e - s) {
		int r = fathom_grep_matcher_next(o->mt, text + s, e - s, *p, ms, me);
		if (r < 0 && !o->err)
			o->err = r;
		if (r != 1)
			return 0;
		if (*me > *ms) {
			*p = *me;
			return 1;
		}
		*p = *ms + 1;
	}
	return 0;
}

static void json_path(gout *o, const char *shown)
{
	fputs("{\"path\":{\"text\":", o->out);
	cli_json_str(o->out, shown, strlen(shown));
	fputc('}', o->out);
}

static void json_line(gout *o, const fathom_grep_file *f, const char *shown, uint32_t no,
                      size_t s, size_t e, int match)
{
	fprintf(o->out, "{\"type\":\"%s\",\"data\":", match ? "match" : "context");
	json_path(o, shown);
	fputs(",\"lines\":{\"text\":", o->out);
	size_t le = e < f->len && f->text[e] == '\n' ? e + 1 : e;
	cli_json_str(o->out, f->text + s, le - s);
	fprintf(o->out, "},\"line_number\":%u,\"absolute_offset\":%zu,\"submatches\":[", no, s);
	size_t p = 0, ms, me;
	int first = 1;
	while (match && !o->invert && next_match(o, f->text, s, e, &p, &ms, &me)) {
		fprintf(o->out, "%s{\"match\":{\"text\":", first ? "" : ",");
		cli_json_str(o->out, f->text + s + ms, me - ms);
		fprintf(o->out, "},\"start\":%zu,\"end\":%zu}", ms, me);
		first = 0;
		o->j_matches++;
	}
	fputs("]}}\n", o->out);
}

/* path, line and (--column, a match's line: col > 0) column. */
static void put_prefix(const gout *o, const char *shown, uint32_t no, char sep, size_t col)
{
	if (o->with_name && !o->heading) {
		cli_put_path(o->out, shown, o->color);
		fputc(sep, o->out);
	}
	if (o->line_numbers)
		fprintf(o->out, o->color ? CLI_SGR_LINE "%u" CLI_SGR_RESET "%c" : "%u%c", no, sep);
	if (o->column && col)
		fprintf(o->out, "%zu%c", col, sep);
}

/* One line, a match (sep ':') or context ('-'), in the chosen format. */
static void put_line(gout *o, const fathom_grep_file *f, const char *shown, uint32_t no,
                     size_t s, size_t e, char sep, const fathom_grep_line *m)
{
	if (o->json) {
		json_line(o, f, shown, no, s, e, sep == ':');
		return;
	}
	if (sep == ':' && !o->invert && (o->only || o->vimgrep)) {
		size_t p = 0, ms, me;
		while (next_match(o, f->text, s, e, &p, &ms, &me)) {
			if (o->vimgrep) {
				cli_put_path(o->out, shown, o->color);
				fprintf(o->out, ":%u:%zu:", no, ms + 1);
				fwrite(f->text + s, 1, e - s, o->out);
			} else {
				put_prefix(o, shown, no, sep, ms + 1);
				fwrite(f->text + s + ms, 1, me - ms, o->out);
			}
			fputc('\n', o->out);
		}
		return;
	}
	put_prefix(o, shown, no, sep,
	           !m || o->invert ? 0 : (size_t)(m->match_start - m->start) + 1);
	if (m && o->color && !o->invert && o->mt) {
		/* every match of the line in colour, as ripgrep's */
		size_t p = 0, ms, me, done = 0;
		while (next_match(o, f->text, s, e, &p, &ms, &me)) {
			fwrite(f->text + s + done, 1, ms - done, o->out);
			fputs(CLI_SGR_MATCH, o->out);
			fwrite(f->text + s + ms, 1, me - ms, o->out);
			fputs(CLI_SGR_RESET, o->out);
			done = me;
		}
		fwrite(f->text + s + done, 1, e - s - done, o->out);
	} else if (m && o->color && !o->invert && m->match_end > m->match_start) {
		fwrite(f->text + s, 1, m->match_start - s, o->out);
		fputs(CLI_SGR_MATCH, o->out);
		fwrite(f->text + m->match_start, 1, m->match_end - m->match_start, o->out);
		fputs(CLI_SGR_RESET, o->out);
		fwrite(f->text + m->match_end, 1, e - m->match_end, o->out);
	} else {
		fwrite(f->text + s, 1, e - s, o->out);
	}
	fputc('\n', o->out);
}

/* A file there but not searched: named on stderr, as grep does. */
static void on_skip(void *ctx, const char *path, const char *why)
{
	(void)ctx;
	fprintf(stderr, "%s: ", cli_prog);
	cli_put_name(stderr, path);
	fprintf(stderr, ": %s\n", why);
}

/* -v and -L: the file's lines (every one, from the engine's "^"), those
 * the pattern does not match kept in o->sel; returns whether any matched. */
static int select_lines(gout *o, const fathom_grep_file *f)
{
	int any = 0;
	o->nsel = 0;
	for (size_t i = 0; i < f->n_lines; i++) {
		const fathom_grep_line *l = &f->lines[i];
		size_t ms, me;
		int r = fathom_grep_matcher_next(o->mt, f->text + l->start, (size_t)(l->end - l->start),
		                                 0, &ms, &me);
		if (r < 0 && !o->err)
			o->err = r;
		if (r == 1) {
			any = 1;
			if (o->without)
				return 1;
			continue;
		}
		if (o->without || (o->max_count && o->nsel >= o->max_count))
			continue;
		if (o->nsel == o->sel_cap) {
			size_t cap = o->sel_cap ? o->sel_cap * 2 : 64;
			void *v = realloc(o->sel, cap * sizeof *o->sel);
			if (!v) {
				o->err = FATHOM_ENOMEM;
				return any;
			}
			o->sel = v;
			o->sel_cap = cap;
		}
		fathom_grep_line x = *l;
		x.match_start = x.match_end = x.start;
		o->sel[o->nsel++] = x;
	}
	return any;
}

static int file_out(gout *o, const fathom_grep_file *f)
{
	char buf[8192];
	const char *rel;
	size_t argi;
	const char *shown = show_path(o, f->path, buf, sizeof buf, &rel, &argi);
	if (!path_wanted(o, rel))
		return 0;
	const fathom_grep_line *lines = f->lines;
	size_t n = f->n_lines;
	if (o->all_mode) {
		int any = select_lines(o, f);
		if (o->err)
			return -1;
		if (o->without) {
			if (any)
				return 0;
			o->files_out++;
			if (o->quiet)
				return 1;
			cli_put_path(o->out, shown, o->color);
			fputc('\n', o->out);
			return 0;
		}
		lines = o->sel;
		n = o->nsel;
	}
	if (n == 0)
		return 0;
	o->files_out++;
	o->matched_lines += n;
	if (o->quiet)
		return 1;   /* one match answers the question */
	if (f->fresh_from_disk && !o->json) {
		/* on stderr, as grep's notes about a file are, so path:line:text
		 * (and -l's paths) stay what scripts and editors read */
		fflush(o->out);
		fprintf(stderr, "%s: ", cli_prog);
		cli_put_name(stderr, f->path);
		fputs(" " CLI_STALE_NOTE ": read as it is on disk now; the index has an older copy\n",
		      stderr);
	}
	/* the paths of -l and -c coloured as ripgrep colours them */
	if (o->files_only) {
		cli_put_path(o->out, shown, o->color);
		fputc('\n', o->out);
		return 0;
	}
	if (o->count) {
		if (o->with_name) {
			cli_put_path(o->out, shown, o->color);
			fputc(':', o->out);
		}
		size_t k = n;
		if (o->count_matches && !o->invert) {   /* every match, not lines */
			k = 0;
			for (size_t i = 0; i < n; i++) {
				size_t p = 0, ms, me;
				while (next_match(o, f->text, (size_t)lines[i].start, (size_t)lines[i].end, &p,
				                  &ms, &me))
					k++;
			}
		}
		fprintf(o->out, "%zu\n", k);
		return o->err ? -1 : 0;
	}
	o->j_matches = 0;
	if (o->json) {
		fprintf(o->out, "{\"type\":\"begin\",\"data\":");
		json_path(o, shown);
		/* fathom's one addition to ripgrep's format */
		fputs(f->fresh_from_disk ? ",\"changed_since_indexing\":true}}\n" : "}}\n", o->out);
	} else if (o->heading && o->with_name && !o->vimgrep) {
		if (!o->first_file)
			fputc('\n', o->out);
		cli_put_path(o->out, shown, o->color);
		fputc('\n', o->out);
	}
	o->first_file = 0;
	if (o->heading)
		o->first_group = 1;
	/* Lines with context: groups of nearby lines, "--" between groups. */
	uint32_t printed_to = 0;   /* last line number printed */
	for (size_t i = 0; i < n; i++) {
		const fathom_grep_line *l = &lines[i];
		uint32_t first = l->line > o->before ? l->line - o->before : 1;
		if (first <= printed_to)
			first = printed_to + 1;
		if ((o->before || o->after) && !o->first_group && first > printed_to + 1 && !o->json)
			fprintf(o->out, o->color ? "\033[36m--\033[0m\n" : "--\n");
		o->first_group = 0;
		size_t s = line_start(f->text, (size_t)l->start, l->line - first);
		for (uint32_t no = first; no < l->line; no++) {
			const char *nl = memchr(f->text + s, '\n', (size_t)l->start - s);
			size_t e = nl ? (size_t)(nl - f->text) : (size_t)l->start;
			put_line(o, f, shown, no, s, e, '-', NULL);
			s = e + 1;
		}
		put_line(o, f, shown, l->line, (size_t)l->start, (size_t)l->end, ':', l);
		printed_to = l->line;
		/* after-context, up to the next match */
		size_t p = (size_t)l->end;
		uint32_t limit = i + 1 < n ? lines[i + 1].line - 1 : UINT32_MAX;
		for (uint32_t k = 0; k < o->after && p < f->len && printed_to < limit; k++) {
			size_t s2 = p + 1;
			if (s2 >= f->len)
				break;
			const char *nl = memchr(f->text + s2, '\n', f->len - s2);
			size_t e2 = nl ? (size_t)(nl - f->text) : f->len;
			put_line(o, f, shown, ++printed_to, s2, e2, '-', NULL);
			p = e2;
		}
	}
	if (o->json) {
		if (o->invert)
			o->j_matches = 0;
		fprintf(o->out, "{\"type\":\"end\",\"data\":");
		json_path(o, shown);
		fprintf(o->out, ",\"binary_offset\":null,\"stats\":{\"elapsed\":{\"secs\":0,\"nanos\":0,"
		       "\"human\":\"0.000000s\"},\"searches\":1,\"searches_with_match\":1,"
		       "\"bytes_searched\":%zu,\"bytes_printed\":0,\"matched_lines\":%zu,"
		       "\"matches\":%llu}}}\n",
		       f->len, n, (unsigned long long)o->j_matches);
		o->t_searches++;
		o->t_with_match++;
		o->t_bytes += f->len;
		o->t_lines += n;
		o->t_matches += o->j_matches;
	}
	return o->err ? -1 : 0;
}

static int on_file(void *ctx, const fathom_grep_file *f)
{
	gout *o = ctx;
	o->out = stdout;
	if (!o->sort)
		return file_out(o, f);
	/* --sort path: each file's output held, written sorted at the end */
	char *text = NULL, pb[8192];
	size_t len = 0;
	size_t argi;
	const char *rel, *shown = show_path(o, f->path, pb, sizeof pb, &rel, &argi);
	if (o->nheld == o->held_cap) {
		size_t cap = o->held_cap ? o->held_cap * 2 : 64;
		void *v = realloc(o->held, cap * sizeof *o->held);
		if (!v) {
			o->err = FATHOM_ENOMEM;
			return -1;
		}
		o->held = v;
		o->held_cap = cap;
	}
	FILE *m = open_memstream(&text, &len);
	char *path = strdup(shown);
	if (!m || !path) {
		if (m)
			fclose(m);
		free(text);
		free(path);
		o->err = FATHOM_ENOMEM;
		return -1;
	}
	o->out = m;
	o->first_group = o->first_file = 1;
	int rc = file_out(o, f);
	o->out = stdout;
	if (fclose(m) && !o->err)
		o->err = FATHOM_ENOMEM;
	if (len)
		o->held[o->nheld++] = (gheld){ path, text, len, argi };
	else {
		free(text);
		free(path);
	}
	return rc;
}

/* The PATH arguments in their order; under each, paths in the order of a
 * walk that sorts each folder's names: as bytes, with '/' before every
 * other byte. */
static int by_walk(const void *pa, const void *pb)
{
	size_t ia = ((const gheld *)pa)->argi, ib = ((const gheld *)pb)->argi;
	if (ia != ib)
		return ia < ib ? -1 : 1;
	const unsigned char *a = (const unsigned char *)((const gheld *)pa)->path;
	const unsigned char *b = (const unsigned char *)((const gheld *)pb)->path;
	for (;; a++, b++) {
		unsigned x = *a == '/' ? 1 : *a ? *a + 1u : 0, y = *b == '/' ? 1 : *b ? *b + 1u : 0;
		if (x != y || !x)
			return (x > y) - (x < y);
	}
}

/* --sort path: the held outputs in path order, with the separators that
 * come between files. */
static void held_flush(gout *o)
{
	if (o->nheld)
		qsort(o->held, o->nheld, sizeof *o->held, by_walk);
	int lines = !o->json && !o->files_only && !o->count && !o->without && !o->quiet;
	for (size_t i = 0; i < o->nheld; i++) {
		if (i && lines && o->heading && o->with_name && !o->vimgrep)
			fputc('\n', stdout);
		else if (i && lines && (o->before || o->after))
			fputs(o->color ? "\033[36m--\033[0m\n" : "--\n", stdout);
		fwrite(o->held[i].text, 1, o->held[i].len, stdout);
		free(o->held[i].text);
		free(o->held[i].path);
	}
	o->nheld = 0;
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

enum { O_INDEX = 5000, O_LANG, O_JSON, O_COLOR, O_STATS, O_TRUST, O_EXPLAIN, O_CHUNKS,
       O_HEADING, O_NOHEADING, O_VIMGREP, O_TYPELIST, O_SORT, O_COUNTM, O_COLUMN,
       O_INDEXED };

/* ripgrep's options for how files are found on disk: an index has its own
 * rules, so they cannot mean the same here (O_INDEXED). */
#define G_INDEXED(name, letter)                                                          \
	{ name, letter, no_argument, O_INDEXED, NULL,                                         \
	  "not on an index: the files searched are those indexed", NULL }

const cli_opt cli_opts_grep[] = {
	CLI_OPT_INDEX(O_INDEX),
	{ "regexp", 'e', required_argument, 0, "PATTERN",
	  "a pattern (repeatable: lines matching any of them); PATTERN\n"
	  "is then a PATH", NULL },
	{ "file", 'f', required_argument, 0, "FILE",
	  "patterns from FILE, one a line (repeatable; - is stdin)", NULL },
	{ "fixed-strings", 'F', no_argument, 0, NULL,
	  "the pattern is a literal string (its lines: any of them)", NULL },
	{ "extended-regexp", 'E', no_argument, 0, NULL, "accepted: the syntax is PCRE2's", NULL },
	{ "pcre2", 'P', no_argument, 0, NULL, "accepted: the engine is PCRE2", NULL },
	{ "ignore-case", 'i', no_argument, 0, NULL, "ignore case", NULL },
	{ "smart-case", 'S', no_argument, 0, NULL,
	  "ignore case unless the pattern has an upper-case letter", NULL },
	{ "word-regexp", 'w', no_argument, 0, NULL, "whole words only", NULL },
	{ "line-regexp", 'x', no_argument, 0, NULL, "whole lines only", NULL },
	{ "invert-match", 'v', no_argument, 0, NULL,
	  "the lines that do not match (every file is read)", NULL },
	{ "only-matching", 'o', no_argument, 0, NULL, "each match alone, one a line", NULL },
	{ "files-with-matches", 'l', no_argument, 0, NULL, "the matching files only", NULL },
	{ "files-without-match", 'L', no_argument, 0, NULL,
	  "the files without a match (grep's -L; every file is read)", NULL },
	{ "count", 'c', no_argument, 0, NULL, "a count of matching lines per file", NULL },
	{ "count-matches", 0, no_argument, O_COUNTM, NULL, "a count of matches per file", NULL },
	{ "column", 0, no_argument, O_COLUMN, NULL, "the column (1-based byte) of the first match",
	  NULL },
	{ "line-number", 'n', no_argument, 0, NULL, "line numbers (the default)", NULL },
	{ "no-line-number", 'N', no_argument, 0, NULL, "no line numbers", NULL },
	{ "with-filename", 'H', no_argument, 0, NULL,
	  "the path on each line (the default, but for one FILE)", NULL },
	{ "no-filename", 'I', no_argument, 0, NULL, "no path on the lines", NULL },
	{ "heading", 0, no_argument, O_HEADING, NULL, "the path above each file's lines", NULL },
	{ "no-heading", 0, no_argument, O_NOHEADING, NULL, "the path on each line (the default)",
	  NULL },
	{ "vimgrep", 0, no_argument, O_VIMGREP, NULL, "path:line:column:text for each match", NULL },
	{ "context", 'C', required_argument, 0, "N", "N lines of context around each match", NULL },
	{ "after-context", 'A', required_argument, 0, "N", "N lines of context after", NULL },
	{ "before-context", 'B', required_argument, 0, "N", "N lines of context before", NULL },
	{ "max-count", 'm', required_argument, 0, "N", "at most N matching lines per file", NULL },
	{ "glob", 'g', required_argument, 0, "GLOB",
	  "only paths matching GLOB, as ripgrep's -g (repeatable; !GLOB:\n"
	  "not those; without '/' it matches the base name)", NULL },
	{ "type", 't', required_argument, 0, "TYPE", "only files of this type (--type-list)", NULL },
	{ "type-not", 'T', required_argument, 0, "TYPE", "no files of this type", NULL },
	{ "type-list", 0, no_argument, O_TYPELIST, NULL, "the types and their globs, as ripgrep's",
	  NULL },
	{ "sort", 0, required_argument, O_SORT, "HOW",
	  "path: the files in path order (the output held to the end);\n"
	  "none: index order, as they come (the default)", "path none" },
	{ "lang", 0, required_argument, O_LANG, "LANG", "only files of this language", NULL },
	{ "json", 0, no_argument, O_JSON, NULL,
	  "ripgrep's JSON Lines: begin, match (with submatches),\n"
	  "context, end per file and a summary", NULL },
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
	G_INDEXED("no-ignore", 0),
	G_INDEXED("hidden", 0),
	G_INDEXED("unrestricted", 'u'),
	G_INDEXED("follow", 0),
	G_INDEXED("no-ignore-vcs", 0),
	G_INDEXED("no-ignore-dot", 0),
	G_INDEXED("no-ignore-parent", 0),
	G_INDEXED("no-ignore-global", 0),
	G_INDEXED("one-file-system", 0),
	CLI_OPT_END,
};

/* A growing string (the combined pattern). */
typedef struct gstr {
	char *p;
	size_t n, cap;
	int oom;
} gstr;

static void gs_add(gstr *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = (b->n + n + 1) * 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = 0;
}

/* One pattern of -e into the regex b: a regex as it is, a literal (-F)
 * with its metacharacters quoted and its lines as alternatives. */
static void gs_pattern(gstr *b, const char *pat, int literal)
{
	gs_add(b, "(?:", 3);
	if (!literal) {
		gs_add(b, pat, strlen(pat));
	} else {
		for (const char *p = pat; *p; p++) {
			if (*p == '\n')
				gs_add(b, "|", 1);
			else {
				if (strchr("\\^$.|?*+()[]{}", *p))
					gs_add(b, "\\", 1);
				gs_add(b, p, 1);
			}
		}
	}
	gs_add(b, ")", 1);
}

/* -f FILE: its lines as patterns (a last line without a newline too),
 * each a copy in pats that *nowned counts from the first owned slot. */
static int read_patterns(const char *path, char **owned, size_t *nowned, const char **pats,
                         size_t *npats)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f) {
		fprintf(stderr, "%s: grep: -f %s: cannot open\n", cli_prog, path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	while (!rc && (n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = 0;
		char *copy;
		if (*npats == G_MAX_ARGS)
			rc = cli_usage_error("at most %d patterns", G_MAX_ARGS);
		else if (!(copy = strdup(line))) {
			cli_die_api(FATHOM_ENOMEM, "grep");
			rc = -1;
		} else {
			owned[(*nowned)++] = copy;
			pats[(*npats)++] = copy;
		}
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

static int has_upper(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' && s[1]) {   /* \W, \S, \D: escapes, not letters */
			s++;
			continue;
		}
		if (*s >= 'A' && *s <= 'Z')
			return 1;
	}
	return 0;
}

static int type_list(void)
{
	for (size_t i = 0; i < N_GTYPES; i++) {
		printf("%s: ", gtypes[i].name);
		for (const char *p = gtypes[i].globs; *p; p++)
			fputs(*p == ' ' ? ", " : (char[2]){ *p, 0 }, stdout);
		fputc('\n', stdout);
	}
	return 0;
}

int cmd_grep(int argc, char **argv)
{
	const char *index = cli_default_index();
	fathom_grep_opts go = FATHOM_GREP_OPTS_INIT;
	static gout o;
	memset(&o, 0, sizeof o);
	o.line_numbers = 1;
	o.color = CLI_COLOR_AUTO;
	o.first_group = o.first_file = 1;
	o.with_name = -1;
	int c, show_stats = 0, explain = 0, chunks = 0, smart = 0, line_re = 0;
	const char *pats[G_MAX_ARGS];
	size_t npats = 0;
	int have_f = 0;
	char *owned[G_MAX_ARGS];   /* -f's patterns, copies */
	size_t nowned = 0;
	uint32_t chunks_k = 0;
	uint64_t v;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case O_INDEX: index = optarg; break;
		case 'e':
			if (npats == G_MAX_ARGS)
				return cli_usage_error("at most %d patterns", G_MAX_ARGS);
			pats[npats++] = optarg;
			break;
		case 'f':
			have_f = 1;
			if (read_patterns(optarg, owned, &nowned, pats, &npats)) {
				for (size_t i = 0; i < nowned; i++)
					free(owned[i]);
				return 2;
			}
			break;
		case 'F': go.literal = 1; break;
		case 'E': case 'P': break;   /* PCRE2 is the engine */
		case 'i': go.caseless = 1; smart = 0; break;
		case 'S': smart = 1; break;
		case 'w': go.word = 1; break;
		case 'x': line_re = 1; break;
		case 'v': o.invert = 1; break;
		case 'o': o.only = 1; break;
		case 'l': o.files_only = 1; break;
		case 'L': o.without = 1; break;
		case 'c': o.count = 1; break;
		case O_COUNTM: o.count = o.count_matches = 1; break;
		case O_COLUMN: o.column = 1; break;
		case 'n': o.line_numbers = 1; break;
		case 'N': o.line_numbers = 0; break;
		case 'H': o.with_name = 1; break;
		case 'I': o.with_name = 0; break;
		case O_HEADING: o.heading = 1; break;
		case O_NOHEADING: o.heading = 0; break;
		case O_VIMGREP: o.vimgrep = 1; break;
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
		case 'g':
			if (o.nglobs == G_MAX_ARGS)
				return cli_usage_error("at most %d globs", G_MAX_ARGS);
			o.globs[o.nglobs++] = optarg;
			o.npos_globs += optarg[0] != '!';
			break;
		case 't': case 'T': {
			const gtype *t = gtype_find(optarg);
			if (!t)
				return cli_usage_error("unknown file type '%s' (fathom grep --type-list)",
				                       optarg);
			if ((c == 't' ? o.ntypes : o.ntypes_not) == G_MAX_ARGS)
				return cli_usage_error("at most %d types", G_MAX_ARGS);
			if (c == 't')
				o.types[o.ntypes++] = t;
			else
				o.types_not[o.ntypes_not++] = t;
			break;
		}
		case O_TYPELIST: return type_list();
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
		case O_LANG: go.lang = optarg; break;
		case O_JSON: o.json = 1; break;
		case O_SORT:
			if (strcmp(optarg, "path") && strcmp(optarg, "none"))
				return cli_usage_error("--sort wants path or none, got '%s'", optarg);
			o.sort = !strcmp(optarg, "path");
			break;
		case O_STATS: show_stats = 1; break;
		case O_COLOR:
			if ((o.color = cli_color_parse(optarg)) < 0)
				return cli_usage_error("--color wants auto, always or never, got '%s'", optarg);
			break;
		case O_INDEXED: case 'u':
			return cli_usage_error(
			    "%s cannot apply to an index: grep searches the files that were indexed, "
			    "chosen when indexing by the index's own rules (its ignore patterns and size "
			    "caps: fathom config --index DIR); index the files to search them",
			    argv[optind - 1]);
		default: return 2;
		}
	}
	if (have_f && !npats)
		return 1;   /* no pattern: no line matches, as ripgrep's empty -f */
	if (!npats) {
		if (optind >= argc)
			return cli_usage_error("grep: what pattern? (fathom grep PATTERN [PATH...])");
		pats[npats++] = argv[optind++];
	}
	if (o.json && (o.count || o.files_only || o.without))   /* --count-matches too */
		return cli_usage_error("--json cannot be used with %s, as in ripgrep",
		                       o.count ? "--count" : o.files_only ? "--files-with-matches"
		                                                          : "--files-without-match");
	if (go.boolean && (npats > 1 || line_re || o.invert || o.without || o.only || o.vimgrep ||
	                   o.json))
		return cli_usage_error("-Q takes one query, without -e, -x, -v, -L, -o, --vimgrep "
		                       "or --json");
	/* the patterns as one: -e's ORed, -x anchoring the whole */
	gstr pb = { 0 };
	const char *pattern = pats[0];
	int as_regex = npats > 1 || line_re;
	if (as_regex) {
		if (line_re)
			gs_add(&pb, "^(?:", 4);
		for (size_t i = 0; i < npats; i++) {
			if (i)
				gs_add(&pb, "|", 1);
			gs_pattern(&pb, pats[i], go.literal);
		}
		if (line_re)
			gs_add(&pb, ")$", 2);
		if (pb.oom) {
			free(pb.p);
			cli_die_api(FATHOM_ENOMEM, "grep");
			return 2;
		}
		pattern = pb.p;
		go.literal = 0;
	}
	if (smart) {
		int upper = 0;
		for (size_t i = 0; i < npats; i++)
			upper |= has_upper(pats[i]);
		go.caseless = !upper;
	}
	o.args = argv + optind;
	o.nargs = (size_t)(argc - optind);
	go.prefixes = (const char *const *)(argv + optind);
	go.n_prefixes = (size_t)(argc - optind);
	int rc = 0;
	if (o.nargs > G_MAX_ARGS) {
		free(pb.p);
		return cli_usage_error("at most %d paths", G_MAX_ARGS);
	}
	if (!getcwd(o.cwd, sizeof o.cwd))
		o.cwd[0] = 0;
	for (size_t i = 0; i < o.nargs && !rc; i++)
		if (!(o.abs[i] = path_abs(o.cwd, o.args[i])))
			rc = FATHOM_ENOMEM;
	if (o.with_name < 0) {
		/* ripgrep leaves the path out when the one PATH is a file */
		struct stat sb;
		o.with_name = !(o.nargs == 1 && !stat(o.args[0], &sb) && !S_ISDIR(sb.st_mode));
	}
	o.color = o.json ? 0 : cli_color_on(o.color, 1);
	o.all_mode = o.invert || o.without;
	o.max_count = go.max_count;
	if (!rc && !explain && !chunks && !go.boolean &&
	    (o.all_mode || o.only || o.vimgrep || o.json || o.color || o.count_matches))
		rc = fathom_grep_matcher_new(&o.mt, pattern, &go);
	if (rc) {
		cli_die_api(rc, "grep");
		rc = 2;
		goto out;
	}
	/* one glob that includes: the engine skips the files it rules out */
	if (o.npos_globs == 1 && o.nglobs == 1 && !strchr(o.globs[0], '/'))
		go.glob = o.globs[0];
	const char *search_pattern = pattern;
	if (o.all_mode) {
		/* every line of every file: the lines are chosen in on_file */
		search_pattern = "^";
		go.literal = go.caseless = go.word = 0;
		go.max_count = 0;
	} else {
		go.files_only = o.files_only || o.quiet;
		go.count_only = o.count && !o.count_matches && !go.files_only;
	}
	if (explain) {
		char *plan;
		if (fathom_grep_explain(&plan, pattern, &go)) {
			cli_die_api(FATHOM_EINVAL, "grep");
			rc = 2;
			goto out;
		}
		printf("%s\n", plan);
		fathom_free(plan);
		goto out;
	}
	fathom_index *ix;
	if (cli_open(&ix, index, FATHOM_OPEN_READONLY, NULL)) {
		rc = 2;
		goto out;
	}
	if (chunks) {
		rc = print_chunks(ix, pattern, &go, chunks_k, o.json);
		fathom_close(ix);
		goto out;
	}
	fathom_grep_stats st = FATHOM_GREP_STATS_INIT;
	go.on_skip = on_skip;
	int grc = fathom_grep(ix, search_pattern, &go, on_file, &o, &st);
	fathom_close(ix);
	if (grc == FATHOM_EINTERRUPTED && o.quiet) {
		rc = 0;   /* -q stops at the first match */
		goto out;
	}
	if (!grc && o.err)
		grc = o.err;
	held_flush(&o);
	if (grc) {
		cli_die_api(grc, "grep");
		rc = 2;
		goto out;
	}
	if (o.json)
		printf("{\"data\":{\"elapsed_total\":{\"human\":\"0.000000s\",\"nanos\":0,\"secs\":0},"
		       "\"stats\":{\"bytes_printed\":0,\"bytes_searched\":%llu,\"elapsed\":{\"human\":"
		       "\"0.000000s\",\"nanos\":0,\"secs\":0},\"matched_lines\":%llu,\"matches\":%llu,"
		       "\"searches\":%llu,\"searches_with_match\":%llu}},\"type\":\"summary\"}\n",
		       (unsigned long long)o.t_bytes, (unsigned long long)o.t_lines,
		       (unsigned long long)o.t_matches, (unsigned long long)o.t_searches,
		       (unsigned long long)o.t_with_match);
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
		rc = 2;   /* as grep: a file it could not search is an error */
	else
		rc = o.files_out ? 0 : 1;
out:
	fathom_grep_matcher_free(o.mt);
	for (size_t i = 0; i < o.nargs; i++)
		free(o.abs[i]);
	for (size_t i = 0; i < o.nheld; i++) {
		free(o.held[i].text);
		free(o.held[i].path);
	}
	free(o.held);
	free(o.sel);
	free(pb.p);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	return rc;
}
