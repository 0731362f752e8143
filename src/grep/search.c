/*
 * search.c — fathom grep: plan the pattern into a trigram query, take the
 * files of each segment that satisfy it, and verify them with PCRE2 (JIT)
 * line by line, as grep does, on worker threads.
 *
 * Files are read from disk, as they are now: grep never prints a line the
 * file no longer holds. The index only says which files need not be read.
 * A file the index rules out is still read when its size or mtime differ
 * from the index's (it changed since indexing); that check is one stat per
 * file, which opts->no_fresh_check skips. A file gone from disk is skipped.
 *
 * Work is cut into batches of consecutive documents. Workers take batches in
 * order, and the calling thread hands each batch's matching files to the
 * callback in order, so output is deterministic (index order, which is path
 * order within a segment). At most a window of batches is in flight, which
 * bounds the memory held by matched files waiting to be printed.
 *
 * Matching is bounded: PCRE2's match limit (and, without JIT, its depth
 * limit) stop a hostile pattern, and the search fails with FATHOM_ETOOBIG
 * instead of running away.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "grep/grep.h"
#include "query/query.h"

#define G_MATCH_LIMIT 10000000u
#define G_DEPTH_LIMIT 10000u
#define G_BATCH 128u             /* documents per batch */
#define G_MAX_THREADS 16u
#define G_MAX_FILE ((size_t)1 << 30)
#define G_JIT_STACK (1u << 20)

/* ---- compiled query -------------------------------------------------------- */

#define G_MAX_REQUIRED 3

typedef struct gterm {
	pcre2_code *re;
	int positive;          /* not under a NOT: its lines are reported */
	g_lit req[G_MAX_REQUIRED];   /* strings every match contains */
	uint32_t nreq;
	int per_line;          /* matched one line at a time (see line_bound) */
} gterm;

typedef struct gfilter {
	const g_expr *x;
	pcre2_code *re;        /* GX_FILE */
} gfilter;

/* One batch: documents [d0, d1) of segment seg, and what matched in it. */
typedef struct gres {
	const char *key;
	char *path;            /* owned: as the user's shell sees it */
	char *text;            /* owned; NULL when the callback gets no text */
	size_t len;
	fathom_grep_line *lines;   /* owned */
	size_t nlines;
	int fresh;
	uint32_t seg, doc;         /* where the index has it */
	char *skipped;             /* owned: why the file was not read (the
	                            * entry reports that alone) */
} gres;

typedef int (*g_emit_fn)(void *ctx, const gres *r);

typedef struct gbatch {
	size_t seg;
	uint32_t d0, d1;
	gres *res;
	size_t nres, cap;
	int done;
} gbatch;

typedef struct gctx {
	fathom_index *fx;
	const fathom_grep_opts *o;
	fa_arena *arena;           /* the search's own allocations */
	g_expr *expr;
	gterm *terms;
	uint32_t nterms;
	gfilter *filters;          /* GX_FILE and GX_LANG leaves, by address */
	uint32_t nfilters;
	int lines_wanted;          /* report lines (not only -l) */
	int keep_text;             /* the callback gets the text */
	uint32_t line_limit;       /* per term: 0 all */
	uint8_t **cand;            /* per segment: the trigram query's bitmap */
	int root_fd;               /* relative paths are opened from here */
	const char *root;          /* the index's root folder ("": the current one) */
	char *sub;                 /* the current folder under the root ("" the root
	                            * itself; NULL outside it or no root) */
	char **prefixes;           /* the PATH arguments as index paths */
	size_t nprefixes;
	int unscoped;              /* no path, glob, lang or file:/lang: filter */
	int progressive;           /* -l with one pattern: stop reading at a match */
	int by_doc;                /* a filter needs more than the path (lang) */

	gbatch *batches;
	size_t nbatches, next_claim, next_emit, window;
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done;
	int stop;
	int err;                   /* first error of a worker */
	char errmsg[1024];
} gctx;

/* ---- pattern compilation ---------------------------------------------------- */

/* Does a match of the regex depend on text beyond its line: \A \z \Z \G
 * (the text's ends, not the line's), lookarounds, (*VERB)s? Such a
 * pattern is matched one line at a time, as grep does; the others run
 * over the whole text at once. Over-counts (a "(?=" inside \Q...\E),
 * never misses. */
static int line_bound(const char *pat, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (pat[i] == '\\' && i + 1 < n) {
			char c = pat[++i];
			if (c == 'Q') {
				/* quoted: to the \E */
				while (i + 2 < n && !(pat[i + 1] == '\\' && pat[i + 2] == 'E'))
					i++;
				i += 2;
				continue;
			}
			if (c == 'A' || c == 'z' || c == 'Z' || c == 'G')
				return 1;
			continue;
		}
		if (pat[i] == '(' && i + 1 < n) {
			if (pat[i + 1] == '*')
				return 1;
			if (pat[i + 1] == '?' && i + 2 < n &&
			    (pat[i + 2] == '=' || pat[i + 2] == '!' ||
			     (pat[i + 2] == '<' && i + 3 < n && (pat[i + 3] == '=' || pat[i + 3] == '!'))))
				return 1;
		}
	}
	return 0;
}

/* Length of the (*UTF), (*LIMIT_MATCH=n)... settings at the start of a
 * pattern, which must stay at its very start. */
static size_t leading_settings(const char *pat, size_t n)
{
	size_t i = 0;
	while (i + 2 < n && pat[i] == '(' && pat[i + 1] == '*') {
		size_t j = i + 2;
		while (j < n && ((pat[j] >= 'A' && pat[j] <= 'Z') || pat[j] == '_' || pat[j] == '=' ||
		                 (pat[j] >= '0' && pat[j] <= '9')))
			j++;
		if (j >= n || pat[j] != ')' || j == i + 2)
			break;
		i = j + 1;
	}
	return i;
}

/* The pattern PCRE2 compiles: -w wraps it in non-word boundaries (after
 * its leading settings; an open \Q closed first), a literal is quoted
 * (each of its lines an alternative). */
static int build_pattern(fbuf *b, const char *pat, size_t plen, int literal, int word)
{
	if (word && !literal) {
		size_t lead = leading_settings(pat, plen);
		fbuf_append(b, pat, lead);
		pat += lead;
		plen -= lead;
	}
	if (word)
		fbuf_puts(b, "(?<!\\w)(?:");
	if (literal) {
		const char *p = pat, *end = pat + plen;
		int first = 1;
		for (;;) {
			const char *e = memchr(p, '\n', (size_t)(end - p));
			size_t n = e ? (size_t)(e - p) : (size_t)(end - p);
			if (!first)
				fbuf_putc(b, '|');
			first = 0;
			fbuf_puts(b, "\\Q");
			for (size_t i = 0; i < n; i++) {
				/* \E inside the string ends the quote: re-open it */
				if (p[i] == '\\' && i + 1 < n && p[i + 1] == 'E') {
					fbuf_puts(b, "\\E\\\\E\\Q");
					i++;
					continue;
				}
				fbuf_putc(b, p[i]);
			}
			fbuf_puts(b, "\\E");
			if (!e)
				break;
			p = e + 1;
		}
	} else {
		fbuf_append(b, pat, plen);
		if (word)
			fbuf_puts(b, "\\E");   /* ends a \Q left open; else nothing */
	}
	if (word)
		fbuf_puts(b, ")(?!\\w)");
	return b->err;
}

