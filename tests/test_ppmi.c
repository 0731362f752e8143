/*
 * test_ppmi.c — the corpus embedder (src/embed/ppmi.c, model.c): words that
 * share their contexts come out near, training is the same bit for bit
 * twice and on 1 or 2 threads, the model file reads back bit for bit and
 * every cut or flipped byte of it is FATHOM_ECORRUPT, the embedder over it,
 * and a SciFact smoke (skipped when ../shared is absent) whose neighbours
 * must make sense.
 *
 * Also a bench: test_ppmi --bench CORPUS.jsonl [QUERIES.jsonl QRELS.tsv]
 * [--window W] [--dim D] [--threads T] [--seed S] [--min-count C] times the two passes and the
 * training over title + " " + text of each line, and with queries ranks the
 * documents by cosine alone and prints nDCG@10.
 */
#include <jansson.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

#define SCIFACT "../shared/data/scifact/corpus.jsonl"

typedef struct texts {
	char **t;
	size_t *len;
	size_t n, cap;
	char **id;
} texts;

static void texts_add(texts *x, const char *s, size_t len, const char *id)
{
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 64;
		x->t = realloc(x->t, x->cap * sizeof *x->t);
		x->len = realloc(x->len, x->cap * sizeof *x->len);
		x->id = realloc(x->id, x->cap * sizeof *x->id);
		if (!x->t || !x->len || !x->id)
			exit(2);
	}
	x->t[x->n] = strndup(s, len);
	x->len[x->n] = len;
	x->id[x->n] = strdup(id ? id : "");
	x->n++;
}

static void texts_free(texts *x)
{
	for (size_t i = 0; i < x->n; i++) {
		free(x->t[i]);
		free(x->id[i]);
	}
	free(x->t);
	free(x->len);
	free(x->id);
	memset(x, 0, sizeof *x);
}

/* Train on x; pass 2 reads x2 when given (the same words, other bytes).
 * With pairs, the pair table goes to it instead of training. */
static int passes(const texts *x, const texts *x2, const em_ppmi_opts *o, em_model **m,
                  int (*pairs)(void *ctx, const char *a, const char *b, float w), void *ctx)
{
	em_ppmi *t = NULL;
	*m = NULL;
	int rc = em_ppmi_new(&t, o);
	for (size_t i = 0; !rc && i < x->n; i++)
		rc = em_ppmi_count(t, x->t[i], x->len[i]);
	if (!rc)
		rc = em_ppmi_vocab(t);
	const texts *p2 = x2 ? x2 : x;
	for (size_t i = 0; !rc && i < p2->n; i++)
		rc = em_ppmi_cooc(t, p2->t[i], p2->len[i]);
	if (!rc)
		rc = pairs ? em_ppmi_pairs(t, pairs, ctx) : em_ppmi_train(t, m);
	em_ppmi_free(t);
	return rc;
}

static int train2(const texts *x, const texts *x2, const em_ppmi_opts *o, em_model **m)
{
	return passes(x, x2, o, m, NULL, NULL);
}

static int train(const texts *x, const em_ppmi_opts *o, em_model **m)
{
	return train2(x, NULL, o, m);
}

/* The cosine of two words' rows; -2 when either is unknown. */
static double word_cos(const em_model *m, const char *a, const char *b)
{
	int64_t i = em_vectors_find(m->vec, a, strlen(a)), j = em_vectors_find(m->vec, b, strlen(b));
	if (i < 0 || j < 0)
		return -2;
	return em_dot_ref(em_vectors_row(m->vec, (uint32_t)i), em_vectors_row(m->vec, (uint32_t)j),
	                  m->vec->dim);
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((rng_state >> 33) % n);
}

/* Sentences from two worlds: pets (cat and dog in the same frames) and
 * markets (stocks and bonds in theirs), with shared function words. */
static void synthetic(texts *x, size_t nsent)
{
	static const char *pet[] = { "cat", "dog" };
	static const char *fin[] = { "stocks", "bonds" };
	static const char *pet_frame[] = {
		"the %s sat on the mat and purred near the warm fire",
		"my %s chased a ball across the garden grass",
		"a hungry %s ate its food from the bowl",
		"the vet checked the %s for fleas and gave it a treat",
	};
	static const char *fin_frame[] = {
		"the %s rose on the market as investors bought shares",
		"traders sold %s when the interest rate went up",
		"the bank said %s fell after the earnings report",
		"a fund manager bought %s for the pension portfolio",
	};
	rng_state = 42;
	char buf[256];
	for (size_t i = 0; i < nsent; i++) {
		int w = (int)rnd(2);
		if (rnd(2))
			snprintf(buf, sizeof buf, pet_frame[rnd(4)], pet[w]);
		else
			snprintf(buf, sizeof buf, fin_frame[rnd(4)], fin[w]);
		texts_add(x, buf, strlen(buf), NULL);
	}
}

/* Zipf-like random text over 2,000 words, enough pairs for the sparse
 * products to run on several threads. */
static void random_text(texts *x, size_t ndoc, size_t words)
{
	rng_state = 7;
	char *buf = malloc(words * 8 + 1);
	for (size_t d = 0; d < ndoc; d++) {
		size_t at = 0;
		for (size_t k = 0; k < words; k++) {
			uint32_t r = rnd(2000);
			r = r * r / 2000;   /* more small ids */
			at += (size_t)sprintf(buf + at, "w%u ", r);
		}
		texts_add(x, buf, at, NULL);
	}
	free(buf);
}

