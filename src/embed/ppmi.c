/*
 * ppmi.c — the `corpus` embedder's training: word vectors from the
 * corpus's own co-occurrences (Levy, Goldberg & Dagan, "Improving
 * distributional similarity with lessons learned from word embeddings",
 * 2015), with no download.
 *
 *   pass 1  em_ppmi_count: each word's count (em_words' words, but
 *           words of one byte and numbers, which get no vector); the
 *           texts' words are kept as ids (up to CACHE_TOKENS), so that
 *           pass 2 over the same bytes (checked by length and hash) needs
 *           no second reading: that halves pass 2.
 *   vocab   em_ppmi_vocab: the max_vocab most frequent words seen at least
 *           min_count times (ties by their bytes), fewer when the model
 *           file would pass EM_MODEL_MAX.
 *   pass 2  em_ppmi_cooc: pairs of vocabulary words at most `window` words
 *           apart in one text (other words keep their place, so distance is
 *           the text's), each weighted 1 / distance (GloVe's harmonic
 *           weighting: near words say more). A word with itself is not
 *           counted.
 *   train   PPMI with context distribution smoothing (alpha 0.75), the
 *           randomised truncated SVD of Halko, Martinsson & Tropp (2011)
 *           with a seeded random sign test matrix, 16 columns of
 *           oversampling and one power iteration, the range's bases made
 *           orthonormal by CholeskyQR2 (BLAS 3; Householder LQ when the
 *           Gram matrix is not positive definite), B B^T's
 *           eigendecomposition for the small SVD, and rows U scaled to
 *           unit length.
 *
 * The choices were measured on SciFact (nDCG@10 of documents ranked by
 * the cosine alone, test queries): rows U 0.559, U S^(1/4) 0.549, U
 * S^(1/2) 0.531; window 10 against 5: 0.531 against 0.496 (U S^(1/2));
 * power iterations 0, 1, 2: 0.549, 0.557, 0.559 (U); min_count 5 and 10
 * lose (0.509, 0.460), dim 128 loses (0.483). Dropping light pairs to save
 * time loses much (pairs under weight 1: 0.445). Seeds move it by about
 * 0.01. SIF's common component (the top principal direction of the
 * training texts' weighted averages, removed from every text) was tried
 * and left out: SciFact 0.5505 to 0.5513, CoSQA dev 0.2744 to 0.2707, for
 * a tenth of the training time; the model file keeps room for one.
 *
 * Pairs are gathered in a buffer of PAIR_BUF records, which, when full, is
 * dealt to NPART parts by the smaller word's id (ranges about equal in
 * pairs, from the counts), and each part radix-sorted, its equal pairs
 * summed, and merged into that part's sorted table of every pair so far
 * (sequential, cache-friendly; far faster than a hash table of millions of
 * pairs), the parts on the trainer's threads. The tables hold at most
 * EM_PPMI_MAX_PAIRS pairs in all: past that, the lightest pairs are
 * dropped (the weight threshold doubles until at most half remain), so
 * memory stays bounded on any corpus; the drop is deterministic.
 *
 * Memory, at most: the pass 1 word table (about 64 bytes a distinct word,
 * at most MAX_DISTINCT words; later new words are counted in the total
 * only), the word cache (4 bytes a word, 128 MiB at CACHE_TOKENS), the
 * pair buffer (2 x 16 MiB), the pair tables (8 bytes a pair, 128 MiB at
 * EM_PPMI_MAX_PAIRS), then for training the sparse matrix (6 bytes an
 * entry, two a pair: 192 MiB at EM_PPMI_MAX_PAIRS) and two dense words x
 * (dim + 16) float32 matrices (54 MiB each at 50,000 words of 256). A
 * 60 MB random text of 12M words over 200,000 words (50,000 kept) peaked
 * at 415 MB resident, its texts included.
 *
 * Determinism: what runs on the threads (the pair tables' parts, the
 * random signs, the sparse products' rows) gives each part, word or row
 * to one thread and takes its sums in the same order whatever the number
 * of threads; the rest, OpenBLAS's dense products among it, runs on one
 * thread in a fixed order. So the model is the same bit for bit for any
 * `threads`. OpenBLAS is held to one thread while training (its threaded
 * kernels need not sum in one order), and entered by one thread at a time
 * (em_blas_lock). The same OpenBLAS on another CPU may pick other
 * kernels, and round otherwise.
 */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/pool.h"
#include "util/util.h"

#define PAIR_BUF ((size_t)1 << 21)      /* records gathered before a merge */
#define MAX_DISTINCT ((size_t)1 << 22)   /* distinct words counted in pass 1 */
#define OVERSAMPLE 16u                   /* the SVD's extra columns */
#define POWER_ITERS 1u                   /* SciFact: 0.549, 1: 0.557, 2: 0.559 */
#define EIG_POWER 0.0                    /* rows U S^p: p 0 0.559, 0.25 0.549, 0.5 0.531 */
#define CACHE_TOKENS ((size_t)1 << 25)   /* pass 1's words kept for pass 2 */
#define COUNT_BITS 40                    /* a word's count; its id above */
#define COUNT_MASK (((uint64_t)1 << COUNT_BITS) - 1)
#define CDS_ALPHA 0.75                   /* context distribution smoothing */
#define NPART 16u                        /* the pair table's parts, merged in parallel */

/* LAPACK's Fortran interface, which OpenBLAS holds (LAPACKE would load a
 * second LAPACK and BLAS beside it, each with threads of its own): column
 * major, every argument by address, the lengths of the character
 * arguments last. */
void sgelqf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work,
             const int *lwork, int *info);
void sorglq_(const int *m, const int *n, const int *k, float *a, const int *lda,
             const float *tau, float *work, const int *lwork, int *info);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
             double *w, double *work, const int *lwork, int *iwork, const int *liwork,
             int *info, size_t jobz_len, size_t uplo_len);

/* The one lock every call into OpenBLAS holds (see ROW_BLOCK). */
static pthread_mutex_t blas_mutex = PTHREAD_MUTEX_INITIALIZER;

void em_blas_lock(void)
{
	pthread_mutex_lock(&blas_mutex);
}

void em_blas_unlock(void)
{
	pthread_mutex_unlock(&blas_mutex);
}

void em_ppmi_defaults(em_ppmi_opts *o)
{
	memset(o, 0, sizeof *o);
	o->dim = 256;
	o->window = 10;
	o->min_count = 3;
	o->max_vocab = 50000;
	o->seed = 0x5eed;
	o->threads = 0;
}

/* A text of pass 1 whose words are kept (ids into the pass 1 table), so
 * that pass 2 over the same text needs no second reading of it. */
typedef struct cached_text {
	uint64_t hash;
	size_t len;
	size_t start, end;       /* its words in tok */
} cached_text;

typedef struct pair {
	uint32_t key;     /* the smaller word id << 16 | the larger */
	float w;
} pair;

enum { ST_COUNT, ST_COOC, ST_DONE };

/* One part of the pair table: the pairs whose smaller word falls in one
 * range of ids, sorted by key. */
typedef struct part_tab {
	pair *p;
	size_t n, cap;
} part_tab;

