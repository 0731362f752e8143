/*
 * grep_api.c — the public entry points of fathom grep: the options
 * checked, the handle unwrapped, and the search (grep/search.c) run over
 * the internal index. fathom_grep_chunks makes grep a retrieval source:
 * its matching lines become chunk hits.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "grep/grep.h"
#include "query/query.h"

/* The options of a call (the defaults for NULL), or NULL with the error
 * in *rc. */
static const fathom_grep_opts *grep_opts(const fathom_grep_opts *opts,
                                         const fathom_grep_opts *def, int *rc)
{
	*rc = 0;
	if (!opts)
		return def;
	if (opts->version != FATHOM_GREP_OPTS_VERSION) {
		*rc = fa_err(FATHOM_EINVAL, "fathom_grep_opts version %u, expected %u", opts->version,
		             FATHOM_GREP_OPTS_VERSION);
		return NULL;
	}
	return opts;
}

typedef struct public_emit {
	fathom_grep_cb cb;
	void *ctx;
} public_emit;

static int emit_public(void *ctx, const g_file *r)
{
	public_emit *p = ctx;
	fathom_grep_file f = { r->key, r->path, r->text, r->text ? r->len : 0, r->lines, r->nlines,
	                       r->fresh };
	return p->cb(p->ctx, &f) ? 1 : 0;
}

int fathom_grep(fathom_index *fx, const char *pattern, const fathom_grep_opts *opts,
                fathom_grep_cb cb, void *ctx, fathom_grep_stats *stats)
{
	fathom_grep_opts def = FATHOM_GREP_OPTS_INIT;
	fa_err_clear();
	if (!cb)
		return fa_err(FATHOM_EINVAL, "no callback");
	if (!fx || !pattern)
		return fa_err(FATHOM_EINVAL, "no index, pattern or callback");
	/* the counts go to a struct of the current version, copied out as far
	 * as the caller's version goes */
	fathom_grep_stats all = FATHOM_GREP_STATS_INIT;
	int rc = stats ? fa_struct_check(FA_GREP_STATS, stats) : 0;
	if (rc)
		return rc;
	if (!(opts = grep_opts(opts, &def, &rc)))
		return rc;
	public_emit p = { cb, ctx };
	if ((rc = ix_check_mapped(fx->ix)) != 0)
		return rc;
	rc = ix_checked(fx->ix, g_search(fx->ix, pattern, opts, emit_public, &p, &all,
	                                 fx->flags & FATHOM_OPEN_CONFINE ? G_CONFINE : 0));
	if (stats)
		fa_struct_copy_out(FA_GREP_STATS, stats, &all);
	return rc;
}

int fathom_grep_explain(char **out, const char *pattern, const fathom_grep_opts *opts)
{
	fathom_grep_opts def = FATHOM_GREP_OPTS_INIT;
	fa_err_clear();
	if (!out || !pattern)
		return fa_err(FATHOM_EINVAL, "no pattern");
	*out = NULL;
	int rc;
	if (!(opts = grep_opts(opts, &def, &rc)))
		return rc;
	return g_explain(out, pattern, opts);
}

/* ---- grep as a retrieval source ------------------------------------------------------------ */

/* A chunk with matching lines: a candidate of the grep source, ranked by
 * its number of matching lines. Its receipt (the lines, the first as the
 * snippet) is made here from the file as read; the query module's explain
 * builds the hit. */
typedef struct gchunk {
	uint32_t seg, chunk;
	uint32_t nlines;          /* matching lines in the chunk */
	uint64_t order;           /* index order, for ties */
	const uint32_t *lines;    /* the first 64, in the arena */
	uint32_t n_lines;
	const char *snippet;      /* in the arena, or NULL */
	fathom_span hl;
	int has_hl;
	q_line_receipt rec;       /* set once the array stops moving */
} gchunk;

typedef struct hyb {
	fathom_index *fx;
	fa_arena *arena;          /* lines, snippets and receipts */
	gchunk *v;
	size_t n, cap;
	uint32_t snippet_bytes;
} hyb;

/* The snippet of a chunk: the line, cut at snippet_bytes on a character
 * boundary, with its match highlighted. */
static int hit_snippet(fa_arena *a, gchunk *g, const g_file *r, const fathom_grep_line *l,
                       uint32_t max)
{
	size_t n = (size_t)(l->end - l->start);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)r->text[l->start + n] & 0xc0) == 0x80)
			n--;
	}
	char *s = fa_arena_strndup(a, r->text + l->start, n);
	if (!s)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	g->snippet = s;
	uint64_t ms = l->match_start - l->start, me = l->match_end - l->start;
	if (ms < n) {
		g->hl.start = (uint32_t)ms;
		g->hl.len = (uint32_t)(FA_MIN(me, (uint64_t)n) - ms);
		g->has_hl = 1;
	}
	return 0;
}

