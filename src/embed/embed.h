/*
 * embed.h — the embedders and their building blocks (issue 15):
 *
 *   embedder.c  the one interface every embedder implements (em_embedder)
 *   words.c     the words of a text, as the word-vector embedders read it
 *   wordavg.c   a text as the weighted (SIF) average of its words' vectors:
 *               the `static` and `corpus` embedders
 *   ppmi.c      word vectors trained on the corpus (PPMI, truncated SVD)
 *               and the model file that keeps them
 *   remote.c    an OpenAI-compatible /v1/embeddings service (libcurl)
 *   vecfile.c   pretrained word vectors from the files they ship in:
 *               GloVe text, word2vec text and binary, fastText .vec
 *   dist.c      distance kernels (float32 and int8 dot products, SIMD
 *               with plain references) and int8 quantisation
 *   safetensors.c  the safetensors container (Model2Vec's matrix)
 *   wordpiece.c BERT's WordPiece tokenizer (tokenizer.json or vocab.txt)
 *   model2vec.c Model2Vec static models: a text as the mean of its
 *               tokens' rows (the `static` embedder over a model folder)
 *
 * Internal to the library; the public embedder interface comes with the
 * embedders themselves.
 */
#ifndef FATHOM_EMBED_H
#define FATHOM_EMBED_H

#include <stddef.h>
#include <stdint.h>

/* ---- embedder.c: the interface ----------------------------------------------
 *
 * An embedder turns texts into unit vectors of a fixed dimension. Its
 * identity (kind, version, settings, and what fixes its model: a file's
 * size and checksum, a service's URL and model name) is one line of text,
 * ident, which the index keeps with its vectors: a query embedded by an
 * embedder of another ident is refused, since its vectors live in another
 * space. embed is called from several threads at once (the ingest workers),
 * so an implementation keeps no per-call state in the embedder. */

#define EM_IDENT_MAX 1024u         /* bytes of an ident, NUL included */
#define EM_MAX_BATCH 4096u         /* texts one em_embed call takes */

typedef struct em_embedder em_embedder;
typedef struct em_vectors em_vectors;   /* vecfile.c */

typedef struct em_embedder_ops {
	const char *kind;            /* "static", "corpus", "remote", ... */
	/* n texts (lens[i] bytes each, valid UTF-8, not NUL-terminated) into
	 * out, n rows of dim floats: each row of unit length, or all zero for a
	 * text with nothing to embed (no known word). A failure is an error
	 * code with fa_err's message; out is then undefined. */
	int (*embed)(em_embedder *e, const char *const *texts, const size_t *lens, size_t n,
	             float *out);
	void (*free)(em_embedder *e);
} em_embedder_ops;

struct em_embedder {
	const em_embedder_ops *ops;
	uint32_t dim;                /* 1..EM_MAX_DIM */
	char ident[EM_IDENT_MAX];
	void *impl;                  /* the implementation's */
};

/* Embed n (<= EM_MAX_BATCH) texts; checks the arguments, and that every
 * row the implementation wrote is finite and unit or zero (an embedder
 * that breaks this is an error naming it, never a silently bad index). */
int em_embed(em_embedder *e, const char *const *texts, const size_t *lens, size_t n,
             float *out);
void em_embedder_free(em_embedder *e);
/* Scale v to unit length in place (double accumulation, so that subnormal
 * rows do not overflow); a zero or non-finite vector becomes all zero.
 * Returns 1 when the result is a unit vector, 0 when it is zero. */
int em_normalize(float *v, uint32_t dim);

/* ---- words.c: the words of a text ---------------------------------------------
 *
 * What the word-vector embedders read: runs of letters and digits, cut
 * where code joins words (snake_case, camelCase, kebab-case, dotted.names),
 * lowercased (Unicode, utf8proc), at most EM_MAX_WORD bytes each (longer
 * runs are skipped). The callback's non-zero return stops the walk and is
 * returned. */
typedef int (*em_word_cb)(void *ctx, const char *w, size_t len);
int em_words(const char *text, size_t len, em_word_cb cb, void *ctx);
/* The same with every character read through utf8proc (em_words reads
 * ASCII by table): the reference for tests. */
