/*
 * fathom.h — the one public header of libfathom.
 *
 * fathom is a search engine for documentation and code. An index is a
 * folder holding immutable segment files and a manifest that is replaced
 * atomically on commit. Every client (the CLI, the daemon, a program that
 * links libfathom) goes through the functions declared here; nothing outside
 * src/ knows how the index is laid out.
 *
 * Conventions (after libgit2):
 *  - Functions return int: FATHOM_OK (0) or a negative FATHOM_E* code.
 *    fathom_strerror() names a code; fathom_errmsg() gives the detail of the
 *    last error raised on the calling thread (which file, which byte, ...).
 *  - Output parameters come first.
 *  - Handles are opaque. What the library allocates, the caller releases
 *    with the matching *_free function (fathom_free for plain buffers).
 *    fathom_malloc/calloc/realloc/free are the library's allocator.
 *  - Every struct passed by pointer starts with `unsigned version` and only
 *    ever grows at its end; each has an *_INIT macro and an *_init(ptr,
 *    version) function (for callers that cannot use a C initializer), which
 *    returns FATHOM_EINVAL for a version this library does not take.
 *    Options structs (fathom_*_opts): the version says which fields the
 *    caller set. Output structs (fathom_ingest_stats, fathom_stats,
 *    fathom_grep_stats): the caller sets the version before the call, and
 *    the library fills exactly the fields of that version, refusing an
 *    unknown (newer) version with FATHOM_EINVAL. No array sized by a
 *    growing enum count sits in the middle of a struct.
 *  - Error codes are only appended. FATHOM_EINTERRUPTED: a callback asked
 *    to stop; FATHOM_ETIMEOUT: a time limit passed.
 *  - libfathom.so exports the functions declared here and nothing else
 *    (all named fathom_*; make test checks it).
 *  - The library never prints and never exits.
 *  - A fathom_index handle is used by one thread at a time (it keeps the
 *    working memory of searches for reuse). Threads that search in parallel
 *    open a handle each; the handles share the mapped files through the
 *    page cache. Results outlive the search that made them and may be read
 *    from any thread.
 */
