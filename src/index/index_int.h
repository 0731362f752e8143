/*
 * index_int.h — what the files of src/index/ share with each other and with
 * the index tests, one section per file ("interface to code in X.c", after
 * SQLite FTS5's fts5Int.h): the format constants; secdir.c (a segment's
 * section directory and footer); segment_read.c, postings.c,
 * segment_write.c, docstore.c (segments); manifest.c (MANIFEST, tombstones,
 * payload files); then the index handle and index.c, index_open.c,
 * commit.c, verify.c, payload.c, writer.c, merge.c, term_pool.c (the
 * pool a flush and a merge encode postings on). Nothing outside
 * src/index/ (and its tests and fuzz target) should include it. The format
 * itself is specified in docs/FORMAT.md.
 */
#ifndef FATHOM_INDEX_INT_H
#define FATHOM_INDEX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "index/index.h"

/* ---- format constants ------------------------------------------------------ */

#define IX_FORMAT_VERSION 7u
#define IX_FORMAT_VERSION_MIN 5u    /* oldest version read (5 and 6: a fixed section table) */
#define IX_PAGE 1024u               /* integrity page of a segment file */
#define IX_PAGE_SHIFT 10
#define IX_SEG_MAGIC "FATHSEG"      /* 8 bytes with the NUL */
#define IX_FTR_MAGIC "FATHFTR"
#define IX_MAN_MAGIC "FATHMAN"
#define IX_DEL_MAGIC "FATHDEL"
#define IX_PREAMBLE_SIZE 16u
#define IX_FOOTER_SIZE 160u         /* format 7's; ix_footer_size() for older ones */
#define IX_DICT_BLOCK_TERMS 16u     /* terms per front-coded dictionary block */
#define IX_MAX_TERM 255u            /* longest term the format holds */
#define IX_FRAME_RAW 65536u         /* largest document store frame, raw bytes */
#define IX_FRAME_RAW_DICT 8192u     /* frames of a segment with a text dictionary */
#define IX_FRAME_RAW_MIN 4096u      /* smallest frame size a footer may name */
#define IX_DS_DICT_MAX (1u << 20)   /* largest text dictionary read (writers make <= 128 KiB) */
#define IX_DS_MAX_DICTS 16u         /* most text dictionaries in one segment (TDCS) */
#define IX_DOC_REC 72u              /* doc table record */
#define IX_CHUNK_REC 38u            /* chunk table record */
#define IX_KEY_REC 12u              /* key index record */
#define IX_FRAME_REC 24u            /* frame table record */
#define IX_DIDX_REC 16u             /* dictionary index record */
#define IX_DIR_REC 32u              /* postings block directory record */
#define IX_TRI_REC 16u              /* trigram index record */
#define IX_MAX_TF 65535u
#define IX_DOC_PATH_IS_KEY 1u       /* doc flag: the path is the key (shares its bytes) */
#define IX_DOC_TITLE_IS_PATH 2u     /* doc flag: title stored empty, equals the path */
#define IX_DOC_TRIGRAMS 4u          /* doc flag: a file, in the trigram index */
#define IX_DOC_GREP_ONLY 8u         /* doc flag: indexed for grep alone (no text, no chunks) */
#define IX_ROOT_MAX 4096u           /* the manifest's root folder, bytes with its NUL */

/* ---- interface to code in secdir.c: the segment's tail ------------------- */

/* A section tag: four ASCII bytes, stored as they read ("DOCS"). Tags are
 * only ever added, never reused or renumbered. */
#define IX_TAG(a, b, c, d) \
	((uint32_t)(unsigned char)(a) | (uint32_t)(unsigned char)(b) << 8 | \
	 (uint32_t)(unsigned char)(c) << 16 | (uint32_t)(unsigned char)(d) << 24)
#define IX_SECF_REQUIRED 1u         /* a reader that does not know the tag must refuse */
/* In ix_known_sections only, never on disk: the section is written (with
 * its flags) only when it is not empty, and absent means empty. */
#define IX_SECF_WHEN_USED 0x100u
#define IX_SECDIR_REC 32u           /* directory entry */
#define IX_SECDIR_MAX 4096u         /* most directory entries a reader accepts */
#define IX_LEGACY_NSEC 13           /* entries of format 6's fixed section table (5: 12) */

/* The sections this build reads, as indexes into ix_segment.sec_off/len:
 * an in-memory numbering (append new ones), not a file layout. Format 7
 * finds sections by tag (ix_known_sections), in any order. */
enum ix_section {
	IX_SEC_DOCSTORE = 0,   /* TEXT: zstd frames of the document text */
	IX_SEC_TERMDATA,       /* POST: per term: postings (directory + blocks), then positions */
	IX_SEC_TRI_POST,       /* TRIP: per trigram: its documents (varint gaps) */
	IX_SEC_DICT,           /* DICT: front-coded term blocks */
	IX_SEC_DICT_INDEX,     /* DIDX: one record per term block + first terms + hash table */
	IX_SEC_FRAMES,         /* FRAM: document store frame table */
	IX_SEC_DOCS,           /* DOCS: doc table */
	IX_SEC_DOC_STRINGS,    /* DSTR: key, path, title, url, lang, tags, meta per doc */
	IX_SEC_CHUNKS,         /* CHNK: chunk table */
	IX_SEC_CHUNK_STRINGS,  /* CSTR: heading trails */
	IX_SEC_KEYS,           /* KEYS: key index: (FNV-1a 64 of key, doc), sorted */
	IX_SEC_TRI_INDEX,      /* TRII: trigram index: (trigram, count, list offset), sorted */
	IX_SEC_DOCSTORE_DICT,  /* TDIC: zstd dictionary of the document store; optional */
	IX_SEC_DOCSTORE_DICTS, /* TDCS: several, when a merge copied frames; required when used */
	IX_SEC_VECTORS,        /* VECS: one embedding per chunk (vectors.c); required when used */
	IX_SEC_GRAPH,          /* HNSW: the vectors' graph; optional (rebuilt from VECS) */
	IX_NSEC
};

