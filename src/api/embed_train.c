/*
 * embed_train.c — the commit steps that make vectors over the whole index:
 * training the `corpus` embedder on the index's own chunks (its first
 * commit, and every `fathom optimize`), and re-embedding every chunk whose
 * vector is not the configured embedder's (a merge of all the segments
 * with an embed hook: ix_merge embeds the chunks it finds without one).
 *
 * The first commit of a corpus index is one commit: the new documents,
 * the model trained on them and their vectors become visible together
 * (fathom_commit calls api_commit_vectors before ix_commit; training reads
 * the writer's view, pending documents included, and the re-embedding
 * merge commits it all). So a crash, or a failed training (too few
 * words), leaves the commit before, never documents without the vectors
 * their embedder needs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "embed/embed.h"
#include "query/glossary.h"

/* Call fn on the embedding text of every live chunk the next commit will
 * hold (the writer's view: ix_writer_flush first). fn NULL: count them
 * into *n alone. */
static int each_chunk_text(ix_index *ix, int (*fn)(void *ctx, const char *t, size_t n), void *ctx,
                           uint64_t *n)
{
	ix_text_window doc;   /* whole runs of frames: each decompressed once */
	fbuf one;
	ix_text_window_init(&doc);
	fbuf_init(&one, 0);
	int rc = 0;
	*n = 0;
	for (size_t si = 0; si < ix_writer_nsegments(ix) && !rc; si++) {
		ix_segment *s = ix_writer_segment_at(ix, si);
		for (uint32_t d = 0; d < seg_ndocs(s) && !rc; d++) {
			ix_doc_info di;
			if (!ix_writer_doc_live(ix, si, d))
				continue;
			if ((rc = seg_doc(s, d, &di)) || di.grep_only || !di.n_chunks)
				continue;
			*n += di.n_chunks;
			if (!fn)
				continue;
			const char *text;
			size_t len;
			if ((rc = seg_doc_text_window(s, d, &doc, &text, &len)))
				break;
			for (uint32_t c = di.first_chunk; c < di.first_chunk + di.n_chunks && !rc; c++) {
				ix_chunk_info ci;
				if ((rc = seg_chunk(s, c, &ci)))
					break;
				if (ci.byte_end > len || ci.byte_start > ci.byte_end) {
					rc = fa_err(FATHOM_ECORRUPT, "%s: chunk %u out of its document",
					            seg_path(s), c);
					break;
				}
				if (!(rc = ix_embed_text(&one, di.title, ci.headings, ci.headings_len,
				                         text + ci.byte_start,
				                         ci.byte_end - ci.byte_start)))
					rc = fn(ctx, (const char *)one.data, one.len);
			}
		}
	}
	ix_text_window_free(&doc);
	fbuf_free(&one);
	return rc;
}

/* A training pass over the chunks, telling the step callback. */
typedef struct feed {
	em_ppmi *t;
	fathom_index *fx;
	const char *step;
	uint64_t done, total;
} feed;

static int feed_count(void *ctx, const char *t, size_t n)
{
	feed *f = ctx;
	api_step(f->fx, f->step, ++f->done, f->total, 0);
	return em_ppmi_count(f->t, t, n);
}

static int feed_cooc(void *ctx, const char *t, size_t n)
{
	feed *f = ctx;
	api_step(f->fx, f->step, ++f->done, f->total, 0);
	return em_ppmi_cooc(f->t, t, n);
}

/* The embedding merge's progress, for the step callback. */
typedef struct embed_steps {
	fathom_index *fx;
	uint64_t total;
} embed_steps;

static void embedded_so_far(void *ctx, uint64_t n)
{
	embed_steps *es = ctx;
	api_step(es->fx, "embedding", FA_MIN(n, es->total), es->total, 0);
}