static int compile_one(pcre2_code **out, const char *pat, size_t plen, int literal, int caseless,
                       int word, int multiline, const char *what, size_t at)
{
	if (word && !literal) {
		/* the pattern alone first: its errors name its own columns, and
		 * one that only compiles wrapped (a stray ')') is refused */
		int rc = compile_one(out, pat, plen, 0, caseless, 0, multiline, what, at);
		if (rc)
			return rc;
		pcre2_code_free(*out);
		*out = NULL;
	}
	fbuf b;
	fbuf_init(&b, 0);
	int rc = build_pattern(&b, pat, plen, literal, word);
	if (rc) {
		fbuf_free(&b);
		return rc;
	}
	uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
	if (multiline)
		opts |= PCRE2_MULTILINE;
	if (caseless)
		opts |= PCRE2_CASELESS;
	int err;
	PCRE2_SIZE off;
	*out = pcre2_compile((PCRE2_SPTR)(b.len ? (const char *)b.data : ""), b.len, opts, &err, &off,
	                     NULL);
	size_t prefix = word ? strlen("(?<!\\w)(?:") + (literal ? 0 : leading_settings(pat, plen)) : 0;
	fbuf_free(&b);
	if (!*out) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		size_t col = off > prefix ? off - prefix : 0;
		if (col > plen)
			col = plen;
		return fa_err(FATHOM_EINVAL, "bad %s at column %zu: %s", what, at + col + 1,
		              (const char *)msg);
	}
	pcre2_jit_compile(*out, PCRE2_JIT_COMPLETE);   /* the interpreter if JIT is refused */
	return 0;
}

/* Collect the leaves of x: terms by number, filters in order. */
static int compile_expr(gctx *g, const g_expr *x, int positive)
{
	int rc = 0;
	switch (x->op) {
	case GX_TERM: {
		gterm *t = &g->terms[x->term];
		if (!t->re) {
			const char *what = g->o->boolean ? "pattern in the query" : "pattern";
			rc = compile_one(&t->re, x->text, x->len, x->literal, x->caseless > 0, g->o->word, 1,
			                 what, x->at);
			t->per_line = !x->literal && line_bound(x->text, x->len);
			if (!rc)
				rc = g_required(g->arena, x->text, x->len,
				                (x->literal ? G_LITERAL : 0) | (x->caseless > 0 ? G_CASELESS : 0),
				                t->req, G_MAX_REQUIRED, &t->nreq);
		}
		t->positive |= positive;
		return rc;
	}
	case GX_FILE:
	case GX_LANG: {
		gfilter *f = &g->filters[g->nfilters++];
		f->x = x;
		f->re = NULL;
		if (x->op == GX_FILE)
			rc = compile_one(&f->re, x->text, x->len, 0, x->caseless > 0, 0, 0, "file: regex",
			                 x->at);
		return rc;
	}
	default:
		for (uint32_t i = 0; i < x->n && !rc; i++)
			rc = compile_expr(g, x->kid[i], x->op == GX_NOT ? 0 : positive);
		return rc;
	}
}

static uint32_t count_filters(const g_expr *x)
{
	uint32_t n = x->op == GX_FILE || x->op == GX_LANG;
	for (uint32_t i = 0; i < x->n; i++)
		n += count_filters(x->kid[i]);
	return n;
}

/* ---- the worker's view of one file --------------------------------------------- */

typedef struct glines {
	fathom_grep_line *v;
	size_t n, cap;
	int state;             /* -1 not matched yet, 0 no line, 1 some */
} glines;

typedef struct gworker {
	gctx *g;
	pthread_t th;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *js;
	char *buf;             /* the file being searched */
	size_t buf_cap;
	glines *tl;            /* per term */
	glines merged;
	/* the folder of the last file opened */
	char dir[4096];
	size_t dlen;
	int dfd;
	int have_dir;
	fathom_grep_stats st;
	fa_arena names;
	int err;
	char errmsg[1024];
	char why[256];         /* why the last file could not be read */
} gworker;

/* Newlines in [p, p + n): a word at a time. */
static size_t count_newlines(const char *p, size_t n)
{
	size_t c = 0, i = 0;
	const uint64_t ones = 0x0101010101010101ull, low7 = 0x7f7f7f7f7f7f7f7full;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		uint64_t x = w ^ (ones * '\n');
		/* high bit of each byte set where x's byte is zero */
		uint64_t z = ~(((x & low7) + low7) | x | low7);
		c += (size_t)(((z >> 7) * ones) >> 56);
	}
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

static int match_err(int r)
{
	PCRE2_UCHAR msg[256];
	pcre2_get_error_message(r, msg, sizeof msg);
	return fa_err(FATHOM_ETOOBIG, "the pattern is too costly to match (%s)", (const char *)msg);
}

/* One match in [s, s+n) from start: 1 found (*ms, *me), 0 none, < 0 error. */
static int match(gworker *w, pcre2_code *re, const char *s, size_t n, size_t start, size_t *ms,
                 size_t *me)
{
	int r = pcre2_match(re, (PCRE2_SPTR)s, n, start, 0, w->md, w->mc);
	if (r == PCRE2_ERROR_NOMATCH)
		return 0;
	if (r < 0)
		return match_err(r);
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(w->md);
	*ms = ov[0];
	*me = ov[1];
	if (*me < *ms)   /* \K in a lookbehind: the match ends before it starts */
		*me = *ms;
	return 1;
}

static int add_line(glines *l, uint32_t no, size_t ls, size_t le, size_t ms, size_t me)
{
	if (l->n == l->cap && fa_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	l->v[l->n++] = (fathom_grep_line){ no, ls, le, ms, me };
	return 0;
}

/* A matching line: 0 go on, 1 enough (the limit, or past 2^32 lines),
 * < 0 error. */
static int line_found(glines *out, size_t line_no, size_t ls, size_t le, size_t ms, size_t me,
                      uint32_t limit)
{
	if (line_no > UINT32_MAX)
		return 1;
	int rc = add_line(out, (uint32_t)line_no, ls, le, ms, me);
	if (rc)
		return rc;
	return limit && out->n >= limit;
}

/* Each line of text[from, len) matched alone: for patterns whose matches
 * depend on what lies beyond the line (see line_bound). */
static int scan_lines(gworker *w, pcre2_code *re, const char *text, size_t len, size_t from,
                      uint32_t limit, glines *out)
{
	out->n = 0;
	size_t line_no = 1 + count_newlines(text, from), pos = from;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t le = nl ? (size_t)(nl - text) : len;
		size_t ms = 0, me = 0;
		int r = match(w, re, text + pos, le - pos, 0, &ms, &me);
		if (r < 0)
			return r;
		if (r == 1 && (r = line_found(out, line_no, pos, le, pos + ms, pos + me, limit)) != 0)
			return r < 0 ? r : 0;
		if (!nl)
			break;
		pos = le + 1;
		line_no++;
	}
	return 0;
}

/* The lines of text that term t matches, as grep sees them (a match must
 * lie within one line), at most limit of them (0: all). The regex runs
 * over the whole text from one match to the next, and a match that runs
 * past its line is tried again on the line alone. */
