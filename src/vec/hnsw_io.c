/*
 * hnsw_io.c — the HNSW graph as a segment section ("HNSW", docs/FORMAT.md
 * 5.13), written once and searched in place from the mapped bytes.
 *
 * The layout (little-endian; offsets in bytes from the section's start):
 *
 *   0   magic "HNSW"           4   u32 version (1)
 *   8   u32 dim                12  u32 n (nodes; the VECS section's rows)
 *   16  u32 m                  20  u32 m0 (= 2m, layer 0's slots)
 *   24  u32 ef_construction    28  u32 ef_search
 *   32  u64 seed               40  u32 entry (a node on the top layer)
 *   44  u32 top (entry's level) 48 u32 pool words P
 *   52  12 bytes reserved, zero
 *   64  levels: u8 per node (each <= VX_MAX_LEVEL), zero-padded to 4 bytes
 *   then, all u32 (4-byte aligned from the section's start):
 *       layer 0: per node 1 + m0 words: count (<= m0), then m0 slots
 *                (unused slots zero)
 *       upper offsets: per node, where its blocks start in the pool
 *                (0 for a node of level 0)
 *       pool: P words; per node with level L > 0, in node order, L blocks
 *                of 1 + m words: count (<= m), m slots (unused zero), for
 *                layers 1..L
 *
 * Fixed slots make a node's links one multiplication away, so a search
 * reads them straight from the mapping; the pool keeps the rare upper
 * layers (about one node in m) from costing every node their room. The
 * layout is canonical: one graph, one byte string (the pool in node order,
 * unused slots and padding zero), which the view checks.
 *
 * A view checks once, in O(size), everything a search will read: the
 * header against the VECS section (n, dim), every count within its slots,
 * every id below n and on the layer it is linked on (a walk down layer l
 * only ever reads layer l's lists of nodes that have one), every offset
 * in the pool, and the entry on the top layer. After that a search cannot
 * read outside the bytes, whatever they hold. The container's CRC32C
 * catches damage; these checks keep a reader safe from a writer's bug or
 * a crafted file.
 */
#include <math.h>
#include <string.h>

#include "fathom.h"
#include "util/util.h"
#include "vec/hnsw_int.h"
#include "vec/vec.h"

#define HDR 64u
#define VERSION 1u

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The section's size for n nodes, m and P pool words; -1 past size_t. */
static int section_size(uint32_t n, uint32_t m, uint64_t pool, size_t *len)
{
	size_t stride = 1 + 2 * (size_t)m, words, t;
	if (fa_mul(n, stride, &words) || fa_add(words, n, &words) ||
	    pool > SIZE_MAX || fa_add(words, (size_t)pool, &words) ||
	    fa_mul(words, 4, &t) || fa_add(t, HDR + (((size_t)n + 3) & ~(size_t)3), len))
		return -1;
	return 0;
}

int vx_hnsw_write(const vx_hnsw *h, unsigned char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	uint32_t n = h->n, m = h->p.m, m0 = 2 * m;
	uint64_t pool = 0;
	for (uint32_t i = 0; i < n; i++)
		pool += (uint64_t)h->level[i] * (m + 1);
	size_t size;
	if (pool > UINT32_MAX || section_size(n, m, pool, &size))
		return fa_err(FATHOM_ETOOBIG, "HNSW section of %u nodes", n);
	unsigned char *b = fa_malloc(size);
	if (!b)
		return fa_err(FATHOM_ENOMEM, "HNSW section of %zu bytes", size);
	memset(b, 0, size);
	memcpy(b, "HNSW", 4);
	put32(b + 4, VERSION);
	put32(b + 8, h->dim);
	put32(b + 12, n);
	put32(b + 16, m);
	put32(b + 20, m0);
	put32(b + 24, h->p.ef_construction);
	put32(b + 28, h->p.ef_search);
	put32(b + 32, (uint32_t)h->p.seed);
	put32(b + 36, (uint32_t)(h->p.seed >> 32));
	put32(b + 40, n ? h->entry : 0);
	put32(b + 44, n && h->top > 0 ? (uint32_t)h->top : 0);
	put32(b + 48, (uint32_t)pool);
	if (n)
		memcpy(b + HDR, h->level, n);
	unsigned char *l0 = b + HDR + (((size_t)n + 3) & ~(size_t)3);
	unsigned char *up = l0 + (size_t)n * (1 + m0) * 4, *pl = up + (size_t)n * 4;
	uint32_t off = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t cnt;
		const uint32_t *nb = h->l0 + (size_t)i * (1 + m0);
		cnt = nb[0];
		unsigned char *w = l0 + (size_t)i * (1 + m0) * 4;
		put32(w, cnt);
		for (uint32_t j = 0; j < cnt; j++)
			put32(w + 4 * (1 + (size_t)j), nb[1 + j]);
		uint32_t lev = h->level[i];
		put32(up + (size_t)i * 4, lev ? off : 0);
		for (uint32_t l = 0; l < lev; l++) {
			const uint32_t *bl = h->pool + h->upoff[i] + (size_t)l * (m + 1);
			w = pl + (size_t)off * 4;
			put32(w, bl[0]);
			for (uint32_t j = 0; j < bl[0]; j++)
				put32(w + 4 * (1 + (size_t)j), bl[1 + j]);
			off += m + 1;
		}
	}
	*out = b;
	*len = size;
	return 0;
}

