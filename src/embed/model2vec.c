/*
 * model2vec.c — Model2Vec static models as the `static` embedder.
 *
 * A Model2Vec model (Tulkens & van Dongen, 2024) is a sentence transformer
 * distilled into one vector per token of its tokenizer: embedding a text
 * is tokenizing it and averaging rows, with no network at all, so it runs
 * at the speed of the word-vector embedders with much of the quality of
 * the transformer it came from. The model is a folder:
 *
 *   model.safetensors   "embeddings" [vocab, dim] floats (F32, F16, BF16,
 *                       F64) or I8 (model2vec's int8 quantisation: one
 *                       scale for the matrix, not kept, which the unit
 *                       mean cancels); "embedding.weight" in the
 *                       sentence-transformers layout, and a file of one
 *                       2-D tensor may name it otherwise; optionally "weights" [vocab] floats,
 *                       each token's weight, and "mapping" [vocab]
 *                       integers, each token's row (vocabulary-quantised
 *                       models share rows)
 *   tokenizer.json      a WordPiece tokenizer (wordpiece.c); Unigram and
 *                       BPE models exist and are refused, naming the type
 *   config.json         not read (its "normalize" is always on here: the
 *                       index holds unit vectors)
 *
 * or the same files in the folder's 0_StaticEmbedding/ (a sentence
 * transformers model whose first module is a StaticEmbedding).
 *
 * A text's vector is what model2vec's StaticModel.encode gives: the text
 * cut to EM_M2V_MAX_TOKENS times the vocabulary's median token length in
 * characters (a cheap bound before tokenizing), the ids of the text
 * without special tokens and without the unknown token, the
 * first EM_M2V_MAX_TOKENS of them, the mean of their rows (each times its
 * weight when the model has weights), scaled to unit length; a text with
 * no token left is the zero vector, as the word-vector embedders give a
 * text with no known word.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

typedef struct m2v {
	em_wordpiece *wp;
	uint32_t vocab;              /* the tokenizer's ids: 0..vocab-1 */
	uint32_t rows, dim;
	float *v;                    /* rows * dim */
	float *weight;               /* vocab weights, or NULL */
	uint32_t *map;               /* vocab rows, or NULL: id i is row i */
	size_t max_chars;            /* characters of a text read */
} m2v;

static void m2v_free_model(m2v *m)
{
	if (!m)
		return;
	em_wordpiece_free(m->wp);
	fa_free(m->v);
	fa_free(m->weight);
	fa_free(m->map);
	fa_free(m);
}

/* ---- embedding -------------------------------------------------------------- */

typedef float v4sf __attribute__((vector_size(16)));

/* Sum the known tokens' weighted rows into out (dim values, zeroed). */
static void add_rows(const m2v *m, const uint32_t *ids, size_t n, float *restrict out)
{
	uint32_t used = 0, dim = m->dim, unk = em_wordpiece_unk(m->wp);
	for (size_t i = 0; i < n && used < EM_M2V_MAX_TOKENS; i++) {
		uint32_t id = ids[i];
		if (id == unk || id >= m->vocab)
			continue;
		used++;
		uint32_t r = m->map ? m->map[id] : id;
		float w = m->weight ? m->weight[id] : 1.0f;
		const float *restrict row = m->v + (size_t)r * dim;
		uint32_t k = 0;
		/* four lanes at a time (GCC's and clang's vector extension: SSE2
		 * on x86-64), which -O2 does not do by itself here: 4,800 to
		 * 6,300 chunks of 1,500 bytes a second, 256 dimensions; each
		 * lane adds in the same order as the plain loop below */
		for (; k + 4 <= dim; k += 4) {
			v4sf o, x;
			memcpy(&o, out + k, sizeof o);
			memcpy(&x, row + k, sizeof x);
			o += w * x;
			memcpy(out + k, &o, sizeof o);
		}
		for (; k < dim; k++)
			out[k] += w * row[k];
	}
}