struct em_ppmi {
	em_ppmi_opts o;
	int stage;
	int rc;                  /* sticky: a failed call fails every later one */
	/* pass 1 */
	fa_strmap words;         /* word -> id << COUNT_BITS | count */
	uint64_t total;
	uint32_t *tok;           /* the cached texts' words (ids; UINT32_MAX: not counted) */
	size_t ntok, cap_tok;
	cached_text *ct;         /* the first nct texts, cached */
	size_t nct, cap_ct;
	int cache_full;          /* no more texts cached */
	int32_t *remap;          /* pass 1 id -> vocabulary id, or -1 */
	size_t ntext;            /* pass 2: texts seen */
	/* the vocabulary */
	uint32_t nv;
	fa_strmap vocab;         /* word -> id + 1 */
	char **vword;            /* nv words (the vocab map's keys, NUL-terminated) */
	uint64_t *vcount;
	/* pass 2 */
	int32_t *ids;            /* one text's words: id, or -1 */
	size_t nids, cap_ids;
	pair *buf, *tmp;         /* the gathered records, and the sort's other half */
	size_t nbuf;
	uint8_t *part;           /* a pair's part, by its smaller word id (nv) */
	part_tab tab[NPART];     /* every pair so far: part p's keys all below p + 1's */
	size_t ntab;             /* their sum */
	float drop_below;        /* pairs lighter than this were dropped (0: none) */
};

int em_ppmi_new(em_ppmi **out, const em_ppmi_opts *o)
{
	*out = NULL;
	em_ppmi_opts d;
	em_ppmi_defaults(&d);
	if (!o)
		o = &d;
	if (o->dim == 0 || o->dim > EM_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "corpus embedder: dimension %u out of 1..%u", o->dim,
		              EM_MAX_DIM);
	if (o->window == 0 || o->window > EM_PPMI_MAX_WINDOW)
		return fa_err(FATHOM_EINVAL, "corpus embedder: window %u out of 1..%u", o->window,
		              EM_PPMI_MAX_WINDOW);
	if (o->min_count == 0)
		return fa_err(FATHOM_EINVAL, "corpus embedder: a minimum count of 0");
	if (o->max_vocab < 2 || o->max_vocab > EM_PPMI_MAX_VOCAB)
		return fa_err(FATHOM_EINVAL, "corpus embedder: vocabulary %u out of 2..%u",
		              o->max_vocab, EM_PPMI_MAX_VOCAB);
	if (o->threads > EM_PPMI_MAX_THREADS)
		return fa_err(FATHOM_EINVAL, "corpus embedder: %u threads, at most %u", o->threads,
		              EM_PPMI_MAX_THREADS);
	em_ppmi *t = fa_calloc(1, sizeof *t);
	if (!t)
		return fa_err(FATHOM_ENOMEM, "corpus embedder");
	t->o = *o;
	fa_strmap_init(&t->words);
	fa_strmap_init(&t->vocab);
	*out = t;
	return 0;
}

void em_ppmi_free(em_ppmi *t)
{
	if (!t)
		return;
	fa_strmap_free(&t->words);
	fa_strmap_free(&t->vocab);
	fa_free(t->tok);
	fa_free(t->ct);
	fa_free(t->remap);
	fa_free(t->vword);
	fa_free(t->vcount);
	fa_free(t->ids);
	fa_free(t->buf);
	fa_free(t->tmp);
	fa_free(t->part);
	for (unsigned p = 0; p < NPART; p++)
		fa_free(t->tab[p].p);
	fa_free(t);
}

/* A call out of order is a caller's error; any error sticks. */
static int check_stage(em_ppmi *t, int stage, const char *what)
{
	if (t->rc)
		return t->rc;
	if (t->stage != stage)
		return fa_err(FATHOM_EINVAL, "corpus embedder: %s out of order", what);
	return 0;
}

/* ---- pass 1: counts --------------------------------------------------------- */

/* Words of one byte and numbers take their place in the text but get no
 * vector: on SciFact (cosine alone) keeping them gives 0.551, dropping
 * one-byte words 0.559, numbers 0.568, both 0.575 (CoSQA dev: 0.274,
 * 0.287, 0.272, 0.283). */
static int no_vector(const char *w, size_t len)
{
	if (len < 2)
		return 1;
	for (size_t k = 0; k < len; k++)
		if (w[k] < '0' || w[k] > '9')
			return 0;
	return 1;
}

static int count_word(void *ctx, const char *w, size_t len)
{
	em_ppmi *t = ctx;
	t->total++;
	fa_strmap_slot *s;
	if (no_vector(w, len)) {
		s = NULL;
	} else if (t->words.count >= MAX_DISTINCT) {
		s = fa_strmap_find(&t->words, w, len);
	} else {
		int is_new;
		s = fa_strmap_upsert(&t->words, w, len, &is_new);
		if (!s)
			return fa_err(FATHOM_ENOMEM, "corpus embedder: the word table");
		if (is_new)
			s->value = (uint64_t)(t->words.count - 1) << COUNT_BITS;
	}
	if (s && (s->value & COUNT_MASK) < COUNT_MASK)
		s->value++;
	if (!t->cache_full) {
		if (t->ntok == t->cap_tok &&
		    fa_grow((void **)&t->tok, &t->cap_tok, t->ntok + 1, sizeof *t->tok))
			return fa_err(FATHOM_ENOMEM, "corpus embedder: the words of the texts");
		t->tok[t->ntok++] = s ? (uint32_t)(s->value >> COUNT_BITS) : UINT32_MAX;
	}
	return 0;
}

int em_ppmi_count(em_ppmi *t, const char *text, size_t len)
{
	int rc = check_stage(t, ST_COUNT, "counting");
	if (rc)
		return rc;
	size_t start = t->ntok;
	if (!t->cache_full && t->nct == t->cap_ct &&
	    fa_grow((void **)&t->ct, &t->cap_ct, t->nct + 1, sizeof *t->ct))
		return t->rc = fa_err(FATHOM_ENOMEM, "corpus embedder: the texts");
	if ((rc = em_words(text, len, count_word, t)))
		return t->rc = rc;
	if (t->cache_full)
		return 0;
	if (t->ntok > CACHE_TOKENS) {
		/* this text and the ones after it are read again in pass 2 */
		t->ntok = start;
		t->cache_full = 1;
		return 0;
	}
	t->ct[t->nct++] = (cached_text){ fa_hash64(text, len, 0), len, start, t->ntok };
	return 0;
}

/* ---- the vocabulary --------------------------------------------------------- */

