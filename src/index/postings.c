/*
 * postings.c — the postings block codec and the postings cursor.
 *
 * A term's postings are blocks of IX_BLOCK (128) postings. A block of n > 1
 * postings holds the doc-id gaps and, for each field present in it, the
 * term frequencies:
 *
 *   u8  field_mask        fields with tf > 0 in some posting of the block
 *   u8  full_mask         fields with tf > 0 in every posting: stored as tf-1,
 *                         so a block where every tf is 1 spends no bits on it
 *   pfor(gaps)            gap = doc - previous doc - 1
 *   pfor(tf[f])           for each f in field_mask, in field order
 *
 * where pfor(x) is n values patched-frame-of-reference coded:
 *
 *   u8  width | 0x80 when exceptions follow (width 0..32)
 *   [u8 n_exc]            1..n
 *   n values, low `width` bits each, bit-packed (byte-padded)
 *   n_exc times: u8 index (ascending), varint high (value = low | high << width)
 *
 * The width is the one that makes the array smallest, so a few large gaps
 * (or the odd large tf) do not widen the other 127. A block of one posting
 * (most terms of a code base occur once) is just u8 field_mask, varint gap,
 * varint tf per field.
 *
 * Positions are a separate stream per block (see ix_pos_encode): for each
 * posting, for each field with tf > 0, tf values, the first absolute and the
 * rest deltas.
 *
 * A term of more than one block starts with a block directory (IX_DIR_REC
 * bytes per block: last doc, block offset, positions offset, ix_bound), so
 * ix_post_shallow() can skip blocks by their bound without decoding them.
 * A term of one block has no directory; its bound is the term's.
 */
#include "index/index_int.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- patched frame of reference for one block's array ---------------------- */

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void pfor_encode(fbuf *out, const uint32_t *v, uint32_t n)
{
	uint32_t cnt[33] = { 0 };
	uint8_t width[IX_BLOCK];
	unsigned maxw = 0;
	for (uint32_t i = 0; i < n; i++) {
		unsigned w = fa_bits_needed(v[i]);
		width[i] = (uint8_t)w;
		cnt[w]++;
		maxw = w > maxw ? w : maxw;
	}
	unsigned best = maxw;
	size_t best_cost = SIZE_MAX;
	for (unsigned b = 0; b <= maxw; b++) {
		size_t cost = fa_bitpack_bytes(n, b), nexc = 0;
		for (unsigned w = b + 1; w <= maxw; w++) {
			cost += cnt[w] * (1 + (w - b + 6) / 7);
			nexc += cnt[w];
		}
		cost += nexc ? 1 : 0;
		if (cost < best_cost) {
			best_cost = cost;
			best = b;
		}
	}
	uint32_t nexc = 0, low[IX_BLOCK];
	uint32_t mask = best == 32 ? UINT32_MAX : (1u << best) - 1;
	for (uint32_t i = 0; i < n; i++) {
		low[i] = v[i] & mask;
		nexc += width[i] > best;
	}
	fbuf_putc(out, (int)(best | (nexc ? 0x80u : 0u)));
	if (nexc)
		fbuf_putc(out, (int)nexc);
	size_t bytes = fa_bitpack_bytes(n, best);
	if (fbuf_reserve(out, bytes))
		return;
	fa_bitpack(out->data + out->len, low, n, best);
	out->len += bytes;
	for (uint32_t i = 0; nexc && i < n; i++) {
		if (width[i] <= best)
			continue;
		fbuf_putc(out, (int)i);
		fbuf_put_varint(out, v[i] >> best);
	}
}

/* Unpack n values of `bits` bits from [in, in+avail). With 8 bytes of slack
 * past the packed array every value is one unaligned load and a shift, which
 * is what keeps a block decode near 100 ns; near the end of the file the
 * careful byte-at-a-time version is used. */
