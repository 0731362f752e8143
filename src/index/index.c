/*
 * index.c — the index handle: its accessors, the writer's view of segments
 * (uncommitted tombstones, segments written since the last commit), and
 * deletes and lookups over pending documents and segments.
 *
 * The handle's other subsystems have their own files:
 *   index_open.c  opening an index folder (reader or the one writer), the
 *                 snapshot, refresh, leftovers of interrupted commits, close
 *   commit.c      the commit protocol, merge policy, rollback, optimize
 *   verify.c      ix_verify and ix_sizes_get
 *   payload.c     named payloads (the glossary) staged for a commit
 * and index_int.h has a section "interface to code in X.c" for each.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/index_int.h"

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

int ix_file_changed(uint64_t size, int64_t mtime_ns, uint64_t indexed_size,
                    int64_t indexed_mtime_ns)
{
	return size != indexed_size || mtime_ns != indexed_mtime_ns;
}

int ix_stat_changed(const struct stat *st, uint64_t indexed_size, int64_t indexed_mtime_ns)
{
	return ix_file_changed((uint64_t)st->st_size,
	                       (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
	                       indexed_size, indexed_mtime_ns);
}

int ix_doc_stale(const ix_index *ix, const ix_doc_info *di)
{
	if (di->mtime_ns == 0)
		return 0;   /* not from a file (JSON lines, fathom_add_doc) */
	const char *path = di->path && *di->path ? di->path : di->key;
	const char *root = ix_root(ix);
	char *full = NULL;
	if (path[0] != '/' && *root && !(full = fa_path_resolve(root, path)))
		return 0;   /* out of memory: not known to be stale */
	struct stat st;
	int stale = stat(full ? full : path, &st) != 0 || ix_stat_changed(&st, di->size, di->mtime_ns);
	fa_free(full);
	return stale;
}

int seg_damaged(const ix_segment *s)
{
	return fa_map_damaged(&s->map);
}

/* A segment whose file shrank under its map (util/mapguard.c) has been
 * read as zeros from the fault on: whatever the read gave is not the
 * file's, so the error names the file instead. */
static int damaged_error(const ix_segment *s)
{
	return fa_err(FATHOM_ECORRUPT,
	              "%s: the file shrank or changed while it was mapped "
	              "(reopen the index once it is repaired)", s->path);
}

int ix_check_mapped(const ix_index *ix)
{
	for (size_t i = 0; i < ix->nsegs; i++)
		if (seg_damaged(ix->segs[i]))
			return damaged_error(ix->segs[i]);
	for (size_t i = 0; i < ix->nw; i++)
		if (seg_damaged(ix->w[i].seg))
			return damaged_error(ix->w[i].seg);
	return 0;
}

int ix_checked(const ix_index *ix, int rc)
{
	int mrc = ix_check_mapped(ix);
	return mrc ? mrc : rc;
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

uint32_t ix_next_seg_id(ix_index *ix)
{
	return ix->man.next_seg_id++;
}

void ix_compute_totals(ix_index *ix)
{
	ix->total_chunks = 0;
	memset(ix->field_len_sum, 0, sizeof ix->field_len_sum);
	for (size_t i = 0; i < ix->nsegs; i++) {
		ix->total_chunks += ix->segs[i]->nchunks;
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			ix->field_len_sum[f] += ix->segs[i]->field_len_sum[f];
	}
}

void ix_remove_file(const char *dir, const char *name)
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

uint32_t ix_wseg_ndel_chunks(const ix_wseg *w)
{
	return w->del_chunks ? w->n_del_chunks : w->seg->n_del_chunks;
}

void ix_wsegs_drop_fresh(ix_index *ix)
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

/* ---- the writer's view -------------------------------------------------------- */

int ix_writer_flush(ix_index *ix)
{
	if (!(ix->flags & IX_WRITE) || !ix->pend)
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	return ix_pending_flush(ix);
}

size_t ix_writer_nsegments(const ix_index *ix)
{
	return ix->pend ? ix->nw : 0;
}

ix_segment *ix_writer_segment_at(const ix_index *ix, size_t i)
{
	return ix->pend && i < ix->nw ? ix->w[i].seg : NULL;
}

int ix_writer_doc_live(const ix_index *ix, size_t i, uint32_t doc)
{
	if (!ix->pend || i >= ix->nw || doc >= ix->w[i].seg->ndocs)
		return 0;
	return !ix_bit_get(wseg_del_docs(&ix->w[i]), doc);
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
