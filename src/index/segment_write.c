/*
 * segment_write.c — writes one immutable segment file. The full byte-level
 * specification is docs/FORMAT.md; this is its summary.
 *
 * All integers are little-endian; "varint" is LEB128. A segment file is
 *
 *   preamble   16 bytes: "FATHSEG\0", u32 version (7), u32 segment id
 * then the sections, each known by a 4-byte tag in the directory (this
 * writer's order; readers find them by tag):
 *   DOCSTORE   zstd frames of the documents' text, back to back
 *   TERMDATA   per term, in term order: its postings (a block directory of
 *              32-byte records when it has more than one block, then the
 *              blocks, see postings.c), then its positions (per block)
 *   DICT       the terms, in byte order, front-coded in blocks of 16:
 *                u8 min(shared,15) << 4 | min(suffix_len,15), the excess of
 *                each over 15 as a varint when it is 15 or more, suffix,
 *                varint df << 5 | bound_mask, varint post_len,
 *                varint pos_len, per field in bound_mask: varint max_tf,
 *                u8 min_len code (rounded down, see ix_len_code)
 *              A term's postings start where the previous term's positions
 *              end; its positions start after its postings.
 *   DICT_INDEX one 16-byte record per block (u64 file offset of the block's
 *              first postings, u32 offset in DICT, u32 offset of its first
 *              term in the strings after the records), then the first terms
 *              as u8 length + bytes, then the term hash table: u32 bucket
 *              starts (B+1), u32 per term fingerprint << 24 | term number,
 *              grouped by bucket (B in the footer; lookups cost one bucket
 *              and a partial block decode instead of a binary search)
 *   FRAMES     24 bytes per frame: u64 raw start, u64 offset in DOCSTORE,
 *              u32 compressed length, u32 raw length (the footer's frame
 *              size, the last frame shorter)
 *   DOCS       72 bytes per document (text offset in the raw document
 *              stream, size, mtime, content hash, strings offset, path
 *              offset, text length, strings length, first chunk, chunk
 *              count, tag and meta counts, path length, kind, flags:
 *              1 = the path is the key, 2 = the title is the path)
 *   DOC_STRINGS per document: key, title, url, lang, tags, meta, each
 *              NUL-terminated; paths stored once and shared by
 *              consecutive documents with the same path
 *   CHUNKS     38 bytes per chunk: doc, lines, bytes, headings offset and
 *              length, five u16 field lengths
 *   CHUNK_STRINGS heading trails
 *   KEYS       12 bytes per document: u64 FNV-1a of the key, u32 doc;
 *              sorted by hash, then key
 *   TRI_INDEX  16 bytes per trigram: u32 trigram, u32 count, u64 list offset
 *   DOCSTORE_DICT the zstd dictionary the frames were compressed with, as
 *              zdict makes it (magic, id, entropy tables, content); left out
 *              of the directory (optional) when the frames use none
 *              (docstore.c says when)
 *   extra sections added with ix_segw_add_section, in the order added
 * and after data_end:
 *   page CRCs  u32 CRC32C of each 1 KiB page of [0, data_end)
 *   directory  32 bytes per section: tag, flags (bit 0: required), u64
 *              offset, u64 length, u32 CRC32C of its bytes, u32 reserved
 *   footer     160 bytes: "FATHFTR\0", version, sizes, statistics, the
 *              term hash buckets, the frame size, the directory's entry
 *              count and CRC, the CRC of the page CRC table, its own CRC
 * The directory and footer are encoded in secdir.c, and only there.
 *
 * The file is written front to back in one pass: the document store first
 * (merges stream it), then each term's postings as it is finished, then the
 * tables that were collected in memory. The dictionary is known before the
 * first frame is compressed, but goes last, with the tables (where format 6
 * had it). Page CRCs and each section's CRC are computed as the bytes go
 * out. The file is fsynced before anything names it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "index/index_int.h"
#include "util/pool.h"
#include "vec/vec.h"

#define OUT_BUF (1u << 20)

typedef struct key_ent {
	uint64_t hash;
	uint64_t str_off;
	uint32_t len, doc;
} key_ent;

enum segw_state { SW_DOCS, SW_TERMS, SW_DONE };

struct ix_segw {
	uint32_t id;
	enum segw_state state;
	int err;                       /* sticky */
	/* Tables, collected in memory. */
	fbuf docs, doc_strs, chunks, chunk_strs;
	key_ent *keys;
	size_t nkeys, keys_cap;
	ix_ds_writer ds;
	uint64_t field_len_sum[FATHOM_NFIELDS];
	uint64_t last_head_off;
	uint32_t last_head_len;
	int have_last_head;
	uint64_t last_path_off;        /* the previous document's path */
	uint32_t last_path_len;
	int have_last_path;
	/* The trigram index: (trigram << 32 | doc) pairs collected from the
	 * documents, or lists streamed by a merge; the index records. */
	int tri_collect;
	uint64_t *tri_pairs;
	size_t ntri_pairs, tri_pairs_cap;
	uint8_t *tri_seen;             /* 2^24 bits of scratch */
	int tri_started;
	uint32_t tri_next;             /* lists come in ascending order */
	fbuf tri_idx;
	/* The file. */
	char *path;
	int fd;
	fbuf out;
	uint64_t off;                  /* file offset of the next byte */
	uint32_t page_crc, page_fill;
	fbuf page_crcs;
	uint64_t sec_off[IX_NSEC], sec_len[IX_NSEC];
	uint32_t sec_crc[IX_NSEC];
	uint32_t run_crc;              /* CRC32C of the section being written */
	ix_vecw vec;                   /* the chunks' embeddings (VECS) */
	ix_graph_opts gopts;           /* their graph's (HNSW) */
	vx_hnsw *graph;                /* made by a merge (NULL: built at finish) */
	/* Extra sections (ix_segw_add_section): entries and their bytes. */
	ix_secent *extra;
	unsigned char **extra_data;
	size_t nextra;
	/* The dictionary. */
	fbuf dict, didx, didx_strs;
	fbuf thash;                    /* u64 ix_term_hash per term, in term order */
	uint64_t nterms, ndict_blocks, post_bytes, pos_bytes;
	unsigned char prev_term[IX_MAX_TERM];
	size_t prev_len;
	uint32_t in_block;
	/* The term being written. */
	unsigned char term[IX_MAX_TERM];
	size_t term_len;
	int in_term;
	ix_term_enc enc;
};

static int sw_fail(ix_segw *w, int rc)
{
	if (!w->err)
		w->err = rc;
	return w->err;
}

uint64_t ix_key_hash(const char *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)key[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void bound_reset(ix_bound *b)
{
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		b->max_tf[f] = 0;
		b->min_len[f] = UINT16_MAX;
	}
}

/* Absent fields get min_len 0, so equal bounds encode equally. */
static void bound_close(ix_bound *b)
{
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		if (b->max_tf[f] == 0)
			b->min_len[f] = 0;
}

