/*
 * neighbours.c — word pairs the corpus model puts close together, for the
 * glossary's curation queue (luplo's third source of candidates): among
 * the model's EM_NB_TOP most frequent words that the caller keeps (letters
 * only, not stop words, ...), the pairs that are each other's nearest
 * neighbour with a cosine of at least min_cos. Mutual nearness is the
 * precision filter: a word's nearest neighbour alone is often a word that
 * merely co-occurs with it, but two words that pick each other are
 * usually interchangeable ("tumour" and "tumor", "auth" and "login").
 *
 * The similarities are one matrix product (OpenBLAS sgemm) of the kept
 * rows, which are unit vectors: S = X X^T, top x top.
 */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

/* a word and its count: sorted most frequent first (ties: the word's order) */
typedef struct wcount {
	uint64_t count;
	uint32_t id;
} wcount;

static int by_count(const void *pa, const void *pb)
{
	const wcount *a = pa, *b = pb;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

int em_model_neighbours(const em_model *m, uint32_t top, float min_cos, em_word_keep_fn keep,
                        void *kctx, em_pair_fn cb, void *ctx)
{
	const em_vectors *v = m->vec;
	if (!v || v->n < 2 || v->dim == 0 || top == 0)
		return 0;
	if (top > EM_NB_TOP)
		top = EM_NB_TOP;
	wcount *wc = fa_malloc((size_t)v->n * sizeof *wc);
	uint32_t *order = fa_malloc((size_t)top * sizeof *order);
	if (!wc || !order) {
		fa_free(wc);
		fa_free(order);
		return fa_err(FATHOM_ENOMEM, "word neighbours");
	}
	for (uint32_t i = 0; i < v->n; i++)
		wc[i] = (wcount){ m->count ? m->count[i] : 0, i };
	qsort(wc, v->n, sizeof *wc, by_count);
	/* the kept words, most frequent first */
	uint32_t n = 0;
	for (uint32_t i = 0; i < v->n && n < top; i++) {
		const char *w = v->pool + v->word[wc[i].id];
		if (keep(kctx, w, strlen(w)))
			order[n++] = wc[i].id;
	}
	fa_free(wc);
	int rc = 0;
	float *x = NULL, *s = NULL;
	uint32_t *best = NULL;
	if (n < 2)
		goto done;
	x = fa_malloc((size_t)n * v->dim * sizeof *x);
	s = fa_malloc((size_t)n * n * sizeof *s);
	best = fa_malloc((size_t)n * sizeof *best);
	if (!x || !s || !best) {
		rc = fa_err(FATHOM_ENOMEM, "word neighbours");
		goto done;
	}
	for (uint32_t i = 0; i < n; i++)
		memcpy(x + (size_t)i * v->dim, v->v + (size_t)order[i] * v->dim, v->dim * sizeof *x);
	em_blas_lock();
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)n, (int)v->dim, 1.0f, x,
	            (int)v->dim, x, (int)v->dim, 0.0f, s, (int)n);
	em_blas_unlock();
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b = i == 0 ? 1 : 0;
		for (uint32_t j = 0; j < n; j++)
			if (j != i && s[(size_t)i * n + j] > s[(size_t)i * n + b])
				b = j;
		best[i] = b;
	}
	for (uint32_t i = 0; i < n && !rc; i++) {
		uint32_t j = best[i];
		float c = s[(size_t)i * n + j];
		if (j <= i || best[j] != i || !(c >= min_cos))
			continue;
		rc = cb(ctx, v->pool + v->word[order[i]], v->pool + v->word[order[j]], c);
	}
done:
	fa_free(order);
	fa_free(x);
	fa_free(s);
	fa_free(best);
	return rc;
}
