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
 *
 * The links are kept as the segment's HNSW section lays them out
 * (hnsw_int.h), so a view over mapped bytes (hnsw_io.c) runs this same
 * search. A merge places the kept vectors of its inputs in order and links
 * them: all afresh, or by copying the links of the largest input that lost
 * no node and inserting the rest (measured on 2 x 20k 384-d vectors: 6.5 s
 * against 10.3 s, the same recall); a graph that lost nodes is rebuilt,
 * since patching the holes a delete leaves is what degrades HNSW graphs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/pool.h"
#include "util/util.h"
#include "vec/hnsw_int.h"
#include "vec/vec.h"

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

/* A query as the rows want it: the floats, and for int8 rows that score
 * symmetrically (vx_hnsw_i8_symmetric) the query quantised the same way
 * (its own scale). int8 rows otherwise score asymmetrically: the float
 * query against the int8 values, times the row's scale. */
typedef struct query {
	const float *f;
	int8_t q[VX_MAX_DIM];
	float qs;
	float sum;       /* the sum of the query's values, for rows' offsets */
} query;

static void query_init(query *q, const vx_rows *r, const float *v)
{
	q->f = v;
	q->qs = r->q && r->sym ? em_quantize_i8(v, r->dim, q->q) : 0.0f;
	q->sum = r->o ? em_sum(v, r->dim) : 0.0f;
}

/* Called for every node a walk visits: float rows first, with no test of
 * the int8 fields. */
static inline float score_of(const vx_rows *r, const query *q, uint32_t id)
{
	if (!r->q)
		return em_dot(q->f, r->f + (size_t)id * r->dim, r->dim);
	float off = r->o ? r->o[id] * q->sum : 0.0f;
	if (r->sym)
		return (float)em_dot_i8(q->q, r->q + (size_t)id * r->dim, r->dim) * (q->qs * r->s[id]) +
		       off;
	return em_dot_f32_i8(q->f, r->q + (size_t)id * r->dim, r->dim) * r->s[id] + off;
}

/* the builder's scores: always its float rows */
static inline float fscore(const vx_hnsw *h, const float *q, uint32_t id)
{
	return em_dot(q, h->wv + (size_t)id * h->dim, h->dim);
}

/* ---- heaps of hits: "better" is the higher score, then the lower id ------- */

static inline int better(const vx_hit *a, const vx_hit *b)
{
	return a->score > b->score || (a->score == b->score && a->id < b->id);
}

/* Forced inline: each call site's max is a constant, and the walk's inner
 * loop is made of these. */
#define HOT static inline __attribute__((always_inline))

/* max: the best on top (the candidates); min: the worst on top (results) */
HOT void heap_push(vx_hit *hp, uint32_t *n, vx_hit x, int max)
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

HOT vx_hit heap_pop(vx_hit *hp, uint32_t *n, int max)
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

/* Hits best first. "better" is a total order (ids differ), so any sort
 * gives the one order: a short list by insertion (a beam of ef), with no
 * call per comparison; a long one by qsort. */