static em_ppmi_opts small_opts(void)
{
	em_ppmi_opts o;
	em_ppmi_defaults(&o);
	o.dim = 8;
	o.window = 5;
	o.min_count = 1;
	o.threads = 1;
	return o;
}

static void test_synthetic(void)
{
	/* the sentences run together in 4 long texts, so that a text says
	 * nothing and only the window tells the two worlds apart */
	texts s = { 0 }, x = { 0 };
	synthetic(&s, 400);
	for (size_t k = 0; k < 4; k++) {
		size_t n = 0;
		for (size_t i = k * 100; i < k * 100 + 100; i++)
			n += s.len[i] + 1;
		char *b = malloc(n + 1), *p = b;
		for (size_t i = k * 100; i < k * 100 + 100; i++)
			p += sprintf(p, "%s ", s.t[i]);
		texts_add(&x, b, n, NULL);
		free(b);
	}
	texts_free(&s);
	em_ppmi_opts o = small_opts();
	em_model *m;
	CHECK_OK(train(&x, &o, &m));
	if (m) {
		double cd = word_cos(m, "cat", "dog"), sb = word_cos(m, "stocks", "bonds");
		double cs = word_cos(m, "cat", "stocks"), db = word_cos(m, "dog", "bonds");
		printf("     cos(cat,dog) %.3f cos(stocks,bonds) %.3f cos(cat,stocks) %.3f "
		       "cos(dog,bonds) %.3f dim %u words %u\n",
		       cd, sb, cs, db, m->vec->dim, m->vec->n);
		CHECK(cd > cs + 0.2 && cd > db + 0.2);
		CHECK(sb > cs + 0.2 && sb > db + 0.2);
		CHECK(m->vec->dim < 8 || m->vec->n >= 24);   /* a small vocabulary, a smaller dim */
		CHECK_EQ(m->opts.dim, 8);
		uint64_t sum = 0;
		for (uint32_t i = 0; i < m->vec->n; i++) {
			sum += m->count[i];
			double ss = em_dot_ref(em_vectors_row(m->vec, i), em_vectors_row(m->vec, i),
			                       m->vec->dim);
			CHECK(ss == 0 || fabs(ss - 1) < 1e-4);
			if (i)
				CHECK(m->count[i] <= m->count[i - 1]);
		}
		/* min_count 1: every word kept but "a" (one byte: no vector) */
		CHECK(sum < m->total);
		CHECK_EQ(em_vectors_find(m->vec, "a", 1), -1);
		CHECK(em_vectors_find(m->vec, "my", 2) >= 0);
	}
	em_model_free(m);
	texts_free(&x);
}

static unsigned char *model_bytes(const em_model *m, size_t *len)
{
	unsigned char *b = NULL;
	*len = 0;
	CHECK_OK(em_model_write(m, &b, len));
	return b;
}

static void test_deterministic(void)
{
	texts x = { 0 };
	random_text(&x, 40, 5000);
	em_ppmi_opts o = small_opts();
	o.dim = 32;
	o.window = 10;
	o.min_count = 2;
	unsigned char *b[3];
	size_t len[3];
	for (int k = 0; k < 3; k++) {
		o.threads = k == 2 ? 2 : 1;
		em_model *m;
		CHECK_OK(train(&x, &o, &m));
		b[k] = m ? model_bytes(m, &len[k]) : NULL;
		if (m && k == 0)
			printf("     %u words, dim %u, %zu bytes\n", m->vec->n, m->vec->dim, len[k]);
		em_model_free(m);
	}
	CHECK(b[0] && b[1] && b[2]);
	if (b[0] && b[1] && b[2]) {
		CHECK(len[0] == len[1] && memcmp(b[0], b[1], len[0]) == 0);
		CHECK(len[0] == len[2] && memcmp(b[0], b[2], len[0]) == 0);
	}
	/* pass 2 over other bytes with the same words (every other text
	 * upper-cased): read again, not taken from pass 1's cache, and the
	 * same model */
	texts up = { 0 };
	for (size_t i = 0; i < x.n; i++) {
		char *u = strdup(x.t[i]);
		for (size_t k = 0; i % 2 && u[k]; k++)
			u[k] = (char)(u[k] == 'w' ? 'W' : u[k]);
		texts_add(&up, u, x.len[i], NULL);
		free(u);
	}
	o.threads = 1;
	em_model *mu;
	CHECK_OK(train2(&x, &up, &o, &mu));
	size_t lu;
	unsigned char *bu = mu ? model_bytes(mu, &lu) : NULL;
	CHECK(bu && b[0] && lu == len[0] && memcmp(bu, b[0], lu) == 0);
	fa_free(bu);
	em_model_free(mu);
	texts_free(&up);
	/* another seed: another model */
	o.seed = 99;
	em_model *m;
	CHECK_OK(train(&x, &o, &m));
	size_t l2;
	unsigned char *b2 = m ? model_bytes(m, &l2) : NULL;
	CHECK(b2 && b[0] && (l2 != len[0] || memcmp(b2, b[0], l2) != 0));
	fa_free(b2);
	em_model_free(m);
	for (int k = 0; k < 3; k++)
		fa_free(b[k]);
	texts_free(&x);
}

