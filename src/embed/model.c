/*
 * model.c — the `corpus` embedder's model file and the embedder over it.
 *
 * The model is a payload of the index (the manifest's named value
 * `embedder.model`, docs/FORMAT.md section 4e), written whole and read back
 * with every field checked. All integers little-endian:
 *
 *   0   8   magic "FATHEMB\0"
 *   8   4   u32 version (1 or 2)
 *   12  4   u32 dim: values a row (1 .. 4096)
 *   16  4   u32 nwords (1 .. 65536)
 *   20  4   u32 flags: bit 0 a common component follows the rows
 *   24  8   u64 total: the words counted in the corpus, known or not
 *   32  4   u32 opts.dim      the options it was trained with
 *   36  4   u32 opts.window
 *   40  4   u32 opts.min_count
 *   44  4   u32 opts.max_vocab
 *   48  8   u64 opts.seed
 *   56  8   f64 SIF's a, in (0, 1] (version 2 only; version 1 means 1e-3,
 *           and its words start at 56)
 *   64      nwords words: u16 length (1 .. 512), the bytes (no NUL)
 *           nwords u64 counts (1 .. total, their sum at most total)
 *           nwords rows of dim float32 (finite)
 *           dim float32: the common component, when flag bit 0 (unit length)
 *       4   u32 CRC32C of every byte before it
 *
 * The file is at most EM_MODEL_MAX bytes (64 MiB): the trainer caps the
 * vocabulary so that it fits. The SIF weights are not stored: they follow
 * from the counts, total and a. A model read back is the model written, bit
 * for bit (float32 rows are copied, never converted), in the version it
 * was read from: a version 1 file is written back as version 1.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

#define MODEL_MAGIC "FATHEMB\0"
#define MODEL_VERSION 2u
#define MODEL_HEADER_V1 56u
#define MODEL_HEADER 64u

static double sif_a(const em_model *m)
{
	return m->sif_a > 0 ? m->sif_a : EM_SIF_A;
}

/* The layout m is written in: version 1 only for a model read from one
 * (whose a is 1e-3). */
static uint32_t write_version(const em_model *m)
{
	return m->version == 1 && sif_a(m) == EM_SIF_A ? 1u : MODEL_VERSION;
}

void em_model_free(em_model *m)
{
	if (!m)
		return;
	em_vectors_free(m->vec);
	fa_free(m->count);
	fa_free(m->weight);
	fa_free(m->pc);
	fa_free(m);
}

int em_model_index(em_model *m, const char *name)
{
	em_vectors *v = m->vec;
	uint32_t dup;
	int rc = em_vectors_index(v, &dup);
	if (rc)
		return fa_err_wrap(rc, "%s", name);
	if (dup != UINT32_MAX)
		return fa_err(FATHOM_ECORRUPT, "%s: the word '%.64s' given twice", name,
		              em_vectors_word(v, dup));
	fa_free(m->weight);
	m->weight = fa_malloc((size_t)v->n * sizeof *m->weight + 1);
	if (!m->weight)
		return fa_err(FATHOM_ENOMEM, "%s: the weights of %u words", name, v->n);
	for (uint32_t i = 0; i < v->n; i++) {
		double p = m->total ? (double)m->count[i] / (double)m->total : 1.0;
		m->weight[i] = (float)(sif_a(m) / (sif_a(m) + p));
	}
	return 0;
}

/* The file's size for m, or 0 when it passes EM_MODEL_MAX. */
static size_t model_size(const em_model *m)
{
	const em_vectors *v = m->vec;
	size_t n = (write_version(m) == 1 ? MODEL_HEADER_V1 : MODEL_HEADER) + 4, rows;
	for (uint32_t i = 0; i < v->n; i++)
		if (fa_add(n, 2 + strlen(em_vectors_word(v, i)) + 8, &n))
			return 0;
	if (fa_mul((size_t)v->n, (size_t)v->dim * 4, &rows) || fa_add(n, rows, &n) ||
	    (m->pc && fa_add(n, (size_t)v->dim * 4, &n)))
		return 0;
	return n <= EM_MODEL_MAX ? n : 0;
}