static void sort_hits(vx_hit *a, uint32_t n)
{
	if (n > 64) {
		qsort(a, n, sizeof *a, cmp_better);
		return;
	}
	for (uint32_t i = 1; i < n; i++) {
		vx_hit x = a[i];
		uint32_t j = i;
		for (; j > 0 && better(&x, &a[j - 1]); j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* ---- links ---------------------------------------------------------------- */

/* A node's list on a layer: [count, slots]; a view's were checked when it
 * was opened (count within the slots, every id below n and on the layer). */
HOT const uint32_t *links(const vx_hnsw *h, uint32_t id, uint32_t layer, uint32_t *cnt)
{
	const uint32_t *b = layer == 0 ? h->l0 + (size_t)id * (1 + 2 * h->p.m)
	                               : h->pool + h->upoff[id] + (size_t)(layer - 1) * (h->p.m + 1);
	*cnt = b[0];
	return b + 1;
}

/* the same, writable (a builder's) */
static uint32_t *wlinks(vx_hnsw *h, uint32_t id, uint32_t layer)
{
	return layer == 0 ? h->wl0 + (size_t)id * (1 + 2 * h->p.m)
	                  : h->wpool + h->wupoff[id] + (size_t)(layer - 1) * (h->p.m + 1);
}

static void set_links(vx_hnsw *h, uint32_t id, uint32_t layer, const uint32_t *ids, uint32_t n)
{
	uint32_t *b = wlinks(h, id, layer);
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
		const float *e = h->wv + (size_t)cands[i].id * h->dim;
		int good = 1;
		for (uint32_t j = 0; j < n && good; j++)
			good = fscore(h, e, out[j]) <= cands[i].score;
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
static void search_layer(const vx_hnsw *h, const query *q, uint32_t ef, uint32_t layer,
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
			vx_hit x = { e, score_of(&h->rows, q, e) };
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
static vx_hit descend(const vx_hnsw *h, const query *q, int to)
{
	vx_hit cur = { h->entry, score_of(&h->rows, q, h->entry) };
	for (int l = h->top; l > to; l--) {
		for (int moved = 1; moved;) {
			moved = 0;
			uint32_t cnt;
			const uint32_t *nb = links(h, cur.id, (uint32_t)l, &cnt);
			for (uint32_t j = 0; j < cnt; j++) {
				vx_hit x = { nb[j], score_of(&h->rows, q, nb[j]) };
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
		b->cand = b->res = NULL;
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

static int check_params(uint32_t dim, const vx_params *p)
{
	if (dim == 0 || dim > VX_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "vector dimension %u (1 to %u)", dim, VX_MAX_DIM);
	if (p->m < 2 || p->m > VX_MAX_M || p->ef_construction < 1 || p->ef_construction > VX_MAX_K)
		return fa_err(FATHOM_EINVAL, "HNSW m %u (2 to %u), ef_construction %u (1 to %u)", p->m,
		              VX_MAX_M, p->ef_construction, VX_MAX_K);
	return 0;
}

int vx_hnsw_new(vx_hnsw **out, uint32_t dim, const vx_params *p)
{
	*out = NULL;
	int rc = check_params(dim, p);
	if (rc)
		return rc;
	vx_hnsw *h = fa_malloc(sizeof *h);
	if (!h)
		return fa_err(FATHOM_ENOMEM, "HNSW graph");
	memset(h, 0, sizeof *h);
	h->dim = dim;
	h->p = *p;
	h->rows.dim = dim;
	h->top = -1;
	h->rng = p->seed ? p->seed : 1;
	*out = h;
	return 0;
}

void vx_hnsw_free(vx_hnsw *h)
{
	if (!h)
		return;
	fa_free(h->wv);
	fa_free(h->wlevel);
	fa_free(h->wl0);
	fa_free(h->wupoff);
	fa_free(h->wpool);
	fa_free(h->stamp);
	fa_free(h->copy);
	fa_free(h);
}

uint32_t vx_hnsw_count(const vx_hnsw *h)
{
	return h->n;
}

const float *vx_hnsw_vectors(const vx_hnsw *h)
{
	return h->rows.f;
}

/* Room for want nodes (at least). */
static int grow(vx_hnsw *h, uint32_t want)
{
	if (want <= h->cap)
		return 0;
	if (want > UINT32_MAX / 2)
		return fa_err(FATHOM_ETOOBIG, "HNSW graph of %u vectors", want);
	uint32_t cap = h->cap ? h->cap : 1024;
	while (cap < want)
		cap *= 2;
	size_t stride = 1 + 2 * (size_t)h->p.m;
	float *v = fa_realloc(h->wv, (size_t)cap * h->dim * sizeof *v);
	if (v)
		h->wv = v;
	uint8_t *lv = fa_realloc(h->wlevel, cap);
	if (lv)
		h->wlevel = lv;
	uint32_t *l0 = fa_realloc(h->wl0, (size_t)cap * stride * sizeof *l0);
	if (l0)
		h->wl0 = l0;
	uint32_t *up = fa_realloc(h->wupoff, (size_t)cap * sizeof *up);
	if (up)
		h->wupoff = up;
	uint32_t *st = fa_realloc(h->stamp, (size_t)cap * sizeof *st);
	if (st) {
		memset(st + h->cap, 0, (size_t)(cap - h->cap) * sizeof *st);
		h->stamp = st;
	}
	h->rows.f = h->wv;
	h->level = h->wlevel;
	h->l0 = h->wl0;
	h->upoff = h->wupoff;
	if (!v || !lv || !l0 || !up || !st)
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

/* Node id's layers above 0: lev empty blocks at the pool's end (the writer
 * lays them out again in id order). */
static int give_layers(vx_hnsw *h, uint32_t id, uint32_t lev)
{
	h->wlevel[id] = (uint8_t)lev;
	h->wupoff[id] = 0;
	if (lev == 0)
		return 0;
	size_t words = (size_t)lev * (h->p.m + 1), need;
	if (fa_add(h->pool_len, words, &need) || need > UINT32_MAX)
		return fa_err(FATHOM_ETOOBIG, "HNSW upper layers of %zu words", h->pool_len);
	if (need > h->pool_cap) {
		size_t cap = h->pool_cap ? h->pool_cap : 4096;
		while (cap < need)
			cap *= 2;
		uint32_t *np = fa_realloc(h->wpool, cap * sizeof *np);
		if (!np)
			return fa_err(FATHOM_ENOMEM, "HNSW upper layers of %zu words", cap);
		h->wpool = np;
		h->pool = np;
		h->pool_cap = cap;
	}
	h->wupoff[id] = (uint32_t)h->pool_len;
	for (uint32_t l = 0; l < lev; l++)
		h->wpool[h->pool_len + (size_t)l * (h->p.m + 1)] = 0;
	h->pool_len = need;
	return 0;
}

/* Link node a to b on layer l, shrinking a's list by the heuristic when full. */
static void link_back(vx_hnsw *h, uint32_t a, uint32_t b, uint32_t l, vx_hit *scratch,
                      uint32_t *ids)
{
	uint32_t max = l == 0 ? 2 * h->p.m : h->p.m;
	uint32_t *nb = wlinks(h, a, l), cnt = nb[0];
	if (cnt < max) {
		nb[1 + cnt] = b;
		nb[0] = cnt + 1;
		return;
	}
	const float *va = h->wv + (size_t)a * h->dim;
	for (uint32_t j = 0; j < cnt; j++)
		scratch[j] = (vx_hit){ nb[1 + j], fscore(h, va, nb[1 + j]) };
	scratch[cnt] = (vx_hit){ b, fscore(h, va, b) };
	sort_hits(scratch, cnt + 1);
	uint32_t n = select_heuristic(h, scratch, cnt + 1, max, ids);
	set_links(h, a, l, ids, n);
}

/* Link node id (its vector, level and empty lists in place) into the graph
 * of the nodes linked so far. */
static int insert(vx_hnsw *h, uint32_t id)
{
	uint32_t lev = h->wlevel[id], m = h->p.m;
	if (h->top < 0) {
		h->entry = id;
		h->top = (int)lev;
		return 0;
	}
	query q;
	query_init(&q, &h->rows, h->wv + (size_t)id * h->dim);
	uint32_t ef = FA_MAX(h->p.ef_construction, 2 * m);
	beam b;
	int rc = beam_init(&b, ef + 2 * m * ef + 1);
	if (rc)
		return rc;
	vx_hit *scratch = fa_malloc((size_t)(2 * m + 1) * sizeof *scratch);
	uint32_t *ids = fa_malloc((size_t)(2 * m + 1) * sizeof *ids);
	if (!scratch || !ids) {
		rc = fa_err(FATHOM_ENOMEM, "HNSW links");
		goto done;
	}
	vx_hit ep = descend(h, &q, (int)lev);
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
		search_layer(h, &q, ef, (uint32_t)l, NULL, &s, &b);
		/* best first, then the heuristic's m */
		uint32_t nw = b.nr;
		sort_hits(b.res, nw);
		uint32_t nn = select_heuristic(h, b.res, nw, m, ids);
		set_links(h, id, (uint32_t)l, ids, nn);
		uint32_t keep[VX_MAX_M];
		memcpy(keep, ids, nn * sizeof *ids);
		for (uint32_t j = 0; j < nn; j++)
			link_back(h, keep[j], id, (uint32_t)l, scratch, ids);
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

static int check_finite(const float *v, uint32_t dim)
{
	for (uint32_t k = 0; k < dim; k++)
		if (!isfinite(v[k]))
			return fa_err(FATHOM_EINVAL, "vector value %u is not a finite number", k);
	return 0;
}

/* An all-zero row is no vector (VECS's "none"): a hole, placed on layer 0
 * with no links and linked from nowhere, so no walk reaches it. */
static int is_hole(const float *v, uint32_t dim)
{
	for (uint32_t k = 0; k < dim; k++)
		if (v[k] != 0.0f)
			return 0;
	return 1;
}

/* Node id, its row in place: empty lists and a drawn level, or for a hole
 * (*hole set) level 0 and no draw. Every builder places a node so, in id
 * order, before it is linked. */
static int give_level(vx_hnsw *h, uint32_t id, int *hole)
{
	*hole = is_hole(h->wv + (size_t)id * h->dim, h->dim);
	h->wl0[(size_t)id * (1 + 2 * h->p.m)] = 0;
	return give_layers(h, id, *hole ? 0 : draw_level(h));
}

int vx_hnsw_add(vx_hnsw *h, const float *v)
{
	if (h->view)
		return fa_err(FATHOM_EINVAL, "an HNSW graph read from a segment takes no new vectors");
	int rc = check_finite(v, h->dim), hole;
	if (rc || (rc = grow(h, h->n + 1)))
		return rc;
	memcpy(h->wv + (size_t)h->n * h->dim, v, h->dim * sizeof *v);
	if ((rc = give_level(h, h->n, &hole)))
		return rc;
	h->n++;
	return hole ? 0 : insert(h, h->n - 1);
}

/* ---- building on several threads ------------------------------------------------
 *
 * vx_hnsw_add_rows links the rows in batches of VX_BATCH (after the first
 * VX_BATCH_FROM one by one, so batches meet a graph that has its shape):
 * first every node of a batch searches the graph as it stood before the
 * batch, each layer's beam kept, as insert() would search it, and picks
 * its links on each layer from those beams plus the batch's earlier nodes
 * (scored exactly), as insert() picks them (this part on the threads, the
 * graph only read). Then each node takes its lists, in id order on one
 * thread, and last each node it picked gets the link back (link_back,
 * which may shrink that node's list), on the threads: a node's links back
 * are one thread's, taken in the order one thread taking the batch's
 * nodes in id order would take them. A node picks only nodes before it,
 * and picking reads vectors, never lists: so this is insert()'s order
 * exactly. What a node sees depends on the batch, never on the threads:
 * the graph is the same on any number. */

typedef struct batch_node {
	uint32_t id;
	int hole;               /* an all-zero row: no beams, no links */
	int layers;             /* beams kept: layers min(level, top) .. 0 */
	vx_hit *beam;           /* ef per layer: layer l's at (layers - l) * ef */
	uint32_t cnt[VX_MAX_LEVEL + 1];
	uint32_t *pick;         /* its links: m per layer, layer l's at l * m */
	uint32_t npick[VX_MAX_LEVEL + 1];
} batch_node;

typedef struct batch_job {
	vx_hnsw *h;             /* read while searching; its lists written back after */
	batch_node *nodes;
	uint32_t nn, ef, t, threads;
	uint32_t *stamp, mark;  /* this thread's visited marks (h->n) */
	beam b;
	query q;                /* the node being searched */
	vx_hit *cands, *scratch;   /* picking: ef + VX_BATCH; link_back: 2m + 1 */
	uint32_t *ids;             /* 2m + 1 */
} batch_job;

/* Node bn's links on each of its layers, into bn->pick: its beams and the
 * batch's earlier nodes (first .. bn), the ef best, by the heuristic. */
static void batch_pick(const vx_hnsw *h, const batch_node *first, batch_node *bn, uint32_t ef,
                       vx_hit *cands)
{
	uint32_t id = bn->id, lev = h->wlevel[id], m = h->p.m;
	const float *v = h->wv + (size_t)id * h->dim;
	for (int l = (int)lev; l >= 0; l--) {
		uint32_t nc = 0;
		if (l <= bn->layers) {
			memcpy(cands, bn->beam + (size_t)(bn->layers - l) * ef, bn->cnt[l] * sizeof *cands);
			nc = bn->cnt[l];
		}
		for (const batch_node *o = first; o < bn; o++)
			if (!o->hole && h->wlevel[o->id] >= (uint32_t)l)
				cands[nc++] = (vx_hit){ o->id, fscore(h, v, o->id) };
		bn->npick[l] = 0;
		if (!nc)
			continue;
		/* the ef best, as insert()'s beam holds: the heuristic keeps a far
		 * candidate that no kept one is nearer to, so more would give
		 * far nodes links a beam never offers (measured: mean degree
		 * 19.7 against 17.5, searches 9% slower) */
		sort_hits(cands, nc);
		bn->npick[l] = select_heuristic(h, cands, FA_MIN(nc, ef), m, bn->pick + (size_t)l * m);
	}
}

static void *batch_search(void *p)
{
	batch_job *j = p;
	const vx_hnsw *h = j->h;
	query *q = &j->q;
	for (uint32_t k = j->t; k < j->nn; k += j->threads) {
		batch_node *bn = &j->nodes[k];
		if (bn->hole)
			continue;
		if (bn->layers < 0) {   /* the graph was empty */
			batch_pick(h, j->nodes, bn, j->ef, j->cands);
			continue;
		}
		query_init(q, &h->rows, h->wv + (size_t)bn->id * h->dim);
		j->b.res[0] = descend(h, q, (int)h->wlevel[bn->id]);
		j->b.nr = 1;
		for (int l = bn->layers; l >= 0; l--) {
			seen s = { j->stamp, ++j->mark, NULL };
			if (s.mark == 0) {
				memset(j->stamp, 0, (size_t)h->n * sizeof *j->stamp);
				s.mark = j->mark = 1;
			}
			for (uint32_t i = 0; i < j->b.nr; i++)
				s.stamp[j->b.res[i].id] = s.mark;
			search_layer(h, q, j->ef, (uint32_t)l, NULL, &s, &j->b);
			sort_hits(j->b.res, j->b.nr);
			uint32_t n = FA_MIN(j->b.nr, j->ef);
			memcpy(bn->beam + (size_t)(bn->layers - l) * j->ef, j->b.res, n * sizeof *j->b.res);
			bn->cnt[l] = n;
		}
		batch_pick(h, j->nodes, bn, j->ef, j->cands);
	}
	return NULL;
}

/* The links back to the nodes this thread owns (id % threads), in the
 * batch's order: node, layer from the top, pick. */
static void *batch_back(void *p)
{
	batch_job *j = p;
	vx_hnsw *h = j->h;
	for (uint32_t k = 0; k < j->nn; k++) {
		const batch_node *bn = &j->nodes[k];
		if (bn->hole)
			continue;
		for (int l = (int)h->wlevel[bn->id]; l >= 0; l--) {
			const uint32_t *pk = bn->pick + (size_t)l * h->p.m;
			for (uint32_t i = 0; i < bn->npick[l]; i++)
				if (pk[i] % j->threads == j->t)
					link_back(h, pk[i], bn->id, (uint32_t)l, j->scratch, j->ids);
		}
	}
	return NULL;
}

/* What the batches of one build share: each thread's job (visited marks
 * for cap nodes, a beam, the picking's and the links back's scratch). */
typedef struct batch_ctx {
	batch_job jobs[VX_BUILD_MAX_THREADS];
	unsigned threads;
	uint32_t ef;
	batch_node nodes[VX_BATCH];
} batch_ctx;

static void batch_ctx_free(batch_ctx *c)
{
	for (unsigned t = 0; t < c->threads; t++) {
		batch_job *j = &c->jobs[t];
		fa_free(j->stamp);
		if (j->b.cand || j->b.res)
			beam_free(&j->b);
		fa_free(j->cands);
		fa_free(j->scratch);
		fa_free(j->ids);
	}
	fa_free(c);
}

/* For a graph that will hold cap nodes. */
static int batch_ctx_new(batch_ctx **out, const vx_hnsw *h, unsigned threads, uint32_t cap)
{
	batch_ctx *c = fa_calloc(1, sizeof *c);
	*out = NULL;
	if (!c)
		return fa_err(FATHOM_ENOMEM, "HNSW build");
	uint32_t m = h->p.m;
	c->threads = FA_MAX(1u, FA_MIN(threads, VX_BUILD_MAX_THREADS));
	c->ef = FA_MAX(h->p.ef_construction, 2 * m);
	int rc = 0;
	for (unsigned t = 0; t < c->threads && !rc; t++) {
		batch_job *j = &c->jobs[t];
		j->t = t;
		j->threads = c->threads;
		j->stamp = fa_calloc((size_t)cap + 1, sizeof *j->stamp);
		j->cands = fa_malloc((size_t)(c->ef + VX_BATCH) * sizeof *j->cands);
		j->scratch = fa_malloc((size_t)(2 * m + 1) * sizeof *j->scratch);
		j->ids = fa_malloc((size_t)(2 * m + 1) * sizeof *j->ids);
		if (!j->stamp || !j->cands || !j->scratch || !j->ids ||
		    beam_init(&j->b, c->ef + 2 * m * c->ef + 1))
			rc = fa_err(FATHOM_ENOMEM, "HNSW build");
	}
	if (rc) {
		batch_ctx_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

/* Nodes [first, first + nn) (nn <= VX_BATCH), their rows in place and
 * finite, no level yet: given levels (a hole none), searched and their
 * links picked on the threads, their lists set in order, the links back
 * made on the threads. */
static int link_batch(vx_hnsw *h, uint32_t first, uint32_t nn, batch_ctx *c)
{
	uint32_t ef = c->ef;
	batch_node *nodes = c->nodes;
	int rc = 0;
	size_t slots = 0, picks = 0;
	uint32_t m = h->p.m;
	for (uint32_t k = 0; k < nn && !rc; k++) {
		uint32_t id = first + k;
		batch_node *bn = &nodes[k];
		bn->id = id;
		bn->beam = NULL;
		bn->pick = NULL;
		bn->layers = -1;
		rc = give_level(h, id, &bn->hole);
		if (!rc && !bn->hole) {
			bn->layers = FA_MIN((int)h->wlevel[id], h->top);
			slots += (size_t)(bn->layers + 1) * ef;
			picks += (size_t)(h->wlevel[id] + 1) * m;
		}
	}
	if (rc)
		return rc;
	vx_hit *pool = fa_malloc((slots ? slots : 1) * sizeof *pool);
	uint32_t *pickpool = fa_malloc((picks ? picks : 1) * sizeof *pickpool);
	if (!pool || !pickpool) {
		fa_free(pool);
		fa_free(pickpool);
		return fa_err(FATHOM_ENOMEM, "HNSW build");
	}
	size_t at = 0, pat = 0;
	for (uint32_t k = 0; k < nn; k++) {
		if (nodes[k].hole)
			continue;
		if (nodes[k].layers >= 0) {
			nodes[k].beam = pool + at;
			at += (size_t)(nodes[k].layers + 1) * ef;
		}
		nodes[k].pick = pickpool + pat;
		pat += (size_t)(h->wlevel[nodes[k].id] + 1) * m;
	}
	for (unsigned t = 0; t < c->threads; t++) {
		c->jobs[t].h = h;
		c->jobs[t].nodes = nodes;
		c->jobs[t].nn = nn;
		c->jobs[t].ef = ef;
	}
	fa_run_jobs(batch_search, c->jobs, sizeof *c->jobs, c->threads);
	for (uint32_t k = 0; k < nn; k++) {
		const batch_node *bn = &nodes[k];
		if (bn->hole)
			continue;
		uint32_t lev = h->wlevel[bn->id];
		for (int l = (int)lev; l >= 0; l--)
			set_links(h, bn->id, (uint32_t)l, bn->pick + (size_t)l * m, bn->npick[l]);
		if ((int)lev > h->top) {
			h->top = (int)lev;
			h->entry = bn->id;
		}
	}
	fa_run_jobs(batch_back, c->jobs, sizeof *c->jobs, c->threads);
	fa_free(pool);
	fa_free(pickpool);
	return 0;
}

/* Link nodes [first, first + n) (rows in place and finite, no level yet)
 * into the graph, which has *linked nodes: one at a time while it has
 * fewer than VX_BATCH_FROM, then in batches. */
static int link_range(vx_hnsw *h, uint32_t first, uint32_t n, batch_ctx *c, uint32_t *linked)
{
	int rc = 0;
	uint32_t i = 0;
	for (; i < n && *linked < VX_BATCH_FROM && !rc; i++, (*linked)++) {
		int hole;
		if (!(rc = give_level(h, first + i, &hole)) && !hole)
			rc = insert(h, first + i);
	}
	while (i < n && !rc) {
		uint32_t nn = FA_MIN(VX_BATCH, n - i);
		rc = link_batch(h, first + i, nn, c);
		i += nn;
		*linked += nn;
	}
	return rc;
}

int vx_hnsw_add_rows(vx_hnsw *h, const float *rows, uint32_t n, unsigned threads)
{
	if (h->view)
		return fa_err(FATHOM_EINVAL, "an HNSW graph read from a segment takes no new vectors");
	if (n > UINT32_MAX / 2 - h->n)
		return fa_err(FATHOM_ETOOBIG, "HNSW graph of %u and %u more vectors", h->n, n);
	int rc = 0;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = check_finite(rows + (size_t)i * h->dim, h->dim);
	if (rc || n == 0 || (rc = grow(h, h->n + n)))
		return rc;
	batch_ctx *c = NULL;
	if ((rc = batch_ctx_new(&c, h, threads, h->n + n)))
		return rc;
	uint32_t first = h->n, linked = h->n;
	memcpy(h->wv + (size_t)first * h->dim, rows, (size_t)n * h->dim * sizeof *rows);
	h->n += n;
	rc = link_range(h, first, n, c, &linked);
	batch_ctx_free(c);
	return rc;
}

/* ---- merging -------------------------------------------------------------------- */

static int kept(const uint8_t *keep, uint32_t i)
{
	return !keep || (keep[i >> 3] >> (i & 7) & 1);
}

/* Input g's row i as floats (int8 rows scaled back) into tmp, or in place. */
static const float *row_of(const vx_hnsw *g, uint32_t i, float *tmp)
{
	if (g->rows.f)
		return g->rows.f + (size_t)i * g->dim;
	em_dequantize_i8(g->rows.q + (size_t)i * g->dim, g->dim, g->rows.s[i],
	                 g->rows.o ? g->rows.o[i] : 0.0f, tmp);
	return tmp;
}

/* Copy graph g's links into h at ids base.., every node kept. */
static int copy_graph(vx_hnsw *h, const vx_hnsw *g, uint32_t base)
{
	for (uint32_t i = 0; i < g->n; i++) {
		uint32_t to = base + i, lev = g->level[i];
		int rc = give_layers(h, to, lev);
		if (rc)
			return rc;
		for (uint32_t l = 0; l <= lev; l++) {
			uint32_t cnt;
			const uint32_t *nb = links(g, i, l, &cnt);
			uint32_t *w = wlinks(h, to, l);
			w[0] = cnt;
			for (uint32_t j = 0; j < cnt; j++)
				w[1 + j] = base + nb[j];
		}
	}
	if (g->n) {
		h->entry = base + g->entry;
		h->top = g->top;
	}
	return 0;
}

int vx_hnsw_merge(vx_hnsw **out, const vx_hnsw *const *in, size_t nin,
                  const uint8_t *const *keep, const vx_params *p, int how, unsigned threads)
{
	*out = NULL;
	if (nin == 0)
		return fa_err(FATHOM_EINVAL, "merging no HNSW graphs");
	uint32_t dim = in[0]->dim;
	int rc = check_params(dim, p);
	if (rc)
		return rc;
	/* the kept count, and the largest input with nothing deleted */
	uint64_t total = 0;
	size_t big = nin, cnt_big = 0;
	for (size_t g = 0; g < nin; g++) {
		if (in[g]->dim != dim)
			return fa_err(FATHOM_EINVAL, "merging HNSW graphs of %u and %u dimensions", dim,
			              in[g]->dim);
		uint32_t c = 0;
		for (uint32_t i = 0; i < in[g]->n; i++)
			c += (uint32_t)kept(keep ? keep[g] : NULL, i);
		total += c;
		if (c == in[g]->n && in[g]->rows.f && in[g]->p.m == p->m && c > cnt_big)
			big = g, cnt_big = c;
	}
	if (total > UINT32_MAX / 2)
		return fa_err(FATHOM_ETOOBIG, "merged HNSW graph of %llu vectors",
		              (unsigned long long)total);
	if (how == VX_MERGE_REUSE && big == nin)
		return fa_err(FATHOM_EINVAL, "no HNSW graph to reuse: each has deletes, int8 rows or "
		                             "another m");
	if (how == VX_MERGE_REBUILD || cnt_big == 0)
		big = nin;
	vx_hnsw *h;
	if ((rc = vx_hnsw_new(&h, dim, p)))
		return rc;
	float *tmp = fa_malloc((size_t)dim * sizeof *tmp);
	if (!tmp) {
		rc = fa_err(FATHOM_ENOMEM, "merging HNSW graphs");
		goto fail;
	}
	if ((rc = grow(h, (uint32_t)total ? (uint32_t)total : 1)))
		goto fail;
	h->n = (uint32_t)total;
	/* every kept vector into its place; the reused graph's links copied */
	uint32_t base = 0;
	for (size_t g = 0; g < nin; g++) {
		const uint8_t *kg = keep ? keep[g] : NULL;
		if (g == big) {
			if ((rc = copy_graph(h, in[g], base)))
				goto fail;
		}
		for (uint32_t i = 0; i < in[g]->n; i++) {
			if (!kept(kg, i))
				continue;
			const float *v = row_of(in[g], i, tmp);
			if ((rc = check_finite(v, dim)))
				goto fail;
			memcpy(h->wv + (size_t)(base++) * dim, v, dim * sizeof *v);
		}
	}
	/* the others linked in, in order (in batches, as vx_hnsw_add_rows) */
	batch_ctx *c = NULL;
	if ((rc = batch_ctx_new(&c, h, threads, h->n)))
		goto fail;
	uint32_t id = 0, linked = big < nin ? in[big]->n : 0;
	for (size_t g = 0; g < nin && !rc; g++) {
		const uint8_t *kg = keep ? keep[g] : NULL;
		uint32_t cnt = 0;
		for (uint32_t i = 0; i < in[g]->n; i++)
			cnt += (uint32_t)kept(kg, i);
		if (g != big)
			rc = link_range(h, id, cnt, c, &linked);
		id += cnt;
	}
	batch_ctx_free(c);
	if (rc)
		goto fail;
	fa_free(tmp);
	*out = h;
	return 0;
fail:
	fa_free(tmp);
	vx_hnsw_free(h);
	return rc;
}

/* ---- searching ---------------------------------------------------------------- */

static int brute_rows(const vx_rows *r, uint32_t count, const float *qv, uint32_t k,
                      const vx_filter *f, vx_hit *out, uint32_t *n)
{
	*n = 0;
	if (k == 0 || k > VX_MAX_K)
		return k ? fa_err(FATHOM_EINVAL, "k %u (at most %u)", k, VX_MAX_K) : 0;
	if (r->dim == 0 || r->dim > VX_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "vector dimension %u (1 to %u)", r->dim, VX_MAX_DIM);
	query *q = fa_malloc(sizeof *q);
	if (!q)
		return fa_err(FATHOM_ENOMEM, "vector search");
	query_init(q, r, qv);
	uint32_t nh = 0;
	for (uint32_t i = 0; i < count; i++) {
		if (!allowed(f, i))
			continue;
		vx_hit x = { i, score_of(r, q, i) };
		if (nh < k) {
			heap_push(out, &nh, x, 0);
		} else if (better(&x, &out[0])) {
			heap_pop(out, &nh, 0);
			heap_push(out, &nh, x, 0);
		}
	}
	fa_free(q);
	qsort(out, nh, sizeof *out, cmp_better);
	*n = nh;
	return 0;
}

int vx_brute(const float *vecs, uint32_t count, uint32_t dim, const float *q, uint32_t k,
             const vx_filter *f, vx_hit *out, uint32_t *n)
{
	vx_rows r = { vecs, NULL, NULL, NULL, dim, 0 };
	return brute_rows(&r, count, q, k, f, out, n);
}

int vx_brute_i8(const int8_t *rows, const float *scales, const float *offsets, uint32_t count,
                uint32_t dim, const float *q, uint32_t k, const vx_filter *f, vx_hit *out,
                uint32_t *n)
{
	vx_rows r = { NULL, rows, scales, offsets, dim, 0 };
	return brute_rows(&r, count, q, k, f, out, n);
}

int vx_hnsw_search(const vx_hnsw *h, const float *qv, uint32_t k, uint32_t ef,
                   const vx_filter *f, vx_hit *out, uint32_t *n)
{
	*n = 0;
	if (k == 0 || k > VX_MAX_K)
		return k ? fa_err(FATHOM_EINVAL, "k %u (at most %u)", k, VX_MAX_K) : 0;
	if (h->n == 0 || h->top < 0)
		return 0;
	ef = FA_MAX(ef ? ef : h->p.ef_search, k);
	if (ef > VX_MAX_K)
		ef = VX_MAX_K;
	/* A walk under a filter allowing c of n scores about ef / (c / n)
	 * nodes' 2m links before its beam holds ef allowed ones; scoring the
	 * c allowed costs c: the cheaper (brute force also exact). */
	if (f && f->bits && !f->walk &&
	    ((double)f->count < VX_BRUTE_SHARE * h->n ||
	     (double)f->count * (double)f->count < (double)ef * 2.0 * h->p.m * h->n)) {
		/* float rows when there are (exact), else int8 */
		vx_rows r = h->rows;
		if (r.f)
			r.q = NULL, r.s = NULL;
		return brute_rows(&r, h->n, qv, k, f, out, n);
	}
	beam b;
	int rc = beam_init(&b, ef + 2 * h->p.m * ef + 1);
	if (rc)
		return rc;
	query *q = fa_malloc(sizeof *q);
	seen s = { NULL, 0, fa_malloc((size_t)h->n / 8 + 1) };
	if (!s.bits || !q) {
		fa_free(q);
		fa_free(s.bits);
		beam_free(&b);
		return fa_err(FATHOM_ENOMEM, "vector search");
	}
	query_init(q, &h->rows, qv);
	memset(s.bits, 0, (size_t)h->n / 8 + 1);
	vx_hit ep = descend(h, q, 0);
	s.bits[ep.id >> 3] |= (uint8_t)(1u << (ep.id & 7));
	b.res[0] = ep;
	b.nr = 1;
	search_layer(h, q, ef, 0, f, &s, &b);
	/* walked over int8 rows, with float rows at hand: the beam rescored */
	if (h->rows.q && h->rows.f)
		for (uint32_t i = 0; i < b.nr; i++)
			b.res[i].score = em_dot(qv, h->rows.f + (size_t)b.res[i].id * h->dim, h->dim);
	sort_hits(b.res, b.nr);
	*n = FA_MIN(b.nr, k);
	memcpy(out, b.res, *n * sizeof *out);
	fa_free(q);
	fa_free(s.bits);
	beam_free(&b);
	return 0;
}
