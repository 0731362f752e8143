/*
 * ingest.c — the ingest run behind the public API's entry points, which
 * are in ingest_files.c (the tree walk) and ingest_jsonl.c (JSON lines).
 * Ingest joins the tree walker and the JSONL reader (src/ingest) to the
 * chunker (src/text) and the index writer (src/index), and decides what is
 * new, changed or gone.
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
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/ingest_int.h"
#include "embed/embed.h"

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
	case FATHOM_SKIP_OUTSIDE_ROOT: return "outside the root folder";
	case FATHOM_SKIP_BAD_GZIP: return "corrupt gzip";
	default: return "skipped";
	}
}

void ingest_skip(ingest_run *r, const char *path, int reason)
{
	r->st->files_skipped++;
	if (reason > 0 && reason < (int)FA_ARRAY_LEN(r->st->skipped_by_reason))
		r->st->skipped_by_reason[reason]++;
	if (r->opts->on_skip)
		r->opts->on_skip(r->opts->cb_ctx, path, reason);
}

int ingest_progress(ingest_run *r, int force)
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

int ingest_check_meta(const char *kv)
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
		if (ingest_check_meta(o->meta[i]))
			return FATHOM_EINVAL;
		if (strlen(o->meta[i]) > API_MAX_META_BYTES)
			return fa_err(FATHOM_EINVAL, "metadata \"%.64s...\" is longer than %u bytes",
			              o->meta[i], API_MAX_META_BYTES);
	}
	return 0;
}

/* The title a document gives itself, by kind: Markdown's first H1,
 * reStructuredText's first title, AsciiDoc's "= Title", HTML's <title>
 * (else its first h1). Into the batch's memory; NULL for none. */
static int own_title(ingest_batch *b, ingest_item *it, const text_html *html, const char **out)
{
	const char *text = it->text.len ? (const char *)it->text.data : "";
	size_t len = it->text.len, tlen = 0;
	const char *t = NULL;
	*out = NULL;
	if (it->doc_kind == DOC_MARKDOWN) {
		t = text_markdown_title(text, len, &tlen);
	} else if (it->doc_kind == DOC_RST || it->doc_kind == DOC_ASCIIDOC) {
		t = text_markup_title(text, len, it->doc_kind, &tlen);
	} else if (it->doc_kind == DOC_HTML && html->title) {
		t = html->title;
		tlen = html->title_len;
	} else if (it->doc_kind == DOC_HTML) {
		for (size_t i = 0; i < html->n_headings && !t; i++) {
			if (html->headings[i].level == 1) {
				t = html->headings[i].text;
				tlen = html->headings[i].len;
			}
		}
	}
	if (t && tlen && !(*out = fa_arena_strndup(&b->mem, t, tlen)))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	return 0;
}

/* Repair, detect, title and chunk the item's document (it->src). An HTML
 * file is read as its text first (text/html.c), which keeps the file's
 * lines, so chunks' line numbers are the file's. */
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
	text_html html;
	text_html_init(&html);
	/* A file's HTML; a JSON body is text already, whatever its path. */
	if (it->doc_kind == DOC_HTML && d->is_file) {
		rc = text_html_to_text(&html, it->text.len ? (const char *)it->text.data : "", it->text.len);
		if (rc)
			goto cleanup;
		/* the item keeps the text; html frees the source */
		fbuf src = it->text;
		it->text = html.text;
		html.text = src;
	}
	it->title = d->title;
	if ((!it->title || !*it->title) && (rc = own_title(b, it, &html, &it->title)) != 0)
		goto cleanup;
	if (!it->title || !*it->title) {
		const char *base = d->path && *d->path ? strrchr(d->path, '/') : NULL;
		it->title = base ? base + 1 : (d->path && *d->path ? d->path : "");
	}
	text_chunk_opts co = { o->chunk_target, o->chunk_overlap, o->chunk_max,
	                       html.headings, html.n_headings };
	it->n_chunks = 0;
	collect_ctx cc = { it, &b->mem };
	rc = text_chunk_doc(it->text.len ? (const char *)it->text.data : "", it->text.len,
	                    it->doc_kind, &co, collect_chunk, &cc);
