/*
 * index.h — the on-disk index: segments, postings, the document store, the
 * manifest, tombstones and merges. The format is specified in
 * docs/FORMAT.md and in the comment at the top of index/segment_write.c.
 *
 * An index is a folder:
 *   MANIFEST            the last commit: settings, live segments, tombstone
 *                       files; replaced atomically (write, fsync, rename,
 *                       fsync the folder)
 *   LOCK                flock()ed by the one writer
 *   seg-<id>.fseg       an immutable segment
 *   seg-<id>.<gen>.fdel a tombstone bitmap for a segment, one per commit
 *                       that deleted from it
 *   <key>.<gen>.fpay    a named payload the manifest names (the glossary)
 * Files not named by MANIFEST are leftovers of an interrupted commit and are
 * removed by the next writer.
 *
 * Integrity: every file has a magic, a format version and CRC32C. Segment
 * files are checked page by page (1 KiB pages, one CRC each) the first time a
 * page is read, so opening a large index reads only its headers, and every
 * byte a query uses has been checked before it is decoded. All decoding is
 * also bounds-checked, so a damaged file gives FATHOM_ECORRUPT naming the
 * file, never a crash.
 *
 * Chunk ids are local to a segment (0 .. nchunks-1), in the order chunks were
 * added, which is document order. A global chunk id is (segment id << 32) | local.
 */
#ifndef FATHOM_INDEX_H
#define FATHOM_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"
#include "text/text.h"

#define IX_END UINT32_MAX      /* postings cursor past its last entry */
#define IX_BLOCK 128           /* postings per block */

typedef struct ix_index ix_index;
typedef struct ix_segment ix_segment;

/* ---- opening and committing (index/index_open.c, index/commit.c) -------- */

enum ix_open_flags {
	IX_READONLY = 0,
	IX_WRITE = 1,
	IX_CREATE = 2
};

/* Open (or create) the index in dir. stem_lang is recorded at creation and
 * read back afterwards (ix_stem_language); it is ignored when opening an
 * existing index. */
int ix_open(ix_index **out, const char *dir, unsigned flags, const char *stem_lang);
void ix_close(ix_index *ix);

const char *ix_dir(const ix_index *ix);
const char *ix_stem_language(const ix_index *ix);
/* The absolute folder that relative document paths are under: where the
 * first `fathom index` of relative paths ran ("" when none did yet). */
const char *ix_root(const ix_index *ix);
/* Record it (writers; durable with the next commit). */
int ix_set_root(ix_index *ix, const char *root);
uint64_t ix_generation(const ix_index *ix);
/* A read-only handle moved to the newest commit (a writer: nothing to do). */
int ix_refresh(ix_index *ix, int *changed);

/* The committed snapshot: live segments, in order. */
size_t ix_nsegments(const ix_index *ix);
ix_segment *ix_segment_at(const ix_index *ix, size_t i);

/* Mapped files that shrank under their map (util/mapguard.c): 0 when none
 * of the handle's segments did, else FATHOM_ECORRUPT naming the file. The
 * public entry points that read segments call it first and last, so a
 * damaged file fails every read cleanly until the handle is refreshed
 * (which maps it again) or reopened. */
int ix_check_mapped(const ix_index *ix);
/* rc, or the error of ix_check_mapped when a segment was damaged meanwhile
 * (whatever rc was: the read may have seen zeros). */
int ix_checked(const ix_index *ix, int rc);
/* Was this segment's mapping damaged? */
int seg_damaged(const ix_segment *s);

/* Collection statistics for BM25 over all committed segments (deleted
 * chunks included, as Lucene does, until a merge drops them). */
uint64_t ix_total_chunks(const ix_index *ix);
double ix_avg_field_len(const ix_index *ix, int field);

/* ---- writing (index/writer.c) -------------------------------------------- */

typedef struct ix_chunk_in {
	uint32_t byte_start, byte_end;  /* into ix_doc_in.text */
	uint32_t line_start, line_end;
	const char *headings;           /* heading trail, may be NULL */
	uint32_t headings_len;
} ix_chunk_in;