static void unpack(uint32_t *out, const unsigned char *in, size_t avail, uint32_t n, unsigned bits)
{
	if (bits == 0) {
		memset(out, 0, n * sizeof *out);
		return;
	}
	if (avail < fa_bitpack_bytes(n, bits) + 8) {
		fa_bitunpack(out, in, n, bits);
		return;
	}
	if (n == IX_BLOCK) {
		/* Full blocks: eight values of B bits fill B bytes, so within a
		 * group of eight every load offset and shift is a constant. */
		switch (bits) {
#define UNPACK_ONE(B, J) \
			o[J] = (uint32_t)((fa_load64(g + ((J) * (B) >> 3)) >> (((J) * (B)) & 7)) & \
			                  (((uint64_t)1 << (B)) - 1));
#define UNPACK_FULL(B) \
		case B: \
			for (uint32_t k = 0; k < IX_BLOCK / 8; k++) { \
				const unsigned char *g = in + (size_t)k * (B); \
				uint32_t *o = out + 8 * k; \
				UNPACK_ONE(B, 0) UNPACK_ONE(B, 1) UNPACK_ONE(B, 2) UNPACK_ONE(B, 3) \
				UNPACK_ONE(B, 4) UNPACK_ONE(B, 5) UNPACK_ONE(B, 6) UNPACK_ONE(B, 7) \
			} \
			return;
/* Up to 8 bits, a group of eight is one 64-bit word: one load, then shifts. */
#define UNPACK_WORD(B) \
		case B: \
			for (uint32_t k = 0; k < IX_BLOCK / 8; k++) { \
				uint64_t w = fa_load64(in + (size_t)k * (B)), m = ((uint64_t)1 << (B)) - 1; \
				uint32_t *o = out + 8 * k; \
				for (unsigned j = 0; j < 8; j++) \
					o[j] = (uint32_t)((w >> (j * (B))) & m); \
			} \
			return;
		UNPACK_WORD(1) UNPACK_WORD(2) UNPACK_WORD(3) UNPACK_WORD(4) UNPACK_WORD(5)
		UNPACK_WORD(6) UNPACK_WORD(7) UNPACK_WORD(8) UNPACK_FULL(9) UNPACK_FULL(10)
		UNPACK_FULL(11) UNPACK_FULL(12) UNPACK_FULL(13) UNPACK_FULL(14) UNPACK_FULL(15)
		UNPACK_FULL(16) UNPACK_FULL(17) UNPACK_FULL(18) UNPACK_FULL(19) UNPACK_FULL(20)
		UNPACK_FULL(21) UNPACK_FULL(22) UNPACK_FULL(23) UNPACK_FULL(24) UNPACK_FULL(25)
		UNPACK_FULL(26) UNPACK_FULL(27) UNPACK_FULL(28) UNPACK_FULL(29) UNPACK_FULL(30)
		UNPACK_FULL(31) UNPACK_FULL(32)
#undef UNPACK_WORD
#undef UNPACK_FULL
#undef UNPACK_ONE
		default:
			break;
		}
	}
	uint64_t mask = ((uint64_t)1 << bits) - 1;
	size_t bit = 0;
	for (uint32_t i = 0; i < n; i++, bit += bits)
		out[i] = (uint32_t)((fa_load64(in + (bit >> 3)) >> (bit & 7)) & mask);
}

/* Decode one pfor array; values must not exceed maxv. *top, when asked
 * for, gets a bound on the values decoded (the width's, or the largest
 * exception's). */
static int pfor_decode(const unsigned char **pp, const unsigned char *end,
                       const unsigned char *readable, uint32_t n, uint32_t *out, uint32_t maxv,
                       uint64_t *top)
{
	const unsigned char *p = *pp;
	if (p >= end)
		return FATHOM_ECORRUPT;
	unsigned hdr = *p++, b = hdr & 0x3f, nexc = 0;
	if (b > 32 || (hdr & 0x40) || fa_bits_needed(maxv) < b)
		return FATHOM_ECORRUPT;
	if (hdr & 0x80) {
		if (p >= end || (nexc = *p++) == 0 || nexc > n || b == 32)
			return FATHOM_ECORRUPT;
	}
	size_t bytes = fa_bitpack_bytes(n, b);
	if ((size_t)(end - p) < bytes)
		return FATHOM_ECORRUPT;
	if (top)
		*top = ((uint64_t)1 << b) - 1;
	unpack(out, p, (size_t)(readable - p), n, b);
	p += bytes;
	int prev = -1;
	for (unsigned e = 0; e < nexc; e++) {
		uint64_t high;
		if (p >= end)
			return FATHOM_ECORRUPT;
		int idx = *p++;
		if (idx <= prev || (uint32_t)idx >= n || fa_varint_get(&p, end, &high) ||
		    high > ((uint64_t)maxv >> b))
			return FATHOM_ECORRUPT;
		out[idx] |= (uint32_t)(high << b);
		prev = idx;
		if (top && out[idx] > *top)
			*top = out[idx];
	}
	*pp = p;
	return 0;
}

/* ---- the block codec ------------------------------------------------------ */

