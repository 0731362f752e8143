/*
 * segment_read.c — opening a segment file and reading its dictionary and
 * tables.
 *
 * Opening reads the footer and the page CRC table only: the rest of the
 * file is checked a page at a time the first time any byte of the page is
 * used (seg_check_range), so opening costs the same for a 1 MB segment and a
 * 1 GB one, and no byte reaches a decoder unchecked. Every offset and length
 * read from the file is checked against its section before use.
 */
#include <stdlib.h>

#include "index/index_int.h"
#include "vec/vec.h"

static int corrupt(const ix_segment *s, const char *what)
{
	return fa_err(FATHOM_ECORRUPT, "%s: %s", s->path, what);
}

/* ---- integrity ------------------------------------------------------------ */

static int check_page(const ix_segment *s, uint64_t pg)
{
	uint64_t *word = &s->verified[pg >> 6];
	uint64_t bit = (uint64_t)1 << (pg & 63);
	if (__atomic_load_n(word, __ATOMIC_ACQUIRE) & bit)
		return 0;
	uint64_t off = pg << IX_PAGE_SHIFT, n = FA_MIN((uint64_t)IX_PAGE, s->data_end - off);
	uint32_t want = fa_load32(s->page_crcs + pg * 4);
	if (fa_crc32c(0, s->data + off, n) != want)
		return fa_err(FATHOM_ECORRUPT, "%s: page %llu (bytes %llu..%llu) fails its checksum",
		              s->path, (unsigned long long)pg, (unsigned long long)off,
		              (unsigned long long)(off + n - 1));
	__atomic_fetch_or(word, bit, __ATOMIC_RELEASE);
	return 0;
}

int seg_check_range_slow(const ix_segment *s, uint64_t off, uint64_t len)
{
	if (off > s->data_end || len > s->data_end - off)
		return fa_err(FATHOM_ECORRUPT, "%s: bytes %llu..+%llu lie outside the file", s->path,
		              (unsigned long long)off, (unsigned long long)len);
	if (len == 0)
		return 0;
	uint64_t last = (off + len - 1) >> IX_PAGE_SHIFT;
	for (uint64_t pg = off >> IX_PAGE_SHIFT; pg <= last;) {
		/* 64 pages verified at once: a long section already read (the
		 * vectors, a graph) costs a word a 64 KiB, not a test a page */
		if ((pg & 63) == 0 && last - pg >= 63 &&
		    __atomic_load_n(&s->verified[pg >> 6], __ATOMIC_ACQUIRE) == UINT64_MAX) {
			pg += 64;
			continue;
		}
		int rc = check_page(s, pg);
		if (rc)
			return rc;
		pg++;
	}
	return 0;
}

