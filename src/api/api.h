/*
 * api.h — what the public handle holds, and the bounds of the ingest
 * options. Only src/api sees this: it unwraps the handle and hands the
 * internal index (index/index.h) to the query and grep modules; clients
 * see an opaque fathom_index.
 */
#ifndef FATHOM_API_H
#define FATHOM_API_H

#include "fathom.h"
#include "index/index.h"
#include "text/text.h"
#include "query/glossary.h"

/* The bounds of fathom_ingest_opts: ingest.c checks them (the one check),
 * fathom_limit() (limits.c) publishes them. */
#define API_CHUNK_MIN 64u             /* the smallest chunk_target */
#define API_CHUNK_MAX (1u << 30)      /* the largest chunk_target, chunk_max */
#define API_IDENT_MIN_LEN_MAX 64u
#define API_IDENT_MAX 1000u
#define API_MAX_META 64u              /* "key=value" tags per ingest */
#define API_MAX_META_BYTES 1024u      /* bytes of one */

/* The built-in size caps of fathom_ingest_opts (version 6 leaves them
 * unset: the index's settings, else these). */
#define API_DEFAULT_MAX_SIZE ((uint64_t)4 << 20)
#define API_DEFAULT_GREP_MAX_SIZE ((uint64_t)256 << 20)

/* ---- interface to code in settings.c -------------------------------------- */

/* The rows of the settings table, in its order. */
enum api_setting {
	API_S_K, API_S_MATCH, API_S_K1, API_S_B,
	API_S_W_PATH, API_S_W_TITLE, API_S_W_HEADINGS, API_S_W_TAGS, API_S_W_BODY,
	API_S_SNIPPET, API_S_IGNORE, API_S_MAX_SIZE, API_S_GREP_MAX_SIZE,
	API_S_EMBEDDER, API_S_EMBED_FILE, API_S_EMBED_URL, API_S_EMBED_MODEL, API_S_EMBED_KEY_ENV,
	API_S_EMBED_SEED,
	API_S_MODE, API_S_FUSION, API_S_ALPHA, API_S_MIN_SIM,
	API_S_HNSW_MIN, API_S_HNSW_M, API_S_HNSW_EFC, API_S_HNSW_EFS,
	API_S_VEC_STORAGE,
	API_NSETTINGS
};

/* An index's settings as read: bit r of set for each row it sets, with
 * the number (a choice: its index) in num[r] and the text in text[r]
 * (pointing into mem). */
typedef struct api_settings {
	uint64_t set;
	double num[API_NSETTINGS];
	const char *text[API_NSETTINGS];
	unsigned char *mem;
} api_settings;

/* Parse a stored "settings" value (the fuzz target's unit); s starts
 * zeroed or parsed. FATHOM_ECORRUPT for a value that breaks the layout. */
int api_settings_parse(api_settings *s, const unsigned char *data, size_t len);
void api_settings_free(api_settings *s);
/* Visit the records of a stored value, known or not. */
int api_settings_walk(const unsigned char *data, size_t len,
                      int (*cb)(void *ctx, const char *key, const char *value), void *ctx);
struct fathom_index;
/* The handle's settings, reparsed when its payloads changed. */
int api_settings_get(struct fathom_index *fx, const api_settings **out);
/* Search options with their unset fields filled from the index's settings
 * (those it does not set stay unset, for q_search's built-in defaults):
 * *out is in itself when the index sets none, else tmp. */
int api_search_defaults(struct fathom_index *fx, const fathom_search_opts *in,
                        fathom_search_opts *tmp, float weights[FATHOM_NFIELDS],
                        const fathom_search_opts **out);
/* A run's options (the run's own copy) with unset sizes and ignore rules
 * from the index's settings (fx may be NULL: the built-in defaults). The
 * ignore text may point into the handle's settings: read it at once. */
int api_ingest_defaults(struct fathom_index *fx, fathom_ingest_opts *o);

/* ---- interface to code in results_json.c ---------------------------------- */

/* n bytes of s as a JSON string (escaped; invalid UTF-8 as U+FFFD). */
void api_json_strn(fbuf *b, const char *s, size_t n);

/* ---- interface to code in embed_api.c ------------------------------------ */

struct em_embedder;
/* The "embedder" setting's choices, in its order. */
enum api_embedder_kind { API_EMB_NONE, API_EMB_CORPUS, API_EMB_STATIC, API_EMB_REMOTE,
	                 API_EMB_EXTERNAL };
int api_embedder_kind(struct fathom_index *fx, int *kind);
/* A kind's name, as the setting spells it ("none" for an unknown value). */
const char *api_embedder_kind_name(int kind);
/* The configured embedder that embeds text (NULL: none, or corpus not yet
 * trained), opened once per handle and kept. */
