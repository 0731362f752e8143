/*
 * test_model2vec.c — Model2Vec models as the `static` embedder
 * (src/embed/model2vec.c) on tiny models written here: a text's vector is
 * the normalised mean of its tokens' rows, computed by hand; F16 rows,
 * per-token weights and a row mapping; a text of unknown tokens is the
 * zero vector; the ident; the errors, each naming the file; and the whole
 * way through the public API (an index whose embedder is static:DIR,
 * semantic search) and the CLI (fathom add --embedder static:DIR, when
 * FATHOM_BIN names the built binary, as tests/run.sh sets it).
 */
#include <math.h>
#include <sys/stat.h>

#include <jansson.h>

#include "embed/embed.h"
#include "fathom.h"
#include "test.h"
#include "util/util.h"

enum { DIM = 4 };

/* the vocabulary, ids 0.. */
static const char *const VOCAB[] = {
	"[PAD]", "[UNK]", "kestrel", "heron", "marsh", "cliff", "##s", "nest", "wade", "in",
	"on", "bird", "fish", "hover",
};
#define NV (sizeof VOCAB / sizeof VOCAB[0])

/* rows: small integers and halves, exact in F16 too */
static const float ROWS[NV][DIM] = {
	{ 0, 0, 0, 0 },      /* [PAD] */
	{ 9, 9, 9, 9 },      /* [UNK]: never used */
	{ 1, 0, 0, 0 },      /* kestrel */
	{ 0, 1, 0, 0 },      /* heron */
	{ 0, 1, 1, 0 },      /* marsh */
	{ 1, 0, 1, 0 },      /* cliff */
	{ 0, 0, 0, 0.5f },   /* ##s */
	{ 2, 0, 0, 1 },      /* nest */
	{ 0, 2, 0, 0 },      /* wade */
	{ 0, 0, 0.5f, 0.5f },/* in */
	{ 0.5f, 0, 0.5f, 0 },/* on */
	{ 1, 1, 0, 0 },      /* bird */
	{ 0, 1, 0, 1 },      /* fish */
	{ 1, 0, 0, 1 },      /* hover */
};

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(data, 1, len, f) == len);
	fclose(f);
}

static void write_tokenizer(const char *dir, const char *model_type, size_t nv)
{
	char buf[4096];
	size_t o = (size_t)snprintf(buf, sizeof buf,
	                            "{\"version\":\"1.0\",\"added_tokens\":[],"
	                            "\"normalizer\":{\"type\":\"BertNormalizer\",\"clean_text\":true,"
	                            "\"handle_chinese_chars\":true,\"strip_accents\":null,"
	                            "\"lowercase\":true},"
	                            "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
	                            "\"model\":{\"type\":\"%s\",\"unk_token\":\"[UNK]\","
	                            "\"continuing_subword_prefix\":\"##\","
	                            "\"max_input_chars_per_word\":100,\"vocab\":{",
	                            model_type);
	for (size_t i = 0; i < nv; i++)
		o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\"%s\":%zu", i ? "," : "", VOCAB[i], i);
	o += (size_t)snprintf(buf + o, sizeof buf - o, "}}}");
	write_file(dir, "tokenizer.json", buf, o);
}

/* a float as IEEE half (the values here are exact in it) */
static uint16_t to_half(float f)
{
	if (f == 0)
		return 0;
	int e;
	float m = frexpf(fabsf(f), &e);  /* f = m 2^e, m in [0.5, 1) */
	uint16_t h = (uint16_t)(((e - 1 + 15) << 10) | (uint16_t)((m * 2 - 1) * 1024));
	return f < 0 ? (uint16_t)(h | 0x8000) : h;
}

/* model.safetensors: "embeddings" [rows, DIM] (F32 or F16), and extra
 * tensors given as JSON header entries with their data appended */
