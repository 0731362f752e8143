/*
 * fathom.c — the public API: opening an index, reading documents back,
 * statistics, and the entry points of search. Ingest lives in ingest.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "grep/grep.h"
#include "ingest/ingest.h"
#include "query/query_int.h"
#include "util/pool.h"
#include "util/worker.h"

int fathom_open(fathom_index **out, const char *dir, const fathom_open_opts *opts)
{
	fathom_open_opts def = FATHOM_OPEN_OPTS_INIT;
	*out = NULL;
	fa_err_clear();
	if (!dir || !*dir)
		return fa_err(FATHOM_EINVAL, "no index folder given");
	if (!opts)
		opts = &def;
	if (opts->version != FATHOM_OPEN_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_open_opts version %u, expected %u",
		              opts->version, FATHOM_OPEN_OPTS_VERSION);
	unsigned ixflags = IX_READONLY;
	if (opts->flags & FATHOM_OPEN_CREATE)
		ixflags = IX_WRITE | IX_CREATE;
	else if (opts->flags & FATHOM_OPEN_WRITE)
		ixflags = IX_WRITE;
	fathom_index *fx = fa_calloc(1, sizeof *fx);
	if (!fx)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	fx->flags = opts->flags;
	fa_arena_init(&fx->work, 512 * 1024, 0);
	fa_arena_init(&fx->vwork, 64 * 1024, 0);
	int rc = ix_open(&fx->ix, dir, ixflags,
	                 opts->stem_language ? opts->stem_language : "english");
	if (!rc)
		rc = text_analyzer_new(&fx->an, ix_stem_language(fx->ix));
	if (rc) {
		fathom_close(fx);
		return rc;
	}
	*out = fx;
	return 0;
}

int fathom_refresh(fathom_index *fx, int *changed)
{
	int dummy;
	fa_err_clear();
	return ix_refresh(fx->ix, changed ? changed : &dummy);
}

uint64_t fathom_generation(fathom_index *fx)
{
	return ix_generation(fx->ix);
}

struct fa_worker *api_vector_thread(fathom_index *fx)
{
	if (fa_worker_usable(fx->vworker))
		return fx->vworker;
	fa_worker_free(fx->vworker);   /* made before a fork: memory only */
	fx->vworker = NULL;
	const char *serial = getenv("FATHOM_HYBRID_SERIAL");
	if ((serial && *serial && strcmp(serial, "0") != 0) || fa_cpu_count(2) < 2)
		return NULL;
	if (fa_worker_new(&fx->vworker)) {
		fa_err_clear();   /* the calling thread does it all */
		fx->vworker = NULL;
	}
	return fx->vworker;
}

void fathom_close(fathom_index *fx)
{
	if (!fx)
		return;
	if (fx->an)
		text_analyzer_free(fx->an);
	if (fx->ix)
		ix_close(fx->ix);
	fa_worker_free(fx->vworker);
	fa_arena_free(&fx->work);
	fa_arena_free(&fx->vwork);
	q_gloss_free(&fx->gloss);
	api_settings_free(&fx->cfg);
	api_embedder_free(fx);
	fa_free(fx);
}

