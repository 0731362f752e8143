/*
 * payload.c — named payloads that commit atomically with the segments: small
 * values kept in the manifest's key/value block, and larger payloads kept in
 * a checksummed file <key>.<gen>.fpay that the manifest names. The glossary
 * is the payload "glossary"; an embedding model's identity or a replication
 * cursor are meant to be the next ones.
 *
 * A writer stages a payload (ix_stage_value, ix_stage_file); ix_get_value
 * returns it at once to that handle, and the next commit makes it durable
 * and visible to others: payload files are written (write, fsync, rename,
 * fsync the folder) before the MANIFEST that names them, and the files they
 * replace are removed once that MANIFEST is durable. A reader loads every
 * payload of the MANIFEST it opened, so it sees those of its commit.
 *
 * Keys this build does not use, and kinds it does not know, are kept: a
 * commit copies every entry of the manifest it started from into the new
 * one, replacing only the keys it staged. So a build that knows nothing of
 * a newer build's payloads never drops them.
 */
#include <unistd.h>

#include "index/index_int.h"

#define GLOSSARY_KEY "glossary"

void ix_payloads_free(ix_payload *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++)
		fa_free(p[i].data);
	fa_free(p);
}

static ix_payload *find(ix_payload *p, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0)
			return &p[i];
	return NULL;
}

/* The (generation, length, CRC) a file entry's body holds. */
static void file_ref(const ix_man_kv *e, uint64_t *gen, uint64_t *len, uint32_t *crc)
{
	*gen = fa_load64(e->body);
	*len = fa_load64(e->body + 8);
	*crc = fa_load32(e->body + 16);
}

int ix_payloads_load(const char *dir, const ix_manifest *m, ix_payload **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	size_t cap = (size_t)m->nkv + 1;   /* + the glossary file of formats 5 and 6 */
	ix_payload *p = fa_calloc(cap, sizeof *p);
	if (!p)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	size_t n = 0;
	int rc = 0;
	for (uint32_t i = 0; i < m->nkv && !rc; i++) {
		const ix_man_kv *e = &m->kv[i];
		if (e->kind != IX_KV_VALUE && e->kind != IX_KV_FILE)
			continue;   /* a newer kind: carried forward, not read */
		ix_payload *q = &p[n];
		memcpy(q->name, e->key, sizeof q->name);
		q->kind = e->kind;
		if (e->kind == IX_KV_VALUE) {
			q->len = e->body_len;
			if (!(q->data = fa_malloc(q->len ? q->len : 1)))
				rc = fa_err(FATHOM_ENOMEM, "out of memory");
			else if (q->len)
				memcpy(q->data, e->body, q->len);
		} else {
			uint64_t gen, len;
			uint32_t crc;
			file_ref(e, &gen, &len, &crc);
			rc = ix_payload_file_read(dir, e->key, gen, len, crc, &q->data, &q->len);
		}
		n += !rc;
	}
	if (!rc && m->legacy_glossary) {
		ix_payload *q = &p[n];
		memcpy(q->name, GLOSSARY_KEY, sizeof GLOSSARY_KEY);
		q->kind = IX_KV_FILE;
		rc = ix_glossary_read(dir, m->legacy_glossary, &q->data, &q->len);
		n += !rc;
	}
	if (rc) {
		ix_payloads_free(p, n);
		return rc;
	}
	*out = p;
	*nout = n;
	return 0;
}

/* ---- staging and reading ----------------------------------------------------- */

static int stage(ix_index *ix, const char *name, uint8_t kind, const void *data, size_t len)
{
	if (!(ix->flags & IX_WRITE))
		return fa_err(FATHOM_EREADONLY, "%s: opened read-only", ix->dir);
	if (!name || !ix_kv_key_ok(name))
		return fa_err(FATHOM_EINVAL, "'%s': not a payload name ([a-z0-9][a-z0-9._-]*, at most %u bytes)",
		              name ? name : "", IX_KV_KEY_MAX);
	if (len > (kind == IX_KV_VALUE ? IX_KV_VALUE_MAX : IX_KV_FILE_MAX))
		return fa_err(FATHOM_ETOOBIG, "%s: %zu bytes (at most %u)", name, len,
		              kind == IX_KV_VALUE ? IX_KV_VALUE_MAX : IX_KV_FILE_MAX);
	ix_payload *q = find(ix->staged, ix->nstaged, name);
	if (!q) {
		int rc = fa_grow((void **)&ix->staged, &ix->staged_cap, ix->nstaged + 1, sizeof *ix->staged);
		if (rc)
			return rc;
		q = &ix->staged[ix->nstaged];
		memset(q, 0, sizeof *q);
	}
	unsigned char *copy = fa_malloc(len ? len : 1);
	if (!copy)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (len)
		memcpy(copy, data, len);
	if (q == &ix->staged[ix->nstaged]) {
		memcpy(q->name, name, strlen(name) + 1);
		ix->nstaged++;
	}
	fa_free(q->data);
	q->data = copy;
	q->len = len;
	q->kind = kind;
	ix->pay_version++;
	return 0;
}