static void write_model(const char *dir, size_t rows, int f16, const char *extra_json,
                        const void *extra, size_t extra_len, const char *emb_name)
{
	unsigned char data[8192];
	size_t dl = 0;
	for (size_t i = 0; i < rows; i++)
		for (int k = 0; k < DIM; k++) {
			float v = ROWS[i % NV][k];
			if (f16) {
				uint16_t h = to_half(v);
				data[dl++] = (unsigned char)h;
				data[dl++] = (unsigned char)(h >> 8);
			} else {
				memcpy(data + dl, &v, 4);
				dl += 4;
			}
		}
	char hdr[2048];
	int hl = snprintf(hdr, sizeof hdr,
	                  "{\"__metadata__\":{\"format\":\"pt\"},\"%s\":{\"dtype\":\"%s\",\"shape\":[%zu,%d],"
	                  "\"data_offsets\":[0,%zu]}%s%s}",
	                  emb_name, f16 ? "F16" : "F32", rows, DIM, dl, extra_json ? "," : "",
	                  extra_json ? extra_json : "");
	if (extra_len)
		memcpy(data + dl, extra, extra_len);
	dl += extra_len;
	unsigned char *file = malloc(8 + (size_t)hl + dl);
	for (int i = 0; i < 8; i++)
		file[i] = (unsigned char)((uint64_t)hl >> (8 * i));
	memcpy(file + 8, hdr, (size_t)hl);
	memcpy(file + 8 + hl, data, dl);
	write_file(dir, "model.safetensors", file, 8 + (size_t)hl + dl);
	free(file);
}

static char *make_model(int f16)
{
	char *dir = test_tmpdir("m2v");
	write_tokenizer(dir, "WordPiece", NV);
	write_model(dir, NV, f16, NULL, NULL, 0, "embeddings");
	return dir;
}

/* the normalised weighted mean of rows ids (weights w, or 1) */
static void expected(const int *ids, size_t n, const float *w, float *out)
{
	double s[DIM] = { 0 }, ss = 0;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < DIM; k++)
			s[k] += (w ? w[ids[i]] : 1.0) * ROWS[ids[i]][k] / (double)n;
	for (int k = 0; k < DIM; k++)
		ss += s[k] * s[k];
	for (int k = 0; k < DIM; k++)
		out[k] = ss > 0 ? (float)(s[k] / sqrt(ss)) : 0.0f;
}

static int close_to(const float *a, const float *b)
{
	for (int k = 0; k < DIM; k++)
		if (fabsf(a[k] - b[k]) > 1e-6f)
			return 0;
	return 1;
}

static void check_embed(em_embedder *e, const char *text, const int *ids, size_t n,
                        const float *w)
{
	float got[DIM], want[DIM];
	size_t len = strlen(text);
	const char *t = text;
	CHECK_OK(em_embed(e, &t, &len, 1, got));
	expected(ids, n, w, want);
	if (!close_to(got, want))
		fprintf(stderr, "  \"%s\": got %g %g %g %g, want %g %g %g %g\n", text, got[0], got[1],
		        got[2], got[3], want[0], want[1], want[2], want[3]);
	CHECK(close_to(got, want));
}

static void test_embed(void)
{
	for (int f16 = 0; f16 < 2; f16++) {
		char *dir = make_model(f16);
		em_embedder *e = NULL;
		CHECK_OK(em_static_open(&e, dir));
		if (!e)
			continue;
		CHECK_EQ(e->dim, DIM);
		CHECK_STR(e->ops->kind, "static");
		CHECK(strstr(e->ident, "model2vec=") != NULL);
		CHECK(strstr(e->ident, " dim=4") != NULL);
		CHECK(strstr(e->ident, " vocab=14") != NULL);
		/* kestrel nest ##s: rows 2, 7, 6 */
		check_embed(e, "Kestrel nests", (const int[]){ 2, 7, 6 }, 3, NULL);
		/* unknown words are left out of the mean, not averaged in */
		check_embed(e, "heron zebra wade, in MARSH!", (const int[]){ 3, 8, 9, 4 }, 4, NULL);
		/* repeated tokens count each time */
		check_embed(e, "bird bird fish", (const int[]){ 11, 11, 12 }, 3, NULL);
		/* nothing known: the zero vector */
		float z[DIM] = { 1, 1, 1, 1 };
		const char *t = "zebra quagga";
		size_t len = strlen(t);
		CHECK_OK(em_embed(e, &t, &len, 1, z));
		CHECK(z[0] == 0 && z[1] == 0 && z[2] == 0 && z[3] == 0);
		/* a batch: each row its own */
		const char *texts[3] = { "heron", "", "cliff" };
		size_t lens[3] = { 5, 0, 5 };
		float out[3 * DIM];
		CHECK_OK(em_embed(e, texts, lens, 3, out));
		CHECK(out[1] == 1.0f && out[4] == 0 && out[7] == 0);
		CHECK(fabsf(out[8] - (float)M_SQRT1_2) < 1e-6f && fabsf(out[10] - (float)M_SQRT1_2) < 1e-6f);
		/* the .safetensors file names the same model */
		char p[1024];
		snprintf(p, sizeof p, "%s/model.safetensors", dir);
		em_embedder *e2 = NULL;
		CHECK_OK(em_static_open(&e2, p));
		if (e2) {
			CHECK_STR(e2->ident, e->ident);
			em_embedder_free(e2);
		}
		em_embedder_free(e);
		test_rmrf(dir);
		free(dir);
	}
}

