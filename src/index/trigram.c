/*
 * trigram.c — the trigram index of a segment (docs/FORMAT.md 5.11): for
 * each trigram of the files' bytes (ASCII letters folded to lower case, and
 * of the bytes with U+017F and U+212A read as s and k), the documents
 * holding it. fathom grep turns a pattern into a query over
 * these lists and verifies the candidates with the regex engine.
 *
 *   TRI_POST   per trigram, ascending: its documents as varint gaps (the
 *              first is the document itself), strictly increasing
 *   TRI_INDEX  16 bytes per trigram, ascending: u32 trigram, u32 document
 *              count, u64 offset of its list in TRI_POST; a list ends where
 *              the next begins (the last at the section's end)
 */
#include "index/index_int.h"

/* Does s hold the two bytes a b at some place (a found with memchr, which
 * is far faster than memmem for so short a needle)? */
static int has_pair(const unsigned char *s, size_t n, unsigned char a, unsigned char b)
{
	const unsigned char *p = s, *end = s + n;
	while (p < end && (p = memchr(p, a, (size_t)(end - p))) != NULL) {
		if (p + 1 < end && p[1] == b)
			return 1;
		p++;
	}
	return 0;
}

/* The text with U+017F (long s, C5 BF) and U+212A (Kelvin sign, E2 84 AA)
 * as s and k: the two non-ASCII characters that caseless matching (PCRE2,
 * UTF) pairs with ASCII letters. Their trigrams are indexed too, so a
 * caseless plan may require s and k like any letter. NULL when the text has
 * neither (nearly always). */
static unsigned char *fold_ks(const unsigned char *s, size_t n, size_t *out_n)
{
	if (!has_pair(s, n, 0xc5, 0xbf) && !has_pair(s, n, 0xe2, 0x84))
		return NULL;
	unsigned char *f = fa_malloc(n ? n : 1);
	if (!f)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == 0xc5 && i + 1 < n && s[i + 1] == 0xbf) {
			f[o++] = 's';
			i++;
		} else if (s[i] == 0xe2 && i + 2 < n && s[i + 1] == 0x84 && s[i + 2] == 0xaa) {
			f[o++] = 'k';
			i += 2;
		} else {
			f[o++] = s[i];
		}
	}
	*out_n = o;
	return f;
}

/* The distinct trigrams of [s, s+n) not yet in seen, appended to *list
 * (marked in seen), with a rolling trigram: this loop is most of a
 * grep-only build. */
static int tri_pass(const unsigned char *s, size_t n, uint8_t *seen, uint32_t **list,
                    size_t *nl, size_t *cap)
{
	if (n < 3)
		return 0;
	uint32_t t = (uint32_t)ix_tri_fold(s[0]) << 8 | ix_tri_fold(s[1]);
	for (size_t i = 2; i < n; i++) {
		t = ((t << 8) | ix_tri_fold(s[i])) & 0xffffffu;
		uint8_t bit = (uint8_t)(1u << (t & 7));
		if (seen[t >> 3] & bit)
			continue;
		seen[t >> 3] |= bit;
		if (*nl == *cap && fa_grow((void **)list, cap, *nl + 1, sizeof **list))
			return fa_err(FATHOM_ENOMEM, "out of memory (trigrams)");
		(*list)[(*nl)++] = t;
	}
	return 0;
}

int ix_trigrams(const unsigned char *s, size_t n, uint8_t *seen,
                int (*cb)(void *ctx, uint32_t tri), void *ctx)
{
	uint32_t *list = NULL;
	size_t nl = 0, cap = 0, fn = 0;
	int rc = tri_pass(s, n, seen, &list, &nl, &cap);
	unsigned char *folded = rc ? NULL : fold_ks(s, n, &fn);
	if (folded)
		rc = tri_pass(folded, fn, seen, &list, &nl, &cap);
	for (size_t i = 0; i < nl && !rc; i++)
		rc = cb(ctx, list[i]);
	for (size_t i = 0; i < nl; i++)
		seen[list[i] >> 3] = 0;
	fa_free(folded);
	fa_free(list);
	return rc;
}

