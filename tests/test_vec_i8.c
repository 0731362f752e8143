/*
 * test_vec_i8.c — int8 storage of chunk vectors (vector.storage int8,
 * docs/FORMAT.md 5.12), end to end through the public API:
 *
 *   - an int8 index answers semantic searches with the top k of a
 *     reference computed here, independently, over the same int8 rows (each
 *     vector quantised by em_quantize_i8_affine, scored in double against the
 *     float query, times its scale, plus its offset times the query's sum):
 *     the exact path to the rounding of a score,
 *     the graph path (HNSW over the int8 rows) with recall >= 0.9 and every
 *     score it gives the reference's, strict mode's rescoring too;
 *   - float32 and int8 segments in one index, searched together, and merged
 *     (optimize) into the type configured, either way: the section's type
 *     changes, the scores stay each document's (int8 rows scaled back for a
 *     float32 merge), deleted documents stay out, verify passes; and one
 *     segment rewritten by optimize when the type asked changes;
 *   - int8-rescore (element type 3): the same int8 bytes and then the
 *     floats to the bit; the graph is a view over the int8 rows with the
 *     floats to rescore, and every path (exact, graph, strict) gives the
 *     float reference's scores; merged with float32 segments (the float
 *     graph reused); a float row damaged is ECORRUPT naming the chunk;
 *   - a damaged int8 section (behind valid checksums: the segment resealed
 *     and the manifest naming its new footer) is FATHOM_ECORRUPT naming the
 *     file, never a crash: a size that disagrees with the header, a scale
 *     NaN or infinite or an offset infinite (the exact path, the graph's
 *     view, a merge, verify), a bitmap
 *     that disagrees with the count; an unknown element type is
 *     FATHOM_EVERSION, as an older build reports an int8 section.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "embed/embed.h"
#include "fathom.h"
#include "index/index_int.h"
#include "test.h"
#include "util/util.h"
#include "vec/vec.h"
#include "vecmix.h"

#define DIM 24
#define NA 1500          /* a segment with a graph (hnsw.min-vectors 1000) */
#define NB 300           /* one without */
#define NDOC (NA + NB)
#define NQ 40
#define K 10

static float *vecs;      /* NDOC rows */
static float *queries;   /* NQ rows */
static int8_t q8[(size_t)NDOC * DIM];
static float s8[NDOC], o8[NDOC];
static uint8_t as_i8[NDOC];   /* doc d's vector is stored as int8 */
static uint8_t dead[NDOC];    /* doc d deleted */

static int with_vector(uint32_t d)
{
	return d % 53 != 7;
}

/* Docs [from, to) as JSON lines, committed. */
static void put_docs(fathom_index *fx, uint32_t from, uint32_t to)
{
	size_t cap = (size_t)(to - from) * (DIM * 18 + 64) + 1, n = 0;
	char *s = malloc(cap);
	if (!s)
		exit(2);
	for (uint32_t d = from; d < to; d++) {
		n += (size_t)snprintf(s + n, cap - n, "{\"id\":\"d%u\",\"body\":\"w%u shared\"", d, d);
		for (uint32_t k = 0; with_vector(d) && k < DIM; k++)
			n += (size_t)snprintf(s + n, cap - n, "%s%.9g", k ? "," : ",\"vector\":[",
			                      (double)vecs[(size_t)d * DIM + k]);
		n += (size_t)snprintf(s + n, cap - n, "%s}\n", with_vector(d) ? "]" : "");
	}
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	CHECK_OK(fathom_add_jsonl_mem(fx, s, n, "docs", NULL, &st));
	CHECK_OK(fathom_commit(fx));
	free(s);
}

/* The reference score of doc d for query q: the stored row's, in double. */
static double ref_score(uint32_t q, uint32_t d)
{
	const float *qv = queries + (size_t)q * DIM;
	double s = 0;
	for (uint32_t k = 0; k < DIM; k++)
		s += (double)qv[k] * (as_i8[d] ? (double)q8[(size_t)d * DIM + k]
		                               : (double)vecs[(size_t)d * DIM + k]);
	if (!as_i8[d])
		return s;
	double qsum = 0;
	for (uint32_t k = 0; k < DIM; k++)
		qsum += qv[k];
	return s * s8[d] + (double)o8[d] * qsum;
}

