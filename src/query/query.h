/*
 * query.h — the query pipeline, as the rest of the library sees it.
 *
 * A search runs parse -> identify -> expand -> route -> retrieve -> fuse ->
 * rerank -> explain (query_int.h names the file of each stage). Retrieval
 * sources (BM25F here, fathom grep's chunks in src/grep, vectors next) each
 * hand the pipeline a candidate list: chunks with the source's own score
 * and its receipt for each. fuse merges the lists into one pool, rerank may
 * reorder it, and explain alone turns the pool's best into fathom_hits
 * (documents, snippets, receipts), so nothing is presented before the
 * ranking is final.
 *
 * fathom_results and the fathom_results_* functions of the public API are
 * implemented here (query/results.c).
 */
#ifndef FATHOM_QUERY_H
#define FATHOM_QUERY_H

#include "fathom.h"
#include "index/index.h"
#include "text/text.h"

/* The bounds of a query and of fathom_search_opts: q_search_in checks
 * them (the one check), fathom_limit() publishes them. */
#define Q_MAX_QUERY_BYTES 8192
#define Q_MAX_K 100000
#define Q_SNIPPET_MAX 65536          /* snippet_bytes above it are clamped */
#define Q_MAX_FIELD_WEIGHT 1000.0
#define Q_MAX_K1 100.0
#define Q_MIN_BONUS 1.0              /* below 1 a bonus-free bound would undercount */
#define Q_MAX_BONUS 100.0
/* The coordination bonus of a keyword query's chunk holding every one of
 * its words (route.c, q_coord_share). Tuned on SciFact train and CoSQA
 * dev (docs/BENCHMARKS.md): 1.25 to 5 all rank within 0.002 nDCG@10 of
 * each other; a strict tier (all words above any fewer) 0.002 below. */
#define Q_COORD_BONUS 2.0
#define Q_MAX_TIME_LIMIT 1e6         /* seconds */

/* The built-in defaults of the options fathom_search_opts version 5 leaves
 * unset (the index's settings come first: api/settings.c, whose table
 * publishes these). */
#define Q_DEFAULT_K 10u
#define Q_DEFAULT_MATCH FATHOM_MATCH_AUTO
#define Q_DEFAULT_K1 1.5f
#define Q_DEFAULT_B 0.9f
#define Q_DEFAULT_SNIPPET 240u

/* Run query over the committed snapshot of ix. */
int q_search(fathom_results **out, ix_index *ix, text_analyzer *an,
             const char *query, const fathom_search_opts *opts);

/* The same, with the query's working memory taken from work (reset on
 * return, so its first block is reused by the next query and a search
 * usually calls malloc only for its results; NULL: a private arena), and
 * the glossary's alias groups expanding the query (NULL: none). */
struct q_glossary;
int q_search_in(fathom_results **out, ix_index *ix, text_analyzer *an,
                const char *query, const fathom_search_opts *opts, fa_arena *work,
                const struct q_glossary *gloss);

/* Options of versions 1 to 3 (1 and 2: the field weights inline) read into the
 * current layout: *out is opts itself when it is current, else tmp, whose
 * weights point into tmp_weights. Other versions are left for the check. */
void q_search_opts_upgrade(const fathom_search_opts *opts, fathom_search_opts *tmp,
                           float tmp_weights[FATHOM_NFIELDS], const fathom_search_opts **out);

/* Options of the current version with every unset field (k 0,
 * FATHOM_MATCH_DEFAULT, k1 or b below 0, FATHOM_UNSET_SNIPPET, a field
 * weight below 0) given its built-in default: *out is opts itself when
 * none is unset, else tmp (weights in tmp_weights). */
void q_search_opts_fill(const fathom_search_opts *opts, fathom_search_opts *tmp,
                        float tmp_weights[FATHOM_NFIELDS], const fathom_search_opts **out);

/* ---- candidates: what a retrieval source hands to the pipeline ----------------- */

struct q_source;

/* One chunk a source found. */
typedef struct q_cand {
	uint32_t seg;          /* index of its segment in the snapshot */
	uint32_t chunk;        /* chunk number in the segment */
	double score;          /* the source's own score */
	const void *receipt;   /* the source's receipt for it (a type of the
	                        * source's own, read by its explain hooks), or
	                        * NULL; it lives as long as the list */
} q_cand;

/* A source's candidates, best first: v[i] has rank i + 1. A source gives a
 * chunk at most once. */
typedef struct q_cand_list {
	const struct q_source *src;
	q_cand *v;
	size_t n, cap;
} q_cand_list;

/* Append a candidate (v grows in a). */
int q_cands_add(q_cand_list *l, fa_arena *a, uint32_t seg, uint32_t chunk, double score,
                const void *receipt);

/* A source as explain sees it: its id in the public hit, and two hooks
 * that present its receipts. Either hook may be NULL. */
typedef struct q_source {
	int id;                /* enum fathom_source */
	/* Write the source's receipt of c into h (the keyword receipt, match
	 * lines, a snippet the source made itself ...); ci is the chunk.
	 * Anything h points to is allocated in r's arena (q_results_arena). */
	int (*receipt)(const struct q_source *self, const q_cand *c, const ix_chunk_info *ci,
	               fathom_hit *h, fathom_results *r);
	/* Write h's snippet, highlights and match lines from the chunk's text
	 * (len bytes, its first line line0), about target bytes long; called
	 * when no receipt has given the hit a snippet. */
	int (*snippet)(const struct q_source *self, const q_cand *c, const char *text, size_t len,
	               uint32_t target, uint32_t line0, fathom_hit *h, fathom_results *r);
	void *ctx;             /* the source's own state */
} q_source;

/* ---- a source that finds lines: fathom grep ----------------------------------- */

/* Its receipt of a chunk: the matching lines and the first one as the
 * snippet (made by the source from the file as it read it). */
typedef struct q_line_receipt {
	const uint32_t *lines;     /* the first of the matching lines, ascending */
	uint32_t n_lines;
	const char *snippet;       /* NUL-terminated; NULL: none */
	const fathom_span *highlight; /* the match in snippet; NULL: none */
} q_line_receipt;

/* The source whose candidates carry q_line_receipts (FATHOM_SOURCE_GREP). */
extern const q_source q_grep_source;

/* A result set from one source's list alone (fathom grep's chunks): the
 * pipeline's fuse and explain stages over it, its best k as hits. parsed
 * is the source's canonical form of its query. */
int q_results_from(fathom_results **out, ix_index *ix, const q_cand_list *l, uint32_t k,
                   const char *parsed);

/* The result set's arena: what hits point to lives there. */
fa_arena *q_results_arena(fathom_results *r);

#endif /* FATHOM_QUERY_H */