static int scan_from(gworker *w, const gterm *t, const char *text, size_t len, size_t from,
                     uint32_t limit, glines *out)
{
	pcre2_code *re = t->re;
	if (t->per_line)
		return scan_lines(w, re, text, len, from, limit, out);
	out->n = 0;
	size_t pos = from, counted = 0, line_no = 1;
	while (pos < len) {   /* no phantom line after a final newline */
		size_t ms = 0, me = 0;
		int r = match(w, re, text, len, pos, &ms, &me);
		if (r <= 0)
			return r;
		/* the line holding the match's start */
		size_t ls = ms;
		while (ls > pos && text[ls - 1] != '\n')
			ls--;
		if (ms == len && ls == len)
			break;   /* an empty match at the very end: no line there */
		const char *nl = memchr(text + ms, '\n', len - ms);
		size_t le = nl ? (size_t)(nl - text) : len;
		line_no += count_newlines(text + counted, ls - counted);
		counted = ls;
		size_t lms = 0, lme = 0;
		if (me > le || ms < ls) {
			/* it ran past the line: does the line alone match? */
			r = match(w, re, text + ls, le - ls, 0, &lms, &lme);
			if (r < 0)
				return r;
		} else {
			r = 1;
			lms = ms - ls;
			lme = me - ls;
		}
		if (r == 1 && (r = line_found(out, line_no, ls, le, ls + lms, ls + lme, limit)) != 0)
			return r < 0 ? r : 0;
		if (!nl)
			break;
		pos = le + 1;
	}
	return 0;
}

typedef struct gfile {
	const ix_doc_info *di;
	const char *text;
	size_t len;
} gfile;

/* Does the file's path or language satisfy a filter leaf? */
static int filter_holds(gworker *w, const g_expr *x, const ix_doc_info *di)
{
	gctx *g = w->g;
	for (uint32_t i = 0; i < g->nfilters; i++) {
		if (g->filters[i].x != x)
			continue;
		if (x->op == GX_LANG)
			return strcasecmp(di->lang, x->text) == 0;
		const char *path = di->path && *di->path ? di->path : di->key;
		int r = pcre2_match(g->filters[i].re, (PCRE2_SPTR)path, strlen(path), 0, 0, w->md, w->mc);
		if (r < -1 && !w->err)
			w->err = match_err(r);
		return r >= 0;
	}
	return 0;
}

static int scan(gworker *w, const gterm *t, const char *text, size_t len, uint32_t limit,
                glines *out)
{
	return scan_from(w, t, text, len, 0, limit, out);
}

/* Three-valued: 1 holds, 0 does not, 2 unknown until the text is read. */
static int eval_pre(gworker *w, const g_expr *x, const ix_doc_info *di)
{
	switch (x->op) {
	case GX_TERM:
		return 2;
	case GX_FILE:
	case GX_LANG:
		return filter_holds(w, x, di);
	case GX_NOT: {
		int v = eval_pre(w, x->kid[0], di);
		return v == 2 ? 2 : !v;
	}
	case GX_AND: {
		int v = 1;
		for (uint32_t i = 0; i < x->n; i++) {
			int k = eval_pre(w, x->kid[i], di);
			if (k == 0)
				return 0;
			if (k == 2)
				v = 2;
		}
		return v;
	}
	default: {
		int v = 0;
		for (uint32_t i = 0; i < x->n; i++) {
			int k = eval_pre(w, x->kid[i], di);
			if (k == 1)
				return 1;
			if (k == 2)
				v = 2;
		}
		return v;
	}
	}
}

/* Does the file's text hold a line matching term t? Matched once per file:
 * all its lines (up to the limit) for a term that is reported, the first
 * for one that only decides. */
static int term_holds(gworker *w, uint32_t t, const gfile *f)
{
	glines *l = &w->tl[t];
	if (l->state < 0) {
		gctx *g = w->g;
		const gterm *gt = &g->terms[t];
		/* a string every match holds, missing from the file: no line */
		for (uint32_t i = 0; i < gt->nreq; i++) {
			if (!f->text || !memmem(f->text, f->len, gt->req[i].p, gt->req[i].n)) {
				l->n = 0;
				l->state = 0;
				return 0;
			}
		}
		uint32_t limit = g->terms[t].positive && g->lines_wanted ? g->line_limit : 1;
		int rc = scan(w, &g->terms[t], f->text ? f->text : "", f->len, limit, l);
		if (rc) {
			if (!w->err)
				w->err = rc;
			l->n = 0;
		}
		l->state = l->n > 0;
	}
	return l->state;
}

static int eval_full(gworker *w, const g_expr *x, const gfile *f)
{
	switch (x->op) {
	case GX_TERM:
		return term_holds(w, x->term, f);
	case GX_FILE:
	case GX_LANG:
		return filter_holds(w, x, f->di);
	case GX_NOT:
		return !eval_full(w, x->kid[0], f);
	case GX_AND:
		for (uint32_t i = 0; i < x->n; i++)
			if (!eval_full(w, x->kid[i], f))
				return 0;
		return 1;
	default:
		for (uint32_t i = 0; i < x->n; i++)
			if (eval_full(w, x->kid[i], f))
				return 1;
		return 0;
	}
}

/* The reported lines: those of every positive term that matched, merged in
 * line order (one entry per line, its earliest match). */
static int merge_lines(gworker *w, glines **out)
{
	gctx *g = w->g;
	glines *only = NULL;
	uint32_t nsrc = 0;
	for (uint32_t t = 0; t < g->nterms; t++) {
		if (g->terms[t].positive && w->tl[t].state > 0) {
			only = &w->tl[t];
			nsrc++;
		}
	}
	if (nsrc <= 1) {
		static glines none;
		*out = only ? only : &none;
		return 0;
	}
	glines *m = &w->merged;
	m->n = 0;
	for (uint32_t t = 0; t < g->nterms; t++) {
		if (!g->terms[t].positive || w->tl[t].state <= 0)
			continue;
		for (size_t i = 0; i < w->tl[t].n; i++) {
			const fathom_grep_line *l = &w->tl[t].v[i];
			if (add_line(m, l->line, l->start, l->end, l->match_start, l->match_end))
				return FATHOM_ENOMEM;
		}
	}
	/* insertion sort by line, then match start; drop repeats of a line */
	for (size_t i = 1; i < m->n; i++) {
		fathom_grep_line v = m->v[i];
		size_t j = i;
		while (j > 0 && (m->v[j - 1].line > v.line ||
		                 (m->v[j - 1].line == v.line && m->v[j - 1].match_start > v.match_start))) {
			m->v[j] = m->v[j - 1];
			j--;
		}
		m->v[j] = v;
	}
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++)
		if (k == 0 || m->v[k - 1].line != m->v[i].line)
			m->v[k++] = m->v[i];
	m->n = k;
	if (g->line_limit && m->n > g->line_limit)
		m->n = g->line_limit;
	*out = m;
	return 0;
}

/* ---- files on disk ------------------------------------------------------------- */

/* A handle on the folder of path (relative to the root, or absolute), kept
 * while the next file is in the same folder, as files of one folder follow
 * each other in a segment. *name is the file's name within it. */
static int open_dir(gworker *w, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) : 0;
	*name = slash ? slash + 1 : path;
	if (slash && dl == 0)
		dl = 1;   /* "/x": the root folder */
	if (dl >= sizeof w->dir)
		return -1;
	if (w->have_dir && dl == w->dlen && memcmp(w->dir, path, dl) == 0)
		return w->dfd;
	if (w->dfd >= 0 && w->dfd != w->g->root_fd)
		close(w->dfd);
	w->have_dir = 1;
	memcpy(w->dir, path, dl);
	w->dir[dl] = '\0';
	w->dlen = dl;
	if (dl == 0)
		w->dfd = w->g->root_fd;
	else
		w->dfd = openat(w->g->root_fd, w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
	return w->dfd;
}

