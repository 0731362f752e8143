/*
 * ingest_int.h — what the files of the ingest entry points share (src/api
 * only): the batch, the unit of parallel ingest, and the run that pipes
 * batches through the thread pool to the writer.
 *
 *   ingest.c        the run: options, batches, analysis of an item, the
 *                   hand-over to the writer, skips and progress
 *   ingest_files.c  fathom_index_paths and fathom_chunk_paths: the walk,
 *                   what changed, what is gone
 *   ingest_jsonl.c  fathom_add_jsonl[_mem] and fathom_add_doc
 */
#ifndef FATHOM_INGEST_INT_H
#define FATHOM_INGEST_INT_H

#include "api/api.h"
#include "ingest/ingest.h"
#include "util/pool.h"

/* ---- batches ----------------------------------------------------------------- */

/* One document of a batch, from its source to its analysis. produce (the
 * calling thread) says what it is; work (any thread) reads, repairs,
 * chunks and analyses it; emit (the calling thread, in order) hands it to
 * the writer and reports it. */
enum item_kind {
	IT_FILE,       /* a file to read */
	IT_DUP,        /* a file reached a second time through another root */
	IT_SAME,       /* a file whose size and mtime match the index */
	IT_LINE,       /* a JSON line */
	IT_BAD_LINE    /* a line over the length limit */
};

/* Analyse, chunk and add one document. text need not be valid UTF-8. */
typedef struct doc_src {
	const char *key, *path, *title, *url;
	const char *const *tags;
	size_t n_tags;
	const char *const *meta;
	size_t n_meta;
	const char *text;
	size_t len;
	uint64_t size;
	int64_t mtime_ns;
	uint64_t hash;
	int is_file;          /* from the tree walk: goes in the trigram index */
	const float *vector;  /* the document's own embedding (JSONL "vector") */
	uint32_t vector_dim;
} doc_src;

typedef struct ingest_item {
	int kind;             /* enum item_kind */
	/* files (produce) */
	const struct file_ent *ent;
	ix_doc_state old;     /* what the index has under its key, when known */
	int known, upgrade, grep_only;
	/* JSON lines (produce) */
	size_t line_off, line_len; /* in the batch's lines */
	uint64_t line_no;
	char idbuf[32];
	void *root;           /* the parsed JSON, which jd points into */
	/* work */
	int rc;               /* an error: the run stops at this item */
	char *errmsg;         /* its message (work runs on another thread) */
	int skip;             /* a skip reason, 0 for none */
	int drop;             /* skipped, and a known document leaves the index */
	int same;             /* the content hash matches the index */
	int add;              /* a document to add */
	char *data;           /* the file's bytes */
	size_t len;
	uint64_t bytes;       /* bytes read, for the stats */
	const char *bad;      /* a bad line: why */
	doc_src src;
	fbuf text;            /* the repaired text */
	const char *title, *lang;
	int doc_kind;
	size_t n_invalid;
	ix_chunk_in *chunks;
	size_t n_chunks, cap_chunks;
	ix_doc_in in;         /* what the writer gets (meta set by emit) */
	float *vecs;          /* its chunks' vectors (in.vecs), n_chunks * dim */
	size_t vecs_cap;      /* floats */
	fbuf etext;           /* the texts embedded, back to back */
	uint32_t handle;      /* the document in the batch's analysis */
} ingest_item;

/* ingest_batch: the unit of parallel ingest. A batch is a run of documents
 * (files of a walk, or JSON lines) in input order, with their repaired text,
 * their chunks (byte ranges, lines, heading trails) and the analysis of
 * their fields (ix_analysis: terms and positions, each term once); a
 * worker fills it, then the writer appends it whole. It is also the unit an
 * embedder will consume: every chunk's text is item.text[chunk.byte_start,
 * chunk.byte_end). */
typedef struct ingest_batch {
	ingest_item *items;
	size_t n, cap;
	uint64_t bytes;       /* input bytes in the batch (for its size) */
	fbuf lines;           /* JSON lines, back to back */
	fa_arena mem;         /* titles, heading trails, parsed JSON strings */
	ix_analysis *an;      /* NULL when nothing is analysed (fathom_chunk_paths) */
} ingest_batch;

/* A batch ends at this many documents or input bytes, whichever comes
 * first: enough to amortise the hand-over, small enough that a window of
 * them stays a few MiB. */
#define BATCH_DOCS 64
#define BATCH_BYTES ((uint64_t)512 << 10)
/* Batches in flight per worker thread. */
#define BATCHES_PER_THREAD 4

/* State shared by one ingest call. */
typedef struct ingest_run {
	fathom_index *fx;
	const fathom_ingest_opts *opts;
	fathom_ingest_stats *st;
	double t0, last_progress;
	uint64_t bytes_total;
	const char **meta;    /* run meta + document meta */
	size_t cap_meta;
	int stop;             /* a callback asked to stop */
	char *confine_real;   /* opts->confine_root resolved once ("": could not
	                       * be, nothing is inside); NULL when not confined */
	fathom_ingest_opts own_opts;   /* the options read into the current
	                                * version, unset ones filled */
	struct gi_set *ignore;         /* the run's own ignore rules (opts.ignore,
	                                * else the index's), or NULL */
	fathom_ingest_stats own_stats; /* the counts, of the current version */
	fathom_ingest_stats *out_stats; /* the caller's, filled from own_stats as
	                                 * far as its version goes; or NULL */
	fathom_chunk_cb chunk_cb; /* set: fathom_chunk_paths, nothing is indexed */
	void *chunk_ctx;
	/* the pipeline */
	struct em_embedder *emb; /* embeds the chunks (NULL: none) */
	uint64_t emb_fp;
	uint64_t ext_fp;      /* vectors that came with the documents: their
	                       * fingerprint, once the first is met */
	uint32_t ext_dim;
	fa_pool *pool;
	text_analyzer **ans;  /* one per worker ([0] is fx->an without workers) */
	size_t n_ans;
	int own_ans;          /* ans[] were made for this run */
	ingest_batch *batches; /* the ring of slots */
	size_t window;
} ingest_run;

/* ---- interface to code in ingest.c ---------------------------------------- */

void ingest_skip(ingest_run *r, const char *path, int reason);
int ingest_progress(ingest_run *r, int force);
int ingest_check_meta(const char *kv);
int ingest_analyse_item(ingest_run *r, ingest_batch *b, ingest_item *it, text_analyzer *an);
int ingest_add_item(ingest_run *r, ingest_batch *b, ingest_item *it);
void ingest_item_clear(ingest_item *it);
void ingest_batch_reset(ingest_batch *b);
void ingest_batch_free(ingest_batch *b);
ingest_item *ingest_batch_push(ingest_batch *b, int kind);
int ingest_batch_full(const ingest_batch *b);
void ingest_item_fail(ingest_batch *b, ingest_item *it, int rc);
int ingest_item_error(const ingest_item *it);
int ingest_run_init(ingest_run *r, fathom_index *fx, const fathom_ingest_opts *opts,
                    fathom_ingest_stats *st);
int ingest_batch_init(ingest_run *r, ingest_batch *b);
int ingest_run_pipeline(ingest_run *r, const fa_pipeline *fns, void *ctx);
void ingest_run_free(ingest_run *r);

#endif /* FATHOM_INGEST_INT_H */
