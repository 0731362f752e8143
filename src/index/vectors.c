/*
 * vectors.c — the VECS section: one embedding per chunk of a segment
 * (docs/FORMAT.md 5.12).
 *
 *   0    4  u32 version (1)
 *   4    4  u32 dim (1..IX_VEC_MAX_DIM)
 *   8    4  u32 count: the segment's nchunks
 *   12   4  u32 element: 1 float32, 2 int8 with a float32 scale and offset
 *           per row, 3 the same int8 and then the float32 rows
 *   16   8  u64 embedder fingerprint: fa_hash64 of the embedder's ident
 *   24   4  u32 present: chunks with a vector
 *   28   36 reserved (0)
 *   64   B  bitmap, bit i (byte i / 8, bit i % 8) set when chunk i has a
 *           vector; B = ceil(count / 8) rounded up to a multiple of 64
 *   float32 (element 1):
 *   64+B    count rows of dim little-endian float32, row i chunk i's: a
 *           unit vector when its bit is set, zeros when not
 *   int8 (element 2):
 *   64+B    S: count little-endian float32 scales, then zeros to a
 *           multiple of 64 bytes (S = round64(4 count)); scale i finite and
 *           not negative, 0 when bit i is not set
 *   64+B+S  S: count little-endian float32 offsets, then zeros; offset i
 *           finite, 0 when bit i is not set
 *   64+B+2S count rows of dim int8 (-127..127), row i ~ offset i + its
 *           values times scale i (em_quantize_i8_affine of the unit vector),
 *           zeros when bit i is not set
 *   int8 and float32 (element 3, `vector.storage int8-rescore`):
 *   64+B         the scales, the offsets and the int8 rows of element 2
 *   64+B+2S+R    the float32 rows of element 1 (R = round64(count dim))
 *           The graph is walked on the int8 rows and its beam scored again
 *           on the floats; the exact paths score the floats.
 *
 * The writer starts the section at a file offset that is a multiple of 64
 * (padding before it is covered by the page CRCs like any byte), so the
 * rows can be read in place as floats (and the scales, the offsets and the
 * int8 rows start at multiples of 64 too). The writer keeps float rows
 * whatever it stores, and quantises them when it encodes an int8 section,
 * so a flush builds the graph on the floats. A reader checks the header against the segment
 * (count = nchunks, the size exact, the bitmap's count equal to present),
 * and the pages the section spans, once, before the first read. Values are
 * checked for what a search needs when scored: the score finite (a NaN or
 * infinite scale or value makes it not; the graph's view checks every
 * scale at once); seg_vectors_verify checks everything.
 */
#include <float.h>
#include <math.h>

#include "embed/embed.h"
#include "index/index_int.h"
#include "vec/vec.h"

#define VEC_HDR 64u

static uint64_t bitmap_bytes(uint32_t count)
{
	uint64_t b = ((uint64_t)count + 7) / 8;
	return (b + 63) / 64 * 64;
}

/* int8: the bytes of the scales (and of the offsets), padded so what
 * follows starts at a multiple of 64 */
static uint64_t scale_bytes(uint32_t count)
{
	return ((uint64_t)count * 4 + 63) / 64 * 64;
}

/* int8 (types 2 and 3): the scales, the offsets and the int8 rows, then
 * zeros to a multiple of 64 (the float rows of type 3 follow) */
static uint64_t i8_bytes(uint32_t count, uint32_t dim)
{
	return (2 * scale_bytes(count) + (uint64_t)count * dim + 63) / 64 * 64;
}

/* The section's exact length (count and dim within their u32 ranges: no
 * overflow in 64 bits). Type 2 ends with its last int8 row, unpadded. */
static uint64_t section_len(uint32_t elem, uint32_t count, uint32_t dim)
{
	uint64_t rows = (uint64_t)count * dim;
	if (elem == IX_VEC_I8)
		return VEC_HDR + bitmap_bytes(count) + 2 * scale_bytes(count) + rows;
	if (elem == IX_VEC_I8_RESCORE)
		return VEC_HDR + bitmap_bytes(count) + i8_bytes(count, dim) + rows * 4;
	return VEC_HDR + bitmap_bytes(count) + rows * 4;
}

int ix_vecw_set(ix_vecw *v, uint32_t dim, uint64_t fp)
{
	if (dim == 0 || dim > IX_VEC_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "vectors of %u dimensions (1..%u)", dim, IX_VEC_MAX_DIM);
	if (v->dim && (v->dim != dim || v->fp != fp))
		return fa_err(FATHOM_EINVAL,
		              "vectors of another embedder (%u dimensions) in one segment", dim);
	v->dim = dim;
	v->fp = fp;
	return 0;
}

