/*
 * hnsw.c — a hierarchical navigable small world graph over unit vectors
 * (Malkov & Yashunin, "Efficient and robust approximate nearest neighbor
 * search using Hierarchical Navigable Small World graphs").
 *
 * Each vector gets a top layer drawn as floor(-ln(u) / ln(m)) from a seeded
 * generator. Inserting it walks greedily down from the entry point to its
 * top layer, then on each layer from there to 0 gathers ef_construction
 * candidates, links to m of them chosen by the paper's heuristic (a
 * candidate is kept when it is closer to the new vector than to every one
 * kept before it), and links back, shrinking a full list by the same
 * heuristic (2m on layer 0, m above). A search walks down the same way and
 * keeps an ef-sized beam on layer 0; a filter decides what may enter the
 * results, never what may be walked through, so the graph stays connected
 * under it. Scores are dot products (em_dot: cosine for unit vectors);
 * higher is nearer. Ties are ordered by id.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"
#include "vec/vec.h"

struct vx_hnsw {
	uint32_t dim, n, cap;
	vx_params p;
	float *v;            /* cap * dim */
	uint8_t *level;      /* each node's top layer */
	uint32_t *l0;        /* cap * 2m: layer 0's links */
	uint16_t *l0n;       /* their counts */
	uint32_t **up;       /* per node: layers 1..level, each [count, m ids] */
	uint32_t entry;
	int top;             /* the entry's layer; -1 while empty */
	uint64_t rng;
	uint32_t *stamp;     /* insertion's visited marks (cap), this pass's = mark */
	uint32_t mark;
};

void vx_params_for(uint64_t n, vx_params *p)
{
	memset(p, 0, sizeof *p);
	p->seed = 0x5eed;
	if (n < 100000) {
		p->m = 16, p->ef_construction = 64, p->ef_search = 40;
	} else if (n <= 1000000) {
		p->m = 24, p->ef_construction = 128, p->ef_search = 100;
	} else {
		p->m = 32, p->ef_construction = 200, p->ef_search = 200;
	}
}

static inline float score_of(const vx_hnsw *h, const float *q, uint32_t id)
{
	return em_dot(q, h->v + (size_t)id * h->dim, h->dim);
}

/* ---- heaps of hits: "better" is the higher score, then the lower id ------- */

static inline int better(const vx_hit *a, const vx_hit *b)
{
	return a->score > b->score || (a->score == b->score && a->id < b->id);
}

/* max: the best on top (the candidates); min: the worst on top (results) */
static void heap_push(vx_hit *hp, uint32_t *n, vx_hit x, int max)
{
	uint32_t i = (*n)++;
	while (i > 0) {
		uint32_t par = (i - 1) / 2;
		if (max ? !better(&x, &hp[par]) : !better(&hp[par], &x))
			break;
		hp[i] = hp[par];
		i = par;
	}
	hp[i] = x;
}

static vx_hit heap_pop(vx_hit *hp, uint32_t *n, int max)
{
	vx_hit top = hp[0], x = hp[--(*n)];
	uint32_t i = 0;
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		const vx_hit *cur = &x;
		if (l < *n && (max ? better(&hp[l], cur) : better(cur, &hp[l])))
			m = l, cur = &hp[l];
		if (l + 1 < *n && (max ? better(&hp[l + 1], cur) : better(cur, &hp[l + 1])))
			m = l + 1;
		if (m == i)
			break;
		hp[i] = hp[m];
		i = m;
	}
	if (*n)
		hp[i] = x;
	return top;
}

static int cmp_better(const void *a, const void *b)
{
	return better(a, b) ? -1 : better(b, a) ? 1 : 0;
}

/* ---- links ---------------------------------------------------------------- */

static uint32_t *links(const vx_hnsw *h, uint32_t id, uint32_t layer, uint32_t *cnt)
{
	if (layer == 0) {
		*cnt = h->l0n[id];
		return h->l0 + (size_t)id * 2 * h->p.m;
	}
	uint32_t *b = h->up[id] + (size_t)(layer - 1) * (h->p.m + 1);
	*cnt = b[0];
	return b + 1;
}