/* The pair table against a slow reference: every pair of the random
 * text's words at most `window` apart (a word with itself not), weighted
 * 1 / distance, summed in double over a dense matrix; the same bits on
 * 1 and 3 threads; and, held to a few pairs, the
 * lightest dropped, the same on any threads. */
#define PW 2000u

typedef struct pair_seen {
	double *ref;             /* PW x PW */
	float *got;              /* the table's weights, in order */
	size_t n, cap;
	int match;               /* every pair a pair of the text, once */
	double worst;            /* the largest relative difference */
} pair_seen;

static long word_no(const char *w)
{
	return w[0] == 'w' ? atol(w + 1) : -1;
}

static int on_pair(void *ctx, const char *a, const char *b, float w)
{
	pair_seen *ps = ctx;
	long i = word_no(a), j = word_no(b);
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 4096;
		ps->got = realloc(ps->got, ps->cap * sizeof *ps->got);
		if (!ps->got)
			exit(2);
	}
	ps->got[ps->n++] = w;
	if (i < 0 || j < 0 || i >= (long)PW || j >= (long)PW || i == j) {
		ps->match = 0;
		return 0;
	}
	double r = ps->ref[(size_t)FA_MIN(i, j) * PW + (size_t)FA_MAX(i, j)];
	ps->ref[(size_t)FA_MIN(i, j) * PW + (size_t)FA_MAX(i, j)] = -1;   /* seen */
	if (!(r > 0)) {
		ps->match = 0;
		return 0;
	}
	ps->worst = FA_MAX(ps->worst, fabs(w - r) / r);
	return 0;
}

/* The table of x on `threads` threads, its weights into *got (the
 * caller frees); what was left of ref's pairs unseen into *left. */
static pair_seen table_on(const texts *x, em_ppmi_opts *o, uint32_t threads, const double *ref,
                          size_t *left)
{
	o->threads = threads;
	double *r = malloc((size_t)PW * PW * sizeof *r);
	if (!r)
		exit(2);
	memcpy(r, ref, (size_t)PW * PW * sizeof *r);
	pair_seen ps = { r, NULL, 0, 0, 1, 0 };
	em_model *none;
	CHECK_OK(passes(x, NULL, o, &none, on_pair, &ps));
	*left = 0;
	for (size_t k = 0; k < (size_t)PW * PW; k++)
		*left += r[k] > 0;
	free(r);
	ps.ref = NULL;
	return ps;
}

static void test_pairs(void)
{
	texts x = { 0 };
	random_text(&x, 120, 5000);   /* 6M records: three buffers */
	em_ppmi_opts o = small_opts();
	o.window = 10;
	double *ref = calloc((size_t)PW * PW, sizeof *ref);
	if (!ref)
		exit(2);
	for (size_t d = 0; d < x.n; d++) {
		long w[5000];
		size_t n = 0;
		for (char *p = x.t[d]; *p && n < 5000; n++) {
			w[n] = atol(p + 1);
			p = strchr(p, ' ');
			if (!p)
				break;
			p++;
		}
		for (size_t a = 0; a < n; a++)
			for (size_t k = 1; k <= o.window && a + k < n; k++)
				if (w[a] != w[a + k])
					ref[(size_t)FA_MIN(w[a], w[a + k]) * PW +
					    (size_t)FA_MAX(w[a], w[a + k])] += 1.0 / (double)k;
	}
	size_t nref = 0;
	for (size_t k = 0; k < (size_t)PW * PW; k++)
		nref += ref[k] > 0;
	/* all of them; then held to 5,000 pairs, the lightest go (at most half
	 * the limit is left after each drop, so fewer than the limit at the
	 * end), and what is kept is a pair of the text */
	for (int held = 0; held < 2; held++) {
		o.max_pairs = held ? 5000 : 0;
		size_t left1, left3;
		pair_seen p1 = table_on(&x, &o, 1, ref, &left1);
		pair_seen p3 = table_on(&x, &o, 3, ref, &left3);
		if (!held)
			printf("     %zu pairs (reference %zu), worst relative difference %.2g\n", p1.n,
			       nref, p1.worst);
		else
			printf("     held to %zu pairs: %zu kept\n", o.max_pairs, p1.n);
		CHECK(p1.match && p3.match);
		CHECK(p1.n == p3.n && memcmp(p1.got, p3.got, p1.n * sizeof *p1.got) == 0);
		if (!held) {
			CHECK_EQ(p1.n, nref);
			CHECK_EQ(left1, 0);
			CHECK(p1.worst < 1e-5);
		} else {
			CHECK(p1.n > 0 && p1.n <= o.max_pairs);
		}
		free(p1.got);
		free(p3.got);
	}
	free(ref);
	texts_free(&x);
}

/* The AVX2 sparse products against the plain ones: the same model but for
 * rounding (another order of addition, FMA). */