/* a dimension that is not a multiple of 4: the vector loop's tail */
static void test_dim6(void)
{
	char *dir = test_tmpdir("m2v");
	write_tokenizer(dir, "WordPiece", NV);
	float m[NV][6];
	for (size_t i = 0; i < NV; i++)
		for (int k = 0; k < 6; k++)
			m[i][k] = ROWS[i][k % 4];
	char hdr[256];
	int hl = snprintf(hdr, sizeof hdr,
	                  "{\"embeddings\":{\"dtype\":\"F32\",\"shape\":[%zu,6],\"data_offsets\":[0,%zu]}}",
	                  NV, sizeof m);
	unsigned char *f = calloc(1, 8 + (size_t)hl + sizeof m);
	f[0] = (unsigned char)hl;
	memcpy(f + 8, hdr, (size_t)hl);
	memcpy(f + 8 + hl, m, sizeof m);
	write_file(dir, "model.safetensors", f, 8 + (size_t)hl + sizeof m);
	free(f);
	em_embedder *e = NULL;
	CHECK_OK(em_static_open(&e, dir));
	if (e) {
		/* kestrel nest ##s: (1,0,0,0,1,0) + (2,0,0,1,2,0) + (0,0,0,.5,0,0) =
		 * (3,0,0,1.5,3,0), length 4.5 */
		const float want[6] = { 3 / 4.5f, 0, 0, 1.5f / 4.5f, 3 / 4.5f, 0 };
		float got[6];
		const char *t = "kestrel nests";
		size_t len = strlen(t);
		CHECK_OK(em_embed(e, &t, &len, 1, got));
		for (int k = 0; k < 6; k++)
			CHECK(fabsf(got[k] - want[k]) < 1e-6f);
		em_embedder_free(e);
	}
	test_rmrf(dir);
	free(dir);
}

/* a text of n copies of each word in words (NULL-terminated), in order */
static char *repeat(const char *const *words, const int *n, size_t *len)
{
	size_t cap = 1, o = 0;
	for (int k = 0; words[k]; k++)
		cap += (strlen(words[k]) + 1) * (size_t)n[k];
	char *t = malloc(cap);
	for (int k = 0; words[k]; k++)
		for (int i = 0; i < n[k]; i++)
			o += (size_t)snprintf(t + o, cap - o, "%s ", words[k]);
	*len = o;
	return t;
}

/* model2vec's bounds: the text cut to 512 times the median token length
 * (4 characters here: 2048), then the first 512 known tokens, counted
 * after the unknown ones are dropped */
static void test_long_text(void)
{
	char *dir = make_model(0);
	em_embedder *e = NULL;
	CHECK_OK(em_static_open(&e, dir));
	if (e) {
		/* 20 unknown, 500 "in", 12 "heron" (the 512th known token), then
		 * "kestrel" past the cap: 1772 characters */
		size_t len;
		char *t = repeat((const char *const[]){ "zebra", "in", "heron", "kestrel", NULL },
		                 (const int[]){ 20, 500, 12, 10 }, &len);
		int ids[512];
		for (int i = 0; i < 512; i++)
			ids[i] = i < 500 ? 9 : 3;
		check_embed(e, t, ids, 512, NULL);
		free(t);
		/* "heron" ends before character 2048, "kestrel" starts at 2046 */
		t = repeat((const char *const[]){ "zebra", "heron", "kestrel", NULL },
		           (const int[]){ 340, 1, 5 }, &len);
		check_embed(e, t, (const int[]){ 3 }, 1, NULL);
		free(t);
		em_embedder_free(e);
	}
	test_rmrf(dir);
	free(dir);
}