#ifndef FATHOM_H
#define FATHOM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libfathom.so is built with -fvisibility=hidden: what this header
 * declares, and nothing else, is exported (zstd's ZSTDLIB_VISIBILITY). */
#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

#define FATHOM_VERSION_STRING "0.2.0"   /* 0.2: fathom_hit's new layout */

/* ---------------------------------------------------------------------------
 * Limits: the bounds the library enforces on options and inputs, published
 * so that clients (the CLI, the daemon, the MCP tool schemas) check and
 * describe them without restating them (after zstd's
 * ZSTD_cParam_getBounds). Values are only appended.
 */
enum fathom_limit_id {
	FATHOM_LIMIT_K = 1,              /* fathom_search_opts.k: results per search */
	FATHOM_LIMIT_QUERY_BYTES = 2,    /* the length of a query */
	FATHOM_LIMIT_SNIPPET_BYTES = 3,  /* fathom_search_opts.snippet_bytes (more is
	                                  * clamped to the maximum) */
	FATHOM_LIMIT_FIELD_WEIGHT = 4,   /* fathom_search_opts.field_weight[] */
	FATHOM_LIMIT_K1 = 5,             /* BM25 k1 */
	FATHOM_LIMIT_B = 6,              /* BM25 b */
	FATHOM_LIMIT_BONUS = 7,          /* phrase_bonus, prefix_bonus (multipliers) */
	FATHOM_LIMIT_TIME_LIMIT = 8,     /* fathom_search_opts.time_limit, seconds */
	FATHOM_LIMIT_CHUNK_TARGET = 9,   /* fathom_ingest_opts.chunk_target, bytes */
	FATHOM_LIMIT_CHUNK_MAX = 10,     /* chunk_max (also at least chunk_target) */
	FATHOM_LIMIT_CHUNK_OVERLAP = 11, /* chunk_overlap (also below chunk_target) */
	FATHOM_LIMIT_IDENT_MIN_LEN = 12, /* ident_min_len (0: the default) */
	FATHOM_LIMIT_IDENT_MAX = 13,     /* ident_max (0: the default) */
	FATHOM_LIMIT_META = 14,          /* n_meta: "key=value" tags per ingest */
	FATHOM_LIMIT_META_BYTES = 15,    /* the length of one "key=value" tag */
	FATHOM_LIMIT_GLOSSARY_TERMS = 16,/* terms in one glossary group */
	FATHOM_LIMIT_THREADS = 17        /* fathom_ingest_opts.threads (0: one per
	                                  * CPU; more are clamped to the maximum) */
};

/* The smallest and largest value the library accepts for one limit, each
 * exact (every bound is an integer below 2^53 or a plain decimal).
 * FATHOM_EINVAL for an unknown id. min or max may be NULL. */
int fathom_limit(int which, double *min, double *max);

/* ---------------------------------------------------------------------------
 * Errors. Values are never renumbered; retired codes stay as placeholders.
 */
enum fathom_error {
	FATHOM_OK = 0,
	FATHOM_ENOMEM = -1,     /* an allocation failed */
	FATHOM_EIO = -2,        /* the operating system refused a read/write */
	FATHOM_ECORRUPT = -3,   /* an index file failed a check (checksum, bounds) */
	FATHOM_EINVAL = -4,     /* a bad argument or option */
	FATHOM_ENOTFOUND = -5,  /* no such document, term or index */
	FATHOM_ELOCKED = -6,    /* another writer holds the index */
	FATHOM_ETOOBIG = -7,    /* an input exceeded a configured limit */
	FATHOM_EVERSION = -8,   /* index written by an unknown format version */
	FATHOM_ESYNTAX = -9,    /* a query or input that does not parse */
	FATHOM_EEXISTS = -10,   /* the thing to create exists already */
	FATHOM_EREADONLY = -11, /* a write on an index opened read-only */
	FATHOM_EINTERRUPTED = -12, /* a callback asked to stop */
	FATHOM_ETIMEOUT = -13   /* an operation ran past its time limit */
};

/* The name of an error code, e.g. "index file is corrupt". Never NULL. */
const char *fathom_strerror(int code);

/* The detail of the last error set on this thread ("" if none). The string
 * stays valid until the next fathom call on the same thread. */
const char *fathom_errmsg(void);

/* The library's allocator. What the library returns as a plain buffer
 * (fathom_get, ...) is released with fathom_free. A client may allocate
 * with these too, so that its allocations and the library's go through
 * one seam: the daemon does, and points jansson at them, so that the
 * library's allocation-failure tests reach it. fathom_malloc(0) returns a
 * pointer to free, not NULL. */
void *fathom_malloc(size_t n);
void *fathom_calloc(size_t count, size_t size);
void *fathom_realloc(void *p, size_t n);
void fathom_free(void *p);

/* ---------------------------------------------------------------------------
 * Fields. BM25F scores a chunk over these; enum values are only appended.
 */
enum fathom_field {
	FATHOM_FIELD_PATH = 0,     /* file name and path components */
	FATHOM_FIELD_TITLE = 1,    /* document title */
	FATHOM_FIELD_HEADINGS = 2, /* heading trail above the chunk */
	FATHOM_FIELD_TAGS = 3,     /* tags given at ingest */
	FATHOM_FIELD_BODY = 4,     /* the chunk text */
	FATHOM_NFIELDS = 5
};

/* "path", "title", ...; NULL for an unknown value. */
const char *fathom_field_name(int field);

/* ---------------------------------------------------------------------------
 * Opening an index.
 */
typedef struct fathom_index fathom_index;

enum fathom_open_flags {
	FATHOM_OPEN_READONLY = 0, /* search only; takes no lock */
	FATHOM_OPEN_WRITE = 1,    /* take the writer lock */
	FATHOM_OPEN_CREATE = 2,   /* create the folder if missing (implies WRITE) */
	FATHOM_OPEN_CONFINE = 4   /* read from disk (fathom_grep; fathom_get of a
	                           * file indexed for grep alone) nothing whose
	                           * real path lies outside the index's root
	                           * folder: a file a link leads out of it is
	                           * skipped (grep) or not found (get); none for
	                           * an index with no root recorded. For a
	                           * daemon serving that folder; fathom_index_paths
	                           * has fathom_ingest_opts.confine_root */
};

typedef struct fathom_open_opts {
	unsigned version;
	unsigned flags;          /* fathom_open_flags */
	const char *stem_language; /* on create: Snowball language, "none" to
	                            * disable; NULL means "english" */
} fathom_open_opts;

#define FATHOM_OPEN_OPTS_VERSION 1
#define FATHOM_OPEN_OPTS_INIT { FATHOM_OPEN_OPTS_VERSION, FATHOM_OPEN_READONLY, NULL }
int fathom_open_opts_init(fathom_open_opts *opts, unsigned version);

int fathom_open(fathom_index **out, const char *dir, const fathom_open_opts *opts);
void fathom_close(fathom_index *ix);

/* Move a read-only handle to the newest commit, if there is one: searches
 * from then on see it. Segment files it has open are kept, so this costs a
 * manifest read when nothing changed and little more when something did.
 * On an error the handle keeps the snapshot it had. *changed (may be NULL)
 * is 1 when it moved. A writer's handle is always current: a no-op. */
int fathom_refresh(fathom_index *ix, int *changed);

/* The commit number of the snapshot the handle sees. */
uint64_t fathom_generation(fathom_index *ix);

/* The absolute folder that relative document paths are under (where the
 * first `fathom index` of relative paths ran), or "" when none is known. */
const char *fathom_root(fathom_index *ix);

/* ---------------------------------------------------------------------------
 * Ingest. Documents are split into chunks; a chunk is the unit of retrieval.
 * Nothing is visible to searches, nor durable, before fathom_commit().
 */
/* Skip reasons are numbered 1 to 15: FATHOM_SKIP_SLOTS (16) is the fixed
 * length of fathom_ingest_stats.skipped_by_reason, a constant of the ABI,
 * not a count of this enum, so the array never changes size in the middle
 * of the struct. A reason numbered 16 or more would be counted in
 * files_skipped and in a field appended by a later version. */
#define FATHOM_SKIP_SLOTS 16

enum fathom_skip_reason {
	FATHOM_SKIP_VCS = 1,       /* .git, .hg, .svn, ... */
	FATHOM_SKIP_IGNORED = 2,   /* matched a .gitignore rule */
	FATHOM_SKIP_BINARY = 3,    /* looks binary */
	FATHOM_SKIP_TOO_BIG = 4,   /* over max_file_size */
	FATHOM_SKIP_SYMLINK_LOOP = 5, /* a link back into a folder being walked */
	FATHOM_SKIP_UNREADABLE = 6,/* open/read failed */
	FATHOM_SKIP_SPECIAL = 7,   /* device, socket, fifo */
	FATHOM_SKIP_BAD_UTF8 = 8,  /* too much invalid UTF-8 to be text */
	FATHOM_SKIP_BAD_RECORD = 9,/* a JSON line that does not parse; the path
	                            * given to the callback is "FILE:LINE: why" */
	FATHOM_SKIP_TOO_DEEP = 10, /* folder nesting over the depth limit */
	FATHOM_SKIP_OUTSIDE_ROOT = 11, /* its real path (links resolved) lies outside
	                            * fathom_ingest_opts.confine_root */
	FATHOM_SKIP_BAD_GZIP = 12  /* a .gz file that does not decompress (not
	                            * gzip, truncated, corrupt) */
};

const char *fathom_skip_reason_name(int reason);

/* An output struct: the caller sets version (FATHOM_INGEST_STATS_INIT or
 * fathom_ingest_stats_init); the library fills the fields of that version. */
typedef struct fathom_ingest_stats {
	unsigned version;
	uint64_t files_seen;       /* regular files considered */
	uint64_t files_indexed;    /* new or changed, (re)indexed */
	uint64_t files_unchanged;  /* skipped: same size+mtime or same hash */
	uint64_t files_deleted;    /* gone from disk, removed from the index */
	uint64_t files_skipped;    /* see skipped_by_reason */
	uint64_t skipped_by_reason[FATHOM_SKIP_SLOTS]; /* by fathom_skip_reason */
	uint64_t docs_added;       /* documents added or replaced */
	uint64_t chunks_added;
	uint64_t bytes_read;
	uint64_t invalid_utf8;     /* invalid sequences repaired */
	double elapsed_sec;
	uint64_t files_grep_only;  /* indexed for fathom grep alone (over
	                            * max_file_size, or grep_only) */
} fathom_ingest_stats;

#define FATHOM_INGEST_STATS_VERSION 1
#define FATHOM_INGEST_STATS_INIT { FATHOM_INGEST_STATS_VERSION, 0, 0, 0, 0, 0, { 0 }, 0, 0, 0, 0, \
	0.0, 0 }
int fathom_ingest_stats_init(fathom_ingest_stats *st, unsigned version);

/* Progress for long runs: called at most a few times a second. Return
 * non-zero to stop (the call then returns FATHOM_EINTERRUPTED, nothing is
 * committed). eta_sec < 0 when unknown. st is the library's own, of
 * FATHOM_INGEST_STATS_VERSION as the library was built (st->version says). */
typedef int (*fathom_progress_cb)(void *ctx, const fathom_ingest_stats *st,
                                  uint64_t bytes_total, double eta_sec);

/* Called once per skipped file or folder. */
typedef void (*fathom_skip_cb)(void *ctx, const char *path, int reason);

