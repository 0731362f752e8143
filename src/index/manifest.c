/*
 * manifest.c — the MANIFEST (the last commit) and the tombstone files.
 *
 * MANIFEST (little-endian):
 *   "FATHMAN\0", u32 version, u32 glossary file number (0: none), u64 generation,
 *   u32 next segment id, u32 segment count, u32 stem language length (< 64),
 *   the stem language bytes, u32 root length (< 4096), the root folder's
 *   bytes (absolute; relative document paths are under it), then per
 *   segment 40 bytes:
 *     u32 id, u32 nchunks, u32 ndocs, u32 footer CRC of the segment file,
 *     u64 tombstone generation (0: none), u64 file length, u64 reserved (0)
 *   and last a u32 CRC32C of everything before it.
 * It is small and rewritten whole at each commit with fa_write_atomic, so a
 * reader sees the previous commit or the new one. The footer CRC and length
 * tie each entry to one exact segment file.
 *
 * Versions 5 and 6 of both files are the same bytes (6 changed only the
 * segments), so both are read; this writer writes 6.
 *
 * seg-<id>.<gen>.fdel: "FATHDEL\0", u32 version, u32 segment id, u32 ndocs,
 * u32 nchunks, u64 generation, the deleted-documents bitmap ((ndocs+7)/8
 * bytes), the deleted-chunks bitmap ((nchunks+7)/8 bytes), u32 CRC32C.
 * A commit that deletes from a segment writes a new generation; the old file
 * is removed once the manifest naming the new one is durable.
 */
#include <inttypes.h>
#include <stdio.h>

#include "index/index_int.h"

#define MAN_HEAD 36u
#define MAN_SEG 40u
#define MAN_MAX_SEGS 1000000u
#define DEL_HEAD 32u

void ix_seg_name(char *buf, size_t cap, uint32_t id)
{
	snprintf(buf, cap, "seg-%08" PRIu32 ".fseg", id);
}

void ix_del_name(char *buf, size_t cap, uint32_t id, uint64_t gen)
{
	snprintf(buf, cap, "seg-%08" PRIu32 ".%" PRIu64 ".fdel", id, gen);
}

/* ---- the glossary file ---------------------------------------------------
 * glossary-<n>.fglo: "FATHGLO\0", u32 version (1), u32 payload length, the
 * payload (query/glossary.c), u32 CRC32C of everything before it. Written
 * whole under a new number by the commit that changes it, named by that
 * commit's MANIFEST, and the previous one removed once that is durable. */

#define GLO_MAGIC "FATHGLO"
#define GLO_VERSION 1u
#define GLO_MAX (64u << 20)

void ix_glossary_name(char *buf, size_t cap, uint32_t n)
{
	snprintf(buf, cap, "glossary-%08" PRIu32 ".fglo", n);
}

int ix_glossary_read(const char *dir, uint32_t n, unsigned char **payload, size_t *plen)
{
	char name[64];
	ix_glossary_name(name, sizeof name, n);
	char *path = fa_path_join(dir, name);
	if (!path)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	char *data;
	size_t len;
	int rc = fa_read_file(&data, &len, path, GLO_MAX + 20);
	if (rc) {
		if (rc == FATHOM_ENOTFOUND)   /* a writer may have committed meanwhile */
			rc = fa_err(FATHOM_ENOTFOUND, "%s: the glossary the manifest names is missing", path);
		fa_free(path);
		return rc;
	}
	const unsigned char *d = (const unsigned char *)data;
	if (len < 20 || memcmp(d, GLO_MAGIC, 8) != 0)
		rc = fa_err(FATHOM_ECORRUPT, "%s: not a fathom glossary", path);
	else if (fa_load32(d + 8) != GLO_VERSION)
		rc = fa_err(FATHOM_EVERSION, "%s: glossary version %u", path, fa_load32(d + 8));
	else if (fa_load32(d + 12) != len - 20)
		rc = fa_err(FATHOM_ECORRUPT, "%s: truncated (length %zu)", path, len);
	else if (fa_crc32c(0, d, len - 4) != fa_load32(d + len - 4))
		rc = fa_err(FATHOM_ECORRUPT, "%s: fails its checksum", path);
	if (!rc) {
		*plen = len - 20;
		*payload = fa_malloc(*plen ? *plen : 1);
		if (!*payload)
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
		else if (*plen)
			memcpy(*payload, d + 16, *plen);
	}
	fa_free(data);
	fa_free(path);
	return rc;
}

int ix_glossary_write(const char *dir, uint32_t n, const unsigned char *payload, size_t len)
{
	if (len > GLO_MAX)
		return fa_err(FATHOM_ETOOBIG, "glossary of %zu bytes (at most %u)", len, GLO_MAX);
	fbuf b;
	fbuf_init(&b, 0);
	fbuf_append(&b, GLO_MAGIC, 8);
	fbuf_put_u32(&b, GLO_VERSION);
	fbuf_put_u32(&b, (uint32_t)len);
	fbuf_append(&b, payload, len);
	fbuf_put_u32(&b, b.err ? 0 : fa_crc32c(0, b.data, b.len));
	int rc = b.err;
	if (!rc) {
		char name[64];
		ix_glossary_name(name, sizeof name, n);
		rc = fa_write_atomic(dir, name, b.data, b.len);
	}
	fbuf_free(&b);
	return rc;
}