int ix_block_encode(fbuf *out, const ix_block_in *b)
{
	uint32_t vals[IX_BLOCK];
	uint32_t n = b->n, prev = b->prev_doc;
	unsigned field_mask = 0, full_mask = 0;

	if (n == 0 || n > IX_BLOCK)
		return fa_err(FATHOM_EINVAL, "postings block of %u entries", n);
	for (uint32_t i = 0; i < n; i++) {
		if (i > 0 && b->docs[i] <= prev)
			return fa_err(FATHOM_EINVAL, "postings out of order");
		/* prev = UINT32_MAX makes prev + 1 wrap to 0: the first doc is its own gap. */
		vals[i] = b->docs[i] - prev - 1u;
		prev = b->docs[i];
	}
	if (b->docs[n - 1] >= IX_END)
		return fa_err(FATHOM_EINVAL, "doc id out of range");
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		unsigned any = 0, all = 1;
		for (uint32_t i = 0; i < n; i++) {
			any |= b->tf[f][i] != 0;
			all &= b->tf[f][i] != 0;
		}
		if (any)
			field_mask |= 1u << f;
		if (any && all)
			full_mask |= 1u << f;
	}
	if (!field_mask)
		return fa_err(FATHOM_EINVAL, "postings without any term frequency");
	fbuf_putc(out, (int)field_mask);
	if (n == 1) {
		fbuf_put_varint(out, vals[0]);
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			if (field_mask & (1u << f))
				fbuf_put_varint(out, b->tf[f][0]);
		return out->err;
	}
	fbuf_putc(out, (int)full_mask);
	pfor_encode(out, vals, n);
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		if (!(field_mask & (1u << f)))
			continue;
		uint32_t sub = (full_mask >> f) & 1;
		for (uint32_t i = 0; i < n; i++)
			vals[i] = (uint32_t)b->tf[f][i] - sub;
		pfor_encode(out, vals, n);
	}
	return out->err;
}

/* Gaps to doc ids in place: v[i] = first + v[0] + ... + v[i] + i, where
 * no gap exceeds top. The last doc is checked in 64 bits first (from top
 * when that settles it, else from the sum), so a hostile gap cannot wrap
 * into a smaller doc; below IX_END every partial sum then fits the 32-bit
 * sums, four lanes at a time where SSE2 is (every x86-64). */
static int gaps_to_docs(uint32_t *v, uint32_t n, uint64_t first, uint64_t top)
{
	if (n == 0)
		return FATHOM_ECORRUPT;
	if (first + (uint64_t)n * (top + 1) > IX_END) {
		uint64_t total = 0;
		for (uint32_t i = 0; i < n; i++)
			total += v[i];
		if (first + total + (n - 1) >= IX_END)
			return FATHOM_ECORRUPT;
	}
	uint32_t d = (uint32_t)first - 1u;   /* first 0: wraps, then back to v[0] */
	uint32_t i = 0;
#ifdef __SSE2__
	__m128i run = _mm_set1_epi32((int)d);
	const __m128i one = _mm_set1_epi32(1);
	for (; i + 4 <= n; i += 4) {
		__m128i x = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(const void *)(v + i)), one);
		x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
		x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
		x = _mm_add_epi32(x, run);
		_mm_storeu_si128((__m128i *)(void *)(v + i), x);
		run = _mm_shuffle_epi32(x, 0xff);
	}
	if (i)
		d = v[i - 1];
#endif
	for (; i < n; i++) {
		d += v[i] + 1u;
		v[i] = d;
	}
	return 0;
}

/* The term frequencies of a block of n > 1 postings, from the byte after
 * its gaps: what block_docs() left for later (a cursor that only skips
 * never needs them). */
static int block_tfs(const unsigned char *p, const unsigned char *end,
                     const unsigned char *readable, uint32_t n, unsigned fm, unsigned full,
                     uint16_t tf[FATHOM_NFIELDS][IX_BLOCK], uint8_t *field_mask)
{
	uint32_t vals[IX_BLOCK];
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		if (!(fm & (1u << f))) {
			/* *field_mask says which arrays may hold old values. */
			if (*field_mask & (1u << f))
				memset(tf[f], 0, IX_BLOCK * sizeof tf[f][0]);
			continue;
		}
		uint32_t add = (full >> f) & 1;
		if (pfor_decode(&p, end, readable, n, vals, IX_MAX_TF - add, NULL))
			return FATHOM_ECORRUPT;
		for (uint32_t i = 0; i < n; i++)
			tf[f][i] = (uint16_t)(vals[i] + add);
	}
	*field_mask = (uint8_t)fm;
	return 0;
}

/* The doc ids of a block. A one-posting block is decoded whole (its tfs
 * cost nothing); otherwise *tfs points at the tf arrays, to be decoded by
 * block_tfs() with *fm and *full, and is NULL when they are already done. */