typedef struct fathom_ingest_opts {
	unsigned version;
	uint64_t max_file_size;    /* bytes; larger files are skipped (default 4 MiB) */
	uint32_t chunk_target;     /* target chunk size in bytes (default 1500) */
	uint32_t chunk_overlap;    /* bytes carried from the previous chunk (default 0) */
	uint32_t chunk_max;        /* hard cap per chunk (default 6000) */
	const char *const *meta;   /* "key=value" strings tagging every document */
	size_t n_meta;
	int follow_symlinks;       /* follow links (loops are detected); default 1 */
	int use_gitignore;         /* honour .gitignore files; default 1 */
	int remove_missing;        /* index_paths: drop docs under the given roots
	                            * that no longer exist; default 1 */
	fathom_progress_cb progress;
	fathom_skip_cb on_skip;
	void *cb_ctx;
	/* version 2: exact identifiers (TC-1001, v2.0.1, AuthService...) kept
	 * per chunk in the identifier vocabulary */
	uint32_t ident_min_len;    /* shortest spelling (default 3) */
	uint32_t ident_max;        /* at most this many per chunk (default 50; 0 = default) */
	/* version 3: fathom grep. Files go in the trigram index with their
	 * full-text indexing; a file over max_file_size (up to
	 * grep_max_file_size) goes in the trigram index alone. */
	uint64_t grep_max_file_size; /* default 256 MiB; 0: no file over max_file_size */
	int grep_only;             /* every file for grep alone: the trigram index
	                            * and file table, no full text (fast, small) */
	/* version 4: threads that read, chunk and analyse batches of documents
	 * while the calling thread writes (0: one per CPU, the default; 1: the
	 * calling thread alone). The index is the same whatever the count. The
	 * document store's frames are compressed on one thread per CPU. */
	unsigned threads;
	/* version 5: a folder nothing indexed may lie outside. A path given,
	 * or a link met in the walk (to a file or a folder, or a link in a
	 * given path), whose real path is not this folder or under it is
	 * skipped (FATHOM_SKIP_OUTSIDE_ROOT) and never read. NULL: none (the
	 * default; links are followed wherever they lead). A daemon serving a
	 * folder sets it to that folder. */
	const char *confine_root;
	/* version 6: the index's settings (fathom_config_get) fill what the
	 * caller leaves unset. max_file_size and grep_max_file_size at
	 * FATHOM_UNSET_SIZE (their _INIT value) take the index's "max-size"
	 * and "grep-max-size", else 4 MiB and 256 MiB; an explicit value wins
	 * for this call. An older version's values are taken as given, and
	 * the index's settings do not apply. */
	const char *ignore;        /* more ignore rules, .gitignore lines ('\n'
	                            * between them) matched as if in a
	                            * .gitignore in each folder given to
	                            * fathom_index_paths, below every ignore file
	                            * of the tree (applied only with
	                            * use_gitignore). NULL (the default): the
	                            * index's "ignore" setting; "": none */
} fathom_ingest_opts;

/* An unset size in fathom_ingest_opts (version 6): the index's setting. */
#define FATHOM_UNSET_SIZE UINT64_MAX

#define FATHOM_INGEST_OPTS_VERSION 6   /* versions 1 to 5 are accepted */
#define FATHOM_INGEST_OPTS_INIT { FATHOM_INGEST_OPTS_VERSION, FATHOM_UNSET_SIZE, 1500, 0, 6000, \
	NULL, 0, 1, 1, 1, NULL, NULL, NULL, 3, 50, FATHOM_UNSET_SIZE, 0, 0, NULL, NULL }
int fathom_ingest_opts_init(fathom_ingest_opts *opts, unsigned version);

/* Walk files and folders and index what changed since the last run.
 * Document keys are the paths as given, relative paths staying relative to
 * the index's root folder: the folder the first indexing of relative paths
 * ran in (recorded in the index). Run from elsewhere, relative paths are
 * rebased onto it (from a subfolder "x" is "sub/x"; from outside it they
 * become absolute), so one file always has one key. */
int fathom_index_paths(fathom_index *ix, const char *const *paths, size_t n_paths,
                       const fathom_ingest_opts *opts, fathom_ingest_stats *stats);

/* Read JSON lines (one object per line: id or _id, title, body or text, url,
 * tags, and any other string members as metadata). path "-" reads stdin. */
int fathom_add_jsonl(fathom_index *ix, const char *path,
                     const fathom_ingest_opts *opts, fathom_ingest_stats *stats);
/* The same from memory (an HTTP body): name is what skip messages call it
 * ("<request>:LINE: why"). */
int fathom_add_jsonl_mem(fathom_index *ix, const char *data, size_t len, const char *name,
                         const fathom_ingest_opts *opts, fathom_ingest_stats *stats);

/* One document given in full. Replaces a document with the same id. */
typedef struct fathom_doc {
	const char *id;            /* required; unique key */
	const char *title;         /* may be NULL */
	const char *body;          /* may be NULL */
	size_t body_len;
	const char *url;           /* may be NULL */
	const char *const *tags;
	size_t n_tags;
	const char *const *meta;   /* "key=value" */
	size_t n_meta;
	const char *path;          /* source path or NULL; sets kind/lang */
} fathom_doc;

int fathom_add_doc(fathom_index *ix, const fathom_doc *doc, const fathom_ingest_opts *opts);

/* Chunk files without indexing them (same walk, skip rules and chunker as
 * fathom_index_paths), e.g. to feed other engines or an embedder the exact
 * chunks fathom indexes. text is the chunk's bytes, valid during the call. */
typedef struct fathom_chunk_info {
	const char *path;
	const char *title;
	const char *lang;
	uint32_t order;
	uint32_t line_start, line_end;
	uint64_t byte_start, byte_end;
	const char *headings;      /* "A > B" or "" */
	const char *text;
	size_t len;
} fathom_chunk_info;

typedef int (*fathom_chunk_cb)(void *ctx, const fathom_chunk_info *c);

int fathom_chunk_paths(const char *const *paths, size_t n_paths,
                       const fathom_ingest_opts *opts, fathom_chunk_cb cb, void *ctx);

/* Is name (a folder's name, not a path) one fathom_index_paths never
 * enters: a version-control folder (.git, .hg, .svn, ...)? For a watcher
 * that must skip what the walker skips. 1 or 0. */
int fathom_skips_folder(const char *name);

/* Tombstone a document (all its chunks). FATHOM_ENOTFOUND if absent. */
int fathom_delete_doc(fathom_index *ix, const char *id);

/* Make everything added or deleted since the last commit durable and
 * visible, atomically. Small segments may be merged. */
int fathom_commit(fathom_index *ix);

/* Drop uncommitted changes. */
int fathom_rollback(fathom_index *ix);

/* Progress of the long steps a commit or an optimize may take: the corpus
 * embedder's training over every chunk ("counting words",
 * "co-occurrences", "factorising"), then the chunks a merge embeds
 * ("embedding"). done of total are chunks ("factorising": 0 of 1, then 1
 * of 1). Called on the committing thread, at each step's start and end and
 * at most five times a second between. It cannot stop a step: a commit is
 * atomic, and a process killed during one leaves the commit before. NULL:
 * none (the default). The handle keeps cb and ctx until changed. */
typedef void (*fathom_step_cb)(void *ctx, const char *step, uint64_t done, uint64_t total);
void fathom_set_step_progress(fathom_index *ix, fathom_step_cb cb, void *ctx);

/* Commit, then merge every segment into one and drop deleted documents for
 * good: a smaller index (each term stored once) and the fastest queries.
 * It rewrites the whole index, so it takes about as long as a fresh build;
 * the index stays readable meanwhile and the swap is atomic. */
int fathom_optimize(fathom_index *ix);

/* ---------------------------------------------------------------------------
 * Search.
 */
enum fathom_match {
	FATHOM_MATCH_DEFAULT = -1, /* fathom_search_opts version 5: the index's
	                        * "match" setting, else AUTO */
	FATHOM_MATCH_AUTO = 0, /* ranked (any word may match); a short keyword
	                        * query's chunks earn a bonus for holding more
	                        * of its words; operators require them */
	FATHOM_MATCH_ALL = 1,  /* every term required */
	FATHOM_MATCH_ANY = 2   /* ranked disjunction */
};

/* The default weight of each field (enum fathom_field order), for a caller
 * that changes some: float w[FATHOM_NFIELDS] = FATHOM_FIELD_WEIGHTS_INIT; */
#define FATHOM_FIELD_WEIGHTS_INIT { 3.0f, 2.5f, 2.0f, 2.0f, 1.0f }

