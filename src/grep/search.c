/*
 * search.c — fathom grep: plan the pattern into a trigram query, take the
 * files of each segment that satisfy it, and verify each with PCRE2 (JIT)
 * line by line, as grep does.
 *
 * A file is read from disk instead of the stored copy when its size or
 * mtime changed since it was indexed, so a match reflects the file as it is
 * now. Matching is bounded: PCRE2's match and depth limits stop a hostile
 * pattern from running away (the search then fails with a clear error).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <fcntl.h>
#include <fnmatch.h>
#include <pcre2.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "grep/grep.h"

#define G_MATCH_LIMIT 10000000u
#define G_DEPTH_LIMIT 10000u

typedef struct gsearch {
	pcre2_code *re;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	const fathom_grep_opts *o;
	fathom_grep_line *lines;
	size_t nlines, cap;
} gsearch;

/* The pattern PCRE2 compiles: -w wraps it in non-word boundaries, -F
 * quotes it (each line an alternative). */
static int build_pattern(fbuf *b, const char *pat, const fathom_grep_opts *o)
{
	if (o->word)
		fbuf_puts(b, "(?<!\\w)(?:");
	if (o->literal) {
		const char *p = pat;
		int first = 1;
		for (;;) {
			const char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p) : strlen(p);
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
		fbuf_puts(b, pat);
	}
	if (o->word)
		fbuf_puts(b, ")(?!\\w)");
	return b->err;
}

static int compile(gsearch *g, const char *pat)
{
	fbuf b;
	fbuf_init(&b, 0);
	int rc = build_pattern(&b, pat, g->o);
	if (rc) {
		fbuf_free(&b);
		return rc;
	}
	uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_MULTILINE;
	if (g->o->caseless)
		opts |= PCRE2_CASELESS;
	int err;
	PCRE2_SIZE off;
	g->re = pcre2_compile((PCRE2_SPTR)(b.len ? (const char *)b.data : ""), b.len, opts, &err, &off,
	                      NULL);
	size_t prefix = g->o->word ? strlen("(?<!\\w)(?:") : 0;
	fbuf_free(&b);
	if (!g->re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		size_t col = off > prefix ? off - prefix : 0;
		return fa_err(FATHOM_EINVAL, "bad pattern at column %zu: %s", col + 1, (const char *)msg);
	}
	pcre2_jit_compile(g->re, PCRE2_JIT_COMPLETE);   /* the interpreter if JIT is refused */
	g->md = pcre2_match_data_create_from_pattern(g->re, NULL);
	g->mc = pcre2_match_context_create(NULL);
	if (!g->md || !g->mc)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	pcre2_set_match_limit(g->mc, G_MATCH_LIMIT);
	pcre2_set_depth_limit(g->mc, G_DEPTH_LIMIT);
	return 0;
}

/* One match in [s, s+n) from start: 1 found (*ms, *me), 0 none, < 0 error. */
static int match(gsearch *g, const char *s, size_t n, size_t start, size_t *ms, size_t *me)
{
	int r = pcre2_match(g->re, (PCRE2_SPTR)s, n, start, 0, g->md, g->mc);
	if (r == PCRE2_ERROR_NOMATCH)
		return 0;
	if (r < 0) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(r, msg, sizeof msg);
		return fa_err(FATHOM_ETOOBIG, "the pattern is too costly to match (%s)", (const char *)msg);
	}
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(g->md);
	*ms = ov[0];
	*me = ov[1];
	return 1;
}

