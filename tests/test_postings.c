/*
 * test_postings.c — the postings codec and cursor against plain arrays:
 * block round trips (tf up to 65535, gaps up to 2^31), then segments written
 * with random postings read back through next/advance/shallow/positions,
 * and every block bound checked to be a true upper bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "index/index_int.h"
#include "test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

/* A term frequency drawn from a mix of shapes. */
static uint16_t rnd_tf(int shape)
{
	switch (shape) {
	case 0: return 1;
	case 1: return (uint16_t)(1 + rnd_below(3));
	case 2: return (uint16_t)rnd_below(65536);
	default: return rnd_below(4) == 0 ? (uint16_t)rnd_below(65536) : (uint16_t)rnd_below(2);
	}
}

static void test_block_roundtrip(void)
{
	for (int iter = 0; iter < 3000; iter++) {
		ix_block_in b;
		memset(&b, 0, sizeof b);
		b.n = 1 + rnd_below(IX_BLOCK);
		b.prev_doc = rnd_below(2) ? UINT32_MAX : rnd_below(1000);
		uint64_t d = b.prev_doc == UINT32_MAX ? 0 : (uint64_t)b.prev_doc + 1;
		int big = iter % 5 == 0;
		for (uint32_t i = 0; i < b.n; i++) {
			uint64_t gap = big && rnd_below(40) == 0 ? rnd_below(1u << 31) : rnd_below(big ? 5000 : 8);
			if (d + gap >= IX_END - IX_BLOCK)
				gap = 0;
			d += gap;
			b.docs[i] = (uint32_t)d;
			d++;
		}
		int shape = (int)rnd_below(4);
		for (uint32_t i = 0; i < b.n; i++) {
			unsigned any = 0;
			for (int f = 0; f < FATHOM_NFIELDS; f++) {
				b.tf[f][i] = (f == FATHOM_FIELD_BODY || rnd_below(3) == 0) ? rnd_tf(shape) : 0;
				any |= b.tf[f][i];
			}
			if (!any)
				b.tf[FATHOM_FIELD_BODY][i] = 1;
		}
		fbuf out;
		fbuf_init(&out, 0);
		CHECK_OK(ix_block_encode(&out, &b));
		uint32_t docs[IX_BLOCK];
		uint16_t tf[FATHOM_NFIELDS][IX_BLOCK];
		uint8_t mask = 0x1f;
		int rc = ix_block_decode(out.data, out.data + out.len, out.data + out.len, b.n, b.prev_doc, docs, tf, &mask);
		CHECK_EQ(rc, 0);
		int bad = 0;
		for (uint32_t i = 0; i < b.n; i++) {
			bad |= docs[i] != b.docs[i];
			for (int f = 0; f < FATHOM_NFIELDS; f++)
				bad |= tf[f][i] != b.tf[f][i];
		}
		CHECK(!bad);
		/* A truncated block must be refused, never overread. */
		if (out.len > 3)
			CHECK_EQ(ix_block_decode(out.data, out.data + out.len - 1, out.data + out.len - 1, b.n, b.prev_doc, docs, tf,
			                         &mask), FATHOM_ECORRUPT);
		fbuf_free(&out);
		if (bad)
			break;
	}
}

static void test_block_edges(void)
{
	/* One posting, the biggest doc id that is not IX_END, tf 65535 everywhere. */
	ix_block_in b;
	memset(&b, 0, sizeof b);
	b.n = 1;
	b.prev_doc = UINT32_MAX;
	b.docs[0] = IX_END - 1;
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		b.tf[f][0] = 65535;
	fbuf out;
	fbuf_init(&out, 0);
	CHECK_OK(ix_block_encode(&out, &b));
	uint32_t docs[IX_BLOCK];
	uint16_t tf[FATHOM_NFIELDS][IX_BLOCK];
	uint8_t mask = 0x1f;
	CHECK_OK(ix_block_decode(out.data, out.data + out.len, out.data + out.len, 1, UINT32_MAX, docs, tf, &mask));
	CHECK_EQ(docs[0], IX_END - 1);
	CHECK_EQ(tf[0][0], 65535);
	CHECK_EQ(mask, 31);
	/* The same bytes after a previous doc would overflow: refused. */
	CHECK_EQ(ix_block_decode(out.data, out.data + out.len, out.data + out.len, 1, 5, docs, tf, &mask), FATHOM_ECORRUPT);
	fbuf_free(&out);
	/* Out-of-order input is refused by the encoder. */
	b.n = 2;
	b.docs[0] = 10;
	b.docs[1] = 10;
	b.tf[0][1] = 1;
	fbuf_init(&out, 0);
	CHECK(ix_block_encode(&out, &b) != 0);
	fbuf_free(&out);
}