int fathom_search(fathom_results **out, fathom_index *fx, const char *query,
                  const fathom_search_opts *opts)
{
	fathom_search_opts def = FATHOM_SEARCH_OPTS_INIT;
	*out = NULL;
	fa_err_clear();
	if (!fx || !query)
		return fa_err(FATHOM_EINVAL, "no index or no query");
	if (!opts)
		opts = &def;
	fathom_search_opts old;   /* versions 1 and 2, read into the current layout */
	float old_weights[FATHOM_NFIELDS];
	/* Callers of versions 1 and 2 were built before FATHOM_ETIMEOUT: a time
	 * limit reaches them as the FATHOM_EINTERRUPTED they know. */
	int old_codes = opts->version < 3;
	int use_settings = opts->version >= 5;   /* older callers gave every value */
	q_search_opts_upgrade(opts, &old, old_weights, &opts);
	int mrc = ix_check_mapped(fx->ix);
	if (mrc)
		return mrc;
	/* the index's settings for what the caller left unset; q_search gives
	 * what they leave unset its built-in default */
	fathom_search_opts filled;
	float weights[FATHOM_NFIELDS];
	if (use_settings && (mrc = api_search_defaults(fx, opts, &filled, weights, &opts)) != 0)
		return mrc;
	/* the options are checked once, by q_search_run */
	const unsigned char *gd;
	size_t gl;
	uint64_t gv;
	ix_glossary(fx->ix, &gd, &gl, &gv);
	if (!fx->gloss_ok || gv != fx->gloss_version) {
		q_gloss_free(&fx->gloss);
		fx->gloss_ok = 0;
		int rc = q_gloss_parse(&fx->gloss, gd, gl);
		if (rc)
			return rc;
		fx->gloss_version = gv;
		fx->gloss_ok = 1;
	}
	q_hybrid hy;
	memset(&hy, 0, sizeof hy);   /* an older options version: keyword, no vectors */
	float *qvec = NULL;
	int rc = opts->version == FATHOM_SEARCH_OPTS_VERSION ? api_hybrid(fx, query, opts, &hy, &qvec)
	                                                      : 0;
	/* grep's chunks join an identifier lookup's pool */
	hy.grep = api_grep_literal;
	hy.grep_ctx = fx;
	if (!rc && hy.mode == FATHOM_MODE_HYBRID && hy.qv.v) {
		hy.worker = api_vector_thread(fx);
		hy.vwork = &fx->vwork;
	}
	if (!rc)
		rc = q_search_hybrid(out, fx->ix, fx->an, query, opts, &fx->work,
		                     fx->gloss.n ? &fx->gloss : NULL, NULL,
		                     opts->version == FATHOM_SEARCH_OPTS_VERSION ? &hy : NULL);
	fa_arena_reset(&fx->vwork);
	fa_free(qvec);
	if ((rc = ix_checked(fx->ix, rc)) != 0 && *out) {
		fathom_results_free(*out);
		*out = NULL;
	}
	return rc == FATHOM_ETIMEOUT && old_codes ? FATHOM_EINTERRUPTED : rc;
}

/* Find the live document with this key: the newest segment that holds it
 * and has not tombstoned it. */
static int find_live_doc(ix_index *ix, const char *key, ix_segment **seg, uint32_t *doc)
{
	for (size_t i = ix_nsegments(ix); i-- > 0;) {
		ix_segment *s = ix_segment_at(ix, i);
		uint32_t d;
		int rc = seg_find_doc(s, key, &d);
		if (rc == FATHOM_ENOTFOUND)
			continue;
		if (rc)
			return rc;
		if (seg_doc_is_deleted(s, d))
			continue;
		*seg = s;
		*doc = d;
		return 0;
	}
	return fa_err(FATHOM_ENOTFOUND, "no document \"%s\" in the index", key);
}

/* The document an id names: a path first as grep reads its PATH arguments
 * (relative to the current folder, mapped onto the index's keys), so that
 * `get src/x.c` means the same file from any folder; then the id as it is
 * (a JSON lines id, or a key as the index spells it). */
static int find_id_or_path(ix_index *ix, const char *id, ix_segment **seg, uint32_t *doc)
{
	char cwd[4096];
	char *key = *id && getcwd(cwd, sizeof cwd) ? g_index_path(ix_root(ix), cwd, id) : NULL;
	int rc = FATHOM_ENOTFOUND;
	if (key && strcmp(key, id) != 0)
		rc = find_live_doc(ix, key, seg, doc);
	fa_free(key);
	return rc == FATHOM_ENOTFOUND ? find_live_doc(ix, id, seg, doc) : rc;
}

/* Cut [from, from+count) lines (1-based; count 0 = to the end) out of t;
 * *lines: how many it holds (a last line without its newline counts). */
static int slice_lines(char **out, size_t *out_len, const char *t, size_t n,
                       uint32_t from, uint32_t count, uint32_t *lines)
{
	size_t start = 0, end = n;
	if (from > 1) {
		uint32_t line = 1;
		size_t i = 0;
		while (i < n && line < from) {
			if (t[i] == '\n')
				line++;
			i++;
		}
		if (line < from)
			return fa_err(FATHOM_ENOTFOUND, "the document has only %u lines", line);
		start = i;
	}
	uint32_t seen = 0;
	size_t i = start;
	while (i < n && (!count || seen < count)) {
		if (t[i] == '\n')
			seen++;
		i++;
	}
	end = i;
	if (end > start && t[end - 1] != '\n')
		seen++;   /* the last line, without its newline */
	*out = fa_strndup(t + start, end - start);
	if (!*out)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (out_len)
		*out_len = end - start;
	*lines = seen;
	return 0;
}