int ix_segw_new(ix_segw **out, uint32_t id)
{
	*out = NULL;
	ix_segw *w = fa_calloc(1, sizeof *w);
	if (!w)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	w->id = id;
	w->fd = -1;
	fbuf *bufs[] = { &w->docs, &w->doc_strs, &w->chunks, &w->chunk_strs, &w->out,
	                 &w->page_crcs, &w->dict, &w->didx, &w->didx_strs, &w->thash, &w->tri_idx };
	for (size_t i = 0; i < FA_ARRAY_LEN(bufs); i++)
		fbuf_init(bufs[i], 0);
	ix_vecw_init(&w->vec);
	w->tri_collect = 1;
	/* Chunk headings are addressed by u32 offsets. */
	w->chunk_strs.max = UINT32_MAX;
	int rc = ix_ds_init(&w->ds);
	if (rc) {
		fa_free(w);
		return rc;
	}
	ix_term_enc_init(&w->enc);
	*out = w;
	return 0;
}

void ix_segw_free(ix_segw *w)
{
	if (!w)
		return;
	if (w->fd >= 0) {
		close(w->fd);
		if (w->state != SW_DONE && w->path)
			unlink(w->path);
	}
	fbuf *bufs[] = { &w->docs, &w->doc_strs, &w->chunks, &w->chunk_strs, &w->out,
	                 &w->page_crcs, &w->dict, &w->didx, &w->didx_strs, &w->thash, &w->tri_idx };
	for (size_t i = 0; i < FA_ARRAY_LEN(bufs); i++)
		fbuf_free(bufs[i]);
	fa_free(w->tri_pairs);
	fa_free(w->tri_seen);
	ix_vecw_free(&w->vec);
	vx_hnsw_free(w->graph);
	for (size_t i = 0; i < w->nextra; i++)
		fa_free(w->extra_data[i]);
	fa_free(w->extra);
	fa_free(w->extra_data);
	ix_ds_free(&w->ds);
	fa_free(w->keys);
	ix_term_enc_free(&w->enc);
	fa_free(w->path);
	fa_free(w);
}

void ix_segw_set_id(ix_segw *w, uint32_t id)
{
	w->id = id;
}

uint32_t ix_segw_ndocs(const ix_segw *w)
{
	return (uint32_t)(w->docs.len / IX_DOC_REC);
}

uint32_t ix_segw_nchunks(const ix_segw *w)
{
	return (uint32_t)(w->chunks.len / IX_CHUNK_REC);
}

size_t ix_segw_mem(const ix_segw *w)
{
	return w->docs.cap + w->doc_strs.cap + w->chunks.cap + w->chunk_strs.cap +
	       w->tri_pairs_cap * sizeof *w->tri_pairs + w->tri_idx.cap +
	       w->thash.cap + w->keys_cap * sizeof(key_ent) + w->ds.comp.cap + w->ds.frames_cap * sizeof(ix_ds_frame) +
	       w->ds.raw_cap + ix_vecw_mem(&w->vec);
}

int ix_segw_vectors_fit(const ix_segw *w, uint32_t dim, uint64_t fp)
{
	return !w->vec.dim || (w->vec.dim == dim && w->vec.fp == fp);
}

int ix_segw_chunk_vector(ix_segw *w, uint32_t chunk, const float *vec, uint32_t dim, uint64_t fp)
{
	if (w->err)
		return w->err;
	if (chunk >= ix_segw_nchunks(w))
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: a vector of a chunk not added"));
	int rc = ix_vecw_set(&w->vec, dim, fp);
	if (!rc)
		rc = ix_vecw_put(&w->vec, chunk, vec);
	return rc ? sw_fail(w, rc) : 0;
}



void ix_segw_doc_state(const ix_segw *w, uint32_t doc, ix_doc_state *out)
{
	const unsigned char *r = w->docs.data + (size_t)doc * IX_DOC_REC;
	out->size = fa_load64(r + 8);
	out->mtime_ns = (int64_t)fa_load64(r + 16);
	out->content_hash = fa_load64(r + 24);
	out->grep_only = (r[71] & IX_DOC_GREP_ONLY) != 0;
}

/* ---- documents ------------------------------------------------------------- */

int ix_segw_train_text(ix_segw *w, const unsigned char *samples, const size_t *sizes, size_t n,
                       uint64_t raw_estimate)
{
	if (w->err)
		return w->err;
	int rc = ix_ds_train(&w->ds, samples, sizes, n, raw_estimate);
	return rc ? sw_fail(w, rc) : 0;
}

static int drain_docstore(ix_segw *w);

int ix_segw_copy_text(ix_segw *w, const ix_segment *s, uint64_t *base)
{
	if (w->err)
		return w->err;
	if (w->state != SW_DOCS || w->fd < 0)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: copying text needs an open file"));
	*base = w->ds.raw_total;
	uint64_t next = 0, nframes = s->sec_len[IX_SEC_FRAMES] / IX_FRAME_REC;
	do {
		int rc = ix_ds_copy_frames(&w->ds, s, &next, OUT_BUF);
		if (rc || (rc = drain_docstore(w)) != 0)
			return sw_fail(w, rc);
	} while (next < nframes);
	return 0;
}

/* ---- the trigram index ---------------------------------------------------- */

static int start_terms(ix_segw *w);
static int out_write(ix_segw *w, const void *data, size_t n);
static void sec_begin(ix_segw *w, int sec);
static void sec_end(ix_segw *w, int sec);

void ix_segw_collect_trigrams(ix_segw *w, int on)
{
	w->tri_collect = on;
}

typedef struct tri_ctx {
	ix_segw *w;
	uint64_t doc;
} tri_ctx;

static int add_pair(void *ctx, uint32_t tri)
{
	tri_ctx *t = ctx;
	ix_segw *w = t->w;
	if (w->ntri_pairs == w->tri_pairs_cap &&
	    fa_grow((void **)&w->tri_pairs, &w->tri_pairs_cap, w->ntri_pairs + 1, sizeof *w->tri_pairs))
		return fa_err(FATHOM_ENOMEM, "out of memory (trigrams)");
	w->tri_pairs[w->ntri_pairs++] = (uint64_t)tri << 32 | t->doc;
	return 0;
}

static int collect_trigrams(ix_segw *w, const char *text, size_t len)
{
	if (!w->tri_seen && !(w->tri_seen = fa_calloc(1, (size_t)1 << 21)))
		return fa_err(FATHOM_ENOMEM, "out of memory (trigram scratch)");
	tri_ctx t = { w, ix_segw_ndocs(w) - 1 };
	return ix_trigrams((const unsigned char *)text, len, w->tri_seen, add_pair, &t);
}

/* Close TERMDATA and open TRI_POST (once). */
static int start_trigrams(ix_segw *w)
{
	if (w->tri_started)
		return 0;
	if (w->state == SW_DOCS && start_terms(w))
		return w->err;
	if (w->in_term)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: unfinished term"));
	sec_end(w, IX_SEC_TERMDATA);
	sec_begin(w, IX_SEC_TRI_POST);
	w->tri_started = 1;
	return 0;
}

