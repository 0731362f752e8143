/*
 * manifest.c — the MANIFEST (the last commit), the tombstone files and the
 * payload files the manifest names.
 *
 * MANIFEST (little-endian):
 *   "FATHMAN\0", u32 version (7), u32 reserved (formats 5, 6: the glossary
 *   file's number, 0: none), u64 generation, u32 next segment id, u32
 *   segment count, u32 stem language length (< 64), the stem language
 *   bytes, u32 root length (< 4096), the root folder's bytes (absolute;
 *   relative document paths are under it), then per segment 40 bytes:
 *     u32 id, u32 nchunks, u32 ndocs, u32 footer CRC of the segment file,
 *     u64 tombstone generation (0: none), u64 file length, u64 reserved (0)
 *   then (format 7) the named values: u32 count, per value u8 kind (1: the
 *   bytes themselves, 2: a payload file), u8 key length, the key ([a-z0-9]
 *   then [a-z0-9._-], at most 64), u32 body length, the body (kind 2: u64
 *   generation of <key>.<gen>.fpay, u64 payload length, u32 payload CRC32C),
 *   and last a u32 CRC32C of everything before it.
 * It is small and rewritten whole at each commit with fa_write_atomic, so a
 * reader sees the previous commit or the new one. The footer CRC and length
 * tie each entry to one exact segment file.
 *
 * Formats 5 and 6 are read (no named values; their glossary file number is
 * kept as legacy_glossary); this writer writes 7.
 *
 * seg-<id>.<gen>.fdel: "FATHDEL\0", u32 version, u32 segment id, u32 ndocs,
 * u32 nchunks, u64 generation, the deleted-documents bitmap ((ndocs+7)/8
 * bytes), the deleted-chunks bitmap ((nchunks+7)/8 bytes), u32 CRC32C.
 * A commit that deletes from a segment writes a new generation; the old file
 * is removed once the manifest naming the new one is durable.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "index/index_int.h"

#define MAN_HEAD 36u
#define MAN_SEG 40u
#define MAN_MAX_SEGS 1000000u
#define DEL_HEAD 32u
#define MAN_KV_MAX_BYTES ((size_t)4 << 20)   /* the named values, all together */

void ix_seg_name(char *buf, size_t cap, uint32_t id)
{
	snprintf(buf, cap, "seg-%08" PRIu32 ".fseg", id);
}

void ix_del_name(char *buf, size_t cap, uint32_t id, uint64_t gen)
{
	snprintf(buf, cap, "seg-%08" PRIu32 ".%" PRIu64 ".fdel", id, gen);
}

/* Read dir/name whole (at most max bytes) into *data; *path for messages.
 * A missing file is FATHOM_ENOTFOUND: a writer may have committed meanwhile,
 * and the caller reads the manifest again. */
static int read_named(const char *dir, const char *name, size_t max, char **path, char **data,
                      size_t *len)
{
	*path = fa_path_join(dir, name);
	if (!*path)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	int rc = fa_read_file(data, len, *path, max);
	if (rc == FATHOM_ENOTFOUND)
		rc = fa_err(FATHOM_ENOTFOUND, "%s: a file the manifest names is missing", *path);
	if (rc) {
		fa_free(*path);
		*path = NULL;
	}
	return rc;
}

/* A copy of n bytes at p (at least one byte allocated). */
static int copy_out(const unsigned char *p, size_t n, unsigned char **out, size_t *len)
{
	*out = fa_malloc(n ? n : 1);
	if (!*out)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (n)
		memcpy(*out, p, n);
	*len = n;
	return 0;
}