static int block_docs(const unsigned char *p, const unsigned char *end,
                      const unsigned char *readable, uint32_t n, uint32_t prev_doc,
                      uint32_t *docs, uint16_t tf[FATHOM_NFIELDS][IX_BLOCK], uint8_t *field_mask,
                      const unsigned char **tfs, unsigned *fm_out, unsigned *full_out)
{
	*tfs = NULL;
	if (n == 0 || n > IX_BLOCK || p >= end)
		return FATHOM_ECORRUPT;
	unsigned fm = *p++, full = 0;
	if (fm == 0 || fm >= (1u << FATHOM_NFIELDS))
		return FATHOM_ECORRUPT;
	if (n == 1) {
		uint64_t gap, t;
		if (fa_varint_get(&p, end, &gap))
			return FATHOM_ECORRUPT;
		uint64_t d = (prev_doc == UINT32_MAX ? 0 : (uint64_t)prev_doc + 1) + gap;
		if (gap >= IX_END || d >= IX_END)
			return FATHOM_ECORRUPT;
		docs[0] = (uint32_t)d;
		for (int f = 0; f < FATHOM_NFIELDS; f++) {
			if (!(fm & (1u << f))) {
				tf[f][0] = 0;
				continue;
			}
			if (fa_varint_get(&p, end, &t) || t == 0 || t > IX_MAX_TF)
				return FATHOM_ECORRUPT;
			tf[f][0] = (uint16_t)t;
		}
		/* A one-posting block is the last of its term: no later block
		 * relies on the rest of the arrays being clear. */
		*field_mask = (uint8_t)fm;
		return 0;
	}
	if (p >= end || ((full = *p++) & ~fm))
		return FATHOM_ECORRUPT;
	uint64_t top = 0;
	if (pfor_decode(&p, end, readable, n, docs, UINT32_MAX, &top))
		return FATHOM_ECORRUPT;
	if (gaps_to_docs(docs, n, prev_doc == UINT32_MAX ? 0 : (uint64_t)prev_doc + 1, top))
		return FATHOM_ECORRUPT;
	*tfs = p;
	*fm_out = fm;
	*full_out = full;
	return 0;
}

int ix_block_decode(const unsigned char *p, const unsigned char *end,
                    const unsigned char *readable, uint32_t n, uint32_t prev_doc,
                    uint32_t *docs, uint16_t tf[FATHOM_NFIELDS][IX_BLOCK], uint8_t *field_mask)
{
	const unsigned char *tfs;
	unsigned fm = 0, full = 0;
	if (block_docs(p, end, readable, n, prev_doc, docs, tf, field_mask, &tfs, &fm, &full))
		return FATHOM_ECORRUPT;
	return tfs ? block_tfs(tfs, end, readable, n, fm, full, tf, field_mask) : 0;
}

/* ---- positions (patched bit-packing) -------------------------------------
 *   u8 hdr: bits 0-5 width b (0..32), bit 7 set when exceptions follow
 *   [varint n_exc]
 *   n values, low b bits each, bit-packed
 *   n_exc times: varint gap (index = previous index + 1 + gap), varint high
 *   (the value is low | high << b)
 * n itself is not stored: it is the sum of the block's term frequencies.
 */

int ix_pos_encode(fbuf *out, const uint32_t *vals, size_t n)
{
	uint64_t cnt[33] = { 0 };
	unsigned maxw = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned w = fa_bits_needed(vals[i]);
		cnt[w]++;
		maxw = w > maxw ? w : maxw;
	}
	/* Pick the width that minimises packed bytes plus exception bytes. */
	unsigned best = maxw;
	uint64_t best_cost = UINT64_MAX;
	for (unsigned b = 0; b <= maxw; b++) {
		uint64_t cost = ((uint64_t)n * b + 7) / 8, nexc = 0;
		for (unsigned w = b + 1; w <= maxw; w++) {
			cost += cnt[w] * (2 + (w - b > 7) + (w - b > 14));
			nexc += cnt[w];
		}
		cost += nexc ? varint_len(nexc) : 0;
		if (cost < best_cost) {
			best_cost = cost;
			best = b;
		}
	}
	uint64_t nexc = 0;
	for (unsigned w = best + 1; w <= 32; w++)
		nexc += cnt[w];
	uint32_t mask = best == 32 ? UINT32_MAX : (1u << best) - 1;

	int rc = fbuf_putc(out, (int)(best | (nexc ? 0x80u : 0u)));
	if (nexc)
		rc = fbuf_put_varint(out, nexc);
	if (rc)
		return rc;
	size_t bytes = fa_bitpack_bytes(n, best);
	if ((rc = fbuf_reserve(out, bytes)) != 0)
		return rc;
	/* Eight values of b bits fill exactly b bytes, so groups stay aligned. */
	uint32_t tmp[8];
	size_t i = 0;
	unsigned char *o = out->data + out->len;
	for (; i + 8 <= n; i += 8) {
		for (int k = 0; k < 8; k++)
			tmp[k] = vals[i + k] & mask;
		fa_bitpack(o, tmp, 8, best);
		o += best;
	}
	if (i < n) {
		size_t k = n - i;
		for (size_t j = 0; j < k; j++)
			tmp[j] = vals[i + j] & mask;
		fa_bitpack(o, tmp, k, best);
	}
	out->len += bytes;
	if (nexc) {
		uint64_t prev = UINT64_MAX;   /* so the first gap is its index */
		for (size_t j = 0; j < n; j++) {
			if (fa_bits_needed(vals[j]) <= best)
				continue;
			fbuf_put_varint(out, (uint64_t)j - prev - 1);
			rc = fbuf_put_varint(out, (uint64_t)(vals[j] >> best));
			prev = j;
		}
	}
	return out->err ? out->err : rc;
}