int em_model_write(const em_model *m, unsigned char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (!m || !m->vec || m->vec->n == 0 || m->vec->dim == 0)
		return fa_err(FATHOM_EINVAL, "corpus model: no words to write");
	const em_vectors *v = m->vec;
	size_t size = model_size(m);
	if (size == 0)
		return fa_err(FATHOM_ETOOBIG, "corpus model: %u words of %u values pass 64 MiB",
		              v->n, v->dim);
	unsigned char *b = fa_malloc(size), *p = b;
	if (!b)
		return fa_err(FATHOM_ENOMEM, "corpus model: %zu bytes", size);
	uint32_t version = write_version(m);
	memcpy(p, MODEL_MAGIC, 8);
	fa_store32(p + 8, version);
	fa_store32(p + 12, v->dim);
	fa_store32(p + 16, v->n);
	fa_store32(p + 20, m->pc ? 1u : 0u);
	fa_store64(p + 24, m->total);
	fa_store32(p + 32, m->opts.dim);
	fa_store32(p + 36, m->opts.window);
	fa_store32(p + 40, m->opts.min_count);
	fa_store32(p + 44, m->opts.max_vocab);
	fa_store64(p + 48, m->opts.seed);
	if (version == 1) {
		p += MODEL_HEADER_V1;
	} else {
		double a = sif_a(m);
		uint64_t u;
		memcpy(&u, &a, 8);
		fa_store64(p + 56, u);
		p += MODEL_HEADER;
	}
	for (uint32_t i = 0; i < v->n; i++) {
		const char *w = em_vectors_word(v, i);
		size_t wl = strlen(w);
		fa_store16(p, (uint16_t)wl);
		memcpy(p + 2, w, wl);
		p += 2 + wl;
	}
	for (uint32_t i = 0; i < v->n; i++, p += 8)
		fa_store64(p, m->count[i]);
	size_t nv = (size_t)v->n * v->dim;
	for (size_t k = 0; k < nv; k++, p += 4) {
		uint32_t u;
		memcpy(&u, &v->v[k], 4);
		fa_store32(p, u);
	}
	for (uint32_t k = 0; m->pc && k < v->dim; k++, p += 4) {
		uint32_t u;
		memcpy(&u, &m->pc[k], 4);
		fa_store32(p, u);
	}
	fa_store32(p, fa_crc32c(0, b, (size_t)(p - b)));
	*out = b;
	*len = size;
	return 0;
}

static int corrupt(const char *name, const char *what)
{
	return fa_err(FATHOM_ECORRUPT, "%s: corpus model: %s", name, what);
}

/* n float32 from p into out, each finite. */
static int read_floats(const unsigned char *p, size_t n, float *out)
{
	for (size_t k = 0; k < n; k++) {
		uint32_t u = fa_load32(p + 4 * k);
		memcpy(&out[k], &u, 4);
		if (!isfinite(out[k]))
			return -1;
	}
	return 0;
}