static void test_kernels(void)
{
	if (em_ppmi_select(1) != 0) {
		printf("     no AVX2 + FMA on this CPU: skipped\n");
		return;
	}
	texts x = { 0 };
	random_text(&x, 40, 5000);
	em_ppmi_opts o = small_opts();
	o.dim = 32;
	o.window = 10;
	o.min_count = 2;
	o.threads = 2;
	em_model *m[2] = { NULL, NULL };
	CHECK_OK(train(&x, &o, &m[0]));
	CHECK_EQ(em_ppmi_select(0), 0);
	CHECK_OK(train(&x, &o, &m[1]));
	em_ppmi_select(-1);
	if (m[0] && m[1]) {
		CHECK_EQ(m[0]->vec->n, m[1]->vec->n);
		double worst = 1;
		for (uint32_t i = 0; i < m[0]->vec->n && i < m[1]->vec->n; i++) {
			double c = em_dot_ref(em_vectors_row(m[0]->vec, i), em_vectors_row(m[1]->vec, i),
			                      m[0]->vec->dim);
			double n0 = em_dot_ref(em_vectors_row(m[0]->vec, i), em_vectors_row(m[0]->vec, i),
			                       m[0]->vec->dim);
			if (n0 > 0 && fabs(c) < worst)
				worst = fabs(c);
		}
		printf("     the least |cosine| of a word's two rows %.6f\n", worst);
		CHECK(worst > 0.999);
	}
	em_model_free(m[0]);
	em_model_free(m[1]);
	texts_free(&x);
}

static em_model *small_model(void)
{
	texts x = { 0 };
	synthetic(&x, 200);
	em_ppmi_opts o = small_opts();
	em_model *m;
	CHECK_OK(train(&x, &o, &m));
	texts_free(&x);
	return m;
}

static void test_roundtrip(void)
{
	em_model *m = small_model();
	if (!m)
		return;
	size_t len, len2;
	unsigned char *b = model_bytes(m, &len);
	em_model *r = NULL;
	CHECK_OK(em_model_read(&r, b, len, "model"));
	if (r) {
		unsigned char *b2 = model_bytes(r, &len2);
		CHECK(b2 && len2 == len && memcmp(b, b2, len) == 0);
		fa_free(b2);
		CHECK_EQ(r->vec->n, m->vec->n);
		CHECK_EQ(r->total, m->total);
		CHECK(r->pc == NULL);
		for (uint32_t i = 0; i < m->vec->n; i++) {
			CHECK(r->weight[i] == m->weight[i]);
			const char *w = em_vectors_word(m->vec, i);
			CHECK_EQ(em_vectors_find(r->vec, w, strlen(w)), i);
		}
		/* with a common component */
		r->pc = fa_calloc(r->vec->dim, sizeof *r->pc);
		r->pc[0] = 1.0f;
		fa_free(b);
		b = model_bytes(r, &len);
		em_model *r2 = NULL;
		CHECK_OK(em_model_read(&r2, b, len, "model"));
		CHECK(r2 && r2->pc && r2->pc[0] == 1.0f);
		em_model_free(r2);
	}
	em_model_free(r);
	em_model_free(m);
	fa_free(b);
}

static void reseal(unsigned char *b, size_t len);

/* A model file of version 1 (no SIF a in its header: a = 1e-3, its words
 * at 56) still reads, weighs its words with 1e-3, is written back as
 * version 1 byte for byte, and keeps the ident its indexes were made
 * with (no "sif="); a model trained now is version 2, with
 * EM_SIF_A_CORPUS. */
static void test_version1(void)
{
	em_model *m = small_model();
	if (!m)
		return;
	CHECK(m->sif_a == EM_SIF_A_CORPUS);
	size_t len;
	unsigned char *b = model_bytes(m, &len);
	CHECK_EQ(fa_load32(b + 8), 2);
	unsigned char *v1 = malloc(len - 8);
	memcpy(v1, b, 56);
	memcpy(v1 + 56, b + 64, len - 64);
	fa_store32(v1 + 8, 1);
	reseal(v1, len - 8);
	em_model *r = NULL;
	CHECK_OK(em_model_read(&r, v1, len - 8, "v1.model"));
	if (r) {
		CHECK(r->sif_a == EM_SIF_A && r->version == 1);
		double p0 = (double)r->count[0] / (double)r->total;
		CHECK(r->weight[0] == (float)(EM_SIF_A / (EM_SIF_A + p0)));
		CHECK(m->weight[0] == (float)(EM_SIF_A_CORPUS / (EM_SIF_A_CORPUS + p0)));
		size_t len2;
		unsigned char *b2 = model_bytes(r, &len2);
		CHECK(b2 && len2 == len - 8 && memcmp(b2, v1, len2) == 0);
		fa_free(b2);
		em_embedder *e = NULL;
		CHECK_OK(em_corpus_new(&e, r));
		CHECK(e && strstr(e->ident, "corpus v1 ") && !strstr(e->ident, "sif="));
		em_embedder_free(e);   /* frees r */
	}
	em_embedder *e2 = NULL;
	CHECK(!m->has_crc);   /* trained: its ident's CRC comes from writing it */
	CHECK_OK(em_corpus_new(&e2, m));
	CHECK(e2 && strstr(e2->ident, " sif=0.003"));
	/* read back: the file's own CRC, and the same ident */
	em_model *r3 = NULL;
	CHECK_OK(em_model_read(&r3, b, len, "v2.model"));
	em_embedder *e3 = NULL;
	if (r3) {
		CHECK(r3->has_crc && r3->crc == fa_load32(b + len - 4));
		CHECK_OK(em_corpus_new(&e3, r3));
	}
	CHECK(e2 && e3 && strcmp(e2->ident, e3->ident) == 0);
	em_embedder_free(e3);   /* frees r3 */
	em_embedder_free(e2);   /* frees m */
	free(v1);
	fa_free(b);
}