/* Zero rows up to (not including) chunk. */
static int pad_rows(ix_vecw *v, uint32_t chunk)
{
	size_t row = (size_t)v->dim * sizeof(float), want;
	if (fa_mul(row, chunk, &want))
		return fa_err(FATHOM_ETOOBIG, "vectors");
	if (v->rows.len < want && fbuf_put_zeros(&v->rows, want - v->rows.len))
		return v->rows.err;
	uint64_t bb = ((uint64_t)chunk + 7) / 8;
	if (v->bits.len < bb && fbuf_put_zeros(&v->bits, (size_t)(bb - v->bits.len)))
		return v->bits.err;
	return 0;
}

int ix_vecw_put(ix_vecw *v, uint32_t chunk, const float *vec)
{
	if (!v->dim)
		return fa_err(FATHOM_EINVAL, "a vector before its dimension");
	int rc = pad_rows(v, chunk);
	if (rc)
		return rc;
	size_t row = (size_t)v->dim * sizeof(float);
	if (v->rows.len != (size_t)chunk * row)
		return fa_err(FATHOM_EINVAL, "chunk %u's vector out of order", chunk);
	/* little-endian floats: this build's only byte order (fa_store32 for
	 * the header) */
	if (fbuf_append(&v->rows, vec, row))
		return v->rows.err;
	if ((rc = pad_rows(v, chunk + 1)))
		return rc;
	int any = 0;
	for (uint32_t k = 0; k < v->dim && !any; k++)
		any = vec[k] != 0.0f;
	if (any) {
		v->bits.data[chunk / 8] |= (uint8_t)(1u << (chunk % 8));
		v->present++;
	}
	return 0;
}

size_t ix_vecw_mem(const ix_vecw *v)
{
	return v->rows.cap + v->bits.cap;
}

static void store_float(unsigned char *p, float f)
{
	uint32_t bits;
	memcpy(&bits, &f, 4);
	fa_store32(p, bits);
}

/* The int8 rows of an IX_VEC_I8 section: the scales and the offsets
 * (padded), then the rows, each quantised from the writer's float row (a
 * row without a vector is zeros and quantises to scale 0, offset 0 and
 * zeros). */
static int encode_i8(const ix_vecw *v, uint32_t nchunks, fbuf *out)
{
	const float *rows = (const float *)(const void *)v->rows.data;
	size_t at = out->len, sb = (size_t)scale_bytes(nchunks);
	if (fbuf_put_zeros(out, 2 * sb))
		return out->err;
	int8_t *q = fa_malloc(v->dim);
	if (!q)
		return fa_err(FATHOM_ENOMEM, "vectors");
	for (uint32_t c = 0; c < nchunks; c++) {
		float off;
		float sc = em_quantize_i8_affine(rows + (size_t)c * v->dim, v->dim, q, &off);
		store_float(out->data + at + (size_t)c * 4, sc);
		store_float(out->data + at + sb + (size_t)c * 4, off);
		if (fbuf_append(out, q, v->dim))
			break;
	}
	fa_free(q);
	return out->err;
}

int ix_vecw_encode(ix_vecw *v, uint32_t nchunks, fbuf *out)
{
	int rc = pad_rows(v, nchunks);
	if (rc)
		return rc;
	size_t row = (size_t)v->dim * sizeof(float);
	if (v->rows.len != (size_t)nchunks * row)
		return fa_err(FATHOM_EINVAL, "vectors for more chunks than the segment has");
	uint32_t elem = v->elem == IX_VEC_I8 || v->elem == IX_VEC_I8_RESCORE ? v->elem : IX_VEC_F32;
	unsigned char h[VEC_HDR] = { 0 };
	size_t start = out->len;
	fa_store32(h, 1);
	fa_store32(h + 4, v->dim);
	fa_store32(h + 8, nchunks);
	fa_store32(h + 12, elem);
	fa_store64(h + 16, v->fp);
	fa_store32(h + 24, v->present);
	fbuf_append(out, h, sizeof h);
	fbuf_append(out, v->bits.data, v->bits.len);
	fbuf_put_zeros(out, (size_t)(bitmap_bytes(nchunks) - v->bits.len));
	if (out->err)
		return out->err;
	if (elem != IX_VEC_F32 && (rc = encode_i8(v, nchunks, out)))
		return rc;
	if (elem == IX_VEC_I8)
		return 0;
	/* the floats start at a multiple of 64 from the section's start (the
	 * section's own start is one) */
	if (fbuf_put_zeros(out, (64 - (out->len - start) % 64) % 64))
		return out->err;
	fbuf_append(out, v->rows.data, v->rows.len);
	return out->err;
}