int em_words_ref(const char *text, size_t len, em_word_cb cb, void *ctx);

/* ---- wordavg.c: a text as the average of its words' vectors -----------------
 *
 * The `static` and `corpus` embedders: a text's vector is the sum of its
 * known words' vectors, each weighted a / (a + p(w)) (Arora et al., "A
 * simple but tough-to-beat baseline for sentence embeddings", 2017: SIF),
 * minus its projection on the common component pc when there is one, then
 * scaled to unit length. p(w) is the word's share of the words it was
 * estimated on. */
#define EM_SIF_A 1e-3

typedef struct em_wordavg_model {
	const em_vectors *vec;       /* the words and their vectors (not owned) */
	const float *weight;         /* vec->n weights a / (a + p(w)) (not owned) */
	const float *pc;             /* dim values, unit length, or NULL */
} em_wordavg_model;

/* An embedder over m, which must outlive it (owner: freed with it when
 * owner_free is given, called with owner). kind and ident as em_embedder's. */
int em_wordavg_new(em_embedder **out, const em_wordavg_model *m, const char *kind,
                   const char *ident, void (*owner_free)(void *), void *owner);

/* The `static` embedder. path is a Model2Vec model (a folder holding
 * model.safetensors and tokenizer.json, or a .safetensors file with
 * tokenizer.json beside it: model2vec.c, em_m2v_open), or else a word
 * vector file: the vectors of a word vector file (vecfile.c,
 * format EM_VEC_AUTO), rows normalised, words weighted by SIF with p(w)
 * estimated from the file's order (files list words most frequent first:
 * Zipf's law, p proportional to 1 / (rank + 2.7)). Its ident names the
 * file's base name, size and CRC32C, so the same vectors under another
 * name are the same embedder, and a changed file is not. */
int em_static_open(em_embedder **out, const char *path);

/* ---- ppmi.c: the `corpus` embedder's training ---------------------------------
 *
 * Word vectors learnt from the user's own corpus at index time, with no
 * download: positive pointwise mutual information of words within a
 * window, with context distribution smoothing (0.75), factored by a
 * truncated SVD (randomised, seeded), rows U scaled to unit length (Levy,
 * Goldberg & Dagan, 2015; U beat U * sqrt(S) on SciFact). Two passes over
 * the same texts: em_ppmi_count on each, em_ppmi_vocab, em_ppmi_cooc on
 * each again (pass 1 keeps the words of up to 32M words of text, so that
 * pass 2 over the same bytes does not read them again), then
 * em_ppmi_train. Calls out of this order are FATHOM_EINVAL; after an
 * error every later call returns it. Deterministic: the same texts in the
 * same order and the same options give the same model, bit for bit,
 * whatever the threads (on one CPU type and OpenBLAS build). The
 * dimension is less than asked when the vocabulary is under dim + 16
 * words (the model records it). Training needs at least 2 words seen
 * min_count times (FATHOM_EINVAL). */
typedef struct em_ppmi_opts {
	uint32_t dim;                /* 256 */
	uint32_t window;             /* 10 words either side */
	uint32_t min_count;          /* words seen fewer times are dropped (3) */
	uint32_t max_vocab;          /* the most frequent words kept (50,000) */
	uint64_t seed;
	uint32_t threads;            /* 0: one per CPU */
	size_t max_pairs;            /* distinct pairs kept (0: EM_PPMI_MAX_PAIRS);
	                              * less lets a test reach the drop */
} em_ppmi_opts;
void em_ppmi_defaults(em_ppmi_opts *o);

#define EM_MODEL_MAX ((size_t)64 << 20) /* bytes of a model file (a payload's limit) */
#define EM_PPMI_MAX_VOCAB 65536u      /* words a model (pairs pack two ids in 32 bits) */
#define EM_PPMI_MAX_WINDOW 64u        /* words either side */
#define EM_PPMI_MAX_THREADS 64u
#define EM_PPMI_MAX_PAIRS ((size_t)1 << 24) /* distinct pairs kept, past which the lightest go */