typedef struct fathom_search_opts {
	unsigned version;
	uint32_t k;                    /* results wanted (default 10) */
	int match;                     /* fathom_match */
	float k1, b;                   /* BM25 parameters */
	float phrase_bonus;            /* multiplier when query terms are adjacent in order */
	float prefix_bonus;            /* multiplier when a title/path/heading starts with the query */
	const char *const *filters;    /* "key=value" metadata filters (AND) */
	size_t n_filters;
	const char *path_glob;         /* fnmatch(3) pattern over document paths */
	const char *lang;              /* language of source files: "c", "python", ... */
	int exhaustive;                /* score every candidate: the slow reference */
	uint32_t snippet_bytes;        /* target snippet length (default 240) */
	/* version 2 */
	double time_limit;             /* seconds; past it the search stops and
	                                * fails with FATHOM_ETIMEOUT (no partial
	                                * answer; FATHOM_EINTERRUPTED for callers
	                                * of versions 1 and 2, which predate
	                                * it). 0: none (default) */
	/* version 3: the field weights by pointer, so that a new field changes
	 * no layout (versions 1 and 2 held an array of FATHOM_NFIELDS here,
	 * after match) */
	const float *field_weights;    /* BM25F weight of each field, indexed by
	                                * enum fathom_field, each in [0, 1000];
	                                * NULL: FATHOM_FIELD_WEIGHTS_INIT */
	size_t n_field_weights;        /* entries in field_weights; fields past
	                                * them keep their default; more than
	                                * FATHOM_NFIELDS is FATHOM_EINVAL */
	/* version 4 */
	int strict;                    /* 1: a query that is not well formed
	                                * fails with FATHOM_EINVAL and its
	                                * column (an unclosed '(' or quote, a
	                                * lone OR ...). 0 (default): it is read
	                                * literally, as raw text, and the
	                                * receipt says what was
	                                * (fathom_results_literal) */
	/* version 6: vectors (docs/QUERY.md, "Retrieval modes") */
	int mode;                      /* enum fathom_mode */
	int fusion;                    /* enum fathom_fusion */
	float alpha;                   /* convex and rrf-weighted: the keyword
	                                * list's weight in [0, 1] (the vector
	                                * list's is 1 - alpha); below 0: unset */
	float min_similarity;          /* vector-only hits below this cosine are
	                                * dropped, in [0, 1]; below 0: unset */
	const float *query_vector;     /* the query's embedding (scaled to unit
	                                * length here), for an index whose vectors
	                                * came with the documents; NULL: the
	                                * query text is embedded by the index's
	                                * embedder */
	uint32_t query_vector_dim;
} fathom_search_opts;

/* Retrieval modes (fathom_search_opts.mode). */
enum fathom_mode {
	FATHOM_MODE_DEFAULT = -1, /* unset: the index's "mode" setting; else hybrid
	                           * when the index has an embedder, keyword
	                           * when not */
	FATHOM_MODE_KEYWORD = 0,  /* full text alone */
	FATHOM_MODE_SEMANTIC = 1, /* the query's nearest neighbours alone */
	FATHOM_MODE_HYBRID = 2,   /* both, over-fetching, fused */
	FATHOM_MODE_STRICT = 3    /* full text finds, vectors only reorder what it
	                           * found; nothing found is an empty answer */
};
/* Fusion of the keyword and vector lists (fathom_search_opts.fusion). */
enum fathom_fusion {
	FATHOM_FUSION_DEFAULT = -1,   /* unset: the index's "fusion" setting, else the
	                               * embedder's measured default */
	FATHOM_FUSION_RRF = 0,        /* sum of 1 / (60 + rank) */
	FATHOM_FUSION_CONVEX = 1,     /* alpha * kw' + (1 - alpha) * cos', each
	                               * score min-max normalised over its list */
	FATHOM_FUSION_RRF_WEIGHTED = 2 /* alpha / (60 + kw rank) + (1 - alpha) /
	                               * (60 + vector rank) */
};
/* "keyword", "semantic", "hybrid", "strict"; NULL for another value. */
const char *fathom_mode_name(int mode);
/* "rrf", "convex", "rrf-weighted"; NULL for another value. */
const char *fathom_fusion_name(int fusion);

/* Version 5 has version 4's layout; what changed is that a field left at
 * its _INIT value is unset, and takes the index's setting (fathom_config_get)
 * or, where the index sets none, the built-in default (in brackets): k 0
 * (k, 10), match FATHOM_MATCH_DEFAULT (match, auto), k1 and b below 0 (k1,
 * 1.5; b, 0.9), snippet_bytes FATHOM_UNSET_SNIPPET (snippet-bytes, 240),
 * field_weights NULL or an entry below 0 (weight.FIELD, as
 * FATHOM_FIELD_WEIGHTS_INIT). A value the caller sets wins for this search.
 * Versions 1 to 4 are accepted too (1 and 2 held the weights inline); their
 * values are taken as given, and the index's settings do not apply.
 * Version 6 adds mode, fusion, alpha, min_similarity and the query vector
 * (unset: FATHOM_MODE_DEFAULT, FATHOM_FUSION_DEFAULT, below 0, NULL); a
 * version 5 caller gets them unset. */
#define FATHOM_UNSET_SNIPPET UINT32_MAX
#define FATHOM_SEARCH_OPTS_VERSION 6
#define FATHOM_SEARCH_OPTS_INIT { FATHOM_SEARCH_OPTS_VERSION, 0, FATHOM_MATCH_DEFAULT, \
	-1.0f, -1.0f, 1.25f, 1.15f, NULL, 0, NULL, NULL, 0, FATHOM_UNSET_SNIPPET, 0, NULL, 0, 0, \
	FATHOM_MODE_DEFAULT, FATHOM_FUSION_DEFAULT, -1.0f, -1.0f, NULL, 0 }
int fathom_search_opts_init(fathom_search_opts *opts, unsigned version);

/* The retrieval sources and ranking stages a hit can owe its place to.
 * Values are only appended. */
enum fathom_source {
	FATHOM_SOURCE_KEYWORD = 0, /* BM25F over the fields (fathom_search) */
	FATHOM_SOURCE_GREP = 1,    /* lines matching a pattern (fathom_grep_chunks);
	                            * its score is the chunk's number of them */
	FATHOM_SOURCE_VECTOR = 2,  /* nearest neighbours of the query's embedding;
	                            * its score is the cosine */
	FATHOM_SOURCE_FUSED = 3,   /* the fusion of several sources (one source
	                            * alone is not fused) */
	FATHOM_SOURCE_RERANK = 4,  /* a reranker's score */
	FATHOM_SOURCE_IDENT = 5    /* a chunk holding the query's exact
	                            * identifiers (identifier lookups); its score
	                            * is the keyword score, 0 where full text
	                            * did not rank it */
};

/* "keyword", "grep", "vector", "fused", "rerank", "ident"; NULL for an
 * unknown value. */
const char *fathom_source_name(int source);

/* One source's (or stage's) part in a hit. */
typedef struct fathom_source_score {
	int source;                /* enum fathom_source */
	uint32_t rank;             /* 1-based rank in that source's own list */
	double score;              /* that source's own score */
} fathom_source_score;

typedef struct fathom_span { uint32_t start, len; } fathom_span;