void ix_vecw_free(ix_vecw *v)
{
	fbuf_free(&v->rows);
	fbuf_free(&v->bits);
	memset(v, 0, sizeof *v);
}

void ix_vecw_init(ix_vecw *v)
{
	memset(v, 0, sizeof *v);
	fbuf_init(&v->rows, 0);
	fbuf_init(&v->bits, 0);
}

static int vcorrupt(const ix_segment *s, const char *what)
{
	return fa_err(FATHOM_ECORRUPT, "%s: section 'VECS': %s", s->path, what);
}

int seg_vectors(const ix_segment *s, ix_vecs *out)
{
	memset(out, 0, sizeof *out);
	uint64_t off = s->sec_off[IX_SEC_VECTORS], len = s->sec_len[IX_SEC_VECTORS];
	if (len == 0)
		return FATHOM_ENOTFOUND;
	if (len < VEC_HDR)
		return vcorrupt(s, "shorter than its header");
	if (off % 64)
		return vcorrupt(s, "not aligned to 64 bytes");
	int rc = seg_check_range(s, off, len);
	if (rc)
		return rc;
	const unsigned char *h = s->data + off;
	uint32_t version = fa_load32(h), dim = fa_load32(h + 4), count = fa_load32(h + 8);
	uint32_t elem = fa_load32(h + 12), present = fa_load32(h + 24);
	if (version != 1)
		return fa_err(FATHOM_EVERSION, "%s: section 'VECS' of version %u (this build reads 1)",
		              s->path, version);
	if (elem != IX_VEC_F32 && elem != IX_VEC_I8 && elem != IX_VEC_I8_RESCORE)
		return fa_err(FATHOM_EVERSION, "%s: section 'VECS': element type %u unknown", s->path,
		              elem);
	if (dim == 0 || dim > IX_VEC_MAX_DIM)
		return vcorrupt(s, "dimension out of range");
	if (count != s->nchunks)
		return vcorrupt(s, "its count is not the segment's chunks");
	uint64_t bb = bitmap_bytes(count);
	if (section_len(elem, count, dim) != len)
		return vcorrupt(s, "its size does not match its count and dimension");
	const uint8_t *bits = h + VEC_HDR;
	uint64_t have = 0;
	for (uint64_t i = 0; i < ((uint64_t)count + 7) / 8; i++)
		have += (uint64_t)__builtin_popcount(bits[i]);
	if (count % 8 && (bits[count / 8] >> (count % 8)))
		return vcorrupt(s, "bits set past the last chunk");
	if (have != present)
		return vcorrupt(s, "its bitmap disagrees with its count of vectors");
	out->dim = dim;
	out->count = count;
	out->present = present;
	out->elem = elem;
	out->fp = fa_load64(h + 16);
	out->bits = bits;
	const unsigned char *p = h + VEC_HDR + bb;
	if (elem != IX_VEC_F32) {
		uint64_t sb = scale_bytes(count);
		out->scales = (const float *)(const void *)p;
		out->offsets = (const float *)(const void *)(p + sb);
		out->qrows = (const int8_t *)(p + 2 * sb);
		p += i8_bytes(count, dim);
	}
	if (elem != IX_VEC_I8)
		out->rows = (const float *)(const void *)p;
	return 0;
}

const float *ix_vecs_row(const ix_vecs *v, uint32_t c, float *tmp)
{
	if (v->rows)
		return v->rows + (size_t)c * v->dim;
	em_dequantize_i8(v->qrows + (size_t)c * v->dim, v->dim, v->scales[c], v->offsets[c], tmp);
	return tmp;
}

float ix_vecs_score(const ix_vecs *v, const float *q, float qsum, uint32_t c)
{
	if (v->rows)
		return em_dot(q, v->rows + (size_t)c * v->dim, v->dim);
	return em_dot_f32_i8(q, v->qrows + (size_t)c * v->dim, v->dim) * v->scales[c] +
	       v->offsets[c] * qsum;
}