static int get_doc(char **out, size_t *out_len, fathom_index *fx, const char *id,
                   uint32_t from_line, uint32_t count, fathom_get_info *info)
{
	ix_segment *s = NULL;
	uint32_t d = 0;
	int rc = find_id_or_path(fx->ix, id, &s, &d);
	if (rc)
		return rc;
	ix_doc_info di;
	if ((rc = seg_doc(s, d, &di)) != 0)
		return rc;
	info->from = from_line ? from_line : 1;
	if (di.grep_only) {
		/* indexed for grep alone: the text is the file's, on disk now */
		const char *root = ix_root(fx->ix);
		char *path = *root ? fa_path_resolve(root, di.path) : fa_strdup(di.path);
		char *data = NULL;
		size_t len = 0;
		rc = path ? 0 : fa_err(FATHOM_ENOMEM, "out of memory");
		/* FATHOM_OPEN_CONFINE: only a file whose real path lies in the
		 * index's root folder, judged by the descriptor read. An index
		 * with none recorded (built from absolute paths) has no folder
		 * to be confined to. */
		int outside = 0;
		const char *within = (fx->flags & FATHOM_OPEN_CONFINE) && *root ? root : NULL;
		if (!rc)
			rc = fa_read_file_within(&data, &len, path, (size_t)1 << 30, within, &outside);
		if (outside) {
			fa_free(path);
			return fa_err(FATHOM_ENOTFOUND, "%s: not read (its real path lies outside the "
			              "index's root folder)", di.path);
		}
		if (rc == FATHOM_ENOTFOUND)
			rc = fa_err(FATHOM_ENOTFOUND, "%s: indexed for grep alone, and gone from disk", di.path);
		if (!rc && fa_gz_name(di.path)) {
			/* as grep reads it: decompressed */
			char *text = NULL;
			rc = fa_gunzip(&text, &len, data, len, (size_t)1 << 30);
			if (rc)
				rc = fa_err_wrap(rc, "%s", di.path);
			fa_free(data);
			data = text;
		}
		if (!rc)
			rc = slice_lines(out, out_len, data, len, info->from, count, &info->count);
		fa_free(data);
		fa_free(path);
		return rc;
	}
	/* the index's copy: stale when the file changed since (grep's rule) */
	info->stale = ix_doc_stale(fx->ix, &di);
	fbuf b;
	fbuf_init(&b, 0);
	rc = seg_doc_text(s, d, 0, di.text_len, &b);
	if (!rc)
		rc = slice_lines(out, out_len, b.len ? (const char *)b.data : "", b.len, info->from,
		                 count, &info->count);
	fbuf_free(&b);
	return rc;
}

int fathom_get_ex(char **out, size_t *out_len, fathom_index *fx, const char *id,
                  uint32_t from_line, uint32_t count, fathom_get_info *caller)
{
	*out = NULL;
	fa_err_clear();
	if (!fx || !id)
		return fa_err(FATHOM_EINVAL, "no index or no id");
	int rc = caller ? fa_struct_check(FA_GET_INFO, caller) : 0;
	if (rc || (rc = ix_check_mapped(fx->ix)) != 0)
		return rc;
	fathom_get_info info = FATHOM_GET_INFO_INIT;
	rc = ix_checked(fx->ix, get_doc(out, out_len, fx, id, from_line, count, &info));
	if (rc) {
		fa_free(*out);
		*out = NULL;
		return rc;
	}
	if (caller)
		fa_struct_copy_out(FA_GET_INFO, caller, &info);
	return 0;
}

int fathom_get(char **out, size_t *out_len, fathom_index *fx, const char *id,
               uint32_t from_line, uint32_t count)
{
	return fathom_get_ex(out, out_len, fx, id, from_line, count, NULL);
}

const char *fathom_root(fathom_index *fx)
{
	return fx ? ix_root(fx->ix) : "";
}

int fathom_get_chunk(char **out, size_t *out_len, fathom_index *fx, uint64_t chunk_id)
{
	*out = NULL;
	fa_err_clear();
	uint32_t sid = (uint32_t)(chunk_id >> 32), c = (uint32_t)chunk_id;
	int mrc = ix_check_mapped(fx->ix);
	if (mrc)
		return mrc;
	for (size_t i = 0; i < ix_nsegments(fx->ix); i++) {
		ix_segment *s = ix_segment_at(fx->ix, i);
		if (seg_id(s) != sid)
			continue;
		if (c >= seg_nchunks(s) || seg_is_deleted(s, c))
			break;
		ix_chunk_info ci;
		int rc = seg_chunk(s, c, &ci);
		if (rc)
			return rc;
		fbuf b;
		fbuf_init(&b, 0);
		rc = ix_checked(fx->ix, seg_doc_text(s, ci.doc, ci.byte_start,
		                                     ci.byte_end - ci.byte_start, &b));
		if (!rc) {
			*out = fbuf_detach(&b, out_len);
			if (!*out)
				rc = fa_err(FATHOM_ENOMEM, "out of memory");
		}
		fbuf_free(&b);
		return rc;
	}
	return fa_err(FATHOM_ENOTFOUND, "no chunk %llu (it may have been merged away)",
	              (unsigned long long)chunk_id);
}