int ix_segw_tri_list(ix_segw *w, uint32_t tri, const uint32_t *docs, size_t n)
{
	if (w->err)
		return w->err;
	if (start_trigrams(w))
		return w->err;
	if (tri >= (1u << 24) || tri < w->tri_next || n == 0 || n > ix_segw_ndocs(w))
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: trigram list out of order"));
	unsigned char rec[IX_TRI_REC];
	fa_store32(rec, tri);
	fa_store32(rec + 4, (uint32_t)n);
	fa_store64(rec + 8, w->off - w->sec_off[IX_SEC_TRI_POST]);
	fbuf_append(&w->tri_idx, rec, sizeof rec);
	unsigned char buf[10];
	for (size_t i = 0; i < n; i++) {
		if (docs[i] >= ix_segw_ndocs(w) || (i && docs[i] <= docs[i - 1]))
			return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: trigram list not ascending"));
		uint64_t gap = i ? (uint64_t)docs[i] - docs[i - 1] - 1 : docs[i];
		out_write(w, buf, fa_varint_put(buf, gap));
	}
	w->tri_next = tri + 1;
	return w->tri_idx.err ? sw_fail(w, w->tri_idx.err) : w->err;
}

/* Sort the (trigram << 32 | doc) pairs by trigram, keeping the order of
 * equal trigrams: two stable counting passes over its 24 bits, 12 at a
 * time (LSD radix). Pairs arrive in document order, so each trigram's
 * documents come out ascending. O(n), where qsort took most of a grep-only
 * build. */
static int sort_pairs(uint64_t *v, size_t n)
{
	uint64_t *tmp = fa_malloc((n ? n : 1) * sizeof *tmp);
	size_t *count = fa_malloc(4097 * sizeof *count);
	if (!tmp || !count) {
		fa_free(tmp);
		fa_free(count);
		return fa_err(FATHOM_ENOMEM, "out of memory (trigrams)");
	}
	uint64_t *src = v, *dst = tmp;
	for (int pass = 0; pass < 2; pass++) {
		unsigned shift = 32 + 12 * (unsigned)pass;
		memset(count, 0, 4097 * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[((src[i] >> shift) & 0xfff) + 1]++;
		for (size_t b = 1; b <= 4096; b++)
			count[b] += count[b - 1];
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xfff]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	/* two passes: the result is back in v */
	fa_free(tmp);
	fa_free(count);
	return 0;
}

/* The collected pairs as lists. */
static int write_collected_trigrams(ix_segw *w)
{
	if (!w->ntri_pairs)
		return 0;
	int rc = sort_pairs(w->tri_pairs, w->ntri_pairs);
	if (rc)
		return sw_fail(w, rc);
	uint32_t *docs = fa_malloc((size_t)(ix_segw_ndocs(w) + 1) * sizeof *docs);
	if (!docs)
		return sw_fail(w, fa_err(FATHOM_ENOMEM, "out of memory (trigrams)"));
	size_t i = 0;
	while (i < w->ntri_pairs && !w->err) {
		uint32_t tri = (uint32_t)(w->tri_pairs[i] >> 32);
		size_t n = 0;
		for (; i < w->ntri_pairs && (uint32_t)(w->tri_pairs[i] >> 32) == tri; i++)
			docs[n++] = (uint32_t)w->tri_pairs[i];
		ix_segw_tri_list(w, tri, docs, n);
	}
	fa_free(docs);
	fa_free(w->tri_pairs);
	w->tri_pairs = NULL;
	w->ntri_pairs = w->tri_pairs_cap = 0;
	return w->err;
}

int ix_segw_add_doc(ix_segw *w, const ix_doc_rec *d, const char *strs, size_t strs_len,
                    const char *text, size_t text_len, const char *tri, size_t tri_len)
{
	if (w->err)
		return w->err;
	if (w->state != SW_DOCS)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: document after terms"));
	size_t want = 5 + (size_t)d->n_tags + d->n_meta, nul = 0;
	for (size_t i = 0; i < strs_len; i++)
		nul += strs[i] == '\0';
	if (strs_len == 0 || strs[strs_len - 1] != '\0' || nul != want || d->n_tags > UINT16_MAX ||
	    d->n_meta > UINT16_MAX || strs_len > UINT32_MAX)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: bad document strings"));
	if (ix_segw_ndocs(w) >= UINT32_MAX - 1)
		return sw_fail(w, fa_err(FATHOM_ETOOBIG, "segment writer: too many documents"));

	if (text_len > UINT32_MAX)
		return sw_fail(w, fa_err(FATHOM_ETOOBIG, "segment writer: document text over 4 GiB"));

	/* key, path, title, url, lang, tags..., meta... as given. */
	const char *key = strs, *path = key + strlen(key) + 1, *title = path + strlen(path) + 1;
	const char *rest = title + strlen(title) + 1;
	size_t klen = strlen(key), plen = strlen(path);
	if (plen > UINT16_MAX)
		return sw_fail(w, fa_err(FATHOM_ETOOBIG, "segment writer: path over 65535 bytes"));
	unsigned flags = 0;
	uint64_t soff = w->doc_strs.len, poff;
	/* The path is stored once: files are keyed by it (flag 1), and the
	 * documents of one source (a JSONL export's chunks) follow each other,
	 * so a path equal to the previous document's points at that copy. */
	if (plen == klen && memcmp(key, path, klen) == 0) {
		flags |= IX_DOC_PATH_IS_KEY;
		poff = soff;
	} else if (plen == 0) {
		poff = soff + klen;   /* the key's NUL: an empty string */
	} else if (w->have_last_path && w->last_path_len == plen &&
	           memcmp(w->doc_strs.data + w->last_path_off, path, plen) == 0) {
		poff = w->last_path_off;
	} else {
		poff = soff;
		fbuf_append(&w->doc_strs, path, plen + 1);
		soff = w->doc_strs.len;
	}
	/* A title that repeats the path is stored empty (flag 2). */
	size_t tlen = strlen(title);
	int title_is_path = plen && tlen == plen && memcmp(title, path, plen) == 0;
	if (title_is_path)
		flags |= IX_DOC_TITLE_IS_PATH;
	if (d->trigrams)
		flags |= IX_DOC_TRIGRAMS;
	if (d->grep_only) {
		if (text_len)
			return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: text of a grep-only document"));
		flags |= IX_DOC_GREP_ONLY;
	}
	size_t rest_len = strs_len - (size_t)(rest - strs);
	size_t slen = klen + 1 + (title_is_path ? 0 : tlen) + 1 + rest_len;
	if (flags & IX_DOC_PATH_IS_KEY)
		poff = soff;

	/* Its text: appended to the document store, or already there among
	 * frames copied from another segment. */
	uint64_t text_off = w->ds.raw_total;
	if (w->ds.copying) {
		if (text || d->text_off > w->ds.raw_total || text_len > w->ds.raw_total - d->text_off)
			return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: text outside the copied frames"));
		text_off = d->text_off;
	}
	unsigned char r[IX_DOC_REC] = { 0 };
	fa_store64(r + 0, text_off);
	fa_store64(r + 8, d->size);
	fa_store64(r + 16, (uint64_t)d->mtime_ns);
	fa_store64(r + 24, d->content_hash);
	fa_store64(r + 32, soff);
	fa_store64(r + 40, poff);
	fa_store32(r + 48, (uint32_t)text_len);
	fa_store32(r + 52, (uint32_t)slen);
	fa_store32(r + 56, ix_segw_nchunks(w));
	fa_store32(r + 60, 0);
	fa_store16(r + 64, (uint16_t)d->n_tags);
	fa_store16(r + 66, (uint16_t)d->n_meta);
	fa_store16(r + 68, (uint16_t)plen);
	r[70] = d->kind;
	r[71] = (unsigned char)flags;

	int rc = fa_grow((void **)&w->keys, &w->keys_cap, w->nkeys + 1, sizeof *w->keys);
	if (rc)
		return sw_fail(w, rc);
	w->keys[w->nkeys++] = (key_ent){ ix_key_hash(key, klen), soff, (uint32_t)klen,
	                                  ix_segw_ndocs(w) };
	fbuf_append(&w->docs, r, sizeof r);
	fbuf_append(&w->doc_strs, key, klen + 1);
	fbuf_append(&w->doc_strs, title_is_path ? "" : title, (title_is_path ? 0 : tlen) + 1);
	fbuf_append(&w->doc_strs, rest, rest_len);
	if ((rc = w->docs.err ? w->docs.err : w->doc_strs.err) != 0)
		return sw_fail(w, rc);
	if (plen) {
		w->have_last_path = 1;
		w->last_path_off = poff;
		w->last_path_len = (uint32_t)plen;
	}
	if (!w->ds.copying && (rc = ix_ds_append(&w->ds, text, text_len)) != 0)
		return sw_fail(w, rc);
	if (!tri) {
		tri = text;
		tri_len = text_len;
	}
	if (!tri && tri_len && d->trigrams && w->tri_collect)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: no text to take trigrams from"));
	if (d->trigrams && w->tri_collect && tri_len >= 3 && (rc = collect_trigrams(w, tri, tri_len)))
		return sw_fail(w, rc);
	w->have_last_head = 0;
	if (w->fd >= 0 && w->ds.comp.len >= OUT_BUF)
		return drain_docstore(w);
	return 0;
}

int ix_segw_add_chunk(ix_segw *w, uint32_t line_start, uint32_t line_end,
                      uint32_t byte_start, uint32_t byte_end,
                      const char *headings, uint32_t headings_len,
                      const uint32_t field_len[FATHOM_NFIELDS])
{
	if (w->err)
		return w->err;
	uint32_t ndocs = ix_segw_ndocs(w);
	if (w->state != SW_DOCS || ndocs == 0)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: chunk without a document"));
	unsigned char *dr = w->docs.data + (size_t)(ndocs - 1) * IX_DOC_REC;
	if (byte_start > byte_end || byte_end > fa_load32(dr + 48))
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: chunk outside its document"));
	if (ix_segw_nchunks(w) >= UINT32_MAX - 1)
		return sw_fail(w, fa_err(FATHOM_ETOOBIG, "segment writer: too many chunks"));
	/* Chunks of a section share their trail: store it once. */
	uint64_t hoff = w->chunk_strs.len;
	if (w->have_last_head && w->last_head_len == headings_len &&
	    (headings_len == 0 ||
	     memcmp(w->chunk_strs.data + w->last_head_off, headings, headings_len) == 0)) {
		hoff = w->last_head_off;
	} else if (headings_len) {
		fbuf_append(&w->chunk_strs, headings, headings_len);
	}
	w->last_head_off = hoff;
	w->last_head_len = headings_len;
	w->have_last_head = 1;

	unsigned char r[IX_CHUNK_REC];
	fa_store32(r + 0, ndocs - 1);
	fa_store32(r + 4, line_start);
	fa_store32(r + 8, line_end);
	fa_store32(r + 12, byte_start);
	fa_store32(r + 16, byte_end);
	fa_store32(r + 20, (uint32_t)hoff);
	fa_store32(r + 24, headings_len);
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		uint32_t l = field_len[f] > UINT16_MAX ? UINT16_MAX : field_len[f];
		r[28 + 2 * f] = (unsigned char)l;
		r[29 + 2 * f] = (unsigned char)(l >> 8);
		w->field_len_sum[f] += field_len[f];
	}
	fbuf_append(&w->chunks, r, sizeof r);
	fa_store32(dr + 60, fa_load32(dr + 60) + 1);
	int rc = w->chunks.err ? w->chunks.err : w->chunk_strs.err;
	return rc ? sw_fail(w, rc) : 0;
}