/* Value i of a packed array of b-bit values in [base, base+nbytes). The
 * caller has checked that the array fits. */
static uint32_t get_bits(const unsigned char *base, uint64_t nbytes, uint64_t i, unsigned b)
{
	if (b == 0)
		return 0;
	uint64_t bit = i * b, byte = bit >> 3;
	unsigned sh = (unsigned)(bit & 7);
	uint64_t w;
	if (byte + 8 <= nbytes) {
		w = fa_load64(base + byte);
	} else {
		w = 0;
		for (unsigned k = 0; k < 8 && byte + k < nbytes; k++)
			w |= (uint64_t)base[byte + k] << (8 * k);
	}
	w >>= sh;
	return (uint32_t)(w & (b == 32 ? 0xffffffffu : ((1u << b) - 1)));
}

/* ---- the cursor ------------------------------------------------------------ */

static int post_corrupt(ix_postings *p, const char *what)
{
	p->doc = IX_END;
	return p->err = fa_err(FATHOM_ECORRUPT, "%s: postings at offset %llu: %s",
	                       seg_path(p->seg), (unsigned long long)p->ti.post_off, what);
}

static uint32_t block_len(const ix_postings *p, uint32_t b)
{
	return b + 1 < p->ti.n_blocks ? IX_BLOCK : p->ti.df - (p->ti.n_blocks - 1) * IX_BLOCK;
}

static void load_bound(ix_bound *bd, const unsigned char *r)
{
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		bd->max_tf[f] = fa_load16(r + 2 * f);
		bd->min_len[f] = fa_load16(r + 10 + 2 * f);
	}
}

/* Directory entry b of a multi-block term, range-checked. */
static int dir_entry(ix_postings *p, uint32_t b, const unsigned char **rec)
{
	uint64_t off = p->ti.post_off + (uint64_t)b * IX_DIR_REC;
	if (seg_check_range(p->seg, off, IX_DIR_REC)) {
		p->doc = IX_END;
		return p->err = FATHOM_ECORRUPT;
	}
	*rec = p->seg->data + off;
	return 0;
}

/* Point the block meta (last doc, bound) at block b. */
static int set_block_meta(ix_postings *p, uint32_t b)
{
	p->block = b;
	if (p->ti.n_blocks == 1) {
		p->block_last = p->block_decoded == 0 ? p->docs[p->n - 1] : IX_END;
		p->block_bound = p->ti.bound;
		return 0;
	}
	const unsigned char *r;
	if (dir_entry(p, b, &r))
		return p->err;
	p->block_last = fa_load32(r);
	load_bound(&p->block_bound, r + 12);
	return 0;
}

static int decode_block(ix_postings *p, uint32_t b)
{
	const ix_segment *s = p->seg;
	uint64_t start, end, pos_lo, pos_hi;
	uint32_t prev = UINT32_MAX, last = IX_END;

	if (p->ti.n_blocks == 1) {
		start = p->ti.post_off;
		end = start + p->ti.post_len;
		pos_lo = p->ti.pos_off;
		pos_hi = pos_lo + p->ti.pos_len;
	} else {
		const unsigned char *r;
		uint64_t dir_len = (uint64_t)p->ti.n_blocks * IX_DIR_REC;
		if (b > 0) {
			if (dir_entry(p, b - 1, &r))
				return p->err;
			prev = fa_load32(r);
		}
		if (dir_entry(p, b, &r))
			return p->err;
		last = fa_load32(r);
		uint64_t boff = fa_load32(r + 4), poff = fa_load32(r + 8), bend, pend;
		if (b + 1 < p->ti.n_blocks) {
			const unsigned char *nr;
			if (dir_entry(p, b + 1, &nr))
				return p->err;
			bend = fa_load32(nr + 4);
			pend = fa_load32(nr + 8);
		} else {
			bend = p->ti.post_len;
			pend = p->ti.pos_len;
		}
		if (boff < dir_len || boff > bend || bend > p->ti.post_len || poff > pend ||
		    pend > p->ti.pos_len)
			return post_corrupt(p, "bad block directory");
		start = p->ti.post_off + boff;
		end = p->ti.post_off + bend;
		pos_lo = p->ti.pos_off + poff;
		pos_hi = p->ti.pos_off + pend;
	}
	if (end == start || seg_check_range(s, start, end - start)) {
		p->doc = IX_END;
		return p->err = end == start ? post_corrupt(p, "empty block") : FATHOM_ECORRUPT;
	}
	uint32_t n = block_len(p, b);
	const unsigned char *tfs;
	unsigned fm = 0, full = 0;
	/* The whole map is readable: slack for the fast unpacking. */
	if (block_docs(s->data + start, s->data + end, s->data + s->len, n, prev, p->docs, p->tf,
	               &p->field_mask, &tfs, &fm, &full))
		return post_corrupt(p, "bad block");
	p->tf_off = tfs ? (uint64_t)(tfs - s->data) : 0;
	p->tf_end = end;
	p->tf_fm = (uint8_t)fm;
	p->tf_full = (uint8_t)full;
	if (p->docs[n - 1] >= s->nchunks || (last != IX_END && p->docs[n - 1] != last))
		return post_corrupt(p, "doc id out of range");
	p->block_decoded = b;
	p->n = n;
	p->i = 0;
	p->doc = p->docs[0];
	p->pos_lo = pos_lo;
	p->pos_hi = pos_hi;
	p->pos_block = UINT32_MAX;
	return set_block_meta(p, b);
}