static int by_count(const void *a, const void *b)
{
	const fa_strmap_slot *x = *(const fa_strmap_slot *const *)a;
	const fa_strmap_slot *y = *(const fa_strmap_slot *const *)b;
	uint64_t cx = x->value & COUNT_MASK, cy = y->value & COUNT_MASK;
	if (cx != cy)
		return cx > cy ? -1 : 1;
	size_t n = FA_MIN(x->len, y->len);
	int c = memcmp(x->key, y->key, n);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* The table's parts by ranges of the smaller word's id, about equal in
 * pairs. A word of id i (ids by count, most frequent first) is the
 * smaller of a pair about c_i (1 - F_i) times, c_i its count and F_i the
 * share of the words up to it. The ranges depend on the counts alone, and
 * the pairs' sums not at all: the table is the same whatever its parts. */
static void part_bounds(em_ppmi *t)
{
	double total = 0, est = 0, cum = 0;
	for (uint32_t i = 0; i < t->nv; i++)
		total += (double)t->vcount[i];
	for (uint32_t i = 0; i < t->nv; i++) {
		cum += (double)t->vcount[i];
		est += (double)t->vcount[i] * (1.0 - cum / total);
	}
	double at = 0;
	cum = 0;
	for (uint32_t i = 0; i < t->nv; i++) {
		cum += (double)t->vcount[i];
		unsigned p = est > 0 ? (unsigned)(at / est * NPART) : 0;
		t->part[i] = (uint8_t)FA_MIN(p, NPART - 1);
		at += (double)t->vcount[i] * (1.0 - cum / total);
	}
}

int em_ppmi_vocab(em_ppmi *t)
{
	int rc = check_stage(t, ST_COUNT, "the vocabulary");
	if (rc)
		return rc;
	size_t nk = 0;
	fa_strmap_slot **keep = fa_malloc((t->words.count + 1) * sizeof *keep);
	if (!keep)
		return t->rc = fa_err(FATHOM_ENOMEM, "corpus embedder: the vocabulary");
	for (size_t i = 0; i < t->words.cap; i++)
		if (t->words.slots[i].key && (t->words.slots[i].value & COUNT_MASK) >= t->o.min_count)
			keep[nk++] = &t->words.slots[i];
	qsort(keep, nk, sizeof *keep, by_count);
	/* the model file must fit EM_MODEL_MAX: header, checksum, common
	 * component, and per word its length, bytes, count and row */
	size_t bytes = 64 + 8 + (size_t)t->o.dim * 4, row = 2 + 8 + (size_t)t->o.dim * 4;
	uint32_t nv = 0;
	while (nv < nk && nv < t->o.max_vocab && bytes + row + keep[nv]->len <= EM_MODEL_MAX)
		bytes += row + keep[nv++]->len;
	t->vword = fa_malloc(((size_t)nv + 1) * sizeof *t->vword);
	t->vcount = fa_malloc(((size_t)nv + 1) * sizeof *t->vcount);
	if (!t->vword || !t->vcount) {
		fa_free(keep);
		return t->rc = fa_err(FATHOM_ENOMEM, "corpus embedder: the vocabulary");
	}
	for (uint32_t i = 0; i < nv; i++) {
		int is_new;
		fa_strmap_slot *s = fa_strmap_upsert(&t->vocab, keep[i]->key, keep[i]->len, &is_new);
		if (!s) {
			fa_free(keep);
			return t->rc = fa_err(FATHOM_ENOMEM, "corpus embedder: the vocabulary");
		}
		s->value = (uint64_t)i + 1;
		t->vcount[i] = keep[i]->value & COUNT_MASK;
	}
	/* pass 1 ids to vocabulary ids, for the cached texts */
	t->remap = fa_malloc((t->words.count + 1) * sizeof *t->remap);
	if (!t->remap) {
		fa_free(keep);
		return t->rc = fa_err(FATHOM_ENOMEM, "corpus embedder: the vocabulary");
	}
	for (size_t i = 0; i < t->words.count; i++)
		t->remap[i] = -1;
	for (uint32_t i = 0; i < nv; i++)
		t->remap[keep[i]->value >> COUNT_BITS] = (int32_t)i;
	/* the vocab map's keys are its own copies; NUL-terminate views of them */
	for (size_t i = 0; i < t->vocab.cap; i++) {
		fa_strmap_slot *s = &t->vocab.slots[i];
		if (s->key)
			t->vword[s->value - 1] = (char *)s->key;
	}
	fa_free(keep);
	fa_strmap_free(&t->words);
	fa_strmap_init(&t->words);
	t->nv = nv;
	t->buf = fa_malloc(PAIR_BUF * sizeof *t->buf);
	t->tmp = fa_malloc(PAIR_BUF * sizeof *t->tmp);
	t->part = fa_malloc((size_t)nv + 1);
	if (!t->buf || !t->tmp || !t->part)
		return t->rc = fa_err(FATHOM_ENOMEM, "corpus embedder: the pair buffer");
	part_bounds(t);
	t->stage = ST_COOC;
	return 0;
}

/* ---- pass 2: co-occurrences ------------------------------------------------- */

/* LSD radix sort of n records by key, 8 bits a pass (stable: records of one
 * pair keep the order they came in, so their sum is taken in that order). */
static void sort_pairs(pair *a, pair *tmp, size_t n)
{
	for (unsigned shift = 0; shift < 32; shift += 8) {
		size_t cnt[256] = { 0 };
		for (size_t i = 0; i < n; i++)
			cnt[(a[i].key >> shift) & 255]++;
		if (cnt[(a[0].key >> shift) & 255] == n)
			continue;   /* every key has this byte */
		size_t at = 0;
		for (unsigned b = 0; b < 256; b++) {
			size_t c = cnt[b];
			cnt[b] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(a[i].key >> shift) & 255]++] = a[i];
		memcpy(a, tmp, n * sizeof *a);
	}
}

static size_t max_pairs(const em_ppmi *t)
{
	return t->o.max_pairs ? t->o.max_pairs : EM_PPMI_MAX_PAIRS;
}

/* Drop the pairs lighter than a threshold that leaves at most half of
 * the pairs allowed (over every part). */
static void prune_pairs(em_ppmi *t)
{
	float thr = t->drop_below > 0 ? t->drop_below : 1.0f;
	for (;;) {
		size_t keep = 0;
		for (unsigned p = 0; p < NPART; p++)
			for (size_t i = 0; i < t->tab[p].n; i++)
				keep += t->tab[p].p[i].w >= thr;
		if (keep <= max_pairs(t) / 2)
			break;
		thr *= 2;
	}
	t->ntab = 0;
	for (unsigned p = 0; p < NPART; p++) {
		part_tab *pt = &t->tab[p];
		size_t o = 0;
		for (size_t i = 0; i < pt->n; i++)
			if (pt->p[i].w >= thr)
				pt->p[o++] = pt->p[i];
		pt->n = o;
		t->ntab += o;
	}
	t->drop_below = thr;
}

/* One part's records b[0, n) (tmp: as many records of scratch) sorted,
 * their equal pairs summed in the order they came, and merged into the
 * part's table. */
