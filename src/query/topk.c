/*
 * topk.c — the k best hits seen so far, as a binary min-heap whose root is
 * the worst one kept: a new candidate is compared with the root only, and
 * the root's score is the threshold the pruning works against.
 *
 * Order: higher score first; equal scores by (segment index, chunk)
 * ascending. Retrieval visits chunks in that id order, so a candidate that
 * merely ties the root is worse than it, and "score > threshold" is the
 * exact test for entry — the same for the pruned and exhaustive paths.
 */
#include "query/query_int.h"

/* Is a ranked below b? */
static int worse(const q_hitref *a, const q_hitref *b)
{
	if (a->score != b->score)
		return a->score < b->score;
	if (a->seg != b->seg)
		return a->seg > b->seg;
	return a->chunk > b->chunk;
}

int q_topk_init(q_topk *t, fa_arena *a, uint32_t k)
{
	t->n = 0;
	t->k = k;
	t->h = fa_arena_alloc(a, (size_t)(k ? k : 1) * sizeof *t->h);
	return t->h ? 0 : fa_err(FATHOM_ENOMEM, "top-k heap of %u", k);
}

static void sift_down(q_hitref *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && worse(&h[l], &h[m]))
			m = l;
		if (r < n && worse(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		q_hitref tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

uint32_t q_topk_push(q_topk *t, const q_hitref *r)
{
	if (t->k == 0)
		return UINT32_MAX;
	if (t->n < t->k) {
		uint32_t i = t->n++;
		t->h[i] = *r;
		t->h[i].slot = i;
		uint32_t slot = i;
		while (i > 0) {
			uint32_t parent = (i - 1) / 2;
			if (!worse(&t->h[i], &t->h[parent]))
				break;
			q_hitref tmp = t->h[i];
			t->h[i] = t->h[parent];
			t->h[parent] = tmp;
			i = parent;
		}
		return slot;
	}
	if (!worse(&t->h[0], r))
		return UINT32_MAX;
	uint32_t slot = t->h[0].slot;
	t->h[0] = *r;
	t->h[0].slot = slot;
	sift_down(t->h, t->n, 0);
	return slot;
}

void q_topk_sort(q_topk *t)
{
	/* Heapsort: move the worst to the end, repeatedly. */
	for (uint32_t n = t->n; n > 1; n--) {
		q_hitref tmp = t->h[0];
		t->h[0] = t->h[n - 1];
		t->h[n - 1] = tmp;
		sift_down(t->h, n - 1, 0);
	}
}
