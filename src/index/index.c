/*
 * index.c — an index folder: opening it (as a reader or as the one writer),
 * the committed snapshot, commits, rollback, merges policy, verification and
 * sizes.
 *
 * The commit protocol:
 *   1. pending documents are written to a new segment file and fsynced;
 *   2. small or heavily deleted segments are merged into a new file, fsynced;
 *   3. changed tombstones go to new seg-<id>.<gen>.fdel files, fsynced;
 *   4. the folder is fsynced, so those names are durable;
 *   5. MANIFEST is replaced atomically (tmp, fsync, rename, fsync folder).
 * Only step 5 makes anything visible. A crash before it leaves the previous
 * MANIFEST, which names none of the new files; the next writer deletes them.
 * After step 5 the files no longer named are deleted (readers that mapped
 * them keep their mapping).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "index/index_int.h"

#define DEFAULT_FLUSH_BUDGET ((size_t)256 << 20)
#define OPEN_RETRIES 20

/* ---- small helpers ---------------------------------------------------------- */

const char *ix_dir(const ix_index *ix)
{
	return ix->dir;
}

const char *ix_root(const ix_index *ix)
{
	return ix->man.root;
}

int ix_set_root(ix_index *ix, const char *root)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	size_t n = strlen(root);
	if (root[0] != '/' || n >= sizeof ix->man.root)
		return fa_err(FATHOM_EINVAL, "index root must be an absolute path under %u bytes",
		              IX_ROOT_MAX);
	if (strcmp(ix->man.root, root) == 0)
		return 0;
	memcpy(ix->man.root, root, n + 1);
	ix->root_dirty = 1;
	return 0;
}

const char *ix_stem_language(const ix_index *ix)
{
	return ix->man.stem_lang;
}

uint64_t ix_generation(const ix_index *ix)
{
	return ix->man.generation;
}

size_t ix_nsegments(const ix_index *ix)
{
	return ix->nsegs;
}

ix_segment *ix_segment_at(const ix_index *ix, size_t i)
{
	return i < ix->nsegs ? ix->segs[i] : NULL;
}

uint64_t ix_total_chunks(const ix_index *ix)
{
	return ix->total_chunks;
}

double ix_avg_field_len(const ix_index *ix, int field)
{
	if (field < 0 || field >= FATHOM_NFIELDS || ix->total_chunks == 0)
		return 0.0;
	return (double)ix->field_len_sum[field] / (double)ix->total_chunks;
}

void ix_set_flush_budget(ix_index *ix, size_t bytes)
{
	ix->flush_budget = bytes;
}

void ix_set_merge_policy(ix_index *ix, unsigned max_segments, double max_deleted_share)
{
	ix->merge_max_segments = max_segments;
	ix->merge_max_deleted = max_deleted_share;
}

int ix_optimize(ix_index *ix)
{
	unsigned ms = ix->merge_max_segments;
	double md = ix->merge_max_deleted;
	ix->merge_max_segments = 1;
	ix->merge_max_deleted = 0.0;
	int rc = ix_commit(ix);
	ix->merge_max_segments = ms;
	ix->merge_max_deleted = md;
	return rc;
}

uint32_t ix_next_seg_id(ix_index *ix)
{
	return ix->man.next_seg_id++;
}

static void compute_totals(ix_index *ix)
{
	ix->total_chunks = 0;
	memset(ix->field_len_sum, 0, sizeof ix->field_len_sum);
	for (size_t i = 0; i < ix->nsegs; i++) {
		ix->total_chunks += ix->segs[i]->nchunks;
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			ix->field_len_sum[f] += ix->segs[i]->field_len_sum[f];
	}
}

static void remove_file(const char *dir, const char *name)
{
	char *p = fa_path_join(dir, name);
	if (p) {
		unlink(p);
		fa_free(p);
	}
}

/* ---- the writer's view of segments -------------------------------------- */

int ix_wseg_append(ix_index *ix, ix_segment *seg, uint64_t file_len)
{
	int rc = fa_grow((void **)&ix->w, &ix->wcap, ix->nw + 1, sizeof *ix->w);
	if (rc)
		return rc;
	ix->w[ix->nw++] = (ix_wseg){ seg, file_len, NULL, NULL, 0, 0, 0, 1 };
	return 0;
}

static void wseg_drop_dels(ix_wseg *w)
{
	fa_free(w->del_docs);
	fa_free(w->del_chunks);
	w->del_docs = w->del_chunks = NULL;
	w->n_del_docs = w->seg->n_del_docs;
	w->n_del_chunks = w->seg->n_del_chunks;
	w->dirty = 0;
}

