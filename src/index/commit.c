/*
 * commit.c — the commit protocol, the merge policy, rollback and optimize.
 *
 * A commit:
 *   1. writes pending documents to a new segment file, fsynced;
 *   2. merges small or heavily deleted segments into a new file, fsynced;
 *   3. writes the staged named payloads' files (<key>.<gen>.fpay), fsynced;
 *   4. writes changed tombstones to new seg-<id>.<gen>.fdel files, fsynced;
 *   5. fsyncs the folder, so those names are durable;
 *   6. replaces MANIFEST atomically (tmp, fsync, rename, fsync folder).
 * Only step 6 makes anything visible. A crash before it leaves the previous
 * MANIFEST, which names none of the new files; the next writer deletes them.
 * After step 6 the files no longer named are deleted (readers that mapped
 * or read them keep what they have). A failure before step 6 removes the
 * new files and leaves the writer as it was.
 *
 * The manifest written is always format 7: the commit after opening a
 * format 5 or 6 index upgrades it even when nothing else changed (segments
 * of the older format stay as they are until a merge rewrites them).
 */
#include <stdlib.h>

#include "index/index_int.h"

/* ---- merge policy ---------------------------------------------------------- */

static uint64_t live_size(const ix_wseg *w)
{
	uint32_t n = w->seg->nchunks, del = ix_wseg_ndel_chunks(w);
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

/* Choose the segments to merge: those with too many deletions (and, for
 * ix_optimize, those of an older format or whose vectors are stored as
 * another element type than vector.storage), then the smallest while there are
 * too many segments, then any next-smallest no bigger than the group so far
 * (so a merged segment grows geometrically and no segment is rewritten over
 * and over for small additions). */
/* Does every chunk of s have a vector of the embedder of fingerprint fp?
 * (A re-embedding optimize merges the segments where not.) */
static int vectors_current(const ix_segment *s, uint64_t fp)
{
	ix_vecs v;
	int rc = seg_vectors(s, &v);
	if (rc) {
		fa_err_clear();
		return 0;
	}
	return v.fp == fp && v.present == v.count;
}

/* Are s's vectors stored as the index stores them now (vector.storage)?
 * No vectors: yes. An optimize rewrites the segments where not. */
static int vectors_stored_as(const ix_segment *s, uint32_t storage)
{
	ix_vecs v;
	int rc = seg_vectors(s, &v);
	if (rc) {
		fa_err_clear();
		return 1;
	}
	return v.elem == (storage ? storage : IX_VEC_F32);
}

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
		    (nc && (double)ix_wseg_ndel_chunks(w) > ix->merge_max_deleted * (double)nc) ||
		    (ix->merge_upgrade && w->seg->version < IX_FORMAT_VERSION) ||
		    (ix->merge_upgrade && !vectors_stored_as(w->seg, ix->graph.storage)) ||
		    (ix->embed.embed && nc && !vectors_current(w->seg, ix->embed.fp))) {
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
	ix_remove_file(ix->dir, name);
	if (s->del_gen) {
		ix_del_name(name, sizeof name, s->id, s->del_gen);
		ix_remove_file(ix->dir, name);
	}
}

/* ---- the commit, step by step ---------------------------------------------- */

typedef struct commit_ctx {
	uint64_t gen;             /* the new generation */
	size_t n0;                /* writer segments before the merge */
	ix_wseg *saved;           /* ix->w before the merge, to undo it */
	ix_wseg *gone;            /* merged away: closed once the commit is durable */
	size_t ngone;
	uint8_t *pick;            /* segments picked for the merge */
	ix_wseg made;             /* the merged segment */
	int merged;
	ix_manifest nm;           /* the new manifest (its segs and kv owned here) */
	ix_segment **ns;          /* the new snapshot's segment list */
	int written;              /* MANIFEST replaced: no undo any more */
} commit_ctx;

static int commit_begin(ix_index *ix, commit_ctx *c)
{
	size_t n = ix->nw ? ix->nw : 1;
	c->gen = ix->man.generation + 1;
	c->n0 = ix->nw;
	c->saved = fa_malloc(n * sizeof *c->saved);
	c->gone = fa_malloc(n * sizeof *c->gone);
	c->pick = fa_malloc(n);
	if (!c->saved || !c->gone || !c->pick)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (ix->nw)
		memcpy(c->saved, ix->w, ix->nw * sizeof *c->saved);
	return 0;
}