int ix_stage_value(ix_index *ix, const char *name, const void *data, size_t len)
{
	return stage(ix, name, IX_KV_VALUE, data, len);
}

int ix_stage_file(ix_index *ix, const char *name, const void *data, size_t len)
{
	return stage(ix, name, IX_KV_FILE, data, len);
}

int ix_get_value(const ix_index *ix, const char *name, const unsigned char **data, size_t *len)
{
	const ix_payload *q = find(ix->staged, ix->nstaged, name);
	if (!q)
		q = find(ix->pay, ix->npay, name);
	if (!q) {
		*data = NULL;
		*len = 0;
		return FATHOM_ENOTFOUND;
	}
	*data = q->data;
	*len = q->len;
	return 0;
}

uint64_t ix_payload_version(const ix_index *ix)
{
	return ix->pay_version;
}

void ix_payloads_drop_staged(ix_index *ix)
{
	ix_payloads_free(ix->staged, ix->nstaged);
	ix->staged = NULL;
	ix->nstaged = ix->staged_cap = 0;
	ix->pay_version++;
}

void ix_payloads_replace(ix_index *ix, ix_payload *p, size_t n)
{
	ix_payloads_free(ix->pay, ix->npay);
	ix->pay = p;
	ix->npay = ix->pay_cap = n;
	ix->pay_version++;
}

/* ---- the glossary ------------------------------------------------------------- */

void ix_glossary(const ix_index *ix, const unsigned char **data, size_t *len, uint64_t *version)
{
	*version = ix->pay_version;
	if (ix_get_value(ix, GLOSSARY_KEY, data, len) != 0) {
		*data = NULL;
		*len = 0;
	}
}

int ix_glossary_stage(ix_index *ix, const unsigned char *data, size_t len)
{
	return ix_stage_file(ix, GLOSSARY_KEY, data, len);
}

/* ---- committing ------------------------------------------------------------------ */

int ix_payloads_stage_upgrade(ix_index *ix)
{
	/* The glossary file of formats 5 and 6 becomes a payload file. */
	if (ix->man.version >= IX_FORMAT_VERSION || find(ix->staged, ix->nstaged, GLOSSARY_KEY))
		return 0;
	const ix_payload *g = find(ix->pay, ix->npay, GLOSSARY_KEY);
	return g ? ix_stage_file(ix, GLOSSARY_KEY, g->data, g->len) : 0;
}

int ix_payloads_write(ix_index *ix, uint64_t gen, ix_man_kv **kv_out, uint32_t *nkv_out)
{
	*kv_out = NULL;
	*nkv_out = 0;
	const ix_manifest *m = &ix->man;
	size_t cap = (size_t)m->nkv + ix->nstaged;
	/* the entries the new manifest will hold: a key staged anew replaces
	 * its old entry, it does not add one */
	size_t total = cap;
	for (uint32_t i = 0; i < m->nkv; i++)
		if (find(ix->staged, ix->nstaged, m->kv[i].key))
			total--;
	if (total > IX_KV_MAX)
		return fa_err(FATHOM_ETOOBIG, "more than %u named payloads", IX_KV_MAX);
	/* Room in the committed list for every staged payload, now: after the
	 * manifest nothing may fail (ix_payloads_committed). */
	if (ix->npay + ix->nstaged > ix->pay_cap) {
		ix_payload *p = fa_realloc(ix->pay, (ix->npay + ix->nstaged) * sizeof *p);
		if (!p)
			return fa_err(FATHOM_ENOMEM, "out of memory");
		ix->pay = p;
		ix->pay_cap = ix->npay + ix->nstaged;
	}
	ix_man_kv *kv = fa_calloc(cap ? cap : 1, sizeof *kv);
	if (!kv)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	uint32_t n = 0;
	int rc = 0;
	/* Every entry of the manifest we started from, unless staged anew. */
	for (uint32_t i = 0; i < m->nkv && !rc; i++) {
		if (find(ix->staged, ix->nstaged, m->kv[i].key))
			continue;
		kv[n] = m->kv[i];
		kv[n].body = fa_malloc(m->kv[i].body_len ? m->kv[i].body_len : 1);
		if (!kv[n].body)
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
		else
			memcpy(kv[n++].body, m->kv[i].body, m->kv[i].body_len);
	}
	for (size_t i = 0; i < ix->nstaged && !rc; i++) {
		const ix_payload *q = &ix->staged[i];
		ix_man_kv *e = &kv[n];
		memcpy(e->key, q->name, sizeof e->key);
		e->kind = q->kind;
		e->body_len = q->kind == IX_KV_FILE ? IX_KV_FILE_REF : (uint32_t)q->len;
		if (!(e->body = fa_malloc(e->body_len ? e->body_len : 1))) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
			break;
		}
		n++;
		if (q->kind == IX_KV_VALUE) {
			memcpy(e->body, q->data, q->len);
			continue;
		}
		fa_store64(e->body, gen);
		fa_store64(e->body + 8, q->len);
		fa_store32(e->body + 16, fa_crc32c(0, q->data, q->len));
		rc = ix_payload_file_write(ix->dir, q->name, gen, q->data, q->len);
	}
	if (rc) {
		ix_kv_free(kv, n);
		ix_payloads_undo(ix, gen);
		return rc;
	}
	*kv_out = kv;
	*nkv_out = n;
	return 0;
}