static int m2v_embed(em_embedder *e, const char *const *texts, const size_t *lens, size_t n,
                     float *out)
{
	const m2v *m = e->impl;
	uint32_t buf[EM_M2V_MAX_TOKENS];
	for (size_t i = 0; i < n; i++) {
		float *row = out + i * m->dim;
		memset(row, 0, (size_t)m->dim * sizeof *row);
		/* the first max_chars characters */
		size_t len = 0, chars = 0;
		while (len < lens[i]) {
			if (((unsigned char)texts[i][len] & 0xc0) != 0x80 && chars++ == m->max_chars)
				break;
			len++;
		}
		size_t nt;
		int rc = em_wordpiece_encode(m->wp, texts[i], len, buf, EM_M2V_MAX_TOKENS, &nt);
		if (rc)
			return rc;
		if (nt <= EM_M2V_MAX_TOKENS) {
			add_rows(m, buf, nt, row);
		} else {
			/* cut after unknown tokens are dropped, as model2vec does:
			 * all the ids (a token takes a byte at least) */
			uint32_t *all = fa_malloc(nt * sizeof *all);
			if (!all)
				return fa_err(FATHOM_ENOMEM, "model2vec: %zu tokens", nt);
			size_t nt2;
			rc = em_wordpiece_encode(m->wp, texts[i], len, all, nt, &nt2);
			if (!rc)
				add_rows(m, all, nt2 < nt ? nt2 : nt, row);
			fa_free(all);
			if (rc)
				return rc;
		}
		/* the mean's scale goes with the normalising */
		em_normalize(row, m->dim);
	}
	return 0;
}

static void m2v_free(em_embedder *e)
{
	m2v_free_model(e->impl);
	fa_free(e);
}

/* ---- loading ------------------------------------------------------------------ */

int em_m2v_is_model(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	size_t l = strlen(path), sl = strlen(".safetensors");
	return l > sl && strcmp(path + l - sl, ".safetensors") == 0;
}

static int is_float(int dt)
{
	return dt == EM_ST_F32 || dt == EM_ST_F16 || dt == EM_ST_BF16 || dt == EM_ST_F64;
}

/* The matrix: "embeddings" (model2vec's), "embedding.weight" (a
 * sentence-transformers StaticEmbedding's), else the file's one 2-D
 * tensor of floats or I8. */
static int pick_matrix(const em_st *st, const char *name, const em_tensor **out)
{
	const em_tensor *t = em_st_find(st, "embeddings");
	if (!t)
		t = em_st_find(st, "embedding.weight");
	if (!t) {
		for (uint32_t i = 0; i < st->n; i++) {
			if (st->t[i].ndim != 2 || !(is_float(st->t[i].dtype) || st->t[i].dtype == EM_ST_I8))
				continue;
			if (t)
				return fa_err(FATHOM_ESYNTAX, "%s: several 2-D tensors and none named "
				              "\"embeddings\"", name);
			t = &st->t[i];
		}
		if (!t)
			return fa_err(FATHOM_ESYNTAX, "%s: no 2-D tensor of floats (the model's "
			              "\"embeddings\")", name);
	}
	if (t->ndim != 2)
		return fa_err(FATHOM_ESYNTAX, "%s: tensor \"%s\" has %u dimensions, not 2 "
		              "([vocabulary, dimension])", name, t->name, t->ndim);
	if (!is_float(t->dtype) && t->dtype != EM_ST_I8)
		return fa_err(FATHOM_ESYNTAX, "%s: tensor \"%s\" does not hold floats (F32, F16, BF16 "
		              "or F64) or I8", name, t->name);
	if (t->shape[0] == 0 || t->shape[0] > EM_M2V_MAX_ROWS)
		return fa_err(t->shape[0] ? FATHOM_ETOOBIG : FATHOM_ESYNTAX,
		              "%s: tensor \"%s\" has %llu rows (1 to %u)", name, t->name,
		              (unsigned long long)t->shape[0], EM_M2V_MAX_ROWS);
	if (t->shape[1] == 0 || t->shape[1] > EM_MAX_DIM)
		return fa_err(t->shape[1] ? FATHOM_ETOOBIG : FATHOM_ESYNTAX,
		              "%s: tensor \"%s\" has dimension %llu (1 to %u)", name, t->name,
		              (unsigned long long)t->shape[1], EM_MAX_DIM);
	*out = t;
	return 0;
}

/* A tensor of one value per token: [vocab] (or [vocab, 1]). */
static int per_token(const em_st *st, const char *tensor, uint32_t vocab, const char *name,
                     const em_tensor **out)
{
	const em_tensor *t = em_st_find(st, tensor);
	*out = t;
	if (!t)
		return 0;
	if (!((t->ndim == 1 || (t->ndim == 2 && t->shape[1] == 1)) && t->shape[0] == vocab))
		return fa_err(FATHOM_ESYNTAX, "%s: tensor \"%s\" is not one value for each of the "
		              "tokenizer's %u tokens", name, tensor, vocab);
	return 0;
}