int seg_check_all_pages(const ix_segment *s)
{
	for (uint64_t pg = 0; pg < s->npages; pg++) {
		int rc = check_page(s, pg);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- opening -------------------------------------------------------------- */

static int by_offset(const void *a, const void *b)
{
	const ix_secent *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off ? 1 : x->len < y->len ? -1 : x->len > y->len;
}

static int by_tag(const void *a, const void *b)
{
	uint32_t x = ((const ix_secent *)a)->tag, y = ((const ix_secent *)b)->tag;
	return x < y ? -1 : x > y;
}

/* Place the directory's sections: each inside [16, data_end), no two
 * overlapping, no tag twice; the known ones into sec_off/sec_len. An
 * unknown tag is skipped when optional and refused when required; a known
 * required section that is missing is corrupt. */
static int place_sections(ix_segment *s)
{
	char tag[5];
	ix_secent *sorted = fa_malloc((s->ndir ? s->ndir : 1) * sizeof *sorted);
	if (!sorted)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	memcpy(sorted, s->dir, s->ndir * sizeof *sorted);
	int rc = 0;
	for (uint32_t i = 0; i < s->ndir && !rc; i++)
		for (int b = 0; b < 32 && !rc; b += 8)
			if (((sorted[i].tag >> b) & 0xff) < 0x20 || ((sorted[i].tag >> b) & 0xff) > 0x7e)
				rc = corrupt(s, "bad section tag in the directory");
	qsort(sorted, s->ndir, sizeof *sorted, by_tag);
	for (uint32_t i = 1; i < s->ndir && !rc; i++)
		if (sorted[i].tag == sorted[i - 1].tag) {
			ix_tag_name(sorted[i].tag, tag);
			rc = fa_err(FATHOM_ECORRUPT, "%s: section '%s' listed twice", s->path, tag);
		}
	qsort(sorted, s->ndir, sizeof *sorted, by_offset);
	uint64_t at = IX_PREAMBLE_SIZE;
	for (uint32_t i = 0; i < s->ndir && !rc; i++) {
		const ix_secent *e = &sorted[i];
		if (e->off < at || e->off > s->data_end || e->len > s->data_end - e->off)
			rc = corrupt(s, "bad section directory (a section outside the data or overlapping another)");
		at = e->off + e->len;
	}
	fa_free(sorted);
	for (int i = 0; i < IX_NSEC; i++) {
		s->sec_off[i] = s->data_end;   /* absent: empty */
		s->sec_len[i] = 0;
	}
	uint8_t seen[IX_NSEC] = { 0 };
	for (uint32_t i = 0; i < s->ndir && !rc; i++) {
		const ix_secent *e = &s->dir[i];
		int k = ix_section_of_tag(e->tag);
		if (k >= 0) {
			s->sec_off[k] = e->off;
			s->sec_len[k] = e->len;
			seen[k] = 1;
		} else if (e->flags & IX_SECF_REQUIRED) {
			ix_tag_name(e->tag, tag);
			rc = fa_err(FATHOM_EVERSION,
			            "%s: required section '%s' is unknown to this build (written by a "
			            "newer fathom?); upgrade fathom or rebuild the index", s->path, tag);
		}
	}
	for (int k = 0; k < IX_NSEC && !rc; k++)
		if (!seen[k] && (ix_known_sections[k].flags & IX_SECF_REQUIRED) &&
		    !(ix_known_sections[k].flags & IX_SECF_WHEN_USED)) {
			ix_tag_name(ix_known_sections[k].tag, tag);
			rc = fa_err(FATHOM_ECORRUPT, "%s: the required section '%s' is missing", s->path, tag);
		}
	return rc;
}

/* The directory: format 7's from the file (checked against its CRC), or
 * the fixed table of formats 5 and 6, whose sections fill the data back to
 * back. */
static int read_directory(ix_segment *s, const ix_footer *f, const ix_secent *legacy)
{
	s->ndir = f->ndir;
	s->dir = fa_malloc((f->ndir ? f->ndir : 1) * sizeof *s->dir);
	if (!s->dir)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (s->version < IX_FORMAT_VERSION) {
		memcpy(s->dir, legacy, f->ndir * sizeof *s->dir);
		uint64_t at = IX_PREAMBLE_SIZE;
		for (uint32_t i = 0; i < f->ndir; i++) {
			if (legacy[i].off != at || legacy[i].len > s->data_end - at)
				return corrupt(s, "bad section table");
			at += legacy[i].len;
		}
		if (at != s->data_end)
			return corrupt(s, "sections do not fill the file");
		return 0;
	}
	const unsigned char *d = s->data + s->data_end + s->npages * 4;
	if (fa_crc32c(0, d, (size_t)f->ndir * IX_SECDIR_REC) != f->dir_crc)
		return corrupt(s, "section directory fails its checksum");
	ix_secdir_decode(d, f->ndir, s->dir);
	return 0;
}

static int seg_parse(ix_segment *s)
{
	const unsigned char *d = s->data;
	uint64_t len = s->len;
	if (len < IX_PREAMBLE_SIZE)
		return corrupt(s, "too short to be a segment");
	if (memcmp(d, IX_SEG_MAGIC, 8) != 0)
		return corrupt(s, "not a segment file (bad magic)");
	ix_footer f;
	ix_secent legacy[IX_LEGACY_NSEC];
	int rc = ix_footer_decode(d, len, &f, legacy);
	s->version = f.version;
	if (rc == FATHOM_EVERSION)
		return fa_err(FATHOM_EVERSION, "%s: segment format version %u, this build reads %u to %u: rebuild the index into a new folder",
		              s->path, s->version, IX_FORMAT_VERSION_MIN, IX_FORMAT_VERSION);
	if (rc)
		return corrupt(s, "too short to be a segment");
	if (!f.magic_ok)
		return corrupt(s, "bad footer magic (truncated?)");
	if (f.footer_version != s->version)
		return fa_err(FATHOM_EVERSION, "%s: segment footer version %u, header version %u",
		              s->path, f.footer_version, s->version);
	if (!f.crc_ok)
		return corrupt(s, "footer fails its checksum");
	if (f.stored_size != f.size || f.page_size != IX_PAGE)
		return corrupt(s, "bad footer size or page size");
	if (s->version == IX_FORMAT_VERSION && f.ndir > IX_SECDIR_MAX)
		return corrupt(s, "section directory too long");
	s->id = f.seg_id;
	s->nchunks = f.nchunks;
	s->ndocs = f.ndocs;
	s->nterms = f.nterms;
	s->ndict_blocks = f.ndict_blocks;
	s->dict_block_terms = f.dict_block_terms;
	s->raw_text = f.raw_text;
	s->post_bytes = f.post_bytes;
	s->pos_bytes = f.pos_bytes;
	s->data_end = f.data_end;
	memcpy(s->field_len_sum, f.field_len_sum, sizeof s->field_len_sum);
	s->frame_raw = f.frame_raw;
	s->footer_crc = f.crc;

	if (s->data_end < IX_PREAMBLE_SIZE || s->data_end > len - f.size)
		return corrupt(s, "bad data length in footer");
	s->npages = (s->data_end + IX_PAGE - 1) / IX_PAGE;
	if (ix_secdir_offset(&f, len) == 0)
		return corrupt(s, "file length disagrees with its footer");
	s->page_crcs = d + s->data_end;
	if (fa_crc32c(0, s->page_crcs, s->npages * 4) != f.page_table_crc)
		return corrupt(s, "page checksum table fails its checksum");
	s->verified = fa_calloc((size_t)((s->npages + 63) / 64), sizeof *s->verified);
	if (!s->verified)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	rc = seg_check_range(s, 0, IX_PREAMBLE_SIZE);
	if (rc)
		return rc;
	if (fa_load32(d + 12) != s->id)
		return corrupt(s, "segment id differs between header and footer");
	if ((rc = read_directory(s, &f, legacy)) != 0 || (rc = place_sections(s)) != 0)
		return rc;

	if (s->frame_raw < IX_FRAME_RAW_MIN || s->frame_raw > IX_FRAME_RAW ||
	    (s->frame_raw & (s->frame_raw - 1)) != 0)
		return corrupt(s, "bad document store frame size in footer");
	if (s->sec_len[IX_SEC_DOCSTORE_DICT] > IX_DS_DICT_MAX)
		return corrupt(s, "document store dictionary too large");
	if (s->sec_len[IX_SEC_DOCSTORE_DICTS] > 4 + (uint64_t)IX_DS_MAX_DICTS * (8 + IX_DS_DICT_MAX + 8))
		return corrupt(s, "document store dictionaries too large");
	if (s->sec_len[IX_SEC_DOCSTORE_DICT] && s->sec_len[IX_SEC_DOCSTORE_DICTS])
		return corrupt(s, "two kinds of document store dictionary");
	if (s->raw_text > s->sec_len[IX_SEC_FRAMES] / IX_FRAME_REC * s->frame_raw)
		return corrupt(s, "more text than the document store frames hold");
	uint64_t dbt = s->dict_block_terms;
	if (s->nchunks >= IX_END || s->ndocs >= IX_END || dbt == 0 || dbt > 1024 ||
	    s->ndict_blocks != (s->nterms + dbt - 1) / dbt ||
	    s->sec_len[IX_SEC_DICT_INDEX] / IX_DIDX_REC < s->ndict_blocks ||
	    s->sec_len[IX_SEC_FRAMES] % IX_FRAME_REC ||
	    s->sec_len[IX_SEC_DOCS] != (uint64_t)s->ndocs * IX_DOC_REC ||
	    s->sec_len[IX_SEC_CHUNKS] != (uint64_t)s->nchunks * IX_CHUNK_REC ||
	    s->sec_len[IX_SEC_KEYS] != (uint64_t)s->ndocs * IX_KEY_REC ||
	    s->post_bytes > s->sec_len[IX_SEC_TERMDATA] ||
	    s->pos_bytes != s->sec_len[IX_SEC_TERMDATA] - s->post_bytes ||
	    s->sec_len[IX_SEC_DOC_STRINGS] > UINT64_MAX / 2 ||
	    s->sec_len[IX_SEC_CHUNK_STRINGS] > UINT32_MAX ||
	    (s->sec_len[IX_SEC_FRAMES] == 0) != (s->raw_text == 0))
		return corrupt(s, "footer counts disagree with the section sizes");
	/* DICT_INDEX: block records, first-term strings, then the term hash
	 * table, whose size follows from nterms. */
	s->thash_buckets = f.thash_buckets;
	if (s->thash_buckets != ix_thash_buckets(s->nterms))
		return corrupt(s, "bad term hash table size");
	uint64_t rest = s->sec_len[IX_SEC_DICT_INDEX] - s->ndict_blocks * IX_DIDX_REC;
	uint64_t th_len = s->thash_buckets ? 4 * ((uint64_t)s->thash_buckets + 1 + s->nterms) : 0;
	if (th_len > rest)
		return corrupt(s, "term hash table does not fit its section");
	s->didx_strs_len = rest - th_len;
	s->thash_off = s->sec_off[IX_SEC_DICT_INDEX] + s->sec_len[IX_SEC_DICT_INDEX] - th_len;
	return 0;
}

int seg_section(const ix_segment *s, uint32_t tag, uint64_t *off, uint64_t *len)
{
	for (uint32_t i = 0; i < s->ndir; i++) {
		if (s->dir[i].tag == tag) {
			*off = s->dir[i].off;
			*len = s->dir[i].len;
			return 0;
		}
	}
	return FATHOM_ENOTFOUND;
}

int seg_check_sections(const ix_segment *s)
{
	for (uint32_t i = 0; i < s->ndir; i++) {
		const ix_secent *e = &s->dir[i];
		if (e->has_crc && fa_crc32c(0, s->data + e->off, (size_t)e->len) != e->crc) {
			char tag[5];
			ix_tag_name(e->tag, tag);
			return fa_err(FATHOM_ECORRUPT, "%s: section '%s' fails its checksum", s->path, tag);
		}
	}
	return 0;
}

static int seg_new(ix_segment **out, const char *name)
{
	ix_segment *s = fa_calloc(1, sizeof *s);
	if (!s || !(s->path = fa_strdup(name))) {
		fa_free(s);
		return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	s->map.fd = -1;
	*out = s;
	return 0;
}

int seg_open_file(ix_segment **out, const char *path)
{
	*out = NULL;
	ix_segment *s;
	int rc = seg_new(&s, path);
	if (rc)
		return rc;
	if ((rc = fa_map_file(&s->map, path)) == 0) {
		s->data = s->map.data;
		s->len = s->map.len;
		rc = seg_parse(s);
	}
	if (rc) {
		seg_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

int seg_open_mem(ix_segment **out, const void *data, size_t len, const char *name)
{
	*out = NULL;
	ix_segment *s;
	int rc = seg_new(&s, name);
	if (rc)
		return rc;
	s->data = data;
	s->len = len;
	if ((rc = seg_parse(s)) != 0) {
		seg_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void seg_close(ix_segment *s)
{
	if (!s)
		return;
	ix_ds_release(s);
	fa_unmap(&s->map);
	fa_free(s->verified);
	fa_free(s->dir);
	fa_free(s->del_docs);
	fa_free(s->del_chunks);
	fa_free(s->field_lens);
	fa_free(s->query_cache);
	vx_hnsw_free(s->graph);
	fa_free(s->path);
	fa_free(s);
}

static uint32_t popcount_bits(const uint8_t *bm, uint32_t n)
{
	uint32_t c = 0;
	if (!bm)
		return 0;
	for (uint32_t i = 0; i < n / 8; i++)
		c += (uint32_t)__builtin_popcount(bm[i]);
	for (uint32_t i = n & ~7u; i < n; i++)
		c += ix_bit_get(bm, i);
	return c;
}

void seg_set_tombstones(ix_segment *s, uint8_t *docs, uint8_t *chunks, uint64_t gen)
{
	fa_free(s->del_docs);
	fa_free(s->del_chunks);
	s->del_docs = docs;
	s->del_chunks = chunks;
	s->del_gen = gen;
	s->n_del_docs = popcount_bits(docs, s->ndocs);
	s->n_del_chunks = popcount_bits(chunks, s->nchunks);
}

/* ---- small accessors ------------------------------------------------------ */

uint32_t seg_id(const ix_segment *s)
{
	return s->id;
}

uint32_t seg_nchunks(const ix_segment *s)
{
	return s->nchunks;
}

uint32_t seg_ndocs(const ix_segment *s)
{
	return s->ndocs;
}

const char *seg_path(const ix_segment *s)
{
	return s->path;
}

int seg_is_deleted(const ix_segment *s, uint32_t chunk)
{
	return chunk < s->nchunks && ix_bit_get(s->del_chunks, chunk);
}

int seg_doc_is_deleted(const ix_segment *s, uint32_t doc)
{
	return doc < s->ndocs && ix_bit_get(s->del_docs, doc);
}

/* ---- docs and chunks -------------------------------------------------------- */

int seg_doc_rec(const ix_segment *s, uint32_t doc, const unsigned char **rec)
{
	if (doc >= s->ndocs)
		return fa_err(FATHOM_ENOTFOUND, "%s: no document %u", s->path, doc);
	uint64_t off = s->sec_off[IX_SEC_DOCS] + (uint64_t)doc * IX_DOC_REC;
	int rc = seg_check_range(s, off, IX_DOC_REC);
	if (rc)
		return rc;
	const unsigned char *r = s->data + off;
	uint64_t text_off = fa_load64(r), text_len = fa_load32(r + 48);
	uint64_t first = fa_load32(r + 56), n = fa_load32(r + 60);
	if (text_off > s->raw_text || text_len > s->raw_text - text_off || first + n > s->nchunks)
		return corrupt(s, "bad document record");
	*rec = r;
	return 0;
}

int seg_chunk_rec(const ix_segment *s, uint32_t chunk, const unsigned char **rec)
{
	if (chunk >= s->nchunks)
		return fa_err(FATHOM_ENOTFOUND, "%s: no chunk %u", s->path, chunk);
	uint64_t off = s->sec_off[IX_SEC_CHUNKS] + (uint64_t)chunk * IX_CHUNK_REC;
	int rc = seg_check_range(s, off, IX_CHUNK_REC);
	if (rc)
		return rc;
	*rec = s->data + off;
	return 0;
}

/* A string of DOC_STRINGS at off, len bytes then a NUL: bounds-checked. */
static int doc_string_at(const ix_segment *s, uint64_t off, uint64_t len, const char **p)
{
	uint64_t sec = s->sec_len[IX_SEC_DOC_STRINGS];
	if (off > sec || len >= sec - off)
		return corrupt(s, "document strings out of range");
	off += s->sec_off[IX_SEC_DOC_STRINGS];
	int rc = seg_check_range(s, off, len + 1);
	if (rc)
		return rc;
	if (s->data[off + len] != '\0')
		return corrupt(s, "document string not terminated");
	*p = (const char *)s->data + off;
	return 0;
}

/* The strings of a doc record: bounds-checked, NUL-terminated inside. */
static int doc_strings(const ix_segment *s, const unsigned char *r, const char **p, uint64_t *n)
{
	uint64_t len = fa_load32(r + 52);
	if (len == 0)
		return corrupt(s, "document strings empty");
	*n = len;
	return doc_string_at(s, fa_load64(r + 32), len - 1, p);
}

int seg_doc(const ix_segment *s, uint32_t doc, ix_doc_info *out)
{
	const unsigned char *r;
	const char *p = NULL, *path = NULL;
	uint64_t n = 0;
	int rc = seg_doc_rec(s, doc, &r);
	if (rc || (rc = doc_strings(s, r, &p, &n)) != 0)
		return rc;
	unsigned flags = r[71];
	if (flags & ~(IX_DOC_PATH_IS_KEY | IX_DOC_TITLE_IS_PATH | IX_DOC_TRIGRAMS | IX_DOC_GREP_ONLY))
		return corrupt(s, "unknown document flags");
	if ((flags & IX_DOC_GREP_ONLY) &&
	    (!(flags & IX_DOC_TRIGRAMS) || fa_load32(r + 48) || fa_load32(r + 60)))
		return corrupt(s, "a grep-only document with text or chunks");
	uint64_t plen = fa_load16(r + 68);
	if ((rc = doc_string_at(s, fa_load64(r + 40), plen, &path)) != 0)
		return rc;
	memset(out, 0, sizeof *out);
	out->n_tags = fa_load16(r + 64);
	out->n_meta = fa_load16(r + 66);
	/* key, title, url, lang, tags..., meta... */
	const char *strs[4];
	const char *end = p + n, *q = p;
	uint64_t want = 4 + (uint64_t)out->n_tags + out->n_meta;
	for (uint64_t i = 0; i < want; i++) {
		if (q >= end)
			return corrupt(s, "document strings too short");
		if (i < 4)
			strs[i] = q;
		else if (i == 4 && out->n_tags)
			out->tags = q;
		if (i == 4 + out->n_tags)
			out->meta = q;
		q += strlen(q) + 1;   /* stops at the NUL at end[-1] at worst */
	}
	if (q != end)
		return corrupt(s, "document strings too long");
	out->key = strs[0];
	out->path = path;
	if ((flags & IX_DOC_PATH_IS_KEY) && path != p)
		return corrupt(s, "document path is not its key");
	if ((flags & IX_DOC_TITLE_IS_PATH) && (strs[1][0] || plen == 0))
		return corrupt(s, "document title both stored and shared");
	out->title = (flags & IX_DOC_TITLE_IS_PATH) ? path : strs[1];
	out->url = strs[2];
	out->lang = strs[3];
	if (!out->tags)
		out->tags = q - 1;   /* an empty string, never dereferenced past */
	if (!out->meta)
		out->meta = q - 1;
	out->kind = r[70];
	out->trigrams = (flags & IX_DOC_TRIGRAMS) != 0;
	out->grep_only = (flags & IX_DOC_GREP_ONLY) != 0;
	out->first_chunk = fa_load32(r + 56);
	out->n_chunks = fa_load32(r + 60);
	out->size = fa_load64(r + 8);
	out->mtime_ns = (int64_t)fa_load64(r + 16);
	out->content_hash = fa_load64(r + 24);
	out->text_off = fa_load64(r);
	out->text_len = fa_load32(r + 48);
	return 0;
}

int seg_doc_file(const ix_segment *s, uint32_t doc, const char **path, uint64_t *size,
                 int64_t *mtime_ns)
{
	const unsigned char *r;
	int rc = seg_doc_rec(s, doc, &r);
	if (rc)
		return rc;
	if ((rc = doc_string_at(s, fa_load64(r + 40), fa_load16(r + 68), path)) != 0)
		return rc;
	*size = fa_load64(r + 8);
	*mtime_ns = (int64_t)fa_load64(r + 16);
	return 0;
}

const char *ix_doc_meta(const ix_doc_info *d, const char *key)
{
	size_t kl = strlen(key);
	const char *q = d->meta;
	for (uint32_t i = 0; q && i < d->n_meta; i++) {
		size_t l = strlen(q);
		if (l > kl && memcmp(q, key, kl) == 0 && q[kl] == '=')
			return q + kl + 1;
		q += l + 1;
	}
	return NULL;
}

int seg_chunk(const ix_segment *s, uint32_t chunk, ix_chunk_info *out)
{
	const unsigned char *r, *dr;
	int rc = seg_chunk_rec(s, chunk, &r);
	if (rc)
		return rc;
	uint32_t doc = fa_load32(r);
	if (doc >= s->ndocs)
		return corrupt(s, "chunk names a document out of range");
	if ((rc = seg_doc_rec(s, doc, &dr)) != 0)
		return rc;
	uint32_t first = fa_load32(dr + 56), n = fa_load32(dr + 60);
	out->doc = doc;
	out->line_start = fa_load32(r + 4);
	out->line_end = fa_load32(r + 8);
	out->byte_start = fa_load32(r + 12);
	out->byte_end = fa_load32(r + 16);
	if (chunk < first || chunk - first >= n || out->byte_start > out->byte_end ||
	    out->byte_end > fa_load32(dr + 48))
		return corrupt(s, "chunk disagrees with its document");
	out->order = chunk - first;
	uint64_t hoff = fa_load32(r + 20), hlen = fa_load32(r + 24);
	uint64_t sec = s->sec_len[IX_SEC_CHUNK_STRINGS];
	if (hoff > sec || hlen > sec - hoff)
		return corrupt(s, "chunk headings out of range");
	hoff += s->sec_off[IX_SEC_CHUNK_STRINGS];
	if (hlen && (rc = seg_check_range(s, hoff, hlen)) != 0)
		return rc;
	out->headings = (const char *)s->data + hoff;
	out->headings_len = (uint32_t)hlen;
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		out->field_len[f] = fa_load16(r + 28 + 2 * f);
	return 0;
}

int seg_chunk_field_len(const ix_segment *s, uint32_t chunk, uint16_t len[FATHOM_NFIELDS])
{
	const unsigned char *r;
	int rc = seg_chunk_rec(s, chunk, &r);
	if (rc)
		return rc;
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		len[f] = fa_load16(r + 28 + 2 * f);
	return 0;
}

int seg_field_lens(const ix_segment *s, const uint16_t (**out)[FATHOM_NFIELDS])
{
	uint16_t (**slot)[FATHOM_NFIELDS] = (uint16_t (**)[FATHOM_NFIELDS])(uintptr_t)&s->field_lens;
	uint16_t (*have)[FATHOM_NFIELDS] = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!have) {
		uint16_t (*mine)[FATHOM_NFIELDS] = fa_malloc(((size_t)s->nchunks + 1) * sizeof *mine);
		if (!mine)
			return fa_err(FATHOM_ENOMEM, "%s: field lengths of %u chunks", s->path, s->nchunks);
		for (uint32_t c = 0; c < s->nchunks; c++) {
			int rc = seg_chunk_field_len(s, c, mine[c]);
			if (rc) {
				fa_free(mine);
				return rc;
			}
		}
		if (__atomic_compare_exchange_n(slot, &have, mine, 0, __ATOMIC_ACQ_REL,
		                                __ATOMIC_ACQUIRE))
			have = mine;
		else
			fa_free(mine);   /* another reader's came first */
	}
	*out = (const uint16_t (*)[FATHOM_NFIELDS])have;
	return 0;
}

void **seg_query_cache(ix_segment *s)
{
	return &s->query_cache;
}

/* ---- the key index --------------------------------------------------------- */

/* The key of doc (points into the map), or NULL with the error set. */
static const char *doc_key(const ix_segment *s, uint32_t doc, int *rc)
{
	const unsigned char *r;
	const char *p;
	uint64_t n;
	if ((*rc = seg_doc_rec(s, doc, &r)) != 0 || (*rc = doc_strings(s, r, &p, &n)) != 0)
		return NULL;
	return p;
}

int seg_find_doc(const ix_segment *s, const char *key, uint32_t *doc)
{
	return seg_find_doc_live(s, key, s->del_docs, doc);
}

int seg_find_doc_live(const ix_segment *s, const char *key, const uint8_t *del_docs, uint32_t *doc)
{
	size_t kl = strlen(key);
	uint64_t h = ix_key_hash(key, kl), base = s->sec_off[IX_SEC_KEYS];
	uint64_t lo = 0, hi = s->ndocs;
	int rc;
	/* First entry with hash >= h. */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if ((rc = seg_check_range(s, base + mid * IX_KEY_REC, IX_KEY_REC)) != 0)
			return rc;
		if (fa_load64(s->data + base + mid * IX_KEY_REC) < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Among equal keys (a doc replaced before its segment was written),
	 * prefer a live one. */
	int found = 0;
	for (uint64_t i = lo; i < s->ndocs; i++) {
		if ((rc = seg_check_range(s, base + i * IX_KEY_REC, IX_KEY_REC)) != 0)
			return rc;
		const unsigned char *r = s->data + base + i * IX_KEY_REC;
		if (fa_load64(r) != h)
			break;
		uint32_t d = fa_load32(r + 8);
		const char *k = doc_key(s, d, &rc);
		if (!k)
			return rc;
		if (strcmp(k, key) != 0)
			continue;
		if (!found || !ix_bit_get(del_docs, d))
			*doc = d;
		found = 1;
	}
	return found ? 0 : FATHOM_ENOTFOUND;
}

/* ---- the term dictionary ---------------------------------------------------- */

/* Most dictionary varints are one byte: decode those inline. */
static inline int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	if (FA_LIKELY(*p < end && **p < 0x80)) {
		*v = *(*p)++;
		return 0;
	}
	return fa_varint_get(p, end, v);
}

static int dict_corrupt(const ix_segment *s, uint64_t block, const char *what)
{
	return fa_err(FATHOM_ECORRUPT, "%s: dictionary block %llu: %s", s->path,
	              (unsigned long long)block, what);
}

/* First term of dictionary block b (from the index). */
static int block_first_term(const ix_segment *s, uint64_t b, const unsigned char **t, size_t *len)
{
	uint64_t rec = s->sec_off[IX_SEC_DICT_INDEX] + b * IX_DIDX_REC;
	int rc = seg_check_range(s, rec, IX_DIDX_REC);
	if (rc)
		return rc;
	uint64_t strs = s->ndict_blocks * IX_DIDX_REC;
	uint64_t so = fa_load32(s->data + rec + 12);
	uint64_t sl = s->didx_strs_len;
	if (so >= sl)
		return dict_corrupt(s, b, "first term out of range");
	uint64_t at = s->sec_off[IX_SEC_DICT_INDEX] + strs + so;
	if ((rc = seg_check_range(s, at, 1)) != 0)
		return rc;
	size_t n = s->data[at];
	if (n == 0 || n > sl - so - 1)
		return dict_corrupt(s, b, "first term out of range");
	if ((rc = seg_check_range(s, at + 1, n)) != 0)
		return rc;
	*t = s->data + at + 1;
	*len = n;
	return 0;
}

int ix_term_iter_seek(ix_term_iter *it, const ix_segment *s, uint64_t block)
{
	it->s = s;
	it->block = block;
	it->len = 0;
	it->left = 0;
	it->p = it->end = NULL;
	if (block >= s->ndict_blocks)
		return 0;
	uint64_t rec = s->sec_off[IX_SEC_DICT_INDEX] + block * IX_DIDX_REC;
	int rc = seg_check_range(s, rec, IX_DIDX_REC);
	if (rc)
		return rc;
	uint64_t base = fa_load64(s->data + rec), lo = fa_load32(s->data + rec + 8), hi;
	if (block + 1 < s->ndict_blocks) {
		if ((rc = seg_check_range(s, rec + IX_DIDX_REC, IX_DIDX_REC)) != 0)
			return rc;
		hi = fa_load32(s->data + rec + IX_DIDX_REC + 8);
	} else {
		hi = s->sec_len[IX_SEC_DICT];
	}
	uint64_t td = s->sec_off[IX_SEC_TERMDATA];
	if (lo >= hi || hi > s->sec_len[IX_SEC_DICT] || base < td ||
	    base > td + s->sec_len[IX_SEC_TERMDATA])
		return dict_corrupt(s, block, "bad index record");
	uint64_t off = s->sec_off[IX_SEC_DICT] + lo;
	if ((rc = seg_check_range(s, off, hi - lo)) != 0)
		return rc;
	it->p = s->data + off;
	it->end = s->data + s->sec_off[IX_SEC_DICT] + hi;
	it->next_off = base;
	uint64_t dbt = s->dict_block_terms;
	it->left = FA_MIN(dbt, s->nterms - block * dbt);
	return 0;
}

int ix_term_iter_next(ix_term_iter *it)
{
	const ix_segment *s = it->s;
	if (it->left == 0) {
		if (!s || it->block + 1 >= s->ndict_blocks)
			return 0;
		int rc = ix_term_iter_seek(it, s, it->block + 1);
		if (rc)
			return rc;
	}
	const unsigned char *p = it->p, *end = it->end;
	uint64_t shared, suffix, dfm, df, post_len, pos_len;
	if (p >= end)
		return dict_corrupt(s, it->block, "truncated entry");
	shared = *p >> 4;
	suffix = *p++ & 15;
	/* A length of 15 or more continues in a varint (bounded below). */
	uint64_t more = 0;
	if (shared == 15 && (get_varint(&p, end, &more) || more > IX_MAX_TERM))
		return dict_corrupt(s, it->block, "truncated entry");
	shared += more;
	more = 0;
	if (suffix == 15 && (get_varint(&p, end, &more) || more > IX_MAX_TERM))
		return dict_corrupt(s, it->block, "truncated entry");
	suffix += more;
	if (shared > it->len || suffix == 0 || suffix > IX_MAX_TERM - shared ||
	    suffix > (uint64_t)(end - p))
		return dict_corrupt(s, it->block, "bad term length");
	/* Terms ascend strictly: the first new byte must exceed the old one. */
	if (shared < it->len && p[0] <= it->term[shared])
		return dict_corrupt(s, it->block, "terms out of order");
	/* Suffixes are short: a loop beats memcpy's setup here. */
	for (uint64_t i = 0; i < suffix; i++)
		it->term[shared + i] = p[i];
	it->len = shared + suffix;
	it->shared = shared;
	p += suffix;
	if (get_varint(&p, end, &dfm) || get_varint(&p, end, &post_len) ||
	    get_varint(&p, end, &pos_len))
		return dict_corrupt(s, it->block, "truncated entry");
	unsigned mask = (unsigned)(dfm & ((1u << FATHOM_NFIELDS) - 1));
	df = dfm >> FATHOM_NFIELDS;
	if (df == 0 || df >= IX_END || post_len == 0 || mask == 0)
		return dict_corrupt(s, it->block, "bad term entry");
	memset(&it->ti.bound, 0, sizeof it->ti.bound);
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		if (!(mask & (1u << f)))
			continue;
		uint64_t mt;
		uint32_t ml;
		if (get_varint(&p, end, &mt) || mt == 0 || mt > IX_MAX_TF || p >= end ||
		    (ml = ix_len_value(*p++)) == UINT32_MAX)
			return dict_corrupt(s, it->block, "bad term bound");
		it->ti.bound.max_tf[f] = (uint16_t)mt;
		it->ti.bound.min_len[f] = (uint16_t)ml;
	}
	uint64_t td_end = s->sec_off[IX_SEC_TERMDATA] + s->sec_len[IX_SEC_TERMDATA];
	uint64_t nb = (df - 1) / IX_BLOCK + 1;
	if (it->next_off > td_end || post_len > td_end - it->next_off ||
	    pos_len > td_end - it->next_off - post_len ||
	    (nb > 1 && post_len < nb * IX_DIR_REC))
		return dict_corrupt(s, it->block, "postings out of range");
	it->ti.df = (uint32_t)df;
	it->ti.n_blocks = (uint32_t)nb;
	it->ti.post_off = it->next_off;
	it->ti.post_len = post_len;
	it->ti.pos_off = it->next_off + post_len;
	it->ti.pos_len = pos_len;
	it->next_off = it->ti.pos_off + pos_len;
	it->p = p;
	it->left--;
	return 1;
}

static int term_cmp(const unsigned char *a, size_t al, const unsigned char *b, size_t bl)
{
	int c = memcmp(a, b, FA_MIN(al, bl));
	if (c)
		return c;
	return al < bl ? -1 : al > bl;
}

/* Last dictionary block whose first term is <= term, or -1. */
static int64_t find_dict_block(const ix_segment *s, const unsigned char *term, size_t len, int *rc)
{
	uint64_t lo = 0, hi = s->ndict_blocks;
	*rc = 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const unsigned char *t;
		size_t tl;
		if ((*rc = block_first_term(s, mid, &t, &tl)) != 0)
			return -1;
		if (term_cmp(t, tl, term, len) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo - 1;
}

/* Step over the next entry of the block, keeping only what the entries after
 * it need: the term bytes and the postings offset. Lighter than
 * ix_term_iter_next (bounds are skipped, not decoded) but as careful about
 * the buffer; the entry that is finally wanted is decoded in full. */
static int iter_skip(ix_term_iter *it)
{
	const unsigned char *p = it->p, *end = it->end;
	if (it->left == 0 || p >= end)
		return dict_corrupt(it->s, it->block, "truncated entry");
	uint64_t shared = *p >> 4, suffix = *p++ & 15, more = 0, dfm, post_len, pos_len;
	if (shared == 15 && (get_varint(&p, end, &more) || more > IX_MAX_TERM))
		return dict_corrupt(it->s, it->block, "truncated entry");
	shared += more;
	more = 0;
	if (suffix == 15 && (get_varint(&p, end, &more) || more > IX_MAX_TERM))
		return dict_corrupt(it->s, it->block, "truncated entry");
	suffix += more;
	if (shared > it->len || suffix == 0 || suffix > IX_MAX_TERM - shared ||
	    suffix > (uint64_t)(end - p))
		return dict_corrupt(it->s, it->block, "bad term length");
	memcpy(it->term + shared, p, suffix);
	it->len = shared + suffix;
	p += suffix;
	if (get_varint(&p, end, &dfm) || get_varint(&p, end, &post_len) ||
	    get_varint(&p, end, &pos_len))
		return dict_corrupt(it->s, it->block, "truncated entry");
	for (unsigned m = (unsigned)(dfm & ((1u << FATHOM_NFIELDS) - 1)); m; m &= m - 1) {
		uint64_t mt;
		if (get_varint(&p, end, &mt) || p >= end)
			return dict_corrupt(it->s, it->block, "bad term bound");
		p++;
	}
	uint64_t td_end = it->s->sec_off[IX_SEC_TERMDATA] + it->s->sec_len[IX_SEC_TERMDATA];
	if (it->next_off > td_end || post_len > td_end - it->next_off ||
	    pos_len > td_end - it->next_off - post_len)
		return dict_corrupt(it->s, it->block, "postings out of range");
	it->next_off += post_len + pos_len;
	it->p = p;
	it->left--;
	return 0;
}

/* Term number ord, if it is t: decode its block up to it and compare. */
static int term_at(const ix_segment *s, uint64_t ord, const unsigned char *t, size_t len,
                   ix_term_info *out)
{
	ix_term_iter it;
	uint64_t dbt = s->dict_block_terms;
	int rc = ix_term_iter_seek(&it, s, ord / dbt);
	if (rc)
		return rc;
	for (uint64_t k = ord % dbt; k; k--)
		if ((rc = iter_skip(&it)) != 0)
			return rc;
	if ((rc = ix_term_iter_next(&it)) < 0)
		return rc;
	if (rc == 0)
		return dict_corrupt(s, ord / dbt, "term hash names a missing term");
	if (it.len != len || memcmp(it.term, t, len) != 0)
		return FATHOM_ENOTFOUND;
	*out = it.ti;
	return 0;
}

/* The range of entries of bucket b of the term hash table. */
static int thash_bucket_range(const ix_segment *s, uint32_t b, uint32_t *lo, uint32_t *hi)
{
	uint64_t at = s->thash_off + 4 * (uint64_t)b;
	int rc = seg_check_range(s, at, 8);
	if (rc)
		return rc;
	*lo = fa_load32(s->data + at);
	*hi = fa_load32(s->data + at + 4);
	if (*lo > *hi || *hi > s->nterms)
		return corrupt(s, "bad term hash bucket");
	if (*hi > *lo) {
		uint64_t ents = s->thash_off + 4 * ((uint64_t)s->thash_buckets + 1);
		return seg_check_range(s, ents + 4 * (uint64_t)*lo, 4 * (uint64_t)(*hi - *lo));
	}
	return 0;
}

/* A lookup through the term hash table: one bucket of about four entries,
 * then one dictionary block decoded only as far as a candidate. */
static int thash_term(const ix_segment *s, const unsigned char *t, size_t len, ix_term_info *out)
{
	uint64_t h = ix_term_hash(t, len);
	uint32_t lo, hi;
	int rc = thash_bucket_range(s, ix_thash_bucket(h, s->thash_buckets), &lo, &hi);
	if (rc)
		return rc;
	const unsigned char *e = s->data + s->thash_off + 4 * ((uint64_t)s->thash_buckets + 1);
	for (uint32_t i = lo; i < hi; i++) {
		uint32_t v = fa_load32(e + 4 * (uint64_t)i);
		if (v >> 24 != (uint32_t)(h & 0xff))
			continue;
		if ((v & IX_THASH_MAX_TERMS) >= s->nterms)
			return corrupt(s, "term hash names a term out of range");
		rc = term_at(s, v & IX_THASH_MAX_TERMS, t, len, out);
		if (rc != FATHOM_ENOTFOUND)
			return rc;
	}
	return FATHOM_ENOTFOUND;
}

int seg_term(const ix_segment *s, const char *term, size_t len, ix_term_info *out)
{
	if (len == 0 || len > IX_MAX_TERM || s->ndict_blocks == 0)
		return FATHOM_ENOTFOUND;
	const unsigned char *t = (const unsigned char *)term;
	if (s->thash_buckets)
		return thash_term(s, t, len, out);
	int rc;
	int64_t b = find_dict_block(s, t, len, &rc);
	if (rc)
		return rc;
	if (b < 0)
		return FATHOM_ENOTFOUND;
	ix_term_iter it;
	if ((rc = ix_term_iter_seek(&it, s, (uint64_t)b)) != 0)
		return rc;
	/* match: how much of the query the current term shares. Terms ascend,
	 * so an entry keeping less of its predecessor than that has passed the
	 * query, and one keeping more is still below it: only entries keeping
	 * exactly `match` bytes need comparing. */
	size_t match = 0;
	while (it.left) {
		if ((rc = ix_term_iter_next(&it)) < 0)
			return rc;
		if (it.shared < match)
			break;
		if (it.shared > match)
			continue;
		while (match < it.len && match < len && it.term[match] == t[match])
			match++;
		if (match == len && match == it.len) {
			*out = it.ti;
			return 0;
		}
		/* Past the query: it is a prefix of the term, or the term's byte is larger. */
		if (match == len || (match < it.len && it.term[match] > t[match]))
			break;
	}
	return FATHOM_ENOTFOUND;
}

int seg_terms(const ix_segment *s, const char *prefix, size_t prefix_len,
              int (*cb)(void *ctx, const char *term, size_t len, const ix_term_info *ti),
              void *ctx)
{
	const unsigned char *pre = (const unsigned char *)prefix;
	if (!prefix)
		prefix_len = 0;
	if (prefix_len > IX_MAX_TERM)
		return 0;
	int rc;
	int64_t b = 0;
	if (prefix_len) {
		b = find_dict_block(s, pre, prefix_len, &rc);
		if (rc)
			return rc;
		if (b < 0)
			b = 0;
	}
	ix_term_iter it;
	if ((rc = ix_term_iter_seek(&it, s, (uint64_t)b)) != 0)
		return rc;
	while ((rc = ix_term_iter_next(&it)) == 1) {
		if (prefix_len) {
			int c = memcmp(it.term, pre, FA_MIN(it.len, prefix_len));
			if (c < 0 || (c == 0 && it.len < prefix_len))
				continue;
			if (c > 0)
				break;
		}
		if ((rc = cb(ctx, (const char *)it.term, it.len, &it.ti)) != 0)
			return rc;
	}
	return rc < 0 ? rc : 0;
}

/* ---- full structural check ---------------------------------------------- */

typedef struct verify_ctx {
	ix_segment *s;
	uint32_t *pos;
	uint64_t n_postings;
} verify_ctx;

static int verify_postings(verify_ctx *v, const ix_term_iter *it)
{
	ix_segment *s = v->s;
	ix_postings *p = fa_malloc(sizeof *p);
	if (!p)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	int rc = ix_post_open(p, s, &it->ti);
	uint64_t count = 0;
	uint32_t prev = 0;
	while (!rc && p->doc != IX_END) {
		if (count && p->doc <= prev) {
			rc = corrupt(s, "postings out of order");
			break;
		}
		prev = p->doc;
		const unsigned char *cr;
		if ((rc = seg_chunk_rec(s, p->doc, &cr)) != 0)
			break;
		uint16_t tf[FATHOM_NFIELDS];
		ix_post_tf(p, tf);
		const ix_bound *bb = ix_post_block_bound(p);
		unsigned any = 0;
		for (int f = 0; f < FATHOM_NFIELDS && !rc; f++) {
			if (!tf[f])
				continue;
			any = 1;
			uint16_t flen = fa_load16(cr + 28 + 2 * f);
			if (tf[f] > bb->max_tf[f] || flen < bb->min_len[f] || tf[f] > it->ti.bound.max_tf[f] ||
			    flen < it->ti.bound.min_len[f]) {
				rc = corrupt(s, "a posting exceeds its bound");
				break;
			}
			uint32_t n;
			if ((rc = ix_post_positions(p, f, v->pos, IX_MAX_TF, &n)) != 0)
				break;
			if (n != tf[f])
				rc = corrupt(s, "positions disagree with the term frequency");
		}
		if (!rc && !any)
			rc = corrupt(s, "an empty posting");
		count++;
		if (!rc)
			rc = ix_post_next(p);
	}
	if (!rc && count != it->ti.df)
		rc = corrupt(s, "document frequency disagrees with the postings");
	if (!rc && p->err)
		rc = p->err;
	v->n_postings += count;
	fa_free(p);
	return rc;
}

/* Term number ord must sit in its hash bucket. With every term found, and
 * as many entries as terms, the table holds each exactly once. */
static int verify_thash(const ix_segment *s, const ix_term_iter *it, uint64_t ord)
{
	uint64_t h = ix_term_hash(it->term, it->len);
	uint32_t lo, hi, want = (uint32_t)(h & 0xff) << 24 | (uint32_t)ord;
	int rc = thash_bucket_range(s, ix_thash_bucket(h, s->thash_buckets), &lo, &hi);
	if (rc)
		return rc;
	const unsigned char *e = s->data + s->thash_off + 4 * ((uint64_t)s->thash_buckets + 1);
	for (uint32_t i = lo; i < hi; i++)
		if (fa_load32(e + 4 * (uint64_t)i) == want)
			return 0;
	return dict_corrupt(s, it->block, "a term is missing from the term hash table");
}

static int verify_dict(verify_ctx *v)
{
	ix_segment *s = v->s;
	ix_term_iter it;
	unsigned char prev[IX_MAX_TERM];
	size_t prev_len = 0;
	uint64_t nterms = 0, post = 0, pos = 0, next = s->sec_off[IX_SEC_TERMDATA];
	int rc = 0;
	for (uint64_t b = 0; b < s->ndict_blocks && !rc; b++) {
		const unsigned char *ft;
		size_t fl;
		if ((rc = block_first_term(s, b, &ft, &fl)) != 0 ||
		    (rc = ix_term_iter_seek(&it, s, b)) != 0)
			break;
		if (it.next_off != next) {
			rc = dict_corrupt(s, b, "postings do not follow on");
			break;
		}
		int first = 1;
		while (it.left) {
			if ((rc = ix_term_iter_next(&it)) < 0)
				break;
			if (first && term_cmp(it.term, it.len, ft, fl) != 0) {
				rc = dict_corrupt(s, b, "index and block disagree on the first term");
				break;
			}
			if (nterms && term_cmp(it.term, it.len, prev, prev_len) <= 0) {
				rc = dict_corrupt(s, b, "terms out of order");
				break;
			}
			if (s->thash_buckets && (rc = verify_thash(s, &it, nterms)) != 0)
				break;
			first = 0;
			memcpy(prev, it.term, it.len);
			prev_len = it.len;
			nterms++;
			post += it.ti.post_len;
			pos += it.ti.pos_len;
			if ((rc = verify_postings(v, &it)) != 0)
				break;
		}
		if (!rc && it.p != it.end)
			rc = dict_corrupt(s, b, "trailing bytes");
		next = it.next_off;
	}
	if (rc)
		return rc;
	if (nterms != s->nterms || post != s->post_bytes || pos != s->pos_bytes ||
	    next != s->sec_off[IX_SEC_TERMDATA] + s->sec_len[IX_SEC_TERMDATA])
		return corrupt(s, "dictionary totals disagree with the footer");
	return 0;
}

static int verify_docs(ix_segment *s)
{
	uint64_t text = 0, chunks = 0;
	int rc;
	for (uint32_t d = 0; d < s->ndocs; d++) {
		ix_doc_info di;
		const unsigned char *r;
		if ((rc = seg_doc(s, d, &di)) != 0 || (rc = seg_doc_rec(s, d, &r)) != 0)
			return rc;
		if (fa_load64(r) != text || di.first_chunk != chunks)
			return corrupt(s, "documents do not follow on");
		text += di.text_len;
		chunks += di.n_chunks;
		if (seg_doc_is_deleted(s, d))
			for (uint32_t c = di.first_chunk; c < di.first_chunk + di.n_chunks; c++)
				if (!seg_is_deleted(s, c))
					return corrupt(s, "a deleted document has a live chunk");
	}
	if (text != s->raw_text || chunks != s->nchunks)
		return corrupt(s, "documents do not cover the text and chunks");
	for (uint32_t c = 0; c < s->nchunks; c++) {
		ix_chunk_info ci;
		if ((rc = seg_chunk(s, c, &ci)) != 0)
			return rc;
	}
	/* The key index: sorted, each doc once, hashes right. */
	uint8_t *seen = fa_calloc((size_t)s->ndocs / 8 + 1, 1);
	if (!seen)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	uint64_t base = s->sec_off[IX_SEC_KEYS], prev_h = 0;
	rc = 0;
	for (uint32_t i = 0; i < s->ndocs && !rc; i++) {
		const unsigned char *r = s->data + base + (uint64_t)i * IX_KEY_REC;
		uint64_t h = fa_load64(r);
		uint32_t d = fa_load32(r + 8);
		const char *k;
		if (d >= s->ndocs || ix_bit_get(seen, d) || (i && h < prev_h))
			rc = corrupt(s, "bad key index");
		else if (!(k = doc_key(s, d, &rc)))
			break;
		else if (ix_key_hash(k, strlen(k)) != h)
			rc = corrupt(s, "key index hash disagrees with the key");
		else
			ix_bit_set(seen, d);
		prev_h = h;
	}
	fa_free(seen);
	return rc;
}

int seg_verify(ix_segment *s)
{
	int rc = seg_check_all_pages(s);
	if (!rc)
		rc = seg_check_sections(s);
	if (rc)
		return rc;
	verify_ctx v = { s, fa_malloc(IX_MAX_TF * sizeof(uint32_t)), 0 };
	if (!v.pos)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	rc = verify_dict(&v);
	fa_free(v.pos);
	if (!rc)
		rc = verify_docs(s);
	if (!rc)
		rc = ix_ds_verify(s);
	if (!rc)
		rc = seg_tri_verify(s);
	return rc;
}

int seg_doc_has_trigrams(const ix_segment *s, uint32_t doc)
{
	const unsigned char *r;
	if (seg_doc_rec(s, doc, &r) != 0) {
		fa_err_clear();
		return 0;
	}
	return (r[71] & IX_DOC_TRIGRAMS) != 0;
}