int seg_vectors_verify(const ix_segment *s)
{
	ix_vecs v;
	int rc = seg_vectors(s, &v);
	if (rc == FATHOM_ENOTFOUND) {
		fa_err_clear();
		return 0;
	}
	if (rc)
		return rc;
	for (uint32_t c = 0; c < v.count; c++) {
		int set = v.bits[c >> 3] >> (c & 7) & 1, bad = 0;
		if (v.qrows) {
			float sc = v.scales[c], off = v.offsets[c];
			const int8_t *q = v.qrows + (size_t)c * v.dim;
			if (set)
				bad = !(sc >= 0.0f && sc <= FLT_MAX) || !isfinite(off);
			else
				bad = sc != 0.0f || off != 0.0f;
			for (uint32_t k = 0; k < v.dim && !bad; k++)
				bad = q[k] == -128 || (!set && q[k]);
		}
		if (v.rows) {
			const float *r = v.rows + (size_t)c * v.dim;
			for (uint32_t k = 0; k < v.dim && !bad; k++)
				bad = set ? !isfinite(r[k]) : r[k] != 0.0f;
		}
		if (bad)
			return fa_err(FATHOM_ECORRUPT, "%s: section 'VECS': chunk %u's %s", s->path, c,
			              set ? "vector, scale or offset is not finite (or the scale negative)"
			                  : "row is not zero though it has no vector");
	}
	return 0;
}

/* ---- the graph (HNSW, docs/FORMAT.md 5.13) -------------------------------- */

uint32_t ix_graph_min(const ix_graph_opts *o)
{
	return o->min_vectors ? o->min_vectors : IX_HNSW_MIN_VECTORS;
}

void ix_graph_params(const ix_graph_opts *o, uint32_t count, vx_params *p)
{
	vx_params_for(count, p);
	if (o->m)
		p->m = o->m;
	if (o->ef_construction)
		p->ef_construction = o->ef_construction;
	if (o->ef_search)
		p->ef_search = o->ef_search;
}

int ix_set_graph_opts(ix_index *ix, const ix_graph_opts *o)
{
	if (o->storage > IX_VEC_I8_RESCORE)
		return fa_err(FATHOM_EINVAL, "vector storage %u (0, %u float32, %u int8, %u int8 "
		              "rescored on float32)", o->storage, IX_VEC_F32, IX_VEC_I8,
		              IX_VEC_I8_RESCORE);
	if ((o->m && (o->m < 2 || o->m > VX_MAX_M)) || o->ef_construction > VX_MAX_K ||
	    o->ef_search > VX_MAX_K)
		return fa_err(FATHOM_EINVAL, "HNSW m %u (2 to %u), ef-construction %u and ef-search %u "
		              "(at most %u)", o->m, VX_MAX_M, o->ef_construction, o->ef_search,
		              VX_MAX_K);
	ix->graph = *o;
	return 0;
}

const ix_graph_opts *ix_graph_opts_of(const ix_index *ix)
{
	return &ix->graph;
}

const uint8_t *seg_deleted_chunks(const ix_segment *s)
{
	return s->n_del_chunks ? s->del_chunks : NULL;
}

int seg_graph(const ix_segment *s, const vx_hnsw **out)
{
	*out = NULL;
	vx_hnsw **slot = (vx_hnsw **)(uintptr_t)&s->graph;
	vx_hnsw *have = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (have) {
		*out = have;
		return 0;
	}
	uint64_t off = s->sec_off[IX_SEC_GRAPH], len = s->sec_len[IX_SEC_GRAPH];
	if (len == 0)
		return FATHOM_ENOTFOUND;
	ix_vecs v;
	int rc = seg_vectors(s, &v);
	if (rc == FATHOM_ENOTFOUND) {
		fa_err_clear();
		return fa_err(FATHOM_ECORRUPT, "%s: an HNSW section without vectors", s->path);
	}
	if (rc || (rc = seg_check_range(s, off, len)))
		return rc;
	vx_hnsw *mine;
	if (v.qrows)   /* int8, rescored on the floats when the section has them */
		rc = vx_hnsw_view_i8(&mine, s->data + off, (size_t)len, v.qrows, v.scales, v.offsets,
		                     v.rows, v.count, v.dim, s->path);
	else
		rc = vx_hnsw_view(&mine, s->data + off, (size_t)len, v.rows, v.count, v.dim, s->path);
	if (rc)
		return rc;
	if (__atomic_compare_exchange_n(slot, &have, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		have = mine;
	else
		vx_hnsw_free(mine);   /* another reader's came first */
	*out = have;
	return 0;
}

int ix_embed_text(fbuf *out, const char *title, const char *headings, size_t headings_len,
                  const char *text, size_t len)
{
	fbuf_reset(out);
	if (title && *title) {
		fbuf_puts(out, title);
		fbuf_putc(out, '\n');
	}
	if (headings_len) {
		fbuf_append(out, headings, headings_len);
		fbuf_putc(out, '\n');
	}
	fbuf_append(out, text, len);
	return out->err;
}

void ix_set_embedder(ix_index *ix, uint64_t fp, const ix_embed_hook *embed)
{
	ix->vec_fp = fp;
	if (embed)
		ix->embed = *embed;
	else
		memset(&ix->embed, 0, sizeof ix->embed);
}