/* Give the writer its own copy of the segment's tombstones. */
static int wseg_own_dels(ix_wseg *w)
{
	if (w->del_docs)
		return 0;
	const ix_segment *s = w->seg;
	size_t dl = ((size_t)s->ndocs + 7) / 8 + 1, cl = ((size_t)s->nchunks + 7) / 8 + 1;
	w->del_docs = fa_calloc(dl, 1);
	w->del_chunks = fa_calloc(cl, 1);
	if (!w->del_docs || !w->del_chunks) {
		fa_free(w->del_docs);
		fa_free(w->del_chunks);
		w->del_docs = w->del_chunks = NULL;
		return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	if (s->del_docs)
		memcpy(w->del_docs, s->del_docs, dl - 1);
	if (s->del_chunks)
		memcpy(w->del_chunks, s->del_chunks, cl - 1);
	w->n_del_docs = s->n_del_docs;
	w->n_del_chunks = s->n_del_chunks;
	return 0;
}

int ix_wseg_delete_doc(ix_wseg *w, uint32_t doc)
{
	ix_doc_info di;
	int rc = seg_doc(w->seg, doc, &di);
	if (rc || (rc = wseg_own_dels(w)) != 0)
		return rc;
	if (ix_bit_get(w->del_docs, doc))
		return FATHOM_ENOTFOUND;
	ix_bit_set(w->del_docs, doc);
	w->n_del_docs++;
	for (uint32_t c = di.first_chunk; c < di.first_chunk + di.n_chunks; c++) {
		if (!ix_bit_get(w->del_chunks, c)) {
			ix_bit_set(w->del_chunks, c);
			w->n_del_chunks++;
		}
	}
	w->dirty = 1;
	return 0;
}

static const uint8_t *wseg_del_docs(const ix_wseg *w)
{
	return w->del_docs ? w->del_docs : w->seg->del_docs;
}

/* ---- opening ------------------------------------------------------------------- */

static void close_snapshot(ix_index *ix)
{
	for (size_t i = 0; i < ix->nsegs; i++)
		seg_close(ix->segs[i]);
	fa_free(ix->segs);
	ix->segs = NULL;
	ix->nsegs = 0;
}

/* Open the segment a manifest entry names, and check it is that one. */
static int open_named(ix_index *ix, const ix_man_seg *e, ix_segment **out)
{
	*out = NULL;
	char name[64];
	ix_seg_name(name, sizeof name, e->id);
	char *path = fa_path_join(ix->dir, name);
	if (!path)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	ix_segment *s;
	int rc = seg_open_file(&s, path);
	if (!rc && (s->id != e->id || s->footer_crc != e->footer_crc || s->len != e->file_len ||
	            s->nchunks != e->nchunks || s->ndocs != e->ndocs)) {
		rc = fa_err(FATHOM_ECORRUPT, "%s: not the segment the manifest names", path);
		seg_close(s);
	}
	fa_free(path);
	if (!rc)
		*out = s;
	return rc;
}

/* Open the segments the manifest names. ENOTFOUND: a file is gone (a
 * writer committed meanwhile: read the manifest again). */
static int load_snapshot(ix_index *ix)
{
	ix_manifest *m = &ix->man;
	fa_free(ix->gloss);
	ix->gloss = NULL;
	ix->gloss_len = 0;
	ix->gloss_version++;
	if (m->glossary) {
		int rc = ix_glossary_read(ix->dir, m->glossary, &ix->gloss, &ix->gloss_len);
		if (rc)
			return rc;
	}
	ix->segs = fa_calloc(m->nsegs ? m->nsegs : 1, sizeof *ix->segs);
	if (!ix->segs)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < m->nsegs; i++) {
		const ix_man_seg *e = &m->segs[i];
		ix_segment *s;
		int rc = open_named(ix, e, &s);
		if (rc)
			return rc;
		ix->segs[ix->nsegs++] = s;
		if (e->del_gen) {
			uint8_t *dd, *dc;
			rc = ix_tomb_read(ix->dir, e->id, e->del_gen, s->ndocs, s->nchunks, &dd, &dc);
			if (rc)
				return rc;
			seg_set_tombstones(s, dd, dc, e->del_gen);
		}
	}
	compute_totals(ix);
	return 0;
}

/* Bring a read-only handle to the newest commit: segments it has open are
 * kept (their tombstones reread when they changed), new ones opened, gone
 * ones closed. Nothing changes when a step fails, so the handle goes on
 * serving the snapshot it had. *changed says whether there was a newer one. */
