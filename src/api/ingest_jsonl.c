/*
 * ingest_jsonl.c — fathom_add_jsonl, fathom_add_jsonl_mem and
 * fathom_add_doc: whole JSON lines as batches, parsed and analysed on the
 * pool; one document given in full.
 */
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/ingest_int.h"

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
	ingest_batch_reset(b);
	while (!ingest_batch_full(b)) {
		const char *p;
		size_t n;
		uint64_t line_no;
		int rc = jsonl_reader_next(lc->rd, &p, &n, &line_no);
		if (rc <= 0) {
			if (rc < 0)
				return rc;
			break;
		}
		ingest_item *it = ingest_batch_push(b, p ? IT_LINE : IT_BAD_LINE);
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
				.vector = jd.vector, .vector_dim = jd.vector_dim,
			};
			return ingest_analyse_item(r, b, it, an);
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
			ingest_item_fail(b, it, rc);
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
			return ingest_item_error(it);
		if (it->bad) {
			char where[1200];
			snprintf(where, sizeof where, "%s:%llu: %s", lc->file,
			         (unsigned long long)it->line_no, it->bad);
			ingest_skip(r, where, FATHOM_SKIP_BAD_RECORD);
			continue;
		}
		r->st->files_seen++;
		r->st->bytes_read += it->bytes;
		int rc = ingest_add_item(r, b, it);
		ingest_item_clear(it);
		if (!rc)
			rc = ingest_progress(r, 0);
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
	int rc = ingest_run_init(&r, fx, opts, st);
	if (rc)
		return rc;
	r.bytes_total = size;
	lines_ctx lc = { &r, NULL, name, 0 };
	if ((rc = jsonl_reader_new(&lc.rd, f, 0, NULL)) == 0) {
		lc.max_line = JSONL_DEFAULT_MAX_LINE;
		const fa_pipeline fns = { lines_produce, lines_work, lines_emit };
		rc = ingest_run_pipeline(&r, &fns, &lc);
	}
	if (!rc)
		rc = ingest_progress(&r, 1);
	jsonl_reader_free(lc.rd);
	ingest_run_free(&r);
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
	int rc = ingest_run_init(&r, fx, opts, NULL);
	if (rc)
		return rc;
	if (!doc || !doc->id || !*doc->id) {
		ingest_run_free(&r);
		return fa_err(FATHOM_EINVAL, "a document needs an id");
	}
	for (size_t i = 0; i < doc->n_meta && !rc; i++)
		rc = ingest_check_meta(doc->meta[i]);
	/* One document: a batch of one, on this thread. */
	ingest_batch b;
	if (!rc)
		rc = ingest_batch_init(&r, &b);
	if (!rc) {
		ingest_item *it = ingest_batch_push(&b, IT_LINE);
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
			rc = ingest_analyse_item(&r, &b, it, fx->an);
			if (!rc)
				rc = ingest_add_item(&r, &b, it);
		}
		ingest_batch_free(&b);
	}
	ingest_run_free(&r);
	return rc;
}
