/*
 * ingest_files.c — fathom_index_paths and fathom_chunk_paths: the tree walk
 * as batches of files (each looked up in the index first: a file whose
 * size and mtime match is not read), read and analysed on the pool, and
 * the documents gone from disk under the given roots removed.
 */
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/ingest_int.h"

/* The most a .gz file may decompress to when no size cap says less: the
 * most grep reads of one file. */
#define GZ_MAX_TEXT ((uint64_t)1 << 30)

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
	ingest_skip(w->r, path, reason);
}

/* produce: what to do with one walked file, decided on the calling thread
 * (the index is looked up there). */
static int plan_file(ingest_run *r, ingest_batch *b, const file_ent *e, fa_strmap *seen)
{
	const fathom_ingest_opts *o = r->opts;
	int is_new;
	if (!fa_strmap_upsert(seen, e->key, strlen(e->key), &is_new))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	ingest_item *it = ingest_batch_push(b, IT_FILE);
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

/* A .gz file's bytes replaced by what they decompress to, bounded by the
 * size caps, which apply to the decompressed size: over max_file_size it
 * is for grep alone (up to grep_max_file_size), past every cap it is
 * skipped as too big. One that does not decompress, or holds binary data
 * (a .tar.gz), is skipped with its reason. */
static int gunzip_item(ingest_run *r, ingest_item *it)
{
	const fathom_ingest_opts *o = r->opts;
	uint64_t cap = o->max_file_size;
	if (r->fx && cap && o->grep_max_file_size)
		cap = FA_MAX(cap, o->grep_max_file_size);
	if (cap == 0 || cap > GZ_MAX_TEXT)
		cap = GZ_MAX_TEXT;
	char *out;
	size_t out_len;
	int rc = fa_gunzip(&out, &out_len, it->data, it->len, (size_t)cap);
	if (rc == FATHOM_ENOMEM)
		return rc;
	if (rc) {
		fa_err_clear();
		it->skip = rc == FATHOM_ETOOBIG ? FATHOM_SKIP_TOO_BIG : FATHOM_SKIP_BAD_GZIP;
		it->drop = 1;
		return 0;
	}
	fa_free(it->data);
	it->data = out;
	it->len = out_len;
	if (walk_looks_binary((const unsigned char *)it->data, it->len)) {
		it->skip = FATHOM_SKIP_BINARY;
		it->drop = 1;
		return 0;
	}
	if (!it->grep_only && o->max_file_size && out_len > o->max_file_size) {
		if (!r->fx || !o->grep_max_file_size) {
			it->skip = FATHOM_SKIP_TOO_BIG;
			it->drop = 1;
			return 0;
		}
		it->grep_only = 1;
	}
	return 0;
}

/* work: read, check and analyse one file. Skips and unchanged contents are
 * recorded for emit to report. */
static int read_file(ingest_run *r, ingest_batch *b, ingest_item *it, text_analyzer *an)
{
	const fathom_ingest_opts *o = r->opts;
	const file_ent *e = it->ent;
	uint64_t cap = it->grep_only ? FA_MAX(o->grep_max_file_size, o->max_file_size) : o->max_file_size;
	/* A confined run judges the file again by the descriptor it reads:
	 * one swapped for a link out since the walk saw it is skipped. */
	int outside = 0;
	int rc = fa_read_file_within_real(&it->data, &it->len, e->path, cap ? cap : SIZE_MAX,
	                                  r->confine_real, &outside);
	if (outside) {
		it->skip = FATHOM_SKIP_OUTSIDE_ROOT;
		it->drop = 1;
		return 0;
	}
	if (rc == FATHOM_ETOOBIG) {
		it->skip = FATHOM_SKIP_TOO_BIG;
		it->drop = 1;
		return 0;
	}
	if (rc == FATHOM_EINVAL) {
		/* no longer a regular file (a FIFO put in its place since the
		 * walk): skipped without waiting on it, and it leaves the index,
		 * as the next walk would make it */
		it->skip = FATHOM_SKIP_SPECIAL;
		it->drop = 1;
		return 0;
	}
	if (rc) {
		it->skip = FATHOM_SKIP_UNREADABLE;
		return 0;
	}
	it->bytes = it->len;
	size_t disk_len = it->len;   /* the size on disk, which the index keeps */
	int gz = fa_gz_name(e->key);
	if (!gz && walk_looks_binary((const unsigned char *)it->data, it->len)) {
		/* A file that turned binary leaves the index. */
		it->skip = FATHOM_SKIP_BINARY;
		it->drop = 1;
		return 0;
	}
	/* The hash of the bytes on disk: an unchanged .gz is not decompressed. */
	uint64_t h = fa_hash64(it->data, it->len, 0);
	if (it->known && !it->upgrade && it->old.content_hash == h && it->old.size == it->len) {
		it->same = 1;
		return 0;
	}
	if (gz && (rc = gunzip_item(r, it)) != 0)
		return rc;
	if (it->skip)
		return 0;
	if (it->grep_only) {
		/* For grep alone: its bytes go to the trigram index, the document
		 * records its path, language, size and mtime, and no text or
		 * chunks are stored (fathom grep reads files from disk). */
		const char *lang = "text";
		int kind = text_detect_kind(e->key, &lang);
		const char *base = strrchr(e->key, '/');
		it->in = (ix_doc_in){
			.key = e->key, .path = e->key, .title = base ? base + 1 : e->key, .url = "",
			.lang = lang, .kind = (uint8_t)kind, .size = disk_len, .mtime_ns = e->mtime_ns,
			.content_hash = h, .text = "", .text_len = 0, .trigrams = 1, .grep_only = 1,
			.raw = it->data, .raw_len = it->len,
		};
		it->add = 1;
		return ix_analyse_doc(b->an, an, &it->in, &it->handle);
	}
	it->src = (doc_src){
		.key = e->key, .path = e->key, .text = it->data, .len = it->len,
		.size = disk_len, .mtime_ns = e->mtime_ns, .hash = h, .is_file = 1,
	};
	return ingest_analyse_item(r, b, it, an);
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
		return ingest_item_error(it);
	if (it->skip == FATHOM_SKIP_UNREADABLE || it->skip == FATHOM_SKIP_TOO_BIG ||
	    it->skip == FATHOM_SKIP_SPECIAL) {
		ingest_skip(r, e->path, it->skip);
		return it->drop && it->known ? ix_delete_doc(r->fx->ix, e->key) : 0;
	}
	r->st->bytes_read += it->bytes;
	if (it->skip) {
		ingest_skip(r, e->path, it->skip);
		return it->drop && it->known ? ix_delete_doc(r->fx->ix, e->key) : 0;
	}
	if (it->same) {
		r->st->files_unchanged++;
		return 0;
	}
	int rc = ingest_add_item(r, b, it);
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
	ingest_batch_reset(b);
	while (fc->next < fc->w->n && !ingest_batch_full(b)) {
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
			ingest_item_fail(b, it, rc);
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
		ingest_item_clear(&b->items[i]);
		if (!rc)
			rc = ingest_progress(fc->r, 0);
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
	int rc = ingest_run_init(&r, fx, opts, st);
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
			.confine = opts->confine_root,
			.extra = r.ignore,
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
		rc = ingest_run_pipeline(&r, &fns, &fc);
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
		rc = ingest_progress(&r, 1);
cleanup:
	fa_free(rebase);
	fa_free(g.gone);
	fa_free(roots);
	fa_free(w.ents);
	fa_arena_free(&w.names);
	fa_strmap_free(&seen);
	ingest_run_free(&r);
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