int em_model_read(em_model **out, const unsigned char *data, size_t len, const char *name)
{
	*out = NULL;
	if (len < MODEL_HEADER_V1 + 4)
		return corrupt(name, "shorter than its header");
	if (len > EM_MODEL_MAX)
		return corrupt(name, "larger than 64 MiB");
	if (fa_crc32c(0, data, len - 4) != fa_load32(data + len - 4))
		return corrupt(name, "checksum mismatch");
	if (memcmp(data, MODEL_MAGIC, 8) != 0)
		return corrupt(name, "not a model file (magic)");
	uint32_t version = fa_load32(data + 8);
	if (version < 1 || version > MODEL_VERSION)
		return fa_err(FATHOM_EVERSION, "%s: corpus model version %u (this build reads 1 and 2)",
		              name, version);
	size_t header = version == 1 ? MODEL_HEADER_V1 : MODEL_HEADER;
	if (len < header + 4)
		return corrupt(name, "shorter than its header");
	uint32_t dim = fa_load32(data + 12), n = fa_load32(data + 16);
	uint32_t flags = fa_load32(data + 20);
	em_model hd;
	memset(&hd, 0, sizeof hd);
	hd.total = fa_load64(data + 24);
	hd.opts.dim = fa_load32(data + 32);
	hd.opts.window = fa_load32(data + 36);
	hd.opts.min_count = fa_load32(data + 40);
	hd.opts.max_vocab = fa_load32(data + 44);
	hd.opts.seed = fa_load64(data + 48);
	hd.version = version;
	hd.sif_a = EM_SIF_A;
	if (version >= 2) {
		uint64_t u = fa_load64(data + 56);
		memcpy(&hd.sif_a, &u, 8);
		if (!(hd.sif_a > 0 && hd.sif_a <= 1))
			return corrupt(name, "SIF's a out of range");
	}
	if (dim == 0 || dim > EM_MAX_DIM || hd.opts.dim < dim || hd.opts.dim > EM_MAX_DIM)
		return corrupt(name, "a dimension out of range");
	if (n == 0 || n > EM_PPMI_MAX_VOCAB || hd.opts.max_vocab < n ||
	    hd.opts.max_vocab > EM_PPMI_MAX_VOCAB)
		return corrupt(name, "a word count out of range");
	if (flags > 1u)
		return corrupt(name, "unknown flags");
	if (hd.opts.window == 0 || hd.opts.window > EM_PPMI_MAX_WINDOW || hd.opts.min_count == 0)
		return corrupt(name, "training options out of range");
	const unsigned char *p = data + header, *end = data + len - 4;
	/* the words: their pool's size first */
	size_t pool_len = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (end - p < 2)
			return corrupt(name, "the words cut short");
		size_t wl = fa_load16(p);
		if (wl == 0 || wl > EM_MAX_WORD)
			return corrupt(name, "a word's length out of range");
		if ((size_t)(end - p - 2) < wl)
			return corrupt(name, "the words cut short");
		if (memchr(p + 2, '\0', wl))
			return corrupt(name, "a NUL byte in a word");
		pool_len += wl + 1;
		p += 2 + wl;
	}
	size_t rows, need, pcb = (flags & 1u) ? (size_t)dim * 4 : 0;
	if (fa_mul((size_t)n, (size_t)dim * 4, &rows) || fa_add(rows, (size_t)n * 8, &need) ||
	    fa_add(need, pcb, &need) || (size_t)(end - p) != need)
		return corrupt(name, "its size does not match its words and dimension");
	em_model *m = fa_calloc(1, sizeof *m);
	em_vectors *v = fa_calloc(1, sizeof *v);
	if (!m || !v) {
		fa_free(m);
		fa_free(v);
		return fa_err(FATHOM_ENOMEM, "%s: corpus model", name);
	}
	*m = hd;
	m->vec = v;
	v->n = n;
	v->dim = dim;
	v->pool = fa_malloc(pool_len);
	v->word = fa_malloc((size_t)n * sizeof *v->word);
	v->v = fa_malloc(rows);
	m->count = fa_malloc((size_t)n * sizeof *m->count);
	m->pc = pcb ? fa_malloc(pcb) : NULL;
	int rc = 0;
	if (!v->pool || !v->word || !v->v || !m->count || (pcb && !m->pc)) {
		rc = fa_err(FATHOM_ENOMEM, "%s: corpus model of %u words", name, n);
		goto fail;
	}
	p = data + header;
	size_t at = 0;
	for (uint32_t i = 0; i < n; i++) {
		size_t wl = fa_load16(p);
		v->word[i] = (uint32_t)at;
		memcpy(v->pool + at, p + 2, wl);
		v->pool[at + wl] = '\0';
		at += wl + 1;
		p += 2 + wl;
	}
	uint64_t left = m->total;
	for (uint32_t i = 0; i < n; i++, p += 8) {
		m->count[i] = fa_load64(p);
		if (m->count[i] == 0 || m->count[i] > left) {
			rc = corrupt(name, "word counts out of range");
			goto fail;
		}
		left -= m->count[i];
	}
	if (read_floats(p, (size_t)n * dim, v->v)) {
		rc = corrupt(name, "a value that is not a finite number");
		goto fail;
	}
	p += rows;
	if (pcb) {
		double ss = 0.0;
		if (read_floats(p, dim, m->pc)) {
			rc = corrupt(name, "a value that is not a finite number");
			goto fail;
		}
		for (uint32_t k = 0; k < dim; k++)
			ss += (double)m->pc[k] * m->pc[k];
		if (fabs(ss - 1.0) > 1e-3) {
			rc = corrupt(name, "a common component that is not a unit vector");
			goto fail;
		}
	}
	m->crc = fa_load32(data + len - 4);
	m->has_crc = 1;
	rc = em_model_index(m, name);
	if (rc)
		goto fail;
	*out = m;
	return 0;
fail:
	em_model_free(m);
	return rc;
}

static void model_free_cb(void *p)
{
	em_model_free(p);
}

int em_corpus_new(em_embedder **out, em_model *m)
{
	*out = NULL;
	uint32_t crc = m->crc;
	if (!m->has_crc) {
		/* a model trained here: the CRC its file will have */
		unsigned char *b;
		size_t len;
		int rc = em_model_write(m, &b, &len);
		if (rc)
			return rc;
		crc = fa_load32(b + len - 4);
		fa_free(b);
	}
	char ident[EM_IDENT_MAX];
	int n = snprintf(ident, sizeof ident,
	                 "corpus v1 dim=%u window=%u min_count=%u vocab=%u words=%llu seed=%llu "
	                 "crc=%08x",
	                 m->vec->dim, m->opts.window, m->opts.min_count, m->vec->n,
	                 (unsigned long long)m->total, (unsigned long long)m->opts.seed, crc);
	/* a model of version 1 keeps the ident its indexes were made with */
	if (sif_a(m) != EM_SIF_A && n > 0 && (size_t)n < sizeof ident)
		snprintf(ident + n, sizeof ident - (size_t)n, " sif=%g", sif_a(m));
	em_wordavg_model wm = { m->vec, m->weight, m->pc };
	return em_wordavg_new(out, &wm, "corpus", ident, model_free_cb, m);
}