/* A trained model: the `corpus` embedder's, kept in the index. */
typedef struct em_model {
	em_vectors *vec;             /* words and unit rows */
	uint64_t *count;             /* each word's count in the corpus */
	uint64_t total;              /* all words counted (known or not) */
	float *weight;               /* SIF: a / (a + count / total) */
	float *pc;                   /* the common component (dim), or NULL */
	em_ppmi_opts opts;           /* what it was trained with */
	double sif_a;                /* SIF's a (0: EM_SIF_A, as files of version 1) */
	uint32_t version;            /* the file's layout it was read from or is
	                              * written in (0: the newest) */
	int has_crc;                 /* read from a file whose CRC32C is crc: its
	                              * ident needs no writing again (a caller that
	                              * changes a model it read clears it) */
	uint32_t crc;
} em_model;

/* SIF's a for the corpus embedder's models (version 2 files keep it):
 * chosen on SciFact train and CoSQA dev with SciFact test held out, hybrid
 * nDCG@10 at a = 1e-3 / 2e-3 / 3e-3 / 5e-3 / 1e-2: train 0.7158 / 0.7172 /
 * 0.7182 / 0.7177 / 0.7177, CoSQA 0.4140 / 0.4147 / 0.4155 / 0.4163 /
 * 0.4152 (docs/BENCHMARKS.md). Word frequencies counted on one user's
 * corpus are far above a web corpus's, for which the paper's 1e-3 was
 * chosen. */
#define EM_SIF_A_CORPUS 3e-3

typedef struct em_ppmi em_ppmi;
int em_ppmi_new(em_ppmi **out, const em_ppmi_opts *o);
int em_ppmi_count(em_ppmi *t, const char *text, size_t len);
int em_ppmi_vocab(em_ppmi *t);
int em_ppmi_cooc(em_ppmi *t, const char *text, size_t len);
int em_ppmi_train(em_ppmi *t, em_model **out);
/* Between the co-occurrences and training (for tests): every pair so far
 * in key order, the smaller word id first, with its summed weight; fn
 * nonzero stops. */
int em_ppmi_pairs(em_ppmi *t, int (*fn)(void *ctx, const char *a, const char *b, float w),
                  void *ctx);
void em_ppmi_free(em_ppmi *t);
/* Held around every call into OpenBLAS (training, the glossary's word
 * neighbours): its single-threaded build must not be entered by two
 * threads at once. */
void em_blas_lock(void);
void em_blas_unlock(void);
/* For tests: the sparse products' kernel, 1 AVX2 + FMA, 0 the plain one,
 * -1 the CPU's choice again (all threads; set it before training). -1
 * when the CPU lacks what was asked. */
int em_ppmi_select(int avx2);

/* The model's file (a payload of the index): written whole into a buffer
 * (*out, *len; free with fa_free), read back with every field checked
 * (FATHOM_ECORRUPT naming name on anything out of place; a checksum covers
 * it all). */
int em_model_write(const em_model *m, unsigned char **out, size_t *len);
int em_model_read(em_model **out, const unsigned char *data, size_t len, const char *name);
void em_model_free(em_model *m);
/* Finish a model whose vec holds its words and rows and count its counts:
 * vec's word table and the SIF weights. FATHOM_ECORRUPT naming name when a
 * word is given twice. */
int em_model_index(em_model *m, const char *name);
/* The corpus embedder over m, owned by it from then on (freed with it);
 * on an error m is left to the caller. Its ident carries the model file's
 * CRC32C, so a retrained model is another embedder. */
int em_corpus_new(em_embedder **out, em_model *m);

/* ---- neighbours.c: word pairs for the glossary's queue ------------------------
 *
 * Among the model's `top` (at most EM_NB_TOP) most frequent words that keep
 * accepts, the pairs that are each other's nearest neighbour with a cosine
 * of at least min_cos: cb(ctx, a, b, cos) for each, a the more frequent;
 * a non-zero return stops and is returned. */
#define EM_NB_TOP 4000u
#define EM_NB_MIN_COS 0.6f
typedef int (*em_word_keep_fn)(void *ctx, const char *w, size_t len);
typedef int (*em_pair_fn)(void *ctx, const char *a, const char *b, float cos);
int em_model_neighbours(const em_model *m, uint32_t top, float min_cos, em_word_keep_fn keep,
                        void *kctx, em_pair_fn cb, void *ctx);