/* ---- the glossary file of formats 5 and 6 ---------------------------------
 * glossary-<n>.fglo: "FATHGLO\0", u32 version (1), u32 payload length, the
 * payload (query/glossary.c), u32 CRC32C of everything before it. Read only:
 * format 7 keeps the glossary as the payload file of the named value
 * "glossary", and the commit that upgrades an index moves it there. */

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
	char *path, *data;
	size_t len;
	int rc = read_named(dir, name, GLO_MAX + 20, &path, &data, &len);
	if (rc)
		return rc;
	const unsigned char *d = (const unsigned char *)data;
	if (len < 20 || memcmp(d, GLO_MAGIC, 8) != 0)
		rc = fa_err(FATHOM_ECORRUPT, "%s: not a fathom glossary", path);
	else if (fa_load32(d + 8) != GLO_VERSION)
		rc = fa_err(FATHOM_EVERSION, "%s: glossary version %u", path, fa_load32(d + 8));
	else if (fa_load32(d + 12) != len - 20)
		rc = fa_err(FATHOM_ECORRUPT, "%s: truncated (length %zu)", path, len);
	else if (fa_crc32c(0, d, len - 4) != fa_load32(d + len - 4))
		rc = fa_err(FATHOM_ECORRUPT, "%s: fails its checksum", path);
	if (!rc)
		rc = copy_out(d + 16, len - 20, payload, plen);
	fa_free(data);
	fa_free(path);
	return rc;
}

/* ---- payload files (format 7) -----------------------------------------------
 * <key>.<gen>.fpay: "FATHPAY\0", u32 version (1), u32 reserved (0), u64
 * payload length P, the payload, u32 CRC32C of everything before it. The
 * manifest entry that names it also holds P and the payload's CRC, so a
 * different file under the name is corrupt. */

#define PAY_MAGIC "FATHPAY"
#define PAY_VERSION 1u
#define PAY_HEAD 24u

void ix_payload_file_name(char *buf, size_t cap, const char *key, uint64_t gen)
{
	snprintf(buf, cap, "%s.%" PRIu64 ".fpay", key, gen);
}

int ix_payload_file_write(const char *dir, const char *key, uint64_t gen, const unsigned char *payload,
                          size_t len)
{
	if (len > IX_KV_FILE_MAX)
		return fa_err(FATHOM_ETOOBIG, "%s: %zu bytes (at most %u)", key, len, IX_KV_FILE_MAX);
	fbuf b;
	fbuf_init(&b, 0);
	fbuf_append(&b, PAY_MAGIC, 8);
	fbuf_put_u32(&b, PAY_VERSION);
	fbuf_put_u32(&b, 0);
	fbuf_put_u64(&b, len);
	fbuf_append(&b, payload, len);
	fbuf_put_u32(&b, b.err ? 0 : fa_crc32c(0, b.data, b.len));
	int rc = b.err;
	if (!rc) {
		char name[IX_PAYLOAD_NAME_MAX];
		ix_payload_file_name(name, sizeof name, key, gen);
		rc = fa_write_atomic(dir, name, b.data, b.len);
	}
	fbuf_free(&b);
	return rc;
}

int ix_payload_file_read(const char *dir, const char *key, uint64_t gen, uint64_t want_len,
                         uint32_t want_crc, unsigned char **payload, size_t *plen)
{
	char name[IX_PAYLOAD_NAME_MAX];
	ix_payload_file_name(name, sizeof name, key, gen);
	char *path, *data;
	size_t len;
	int rc = read_named(dir, name, (size_t)IX_KV_FILE_MAX + PAY_HEAD + 4, &path, &data, &len);
	if (rc)
		return rc;
	const unsigned char *d = (const unsigned char *)data;
	if (len < PAY_HEAD + 4 || memcmp(d, PAY_MAGIC, 8) != 0)
		rc = fa_err(FATHOM_ECORRUPT, "%s: not a fathom payload file", path);
	else if (fa_load32(d + 8) != PAY_VERSION)
		rc = fa_err(FATHOM_EVERSION, "%s: payload file version %u", path, fa_load32(d + 8));
	else if (fa_load64(d + 16) != len - PAY_HEAD - 4)
		rc = fa_err(FATHOM_ECORRUPT, "%s: truncated (length %zu)", path, len);
	else if (fa_crc32c(0, d, len - 4) != fa_load32(d + len - 4))
		rc = fa_err(FATHOM_ECORRUPT, "%s: fails its checksum", path);
	else if (want_len != len - PAY_HEAD - 4 || fa_crc32c(0, d + PAY_HEAD, len - PAY_HEAD - 4) != want_crc)
		rc = fa_err(FATHOM_ECORRUPT, "%s: not the file the manifest names", path);
	if (!rc)
		rc = copy_out(d + PAY_HEAD, len - PAY_HEAD - 4, payload, plen);
	fa_free(data);
	fa_free(path);
	return rc;
}