void ix_manifest_free(ix_manifest *m)
{
	fa_free(m->segs);
	m->segs = NULL;
	m->nsegs = 0;
}

int ix_manifest_read(ix_manifest *m, const char *dir)
{
	memset(m, 0, sizeof *m);
	char *path = fa_path_join(dir, "MANIFEST");
	if (!path)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	char *data;
	size_t len;
	int rc = fa_read_file(&data, &len, path,
	                      MAN_HEAD + 64 + 4 + IX_ROOT_MAX + (size_t)MAN_MAX_SEGS * MAN_SEG + 4);
	if (rc) {
		if (rc == FATHOM_ENOTFOUND)
			rc = fa_err(FATHOM_ENOTFOUND, "%s: no index here (no MANIFEST)", dir);
		fa_free(path);
		return rc;
	}
	const unsigned char *d = (const unsigned char *)data;
	uint32_t nsegs = 0, slen = 0, rlen = 0;
	if (len < MAN_HEAD + 4 || memcmp(d, IX_MAN_MAGIC, 8) != 0) {
		rc = fa_err(FATHOM_ECORRUPT, "%s: not a fathom manifest", path);
	} else if (fa_load32(d + 8) < IX_FORMAT_VERSION_MIN || fa_load32(d + 8) > IX_FORMAT_VERSION) {
		rc = fa_err(FATHOM_EVERSION, "%s: index format version %u, this build reads %u to %u: rebuild the index into a new folder", path,
		            fa_load32(d + 8), IX_FORMAT_VERSION_MIN, IX_FORMAT_VERSION);
	} else if (fa_crc32c(0, d, len - 4) != fa_load32(d + len - 4)) {
		rc = fa_err(FATHOM_ECORRUPT, "%s: fails its checksum", path);
	} else {
		nsegs = fa_load32(d + 28);
		slen = fa_load32(d + 32);
		if (slen >= sizeof m->stem_lang || len < MAN_HEAD + slen + 4 + 4)
			rc = fa_err(FATHOM_ECORRUPT, "%s: bad sizes", path);
		else
			rlen = fa_load32(d + MAN_HEAD + slen);
		if (!rc && (rlen >= sizeof m->root || nsegs > MAN_MAX_SEGS ||
		            len != MAN_HEAD + slen + 4 + (uint64_t)rlen + (uint64_t)nsegs * MAN_SEG + 4))
			rc = fa_err(FATHOM_ECORRUPT, "%s: bad sizes", path);
		if (!rc && rlen && (d[MAN_HEAD + slen + 4] != '/' ||
		                    memchr(d + MAN_HEAD + slen + 4, '\0', rlen)))
			rc = fa_err(FATHOM_ECORRUPT, "%s: bad root folder", path);
	}
	if (!rc) {
		m->glossary = fa_load32(d + 12);
		m->generation = fa_load64(d + 16);
		m->next_seg_id = fa_load32(d + 24);
		memcpy(m->stem_lang, d + MAN_HEAD, slen);
		m->stem_lang[slen] = '\0';
		memcpy(m->root, d + MAN_HEAD + slen + 4, rlen);
		m->root[rlen] = '\0';
		if (nsegs && !(m->segs = fa_calloc(nsegs, sizeof *m->segs)))
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; !rc && i < nsegs; i++) {
		const unsigned char *r = d + MAN_HEAD + slen + 4 + rlen + (size_t)i * MAN_SEG;
		ix_man_seg *e = &m->segs[i];
		e->id = fa_load32(r);
		e->nchunks = fa_load32(r + 4);
		e->ndocs = fa_load32(r + 8);
		e->footer_crc = fa_load32(r + 12);
		e->del_gen = fa_load64(r + 16);
		e->file_len = fa_load64(r + 24);
		if (e->id >= m->next_seg_id || e->del_gen > m->generation)
			rc = fa_err(FATHOM_ECORRUPT, "%s: bad segment entry %u", path, i);
		for (uint32_t j = 0; !rc && j < i; j++)
			if (m->segs[j].id == e->id)
				rc = fa_err(FATHOM_ECORRUPT, "%s: segment %u listed twice", path, e->id);
		m->nsegs = i + 1;
	}
	fa_free(data);
	fa_free(path);
	if (rc)
		ix_manifest_free(m);
	return rc;
}