typedef struct hit {
	uint32_t doc;
	double score;
} hit;

/* The reference top K for q: every live doc with a vector, best first. */
static void ref_topk(uint32_t q, hit *out)
{
	for (uint32_t i = 0; i < K; i++)
		out[i] = (hit){ UINT32_MAX, -INFINITY };
	for (uint32_t d = 0; d < NDOC; d++) {
		if (!with_vector(d) || dead[d])
			continue;
		hit x = { d, ref_score(q, d) };
		for (uint32_t i = 0; i < K; i++) {
			if (x.score > out[i].score) {
				hit t = out[i];
				out[i] = x;
				x = t;
			}
		}
	}
}

/* The semantic top K for q (exact: FATHOM_VECTOR_EXACT); the count, or -rc. */
static int semantic(fathom_index *fx, uint32_t q, int exact, hit *out)
{
	if (exact)
		setenv("FATHOM_VECTOR_EXACT", "1", 1);
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = FATHOM_MODE_SEMANTIC;
	so.k = K;
	so.query_vector = queries + (size_t)q * DIM;
	so.query_vector_dim = DIM;
	fathom_results *r = NULL;
	int rc = fathom_search(&r, fx, "anything", &so);
	unsetenv("FATHOM_VECTOR_EXACT");
	if (rc)
		return -rc;
	int n = 0;
	for (size_t i = 0; i < fathom_results_count(r) && i < K; i++, n++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		out[i] = (hit){ (uint32_t)strtoul(h->doc_id + 1, NULL, 10), h->score };
	}
	fathom_results_free(r);
	return n;
}

/* Strict mode (the keyword source's candidates rescored on their vectors):
 * every hit with a vector has its reference score as the vector source's;
 * the number of such hits. */
static int strict_scores_ok(fathom_index *fx, uint32_t q)
{
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.mode = FATHOM_MODE_STRICT;
	so.k = K;
	so.query_vector = queries + (size_t)q * DIM;
	so.query_vector_dim = DIM;
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, fx, "shared", &so));
	int n = 0;
	for (size_t i = 0; r && i < fathom_results_count(r); i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		uint32_t d = (uint32_t)strtoul(h->doc_id + 1, NULL, 10);
		for (uint32_t j = 0; j < h->n_sources; j++)
			if (h->sources[j].source == FATHOM_SOURCE_VECTOR) {
				CHECK(d < NDOC && fabs(h->sources[j].score - ref_score(q, d)) < 1e-5);
				n++;
			}
	}
	fathom_results_free(r);
	return n;
}

/* Every query against the reference: the exact path rank for rank (to a
 * score's rounding), the graph path's recall returned. */
static double check_searches(fathom_index *fx)
{
	uint64_t found = 0, bad = 0;
	for (uint32_t q = 0; q < NQ; q++) {
		hit ref[K], e[K], g[K];
		ref_topk(q, ref);
		CHECK_EQ(semantic(fx, q, 1, e), K);
		CHECK_EQ(semantic(fx, q, 0, g), K);
		CHECK(strict_scores_ok(fx, q) > 0);
		for (uint32_t i = 0; i < K; i++) {
			/* rank i holds a doc scoring as the reference's rank i, and
			 * the score given is that doc's */
			bad += fabs(e[i].score - ref[i].score) > 1e-5 ||
			       e[i].doc >= NDOC || fabs(e[i].score - ref_score(q, e[i].doc)) > 1e-5;
			bad += g[i].doc >= NDOC || dead[g[i].doc] || !with_vector(g[i].doc) ||
			       fabs(g[i].score - ref_score(q, g[i].doc)) > 1e-5;
			for (uint32_t j = 0; j < K; j++)
				found += g[i].doc == ref[j].doc;
		}
	}
	CHECK_EQ(bad, 0);
	return (double)found / (NQ * K);
}

/* Segment i's element type (0: no vectors). */
static uint32_t elem_of(fathom_index *fx, size_t i)
{
	ix_vecs v;
	int rc = seg_vectors(ix_segment_at(fx->ix, i), &v);
	return rc ? 0 : v.elem;
}