typedef struct ix_doc_in {
	const char *key;        /* unique: the path as given, or the JSONL id */
	const char *path;       /* source path, "" for JSONL documents without one */
	const char *title;      /* "" when none */
	const char *url;        /* "" when none */
	const char *lang;       /* "c", "markdown", "text", ... */
	uint8_t kind;           /* enum text_doc_kind */
	const char *const *tags;
	size_t n_tags;
	const char *const *meta; /* "key=value" */
	size_t n_meta;
	uint64_t size;          /* of the source file (or text_len) */
	int64_t mtime_ns;       /* 0 for JSONL */
	uint64_t content_hash;  /* fa_hash64 of the raw bytes */
	const char *text;       /* the whole document, valid UTF-8 */
	size_t text_len;
	const ix_chunk_in *chunks;
	size_t n_chunks;
	uint32_t ident_min_len;  /* exact identifiers: shortest spelling (0: 3) */
	uint32_t ident_max;      /* at most this many per chunk (0: 50) */
	int trigrams;            /* a file: index its trigrams for grep */
	int grep_only;           /* for grep alone: no text stored, no chunks */
	const char *raw;         /* the file's bytes as on disk, for its trigrams
	                          * (NULL: text) */
	size_t raw_len;
	/* The chunks' embeddings: n_chunks rows of vec_dim floats (unit, or all
	 * zero for none), from the embedder of fingerprint vec_fp; NULL: none. */
	const float *vecs;
	uint32_t vec_dim;
	uint64_t vec_fp;
} ix_doc_in;

/* Add a document (and replace any live one with the same key). Each chunk
 * is analysed into its five fields: path (the doc path), title (the doc
 * title), headings (the chunk's trail), tags (the doc's tags) and body (the
 * chunk's text). Needs an index opened for writing. */
int ix_add_doc(ix_index *ix, text_analyzer *an, const ix_doc_in *doc);

/* Adding in two steps, so that analysis runs on many threads and one writer
 * appends: ix_analyse_doc() tokenizes, stems and finds the identifiers of a
 * document's fields into an analysis (any thread; one analysis and one
 * analyser per thread); ix_add_analysed() appends what was analysed to the
 * index (the writer's thread), as ix_add_doc() would have. An analysis holds
 * any number of documents, each term once; reset it to reuse it. */
typedef struct ix_analysis ix_analysis;
int ix_analysis_new(ix_analysis **out);
void ix_analysis_reset(ix_analysis *a);
void ix_analysis_free(ix_analysis *a);
/* on (the default): a path or title equal to the last one analysed in the
 * batch copies its tokens. Off analyses every field, for tests that compare
 * the two. */
void ix_analysis_set_reuse(ix_analysis *a, int on);
/* *handle: the document's number in a, for ix_add_analysed. */
int ix_analyse_doc(ix_analysis *a, text_analyzer *an, const ix_doc_in *doc, uint32_t *handle);
/* doc: the same description that was analysed. */
int ix_add_analysed(ix_index *ix, const ix_doc_in *doc, ix_analysis *a, uint32_t handle);

/* Tombstone the live document with this key. FATHOM_ENOTFOUND if none. */
int ix_delete_doc(ix_index *ix, const char *key);

/* What the index knows of a live document (committed or pending), for
 * incremental indexing. FATHOM_ENOTFOUND if none. */
typedef struct ix_doc_state {
	uint64_t size;
	int64_t mtime_ns;
	uint64_t content_hash;
	int grep_only;          /* indexed for grep alone */
} ix_doc_state;
int ix_doc_lookup(ix_index *ix, const char *key, ix_doc_state *out);

/* Visit the keys of all live documents (committed and pending). */
int ix_foreach_live_key(ix_index *ix, int (*cb)(void *ctx, const char *key), void *ctx);

/* The writer's view: what the next commit will hold, before it is made.
 * ix_writer_flush writes the pending documents to a fresh segment (not
 * committed: a rollback or a crash drops it, as it would at commit); then
 * ix_writer_nsegments and ix_writer_segment_at give every segment the
 * writer holds, fresh ones included, and ix_writer_doc_live whether a
 * document of one is live in the writer's (uncommitted) deletions. How a
 * commit that must read its own new documents does it in the same commit:
 * the corpus embedder trained at the first commit (api/embed_train.c).
 * Writers only (FATHOM_EREADONLY otherwise). */