/* ---- remote.c: an OpenAI-compatible embeddings service -------------------------
 *
 * POST {"model": ..., "input": [texts]} to URL (a base ending in /v1 gets
 * /embeddings appended), read {"data": [{"index": i, "embedding": [...]}]}.
 * Batches of `batch` texts, at most `concurrency` requests in flight,
 * `retries` retries with exponential backoff on a connection failure, a
 * timeout, 429 or 5xx (never on another 4xx), a per-request timeout. The
 * key comes from the environment variable api_key_env (sent as "Bearer").
 * A reply of another dimension, a missing index, a value that is not a
 * finite number: FATHOM_ECORRUPT naming the URL; the service down after
 * the retries: FATHOM_EIO naming the URL and what curl said. Vectors are
 * normalised (services do not all send unit vectors). */
typedef struct em_remote_opts {
	const char *url;
	const char *model;           /* NULL or "": the field is left out */
	const char *api_key_env;     /* NULL: FATHOM_EMBED_API_KEY */
	uint32_t dim;                /* 0: the first reply's */
	uint32_t batch;              /* 0: 64 */
	uint32_t concurrency;        /* 0: 4 */
	uint32_t retries;            /* 3 (UINT32_MAX for 0: none) */
	double timeout;              /* seconds per request; 0: 60 */
	double backoff;              /* seconds before the first retry, doubling
	                              * after; 0: 0.2 (tests make it small) */
} em_remote_opts;
/* Opening asks the service once (one probe text) when dim is 0, so a
 * service that is down fails here, before any indexing. The key is read
 * from the environment then. The ident is "remote v1 url=<endpoint>
 * model=<model> dim=<d>", the endpoint without any user:password@. A
 * status other than 429 and 5xx, or one of them after the retries:
 * FATHOM_EIO quoting the first 200 bytes of the body; a reply past its
 * bound (the texts times the dimension, at most 256 MiB): FATHOM_ETOOBIG. */
int em_remote_open(em_embedder **out, const em_remote_opts *o);
/* A reply's body (len bytes, untrusted) for n texts into out, n rows of
 * *dim floats each normalised (a zero row stays zero); *dim 0: the reply's
 * dimension is learnt into it (out then has room for n * EM_MAX_DIM).
 * FATHOM_ECORRUPT naming url and what is wrong. For the tests and the
 * fuzz target. */
int em_remote_parse(float *out, uint32_t *dim, const char *body, size_t len, size_t n,
                    const char *url);

/* ---- vecfile.c: word vector files ------------------------------------------
 *
 *   GloVe           one word a line, then its values: "the 0.418 0.24968 ..."
 *                   (no header; the dimension is the first line's count)
 *   word2vec text   a header "N D", then N lines as GloVe's;
 *   fastText .vec   the same format
 *   word2vec binary the header "N D\n", then N times: the word, a space,
 *                   D little-endian float32 (4 D bytes), and an optional
 *                   newline
 *
 * Values are read as C-locale decimals and must be finite. Words are the
 * bytes up to the first space or tab (NUL bytes refused). A word given
 * twice keeps its first vector. Errors name the file and the line (text)
 * or the entry (binary): FATHOM_ESYNTAX for what does not parse,
 * FATHOM_ETOOBIG past the limits below. */

enum em_vec_format {
	EM_VEC_AUTO = 0,     /* a header of two numbers: word2vec (text when its
	                        first entry reads as text, else binary); none:
	                        GloVe */
	EM_VEC_GLOVE = 1,
	EM_VEC_W2V_TEXT = 2, /* fastText .vec too */
	EM_VEC_W2V_BIN = 3
};

#define EM_MAX_DIM 4096u           /* values a vector */
#define EM_MAX_WORD 512u           /* bytes a word */
#define EM_MAX_WORDS (1u << 24)    /* words a file */
#define EM_MAX_FILE ((size_t)1 << 34) /* bytes a file (16 GiB) */