typedef struct ix_secinfo {
	uint32_t tag;
	uint32_t flags;        /* IX_SECF_REQUIRED: as this writer marks it */
} ix_secinfo;
extern const ix_secinfo ix_known_sections[IX_NSEC];
/* The enum ix_section of a tag; -1 when this build does not know it. */
int ix_section_of_tag(uint32_t tag);
/* The tag as text for messages (non-printable bytes as '?'). */
void ix_tag_name(uint32_t tag, char out[5]);

/* One directory entry. */
typedef struct ix_secent {
	uint32_t tag, flags;
	uint64_t off, len;     /* file offset and length, inside [16, data_end) */
	uint32_t crc;          /* CRC32C of the section's bytes */
	int has_crc;           /* 0 for formats 5 and 6 (their table had none) */
} ix_secent;

/* The one pair that writes and reads directory entries (n entries of
 * IX_SECDIR_REC bytes). Decoding cannot fail; the reader checks. */
void ix_secdir_encode(unsigned char *out, const ix_secent *e, uint32_t n);
void ix_secdir_decode(const unsigned char *in, uint32_t n, ix_secent *e);

/* The footer, as written (format 7) or read (5, 6, 7). */
typedef struct ix_footer {
	uint32_t version;        /* the preamble's */
	uint32_t size;           /* the footer's size for that version */
	int magic_ok, crc_ok;
	uint32_t footer_version, stored_size, page_size;
	uint32_t seg_id, nchunks, ndocs;
	uint64_t nterms, ndict_blocks;
	uint32_t dict_block_terms, page_table_crc;
	uint64_t raw_text, post_bytes, pos_bytes, data_end;
	uint64_t field_len_sum[FATHOM_NFIELDS];
	uint32_t thash_buckets, frame_raw;
	uint32_t ndir, dir_crc;  /* format 7: the directory; 5, 6: legacy entries */
	uint32_t crc;
} ix_footer;

/* Footer bytes of a format version (0: not one this build reads). */
uint32_t ix_footer_size(uint32_t version);
void ix_footer_encode(unsigned char out[IX_FOOTER_SIZE], const ix_footer *f);
/* Read the footer of a segment image (no check beyond the version and the
 * length: f->magic_ok and f->crc_ok say the rest). For formats 5 and 6 the
 * fixed section table goes to legacy[0 .. f->ndir), IX_LEGACY_NSEC at most.
 * 0, FATHOM_EVERSION or FATHOM_ECORRUPT, without a message. */
int ix_footer_decode(const unsigned char *d, uint64_t len, ix_footer *f, ix_secent *legacy);
/* File offset of the format 7 directory (after the page CRCs); 0 when the
 * footer's sizes do not add up to len. */
uint64_t ix_secdir_offset(const ix_footer *f, uint64_t len);

/* A field length as one byte, rounded down (exact below 64, then 5
 * significant bits): what the dictionary stores as a term's min_len. A
 * smaller min_len is still a valid lower bound, so scoring bounds hold. */
static inline unsigned ix_len_code(uint32_t len)
{
	if (len < 64)
		return len;
	if (len > 0xffff)
		len = 0xffff;
	unsigned k = 31u - (unsigned)__builtin_clz(len);
	return 64 + (k - 6) * 16 + ((len >> (k - 4)) - 16);
}
/* The length a code stands for; UINT32_MAX for a code no writer makes. */
static inline uint32_t ix_len_value(unsigned code)
{
	if (code < 64)
		return code;
	if (code > 223)
		return UINT32_MAX;
	unsigned k = (code - 64) / 16 + 6;
	return ((code - 64) % 16 + 16) << (k - 4);
}

/* The term hash table at the end of DICT_INDEX (docs/FORMAT.md 5.8): FNV-1a
 * 64 of the term, then a mixing step so that both ends of it are usable.
 * Specified by the format, so it must never change. */
#define IX_THASH_MAX_TERMS 0xffffffu  /* ordinals must fit 24 bits */
static inline uint64_t ix_term_hash(const unsigned char *t, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= t[i];
		h *= 0x100000001b3ull;
	}
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}
/* Buckets of the table for nterms terms: a power of two, about 4 terms
 * each; 0 (no table) when there are no terms or too many for it. */
static inline uint32_t ix_thash_buckets(uint64_t nterms)
{
	if (nterms == 0 || nterms > IX_THASH_MAX_TERMS)
		return 0;
	uint32_t b = 1;
	while ((uint64_t)b * 4 < nterms)
		b <<= 1;
	return b;
}
static inline uint32_t ix_thash_bucket(uint64_t h, uint32_t nbuckets)
{
	return (uint32_t)(h >> 40) & (nbuckets - 1);
}

/* FNV-1a, 64 bits: the key index hash. Specified by the format, so it must
 * never change (unlike fa_hash64, which is free to). */
uint64_t ix_key_hash(const char *key, size_t len);

/* ---- interface to code in segment_read.c: reading a segment -------------- */