/* ---- the output file ------------------------------------------------------- */

static int out_flush(ix_segw *w)
{
	const unsigned char *p = w->out.data;
	size_t n = w->out.len;
	while (n) {
		ssize_t k = write(w->fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return sw_fail(w, fa_err(FATHOM_EIO, "%s: write: %s", w->path, strerror(errno)));
		}
		p += k;
		n -= (size_t)k;
	}
	fbuf_reset(&w->out);
	return 0;
}

/* Append bytes to the file; crc: whether they are page-checked. */
static int out_raw(ix_segw *w, const void *data, size_t n, int crc)
{
	if (w->err)
		return w->err;
	const unsigned char *p = data;
	if (crc) {
		w->run_crc = fa_crc32c(w->run_crc, p, n);
		const unsigned char *q = p;
		size_t left = n;
		while (left) {
			size_t k = FA_MIN(left, (size_t)(IX_PAGE - w->page_fill));
			w->page_crc = fa_crc32c(w->page_crc, q, k);
			w->page_fill += (uint32_t)k;
			q += k;
			left -= k;
			if (w->page_fill == IX_PAGE) {
				fbuf_put_u32(&w->page_crcs, w->page_crc);
				w->page_crc = 0;
				w->page_fill = 0;
			}
		}
		if (w->page_crcs.err)
			return sw_fail(w, w->page_crcs.err);
	}
	w->off += n;
	while (n) {
		size_t k = FA_MIN(n, (size_t)OUT_BUF - w->out.len);
		int rc = fbuf_append(&w->out, p, k);
		if (rc)
			return sw_fail(w, rc);
		p += k;
		n -= k;
		if (w->out.len >= OUT_BUF && out_flush(w))
			return w->err;
	}
	return 0;
}

static int out_write(ix_segw *w, const void *data, size_t n)
{
	return out_raw(w, data, n, 1);
}

/* A section starts at the next byte; its checksum runs until sec_end. */
static void sec_begin(ix_segw *w, int sec)
{
	w->sec_off[sec] = w->off;
	w->run_crc = 0;
}

static void sec_end(ix_segw *w, int sec)
{
	w->sec_len[sec] = w->off - w->sec_off[sec];
	w->sec_crc[sec] = w->run_crc;
}

static int drain_docstore(ix_segw *w)
{
	int rc = out_write(w, w->ds.comp.data, w->ds.comp.len);
	if (rc)
		return rc;
	w->ds.comp_base += w->ds.comp.len;
	fbuf_reset(&w->ds.comp);
	return 0;
}

int ix_segw_open_file(ix_segw *w, const char *path)
{
	if (w->err)
		return w->err;
	if (w->fd >= 0)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: file already open"));
	w->path = fa_strdup(path);
	if (!w->path)
		return sw_fail(w, fa_err(FATHOM_ENOMEM, "out of memory"));
	w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (w->fd < 0)
		return sw_fail(w, fa_err(errno == EEXIST ? FATHOM_EEXISTS : FATHOM_EIO, "%s: %s",
		                         path, strerror(errno)));
	unsigned char pre[IX_PREAMBLE_SIZE];
	memcpy(pre, IX_SEG_MAGIC, 8);
	fa_store32(pre + 8, IX_FORMAT_VERSION);
	fa_store32(pre + 12, w->id);
	if (out_write(w, pre, sizeof pre))
		return w->err;
	sec_begin(w, IX_SEC_DOCSTORE);
	return drain_docstore(w);
}

