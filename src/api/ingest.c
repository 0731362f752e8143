/*
 * ingest.c — the ingest entry points of the public API. It joins the tree
 * walker and the JSONL reader (src/ingest) to the chunker (src/text) and the
 * index writer (src/index), and decides what is new, changed or gone.
 *
 * Ingest is an ordered pipeline on the library's thread pool (util/pool.h)
 * over batches of documents (ingest_batch): the calling thread produces a
 * batch (walked files, after looking each up in the index, or whole JSON
 * lines), worker threads read, parse, repair, chunk and analyse it (each
 * with its own analyser: a stemmer is not thread-safe), and the calling
 * thread hands the batches to the writer in production order, reporting
 * skips and progress as it goes. So callbacks come from the calling thread,
 * in input order, and the index does not depend on the number of threads.
 *
 * Incremental rule for files: a file whose size and mtime match the index is
 * not read; one whose size or mtime differ is read and hashed, and only
 * re-indexed when the hash differs too. Files under the given roots that no
 * longer exist are removed.
 */
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "ingest/ingest.h"
#include "util/pool.h"

const char *fathom_skip_reason_name(int reason)
{
	switch (reason) {
	case FATHOM_SKIP_VCS: return "version-control folder";
	case FATHOM_SKIP_IGNORED: return "ignored (.gitignore)";
	case FATHOM_SKIP_BINARY: return "binary";
	case FATHOM_SKIP_TOO_BIG: return "over the size cap";
	case FATHOM_SKIP_SYMLINK_LOOP: return "symlink loop or folder seen already";
	case FATHOM_SKIP_UNREADABLE: return "unreadable";
	case FATHOM_SKIP_SPECIAL: return "not a regular file";
	case FATHOM_SKIP_BAD_UTF8: return "not valid UTF-8 text";
	case FATHOM_SKIP_BAD_RECORD: return "bad JSON line";
	case FATHOM_SKIP_TOO_DEEP: return "nested too deep";
	default: return "skipped";
	}
}

/* ---- batches ----------------------------------------------------------------- */

/* One document of a batch, from its source to its analysis. produce (the
 * calling thread) says what it is; work (any thread) reads, repairs,
 * chunks and analyses it; emit (the calling thread, in order) hands it to
 * the writer and reports it. */
enum item_kind {
	IT_FILE,       /* a file to read */
	IT_DUP,        /* a file reached a second time through another root */
	IT_SAME,       /* a file whose size and mtime match the index */
	IT_LINE,       /* a JSON line */
	IT_BAD_LINE    /* a line over the length limit */
};

/* Analyse, chunk and add one document. text need not be valid UTF-8. */
typedef struct doc_src {
	const char *key, *path, *title, *url;
	const char *const *tags;
	size_t n_tags;
	const char *const *meta;
	size_t n_meta;
	const char *text;
	size_t len;
	uint64_t size;
	int64_t mtime_ns;
	uint64_t hash;
	int is_file;          /* from the tree walk: goes in the trigram index */
} doc_src;

typedef struct ingest_item {
	int kind;             /* enum item_kind */
	/* files (produce) */
	const struct file_ent *ent;
	ix_doc_state old;     /* what the index has under its key, when known */
	int known, upgrade, grep_only;
	/* JSON lines (produce) */
	size_t line_off, line_len; /* in the batch's lines */
	uint64_t line_no;
	char idbuf[32];
	void *root;           /* the parsed JSON, which jd points into */
	/* work */
	int rc;               /* an error: the run stops at this item */
	char *errmsg;         /* its message (work runs on another thread) */
	int skip;             /* a skip reason, 0 for none */
	int drop;             /* skipped, and a known document leaves the index */
	int same;             /* the content hash matches the index */
	int add;              /* a document to add */
	char *data;           /* the file's bytes */
	size_t len;
	uint64_t bytes;       /* bytes read, for the stats */
	const char *bad;      /* a bad line: why */
	doc_src src;
	fbuf text;            /* the repaired text */
	const char *title, *lang;
	int doc_kind;
	size_t n_invalid;
	ix_chunk_in *chunks;
	size_t n_chunks, cap_chunks;
	ix_doc_in in;         /* what the writer gets (meta set by emit) */
	uint32_t handle;      /* the document in the batch's analysis */
} ingest_item;

/* ingest_batch: the unit of parallel ingest. A batch is a run of documents
 * (files of a walk, or JSON lines) in input order, with their repaired text,
 * their chunks (byte ranges, lines, heading trails) and the analysis of
 * their fields (ix_analysis: terms and positions, each term once); a
 * worker fills it, then the writer appends it whole. It is also the unit an
 * embedder will consume: every chunk's text is item.text[chunk.byte_start,
 * chunk.byte_end). */
typedef struct ingest_batch {
	ingest_item *items;
	size_t n, cap;
	uint64_t bytes;       /* input bytes in the batch (for its size) */
	fbuf lines;           /* JSON lines, back to back */
	fa_arena mem;         /* titles, heading trails, parsed JSON strings */
	ix_analysis *an;      /* NULL when nothing is analysed (fathom_chunk_paths) */
} ingest_batch;

/* A batch ends at this many documents or input bytes, whichever comes
 * first: enough to amortise the hand-over, small enough that a window of
 * them stays a few MiB. */
#define BATCH_DOCS 64
#define BATCH_BYTES ((uint64_t)512 << 10)
/* Batches in flight per worker thread. */
#define BATCHES_PER_THREAD 4