static void expect_corrupt(const unsigned char *b, size_t len, const char *what)
{
	em_model *r = (em_model *)1;
	int rc = em_model_read(&r, b, len, "bad.model");
	if (rc != FATHOM_ECORRUPT || r != NULL || !strstr(fathom_errmsg(), "bad.model")) {
		fprintf(stderr, "  %s: rc %d: %s\n", what, rc, fathom_errmsg());
		CHECK(0);
	}
	if (rc == 0)
		em_model_free(r);
}

/* A copy of b with its checksum made right again after an edit. */
static void reseal(unsigned char *b, size_t len)
{
	fa_store32(b + len - 4, fa_crc32c(0, b, len - 4));
}

static void test_corrupt(void)
{
	em_model *m = small_model();
	if (!m)
		return;
	size_t len;
	unsigned char *b = model_bytes(m, &len);
	unsigned char *c = malloc(len);
	char what[64];
	for (size_t cut = 0; cut < len; cut++) {
		snprintf(what, sizeof what, "cut at %zu", cut);
		expect_corrupt(b, cut, what);
	}
	for (size_t at = 0; at < len; at++) {
		memcpy(c, b, len);
		c[at] ^= (unsigned char)(1u << (at % 8));
		snprintf(what, sizeof what, "byte %zu flipped", at);
		expect_corrupt(c, len, what);
	}
	/* fields wrong under a right checksum */
	uint32_t n = m->vec->n, dim = m->vec->dim;
	size_t words = 64;   /* version 2: SIF's a at 56 */
	for (uint32_t i = 0; i < n; i++)
		words += 2 + fa_load16(b + words);
	struct { size_t at; uint32_t v; int wide; const char *what; } edits[] = {
		{ 12, 0, 0, "dim 0" },
		{ 12, 5000, 0, "dim too large" },
		{ 16, 0, 0, "no words" },
		{ 16, n + 1, 0, "more words than written" },
		{ 20, 2, 0, "unknown flags" },
		{ 20, 1, 0, "a pc flag without a pc" },
		{ 36, 0, 0, "window 0" },
		{ 40, 0, 0, "min_count 0" },
		{ 64, 0, 0, "an empty word" },
		{ 24, 1, 1, "total below the counts" },
		{ words, 0, 1, "a count of 0" },
		{ words + 8 * (size_t)n, 0x7fc00000u, 0, "a NaN" },
		{ words + 8 * (size_t)n + 4, 0x7f800000u, 0, "an infinity" },
	};
	for (size_t k = 0; k < FA_ARRAY_LEN(edits); k++) {
		memcpy(c, b, len);
		if (edits[k].at == 64)
			fa_store16(c + 64, 0);
		else if (edits[k].wide)
			fa_store64(c + edits[k].at, edits[k].v);
		else
			fa_store32(c + edits[k].at, edits[k].v);
		reseal(c, len);
		expect_corrupt(c, len, edits[k].what);
	}
	/* SIF's a: 0, past 1, not a number */
	static const uint64_t bad_a[] = { 0, 0x4000000000000000ull, 0x7ff8000000000000ull,
	                                  0xbf50624dd2f1a9fcull };
	for (size_t k = 0; k < FA_ARRAY_LEN(bad_a); k++) {
		memcpy(c, b, len);
		fa_store64(c + 56, bad_a[k]);
		reseal(c, len);
		snprintf(what, sizeof what, "SIF's a %016llx", (unsigned long long)bad_a[k]);
		expect_corrupt(c, len, what);
	}
	/* the second word spelled as the first; a NUL in a word */
	memcpy(c, b, len);
	size_t l0 = fa_load16(c + 64), at1 = 64 + 2 + l0;
	if (fa_load16(c + at1) == l0) {
		memcpy(c + at1 + 2, c + 66, l0);
		reseal(c, len);
		expect_corrupt(c, len, "a word twice");
	} else {
		printf("     the first two words differ in length: no twice test\n");
	}
	memcpy(c, b, len);
	c[66] = 0;
	reseal(c, len);
	expect_corrupt(c, len, "a NUL in a word");
	/* another version: refused as such */
	memcpy(c, b, len);
	fa_store32(c + 8, 3);
	reseal(c, len);
	em_model *r = NULL;
	CHECK_EQ(em_model_read(&r, c, len, "v3.model"), FATHOM_EVERSION);
	memcpy(c, b, len);
	fa_store32(c + 8, 0);
	reseal(c, len);
	CHECK_EQ(em_model_read(&r, c, len, "v0.model"), FATHOM_EVERSION);
	(void)dim;
	free(c);
	fa_free(b);
	em_model_free(m);
}

static void test_embedder(void)
{
	em_model *m = small_model();
	if (!m)
		return;
	em_embedder *e = NULL;
	CHECK_OK(em_corpus_new(&e, m));
	if (!e) {
		em_model_free(m);
		return;
	}
	CHECK(strncmp(e->ident, "corpus v1 dim=", 14) == 0);
	CHECK(strstr(e->ident, " window=5 min_count=1 ") != NULL);
	CHECK(strstr(e->ident, " crc=") != NULL);
	printf("     %s\n", e->ident);
	const char *tx[4] = { "My cat sat on the mat", "my dog sat on the mat",
		              "traders sold stocks", "zzz qqq" };
	size_t lens[4];
	for (int i = 0; i < 4; i++)
		lens[i] = strlen(tx[i]);
	uint32_t d = e->dim;
	float *out = calloc(4 * (size_t)d, sizeof *out);
	CHECK_OK(em_embed(e, tx, lens, 4, out));
	double c01 = em_dot_ref(out, out + d, d), c02 = em_dot_ref(out, out + 2 * d, d);
	printf("     cos(cat text, dog text) %.3f, cos(cat text, stocks text) %.3f\n", c01, c02);
	CHECK(c01 > c02);
	double z = 0;
	for (uint32_t k = 0; k < d; k++)
		z += fabs(out[3 * d + k]);
	CHECK(z == 0);   /* no known word: the zero vector */
	free(out);
	em_embedder_free(e);
}