/* The matching lines of text into g->lines. */
static int scan(gsearch *g, const char *text, size_t len)
{
	g->nlines = 0;
	size_t pos = 0, line_no = 1, counted = 0;
	while (pos < len) {   /* no phantom line after a final newline */
		size_t ms, me;
		int r = match(g, text, len, pos, &ms, &me);
		if (r <= 0)
			return r;
		/* the line holding the match's start; grep matches line by line */
		size_t ls = ms;
		while (ls > pos && text[ls - 1] != '\n')
			ls--;
		const char *nl = memchr(text + ms, '\n', len - ms);
		size_t le = nl ? (size_t)(nl - text) : len;
		for (; counted < ls; counted++)
			line_no += text[counted] == '\n';
		size_t lms, lme;
		if (me > le || ms < ls) {
			r = match(g, text + ls, le - ls, 0, &lms, &lme);
			if (r < 0)
				return r;
		} else {
			r = 1;
			lms = ms - ls;
			lme = me - ls;
		}
		if (r == 1) {
			if (g->nlines == g->cap &&
			    fa_grow((void **)&g->lines, &g->cap, g->nlines + 1, sizeof *g->lines))
				return fa_err(FATHOM_ENOMEM, "out of memory");
			g->lines[g->nlines++] = (fathom_grep_line){ (uint32_t)line_no, ls, le, ls + lms,
			                                            ls + lme };
			if (g->o->max_count && g->nlines >= g->o->max_count)
				return 0;
		}
		if (!nl)
			break;
		pos = le + 1;
	}
	return 0;
}

static int path_ok(const fathom_grep_opts *o, const ix_doc_info *di)
{
	const char *path = di->path && *di->path ? di->path : di->key;
	if (o->lang && *o->lang && strcmp(di->lang, o->lang) != 0)
		return 0;
	if (o->glob && *o->glob) {
		const char *base = strrchr(path, '/');
		if (fnmatch(o->glob, path, 0) != 0 &&
		    (strchr(o->glob, '/') || fnmatch(o->glob, base ? base + 1 : path, 0) != 0))
			return 0;
	}
	if (o->n_prefixes) {
		size_t i;
		for (i = 0; i < o->n_prefixes; i++) {
			const char *pre = o->prefixes[i];
			size_t n = strlen(pre);
			while (n > 1 && pre[n - 1] == '/')
				n--;
			if (strncmp(path, pre, n) == 0 && (path[n] == '\0' || path[n] == '/' || pre[n - 1] == '/'))
				break;
			if (strcmp(pre, ".") == 0)
				break;
		}
		if (i == o->n_prefixes)
			return 0;
	}
	return 1;
}

/* The candidate documents of a segment, as a bitmap over its documents. */
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
		if (rc == FATHOM_ENOTFOUND)
			return 0;
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
			for (size_t i = 0; i < nb; i++)
				out[i] = q->op == GQ_AND ? (uint8_t)(out[i] & tmp[i]) : (uint8_t)(out[i] | tmp[i]);
		}
		fa_free(tmp);
		return rc;
	}
	}
}

/* stat() of the indexed files, relative to an open handle on their folder:
 * files of one folder follow each other in a segment, so the path is
 * walked once per folder, not once per file (most of grep's time on a
 * large tree when it checks every file for changes). */
typedef struct statcache {
	int dirfd;
	char dir[4096];
	size_t dlen;
} statcache;

static int cached_stat(statcache *c, const char *path, struct stat *st)
{
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) : 0;
	if (dl >= sizeof c->dir)
		return stat(path, st);
	if (c->dirfd < 0 || dl != c->dlen || memcmp(c->dir, path, dl) != 0) {
		if (c->dirfd >= 0)
			close(c->dirfd);
		memcpy(c->dir, path, dl);
		c->dir[dl] = '\0';
		c->dlen = dl;
		c->dirfd = open(dl ? c->dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
		if (c->dirfd < 0)
			return -1;
	}
	return fstatat(c->dirfd, slash ? slash + 1 : path, st, 0);
}