/* Close the document store and open the term data. */
static int start_terms(ix_segw *w)
{
	if (w->fd < 0)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: no file"));
	int rc = ix_ds_finish(&w->ds);
	if (rc)
		return sw_fail(w, rc);
	if (drain_docstore(w))
		return w->err;
	sec_end(w, IX_SEC_DOCSTORE);
	sec_begin(w, IX_SEC_TERMDATA);
	w->state = SW_TERMS;
	return 0;
}

/* ---- terms ---------------------------------------------------------------- */

/* ---- one term's postings (ix_term_enc) -------------------------------------------- */

void ix_term_enc_init(ix_term_enc *e)
{
	memset(e, 0, sizeof *e);
	fbuf_init(&e->tdir, 0);
	fbuf_init(&e->tblocks, 0);
	fbuf_init(&e->tpos, 0);
	e->blk.prev_doc = UINT32_MAX;
	e->last_doc = UINT32_MAX;
}

void ix_term_enc_free(ix_term_enc *e)
{
	fbuf_free(&e->tdir);
	fbuf_free(&e->tblocks);
	fbuf_free(&e->tpos);
	fa_free(e->bpos);
	e->bpos = NULL;
	e->bpos_cap = 0;
}

void ix_term_enc_begin(ix_term_enc *e, const unsigned char *chunks, uint32_t nchunks)
{
	e->chunks = chunks;
	e->nchunks = nchunks;
	e->df = 0;
	e->last_doc = UINT32_MAX;
	e->blk.n = 0;
	e->blk.prev_doc = UINT32_MAX;
	e->nbpos = 0;
	e->dir_len = 0;
	bound_reset(&e->bbound);
	bound_reset(&e->tbound);
	fbuf_reset(&e->tdir);
	fbuf_reset(&e->tblocks);
	fbuf_reset(&e->tpos);
}

static int flush_block(ix_term_enc *e)
{
	uint64_t boff = e->tblocks.len, poff = e->tpos.len;
	if (boff > UINT32_MAX || poff > UINT32_MAX)
		return fa_err(FATHOM_ETOOBIG, "segment writer: term postings over 4 GiB");
	int rc = ix_block_encode(&e->tblocks, &e->blk);
	if (!rc)
		rc = ix_pos_encode(&e->tpos, e->bpos, e->nbpos);
	if (rc)
		return rc;
	bound_close(&e->bbound);
	unsigned char r[IX_DIR_REC];
	fa_store32(r + 0, e->blk.docs[e->blk.n - 1]);
	fa_store32(r + 4, (uint32_t)boff);
	fa_store32(r + 8, (uint32_t)poff);
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		r[12 + 2 * f] = (unsigned char)e->bbound.max_tf[f];
		r[13 + 2 * f] = (unsigned char)(e->bbound.max_tf[f] >> 8);
		r[22 + 2 * f] = (unsigned char)e->bbound.min_len[f];
		r[23 + 2 * f] = (unsigned char)(e->bbound.min_len[f] >> 8);
	}
	if ((rc = fbuf_append(&e->tdir, r, sizeof r)) != 0)
		return rc;
	e->blk.prev_doc = e->blk.docs[e->blk.n - 1];
	e->blk.n = 0;
	e->nbpos = 0;
	bound_reset(&e->bbound);
	return 0;
}

int ix_term_enc_posting(ix_term_enc *e, uint32_t chunk, const uint16_t tf[FATHOM_NFIELDS],
                        const uint32_t *const pos[FATHOM_NFIELDS])
{
	if (chunk >= e->nchunks || (e->last_doc != UINT32_MAX && chunk <= e->last_doc))
		return fa_err(FATHOM_EINVAL, "segment writer: posting %u out of order", chunk);
	size_t ntf = 0;
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		ntf += tf[f];
	if (ntf == 0)
		return fa_err(FATHOM_EINVAL, "segment writer: empty posting");
	size_t need;
	if (fa_add(e->nbpos, ntf, &need))
		return fa_err(FATHOM_ENOMEM, "too many positions");
	int rc = fa_grow((void **)&e->bpos, &e->bpos_cap, need, sizeof *e->bpos);
	if (rc)
		return rc;
	const unsigned char *cr = e->chunks + (size_t)chunk * IX_CHUNK_REC;
	uint32_t i = e->blk.n;
	e->blk.docs[i] = chunk;
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		e->blk.tf[f][i] = tf[f];
		if (!tf[f])
			continue;
		uint16_t flen = fa_load16(cr + 28 + 2 * f);
		if (tf[f] > e->bbound.max_tf[f])
			e->bbound.max_tf[f] = tf[f];
		if (flen < e->bbound.min_len[f])
			e->bbound.min_len[f] = flen;
		if (tf[f] > e->tbound.max_tf[f])
			e->tbound.max_tf[f] = tf[f];
		if (flen < e->tbound.min_len[f])
			e->tbound.min_len[f] = flen;
		uint32_t prev = 0;
		for (uint32_t k = 0; k < tf[f]; k++) {
			if (pos[f][k] < prev)
				return fa_err(FATHOM_EINVAL, "segment writer: positions out of order");
			e->bpos[e->nbpos++] = pos[f][k] - prev;
			prev = pos[f][k];
		}
	}
	e->blk.n++;
	e->df++;
	e->last_doc = chunk;
	if (e->blk.n == IX_BLOCK)
		return flush_block(e);
	return 0;
}

int ix_term_enc_end(ix_term_enc *e)
{
	if (e->df == 0)
		return 0;
	int rc;
	if (e->blk.n && (rc = flush_block(e)) != 0)
		return rc;
	bound_close(&e->tbound);
	uint64_t nblocks = e->tdir.len / IX_DIR_REC;
	e->dir_len = nblocks > 1 ? e->tdir.len : 0;
	if (nblocks > 1) {
		/* Block offsets were relative to the first block; the directory
		 * comes first. */
		for (uint64_t b = 0; b < nblocks; b++) {
			unsigned char *r = e->tdir.data + b * IX_DIR_REC;
			uint64_t v = fa_load32(r + 4) + e->dir_len;
			if (v > UINT32_MAX)
				return fa_err(FATHOM_ETOOBIG, "segment writer: term postings over 4 GiB");
			fa_store32(r + 4, (uint32_t)v);
		}
	}
	return 0;
}

void ix_term_enc_bytes(const ix_term_enc *e, ix_term_bytes *out)
{
	out->df = e->df;
	out->bound = e->tbound;
	out->dir = e->tdir.data;
	out->dir_len = (size_t)e->dir_len;
	out->blocks = e->tblocks.data;
	out->blocks_len = e->tblocks.len;
	out->pos = e->tpos.data;
	out->pos_len = e->tpos.len;
}

int ix_term_enc_save(const ix_term_enc *e, fbuf *out, ix_term_saved *s)
{
	ix_term_bytes b;
	ix_term_enc_bytes(e, &b);
	s->df = b.df;
	s->bound = b.bound;
	s->at = out->len;
	s->dir_len = b.dir_len;
	s->blocks_len = b.blocks_len;
	s->pos_len = b.pos_len;
	fbuf_append(out, b.dir, b.dir_len);
	fbuf_append(out, b.blocks, b.blocks_len);
	fbuf_append(out, b.pos, b.pos_len);
	return out->err;
}