/* int8 rows (twice ROWS: integers) give what the float rows give */
static void test_int8(void)
{
	char *dir = test_tmpdir("m2v");
	write_tokenizer(dir, "WordPiece", NV);
	int8_t q[NV * DIM];
	for (size_t i = 0; i < NV; i++)
		for (int k = 0; k < DIM; k++)
			q[i * DIM + k] = (int8_t)(ROWS[i][k] * 2);
	char hdr[256];
	int hl = snprintf(hdr, sizeof hdr,
	                  "{\"embeddings\":{\"dtype\":\"I8\",\"shape\":[%zu,%d],\"data_offsets\":[0,%zu]}}",
	                  NV, DIM, sizeof q);
	unsigned char *f = malloc(8 + (size_t)hl + sizeof q);
	memset(f, 0, 8);
	f[0] = (unsigned char)hl;
	memcpy(f + 8, hdr, (size_t)hl);
	memcpy(f + 8 + hl, q, sizeof q);
	/* in the sentence-transformers layout, for once */
	char sub[1024];
	snprintf(sub, sizeof sub, "%s/0_StaticEmbedding", dir);
	CHECK(mkdir(sub, 0755) == 0);
	write_file(sub, "model.safetensors", f, 8 + (size_t)hl + sizeof q);
	char p[1024], p2[1100];
	snprintf(p, sizeof p, "%s/tokenizer.json", dir);
	snprintf(p2, sizeof p2, "%s/tokenizer.json", sub);
	CHECK(rename(p, p2) == 0);
	free(f);
	em_embedder *e = NULL;
	CHECK_OK(em_static_open(&e, dir));
	if (e) {
		check_embed(e, "Kestrel nests", (const int[]){ 2, 7, 6 }, 3, NULL);
		check_embed(e, "heron wades in marsh", (const int[]){ 3, 8, 6, 9, 4 }, 5, NULL);
		em_embedder_free(e);
	}
	test_rmrf(dir);
	free(dir);
}

static void test_weights_and_mapping(void)
{
	char *dir = test_tmpdir("m2v");
	write_tokenizer(dir, "WordPiece", NV);
	float w[NV];
	for (size_t i = 0; i < NV; i++)
		w[i] = (float)(i % 3) + 0.5f;
	char extra[256];
	size_t off = NV * DIM * 4;
	snprintf(extra, sizeof extra,
	         "\"weights\":{\"dtype\":\"F32\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}", NV, off,
	         off + sizeof w);
	write_model(dir, NV, 0, extra, w, sizeof w, "embeddings");
	em_embedder *e = NULL;
	CHECK_OK(em_static_open(&e, dir));
	if (e) {
		check_embed(e, "kestrel nests", (const int[]){ 2, 7, 6 }, 3, w);
		check_embed(e, "heron marsh wade", (const int[]){ 3, 4, 8 }, 3, w);
		em_embedder_free(e);
	}
	/* a mapping: token i's row is i % 4 (rows 0..3 of ROWS) */
	int32_t map[NV];
	for (size_t i = 0; i < NV; i++)
		map[i] = (int32_t)(i % 4);
	off = 4 * DIM * 4;
	snprintf(extra, sizeof extra,
	         "\"mapping\":{\"dtype\":\"I32\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}", NV, off,
	         off + sizeof map);
	write_model(dir, 4, 0, extra, map, sizeof map, "embeddings");
	CHECK_OK(em_static_open(&e, dir));
	if (e) {
		/* nest (7) -> row 3 (heron's), kestrel (2) -> row 2 */
		check_embed(e, "kestrel nest", (const int[]){ 2, 3 }, 2, NULL);
		em_embedder_free(e);
	}
	/* a mapping past the rows */
	map[5] = 4;
	write_model(dir, 4, 0, extra, map, sizeof map, "embeddings");
	CHECK_EQ(em_static_open(&e, dir), FATHOM_ESYNTAX);
	CHECK(strstr(fathom_errmsg(), "mapping") && strstr(fathom_errmsg(), "model.safetensors"));
	test_rmrf(dir);
	free(dir);
}

static void expect_error(const char *path, int code, const char *file, const char *words)
{
	em_embedder *e = (em_embedder *)1;
	int rc = em_static_open(&e, path);
	CHECK_EQ(rc, code);
	CHECK(e == NULL);
	const char *m = fathom_errmsg();
	if (!strstr(m, file) || !strstr(m, words))
		fprintf(stderr, "  message \"%s\" lacks \"%s\" or \"%s\"\n", m, file, words);
	CHECK(strstr(m, file) != NULL);
	CHECK(strstr(m, words) != NULL);
}