static int merge_part(part_tab *pt, pair *b, pair *tmp, size_t n)
{
	if (n == 0)
		return 0;
	sort_pairs(b, tmp, n);
	size_t nb = 0;
	for (size_t i = 0; i < n; i++) {
		if (nb && b[nb - 1].key == b[i].key)
			b[nb - 1].w += b[i].w;
		else
			b[nb++] = b[i];
	}
	size_t need = pt->n + nb;
	if (need > pt->cap) {
		size_t cap = pt->cap ? pt->cap : 1 << 12;
		while (cap < need)
			cap *= 2;
		pair *nt = fa_realloc(pt->p, cap * sizeof *nt);
		if (!nt)
			return FATHOM_ENOMEM;
		pt->p = nt;
		pt->cap = cap;
	}
	/* merge from the back into [0, need), then close the gap that pairs
	 * found in both leave at the front */
	pair *a = pt->p;
	size_t i = pt->n, j = nb, o = need;
	while (j > 0) {
		if (i > 0 && a[i - 1].key > b[j - 1].key) {
			a[--o] = a[--i];
		} else if (i > 0 && a[i - 1].key == b[j - 1].key) {
			pair p = a[--i];
			p.w += b[--j].w;
			a[--o] = p;
		} else {
			a[--o] = b[--j];
		}
	}
	/* what is left of the table, [0, i), is in place below o */
	if (o > i)
		memmove(a + i, a + o, (need - o) * sizeof *a);
	pt->n = i + (need - o);
	return 0;
}

typedef struct flush_job {
	em_ppmi *t;
	const size_t *off;       /* NPART + 1: each part's records in t->tmp */
	unsigned *next;          /* the next part to take (shared) */
	int rc;
} flush_job;

static void *flush_thread(void *p)
{
	flush_job *j = p;
	em_ppmi *t = j->t;
	for (;;) {
		unsigned k = __atomic_fetch_add(j->next, 1u, __ATOMIC_RELAXED);
		if (k >= NPART)
			break;
		size_t a = j->off[k], n = j->off[k + 1] - a;
		if (merge_part(&t->tab[k], t->tmp + a, t->buf + a, n) && !j->rc)
			j->rc = FATHOM_ENOMEM;
	}
	return NULL;
}

/* The buffer into the table: its records dealt to the parts (in the order
 * they came), then the parts sorted, summed and merged on the trainer's
 * threads, each part on one. A pair's sum is taken in the same order
 * whatever the threads, so the table is too. */
static int flush_pairs(em_ppmi *t)
{
	if (t->nbuf == 0)
		return 0;
	size_t off[NPART + 1] = { 0 };
	for (size_t i = 0; i < t->nbuf; i++)
		off[t->part[t->buf[i].key >> 16] + 1]++;
	for (unsigned p = 0; p < NPART; p++)
		off[p + 1] += off[p];
	size_t at[NPART];
	memcpy(at, off, sizeof at);
	for (size_t i = 0; i < t->nbuf; i++)
		t->tmp[at[t->part[t->buf[i].key >> 16]]++] = t->buf[i];
	t->nbuf = 0;
	unsigned threads = t->o.threads ? t->o.threads : fa_cpu_count(EM_PPMI_MAX_THREADS);
	threads = FA_MAX(1u, FA_MIN(threads, NPART));
	flush_job jobs[NPART];
	unsigned next = 0;
	for (unsigned k = 0; k < threads; k++)
		jobs[k] = (flush_job){ t, off, &next, 0 };
	fa_run_jobs(flush_thread, jobs, sizeof *jobs, threads);
	t->ntab = 0;
	for (unsigned k = 0; k < NPART; k++)
		t->ntab += t->tab[k].n;
	for (unsigned k = 0; k < threads; k++)
		if (jobs[k].rc)
			return fa_err(FATHOM_ENOMEM, "corpus embedder: %zu word pairs", t->ntab);
	if (t->ntab > max_pairs(t))
		prune_pairs(t);
	return 0;
}

static int cooc_word(void *ctx, const char *w, size_t len)
{
	em_ppmi *t = ctx;
	if (t->nids == t->cap_ids &&
	    fa_grow((void **)&t->ids, &t->cap_ids, t->nids + 1, sizeof *t->ids))
		return fa_err(FATHOM_ENOMEM, "corpus embedder: a text's words");
	fa_strmap_slot *s = fa_strmap_find(&t->vocab, w, len);
	t->ids[t->nids++] = s ? (int32_t)(s->value - 1) : -1;
	return 0;
}

int em_ppmi_cooc(em_ppmi *t, const char *text, size_t len)
{
	int rc = check_stage(t, ST_COOC, "co-occurrence counting");
	if (rc)
		return rc;
	t->nids = 0;
	size_t at = t->ntext++;
	if (at < t->nct && t->ct[at].len == len && t->ct[at].hash == fa_hash64(text, len, 0)) {
		/* the text pass 1 read: its words from the cache */
		const cached_text *c = &t->ct[at];
		size_t n = c->end - c->start;
		if (n > t->cap_ids && fa_grow((void **)&t->ids, &t->cap_ids, n, sizeof *t->ids))
			return t->rc = fa_err(FATHOM_ENOMEM, "corpus embedder: a text's words");
		for (size_t k = 0; k < n; k++) {
			uint32_t id = t->tok[c->start + k];
			t->ids[k] = id == UINT32_MAX ? -1 : t->remap[id];
		}
		t->nids = n;
	} else if ((rc = em_words(text, len, cooc_word, t))) {
		return t->rc = rc;
	}
	static const float inv[EM_PPMI_MAX_WINDOW + 1] = {
		0, 1.0f / 1, 1.0f / 2, 1.0f / 3, 1.0f / 4, 1.0f / 5, 1.0f / 6, 1.0f / 7, 1.0f / 8,
		1.0f / 9, 1.0f / 10, 1.0f / 11, 1.0f / 12, 1.0f / 13, 1.0f / 14, 1.0f / 15, 1.0f / 16,
		1.0f / 17, 1.0f / 18, 1.0f / 19, 1.0f / 20, 1.0f / 21, 1.0f / 22, 1.0f / 23, 1.0f / 24,
		1.0f / 25, 1.0f / 26, 1.0f / 27, 1.0f / 28, 1.0f / 29, 1.0f / 30, 1.0f / 31, 1.0f / 32,
		1.0f / 33, 1.0f / 34, 1.0f / 35, 1.0f / 36, 1.0f / 37, 1.0f / 38, 1.0f / 39, 1.0f / 40,
		1.0f / 41, 1.0f / 42, 1.0f / 43, 1.0f / 44, 1.0f / 45, 1.0f / 46, 1.0f / 47, 1.0f / 48,
		1.0f / 49, 1.0f / 50, 1.0f / 51, 1.0f / 52, 1.0f / 53, 1.0f / 54, 1.0f / 55, 1.0f / 56,
		1.0f / 57, 1.0f / 58, 1.0f / 59, 1.0f / 60, 1.0f / 61, 1.0f / 62, 1.0f / 63, 1.0f / 64,
	};
	const int32_t *ids = t->ids;
	size_t n = t->nids, win = t->o.window;
	for (size_t p = 0; p < n; p++) {
		int32_t a = ids[p];
		if (a < 0)
			continue;
		size_t lim = FA_MIN(n - p - 1, win);
		if (t->nbuf + lim > PAIR_BUF && (rc = flush_pairs(t)))
			return t->rc = rc;
		pair *out = t->buf + t->nbuf;
		for (size_t d = 1; d <= lim; d++) {
			int32_t b = ids[p + d];
			if (b < 0 || b == a)
				continue;
			uint32_t lo = (uint32_t)(a < b ? a : b), hi = (uint32_t)(a < b ? b : a);
			out->key = lo << 16 | hi;
			out->w = inv[d];
			out++;
		}
		t->nbuf = (size_t)(out - t->buf);
	}
	return 0;
}