static void test_errors(void)
{
	em_ppmi *t = NULL;
	em_ppmi_opts o = small_opts();
	o.window = 0;
	CHECK_EQ(em_ppmi_new(&t, &o), FATHOM_EINVAL);
	o = small_opts();
	o.dim = EM_MAX_DIM + 1;
	CHECK_EQ(em_ppmi_new(&t, &o), FATHOM_EINVAL);
	o = small_opts();
	o.max_vocab = EM_PPMI_MAX_VOCAB + 1;
	CHECK_EQ(em_ppmi_new(&t, &o), FATHOM_EINVAL);
	CHECK(t == NULL);
	o = small_opts();
	CHECK_OK(em_ppmi_new(&t, &o));
	if (!t)
		return;
	CHECK_EQ(em_ppmi_cooc(t, "a b", 3), FATHOM_EINVAL);   /* before the vocabulary */
	em_model *m = NULL;
	CHECK_EQ(em_ppmi_train(t, &m), FATHOM_EINVAL);
	CHECK_OK(em_ppmi_count(t, "one lonely word", 15));
	CHECK_OK(em_ppmi_vocab(t));
	CHECK_EQ(em_ppmi_count(t, "a b", 3), FATHOM_EINVAL);   /* after it */
	CHECK_EQ(em_ppmi_vocab(t), FATHOM_EINVAL);
	/* no pairs at all: a model of zero rows */
	CHECK_OK(em_ppmi_train(t, &m));
	for (uint32_t i = 0; m && i < m->vec->n; i++)
		for (uint32_t k = 0; k < m->vec->dim; k++)
			CHECK(em_vectors_row(m->vec, i)[k] == 0);
	em_model_free(m);
	m = NULL;
	em_ppmi_free(t);
	/* nothing seen twice with min_count 2: too few words */
	o = small_opts();
	o.min_count = 2;
	CHECK_OK(em_ppmi_new(&t, &o));
	CHECK_OK(em_ppmi_count(t, "alpha beta gamma", 16));
	CHECK_OK(em_ppmi_vocab(t));
	CHECK_OK(em_ppmi_cooc(t, "alpha beta gamma", 16));
	CHECK_EQ(em_ppmi_train(t, &m), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "0 words") != NULL);
	em_ppmi_free(t);
	/* allocation failures: an error, never a crash or a leak */
	texts x = { 0 };
	synthetic(&x, 50);
	o = small_opts();
	for (long k = 0; k < 400; k += 7) {
		fa_alloc_fail_after(k);
		int rc = train(&x, &o, &m);
		fa_alloc_fail_after(-1);
		CHECK(rc == 0 || rc == FATHOM_ENOMEM);
		em_model_free(m);
	}
	texts_free(&x);
}

/* ---- SciFact --------------------------------------------------------------- */

static int load_jsonl(texts *x, const char *path, int with_title)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		json_error_t err;
		json_t *j = json_loadb(line, (size_t)n, 0, &err);
		if (!j)
			continue;
		const char *id = json_string_value(json_object_get(j, "_id"));
		const char *title = json_string_value(json_object_get(j, "title"));
		const char *text = json_string_value(json_object_get(j, "text"));
		char *s = NULL;
		if (asprintf(&s, "%s%s%s", with_title && title ? title : "",
		             with_title && title ? " " : "", text ? text : "") < 0)
			exit(2);
		texts_add(x, s, strlen(s), id);
		free(s);
		json_decref(j);
	}
	free(line);
	fclose(f);
	return 0;
}

static double median_random_cos(const em_model *m, uint32_t among, int pairs)
{
	double *c = malloc((size_t)pairs * sizeof *c);
	rng_state = 3;
	for (int k = 0; k < pairs; k++) {
		uint32_t i = rnd(among), j = rnd(among);
		c[k] = em_dot_ref(em_vectors_row(m->vec, i), em_vectors_row(m->vec, j), m->vec->dim);
	}
	for (int a = 1; a < pairs; a++)   /* insertion sort: a few hundred */
		for (int b = a; b > 0 && c[b - 1] > c[b]; b--) {
			double s = c[b];
			c[b] = c[b - 1];
			c[b - 1] = s;
		}
	double med = c[pairs / 2];
	free(c);
	return med;
}