/* ---- the view ------------------------------------------------------------------ */

#define BAD(...) fa_err(FATHOM_ECORRUPT, __VA_ARGS__)

/* One list: count within max, ids below n and on layer l, unused slots 0. */
static int check_list(const vx_hnsw *h, const uint32_t *b, uint32_t max, uint32_t l,
                      uint32_t node, const char *name)
{
	if (b[0] > max)
		return BAD("%s: HNSW node %u has %u links on layer %u (at most %u)", name, node, b[0],
		           l, max);
	for (uint32_t j = 0; j < max; j++) {
		uint32_t id = b[1 + j];
		if (j >= b[0] ? id != 0 : id >= h->n || h->level[id] < l)
			return BAD("%s: HNSW node %u links to %u on layer %u (%s)", name, node, id, l,
			           j >= b[0] ? "an unused slot" : "no such node on the layer");
	}
	return 0;
}

static int check_graph(vx_hnsw *h, size_t pool_words, const unsigned char *pad, size_t npad,
                       const char *name)
{
	uint32_t n = h->n, m = h->p.m, maxlev = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (h->level[i] > VX_MAX_LEVEL)
			return BAD("%s: HNSW node %u on level %u (at most %u)", name, i, h->level[i],
			           VX_MAX_LEVEL);
		maxlev = FA_MAX(maxlev, h->level[i]);
	}
	for (size_t i = 0; i < npad; i++)
		if (pad[i])
			return BAD("%s: HNSW level padding is not zero", name);
	if (n == 0 ? h->entry != 0 || h->top != 0 || pool_words != 0
	           : h->entry >= n || h->level[h->entry] != (uint32_t)h->top ||
	                 (uint32_t)h->top != maxlev)
		return BAD("%s: HNSW entry %u on level %d is not a node on the top layer", name,
		           h->entry, h->top);
	size_t off = 0;
	for (uint32_t i = 0; i < n; i++) {
		int rc = check_list(h, h->l0 + (size_t)i * (1 + 2 * m), 2 * m, 0, i, name);
		if (rc)
			return rc;
		uint32_t lev = h->level[i];
		if (h->upoff[i] != (lev ? off : 0))
			return BAD("%s: HNSW node %u's upper layers at %u (expected %zu)", name, i,
			           h->upoff[i], lev ? off : 0);
		if (lev && (size_t)lev * (m + 1) > pool_words - off)
			return BAD("%s: HNSW node %u's upper layers run past the pool (%zu words)", name,
			           i, pool_words);
		for (uint32_t l = 1; l <= lev; l++, off += m + 1)
			if ((rc = check_list(h, h->pool + off, m, l, i, name)))
				return rc;
	}
	if (off != pool_words)
		return BAD("%s: HNSW pool of %zu words, %zu used", name, pool_words, off);
	if (n == 0)
		h->top = -1;
	return 0;
}

/* A read-only graph of n nodes over rows, nothing linked yet. */
static vx_hnsw *new_view(const vx_rows *rows, uint32_t n, uint32_t dim)
{
	vx_hnsw *h = fa_malloc(sizeof *h);
	if (!h)
		return NULL;
	memset(h, 0, sizeof *h);
	h->view = 1;
	h->dim = dim;
	h->n = n;
	h->rows = *rows;
	h->rows.dim = dim;
	h->top = -1;
	return h;
}