cleanup:
	text_html_free(&html);
	return rc;
}

/* Room for the item's chunk vectors. */
static int vec_room(ingest_item *it, uint32_t dim)
{
	size_t want;
	if (fa_mul(it->n_chunks ? it->n_chunks : 1, dim, &want))
		return fa_err(FATHOM_ETOOBIG, "vectors");
	if (want > it->vecs_cap) {
		float *v = fa_realloc(it->vecs, want * sizeof *v);
		if (!v)
			return fa_err(FATHOM_ENOMEM, "vectors");
		it->vecs = v;
		it->vecs_cap = want;
	}
	return 0;
}

/* The item's chunk vectors: the document's own (every chunk gets it), or
 * the run's embedder's of each chunk's text (title, headings, text: what
 * a merge embeds too, ix_embed_text), in batches. */
static int item_vectors(ingest_run *r, ingest_item *it)
{
	const doc_src *d = &it->src;
	size_t n = it->n_chunks;
	int rc;
	if (!n)
		return 0;
	if (d->vector) {
		if (r->emb)
			return fa_err(FATHOM_EINVAL,
			              "%s: the document brings a vector, but the index's embedder (%s) "
			              "embeds its chunks", d->key, r->emb->ops->kind);
		if ((rc = vec_room(it, d->vector_dim)))
			return rc;
		float *row = it->vecs;
		memcpy(row, d->vector, (size_t)d->vector_dim * sizeof *row);
		em_normalize(row, d->vector_dim);
		for (size_t i = 1; i < n; i++)
			memcpy(it->vecs + i * d->vector_dim, row, (size_t)d->vector_dim * sizeof *row);
		it->in.vecs = it->vecs;
		it->in.vec_dim = d->vector_dim;
		it->in.vec_fp = 0;   /* the writer's thread sets it (ingest_add_item) */
		return 0;
	}
	if (!r->emb)
		return 0;
	uint32_t dim = r->emb->dim;
	if ((rc = vec_room(it, dim)))
		return rc;
	const char *texts[64];
	size_t lens[64], offs[64];
	fbuf one;
	fbuf_init(&one, 0);
	for (size_t i0 = 0; i0 < n && !rc; i0 += 64) {
		size_t m = FA_MIN(n - i0, (size_t)64);
		fbuf_reset(&it->etext);
		for (size_t j = 0; j < m && !rc; j++) {
			const ix_chunk_in *c = &it->chunks[i0 + j];
			rc = ix_embed_text(&one, it->title, c->headings, c->headings_len,
			                   it->in.text + c->byte_start, c->byte_end - c->byte_start);
			offs[j] = it->etext.len;
			lens[j] = one.len;
			if (!rc && fbuf_append(&it->etext, one.data, one.len))
				rc = it->etext.err;
		}
		for (size_t j = 0; j < m && !rc; j++)
			texts[j] = (const char *)it->etext.data + offs[j];
		if (!rc)
			rc = em_embed(r->emb, texts, lens, m, it->vecs + i0 * dim);
	}
	fbuf_free(&one);
	if (rc)
		return fa_err_wrap(rc, "%s: embedding", d->key);
	it->in.vecs = it->vecs;
	it->in.vec_dim = dim;
	it->in.vec_fp = r->emb_fp;
	return 0;
}

/* Prepare the item's document and, when indexing, analyse it. */
int ingest_analyse_item(ingest_run *r, ingest_batch *b, ingest_item *it, text_analyzer *an)
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
	if (b->an && (rc = item_vectors(r, it)))
		return rc;
	return b->an ? ix_analyse_doc(b->an, an, &it->in, &it->handle) : 0;
}