static int stat_changed(const struct stat *st, const ix_doc_info *di)
{
	return (uint64_t)st->st_size != di->size ||
	       (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec != di->mtime_ns;
}

/* Open an indexed file to read: the descriptor, its size, and whether it
 * changed since indexing; -1 gone or not a regular file; -2 there but not
 * to be read (unreadable, over G_MAX_FILE: w->why says why). */
static int open_file(gworker *w, int dfd, const char *name, const ix_doc_info *di, uint64_t *size,
                     int *changed)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return -1;
		snprintf(w->why, sizeof w->why, "%s", strerror(errno));
		return -2;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size > G_MAX_FILE) {
		close(fd);
		snprintf(w->why, sizeof w->why, "larger than %zu MiB: not searched", G_MAX_FILE >> 20);
		return -2;
	}
	*size = (uint64_t)st.st_size;
	*changed = stat_changed(&st, di);
	return fd;
}

/* Read the file into w->buf: 1 read, 0 gone or not a regular file, 2 not
 * read (w->why says why), < 0 error. */
static int read_file(gworker *w, int dfd, const char *name, const ix_doc_info *di, size_t *len,
                     int *changed)
{
	uint64_t size;
	int fd = open_file(w, dfd, name, di, &size, changed);
	if (fd < 0)
		return fd == -1 ? 0 : 2;
	size_t want = (size_t)size + 1, n = 0;
	for (;;) {
		if (want > w->buf_cap) {
			char *nb = fa_realloc(w->buf, want);
			if (!nb) {
				close(fd);
				return fa_err(FATHOM_ENOMEM, "out of memory reading %s", di->key);
			}
			w->buf = nb;
			w->buf_cap = want;
		}
		ssize_t r = read(fd, w->buf + n, w->buf_cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(w->why, sizeof w->why, "read error: %s", strerror(errno));
			close(fd);
			return 2;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == w->buf_cap) {   /* it grew while we read */
			if (n >= G_MAX_FILE)
				break;
			want = n * 2;
		}
	}
	close(fd);
	*len = n;
	return 1;
}

/* -l with one pattern: read the file a piece at a time, each piece's whole
 * lines matched as they come, and stop at the first matching line, so a
 * large file that matches early is not read to its end. 1 read (*found
 * set, the line in w->tl[0]), 0 gone, 2 not read (w->why), < 0 error. */
#define G_PIECE (64u << 10)
#define G_FIRST_PIECE (8u << 10)

static int first_match(gworker *w, int dfd, const char *name, const ix_doc_info *di, size_t *len,
                       int *changed, int *found)
{
	*found = 0;
	uint64_t size;
	int fd = open_file(w, dfd, name, di, &size, changed);
	if (fd < 0)
		return fd == -1 ? 0 : 2;
	size_t n = 0, scanned = 0;
	int eof = 0, rc = 0;
	glines *l = &w->tl[0];
	l->n = 0;
	while (!eof) {
		if (n + G_PIECE + 1 > w->buf_cap) {
			size_t want = w->buf_cap ? w->buf_cap * 2 : 2 * G_PIECE;
			while (want < n + G_PIECE + 1)
				want *= 2;
			char *nb = fa_realloc(w->buf, want);
			if (!nb) {
				rc = fa_err(FATHOM_ENOMEM, "out of memory reading %s", di->key);
				break;
			}
			w->buf = nb;
			w->buf_cap = want;
		}
		/* a small first piece: most files that match, match early */
		ssize_t r = read(fd, w->buf + n, n ? G_PIECE : G_FIRST_PIECE);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(w->why, sizeof w->why, "read error: %s", strerror(errno));
			close(fd);
			return 2;
		}
		if (r == 0 || n + (size_t)r >= G_MAX_FILE)
			eof = 1;
		if (r > 0)
			n += (size_t)r;
		/* the whole lines read so far (all of it at the end) */
		size_t complete = n;
		if (!eof) {
			const char *nl = memrchr(w->buf + scanned, '\n', n - scanned);
			complete = nl ? (size_t)(nl - w->buf) + 1 : scanned;
		}
		if (complete > scanned) {
			rc = scan_from(w, &w->g->terms[0], w->buf, complete, scanned, 1, l);
			if (rc || l->n) {
				*found = l->n > 0;
				break;
			}
			scanned = complete;
		}
	}
	close(fd);
	*len = n;
	l->state = *found;
	return rc ? rc : 1;
}

/* ---- paths ------------------------------------------------------------------------- */

/* The path to print for a document path: relative to the current folder
 * when the file is under it, else absolute (when the index has a root). */
static char *display_path(const gctx *g, const char *path)
{
	if (path[0] == '/' || !*g->root || (g->sub && !*g->sub))
		return fa_strdup(path);
	size_t sl = g->sub ? strlen(g->sub) : 0;
	if (g->sub && strncmp(path, g->sub, sl) == 0 && path[sl] == '/')
		return fa_strdup(path + sl + 1);
	return fa_path_resolve(g->root, path);
}

/* A PATH argument (relative to the current folder) as a prefix of document
 * paths: relative to the root when under it, else absolute. */
static char *index_prefix(const gctx *g, const char *cwd, const char *arg)
{
	char *abs = fa_path_resolve(cwd, arg);
	if (!abs)
		return NULL;
	const char *base = *g->root ? g->root : cwd;
	size_t bl = strlen(base);
	char *out;
	if (strcmp(abs, base) == 0)
		out = fa_strdup("");
	else if (strcmp(base, "/") == 0)
		out = fa_strdup(abs + 1);
	else if (strncmp(abs, base, bl) == 0 && abs[bl] == '/')
		out = fa_strdup(abs + bl + 1);
	else
		out = fa_strdup(abs);
	fa_free(abs);
	return out;
}

/* ---- paths in scope ---------------------------------------------------------------- */

static int path_in_scope(const gctx *g, const char *path)
{
	const fathom_grep_opts *o = g->o;
	if (o->glob && *o->glob) {
		const char *base = strrchr(path, '/');
		if (fnmatch(o->glob, path, 0) != 0 &&
		    (strchr(o->glob, '/') || fnmatch(o->glob, base ? base + 1 : path, 0) != 0))
			return 0;
	}
	if (g->nprefixes) {
		for (size_t i = 0; i < g->nprefixes; i++) {
			const char *pre = g->prefixes[i];
			size_t n = strlen(pre);
			if (n == 0)
				return 1;
			if (strncmp(path, pre, n) == 0 && (path[n] == '\0' || path[n] == '/' || pre[n - 1] == '/'))
				return 1;
		}
		return 0;
	}
	return 1;
}

static int path_ok(const gctx *g, const ix_doc_info *di)
{
	const fathom_grep_opts *o = g->o;
	if (o->lang && *o->lang && strcasecmp(di->lang, o->lang) != 0)
		return 0;
	return path_in_scope(g, di->path && *di->path ? di->path : di->key);
}

/* ---- the worker -------------------------------------------------------------------------- */

static int batch_add(gbatch *b, const gres *r)
{
	if (b->nres == b->cap && fa_grow((void **)&b->res, &b->cap, b->nres + 1, sizeof *b->res))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	b->res[b->nres++] = *r;
	return 0;
}