static int view(vx_hnsw **out, const unsigned char *g, size_t len, const vx_rows *rows,
                uint32_t n, uint32_t dim, const char *name)
{
	*out = NULL;
	if (dim == 0 || dim > VX_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "%s: vector dimension %u (1 to %u)", name, dim,
		              VX_MAX_DIM);
	if (len < HDR || memcmp(g, "HNSW", 4) != 0)
		return BAD("%s: not an HNSW section (%zu bytes)", name, len);
	if (get32(g + 4) != VERSION)
		return fa_err(FATHOM_EVERSION, "%s: HNSW section version %u (this build reads %u)",
		              name, get32(g + 4), VERSION);
	if (get32(g + 8) != dim || get32(g + 12) != n)
		return BAD("%s: HNSW graph of %u %u-d nodes over %u %u-d vectors", name,
		           get32(g + 12), get32(g + 8), n, dim);
	uint32_t m = get32(g + 16), efc = get32(g + 24), efs = get32(g + 28);
	if (m < 2 || m > VX_MAX_M || get32(g + 20) != 2 * m || efc < 1 || efc > VX_MAX_K ||
	    efs < 1 || efs > VX_MAX_K)
		return BAD("%s: HNSW m %u, m0 %u, ef_construction %u, ef_search %u out of range",
		           name, m, get32(g + 20), efc, efs);
	for (uint32_t i = 52; i < HDR; i++)
		if (g[i])
			return BAD("%s: HNSW reserved header bytes are not zero", name);
	uint32_t pool = get32(g + 48);
	size_t want;
	if (section_size(n, m, pool, &want) || want != len)
		return BAD("%s: HNSW section of %zu bytes (its header says %zu)", name, len,
		           section_size(n, m, pool, &want) ? (size_t)0 : want);
	if (n && (rows->q ? !rows->s : !rows->f))
		return fa_err(FATHOM_EINVAL, "%s: no vectors for the HNSW graph", name);
	if (rows->s)
		for (uint32_t i = 0; i < n; i++)
			if (!(rows->s[i] >= 0.0f && rows->s[i] <= 3.4e38f))
				return BAD("%s: int8 row %u has scale %g", name, i, (double)rows->s[i]);
	if (rows->o)
		for (uint32_t i = 0; i < n; i++)
			if (!isfinite(rows->o[i]))
				return BAD("%s: int8 row %u has offset %g", name, i, (double)rows->o[i]);
	vx_hnsw *h = new_view(rows, n, dim);
	if (!h)
		return fa_err(FATHOM_ENOMEM, "HNSW view");
	h->p.m = m;
	h->p.ef_construction = efc;
	h->p.ef_search = efs;
	h->p.seed = (uint64_t)get32(g + 32) | (uint64_t)get32(g + 36) << 32;
	h->entry = get32(g + 40);
	uint32_t top = get32(g + 44);
	h->top = top > VX_MAX_LEVEL ? (int)VX_MAX_LEVEL + 1 : (int)top;
	h->level = g + HDR;
	size_t lvl = ((size_t)n + 3) & ~(size_t)3, nwords = (len - HDR - lvl) / 4;
	const unsigned char *wb = g + HDR + lvl;
	const uint32_t *words;
	/* in place when the host reads the bytes as they are */
	if (((uintptr_t)wb & 3) == 0 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
		words = (const uint32_t *)(const void *)wb;
	} else {
		uint32_t *c = fa_malloc(nwords ? nwords * 4 : 1);
		if (!c) {
			fa_free(h);
			return fa_err(FATHOM_ENOMEM, "HNSW view of %zu bytes", len);
		}
		for (size_t i = 0; i < nwords; i++)
			c[i] = get32(wb + 4 * i);
		h->copy = c;
		words = c;
	}
	h->l0 = words;
	h->upoff = words + (size_t)n * (1 + 2 * m);
	h->pool = h->upoff + n;
	h->pool_len = pool;
	int rc = check_graph(h, pool, g + HDR + n, lvl - n, name);
	if (rc) {
		vx_hnsw_free(h);
		return rc;
	}
	*out = h;
	return 0;
}

int vx_hnsw_view(vx_hnsw **out, const unsigned char *graph, size_t len, const float *vecs,
                 uint32_t n, uint32_t dim, const char *name)
{
	vx_rows r = { vecs, NULL, NULL, NULL, dim, 0 };
	return view(out, graph, len, &r, n, dim, name);
}

int vx_hnsw_view_i8(vx_hnsw **out, const unsigned char *graph, size_t len, const int8_t *rows,
                    const float *scales, const float *offsets, const float *rerank, uint32_t n,
                    uint32_t dim, const char *name)
{
	vx_rows r = { rerank, rows, scales, offsets, dim, 0 };
	return view(out, graph, len, &r, n, dim, name);
}

void vx_hnsw_i8_symmetric(vx_hnsw *h, int on)
{
	if (h && h->view)
		h->rows.sym = on ? 1 : 0;
}

int vx_hnsw_rows(vx_hnsw **out, const float *vecs, uint32_t n, uint32_t dim)
{
	*out = NULL;
	if (dim == 0 || dim > VX_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "vector dimension %u (1 to %u)", dim, VX_MAX_DIM);
	if (n && !vecs)
		return fa_err(FATHOM_EINVAL, "no vectors for an HNSW merge input");
	/* no links: never walked, never the graph a merge reuses (m 0) */
	vx_rows r = { vecs, NULL, NULL, NULL, dim, 0 };
	if (!(*out = new_view(&r, n, dim)))
		return fa_err(FATHOM_ENOMEM, "HNSW merge input");
	return 0;
}