/* A new index in *dir for external vectors stored as storage, segments of
 * 1,000 vectors or more with a graph; nothing deleted yet. */
static fathom_index *new_index(char **dir, const char *storage)
{
	memset(as_i8, strcmp(storage, "int8") == 0, sizeof as_i8);
	memset(dead, 0, sizeof dead);
	*dir = test_tmpdir("veci8");
	fathom_index *fx = test_open(*dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(fx, "embedder.model", "mix"));
	CHECK_OK(fathom_config_set(fx, "hnsw.min-vectors", "1000"));
	CHECK_OK(fathom_config_set(fx, "vector.storage", storage));
	return fx;
}

static void test_int8_search(void)
{
	char *dir;
	fathom_index *fx = new_index(&dir, "int8");
	CHECK_EQ(fathom_config_set(fx, "vector.storage", "int4"), FATHOM_EINVAL);
	put_docs(fx, 0, NA);
	put_docs(fx, NA, NDOC);
	CHECK_EQ(ix_nsegments(fx->ix), 2);
	CHECK_EQ(elem_of(fx, 0), IX_VEC_I8);
	CHECK_EQ(elem_of(fx, 1), IX_VEC_I8);
	const struct vx_hnsw *g;
	CHECK_OK(seg_graph(ix_segment_at(fx->ix, 0), &g));
	CHECK_EQ(seg_graph(ix_segment_at(fx->ix, 1), &g), FATHOM_ENOTFOUND);
	/* the stored bytes are em_quantize_i8_affine's */
	ix_vecs v;
	CHECK_OK(seg_vectors(ix_segment_at(fx->ix, 1), &v));
	CHECK(v.qrows && v.scales && v.offsets && !v.rows);
	CHECK(memcmp(v.qrows, q8 + (size_t)NA * DIM, (size_t)NB * DIM) == 0);
	CHECK(memcmp(v.scales, s8 + NA, NB * sizeof(float)) == 0);
	CHECK(memcmp(v.offsets, o8 + NA, NB * sizeof(float)) == 0);
	double r = check_searches(fx);
	printf("     graph recall@%d against the int8 reference: %.4f\n", K, r);
	CHECK(r >= 0.9);
	/* int8 against float32: the exact int8 top k against float's */
	memset(as_i8, 0, sizeof as_i8);
	uint64_t same = 0;
	for (uint32_t q = 0; q < NQ; q++) {
		hit ref[K], e[K];
		ref_topk(q, ref);
		CHECK_EQ(semantic(fx, q, 1, e), K);
		for (uint32_t i = 0; i < K; i++)
			for (uint32_t j = 0; j < K; j++)
				same += e[i].doc == ref[j].doc;
	}
	printf("     exact int8 recall@%d against float32: %.4f\n", K, (double)same / (NQ * K));
	CHECK((double)same / (NQ * K) >= 0.95);
	CHECK_OK(fathom_verify(fx));
	fathom_close(fx);
	test_rmrf(dir);
	free(dir);
}

/* Delete every step-th doc, committed. */
static void delete_every(fathom_index *fx, uint32_t step)
{
	for (uint32_t d = 0; d < NDOC; d += step) {
		char id[16];
		snprintf(id, sizeof id, "d%u", d);
		CHECK_OK(fathom_delete_doc(fx, id));
		dead[d] = 1;
	}
	CHECK_OK(fathom_commit(fx));
}

/* A float32 segment and an int8 one, searched together, then merged into
 * the type configured: int8 (to_i8) or float32. */
