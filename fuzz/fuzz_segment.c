/*
 * fuzz_segment.c — treats the input as a segment file and reads it every
 * way the index does: open, dictionary iteration and lookups, postings
 * cursors (next, advance, shallow, positions), chunks, docs, document text,
 * key lookups, the vectors and their HNSW graph (a search over it) and the
 * full verify. It must never crash.
 *
 * Random bytes almost never pass the page checksums, so each input is also
 * read a second time "resealed": its page CRC table, the table's CRC, (format
 * 7) its section and directory CRCs, and the footer CRC recomputed as a
 * writer would, so the mutations reach the decoders behind the checksums.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "index/index_int.h"
#include "vec/vec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fz_ctx {
	ix_segment *s;
	ix_postings p;
	uint32_t pos[256];
	unsigned terms;
} fz_ctx;

static int visit_term(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	fz_ctx *c = ctx;
	if (++c->terms > 2000)
		return 1;
	ix_term_info again;
	seg_term(c->s, term, len, &again);
	if (ix_post_open(&c->p, c->s, ti))
		return 0;
	unsigned steps = 0;
	while (c->p.doc != IX_END && steps++ < 5000) {
		uint16_t tf[FATHOM_NFIELDS];
		uint32_t n;
		ix_post_tf(&c->p, tf);
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			if (ix_post_positions(&c->p, f, c->pos, 256, &n))
				return 0;
		(void)ix_post_block_bound(&c->p);
		int rc;
		if (steps % 3 == 0) {
			uint32_t last = ix_post_shallow(&c->p, c->p.doc + 7);
			rc = ix_post_advance(&c->p, last == IX_END ? c->p.doc + 1 : c->p.doc + 3);
		} else {
			rc = ix_post_next(&c->p);
		}
		if (rc)
			return 0;
	}
	return 0;
}

static void exercise(const uint8_t *data, size_t size)
{
	ix_segment *s;
	if (seg_open_mem(&s, data, size, "fuzz.fseg"))
		return;
	fz_ctx *c = malloc(sizeof *c);
	if (!c) {
		seg_close(s);
		return;
	}
	memset(c, 0, sizeof *c);
	c->s = s;
	seg_terms(s, NULL, 0, visit_term, c);
	c->terms = 0;
	seg_terms(s, "a", 1, visit_term, c);
	ix_term_info ti;
	seg_term(s, "kernel", 6, &ti);
	seg_term(s, "zzzz", 4, &ti);
	fbuf b;
	fbuf_init(&b, 1u << 20);
	for (uint32_t d = 0; d < seg_ndocs(s) && d < 200; d++) {
		ix_doc_info di;
		if (seg_doc(s, d, &di))
			continue;
		uint32_t found;
		seg_find_doc(s, di.key, &found);
		ix_doc_meta(&di, "source");
		fbuf_reset(&b);
		seg_doc_text(s, d, 0, di.text_len, &b);
		fbuf_reset(&b);
		seg_doc_text(s, d, di.text_len / 2, 100, &b);
	}
	fbuf_free(&b);
	for (uint32_t k = 0; k < seg_nchunks(s) && k < 500; k++) {
		ix_chunk_info ci;
		seg_chunk(s, k, &ci);
	}
	ix_vecs v;
	const vx_hnsw *g;
	if (seg_vectors(s, &v) == 0 && v.count) {
		/* row 0 as the query (an int8 row scaled back), scored against
		 * every row as the exact path does, then the graph's walk */
		float *q = malloc((size_t)v.dim * sizeof *q);
		if (q) {
			const float *row = ix_vecs_row(&v, 0, q);
			if (row != q)
				memcpy(q, row, (size_t)v.dim * sizeof *q);
			for (uint32_t k = 0; k < v.count && k < 500; k++)
				(void)ix_vecs_score(&v, q, em_sum(q, v.dim), k);
			if (seg_graph(s, &g) == 0) {
				vx_hit hits[5];
				uint32_t nh;
				vx_hnsw_search(g, q, 5, 0, NULL, hits, &nh);
			}
			free(q);
		}
		seg_vectors_verify(s);
	}
	seg_verify(s);
	free(c);
	seg_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	exercise(data, size);
	if (size < IX_PREAMBLE_SIZE + IX_FOOTER_SIZE || size > (64u << 20))
		return 0;
	uint8_t *copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	ix_seg_reseal(copy, size);
	exercise(copy, size);
	free(copy);
	return 0;
}