/* State shared by one ingest call. */
typedef struct ingest_run {
	fathom_index *fx;
	const fathom_ingest_opts *opts;
	fathom_ingest_stats *st;
	double t0, last_progress;
	uint64_t bytes_total;
	const char **meta;    /* run meta + document meta */
	size_t cap_meta;
	int stop;             /* a callback asked to stop */
	fathom_ingest_opts own_opts;   /* the defaults, when the caller gave none */
	fathom_ingest_stats own_stats; /* the counts, of the current version */
	fathom_ingest_stats *out_stats; /* the caller's, filled from own_stats as
	                                 * far as its version goes; or NULL */
	fathom_chunk_cb chunk_cb; /* set: fathom_chunk_paths, nothing is indexed */
	void *chunk_ctx;
	/* the pipeline */
	fa_pool *pool;
	text_analyzer **ans;  /* one per worker ([0] is fx->an without workers) */
	size_t n_ans;
	int own_ans;          /* ans[] were made for this run */
	ingest_batch *batches; /* the ring of slots */
	size_t window;
} ingest_run;

static void skip(ingest_run *r, const char *path, int reason)
{
	r->st->files_skipped++;
	if (reason > 0 && reason < (int)FA_ARRAY_LEN(r->st->skipped_by_reason))
		r->st->skipped_by_reason[reason]++;
	if (r->opts->on_skip)
		r->opts->on_skip(r->opts->cb_ctx, path, reason);
}

static int progress(ingest_run *r, int force)
{
	if (!r->opts->progress)
		return 0;
	double now = fa_now();
	if (!force && now - r->last_progress < 0.2)
		return 0;
	r->last_progress = now;
	r->st->elapsed_sec = now - r->t0;
	double eta = -1;
	if (r->bytes_total && r->st->bytes_read && r->st->elapsed_sec > 0.5) {
		double rate = (double)r->st->bytes_read / r->st->elapsed_sec;
		uint64_t left = r->bytes_total > r->st->bytes_read ? r->bytes_total - r->st->bytes_read : 0;
		eta = (double)left / rate;
	}
	if (r->opts->progress(r->opts->cb_ctx, r->st, r->bytes_total, eta)) {
		r->stop = 1;
		return fa_err(FATHOM_EINTERRUPTED, "stopped by the progress callback");
	}
	return 0;
}

typedef struct collect_ctx {
	ingest_item *it;
	fa_arena *mem;
} collect_ctx;

static int collect_chunk(void *ctx, const text_chunk *c)
{
	collect_ctx *cc = ctx;
	ingest_item *it = cc->it;
	if (fa_grow((void **)&it->chunks, &it->cap_chunks, it->n_chunks + 1, sizeof *it->chunks))
		return FATHOM_ENOMEM;
	ix_chunk_in *ci = &it->chunks[it->n_chunks++];
	ci->byte_start = c->byte_start;
	ci->byte_end = c->byte_end;
	ci->line_start = c->line_start;
	ci->line_end = c->line_end;
	ci->headings = NULL;
	ci->headings_len = 0;
	if (c->headings_len) {
		/* The chunker's heading buffer is only valid during this call. */
		char *h = fa_arena_strndup(cc->mem, c->headings, c->headings_len);
		if (!h)
			return fa_err(FATHOM_ENOMEM, "out of memory");
		ci->headings = h;
		ci->headings_len = c->headings_len;
	}
	return 0;
}

static int check_meta(const char *kv)
{
	const char *eq = kv ? strchr(kv, '=') : NULL;
	if (!eq || eq == kv)
		return fa_err(FATHOM_EINVAL, "metadata \"%s\" is not KEY=VALUE", kv ? kv : "");
	return 0;
}

/* The one check of fathom_ingest_opts (of the current version); the
 * bounds are api.h's, published by fathom_limit(). */
static int check_opts(const fathom_ingest_opts *o)
{
	if (o->ident_min_len > API_IDENT_MIN_LEN_MAX || o->ident_max > API_IDENT_MAX)
		return fa_err(FATHOM_EINVAL, "identifier limits: a minimum length up to %u and up to "
		              "%u per chunk", API_IDENT_MIN_LEN_MAX, API_IDENT_MAX);
	if (o->chunk_target < API_CHUNK_MIN || o->chunk_max < o->chunk_target ||
	    o->chunk_max > API_CHUNK_MAX || o->chunk_overlap >= o->chunk_target)
		return fa_err(FATHOM_EINVAL, "chunk sizes must satisfy %u <= target <= max <= %u and "
		              "overlap < target", API_CHUNK_MIN, API_CHUNK_MAX);
	if (o->n_meta > API_MAX_META)
		return fa_err(FATHOM_EINVAL, "at most %u metadata tags", API_MAX_META);
	for (size_t i = 0; i < o->n_meta; i++) {
		if (check_meta(o->meta[i]))
			return FATHOM_EINVAL;
		if (strlen(o->meta[i]) > API_MAX_META_BYTES)
			return fa_err(FATHOM_EINVAL, "metadata \"%.64s...\" is longer than %u bytes",
			              o->meta[i], API_MAX_META_BYTES);
	}
	return 0;
}

