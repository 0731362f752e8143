/*
 * rerank.c — the stage between fusion and presentation: a reranker (a
 * cross-encoder, next) reads the text of the pool's best chunks and scores
 * each against the query; those chunks are then ordered by that score.
 * It runs before explain, so nothing has been presented yet and the
 * snippets are made for the final order. No reranker is built in yet: the
 * pipeline calls one when it is given one.
 */
#include <stdlib.h>

#include "query/query_int.h"

int q_chunk_text(ix_index *ix, uint32_t seg, const ix_chunk_info *ci, fbuf *out)
{
	uint64_t len = ci->byte_end > ci->byte_start ? ci->byte_end - ci->byte_start : 0;
	len = FA_MIN(len, (uint64_t)Q_CHUNK_READ_MAX);
	fbuf_reset(out);
	if (!len)
		return 0;
	return seg_doc_text(ix_segment_at(ix, seg), ci->doc, ci->byte_start, len, out);
}

/* A reranked entry: its new score and where it stood before. */
typedef struct reranked {
	double score;
	size_t before;
} reranked;

static int by_rerank(const void *pa, const void *pb)
{
	const reranked *a = pa, *b = pb;
	if (a->score != b->score)
		return a->score > b->score ? -1 : 1;
	return (a->before > b->before) - (a->before < b->before);
}

int q_rerank(q_pool *pool, ix_index *ix, const q_reranker *rr, const char *query, uint32_t k,
             fa_arena *a)
{
	if (!rr || !rr->score)
		return 0;
	size_t n = FA_MIN(pool->n, (size_t)FA_MIN(rr->depth ? rr->depth : k, Q_MAX_RERANK));
	if (n == 0)
		return 0;
	const char **texts = fa_arena_alloc(a, n * sizeof *texts);
	size_t *lens = fa_arena_alloc(a, n * sizeof *lens);
	double *scores = fa_arena_calloc(a, n, sizeof *scores);
	reranked *order = fa_arena_alloc(a, n * sizeof *order);
	q_pooled *moved = fa_arena_alloc(a, n * sizeof *moved);
	if (!texts || !lens || !scores || !order || !moved)
		return fa_err(FATHOM_ENOMEM, "rerank");
	fbuf text;
	fbuf_init(&text, Q_CHUNK_READ_MAX + 4096);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		ix_chunk_info ci;
		rc = seg_chunk(ix_segment_at(ix, pool->v[i].seg), pool->v[i].chunk, &ci);
		/* read no more than the prefix kept below (and the rest of a
		 * character cut there) */
		if (!rc && ci.byte_end > ci.byte_start &&
		    ci.byte_end - ci.byte_start > (uint64_t)Q_RERANK_TEXT_MAX + 4)
			ci.byte_end = ci.byte_start + Q_RERANK_TEXT_MAX + 4;
		if (!rc)
			rc = q_chunk_text(ix, pool->v[i].seg, &ci, &text);
		if (!rc && text.err)
			rc = text.err;
		if (!rc) {
			/* a reranker reads a bounded prefix, cut on a character */
			size_t len = text.len;
			if (len > Q_RERANK_TEXT_MAX) {
				len = Q_RERANK_TEXT_MAX;
				while (len > 0 && (text.data[len] & 0xc0) == 0x80)
					len--;
			}
			char *t = fa_arena_strndup(a, len ? (const char *)text.data : "", len);
			if (!t)
				rc = fa_err(FATHOM_ENOMEM, "rerank");
			texts[i] = t;
			lens[i] = len;
		}
	}
	fbuf_free(&text);
	if (rc)
		return rc;
	if ((rc = rr->score(rr->ctx, query, texts, lens, n, scores)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (isnan(scores[i]))
			return fa_err(FATHOM_EINVAL, "the reranker scored chunk %zu as not a number", i);
		order[i] = (reranked){ scores[i], i };
	}
	qsort(order, n, sizeof *order, by_rerank);
	for (size_t i = 0; i < n; i++) {
		moved[i] = pool->v[order[i].before];
		moved[i].rerank = order[i].score;
		moved[i].rerank_rank = (uint32_t)i + 1;
		moved[i].score = order[i].score;
	}
	memcpy(pool->v, moved, n * sizeof *moved);
	return 0;
}