struct ix_segment {
	char *path;                 /* full path, for messages */
	uint32_t id;
	fa_map map;                 /* when opened from a file */
	const unsigned char *data;  /* the whole file */
	uint64_t len;
	uint64_t data_end;          /* end of the page-checked bytes */
	uint64_t npages;
	const unsigned char *page_crcs;
	uint64_t *verified;         /* one bit per page, set with atomic ops */
	uint32_t footer_crc;
	uint32_t version;           /* IX_FORMAT_VERSION_MIN .. IX_FORMAT_VERSION */
	uint32_t nchunks, ndocs;
	uint64_t nterms, ndict_blocks;
	uint32_t dict_block_terms;
	uint32_t thash_buckets;     /* 0: no term hash table */
	uint64_t thash_off;         /* file offset of its bucket starts */
	uint64_t didx_strs_len;     /* the first-term strings of DICT_INDEX */
	uint64_t raw_text, post_bytes, pos_bytes;
	uint64_t field_len_sum[FATHOM_NFIELDS];
	uint64_t sec_off[IX_NSEC], sec_len[IX_NSEC];   /* absent: data_end, 0 */
	ix_secent *dir;             /* every section of the file, unknown ones too */
	uint32_t ndir;
	/* Tombstones of the committed snapshot (NULL: none). */
	uint8_t *del_docs, *del_chunks;
	uint64_t del_gen;
	uint32_t n_del_docs, n_del_chunks;
	uint32_t frame_raw;         /* the largest raw size of a document store frame */
	void *dctx;                 /* a cached ZSTD_DCtx, taken atomically */
	void *ddict;                /* the text dictionaries digested (docstore.c's
	                               ds_dictset), made by the first reader that needs
	                               them and published atomically; NULL until then */
	uint16_t (*field_lens)[FATHOM_NFIELDS]; /* every chunk's field lengths in one
	                               array (seg_field_lens), made by the first reader
	                               that asks and published atomically */
	void *query_cache;          /* seg_query_cache: the query layer's, fa_free'd
	                               at close */
	void *graph;                /* seg_graph's view (a vx_hnsw), made by the first
	                               reader that asks and published atomically */
};

int seg_open_file(ix_segment **out, const char *path);
/* Open a segment held in memory (the fuzz target); data must outlive it. */
int seg_open_mem(ix_segment **out, const void *data, size_t len, const char *name);
void seg_close(ix_segment *s);
/* 0 when [off, off+len) lies inside the checked part of the file and every
 * page it touches matches its CRC (checked once, then remembered). */
int seg_check_range_slow(const ix_segment *s, uint64_t off, uint64_t len);
static inline int seg_check_range(const ix_segment *s, uint64_t off, uint64_t len)
{
	/* The common case: a short range in one page already verified. */
	if (FA_LIKELY(len && off < s->data_end && len <= s->data_end - off)) {
		uint64_t pg = off >> IX_PAGE_SHIFT;
		if (pg == (off + len - 1) >> IX_PAGE_SHIFT &&
		    (__atomic_load_n(&s->verified[pg >> 6], __ATOMIC_RELAXED) >> (pg & 63)) & 1)
			return 0;
	}
	return seg_check_range_slow(s, off, len);
}
/* Check every page now (ix_verify). */
int seg_check_all_pages(const ix_segment *s);
/* Every section against its directory checksum (format 7; ix_verify). */
int seg_check_sections(const ix_segment *s);
/* A section by tag: its file offset and length. FATHOM_ENOTFOUND (no
 * message) when the segment has none. Sections added after format 7 are
 * found this way. */
int seg_section(const ix_segment *s, uint32_t tag, uint64_t *off, uint64_t *len);
/* Structural check of everything: postings, positions, frames, tables. */
int seg_verify(ix_segment *s);
/* Replace the committed tombstones (takes ownership of the bitmaps). */
void seg_set_tombstones(ix_segment *s, uint8_t *docs, uint8_t *chunks, uint64_t gen);
/* seg_find_doc with another tombstone bitmap (the writer's). */
int seg_find_doc_live(const ix_segment *s, const char *key, const uint8_t *del_docs, uint32_t *doc);
/* Raw bytes of the doc/chunk records (range-checked). */
int seg_doc_rec(const ix_segment *s, uint32_t doc, const unsigned char **rec);
int seg_chunk_rec(const ix_segment *s, uint32_t chunk, const unsigned char **rec);
int seg_tri_verify(const ix_segment *s);