static void set_links(vx_hnsw *h, uint32_t id, uint32_t layer, const uint32_t *ids, uint32_t n)
{
	if (layer == 0) {
		memcpy(h->l0 + (size_t)id * 2 * h->p.m, ids, n * sizeof *ids);
		h->l0n[id] = (uint16_t)n;
		return;
	}
	uint32_t *b = h->up[id] + (size_t)(layer - 1) * (h->p.m + 1);
	memmove(b + 1, ids, n * sizeof *ids);
	b[0] = n;
}

/* The heuristic: from cands (best first, scores against the base), keep
 * each one nearer the base than any kept before it, up to max. */
static uint32_t select_heuristic(const vx_hnsw *h, const vx_hit *cands, uint32_t nc, uint32_t max,
                                 uint32_t *out)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < nc && n < max; i++) {
		const float *e = h->v + (size_t)cands[i].id * h->dim;
		int good = 1;
		for (uint32_t j = 0; j < n && good; j++)
			good = em_dot(e, h->v + (size_t)out[j] * h->dim, h->dim) <= cands[i].score;
		if (good)
			out[n++] = cands[i].id;
	}
	return n;
}

/* ---- the beam ------------------------------------------------------------- */

typedef struct beam {
	vx_hit *cand, *res;     /* room for the walk: cap each */
	uint32_t nc, nr, cap;
} beam;

/* visited marks: the insertion's stamps, or a search's bitset */
typedef struct seen {
	uint32_t *stamp, mark;
	uint8_t *bits;
} seen;

static inline int seen_test_set(seen *s, uint32_t id)
{
	if (s->bits) {
		uint8_t b = (uint8_t)(1u << (id & 7));
		if (s->bits[id >> 3] & b)
			return 1;
		s->bits[id >> 3] |= b;
		return 0;
	}
	if (s->stamp[id] == s->mark)
		return 1;
	s->stamp[id] = s->mark;
	return 0;
}

static inline int allowed(const vx_filter *f, uint32_t id)
{
	return !f || !f->bits || (f->bits[id >> 3] >> (id & 7) & 1);
}

/* On one layer, from the entry points in b->res (b->nr of them, marked
 * seen), the ef best reachable (allowed ones only, when f is given);
 * b->res ends as a min-heap of them. */
static void search_layer(const vx_hnsw *h, const float *q, uint32_t ef, uint32_t layer,
                         const vx_filter *f, seen *s, beam *b)
{
	b->nc = 0;
	uint32_t nr = b->nr;
	b->nr = 0;
	for (uint32_t i = 0; i < nr; i++) {
		vx_hit e = b->res[i];
		heap_push(b->cand, &b->nc, e, 1);
	}
	for (uint32_t i = 0; i < b->nc; i++) {
		vx_hit e = b->cand[i];
		if (allowed(f, e.id))
			heap_push(b->res, &b->nr, e, 0);
	}
	while (b->nc) {
		vx_hit c = heap_pop(b->cand, &b->nc, 1);
		if (b->nr >= ef && better(&b->res[0], &c))
			break;
		uint32_t cnt;
		const uint32_t *nb = links(h, c.id, layer, &cnt);
		for (uint32_t j = 0; j < cnt; j++) {
			uint32_t e = nb[j];
			if (seen_test_set(s, e))
				continue;
			vx_hit x = { e, score_of(h, q, e) };
			if (b->nr < ef || better(&x, &b->res[0])) {
				if (b->nc < b->cap)
					heap_push(b->cand, &b->nc, x, 1);
				if (allowed(f, e)) {
					heap_push(b->res, &b->nr, x, 0);
					if (b->nr > ef)
						heap_pop(b->res, &b->nr, 0);
				}
			}
		}
	}
}