static int read_mapping(const em_st *st, const em_tensor *t, m2v *m, const char *name)
{
	m->map = fa_malloc((size_t)m->vocab * sizeof *m->map);
	if (!m->map)
		return fa_err(FATHOM_ENOMEM, "%s: mapping", name);
	const unsigned char *p = st->data + t->off;
	for (uint32_t i = 0; i < m->vocab; i++) {
		int64_t x;
		switch (t->dtype) {
		case EM_ST_I64: x = (int64_t)fa_load64(p + 8 * (size_t)i); break;
		case EM_ST_I32: x = (int32_t)fa_load32(p + 4 * (size_t)i); break;
		case EM_ST_I16: x = (int16_t)fa_load16(p + 2 * (size_t)i); break;
		case EM_ST_U8: x = p[i]; break;
		case EM_ST_I8: x = (int8_t)p[i]; break;
		default:
			return fa_err(FATHOM_ESYNTAX, "%s: tensor \"mapping\" does not hold integers",
			              name);
		}
		if (x < 0 || x >= (int64_t)m->rows)
			return fa_err(FATHOM_ESYNTAX, "%s: tensor \"mapping\": token %u maps to row %lld, "
			              "past the %u rows", name, i, (long long)x, m->rows);
		m->map[i] = (uint32_t)x;
	}
	return 0;
}

/* The model from the safetensors bytes; m->wp is read already. */
static int load_tensors(m2v *m, const unsigned char *data, size_t len, const char *name,
                        const char *tok_name)
{
	em_st *st = NULL;
	int rc = em_st_parse(&st, data, len, name);
	if (rc)
		return rc;
	const em_tensor *t = NULL, *wt = NULL, *mt = NULL;
	if ((rc = pick_matrix(st, name, &t)))
		goto done;
	m->rows = (uint32_t)t->shape[0];
	m->dim = (uint32_t)t->shape[1];
	m->vocab = em_wordpiece_size(m->wp);
	if ((rc = per_token(st, "weights", m->vocab, name, &wt)) ||
	    (rc = per_token(st, "mapping", m->vocab, name, &mt)))
		goto done;
	if (!mt && m->rows != m->vocab) {
		rc = fa_err(FATHOM_ESYNTAX, "%s: %u rows in \"%s\" but %u tokens in %s", name, m->rows,
		            t->name, m->vocab, tok_name);
		goto done;
	}
	size_t nv;
	if (fa_mul(m->rows, m->dim, &nv) || fa_mul(nv, sizeof *m->v, &nv)) {
		rc = fa_err(FATHOM_ETOOBIG, "%s: the matrix", name);
		goto done;
	}
	m->v = fa_malloc(nv);
	if (!m->v) {
		rc = fa_err(FATHOM_ENOMEM, "%s: the matrix", name);
		goto done;
	}
	if (t->dtype == EM_ST_I8) {
		const unsigned char *p = st->data + t->off;
		for (uint64_t i = 0; i < t->count; i++)
			m->v[i] = (float)(int8_t)p[i];
	} else if ((rc = em_st_floats(st, t, m->v))) {
		rc = fa_err_wrap(rc, "%s", name);
		goto done;
	}
	if (wt) {
		m->weight = fa_malloc((size_t)m->vocab * sizeof *m->weight);
		if (!m->weight) {
			rc = fa_err(FATHOM_ENOMEM, "%s: weights", name);
			goto done;
		}
		if ((rc = em_st_floats(st, wt, m->weight))) {
			rc = fa_err_wrap(rc == FATHOM_EINVAL ? FATHOM_ESYNTAX : rc, "%s", name);
			goto done;
		}
	}
	if (mt && (rc = read_mapping(st, mt, m, name)))
		goto done;
	m->max_chars = (size_t)EM_M2V_MAX_TOKENS * em_wordpiece_median_chars(m->wp);
done:
	em_st_free(st);
	return rc;
}

