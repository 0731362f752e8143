/*
 * fuse.c — candidate lists into one pool. Every retrieval source hands the
 * pipeline a list of chunks, best first, scored on its own scale (BM25F,
 * matching lines, a cosine); fusion makes one ranking of them.
 *
 * One list is the pool as it is: same order, same scores, so a search with
 * one source ranks exactly as that source does. Several are fused by
 * reciprocal rank (Cormack et al., 2009): a chunk scores
 * sum over lists of 1 / (Q_RRF_K + rank), which needs no common scale and
 * rewards the chunks several sources agree on; by a convex combination of
 * the scores, each list min-max normalised (what Bruch et al., 2023, found
 * better than RRF when the weight is tuned); or by RRF with weights.
 * A convex tie (min-max gives a list's last chunk 0, as much as a chunk
 * the list did not find) is broken by reciprocal rank under the same
 * weights, then by the best rank: so at weight 1 for full text, its order
 * is kept whole, the vectors' hits after it.
 */
#include <math.h>
#include <stdlib.h>

#include "query/query_int.h"

int q_cands_add(q_cand_list *l, fa_arena *a, uint32_t seg, uint32_t chunk, double score,
                const void *receipt)
{
	if (l->n == l->cap) {
		/* the list lives in the arena: a new array twice the size */
		size_t want;
		if (fa_mul(l->cap ? l->cap : 8, 2, &want))
			return fa_err(FATHOM_ENOMEM, "candidates");
		q_cand *nv = fa_arena_alloc(a, want * sizeof *nv);
		if (!nv)
			return fa_err(FATHOM_ENOMEM, "candidates");
		if (l->n)
			memcpy(nv, l->v, l->n * sizeof *nv);
		l->v = nv;
		l->cap = want;
	}
	l->v[l->n++] = (q_cand){ seg, chunk, score, receipt };
	return 0;
}

/* One appearance of a chunk in a list. */
typedef struct entry {
	uint32_t seg, chunk, list, rank;
} entry;

static int by_chunk(const void *pa, const void *pb)
{
	const entry *a = pa, *b = pb;
	if (a->seg != b->seg)
		return a->seg < b->seg ? -1 : 1;
	if (a->chunk != b->chunk)
		return a->chunk < b->chunk ? -1 : 1;
	if (a->list != b->list)
		return a->list < b->list ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

/* The best (smallest) rank of a pooled chunk, and the list it is in. */
static void best_of(const q_pooled *p, uint32_t *rank, uint32_t *list)
{
	*rank = UINT32_MAX;
	*list = UINT32_MAX;
	for (uint32_t i = 0; i < p->nfound; i++)
		if (p->found[i].rank < *rank || (p->found[i].rank == *rank && p->found[i].list < *list)) {
			*rank = p->found[i].rank;
			*list = p->found[i].list;
		}
}

static int by_fused(const void *pa, const void *pb)
{
	const q_pooled *a = pa, *b = pb;
	if (a->fused != b->fused)
		return a->fused > b->fused ? -1 : 1;
	if (a->tie != b->tie)
		return a->tie > b->tie ? -1 : 1;
	uint32_t ra, la, rb, lb;
	best_of(a, &ra, &la);
	best_of(b, &rb, &lb);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (la != lb)
		return la < lb ? -1 : 1;
	if (a->seg != b->seg)
		return a->seg < b->seg ? -1 : 1;
	return (a->chunk > b->chunk) - (a->chunk < b->chunk);
}

/* min and max of a list's scores */
static void list_range(const q_cand_list *l, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t i = 0; i < l->n; i++) {
		*lo = fmin(*lo, l->v[i].score);
		*hi = fmax(*hi, l->v[i].score);
	}
}