static int do_file(gworker *w, gbatch *b, ix_segment *s, uint32_t d, const uint8_t *cand)
{
	gctx *g = w->g;
	if (seg_doc_is_deleted(s, d) || !seg_doc_has_trigrams(s, d))
		return 0;
	int is_cand = cand[d >> 3] >> (d & 7) & 1;
	if (!is_cand && g->o->no_fresh_check) {
		/* trusted: a file the index rules out is not even looked up */
		w->st.files += g->unscoped;
		return 0;
	}
	int rc, stat_done = 0;
	if (!is_cand && !g->by_doc) {
		/* The check for changes, on most files: the path, size and
		 * mtime alone, then one stat. */
		const char *fp, *fname;
		uint64_t size;
		int64_t mtime;
		if ((rc = seg_doc_file(s, d, &fp, &size, &mtime)))
			return rc;
		if (*fp) {
			if (!path_in_scope(g, fp))
				return 0;
			w->st.files++;
			int fdfd = open_dir(w, fp, &fname);
			struct stat st;
			if (fdfd == -1 || fstatat(fdfd, fname, &st, 0) != 0) {
				w->st.missing++;
				return 0;
			}
			if ((uint64_t)st.st_size == size &&
			    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == mtime)
				return 0;   /* as indexed, and the index rules it out */
			stat_done = 1;  /* changed: read it below */
		}
	}
	ix_doc_info di;
	if ((rc = seg_doc(s, d, &di)))
		return rc;
	if (!stat_done) {
		if (!path_ok(g, &di))
			return 0;
		if (g->nfilters && eval_pre(w, g->expr, &di) == 0)
			return w->err;
		w->st.files++;
	}
	const char *path = di.path && *di.path ? di.path : di.key, *name;
	int dfd = open_dir(w, path, &name);
	if (dfd == -1) {
		w->st.missing++;
		return 0;
	}
	if (g->nterms == 0) {
		/* file: and lang: alone: the file matches if it is still there */
		struct stat st;
		if (fstatat(dfd, name, &st, 0) != 0) {
			w->st.missing++;
			return 0;
		}
		gres r = { di.key, display_path(g, path), NULL, 0, NULL, 0, stat_changed(&st, &di),
		           (uint32_t)b->seg, d, NULL };
		if (!r.path)
			return fa_err(FATHOM_ENOMEM, "out of memory");
		w->st.matched++;
		if ((rc = batch_add(b, &r)))
			fa_free(r.path);
		return rc;
	}
	if (!is_cand && !stat_done) {
		struct stat st;
		if (fstatat(dfd, name, &st, 0) != 0) {
			w->st.missing++;
			return 0;
		}
		if (!stat_changed(&st, &di))
			return 0;   /* as indexed, and the index rules it out */
	}
	size_t len = 0;
	int changed = 0, holds = 0;
	for (uint32_t t = 0; t < g->nterms; t++)
		w->tl[t].state = -1;
	if (g->progressive)
		rc = first_match(w, dfd, name, &di, &len, &changed, &holds);
	else
		rc = read_file(w, dfd, name, &di, &len, &changed);
	if (rc == 2) {
		/* there but not read: reported, as grep reports it */
		w->st.skipped++;
		gres r = { di.key, display_path(g, path), NULL, 0, NULL, 0, 0, (uint32_t)b->seg, d,
		           fa_strdup(w->why) };
		if (!r.path || !r.skipped) {
			fa_free(r.path);
			fa_free(r.skipped);
			return fa_err(FATHOM_ENOMEM, "out of memory");
		}
		if ((rc = batch_add(b, &r))) {
			fa_free(r.path);
			fa_free(r.skipped);
		}
		return rc;
	}
	if (rc <= 0) {
		if (rc == 0)
			w->st.missing++;
		return rc;
	}
	w->st.candidates++;
	w->st.bytes_read += len;
	w->st.changed += (uint64_t)changed;
	gfile f = { &di, w->buf, len };
	if (!g->progressive) {
		holds = eval_full(w, g->expr, &f);
		/* a OR b stops at a: b's lines are reported too */
		for (uint32_t t = 0; holds && g->lines_wanted && t < g->nterms && !w->err; t++)
			if (g->terms[t].positive && w->tl[t].state < 0)
				(void)term_holds(w, t, &f);
	}
	if (w->err)
		return w->err;
	if (!holds)
		return 0;
	glines *lines;
	if ((rc = merge_lines(w, &lines)))
		return rc;
	gres r = { di.key, display_path(g, path), NULL, len, NULL, lines->n, changed,
	           (uint32_t)b->seg, d, NULL };
	if (!r.path)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (lines->n) {
		r.lines = fa_malloc(lines->n * sizeof *r.lines);
		if (!r.lines) {
			fa_free(r.path);
			return fa_err(FATHOM_ENOMEM, "out of memory");
		}
		memcpy(r.lines, lines->v, lines->n * sizeof *r.lines);
	}
	if (g->keep_text) {
		/* the buffer goes with the result; the next file gets a new one */
		r.text = w->buf;
		w->buf = NULL;
		w->buf_cap = 0;
	}
	w->st.matched++;
	w->st.lines += lines->n;
	if ((rc = batch_add(b, &r))) {
		fa_free(r.path);
		fa_free(r.lines);
		fa_free(r.text);
	}
	return rc;
}

static void *worker_main(void *arg)
{
	gworker *w = arg;
	gctx *g = w->g;
	for (;;) {
		pthread_mutex_lock(&g->mu);
		while (!g->stop && g->next_claim < g->nbatches && g->next_claim >= g->next_emit + g->window)
			pthread_cond_wait(&g->cv_work, &g->mu);
		if (g->stop || g->next_claim >= g->nbatches) {
			pthread_mutex_unlock(&g->mu);
			break;
		}
		gbatch *b = &g->batches[g->next_claim++];
		pthread_mutex_unlock(&g->mu);

		ix_segment *s = ix_segment_at(g->fx->ix, b->seg);
		int rc = 0;
		for (uint32_t d = b->d0; d < b->d1 && !rc; d++)
			rc = do_file(w, b, s, d, g->cand[b->seg]);

		pthread_mutex_lock(&g->mu);
		if (rc && !g->err) {
			g->err = rc;
			snprintf(g->errmsg, sizeof g->errmsg, "%s", fathom_errmsg());
		}
		if (rc)
			g->stop = 1;
		b->done = 1;
		pthread_cond_broadcast(&g->cv_done);
		pthread_mutex_unlock(&g->mu);
		if (rc)
			break;
	}
	return NULL;
}

/* ---- the trigram query over a segment ----------------------------------------------- */