static inline int ix_bit_get(const uint8_t *bm, uint32_t i)
{
	return bm && ((bm[i >> 3] >> (i & 7)) & 1);
}
static inline void ix_bit_set(uint8_t *bm, uint32_t i)
{
	bm[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* A term dictionary iterator (seg_term, seg_terms and merges). */
typedef struct ix_term_iter {
	const ix_segment *s;
	uint64_t block;             /* current dictionary block */
	uint64_t left;              /* terms left to decode in it */
	const unsigned char *p, *end;
	uint64_t next_off;          /* postings offset of the next term */
	unsigned char term[IX_MAX_TERM + 1];
	size_t len;
	size_t shared;              /* prefix kept from the previous term */
	ix_term_info ti;
} ix_term_iter;

/* Position on the first term of dictionary block b (b may equal
 * ndict_blocks: an exhausted iterator). */
int ix_term_iter_seek(ix_term_iter *it, const ix_segment *s, uint64_t block);
/* 1: a term was decoded into it->term/len/ti; 0: no more; <0 an error. */
int ix_term_iter_next(ix_term_iter *it);

/* ---- interface to code in postings.c: the postings codec ----------------- */

/* One block of postings as the writer hands it over. */
typedef struct ix_block_in {
	uint32_t n;                          /* 1..IX_BLOCK */
	uint32_t prev_doc;                   /* last doc of the previous block, or UINT32_MAX */
	uint32_t docs[IX_BLOCK];
	uint16_t tf[FATHOM_NFIELDS][IX_BLOCK];
} ix_block_in;

/* Append the encoded block to out. */
int ix_block_encode(fbuf *out, const ix_block_in *b);
/* Decode a block of n postings from [p, end); bytes up to readable (>= end)
 * may be read but are not used. 0 or FATHOM_ECORRUPT (no
 * message: the caller names the file). docs become absolute. *field_mask:
 * in, the fields whose tf arrays may hold nonzero values (they are cleared
 * when absent from this block); out, the fields present in it. */
int ix_block_decode(const unsigned char *p, const unsigned char *end,
                    const unsigned char *readable, uint32_t n, uint32_t prev_doc, uint32_t *docs, uint16_t tf[FATHOM_NFIELDS][IX_BLOCK],
                    uint8_t *field_mask);
/* Encode a block's positions: n values (first absolute then deltas per
 * posting and field) as patched bit-packing. */
int ix_pos_encode(fbuf *out, const uint32_t *vals, size_t n);

/* ---- interface to code in segment_write.c: the segment writer ------------ */

typedef struct ix_ds_frame {
	uint64_t raw_start, comp_off;
	uint32_t comp_len, raw_len;
} ix_ds_frame;

/* Document store writer (docstore.c): raw text in, zstd frames out. The
 * compressed frames collect in comp; comp_base counts bytes already moved
 * out of it (to the segment file). Until the frame size is decided (by
 * ix_ds_train, or once the training window fills, or at finish), raw text
 * collects in raw, up to the training window. */
typedef struct ix_ds_writer {
	void *cctx;
	unsigned char *raw;         /* raw_cap bytes: a frame, or the training window */
	size_t raw_fill, raw_cap;
	uint64_t raw_total;
	uint32_t frame_raw;         /* 0 while undecided */
	size_t window;              /* the training window, bytes */
	unsigned char *dict;        /* the trained dictionary (NULL: none) */
	size_t dict_len;
	/* Copying frames (ix_ds_copy_frames) instead of compressing text:
	 * the dictionaries the copied frames name. */
	int copying;
	uint64_t copy_base;         /* raw offset of the segment being copied */
	fbuf copied_dicts;          /* their bytes, back to back */
	uint32_t ncopied_dicts;
	uint32_t copied_ids[IX_DS_MAX_DICTS];
	size_t copied_off[IX_DS_MAX_DICTS], copied_len[IX_DS_MAX_DICTS];
	fbuf comp;
	uint64_t comp_base;
	ix_ds_frame *frames;
	size_t nframes, frames_cap;
	struct ix_ds_threads *threads; /* frames compressed in parallel (docstore.c) */
} ix_ds_writer;

int ix_ds_init(ix_ds_writer *w);
void ix_ds_free(ix_ds_writer *w);
int ix_ds_append(ix_ds_writer *w, const char *text, size_t len);
int ix_ds_finish(ix_ds_writer *w);   /* compress the last partial frame */
/* Decide the dictionary before any text, from n samples (back to back in
 * samples, sizes[i] bytes each) of text expected to total raw_estimate
 * bytes: no dictionary when raw_estimate is below the threshold or training
 * fails. A merge calls it with samples spread over its inputs. */
int ix_ds_train(ix_ds_writer *w, const unsigned char *samples, const size_t *sizes, size_t n,
                uint64_t raw_estimate);
/* How to sample for a dictionary: the piece size; the bytes of samples for
 * raw bytes of text (an eighth of it, within [IX_DS_SAMPLE_MIN,
 * IX_DS_SAMPLE_MAX], never more than the text); whether raw_estimate bytes
 * of text are worth a dictionary at all. */
#define IX_DS_SAMPLE_PIECE IX_FRAME_RAW_DICT
#define IX_DS_SAMPLE_MIN ((size_t)2 << 20)
#define IX_DS_SAMPLE_MAX ((size_t)8 << 20)
size_t ix_ds_sample_budget(uint64_t raw);
int ix_ds_wants_dict(uint64_t raw_estimate);
/* Up to cap of s's text dictionaries (TDIC or TDCS) as checked byte ranges
 * of the mapped file, with their zstd ids; *n their count (0: none). */
typedef struct ix_ds_dictref {
	const unsigned char *data;
	size_t len;
	uint32_t id;
} ix_ds_dictref;
int ix_ds_dicts(const ix_segment *s, ix_ds_dictref *out, size_t cap, size_t *n);
/* Append s's compressed frames as they are, from frame *next on, until at
 * least budget compressed bytes are held or the frames end (*next is then
 * the frame count): a merge whose inputs keep all their text copies it
 * instead of recompressing it. A writer either copies or compresses. The
 * first call takes s's dictionaries into the writer's set (at most
 * IX_DS_MAX_DICTS, ids distinct: FATHOM_ETOOBIG / FATHOM_EINVAL). */
int ix_ds_copy_frames(ix_ds_writer *w, const ix_segment *s, uint64_t *next, size_t budget);
/* Threads compressing frames and merging postings (0: one per CPU, the
 * default; 1: the writer's own). The bytes written are the same whatever
 * the count. */
void ix_ds_set_threads(unsigned n);
/* The count that setting gives: at least 1. */
unsigned ix_ds_thread_count(void);
/* Test hook: the training window of writers made from now on (0: the
 * default, 16 MiB), so tests reach the window-full path with little text.
 * Not thread-safe. */
void ix_ds_set_train_window(size_t bytes);

typedef struct ix_segw ix_segw;

/* The fields of a doc record. */
typedef struct ix_doc_rec {
	uint64_t size;
	int64_t mtime_ns;
	uint64_t content_hash;
	uint8_t kind;
	uint32_t n_tags, n_meta;
	int trigrams;            /* a file: index the trigrams of its text */
	int grep_only;           /* for grep alone (its text is not stored) */
	uint64_t text_off;       /* where its text lies in copied frames (ix_segw_copy_text) */
} ix_doc_rec;

int ix_segw_new(ix_segw **out, uint32_t id);
void ix_segw_free(ix_segw *w);      /* also removes an unfinished file */
/* Set the segment id (before ix_segw_open_file). */
void ix_segw_set_id(ix_segw *w, uint32_t id);
/* Documents first (with their chunks), then terms in byte order.
 * strs: key, path, title, url, lang, then tags, then meta, each NUL-ended. */
/* Trigram lists: collected from each document's text (when the document
 * asks for it) and written at the end, or, for a merge, streamed in
 * ascending trigram order after the terms (collection then off). */
void ix_segw_collect_trigrams(ix_segw *w, int on);
int ix_segw_tri_list(ix_segw *w, uint32_t tri, const uint32_t *docs, size_t n);
/* text is stored; tri (NULL: text) is what the trigrams are taken from.
 * After ix_segw_copy_text, text is NULL and d->text_off says where its
 * text_len bytes lie among the copied frames. */
int ix_segw_add_doc(ix_segw *w, const ix_doc_rec *d, const char *strs, size_t strs_len,
                    const char *text, size_t text_len, const char *tri, size_t tri_len);
/* Copy s's document store frames (and dictionaries) to the end of this
 * one's; *base: the raw offset of s's text here. The file must be open;
 * every document after this takes its text from copied frames. */
int ix_segw_copy_text(ix_segw *w, const ix_segment *s, uint64_t *base);
int ix_segw_add_chunk(ix_segw *w, uint32_t line_start, uint32_t line_end,
                      uint32_t byte_start, uint32_t byte_end,
                      const char *headings, uint32_t headings_len,
                      const uint32_t field_len[FATHOM_NFIELDS]);
/* The document store's dictionary, from samples (ix_ds_train), before the
 * first document. */
int ix_segw_train_text(ix_segw *w, const unsigned char *samples, const size_t *sizes, size_t n,
                       uint64_t raw_estimate);
/* Create the file now (merges call it early so the document store streams
 * to disk instead of collecting in memory). */
int ix_segw_open_file(ix_segw *w, const char *path);
/* One term's postings encoded apart from the writer (a merge encodes terms
 * on worker threads): begin with the writer's chunk records
 * (ix_segw_chunk_recs, read-only while terms are written), a posting at a
 * time, end, then ix_segw_term_put on the writer's thread, in term order.
 * The bytes are those ix_segw_term_begin/posting/term_end write. Errors
 * are returned (the writer is not told until ix_segw_term_put). */
typedef struct ix_term_enc {
	const unsigned char *chunks;
	uint32_t nchunks;
	uint32_t df, last_doc;
	ix_block_in blk;
	uint32_t *bpos;
	size_t nbpos, bpos_cap;
	ix_bound bbound, tbound;
	fbuf tdir, tblocks, tpos;
	uint64_t dir_len;            /* bytes of tdir written: 0 for one block */
} ix_term_enc;
void ix_term_enc_init(ix_term_enc *e);
void ix_term_enc_free(ix_term_enc *e);
void ix_term_enc_begin(ix_term_enc *e, const unsigned char *chunks, uint32_t nchunks);
int ix_term_enc_posting(ix_term_enc *e, uint32_t chunk, const uint16_t tf[FATHOM_NFIELDS],
                        const uint32_t *const pos[FATHOM_NFIELDS]);
int ix_term_enc_end(ix_term_enc *e);
/* An ended term's bytes (views into e, or into a copy of them). */
typedef struct ix_term_bytes {
	uint32_t df;                 /* 0: every posting was deleted, the term goes */
	ix_bound bound;
	const unsigned char *dir, *blocks, *pos;
	size_t dir_len, blocks_len, pos_len;
} ix_term_bytes;
void ix_term_enc_bytes(const ix_term_enc *e, ix_term_bytes *out);
/* An ended term's bytes copied to the end of a batch's buffer (a worker
 * keeps a batch of terms so), and put from there on the writer's thread. */
typedef struct ix_term_saved {
	uint32_t df;
	ix_bound bound;
	size_t at;                   /* dir, blocks, pos, one after the other */
	size_t dir_len, blocks_len, pos_len;
} ix_term_saved;
int ix_term_enc_save(const ix_term_enc *e, fbuf *out, ix_term_saved *s);
/* End the documents (they are written out) before terms come. */
int ix_segw_start_terms(ix_segw *w);
const unsigned char *ix_segw_chunk_recs(const ix_segw *w);
/* An ended term (no postings: nothing is written), in term order. */
int ix_segw_term_put(ix_segw *w, const char *term, size_t len, const ix_term_bytes *b);
int ix_segw_term_put_saved(ix_segw *w, const char *term, size_t len, const fbuf *out,
                           const ix_term_saved *s);
int ix_segw_term_begin(ix_segw *w, const char *term, size_t len);
/* pos[f] holds tf[f] positions, ascending. */
int ix_segw_posting(ix_segw *w, uint32_t chunk, const uint16_t tf[FATHOM_NFIELDS],
                    const uint32_t *const pos[FATHOM_NFIELDS]);
int ix_segw_term_end(ix_segw *w);
/* An extra section, written after the known ones with its tag and flags
 * (the bytes are copied). Tags must be new: not one of ix_known_sections,
 * not one added before. Sections of later features come in this way. */
int ix_segw_add_section(ix_segw *w, uint32_t tag, uint32_t flags, const void *data, size_t len);
/* The embedding of an added chunk (dim values: unit, or all zero for
 * none), chunks ascending, from an embedder of fingerprint fp; every
 * vector of a segment has the same dim and fp. A segment with none has no
 * VECS section. */
int ix_segw_chunk_vector(ix_segw *w, uint32_t chunk, const float *vec, uint32_t dim, uint64_t fp);
/* Would vectors of dim and fp join those the writer has (or it has none)? */
int ix_segw_vectors_fit(const ix_segw *w, uint32_t dim, uint64_t fp);
/* The graph options of this segment (ix_set_graph_opts; unset: defaults). */
void ix_segw_set_graph_opts(ix_segw *w, const ix_graph_opts *o);
/* The segment's HNSW graph, made elsewhere (a merge's vx_hnsw_merge): node i
 * must be chunk i, its rows the segment's vectors (ix_segw_finish checks);
 * the writer takes it (frees it, also on error). Without one, ix_segw_finish
 * builds the graph from the rows when there are enough vectors. */
void ix_segw_set_graph(ix_segw *w, struct vx_hnsw *g);
/* Chunks added so far with a vector. */
uint32_t ix_segw_vectors_present(const ix_segw *w);
/* Test hook: every segment written from now on gets this extra section (tag
 * 0: none). Not thread-safe. */
void ix_segw_set_test_section(uint32_t tag, uint32_t flags);
/* Write the tables, the page CRCs, the directory and the footer; fsync; close. */
int ix_segw_finish(ix_segw *w, uint64_t *file_len);
/* Recompute the page CRCs, their table's CRC, (format 7) the section CRCs
 * and the directory's, and the footer CRC of a segment image as a writer
 * would, so that tests and the fuzz target can reach the decoders behind
 * the checksums with damaged bytes (secdir.c). */
void ix_seg_reseal(unsigned char *d, size_t size);
uint32_t ix_segw_ndocs(const ix_segw *w);
uint32_t ix_segw_nchunks(const ix_segw *w);
/* Memory held, for the flush budget. */
size_t ix_segw_mem(const ix_segw *w);
/* The doc record fields of a pending doc. */
void ix_segw_doc_state(const ix_segw *w, uint32_t doc, ix_doc_state *out);

/* ---- interface to code in vectors.c: the VECS section ------------------- */

/* A writer's vectors, chunk by chunk, kept as float32 whatever the section
 * stores (elem: IX_VEC_F32, or IX_VEC_I8 or IX_VEC_I8_RESCORE quantised at
 * encoding), so the
 * graph is built on the floats. */
typedef struct ix_vecw {
	uint32_t dim;
	uint64_t fp;
	uint32_t present;
	uint32_t elem;       /* 0 or IX_VEC_F32: float32; IX_VEC_I8, IX_VEC_I8_RESCORE */
	fbuf rows, bits;
} ix_vecw;
void ix_vecw_init(ix_vecw *v);
void ix_vecw_free(ix_vecw *v);
/* The dimension and fingerprint (once; the same again is fine). */
int ix_vecw_set(ix_vecw *v, uint32_t dim, uint64_t fp);
/* Chunk chunk's vector (dim values; all zero: none), chunks ascending. */
int ix_vecw_put(ix_vecw *v, uint32_t chunk, const float *vec);
size_t ix_vecw_mem(const ix_vecw *v);
/* The section's bytes for a segment of nchunks. */
int ix_vecw_encode(ix_vecw *v, uint32_t nchunks, fbuf *out);
/* The graph options resolved: the least vector count for a graph, and the
 * parameters for a segment of count vectors. */
uint32_t ix_graph_min(const ix_graph_opts *o);
struct vx_params;
void ix_graph_params(const ix_graph_opts *o, uint32_t count, struct vx_params *p);

/* ---- interface to code in term_pool.c ------------------------------------ */

/* The pool a flush or a merge encodes its terms on:
 * ix_ds_thread_count threads (none for one), a window of batches in
 * flight, each with room for batch_terms encoded terms (saved[slot]) and
 * their bytes (out[slot]), and a term encoder per worker (enc[worker]). */
struct fa_pool;
struct fa_pipeline;
typedef struct ix_term_pool {
	struct fa_pool *pool;
	size_t window, nworkers;
	ix_term_saved **saved;
	fbuf *out;
	ix_term_enc *enc;
} ix_term_pool;
int ix_term_pool_open(ix_term_pool *tp, size_t batch_terms);
void ix_term_pool_close(ix_term_pool *tp);
int ix_term_pool_run(ix_term_pool *tp, const struct fa_pipeline *fns, void *ctx);

/* ---- interface to code in docstore.c: reading the document store --------- */

int ix_ds_read(const ix_segment *s, uint64_t raw_off, uint64_t len, fbuf *out);
/* Decompress every frame and check the frame table (ix_verify). */
int ix_ds_verify(const ix_segment *s);
void ix_ds_release(ix_segment *s);  /* free the cached decompression context and dictionary */

/* ---- interface to code in manifest.c: MANIFEST, tombstones, payload files - */

typedef struct ix_man_seg {
	uint32_t id, nchunks, ndocs, footer_crc;
	uint64_t del_gen;   /* 0: no tombstone file */
	uint64_t file_len;
} ix_man_seg;

/* A named value of the manifest's key/value block (format 7). The body is
 * kept as stored, so a kind or key this build does not know goes through a
 * commit unchanged. */
#define IX_KV_KEY_MAX 64u               /* key bytes */
#define IX_KV_VALUE_MAX (64u << 10)     /* a value kept in the manifest */
#define IX_KV_FILE_MAX (64u << 20)      /* a payload file */
#define IX_KV_MAX 1024u                 /* named values in a manifest */
#define IX_KV_FILE_REF 20u              /* body of a file entry: u64 gen, u64 length, u32 CRC */
#define IX_PAYLOAD_NAME_MAX (IX_KV_KEY_MAX + 32)
enum ix_kv_kind { IX_KV_VALUE = 1, IX_KV_FILE = 2 };

typedef struct ix_man_kv {
	char key[IX_KV_KEY_MAX + 1];
	uint8_t kind;            /* enum ix_kv_kind, or one this build does not know */
	unsigned char *body;
	uint32_t body_len;
} ix_man_kv;

typedef struct ix_manifest {
	uint32_t version;        /* as read (5..7); always written as IX_FORMAT_VERSION */
	uint64_t generation;
	uint32_t legacy_glossary; /* formats 5, 6: glossary-<n>.fglo; 0: none */
	uint32_t next_seg_id;
	char stem_lang[64];
	char root[IX_ROOT_MAX];  /* the folder relative document paths are under ("": unknown) */
	ix_man_seg *segs;
	uint32_t nsegs;
	ix_man_kv *kv;           /* the named values (format 7) */
	uint32_t nkv;
} ix_manifest;

int ix_manifest_read(ix_manifest *m, const char *dir);
/* FATHOM_ENOTFOUND ("no index here"), as ix_manifest_read gives it, when
 * dir holds no MANIFEST; 0 otherwise (nothing read: a writer checks this
 * before it takes the lock, which would create LOCK). */
int ix_manifest_present(const char *dir);
/* *renamed (may be NULL): the new MANIFEST is in place, even on an error
 * (see fa_write_atomic_r). */
int ix_manifest_write(const ix_manifest *m, const char *dir, int *renamed);
void ix_manifest_free(ix_manifest *m);
void ix_kv_free(ix_man_kv *kv, uint32_t n);
/* A key a named value may have: [a-z0-9] then [a-z0-9._-], 1..64 bytes. */
int ix_kv_key_ok(const char *key);

/* File names: seg-<id>.fseg and seg-<id>.<gen>.fdel (decimal, zero-padded). */
void ix_seg_name(char *buf, size_t cap, uint32_t id);
void ix_del_name(char *buf, size_t cap, uint32_t id, uint64_t gen);
/* The glossary file of formats 5 and 6, read and checked (magic, version,
 * CRC), payload out. */
void ix_glossary_name(char *buf, size_t cap, uint32_t n);
int ix_glossary_read(const char *dir, uint32_t n, unsigned char **payload, size_t *len);
/* Payload files <key>.<gen>.fpay (format 7): written atomically; read and
 * checked against the length and CRC the manifest holds. */
void ix_payload_file_name(char *buf, size_t cap, const char *key, uint64_t gen);
int ix_payload_file_write(const char *dir, const char *key, uint64_t gen, const unsigned char *payload,
                          size_t len);
int ix_payload_file_read(const char *dir, const char *key, uint64_t gen, uint64_t want_len,
                         uint32_t want_crc, unsigned char **payload, size_t *len);

/* Tombstone bitmaps: (ndocs+7)/8 and (nchunks+7)/8 bytes. */
int ix_tomb_read(const char *dir, uint32_t id, uint64_t gen, uint32_t ndocs, uint32_t nchunks,
                 uint8_t **docs, uint8_t **chunks);
int ix_tomb_write(const char *dir, uint32_t id, uint64_t gen, uint32_t ndocs, uint32_t nchunks,
                  const uint8_t *docs, const uint8_t *chunks);
/* Bytes of a tombstone file. */
uint64_t ix_tomb_file_size(uint32_t ndocs, uint32_t nchunks);

/* ---- the index handle ------------------------------------------------------ */

/* A segment as the writer sees it: its current (uncommitted) tombstones. */
typedef struct ix_wseg {
	ix_segment *seg;
	uint64_t file_len;
	uint8_t *del_docs, *del_chunks;   /* NULL until something is deleted */
	uint32_t n_del_docs, n_del_chunks;
	int dirty;                        /* tombstones changed since commit */
	int fresh;                        /* written since the last commit */
} ix_wseg;

/* A named payload's content (payload.c). */
typedef struct ix_payload {
	char name[IX_KV_KEY_MAX + 1];
	uint8_t kind;            /* IX_KV_VALUE or IX_KV_FILE */
	unsigned char *data;
	size_t len;
} ix_payload;

typedef struct ix_pending ix_pending;

struct ix_index {
	char *dir;
	unsigned flags;
	int lock_fd;
	ix_manifest man;
	int root_dirty;          /* man.root set since the last commit */
	/* The committed snapshot, in manifest order. */
	ix_segment **segs;
	size_t nsegs;
	uint64_t total_chunks;
	uint64_t field_len_sum[FATHOM_NFIELDS];
	/* The vectors a merge keeps (ix_set_embedder): those of fingerprint
	 * vec_fp; 0: whatever each input has, the first fingerprint met. */
	uint64_t vec_fp;
	ix_embed_hook embed;
	/* Writer state. */
	ix_wseg *w;
	size_t nw, wcap;
	ix_pending *pend;
	/* Named payloads: those of the snapshot's manifest, and those staged
	 * for the next commit. pay_version changes whenever what ix_get_value
	 * returns may. */
	ix_payload *pay;
	size_t npay, pay_cap;
	ix_payload *staged;
	size_t nstaged, staged_cap;
	uint64_t pay_version;
	size_t flush_budget;
	unsigned merge_max_segments;
	double merge_max_deleted;
	int merge_upgrade;       /* rewrite segments of older formats (ix_optimize) */
	ix_graph_opts graph;     /* the HNSW graphs of the segments written */
};

/* ---- interface to code in index.c: the handle and the writer's segments --- */

int ix_wseg_append(ix_index *ix, ix_segment *seg, uint64_t file_len);
int ix_wseg_delete_doc(ix_wseg *w, uint32_t doc);
uint32_t ix_wseg_ndel_chunks(const ix_wseg *w);
/* Close and remove the segments written since the last commit; forget the
 * writer's uncommitted tombstones. */
void ix_wsegs_drop_fresh(ix_index *ix);
uint32_t ix_next_seg_id(ix_index *ix);
/* Collection statistics of the snapshot (ix->segs). */
void ix_compute_totals(ix_index *ix);
/* unlink dir/name, quietly (a file no manifest names). */
void ix_remove_file(const char *dir, const char *name);

/* ---- interface to code in index_open.c: opening and refreshing ------------ */

/* ix_open, ix_refresh and ix_close (index.h); nothing else. */

/* ---- interface to code in commit.c: commit, rollback, merge policy -------- */

/* ix_commit, ix_optimize, ix_rollback (index.h) and ix_set_merge_policy
 * (below). */

/* ---- interface to code in verify.c: ix_verify and ix_sizes_get (index.h) -- */

/* ---- interface to code in payload.c: named payloads ------------------------ */

/* Read every payload a manifest names (values and files; the glossary file
 * of formats 5 and 6 as "glossary"). FATHOM_ENOTFOUND when a file is gone. */
int ix_payloads_load(const char *dir, const ix_manifest *m, ix_payload **out, size_t *n);
void ix_payloads_free(ix_payload *p, size_t n);
/* The snapshot's payloads replaced by p (taken). */
void ix_payloads_replace(ix_index *ix, ix_payload *p, size_t n);
void ix_payloads_drop_staged(ix_index *ix);
/* Commit steps: stage what an upgrade from an older format moves (the
 * glossary file); write the staged payload files of generation gen and build
 * the new manifest's named values (unknown ones carried over); remove them
 * again after a failure; after the manifest is durable, remove the files it
 * no longer names and make the staged payloads the committed ones. */
int ix_payloads_stage_upgrade(ix_index *ix);
int ix_payloads_write(ix_index *ix, uint64_t gen, ix_man_kv **kv, uint32_t *nkv);
void ix_payloads_undo(ix_index *ix, uint64_t gen);
void ix_payloads_committed(ix_index *ix, const ix_manifest *old);
/* Is fname a payload file the manifest names? */
int ix_payload_file_named(const ix_manifest *m, const char *fname);
/* Read and check every payload file (ix_verify). */
int ix_payloads_verify(const char *dir, const ix_manifest *m);

/* ---- interface to code in writer.c: pending documents ---------------------- */

int ix_pending_new(ix_pending **out);
void ix_pending_free(ix_pending *p);
int ix_pending_flush(ix_index *ix);   /* pending docs -> a fresh wseg */
int ix_pending_lookup(ix_pending *p, const char *key, ix_doc_state *out);
int ix_pending_delete(ix_pending *p, const char *key);
int ix_pending_foreach(ix_pending *p, int (*cb)(void *ctx, const char *key), void *ctx);
int ix_pending_empty(const ix_pending *p);

/* The hash of a term in an analysis' term map and in the pending buffer's
 * term table, both in memory only: free to change. Every token hashes its
 * term, and terms are short, so up to 16 bytes this mixes two overlapping
 * words that cover every byte (for 8 to 16 bytes, those at 0 and n - 8) and
 * the length, instead of calling fa_hash64: a third of an_term_id's time on
 * the kernel corpus. */
static inline uint32_t ix_mem_term_hash(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t x, y;
	if (n > 16)
		return (uint32_t)fa_hash64(s, n, 0);
	if (n >= 8) {
		x = fa_load64(p);
		y = fa_load64(p + n - 8);
	} else if (n >= 4) {
		x = fa_load32(p);
		y = fa_load32(p + n - 4);
	} else {
		x = n ? (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16 : 0;
		y = 0;
	}
	uint64_t h = (x * 0x9e3779b97f4a7c15ull) ^ ((y + n) * 0xc2b2ae3d27d4eb4full);
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	return (uint32_t)(h >> 32);
}

/* Whether a and b, both n bytes, are equal: overlapping words as above,
 * inline, for the hit that nearly every lookup is. */
static inline int ix_mem_term_eq(const char *a, const char *b, size_t n)
{
	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8)
			if (fa_load64(a + i) != fa_load64(b + i))
				return 0;
		return fa_load64(a + n - 8) == fa_load64(b + n - 8);
	}
	if (n >= 4)
		return fa_load32(a) == fa_load32(b) && fa_load32(a + n - 4) == fa_load32(b + n - 4);
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* ---- interface to code in merge.c ------------------------------------------ */

/* Merge the live documents of in[0..n) into a new segment.
 * *out is NULL when nothing is live. */
int ix_merge(ix_index *ix, ix_wseg *const *in, size_t n, ix_segment **out, uint64_t *file_len);

/* Test hooks. */
void ix_set_flush_budget(ix_index *ix, size_t bytes);
void ix_set_merge_policy(ix_index *ix, unsigned max_segments, double max_deleted_share);

#endif /* FATHOM_INDEX_INT_H */