/* ---- terms ------------------------------------------------------------------------ */

int ix_segw_start_terms(ix_segw *w)
{
	if (w->err)
		return w->err;
	if (w->state == SW_DOCS && start_terms(w))
		return w->err;
	if (w->state != SW_TERMS || w->in_term)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: term out of place"));
	return 0;
}

static int check_term(ix_segw *w, const char *term, size_t len)
{
	if (ix_segw_start_terms(w))
		return w->err;
	if (len == 0 || len > IX_MAX_TERM)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: term of %zu bytes", len));
	if (w->nterms) {
		size_t m = FA_MIN(len, w->prev_len);
		int c = memcmp(term, w->prev_term, m);
		if (c < 0 || (c == 0 && len <= w->prev_len))
			return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: terms out of order"));
	}
	return 0;
}

const unsigned char *ix_segw_chunk_recs(const ix_segw *w)
{
	return w->chunks.data;
}

int ix_segw_term_begin(ix_segw *w, const char *term, size_t len)
{
	if (check_term(w, term, len))
		return w->err;
	memcpy(w->term, term, len);
	w->term_len = len;
	w->in_term = 1;
	ix_term_enc_begin(&w->enc, w->chunks.data, ix_segw_nchunks(w));
	return 0;
}

int ix_segw_posting(ix_segw *w, uint32_t chunk, const uint16_t tf[FATHOM_NFIELDS],
                    const uint32_t *const pos[FATHOM_NFIELDS])
{
	if (w->err)
		return w->err;
	if (!w->in_term)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: posting outside a term"));
	int rc = ix_term_enc_posting(&w->enc, chunk, tf, pos);
	return rc ? sw_fail(w, rc) : 0;
}

static void put_varint(fbuf *b, uint64_t v)
{
	fbuf_put_varint(b, v);
}

static int put_term(ix_segw *w, const ix_term_bytes *e);

int ix_segw_term_end(ix_segw *w)
{
	if (w->err)
		return w->err;
	if (!w->in_term)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: no term to end"));
	w->in_term = 0;
	int rc = ix_term_enc_end(&w->enc);
	if (rc)
		return sw_fail(w, rc);
	ix_term_bytes b;
	ix_term_enc_bytes(&w->enc, &b);
	return put_term(w, &b);
}

int ix_segw_term_put(ix_segw *w, const char *term, size_t len, const ix_term_bytes *b)
{
	if (check_term(w, term, len))
		return w->err;
	memcpy(w->term, term, len);
	w->term_len = len;
	return put_term(w, b);
}

int ix_segw_term_put_saved(ix_segw *w, const char *term, size_t len, const fbuf *out,
                           const ix_term_saved *s)
{
	ix_term_bytes b = { .df = 0 };
	if (s->df) {
		const unsigned char *o = out->data + s->at;
		b = (ix_term_bytes){ s->df, s->bound, o, o + s->dir_len, o + s->dir_len + s->blocks_len,
		                     s->dir_len, s->blocks_len, s->pos_len };
	}
	return ix_segw_term_put(w, term, len, &b);
}

/* The ended term e, named by w->term: its postings to the file, its entry
 * to the dictionary. A term left with no postings goes. */
static int put_term(ix_segw *w, const ix_term_bytes *e)
{
	if (e->df == 0)
		return 0;   /* every posting was deleted: the term goes */
	uint64_t post_off = w->off, dir_len = e->dir_len;
	if (dir_len)
		out_write(w, e->dir, e->dir_len);
	out_write(w, e->blocks, e->blocks_len);
	out_write(w, e->pos, e->pos_len);
	if (w->err)
		return w->err;
	uint64_t post_len = dir_len + e->blocks_len, pos_len = e->pos_len;
	w->post_bytes += post_len;
	w->pos_bytes += pos_len;

	size_t shared = 0;
	if (w->in_block == 0) {
		unsigned char r[IX_DIDX_REC];
		if (w->dict.len > UINT32_MAX || w->didx_strs.len > UINT32_MAX)
			return sw_fail(w, fa_err(FATHOM_ETOOBIG, "segment writer: dictionary over 4 GiB"));
		fa_store64(r, post_off);
		fa_store32(r + 8, (uint32_t)w->dict.len);
		fa_store32(r + 12, (uint32_t)w->didx_strs.len);
		fbuf_append(&w->didx, r, sizeof r);
		fbuf_putc(&w->didx_strs, (int)w->term_len);
		fbuf_append(&w->didx_strs, w->term, w->term_len);
		w->ndict_blocks++;
	} else {
		size_t m = FA_MIN(w->term_len, w->prev_len);
		while (shared < m && w->term[shared] == w->prev_term[shared])
			shared++;
	}
	fbuf *d = &w->dict;
	size_t suffix = w->term_len - shared;
	fbuf_putc(d, (int)(FA_MIN(shared, 15u) << 4 | FA_MIN(suffix, 15u)));
	if (shared >= 15)
		put_varint(d, shared - 15);
	if (suffix >= 15)
		put_varint(d, suffix - 15);
	fbuf_append(d, w->term + shared, suffix);
	unsigned mask = 0;
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		mask |= (e->bound.max_tf[f] ? 1u : 0u) << f;
	put_varint(d, (uint64_t)e->df << FATHOM_NFIELDS | mask);
	put_varint(d, post_len);
	put_varint(d, pos_len);
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		if (!(mask & (1u << f)))
			continue;
		put_varint(d, e->bound.max_tf[f]);
		fbuf_putc(d, (int)ix_len_code(e->bound.min_len[f]));
	}
	int rc = d->err ? d->err : w->didx.err ? w->didx.err : w->didx_strs.err;
	if (rc)
		return sw_fail(w, rc);
	fbuf_put_u64(&w->thash, ix_term_hash(w->term, w->term_len));
	if (w->thash.err)
		return sw_fail(w, w->thash.err);
	memcpy(w->prev_term, w->term, w->term_len);
	w->prev_len = w->term_len;
	w->nterms++;
	if (++w->in_block == IX_DICT_BLOCK_TERMS)
		w->in_block = 0;
	return 0;
}

/* ---- finishing ---------------------------------------------------------------- */

static int key_cmp(const void *a, const void *b, void *ctx)
{
	const key_ent *x = a, *y = b;
	const unsigned char *sort_base = ctx;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	size_t m = FA_MIN(x->len, y->len);
	int c = memcmp(sort_base + x->str_off, sort_base + y->str_off, m);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->doc < y->doc ? -1 : x->doc > y->doc;
}

/* The term hash table (the tail of DICT_INDEX): bucket starts, then the
 * terms' entries grouped by bucket (a counting sort, so ordinals ascend
 * within a bucket). */