static void test_errors(void)
{
	char *dir = test_tmpdir("m2v");
	char p[1024];
	/* no tokenizer.json */
	write_model(dir, NV, 0, NULL, NULL, 0, "embeddings");
	expect_error(dir, FATHOM_ENOTFOUND, "tokenizer.json", "no tokenizer.json");
	/* no model.safetensors */
	snprintf(p, sizeof p, "%s/model.safetensors", dir);
	remove(p);
	write_tokenizer(dir, "WordPiece", NV);
	expect_error(dir, FATHOM_ENOTFOUND, "model.safetensors", "model.safetensors");
	/* a Unigram tokenizer: refused by name */
	write_model(dir, NV, 0, NULL, NULL, 0, "embeddings");
	write_tokenizer(dir, "Unigram", NV);
	expect_error(dir, FATHOM_EINVAL, "tokenizer.json", "Unigram");
	write_tokenizer(dir, "BPE", NV);
	expect_error(dir, FATHOM_EINVAL, "tokenizer.json", "BPE");
	/* vocabulary of 13 tokens, 14 rows */
	write_tokenizer(dir, "WordPiece", NV - 1);
	expect_error(dir, FATHOM_ESYNTAX, "model.safetensors", "14 rows");
	write_tokenizer(dir, "WordPiece", NV);
	/* not 2-D */
	{
		unsigned char b[8 + 256 + 64] = { 0 };
		int hl = snprintf((char *)b + 8, 256,
		                  "{\"embeddings\":{\"dtype\":\"F32\",\"shape\":[2,2,2],"
		                  "\"data_offsets\":[0,32]}}");
		b[0] = (unsigned char)hl;
		write_file(dir, "model.safetensors", b, 8 + (size_t)hl + 32);
		expect_error(dir, FATHOM_ESYNTAX, "model.safetensors", "3 dimensions");
		/* integers other than I8 */
		hl = snprintf((char *)b + 8, 256,
		              "{\"embeddings\":{\"dtype\":\"I16\",\"shape\":[14,1],\"data_offsets\":[0,28]}}");
		b[0] = (unsigned char)hl;
		write_file(dir, "model.safetensors", b, 8 + (size_t)hl + 28);
		expect_error(dir, FATHOM_ESYNTAX, "model.safetensors", "floats");
		/* no tensor at all */
		hl = snprintf((char *)b + 8, 256, "{\"__metadata__\":{}}");
		b[0] = (unsigned char)hl;
		write_file(dir, "model.safetensors", b, 8 + (size_t)hl);
		expect_error(dir, FATHOM_ESYNTAX, "model.safetensors", "no 2-D tensor");
	}
	/* one 2-D tensor under another name is the matrix */
	write_model(dir, NV, 0, NULL, NULL, 0, "emb");
	em_embedder *e = NULL;
	CHECK_OK(em_static_open(&e, dir));
	em_embedder_free(e);
	/* weights of the wrong length */
	float w[3] = { 1, 1, 1 };
	char extra[256];
	snprintf(extra, sizeof extra,
	         "\"weights\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[%zu,%zu]}",
	         NV * DIM * 4, NV * DIM * 4 + sizeof w);
	write_model(dir, NV, 0, extra, w, sizeof w, "embeddings");
	expect_error(dir, FATHOM_ESYNTAX, "model.safetensors", "weights");
	/* a damaged file: the safetensors reader's error, naming it */
	write_file(dir, "model.safetensors", "\x05\0\0\0\0\0\0\0{\"a\":", 13);
	expect_error(dir, FATHOM_ESYNTAX, "model.safetensors", "header");
	/* a .safetensors file alone in its folder */
	char *lone = test_tmpdir("m2v-lone");
	write_model(lone, NV, 0, NULL, NULL, 0, "embeddings");
	snprintf(p, sizeof p, "%s/model.safetensors", lone);
	expect_error(p, FATHOM_ENOTFOUND, "tokenizer.json", "no tokenizer.json");
	test_rmrf(lone);
	free(lone);
	/* a word vector file is still read as one */
	write_file(dir, "glove.txt", "heron 0 1 0 0\nkestrel 1 0 0 0\n", 30);
	snprintf(p, sizeof p, "%s/glove.txt", dir);
	CHECK_OK(em_static_open(&e, p));
	if (e) {
		CHECK(strstr(e->ident, "model2vec") == NULL);
		em_embedder_free(e);
	}
	test_rmrf(dir);
	free(dir);
}