/* Hand an analysed item to the writer (or its chunks to the chunk callback). */
int ingest_add_item(ingest_run *r, ingest_batch *b, ingest_item *it)
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
		if (it->in.vecs && !r->emb) {
			/* vectors that came with the document: the index's embedder
			 * becomes "external" with the first */
			if (!r->ext_dim) {
				int kind;
				if ((rc = api_embedder_kind(r->fx, &kind)) == 0 && kind != API_EMB_EXTERNAL)
					rc = fathom_config_set(r->fx, "embedder", "external");
				if (!rc)
					rc = api_external_ident(r->fx, it->in.vec_dim, &r->ext_fp);
				if (rc)
					return rc;
				r->ext_dim = it->in.vec_dim;
			}
			if (it->in.vec_dim != r->ext_dim)
				return fa_err(FATHOM_EINVAL, "%s: a vector of %u dimensions after ones of %u",
				              d->key, it->in.vec_dim, r->ext_dim);
			it->in.vec_fp = r->ext_fp;
		}
		rc = ix_add_analysed(r->fx->ix, &it->in, b->an, it->handle);
	}
	if (!rc) {
		r->st->docs_added++;
		r->st->chunks_added += it->n_chunks;
	}
	return rc;
}

/* Free what an item holds beyond its reusable buffers. */
void ingest_item_clear(ingest_item *it)
{
	fa_free(it->data);
	it->data = NULL;
	jsonl_doc_release(it->root);
	it->root = NULL;
}

void ingest_batch_reset(ingest_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		ingest_item_clear(&b->items[i]);
	b->n = 0;
	b->bytes = 0;
	fbuf_reset(&b->lines);
	fa_arena_reset(&b->mem);
	if (b->an)
		ix_analysis_reset(b->an);
}

void ingest_batch_free(ingest_batch *b)
{
	ingest_batch_reset(b);
	for (size_t i = 0; i < b->cap; i++) {
		fbuf_free(&b->items[i].text);
		fa_free(b->items[i].chunks);
		fa_free(b->items[i].vecs);
		fbuf_free(&b->items[i].etext);
	}
	fa_free(b->items);
	fbuf_free(&b->lines);
	fa_arena_free(&b->mem);
	ix_analysis_free(b->an);
}

/* A fresh item at the end of the batch (its buffers kept from last time). */
ingest_item *ingest_batch_push(ingest_batch *b, int kind)
{
	if (b->n == b->cap) {
		size_t old = b->cap;
		if (fa_grow((void **)&b->items, &b->cap, b->n + 1, sizeof *b->items))
			return NULL;
		memset(b->items + old, 0, (b->cap - old) * sizeof *b->items);
		for (size_t i = old; i < b->cap; i++) {
			fbuf_init(&b->items[i].text, 0);
			fbuf_init(&b->items[i].etext, 0);
		}
	}
	ingest_item *it = &b->items[b->n++];
	fbuf text = it->text, etext = it->etext;
	ix_chunk_in *chunks = it->chunks;
	size_t cap_chunks = it->cap_chunks;
	float *vecs = it->vecs;
	size_t vecs_cap = it->vecs_cap;
	memset(it, 0, sizeof *it);
	it->text = text;
	it->etext = etext;
	it->vecs = vecs;
	it->vecs_cap = vecs_cap;
	it->chunks = chunks;
	it->cap_chunks = cap_chunks;
	it->kind = kind;
	return it;
}

int ingest_batch_full(const ingest_batch *b)
{
	return b->n >= BATCH_DOCS || b->bytes >= BATCH_BYTES;
}

/* An error in work is kept with its message, for emit to raise in order. */
void ingest_item_fail(ingest_batch *b, ingest_item *it, int rc)
{
	it->rc = rc;
	const char *m = fathom_errmsg();
	it->errmsg = fa_arena_strndup(&b->mem, m, strlen(m));
}

int ingest_item_error(const ingest_item *it)
{
	return it->errmsg ? fa_err(it->rc, "%s", it->errmsg) : it->rc;
}

/* Start a run. opts and st may be NULL (defaults; no stats wanted). The run
 * counts in its own stats (r->st) and copies them to st at the end. */