/* Repair, detect, title and chunk the item's document (it->src). */
static int prepare_doc(ingest_run *r, ingest_batch *b, ingest_item *it)
{
	const fathom_ingest_opts *o = r->opts;
	const doc_src *d = &it->src;
	fbuf_reset(&it->text);
	int rc = text_utf8_repair(&it->text, d->text, d->len, &it->n_invalid);
	if (rc)
		return rc;
	it->lang = "text";
	it->doc_kind = DOC_TEXT;
	if (d->path && *d->path)
		it->doc_kind = text_detect_kind(d->path, &it->lang);
	const char *text = it->text.len ? (const char *)it->text.data : "";
	size_t len = it->text.len;

	it->title = d->title;
	if ((!it->title || !*it->title) && it->doc_kind == DOC_MARKDOWN) {
		size_t tlen = 0;
		const char *t = text_markdown_title(text, len, &tlen);
		if (t && tlen && !(it->title = fa_arena_strndup(&b->mem, t, tlen)))
			return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	if (!it->title || !*it->title) {
		const char *base = d->path && *d->path ? strrchr(d->path, '/') : NULL;
		it->title = base ? base + 1 : (d->path && *d->path ? d->path : "");
	}
	text_chunk_opts co = { o->chunk_target, o->chunk_overlap, o->chunk_max };
	it->n_chunks = 0;
	collect_ctx cc = { it, &b->mem };
	return text_chunk_doc(text, len, it->doc_kind, &co, collect_chunk, &cc);
}

/* Prepare the item's document and, when indexing, analyse it. */
static int analyse_item(ingest_run *r, ingest_batch *b, ingest_item *it, text_analyzer *an)
{
	int rc = prepare_doc(r, b, it);
	if (rc)
		return rc;
	const doc_src *d = &it->src;
	it->in = (ix_doc_in){
		.key = d->key,
		.path = d->path ? d->path : "",
		.title = it->title,
		.url = d->url ? d->url : "",
		.lang = it->lang,
		.kind = (uint8_t)it->doc_kind,
		.tags = d->tags,
		.n_tags = d->n_tags,
		.size = d->size,
		.mtime_ns = d->mtime_ns,
		.content_hash = d->hash,
		.text = it->text.len ? (const char *)it->text.data : "",
		.text_len = it->text.len,
		.chunks = it->chunks,
		.n_chunks = it->n_chunks,
		.ident_min_len = r->opts->ident_min_len,
		.ident_max = r->opts->ident_max,
		.trigrams = d->is_file,
		.raw = d->is_file ? d->text : NULL,   /* trigrams of the bytes grep reads */
		.raw_len = d->is_file ? d->len : 0,
	};
	it->add = 1;
	return b->an ? ix_analyse_doc(b->an, an, &it->in, &it->handle) : 0;
}

/* Hand an analysed item to the writer (or its chunks to the chunk callback). */
static int add_item(ingest_run *r, ingest_batch *b, ingest_item *it)
{
	const fathom_ingest_opts *o = r->opts;
	const doc_src *d = &it->src;
	r->st->invalid_utf8 += it->n_invalid;
	int rc = 0;
	if (r->chunk_cb) {
		for (size_t i = 0; i < it->n_chunks && !rc; i++) {
			const ix_chunk_in *c = &it->chunks[i];
			fathom_chunk_info ci = {
				.path = d->path, .title = it->title, .lang = it->lang, .order = (uint32_t)i,
				.line_start = c->line_start, .line_end = c->line_end,
				.byte_start = c->byte_start, .byte_end = c->byte_end,
				.headings = c->headings ? c->headings : "",
				.text = it->in.text + c->byte_start, .len = c->byte_end - c->byte_start,
			};
			if (r->chunk_cb(r->chunk_ctx, &ci))
				rc = fa_err(FATHOM_EINTERRUPTED, "stopped by the chunk callback");
		}
	} else {
		size_t nm = o->n_meta + d->n_meta;
		if (fa_grow((void **)&r->meta, &r->cap_meta, nm + 1, sizeof *r->meta))
			return FATHOM_ENOMEM;
		for (size_t i = 0; i < o->n_meta; i++)
			r->meta[i] = o->meta[i];
		for (size_t i = 0; i < d->n_meta; i++)
			r->meta[o->n_meta + i] = d->meta[i];
		it->in.meta = r->meta;
		it->in.n_meta = nm;
		rc = ix_add_analysed(r->fx->ix, &it->in, b->an, it->handle);
	}
	if (!rc) {
		r->st->docs_added++;
		r->st->chunks_added += it->n_chunks;
	}
	return rc;
}

/* Free what an item holds beyond its reusable buffers. */
static void item_clear(ingest_item *it)
{
	fa_free(it->data);
	it->data = NULL;
	jsonl_doc_release(it->root);
	it->root = NULL;
}

static void batch_reset(ingest_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		item_clear(&b->items[i]);
	b->n = 0;
	b->bytes = 0;
	fbuf_reset(&b->lines);
	fa_arena_reset(&b->mem);
	if (b->an)
		ix_analysis_reset(b->an);
}

static void batch_free(ingest_batch *b)
{
	batch_reset(b);
	for (size_t i = 0; i < b->cap; i++) {
		fbuf_free(&b->items[i].text);
		fa_free(b->items[i].chunks);
	}
	fa_free(b->items);
	fbuf_free(&b->lines);
	fa_arena_free(&b->mem);
	ix_analysis_free(b->an);
}

/* A fresh item at the end of the batch (its buffers kept from last time). */
static ingest_item *batch_push(ingest_batch *b, int kind)
{
	if (b->n == b->cap) {
		size_t old = b->cap;
		if (fa_grow((void **)&b->items, &b->cap, b->n + 1, sizeof *b->items))
			return NULL;
		memset(b->items + old, 0, (b->cap - old) * sizeof *b->items);
		for (size_t i = old; i < b->cap; i++)
			fbuf_init(&b->items[i].text, 0);
	}
	ingest_item *it = &b->items[b->n++];
	fbuf text = it->text;
	ix_chunk_in *chunks = it->chunks;
	size_t cap_chunks = it->cap_chunks;
	memset(it, 0, sizeof *it);
	it->text = text;
	it->chunks = chunks;
	it->cap_chunks = cap_chunks;
	it->kind = kind;
	return it;
}

static int batch_full(const ingest_batch *b)
{
	return b->n >= BATCH_DOCS || b->bytes >= BATCH_BYTES;
}

/* An error in work is kept with its message, for emit to raise in order. */
static void item_fail(ingest_batch *b, ingest_item *it, int rc)
{
	it->rc = rc;
	const char *m = fathom_errmsg();
	it->errmsg = fa_arena_strndup(&b->mem, m, strlen(m));
}

static int item_error(const ingest_item *it)
{
	return it->errmsg ? fa_err(it->rc, "%s", it->errmsg) : it->rc;
}

/* Start a run. opts and st may be NULL (defaults; no stats wanted). The run
 * counts in its own stats (r->st) and copies them to st at the end. */
static int run_init(ingest_run *r, fathom_index *fx, const fathom_ingest_opts *opts,
                    fathom_ingest_stats *st)
{
	fathom_ingest_opts def = FATHOM_INGEST_OPTS_INIT;
	memset(r, 0, sizeof *r);
	r->own_opts = def;
	if (!opts)
		opts = &r->own_opts;
	r->opts = opts;
	r->st = &r->own_stats;
	r->st->version = FATHOM_INGEST_STATS_VERSION;
	fa_err_clear();
	if (st) {
		int rc = fa_struct_check(FA_INGEST_STATS, st);
		if (rc)
			return rc;
		r->out_stats = st;
		fa_struct_copy_out(FA_INGEST_STATS, st, r->st);   /* zero, whatever follows */
	}
	if (fx && !(fx->flags & (FATHOM_OPEN_WRITE | FATHOM_OPEN_CREATE)))
		return fa_err(FATHOM_EREADONLY, "index opened read-only");
	if (opts->version >= 1 && opts->version <= 3) {
		/* a caller built before version 2 (3, 4): its struct ends before
		 * the identifier limits (the grep settings, threads), which take
		 * their defaults */
		static const size_t ends[] = { offsetof(fathom_ingest_opts, ident_min_len),
		                               offsetof(fathom_ingest_opts, grep_max_file_size),
		                               offsetof(fathom_ingest_opts, threads) };
		memcpy(&r->own_opts, opts, ends[opts->version - 1]);
		r->own_opts.version = FATHOM_INGEST_OPTS_VERSION;
		opts = r->opts = &r->own_opts;
	}
	if (opts->version != FATHOM_INGEST_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_ingest_opts version %u, expected %u",
		              opts->version, FATHOM_INGEST_OPTS_VERSION);
	int rc = check_opts(opts);
	if (rc)
		return rc;
	r->fx = fx;
	r->t0 = r->last_progress = fa_now();
	return 0;
}

static int batch_init(ingest_run *r, ingest_batch *b)
{
	memset(b, 0, sizeof *b);
	fbuf_init(&b->lines, 0);
	fa_arena_init(&b->mem, 64 * 1024, 0);
	return r->fx ? ix_analysis_new(&b->an) : 0;
}

/* The pool, one analyser per worker, and the ring of batches. threads
 * (0: one per CPU) worker threads read and analyse; with one, the calling
 * thread does everything, as the sequential reference. */
static int run_start_pool(ingest_run *r)
{
	unsigned n = r->opts->threads ? r->opts->threads : fa_cpu_count(0);
	int rc = fa_pool_new(&r->pool, n > 1 ? FA_MIN(n, FA_POOL_MAX_THREADS) : 0);
	if (rc)
		return rc;
	unsigned workers = fa_pool_threads(r->pool);
	r->n_ans = workers ? workers : 1;
	r->window = workers ? (size_t)workers * BATCHES_PER_THREAD : 1;
	r->ans = fa_calloc(r->n_ans, sizeof *r->ans);
	r->batches = fa_calloc(r->window, sizeof *r->batches);
	if (!r->ans || !r->batches)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	for (size_t i = 0; i < r->window; i++)
		if ((rc = batch_init(r, &r->batches[i])) != 0)
			return rc;
	if (!r->fx)
		return 0;   /* fathom_chunk_paths: nothing to analyse */
	if (!workers) {
		r->ans[0] = r->fx->an;
		return 0;
	}
	/* A stemmer is not thread-safe: each worker has its own. */
	r->own_ans = 1;
	for (size_t i = 0; i < r->n_ans; i++)
		if ((rc = text_analyzer_new(&r->ans[i], ix_stem_language(r->fx->ix))) != 0)
			return rc;
	return 0;
}

/* Run an ordered pipeline over the ring of batches. */
static int run_pipeline(ingest_run *r, const fa_pipeline *fns, void *ctx)
{
	int rc = r->pool ? 0 : run_start_pool(r);
	if (!rc)
		rc = fa_pool_run(r->pool, r->window, fns, ctx);
	for (size_t i = 0; i < r->window; i++)
		batch_reset(&r->batches[i]);   /* what was produced and never emitted */
	return rc;
}

static void run_free(ingest_run *r)
{
	r->st->elapsed_sec = fa_now() - r->t0;
	if (r->out_stats)
		fa_struct_copy_out(FA_INGEST_STATS, r->out_stats, r->st);
	fa_free(r->meta);
	if (r->batches)
		for (size_t i = 0; i < r->window; i++)
			batch_free(&r->batches[i]);
	fa_free(r->batches);
	if (r->own_ans)
		for (size_t i = 0; i < r->n_ans; i++)
			text_analyzer_free(r->ans[i]);
	fa_free(r->ans);
	fa_pool_free(r->pool);
}

/* ---- files ------------------------------------------------------------------ */

typedef struct file_ent {
	char *path;           /* as walked, from the current folder */
	char *key;            /* in the index: relative to its root folder */
	uint64_t size;
	int64_t mtime_ns;
} file_ent;

typedef struct walk_ctx {
	ingest_run *r;
	file_ent *ents;
	size_t n, cap;
	fa_arena names;
	const char *rebase;   /* prefix of relative keys ("": none) */
} walk_ctx;

/* "./a/b" -> "a/b"; "a//b" -> "a/b"; "a/" -> "a". In place. */
static void normalize_path(char *p)
{
	char *w = p;
	const char *s = p;
	while (s[0] == '.' && s[1] == '/' && s[2])
		s += 2;
	for (; *s; s++) {
		if (*s == '/' && w > p && w[-1] == '/')
			continue;
		*w++ = *s;
	}
	while (w > p + 1 && w[-1] == '/')
		w--;
	*w = '\0';
}

/* The key of a path walked from the current folder: the path resolved
 * against rebase when relative. In names. */
static char *rebased(fa_arena *names, const char *rebase, const char *path)
{
	if (!*rebase || path[0] == '/')
		return fa_arena_strndup(names, path, strlen(path));
	char *k = fa_path_resolve(rebase, path);
	char *out = k ? fa_arena_strndup(names, k, strlen(k)) : NULL;
	fa_free(k);
	return out;
}

static int on_file(void *ctx, const walk_entry *e)
{
	walk_ctx *w = ctx;
	if (fa_grow((void **)&w->ents, &w->cap, w->n + 1, sizeof *w->ents))
		return FATHOM_ENOMEM;
	char *p = fa_arena_strndup(&w->names, e->path, strlen(e->path));
	if (!p)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	normalize_path(p);
	char *k = *w->rebase ? rebased(&w->names, w->rebase, p) : p;
	if (!k)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	w->ents[w->n].path = p;
	w->ents[w->n].key = k;
	w->ents[w->n].size = e->size;
	w->ents[w->n].mtime_ns = e->mtime_ns;
	w->n++;
	w->r->bytes_total += e->size;
	return 0;
}

static void on_walk_skip(void *ctx, const char *path, int reason)
{
	walk_ctx *w = ctx;
	skip(w->r, path, reason);
}

/* produce: what to do with one walked file, decided on the calling thread
 * (the index is looked up there). */
static int plan_file(ingest_run *r, ingest_batch *b, const file_ent *e, fa_strmap *seen)
{
	const fathom_ingest_opts *o = r->opts;
	int is_new;
	if (!fa_strmap_upsert(seen, e->key, strlen(e->key), &is_new))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	ingest_item *it = batch_push(b, IT_FILE);
	if (!it)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	it->ent = e;
	if (!is_new) {
		it->kind = IT_DUP;   /* the same file reached through two roots */
		return 0;
	}
	/* Over the full-text size cap (or all of them, grep_only): for grep alone. */
	it->grep_only = r->fx && (o->grep_only || (o->max_file_size && e->size > o->max_file_size));
	int rc = r->fx ? ix_doc_lookup(r->fx->ix, e->key, &it->old) : FATHOM_ENOTFOUND;
	if (rc && rc != FATHOM_ENOTFOUND)
		return rc;
	it->known = rc == 0;
	/* A document indexed for grep alone that may now be indexed in full
	 * is read again; a full one serves grep as well and stays. */
	it->upgrade = it->known && it->old.grep_only && !it->grep_only;
	if (it->known && !it->upgrade && it->old.size == e->size && it->old.mtime_ns == e->mtime_ns) {
		it->kind = IT_SAME;
		return 0;
	}
	b->bytes += e->size;
	return 0;
}

/* work: read, check and analyse one file. Skips and unchanged contents are
 * recorded for emit to report. */
static int read_file(ingest_run *r, ingest_batch *b, ingest_item *it, text_analyzer *an)
{
	const fathom_ingest_opts *o = r->opts;
	const file_ent *e = it->ent;
	uint64_t cap = it->grep_only ? FA_MAX(o->grep_max_file_size, o->max_file_size) : o->max_file_size;
	int rc = fa_read_file(&it->data, &it->len, e->path, cap ? cap : SIZE_MAX);
	if (rc == FATHOM_ETOOBIG) {
		it->skip = FATHOM_SKIP_TOO_BIG;
		it->drop = 1;
		return 0;
	}
	if (rc) {
		it->skip = FATHOM_SKIP_UNREADABLE;
		return 0;
	}
	it->bytes = it->len;
	if (walk_looks_binary((const unsigned char *)it->data, it->len)) {
		/* A file that turned binary leaves the index. */
		it->skip = FATHOM_SKIP_BINARY;
		it->drop = 1;
		return 0;
	}
	uint64_t h = fa_hash64(it->data, it->len, 0);
	if (it->known && !it->upgrade && it->old.content_hash == h && it->old.size == it->len) {
		it->same = 1;
		return 0;
	}
	if (it->grep_only) {
		/* For grep alone: its bytes go to the trigram index, the document
		 * records its path, language, size and mtime, and no text or
		 * chunks are stored (fathom grep reads files from disk). */
		const char *lang = "text";
		int kind = text_detect_kind(e->key, &lang);
		const char *base = strrchr(e->key, '/');
		it->in = (ix_doc_in){
			.key = e->key, .path = e->key, .title = base ? base + 1 : e->key, .url = "",
			.lang = lang, .kind = (uint8_t)kind, .size = it->len, .mtime_ns = e->mtime_ns,
			.content_hash = h, .text = "", .text_len = 0, .trigrams = 1, .grep_only = 1,
			.raw = it->data, .raw_len = it->len,
		};
		it->add = 1;
		return ix_analyse_doc(b->an, an, &it->in, &it->handle);
	}
	it->src = (doc_src){
		.key = e->key, .path = e->key, .text = it->data, .len = it->len,
		.size = it->len, .mtime_ns = e->mtime_ns, .hash = h, .is_file = 1,
	};
	return analyse_item(r, b, it, an);
}

/* emit: report one file and hand it to the writer, as a sequential run
 * would have at this point. */
static int emit_file(ingest_run *r, ingest_batch *b, ingest_item *it)
{
	const file_ent *e = it->ent;
	r->st->files_seen++;
	if (it->kind == IT_DUP)
		return 0;
	if (it->kind == IT_SAME) {
		r->st->files_unchanged++;
		return 0;
	}
	if (it->rc)
		return item_error(it);
	if (it->skip == FATHOM_SKIP_UNREADABLE || it->skip == FATHOM_SKIP_TOO_BIG) {
		skip(r, e->path, it->skip);
		return it->drop && it->known ? ix_delete_doc(r->fx->ix, e->key) : 0;
	}
	r->st->bytes_read += it->bytes;
	if (it->skip) {
		skip(r, e->path, it->skip);
		return it->drop && it->known ? ix_delete_doc(r->fx->ix, e->key) : 0;
	}
	if (it->same) {
		r->st->files_unchanged++;
		return 0;
	}
	int rc = add_item(r, b, it);
	if (!rc) {
		r->st->files_indexed++;
		if (it->grep_only)
			r->st->files_grep_only++;
	}
	return rc;
}

typedef struct files_ctx {
	ingest_run *r;
	const walk_ctx *w;
	fa_strmap *seen;
	size_t next;          /* the next walked file to produce */
} files_ctx;

static int files_produce(void *ctx, size_t slot)
{
	files_ctx *fc = ctx;
	ingest_batch *b = &fc->r->batches[slot];
	batch_reset(b);
	while (fc->next < fc->w->n && !batch_full(b)) {
		int rc = plan_file(fc->r, b, &fc->w->ents[fc->next++], fc->seen);
		if (rc)
			return rc;
	}
	return b->n > 0;
}

static int files_work(void *ctx, unsigned worker, size_t slot)
{
	files_ctx *fc = ctx;
	ingest_batch *b = &fc->r->batches[slot];
	for (size_t i = 0; i < b->n; i++) {
		ingest_item *it = &b->items[i];
		if (it->kind != IT_FILE)
			continue;
		int rc = read_file(fc->r, b, it, fc->r->ans[worker]);
		if (rc) {
			item_fail(b, it, rc);
			break;   /* the run stops there */
		}
	}
	return 0;
}

static int files_emit(void *ctx, size_t slot)
{
	files_ctx *fc = ctx;
	ingest_batch *b = &fc->r->batches[slot];
	for (size_t i = 0; i < b->n; i++) {
		int rc = emit_file(fc->r, b, &b->items[i]);
		item_clear(&b->items[i]);
		if (!rc)
			rc = progress(fc->r, 0);
		if (rc)
			return rc;
	}
	return 0;
}

typedef struct gone_ctx {
	ingest_run *r;
	char **roots;
	size_t n_roots;
	const fa_strmap *seen;
	char **gone;
	size_t n_gone, cap_gone;
	fa_arena *names;
} gone_ctx;

static int under_root(const char *key, const char *root)
{
	size_t n = strlen(root);
	if (n == 0 || strcmp(root, ".") == 0)
		return key[0] != '/';
	if (strcmp(root, "/") == 0)
		return key[0] == '/';
	return strncmp(key, root, n) == 0 && (key[n] == '\0' || key[n] == '/');
}

static int find_gone(void *ctx, const char *key)
{
	gone_ctx *g = ctx;
	if (fa_strmap_find(g->seen, key, strlen(key)))
		return 0;
	int under = 0;
	for (size_t i = 0; i < g->n_roots && !under; i++)
		under = under_root(key, g->roots[i]);
	if (!under)
		return 0;
	/* Only documents that came from files (they have an mtime); JSONL
	 * documents whose id looks like a path are left alone. */
	ix_doc_state ds;
	if (ix_doc_lookup(g->r->fx->ix, key, &ds) != 0 || ds.mtime_ns == 0)
		return 0;
	if (fa_grow((void **)&g->gone, &g->cap_gone, g->n_gone + 1, sizeof *g->gone))
		return FATHOM_ENOMEM;
	g->gone[g->n_gone] = fa_arena_strndup(g->names, key, strlen(key));
	if (!g->gone[g->n_gone])
		return fa_err(FATHOM_ENOMEM, "out of memory");
	g->n_gone++;
	return 0;
}

/* How keys of relative paths walked from here are rooted. The first
 * indexing of relative paths records the current folder as the index's
 * root; later runs from elsewhere prefix their relative paths so keys stay
 * relative to it: *rebase "sub/dir" from a subfolder, the absolute current
 * folder from outside it, NULL from the root itself. */
static int key_rebase(fathom_index *fx, const char *const *paths, size_t n_paths, char **rebase)
{
	*rebase = NULL;
	int relative = 0;
	for (size_t i = 0; i < n_paths; i++)
		relative |= paths[i][0] != '/';
	if (!relative)
		return 0;
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return fa_err(FATHOM_EIO, "cannot tell the current folder: %s", strerror(errno));
	const char *root = ix_root(fx->ix);
	if (!*root)
		return ix_set_root(fx->ix, cwd);
	if (strcmp(root, cwd) == 0)
		return 0;
	size_t rl = strlen(root);
	if (strcmp(root, "/") == 0)
		*rebase = fa_strdup(cwd + 1);
	else if (strncmp(cwd, root, rl) == 0 && cwd[rl] == '/')
		*rebase = fa_strdup(cwd + rl + 1);
	else
		*rebase = fa_strdup(cwd);
	return *rebase ? 0 : fa_err(FATHOM_ENOMEM, "out of memory");
}

static int walk_and_ingest(fathom_index *fx, const char *const *paths, size_t n_paths,
                           const fathom_ingest_opts *opts, fathom_ingest_stats *st,
                           fathom_chunk_cb chunk_cb, void *chunk_ctx)
{
	ingest_run r;
	int rc = run_init(&r, fx, opts, st);
	if (rc)
		return rc;
	opts = r.opts;
	st = r.st;
	r.chunk_cb = chunk_cb;
	r.chunk_ctx = chunk_ctx;
	walk_ctx w = { .r = &r, .rebase = "" };
	fa_arena_init(&w.names, 256 * 1024, 0);
	char *rebase = NULL;
	fa_strmap seen;
	fa_strmap_init(&seen);
	char **roots = fa_calloc(n_paths ? n_paths : 1, sizeof *roots);
	gone_ctx g = { .r = &r, .roots = roots, .n_roots = n_paths, .seen = &seen, .names = &w.names };
	if (!roots) {
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
		goto cleanup;
	}

	/* 0. Where relative keys are rooted: the index's root folder. */
	if (fx && (rc = key_rebase(fx, paths, n_paths, &rebase)) != 0)
		goto cleanup;
	if (rebase)
		w.rebase = rebase;
	/* Files over the full-text cap are still walked when grep takes them. */
	uint64_t walk_max = opts->max_file_size;
	if (fx && walk_max && opts->grep_max_file_size)
		walk_max = FA_MAX(walk_max, opts->grep_max_file_size);

	/* 1. Walk: list the candidate files (so progress can show an ETA). */
	for (size_t i = 0; i < n_paths && !rc; i++) {
		char *given = fa_arena_strndup(&w.names, paths[i], strlen(paths[i]));
		if (!given) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
			break;
		}
		normalize_path(given);
		roots[i] = *w.rebase ? rebased(&w.names, w.rebase, given) : given;
		if (!roots[i]) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
			break;
		}
		walk_opts wo = {
			.follow_symlinks = opts->follow_symlinks,
			.use_gitignore = opts->use_gitignore,
			.max_file_size = walk_max,
			.on_file = on_file,
			.on_skip = on_walk_skip,
			.ctx = &w,
		};
		/* never the index's own folder, when it lies inside the tree */
		struct stat ist;
		if (fx && stat(ix_dir(fx->ix), &ist) == 0) {
			wo.has_skip_dir = 1;
			wo.skip_dev = (uint64_t)ist.st_dev;
			wo.skip_ino = (uint64_t)ist.st_ino;
		}
		rc = walk_tree(paths[i], &wo);
		if (rc)
			rc = fa_err_wrap(rc, "%s", paths[i]);
	}
	/* 2. Read what changed and index it: batches of files read and
	 * analysed on the pool's threads, appended in walk order. */
	if (!rc) {
		files_ctx fc = { &r, &w, &seen, 0 };
		const fa_pipeline fns = { files_produce, files_work, files_emit };
		rc = run_pipeline(&r, &fns, &fc);
	}
	/* 3. Remove documents whose files are gone. */
	if (!rc && fx && opts->remove_missing) {
		rc = ix_foreach_live_key(fx->ix, find_gone, &g);
		for (size_t i = 0; i < g.n_gone && !rc; i++) {
			rc = ix_delete_doc(fx->ix, g.gone[i]);
			if (!rc)
				st->files_deleted++;
		}
	}
	if (!rc)
		rc = progress(&r, 1);