int em_ppmi_pairs(em_ppmi *t, int (*fn)(void *ctx, const char *a, const char *b, float w),
                  void *ctx)
{
	int rc = check_stage(t, ST_COOC, "the pairs");
	if (rc)
		return rc;
	if ((rc = flush_pairs(t)))
		return t->rc = rc;
	for (unsigned p = 0; p < NPART; p++)
		for (size_t k = 0; k < t->tab[p].n; k++) {
			const pair *e = &t->tab[p].p[k];
			if (fn(ctx, t->vword[e->key >> 16], t->vword[e->key & 0xffff], e->w))
				return 0;
		}
	return 0;
}

/* ---- training: PPMI and the randomised SVD ---------------------------------- */

/* The PPMI matrix M (words x contexts, over one vocabulary) in one sparse
 * pattern, that of the symmetric co-occurrences: entry (i, j) keeps
 * lc = log C(i,j) + log Z, so that
 *   M(i,j)   = max(0, lc - a[i] - b[j])
 *   M^T(i,j) = M(j,i) = max(0, lc - a[j] - b[i])
 * with a = log rowsum, b = alpha log rowsum and Z the sum of rowsum^alpha
 * (PMI with the contexts' distribution raised to alpha). */
typedef struct spmat {
	uint32_t n;
	uint32_t maxrow;         /* the most entries of a row */
	size_t *start;           /* n + 1 */
	uint16_t *col;
	float *lc;
	float *a, *b;
} spmat;

static void spmat_free(spmat *s)
{
	fa_free(s->start);
	fa_free(s->col);
	fa_free(s->lc);
	fa_free(s->a);
	fa_free(s->b);
}

static int build_matrix(em_ppmi *t, spmat *s)
{
	uint32_t n = t->nv;
	double *rs = fa_calloc(n, sizeof *rs);
	s->n = n;
	s->start = fa_calloc((size_t)n + 1, sizeof *s->start);
	s->a = fa_malloc(n * sizeof *s->a);
	s->b = fa_malloc(n * sizeof *s->b);
	size_t nnz = 2 * t->ntab;
	s->col = fa_malloc((nnz + 1) * sizeof *s->col);
	s->lc = fa_malloc((nnz + 1) * sizeof *s->lc);
	if (!rs || !s->start || !s->a || !s->b || !s->col || !s->lc) {
		fa_free(rs);
		return fa_err(FATHOM_ENOMEM, "corpus embedder: a matrix of %zu entries", nnz);
	}
	for (unsigned p = 0; p < NPART; p++)
		for (size_t k = 0; k < t->tab[p].n; k++) {
			const pair *e = &t->tab[p].p[k];
			uint32_t i = e->key >> 16, j = e->key & 0xffff;
			rs[i] += e->w;
			rs[j] += e->w;
			s->start[i + 1]++;
			s->start[j + 1]++;
		}
	double z = 0.0;
	for (uint32_t i = 0; i < n; i++) {
		s->start[i + 1] += s->start[i];
		z += rs[i] > 0 ? pow(rs[i], CDS_ALPHA) : 0.0;
		s->a[i] = rs[i] > 0 ? (float)log(rs[i]) : 0.0f;
		s->b[i] = rs[i] > 0 ? (float)(CDS_ALPHA * log(rs[i])) : 0.0f;
	}
	double logz = z > 0 ? log(z) : 0.0;
	size_t *at = fa_malloc(((size_t)n + 1) * sizeof *at);
	if (!at) {
		fa_free(rs);
		return fa_err(FATHOM_ENOMEM, "corpus embedder: a matrix of %zu entries", nnz);
	}
	memcpy(at, s->start, ((size_t)n + 1) * sizeof *at);
	/* keys in order (part by part): each row's columns come out ascending */
	for (unsigned p = 0; p < NPART; p++)
		for (size_t k = 0; k < t->tab[p].n; k++) {
			const pair *e = &t->tab[p].p[k];
			uint32_t i = e->key >> 16, j = e->key & 0xffff;
			float lc = (float)(log((double)e->w) + logz);
			s->col[at[i]] = (uint16_t)j;
			s->lc[at[i]++] = lc;
			s->col[at[j]] = (uint16_t)i;
			s->lc[at[j]++] = lc;
		}
	/* keep only the entries positive one way or the other */
	size_t o = 0, from = 0;
	for (uint32_t i = 0; i < n; i++) {
		size_t end = s->start[i + 1];
		s->start[i] = o;
		for (size_t k = from; k < end; k++) {
			uint32_t j = s->col[k];
			float lc = s->lc[k];
			if (lc - s->a[i] - s->b[j] > 0 || lc - s->a[j] - s->b[i] > 0) {
				s->col[o] = (uint16_t)j;
				s->lc[o++] = lc;
			}
		}
		from = end;
		s->maxrow = FA_MAX(s->maxrow, (uint32_t)(o - s->start[i]));
	}
	s->start[n] = o;
	fa_free(at);
	fa_free(rs);
	return 0;
}

/* y (n x w, row-major) = M x, or M^T x when trans; rows [r0, r1): the
 * plain kernel, a row of x added per entry (em_axpy). */