/* ---- against model2vec's encode, with a real tokenizer --------------------------
 *
 * tests/data/wordpiece-hf/m2v.jsonl holds what model2vec's encode gives
 * (computed from HF tokenizers' ids by m2v.js beside it) for a model of
 * all-MiniLM-L6-v2's tokenizer.json and 8 columns given by a formula, on
 * random.jsonl's texts and long texts made of them. */
#define HF_TOK "../shared/data/models/all-MiniLM-L6-v2/tokenizer.json"
#define HF_DIR "tests/data/wordpiece-hf/"

static float hf_row(uint64_t i, uint64_t k)
{
	return (float)((double)((i * 2654435761u + k * 40503u) % 2003) / 1001.0 - 1.0);
}

/* a file's lines (at most max), each malloc'd; the count */
static size_t read_lines(const char *path, char **lines, size_t max)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, cap = 0;
	char *line = NULL;
	ssize_t l;
	while (f && n < max && (l = getline(&line, &cap, f)) > 0) {
		lines[n++] = line;
		line = NULL;
		cap = 0;
	}
	free(line);
	if (f)
		fclose(f);
	return n;
}

static double hf_max_err = -1;

static void test_hf_reference(void)
{
	FILE *tf = fopen(HF_TOK, "rb");
	if (!tf) {
		printf("  (test_hf_reference: " HF_TOK " absent, skipped)\n");
		return;
	}
	char *dir = test_tmpdir("m2v-hf");
	/* tokenizer.json copied, the matrix and weights by the formulas */
	fseek(tf, 0, SEEK_END);
	long tl = ftell(tf);
	fseek(tf, 0, SEEK_SET);
	char *tok = malloc((size_t)tl);
	CHECK(fread(tok, 1, (size_t)tl, tf) == (size_t)tl);
	fclose(tf);
	write_file(dir, "tokenizer.json", tok, (size_t)tl);
	free(tok);
	enum { V = 30522, D = 8 };
	char hdr[512];
	size_t eb = (size_t)V * D * 4, wb = (size_t)V * 4;
	int hl = snprintf(hdr, sizeof hdr,
	                  "{\"embeddings\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[0,%zu]},"
	                  "\"weights\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}}",
	                  V, D, eb, V, eb, eb + wb);
	size_t fl = 8 + (size_t)hl + eb + wb;
	unsigned char *f = calloc(1, fl);
	for (int b = 0; b < 8; b++)
		f[b] = (unsigned char)((uint64_t)hl >> (8 * b));
	memcpy(f + 8, hdr, (size_t)hl);
	float *m = (float *)(f + 8 + hl);   /* little-endian, as x86 */
	for (size_t i = 0; i < V; i++) {
		for (size_t k = 0; k < D; k++) {
			float x = hf_row(i, k);
			memcpy((unsigned char *)m + (i * D + k) * 4, &x, 4);
		}
		float w = 0.5f + (float)(i % 7) / 8;
		memcpy(f + 8 + hl + eb + i * 4, &w, 4);
	}
	write_file(dir, "model.safetensors", f, fl);
	free(f);

	static char *texts[1000], *refs[400];
	size_t nt = read_lines(HF_DIR "random.jsonl", texts, 1000);
	size_t nr = read_lines(HF_DIR "m2v.jsonl", refs, 400);
	CHECK_EQ(nt, 1000);
	CHECK_EQ(nr, 340);
	em_embedder *e = NULL;
	CHECK_OK(em_static_open(&e, dir));
	double worst = 0;
	int bad = 0;
	for (size_t r = 0; e && r < nr; r++) {
		json_error_t je;
		json_t *o = json_loads(refs[r], 0, &je), *vec = json_object_get(o, "vec");
		/* the text: line i, lines a..b-1 joined by spaces, or repeated */
		char *buf = NULL;
		size_t len = 0;
		FILE *mf = open_memstream(&buf, &len);
		json_t *join = json_object_get(o, "join"), *rep = json_object_get(o, "repeat");
		size_t a = 0, b = 0, times = 1;
		const char *prefix = "";
		if (json_is_array(join)) {
			a = (size_t)json_integer_value(json_array_get(join, 0));
			b = (size_t)json_integer_value(json_array_get(join, 1));
		} else if (rep) {
			a = (size_t)json_integer_value(rep);
			b = a + 1;
			times = (size_t)json_integer_value(json_object_get(o, "times"));
			prefix = "a b. c, d; e f g h i j ";
		} else {
			a = (size_t)json_integer_value(json_object_get(o, "i"));
			b = a + 1;
		}
		for (size_t t = 0; t < times; t++)
			for (size_t i = a; i < b && i < nt; i++) {
				json_t *line = json_loads(texts[i], JSON_ALLOW_NUL, &je);
				json_t *txt = json_object_get(line, "text");
				if (json_is_array(join) && i > a)
					fputc(' ', mf);
				fputs(prefix, mf);
				fwrite(json_string_value(txt), 1, json_string_length(txt), mf);
				if (rep)
					fputc(' ', mf);
				json_decref(line);
			}
		fclose(mf);
		float got[D];
		const char *tp = buf;
		CHECK_OK(em_embed(e, &tp, &len, 1, got));
		double err = 0;
		for (size_t k = 0; k < D; k++) {
			double d = fabs(got[k] - json_real_value(json_array_get(vec, k)));
			err = d > err ? d : err;
		}
		if (err > 1e-5 && bad++ < 5)
			fprintf(stderr, "  reference %zu: off by %g\n", r, err);
		worst = err > worst ? err : worst;
		free(buf);
		json_decref(o);
	}
	CHECK_EQ(bad, 0);
	hf_max_err = worst;
	em_embedder_free(e);
	for (size_t i = 0; i < nt; i++)
		free(texts[i]);
	for (size_t i = 0; i < nr; i++)
		free(refs[i]);
	test_rmrf(dir);
	free(dir);
}