int ix_refresh(ix_index *ix, int *changed)
{
	*changed = 0;
	if (ix->flags & IX_WRITE)
		return 0;   /* a writer's view is the newest by construction */
	for (int attempt = 0;; attempt++) {
		ix_manifest m;
		int rc = ix_manifest_read(&m, ix->dir);
		if (rc)
			return rc;
		if (m.generation == ix->man.generation) {
			ix_manifest_free(&m);
			return 0;
		}
		uint32_t n = m.nsegs;
		ix_segment **segs = fa_calloc(n ? n : 1, sizeof *segs);
		uint8_t *kept = fa_calloc(ix->nsegs ? ix->nsegs : 1, 1);   /* old segs reused */
		uint8_t *opened = fa_calloc(n ? n : 1, 1);                 /* new segs opened */
		uint8_t **tdocs = fa_calloc(n ? n : 1, sizeof *tdocs);
		uint8_t **tchunks = fa_calloc(n ? n : 1, sizeof *tchunks);
		uint8_t *retomb = fa_calloc(n ? n : 1, 1);                 /* tombstones to set */
		uint8_t *gloss = NULL;
		size_t gloss_len = 0;
		if (!segs || !kept || !opened || !tdocs || !tchunks || !retomb)
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
		if (!rc && m.glossary)
			rc = ix_glossary_read(ix->dir, m.glossary, &gloss, &gloss_len);
		for (uint32_t i = 0; i < n && !rc; i++) {
			const ix_man_seg *e = &m.segs[i];
			ix_segment *s = NULL;
			for (size_t j = 0; j < ix->nsegs && !s; j++) {
				if (!kept[j] && ix->segs[j]->id == e->id && ix->segs[j]->footer_crc == e->footer_crc) {
					s = ix->segs[j];
					kept[j] = 1;
				}
			}
			if (!s) {
				if ((rc = open_named(ix, e, &s)) != 0)
					break;
				opened[i] = 1;
			}
			segs[i] = s;
			if (s->del_gen != e->del_gen) {
				retomb[i] = 1;
				if (e->del_gen)
					rc = ix_tomb_read(ix->dir, e->id, e->del_gen, s->ndocs, s->nchunks, &tdocs[i],
					                  &tchunks[i]);
			}
		}
		if (!rc) {
			/* all read: switch over */
			for (uint32_t i = 0; i < n; i++) {
				if (retomb[i]) {
					seg_set_tombstones(segs[i], tdocs[i], tchunks[i], m.segs[i].del_gen);
					tdocs[i] = tchunks[i] = NULL;
				}
			}
			for (size_t j = 0; j < ix->nsegs; j++)
				if (!kept[j])
					seg_close(ix->segs[j]);
			fa_free(ix->segs);
			ix->segs = segs;
			ix->nsegs = n;
			segs = NULL;
			ix_manifest_free(&ix->man);
			ix->man = m;
			memset(&m, 0, sizeof m);
			fa_free(ix->gloss);
			ix->gloss = gloss;
			ix->gloss_len = gloss_len;
			ix->gloss_version++;
			gloss = NULL;
			compute_totals(ix);
			*changed = 1;
		} else if (segs) {
			for (uint32_t i = 0; i < n; i++)
				if (opened[i])
					seg_close(segs[i]);
		}
		for (uint32_t i = 0; tdocs && tchunks && i < n; i++) {
			fa_free(tdocs[i]);
			fa_free(tchunks[i]);
		}
		fa_free(segs);
		fa_free(kept);
		fa_free(opened);
		fa_free(tdocs);
		fa_free(tchunks);
		fa_free(retomb);
		fa_free(gloss);
		ix_manifest_free(&m);
		/* a commit removed a file meanwhile: its manifest names the new ones */
		if (rc == FATHOM_ENOTFOUND && attempt < OPEN_RETRIES)
			continue;
		return rc;
	}
}