static void spmm_rows(const spmat *s, int trans, const float *x, float *y, uint32_t w,
                      uint32_t r0, uint32_t r1)
{
	for (uint32_t i = r0; i < r1; i++) {
		float *yi = y + (size_t)i * w;
		memset(yi, 0, (size_t)w * sizeof *yi);
		float ai = s->a[i], bi = s->b[i];
		for (size_t k = s->start[i]; k < s->start[i + 1]; k++) {
			uint32_t j = s->col[k];
			float m = trans ? s->lc[k] - s->a[j] - bi : s->lc[k] - ai - s->b[j];
			if (!(m > 0))
				continue;
			em_axpy(yi, x + (size_t)j * w, m, w);
		}
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_SPMM 1
#define SPMM_AHEAD 8

/* One row's columns [c0, c0 + 8 nacc) with the accumulators in registers,
 * over the row's positive entries (j[], m[]): y is written once. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
spmm_block_avx2(const uint32_t *jj, const float *mm, size_t nk, const float *x, float *yi,
                uint32_t w, uint32_t c0, int nacc)
{
	__m256 acc[12];
	for (int u = 0; u < 12; u++)
		acc[u] = _mm256_setzero_ps();
	for (size_t k = 0; k < nk; k++) {
		__m256 mv = _mm256_set1_ps(mm[k]);
		const float *xj = x + (size_t)jj[k] * w + c0;
		if (k + SPMM_AHEAD < nk) {
			const char *pf = (const char *)(x + (size_t)jj[k + SPMM_AHEAD] * w + c0);
			for (int u = 0; u < nacc; u += 2)
				_mm_prefetch(pf + 32 * u, _MM_HINT_T0);
		}
		for (int u = 0; u < nacc; u++)
			acc[u] = _mm256_fmadd_ps(mv, _mm256_loadu_ps(xj + 8 * u), acc[u]);
	}
	for (int u = 0; u < nacc; u++)
		_mm256_storeu_ps(yi + c0 + 8 * u, acc[u]);
}

/* The AVX2 rows: each row's positive entries gathered first into scratch
 * (2 * the longest row's entries), then the row in blocks of 96, 64, 32,
 * 16 and 8 columns, the rest plain. */
__attribute__((target("avx2,fma"))) static void
spmm_rows_avx2(const spmat *s, int trans, const float *x, float *y, uint32_t w, uint32_t r0,
               uint32_t r1, uint32_t *scratch)
{
	uint32_t *jj = scratch;
	float *mm = (float *)(scratch + s->maxrow);
	for (uint32_t i = r0; i < r1; i++) {
		float *yi = y + (size_t)i * w;
		float ai = s->a[i], bi = s->b[i];
		size_t nk = 0;
		for (size_t k = s->start[i]; k < s->start[i + 1]; k++) {
			uint32_t j = s->col[k];
			float m = trans ? s->lc[k] - s->a[j] - bi : s->lc[k] - ai - s->b[j];
			jj[nk] = j;
			mm[nk] = m;
			nk += m > 0;
		}
		uint32_t c0 = 0;
		for (; c0 + 96 <= w; c0 += 96)
			spmm_block_avx2(jj, mm, nk, x, yi, w, c0, 12);
		static const int widths[4] = { 8, 4, 2, 1 };
		for (int b = 0; b < 4; b++) {
			if (c0 + 8u * (uint32_t)widths[b] > w)
				continue;
			switch (widths[b]) {
			case 8: spmm_block_avx2(jj, mm, nk, x, yi, w, c0, 8); break;
			case 4: spmm_block_avx2(jj, mm, nk, x, yi, w, c0, 4); break;
			case 2: spmm_block_avx2(jj, mm, nk, x, yi, w, c0, 2); break;
			default: spmm_block_avx2(jj, mm, nk, x, yi, w, c0, 1); break;
			}
			c0 += 8u * (uint32_t)widths[b];
		}
		for (uint32_t c = c0; c < w; c++) {
			float acc = 0.0f;
			for (size_t k = 0; k < nk; k++)
				acc += mm[k] * x[(size_t)jj[k] * w + c];
			yi[c] = acc;
		}
	}
}
#endif

static int kernel_choice = -1;   /* em_ppmi_select: -1 the CPU's, 0 plain */

int em_ppmi_select(int avx2)
{
#ifdef HAVE_AVX2_SPMM
	int have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	int have = 0;
#endif
	if (avx2 == 1 && !have)
		return -1;
	kernel_choice = avx2 < 0 ? -1 : avx2;
	return 0;
}

typedef struct spmm_job {
	const spmat *s;
	int trans, avx2;
	const float *x;
	float *y;
	uint32_t w, r0, r1;
	uint32_t *scratch;       /* the AVX2 rows': 2 * maxrow values */
} spmm_job;

static void *spmm_thread(void *p)
{
	spmm_job *j = p;
#ifdef HAVE_AVX2_SPMM
	if (j->avx2) {
		spmm_rows_avx2(j->s, j->trans, j->x, j->y, j->w, j->r0, j->r1, j->scratch);
		return NULL;
	}
#endif
	spmm_rows(j->s, j->trans, j->x, j->y, j->w, j->r0, j->r1);
	return NULL;
}

/* y = M x or M^T x on up to `threads` threads, rows split by entries; a
 * thread that cannot start has its rows done on this one. */
static void spmm(const spmat *s, int trans, const float *x, float *y, uint32_t w,
                 unsigned threads, uint32_t *scratch)
{
	spmm_job jobs[EM_PPMI_MAX_THREADS];
	size_t nnz = s->start[s->n];
#ifdef HAVE_AVX2_SPMM
	int avx2 = kernel_choice != 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	int avx2 = 0;
#endif
	if (threads < 2 || nnz < 16384) {
		jobs[0] = (spmm_job){ s, trans, avx2, x, y, w, 0, s->n, scratch };
		spmm_thread(&jobs[0]);
		return;
	}
	uint32_t r = 0;
	for (unsigned t = 0; t < threads; t++) {
		size_t goal = nnz / threads * (t + 1);
		uint32_t r1 = r;
		if (t == threads - 1)
			r1 = s->n;
		else
			while (r1 < s->n && s->start[r1] < goal)
				r1++;
		jobs[t] = (spmm_job){ s, trans, avx2, x, y, w, r, r1, scratch + (size_t)t * 2 * s->maxrow };
		r = r1;
	}
	fa_run_jobs(spmm_thread, jobs, sizeof *jobs, threads);
}

/* Orthonormal columns in place: a (n x w, row-major, n >= w) becomes the
 * Q of its QR factorisation. Row-major a is column-major a^T, whose LQ
 * factorisation a^T = L Q' gives a = Q'^T L^T: LAPACK works in place, with
 * no transposed copy. */
static int orthonormalise_lq(float *a, uint32_t n, uint32_t w, float *tau)
{
	int m = (int)w, nn = (int)n, info = 0, query = -1;
	float size = 0, size2 = 0;
	/* the workspace both need, asked first */
	sgelqf_(&m, &nn, a, &m, tau, &size, &query, &info);
	if (!info)
		sorglq_(&m, &nn, &m, a, &m, tau, &size2, &query, &info);
	int lwork = (int)FA_MAX(FA_MAX(size, size2), (float)m);
	float *work = info ? NULL : fa_malloc((size_t)lwork * sizeof *work);
	if (work) {
		sgelqf_(&m, &nn, a, &m, tau, work, &lwork, &info);
		if (!info)
			sorglq_(&m, &nn, &m, a, &m, tau, work, &lwork, &info);
	}
	fa_free(work);
	if (!work || info)
		return fa_err(FATHOM_ENOMEM, "corpus embedder: the QR factorisation failed");
	return 0;
}

/* Transpose the n x n matrix a in place (row major to column major and
 * back). */
static void transpose(double *a, uint32_t n)
{
	for (uint32_t r = 0; r < n; r++)
		for (uint32_t c = r + 1; c < n; c++) {
			double t = a[(size_t)r * n + c];
			a[(size_t)r * n + c] = a[(size_t)c * n + r];
			a[(size_t)c * n + r] = t;
		}
}

/* The Cholesky factor R (upper, A = R^T R) of the row-major w x w a, in
 * place: nonzero when a is not positive definite. */
static int cholesky_upper(double *a, uint32_t w)
{
	int n = (int)w, info = 0;
	transpose(a, w);
	dpotrf_("U", &n, a, &n, &info, 1);
	transpose(a, w);
	return info;
}

/* The eigenvalues (ascending, into ev) and eigenvectors (the columns of
 * the row-major l x l a, in place) of the symmetric a. */
static int eigen_symmetric(double *a, uint32_t l, double *ev)
{
	int n = (int)l, info = 0, query = -1, isize = 0;
	double size = 0;
	transpose(a, l);
	dsyevd_("V", "U", &n, a, &n, ev, &size, &query, &isize, &query, &info, 1, 1);
	int lwork = (int)size, liwork = isize;
	double *work = info ? NULL : fa_malloc((size_t)FA_MAX(lwork, 1) * sizeof *work);
	int *iwork = info ? NULL : fa_malloc((size_t)FA_MAX(liwork, 1) * sizeof *iwork);
	if (work && iwork)
		dsyevd_("V", "U", &n, a, &n, ev, work, &lwork, iwork, &liwork, &info, 1, 1);
	int ok = work && iwork && !info;
	fa_free(work);
	fa_free(iwork);
	if (!ok)
		return fa_err(FATHOM_ENOMEM, "corpus embedder: the eigendecomposition failed");
	transpose(a, l);
	return 0;
}

/* The dense products go to OpenBLAS in blocks of ROW_BLOCK rows of the
 * tall matrix, one call each, in order, on the calling thread: OpenBLAS's
 * single-threaded build shares its buffers without a lock, so two threads
 * in it at once can get wrong results (OpenBLAS issues #1755 and #2126;
 * seen here as a model that differed between 1 and 3 threads, once in 40
 * runs beside other work, while these blocks ran on the trainer's
 * threads). Every call into it holds em_blas_lock, which also keeps two
 * trainings, or a training and the glossary's neighbours, from meeting
 * in it. The blocks stay: a row's rounding can depend on the tile it
 * falls in, and these are the products the models measured were made
 * with. */
#define ROW_BLOCK 4096u

static uint32_t row_blocks(uint32_t n)
{
	return n / ROW_BLOCK + (n % ROW_BLOCK != 0);
}

/* a = a R^-1 (R upper, w x w). */
static void trsm_rows(const float *r, float *a, uint32_t n, uint32_t w)
{
	for (uint32_t b = 0; b < row_blocks(n); b++) {
		uint32_t r0 = b * ROW_BLOCK, rows = FA_MIN(ROW_BLOCK, n - r0);
		cblas_strsm(CblasRowMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit,
		            (int)rows, (int)w, 1.0f, r, (int)w, a + (size_t)r0 * w, (int)w);
	}
}

/* c = a b (a n x k, b k x m, c n x m, row-major). */
static void gemm_rows(const float *a, const float *b, float *c, uint32_t n, uint32_t k,
                      uint32_t m)
{
	for (uint32_t bl = 0; bl < row_blocks(n); bl++) {
		uint32_t r0 = bl * ROW_BLOCK, rows = FA_MIN(ROW_BLOCK, n - r0);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)m, (int)k,
		            1.0f, a + (size_t)r0 * k, (int)k, b, (int)m, 0.0f, c + (size_t)r0 * m,
		            (int)m);
	}
}