cleanup:
	fa_free(rebase);
	fa_free(g.gone);
	fa_free(roots);
	fa_free(w.ents);
	fa_arena_free(&w.names);
	fa_strmap_free(&seen);
	run_free(&r);
	return rc;
}

int fathom_index_paths(fathom_index *fx, const char *const *paths, size_t n_paths,
                       const fathom_ingest_opts *opts, fathom_ingest_stats *st)
{
	if (!fx)
		return fa_err(FATHOM_EINVAL, "no index");
	return walk_and_ingest(fx, paths, n_paths, opts, st, NULL, NULL);
}

int fathom_chunk_paths(const char *const *paths, size_t n_paths,
                       const fathom_ingest_opts *opts, fathom_chunk_cb cb, void *ctx)
{
	if (!cb)
		return fa_err(FATHOM_EINVAL, "no chunk callback");
	return walk_and_ingest(NULL, paths, n_paths, opts, NULL, cb, ctx);
}

/* ---- JSON lines and single documents ------------------------------------------ */

typedef struct lines_ctx {
	ingest_run *r;
	jsonl_reader *rd;
	const char *file;
	size_t max_line;
} lines_ctx;

static int lines_produce(void *ctx, size_t slot)
{
	lines_ctx *lc = ctx;
	ingest_batch *b = &lc->r->batches[slot];
	batch_reset(b);
	while (!batch_full(b)) {
		const char *p;
		size_t n;
		uint64_t line_no;
		int rc = jsonl_reader_next(lc->rd, &p, &n, &line_no);
		if (rc <= 0) {
			if (rc < 0)
				return rc;
			break;
		}
		ingest_item *it = batch_push(b, p ? IT_LINE : IT_BAD_LINE);
		if (!it)
			return fa_err(FATHOM_ENOMEM, "out of memory");
		it->line_no = line_no;
		if (p) {
			it->line_off = b->lines.len;
			it->line_len = n;
			b->bytes += n;
			if ((rc = fbuf_append(&b->lines, p, n)) != 0)
				return rc;
		}
	}
	return b->n > 0;
}