void ix_manifest_free(ix_manifest *m)
{
	fa_free(m->segs);
	m->segs = NULL;
	m->nsegs = 0;
	ix_kv_free(m->kv, m->nkv);
	m->kv = NULL;
	m->nkv = 0;
}

void ix_kv_free(ix_man_kv *kv, uint32_t n)
{
	for (uint32_t i = 0; kv && i < n; i++)
		fa_free(kv[i].body);
	fa_free(kv);
}

int ix_kv_key_ok(const char *key)
{
	size_t n = strlen(key);
	if (n == 0 || n > IX_KV_KEY_MAX || !((key[0] >= 'a' && key[0] <= 'z') || (key[0] >= '0' && key[0] <= '9')))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = key[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

/* The key/value block of format 7 (after the segment entries): u32 count,
 * then per entry u8 kind, u8 key length, key, u32 body length, body.
 * Bodies of kinds this build does not know are kept as bytes, so a commit
 * carries them forward unchanged. */
static int kv_decode(ix_manifest *m, const unsigned char *p, size_t n, const char *path)
{
	if (n < 4 || n > MAN_KV_MAX_BYTES)
		return fa_err(FATHOM_ECORRUPT, "%s: bad sizes", path);
	uint32_t count = fa_load32(p);
	if (count > IX_KV_MAX)
		return fa_err(FATHOM_ECORRUPT, "%s: too many named values (%u)", path, count);
	size_t at = 4;
	if (count && !(m->kv = fa_calloc(count, sizeof *m->kv)))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	for (uint32_t i = 0; i < count; i++) {
		ix_man_kv *e = &m->kv[i];
		if (n - at < 2)
			return fa_err(FATHOM_ECORRUPT, "%s: named value %u cut short", path, i);
		e->kind = p[at];
		size_t kl = p[at + 1];
		at += 2;
		if (kl == 0 || kl > IX_KV_KEY_MAX || n - at < kl + 4)
			return fa_err(FATHOM_ECORRUPT, "%s: named value %u cut short", path, i);
		memcpy(e->key, p + at, kl);
		e->key[kl] = '\0';
		at += kl;
		uint32_t bl = fa_load32(p + at);
		at += 4;
		if (!ix_kv_key_ok(e->key) || bl > n - at || bl > IX_KV_VALUE_MAX ||
		    (e->kind == IX_KV_FILE && bl != IX_KV_FILE_REF))
			return fa_err(FATHOM_ECORRUPT, "%s: bad named value %u", path, i);
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(m->kv[j].key, e->key) == 0)
				return fa_err(FATHOM_ECORRUPT, "%s: value '%s' named twice", path, e->key);
		if (!(e->body = fa_malloc(bl ? bl : 1)))
			return fa_err(FATHOM_ENOMEM, "out of memory");
		memcpy(e->body, p + at, bl);
		e->body_len = bl;
		at += bl;
		m->nkv = i + 1;
	}
	if (at != n)
		return fa_err(FATHOM_ECORRUPT, "%s: bad sizes", path);
	return 0;
}

static int no_index(const char *dir)
{
	return fa_err(FATHOM_ENOTFOUND, "%s: no index here (no MANIFEST)", dir);
}

int ix_manifest_present(const char *dir)
{
	char *path = fa_path_join(dir, "MANIFEST");
	if (!path)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	int missing = access(path, F_OK) != 0 && (errno == ENOENT || errno == ENOTDIR);
	fa_free(path);
	return missing ? no_index(dir) : 0;
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
	                      MAN_HEAD + 64 + 4 + IX_ROOT_MAX + (size_t)MAN_MAX_SEGS * MAN_SEG + 4 +
	                      MAN_KV_MAX_BYTES);
	if (rc) {
		if (rc == FATHOM_ENOTFOUND)
			rc = no_index(dir);
		fa_free(path);
		return rc;
	}
	const unsigned char *d = (const unsigned char *)data;
	uint32_t nsegs = 0, slen = 0, rlen = 0;
	size_t segs_at = 0, kv_at = 0;
	if (len < MAN_HEAD + 4 || memcmp(d, IX_MAN_MAGIC, 8) != 0) {
		rc = fa_err(FATHOM_ECORRUPT, "%s: not a fathom manifest", path);
	} else if (fa_load32(d + 8) < IX_FORMAT_VERSION_MIN || fa_load32(d + 8) > IX_FORMAT_VERSION) {
		rc = fa_err(FATHOM_EVERSION, "%s: index format version %u, this build reads %u to %u: rebuild the index into a new folder", path,
		            fa_load32(d + 8), IX_FORMAT_VERSION_MIN, IX_FORMAT_VERSION);
	} else if (fa_crc32c(0, d, len - 4) != fa_load32(d + len - 4)) {
		rc = fa_err(FATHOM_ECORRUPT, "%s: fails its checksum", path);
	} else {
		m->version = fa_load32(d + 8);
		nsegs = fa_load32(d + 28);
		slen = fa_load32(d + 32);
		if (slen >= sizeof m->stem_lang || len < MAN_HEAD + slen + 4 + 4)
			rc = fa_err(FATHOM_ECORRUPT, "%s: bad sizes", path);
		else
			rlen = fa_load32(d + MAN_HEAD + slen);
		segs_at = MAN_HEAD + slen + 4 + (size_t)rlen;
		kv_at = segs_at + (size_t)nsegs * MAN_SEG;
		/* Formats 5 and 6 end with the segments; 7 has the named values
		 * after them. */
		if (!rc && (rlen >= sizeof m->root || nsegs > MAN_MAX_SEGS || kv_at + 4 > len ||
		            (m->version < IX_FORMAT_VERSION && kv_at + 4 != len)))
			rc = fa_err(FATHOM_ECORRUPT, "%s: bad sizes", path);
		if (!rc && rlen && (d[MAN_HEAD + slen + 4] != '/' ||
		                    memchr(d + MAN_HEAD + slen + 4, '\0', rlen)))
			rc = fa_err(FATHOM_ECORRUPT, "%s: bad root folder", path);
	}
	if (!rc) {
		/* Formats 5 and 6 name their glossary file here; 7 writes 0. */
		m->legacy_glossary = m->version < IX_FORMAT_VERSION ? fa_load32(d + 12) : 0;
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
		const unsigned char *r = d + segs_at + (size_t)i * MAN_SEG;
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
	if (!rc && m->version >= IX_FORMAT_VERSION)
		rc = kv_decode(m, d + kv_at, len - 4 - kv_at, path);
	fa_free(data);
	fa_free(path);
	if (rc)
		ix_manifest_free(m);
	return rc;
}

int ix_manifest_write(const ix_manifest *m, const char *dir, int *renamed)
{
	size_t slen = strlen(m->stem_lang);
	fbuf b;
	fbuf_init(&b, 0);
	fbuf_append(&b, IX_MAN_MAGIC, 8);
	fbuf_put_u32(&b, IX_FORMAT_VERSION);
	fbuf_put_u32(&b, 0);   /* formats 5 and 6: the glossary file's number */
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
	size_t kv_at = b.len;
	fbuf_put_u32(&b, m->nkv);
	for (uint32_t i = 0; i < m->nkv; i++) {
		const ix_man_kv *e = &m->kv[i];
		size_t kl = strlen(e->key);
		unsigned char head[2] = { e->kind, (unsigned char)kl };
		fbuf_append(&b, head, 2);
		fbuf_append(&b, e->key, kl);
		fbuf_put_u32(&b, e->body_len);
		fbuf_append(&b, e->body, e->body_len);
	}
	int rc = b.err;
	if (!rc && b.len - kv_at > MAN_KV_MAX_BYTES)
		rc = fa_err(FATHOM_ETOOBIG, "the named values take %zu bytes of the manifest (at most %zu)",
		            b.len - kv_at, MAN_KV_MAX_BYTES);
	if (!rc)
		rc = fbuf_put_u32(&b, fa_crc32c(0, b.data, b.len));
	int moved = 0;
	if (!rc)
		rc = fa_write_atomic_r(dir, "MANIFEST", b.data, b.len, &moved);
	if (renamed)
		*renamed = moved;
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