/* Greedy descent from the entry point to layer `to` + 1; the nearest found. */
static vx_hit descend(const vx_hnsw *h, const float *q, int to)
{
	vx_hit cur = { h->entry, score_of(h, q, h->entry) };
	for (int l = h->top; l > to; l--) {
		for (int moved = 1; moved;) {
			moved = 0;
			uint32_t cnt;
			const uint32_t *nb = links(h, cur.id, (uint32_t)l, &cnt);
			for (uint32_t j = 0; j < cnt; j++) {
				vx_hit x = { nb[j], score_of(h, q, nb[j]) };
				if (better(&x, &cur)) {
					cur = x;
					moved = 1;
				}
			}
		}
	}
	return cur;
}

static int beam_init(beam *b, uint32_t cap)
{
	b->cap = cap;
	b->nc = b->nr = 0;
	b->cand = fa_malloc((size_t)cap * sizeof *b->cand);
	b->res = fa_malloc((size_t)(cap + 1) * sizeof *b->res);
	if (!b->cand || !b->res) {
		fa_free(b->cand);
		fa_free(b->res);
		return fa_err(FATHOM_ENOMEM, "vector search beam of %u", cap);
	}
	return 0;
}

static void beam_free(beam *b)
{
	fa_free(b->cand);
	fa_free(b->res);
}

/* ---- building --------------------------------------------------------------- */

int vx_hnsw_new(vx_hnsw **out, uint32_t dim, const vx_params *p)
{
	*out = NULL;
	if (dim == 0 || dim > VX_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "vector dimension %u (1 to %u)", dim, VX_MAX_DIM);
	if (p->m < 2 || p->m > VX_MAX_M || p->ef_construction < 1 || p->ef_construction > VX_MAX_K)
		return fa_err(FATHOM_EINVAL, "HNSW m %u (2 to %u), ef_construction %u (1 to %u)", p->m,
		              VX_MAX_M, p->ef_construction, VX_MAX_K);
	vx_hnsw *h = fa_malloc(sizeof *h);
	if (!h)
		return fa_err(FATHOM_ENOMEM, "HNSW graph");
	memset(h, 0, sizeof *h);
	h->dim = dim;
	h->p = *p;
	h->top = -1;
	h->rng = p->seed ? p->seed : 1;
	*out = h;
	return 0;
}

void vx_hnsw_free(vx_hnsw *h)
{
	if (!h)
		return;
	for (uint32_t i = 0; i < h->n; i++)
		fa_free(h->up[i]);
	fa_free(h->up);
	fa_free(h->v);
	fa_free(h->level);
	fa_free(h->l0);
	fa_free(h->l0n);
	fa_free(h->stamp);
	fa_free(h);
}

uint32_t vx_hnsw_count(const vx_hnsw *h)
{
	return h->n;
}

const float *vx_hnsw_vectors(const vx_hnsw *h)
{
	return h->v;
}

static int grow(vx_hnsw *h)
{
	if (h->n < h->cap)
		return 0;
	if (h->cap >= UINT32_MAX / 2)
		return fa_err(FATHOM_ETOOBIG, "HNSW graph of %u vectors", h->cap);
	uint32_t cap = h->cap ? h->cap * 2 : 1024;
	float *v = fa_realloc(h->v, (size_t)cap * h->dim * sizeof *v);
	if (v)
		h->v = v;
	uint8_t *lv = fa_realloc(h->level, cap);
	if (lv)
		h->level = lv;
	uint32_t *l0 = fa_realloc(h->l0, (size_t)cap * 2 * h->p.m * sizeof *l0);
	if (l0)
		h->l0 = l0;
	uint16_t *l0n = fa_realloc(h->l0n, (size_t)cap * sizeof *l0n);
	if (l0n)
		h->l0n = l0n;
	uint32_t **up = fa_realloc(h->up, (size_t)cap * sizeof *up);
	if (up)
		h->up = up;
	uint32_t *st = fa_realloc(h->stamp, (size_t)cap * sizeof *st);
	if (st) {
		memset(st + h->cap, 0, (size_t)(cap - h->cap) * sizeof *st);
		h->stamp = st;
	}
	if (!v || !lv || !l0 || !l0n || !up || !st)
		return fa_err(FATHOM_ENOMEM, "HNSW graph of %u vectors", cap);
	h->cap = cap;
	return 0;
}