typedef struct fathom_hit {
	uint64_t chunk_id;          /* stable until the next merge; for `get` */
	const char *doc_id;         /* document key: path or JSONL id */
	const char *path;           /* source path, or "" */
	const char *title;
	const char *url;            /* or "" */
	uint32_t chunk_order;       /* position of the chunk in its document */
	uint32_t line_start, line_end; /* 1-based, inclusive */
	uint64_t byte_start, byte_end; /* in the document */
	double score;               /* what the hit is ranked by: the score of
	                             * the last entry of sources (the keyword
	                             * score for fathom_search, the number of
	                             * matching lines for fathom_grep_chunks) */
	/* Every source that found the chunk, and every later stage that ranked
	 * it, in pipeline order (retrieval sources, then fused, then rerank),
	 * each with its own score and rank: at least one entry. */
	const fathom_source_score *sources;
	uint32_t n_sources;
	/* The keyword receipt, when the keyword source found the chunk (else
	 * n_fields is 0 and the arrays are NULL). Each array has n_fields
	 * entries, indexed by enum fathom_field; a caller built against fewer
	 * fields reads the first ones. */
	uint32_t n_fields;
	const double *field_score;  /* each field's part of the BM25F sum */
	const uint32_t *n_matched;  /* matched query terms in each field, */
	const char *const *const *matched; /* each a NUL-terminated analysed term */
	double bonus;               /* product of the phrase/prefix multipliers
	                             * (1: none, and for hits without a keyword
	                             * receipt) */
	const char *snippet;        /* plain text, one line breaks kept */
	const fathom_span *highlights; /* byte ranges of matches inside snippet */
	uint32_t n_highlights;
	/* The lines of the document where query terms occur in the chunk's
	 * text (distinct, ascending, at most 64); none without a snippet. */
	const uint32_t *match_lines;
	uint32_t n_match_lines;
	/* 1 when the document's file changed on disk since it was indexed (or
	 * is gone), by the rule fathom_grep marks changed files with: the
	 * snippet and lines are the indexed copy's. Checked (one stat) only
	 * for hits with a snippet: 0 when snippet_bytes is 0 */
	int stale;
	/* The words of the query's top level (as typed) that the chunk lacks,
	 * each once, in query order: under the default matching mode a hit
	 * need not hold every word. Part of the keyword receipt (n_missing 0
	 * without one). */
	const char *const *missing;
	uint32_t n_missing;
} fathom_hit;

/* The entry of sources for source, or NULL when it did not rank the hit. */
const fathom_source_score *fathom_hit_source(const fathom_hit *h, int source);

typedef struct fathom_results fathom_results;

/* Run a query. A query that matches nothing gives a result set of size 0
 * (not an error). */
int fathom_search(fathom_results **out, fathom_index *ix, const char *query,
                  const fathom_search_opts *opts);
size_t fathom_results_count(const fathom_results *r);
const fathom_hit *fathom_results_hit(const fathom_results *r, size_t i);
/* Candidates considered and fully scored (to show pruning at work). */
uint64_t fathom_results_scored(const fathom_results *r);
/* The terms the query was analysed into, for receipts. */
size_t fathom_results_nterms(const fathom_results *r);
const char *fathom_results_term(const fathom_results *r, size_t i, int *required);
/* The query as fathom understood it, in a canonical form:
 * (AND word (OR a b) (NOT c) "a phrase" title:word prefix*) then filters as
 * key=value. docs/QUERY.md describes it. */
const char *fathom_results_parsed(const fathom_results *r);
/* When the answer is empty, why, in words: which term occurs in no
 * document, which filter matches none, or which terms never meet in one
 * chunk ("\"kubernetes\" occurs in no document"). "" when there are hits. */
const char *fathom_results_why(const fathom_results *r);
/* What a lenient parse (fathom_search_opts.strict 0) read literally
 * because as the dialect it was not well formed: "unclosed '(' at column
 * 17; OR with no term after it at column 30". "" when nothing was. */
const char *fathom_results_literal(const fathom_results *r);

/* The filters that applied, before ranking, from the options and the
 * query: "library=fastapi version=0.110 lang=c path=GLOB" ("" for none). */
const char *fathom_results_filters(const fathom_results *r);

/* Is term i only in negated parts of the query (looked up, never scored)? */
int fathom_results_term_negated(const fathom_results *r, size_t i);

/* The query's shape, as the route stage reads it (docs/QUERY.md, "The
 * router"): a heuristic of its words, with no model. Values are only
 * appended. */
enum fathom_shape {
	FATHOM_SHAPE_KEYWORDS = 0,   /* a few words, no stop word: a keyword list */
	FATHOM_SHAPE_QUESTION = 1,   /* natural language: a question, a claim */
	FATHOM_SHAPE_IDENTIFIER = 2, /* exact identifiers, at most one other word */
	FATHOM_SHAPE_COMPARISON = 3  /* "A vs B", "difference between A and B" */
};
/* "keywords", "question", "identifier", "comparison"; NULL when unknown. */
const char *fathom_shape_name(int shape);

/* What the route stage decided, and what retrieval then did: the receipt
 * of how a query was searched. */
typedef struct fathom_route_receipt {
	int shape;              /* enum fathom_shape */
	int mode_asked;         /* the mode resolved from the options and the
	                         * index's settings (enum fathom_mode) */
	int mode;               /* the mode searched, after the route */
	int fusion;             /* enum fathom_fusion when lists were fused,
	                         * else -1 */
	double alpha;           /* the keyword list's weight (convex and
	                         * rrf-weighted fusion) */
	uint32_t k;             /* hits presented at most */
	uint32_t fetch;         /* candidates each retrieval source fetched */
	uint32_t sources;       /* bit 1 << FATHOM_SOURCE_x of each source that
	                         * ran (found something or not) */
	const char *embedder;   /* the query's embedder ("corpus", ...), "" */
	uint64_t vector_scored; /* vectors the vector source scored one by one
	                         * (the exact path; a graph's walk not counted) */
	uint32_t vector_graphs; /* segments it searched by their HNSW graph
	                         * (approximate; the others exactly) */
	uint64_t vector_missing; /* chunks it could not score: no vector, or
	                          * another embedder's */
} fathom_route_receipt;
/* The route receipt of a result set (never NULL for one fathom_search
 * made; NULL for r NULL). */
const fathom_route_receipt *fathom_results_route(const fathom_results *r);

/* The exact identifiers found in the query (TC-1001, v2.0.1, AuthService,
 * handle_login(), ...). An identifier the index holds is a hard filter: only
 * chunks holding it, in any spelling, are candidates. One it holds nowhere
 * is dropped (applied = 0), and the receipt says so. */
typedef struct fathom_ident_receipt {
	const char *text;       /* as written in the query */
	const char *key;        /* canonical: case and delimiters folded */
	const char *category;   /* testcase, ticket, version, class, function, model, error */
	int applied;            /* 1: filtered on it; 0: it occurs nowhere, dropped */
	uint64_t chunks;        /* chunks holding it in the index */
} fathom_ident_receipt;

size_t fathom_results_nidents(const fathom_results *r);
const fathom_ident_receipt *fathom_results_ident(const fathom_results *r, size_t i);

/* The glossary groups that fired: words of the query read as any of their
 * aliases ("auth" as auth | authentication | "sign in"). */
typedef struct fathom_expansion {
	const char *text;              /* the words as written */
	uint32_t group;                /* the glossary group's id */
	const char *const *aliases;    /* its members, the words' own form included */
	size_t n_aliases;
} fathom_expansion;

size_t fathom_results_nexpansions(const fathom_results *r);
const fathom_expansion *fathom_results_expansion(const fathom_results *r, size_t i);