int ix_post_open(ix_postings *p, const ix_segment *s, const ix_term_info *ti)
{
	p->seg = s;
	p->ti = *ti;
	p->block = 0;
	p->block_decoded = UINT32_MAX;
	p->i = p->n = 0;
	p->doc = IX_END;
	p->err = 0;
	p->field_mask = (1u << FATHOM_NFIELDS) - 1;   /* the tf arrays hold garbage */
	p->block_last = IX_END;
	p->pos_block = UINT32_MAX;
	p->pos_lo = p->pos_hi = 0;
	p->tf_off = 0;
	uint64_t td_lo = s->sec_off[IX_SEC_TERMDATA], td_hi = td_lo + s->sec_len[IX_SEC_TERMDATA];
	if (ti->df == 0 || ti->n_blocks != (ti->df - 1) / IX_BLOCK + 1 ||
	    ti->post_off < td_lo || ti->post_len > td_hi - ti->post_off ||
	    ti->pos_off < td_lo || ti->pos_len > td_hi - ti->pos_off ||
	    (ti->n_blocks > 1 && ti->post_len < (uint64_t)ti->n_blocks * IX_DIR_REC))
		return post_corrupt(p, "bad term entry");
	return decode_block(p, 0);
}

int ix_post_next(ix_postings *p)
{
	if (p->err || p->doc == IX_END)
		return p->err;
	if (++p->i < p->n) {
		p->doc = p->docs[p->i];
		return 0;
	}
	if (p->block_decoded + 1 < p->ti.n_blocks)
		return decode_block(p, p->block_decoded + 1);
	p->doc = IX_END;
	return 0;
}

/* First block b >= from whose last doc is >= target (galloping over the
 * directory), or n_blocks. */
static uint32_t find_block(ix_postings *p, uint32_t from, uint32_t target, uint32_t *last)
{
	uint32_t nb = p->ti.n_blocks, lo = from, step = 1, hi;
	const unsigned char *r;
	*last = IX_END;
	/* Invariant: blocks before lo end before target. */
	for (;;) {
		hi = lo + step - 1;
		if (hi >= nb)
			hi = nb - 1;
		if (dir_entry(p, hi, &r))
			return nb;
		if (fa_load32(r) >= target)
			break;
		if (hi == nb - 1)
			return nb;
		lo = hi + 1;
		step *= 2;
	}
	/* lo..hi holds the answer (hi qualifies). */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (dir_entry(p, mid, &r))
			return nb;
		if (fa_load32(r) >= target)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (dir_entry(p, lo, &r))
		return nb;
	*last = fa_load32(r);
	return lo;
}

uint32_t ix_post_shallow(ix_postings *p, uint32_t target)
{
	if (p->err)
		return IX_END;
	if (p->ti.n_blocks == 1) {
		if (p->block_decoded != 0 || p->docs[p->n - 1] < target)
			return IX_END;
		return p->block_last;
	}
	if (p->block < p->ti.n_blocks && p->block_last != IX_END && p->block_last >= target)
		return p->block_last;
	uint32_t from = p->block < p->ti.n_blocks ? p->block : p->ti.n_blocks;
	if (from >= p->ti.n_blocks)
		return IX_END;
	uint32_t last, b = find_block(p, from, target, &last);
	if (p->err)
		return IX_END;
	if (b >= p->ti.n_blocks) {
		p->block = p->ti.n_blocks;
		p->block_last = IX_END;
		return IX_END;
	}
	if (set_block_meta(p, b))
		return IX_END;
	return p->block_last;
}