static uint32_t draw_level(vx_hnsw *h)
{
	/* xorshift64*, 53 bits into (0, 1] */
	h->rng ^= h->rng >> 12;
	h->rng ^= h->rng << 25;
	h->rng ^= h->rng >> 27;
	uint64_t r = h->rng * 0x2545f4914f6cdd1dull;
	double u = ((double)(r >> 11) + 1.0) / 9007199254740992.0;
	double l = -log(u) / log((double)h->p.m);
	return l >= VX_MAX_LEVEL ? VX_MAX_LEVEL : (uint32_t)l;
}

/* Link node a to b on layer l, shrinking a's list by the heuristic when full. */
static int link_back(vx_hnsw *h, uint32_t a, uint32_t b, uint32_t l, vx_hit *scratch,
                     uint32_t *ids)
{
	uint32_t max = l == 0 ? 2 * h->p.m : h->p.m, cnt;
	uint32_t *nb = links(h, a, l, &cnt);
	if (cnt < max) {
		nb[cnt] = b;
		if (l == 0)
			h->l0n[a] = (uint16_t)(cnt + 1);
		else
			nb[-1] = cnt + 1;
		return 0;
	}
	const float *va = h->v + (size_t)a * h->dim;
	for (uint32_t j = 0; j < cnt; j++)
		scratch[j] = (vx_hit){ nb[j], score_of(h, va, nb[j]) };
	scratch[cnt] = (vx_hit){ b, score_of(h, va, b) };
	qsort(scratch, cnt + 1, sizeof *scratch, cmp_better);
	uint32_t n = select_heuristic(h, scratch, cnt + 1, max, ids);
	set_links(h, a, l, ids, n);
	return 0;
}

int vx_hnsw_add(vx_hnsw *h, const float *v)
{
	for (uint32_t k = 0; k < h->dim; k++)
		if (!isfinite(v[k]))
			return fa_err(FATHOM_EINVAL, "vector value %u is not a finite number", k);
	int rc = grow(h);
	if (rc)
		return rc;
	uint32_t id = h->n, lev = draw_level(h), m = h->p.m;
	memcpy(h->v + (size_t)id * h->dim, v, h->dim * sizeof *v);
	h->level[id] = (uint8_t)lev;
	h->l0n[id] = 0;
	h->up[id] = NULL;
	if (lev) {
		h->up[id] = fa_malloc((size_t)lev * (m + 1) * sizeof *h->up[id]);
		if (!h->up[id])
			return fa_err(FATHOM_ENOMEM, "HNSW links");
		for (uint32_t l = 1; l <= lev; l++)
			h->up[id][(size_t)(l - 1) * (m + 1)] = 0;
	}
	h->n++;
	if (h->top < 0) {
		h->entry = id;
		h->top = (int)lev;
		return 0;
	}
	const float *q = h->v + (size_t)id * h->dim;
	uint32_t ef = FA_MAX(h->p.ef_construction, 2 * m);
	beam b;
	if ((rc = beam_init(&b, ef + 2 * m * ef + 1)))
		return rc;
	vx_hit *scratch = fa_malloc((size_t)(2 * m + 1) * sizeof *scratch);
	uint32_t *ids = fa_malloc((size_t)(2 * m + 1) * sizeof *ids);
	if (!scratch || !ids) {
		rc = fa_err(FATHOM_ENOMEM, "HNSW links");
		goto done;
	}
	vx_hit ep = descend(h, q, (int)lev);
	b.res[0] = ep;
	b.nr = 1;
	for (int l = FA_MIN((int)lev, h->top); l >= 0; l--) {
		seen s = { h->stamp, ++h->mark, NULL };
		if (s.mark == 0) {   /* the stamps wrapped: start them over */
			memset(h->stamp, 0, (size_t)h->cap * sizeof *h->stamp);
			s.mark = h->mark = 1;
		}
		s.stamp[id] = s.mark;
		for (uint32_t i = 0; i < b.nr; i++)
			s.stamp[b.res[i].id] = s.mark;
		search_layer(h, q, ef, (uint32_t)l, NULL, &s, &b);
		/* best first, then the heuristic's m */
		uint32_t nw = b.nr;
		qsort(b.res, nw, sizeof *b.res, cmp_better);
		uint32_t nn = select_heuristic(h, b.res, nw, m, ids);
		set_links(h, id, (uint32_t)l, ids, nn);
		uint32_t keep[VX_MAX_M];
		memcpy(keep, ids, nn * sizeof *ids);
		for (uint32_t j = 0; j < nn; j++)
			if ((rc = link_back(h, keep[j], id, (uint32_t)l, scratch, ids)))
				goto done;
		/* the whole beam enters the next layer down */
		b.nr = nw;
	}
	if ((int)lev > h->top) {
		h->top = (int)lev;
		h->entry = id;
	}
done:
	fa_free(scratch);
	fa_free(ids);
	beam_free(&b);
	return rc;
}