static int take_lock(ix_index *ix)
{
	char *path = fa_path_join(ix->dir, "LOCK");
	if (!path)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	int rc = 0;
	ix->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (ix->lock_fd < 0) {
		rc = fa_err(FATHOM_EIO, "%s: %s", path, strerror(errno));
	} else if (flock(ix->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			rc = fa_err(FATHOM_ELOCKED,
			            "%s: another writer has the index open (it holds %s); "
			            "wait for it to finish", ix->dir, path);
		else
			rc = fa_err(FATHOM_EIO, "%s: flock: %s", path, strerror(errno));
		close(ix->lock_fd);
		ix->lock_fd = -1;
	}
	fa_free(path);
	return rc;
}

/* Is name a file the manifest needs? */
static int named_by_manifest(const ix_manifest *m, const char *name)
{
	char buf[64];
	for (uint32_t i = 0; i < m->nsegs; i++) {
		ix_seg_name(buf, sizeof buf, m->segs[i].id);
		if (strcmp(buf, name) == 0)
			return 1;
		if (m->segs[i].del_gen) {
			ix_del_name(buf, sizeof buf, m->segs[i].id, m->segs[i].del_gen);
			if (strcmp(buf, name) == 0)
				return 1;
		}
	}
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

/* Remove what an interrupted commit left behind. Only our own names. */
static void remove_leftovers(ix_index *ix)
{
	DIR *d = opendir(ix->dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		const char *n = e->d_name;
		int ours = (strncmp(n, "seg-", 4) == 0 &&
		            (ends_with(n, ".fseg") || ends_with(n, ".fdel") || ends_with(n, ".tmp"))) ||
		           (strncmp(n, "glossary-", 9) == 0 &&
		            (ends_with(n, ".fglo") || ends_with(n, ".tmp"))) ||
		           strcmp(n, "MANIFEST.tmp") == 0;
		char gname[64] = "";
		if (ix->man.glossary)
			ix_glossary_name(gname, sizeof gname, ix->man.glossary);
		if (ours && !named_by_manifest(&ix->man, n) && strcmp(n, gname) != 0)
			remove_file(ix->dir, n);
	}
	closedir(d);
}

static int init_writer(ix_index *ix)
{
	for (size_t i = 0; i < ix->nsegs; i++) {
		int rc = ix_wseg_append(ix, ix->segs[i], ix->segs[i]->len);
		if (rc)
			return rc;
		ix->w[ix->nw - 1].fresh = 0;
		ix->w[ix->nw - 1].n_del_docs = ix->segs[i]->n_del_docs;
		ix->w[ix->nw - 1].n_del_chunks = ix->segs[i]->n_del_chunks;
	}
	return ix_pending_new(&ix->pend);
}

int ix_open(ix_index **out, const char *dir, unsigned flags, const char *stem_lang)
{
	*out = NULL;
	if (!dir || !*dir)
		return fa_err(FATHOM_EINVAL, "no index folder given");
	if (flags & IX_CREATE)
		flags |= IX_WRITE;
	ix_index *ix = fa_calloc(1, sizeof *ix);
	if (!ix || !(ix->dir = fa_strdup(dir))) {
		fa_free(ix);
		return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	ix->flags = flags;
	ix->lock_fd = -1;
	ix->flush_budget = DEFAULT_FLUSH_BUDGET;
	ix->merge_max_segments = 8;
	ix->merge_max_deleted = 0.30;
	int rc = 0;
	if ((flags & IX_CREATE) && (rc = fa_mkdir_p(dir)) != 0)
		goto fail;
	if ((flags & IX_WRITE) && (rc = take_lock(ix)) != 0)
		goto fail;
	for (int attempt = 0;; attempt++) {
		rc = ix_manifest_read(&ix->man, dir);
		if (rc == FATHOM_ENOTFOUND && (flags & IX_CREATE)) {
			const char *lang = stem_lang ? stem_lang : "english";
			if (strlen(lang) >= sizeof ix->man.stem_lang) {
				rc = fa_err(FATHOM_EINVAL, "stem language name too long");
				goto fail;
			}
			memset(&ix->man, 0, sizeof ix->man);
			memcpy(ix->man.stem_lang, lang, strlen(lang) + 1);
			ix->man.next_seg_id = 1;
			rc = ix_manifest_write(&ix->man, dir);
		}
		if (rc)
			goto fail;
		rc = load_snapshot(ix);
		/* A reader can lose a race with a commit that removed a file it
		 * was about to open; the new manifest names the files to use. */
		if (rc == FATHOM_ENOTFOUND && !(flags & IX_WRITE) && attempt < OPEN_RETRIES) {
			close_snapshot(ix);
			ix_manifest_free(&ix->man);
			continue;
		}
		if (rc == FATHOM_ENOTFOUND)
			rc = fa_err_wrap(FATHOM_ECORRUPT, "%s: a file the manifest names is missing", dir);
		break;
	}
	if (rc)
		goto fail;
	if (flags & IX_WRITE) {
		remove_leftovers(ix);
		if ((rc = init_writer(ix)) != 0)
			goto fail;
	}
	*out = ix;
	return 0;
fail:
	ix_close(ix);
	return rc;
}

static void drop_fresh(ix_index *ix)
{
	/* Uncommitted segment files: nobody names them. */
	size_t k = 0;
	for (size_t i = 0; i < ix->nw; i++) {
		ix_wseg *w = &ix->w[i];
		if (w->fresh) {
			char *p = fa_strdup(seg_path(w->seg));
			fa_free(w->del_docs);
			fa_free(w->del_chunks);
			seg_close(w->seg);
			if (p) {
				unlink(p);
				fa_free(p);
			}
			continue;
		}
		wseg_drop_dels(w);
		ix->w[k++] = *w;
	}
	ix->nw = k;
}

void ix_close(ix_index *ix)
{
	if (!ix)
		return;
	if (ix->w)
		drop_fresh(ix);
	fa_free(ix->w);
	ix_pending_free(ix->pend);
	close_snapshot(ix);
	ix_manifest_free(&ix->man);
	fa_free(ix->gloss);
	fa_free(ix->gloss_new);
	if (ix->lock_fd >= 0)
		close(ix->lock_fd);   /* releases the flock */
	fa_free(ix->dir);
	fa_free(ix);
}

/* ---- deletes and lookups ------------------------------------------------------ */

int ix_delete_doc(ix_index *ix, const char *key)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	if (!key)
		return fa_err(FATHOM_EINVAL, "no key");
	int rc = ix_pending_delete(ix->pend, key);
	if (rc != FATHOM_ENOTFOUND)
		return rc;
	for (size_t i = ix->nw; i-- > 0;) {
		ix_wseg *w = &ix->w[i];
		uint32_t doc;
		rc = seg_find_doc_live(w->seg, key, wseg_del_docs(w), &doc);
		if (rc == FATHOM_ENOTFOUND)
			continue;
		if (rc)
			return rc;
		if (ix_bit_get(wseg_del_docs(w), doc))
			continue;
		return ix_wseg_delete_doc(w, doc);
	}
	return fa_err(FATHOM_ENOTFOUND, "no document %s", key);
}

int ix_doc_lookup(ix_index *ix, const char *key, ix_doc_state *out)
{
	if (!key)
		return fa_err(FATHOM_EINVAL, "no key");
	if (ix->pend && ix_pending_lookup(ix->pend, key, out) == 0)
		return 0;
	size_t n = ix->pend ? ix->nw : ix->nsegs;
	for (size_t i = n; i-- > 0;) {
		ix_segment *s = ix->pend ? ix->w[i].seg : ix->segs[i];
		const uint8_t *del = ix->pend ? wseg_del_docs(&ix->w[i]) : s->del_docs;
		uint32_t doc;
		int rc = seg_find_doc_live(s, key, del, &doc);
		if (rc == FATHOM_ENOTFOUND)
			continue;
		if (rc)
			return rc;
		if (ix_bit_get(del, doc))
			continue;
		ix_doc_info di;
		if ((rc = seg_doc(s, doc, &di)) != 0)
			return rc;
		out->size = di.size;
		out->mtime_ns = di.mtime_ns;
		out->content_hash = di.content_hash;
		out->grep_only = di.grep_only;
		return 0;
	}
	return FATHOM_ENOTFOUND;
}

int ix_foreach_live_key(ix_index *ix, int (*cb)(void *ctx, const char *key), void *ctx)
{
	int rc;
	if (ix->pend && (rc = ix_pending_foreach(ix->pend, cb, ctx)) != 0)
		return rc;
	size_t n = ix->pend ? ix->nw : ix->nsegs;
	for (size_t i = 0; i < n; i++) {
		ix_segment *s = ix->pend ? ix->w[i].seg : ix->segs[i];
		const uint8_t *del = ix->pend ? wseg_del_docs(&ix->w[i]) : s->del_docs;
		for (uint32_t d = 0; d < s->ndocs; d++) {
			if (ix_bit_get(del, d))
				continue;
			ix_doc_info di;
			if ((rc = seg_doc(s, d, &di)) != 0 || (rc = cb(ctx, di.key)) != 0)
				return rc;
		}
	}
	return 0;
}

/* ---- commit ------------------------------------------------------------------ */

static uint32_t wseg_ndel_chunks(const ix_wseg *w)
{
	return w->del_chunks ? w->n_del_chunks : w->seg->n_del_chunks;
}

static uint64_t live_size(const ix_wseg *w)
{
	uint32_t n = w->seg->nchunks, del = wseg_ndel_chunks(w);
	if (n == 0)
		return w->seg->ndocs ? w->file_len : 0;
	return (uint64_t)((double)w->file_len * (double)(n - del) / (double)n);
}

static int all_deleted(const ix_wseg *w)
{
	uint32_t nd = w->del_docs ? w->n_del_docs : w->seg->n_del_docs;
	return nd == w->seg->ndocs;
}

static int by_live_size(const void *a, const void *b, void *ctx)
{
	const ix_index *ix = ctx;
	uint64_t x = live_size(&ix->w[*(const size_t *)a]), y = live_size(&ix->w[*(const size_t *)b]);
	return x < y ? -1 : x > y;
}

/* Choose the segments to merge: those with too many deletions, then the
 * smallest while there are too many segments, then any next-smallest no
 * bigger than the group so far (so a merged segment grows geometrically
 * and no segment is rewritten over and over for small additions). */
static int plan_merge(ix_index *ix, uint8_t *pick, size_t *npick)
{
	size_t n = ix->nw, k = 0;
	*npick = 0;
	memset(pick, 0, n);
	size_t *order = fa_malloc((n ? n : 1) * sizeof *order);
	if (!order)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	uint64_t group = 0;
	for (size_t i = 0; i < n; i++) {
		const ix_wseg *w = &ix->w[i];
		order[i] = i;
		uint32_t nc = w->seg->nchunks;
		if (all_deleted(w) ||
		    (nc && (double)wseg_ndel_chunks(w) > ix->merge_max_deleted * (double)nc)) {
			pick[i] = 1;
			k++;
			group += live_size(w);
		}
	}
	qsort_r(order, n, sizeof *order, by_live_size, ix);
	size_t forced = k;
	/* After merging k segments, n - k + 1 remain. */
	for (size_t j = 0; j < n && (k ? n - k + 1 : n) > ix->merge_max_segments; j++) {
		if (pick[order[j]])
			continue;
		pick[order[j]] = 1;
		k++;
		group += live_size(&ix->w[order[j]]);
	}
	if (k > forced || k >= 2) {
		for (size_t j = 0; j < n; j++) {
			if (pick[order[j]])
				continue;
			if (live_size(&ix->w[order[j]]) > group)
				break;
			pick[order[j]] = 1;
			k++;
			group += live_size(&ix->w[order[j]]);
		}
	}
	fa_free(order);
	*npick = k;
	return 0;
}

/* Merge the picked segments; on success the list in ix->w is updated and
 * the dropped wsegs are returned in *gone (to close after the commit). */
static int do_merge(ix_index *ix, const uint8_t *pick, size_t npick, ix_wseg *gone,
                    size_t *ngone, ix_wseg *made)
{
	ix_wseg **in = fa_malloc(npick * sizeof *in);
	if (!in)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	size_t k = 0, first = SIZE_MAX;
	for (size_t i = 0; i < ix->nw; i++) {
		if (pick[i]) {
			in[k++] = &ix->w[i];
			if (first == SIZE_MAX)
				first = i;
		}
	}
	ix_segment *seg = NULL;
	uint64_t len = 0;
	int rc = ix_merge(ix, in, k, &seg, &len);
	fa_free(in);
	if (rc)
		return rc;
	memset(made, 0, sizeof *made);
	made->seg = seg;
	made->file_len = len;
	made->fresh = 1;
	/* Rebuild the list: the merged segment takes the place of the first input. */
	size_t out = 0;
	*ngone = 0;
	for (size_t i = 0; i < ix->nw; i++) {
		if (!pick[i]) {
			ix->w[out++] = ix->w[i];
			continue;
		}
		gone[(*ngone)++] = ix->w[i];
		if (i == first && seg)
			ix->w[out++] = *made;
	}
	ix->nw = out;
	return 0;
}

static void unlink_seg_files(ix_index *ix, const ix_segment *s)
{
	char name[64];
	ix_seg_name(name, sizeof name, s->id);
	remove_file(ix->dir, name);
	if (s->del_gen) {
		ix_del_name(name, sizeof name, s->id, s->del_gen);
		remove_file(ix->dir, name);
	}
}

int ix_commit(ix_index *ix)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	int rc = ix_pending_flush(ix);
	if (rc)
		return rc;

	/* Merge. The old list is kept until the manifest is written, so a
	 * failure leaves the writer as it was. */
	size_t n0 = ix->nw, npick = 0, ngone = 0;
	ix_wseg *saved = fa_malloc((n0 ? n0 : 1) * sizeof *saved);
	ix_wseg *gone = fa_malloc((n0 ? n0 : 1) * sizeof *gone);
	uint8_t *pick = fa_malloc(n0 ? n0 : 1);
	ix_man_seg *ms = NULL;
	ix_segment **ns = NULL;
	ix_wseg made = { 0 };
	int merged = 0, manifest_written = 0;
	uint64_t gen = ix->man.generation + 1;
	if (!saved || !gone || !pick) {
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
		goto cleanup;
	}
	memcpy(saved, ix->w, n0 * sizeof *saved);
	if ((rc = plan_merge(ix, pick, &npick)) != 0)
		goto cleanup;
	if (npick && (rc = do_merge(ix, pick, npick, gone, &ngone, &made)) != 0)
		goto cleanup;
	merged = npick > 0;

	int changed = merged || ix->gloss_dirty || ix->root_dirty;
	for (size_t i = 0; i < ix->nw; i++)
		changed |= ix->w[i].fresh || ix->w[i].dirty;
	if (!changed)
		goto cleanup;

	/* The glossary, when it changed: a new file under the next number,
	 * named by the manifest below (so it takes effect with the commit). */
	uint32_t gloss_no = ix->man.glossary;
	if (ix->gloss_dirty) {
		gloss_no = ix->man.glossary + 1;
		if (gloss_no == 0)
			gloss_no = 1;
		if ((rc = ix_glossary_write(ix->dir, gloss_no, ix->gloss_new, ix->gloss_new_len)) != 0)
			goto cleanup;
	}

	/* Tombstones, then the folder, then the manifest. */
	for (size_t i = 0; i < ix->nw && !rc; i++) {
		ix_wseg *w = &ix->w[i];
		if (w->dirty)
			rc = ix_tomb_write(ix->dir, w->seg->id, gen, w->seg->ndocs, w->seg->nchunks,
			                   w->del_docs, w->del_chunks);
	}
	if (!rc)
		rc = fa_fsync_dir(ix->dir);
	if (rc)
		goto cleanup;
	/* The new snapshot's segment list too: past the manifest nothing may
	 * fail, or the segments would belong to no list. */
	ms = fa_calloc(ix->nw ? ix->nw : 1, sizeof *ms);
	ns = fa_malloc((ix->nw ? ix->nw : 1) * sizeof *ns);
	if (!ms || !ns) {
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < ix->nw; i++) {
		const ix_wseg *w = &ix->w[i];
		ms[i] = (ix_man_seg){ w->seg->id, w->seg->nchunks, w->seg->ndocs, w->seg->footer_crc,
		                      w->dirty ? gen : w->seg->del_gen, w->seg->len };
	}
	ix_manifest nm = ix->man;
	nm.generation = gen;
	nm.glossary = gloss_no;
	nm.segs = ms;
	nm.nsegs = (uint32_t)ix->nw;
	if ((rc = ix_manifest_write(&nm, ix->dir)) != 0)
		goto cleanup;
	manifest_written = 1;

	/* Durable. Now tidy up and move the snapshot forward. */
	if (ix->gloss_dirty) {
		if (ix->man.glossary) {
			char name[64];
			ix_glossary_name(name, sizeof name, ix->man.glossary);
			remove_file(ix->dir, name);
		}
		fa_free(ix->gloss);
		ix->gloss = ix->gloss_new;
		ix->gloss_len = ix->gloss_new_len;
		ix->gloss_new = NULL;
		ix->gloss_new_len = 0;
		ix->gloss_dirty = 0;
	}
	for (size_t i = 0; i < ngone; i++) {
		unlink_seg_files(ix, gone[i].seg);
		fa_free(gone[i].del_docs);
		fa_free(gone[i].del_chunks);
		/* Segments in the old snapshot are closed with it below. */
		if (gone[i].fresh)
			seg_close(gone[i].seg);
	}
	for (size_t i = 0; i < ix->nw; i++) {
		ix_wseg *w = &ix->w[i];
		if (w->dirty) {
			if (w->seg->del_gen) {
				char name[64];
				ix_del_name(name, sizeof name, w->seg->id, w->seg->del_gen);
				remove_file(ix->dir, name);
			}
			/* The writer keeps its copy; the snapshot gets the bitmaps. */
			seg_set_tombstones(w->seg, w->del_docs, w->del_chunks, gen);
			w->del_docs = w->del_chunks = NULL;
			w->n_del_docs = w->seg->n_del_docs;
			w->n_del_chunks = w->seg->n_del_chunks;
		}
		w->dirty = 0;
		w->fresh = 0;
	}
	/* Close the snapshot's segments that were merged away. */
	for (size_t i = 0; i < ix->nsegs; i++) {
		int kept = 0;
		for (size_t j = 0; j < ix->nw && !kept; j++)
			kept = ix->w[j].seg == ix->segs[i];
		if (!kept)
			seg_close(ix->segs[i]);
	}
	for (size_t i = 0; i < ix->nw; i++)
		ns[i] = ix->w[i].seg;
	fa_free(ix->segs);
	ix->segs = ns;
	ix->nsegs = ix->nw;
	fa_free(ix->man.segs);
	ix->man = nm;
	ix->root_dirty = 0;
	ms = NULL;
	ns = NULL;
	compute_totals(ix);

cleanup:
	if (rc && !manifest_written) {
		/* Undo: the new files are named by nothing. */
		if (ix->gloss_dirty) {
			char name[64];
			ix_glossary_name(name, sizeof name, ix->man.glossary + 1 ? ix->man.glossary + 1 : 1);
			remove_file(ix->dir, name);
		}
		for (size_t i = 0; i < ix->nw; i++) {
			if (ix->w[i].dirty) {
				char name[64];
				ix_del_name(name, sizeof name, ix->w[i].seg->id, gen);
				remove_file(ix->dir, name);
			}
		}
		if (merged) {
			if (made.seg) {
				unlink_seg_files(ix, made.seg);
				seg_close(made.seg);
			}
			memcpy(ix->w, saved, n0 * sizeof *saved);
			ix->nw = n0;
		}
	}
	fa_free(ms);
	fa_free(ns);
	fa_free(saved);
	fa_free(gone);
	fa_free(pick);
	return rc;
}

int ix_rollback(ix_index *ix)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	drop_fresh(ix);
	fa_free(ix->gloss_new);
	ix->gloss_new = NULL;
	ix->gloss_new_len = 0;
	ix->gloss_dirty = 0;
	ix->gloss_version++;
	ix_pending *np;
	int rc = ix_pending_new(&np);
	if (rc)
		return rc;
	ix_pending_free(ix->pend);
	ix->pend = np;
	return 0;
}