/* work: parse and analyse one JSON line. */
static int parse_line(ingest_run *r, ingest_batch *b, ingest_item *it, size_t max_line,
                      text_analyzer *an)
{
	char msg[JSONL_MSG_MAX];
	if (it->kind == IT_BAD_LINE) {
		snprintf(msg, sizeof msg, "line longer than %zu bytes", max_line);
	} else {
		jsonl_doc jd;
		int rc = jsonl_parse_doc(&jd, &it->root, (const char *)b->lines.data + it->line_off,
		                         it->line_len, it->line_no, &b->mem, it->idbuf,
		                         sizeof it->idbuf, msg);
		if (rc == 0) {
			it->bytes = jd.body_len;
			it->src = (doc_src){
				.key = jd.id, .path = jd.path, .title = jd.title, .url = jd.url,
				.tags = jd.tags, .n_tags = jd.n_tags, .meta = jd.meta, .n_meta = jd.n_meta,
				.text = jd.body, .len = jd.body_len, .size = jd.body_len,
				.hash = fa_hash64(jd.body, jd.body_len, 0),
			};
			return analyse_item(r, b, it, an);
		}
		if (rc != FATHOM_ESYNTAX)
			return rc;
	}
	it->bad = fa_arena_strndup(&b->mem, msg, strlen(msg));
	return it->bad ? 0 : fa_err(FATHOM_ENOMEM, "out of memory");
}