int ix_writer_flush(ix_index *ix);
size_t ix_writer_nsegments(const ix_index *ix);
ix_segment *ix_writer_segment_at(const ix_index *ix, size_t i);
int ix_writer_doc_live(const ix_index *ix, size_t i, uint32_t doc);

/* Flush pending documents into a segment, write tombstones, merge small
 * segments, and replace the manifest. After it returns 0 the change is
 * durable; searches opened afterwards see it. */
int ix_commit(ix_index *ix);
/* Commit with every segment merged into one and deletions purged. */
int ix_optimize(ix_index *ix);

int ix_rollback(ix_index *ix);

/* ---- vectors ------------------------------------------------------------------ */

#define IX_VEC_MAX_DIM 4096u        /* as EM_MAX_DIM */

/* The element types of VECS rows (docs/FORMAT.md 5.12; values only ever
 * appended): float32; int8 with one float32 scale and offset per row; int8
 * so, then the float32 rows too (the graph walked on the int8 rows, its
 * beam and the exact paths scored on the floats). */
#define IX_VEC_F32 1u
#define IX_VEC_I8 2u
#define IX_VEC_I8_RESCORE 3u

/* A segment's vectors, read in place: float32 rows (rows), int8 rows
 * (qrows, row i ~ offsets[i] + qrows[i * dim ..] * scales[i]; rows NULL),
 * or both (IX_VEC_I8_RESCORE). */
typedef struct ix_vecs {
	uint32_t dim, count, present;
	uint32_t elem;               /* IX_VEC_F32, IX_VEC_I8, IX_VEC_I8_RESCORE */
	uint64_t fp;                 /* the embedder's fingerprint */
	const uint8_t *bits;         /* count bits: has a vector */
	const float *rows;           /* float32 (and rescore): count * dim, aligned */
	const int8_t *qrows;         /* int8: count * dim, 64-byte aligned */
	const float *scales;         /* int8: count, 64-byte aligned */
	const float *offsets;        /* int8: count, 64-byte aligned */
} ix_vecs;
/* FATHOM_ENOTFOUND when the segment has none; the section's header, size
 * and bitmap checked (O(count / 8)), not its values: a score that is not
 * finite is FATHOM_ECORRUPT where it is computed, the graph's view checks
 * every scale, and seg_vectors_verify checks all. */
int seg_vectors(const ix_segment *s, ix_vecs *out);
/* Every value of the section: rows with a vector finite (int8: their scale
 * finite and not negative, their offset finite, no value -128), rows
 * without all zero. FATHOM_ECORRUPT naming the file. For `fathom verify`. */
int seg_vectors_verify(const ix_segment *s);
/* Row c of v as floats into tmp (dim values): int8 rows scaled back by
 * em_dequantize_i8, as the HNSW merge scales them.
 * Returns tmp, or the row in place for float32 rows. */
const float *ix_vecs_row(const ix_vecs *v, uint32_t c, float *tmp);
/* The cosine of the float query q with row c (dim values): em_dot for
 * float32 rows; for int8 ones em_dot_f32_i8 times the row's scale, plus its
 * offset times qsum, the sum of q's values (em_sum, once a query). */
float ix_vecs_score(const ix_vecs *v, const float *q, float qsum, uint32_t c);

/* The HNSW graph over a segment's vectors (the HNSW section, docs/FORMAT.md
 * 5.13): node i is chunk i (VECS row i); a chunk without a vector is a hole
 * no walk reaches. A segment gets one when it is written (a flush or a
 * merge) with at least min_vectors vectors; below that the exact path
 * scores them all, which is as fast for so few. A merge whose inputs'
 * vectors are kept as they are builds its graph from theirs
 * (vx_hnsw_merge: the largest input graph that lost no chunk is reused),
 * else afresh from its rows. m, ef_construction, ef_search: 0 for
 * vx_params_for's of the segment's count. */
#define IX_HNSW_MIN_VECTORS 2048u
typedef struct ix_graph_opts {
	uint32_t min_vectors;   /* 0: IX_HNSW_MIN_VECTORS; UINT32_MAX: no graphs */
	uint32_t m, ef_construction, ef_search;
	uint32_t storage;       /* VECS rows written: 0 or IX_VEC_F32, IX_VEC_I8,
	                         * IX_VEC_I8_RESCORE
	                         * (a merge converts; optimize rewrites segments
	                         * of the other type) */
} ix_graph_opts;
/* For the segments this handle writes from now on. FATHOM_EINVAL for m
 * outside 2..64, an ef outside 0..10000. */