/* ---- cursor tests over written segments ------------------------------------ */

typedef struct ref_posting {
	uint32_t doc;
	uint16_t tf[FATHOM_NFIELDS];
	uint32_t *pos[FATHOM_NFIELDS];
} ref_posting;

typedef struct ref_term {
	char name[32];
	ref_posting *p;
	uint32_t n;
} ref_term;

#define NCHUNKS 40000
static uint16_t chunk_len[NCHUNKS][FATHOM_NFIELDS];

static void make_term(ref_term *t, const char *name, uint32_t df, int shape)
{
	snprintf(t->name, sizeof t->name, "%s", name);
	t->p = calloc(df, sizeof *t->p);
	/* Pick df distinct chunks, sorted: a random walk with the right density. */
	uint32_t n = 0;
	uint64_t span = NCHUNKS;
	for (uint32_t c = 0; c < span && n < df; c++) {
		uint64_t left = span - c, need = df - n;
		if (rnd() % left < need)
			t->p[n++].doc = c;
	}
	t->n = n;
	for (uint32_t i = 0; i < n; i++) {
		ref_posting *p = &t->p[i];
		unsigned any = 0;
		for (int f = 0; f < FATHOM_NFIELDS; f++) {
			uint16_t tf = (f == FATHOM_FIELD_BODY || rnd_below(4) == 0) ? rnd_tf(shape) : 0;
			/* Full-range tfs on short lists only, to keep the test quick. */
			if (df > 129 && tf > 200)
				tf = (uint16_t)(tf % 200);
			p->tf[f] = tf;
			any |= tf;
		}
		if (!any)
			p->tf[FATHOM_FIELD_BODY] = 1;
		for (int f = 0; f < FATHOM_NFIELDS; f++) {
			p->pos[f] = malloc((p->tf[f] + 1) * sizeof(uint32_t));
			uint32_t at = rnd_below(rnd_below(8) == 0 ? 100000 : 300);
			for (uint32_t k = 0; k < p->tf[f]; k++) {
				p->pos[f][k] = at;
				at += rnd_below(5) == 0 ? rnd_below(70000) : rnd_below(4);
			}
		}
	}
}

static void free_term(ref_term *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			free(t->p[i].pos[f]);
	free(t->p);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const ref_term *)a)->name, ((const ref_term *)b)->name);
}

static ix_segment *write_segment(const char *path, ref_term *terms, size_t nterms)
{
	ix_segw *w;
	if (ix_segw_new(&w, 7))
		return NULL;
	ix_doc_rec rec = { 10, 0, 0, 0, 0, 0, 0, 0, 0 };
	const char strs[] = "doc0\0p\0t\0u\0text";
	CHECK_OK(ix_segw_add_doc(w, &rec, strs, sizeof strs, "hello", 5, NULL, 0));
	for (uint32_t c = 0; c < NCHUNKS; c++) {
		uint32_t fl[FATHOM_NFIELDS];
		for (int f = 0; f < FATHOM_NFIELDS; f++) {
			chunk_len[c][f] = (uint16_t)(1 + rnd_below(f == FATHOM_FIELD_BODY ? 60000 : 20));
			fl[f] = chunk_len[c][f];
		}
		CHECK_OK(ix_segw_add_chunk(w, 1, 1, 0, 5, NULL, 0, fl));
	}
	CHECK_OK(ix_segw_open_file(w, path));
	qsort(terms, nterms, sizeof *terms, name_cmp);
	for (size_t t = 0; t < nterms; t++) {
		CHECK_OK(ix_segw_term_begin(w, terms[t].name, strlen(terms[t].name)));
		for (uint32_t i = 0; i < terms[t].n; i++) {
			const ref_posting *p = &terms[t].p[i];
			const uint32_t *pos[FATHOM_NFIELDS];
			for (int f = 0; f < FATHOM_NFIELDS; f++)
				pos[f] = p->pos[f];
			CHECK_OK(ix_segw_posting(w, p->doc, p->tf, pos));
		}
		CHECK_OK(ix_segw_term_end(w));
	}
	uint64_t len;
	CHECK_OK(ix_segw_finish(w, &len));
	ix_segw_free(w);
	ix_segment *s = NULL;
	CHECK_OK(seg_open_file(&s, path));
	return s;
}