void ix_payloads_undo(ix_index *ix, uint64_t gen)
{
	for (size_t i = 0; i < ix->nstaged; i++) {
		if (ix->staged[i].kind != IX_KV_FILE)
			continue;
		char name[IX_PAYLOAD_NAME_MAX];
		ix_payload_file_name(name, sizeof name, ix->staged[i].name, gen);
		ix_remove_file(ix->dir, name);
	}
}

void ix_payloads_committed(ix_index *ix, const ix_manifest *old)
{
	/* The files the new manifest no longer names. */
	for (uint32_t i = 0; i < old->nkv; i++) {
		const ix_man_kv *e = &old->kv[i];
		if (e->kind != IX_KV_FILE || !find(ix->staged, ix->nstaged, e->key))
			continue;
		uint64_t gen, len;
		uint32_t crc;
		file_ref(e, &gen, &len, &crc);
		char name[IX_PAYLOAD_NAME_MAX];
		ix_payload_file_name(name, sizeof name, e->key, gen);
		ix_remove_file(ix->dir, name);
	}
	if (old->legacy_glossary) {
		char name[64];
		ix_glossary_name(name, sizeof name, old->legacy_glossary);
		ix_remove_file(ix->dir, name);
	}
	/* The staged payloads are now the committed ones. */
	for (size_t i = 0; i < ix->nstaged; i++) {
		ix_payload *q = find(ix->pay, ix->npay, ix->staged[i].name);
		if (q) {
			fa_free(q->data);
			*q = ix->staged[i];
			ix->staged[i].data = NULL;
		}
	}
	size_t keep = 0;
	for (size_t i = 0; i < ix->nstaged; i++)
		if (ix->staged[i].data)
			ix->staged[keep++] = ix->staged[i];
	/* New names: appended to the committed list (ix_payloads_write made
	 * room). */
	if (keep)
		memcpy(ix->pay + ix->npay, ix->staged, keep * sizeof *ix->pay);
	ix->npay += keep;
	ix->nstaged = 0;
	ix->pay_version++;
}

int ix_payload_file_named(const ix_manifest *m, const char *fname)
{
	for (uint32_t i = 0; i < m->nkv; i++) {
		if (m->kv[i].kind != IX_KV_FILE)
			continue;
		uint64_t gen, len;
		uint32_t crc;
		file_ref(&m->kv[i], &gen, &len, &crc);
		char name[IX_PAYLOAD_NAME_MAX];
		ix_payload_file_name(name, sizeof name, m->kv[i].key, gen);
		if (strcmp(name, fname) == 0)
			return 1;
	}
	if (m->legacy_glossary) {
		char name[64];
		ix_glossary_name(name, sizeof name, m->legacy_glossary);
		if (strcmp(name, fname) == 0)
			return 1;
	}
	return 0;
}

int ix_payloads_verify(const char *dir, const ix_manifest *m)
{
	ix_payload *p;
	size_t n;
	int rc = ix_payloads_load(dir, m, &p, &n);
	if (rc == FATHOM_ENOTFOUND)
		return fa_err_wrap(FATHOM_ECORRUPT, "%s", dir);
	if (!rc)
		ix_payloads_free(p, n);
	return rc;
}