static void mixed_merge(int to_i8)
{
	char *dir;
	fathom_index *fx = new_index(&dir, "float32");
	put_docs(fx, 0, NA);
	CHECK_OK(fathom_config_set(fx, "vector.storage", "int8"));
	put_docs(fx, NA, NDOC);
	memset(as_i8 + NA, 1, NB);
	CHECK_EQ(ix_nsegments(fx->ix), 2);
	CHECK_EQ(elem_of(fx, 0), IX_VEC_F32);
	CHECK_EQ(elem_of(fx, 1), IX_VEC_I8);
	delete_every(fx, 37);
	CHECK(check_searches(fx) >= 0.9);
	CHECK_OK(fathom_config_set(fx, "vector.storage", to_i8 ? "int8" : "float32"));
	CHECK_OK(fathom_optimize(fx));
	CHECK_EQ(ix_nsegments(fx->ix), 1);
	CHECK_EQ(elem_of(fx, 0), to_i8 ? IX_VEC_I8 : IX_VEC_F32);
	if (to_i8)
		memset(as_i8, 1, sizeof as_i8);
	/* the graph over the live chunks only */
	uint32_t live = 0;
	for (uint32_t d = 0; d < NDOC; d++)
		live += !dead[d];
	const struct vx_hnsw *g;
	CHECK_OK(seg_graph(ix_segment_at(fx->ix, 0), &g));
	CHECK_EQ(g ? vx_hnsw_count(g) : 0, live);
	double r = check_searches(fx);
	printf("     merged into %s: graph recall@%d %.4f\n", to_i8 ? "int8" : "float32", K, r);
	CHECK(r >= 0.9);
	CHECK_OK(fathom_verify(fx));
	/* optimize again: a segment already of the type is left as it is */
	uint32_t id = ix_segment_at(fx->ix, 0)->id;
	CHECK_OK(fathom_optimize(fx));
	CHECK_EQ(ix_segment_at(fx->ix, 0)->id, id);
	/* the other type asked: optimize rewrites the one segment; every
	 * vector has been int8 once or is now (int8 rows scaled back and
	 * quantised again give the same values) */
	CHECK_OK(fathom_config_set(fx, "vector.storage", to_i8 ? "float32" : "int8"));
	CHECK_OK(fathom_optimize(fx));
	CHECK_EQ(elem_of(fx, 0), to_i8 ? IX_VEC_F32 : IX_VEC_I8);
	memset(as_i8, 1, sizeof as_i8);
	CHECK(check_searches(fx) >= 0.9);
	CHECK_OK(fathom_verify(fx));
	fathom_close(fx);
	test_rmrf(dir);
	free(dir);
}

static void test_mixed_merge(void)
{
	mixed_merge(1);
	mixed_merge(0);
}

/* ---- damage ------------------------------------------------------------------------- */

/* An int8 index of docs [0, n) in one segment, its file read into *img. */
static char *damaged_base(uint32_t n, unsigned char **img, size_t *size, uint64_t *off,
                          uint64_t *len)
{
	char *dir;
	fathom_index *fx = new_index(&dir, "int8");
	put_docs(fx, 0, n);
	fathom_close(fx);
	char seg[1024];
	snprintf(seg, sizeof seg, "%s/seg-00000001.fseg", dir);
	*img = test_read_file(seg, size);
	CHECK(test_find_section(*img, *size, "VECS", off, len));
	return dir;
}

/* Write img back resealed, and the manifest naming its new footer, so only
 * the VECS checks can catch the damage. */
static void reseal_into(const char *dir, unsigned char *img, size_t size)
{
	char seg[1024];
	snprintf(seg, sizeof seg, "%s/seg-00000001.fseg", dir);
	ix_seg_reseal(img, size);
	test_write_file(seg, img, size);
	ix_segment *s = NULL;
	CHECK_OK(seg_open_file(&s, seg));
	ix_manifest m;
	CHECK_OK(ix_manifest_read(&m, dir));
	CHECK_EQ(m.nsegs, 1);
	if (s && m.nsegs == 1)
		m.segs[0].footer_crc = s->footer_crc;
	CHECK_OK(ix_manifest_write(&m, dir, NULL));
	ix_manifest_free(&m);
	seg_close(s);
}

/* The damage seen: a semantic search (exact) and verify fail with code,
 * the message naming the segment and VECS or what. */
static void expect_damage(const char *dir, int exact, int code, const char *what)
{
	fathom_index *fx = test_open(dir, 0);
	hit h[K];
	CHECK_EQ(semantic(fx, 0, exact, h), -code);
	CHECK(strstr(fathom_errmsg(), "seg-00000001.fseg") != NULL);
	CHECK(strstr(fathom_errmsg(), what) != NULL);
	if (!strstr(fathom_errmsg(), what))
		printf("     message: %s\n", fathom_errmsg());
	CHECK_EQ(fathom_verify(fx), code);
	fathom_close(fx);
}