static int emit_chunks(void *ctx, const g_file *r)
{
	hyb *x = ctx;
	ix_segment *s = ix_segment_at(x->fx->ix, r->seg);
	ix_doc_info di;
	int rc = seg_doc(s, r->doc, &di);
	if (rc)
		return rc;
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
		uint32_t nm = FA_MIN(g->nlines, 64u);
		uint32_t *ml = fa_arena_alloc(x->arena, nm * sizeof *ml);
		if (!ml)
			return fa_err(FATHOM_ENOMEM, "out of memory");
		for (uint32_t i = 0; i < nm; i++)
			ml[i] = r->lines[first + i].line;
		g->lines = ml;
		g->n_lines = nm;
		if (x->snippet_bytes && r->text &&
		    (rc = hit_snippet(x->arena, g, r, &r->lines[first], x->snippet_bytes)))
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

/* grep as a candidate list: the chunks with the most lines matching
 * pattern first (then index order), at most k, into list; their lines,
 * snippets and receipts in arena. */
static int grep_cands(fathom_index *fx, const char *pattern, const fathom_grep_opts *o,
                      uint32_t k, fa_arena *arena, q_cand_list *list)
{
	hyb x;
	memset(&x, 0, sizeof x);
	x.fx = fx;
	x.snippet_bytes = 240;
	x.arena = arena;
	int rc = g_search(fx->ix, pattern, o, emit_chunks, &x, NULL,
	                  G_KEEP_TEXT | (fx->flags & FATHOM_OPEN_CONFINE ? G_CONFINE : 0));
	if (!rc && x.n)
		qsort(x.v, x.n, sizeof *x.v, by_lines);
	size_t keep = rc ? 0 : FA_MIN(x.n, (size_t)k);
	for (size_t i = 0; i < keep && !rc; i++) {
		gchunk *g = &x.v[i];
		q_line_receipt *rec = fa_arena_alloc(arena, sizeof *rec);
		if (!rec) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
			break;
		}
		*rec = (q_line_receipt){ g->lines, g->n_lines, g->snippet, NULL };
		if (g->has_hl) {
			fathom_span *hl = fa_arena_alloc(arena, sizeof *hl);
			if (!hl) {
				rc = fa_err(FATHOM_ENOMEM, "out of memory");
				break;
			}
			*hl = g->hl;
			rec->highlight = hl;
		}
		rc = q_cands_add(list, arena, g->seg, g->chunk, g->nlines, rec);
	}
	fa_free(x.v);
	return rc;
}

int fathom_grep_chunks(fathom_results **out, fathom_index *fx, const char *pattern,
                       const fathom_grep_opts *opts, uint32_t k)
{
	fa_err_clear();
	if (!out || !fx || !pattern)
		return fa_err(FATHOM_EINVAL, "no output, index or pattern");
	*out = NULL;
	fathom_grep_opts def = FATHOM_GREP_OPTS_INIT;
	int rc;
	if (!(opts = grep_opts(opts, &def, &rc)))
		return rc;
	/* every matching line counts: -l and -c would hide them */
	fathom_grep_opts o = *opts;
	o.files_only = 0;
	o.count_only = 0;
	if ((rc = ix_check_mapped(fx->ix)) != 0)
		return rc;
	char *parsed = NULL;
	rc = fathom_grep_explain(&parsed, pattern, &o);
	fa_arena arena;
	fa_arena_init(&arena, 16 * 1024, 0);
	q_cand_list list = { &q_grep_source, NULL, 0, 0 };
	if (!rc)
		rc = grep_cands(fx, pattern, &o, k ? k : 100, &arena, &list);
	/* the query module's fuse and explain make the hits */
	if (!rc)
		rc = q_results_from(out, fx->ix, &list, (uint32_t)FA_MIN(list.n, (size_t)UINT32_MAX),
		                    parsed);
	if ((rc = ix_checked(fx->ix, rc)) != 0 && *out) {
		fathom_results_free(*out);
		*out = NULL;
	}
	fathom_free(parsed);
	fa_arena_free(&arena);
	return rc;
}

int api_grep_literal(void *ctx, const char *literal, size_t len, uint32_t k, fa_arena *a,
                     q_cand_list *out)
{
	fathom_index *fx = ctx;
	fathom_grep_opts o = FATHOM_GREP_OPTS_INIT;
	o.literal = 1;
	o.caseless = 1;
	o.threads = 1;          /* inside a search: the caller's thread alone */
	o.no_fresh_check = 1;   /* the index's text, as full text reads it */
	char *pat = fa_arena_strndup(a, literal, len);
	if (!pat)
		return fa_err(FATHOM_ENOMEM, "grep candidates");
	out->src = &q_grep_source;
	return grep_cands(fx, pat, &o, k, a, out);
}

/* ---- one pattern's matches within a line ---------------------------------------------------- */

struct fathom_grep_matcher {
	g_regex *re;
	g_matcher *m;
};

int fathom_grep_matcher_new(fathom_grep_matcher **out, const char *pattern,
                            const fathom_grep_opts *opts)
{
	fathom_grep_opts def = FATHOM_GREP_OPTS_INIT;
	fa_err_clear();
	if (!out || !pattern)
		return fa_err(FATHOM_EINVAL, "no output or pattern");
	*out = NULL;
	int rc;
	if (!(opts = grep_opts(opts, &def, &rc)))
		return rc;
	if (opts->boolean)
		return fa_err(FATHOM_EINVAL, "a boolean query is not one pattern");
	fathom_grep_matcher *m = fa_calloc(1, sizeof *m);
	if (!m)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	unsigned flags = (opts->literal ? G_LITERAL : 0) | (opts->caseless ? G_CASELESS : 0) |
	                 (opts->word ? G_WORD : 0) | G_MULTILINE;
	rc = g_regex_compile(&m->re, pattern, strlen(pattern), flags, "pattern", 0);
	if (!rc)
		rc = g_matcher_new(&m->m);
	if (rc) {
		fathom_grep_matcher_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int fathom_grep_matcher_next(fathom_grep_matcher *m, const char *text, size_t len, size_t from,
                             size_t *start, size_t *end)
{
	if (!m || (!text && len) || !start || !end || from > len)
		return fa_err(FATHOM_EINVAL, "no matcher, text or output");
	return g_regex_match(m->m, m->re, text ? text : "", len, from, start, end);
}

void fathom_grep_matcher_free(fathom_grep_matcher *m)
{
	if (!m)
		return;
	g_matcher_free(m->m);
	g_regex_free(m->re);
	fa_free(m);
}