/* ---- searching ---------------------------------------------------------------- */

int vx_brute(const float *vecs, uint32_t count, uint32_t dim, const float *q, uint32_t k,
             const vx_filter *f, vx_hit *out, uint32_t *n)
{
	*n = 0;
	if (k == 0 || k > VX_MAX_K)
		return k ? fa_err(FATHOM_EINVAL, "k %u (at most %u)", k, VX_MAX_K) : 0;
	uint32_t nh = 0;
	for (uint32_t i = 0; i < count; i++) {
		if (!allowed(f, i))
			continue;
		vx_hit x = { i, em_dot(q, vecs + (size_t)i * dim, dim) };
		if (nh < k) {
			heap_push(out, &nh, x, 0);
		} else if (better(&x, &out[0])) {
			heap_pop(out, &nh, 0);
			heap_push(out, &nh, x, 0);
		}
	}
	qsort(out, nh, sizeof *out, cmp_better);
	*n = nh;
	return 0;
}

int vx_hnsw_search(const vx_hnsw *h, const float *q, uint32_t k, uint32_t ef,
                   const vx_filter *f, vx_hit *out, uint32_t *n)
{
	*n = 0;
	if (k == 0 || k > VX_MAX_K)
		return k ? fa_err(FATHOM_EINVAL, "k %u (at most %u)", k, VX_MAX_K) : 0;
	if (h->n == 0)
		return 0;
	if (f && f->bits && (double)f->count < VX_BRUTE_SHARE * h->n)
		return vx_brute(h->v, h->n, h->dim, q, k, f, out, n);
	ef = FA_MAX(ef ? ef : h->p.ef_search, k);
	if (ef > VX_MAX_K)
		ef = VX_MAX_K;
	beam b;
	int rc = beam_init(&b, ef + 2 * h->p.m * ef + 1);
	if (rc)
		return rc;
	seen s = { NULL, 0, fa_malloc((size_t)h->n / 8 + 1) };
	if (!s.bits) {
		beam_free(&b);
		return fa_err(FATHOM_ENOMEM, "vector search");
	}
	memset(s.bits, 0, (size_t)h->n / 8 + 1);
	vx_hit ep = descend(h, q, 0);
	s.bits[ep.id >> 3] |= (uint8_t)(1u << (ep.id & 7));
	b.res[0] = ep;
	b.nr = 1;
	search_layer(h, q, ef, 0, f, &s, &b);
	qsort(b.res, b.nr, sizeof *b.res, cmp_better);
	*n = FA_MIN(b.nr, k);
	memcpy(out, b.res, *n * sizeof *out);
	fa_free(s.bits);
	beam_free(&b);
	return 0;
}