static void commit_end(commit_ctx *c)
{
	fa_free(c->nm.segs);
	ix_kv_free(c->nm.kv, c->nm.nkv);
	fa_free(c->ns);
	fa_free(c->saved);
	fa_free(c->gone);
	fa_free(c->pick);
}

/* Merge what the policy picks. The old list stays in c->saved until the
 * manifest is written, so a failure leaves the writer as it was. */
static int commit_merge(ix_index *ix, commit_ctx *c)
{
	size_t npick = 0;
	int rc = plan_merge(ix, c->pick, &npick);
	if (!rc && npick)
		rc = do_merge(ix, c->pick, npick, c->gone, &c->ngone, &c->made);
	c->merged = !rc && npick > 0;
	return rc;
}

/* Is there anything to commit? An index of an older format always is: the
 * commit upgrades its manifest. */
static int commit_has_changes(const ix_index *ix, const commit_ctx *c)
{
	int changed = c->merged || ix->nstaged || ix->root_dirty ||
	              ix->man.version < IX_FORMAT_VERSION;
	for (size_t i = 0; i < ix->nw; i++)
		changed |= ix->w[i].fresh || ix->w[i].dirty;
	return changed;
}

/* Tombstones of the segments whose deletions changed, then the folder. */
static int commit_write_tombstones(ix_index *ix, const commit_ctx *c)
{
	int rc = 0;
	for (size_t i = 0; i < ix->nw && !rc; i++) {
		ix_wseg *w = &ix->w[i];
		if (w->dirty)
			rc = ix_tomb_write(ix->dir, w->seg->id, c->gen, w->seg->ndocs, w->seg->nchunks,
			                   w->del_docs, w->del_chunks);
	}
	return rc ? rc : fa_fsync_dir(ix->dir);
}

/* The new manifest: the segments in writer order, the named values. The
 * new snapshot's segment list is allocated first: past the manifest nothing
 * may fail, or the segments would belong to no list. */
static int commit_write_manifest(ix_index *ix, commit_ctx *c)
{
	c->ns = fa_malloc((ix->nw ? ix->nw : 1) * sizeof *c->ns);
	if (!c->ns)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	ix_man_seg *ms = fa_calloc(ix->nw ? ix->nw : 1, sizeof *ms);
	if (!ms)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	for (size_t i = 0; i < ix->nw; i++) {
		const ix_wseg *w = &ix->w[i];
		ms[i] = (ix_man_seg){ w->seg->id, w->seg->nchunks, w->seg->ndocs, w->seg->footer_crc,
		                      w->dirty ? c->gen : w->seg->del_gen, w->seg->len };
	}
	ix_man_kv *kv = c->nm.kv;
	uint32_t nkv = c->nm.nkv;
	c->nm = ix->man;
	c->nm.version = IX_FORMAT_VERSION;
	c->nm.generation = c->gen;
	c->nm.legacy_glossary = 0;
	c->nm.segs = ms;
	c->nm.nsegs = (uint32_t)ix->nw;
	c->nm.kv = kv;
	c->nm.nkv = nkv;
	int renamed = 0;
	int rc = ix_manifest_write(&c->nm, ix->dir, &renamed);
	c->written = renamed;
	return rc;
}

/* Durable. Remove what the new manifest no longer names: merged segments
 * and their tombstones, replaced tombstones and payload files. */
static void commit_tidy(ix_index *ix, commit_ctx *c)
{
	ix_payloads_committed(ix, &ix->man);
	for (size_t i = 0; i < c->ngone; i++) {
		unlink_seg_files(ix, c->gone[i].seg);
		fa_free(c->gone[i].del_docs);
		fa_free(c->gone[i].del_chunks);
		/* Segments in the old snapshot are closed with it (commit_advance). */
		if (c->gone[i].fresh)
			seg_close(c->gone[i].seg);
	}
	for (size_t i = 0; i < ix->nw; i++) {
		ix_wseg *w = &ix->w[i];
		if (w->dirty) {
			if (w->seg->del_gen) {
				char name[64];
				ix_del_name(name, sizeof name, w->seg->id, w->seg->del_gen);
				ix_remove_file(ix->dir, name);
			}
			/* The writer keeps its copy; the snapshot gets the bitmaps. */
			seg_set_tombstones(w->seg, w->del_docs, w->del_chunks, c->gen);
			w->del_docs = w->del_chunks = NULL;
			w->n_del_docs = w->seg->n_del_docs;
			w->n_del_chunks = w->seg->n_del_chunks;
		}
		w->dirty = 0;
		w->fresh = 0;
	}
}