/* Every allocation failing in turn while a model loads and embeds (as
 * test_fault.c does for the index): FATHOM_OK or FATHOM_ENOMEM each time,
 * never a crash or a leak (make sanitize looks), and the same vector when
 * it gets through. */
static void test_alloc_faults(void)
{
	char *dir = make_model(0);
	float want[DIM];
	expected((const int[]){ 2, 7, 6 }, 3, NULL, want);
	const char *t = "Kestrel nests [UNK] [CLS]";
	size_t len = strlen(t);
	long n;
	int runs = 0, bad = 0;
	for (n = 0; n < 10000; n++) {
		fa_alloc_fail_after(n);
		em_embedder *e = NULL;
		int rc = em_static_open(&e, dir);
		float got[DIM];
		if (rc == 0)
			rc = em_embed(e, &t, &len, 1, got);
		long failed = fa_alloc_failed();
		fa_alloc_fail_after(-1);
		runs++;
		if (rc != 0 && rc != FATHOM_ENOMEM)
			bad++;
		if (rc == 0 && !close_to(got, want))
			bad++;
		em_embedder_free(e);
		if (!failed)
			break;
	}
	CHECK_EQ(bad, 0);
	CHECK(n < 10000);
	CHECK(runs > 5);   /* it did allocate, and met the countdown */
	test_rmrf(dir);
	free(dir);
}

static const char DOCS[] =
	"{\"id\":\"k\",\"title\":\"Raptors\",\"body\":\"kestrel nests on cliffs\"}\n"
	"{\"id\":\"h\",\"title\":\"Waders\",\"body\":\"heron wades in marsh\"}\n"
	"{\"id\":\"f\",\"title\":\"Water\",\"body\":\"fish in marsh\"}\n";

/* the top hit of a semantic search, "" when none, "error" on an error */
static void top_semantic(fathom_index *ix, const char *q, char *id, size_t cap, size_t *n)
{
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = FATHOM_MODE_SEMANTIC;
	fathom_results *r = NULL;
	*n = 0;
	snprintf(id, cap, "error");
	if (fathom_search(&r, ix, q, &so) != 0) {
		fprintf(stderr, "  search %s: %s\n", q, fathom_errmsg());
		return;
	}
	*n = fathom_results_count(r);
	snprintf(id, cap, "%s", *n ? fathom_results_hit(r, 0)->doc_id : "");
	fathom_results_free(r);
}