static int lines_work(void *ctx, unsigned worker, size_t slot)
{
	lines_ctx *lc = ctx;
	ingest_batch *b = &lc->r->batches[slot];
	for (size_t i = 0; i < b->n; i++) {
		ingest_item *it = &b->items[i];
		int rc = parse_line(lc->r, b, it, lc->max_line, lc->r->ans[worker]);
		if (rc) {
			item_fail(b, it, rc);
			break;
		}
	}
	return 0;
}

static int lines_emit(void *ctx, size_t slot)
{
	lines_ctx *lc = ctx;
	ingest_run *r = lc->r;
	ingest_batch *b = &r->batches[slot];
	for (size_t i = 0; i < b->n; i++) {
		ingest_item *it = &b->items[i];
		if (it->rc)
			return item_error(it);
		if (it->bad) {
			char where[1200];
			snprintf(where, sizeof where, "%s:%llu: %s", lc->file,
			         (unsigned long long)it->line_no, it->bad);
			skip(r, where, FATHOM_SKIP_BAD_RECORD);
			continue;
		}
		r->st->files_seen++;
		r->st->bytes_read += it->bytes;
		int rc = add_item(r, b, it);
		item_clear(it);
		if (!rc)
			rc = progress(r, 0);
		if (rc)
			return rc;
	}
	return 0;
}