/* ---------------------------------------------------------------------------
 * Results as JSON: the one serializer behind `fathom search --json`,
 * POST /search and the MCP search tool, so the same query with the same
 * options gives the same objects on all three. One compact object (no
 * trailing newline):
 *
 *   {"query": ..., "count": N, "why": ... (only when N is 0),
 *    "results": [{"rank", "id", "chunk_id", "chunk", "path", "title", "url",
 *                 "lines": [first, last], "bytes": [start, end], "score",
 *                 "score_parts": {"path", "title", "headings", "tags", "body",
 *                                 "bonus"},
 *                 "sources": [{"source", "score", "rank"}],
 *                 "matched": {FIELD: [terms]}, "snippet",
 *                 "highlights": [[start, len]], "match_lines": [...],
 *                 "changed_since_indexing": true (only when the hit is stale)}],
 *    "receipt": {"parsed", "filters",
 *                "terms": [{"term", "required", "negated"}],
 *                "identifiers": [{"text", "key", "category", "filter", "chunks"}],
 *                "glossary": [{"text", "group", "aliases"}]}}
 *
 * docs/QUERY.md describes each member; members are only ever added.
 * Invalid UTF-8 in a string becomes U+FFFD. *out is NUL-terminated and
 * freed with fathom_free; len may be NULL.
 */
typedef struct fathom_json_opts {
	unsigned version;
	const char *query;             /* echoed as "query"; NULL: no "query" member */
} fathom_json_opts;

#define FATHOM_JSON_OPTS_VERSION 1
#define FATHOM_JSON_OPTS_INIT { FATHOM_JSON_OPTS_VERSION, NULL }
int fathom_json_opts_init(fathom_json_opts *opts, unsigned version);

int fathom_results_json(char **out, size_t *len, const fathom_results *r,
                        const fathom_json_opts *opts);

/* ---------------------------------------------------------------------------
 * Grep: literal and regex search over the files of the index, line by line,
 * with the trigram index choosing which files to read.
 */
typedef struct fathom_grep_opts {
	unsigned version;
	int literal;              /* -F: the pattern is a string; its lines are alternatives */
	int caseless;             /* -i */
	int word;                 /* -w: matches bounded by non-word characters */
	const char *glob;         /* only paths matching this fnmatch pattern (or base name) */
	const char *lang;         /* only files of this language */
	const char *const *prefixes; /* only paths under one of these (NULL: all) */
	size_t n_prefixes;
	uint32_t max_count;       /* stop a file after this many matching lines (0: all) */
	/* version 2 */
	int files_only;           /* -l: stop each file at its first matching line
	                           * (n_lines 1, text NULL) */
	int count_only;           /* -c: count every matching line (text NULL) */
	int boolean;              /* the pattern is a boolean query: `error AND
	                           * handler`, `file:auth.c lang:c -test`
	                           * (docs/QUERY.md) */
	int no_fresh_check;       /* trust the index: read only the files it lists,
	                           * without checking every other file for changes
	                           * made since indexing (faster; may miss them) */
	uint32_t threads;         /* worker threads; 0: one per CPU (at most 16) */
	/* version 3 */
	void (*on_skip)(void *ctx, const char *path, const char *why);
	                          /* a file there but not searched (unreadable, a
	                           * read error, over 1 GiB), from the calling
	                           * thread in path order; NULL: counted in
	                           * stats->skipped alone */
	void *skip_ctx;
} fathom_grep_opts;

#define FATHOM_GREP_OPTS_VERSION 3
#define FATHOM_GREP_OPTS_INIT { FATHOM_GREP_OPTS_VERSION, 0, 0, 0, NULL, NULL, NULL, 0, 0, \
	0, 0, 0, 0, 0, NULL, NULL }
int fathom_grep_opts_init(fathom_grep_opts *opts, unsigned version);

typedef struct fathom_grep_line {
	uint32_t line;            /* 1-based */
	uint64_t start, end;      /* the line's bytes in text (no newline) */
	uint64_t match_start, match_end; /* the first match in it */
} fathom_grep_line;

typedef struct fathom_grep_file {
	const char *doc_id;
	const char *path;         /* as a shell in the current folder names it:
	                           * relative to it when the file is under it,
	                           * else absolute */
	const char *text;         /* the file as it is on disk now; NULL with
	                           * files_only and count_only */
	size_t len;
	const fathom_grep_line *lines; /* the matching lines, in order (none for a
	                           * boolean query of file: and lang: alone) */
	size_t n_lines;
	int fresh_from_disk;      /* 1 when the file changed since indexing */
} fathom_grep_file;

typedef int (*fathom_grep_cb)(void *ctx, const fathom_grep_file *f);

/* An output struct, like fathom_ingest_stats: the caller sets version. */
typedef struct fathom_grep_stats {
	unsigned version;
	uint64_t files;           /* indexed files in scope (paths, glob, lang) */
	uint64_t candidates;      /* files read: those the trigram index left, and
	                           * those changed since indexing */
	uint64_t matched;         /* files with a matching line */
	int planned;              /* 1 when trigrams narrowed the search */
	uint64_t changed;         /* files changed on disk since indexing */
	uint64_t missing;         /* indexed files gone from disk (skipped) */
	uint64_t skipped;         /* files there but not searched (opts.on_skip) */
	uint64_t bytes_read;
	uint64_t lines;           /* matching lines reported */
	uint32_t threads;         /* worker threads used */
} fathom_grep_stats;

#define FATHOM_GREP_STATS_VERSION 1
#define FATHOM_GREP_STATS_INIT { FATHOM_GREP_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
int fathom_grep_stats_init(fathom_grep_stats *st, unsigned version);

/* Search every indexed file (documents from `fathom index`, not JSON lines)
 * for pattern, line by line as grep does, calling cb once per matching file
 * in index (path) order, from the calling thread. Files are read from disk
 * as they are now: those the trigram index cannot rule out, and every file
 * whose size or mtime changed since indexing. A bad pattern is
 * FATHOM_EINVAL (FATHOM_ESYNTAX for a boolean query) naming the column. A
 * pattern too costly to match (catastrophic backtracking) fails with
 * FATHOM_ETOOBIG rather than run unbounded. cb returning non-zero stops the
 * search (FATHOM_EINTERRUPTED). stats may be NULL. */
int fathom_grep(fathom_index *ix, const char *pattern, const fathom_grep_opts *opts,
                fathom_grep_cb cb, void *ctx, fathom_grep_stats *stats);

/* fathom grep as a retrieval source for hybrid queries: the chunks holding
 * a line that matches pattern, the chunks with the most matching lines
 * first (then index order), at most k (0: 100), as a result set read with
 * the fathom_results_* functions. A hit has its chunk's id, path and
 * lines; its one source is FATHOM_SOURCE_GREP, whose score (and the hit's)
 * is its number of matching lines; it has no keyword receipt (n_fields 0);
 * match_lines are those lines (up to 64), and the snippet the first of
 * them with the match highlighted. Files indexed for grep alone have no
 * chunks and give no hit. fathom_results_parsed() is the trigram plan. */
int fathom_grep_chunks(fathom_results **out, fathom_index *ix, const char *pattern,
                       const fathom_grep_opts *opts, uint32_t k);

/* The trigram query a pattern is planned into ("(and \"abc\" \"bcd\")",
 * "ALL" when no trigram can be required), and for a boolean query the
 * expression as parsed, for --explain. *out is freed with fathom_free. */