static void test_scifact(void)
{
	texts x = { 0 };
	CHECK_EQ(load_jsonl(&x, SCIFACT, 1), 0);
	em_ppmi_opts o;
	em_ppmi_defaults(&o);
	em_model *m;
	CHECK_OK(train(&x, &o, &m));
	if (m) {
		double med = median_random_cos(m, m->vec->n < 5000 ? m->vec->n : 5000, 301);
		const char *pairs[][2] = { { "protein", "proteins" }, { "cancer", "tumor" },
			                   { "mice", "mouse" }, { "cells", "cell" } };
		printf("     %u words, dim %u; median cosine of random pairs %.3f\n", m->vec->n,
		       m->vec->dim, med);
		for (size_t k = 0; k < FA_ARRAY_LEN(pairs); k++) {
			double c = word_cos(m, pairs[k][0], pairs[k][1]);
			printf("     cos(%s, %s) %.3f\n", pairs[k][0], pairs[k][1], c);
			CHECK(c > med + 0.1);
		}
	}
	em_model_free(m);
	/* a vocabulary of several row blocks (the solves split over threads):
	 * the same model on 1 and 3 threads (dim 32 to be quick) */
	unsigned char *b[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 };
	for (int k = 0; k < 2; k++) {
		o.dim = 32;
		o.threads = k ? 3 : 1;
		CHECK_OK(train(&x, &o, &m));
		if (m && k == 0)
			printf("     %u words at dim 32 on 1 and 3 threads\n", m->vec->n);
		CHECK(!m || m->vec->n > 2 * 4096);
		b[k] = m ? model_bytes(m, &len[k]) : NULL;
		em_model_free(m);
	}
	CHECK(b[0] && b[1] && len[0] == len[1] && memcmp(b[0], b[1], len[0]) == 0);
	fa_free(b[0]);
	fa_free(b[1]);
	texts_free(&x);
}

/* ---- the bench --------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float *embed_all(em_embedder *e, const texts *x)
{
	float *v = malloc(x->n * (size_t)e->dim * sizeof *v);
	for (size_t i = 0; i < x->n; i += EM_MAX_BATCH) {
		size_t k = FA_MIN((size_t)EM_MAX_BATCH, x->n - i);
		if (em_embed(e, (const char *const *)x->t + i, x->len + i, k, v + i * e->dim)) {
			fprintf(stderr, "embed: %s\n", fathom_errmsg());
			exit(1);
		}
	}
	return v;
}

static double ndcg10(const texts *docs, const texts *qs, const float *dv, const float *qv,
                     uint32_t dim, const char *qrels)
{
	FILE *f = fopen(qrels, "r");
	if (!f)
		return -1;
	char qid[256], did[256];
	int score;
	char line[1024];
	double sum = 0;
	int nq = 0;
	/* qrels grouped by query: for each query with judgements, rank */
	char **rq = NULL, **rd = NULL;
	size_t nr = 0;
	if (!fgets(line, sizeof line, f)) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%255s %255s %d", qid, did, &score) == 3 && score > 0) {
			rq = realloc(rq, (nr + 1) * sizeof *rq);
			rd = realloc(rd, (nr + 1) * sizeof *rd);
			rq[nr] = strdup(qid);
			rd[nr++] = strdup(did);
		}
	fclose(f);
	float *sc = malloc(docs->n * sizeof *sc);
	for (size_t q = 0; q < qs->n; q++) {
		size_t nrel = 0;
		for (size_t r = 0; r < nr; r++)
			nrel += strcmp(rq[r], qs->id[q]) == 0;
		if (!nrel)
			continue;
		for (size_t d = 0; d < docs->n; d++)
			sc[d] = em_dot_ref(qv + q * dim, dv + d * dim, dim);
		double dcg = 0, idcg = 0;
		for (int rank = 0; rank < 10; rank++) {
			size_t best = SIZE_MAX;
			for (size_t d = 0; d < docs->n; d++)
				if (sc[d] > -1e30f && (best == SIZE_MAX || sc[d] > sc[best]))
					best = d;
			if (best == SIZE_MAX)
				break;
			sc[best] = -1e31f;
			for (size_t r = 0; r < nr; r++)
				if (strcmp(rq[r], qs->id[q]) == 0 && strcmp(rd[r], docs->id[best]) == 0) {
					dcg += 1.0 / log2(rank + 2.0);
					break;
				}
			if ((size_t)rank < nrel)
				idcg += 1.0 / log2(rank + 2.0);
		}
		sum += dcg / idcg;
		nq++;
	}
	for (size_t r = 0; r < nr; r++) {
		free(rq[r]);
		free(rd[r]);
	}
	free(rq);
	free(rd);
	free(sc);
	return nq ? sum / nq : -1;
}

