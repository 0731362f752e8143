/*
 * search.c — fathom grep's search: plan the pattern into a trigram query,
 * take the files of each segment that satisfy it, and verify them with
 * PCRE2 line by line, as grep does, on the library's thread pool.
 *
 * The documents of the index are cut into batches of G_BATCH consecutive
 * documents, an ordered pipeline over the pool (util/pool.h): the calling
 * thread produces the batches in index order, any worker reads and matches
 * the files of one, and the calling thread hands each batch's matching
 * files to the caller in production order. So output is deterministic
 * (index order, which is path order within a segment) whatever the number
 * of threads, and at most a window of batches is in flight, which bounds
 * the memory held by matched files waiting to be printed.
 *
 * A worker's per-file work: the cheap checks first (deleted, in scope, the
 * trigram query's verdict, and for a file the index rules out, whether it
 * changed since indexing: files.c), then the text read and the boolean
 * expression evaluated over it, each term matched at most once (scan.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>

#include "grep/grep.h"
#include "util/pool.h"

#define G_BATCH 128u             /* documents per batch */
#define G_MAX_THREADS 16u
#define G_MAX_REQUIRED 3

/* ---- the state of a search ------------------------------------------------------ */

typedef struct gterm {
	g_regex *re;
	int positive;          /* not under a NOT: its lines are reported */
	g_lit req[G_MAX_REQUIRED];   /* strings every match contains */
	uint32_t nreq;
} gterm;

typedef struct gfilter {
	const g_expr *x;
	g_regex *re;           /* GX_FILE */
} gfilter;

/* One slot of the pipeline: documents [d0, d1) of segment seg, and what
 * matched in them. */
typedef struct gbatch {
	size_t seg;
	uint32_t d0, d1;
	g_file *res;
	size_t nres, cap;
} gbatch;

struct gctx;

/* One worker thread's state (the calling thread's with a pool of none). */
typedef struct gworker {
	struct gctx *g;
	g_matcher *m;
	g_reader rd;
	g_lines *tl;           /* per term */
	g_lines merged;
	g_lines none;
	g_lines **src;         /* per term: the lines to merge */
	fathom_grep_stats st;
	int err;
} gworker;

typedef struct gctx {
	ix_index *ix;
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
	size_t nseg;
	uint8_t **cand;            /* per segment: the trigram query's bitmap */
	size_t nbatches;
	g_scope scope;
	int unscoped;              /* no path, glob, lang or file:/lang: filter */
	int progressive;           /* -l with one pattern: stop reading at a match */
	int by_doc;                /* a filter needs more than the path (lang) */
	/* the pipeline */
	gworker *workers;
	unsigned nworkers;
	gbatch *slots;
	size_t window;
	size_t next_seg;           /* the next batch to produce */
	uint32_t next_doc;
	g_emit_fn emit;
	void *emit_ctx;
} gctx;

/* ---- pattern compilation ---------------------------------------------------- */