struct em_vectors {
	uint32_t n, dim;
	int format;          /* the format read (never EM_VEC_AUTO) */
	uint32_t dups;       /* words given more than once (first kept) */
	char *pool;          /* the words, each NUL-terminated */
	uint32_t *word;      /* n offsets into pool */
	float *v;            /* n * dim values, row i word i's */
	uint32_t *slot;      /* open-addressing table of word index + 1 */
	uint32_t nslot;      /* a power of two */
};

/* Parse len bytes of a vector file; name is for messages. */
int em_vectors_parse(em_vectors **out, const char *data, size_t len, int format,
                     const char *name);
/* Read and parse a file. */
int em_vectors_read(em_vectors **out, const char *path, int format);
void em_vectors_free(em_vectors *v);
/* The index of a word, or -1. */
int64_t em_vectors_find(const em_vectors *v, const char *w, size_t len);
/* (Re)build the word table em_vectors_find reads. A word given twice keeps
 * its first row; the later ones are counted in dups, the first of them
 * *first_dup (UINT32_MAX: none). */
int em_vectors_index(em_vectors *v, uint32_t *first_dup);
static inline const float *em_vectors_row(const em_vectors *v, uint32_t i)
{
	return v->v + (size_t)i * v->dim;
}
static inline const char *em_vectors_word(const em_vectors *v, uint32_t i)
{
	return v->pool + v->word[i];
}
/* Scale every row to unit length (a zero row stays zero). */
void em_vectors_normalize(em_vectors *v);
/* The format's name: "glove", "word2vec-text", "word2vec-binary". */
const char *em_vec_format_name(int format);

/* ---- dist.c: distance kernels -----------------------------------------------
 *
 * Cosine of unit vectors is their dot product. em_dot and em_dot_i8 pick
 * the fastest kernel the CPU runs (AVX2 + FMA, else SSE2 on x86-64; the
 * reference elsewhere); the _ref functions are the plain loops the tests
 * hold them to. Float results differ from the reference in rounding only
 * (another order of addition); int8 results are exact. */
float em_dot(const float *a, const float *b, uint32_t n);
int32_t em_dot_i8(const int8_t *a, const int8_t *b, uint32_t n);
float em_dot_ref(const float *a, const float *b, uint32_t n);
int32_t em_dot_i8_ref(const int8_t *a, const int8_t *b, uint32_t n);
/* The float q against the int8 row r (asymmetric: the query is not
 * quantised): sum q[i] * r[i]; times the row's scale, the cosine. AVX2 +
 * FMA when the CPU has them, else the reference; the two differ in
 * rounding only. */
float em_dot_f32_i8(const float *q, const int8_t *r, uint32_t n);
float em_dot_f32_i8_ref(const float *q, const int8_t *r, uint32_t n);
/* The kernel em_dot uses: "avx2", "sse2" or "scalar". */
const char *em_dist_kernel(void);
/* For tests: 1 the AVX2 kernels, 0 the SSE2 ones, -1 the CPU's choice
 * again. -1 when the CPU lacks what was asked (nothing changes). */
int em_dist_select(int avx2);
/* v as int8 with one scale (v[i] ~ out[i] * scale, |out[i]| <= 127, the
 * largest |v[i]| to 127); returns the scale (0 for a zero or non-finite
 * vector, out all 0). */
float em_quantize_i8(const float *v, uint32_t n, int8_t *out);
/* v as int8 about its own middle: the codes from the middle of its
 * smallest and largest values and half their spread over 127, the
 * smallest at -127, the largest at 127 (|out[i]| <= 127): the full range
 * of the bytes used whatever the row's skew, where em_quantize_i8 uses
 * half of it for a row of positive values. Then *offset and the scale
 * (returned) are those that give v back best from the codes, least
 * squares: v[i] ~ *offset + out[i] * scale. Scale 0 and out all 0 for a
 * constant row (the offset holds it), and with offset 0 too for one that
 * is not finite. How a segment stores int8 rows (docs/FORMAT.md 5.12). */
float em_quantize_i8_affine(const float *v, uint32_t n, int8_t *out, float *offset);
/* An int8 row back as floats: out[i] = q[i] * scale + offset, in float (the
 * one formula the graph's merge and a segment merge both read rows by). */
void em_dequantize_i8(const int8_t *q, uint32_t n, float scale, float offset, float *out);
/* The sum of v's values (the asymmetric int8 score's offset term needs the
 * query's, once a query). */