/* The documents of a segment that may satisfy q, as a bitmap. */
static int eval_bits(ix_segment *s, const g_query *q, uint8_t *out, size_t nb, uint32_t *docs)
{
	int rc = 0;
	switch (q->op) {
	case GQ_ALL:
		memset(out, 0xff, nb);
		return 0;
	case GQ_NONE:
		memset(out, 0, nb);
		return 0;
	case GQ_TRI: {
		memset(out, 0, nb);
		ix_tri_info ti;
		rc = seg_tri_find(s, q->tri, &ti);
		if (rc == FATHOM_ENOTFOUND) {
			fa_err_clear();
			return 0;
		}
		if (rc || (rc = seg_tri_docs(s, &ti, docs)))
			return rc;
		for (uint32_t i = 0; i < ti.ndocs; i++)
			out[docs[i] >> 3] |= (uint8_t)(1u << (docs[i] & 7));
		return 0;
	}
	default: {
		uint8_t *tmp = fa_malloc(nb);
		if (!tmp)
			return fa_err(FATHOM_ENOMEM, "out of memory");
		memset(out, q->op == GQ_AND ? 0xff : 0, nb);
		for (uint32_t k = 0; k < q->n && !rc; k++) {
			if ((rc = eval_bits(s, q->kid[k], tmp, nb, docs)))
				break;
			int any = 0;
			for (size_t i = 0; i < nb; i++) {
				out[i] = q->op == GQ_AND ? (uint8_t)(out[i] & tmp[i]) : (uint8_t)(out[i] | tmp[i]);
				any |= out[i];
			}
			if (q->op == GQ_AND && !any)
				break;   /* nothing left to narrow */
		}
		fa_free(tmp);
		return rc;
	}
	}
}

/* ---- setup ------------------------------------------------------------------------------ */

/* The query of a search: a boolean query parsed, or one pattern as a term. */
static int make_expr(gctx *g, fa_arena *a, const char *pattern, g_expr **out, uint32_t *nterms)
{
	const fathom_grep_opts *o = g->o;
	unsigned flags = (o->literal ? G_LITERAL : 0) | (o->caseless ? G_CASELESS : 0);
	if (o->boolean)
		return g_parse_query(a, pattern, strlen(pattern), flags, out, nterms);
	g_expr *x = fa_arena_calloc(a, 1, sizeof *x);
	if (!x)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	x->op = GX_TERM;
	x->text = pattern;
	x->len = strlen(pattern);
	x->literal = o->literal;
	x->caseless = o->caseless;
	*out = x;
	*nterms = 1;
	return 0;
}

static uint32_t pick_threads(const fathom_grep_opts *o)
{
	uint32_t n = o->threads;
	if (n == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c > 0 ? (uint32_t)c : 1;
	}
	return n > G_MAX_THREADS ? G_MAX_THREADS : n;
}

static void emit_batch(gctx *g, gbatch *b, g_emit_fn emit, void *ctx, int *stop, int *rc)
{
	for (size_t i = 0; i < b->nres; i++) {
		gres *r = &b->res[i];
		if (r->skipped) {
			if (!*stop && g->o->on_skip)
				g->o->on_skip(g->o->skip_ctx, r->path, r->skipped);
		} else if (!*stop) {
			int e = emit(ctx, r);
			if (e) {
				*stop = 1;
				*rc = e < 0 ? e : fa_err(FATHOM_EINTERRUPTED, "grep stopped by its callback");
			}
		}
		fa_free(r->path);
		fa_free(r->text);
		fa_free(r->lines);
		fa_free(r->skipped);
	}
	fa_free(b->res);
	b->res = NULL;
	b->nres = b->cap = 0;
	(void)g;
}

static int worker_init(gworker *w, gctx *g)
{
	memset(w, 0, sizeof *w);
	w->g = g;
	w->dfd = -1;
	w->md = pcre2_match_data_create(1, NULL);
	w->mc = pcre2_match_context_create(NULL);
	w->js = pcre2_jit_stack_create(32 * 1024, G_JIT_STACK, NULL);
	w->tl = fa_calloc(g->nterms ? g->nterms : 1, sizeof *w->tl);
	if (!w->md || !w->mc || !w->js || !w->tl)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	pcre2_set_match_limit(w->mc, G_MATCH_LIMIT);
	pcre2_set_depth_limit(w->mc, G_DEPTH_LIMIT);
	pcre2_jit_stack_assign(w->mc, NULL, w->js);
	return 0;
}

static void worker_free(gworker *w)
{
	if (w->dfd >= 0 && w->dfd != w->g->root_fd)
		close(w->dfd);
	for (uint32_t t = 0; w->tl && t < w->g->nterms; t++)
		fa_free(w->tl[t].v);
	fa_free(w->tl);
	fa_free(w->merged.v);
	fa_free(w->buf);
	pcre2_jit_stack_free(w->js);
	pcre2_match_context_free(w->mc);
	pcre2_match_data_free(w->md);
}

static int prepare(gctx *g, fa_arena *a, const char *pattern, fathom_grep_stats *stats)
{
	g->arena = a;
	int rc = make_expr(g, a, pattern, &g->expr, &g->nterms);
	if (rc)
		return rc;
	g->terms = fa_calloc(g->nterms ? g->nterms : 1, sizeof *g->terms);
	uint32_t nf = count_filters(g->expr);
	g->filters = fa_calloc(nf ? nf : 1, sizeof *g->filters);
	if (!g->terms || !g->filters)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if ((rc = compile_expr(g, g->expr, 1)))
		return rc;
	g_query *q;
	if ((rc = g_expr_plan(a, g->expr, &q)))
		return rc;
	stats->planned = q->op != GQ_ALL;
	const fathom_grep_opts *o = g->o;
	g->lines_wanted = !o->files_only;
	g->progressive = o->files_only && g->nterms == 1 && g->expr->op == GX_TERM;
	g->keep_text = !o->files_only && !o->count_only;
	g->line_limit = o->files_only ? 1 : o->max_count;
	/* where files are, and where the user is */
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return fa_err(FATHOM_EIO, "cannot tell the current folder: %s", strerror(errno));
	g->root = ix_root(g->fx->ix);
	if (*g->root) {
		g->root_fd = open(g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
		if (g->root_fd < 0) {
			/* the indexed folder moved: read paths from here */
			g->root = "";
			g->root_fd = AT_FDCWD;
		}
	}
	size_t rl = strlen(g->root);
	if (*g->root && strcmp(cwd, g->root) == 0)
		g->sub = fa_strdup("");
	else if (*g->root && strcmp(g->root, "/") == 0)
		g->sub = fa_strdup(cwd + 1);
	else if (*g->root && strncmp(cwd, g->root, rl) == 0 && cwd[rl] == '/')
		g->sub = fa_strdup(cwd + rl + 1);
	g->prefixes = fa_calloc(o->n_prefixes ? o->n_prefixes : 1, sizeof *g->prefixes);
	if (!g->prefixes)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	for (size_t i = 0; i < o->n_prefixes; i++) {
		if (!o->prefixes[i] || !*o->prefixes[i])
			return fa_err(FATHOM_EINVAL, "an empty path");
		if (!(g->prefixes[i] = index_prefix(g, cwd, o->prefixes[i])))
			return fa_err(FATHOM_ENOMEM, "out of memory");
		g->nprefixes++;
	}
	g->unscoped = !g->nprefixes && !(o->glob && *o->glob) && !(o->lang && *o->lang) &&
	              !nf;
	g->by_doc = (o->lang && *o->lang) || nf;
	/* the candidates of each segment, and the batches */
	ix_index *ix = g->fx->ix;
	size_t nseg = ix_nsegments(ix);
	g->cand = fa_calloc(nseg ? nseg : 1, sizeof *g->cand);
	if (!g->cand)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	uint32_t *docs = NULL;
	size_t nbatches = 0;
	for (size_t si = 0; si < nseg && !rc; si++) {
		ix_segment *s = ix_segment_at(ix, si);
		uint32_t nd = seg_ndocs(s);
		size_t nb = (size_t)nd / 8 + 1;
		g->cand[si] = fa_malloc(nb);
		fa_free(docs);
		docs = fa_malloc(((size_t)nd + 1) * sizeof *docs);
		if (!g->cand[si] || !docs) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
			break;
		}
		rc = eval_bits(s, q, g->cand[si], nb, docs);
		nbatches += (nd + G_BATCH - 1) / G_BATCH;
	}
	fa_free(docs);
	if (rc)
		return rc;
	g->batches = fa_calloc(nbatches ? nbatches : 1, sizeof *g->batches);
	if (!g->batches)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	for (size_t si = 0; si < nseg; si++) {
		uint32_t nd = seg_ndocs(ix_segment_at(ix, si));
		for (uint32_t d = 0; d < nd; d += G_BATCH) {
			gbatch *b = &g->batches[g->nbatches++];
			b->seg = si;
			b->d0 = d;
			b->d1 = nd - d > G_BATCH ? d + G_BATCH : nd;
		}
	}
	return 0;
}