int ingest_run_init(ingest_run *r, fathom_index *fx, const fathom_ingest_opts *opts,
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
	if (opts->version >= 1 && opts->version <= 5) {
		/* a caller built before version 2 (3, 4, 5, 6): its struct ends
		 * before the identifier limits (the grep settings, threads,
		 * confine_root, ignore), which take their defaults; what it has
		 * it gave, so nothing is unset and the index's settings do not
		 * apply (no ignore rules of its own) */
		static const size_t ends[] = { offsetof(fathom_ingest_opts, ident_min_len),
		                               offsetof(fathom_ingest_opts, grep_max_file_size),
		                               offsetof(fathom_ingest_opts, threads),
		                               offsetof(fathom_ingest_opts, confine_root),
		                               offsetof(fathom_ingest_opts, ignore) };
		memcpy(&r->own_opts, opts, ends[opts->version - 1]);
		if (opts->version == 1)
			r->own_opts.grep_max_file_size = API_DEFAULT_GREP_MAX_SIZE;
		r->own_opts.ignore = "";
		r->own_opts.version = FATHOM_INGEST_OPTS_VERSION;
		opts = r->opts = &r->own_opts;
	} else if (opts->version == FATHOM_INGEST_OPTS_VERSION) {
		/* the index's settings (or the built-in defaults) for what the
		 * caller left unset */
		if (opts != &r->own_opts)
			r->own_opts = *opts;
		opts = r->opts = &r->own_opts;
		int rc = api_ingest_defaults(fx, &r->own_opts);
		if (rc)
			return rc;
	}
	if (opts->version != FATHOM_INGEST_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_ingest_opts version %u, expected %u",
		              opts->version, FATHOM_INGEST_OPTS_VERSION);
	int rc = check_opts(opts);
	if (rc)
		return rc;
	/* parsed now: the text may be the handle's settings, which a later
	 * stage could replace */
	if (*opts->ignore && (rc = gi_parse(&r->ignore, opts->ignore, strlen(opts->ignore), "")) != 0)
		return fa_err_wrap(rc, "ignore rules");
	r->own_opts.ignore = "";
	if (opts->confine_root) {
		/* resolved once, not for every file read (read_file) */
		char rr[PATH_MAX];
		r->confine_real = fa_strdup(realpath(opts->confine_root, rr) ? rr : "");
		if (!r->confine_real)
			return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	r->fx = fx;
	/* the embedder that embeds the chunks, opened once for the run (not
	 * when only chunking: fathom_chunk_paths) */
	if (fx && (rc = api_ingest_embedder(fx, &r->emb, &r->emb_fp)) != 0)
		return rc;
	r->t0 = r->last_progress = fa_now();
	return 0;
}

int ingest_batch_init(ingest_run *r, ingest_batch *b)
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
		if ((rc = ingest_batch_init(r, &r->batches[i])) != 0)
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
int ingest_run_pipeline(ingest_run *r, const fa_pipeline *fns, void *ctx)
{
	int rc = r->pool ? 0 : run_start_pool(r);
	if (!rc)
		rc = fa_pool_run(r->pool, r->window, fns, ctx);
	for (size_t i = 0; i < r->window; i++)
		ingest_batch_reset(&r->batches[i]);   /* what was produced and never emitted */
	return rc;
}

void ingest_run_free(ingest_run *r)
{
	r->st->elapsed_sec = fa_now() - r->t0;
	if (r->out_stats)
		fa_struct_copy_out(FA_INGEST_STATS, r->out_stats, r->st);
	fa_free(r->meta);
	fa_free(r->confine_real);
	gi_free(r->ignore);
	if (r->batches)
		for (size_t i = 0; i < r->window; i++)
			ingest_batch_free(&r->batches[i]);
	fa_free(r->batches);
	if (r->own_ans)
		for (size_t i = 0; i < r->n_ans; i++)
			text_analyzer_free(r->ans[i]);
	fa_free(r->ans);
	fa_pool_free(r->pool);
}