/* Move the snapshot to the new commit (nothing here can fail). */
static void commit_advance(ix_index *ix, commit_ctx *c)
{
	/* Close the snapshot's segments that were merged away. */
	for (size_t i = 0; i < ix->nsegs; i++) {
		int kept = 0;
		for (size_t j = 0; j < ix->nw && !kept; j++)
			kept = ix->w[j].seg == ix->segs[i];
		if (!kept)
			seg_close(ix->segs[i]);
	}
	for (size_t i = 0; i < ix->nw; i++)
		c->ns[i] = ix->w[i].seg;
	fa_free(ix->segs);
	ix->segs = c->ns;
	ix->nsegs = ix->nw;
	c->ns = NULL;
	ix_manifest_free(&ix->man);
	ix->man = c->nm;
	memset(&c->nm, 0, sizeof c->nm);
	ix->root_dirty = 0;
	ix_compute_totals(ix);
}

/* A step before the manifest failed: remove the new files (nothing names
 * them) and give the writer back its segment list. */
static void commit_undo(ix_index *ix, commit_ctx *c)
{
	ix_payloads_undo(ix, c->gen);
	for (size_t i = 0; i < ix->nw; i++) {
		if (ix->w[i].dirty) {
			char name[64];
			ix_del_name(name, sizeof name, ix->w[i].seg->id, c->gen);
			ix_remove_file(ix->dir, name);
		}
	}
	if (c->merged) {
		if (c->made.seg) {
			unlink_seg_files(ix, c->made.seg);
			seg_close(c->made.seg);
		}
		memcpy(ix->w, c->saved, c->n0 * sizeof *c->saved);
		ix->nw = c->n0;
	}
}

int ix_commit(ix_index *ix)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	int rc = ix_pending_flush(ix);
	if (rc)
		return rc;
	commit_ctx c = { 0 };
	if ((rc = commit_begin(ix, &c)) != 0 || (rc = commit_merge(ix, &c)) != 0 ||
	    (rc = ix_payloads_stage_upgrade(ix)) != 0 || !commit_has_changes(ix, &c))
		goto done;
	if ((rc = ix_payloads_write(ix, c.gen, &c.nm.kv, &c.nm.nkv)) != 0 ||
	    (rc = commit_write_tombstones(ix, &c)) != 0 ||
	    (rc = commit_write_manifest(ix, &c)) != 0) {
		/* The new manifest took the old one's place and only the fsync
		 * of the folder failed: readers see the commit, so the writer
		 * moves to it too (the error is still returned); what it
		 * replaced is left for the next writer to tidy. */
		if (c.written)
			commit_advance(ix, &c);
		goto done;
	}
	commit_tidy(ix, &c);
	commit_advance(ix, &c);
done:
	if (rc && !c.written)
		commit_undo(ix, &c);
	commit_end(&c);
	return rc;
}

int ix_optimize(ix_index *ix)
{
	unsigned ms = ix->merge_max_segments;
	double md = ix->merge_max_deleted;
	ix->merge_max_segments = 1;
	ix->merge_max_deleted = 0.0;
	ix->merge_upgrade = 1;
	int rc = ix_commit(ix);
	ix->merge_max_segments = ms;
	ix->merge_max_deleted = md;
	ix->merge_upgrade = 0;
	return rc;
}

int ix_rollback(ix_index *ix)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	ix_wsegs_drop_fresh(ix);
	ix_payloads_drop_staged(ix);
	ix_pending *np;
	int rc = ix_pending_new(&np);
	if (rc)
		return rc;
	ix_pending_free(ix->pend);
	ix->pend = np;
	return 0;
}

void ix_set_merge_policy(ix_index *ix, unsigned max_segments, double max_deleted_share)
{
	ix->merge_max_segments = max_segments;
	ix->merge_max_deleted = max_deleted_share;
}
