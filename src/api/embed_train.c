/*
 * embed_train.c — the commit steps that make vectors over the whole index:
 * training the `corpus` embedder on the index's own chunks (its first
 * commit, and every `fathom optimize`), and re-embedding every chunk whose
 * vector is not the configured embedder's (a merge of all the segments
 * with an embed hook: ix_merge embeds the chunks it finds without one).
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "embed/embed.h"

/* Call fn on the embedding text of every live chunk of the snapshot. */
static int each_chunk_text(ix_index *ix, int (*fn)(void *ctx, const char *t, size_t n), void *ctx)
{
	fbuf doc, one;
	fbuf_init(&doc, 0);
	fbuf_init(&one, 0);
	int rc = 0;
	for (size_t si = 0; si < ix_nsegments(ix) && !rc; si++) {
		ix_segment *s = ix_segment_at(ix, si);
		for (uint32_t d = 0; d < seg_ndocs(s) && !rc; d++) {
			ix_doc_info di;
			if (seg_doc_is_deleted(s, d))
				continue;
			if ((rc = seg_doc(s, d, &di)) || di.grep_only || !di.n_chunks)
				continue;
			fbuf_reset(&doc);
			if ((rc = seg_doc_text(s, d, 0, di.text_len, &doc)))
				break;
			for (uint32_t c = di.first_chunk; c < di.first_chunk + di.n_chunks && !rc; c++) {
				ix_chunk_info ci;
				if ((rc = seg_chunk(s, c, &ci)))
					break;
				if (ci.byte_end > doc.len || ci.byte_start > ci.byte_end) {
					rc = fa_err(FATHOM_ECORRUPT, "%s: chunk %u out of its document",
					            seg_path(s), c);
					break;
				}
				if (!(rc = ix_embed_text(&one, di.title, ci.headings, ci.headings_len,
				                         (const char *)doc.data + ci.byte_start,
				                         ci.byte_end - ci.byte_start)))
					rc = fn(ctx, (const char *)one.data, one.len);
			}
		}
	}
	fbuf_free(&doc);
	fbuf_free(&one);
	return rc;
}

static int feed_count(void *ctx, const char *t, size_t n)
{
	return em_ppmi_count(ctx, t, n);
}

static int feed_cooc(void *ctx, const char *t, size_t n)
{
	return em_ppmi_cooc(ctx, t, n);
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

/* Train a corpus model on the committed snapshot and stage it. */
static int train_corpus(fathom_index *fx)
{
	em_ppmi_opts o;
	em_ppmi_defaults(&o);
	em_ppmi *t = NULL;
	em_model *m = NULL;
	unsigned char *bytes = NULL;
	size_t len = 0;
	int rc = em_ppmi_new(&t, &o);
	if (!rc)
		rc = each_chunk_text(fx->ix, feed_count, t);
	if (!rc)
		rc = em_ppmi_vocab(t);
	if (!rc)
		rc = each_chunk_text(fx->ix, feed_cooc, t);
	if (!rc)
		rc = em_ppmi_train(t, &m);
	if (!rc)
		rc = em_model_write(m, &bytes, &len);
	if (!rc)
		rc = ix_stage_file(fx->ix, "embedder.model", bytes, len);
	fa_free(bytes);
	em_model_free(m);
	em_ppmi_free(t);
	return rc ? fa_err_wrap(rc, "training the corpus embedder") : 0;
}

/* Merge every segment into one, embedding each chunk without a vector of
 * the configured embedder, whose ident is staged. */
static int reembed_all(fathom_index *fx)
{
	em_embedder *e;
	int rc = api_embedder(fx, &e);
	if (rc || !e)
		return rc;
	rc = ix_stage_value(fx->ix, "embedder", e->ident, strlen(e->ident));
	if (rc)
		return rc;
	ix_embed_hook h = { hook_embed, e, e->dim, api_ident_fp(e->ident, strlen(e->ident)) };
	ix_set_embedder(fx->ix, h.fp, &h);
	rc = ix_optimize(fx->ix);
	ix_set_embedder(fx->ix, 0, NULL);
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
		if (ix_total_chunks(fx->ix) == 0)
			return 0;
		if ((rc = train_corpus(fx)))
			return rc;
		return reembed_all(fx);
	}
	if (!optimize || kind == API_EMB_NONE || kind == API_EMB_EXTERNAL)
		return 0;
	return reembed_all(fx);
}