float em_sum(const float *v, uint32_t n);
/* y[i] += a * x[i], four lanes at a time: each y[i] gets the same bits as
 * the plain loop (one multiply, one add, no fused step), which the
 * compiler will not vectorise itself while y and x may overlap. The word
 * average's sum and the sparse product's plain rows. */
void em_axpy(float *y, const float *x, float a, uint32_t n);

/* ---- safetensors.c: the container of Model2Vec's matrix ---------------------
 *
 * Parsed in place: the tensors point into the caller's bytes, which must
 * outlive the em_st. Errors name the file (and the tensor): FATHOM_ESYNTAX,
 * FATHOM_ETOOBIG past the limits. */

enum em_st_dtype {
	EM_ST_F32 = 1, EM_ST_F16, EM_ST_BF16, EM_ST_F64,
	EM_ST_I8, EM_ST_U8, EM_ST_I16, EM_ST_I32, EM_ST_I64, EM_ST_BOOL
};

#define EM_ST_MAX_HEADER ((uint64_t)100 << 20)  /* the format's own limit */
#define EM_ST_MAX_TENSORS 65536u
#define EM_ST_MAX_DIMS 8u

typedef struct em_tensor {
	char name[256];
	int dtype;
	uint32_t ndim;
	uint64_t shape[EM_ST_MAX_DIMS];
	uint64_t count;      /* values: the product of the shape */
	uint64_t off, len;   /* bytes in the data part */
} em_tensor;

typedef struct em_st {
	const unsigned char *data;   /* after the header */
	size_t data_len;
	uint32_t n;
	em_tensor t[];
} em_st;

int em_st_parse(em_st **out, const unsigned char *data, size_t len, const char *name);
void em_st_free(em_st *st);
const em_tensor *em_st_find(const em_st *st, const char *tensor);
/* The tensor's values as float32 into out (t->count of them): F32, F16 and
 * BF16 exactly, F64 rounded; FATHOM_EINVAL for an integer dtype,
 * FATHOM_ESYNTAX for a value that is not finite. */
int em_st_floats(const em_st *st, const em_tensor *t, float *out);

/* ---- wordpiece.c: BERT's WordPiece tokenizer ------------------------------
 *
 * Read from a Hugging Face tokenizer.json whose model is WordPiece (its
 * vocab, unk_token, continuing_subword_prefix, max_input_chars_per_word),
 * normalizer BertNormalizer or null and pre_tokenizer BertPreTokenizer;
 * other tokenizers are FATHOM_EINVAL naming the file and the type. Or from
 * a vocab.txt (a token a line, ids from 0, unknown token "[UNK]", prefix
 * "##", at most 100 characters a word; lowercased with accents stripped
 * unless a token other than the [SPECIAL] ones has a capital letter).
 * Encoding gives what HF's encode(text, add_special_tokens=False) gives:
 * no [CLS] or [SEP] around the text, the caller adds them
 * (em_wordpiece_id(wp, "[CLS]")); added tokens written in the text
 * ("[MASK]") are their ids, as in HF (those marked normalized excepted).
 * Texts need not be valid UTF-8 (a stray byte reads as U+FFFD, which the
 * normalizer drops). A tokenizer is read-only once open: any number of
 * threads may encode with it at once. */
#define EM_WP_MAX_FILE ((size_t)64 << 20) /* bytes of tokenizer.json or vocab.txt */
#define EM_WP_MAX_VOCAB (1u << 21)     /* tokens, and the largest id + 1 */
#define EM_WP_MAX_TOKEN 256u           /* bytes a token */
#define EM_WP_MAX_PREFIX 16u           /* bytes of continuing_subword_prefix */
#define EM_WP_MAX_ADDED 1024u          /* added_tokens */
#define EM_WP_MAX_WORD_CHARS 256u      /* characters a word can have and be
                                          split (max_input_chars_per_word is
                                          capped here; longer: unknown) */

typedef struct em_wordpiece em_wordpiece;