/* g = a^T a (a n x w row-major; g w x w, its upper triangle): each block's
 * own product into blocks (w * w floats a block), then added in block
 * order. */
static void gram_rows(const float *a, uint32_t n, uint32_t w, float *g, float *blocks)
{
	uint32_t nb = row_blocks(n);
	size_t ww = (size_t)w * w;
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t r0 = b * ROW_BLOCK, rows = FA_MIN(ROW_BLOCK, n - r0);
		cblas_ssyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)w, (int)rows, 1.0f,
		            a + (size_t)r0 * w, (int)w, 0.0f, blocks + b * ww, (int)w);
	}
	for (uint32_t r = 0; r < w; r++)
		for (uint32_t c = r; c < w; c++) {
			float sum = blocks[(size_t)r * w + c];
			for (uint32_t b = 1; b < nb; b++)
				sum += blocks[b * ww + (size_t)r * w + c];
			g[(size_t)r * w + c] = sum;
		}
}

/* The same by Cholesky QR, twice (CholeskyQR2: the second pass restores
 * the orthogonality the first loses to rounding): a = a R^-1 with R^T R =
 * a^T a, all BLAS 3, several times faster than Householder on these tall
 * matrices. A Gram matrix that is not positive definite (a nearly rank
 * deficient a) falls back to the LQ way. scratch holds 3 w * w + 1 values
 * (malloc-aligned). */
