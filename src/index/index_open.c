/*
 * index_open.c — opening an index folder, as a reader or as the one writer:
 * reading the MANIFEST, opening the segments and tombstones and loading the
 * named payloads it names (the snapshot), moving a reader to a newer commit
 * (ix_refresh), removing what an interrupted commit left, and closing.
 *
 * A reader takes no lock: it maps the files the MANIFEST names, and a file
 * removed by a commit in between makes it read the MANIFEST again (up to
 * OPEN_RETRIES times). A writer holds flock(LOCK) while the handle is open.
 * Formats 5 and 6 open as they are (docs/FORMAT.md 6); the first commit
 * writes format 7.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "index/index_int.h"

#define DEFAULT_FLUSH_BUDGET ((size_t)256 << 20)
#define OPEN_RETRIES 20

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
	ix_payload *pay;
	size_t npay;
	int prc = ix_payloads_load(ix->dir, m, &pay, &npay);
	if (prc)
		return prc;
	ix_payloads_replace(ix, pay, npay);
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
	ix_compute_totals(ix);
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
		int damaged = ix_check_mapped(ix) != 0;
		if (m.generation == ix->man.generation && !damaged) {
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
		ix_payload *pay = NULL;
		size_t npay = 0;
		if (!segs || !kept || !opened || !tdocs || !tchunks || !retomb)
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
		if (!rc)
			rc = ix_payloads_load(ix->dir, &m, &pay, &npay);
		for (uint32_t i = 0; i < n && !rc; i++) {
			const ix_man_seg *e = &m.segs[i];
			ix_segment *s = NULL;
			for (size_t j = 0; j < ix->nsegs && !s; j++) {
				/* a segment whose file shrank under its map is mapped again */
				if (!kept[j] && ix->segs[j]->id == e->id && ix->segs[j]->footer_crc == e->footer_crc &&
				    !seg_damaged(ix->segs[j])) {
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
			ix_payloads_replace(ix, pay, npay);
			pay = NULL;
			npay = 0;
			ix_compute_totals(ix);
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
		ix_payloads_free(pay, npay);
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
		           ends_with(n, ".fpay") || ends_with(n, ".fpay.tmp") ||
		           strcmp(n, "MANIFEST.tmp") == 0;
		if (ours && !named_by_manifest(&ix->man, n) && !ix_payload_file_named(&ix->man, n))
			ix_remove_file(ix->dir, n);
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
	/* a writer that may not create: no index, no LOCK file left behind
	 * in a folder that holds none (and the error says so, not that LOCK
	 * could not be made) */
	if ((flags & IX_WRITE) && !(flags & IX_CREATE) && (rc = ix_manifest_present(dir)) != 0)
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
			ix->man.version = IX_FORMAT_VERSION;
			memcpy(ix->man.stem_lang, lang, strlen(lang) + 1);
			ix->man.next_seg_id = 1;
			rc = ix_manifest_write(&ix->man, dir, NULL);
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

void ix_close(ix_index *ix)
{
	if (!ix)
		return;
	if (ix->w)
		ix_wsegs_drop_fresh(ix);
	fa_free(ix->w);
	ix_pending_free(ix->pend);
	close_snapshot(ix);
	ix_manifest_free(&ix->man);
	ix_payloads_free(ix->pay, ix->npay);
	ix_payloads_free(ix->staged, ix->nstaged);
	if (ix->lock_fd >= 0)
		close(ix->lock_fd);   /* releases the flock */
	fa_free(ix->dir);
	fa_free(ix);
}