/* First index >= i in the decoded block with docs[index] >= target (n
 * when none): a binary search without branches to mispredict. */
static uint32_t search_block(const ix_postings *p, uint32_t i, uint32_t target)
{
	if (i >= p->n)
		return p->n;
	const uint32_t *base = p->docs + i;
	uint32_t len = p->n - i;
	while (len > 1) {
		uint32_t half = len / 2;
		base = base[half] < target ? base + half : base;
		len -= half;
	}
	return (uint32_t)(base - p->docs) + (*base < target);
}

int ix_post_advance(ix_postings *p, uint32_t target)
{
	if (p->err || p->doc == IX_END)
		return p->err;
	if (p->doc >= target)
		return 0;
	if (p->docs[p->n - 1] >= target) {
		p->i = search_block(p, p->i + 1, target);
		p->doc = p->docs[p->i];
		if (p->block != p->block_decoded)
			return set_block_meta(p, p->block_decoded);
		return 0;
	}
	if (p->ti.n_blocks == 1 || p->block_decoded + 1 >= p->ti.n_blocks) {
		p->doc = IX_END;
		return 0;
	}
	uint32_t from = p->block_decoded + 1, last;
	/* After ix_post_shallow() the block it found is usually the answer:
	 * confirm it with the one directory entry before it. */
	if (p->block > from && p->block < p->ti.n_blocks && p->block_last != IX_END &&
	    p->block_last >= target) {
		const unsigned char *r;
		if (dir_entry(p, p->block - 1, &r))
			return p->err;
		if (fa_load32(r) < target)
			from = p->block;
	}
	uint32_t b = find_block(p, from, target, &last);
	if (p->err)
		return p->err;
	if (b >= p->ti.n_blocks) {
		p->doc = IX_END;
		p->block = p->ti.n_blocks;
		return 0;
	}
	if (decode_block(p, b))
		return p->err;
	p->i = search_block(p, 0, target);
	if (p->i >= p->n)
		return post_corrupt(p, "block directory disagrees with its block");
	p->doc = p->docs[p->i];
	return 0;
}

const ix_bound *ix_post_block_bound(const ix_postings *p)
{
	return &p->block_bound;
}

uint32_t ix_post_block_last(const ix_postings *p)
{
	return p->block_last;
}

/* Decode the tf arrays of the decoded block if that is still to do. */
static int need_tf(ix_postings *p)
{
	if (FA_LIKELY(p->tf_off == 0))
		return p->err;
	const unsigned char *d = p->seg->data;
	int rc = block_tfs(d + p->tf_off, d + p->tf_end, d + p->seg->len, p->n, p->tf_fm, p->tf_full,
	                   p->tf, &p->field_mask);
	p->tf_off = 0;
	return rc ? post_corrupt(p, "bad block") : 0;
}

int ix_post_decode_tf(ix_postings *p)
{
	return need_tf(p);
}

int ix_post_next_block(ix_postings *p)
{
	if (p->err || p->doc == IX_END)
		return p->err;
	if (p->block_decoded + 1 < p->ti.n_blocks)
		return decode_block(p, p->block_decoded + 1);
	p->i = p->n;
	p->doc = IX_END;
	return 0;
}

void ix_post_tf(const ix_postings *cp, uint16_t tf[FATHOM_NFIELDS])
{
	/* const for the callers' sake (reading tfs is logically a read); the
	 * cursor itself is always a mutable object, so the cast is defined. */
	ix_postings *p = (ix_postings *)(uintptr_t)cp;
	if (need_tf(p)) {
		memset(tf, 0, FATHOM_NFIELDS * sizeof tf[0]);
		return;
	}
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		tf[f] = (p->doc != IX_END && p->i < p->n) ? p->tf[f][p->i] : 0;
}

/* Read the block's position exceptions from the first again (the header
 * and the sums pos_reset worked out still hold). */
static void pos_rewind_exceptions(ix_postings *p)
{
	p->exc_off = p->pos_packed + p->pos_bytes;
	p->exc_left = p->exc_count;
	p->exc_idx = UINT64_MAX;
	p->exc_have = 0;
	p->exc_from = 0;
}

/* The sum of the decoded block's tfs, every field, of postings [from, to):
 * a field at a time over the fields present (the others are 0), so the
 * loops run over contiguous arrays. */
static uint64_t tf_sum(const ix_postings *p, uint32_t from, uint32_t to)
{
	uint64_t sum = 0;
	for (unsigned m = p->field_mask; m; m &= m - 1) {
		const uint16_t *t = p->tf[__builtin_ctz(m)];
		uint32_t s = 0;   /* at most IX_BLOCK * IX_MAX_TF */
		for (uint32_t i = from; i < to; i++)
			s += t[i];
		sum += s;
	}
	return sum;
}

