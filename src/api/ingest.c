/*
 * ingest.c — the ingest entry points of the public API. It joins the tree
 * walker and the JSONL reader (src/ingest) to the chunker (src/text) and the
 * index writer (src/index), and decides what is new, changed or gone.
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

/* State shared by one ingest call. */
typedef struct ingest_run {
	fathom_index *fx;
	const fathom_ingest_opts *opts;
	fathom_ingest_stats *st;
	double t0, last_progress;
	uint64_t bytes_total;
	fbuf text;            /* repaired document text */
	ix_chunk_in *chunks;  /* chunks of the current document */
	size_t n_chunks, cap_chunks;
	fa_arena scratch;     /* heading trails of the current document */
	const char **meta;    /* run meta + document meta */
	size_t cap_meta;
	int stop;             /* a callback asked to stop */
	fathom_ingest_opts own_opts;   /* the defaults, when the caller gave none */
	fathom_ingest_stats own_stats; /* the counts, of the current version */
	fathom_ingest_stats *out_stats; /* the caller's, filled from own_stats as
	                                 * far as its version goes; or NULL */
	fathom_chunk_cb chunk_cb; /* set: fathom_chunk_paths, nothing is indexed */
	void *chunk_ctx;
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

static int collect_chunk(void *ctx, const text_chunk *c)
{
	ingest_run *r = ctx;
	if (fa_grow((void **)&r->chunks, &r->cap_chunks, r->n_chunks + 1, sizeof *r->chunks))
		return FATHOM_ENOMEM;
	ix_chunk_in *ci = &r->chunks[r->n_chunks++];
	ci->byte_start = c->byte_start;
	ci->byte_end = c->byte_end;
	ci->line_start = c->line_start;
	ci->line_end = c->line_end;
	ci->headings = NULL;
	ci->headings_len = 0;
	if (c->headings_len) {
		/* The chunker's heading buffer is only valid during this call. */
		char *h = fa_arena_strndup(&r->scratch, c->headings, c->headings_len);
		if (!h)
			return fa_err(FATHOM_ENOMEM, "out of memory");
		ci->headings = h;
		ci->headings_len = c->headings_len;
	}
	return 0;
}

static int check_meta(const char *kv)
{
	const char *eq = strchr(kv, '=');
	if (!eq || eq == kv)
		return fa_err(FATHOM_EINVAL, "metadata \"%s\" is not KEY=VALUE", kv);
	return 0;
}

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

/* A document ready for the writer: repaired text, kind, title, chunks. */
typedef struct prepared {
	const char *text;
	size_t len;
	const char *title, *lang;
	int kind;
} prepared;

static int prepare_doc(ingest_run *r, const doc_src *d, prepared *p)
{
	const fathom_ingest_opts *o = r->opts;
	size_t n_invalid = 0;
	fbuf_reset(&r->text);
	fa_arena_reset(&r->scratch);
	int rc = text_utf8_repair(&r->text, d->text, d->len, &n_invalid);
	if (rc)
		return rc;
	r->st->invalid_utf8 += n_invalid;
	p->lang = "text";
	p->kind = DOC_TEXT;
	if (d->path && *d->path)
		p->kind = text_detect_kind(d->path, &p->lang);
	p->text = r->text.len ? (const char *)r->text.data : "";
	p->len = r->text.len;

	p->title = d->title;
	if ((!p->title || !*p->title) && p->kind == DOC_MARKDOWN) {
		size_t tlen = 0;
		const char *t = text_markdown_title(p->text, p->len, &tlen);
		if (t && tlen)
			p->title = fa_arena_strndup(&r->scratch, t, tlen);
	}
	if (!p->title || !*p->title) {
		const char *base = d->path && *d->path ? strrchr(d->path, '/') : NULL;
		p->title = base ? base + 1 : (d->path && *d->path ? d->path : "");
	}
	text_chunk_opts co = { o->chunk_target, o->chunk_overlap, o->chunk_max };
	r->n_chunks = 0;
	return text_chunk_doc(p->text, p->len, p->kind, &co, collect_chunk, r);
}

static int add_one(ingest_run *r, const doc_src *d)
{
	const fathom_ingest_opts *o = r->opts;
	prepared p;
	int rc = prepare_doc(r, d, &p);
	if (rc)
		return rc;
	size_t nm = o->n_meta + d->n_meta;
	if (fa_grow((void **)&r->meta, &r->cap_meta, nm + 1, sizeof *r->meta))
		return FATHOM_ENOMEM;
	for (size_t i = 0; i < o->n_meta; i++)
		r->meta[i] = o->meta[i];
	for (size_t i = 0; i < d->n_meta; i++)
		r->meta[o->n_meta + i] = d->meta[i];

	ix_doc_in in = {
		.key = d->key,
		.path = d->path ? d->path : "",
		.title = p.title,
		.url = d->url ? d->url : "",
		.lang = p.lang,
		.kind = (uint8_t)p.kind,
		.tags = d->tags,
		.n_tags = d->n_tags,
		.meta = r->meta,
		.n_meta = nm,
		.size = d->size,
		.mtime_ns = d->mtime_ns,
		.content_hash = d->hash,
		.text = p.text,
		.text_len = p.len,
		.chunks = r->chunks,
		.n_chunks = r->n_chunks,
		.ident_min_len = r->opts->ident_min_len,
		.ident_max = r->opts->ident_max,
		.trigrams = d->is_file,
		.raw = d->is_file ? d->text : NULL,   /* trigrams of the bytes grep reads */
		.raw_len = d->is_file ? d->len : 0,
	};
	if ((rc = ix_add_doc(r->fx->ix, r->fx->an, &in)) != 0)
		return rc;
	r->st->docs_added++;
	r->st->chunks_added += r->n_chunks;
	return 0;
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
	if (opts->version == 1 || opts->version == 2) {
		/* a caller built before version 2 (3): its struct ends before
		 * the identifier limits (the grep settings), which take their
		 * defaults */
		memcpy(&r->own_opts, opts, opts->version == 1 ? offsetof(fathom_ingest_opts, ident_min_len)
		                                              : offsetof(fathom_ingest_opts, grep_max_file_size));
		r->own_opts.version = FATHOM_INGEST_OPTS_VERSION;
		opts = r->opts = &r->own_opts;
	}
	if (opts->version != FATHOM_INGEST_OPTS_VERSION)
		return fa_err(FATHOM_EINVAL, "fathom_ingest_opts version %u, expected %u",
		              opts->version, FATHOM_INGEST_OPTS_VERSION);
	if (opts->ident_min_len > 64 || opts->ident_max > 1000)
		return fa_err(FATHOM_EINVAL, "identifier limits: a minimum length up to 64 and up to "
		              "1000 per chunk");
	if (opts->chunk_target < 64 || opts->chunk_max < opts->chunk_target ||
	    opts->chunk_overlap >= opts->chunk_target)
		return fa_err(FATHOM_EINVAL, "chunk sizes must satisfy 64 <= target <= max and overlap < target");
	for (size_t i = 0; i < opts->n_meta; i++)
		if (check_meta(opts->meta[i]))
			return FATHOM_EINVAL;
	r->fx = fx;
	r->t0 = r->last_progress = fa_now();
	fbuf_init(&r->text, 0);
	fa_arena_init(&r->scratch, 16 * 1024, 0);
	return 0;
}

static void run_free(ingest_run *r)
{
	r->st->elapsed_sec = fa_now() - r->t0;
	if (r->out_stats)
		fa_struct_copy_out(FA_INGEST_STATS, r->out_stats, r->st);
	fbuf_free(&r->text);
	fa_free(r->chunks);
	fa_free(r->meta);
	fa_arena_free(&r->scratch);
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

/* fathom_chunk_paths: hand each chunk to the caller instead of indexing. */
static int emit_chunks(ingest_run *r, const doc_src *d)
{
	prepared p;
	int rc = prepare_doc(r, d, &p);
	for (size_t i = 0; i < r->n_chunks && !rc; i++) {
		const ix_chunk_in *c = &r->chunks[i];
		fathom_chunk_info ci = {
			.path = d->path, .title = p.title, .lang = p.lang, .order = (uint32_t)i,
			.line_start = c->line_start, .line_end = c->line_end,
			.byte_start = c->byte_start, .byte_end = c->byte_end,
			.headings = c->headings ? c->headings : "",
			.text = p.text + c->byte_start, .len = c->byte_end - c->byte_start,
		};
		rc = r->chunk_cb(r->chunk_ctx, &ci);
		if (rc)
			rc = fa_err(FATHOM_EINTERRUPTED, "stopped by the chunk callback");
	}
	if (!rc) {
		r->st->docs_added++;
		r->st->chunks_added += r->n_chunks;
	}
	return rc;
}

/* A file indexed for grep alone: its bytes go to the trigram index, the
 * document records its path, language, size and mtime, and no text or
 * chunks are stored (fathom grep reads files from disk). */
static int add_grep_only(ingest_run *r, const file_ent *e, const char *data, size_t len,
                         uint64_t hash)
{
	const char *lang = "text";
	int kind = text_detect_kind(e->key, &lang);
	const char *base = strrchr(e->key, '/');
	ix_doc_in in = {
		.key = e->key, .path = e->key, .title = base ? base + 1 : e->key, .url = "",
		.lang = lang, .kind = (uint8_t)kind, .meta = r->opts->meta, .n_meta = r->opts->n_meta,
		.size = len, .mtime_ns = e->mtime_ns, .content_hash = hash, .text = "", .text_len = 0,
		.trigrams = 1, .grep_only = 1, .raw = data, .raw_len = len,
	};
	int rc = ix_add_doc(r->fx->ix, r->fx->an, &in);
	if (!rc) {
		r->st->docs_added++;
		r->st->files_grep_only++;
	}
	return rc;
}

static int index_file(ingest_run *r, const file_ent *e, fa_strmap *seen)
{
	const fathom_ingest_opts *o = r->opts;
	r->st->files_seen++;
	int is_new;
	if (!fa_strmap_upsert(seen, e->key, strlen(e->key), &is_new))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (!is_new)
		return 0; /* the same file reached through two roots */
	/* Over the full-text size cap (or all of them, grep_only): for grep alone. */
	int grep_only = r->fx && (o->grep_only || (o->max_file_size && e->size > o->max_file_size));
	ix_doc_state old;
	int rc = r->fx ? ix_doc_lookup(r->fx->ix, e->key, &old) : FATHOM_ENOTFOUND;
	int known = rc == 0;
	if (rc && rc != FATHOM_ENOTFOUND)
		return rc;
	/* A document indexed for grep alone that may now be indexed in full
	 * is read again; a full one serves grep as well and stays. */
	int upgrade = known && old.grep_only && !grep_only;
	if (known && !upgrade && old.size == e->size && old.mtime_ns == e->mtime_ns) {
		r->st->files_unchanged++;
		return 0;
	}
	uint64_t cap = grep_only ? FA_MAX(o->grep_max_file_size, o->max_file_size) : o->max_file_size;
	char *data = NULL;
	size_t len = 0;
	rc = fa_read_file(&data, &len, e->path, cap ? cap : SIZE_MAX);
	if (rc == FATHOM_ETOOBIG) {
		skip(r, e->path, FATHOM_SKIP_TOO_BIG);
		return known ? ix_delete_doc(r->fx->ix, e->key) : 0;
	}
	if (rc) {
		skip(r, e->path, FATHOM_SKIP_UNREADABLE);
		return 0;
	}
	r->st->bytes_read += len;
	int drop = 0;
	if (walk_looks_binary((const unsigned char *)data, len)) {
		skip(r, e->path, FATHOM_SKIP_BINARY);
		drop = 1;
	}
	uint64_t h = drop ? 0 : fa_hash64(data, len, 0);
	if (!drop && known && !upgrade && old.content_hash == h && old.size == len) {
		r->st->files_unchanged++;
		fa_free(data);
		return 0;
	}
	if (drop) {
		fa_free(data);
		/* A file that turned binary leaves the index. */
		return known ? ix_delete_doc(r->fx->ix, e->key) : 0;
	}
	if (grep_only) {
		rc = add_grep_only(r, e, data, len, h);
	} else {
		doc_src d = {
			.key = e->key, .path = e->key, .text = data, .len = len,
			.size = len, .mtime_ns = e->mtime_ns, .hash = h, .is_file = 1,
		};
		rc = r->chunk_cb ? emit_chunks(r, &d) : add_one(r, &d);
	}
	fa_free(data);
	if (!rc)
		r->st->files_indexed++;
	return rc;
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
	/* 2. Read what changed and index it. */
	for (size_t i = 0; i < w.n && !rc; i++) {
		rc = index_file(&r, &w.ents[i], &seen);
		if (!rc)
			rc = progress(&r, 0);
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

typedef struct jsonl_ctx {
	ingest_run *r;
	const char *file;
	int rc;
} jsonl_ctx;

static int on_jsonl_doc(void *ctx, const jsonl_doc *jd)
{
	jsonl_ctx *j = ctx;
	ingest_run *r = j->r;
	r->st->files_seen++;
	r->st->bytes_read += jd->body_len;
	doc_src d = {
		.key = jd->id, .path = jd->path, .title = jd->title, .url = jd->url,
		.tags = jd->tags, .n_tags = jd->n_tags, .meta = jd->meta, .n_meta = jd->n_meta,
		.text = jd->body, .len = jd->body_len, .size = jd->body_len,
		.hash = fa_hash64(jd->body, jd->body_len, 0),
	};
	int rc = add_one(r, &d);
	if (!rc)
		rc = progress(r, 0);
	if (rc)
		j->rc = rc;
	return rc;
}

static void on_jsonl_error(void *ctx, uint64_t line_no, const char *msg)
{
	jsonl_ctx *j = ctx;
	char where[1200];
	snprintf(where, sizeof where, "%s:%llu: %s", j->file, (unsigned long long)line_no, msg);
	skip(j->r, where, FATHOM_SKIP_BAD_RECORD);
}

/* JSON lines from an open stream (size: its length for progress, or 0). */
static int add_jsonl_stream(fathom_index *fx, FILE *f, const char *name, uint64_t size,
                            const fathom_ingest_opts *opts, fathom_ingest_stats *st)
{
	ingest_run r;
	int rc = run_init(&r, fx, opts, st);
	if (rc)
		return rc;
	r.bytes_total = size;
	jsonl_ctx j = { .r = &r, .file = name };
	jsonl_opts jo = { .on_doc = on_jsonl_doc, .on_error = on_jsonl_error, .ctx = &j };
	jsonl_stats js;
	rc = jsonl_read_stream(f, &jo, &js);
	if (j.rc)
		rc = j.rc;
	if (!rc)
		rc = progress(&r, 1);
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
	if (!rc) {
		const char *body = doc->body ? doc->body : "";
		size_t len = doc->body ? doc->body_len : 0;
		doc_src d = {
			.key = doc->id, .path = doc->path, .title = doc->title, .url = doc->url,
			.tags = doc->tags, .n_tags = doc->n_tags, .meta = doc->meta,
			.n_meta = doc->n_meta, .text = body, .len = len, .size = len,
			.hash = fa_hash64(body, len, 0),
		};
		rc = add_one(&r, &d);
	}
	run_free(&r);
	return rc;
}
