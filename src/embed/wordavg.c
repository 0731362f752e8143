/*
 * wordavg.c — a text as the weighted average of its words' vectors: the
 * `static` embedder (pretrained word vectors from a file) and the `corpus`
 * one (vectors trained on the index's own text) share this.
 *
 * SIF (Arora, Liang & Ma, 2017): each known word's vector weighted by
 * a / (a + p(w)), so that frequent words weigh little without a stop list,
 * summed, minus the projection on the common component when the model has
 * one, then scaled to unit length. A text with no known word is the zero
 * vector: it is found by no vector search, which is honest.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

typedef struct wordavg {
	em_wordavg_model m;
	void (*owner_free)(void *);
	void *owner;
} wordavg;

typedef struct acc {
	const em_wordavg_model *m;
	float *out;
	uint32_t known;
} acc;

static int on_word(void *ctx, const char *w, size_t len)
{
	acc *a = ctx;
	int64_t i = em_vectors_find(a->m->vec, w, len);
	if (i < 0)
		return 0;
	const float *r = em_vectors_row(a->m->vec, (uint32_t)i);
	float wt = a->m->weight ? a->m->weight[i] : 1.0f;
	em_axpy(a->out, r, wt, a->m->vec->dim);
	a->known++;
	return 0;
}

static int wordavg_embed(em_embedder *e, const char *const *texts, const size_t *lens, size_t n,
                         float *out)
{
	const wordavg *wa = e->impl;
	uint32_t dim = e->dim;
	for (size_t i = 0; i < n; i++) {
		float *row = out + i * dim;
		memset(row, 0, (size_t)dim * sizeof *row);
		acc a = { &wa->m, row, 0 };
		int rc = em_words(texts[i], lens[i], on_word, &a);
		if (rc)
			return rc;
		if (a.known && wa->m.pc) {
			double d = 0.0;
			for (uint32_t k = 0; k < dim; k++)
				d += (double)row[k] * wa->m.pc[k];
			for (uint32_t k = 0; k < dim; k++)
				row[k] -= (float)(d * wa->m.pc[k]);
		}
		em_normalize(row, dim);
	}
	return 0;
}

static void wordavg_free(em_embedder *e)
{
	wordavg *wa = e->impl;
	if (wa && wa->owner_free)
		wa->owner_free(wa->owner);
	fa_free(wa);
	fa_free(e);
}

int em_wordavg_new(em_embedder **out, const em_wordavg_model *m, const char *kind,
                   const char *ident, void (*owner_free)(void *), void *owner)
{
	static em_embedder_ops ops[2] = {
		{ "static", wordavg_embed, wordavg_free },
		{ "corpus", wordavg_embed, wordavg_free },
	};
	*out = NULL;
	int k = strcmp(kind, "corpus") == 0;
	if (!k && strcmp(kind, "static") != 0)
		return fa_err(FATHOM_EINVAL, "no word-average embedder of kind '%s'", kind);
	if (!m || !m->vec || m->vec->dim == 0 || m->vec->dim > EM_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "%s embedder: no vectors", kind);
	if (strlen(ident) >= EM_IDENT_MAX)
		return fa_err(FATHOM_EINVAL, "%s embedder: its identity is too long", kind);
	em_embedder *e = fa_calloc(1, sizeof *e);
	wordavg *wa = fa_calloc(1, sizeof *wa);
	if (!e || !wa) {
		fa_free(e);
		fa_free(wa);
		return fa_err(FATHOM_ENOMEM, "%s embedder", kind);
	}
	wa->m = *m;
	wa->owner_free = owner_free;
	wa->owner = owner;
	e->ops = &ops[k];
	e->dim = m->vec->dim;
	e->impl = wa;
	snprintf(e->ident, sizeof e->ident, "%s", ident);
	*out = e;
	return 0;
}

/* ---- the static embedder ---------------------------------------------------- */

typedef struct static_model {
	em_vectors *vec;
	float *weight;
} static_model;

static void static_model_free(void *p)
{
	static_model *sm = p;
	if (!sm)
		return;
	em_vectors_free(sm->vec);
	fa_free(sm->weight);
	fa_free(sm);
}

int em_static_open(em_embedder **out, const char *path)
{
	*out = NULL;
	if (em_m2v_is_model(path))
		return em_m2v_open(out, path);
	char *data;
	size_t len;
	int rc = fa_read_file(&data, &len, path, EM_MAX_FILE);
	if (rc)
		return fa_err_wrap(rc, "static embedder");
	uint32_t crc = fa_crc32c(0, data, len);
	static_model *sm = fa_calloc(1, sizeof *sm);
	if (!sm) {
		fa_free(data);
		return fa_err(FATHOM_ENOMEM, "static embedder");
	}
	rc = em_vectors_parse(&sm->vec, data, len, EM_VEC_AUTO, path);
	fa_free(data);
	if (rc) {
		static_model_free(sm);
		return rc;
	}
	if (sm->vec->n == 0) {
		static_model_free(sm);
		return fa_err(FATHOM_ESYNTAX, "%s: no word vectors", path);
	}
	em_vectors_normalize(sm->vec);
	sm->weight = fa_malloc((size_t)sm->vec->n * sizeof *sm->weight);
	if (!sm->weight) {
		static_model_free(sm);
		return fa_err(FATHOM_ENOMEM, "static embedder");
	}
	/* Zipf: p(rank r) = 1 / ((r + 2.7) H), H the sum over the file */
	double h = 0.0;
	for (uint32_t i = 0; i < sm->vec->n; i++)
		h += 1.0 / (i + 2.7);
	for (uint32_t i = 0; i < sm->vec->n; i++) {
		double p = 1.0 / ((i + 2.7) * h);
		sm->weight[i] = (float)(EM_SIF_A / (EM_SIF_A + p));
	}
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char ident[EM_IDENT_MAX];
	snprintf(ident, sizeof ident, "static v1 file=%.200s bytes=%zu crc=%08x words=%u dim=%u sif=%g",
	         base, len, crc, sm->vec->n, sm->vec->dim, EM_SIF_A);
	em_wordavg_model m = { sm->vec, sm->weight, NULL };
	rc = em_wordavg_new(out, &m, "static", ident, static_model_free, sm);
	if (rc)
		static_model_free(sm);
	return rc;
}