/* The search: matching files handed to emit in index order, from the
 * calling thread. emit returning > 0 stops it (FATHOM_EINTERRUPTED), < 0 is
 * an error returned as is. */
static int g_run(fathom_index *fx, const char *pattern, const fathom_grep_opts *opts,
                 g_emit_fn emit, void *ctx, fathom_grep_stats *stats, int keep_text)
{
	fathom_grep_opts def = FATHOM_GREP_OPTS_INIT;
	fathom_grep_stats own;
	fa_err_clear();
	if (!fx || !pattern || !emit)
		return fa_err(FATHOM_EINVAL, "no index, pattern or callback");
	if (!opts)
		opts = &def;
	if (opts->version != FATHOM_GREP_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_grep_opts version %u, expected %u", opts->version,
		              FATHOM_GREP_OPTS_VERSION);
	if (!stats)
		stats = &own;
	memset(stats, 0, sizeof *stats);
	gctx g;
	memset(&g, 0, sizeof g);
	g.fx = fx;
	g.o = opts;
	g.root_fd = AT_FDCWD;
	g.root = "";
	fa_arena a;
	fa_arena_init(&a, 16 * 1024, 0);
	uint32_t nthreads = pick_threads(opts);
	gworker *w = NULL;
	uint32_t started = 0, inited = 0;
	int rc = prepare(&g, &a, pattern, stats);
	if (keep_text && !opts->files_only)
		g.keep_text = 1;
	if (!rc) {
		if (nthreads > g.nbatches)
			nthreads = g.nbatches ? (uint32_t)g.nbatches : 1;
		g.window = (size_t)nthreads * 4 + 4;
		w = fa_calloc(nthreads, sizeof *w);
		if (!w)
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
	}
	for (; !rc && inited < nthreads; inited++)
		rc = worker_init(&w[inited], &g);
	if (!rc) {
		pthread_mutex_init(&g.mu, NULL);
		pthread_cond_init(&g.cv_work, NULL);
		pthread_cond_init(&g.cv_done, NULL);
		for (; started < nthreads; started++) {
			if (pthread_create(&w[started].th, NULL, worker_main, &w[started]) != 0)
				break;
		}
		if (started == 0) {
			rc = fa_err(FATHOM_ENOMEM, "cannot start a grep thread");
			g.stop = 1;
		}
		/* the calling thread hands the batches to cb, in order */
		int cb_stop = 0, cb_rc = 0;
		pthread_mutex_lock(&g.mu);
		while (g.next_emit < g.nbatches && !g.stop) {
			gbatch *b = &g.batches[g.next_emit];
			if (!b->done) {
				pthread_cond_wait(&g.cv_done, &g.mu);
				continue;
			}
			pthread_mutex_unlock(&g.mu);
			emit_batch(&g, b, emit, ctx, &cb_stop, &cb_rc);
			pthread_mutex_lock(&g.mu);
			g.next_emit++;
			if (cb_stop)
				g.stop = 1;
			pthread_cond_broadcast(&g.cv_work);
		}
		g.stop = 1;
		pthread_cond_broadcast(&g.cv_work);
		pthread_mutex_unlock(&g.mu);
		for (uint32_t i = 0; i < started; i++)
			pthread_join(w[i].th, NULL);
		if (!rc && g.err)
			rc = fa_err(g.err, "%s", g.errmsg);
		if (!rc && cb_rc)
			rc = cb_rc;
		pthread_cond_destroy(&g.cv_done);
		pthread_cond_destroy(&g.cv_work);
		pthread_mutex_destroy(&g.mu);
	}
	for (uint32_t i = 0; i < inited; i++) {
		stats->files += w[i].st.files;
		stats->candidates += w[i].st.candidates;
		stats->matched += w[i].st.matched;
		stats->changed += w[i].st.changed;
		stats->missing += w[i].st.missing;
		stats->skipped += w[i].st.skipped;
		stats->bytes_read += w[i].st.bytes_read;
		stats->lines += w[i].st.lines;
		worker_free(&w[i]);
	}
	stats->threads = started;
	fa_free(w);
	for (size_t i = 0; i < g.nbatches; i++) {
		for (size_t k = 0; k < g.batches[i].nres; k++) {
			fa_free(g.batches[i].res[k].path);
			fa_free(g.batches[i].res[k].text);
			fa_free(g.batches[i].res[k].lines);
		}
		fa_free(g.batches[i].res);
	}
	fa_free(g.batches);
	for (size_t i = 0; g.cand && i < ix_nsegments(fx->ix); i++)
		fa_free(g.cand[i]);
	fa_free(g.cand);
	for (size_t i = 0; i < g.nprefixes; i++)
		fa_free(g.prefixes[i]);
	fa_free(g.prefixes);
	fa_free(g.sub);
	if (g.root_fd >= 0)
		close(g.root_fd);
	for (uint32_t t = 0; g.terms && t < g.nterms; t++)
		pcre2_code_free(g.terms[t].re);
	for (uint32_t f = 0; g.filters && f < g.nfilters; f++)
		pcre2_code_free(g.filters[f].re);
	fa_free(g.terms);
	fa_free(g.filters);
	fa_arena_free(&a);
	return rc;
}

typedef struct public_emit {
	fathom_grep_cb cb;
	void *ctx;
} public_emit;

static int emit_public(void *ctx, const gres *r)
{
	public_emit *p = ctx;
	fathom_grep_file f = { r->key, r->path, r->text, r->text ? r->len : 0, r->lines, r->nlines,
	                       r->fresh };
	return p->cb(p->ctx, &f) ? 1 : 0;
}

int fathom_grep(fathom_index *fx, const char *pattern, const fathom_grep_opts *opts,
                fathom_grep_cb cb, void *ctx, fathom_grep_stats *stats)
{
	if (!cb) {
		fa_err_clear();
		return fa_err(FATHOM_EINVAL, "no callback");
	}
	/* the counts go to a struct of the current version, copied out as far
	 * as the caller's version goes */
	fathom_grep_stats all = FATHOM_GREP_STATS_INIT;
	int rc = stats ? fa_struct_check(FA_GREP_STATS, stats) : 0;
	if (rc)
		return rc;
	public_emit p = { cb, ctx };
	rc = g_run(fx, pattern, opts, emit_public, &p, &all, 0);
	if (stats)
		fa_struct_copy_out(FA_GREP_STATS, stats, &all);
	return rc;
}