static int write_term_hash(ix_segw *w, uint32_t nb)
{
	uint32_t *start = fa_calloc((size_t)nb + 1, sizeof *start);
	uint32_t *ent = fa_malloc((size_t)w->nterms * sizeof *ent);
	if (!start || !ent) {
		fa_free(start);
		fa_free(ent);
		return sw_fail(w, fa_err(FATHOM_ENOMEM, "out of memory"));
	}
	const unsigned char *hs = w->thash.data;
	for (uint64_t i = 0; i < w->nterms; i++)
		start[ix_thash_bucket(fa_load64(hs + 8 * i), nb) + 1]++;
	for (uint32_t b = 0; b < nb; b++)
		start[b + 1] += start[b];
	for (uint64_t i = 0; i < w->nterms; i++) {
		uint64_t h = fa_load64(hs + 8 * i);
		ent[start[ix_thash_bucket(h, nb)]++] = (uint32_t)(h & 0xff) << 24 | (uint32_t)i;
	}
	/* The placing loop moved each start to its bucket's end: shift back. */
	for (uint32_t b = nb; b > 0; b--)
		start[b] = start[b - 1];
	start[0] = 0;
	/* Little-endian in place, then out in one piece each. */
	for (uint32_t b = 0; b <= nb; b++)
		fa_store32((unsigned char *)&start[b], start[b]);
	for (uint64_t i = 0; i < w->nterms; i++)
		fa_store32((unsigned char *)&ent[i], ent[i]);
	out_write(w, start, ((size_t)nb + 1) * 4);
	out_write(w, ent, (size_t)w->nterms * 4);
	fa_free(start);
	fa_free(ent);
	return w->err;
}

static int write_section(ix_segw *w, int sec, const void *data, size_t len)
{
	sec_begin(w, sec);
	out_write(w, data, len);
	sec_end(w, sec);
	return w->err;
}

/* Zero bytes up to the next multiple of 64 of the file offset (between
 * sections: the page CRCs cover them, no section does). */
static int align64(ix_segw *w)
{
	static const unsigned char zeros[64];
	size_t pad = (size_t)((64 - w->off % 64) % 64);
	return pad ? out_write(w, zeros, pad) : 0;
}

/* The VECS section, when any chunk has a vector. */
static int write_vectors(ix_segw *w)
{
	if (!w->vec.dim)
		return 0;
	fbuf b;
	fbuf_init(&b, 0);
	w->vec.elem = w->gopts.storage;
	int rc = ix_vecw_encode(&w->vec, ix_segw_nchunks(w), &b);
	if (!rc && !(rc = align64(w)))
		rc = write_section(w, IX_SEC_VECTORS, b.data, b.len);
	fbuf_free(&b);
	return rc ? sw_fail(w, rc) : 0;
}

void ix_segw_set_graph_opts(ix_segw *w, const ix_graph_opts *o)
{
	w->gopts = *o;
}

void ix_segw_set_graph(ix_segw *w, vx_hnsw *g)
{
	vx_hnsw_free(w->graph);
	w->graph = g;
}

uint32_t ix_segw_vectors_present(const ix_segw *w)
{
	return w->vec.present;
}

/* The graph a merge made: its rows must be the segment's, row for row. */
static int graph_fits(const ix_segw *w, const vx_hnsw *g, uint32_t nchunks)
{
	const float *gv = vx_hnsw_vectors(g);
	size_t row = (size_t)w->vec.dim * sizeof(float);
	if (vx_hnsw_count(g) != nchunks || !gv || w->vec.rows.len != (size_t)nchunks * row ||
	    (nchunks && memcmp(gv, w->vec.rows.data, (size_t)nchunks * row) != 0))
		return fa_err(FATHOM_EINVAL, "segment writer: the HNSW graph given is not over the "
		                             "segment's vectors");
	return 0;
}

/* The HNSW section (after VECS, 64-byte aligned), when the segment has a
 * graph given or enough vectors for one. */
static int write_graph(ix_segw *w)
{
	vx_hnsw *g = w->graph;
	w->graph = NULL;
	uint32_t nchunks = ix_segw_nchunks(w);
	int rc = 0;
	if (g) {
		rc = graph_fits(w, g, nchunks);
	} else {
		if (!w->vec.dim || w->vec.present < ix_graph_min(&w->gopts))
			return 0;
		vx_params p;
		ix_graph_params(&w->gopts, w->vec.present, &p);
		const float *rows = (const float *)(const void *)w->vec.rows.data;
		/* built on every core: the same graph whatever their count */
		rc = vx_hnsw_new(&g, w->vec.dim, &p);
		if (!rc)
			rc = vx_hnsw_add_rows(g, rows, nchunks, fa_cpu_count(VX_BUILD_MAX_THREADS));
	}
	unsigned char *b = NULL;
	size_t len = 0;
	if (!rc)
		rc = vx_hnsw_write(g, &b, &len);
	vx_hnsw_free(g);
	if (!rc && !(rc = align64(w)))
		rc = write_section(w, IX_SEC_GRAPH, b, len);
	fa_free(b);
	return rc ? sw_fail(w, rc) : 0;
}

/* The dictionaries of copied frames: one as TDIC, several as TDCS (u32
 * count, count x (u32 offset in the section, u32 length), then each
 * dictionary at an offset that is a multiple of 8). */
static int write_copied_dicts(ix_segw *w)
{
	const ix_ds_writer *ds = &w->ds;
	const unsigned char *all = ds->copied_dicts.data;
	if (ds->ncopied_dicts == 1)
		return write_section(w, IX_SEC_DOCSTORE_DICT, all + ds->copied_off[0], ds->copied_len[0]);
	unsigned char head[4 + 8 * IX_DS_MAX_DICTS];
	uint32_t n = ds->ncopied_dicts, at[IX_DS_MAX_DICTS], end = 4 + 8 * n;
	fa_store32(head, n);
	for (uint32_t k = 0; k < n; k++) {
		at[k] = (end + 7) & ~7u;   /* each dictionary 8-aligned */
		end = at[k] + (uint32_t)ds->copied_len[k];
		fa_store32(head + 4 + 8 * k, at[k]);
		fa_store32(head + 8 + 8 * k, (uint32_t)ds->copied_len[k]);
	}
	static const unsigned char zeros[8];
	sec_begin(w, IX_SEC_DOCSTORE_DICTS);
	out_write(w, head, 4 + 8 * (size_t)n);
	for (uint32_t k = 0, pos = 4 + 8 * n; k < n; k++) {
		out_write(w, zeros, at[k] - pos);
		out_write(w, all + ds->copied_off[k], ds->copied_len[k]);
		pos = at[k] + (uint32_t)ds->copied_len[k];
	}
	sec_end(w, IX_SEC_DOCSTORE_DICTS);
	return w->err;
}

/* ---- extra sections -------------------------------------------------------- */

static struct {
	uint32_t tag, flags;
} test_section;

void ix_segw_set_test_section(uint32_t tag, uint32_t flags)
{
	test_section.tag = tag;
	test_section.flags = flags;
}

int ix_segw_add_section(ix_segw *w, uint32_t tag, uint32_t flags, const void *data, size_t len)
{
	if (w->err)
		return w->err;
	int known = ix_section_of_tag(tag) >= 0;
	for (size_t i = 0; i < w->nextra && !known; i++)
		known = w->extra[i].tag == tag;
	if (known || tag == 0 || w->nextra + IX_NSEC >= IX_SECDIR_MAX)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: section tag in use"));
	size_t cap = w->nextra;
	ix_secent *e = fa_realloc(w->extra, (cap + 1) * sizeof *e);
	if (e)
		w->extra = e;
	unsigned char **dv = e ? fa_realloc(w->extra_data, (cap + 1) * sizeof *dv) : NULL;
	if (dv)
		w->extra_data = dv;
	unsigned char *copy = dv ? fa_malloc(len ? len : 1) : NULL;
	if (!copy)
		return sw_fail(w, fa_err(FATHOM_ENOMEM, "out of memory"));
	if (len)
		memcpy(copy, data, len);
	w->extra[w->nextra] = (ix_secent){ tag, flags, 0, len, 0, 1 };
	w->extra_data[w->nextra++] = copy;
	return 0;
}