static void test_index_and_search(void)
{
	char *model = make_model(0);
	char *dir = test_tmpdir("m2v-ix");
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	fathom_index *ix = NULL;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	if (!ix)
		goto done;
	CHECK_OK(fathom_config_set(ix, "embedder.file", model));
	CHECK_OK(fathom_config_set(ix, "embedder", "static"));
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_add_jsonl_mem(ix, DOCS, strlen(DOCS), "docs", NULL, &st));
	CHECK_OK(fathom_commit(ix));
	/* the index's embedder is the model */
	fathom_embedder *fe = NULL;
	CHECK_OK(fathom_embedder_open(&fe, ix));
	if (fe) {
		CHECK_EQ(fathom_embedder_dim(fe), DIM);
		CHECK(strstr(fathom_embedder_ident(fe), "model2vec=") != NULL);
		float v[DIM];
		const char *t = "hovering bird";   /* hover ##ing? no: "hovering" unknown; bird */
		size_t len = strlen(t);
		CHECK_OK(fathom_embed(fe, &t, &len, 1, v));
		CHECK(fabsf(v[0] - (float)M_SQRT1_2) < 1e-6f && fabsf(v[1] - (float)M_SQRT1_2) < 1e-6f);
		fathom_embedder_free(fe);
	}
	/* semantic search: words the documents do not share, by their rows */
	char id[64];
	size_t n;
	top_semantic(ix, "wade", id, sizeof id, &n);   /* (0,1,0,0): h, then f */
	CHECK_STR(id, "h");
	CHECK_EQ(n, 3);
	top_semantic(ix, "hover", id, sizeof id, &n);  /* (1,0,0,1): k */
	CHECK_STR(id, "k");
	fathom_close(ix);
done:
	test_rmrf(dir);
	test_rmrf(model);
	free(dir);
	free(model);
}

/* dir/name's first cap - 1 bytes, NUL-terminated ("" when absent) */
static void read_small(const char *dir, const char *name, char *out, size_t cap)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "rb");
	out[0] = 0;
	if (f) {
		size_t got = fread(out, 1, cap - 1, f);
		out[got] = 0;
		fclose(f);
	}
}

/* fathom add --embedder static:DIR, then fathom search --mode semantic */
static void test_cli(void)
{
	const char *bin = getenv("FATHOM_BIN");
	struct stat sb;
	if (!bin || stat(bin, &sb) != 0) {
		printf("  (test_cli: FATHOM_BIN not set or absent; run through tests/run.sh)\n");
		return;
	}
	char *model = make_model(1);
	char *dir = test_tmpdir("m2v-cli");
	write_file(dir, "docs.jsonl", DOCS, strlen(DOCS));
	char cmd[4096];
	snprintf(cmd, sizeof cmd,
	         "'%s' add --index '%s/ix' --embedder 'static:%s' --jsonl '%s/docs.jsonl' -q && "
	         "'%s' search --index '%s/ix' --mode semantic --json hover > '%s/out.json'",
	         bin, dir, model, dir, bin, dir, dir);
	CHECK_EQ(system(cmd), 0);
	char out[8192];
	read_small(dir, "out.json", out, sizeof out);
	/* k first: its id comes before any other hit's */
	const char *k = strstr(out, "\"k\""), *h = strstr(out, "\"h\"");
	if (!k || (h && h < k))
		fprintf(stderr, "  output: %.500s\n", out);
	CHECK(k != NULL);
	CHECK(!h || k < h);
	/* a Unigram model is refused, naming the file */
	write_tokenizer(model, "Unigram", NV);
	snprintf(cmd, sizeof cmd,
	         "'%s' add --index '%s/ix2' --embedder 'static:%s' --jsonl '%s/docs.jsonl' -q "
	         "2> '%s/err.txt'",
	         bin, dir, model, dir, dir);
	CHECK(system(cmd) != 0);
	read_small(dir, "err.txt", out, sizeof out);
	if (!strstr(out, "Unigram") || !strstr(out, "tokenizer.json"))
		fprintf(stderr, "  stderr: %.500s\n", out);
	CHECK(strstr(out, "Unigram") && strstr(out, "tokenizer.json"));
	test_rmrf(dir);
	test_rmrf(model);
	free(dir);
	free(model);
}

int main(void)
{
	RUN(test_embed);
	RUN(test_long_text);
	RUN(test_int8);
	RUN(test_dim6);
	RUN(test_weights_and_mapping);
	RUN(test_errors);
	RUN(test_alloc_faults);
	RUN(test_hf_reference);
	if (hf_max_err >= 0)
		printf("model2vec reference (340 texts): largest difference %.3g\n", hf_max_err);
	RUN(test_index_and_search);
	RUN(test_cli);
	return TEST_DONE();
}