int em_m2v_new(em_embedder **out, const char *tok, size_t tok_len, const char *tok_name,
               const unsigned char *data, size_t len, const char *name, const char *model)
{
	*out = NULL;
	m2v *m = fa_calloc(1, sizeof *m);
	if (!m)
		return fa_err(FATHOM_ENOMEM, "model2vec");
	int rc = em_wordpiece_parse(&m->wp, tok, tok_len, tok_name);
	if (rc || (rc = load_tensors(m, data, len, name, tok_name)))
		goto fail;
	em_embedder *e = fa_calloc(1, sizeof *e);
	if (!e) {
		rc = fa_err(FATHOM_ENOMEM, "model2vec");
		goto fail;
	}
	static const em_embedder_ops ops = { "static", m2v_embed, m2v_free };
	e->ops = &ops;
	e->dim = m->dim;
	e->impl = m;
	snprintf(e->ident, sizeof e->ident,
	         "static v1 model2vec=%.200s bytes=%zu crc=%08x tokenizer_bytes=%zu "
	         "tokenizer_crc=%08x vocab=%u dim=%u",
	         model, len, fa_crc32c(0, data, len), tok_len, fa_crc32c(0, tok, tok_len), m->vocab,
	         m->dim);
	*out = e;
	return 0;
fail:
	m2v_free_model(m);
	return rc;
}

int em_m2v_open(em_embedder **out, const char *path)
{
	*out = NULL;
	char st_path[4096], tok_path[4096], base[256];
	struct stat sb;
	size_t pl = strlen(path);
	while (pl > 1 && path[pl - 1] == '/')
		pl--;
	if (pl >= sizeof st_path - 32)
		return fa_err(FATHOM_EINVAL, "model2vec: a path of %zu bytes", pl);
	const char *dir_end;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		snprintf(st_path, sizeof st_path, "%.*s/model.safetensors", (int)pl, path);
		dir_end = path + pl;
		if (stat(st_path, &sb) != 0) {
			/* a sentence-transformers folder: 0_StaticEmbedding/ */
			snprintf(st_path, sizeof st_path, "%.*s/0_StaticEmbedding/model.safetensors",
			         (int)pl, path);
			if (stat(st_path, &sb) == 0) {
				snprintf(tok_path, sizeof tok_path, "%.*s/0_StaticEmbedding/tokenizer.json",
				         (int)pl, path);
				goto names_done;
			}
			snprintf(st_path, sizeof st_path, "%.*s/model.safetensors", (int)pl, path);
		}
	} else {
		snprintf(st_path, sizeof st_path, "%.*s", (int)pl, path);
		const char *slash = memrchr(path, '/', pl);
		dir_end = slash ? slash : path;
	}
	snprintf(tok_path, sizeof tok_path, "%.*s%stokenizer.json", (int)(dir_end - path), path,
	         dir_end > path ? "/" : "");
names_done:;
	int dl = (int)(dir_end - path);
	/* the model's name: its folder's */
	const char *b = dl ? memrchr(path, '/', (size_t)dl) : NULL;
	b = b ? b + 1 : path;
	snprintf(base, sizeof base, "%.*s", (int)(dir_end - b) > 200 ? 200 : (int)(dir_end - b), b);
	if (!*base)
		snprintf(base, sizeof base, ".");

	if (stat(tok_path, &sb) != 0)
		return fa_err(FATHOM_ENOTFOUND, "%s: no tokenizer.json beside the model (%s)", path,
		              tok_path);
	char *tok = NULL;
	size_t tok_len = 0;
	int rc = fa_read_file(&tok, &tok_len, tok_path, EM_WP_MAX_FILE);
	if (rc) {
		rc = fa_err_wrap(rc, "model2vec tokenizer %s", tok_path);
		goto done;
	}
	/* mapped, not read: a large matrix is in memory once, as floats */
	fa_map mp;
	rc = fa_map_file(&mp, st_path);
	if (rc) {
		rc = fa_err_wrap(rc, "model2vec model %s", st_path);
		goto done;
	}
	if (mp.len > EM_MAX_FILE)
		rc = fa_err(FATHOM_ETOOBIG, "%s: more than %zu bytes", st_path, EM_MAX_FILE);
	else
		rc = em_m2v_new(out, tok, tok_len, tok_path, mp.data, mp.len, st_path, base);
	if (!rc && fa_map_damaged(&mp)) {
		em_embedder_free(*out);
		*out = NULL;
		rc = fa_err(FATHOM_EIO, "%s: the file changed while it was read", st_path);
	}
	fa_unmap(&mp);
done:
	fa_free(tok);
	return rc;
}