/* ---- verify and sizes ------------------------------------------------------- */

int ix_verify(ix_index *ix)
{
	ix_manifest m;
	int rc = ix_manifest_read(&m, ix->dir);
	if (rc)
		return rc;
	if (m.glossary) {
		unsigned char *g;
		size_t gl;
		if ((rc = ix_glossary_read(ix->dir, m.glossary, &g, &gl)) != 0) {
			ix_manifest_free(&m);
			return rc == FATHOM_ENOTFOUND ? fa_err_wrap(FATHOM_ECORRUPT, "%s", ix->dir) : rc;
		}
		fa_free(g);
	}
	ix_manifest_free(&m);
	for (size_t i = 0; i < ix->nsegs; i++) {
		ix_segment *s = ix->segs[i];
		if ((rc = seg_verify(s)) != 0)
			return rc;
		if (s->del_gen) {
			uint8_t *dd, *dc;
			rc = ix_tomb_read(ix->dir, s->id, s->del_gen, s->ndocs, s->nchunks, &dd, &dc);
			if (rc == FATHOM_ENOTFOUND)
				rc = fa_err_wrap(FATHOM_ECORRUPT, "%s", ix->dir);
			if (rc)
				return rc;
			size_t dl = ((size_t)s->ndocs + 7) / 8, cl = ((size_t)s->nchunks + 7) / 8;
			if (memcmp(dd, s->del_docs, dl) != 0 || memcmp(dc, s->del_chunks, cl) != 0)
				rc = fa_err(FATHOM_ECORRUPT, "%s: tombstones changed on disk", s->path);
			fa_free(dd);
			fa_free(dc);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int ix_sizes_get(ix_index *ix, ix_sizes *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < ix->nsegs; i++) {
		const ix_segment *s = ix->segs[i];
		const uint64_t *l = s->sec_len;
		out->dict += l[IX_SEC_DICT] + l[IX_SEC_DICT_INDEX];
		out->postings += s->post_bytes;
		out->positions += s->pos_bytes;
		out->docstore += l[IX_SEC_DOCSTORE] + l[IX_SEC_FRAMES] + l[IX_SEC_DOCSTORE_DICT];
		out->docs += l[IX_SEC_DOCS] + l[IX_SEC_DOC_STRINGS] + l[IX_SEC_KEYS];
		out->chunks += l[IX_SEC_CHUNKS] + l[IX_SEC_CHUNK_STRINGS];
		out->trigrams += l[IX_SEC_TRI_POST] + l[IX_SEC_TRI_INDEX];
		out->other += IX_PREAMBLE_SIZE + s->npages * 4 + ix_footer_size(s->version);
		if (s->del_gen)
			out->other += ix_tomb_file_size(s->ndocs, s->nchunks);
		out->terms += s->nterms;
		out->docs_live += s->ndocs - s->n_del_docs;
		out->chunks_live += s->nchunks - s->n_del_chunks;
		out->chunks_deleted += s->n_del_chunks;
		out->raw_text += s->raw_text;
		for (uint32_t d = 0; d < s->ndocs; d++) {
			if (seg_doc_is_deleted(s, d) || !seg_doc_has_trigrams(s, d))
				continue;
			ix_doc_info di;
			int rc = seg_doc(s, d, &di);
			if (rc)
				return rc;
			out->grep_files++;
			out->grep_file_bytes += di.size;
			out->grep_only_files += (uint64_t)di.grep_only;
		}
	}
	out->other += 44 + strlen(ix->man.stem_lang) + strlen(ix->man.root) +
	              (uint64_t)ix->man.nsegs * 40;
	out->total = out->dict + out->postings + out->positions + out->docstore + out->docs +
	             out->chunks + out->trigrams + out->other;
	return 0;
}

/* ---- the glossary's storage -------------------------------------------------- */

void ix_glossary(const ix_index *ix, const unsigned char **data, size_t *len, uint64_t *version)
{
	*version = ix->gloss_version;
	if (ix->gloss_dirty) {
		*data = ix->gloss_new;
		*len = ix->gloss_new_len;
	} else {
		*data = ix->gloss;
		*len = ix->gloss_len;
	}
}

int ix_glossary_stage(ix_index *ix, const unsigned char *data, size_t len)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	unsigned char *copy = fa_malloc(len ? len : 1);
	if (!copy)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (len)
		memcpy(copy, data, len);
	fa_free(ix->gloss_new);
	ix->gloss_new = copy;
	ix->gloss_new_len = len;
	ix->gloss_dirty = 1;
	ix->gloss_version++;
	return 0;
}