static void set_f32(unsigned char *p, float f)
{
	memcpy(p, &f, 4);
}

/* Each damage, and what reports it: the path searched (exact or the
 * graph's), the code, and words of the message. */
enum { BAD_SIZE, BAD_NAN, BAD_INF, BAD_OFFSET, BAD_NAN_GRAPH, BAD_BITMAP, BAD_TYPE, BAD_CRC,
       NCASE };
static const struct {
	int exact, code;
	const char *what;
} seen[NCASE] = {
	[BAD_SIZE] = { 1, FATHOM_ECORRUPT, "'VECS': its size does not match" },
	[BAD_NAN] = { 1, FATHOM_ECORRUPT, "chunk 1" },
	[BAD_INF] = { 1, FATHOM_ECORRUPT, "chunk 1" },
	[BAD_OFFSET] = { 1, FATHOM_ECORRUPT, "chunk 1" },
	[BAD_NAN_GRAPH] = { 0, FATHOM_ECORRUPT, "int8 row 1 has scale" },
	[BAD_BITMAP] = { 1, FATHOM_ECORRUPT, "bitmap disagrees" },
	/* what an older build says of an int8 section */
	[BAD_TYPE] = { 1, FATHOM_EVERSION, "element type 4 unknown" },
	[BAD_CRC] = { 1, FATHOM_ECORRUPT, "seg-00000001.fseg" },
};

static void test_damaged_i8(void)
{
	for (int c = 0; c < NCASE; c++) {
		uint32_t n = c == BAD_NAN_GRAPH ? NA : NB;
		unsigned char *img;
		size_t size;
		uint64_t off = 0, len = 0;
		char *dir = damaged_base(n, &img, &size, &off, &len);
		unsigned char *h = img + off;
		uint64_t bb = ((uint64_t)(n + 7) / 8 + 63) / 64 * 64;
		unsigned char *scales = h + 64 + bb;
		/* chunk 1 has a vector (doc 1): its scale */
		CHECK(with_vector(1) && (h[64] & 2));
		if (c == BAD_SIZE)
			memcpy(h + 4, &(uint32_t){ DIM + 1 }, 4);   /* a dimension the rows lack */
		else if (c == BAD_NAN || c == BAD_NAN_GRAPH)
			set_f32(scales + 4, NAN);
		else if (c == BAD_INF)
			set_f32(scales + 4, INFINITY);
		else if (c == BAD_OFFSET)
			set_f32(scales + (n * 4 + 63) / 64 * 64 + 4, -INFINITY);   /* the offsets follow */
		else if (c == BAD_BITMAP)
			h[64] &= (unsigned char)~2u;
		else if (c == BAD_TYPE)
			memcpy(h + 12, &(uint32_t){ 4 }, 4);
		else
			scales[4] ^= 0x40;
		if (c == BAD_CRC) {
			/* not resealed: the page CRC catches it */
			char seg[1024];
			snprintf(seg, sizeof seg, "%s/seg-00000001.fseg", dir);
			test_write_file(seg, img, size);
		} else {
			reseal_into(dir, img, size);
		}
		expect_damage(dir, seen[c].exact, seen[c].code, seen[c].what);
		if (c == BAD_NAN || c == BAD_INF || c == BAD_OFFSET) {
			/* a merge reading the row (rewriting it as float32) */
			fathom_index *fx = test_open(dir, FATHOM_OPEN_WRITE);
			CHECK_OK(fathom_config_set(fx, "vector.storage", "float32"));
			CHECK_EQ(fathom_optimize(fx), FATHOM_ECORRUPT);
			CHECK(strstr(fathom_errmsg(), "seg-00000001.fseg") != NULL);
			CHECK(strstr(fathom_errmsg(), "chunk 1's scale is") != NULL);
			fathom_close(fx);
		}
		free(img);
		test_rmrf(dir);
		free(dir);
	}
}