/* Reference: index of the first posting with doc >= target. */
static uint32_t lower_bound(const ref_term *t, uint32_t target)
{
	uint32_t lo = 0, hi = t->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (t->p[mid].doc < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int same_posting(ix_postings *p, const ref_posting *r, uint32_t *buf)
{
	if (p->doc != r->doc)
		return 0;
	uint16_t tf[FATHOM_NFIELDS];
	ix_post_tf(p, tf);
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		if (tf[f] != r->tf[f])
			return 0;
		uint32_t n = 0;
		if (ix_post_positions(p, f, buf, IX_MAX_TF, &n) || n != tf[f])
			return 0;
		for (uint32_t k = 0; k < n; k++)
			if (buf[k] != r->pos[f][k])
				return 0;
	}
	return 1;
}

static void dump_posting(ix_postings *p, const ref_posting *r, uint32_t *buf)
{
	uint16_t tf[FATHOM_NFIELDS];
	ix_post_tf(p, tf);
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		uint32_t n = 0;
		int rc = ix_post_positions(p, f, buf, IX_MAX_TF, &n);
		fprintf(stderr, "  f%d tf %u/%u rc %d n %u:", f, tf[f], r->tf[f], rc, n);
		for (uint32_t k = 0; k < n && k < 6; k++)
			fprintf(stderr, " %u/%u", buf[k], r->pos[f][k]);
		fprintf(stderr, "\n");
	}
}

static int bound_holds(const ix_bound *b, const ref_posting *r)
{
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		if (r->tf[f] && (r->tf[f] > b->max_tf[f] || chunk_len[r->doc][f] < b->min_len[f]))
			return 0;
	return 1;
}

static void test_cursor(void)
{
	static const uint32_t dfs[] = { 1, 2, 127, 128, 129, 255, 256, 257, 1000, 5000, 39000, 40000 };
	enum { NT = sizeof dfs / sizeof dfs[0] * 2 };
	ref_term terms[NT];
	for (size_t i = 0; i < NT; i++) {
		char name[32];
		snprintf(name, sizeof name, "t%02zu_%u", i, dfs[i % (NT / 2)]);
		make_term(&terms[i], name, dfs[i % (NT / 2)], (int)(i % 4));
	}
	char *dir = test_tmpdir("post");
	char path[600];
	snprintf(path, sizeof path, "%s/seg.fseg", dir);
	ix_segment *s = write_segment(path, terms, NT);
	CHECK(s != NULL);
	if (!s)
		return;
	uint32_t *buf = malloc(IX_MAX_TF * sizeof(uint32_t));
	ix_postings *p = malloc(sizeof *p);
	for (size_t t = 0; t < NT; t++) {
		const ref_term *rt = &terms[t];
		ix_term_info ti;
		CHECK_OK(seg_term(s, rt->name, strlen(rt->name), &ti));
		CHECK_EQ(ti.df, rt->n);
		/* The whole list with next(), bounds checked on the way. */
		CHECK_OK(ix_post_open(p, s, &ti));
		int bad = 0;
		for (uint32_t i = 0; i < rt->n; i++) {
			if (!same_posting(p, &rt->p[i], buf) || !bound_holds(ix_post_block_bound(p), &rt->p[i]) ||
			    !bound_holds(&ti.bound, &rt->p[i]) || ix_post_block_last(p) < p->doc) {
				bad = 1;
				break;
			}
			CHECK_OK(ix_post_next(p));
		}
		CHECK(!bad);
		CHECK_EQ(p->doc, IX_END);

		/* advance() to increasing random targets. */
		for (int round = 0; round < 3; round++) {
			CHECK_OK(ix_post_open(p, s, &ti));
			uint32_t target = 0;
			for (;;) {
				target += 1 + rnd_below(round == 0 ? 50 : round == 1 ? 2000 : 20000);
				uint32_t want = lower_bound(rt, target);
				CHECK_OK(ix_post_advance(p, target));
				if (want == rt->n) {
					CHECK_EQ(p->doc, IX_END);
					break;
				}
				if (!same_posting(p, &rt->p[want], buf)) {
					fprintf(stderr, "advance: term %s target %u want doc %u got %u (%s)\n", rt->name,
					        target, rt->p[want].doc, p->doc, fathom_errmsg());
					fprintf(stderr, "  i %u n %u pos_i %u idx %llu total %llu bits %u exc_left %llu have %u exc_idx %llu from %llu\n", p->i, p->n, p->pos_i, (unsigned long long)p->pos_idx, (unsigned long long)p->pos_total, p->pos_bits, (unsigned long long)p->exc_left, p->exc_have, (unsigned long long)p->exc_idx, (unsigned long long)p->exc_from);
					dump_posting(p, &rt->p[want], buf);
					p->pos_block = UINT32_MAX;
					dump_posting(p, &rt->p[want], buf);
					CHECK(0);
					break;
				}
				/* Sometimes walk on with next(). */
				if (rnd_below(3) == 0 && want + 1 < rt->n) {
					CHECK_OK(ix_post_next(p));
					CHECK_EQ(p->doc, rt->p[want + 1].doc);
					target = p->doc;
				}
			}
		}

		/* shallow() then advance(), as block-max WAND uses them. */
		CHECK_OK(ix_post_open(p, s, &ti));
		uint32_t target = 0;
		for (int steps = 0; steps < 400; steps++) {
			target += rnd_below(300);
			uint32_t want = lower_bound(rt, target);
			uint32_t last = ix_post_shallow(p, target);
			if (want == rt->n) {
				CHECK_EQ(last, IX_END);
				break;
			}
			/* The block found must hold the answer, and its bound must
			 * cover every posting of it. */
			CHECK(last >= rt->p[want].doc);
			const ix_bound *bb = ix_post_block_bound(p);
			for (uint32_t i = want; i < rt->n && rt->p[i].doc <= last; i++)
				if (!bound_holds(bb, &rt->p[i])) {
					fprintf(stderr, "term %s df %u target %u want %u last %u doc %u block %u/%u decoded %u\n",
					        rt->name, rt->n, target, rt->p[want].doc, last, rt->p[i].doc, p->block,
					        p->ti.n_blocks, p->block_decoded);
					CHECK(0);
					break;
				}
			if (rnd_below(2)) {
				/* Skip the block without decoding it. */
				target = last + 1;
				continue;
			}
			CHECK_OK(ix_post_advance(p, target));
			CHECK_EQ(p->doc, rt->p[want].doc);
			CHECK(ix_post_block_last(p) >= p->doc);
		}
		/* shallow() far ahead, then advance() to a nearer target. */
		CHECK_OK(ix_post_open(p, s, &ti));
		if (rt->n > 2) {
			uint32_t far = rt->p[rt->n - 1].doc, near = rt->p[rt->n / 2].doc;
			ix_post_shallow(p, far);
			CHECK_OK(ix_post_advance(p, near));
			CHECK_EQ(p->doc, near);
			CHECK(ix_post_block_last(p) >= near);
		}
	}
	/* Unknown terms. */
	ix_term_info ti;
	CHECK_EQ(seg_term(s, "zzz", 3, &ti), FATHOM_ENOTFOUND);
	CHECK_EQ(seg_term(s, "a", 1, &ti), FATHOM_ENOTFOUND);
	CHECK_EQ(seg_term(s, "t00", 3, &ti), FATHOM_ENOTFOUND);
	CHECK_OK(seg_verify(s));
	free(p);
	free(buf);
	seg_close(s);
	for (size_t i = 0; i < NT; i++)
		free_term(&terms[i]);
	test_rmrf(dir);
	free(dir);
}