int ix_manifest_write(const ix_manifest *m, const char *dir)
{
	size_t slen = strlen(m->stem_lang);
	fbuf b;
	fbuf_init(&b, 0);
	fbuf_append(&b, IX_MAN_MAGIC, 8);
	fbuf_put_u32(&b, IX_FORMAT_VERSION);
	fbuf_put_u32(&b, m->glossary);
	fbuf_put_u64(&b, m->generation);
	fbuf_put_u32(&b, m->next_seg_id);
	fbuf_put_u32(&b, m->nsegs);
	fbuf_put_u32(&b, (uint32_t)slen);
	fbuf_append(&b, m->stem_lang, slen);
	size_t rlen = strnlen(m->root, sizeof m->root - 1);
	fbuf_put_u32(&b, (uint32_t)rlen);
	fbuf_append(&b, m->root, rlen);
	for (uint32_t i = 0; i < m->nsegs; i++) {
		const ix_man_seg *e = &m->segs[i];
		fbuf_put_u32(&b, e->id);
		fbuf_put_u32(&b, e->nchunks);
		fbuf_put_u32(&b, e->ndocs);
		fbuf_put_u32(&b, e->footer_crc);
		fbuf_put_u64(&b, e->del_gen);
		fbuf_put_u64(&b, e->file_len);
		fbuf_put_u64(&b, 0);
	}
	int rc = b.err;
	if (!rc)
		rc = fbuf_put_u32(&b, fa_crc32c(0, b.data, b.len));
	if (!rc)
		rc = fa_write_atomic(dir, "MANIFEST", b.data, b.len);
	fbuf_free(&b);
	return rc;
}

/* ---- tombstones -------------------------------------------------------------- */

uint64_t ix_tomb_file_size(uint32_t ndocs, uint32_t nchunks)
{
	return DEL_HEAD + ((uint64_t)ndocs + 7) / 8 + ((uint64_t)nchunks + 7) / 8 + 4;
}

int ix_tomb_read(const char *dir, uint32_t id, uint64_t gen, uint32_t ndocs, uint32_t nchunks,
                 uint8_t **docs, uint8_t **chunks)
{
	char name[64];
	ix_del_name(name, sizeof name, id, gen);
	char *path = fa_path_join(dir, name);
	if (!path)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	*docs = *chunks = NULL;
	uint64_t want = ix_tomb_file_size(ndocs, nchunks);
	size_t dl = ((size_t)ndocs + 7) / 8, cl = ((size_t)nchunks + 7) / 8;
	char *data;
	size_t len;
	int rc = fa_read_file(&data, &len, path, (size_t)want);
	if (rc) {
		if (rc == FATHOM_ENOTFOUND)
			rc = fa_err(FATHOM_ENOTFOUND, "%s: tombstone file named by the manifest is missing",
			            path);
		fa_free(path);
		return rc;
	}
	const unsigned char *d = (const unsigned char *)data;
	if (len != want || memcmp(d, IX_DEL_MAGIC, 8) != 0)
		rc = fa_err(FATHOM_ECORRUPT, "%s: not a tombstone file of the right size", path);
	else if (fa_load32(d + 8) < IX_FORMAT_VERSION_MIN || fa_load32(d + 8) > IX_FORMAT_VERSION)
		rc = fa_err(FATHOM_EVERSION, "%s: tombstone version %u", path, fa_load32(d + 8));
	else if (fa_crc32c(0, d, len - 4) != fa_load32(d + len - 4))
		rc = fa_err(FATHOM_ECORRUPT, "%s: fails its checksum", path);
	else if (fa_load32(d + 12) != id || fa_load32(d + 16) != ndocs ||
	         fa_load32(d + 20) != nchunks || fa_load64(d + 24) != gen)
		rc = fa_err(FATHOM_ECORRUPT, "%s: belongs to another segment", path);
	if (!rc) {
		*docs = fa_malloc(dl + 1);
		*chunks = fa_malloc(cl + 1);
		if (!*docs || !*chunks) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
		} else {
			memcpy(*docs, d + DEL_HEAD, dl);
			memcpy(*chunks, d + DEL_HEAD + dl, cl);
		}
	}
	if (rc) {
		fa_free(*docs);
		fa_free(*chunks);
		*docs = *chunks = NULL;
	}
	fa_free(data);
	fa_free(path);
	return rc;
}

int ix_tomb_write(const char *dir, uint32_t id, uint64_t gen, uint32_t ndocs, uint32_t nchunks,
                  const uint8_t *docs, const uint8_t *chunks)
{
	char name[64];
	ix_del_name(name, sizeof name, id, gen);
	char *path = fa_path_join(dir, name);
	if (!path)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	size_t dl = ((size_t)ndocs + 7) / 8, cl = ((size_t)nchunks + 7) / 8;
	fbuf b;
	fbuf_init(&b, 0);
	fbuf_append(&b, IX_DEL_MAGIC, 8);
	fbuf_put_u32(&b, IX_FORMAT_VERSION);
	fbuf_put_u32(&b, id);
	fbuf_put_u32(&b, ndocs);
	fbuf_put_u32(&b, nchunks);
	fbuf_put_u64(&b, gen);
	fbuf_append(&b, docs, dl);
	fbuf_append(&b, chunks, cl);
	int rc = b.err;
	if (!rc)
		rc = fbuf_put_u32(&b, fa_crc32c(0, b.data, b.len));
	if (!rc) {
		/* A leftover of an earlier failed commit at this generation is
		 * named by no manifest: replace it. */
		remove(path);
		rc = fa_write_file_sync(path, b.data, b.len);
	}
	fbuf_free(&b);
	fa_free(path);
	return rc;
}