static int bench(int argc, char **argv)
{
	em_ppmi_opts o;
	em_ppmi_defaults(&o);
	const char *corpus = argv[2], *queries = NULL, *qrels = NULL;
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--window") == 0 && i + 1 < argc)
			o.window = (uint32_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--dim") == 0 && i + 1 < argc)
			o.dim = (uint32_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
			o.threads = (uint32_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			o.seed = (uint64_t)atoll(argv[++i]);
		else if (strcmp(argv[i], "--min-count") == 0 && i + 1 < argc)
			o.min_count = (uint32_t)atoi(argv[++i]);
		else if (!queries)
			queries = argv[i];
		else
			qrels = argv[i];
	}
	texts x = { 0 };
	if (load_jsonl(&x, corpus, 1)) {
		perror(corpus);
		return 1;
	}
	size_t bytes = 0;
	for (size_t i = 0; i < x.n; i++)
		bytes += x.len[i];
	double t0 = now();
	em_ppmi *t;
	if (em_ppmi_new(&t, &o))
		return fprintf(stderr, "%s\n", fathom_errmsg()), 1;
	for (size_t i = 0; i < x.n; i++)
		em_ppmi_count(t, x.t[i], x.len[i]);
	double t1 = now();
	em_ppmi_vocab(t);
	double t2 = now();
	for (size_t i = 0; i < x.n; i++)
		em_ppmi_cooc(t, x.t[i], x.len[i]);
	double t3 = now();
	em_model *m;
	int rc = em_ppmi_train(t, &m);
	double t4 = now();
	em_ppmi_free(t);
	if (rc)
		return fprintf(stderr, "train: %s\n", fathom_errmsg()), 1;
	printf("%zu texts, %.1f MB, %llu words, vocab %u, dim %u, window %u\n", x.n, bytes / 1e6,
	       (unsigned long long)m->total, m->vec->n, m->vec->dim, o.window);
	printf("count %.3fs vocab %.3fs cooc %.3fs train %.3fs total %.3fs\n", t1 - t0, t2 - t1,
	       t3 - t2, t4 - t3, t4 - t0);
	if (queries && qrels) {
		texts qs = { 0 };
		load_jsonl(&qs, queries, 0);
		em_embedder *e;
		if (em_corpus_new(&e, m))
			return fprintf(stderr, "%s\n", fathom_errmsg()), 1;
		float *dv = embed_all(e, &x), *qv = embed_all(e, &qs);
		printf("nDCG@10 (cosine alone) %.4f\n", ndcg10(&x, &qs, dv, qv, e->dim, qrels));
		free(dv);
		free(qv);
		em_embedder_free(e);
		texts_free(&qs);
	} else {
		em_model_free(m);
	}
	texts_free(&x);
	return 0;
}

/* ---- the words: em_words (ASCII by table) against em_words_ref ---------- */

static int join_word(void *ctx, const char *w, size_t len)
{
	fbuf *b = ctx;
	fbuf_append(b, w, len);
	fbuf_putc(b, '|');
	return b->err;
}

static void words_of(int fast, const char *t, size_t n, fbuf *out)
{
	fbuf_reset(out);
	CHECK_OK(fast ? em_words(t, n, join_word, out) : em_words_ref(t, n, join_word, out));
}

static void test_words_fast(void)
{
	fbuf a, b;
	fbuf_init(&a, 0);
	fbuf_init(&b, 0);
	/* what the header promises, both ways */
	static const struct {
		const char *in, *want;
	} ex[] = {
		{ "read_lines readLines read-lines ReadLines", "read|lines|read|lines|read|lines|read|lines|" },
		{ "HTTPServer utf8 v2 x.y_z", "http|server|utf8|v2|x|y|z|" },
		{ "\xc3\x89tudeCOURTE na\xc3\xafve \xe6\x9d\xb1\xe4\xba\xac", "\xc3\xa9tude|courte|na\xc3\xafve|\xe6\x9d\xb1\xe4\xba\xac|" },
	};
	for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++)
		for (int fast = 0; fast < 2; fast++) {
			words_of(fast, ex[i].in, strlen(ex[i].in), &a);
			fbuf_putc(&a, 0);
			CHECK_STR((const char *)a.data, ex[i].want);
		}
	/* random texts: every ASCII byte, letters of both cases weighted up,
	 * multibyte letters of both cases, a combining mark, a non-letter
	 * symbol, and bytes that are not UTF-8 */
	static const char *const pieces[] = { "\xc3\x89", "\xc3\xa9", "\xce\xa3", "\xcf\x83",
	                                      "\xcc\x81", "\xe2\x82\xac", "\xe6\x9d\xb1", "\xff",
	                                      "\xc3", "\x80" };
	rng_state = 0x77aa55;
	char t[96];
	size_t bad = 0;
	for (int r = 0; r < 50000; r++) {
		size_t n = 0, want = rnd(48);
		while (n < want && n + 4 < sizeof t) {
			const char *p = NULL;
			char one[2] = { 0, 0 };
			switch (rnd(8)) {
			case 0: p = pieces[rnd(FA_ARRAY_LEN(pieces))]; break;
			case 1: case 2: one[0] = (char)('A' + rnd(26)); p = one; break;
			case 3: case 4: one[0] = (char)('a' + rnd(26)); p = one; break;
			default: one[0] = (char)(1 + rnd(127)); p = one; break;
			}
			size_t pl = strlen(p);
			memcpy(t + n, p, pl);
			n += pl;
		}
		words_of(1, t, n, &a);
		words_of(0, t, n, &b);
		bad += a.len != b.len || memcmp(a.data, b.data, a.len) != 0;
	}
	CHECK_EQ(bad, 0);
	fbuf_free(&a);
	fbuf_free(&b);
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--bench") == 0)
		return bench(argc, argv);
	if (argc > 2 && strcmp(argv[1], "--model-out") == 0) {
		/* a small model file: the fuzz target's seed */
		em_model *m = small_model();
		size_t len;
		unsigned char *b = m ? model_bytes(m, &len) : NULL;
		FILE *f = fopen(argv[2], "wb");
		if (!b || !f || fwrite(b, 1, len, f) != len || fclose(f))
			return 1;
		fa_free(b);
		em_model_free(m);
		return 0;
	}
	RUN(test_words_fast);
	RUN(test_synthetic);
	RUN(test_deterministic);
	RUN(test_pairs);
	RUN(test_kernels);
	RUN(test_roundtrip);
	RUN(test_version1);
	RUN(test_corrupt);
	RUN(test_embedder);
	RUN(test_errors);
	if (access(SCIFACT, R_OK) == 0)
		RUN(test_scifact);
	else
		printf("skip test_scifact: %s is absent\n", SCIFACT);
	return TEST_DONE();
}