/* The part list l, at rank (1-based) with score, adds to a chunk's fusion. */
static double part_of(const q_fusion *f, uint32_t l, uint32_t rank, double score,
                      const double *lo, const double *hi)
{
	if (!f || f->method == FATHOM_FUSION_RRF)
		return 1.0 / (Q_RRF_K + (double)rank);
	if (f->method == FATHOM_FUSION_RRF_WEIGHTED)
		return f->weight[l] / (Q_RRF_K + (double)rank);
	double norm = hi[l] > lo[l] ? (score - lo[l]) / (hi[l] - lo[l]) : 1.0;
	return f->weight[l] * norm;
}

int q_fuse(q_pool *out, fa_arena *a, const q_cand_list *lists, uint32_t nlists)
{
	return q_fuse_by(out, a, lists, nlists, NULL);
}

int q_fuse_by(q_pool *out, fa_arena *a, const q_cand_list *lists, uint32_t nlists,
              const q_fusion *f)
{
	memset(out, 0, sizeof *out);
	out->lists = lists;
	out->nlists = nlists;
	if (nlists > Q_MAX_LISTS)
		return fa_err(FATHOM_EINVAL, "%u candidate lists, at most %d", nlists, Q_MAX_LISTS);
	size_t total = 0;
	for (uint32_t l = 0; l < nlists; l++) {
		if (lists[l].n > UINT32_MAX || fa_add(total, lists[l].n, &total))
			return fa_err(FATHOM_ETOOBIG, "too many candidates");
	}
	size_t bytes;
	if (fa_mul(total ? total : 1, sizeof *out->v, &bytes))
		return fa_err(FATHOM_ETOOBIG, "too many candidates");
	out->v = fa_arena_alloc(a, bytes);
	if (!out->v)
		return fa_err(FATHOM_ENOMEM, "candidate pool");

	if (nlists == 1) {
		/* the identity: one source's ranking is the pool's */
		for (size_t i = 0; i < lists[0].n; i++) {
			q_pooled *p = &out->v[out->n++];
			memset(p, 0, sizeof *p);
			p->seg = lists[0].v[i].seg;
			p->chunk = lists[0].v[i].chunk;
			p->score = lists[0].v[i].score;
			p->nfound = 1;
			p->found[0] = (q_found){ 0, (uint32_t)i + 1 };
		}
		return 0;
	}

	/* Several lists: every appearance, grouped by chunk (list order
	 * within), then each chunk once with the sum of its parts. */
	double lo[Q_MAX_LISTS], hi[Q_MAX_LISTS];
	for (uint32_t l = 0; l < nlists; l++)
		list_range(&lists[l], &lo[l], &hi[l]);
	entry *e = fa_arena_alloc(a, (total ? total : 1) * sizeof *e);
	if (!e)
		return fa_err(FATHOM_ENOMEM, "candidate pool");
	size_t ne = 0;
	for (uint32_t l = 0; l < nlists; l++)
		for (size_t i = 0; i < lists[l].n; i++)
			e[ne++] = (entry){ lists[l].v[i].seg, lists[l].v[i].chunk, l, (uint32_t)i + 1 };
	if (ne)
		qsort(e, ne, sizeof *e, by_chunk);
	for (size_t i = 0; i < ne;) {
		q_pooled *p = &out->v[out->n++];
		memset(p, 0, sizeof *p);
		p->seg = e[i].seg;
		p->chunk = e[i].chunk;
		size_t j = i;
		for (; j < ne && e[j].seg == p->seg && e[j].chunk == p->chunk; j++) {
			/* a list naming a chunk twice counts its better rank once */
			if (p->nfound && p->found[p->nfound - 1].list == e[j].list)
				continue;
			p->found[p->nfound++] = (q_found){ e[j].list, e[j].rank };
			p->fused += part_of(f, e[j].list, e[j].rank,
			                    lists[e[j].list].v[e[j].rank - 1].score, lo, hi);
			if (f && f->method == FATHOM_FUSION_CONVEX)
				p->tie += f->weight[e[j].list] / (Q_RRF_K + (double)e[j].rank);
		}
		i = j;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof *out->v, by_fused);
	for (size_t i = 0; i < out->n; i++) {
		out->v[i].score = out->v[i].fused;
		out->v[i].fused_rank = (uint32_t)i + 1;
	}
	return 0;
}