/* Set up the positions stream of the decoded block. */
static int pos_reset(ix_postings *p)
{
	const ix_segment *s = p->seg;
	p->pos_block = p->block_decoded;
	p->pos_i = 0;
	p->pos_idx = 0;
	p->pos_total = tf_sum(p, 0, p->n);
	if (p->pos_hi <= p->pos_lo)
		return post_corrupt(p, "no positions");
	if (seg_check_range(s, p->pos_lo, p->pos_hi - p->pos_lo)) {
		p->doc = IX_END;
		return p->err = FATHOM_ECORRUPT;
	}
	const unsigned char *q = s->data + p->pos_lo, *end = s->data + p->pos_hi;
	unsigned hdr = *q++, b = hdr & 0x3f;
	uint64_t nexc = 0;
	if (b > 32 || (hdr & 0x40) || ((hdr & 0x80) && fa_varint_get(&q, end, &nexc)))
		return post_corrupt(p, "bad positions header");
	uint64_t bytes = (p->pos_total * b + 7) / 8;
	if ((uint64_t)(end - q) < bytes)
		return post_corrupt(p, "positions truncated");
	p->pos_bits = (uint8_t)b;
	p->pos_packed = (uint64_t)(q - s->data);
	p->pos_bytes = bytes;
	p->exc_count = nexc;
	pos_rewind_exceptions(p);
	return 0;
}

/* Decode the next exception into exc_idx/exc_high (exc_have = 0 at the end). */
static int exc_next(ix_postings *p)
{
	p->exc_have = 0;
	if (p->exc_left == 0)
		return 0;
	const unsigned char *q = p->seg->data + p->exc_off, *end = p->seg->data + p->pos_hi;
	uint64_t gap, high;
	if (fa_varint_get(&q, end, &gap) || fa_varint_get(&q, end, &high))
		return post_corrupt(p, "bad positions exception");
	uint64_t idx = p->exc_idx + gap + 1;   /* exc_idx starts at UINT64_MAX */
	if ((p->exc_idx != UINT64_MAX && idx <= p->exc_idx) || idx >= p->pos_total)
		return post_corrupt(p, "positions exception out of range");
	if (p->pos_bits == 32 || high >> (32 - p->pos_bits))
		return post_corrupt(p, "positions exception too large");
	p->exc_off = (uint64_t)(q - p->seg->data);
	p->exc_left--;
	p->exc_idx = idx;
	p->exc_high = high;
	p->exc_have = 1;
	return 0;
}

int ix_post_positions(ix_postings *p, int field, uint32_t *out, uint32_t max, uint32_t *n)
{
	*n = 0;
	if (p->err)
		return p->err;
	if (field < 0 || field >= FATHOM_NFIELDS)
		return fa_err(FATHOM_EINVAL, "no field %d", field);
	if (p->doc == IX_END || p->i >= p->n)
		return 0;
	if (need_tf(p))
		return p->err;
	uint32_t tf = p->tf[field][p->i];
	if (tf == 0)
		return 0;
	/* Walking forward through a block, as phrase matching does, continues
	 * the running sums; going back starts the block over. */
	if (p->pos_block != p->block_decoded || p->pos_i > p->i) {
		if (pos_reset(p))
			return p->err;
	}
	p->pos_idx += tf_sum(p, p->pos_i, p->i);
	p->pos_i = p->i;
	uint64_t start = p->pos_idx;
	for (int f = 0; f < field; f++)
		start += p->tf[f][p->i];
	uint32_t want = tf < max ? tf : max;
	/* Exceptions are consumed as requests move forward; asking again for
	 * what an earlier request covered reads them from the start. */
	if (start < p->exc_from) {
		pos_rewind_exceptions(p);
	}
	p->exc_from = start + want;

	const unsigned char *packed = p->seg->data + p->pos_packed;
	unsigned b = p->pos_bits;
	for (uint32_t k = 0; k < want; k++)
		out[k] = get_bits(packed, p->pos_bytes, start + k, b);
	/* Patch in the exceptions that fall in [start, start+want). */
	if (!p->exc_have && exc_next(p))
		return p->err;
	while (p->exc_have && p->exc_idx < start + want) {
		if (p->exc_idx >= start)
			out[p->exc_idx - start] |= (uint32_t)(p->exc_high << b);
		if (exc_next(p))
			return p->err;
	}
	uint64_t acc = 0;
	for (uint32_t k = 0; k < want; k++) {
		acc += out[k];
		if (acc > UINT32_MAX)
			return post_corrupt(p, "position overflows");
		out[k] = (uint32_t)acc;
	}
	*n = want;
	return 0;
}