/* Has the file changed on disk since it was indexed? */
static int changed(statcache *c, const ix_doc_info *di)
{
	struct stat st;
	const char *path = di->path && *di->path ? di->path : di->key;
	if (cached_stat(c, path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;   /* gone: nothing newer to read */
	return (uint64_t)st.st_size != di->size ||
	       (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != di->mtime_ns;
}

/* The file as it is now: from disk when it changed since indexing. */
static int file_text(ix_segment *s, uint32_t d, const ix_doc_info *di, fbuf *text, int is_changed,
                     int *fresh)
{
	*fresh = 0;
	const char *path = di->path && *di->path ? di->path : di->key;
	if (is_changed) {
		char *data;
		size_t len;
		if (fa_read_file(&data, &len, path, (size_t)1 << 30) == 0) {
			fbuf_reset(text);
			fbuf_append(text, data, len);
			fa_free(data);
			*fresh = 1;
			return text->err;
		}
		fa_err_clear();
	}
	fbuf_reset(text);
	return seg_doc_text(s, d, 0, di->text_len, text);
}

int fathom_grep(fathom_index *fx, const char *pattern, const fathom_grep_opts *opts,
                fathom_grep_cb cb, void *ctx, fathom_grep_stats *stats)
{
	fathom_grep_opts def = FATHOM_GREP_OPTS_INIT;
	fathom_grep_stats own;
	fa_err_clear();
	if (!fx || !pattern || !cb)
		return fa_err(FATHOM_EINVAL, "no index, pattern or callback");
	if (!opts)
		opts = &def;
	if (opts->version != FATHOM_GREP_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_grep_opts version %u, expected %u", opts->version,
		              FATHOM_GREP_OPTS_VERSION);
	if (!stats)
		stats = &own;
	memset(stats, 0, sizeof *stats);
	gsearch g;
	memset(&g, 0, sizeof g);
	g.o = opts;
	fa_arena a;
	fa_arena_init(&a, 16 * 1024, 0);
	fbuf text;
	fbuf_init(&text, 0);
	uint8_t *bits = NULL;
	uint32_t *docs = NULL;
	statcache sc;
	sc.dirfd = -1;
	sc.dlen = 0;
	int rc = compile(&g, pattern);
	g_query *q = NULL;
	/* -w only narrows what matches: the plan of the bare pattern holds */
	if (!rc)
		rc = g_plan(&a, pattern, strlen(pattern),
		            (opts->literal ? G_LITERAL : 0) | (opts->caseless ? G_CASELESS : 0), &q);
	if (!rc)
		stats->planned = q->op != GQ_ALL;
	ix_index *ix = fx->ix;
	for (size_t si = 0; si < ix_nsegments(ix) && !rc; si++) {
		ix_segment *s = ix_segment_at(ix, si);
		uint32_t nd = seg_ndocs(s);
		size_t nb = (size_t)nd / 8 + 1;
		fa_free(bits);
		fa_free(docs);
		bits = fa_malloc(nb);
		docs = fa_malloc(((size_t)nd + 1) * sizeof *docs);
		if (!bits || !docs) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
			break;
		}
		if ((rc = eval_bits(s, q, bits, nb, docs)))
			break;
		for (uint32_t d = 0; d < nd && !rc; d++) {
			if (seg_doc_is_deleted(s, d) || !seg_doc_has_trigrams(s, d))
				continue;
			ix_doc_info di;
			if ((rc = seg_doc(s, d, &di)))
				break;
			if (!path_ok(opts, &di))
				continue;
			stats->files++;
			/* A file that changed on disk is searched whatever the index says. */
			int fresh, cand = bits[d >> 3] >> (d & 7) & 1, is_changed = changed(&sc, &di);
			if (!cand && !is_changed)
				continue;
			stats->candidates++;
			if ((rc = file_text(s, d, &di, &text, is_changed, &fresh)))
				break;
			if ((rc = scan(&g, text.len ? (const char *)text.data : "", text.len)))
				break;
			if (g.nlines == 0)
				continue;
			stats->matched++;
			fathom_grep_file f = { di.key, di.path && *di.path ? di.path : di.key,
			                       text.len ? (const char *)text.data : "", text.len, g.lines,
			                       g.nlines, fresh };
			rc = cb(ctx, &f);
		}
	}
	if (sc.dirfd >= 0)
		close(sc.dirfd);
	fa_free(bits);
	fa_free(docs);
	fa_free(g.lines);
	fbuf_free(&text);
	fa_arena_free(&a);
	pcre2_match_context_free(g.mc);
	pcre2_match_data_free(g.md);
	pcre2_code_free(g.re);
	return rc;
}