static int hook_embed(void *ctx, const char *const *texts, const size_t *lens, size_t n,
                      float *out)
{
	em_embedder *e = ctx;
	for (size_t i = 0; i < n; i += EM_MAX_BATCH) {
		size_t m = FA_MIN(n - i, (size_t)EM_MAX_BATCH);
		int rc = em_embed(e, texts + i, lens + i, m, out + i * e->dim);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- drift: how far a retrained model moved ----------------------------------------
 *
 * The two models' axes are unrelated (an SVD's basis turns and flips from
 * one corpus to the next), so their vectors are never compared directly.
 * What is compared is what search reads: the cosine between two chunks.
 * Drift is the mean absolute change of that cosine, old model to new, over
 * the pairs of API_DRIFT_SAMPLE chunks spread evenly over the index: 0
 * when the new model ranks chunk against chunk as the old one did, up to 2
 * when it turns every similarity around. */

typedef struct drift_sample {
	char **text;
	size_t *len;
	size_t n, seen, stride;
} drift_sample;

static int keep_sample(void *ctx, const char *t, size_t n)
{
	drift_sample *d = ctx;
	if (d->seen++ % d->stride != 0 || d->n == API_DRIFT_SAMPLE)
		return 0;
	char *c = fa_malloc(n + 1);
	if (!c)
		return fa_err(FATHOM_ENOMEM, "drift sample");
	memcpy(c, t, n);
	c[n] = '\0';
	d->text[d->n] = c;
	d->len[d->n++] = n;
	return 0;
}

/* The drift from old to new over the chunks of ix; *pairs: how many
 * pairs it averages (0: too few chunks with a vector under both). */
static int measure_drift(ix_index *ix, em_embedder *old, em_embedder *new_e, double *drift,
                         uint64_t *pairs)
{
	*drift = 0;
	*pairs = 0;
	drift_sample d = { NULL, NULL, 0, 0, 1 };
	uint64_t total = ix_total_chunks(ix);
	d.stride = total > API_DRIFT_SAMPLE ? (size_t)(total / API_DRIFT_SAMPLE) : 1;
	d.text = fa_calloc(API_DRIFT_SAMPLE, sizeof *d.text);
	d.len = fa_calloc(API_DRIFT_SAMPLE, sizeof *d.len);
	float *a = NULL, *b = NULL;
	uint64_t chunks;
	int rc = d.text && d.len ? each_chunk_text(ix, keep_sample, &d, &chunks)
	                         : fa_err(FATHOM_ENOMEM, "drift sample");
	if (!rc && d.n > 1) {
		a = fa_calloc(d.n, (size_t)old->dim * sizeof *a);
		b = fa_calloc(d.n, (size_t)new_e->dim * sizeof *b);
		if (!a || !b)
			rc = fa_err(FATHOM_ENOMEM, "drift sample");
		if (!rc)
			rc = hook_embed(old, (const char *const *)d.text, d.len, d.n, a);
		if (!rc)
			rc = hook_embed(new_e, (const char *const *)d.text, d.len, d.n, b);
	}
	/* a chunk with no known word under either model (a zero row) says
	 * nothing: it is left out of every pair */
	size_t kept = 0;
	for (size_t i = 0; !rc && a && b && i < d.n; i++) {
		const float *ai = a + i * old->dim, *bi = b + i * new_e->dim;
		if (em_dot(ai, ai, old->dim) == 0 || em_dot(bi, bi, new_e->dim) == 0)
			continue;
		memmove(a + kept * old->dim, ai, old->dim * sizeof *a);
		memmove(b + kept * new_e->dim, bi, new_e->dim * sizeof *b);
		kept++;
	}
	double sum = 0;
	for (size_t i = 0; !rc && i < kept; i++)
		for (size_t j = i + 1; j < kept; j++) {
			float ca = em_dot(a + i * old->dim, a + j * old->dim, old->dim);
			float cb = em_dot(b + i * new_e->dim, b + j * new_e->dim, new_e->dim);
			sum += fabs((double)ca - (double)cb);
			(*pairs)++;
		}
	if (*pairs)
		*drift = sum / (double)*pairs;
	for (size_t i = 0; d.text && i < d.n; i++)
		fa_free(d.text[i]);
	fa_free(d.text);
	fa_free(d.len);
	fa_free(a);
	fa_free(b);
	return rc;
}

/* Stage the drift of a retrained model ("DRIFT PAIRS GENERATION": the
 * generation it was measured at), for fathom stats and optimize to state.
 * m is taken (freed with the embedder made of it, or on an error). */
static int stage_drift(fathom_index *fx, em_model *m)
{
	em_embedder *old = NULL, *new_e = NULL;
	int rc = api_embedder(fx, &old);   /* the committed model (the handle's own) */
	if (rc || !old)
		return rc;
	if ((rc = em_corpus_new(&new_e, m))) {
		em_model_free(m);
		return rc;
	}
	double drift;
	uint64_t pairs;
	rc = measure_drift(fx->ix, old, new_e, &drift, &pairs);
	if (!rc) {
		char v[96];
		int n = snprintf(v, sizeof v, "%.6f %llu %llu", drift, (unsigned long long)pairs,
		                 (unsigned long long)ix_generation(fx->ix));
		rc = ix_stage_value(fx->ix, API_DRIFT_KEY, v, (size_t)n);
	}
	em_embedder_free(new_e);
	return rc;
}

/* Train a corpus model on what the next commit holds and stage it. */
static int train_corpus(fathom_index *fx, uint64_t chunks)
{
	uint64_t n;
	em_ppmi_opts o;
	em_ppmi_defaults(&o);
	const api_settings *cfg;
	int rc = api_settings_get(fx, &cfg);
	if (rc)
		return rc;
	if ((cfg->set >> API_S_EMBED_SEED) & 1)
		o.seed = (uint64_t)cfg->num[API_S_EMBED_SEED];
	em_ppmi *t = NULL;
	em_model *m = NULL;
	unsigned char *bytes = NULL;
	size_t len = 0;
	rc = em_ppmi_new(&t, &o);
	feed f = { t, fx, "counting words", 0, chunks };
	if (!rc) {
		api_step(fx, f.step, 0, chunks, 1);
		rc = each_chunk_text(fx->ix, feed_count, &f, &n);
	}
	if (!rc)
		rc = em_ppmi_vocab(t);
	if (!rc) {
		f = (feed){ t, fx, "co-occurrences", 0, chunks };
		api_step(fx, f.step, 0, chunks, 1);
		rc = each_chunk_text(fx->ix, feed_cooc, &f, &n);
	}
	if (!rc) {
		api_step(fx, "factorising", 0, 1, 1);
		rc = em_ppmi_train(t, &m);
		if (!rc)
			api_step(fx, "factorising", 1, 1, 1);
	}
	if (!rc)
		rc = em_model_write(m, &bytes, &len);
	/* a retraining states how far the model moved (before the new model
	 * is staged: the old one is the committed one); m then goes with
	 * the embedder drift made of it */
	const unsigned char *old_model;
	size_t old_len;
	int retrain = ix_get_value(fx->ix, "embedder.model", &old_model, &old_len) == 0;
	if (!rc && retrain) {
		rc = stage_drift(fx, m);
		m = NULL;
	}
	if (!rc)
		rc = ix_stage_file(fx->ix, "embedder.model", bytes, len);
	fa_free(bytes);
	em_model_free(m);
	em_ppmi_free(t);
	return rc ? fa_err_wrap(rc, "training the corpus embedder") : 0;
}

/* Merge every segment into one, embedding each chunk without a vector of
 * the configured embedder, whose ident is staged. */
static int reembed_all(fathom_index *fx, uint64_t chunks)
{
	em_embedder *e;
	int rc = api_embedder(fx, &e);
	if (rc || !e)
		return rc;
	rc = ix_stage_value(fx->ix, "embedder", e->ident, strlen(e->ident));
	if (rc)
		return rc;
	embed_steps es = { fx, chunks };
	ix_embed_hook h = { hook_embed, e, e->dim, api_ident_fp(e->ident, strlen(e->ident)),
	                    embedded_so_far, &es };
	ix_set_embedder(fx->ix, h.fp, &h);
	api_step(fx, "embedding", 0, chunks, 1);
	rc = ix_optimize(fx->ix);
	ix_set_embedder(fx->ix, 0, NULL);
	if (!rc)
		api_step(fx, "embedding", chunks, chunks, 1);
	return rc;
}

int api_commit_vectors(fathom_index *fx, int optimize)
{
	int kind, rc;
	if ((rc = api_embedder_kind(fx, &kind)))
		return rc;
	if (kind == API_EMB_CORPUS) {
		const unsigned char *d;
		size_t n;
		int trained = ix_get_value(fx->ix, "embedder.model", &d, &n) == 0;
		if (trained && !optimize)
			return 0;
		/* what the commit will hold, pending documents written out */
		uint64_t chunks;
		if ((rc = ix_writer_flush(fx->ix)) ||
		    (rc = each_chunk_text(fx->ix, NULL, NULL, &chunks)))
			return rc;
		if (chunks == 0)
			return 0;
		if ((rc = train_corpus(fx, chunks)))
			return rc;
		return reembed_all(fx, chunks);
	}
	if (!optimize || kind == API_EMB_NONE || kind == API_EMB_EXTERNAL)
		return 0;
	return reembed_all(fx, ix_total_chunks(fx->ix));
}

int api_vector_stats(fathom_index *fx, fathom_stats *out)
{
	int kind, rc;
	if ((rc = api_embedder_kind(fx, &kind)))
		return rc;
	snprintf(out->embedder, sizeof out->embedder, "%s", api_embedder_kind_name(kind));
	for (size_t si = 0; si < ix_nsegments(fx->ix); si++) {
		ix_segment *s = ix_segment_at(fx->ix, si);
		ix_vecs v;
		rc = seg_vectors(s, &v);
		if (rc == FATHOM_ENOTFOUND) {
			fa_err_clear();
			continue;
		}
		if (rc)
			return rc;
		out->vector_dim = v.dim;
		for (uint32_t c = 0; c < v.count; c++)
			out->vector_chunks += (v.bits[c >> 3] >> (c & 7) & 1) && !seg_is_deleted(s, c);
	}
	const unsigned char *d;
	size_t n;
	if (ix_get_value(fx->ix, API_DRIFT_KEY, &d, &n) == 0 && n < 96) {
		char v[96];
		memcpy(v, d, n);
		v[n] = '\0';
		unsigned long long pairs = 0, gen = 0;
		double drift = -1;
		if (sscanf(v, "%lf %llu %llu", &drift, &pairs, &gen) == 3 && drift >= 0) {
			out->embedder_drift = drift;
			out->embedder_drift_pairs = pairs;
			out->embedder_drift_generation = gen;
		}
	}
	return 0;
}

/* ---- glossary candidates from the corpus model's word space --------------------------- */

typedef struct nb_ctx {
	q_glossary *g;
	size_t *added;
	text_analyzer *an;
	ix_index *ix;
	uint64_t collocations;   /* pairs dropped as collocations */
} nb_ctx;

/* Chunks holding term a, b, and both (live or not: a ratio), over the
 * segments. */
static int cooccur(ix_index *ix, const char *a, size_t la, const char *b, size_t lb,
                   uint64_t *na, uint64_t *nb, uint64_t *both)
{
	*na = *nb = *both = 0;
	for (size_t si = 0; si < ix_nsegments(ix); si++) {
		ix_segment *s = ix_segment_at(ix, si);
		ix_term_info ta, tb;
		int ra = seg_term(s, a, la, &ta), rb = seg_term(s, b, lb, &tb);
		if ((ra && ra != FATHOM_ENOTFOUND) || (rb && rb != FATHOM_ENOTFOUND))
			return ra && ra != FATHOM_ENOTFOUND ? ra : rb;
		fa_err_clear();
		if (ra || rb) {
			*na += ra ? 0 : ta.df;
			*nb += rb ? 0 : tb.df;
			continue;
		}
		*na += ta.df;
		*nb += tb.df;
		ix_postings p, q;
		int rc = ix_post_open(&p, s, &ta);
		if (!rc)
			rc = ix_post_open(&q, s, &tb);
		while (!rc && p.doc != IX_END && q.doc != IX_END) {
			if (p.doc == q.doc) {
				(*both)++;
				rc = ix_post_next(&p);
				if (!rc)
					rc = ix_post_next(&q);
			} else if (p.doc < q.doc) {
				rc = ix_post_next(&p);
			} else {
				rc = ix_post_next(&q);
			}
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* The share of the rarer word's chunks that may also hold the other: past
 * it the pair is a collocation. */
#define API_NB_MAX_SHARED 0.35

/* A word worth a glossary group: letters only, at least 3 of them, no
 * stop word. */
static int nb_keep(void *ctx, const char *w, size_t n)
{
	(void)ctx;
	if (n < 3 || text_is_stopword(w, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((w[i] >= 'a' && w[i] <= 'z') || (unsigned char)w[i] >= 0x80))
			return 0;
	return 1;
}

static int nb_pair(void *ctx, const char *a, const char *b, float cos)
{
	nb_ctx *c = ctx;
	/* two forms of one word are one term already (the index stems) */
	char sa[EM_MAX_WORD + 1];
	size_t la = 0, lb = 0;
	const char *st = text_stem(c->an, a, strlen(a), &la);
	if (!st || la > EM_MAX_WORD)
		return 0;
	memcpy(sa, st, la);
	st = text_stem(c->an, b, strlen(b), &lb);
	if (!st || (la == lb && memcmp(sa, st, la) == 0))
		return 0;
	/* words that stand for each other rarely share a chunk; words that
	 * make a phrase together ("bone marrow", "confidence interval") share
	 * most of theirs: those are collocations, not aliases */
	uint64_t na, nb, both;
	int rc = cooccur(c->ix, sa, la, st, lb, &na, &nb, &both);
	if (rc)
		return rc;
	uint64_t fewer = FA_MIN(na, nb);
	if (fewer && (double)both > API_NB_MAX_SHARED * (double)fewer) {
		c->collocations++;
		return 0;
	}
	char ev[96];
	snprintf(ev, sizeof ev, "the corpus embedder: mutual nearest neighbours, cosine %.2f", cos);
	return q_gloss_propose_pair(c->g, QG_SRC_NEIGHBOUR, a, b, ev, c->added);
}

int api_gloss_neighbours(fathom_index *fx, q_glossary *g, size_t *added)
{
	int kind, rc;
	if ((rc = api_embedder_kind(fx, &kind)) || kind != API_EMB_CORPUS)
		return rc;
	const unsigned char *d;
	size_t n;
	if (ix_get_value(fx->ix, "embedder.model", &d, &n) != 0) {
		fa_err_clear();
		return 0;   /* not trained yet */
	}
	em_model *m;
	if ((rc = em_model_read(&m, d, n, "embedder.model")))
		return rc;
	nb_ctx c = { g, added, fx->an, fx->ix, 0 };
	rc = em_model_neighbours(m, EM_NB_TOP, EM_NB_MIN_COS, nb_keep, NULL, nb_pair, &c);
	em_model_free(m);
	return rc;
}