/* JSON lines from an open stream (size: its length for progress, or 0):
 * batches of lines parsed and analysed on the pool's threads, appended in
 * line order. */
static int add_jsonl_stream(fathom_index *fx, FILE *f, const char *name, uint64_t size,
                            const fathom_ingest_opts *opts, fathom_ingest_stats *st)
{
	ingest_run r;
	int rc = run_init(&r, fx, opts, st);
	if (rc)
		return rc;
	r.bytes_total = size;
	lines_ctx lc = { &r, NULL, name, 0 };
	if ((rc = jsonl_reader_new(&lc.rd, f, 0, NULL)) == 0) {
		lc.max_line = JSONL_DEFAULT_MAX_LINE;
		const fa_pipeline fns = { lines_produce, lines_work, lines_emit };
		rc = run_pipeline(&r, &fns, &lc);
	}
	if (!rc)
		rc = progress(&r, 1);
	jsonl_reader_free(lc.rd);
	run_free(&r);
	return rc;
}

int fathom_add_jsonl(fathom_index *fx, const char *path, const fathom_ingest_opts *opts,
                     fathom_ingest_stats *st)
{
	fa_err_clear();
	if (!path)
		return fa_err(FATHOM_EINVAL, "no path");
	if (strcmp(path, "-") == 0)
		return add_jsonl_stream(fx, stdin, "<stdin>", 0, opts, st);
	FILE *f = fopen(path, "rb");
	if (!f)
		return fa_err(errno == ENOENT ? FATHOM_ENOTFOUND : FATHOM_EIO, "%s: %s", path,
		              strerror(errno));
	uint64_t size = 0;
	if (fseek(f, 0, SEEK_END) == 0) {
		long sz = ftell(f);
		size = sz > 0 ? (uint64_t)sz : 0;
		fseek(f, 0, SEEK_SET);
	}
	int rc = add_jsonl_stream(fx, f, path, size, opts, st);
	fclose(f);
	return rc;
}