/* int8-rescore: int8 rows walked, float32 rows kept and scored. */
static void test_int8_rescore(void)
{
	char *dir;
	fathom_index *fx = new_index(&dir, "float32");
	put_docs(fx, 0, NA);
	CHECK_OK(fathom_config_set(fx, "vector.storage", "int8-rescore"));
	put_docs(fx, NA, NDOC);
	CHECK_EQ(elem_of(fx, 0), IX_VEC_F32);
	CHECK_EQ(elem_of(fx, 1), IX_VEC_I8_RESCORE);
	/* what a segment holds: em_quantize_i8_affine's bytes and the floats */
	ix_vecs v;
	CHECK_OK(seg_vectors(ix_segment_at(fx->ix, 1), &v));
	CHECK(v.qrows && v.scales && v.offsets && v.rows);
	CHECK(memcmp(v.qrows, q8 + (size_t)NA * DIM, (size_t)NB * DIM) == 0);
	CHECK(memcmp(v.scales, s8 + NA, NB * sizeof(float)) == 0);
	CHECK(memcmp(v.offsets, o8 + NA, NB * sizeof(float)) == 0);
	for (uint32_t d = NA; d < NDOC; d++)
		CHECK(memcmp(v.rows + (size_t)(d - NA) * DIM, vecs + (size_t)d * DIM,
		             with_vector(d) ? DIM * sizeof(float) : 0) == 0);
	CHECK((uintptr_t)v.rows % 64 == 0 && (uintptr_t)v.qrows % 64 == 0);
	delete_every(fx, 41);
	/* one segment of int8-rescore, with a graph: the scores are the floats' */
	CHECK_OK(fathom_optimize(fx));
	CHECK_EQ(ix_nsegments(fx->ix), 1);
	CHECK_EQ(elem_of(fx, 0), IX_VEC_I8_RESCORE);
	CHECK_OK(seg_vectors(ix_segment_at(fx->ix, 0), &v));
	const struct vx_hnsw *g;
	CHECK_OK(seg_graph(ix_segment_at(fx->ix, 0), &g));
	CHECK(g && vx_hnsw_vectors(g) == v.rows);
	double r = check_searches(fx);
	printf("     int8-rescore: graph recall@%d against float32 %.4f\n", K, r);
	CHECK(r >= 0.9);
	CHECK_OK(fathom_verify(fx));
	fathom_close(fx);
	test_rmrf(dir);
	free(dir);

	/* a float row damaged behind valid checksums: exact search and verify
	 * say which chunk */
	fx = new_index(&dir, "int8-rescore");
	put_docs(fx, 0, NB);
	fathom_close(fx);
	char seg[1024];
	snprintf(seg, sizeof seg, "%s/seg-00000001.fseg", dir);
	size_t size;
	uint64_t off = 0, len = 0;
	unsigned char *img = test_read_file(seg, &size);
	CHECK(img && test_find_section(img, size, "VECS", &off, &len));
	CHECK(len >= (uint64_t)NB * DIM * 4 + 64);
	if (img && len >= (uint64_t)NB * DIM * 4 + 64) {
		/* the floats are the section's last bytes; chunk 1's first value */
		set_f32(img + off + len - (uint64_t)NB * DIM * 4 + DIM * 4, NAN);
		reseal_into(dir, img, size);
		expect_damage(dir, 1, FATHOM_ECORRUPT, "chunk 1");
	}
	free(img);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	uint64_t seed = 0x5eed1234abcdull;
	vecs = vm_mixture(&seed, NDOC, DIM, 60, 1.0);
	queries = vm_mixture(&seed, NQ, DIM, 60, 1.0);
	if (!vecs || !queries)
		return 2;
	for (uint32_t d = 0; d < NDOC; d++)
		s8[d] = with_vector(d) ? em_quantize_i8_affine(vecs + (size_t)d * DIM, DIM,
		                                               q8 + (size_t)d * DIM, &o8[d])
		                       : 0.0f;
	RUN(test_int8_search);
	RUN(test_mixed_merge);
	RUN(test_damaged_i8);
	RUN(test_int8_rescore);
	free(vecs);
	free(queries);
	return TEST_DONE();
}