int ix_set_graph_opts(ix_index *ix, const ix_graph_opts *o);
const ix_graph_opts *ix_graph_opts_of(const ix_index *ix);
/* The segment's graph, read-only over the mapped section and VECS rows,
 * checked once (O(size)) and kept with the segment (made by the first
 * reader that asks, published atomically: any number of searches share
 * it). FATHOM_ENOTFOUND (no message) when the segment has none;
 * FATHOM_ECORRUPT naming the file when it fails its checks. */
struct vx_hnsw;
int seg_graph(const ix_segment *s, const struct vx_hnsw **out);
/* The committed snapshot's deleted chunks, a bit each (NULL: none). */
const uint8_t *seg_deleted_chunks(const ix_segment *s);

/* What a merge does with the chunks' vectors: it keeps those made by the
 * embedder of fingerprint fp, drops the others, and when embed is set
 * computes the missing ones (the chunk's title, headings and text, as
 * ingest embeds them) in batches: how `optimize` re-embeds an index whose
 * embedder changed or was retrained. fp 0: keep every input's vectors
 * (those of the first fingerprint met). */
typedef struct ix_embed_hook {
	int (*embed)(void *ctx, const char *const *texts, const size_t *lens, size_t n,
	             float *out);
	void *ctx;
	uint32_t dim;
	uint64_t fp;
	/* called on the merging thread as chunks are embedded: how many so
	 * far in this merge (NULL: not told) */
	void (*progress)(void *ctx, uint64_t embedded);
	void *progress_ctx;
} ix_embed_hook;
void ix_set_embedder(ix_index *ix, uint64_t fp, const ix_embed_hook *embed);
/* The text a chunk is embedded as, the same at ingest and in a merge: the
 * document's title, the heading trail and the chunk's text, a line each. */
int ix_embed_text(fbuf *out, const char *title, const char *headings, size_t headings_len,
                  const char *text, size_t len);

/* ---- named payloads (index/payload.c) -------------------------------------- */

/* A named payload commits atomically with the segments (docs/FORMAT.md 3):
 * a value of at most 64 KiB is kept in the manifest (ix_stage_value), a
 * larger one in a checksummed file the manifest names (ix_stage_file, at
 * most 64 MiB). Names are [a-z0-9] then [a-z0-9._-], at most 64 bytes.
 * Staging needs a writer; the next commit makes the payload durable and
 * visible to handles opened (or refreshed) after it, ix_rollback drops it. */
int ix_stage_value(ix_index *ix, const char *name, const void *data, size_t len);
int ix_stage_file(ix_index *ix, const char *name, const void *data, size_t len);
/* What the writer staged under name, else the committed payload; the bytes
 * stay valid until the next stage, commit, rollback or refresh.
 * FATHOM_ENOTFOUND (no message) when there is none. */
int ix_get_value(const ix_index *ix, const char *name, const unsigned char **data, size_t *len);
/* Changes whenever what ix_get_value returns may have. */
uint64_t ix_payload_version(const ix_index *ix);

/* The glossary is the payload "glossary" (query/glossary.c reads and writes
 * what is in it): NULL, 0 when none; *version is ix_payload_version. */
void ix_glossary(const ix_index *ix, const unsigned char **data, size_t *len, uint64_t *version);
int ix_glossary_stage(ix_index *ix, const unsigned char *data, size_t len);

/* Read every byte of every file and check every checksum and structure. */
int ix_verify(ix_index *ix);

/* Sizes per structure, summed over segments. */
typedef struct ix_sizes {
	uint64_t dict, postings, positions, docstore, docs, chunks, trigrams, vectors, other, total;
	uint64_t terms, docs_live, chunks_live, chunks_deleted, raw_text;
	uint64_t grep_files, grep_file_bytes, grep_only_files;
} ix_sizes;
int ix_sizes_get(ix_index *ix, ix_sizes *out);

/* ---- reading a segment (index/segment_read.c) ----------------------------- */