/* Read a tokenizer.json or vocab.txt (by its first non-blank byte: '{' is
 * JSON). Errors name the file: FATHOM_ESYNTAX for what does not parse, a
 * token given twice, an unknown token missing from the vocabulary;
 * FATHOM_EINVAL for a tokenizer of another kind; FATHOM_ETOOBIG past the
 * limits above. */
int em_wordpiece_open(em_wordpiece **out, const char *path);
/* The same from len bytes in memory; name is for messages. */
int em_wordpiece_parse(em_wordpiece **out, const char *data, size_t len, const char *name);
void em_wordpiece_free(em_wordpiece *wp);
/* The ids of len bytes of text: the first min(*n, max) are written to ids
 * (ids may be NULL when max is 0), *n is the text's count of tokens, so
 * *n > max says the text was cut. 0, or FATHOM_EINVAL for a NULL text. */
int em_wordpiece_encode(const em_wordpiece *wp, const char *text, size_t len, uint32_t *ids,
                        size_t max, size_t *n);
/* The vocabulary's size: its largest id + 1 (ids may leave gaps). */
uint32_t em_wordpiece_size(const em_wordpiece *wp);
/* The unknown token's id. */
uint32_t em_wordpiece_unk(const em_wordpiece *wp);
/* A token's id ("[CLS]", "##ing"), or -1. */
int64_t em_wordpiece_id(const em_wordpiece *wp, const char *tok, size_t len);
/* The median length in characters of the tokens (the vocabulary's and the
 * added ones not in it; rounded down), which model2vec cuts texts by. */
uint32_t em_wordpiece_median_chars(const em_wordpiece *wp);

/* ---- model2vec.c: Model2Vec static models -----------------------------------
 *
 * A Model2Vec model (Tulkens & van Dongen, 2024: a sentence transformer
 * distilled into one vector a token) is a folder with model.safetensors,
 * one 2-D tensor [vocab, dim] (named "embeddings" or "embedding.weight"
 * when there are several; F32, F16, BF16, F64 or I8), and tokenizer.json
 * (WordPiece only: Unigram and BPE models are refused, naming the type). An optional
 * "weights" tensor [vocab] weighs each token's row, and an optional
 * integer "mapping" tensor [vocab] sends each token to its row (the
 * vocabulary-quantised models). I8 matrices (model2vec's int8
 * quantisation, one scale for the whole matrix, which it does not keep)
 * are read as their integers: the scale cancels out in the unit mean. A
 * text's vector, as model2vec's encode(max_length=512): the text cut to
 * EM_M2V_MAX_TOKENS times the median token length in characters, its
 * tokens without [UNK], the first EM_M2V_MAX_TOKENS of them, the mean of
 * their (weighted) rows, scaled to unit length; no token left: the zero
 * vector. The ident names the folder's base name, both files' sizes and
 * CRC32C, the vocabulary and the dimension. */
#define EM_M2V_MAX_TOKENS 512u        /* tokens of a text (model2vec's max_length) */
#define EM_M2V_MAX_ROWS (1u << 22)    /* rows of the matrix */

/* Whether path names a Model2Vec model rather than a word vector file: a
 * folder, or a name ending in ".safetensors". */
int em_m2v_is_model(const char *path);
/* Open the model at path (a folder, or its .safetensors file with
 * tokenizer.json in the same folder; a sentence-transformers folder whose
 * 0_StaticEmbedding/ holds them too). Errors name the file: a missing
 * tokenizer.json or model.safetensors (FATHOM_ENOTFOUND), a tokenizer that
 * is not WordPiece (FATHOM_EINVAL), no 2-D tensor of floats or I8, a
 * vocabulary whose size is not the tensor's rows, weights or a mapping of
 * another length, a mapping to a row past the end (FATHOM_ESYNTAX). */
int em_m2v_open(em_embedder **out, const char *path);
/* The same from the two files' bytes (tokenizer.json's tok_len, the
 * safetensors' len; nothing kept of either), named tok_name and name in
 * messages; model names the model in the ident. For em_m2v_open and the
 * fuzz target. */
int em_m2v_new(em_embedder **out, const char *tok, size_t tok_len, const char *tok_name,
               const unsigned char *data, size_t len, const char *name, const char *model);

#endif /* FATHOM_EMBED_H */