int fathom_grep_explain(char **out, const char *pattern, const fathom_grep_opts *opts);

/* A pattern compiled as fathom_grep compiles it (literal, caseless, word;
 * not a boolean query), for the matches within one line that fathom_grep
 * does not report: every match of a line (grep -o, --json submatches),
 * or whether a line matches at all (grep -v, -L). */
typedef struct fathom_grep_matcher fathom_grep_matcher;
int fathom_grep_matcher_new(fathom_grep_matcher **out, const char *pattern,
                            const fathom_grep_opts *opts);
/* The first match in text[0, len) starting at or after from: 1 found
 * (*start, *end: byte offsets in text), 0 none, < 0 an error (a hostile
 * pattern past PCRE2's limits: FATHOM_ETOOBIG). */
int fathom_grep_matcher_next(fathom_grep_matcher *m, const char *text, size_t len, size_t from,
                             size_t *start, size_t *end);
void fathom_grep_matcher_free(fathom_grep_matcher *m);

/* ---------------------------------------------------------------------------
 * The glossary: curated alias groups (auth = authentication = sign-in) that
 * expand query words, names protected from it, and a queue of groups
 * proposed from the corpus. Changes take effect at the next fathom_commit,
 * atomically with everything else in that commit.
 */
typedef struct fathom_gloss_item {
	const char *kind;            /* "group", "protected" or "candidate" */
	uint32_t id;
	const char *const *terms;    /* normalised: NFKC, case folded, hyphens and
	                              * runs of space as one space */
	size_t n_terms;
	const char *status;          /* candidates: "pending", "approved", "rejected" */
	const char *source;          /* candidates: "acronym", "variant" or
	                              * "neighbour" (the corpus embedder) */
	const char *evidence;        /* candidates: where it was first seen */
	uint64_t count;              /* candidates: times seen */
} fathom_gloss_item;

typedef int (*fathom_gloss_cb)(void *ctx, const fathom_gloss_item *it);

/* Make terms one group (merged with any group already holding one of them).
 * A protected term (an all-caps acronym, a code identifier, a name marked
 * protected) is refused with FATHOM_EINVAL naming it and why. */
int fathom_glossary_add(fathom_index *ix, const char *const *terms, size_t n, uint32_t *group);
/* Remove a group by id, or one term from its group. */
int fathom_glossary_remove(fathom_index *ix, const char *id_or_term);
/* Mark a name protected (on = 1) or not: it never joins a group and a query
 * never expands it. */
int fathom_glossary_protect(fathom_index *ix, const char *name, int on);
/* Items of a kind ("group", "protected", "candidate", or "pending" for the
 * candidates still waiting), or all with NULL. */
int fathom_glossary_list(fathom_index *ix, const char *kind, fathom_gloss_cb cb, void *ctx);
/* Scan the corpus for candidate groups: acronym definitions ("Transport
 * Layer Security (TLS)") and spelling variants (sign-in / signin). A set of
 * terms already grouped, queued or rejected is never proposed again. */
int fathom_glossary_propose(fathom_index *ix, size_t *proposed);
/* Approve (approve = 1: the candidate becomes a group) or reject it (it is
 * remembered, and never proposed again). */
int fathom_glossary_decide(fathom_index *ix, uint32_t candidate, int approve);

/* ---------------------------------------------------------------------------
 * The identifier vocabulary: every exact identifier detected at ingest.
 */
typedef struct fathom_vocab_entry {
	const char *key;                 /* canonical: tc-1001, 2.0.1, authservice */
	const char *category;            /* its most frequent role: testcase, ticket,
	                                  * version, class, function, model, error */
	const char *const *variants;     /* spellings seen (up to 8): TC-1001, tc_1001 */
	size_t n_variants;
	uint64_t chunks;                 /* live chunks holding it */
	uint64_t occurrences;            /* times it occurs in them */
	const char *first_seen;          /* id of the first document that held it */
	const char *const *categories;   /* every role seen, most frequent first
	                                  * (categories[0] is category): CD169 is a
	                                  * model number and, in CD169(+), a call */
	size_t n_categories;
} fathom_vocab_entry;

typedef int (*fathom_vocab_cb)(void *ctx, const fathom_vocab_entry *e);

/* Call cb for each identifier, by key (one entry whatever its roles),
 * optionally only those seen in one category, and whose
 * key begins with the key of prefix ("TC-10" lists tc-1000 ... tc-1099).
 * Both may be NULL. A non-zero return from cb stops and is returned. */
int fathom_vocab(fathom_index *ix, const char *category, const char *prefix, fathom_vocab_cb cb,
                 void *ctx);
void fathom_results_free(fathom_results *r);

/* ---------------------------------------------------------------------------
 * Reading documents back.
 */

/* The text of a document (by id/path), or the lines [from, from+count) of
 * it (1-based; count 0 = to the end). *out is NUL-terminated; free it with
 * fathom_free. */
int fathom_get(char **out, size_t *out_len, fathom_index *ix, const char *id,
               uint32_t from_line, uint32_t count);

/* What fathom_get_ex delivered. An output struct, like fathom_stats: the
 * caller sets version (FATHOM_GET_INFO_INIT or fathom_get_info_init). */
typedef struct fathom_get_info {
	unsigned version;
	uint32_t from;             /* the first line delivered (1-based) */
	uint32_t count;            /* lines delivered (a last line without its
	                            * newline counts): fewer than asked for when
	                            * the document ends first */
	int stale;                 /* 1: the document's file changed on disk since
	                            * it was indexed (its size or mtime differ, the
	                            * rule fathom_grep marks changed files by), or
	                            * is gone: the text is the indexed copy, and
	                            * a line number may not match the file now */
} fathom_get_info;

#define FATHOM_GET_INFO_VERSION 1
#define FATHOM_GET_INFO_INIT { FATHOM_GET_INFO_VERSION, 0, 0, 0 }
int fathom_get_info_init(fathom_get_info *info, unsigned version);

/* fathom_get, saying what it delivered (info may be NULL). For both, id
 * is first read as a path the way fathom_grep reads its PATH arguments
 * (relative to the current folder, mapped onto the index's keys), then as
 * the id it is. */
int fathom_get_ex(char **out, size_t *out_len, fathom_index *ix, const char *id,
                  uint32_t from_line, uint32_t count, fathom_get_info *info);

/* The text of one chunk by chunk_id (from a hit). */
int fathom_get_chunk(char **out, size_t *out_len, fathom_index *ix, uint64_t chunk_id);

/* Visit live documents in index order; return non-zero from cb to stop. */
typedef int (*fathom_doc_cb)(void *ctx, const char *id, const char *path,
                             uint64_t size, uint32_t n_chunks);
int fathom_list_docs(fathom_index *ix, fathom_doc_cb cb, void *ctx);

/* The metadata of live documents, for a caller to show what can be
 * filtered on: cb once per distinct key and value (the --meta and JSON
 * members, such as library=fastapi, version=2.1, and "lang" for the
 * detected language) with the number of documents that carry it, sorted
 * by key, then value. Return non-zero from cb to stop. */
typedef int (*fathom_meta_cb)(void *ctx, const char *key, const char *value, uint64_t docs);
int fathom_list_meta(fathom_index *ix, fathom_meta_cb cb, void *ctx);