static int list_docs(fathom_index *fx, fathom_doc_cb cb, void *ctx)
{
	for (size_t i = 0; i < ix_nsegments(fx->ix); i++) {
		ix_segment *s = ix_segment_at(fx->ix, i);
		for (uint32_t d = 0; d < seg_ndocs(s); d++) {
			if (seg_doc_is_deleted(s, d))
				continue;
			ix_doc_info di;
			int rc = seg_doc(s, d, &di);
			if (rc)
				return rc;
			if ((rc = cb(ctx, di.key, di.path, di.size, di.n_chunks)) != 0)
				return rc;
		}
	}
	return 0;
}

int fathom_list_docs(fathom_index *fx, fathom_doc_cb cb, void *ctx)
{
	fa_err_clear();
	int rc = ix_check_mapped(fx->ix);
	return rc ? rc : ix_checked(fx->ix, list_docs(fx, cb, ctx));
}

static int count_meta(fa_strmap *m, const char *kv, size_t len)
{
	int is_new;
	fa_strmap_slot *sl = fa_strmap_upsert(m, kv, len, &is_new);
	if (!sl)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	sl->value++;
	return 0;
}

static int cmp_slot(const void *a, const void *b)
{
	const fa_strmap_slot *x = *(const fa_strmap_slot *const *)a;
	const fa_strmap_slot *y = *(const fa_strmap_slot *const *)b;
	size_t n = FA_MIN(x->len, y->len);
	int c = memcmp(x->key, y->key, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

int fathom_list_meta(fathom_index *fx, fathom_meta_cb cb, void *ctx)
{
	fa_err_clear();
	if (!fx || !cb)
		return fa_err(FATHOM_EINVAL, "no index or no callback");
	/* "key\0value" -> documents; NUL sorts first, so key order comes first */
	int rc = ix_check_mapped(fx->ix);
	if (rc)
		return rc;
	fa_strmap m;
	fa_strmap_init(&m);
	char buf[1024];
	for (size_t i = 0; i < ix_nsegments(fx->ix) && !rc; i++) {
		ix_segment *s = ix_segment_at(fx->ix, i);
		for (uint32_t d = 0; d < seg_ndocs(s) && !rc; d++) {
			if (seg_doc_is_deleted(s, d))
				continue;
			ix_doc_info di;
			if ((rc = seg_doc(s, d, &di)) != 0)
				break;
			const char *q = di.meta;
			for (uint32_t k = 0; q && k < di.n_meta && !rc; k++) {
				size_t l = strlen(q);
				const char *eq = memchr(q, '=', l);
				if (eq && l < sizeof buf) {
					memcpy(buf, q, l);
					buf[eq - q] = '\0';
					rc = count_meta(&m, buf, l);
				}
				q += l + 1;
			}
			if (!rc && di.lang && *di.lang) {
				int n = snprintf(buf, sizeof buf, "lang%c%s", 0, di.lang);
				if (n > 0 && (size_t)n < sizeof buf)
					rc = count_meta(&m, buf, (size_t)n);
			}
		}
	}
	fa_strmap_slot **v = NULL;
	if (!rc && m.count && !(v = fa_malloc(m.count * sizeof *v)))
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
	size_t n = 0;
	for (size_t i = 0; !rc && i < m.cap; i++)
		if (m.slots[i].key)
			v[n++] = &m.slots[i];
	if (!rc)
		qsort(v, n, sizeof *v, cmp_slot);
	for (size_t i = 0; !rc && i < n; i++) {
		/* key and value as two strings: the key ends at its NUL */
		char kv[1024];
		memcpy(kv, v[i]->key, v[i]->len);
		kv[v[i]->len] = '\0';
		rc = cb(ctx, kv, kv + strlen(kv) + 1, v[i]->value);
	}
	fa_free(v);
	fa_strmap_free(&m);
	return ix_checked(fx->ix, rc);
}

int fathom_stats_get(fathom_stats *caller, fathom_index *fx)
{
	fa_err_clear();
	if (!caller)
		return fa_err(FATHOM_EINVAL, "no fathom_stats to fill");
	int rc = fa_struct_check(FA_STATS, caller);
	if (rc)
		return rc;
	fathom_stats all = FATHOM_STATS_INIT, *out = &all;
	ix_sizes sz;
	if ((rc = ix_check_mapped(fx->ix)) || (rc = ix_checked(fx->ix, ix_sizes_get(fx->ix, &sz))))
		return rc;
	out->generation = ix_generation(fx->ix);
	out->docs = sz.docs_live;
	out->chunks = sz.chunks_live;
	out->deleted_chunks = sz.chunks_deleted;
	out->terms = sz.terms;
	out->segments = (uint32_t)ix_nsegments(fx->ix);
	out->bytes_total = sz.total;
	out->bytes_dict = sz.dict;
	out->bytes_postings = sz.postings;
	out->bytes_positions = sz.positions;
	out->bytes_docstore = sz.docstore;
	out->bytes_docs = sz.docs;
	out->bytes_chunks = sz.chunks;
	out->bytes_other = sz.other;
	out->bytes_trigrams = sz.trigrams;
	out->bytes_vectors = sz.vectors;
	out->raw_text_bytes = sz.raw_text;
	out->grep_files = sz.grep_files;
	out->grep_file_bytes = sz.grep_file_bytes;
	out->grep_only_files = sz.grep_only_files;
	snprintf(out->stem_language, sizeof out->stem_language, "%s", ix_stem_language(fx->ix));
	if ((rc = api_vector_stats(fx, out)))
		return rc;
	fa_struct_copy_out(FA_STATS, caller, out);
	return 0;
}

int fathom_verify(fathom_index *fx)
{
	fa_err_clear();
	int rc = ix_check_mapped(fx->ix);
	return rc ? rc : ix_checked(fx->ix, ix_verify(fx->ix));
}

int fathom_delete_doc(fathom_index *fx, const char *id)
{
	fa_err_clear();
	if (!(fx->flags & (FATHOM_OPEN_WRITE | FATHOM_OPEN_CREATE)))
		return fa_err(FATHOM_EREADONLY, "index opened read-only");
	return ix_delete_doc(fx->ix, id);
}

int fathom_commit(fathom_index *fx)
{
	fa_err_clear();
	if (!(fx->flags & (FATHOM_OPEN_WRITE | FATHOM_OPEN_CREATE)))
		return fa_err(FATHOM_EREADONLY, "index opened read-only");
	/* a merge must not copy what a damaged map read as zeros */
	const api_settings *cfg;
	int rc = ix_check_mapped(fx->ix);
	/* the settings read first: the HNSW graphs the flush writes follow them */
	if (!rc)
		rc = api_settings_get(fx, &cfg);
	/* the corpus embedder's first training commits the documents with it
	 * (then ix_commit has nothing left to do) */
	if (!rc)
		rc = ix_checked(fx->ix, api_commit_vectors(fx, 0));
	return rc ? rc : ix_commit(fx->ix);
}

int fathom_optimize(fathom_index *fx)
{
	fa_err_clear();
	if (!(fx->flags & (FATHOM_OPEN_WRITE | FATHOM_OPEN_CREATE)))
		return fa_err(FATHOM_EREADONLY, "index opened read-only");
	const api_settings *cfg;
	int rc = ix_check_mapped(fx->ix);
	if (!rc)
		rc = api_settings_get(fx, &cfg);
	int kind;
	if (rc || (rc = api_embedder_kind(fx, &kind)))
		return rc;
	/* (re)training and re-embedding commit what is pending with them, in
	 * one commit; then the merge has nothing left to do. Without them
	 * (no embedder, or no chunk to train on) the merge commits. */
	if (kind != API_EMB_NONE && kind != API_EMB_EXTERNAL &&
	    (rc = ix_checked(fx->ix, api_commit_vectors(fx, 1))) != 0)
		return rc;
	return ix_checked(fx->ix, ix_optimize(fx->ix));
}

void fathom_set_step_progress(fathom_index *fx, fathom_step_cb cb, void *ctx)
{
	if (!fx)
		return;
	fx->step_cb = cb;
	fx->step_ctx = ctx;
	fx->step_last_ns = 0;
}

void api_step(fathom_index *fx, const char *step, uint64_t done, uint64_t total, int force)
{
	if (!fx->step_cb)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (!force && done != total && now - fx->step_last_ns < 200000000u)
		return;
	fx->step_last_ns = now;
	fx->step_cb(fx->step_ctx, step, done, total);
}

int fathom_rollback(fathom_index *fx)
{
	fa_err_clear();
	if (!(fx->flags & (FATHOM_OPEN_WRITE | FATHOM_OPEN_CREATE)))
		return fa_err(FATHOM_EREADONLY, "index opened read-only");
	return ix_rollback(fx->ix);
}

int fathom_skips_folder(const char *name)
{
	return name && walk_is_vcs_dir(name);
}