uint32_t seg_id(const ix_segment *s);
uint32_t seg_nchunks(const ix_segment *s);
uint32_t seg_ndocs(const ix_segment *s);
const char *seg_path(const ix_segment *s);   /* file name, for messages */
/* Is this chunk tombstoned in the committed snapshot? */
int seg_is_deleted(const ix_segment *s, uint32_t chunk);
/* Is this doc tombstoned (all its chunks are)? */
int seg_doc_is_deleted(const ix_segment *s, uint32_t doc);

typedef struct ix_chunk_info {
	uint32_t doc;                   /* local doc index */
	uint32_t order;
	uint32_t line_start, line_end;
	uint32_t byte_start, byte_end;  /* in the document text */
	uint16_t field_len[FATHOM_NFIELDS]; /* tokens per field (saturating) */
	const char *headings;           /* into the map, not NUL-terminated */
	uint32_t headings_len;
} ix_chunk_info;

int seg_chunk(const ix_segment *s, uint32_t chunk, ix_chunk_info *out);
/* Only the field lengths of a chunk (what scoring needs): one range-checked
 * record read, without the document record seg_chunk() also checks. */
int seg_chunk_field_len(const ix_segment *s, uint32_t chunk, uint16_t len[FATHOM_NFIELDS]);
/* The field lengths of every chunk, [chunk][field], in one array that
 * stays with the segment: for loops that meet many chunks (a scattered
 * read of each chunk record costs a cache miss). Made on the first call
 * (nchunks * 10 bytes), safe to race; FATHOM_ECORRUPT naming the file if a
 * chunk record fails its check. */
int seg_field_lens(const ix_segment *s, const uint16_t (**out)[FATHOM_NFIELDS]);
/* One pointer the query layer keeps with the segment (what it works out
 * from the segment's data once and reuses across queries); NULL at first,
 * fa_free'd when the segment closes. Like the handle that owns the segment,
 * one thread at a time. */
void **seg_query_cache(ix_segment *s);

typedef struct ix_doc_info {
	const char *key, *path, *title, *url, *lang;  /* NUL-terminated, in the map */
	uint8_t kind;
	int trigrams;          /* a file in the trigram index */
	int grep_only;         /* indexed for grep alone: no text, no chunks */
	uint32_t first_chunk, n_chunks;
	uint64_t size;
	int64_t mtime_ns;
	uint64_t content_hash;
	uint64_t text_off;     /* where its text starts in the raw stream */
	uint64_t text_len;
	const char *tags;      /* n_tags NUL-terminated strings back to back */
	uint32_t n_tags;
	const char *meta;      /* n_meta "key=value" NUL-terminated strings */
	uint32_t n_meta;
} ix_doc_info;

int seg_doc(const ix_segment *s, uint32_t doc, ix_doc_info *out);
/* Only what grep's check for changed files needs: the path (the key for
 * files), size and mtime. Cheaper than seg_doc, which reads every string. */
int seg_doc_file(const ix_segment *s, uint32_t doc, const char **path, uint64_t *size,
                 int64_t *mtime_ns);
/* Find a doc by key (binary search over the key index): 0 or FATHOM_ENOTFOUND.
 * Finds deleted docs too; check seg_doc_is_deleted. */
int seg_find_doc(const ix_segment *s, const char *key, uint32_t *doc);
/* Has a file changed since it was indexed? The one rule, which grep, get
 * and search hits share: its size or its mtime differ from the index's. */
int ix_file_changed(uint64_t size, int64_t mtime_ns, uint64_t indexed_size,
                    int64_t indexed_mtime_ns);
/* ix_file_changed on a stat of the file. */
struct stat;
int ix_stat_changed(const struct stat *st, uint64_t indexed_size, int64_t indexed_mtime_ns);
/* Is a document's file stale: changed on disk since it was indexed
 * (ix_file_changed on a stat of it, relative paths under the index's
 * root), or gone? 0 for documents that are not files (JSON lines). */
int ix_doc_stale(const ix_index *ix, const ix_doc_info *di);
/* Value of metadata key for doc, NULL when absent. */
const char *ix_doc_meta(const ix_doc_info *d, const char *key);

/* Append bytes [off, off+len) of the document's text to out (decompressing
 * the document store frames it spans). */
int seg_doc_text(const ix_segment *s, uint32_t doc, uint64_t off, uint64_t len, fbuf *out);