/* ---- grep as a retrieval source ------------------------------------------------------------ */

typedef struct gchunk {
	uint32_t seg, chunk;
	uint32_t nlines;          /* matching lines in the chunk */
	uint64_t order;           /* index order, for ties */
	fathom_hit hit;
} gchunk;

typedef struct hyb {
	fathom_index *fx;
	fathom_results *res;
	gchunk *v;
	size_t n, cap;
	uint32_t snippet_bytes;
	int err;
} hyb;

/* The snippet of a hit: the line, cut at snippet_bytes on a character
 * boundary, with its match highlighted. */
static int hit_snippet(fa_arena *a, fathom_hit *h, const gres *r, const fathom_grep_line *l,
                       uint32_t max)
{
	size_t n = (size_t)(l->end - l->start);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)r->text[l->start + n] & 0xc0) == 0x80)
			n--;
	}
	char *s = fa_arena_strndup(a, r->text + l->start, n);
	fathom_span *sp = fa_arena_alloc(a, sizeof *sp);
	if (!s || !sp)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	h->snippet = s;
	uint64_t ms = l->match_start - l->start, me = l->match_end - l->start;
	if (ms < n) {
		sp->start = (uint32_t)ms;
		sp->len = (uint32_t)(FA_MIN(me, (uint64_t)n) - ms);
		h->highlights = sp;
		h->n_highlights = 1;
	}
	return 0;
}

static int emit_chunks(void *ctx, const gres *r)
{
	hyb *x = ctx;
	ix_segment *s = ix_segment_at(x->fx->ix, r->seg);
	ix_doc_info di;
	int rc = seg_doc(s, r->doc, &di);
	if (rc)
		return rc;
	fa_arena *a = q_results_arena(x->res);
	size_t li = 0;
	for (uint32_t c = di.first_chunk; c < di.first_chunk + di.n_chunks && li < r->nlines; c++) {
		ix_chunk_info ci;
		if ((rc = seg_chunk(s, c, &ci)))
			return rc;
		while (li < r->nlines && r->lines[li].line < ci.line_start)
			li++;
		size_t first = li, k = li;
		while (k < r->nlines && r->lines[k].line <= ci.line_end)
			k++;
		if (k == first)
			continue;
		/* chunks may overlap: the next chunk looks at these lines again */
		if (x->n == x->cap && fa_grow((void **)&x->v, &x->cap, x->n + 1, sizeof *x->v))
			return fa_err(FATHOM_ENOMEM, "out of memory");
		gchunk *g = &x->v[x->n];
		memset(g, 0, sizeof *g);
		g->seg = r->seg;
		g->chunk = c;
		g->nlines = (uint32_t)(k - first);
		g->order = x->n;
		fathom_hit *h = &g->hit;
		h->chunk_id = ((uint64_t)seg_id(s) << 32) | c;
		h->doc_id = fa_arena_strndup(a, di.key, strlen(di.key));
		h->path = fa_arena_strndup(a, di.path, strlen(di.path));
		h->title = fa_arena_strndup(a, di.title, strlen(di.title));
		h->url = fa_arena_strndup(a, di.url, strlen(di.url));
		uint32_t nm = FA_MIN(g->nlines, 64u);
		uint32_t *ml = fa_arena_alloc(a, nm * sizeof *ml);
		if (!h->doc_id || !h->path || !h->title || !h->url || !ml)
			return fa_err(FATHOM_ENOMEM, "out of memory");
		for (uint32_t i = 0; i < nm; i++)
			ml[i] = r->lines[first + i].line;
		h->match_lines = ml;
		h->n_match_lines = nm;
		h->chunk_order = ci.order;
		h->line_start = ci.line_start;
		h->line_end = ci.line_end;
		h->byte_start = ci.byte_start;
		h->byte_end = ci.byte_end;
		h->score = g->nlines;
		h->field_score[FATHOM_FIELD_BODY] = g->nlines;
		h->bonus = 1.0;
		h->snippet = "";
		if (x->snippet_bytes && r->text && (rc = hit_snippet(a, h, r, &r->lines[first], x->snippet_bytes)))
			return rc;
		x->n++;
	}
	return 0;
}

static int by_lines(const void *pa, const void *pb)
{
	const gchunk *a = pa, *b = pb;
	if (a->nlines != b->nlines)
		return a->nlines > b->nlines ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

int fathom_grep_chunks(fathom_results **out, fathom_index *fx, const char *pattern,
                       const fathom_grep_opts *opts, uint32_t k)
{
	fa_err_clear();
	if (!out || !fx || !pattern)
		return fa_err(FATHOM_EINVAL, "no output, index or pattern");
	*out = NULL;
	fathom_grep_opts def = FATHOM_GREP_OPTS_INIT;
	if (!opts)
		opts = &def;
	if (opts->version != FATHOM_GREP_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_grep_opts version %u, expected %u", opts->version,
		              FATHOM_GREP_OPTS_VERSION);
	/* every matching line counts: -l and -c would hide them */
	fathom_grep_opts o = *opts;
	o.files_only = 0;
	o.count_only = 0;
	char *parsed = NULL;
	int rc = fathom_grep_explain(&parsed, pattern, &o);
	hyb x;
	memset(&x, 0, sizeof x);
	x.fx = fx;
	x.snippet_bytes = 240;
	if (!rc)
		rc = q_results_new(&x.res, parsed);
	fathom_free(parsed);
	if (!rc)
		rc = g_run(fx, pattern, &o, emit_chunks, &x, NULL, 1);
	if (!rc) {
		if (x.n)
			qsort(x.v, x.n, sizeof *x.v, by_lines);
		size_t keep = FA_MIN(x.n, (size_t)(k ? k : 100));
		for (size_t i = 0; i < keep && !rc; i++)
			rc = q_results_add(x.res, &x.v[i].hit);
	}
	fa_free(x.v);
	if (rc) {
		fathom_results_free(x.res);
		return rc;
	}
	*out = x.res;
	return 0;
}

int fathom_grep_explain(char **out, const char *pattern, const fathom_grep_opts *opts)
{
	fathom_grep_opts def = FATHOM_GREP_OPTS_INIT;
	fa_err_clear();
	if (!out || !pattern)
		return fa_err(FATHOM_EINVAL, "no pattern");
	*out = NULL;
	if (!opts)
		opts = &def;
	if (opts->version != FATHOM_GREP_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_grep_opts version %u, expected %u", opts->version,
		              FATHOM_GREP_OPTS_VERSION);
	gctx g;
	memset(&g, 0, sizeof g);
	g.o = opts;
	fa_arena a;
	fa_arena_init(&a, 16 * 1024, 0);
	fbuf b;
	fbuf_init(&b, 0);
	g_expr *x;
	uint32_t nterms;
	g_query *q;
	int rc = make_expr(&g, &a, pattern, &x, &nterms);
	if (!rc)
		rc = g_expr_plan(&a, x, &q);
	if (!rc) {
		if (opts->boolean) {
			fbuf_puts(&b, "query: ");
			g_expr_format(x, &b);
			fbuf_puts(&b, "\ntrigrams: ");
		}
		g_query_format(q, &b);
		if (b.err)
			rc = b.err;
	}
	if (!rc)
		*out = fbuf_detach(&b, NULL);
	fbuf_free(&b);
	fa_arena_free(&a);
	return rc;
}