int api_embedder(struct fathom_index *fx, struct em_embedder **out);
void api_embedder_free(struct fathom_index *fx);
/* The ident of the index's vectors (NULL: none yet). */
int api_embedder_ident(struct fathom_index *fx, const char **ident, size_t *len);
uint64_t api_ident_fp(const char *ident, size_t len);
/* For an ingest: the embedder (NULL: none) and its fingerprint; stages its
 * ident when the index has none, refuses another. */
int api_ingest_embedder(struct fathom_index *fx, struct em_embedder **out, uint64_t *fp);
/* For vectors that come with the documents. */
int api_external_ident(struct fathom_index *fx, uint32_t dim, uint64_t *fp);
/* The query's unit vector (*vec fa_free'd by the caller). */
int api_query_vector(struct fathom_index *fx, const char *query, const fathom_search_opts *o,
                     float **vec, uint32_t *dim, uint64_t *fp, const char **kind_name);

/* Resolve a search's mode, fusion and weights (options, then settings,
 * then the embedder's defaults) and embed its query (*qvec, fa_free'd by
 * the caller). */
#define API_WORDAVG_ALPHA 0.8    /* corpus: tuned on SciFact train, CoSQA dev */
/* static word vector files (GloVe, word2vec, fastText): tuned the same way,
 * α 0.98, 0.99 and 1 tie (their order adds nothing measurable), so 1: full
 * text's order kept, the vectors' hits after its own (docs/BENCHMARKS.md) */
#define API_STATIC_ALPHA 1.0
#define API_M2V_ALPHA 0.95        /* Model2Vec: not measured here (no weights) */
/* A retrained corpus model's drift (embed_train.c): the manifest value
 * API_DRIFT_KEY, measured over the pairs of API_DRIFT_SAMPLE chunks. */
#define API_DRIFT_KEY "embedder.drift"
#define API_DRIFT_SAMPLE 256
/* Propose the corpus model's mutual nearest words as glossary candidates
 * (embed_train.c; nothing without a trained corpus embedder). */
struct q_glossary;
int api_gloss_neighbours(struct fathom_index *fx, struct q_glossary *g, size_t *added);
/* fathom_stats' vector fields (version 2). */
int api_vector_stats(struct fathom_index *fx, fathom_stats *out);
struct q_hybrid;
struct q_cand_list;
/* grep for a literal, caseless, as the late-fusion pool's source
 * (q_grep_fn; ctx the fathom_index). */
int api_grep_literal(void *ctx, const char *literal, size_t len, uint32_t k, fa_arena *a,
                     struct q_cand_list *out);
int api_hybrid(struct fathom_index *fx, const char *query, const fathom_search_opts *o,
               struct q_hybrid *hy, float **qvec);

/* The vectors' part of a commit (embed_train.c): train the corpus
 * embedder when it has no model yet (optimize: always, retraining it) on
 * what the commit holds, pending documents included, and re-embed every
 * chunk without a vector of the configured embedder (optimize),
 * committing it all at once. fathom_commit calls it before ix_commit, so
 * documents and the vectors they need are one commit. */
int api_commit_vectors(struct fathom_index *fx, int optimize);

struct fathom_index {
	ix_index *ix;
	text_analyzer *an;   /* the index's analyser (its stemming language) */
	unsigned flags;
	fa_arena work;       /* search working memory, reused query after query */
	/* The glossary parsed once, again when the index's payload changes. */
	q_glossary gloss;
	uint64_t gloss_version;
	int gloss_ok;
	/* The settings parsed once, again when the index's payload changes. */
	api_settings cfg;
	uint64_t cfg_version;
	int cfg_ok;
	/* The embedder, opened once (embed_api.c). */
	struct em_embedder *emb;
	uint64_t emb_version;
	int emb_kind, emb_ok;
	/* Hybrid search's vector side: a helper thread, started by the first
	 * hybrid search on a machine of two CPUs or more, and its working
	 * memory (api_vector_thread). */
	struct fa_worker *vworker;
	fa_arena vwork;
	/* fathom_set_step_progress's callback, and when it was last called */
	fathom_step_cb step_cb;
	void *step_ctx;
	uint64_t step_last_ns;
};

/* Tell the step callback, if any: always when force or done == total,
 * else at most five times a second. */
void api_step(struct fathom_index *fx, const char *step, uint64_t done, uint64_t total,
              int force);

/* The helper thread for hybrid's vector side (NULL: run it on the calling
 * thread: one CPU, FATHOM_HYBRID_SERIAL set, or no thread could start). */
struct fa_worker *api_vector_thread(struct fathom_index *fx);

#endif /* FATHOM_API_H */