static int slow_build(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return 1;
#endif
#endif
	return getenv("FATHOM_SANITIZE") != NULL;
}

/* Decoding speed: the cursor over a long list, in ns per block. */
static void test_decode_speed(void)
{
	ref_term t;
	make_term(&t, "speed", 39000, 1);
	char *dir = test_tmpdir("postspeed");
	char path[600];
	snprintf(path, sizeof path, "%s/seg.fseg", dir);
	ix_segment *s = write_segment(path, &t, 1);
	CHECK(s != NULL);
	if (!s)
		return;
	ix_term_info ti;
	CHECK_OK(seg_term(s, "speed", 5, &ti));
	ix_postings *p = malloc(sizeof *p);
	uint64_t sum = 0;
	int reps = 200;
	double t0 = fa_now();
	for (int r = 0; r < reps; r++) {
		ix_post_open(p, s, &ti);
		while (p->doc != IX_END) {
			sum += p->doc + p->tf[FATHOM_FIELD_BODY][p->i];
			ix_post_next(p);
		}
	}
	double dt = fa_now() - t0;
	double blocks = (double)reps * ti.n_blocks;
	printf("     decode: %.0f ns per block of 128 (%.2f ns per posting), sum %llu\n",
	       dt / blocks * 1e9, dt / blocks * 1e9 / 128, (unsigned long long)sum);
	/* Generous (machines are shared); sanitizer builds are not timed. */
	if (!slow_build())
		CHECK(dt / blocks < 5e-6);
	free(p);
	seg_close(s);
	free_term(&t);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	RUN(test_block_roundtrip);
	RUN(test_block_edges);
	RUN(test_cursor);
	RUN(test_decode_speed);
	return TEST_DONE();
}