/* Reading many documents one after another: a window of the raw text
 * (IX_TEXT_WINDOW bytes of whole runs of frames at a time), so each frame is
 * decompressed once, not once per document in it (a document is much
 * smaller than a frame; documents lie in the raw stream in order). One
 * window serves one reader at a time, over any segments. */
#define IX_TEXT_WINDOW ((uint64_t)1 << 20)
typedef struct ix_text_window {
	fbuf buf;
	const ix_segment *seg;   /* whose raw text buf holds (NULL: none) */
	uint64_t start;          /* raw offset of buf's first byte */
} ix_text_window;
void ix_text_window_init(ix_text_window *w);
void ix_text_window_free(ix_text_window *w);
/* n bytes of s's raw text at off (a document's text_off.. within its
 * text_len), *text pointing into the window until its next use. */
int ix_text_window_read(ix_text_window *w, const ix_segment *s, uint64_t off, uint64_t n,
                        const char **text);
/* The whole text of document doc (*len bytes), as ix_text_window_read. */
int seg_doc_text_window(const ix_segment *s, uint32_t doc, ix_text_window *w, const char **text,
                        size_t *len);

/* Per-field upper bounds for scoring: the largest tf, and the smallest field
 * length among chunks where tf > 0. With these a BM25F upper bound holds for
 * any weights, k1 and b chosen at query time. Block bounds are exact; a
 * term's min_len is stored in one byte and may be rounded down (still a
 * valid lower bound). A field the term never occurs in has 0 and 0. */
typedef struct ix_bound {
	uint16_t max_tf[FATHOM_NFIELDS];
	uint16_t min_len[FATHOM_NFIELDS];
} ix_bound;

typedef struct ix_term_info {
	uint32_t df;             /* chunks containing the term, any field */
	uint32_t n_blocks;
	uint64_t post_off, post_len;  /* in the segment file */
	uint64_t pos_off, pos_len;
	ix_bound bound;          /* over the whole list */
} ix_term_info;

/* Exact identifiers live in the dictionary as vocabulary terms
 * IX_IDENT_MARK key IX_IDENT_SEP category-digit spelling, with postings in
 * the body field (docs/FORMAT.md, "Identifier vocabulary"). */
#define IX_IDENT_MARK '\x02'
#define IX_IDENT_SEP '\x1f'
/* In place of the category digit, with no spelling after it: a whole token
 * of the text with that key, classified or not (FORMAT.md, 5.10). */
#define IX_IDENT_TOKEN '~'

/* ---- the trigram index (index/trigram.c) -----------------------------------
 * Trigrams are three bytes of a file with ASCII letters folded to lower
 * case, packed b0 << 16 | b1 << 8 | b2. */