/* ---------------------------------------------------------------------------
 * Settings: defaults kept with the index (`fathom config`), in the
 * manifest's named values, so they commit atomically with it. Searches
 * (fathom_search_opts version 5) and indexing runs (fathom_ingest_opts
 * version 6) read them for every option their caller leaves unset; an
 * option the caller sets wins for that call. The settings and their
 * bounds are published once, in one table (fathom_setting_at), which
 * validation, `fathom config`, the docs and the daemon read.
 */
enum fathom_setting_type {
	FATHOM_SETTING_INT = 1,      /* an integer in [min, max] (decimal digits) */
	FATHOM_SETTING_NUMBER = 2,   /* a decimal number in [min, max] */
	FATHOM_SETTING_CHOICE = 3,   /* one of the words of choices */
	FATHOM_SETTING_PATTERNS = 4, /* .gitignore lines, '\n' between them, at most
	                              * max bytes in all */
	FATHOM_SETTING_STRING = 5    /* text of at most max bytes, one line */
};

/* One row of the table. The library owns it; it only grows at its end. */
typedef struct fathom_setting_info {
	const char *name;            /* "k", "match", "weight.title", "ignore", ... */
	int type;                    /* enum fathom_setting_type */
	const char *default_value;   /* as fathom_config_get gives it */
	double min, max;             /* INT, NUMBER: the bounds (exact); PATTERNS,
	                              * STRING: bytes (min 0) */
	const char *choices;         /* CHOICE: the words, space-separated; else NULL */
	const char *help;            /* one line */
} fathom_setting_info;

/* The settings this library knows, i from 0 on; NULL past the last. */
const fathom_setting_info *fathom_setting_at(size_t i);
/* The row of a setting by name; NULL for an unknown name. */
const fathom_setting_info *fathom_setting_find(const char *name);

/* The value of a setting on this index, as text (a number as written by
 * the table's rules: "10", "1.5"; patterns one per line): the index's when
 * it sets one (*is_set 1, may be NULL), else the default. What a writer
 * has staged counts. *out is freed with fathom_free. FATHOM_EINVAL for an
 * unknown name. */
int fathom_config_get(char **out, int *is_set, fathom_index *ix, const char *name);

/* Set a setting on an index opened for writing: value is checked against
 * the table (FATHOM_EINVAL naming the setting and what it takes; nothing
 * changes) and staged; the next fathom_commit makes it durable, atomically
 * with everything else in that commit (fathom_rollback drops it). Numbers
 * are stored as the table's canonical text ("1.50" becomes "1.5"). */
int fathom_config_set(fathom_index *ix, const char *name, const char *value);

/* Unset it (the default applies again), staged as fathom_config_set is.
 * Unsetting a setting that is not set is no error. */
int fathom_config_unset(fathom_index *ix, const char *name);

/* The settings as JSON, the one serializer behind `fathom config --json`
 * and GET /config: an array of every setting in table order, or with name
 * the object of that one:
 *   {"name", "type" ("integer", "number", "choice", "patterns", "string"),
 *    "value", "set" (true when the index sets it), "default",
 *    "min", "max" (numbers) | "choices" (choice) | "max_bytes",
 *    "help"}
 * A value is a number, a string, or (patterns) an array of strings.
 * *out is NUL-terminated and freed with fathom_free; len may be NULL. */
int fathom_config_json(char **out, size_t *len, fathom_index *ix, const char *name);

/* ---------------------------------------------------------------------------
 * Embedders: texts into unit vectors (docs/API.md, "Embedders"). An index's
 * embedder is named by its settings (fathom_config_set "embedder": none,
 * corpus, static with embedder.file, remote with embedder.url, external);
 * the vectors it holds remember which embedder made them, and a query
 * embedded by another is refused.
 */
typedef struct fathom_embedder fathom_embedder;
/* The index's configured embedder (FATHOM_ENOTFOUND: it has none that
 * embeds text: none, external, or corpus before its first commit). */
int fathom_embedder_open(fathom_embedder **out, fathom_index *ix);
/* An embedder of the caller's: fn writes n rows of dim floats for the n
 * texts (lens[i] bytes each) and returns 0; rows are scaled to unit length
 * after it. ident names the model and its settings (it is what the index
 * would remember). */
typedef int (*fathom_embed_fn)(void *ctx, const char *const *texts, const size_t *lens, size_t n,
                               float *out);
int fathom_embedder_custom(fathom_embedder **out, uint32_t dim, const char *ident,
                           fathom_embed_fn fn, void *ctx);
/* Embed n texts into out (n * dim floats), each row a unit vector or all
 * zero (a text with nothing the embedder knows). */
int fathom_embed(fathom_embedder *e, const char *const *texts, const size_t *lens, size_t n,
                 float *out);
uint32_t fathom_embedder_dim(const fathom_embedder *e);
/* kind, version and settings, e.g. "static v1 file=glove.txt bytes=... crc=..." */
const char *fathom_embedder_ident(const fathom_embedder *e);
void fathom_embedder_free(fathom_embedder *e);

/* ---------------------------------------------------------------------------
 * Statistics and checks.
 */
/* An output struct, like fathom_ingest_stats: the caller sets version. */
typedef struct fathom_stats {
	unsigned version;
	uint64_t generation;       /* commit number */
	uint64_t docs, chunks;     /* live */
	uint64_t deleted_chunks;   /* tombstoned, not yet merged away */
	uint64_t terms;            /* distinct terms summed over segments */
	uint32_t segments;
	uint64_t bytes_total;
	uint64_t bytes_dict, bytes_postings, bytes_positions, bytes_docstore,
	         bytes_docs, bytes_chunks, bytes_other;
	uint64_t raw_text_bytes;   /* indexed text, uncompressed */
	char stem_language[32];
	uint64_t bytes_trigrams;   /* the trigram index of the files (fathom grep) */
	uint64_t grep_files;       /* live files in the trigram index */
	uint64_t grep_file_bytes;  /* their size on disk when indexed */
	uint64_t grep_only_files;  /* of them, indexed for grep alone */
	/* version 2 */
	char embedder[16];         /* "none" (lexical only), "corpus", "static",
	                            * "remote" or "external" */
	uint64_t vector_chunks;    /* live chunks with a vector */
	uint32_t vector_dim;       /* their dimension (0: none) */
	double embedder_drift;     /* the corpus model's last retraining: the
	                            * mean absolute change of the cosine between
	                            * two chunks, old model to new, over the pairs
	                            * of a sample of chunks (0: ranks as before; up
	                            * to 2); -1: never retrained */
	uint64_t embedder_drift_pairs;      /* the pairs it averages */
	uint64_t embedder_drift_generation; /* the commit it was measured before */
	/* version 3: the chunks' vectors and their HNSW graphs, in bytes_total
	 * (versions 1 and 2 counted them nowhere, and bytes_total without
	 * them); the corpus embedder's model is in bytes_other */
	uint64_t bytes_vectors;
} fathom_stats;

#define FATHOM_STATS_VERSION 3
#define FATHOM_STATS_INIT { FATHOM_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, \
	0, "", 0, 0, 0, 0, "", 0, 0, -1.0, 0, 0, 0 }
int fathom_stats_init(fathom_stats *st, unsigned version);

int fathom_stats_get(fathom_stats *out, fathom_index *ix);

/* Read every byte of every index file and check all checksums and bounds.
 * FATHOM_ECORRUPT with fathom_errmsg() naming the file otherwise. */
int fathom_verify(fathom_index *ix);

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* FATHOM_H */