/* Collect the leaves of x: terms by number, filters in order. */
static int compile_expr(gctx *g, const g_expr *x, int positive)
{
	int rc = 0;
	switch (x->op) {
	case GX_TERM: {
		gterm *t = &g->terms[x->term];
		if (!t->re) {
			const char *what = g->o->boolean ? "pattern in the query" : "pattern";
			unsigned flags = (x->literal ? G_LITERAL : 0) | (x->caseless > 0 ? G_CASELESS : 0);
			rc = g_regex_compile(&t->re, x->text, x->len,
			                     flags | (g->o->word ? G_WORD : 0) | G_MULTILINE, what, x->at);
			if (!rc)
				rc = g_required(g->arena, x->text, x->len, flags, t->req, G_MAX_REQUIRED,
				                &t->nreq);
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
			rc = g_regex_compile(&f->re, x->text, x->len, x->caseless > 0 ? G_CASELESS : 0,
			                     "file: regex", x->at);
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

/* ---- the expression over one file ------------------------------------------------ */

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
		size_t ms, me;
		int r = g_regex_match(w->m, g->filters[i].re, path, strlen(path), 0, &ms, &me);
		if (r < 0 && !w->err)
			w->err = r;
		return r > 0;
	}
	return 0;
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
	g_lines *l = &w->tl[t];
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
		uint32_t limit = gt->positive && g->lines_wanted ? g->line_limit : 1;
		int rc = g_scan(w->m, gt->re, f->text ? f->text : "", f->len, 0, limit, l);
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
static int merge_lines(gworker *w, g_lines **out)
{
	gctx *g = w->g;
	uint32_t nsrc = 0;
	for (uint32_t t = 0; t < g->nterms; t++)
		if (g->terms[t].positive && w->tl[t].state > 0)
			w->src[nsrc++] = &w->tl[t];
	if (nsrc <= 1) {
		w->none.n = 0;
		*out = nsrc ? w->src[0] : &w->none;
		return 0;
	}
	*out = &w->merged;
	return g_lines_merge(&w->merged, w->src, nsrc, g->line_limit);
}

/* ---- one file -------------------------------------------------------------------- */

static int batch_add(gbatch *b, const g_file *r)
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
			if (!g_scope_has_path(&g->scope, fp))
				return 0;
			w->st.files++;
			int fdfd = g_reader_dir(&w->rd, fp, &fname);
			struct stat st;
			if (fdfd == -1 || fstatat(fdfd, fname, &st, 0) != 0) {
				w->st.missing++;
				return 0;
			}
			if (!ix_stat_changed(&st, size, mtime))
				return 0;   /* as indexed, and the index rules it out */
			stat_done = 1;  /* changed: read it below */
		}
	}
	ix_doc_info di;
	if ((rc = seg_doc(s, d, &di)))
		return rc;
	if (!stat_done) {
		if (!g_scope_has_doc(&g->scope, &di))
			return 0;
		if (g->nfilters && eval_pre(w, g->expr, &di) == 0)
			return w->err;
		w->st.files++;
	}
	const char *path = di.path && *di.path ? di.path : di.key, *name;
	int dfd = g_reader_dir(&w->rd, path, &name);
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
		g_file r = { di.key, g_display_path(&g->scope, path), NULL, 0, NULL, 0,
		             ix_stat_changed(&st, di.size, di.mtime_ns), (uint32_t)b->seg, d, NULL };
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
		if (!ix_stat_changed(&st, di.size, di.mtime_ns))
			return 0;   /* as indexed, and the index rules it out */
	}
	size_t len = 0;
	int changed = 0, holds = 0;
	for (uint32_t t = 0; t < g->nterms; t++)
		w->tl[t].state = -1;
	if (g->progressive) {
		rc = g_read_first_match(&w->rd, dfd, name, &di, w->m, g->terms[0].re, &w->tl[0], &len,
		                        &changed, &holds);
		w->tl[0].state = holds;
	} else {
		rc = g_read_file(&w->rd, dfd, name, &di, &len, &changed);
	}
	if (rc == 2) {
		/* there but not read: reported, as grep reports it */
		w->st.skipped++;
		g_file r = { di.key, g_display_path(&g->scope, path), NULL, 0, NULL, 0, 0,
		             (uint32_t)b->seg, d, fa_strdup(w->rd.why) };
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
	gfile f = { &di, w->rd.buf, len };
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
	g_lines *lines;
	if ((rc = merge_lines(w, &lines)))
		return rc;
	g_file r = { di.key, g_display_path(&g->scope, path), NULL, len, NULL, lines->n, changed,
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
		r.text = w->rd.buf;
		w->rd.buf = NULL;
		w->rd.buf_cap = 0;
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

/* ---- the pipeline ------------------------------------------------------------------ */

static void batch_clear(gbatch *b)
{
	for (size_t i = 0; i < b->nres; i++) {
		fa_free(b->res[i].path);
		fa_free(b->res[i].text);
		fa_free(b->res[i].lines);
		fa_free(b->res[i].skipped);
	}
	fa_free(b->res);
	b->res = NULL;
	b->nres = b->cap = 0;
}

/* The next batch of documents, in index order. */
static int produce_batch(void *ctx, size_t slot)
{
	gctx *g = ctx;
	uint32_t nd = 0;
	while (g->next_seg < g->nseg &&
	       g->next_doc >= (nd = seg_ndocs(ix_segment_at(g->ix, g->next_seg)))) {
		g->next_seg++;
		g->next_doc = 0;
	}
	if (g->next_seg == g->nseg)
		return 0;
	gbatch *b = &g->slots[slot];
	b->seg = g->next_seg;
	b->d0 = g->next_doc;
	b->d1 = nd - b->d0 > G_BATCH ? b->d0 + G_BATCH : nd;
	g->next_doc = b->d1;
	return 1;
}

static int work_batch(void *ctx, unsigned worker, size_t slot)
{
	gctx *g = ctx;
	gworker *w = &g->workers[worker];
	gbatch *b = &g->slots[slot];
	ix_segment *s = ix_segment_at(g->ix, b->seg);
	int rc = 0;
	for (uint32_t d = b->d0; d < b->d1 && !rc; d++)
		rc = do_file(w, b, s, d, g->cand[b->seg]);
	return rc;
}

/* The batch's files to the caller, in order; a stop or an error from the
 * caller ends the search (the rest of the batch is dropped). */
static int emit_batch(void *ctx, size_t slot)
{
	gctx *g = ctx;
	gbatch *b = &g->slots[slot];
	int rc = 0;
	for (size_t i = 0; i < b->nres && !rc; i++) {
		const g_file *r = &b->res[i];
		if (r->skipped) {
			if (g->o->on_skip)
				g->o->on_skip(g->o->skip_ctx, r->path, r->skipped);
			continue;
		}
		int e = g->emit(g->emit_ctx, r);
		if (e)
			rc = e < 0 ? e : fa_err(FATHOM_EINTERRUPTED, "grep stopped by its callback");
	}
	batch_clear(b);
	return rc;
}

static int worker_init(gworker *w, gctx *g)
{
	memset(w, 0, sizeof *w);
	w->g = g;
	g_reader_init(&w->rd, &g->scope);
	size_t nt = g->nterms ? g->nterms : 1;
	w->tl = fa_calloc(nt, sizeof *w->tl);
	w->src = fa_calloc(nt, sizeof *w->src);
	if (!w->tl || !w->src)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	return g_matcher_new(&w->m);
}

static void worker_free(gworker *w)
{
	g_reader_free(&w->rd);
	for (uint32_t t = 0; w->tl && t < w->g->nterms; t++)
		fa_free(w->tl[t].v);
	fa_free(w->tl);
	fa_free(w->src);
	fa_free(w->merged.v);
	g_matcher_free(w->m);
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
static int make_expr(const fathom_grep_opts *o, fa_arena *a, const char *pattern, g_expr **out,
                     uint32_t *nterms)
{
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

/* 0: one thread per CPU; at most G_MAX_THREADS. */
static unsigned pick_threads(const fathom_grep_opts *o)
{
	if (o->threads == 0)
		return fa_cpu_count(G_MAX_THREADS);
	return o->threads > G_MAX_THREADS ? G_MAX_THREADS : o->threads;
}

static int prepare(gctx *g, const char *pattern, fathom_grep_stats *stats)
{
	int rc = make_expr(g->o, g->arena, pattern, &g->expr, &g->nterms);
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
	if ((rc = g_expr_plan(g->arena, g->expr, &q)))
		return rc;
	stats->planned = q->op != GQ_ALL;
	const fathom_grep_opts *o = g->o;
	g->lines_wanted = !o->files_only;
	g->progressive = o->files_only && g->nterms == 1 && g->expr->op == GX_TERM;
	g->keep_text = !o->files_only && !o->count_only;
	g->line_limit = o->files_only ? 1 : o->max_count;
	/* where files are, and where the user is */
	if ((rc = g_scope_init(&g->scope, ix_root(g->ix), o)))
		return rc;
	g->unscoped = !g->scope.nprefixes && !(o->glob && *o->glob) && !(o->lang && *o->lang) &&
	              !nf;
	g->by_doc = (o->lang && *o->lang) || nf;
	/* the candidates of each segment */
	g->nseg = ix_nsegments(g->ix);
	g->cand = fa_calloc(g->nseg ? g->nseg : 1, sizeof *g->cand);
	if (!g->cand)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	uint32_t *docs = NULL;
	for (size_t si = 0; si < g->nseg && !rc; si++) {
		ix_segment *s = ix_segment_at(g->ix, si);
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
		g->nbatches += (nd + G_BATCH - 1) / G_BATCH;
	}
	fa_free(docs);
	return rc;
}

/* The pool, the workers and the slots, and the pipeline run over them. */
static int run(gctx *g, fathom_grep_stats *stats)
{
	static const fa_pipeline fns = { produce_batch, work_batch, emit_batch };
	unsigned nthreads = pick_threads(g->o);
	if (nthreads > g->nbatches)
		nthreads = g->nbatches ? (unsigned)g->nbatches : 1;
	fa_pool *pool = NULL;
	int rc = fa_pool_new(&pool, nthreads);
	if (rc)
		return rc;
	unsigned started = fa_pool_threads(pool);
	g->nworkers = started ? started : 1;   /* none started: the calling thread works */
	g->window = (size_t)nthreads * 4 + 4;
	g->workers = fa_calloc(g->nworkers, sizeof *g->workers);
	g->slots = fa_calloc(g->window, sizeof *g->slots);
	unsigned inited = 0;
	if (!g->workers || !g->slots)
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
	for (; !rc && inited < g->nworkers; inited++)
		rc = worker_init(&g->workers[inited], g);
	if (!rc)
		rc = fa_pool_run(pool, g->window, &fns, g);
	fa_pool_free(pool);
	for (unsigned i = 0; i < inited; i++) {
		const fathom_grep_stats *ws = &g->workers[i].st;
		stats->files += ws->files;
		stats->candidates += ws->candidates;
		stats->matched += ws->matched;
		stats->changed += ws->changed;
		stats->missing += ws->missing;
		stats->skipped += ws->skipped;
		stats->bytes_read += ws->bytes_read;
		stats->lines += ws->lines;
		worker_free(&g->workers[i]);
	}
	stats->threads = started;
	fa_free(g->workers);
	for (size_t i = 0; g->slots && i < g->window; i++)
		batch_clear(&g->slots[i]);   /* produced, never emitted */
	fa_free(g->slots);
	return rc;
}

int g_search(ix_index *ix, const char *pattern, const fathom_grep_opts *opts, g_emit_fn emit,
             void *ctx, fathom_grep_stats *stats, unsigned flags)
{
	fathom_grep_stats own;
	if (!stats)
		stats = &own;
	memset(stats, 0, sizeof *stats);
	gctx g;
	memset(&g, 0, sizeof g);
	g.ix = ix;
	g.o = opts;
	g.emit = emit;
	g.emit_ctx = ctx;
	g.scope.root_fd = -1;
	fa_arena a;
	fa_arena_init(&a, 16 * 1024, 0);
	g.arena = &a;
	int rc = prepare(&g, pattern, stats);
	if ((flags & G_KEEP_TEXT) && !opts->files_only)
		g.keep_text = 1;
	/* an index with no root recorded (built from absolute paths) has no
	 * folder to be confined to */
	const char *root = ix_root(ix);
	if (!rc && (flags & G_CONFINE) && *root) {
		char real[PATH_MAX];
		if (!realpath(root, real))
			rc = fa_err(FATHOM_EIO, "%s: %s", root, strerror(errno));
		else if (!(g.scope.confine = fa_strdup(real)))
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
	}
	if (!rc)
		rc = run(&g, stats);
	for (size_t i = 0; g.cand && i < g.nseg; i++)
		fa_free(g.cand[i]);
	fa_free(g.cand);
	fa_free(g.scope.confine);
	g_scope_free(&g.scope);
	for (uint32_t t = 0; g.terms && t < g.nterms; t++)
		g_regex_free(g.terms[t].re);
	for (uint32_t f = 0; g.filters && f < g.nfilters; f++)
		g_regex_free(g.filters[f].re);
	fa_free(g.terms);
	fa_free(g.filters);
	fa_arena_free(&a);
	return rc;
}

int g_explain(char **out, const char *pattern, const fathom_grep_opts *opts)
{
	*out = NULL;
	fa_arena a;
	fa_arena_init(&a, 16 * 1024, 0);
	fbuf b;
	fbuf_init(&b, 0);
	g_expr *x;
	uint32_t nterms;
	g_query *q;
	int rc = make_expr(opts, &a, pattern, &x, &nterms);
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