static inline unsigned char ix_tri_fold(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

static inline uint32_t ix_trigram(unsigned char a, unsigned char b, unsigned char c)
{
	return (uint32_t)ix_tri_fold(a) << 16 | (uint32_t)ix_tri_fold(b) << 8 | ix_tri_fold(c);
}

/* Call cb once per distinct trigram of [s, s+n). seen: a 2 MiB (2^24 bits)
 * scratch bitmap, all zero on entry; zero again on return. */
int ix_trigrams(const unsigned char *s, size_t n, uint8_t *seen,
                int (*cb)(void *ctx, uint32_t tri), void *ctx);

typedef struct ix_tri_info {
	uint32_t tri, ndocs;
	uint64_t off, len;       /* the list's bytes in the segment file */
} ix_tri_info;

uint64_t seg_ntrigrams(const ix_segment *s);
int seg_tri_at(const ix_segment *s, uint64_t i, ix_tri_info *out);
/* 0, FATHOM_ENOTFOUND (no file of the segment holds it) or an error. */
int seg_tri_find(const ix_segment *s, uint32_t tri, ix_tri_info *out);
/* Decode the list: ti->ndocs documents, ascending, into docs. */
int seg_tri_docs(const ix_segment *s, const ix_tri_info *ti, uint32_t *docs);
/* Is the document a file whose trigrams are indexed? */
int seg_doc_has_trigrams(const ix_segment *s, uint32_t doc);

/* Look a term up: 0, or FATHOM_ENOTFOUND, or FATHOM_ECORRUPT. */
int seg_term(const ix_segment *s, const char *term, size_t len, ix_term_info *out);

/* Iterate terms in byte order (for merges, stats, and later prefix search):
 * cb gets each term (not NUL-terminated) and its info. A non-zero return
 * from cb stops. prefix may be NULL. */
int seg_terms(const ix_segment *s, const char *prefix, size_t prefix_len,
              int (*cb)(void *ctx, const char *term, size_t len, const ix_term_info *ti),
              void *ctx);

/* ---- postings cursor (index/postings.c) ----------------------------------
 * A cursor over one term's postings in one segment. Block-at-a-time: moving
 * within the current block costs nothing; ix_post_shallow() moves only the
 * block pointer, reading the block directory but not the block, which is
 * what block-max WAND needs to skip blocks whose bound is too low.
 */
typedef struct ix_postings {
	const ix_segment *seg;
	ix_term_info ti;
	uint32_t block;            /* current block index */
	uint32_t block_decoded;    /* index of the decoded block, or UINT32_MAX */
	uint32_t i, n;             /* position in the decoded block, its size */
	uint32_t doc;              /* current chunk, IX_END when exhausted */
	uint32_t docs[IX_BLOCK];
	uint16_t tf[FATHOM_NFIELDS][IX_BLOCK];  /* read through ix_post_tf() */
	uint8_t field_mask;        /* fields whose tf arrays may be nonzero */
	int err;                   /* sticky error */
	/* Internal to index/postings.c. */
	uint32_t block_last;       /* last doc of block `block` */
	ix_bound block_bound;      /* bound of block `block` */
	uint64_t pos_lo, pos_hi;   /* positions bytes of the decoded block */
	uint32_t pos_block;        /* block the running position sum is for */
	uint32_t pos_i;            /* posting the running sum has reached */
	uint64_t pos_idx, pos_total;
	uint64_t pos_packed, pos_bytes; /* packed values: file offset, size */
	uint64_t exc_off, exc_left;     /* exception stream: next byte, count left */
	uint64_t exc_count;             /* exceptions in the decoded block */
	uint64_t exc_idx, exc_high;     /* the decoded exception not yet used */
	uint64_t exc_from;              /* end of the last request */
	uint8_t pos_bits, exc_have;
	/* The decoded block's tf arrays, decoded on first use (0: done). */
	uint64_t tf_off, tf_end;
	uint8_t tf_fm, tf_full;
} ix_postings;

/* Position the cursor on the first posting. */
int ix_post_open(ix_postings *p, const ix_segment *s, const ix_term_info *ti);
/* Next posting; p->doc becomes IX_END at the end. */
int ix_post_next(ix_postings *p);
/* First posting with doc >= target. */
int ix_post_advance(ix_postings *p, uint32_t target);
/* Move to the block that could hold target without decoding it; returns
 * that block's last doc, or IX_END when no block can. Afterwards p->doc is
 * unspecified until ix_post_advance(). */
uint32_t ix_post_shallow(ix_postings *p, uint32_t target);
/* Bound of the current block (after ix_post_shallow or positioning). */
const ix_bound *ix_post_block_bound(const ix_postings *p);
uint32_t ix_post_block_last(const ix_postings *p);
/* Term frequencies of the current posting per field. A block's are decoded
 * on the first call for it (cursors that only skip never pay for them); if
 * they prove corrupt, all are 0 and p->err is set. The cursor must not be
 * an object defined const: the lazy decode writes to it. */
void ix_post_tf(const ix_postings *p, uint16_t tf[FATHOM_NFIELDS]);
/* Block at a time, for loops that read whole lists: after
 * ix_post_block_tf(), p->docs[p->i .. p->n) are the block's postings from
 * the current one, and p->tf[f][i] their term frequencies for the fields
 * in p->field_mask (the other arrays are 0). ix_post_next_block() moves to
 * the first posting of the next block (p->doc IX_END after the last). */
int ix_post_decode_tf(ix_postings *p);
static inline int ix_post_block_tf(ix_postings *p)
{
	return p->tf_off ? ix_post_decode_tf(p) : p->err;
}
int ix_post_next_block(ix_postings *p);
/* Positions of the current posting in one field (ascending). *n is the
 * number written, at most max. */
int ix_post_positions(ix_postings *p, int field, uint32_t *out, uint32_t max, uint32_t *n);

#endif /* FATHOM_INDEX_H */