/* Write the extra sections, then the directory of every section: the known
 * ones in file order (an empty dictionary section is left out: optional),
 * then the extras. */
static int write_directory(ix_segw *w, fbuf *dir, uint32_t *ndir)
{
	if (test_section.tag) {
		static const char test_bytes[] = "a section this build does not know";
		if (ix_segw_add_section(w, test_section.tag, test_section.flags, test_bytes,
		                        sizeof test_bytes))
			return w->err;
	}
	for (size_t i = 0; i < w->nextra; i++) {
		w->extra[i].off = w->off;
		w->run_crc = 0;
		if (out_write(w, w->extra_data[i], (size_t)w->extra[i].len))
			return w->err;
		w->extra[i].crc = w->run_crc;
	}
	*ndir = 0;
	for (int i = 0; i < IX_NSEC; i++) {
		const ix_secinfo *k = &ix_known_sections[i];
		if ((!(k->flags & IX_SECF_REQUIRED) || (k->flags & IX_SECF_WHEN_USED)) &&
		    w->sec_len[i] == 0)
			continue;
		ix_secent e = { k->tag, k->flags & IX_SECF_REQUIRED, w->sec_off[i], w->sec_len[i],
		                w->sec_crc[i], 1 };
		unsigned char r[IX_SECDIR_REC];
		ix_secdir_encode(r, &e, 1);
		fbuf_append(dir, r, sizeof r);
		++*ndir;
	}
	for (size_t i = 0; i < w->nextra; i++) {
		unsigned char r[IX_SECDIR_REC];
		ix_secdir_encode(r, &w->extra[i], 1);
		fbuf_append(dir, r, sizeof r);
		++*ndir;
	}
	return dir->err ? sw_fail(w, dir->err) : 0;
}

int ix_segw_finish(ix_segw *w, uint64_t *file_len)
{
	if (w->err)
		return w->err;
	if (w->in_term)
		return sw_fail(w, fa_err(FATHOM_EINVAL, "segment writer: unfinished term"));
	if (start_trigrams(w) || write_collected_trigrams(w))
		return w->err;
	sec_end(w, IX_SEC_TRI_POST);
	write_section(w, IX_SEC_DICT, w->dict.data, w->dict.len);
	sec_begin(w, IX_SEC_DICT_INDEX);
	out_write(w, w->didx.data, w->didx.len);
	out_write(w, w->didx_strs.data, w->didx_strs.len);
	uint32_t nb = ix_thash_buckets(w->nterms);
	if (nb && write_term_hash(w, nb))
		return w->err;
	sec_end(w, IX_SEC_DICT_INDEX);

	sec_begin(w, IX_SEC_FRAMES);
	for (size_t i = 0; i < w->ds.nframes; i++) {
		unsigned char r[IX_FRAME_REC];
		const ix_ds_frame *f = &w->ds.frames[i];
		fa_store64(r, f->raw_start);
		fa_store64(r + 8, f->comp_off);
		fa_store32(r + 16, f->comp_len);
		fa_store32(r + 20, f->raw_len);
		out_write(w, r, sizeof r);
	}
	sec_end(w, IX_SEC_FRAMES);
	write_section(w, IX_SEC_DOCS, w->docs.data, w->docs.len);
	write_section(w, IX_SEC_DOC_STRINGS, w->doc_strs.data, w->doc_strs.len);
	write_section(w, IX_SEC_CHUNKS, w->chunks.data, w->chunks.len);
	write_section(w, IX_SEC_CHUNK_STRINGS, w->chunk_strs.data, w->chunk_strs.len);

	if (w->nkeys)
		qsort_r(w->keys, w->nkeys, sizeof *w->keys, key_cmp, w->doc_strs.data);
	sec_begin(w, IX_SEC_KEYS);
	for (size_t i = 0; i < w->nkeys; i++) {
		unsigned char r[IX_KEY_REC];
		fa_store64(r, w->keys[i].hash);
		fa_store32(r + 8, w->keys[i].doc);
		out_write(w, r, sizeof r);
	}
	sec_end(w, IX_SEC_KEYS);
	write_section(w, IX_SEC_TRI_INDEX, w->tri_idx.data, w->tri_idx.len);
	if (w->ds.copying && write_copied_dicts(w))
		return w->err;
	else if (!w->ds.copying)
		write_section(w, IX_SEC_DOCSTORE_DICT, w->ds.dict, w->ds.dict_len);
	if (write_vectors(w) || (w->vec.dim && write_graph(w)))
		return w->err;
	fbuf dir;
	fbuf_init(&dir, 0);
	uint32_t ndir = 0;
	if (w->err || write_directory(w, &dir, &ndir)) {
		fbuf_free(&dir);
		return w->err;
	}

	uint64_t data_end = w->off;
	if (w->page_fill) {
		fbuf_put_u32(&w->page_crcs, w->page_crc);
		w->page_fill = 0;
	}
	if (w->page_crcs.err) {
		fbuf_free(&dir);
		return sw_fail(w, w->page_crcs.err);
	}
	ix_footer ft = { .seg_id = w->id, .nchunks = ix_segw_nchunks(w), .ndocs = ix_segw_ndocs(w),
	                 .nterms = w->nterms, .ndict_blocks = w->ndict_blocks,
	                 .dict_block_terms = IX_DICT_BLOCK_TERMS,
	                 .page_table_crc = fa_crc32c(0, w->page_crcs.data, w->page_crcs.len),
	                 .raw_text = w->ds.raw_total, .post_bytes = w->post_bytes,
	                 .pos_bytes = w->pos_bytes, .data_end = data_end, .thash_buckets = nb,
	                 .frame_raw = w->ds.frame_raw, .ndir = ndir,
	                 .dir_crc = fa_crc32c(0, dir.data, dir.len) };
	memcpy(ft.field_len_sum, w->field_len_sum, sizeof ft.field_len_sum);
	out_raw(w, w->page_crcs.data, w->page_crcs.len, 0);
	out_raw(w, dir.data, dir.len, 0);
	fbuf_free(&dir);
	unsigned char f[IX_FOOTER_SIZE];
	ix_footer_encode(f, &ft);
	out_raw(w, f, sizeof f, 0);
	if (w->err || out_flush(w))
		return w->err;
	if (fsync(w->fd) != 0)
		return sw_fail(w, fa_err(FATHOM_EIO, "%s: fsync: %s", w->path, strerror(errno)));
	int fd = w->fd;
	w->fd = -1;
	if (close(fd) != 0) {
		unlink(w->path);
		return sw_fail(w, fa_err(FATHOM_EIO, "%s: close: %s", w->path, strerror(errno)));
	}
	w->state = SW_DONE;
	if (file_len)
		*file_len = w->off;
	return 0;
}
