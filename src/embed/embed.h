/*
 * embed.h — the building blocks of the embedders (issue 15). So far:
 *
 *   vecfile.c   pretrained word vectors from the files they ship in:
 *               GloVe text, word2vec text and binary, fastText .vec
 *   dist.c      distance kernels (float32 and int8 dot products, SIMD
 *               with plain references) and int8 quantisation
 *   safetensors.c  the safetensors container (Model2Vec's matrix)
 *
 * Internal to the library; the public embedder interface comes with the
 * embedders themselves.
 */
#ifndef FATHOM_EMBED_H
#define FATHOM_EMBED_H

#include <stddef.h>
#include <stdint.h>

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

typedef struct em_vectors {
	uint32_t n, dim;
	int format;          /* the format read (never EM_VEC_AUTO) */
	uint32_t dups;       /* words given more than once (first kept) */
	char *pool;          /* the words, each NUL-terminated */
	uint32_t *word;      /* n offsets into pool */
	float *v;            /* n * dim values, row i word i's */
	uint32_t *slot;      /* open-addressing table of word index + 1 */
	uint32_t nslot;      /* a power of two */
} em_vectors;

/* Parse len bytes of a vector file; name is for messages. */
int em_vectors_parse(em_vectors **out, const char *data, size_t len, int format,
                     const char *name);
/* Read and parse a file. */
int em_vectors_read(em_vectors **out, const char *path, int format);
void em_vectors_free(em_vectors *v);
/* The index of a word, or -1. */
int64_t em_vectors_find(const em_vectors *v, const char *w, size_t len);
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
/* The kernel em_dot uses: "avx2", "sse2" or "scalar". */
const char *em_dist_kernel(void);
/* For tests: 1 the AVX2 kernels, 0 the SSE2 ones, -1 the CPU's choice
 * again. -1 when the CPU lacks what was asked (nothing changes). */
int em_dist_select(int avx2);
/* v as int8 with one scale (v[i] ~ out[i] * scale, |out[i]| <= 127, the
 * largest |v[i]| to 127); returns the scale (0 for a zero or non-finite
 * vector, out all 0). */
float em_quantize_i8(const float *v, uint32_t n, int8_t *out);

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

#endif /* FATHOM_EMBED_H */
