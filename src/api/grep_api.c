/*
 * grep_api.c — the public entry points of fathom grep: the options
 * checked, the handle unwrapped, and the search (grep/search.c) run over
 * the internal index. fathom_grep_chunks makes grep a retrieval source:
 * its matching lines become chunk hits.
 */
#include <stdlib.h>

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
	rc = g_search(fx->ix, pattern, opts, emit_public, &p, &all, 0);
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
static int hit_snippet(fa_arena *a, fathom_hit *h, const g_file *r, const fathom_grep_line *l,
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

static int emit_chunks(void *ctx, const g_file *r)
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
	int rc;
	if (!(opts = grep_opts(opts, &def, &rc)))
		return rc;
	/* every matching line counts: -l and -c would hide them */
	fathom_grep_opts o = *opts;
	o.files_only = 0;
	o.count_only = 0;
	char *parsed = NULL;
	rc = fathom_grep_explain(&parsed, pattern, &o);
	hyb x;
	memset(&x, 0, sizeof x);
	x.fx = fx;
	x.snippet_bytes = 240;
	if (!rc)
		rc = q_results_new(&x.res, parsed);
	fathom_free(parsed);
	if (!rc)
		rc = g_search(fx->ix, pattern, &o, emit_chunks, &x, NULL, 1);
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