int fathom_add_jsonl_mem(fathom_index *fx, const char *data, size_t len, const char *name,
                         const fathom_ingest_opts *opts, fathom_ingest_stats *st)
{
	fa_err_clear();
	if (!data && len)
		return fa_err(FATHOM_EINVAL, "no data");
	if (len == 0) {   /* nothing to add */
		fathom_ingest_stats none = FATHOM_INGEST_STATS_INIT;
		int rc = st ? fa_struct_check(FA_INGEST_STATS, st) : 0;
		if (st && !rc)
			fa_struct_copy_out(FA_INGEST_STATS, st, &none);
		return rc;
	}
	FILE *f = fmemopen((void *)(uintptr_t)data, len, "rb");
	if (!f)
		return fa_err(FATHOM_ENOMEM, "fmemopen: %s", strerror(errno));
	int rc = add_jsonl_stream(fx, f, name ? name : "<memory>", len, opts, st);
	fclose(f);
	return rc;
}

int fathom_add_doc(fathom_index *fx, const fathom_doc *doc, const fathom_ingest_opts *opts)
{
	ingest_run r;
	int rc = run_init(&r, fx, opts, NULL);
	if (rc)
		return rc;
	if (!doc || !doc->id || !*doc->id) {
		run_free(&r);
		return fa_err(FATHOM_EINVAL, "a document needs an id");
	}
	for (size_t i = 0; i < doc->n_meta && !rc; i++)
		rc = check_meta(doc->meta[i]);
	/* One document: a batch of one, on this thread. */
	ingest_batch b;
	if (!rc)
		rc = batch_init(&r, &b);
	if (!rc) {
		ingest_item *it = batch_push(&b, IT_LINE);
		const char *body = doc->body ? doc->body : "";
		size_t len = doc->body ? doc->body_len : 0;
		if (!it) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
		} else {
			it->src = (doc_src){
				.key = doc->id, .path = doc->path, .title = doc->title, .url = doc->url,
				.tags = doc->tags, .n_tags = doc->n_tags, .meta = doc->meta,
				.n_meta = doc->n_meta, .text = body, .len = len, .size = len,
				.hash = fa_hash64(body, len, 0),
			};
			rc = analyse_item(&r, &b, it, fx->an);
			if (!rc)
				rc = add_item(&r, &b, it);
		}
		batch_free(&b);
	}
	run_free(&r);
	return rc;
}