static int corrupt(const ix_segment *s, const char *what)
{
	return fa_err(FATHOM_ECORRUPT, "%s: trigram index: %s", s->path, what);
}

uint64_t seg_ntrigrams(const ix_segment *s)
{
	return s->sec_len[IX_SEC_TRI_INDEX] / IX_TRI_REC;
}

int seg_tri_at(const ix_segment *s, uint64_t i, ix_tri_info *out)
{
	uint64_t n = seg_ntrigrams(s);
	if (i >= n)
		return fa_err(FATHOM_ENOTFOUND, "%s: no trigram record %llu", s->path,
		              (unsigned long long)i);
	uint64_t off = s->sec_off[IX_SEC_TRI_INDEX] + i * IX_TRI_REC;
	int rc = seg_check_range(s, off, i + 1 < n ? 2 * IX_TRI_REC : IX_TRI_REC);
	if (rc)
		return rc;
	const unsigned char *r = s->data + off;
	out->tri = fa_load32(r);
	out->ndocs = fa_load32(r + 4);
	uint64_t start = fa_load64(r + 8);
	uint64_t end = i + 1 < n ? fa_load64(r + 8 + IX_TRI_REC) : s->sec_len[IX_SEC_TRI_POST];
	if (out->tri >= (1u << 24) || out->ndocs == 0 || out->ndocs > s->ndocs || start > end ||
	    end > s->sec_len[IX_SEC_TRI_POST])
		return corrupt(s, "bad record");
	out->off = s->sec_off[IX_SEC_TRI_POST] + start;
	out->len = end - start;
	return 0;
}

int seg_tri_find(const ix_segment *s, uint32_t tri, ix_tri_info *out)
{
	uint64_t lo = 0, hi = seg_ntrigrams(s);
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		uint64_t off = s->sec_off[IX_SEC_TRI_INDEX] + mid * IX_TRI_REC;
		int rc = seg_check_range(s, off, 4);
		if (rc)
			return rc;
		uint32_t t = fa_load32(s->data + off);
		if (t < tri)
			lo = mid + 1;
		else if (t > tri)
			hi = mid;
		else
			return seg_tri_at(s, mid, out);
	}
	return FATHOM_ENOTFOUND;
}

int seg_tri_docs(const ix_segment *s, const ix_tri_info *ti, uint32_t *docs)
{
	int rc = ti->len ? seg_check_range(s, ti->off, ti->len) : 0;
	if (rc)
		return rc;
	const unsigned char *p = s->data + ti->off, *end = p + ti->len;
	uint64_t doc = 0;
	for (uint32_t i = 0; i < ti->ndocs; i++) {
		uint64_t gap;
		if (fa_varint_get(&p, end, &gap) != 0)
			return corrupt(s, "truncated list");
		if (gap >= s->ndocs)
			return corrupt(s, "document out of range");
		doc = i ? doc + gap + 1 : gap;
		if (doc >= s->ndocs)
			return corrupt(s, "document out of range");
		docs[i] = (uint32_t)doc;
	}
	if (p != end)
		return corrupt(s, "list longer than its count");
	return 0;
}

int seg_tri_verify(const ix_segment *s)
{
	uint64_t n = seg_ntrigrams(s);
	if (s->sec_len[IX_SEC_TRI_INDEX] % IX_TRI_REC)
		return corrupt(s, "index size is not a multiple of its records");
	uint32_t *docs = fa_malloc(((size_t)s->ndocs + 1) * sizeof *docs);
	if (!docs)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	int rc = 0;
	int64_t prev = -1;
	for (uint64_t i = 0; i < n && !rc; i++) {
		ix_tri_info ti;
		if ((rc = seg_tri_at(s, i, &ti)) != 0)
			break;
		if ((int64_t)ti.tri <= prev)
			rc = corrupt(s, "trigrams out of order");
		else if (i == 0 && ti.off != s->sec_off[IX_SEC_TRI_POST])
			rc = corrupt(s, "the first list does not start the section");
		else
			rc = seg_tri_docs(s, &ti, docs);
		prev = ti.tri;
	}
	if (!rc && n == 0 && s->sec_len[IX_SEC_TRI_POST])
		rc = corrupt(s, "lists without an index");
	fa_free(docs);
	return rc;
}