static int orthonormalise(float *a, uint32_t n, uint32_t w, float *tau, float *scratch,
                          float *blocks)
{
	float *g = scratch;
	/* the doubles start on an 8-byte boundary: w * w floats rounded up
	 * to an even count (scratch has the one float more) */
	double *gd = (double *)(scratch + (((size_t)w * w + 1) & ~(size_t)1));
	for (int pass = 0; pass < 2; pass++) {
		gram_rows(a, n, w, g, blocks);
		for (size_t k = 0; k < (size_t)w * w; k++)
			gd[k] = g[k];
		if (cholesky_upper(gd, w) != 0)
			return orthonormalise_lq(a, n, w, tau);
		for (uint32_t r = 0; r < w; r++)
			for (uint32_t c = 0; c < w; c++)
				g[(size_t)r * w + c] = c >= r ? (float)gd[(size_t)r * w + c] : 0.0f;
		trsm_rows(g, a, n, w);
	}
	return 0;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The test matrix: n random signs (a Rademacher matrix sketches a range
 * as well as a Gaussian one in practice, and costs one random bit a
 * value, not a logarithm and a sine). Value i is bit i % 64 of the
 * (i / 64 + 1)-th splitmix64 output from seed; splitmix64's state after
 * k outputs is seed + k * its increment, so any word can be drawn alone
 * and the words are drawn on the threads: the same signs on any number. */
typedef struct signs_job {
	float *out;
	size_t n, w0, w1;        /* words [w0, w1) of 64 values */
	uint64_t seed;
} signs_job;

static void *signs_thread(void *p)
{
	signs_job *j = p;
	for (size_t w = j->w0; w < j->w1; w++) {
		uint64_t s = j->seed + w * 0x9e3779b97f4a7c15ull;
		uint64_t r = splitmix64(&s);
		size_t i0 = w * 64, end = FA_MIN(j->n, i0 + 64);
		for (size_t i = i0; i < end; i++)
			j->out[i] = (float)((int)((r >> (i - i0)) & 1) * 2 - 1);
	}
	return NULL;
}

static void random_signs(float *out, size_t n, uint64_t seed, unsigned threads)
{
	signs_job jobs[EM_PPMI_MAX_THREADS];
	size_t words = (n + 63) / 64;
	threads = FA_MAX(1u, FA_MIN(threads, EM_PPMI_MAX_THREADS));
	for (unsigned t = 0; t < threads; t++)
		jobs[t] = (signs_job){ out, n, words * t / threads, words * (t + 1) / threads, seed };
	fa_run_jobs(signs_thread, jobs, sizeof *jobs, threads);
}

/* The words' vectors into v (n x dim): the top dim left singular vectors
 * of M times sqrt of their singular values. */
static int factor(const spmat *s, uint32_t dim, uint32_t l, uint64_t seed, unsigned threads,
                  float *v)
{
	uint32_t n = s->n;
	size_t nl = (size_t)n * l;
	float *q = fa_malloc(nl * sizeof *q), *z = fa_malloc(nl * sizeof *z);
	float *tau = fa_malloc((size_t)l * sizeof *tau);
	float *g = fa_malloc(((size_t)l * l * 3 + 1) * sizeof *g), *vd = fa_malloc((size_t)l * dim * sizeof *vd);
	double *gd = fa_malloc((size_t)l * l * sizeof *gd), *ev = fa_malloc((size_t)l * sizeof *ev);
	uint32_t *scratch = fa_malloc(((size_t)threads * 2 * s->maxrow + 1) * sizeof *scratch);
	float *blocks = fa_malloc((size_t)row_blocks(n) * l * l * sizeof *blocks);   /* the Gram matrices' */
	int rc = 0;
	if (!q || !z || !tau || !g || !vd || !gd || !ev || !scratch || !blocks) {
		rc = fa_err(FATHOM_ENOMEM, "corpus embedder: the SVD of %u words", n);
		goto done;
	}
	random_signs(z, nl, seed, threads);
	spmm(s, 0, z, q, l, threads, scratch);              /* Y = M Omega */
	if ((rc = orthonormalise(q, n, l, tau, g, blocks)))
		goto done;
	for (uint32_t it = 0; it < POWER_ITERS; it++) {
		spmm(s, 1, q, z, l, threads, scratch);      /* M^T Q */
		if ((rc = orthonormalise(z, n, l, tau, g, blocks)))
			goto done;
		spmm(s, 0, z, q, l, threads, scratch);      /* M (M^T Q) */
		if ((rc = orthonormalise(q, n, l, tau, g, blocks)))
			goto done;
	}
	/* B = Q^T M, kept as B^T = M^T Q; B B^T = V S^2 V^T gives the left
	 * singular vectors of B, so U = Q V */
	spmm(s, 1, q, z, l, threads, scratch);
	gram_rows(z, n, l, g, blocks);
	for (uint32_t r = 0; r < l; r++)
		for (uint32_t c = 0; c < l; c++)
			gd[(size_t)r * l + c] = c >= r ? g[(size_t)r * l + c] : g[(size_t)c * l + r];
	if ((rc = eigen_symmetric(gd, l, ev)))
		goto done;
	/* eigenvalues ascending: column l-1-c is the c-th largest; each column
	 * scaled by sqrt(singular value) = lambda^(1/4) */
	for (uint32_t c = 0; c < dim; c++) {
		double lam = ev[l - 1 - c] > 0 ? ev[l - 1 - c] : 0.0;
		double sc = pow(lam, EIG_POWER / 2);
		for (uint32_t r = 0; r < l; r++)
			vd[(size_t)r * dim + c] = (float)(gd[(size_t)r * l + (l - 1 - c)] * sc);
	}
	gemm_rows(q, vd, v, n, l, dim);
done:
	fa_free(q);
	fa_free(z);
	fa_free(tau);
	fa_free(g);
	fa_free(vd);
	fa_free(gd);
	fa_free(ev);
	fa_free(scratch);
	fa_free(blocks);
	return rc;
}

/* The model's words, counts and (empty) rows. */
static int new_model(em_ppmi *t, uint32_t dim, em_model **out)
{
	em_model *m = fa_calloc(1, sizeof *m);
	em_vectors *v = fa_calloc(1, sizeof *v);
	if (!m || !v) {
		fa_free(m);
		fa_free(v);
		return fa_err(FATHOM_ENOMEM, "corpus embedder: the model");
	}
	m->vec = v;
	m->opts = t->o;
	m->opts.threads = 0;
	m->sif_a = EM_SIF_A_CORPUS;
	m->version = 0;   /* the newest layout */
	m->total = t->total;
	v->n = t->nv;
	v->dim = dim;
	size_t pool = 0;
	for (uint32_t i = 0; i < t->nv; i++)
		pool += strlen(t->vword[i]) + 1;
	v->pool = fa_malloc(pool);
	v->word = fa_malloc((size_t)t->nv * sizeof *v->word);
	v->v = fa_calloc((size_t)t->nv * dim, sizeof *v->v);
	m->count = fa_malloc((size_t)t->nv * sizeof *m->count);
	if (!v->pool || !v->word || !v->v || !m->count) {
		em_model_free(m);
		return fa_err(FATHOM_ENOMEM, "corpus embedder: the model");
	}
	size_t at = 0;
	for (uint32_t i = 0; i < t->nv; i++) {
		size_t wl = strlen(t->vword[i]);
		v->word[i] = (uint32_t)at;
		memcpy(v->pool + at, t->vword[i], wl + 1);
		at += wl + 1;
		m->count[i] = t->vcount[i];
	}
	*out = m;
	return 0;
}

int em_ppmi_train(em_ppmi *t, em_model **out)
{
	*out = NULL;
	int rc = check_stage(t, ST_COOC, "training");
	if (rc)
		return rc;
	if ((rc = flush_pairs(t)))
		return t->rc = rc;
	fa_free(t->buf);
	fa_free(t->tmp);
	t->buf = t->tmp = NULL;
	if (t->nv < 2)
		return t->rc = fa_err(FATHOM_EINVAL,
		                      "corpus embedder: %u words seen at least %u times; training "
		                      "needs 2 or more",
		                      t->nv, t->o.min_count);
	/* the dimension: the one asked for, less when the vocabulary is too
	 * small for it and the oversampling */
	uint32_t n = t->nv, dim = t->o.dim;
	if (n < dim + OVERSAMPLE)
		dim = n > 2 * OVERSAMPLE ? n - OVERSAMPLE : FA_MAX(1u, n / 2);
	uint32_t l = FA_MIN(n, (dim + OVERSAMPLE + 7) & ~7u);
	unsigned threads = t->o.threads ? t->o.threads : fa_cpu_count(EM_PPMI_MAX_THREADS);
	spmat s;
	memset(&s, 0, sizeof s);
	em_model *m = NULL;
	if ((rc = build_matrix(t, &s)))
		goto done;
	for (unsigned p = 0; p < NPART; p++) {
		fa_free(t->tab[p].p);
		t->tab[p] = (part_tab){ NULL, 0, 0 };
	}
	t->ntab = 0;
	if ((rc = new_model(t, dim, &m)))
		goto done;
	/* no positive PMI at all (a corpus of a few words): every row stays
	 * zero, and the embedder finds nothing, rather than vectors made of
	 * the factorisation's noise */
	if (s.start[n] > 0) {
		em_blas_lock();
		int blas_threads = openblas_get_num_threads();
		openblas_set_num_threads(1);
		rc = factor(&s, dim, l, t->o.seed, threads, m->vec->v);
		openblas_set_num_threads(blas_threads);
		em_blas_unlock();
		if (rc)
			goto done;
	}
	for (uint32_t i = 0; i < n; i++)
		em_normalize(m->vec->v + (size_t)i * dim, dim);
	if ((rc = em_model_index(m, "corpus model")))
		goto done;
	t->stage = ST_DONE;
done:
	spmat_free(&s);
	if (rc) {
		em_model_free(m);
		return t->rc = rc;
	}
	*out = m;
	return 0;
}
