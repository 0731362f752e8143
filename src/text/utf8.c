/*
 * utf8.c — UTF-8 validation, repair, boundary finding, and normalisation
 * (NFKC + case folding) for the analyser.
 *
 * What counts as one invalid sequence: a byte that does not start a valid
 * sequence, together with up to three continuation bytes (10xxxxxx) right
 * after it. So a truncated character ("E2 82" then ASCII) is one error, not
 * two, and a run of stray continuation bytes is one error per four bytes.
 * The tokenizer skips invalid bytes by the same rule, so its count agrees
 * with text_utf8_invalid_count().
 */
#include <utf8proc.h>

#include "text/text.h"

/* Options for utf8proc: NFKC (COMPAT + COMPOSE), Unicode case folding, and
 * dropping default-ignorable characters (soft hyphen, zero-width joiners),
 * which would otherwise make two spellings of one word differ. */
#define NORMALIZE_OPTIONS \
	(UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD | UTF8PROC_IGNORE)

/* Code points decoded on the stack before normalising needs the heap: terms
 * are short, so nearly every call fits. */
#define NORMALIZE_STACK_CPS 256

/* Far above any term; keeps utf8proc's signed sizes and our x4 buffers
 * clear of overflow. */
#define NORMALIZE_MAX_BYTES ((size_t)1 << 28)

size_t text_utf8_seq_len(const unsigned char *s, size_t n)
{
	if (n == 0)
		return 0;
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	if (c < 0xC2)  /* continuation byte, or an overlong 2-byte lead */
		return 0;
	if (c < 0xE0) {
		if (n < 2 || (s[1] & 0xC0) != 0x80)
			return 0;
		return 2;
	}
	if (c < 0xF0) {
		if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
			return 0;
		if (c == 0xE0 && s[1] < 0xA0)   /* overlong */
			return 0;
		if (c == 0xED && s[1] >= 0xA0)  /* UTF-16 surrogate */
			return 0;
		return 3;
	}
	if (c < 0xF5) {
		if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
		    (s[3] & 0xC0) != 0x80)
			return 0;
		if (c == 0xF0 && s[1] < 0x90)   /* overlong */
			return 0;
		if (c == 0xF4 && s[1] >= 0x90)  /* above U+10FFFF */
			return 0;
		return 4;
	}
	return 0;
}

/* Bytes covered by the invalid sequence at s[0] (see the top comment). */
static size_t invalid_span(const unsigned char *s, size_t n)
{
	size_t k = 1;
	while (k < n && k < 4 && (s[k] & 0xC0) == 0x80)
		k++;
	return k;
}

size_t text_utf8_invalid_count(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, bad = 0;
	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t k = text_utf8_seq_len(s + i, n - i);
		if (k == 0) {
			bad++;
			k = invalid_span(s + i, n - i);
		}
		i += k;
	}
	return bad;
}

int text_utf8_repair(fbuf *out, const char *str, size_t n, size_t *n_invalid)
{
	static const char replacement[3] = { (char)0xEF, (char)0xBF, (char)0xBD };
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0, bad = 0;
	int rc = FATHOM_OK;

	/* Valid stretches are copied in one append each; ASCII is skipped
	 * eight bytes at a time. */
	while (i < n && rc == FATHOM_OK) {
		if (n - i >= 8 && !(fa_load64(s + i) & 0x8080808080808080ull)) {
			i += 8;
			continue;
		}
		size_t k = s[i] < 0x80 ? 1 : text_utf8_seq_len(s + i, n - i);
		if (k != 0) {
			i += k;
			continue;
		}
		bad++;
		rc = fbuf_append(out, s + run, i - run);
		if (rc == FATHOM_OK)
			rc = fbuf_append(out, replacement, sizeof replacement);
		i += invalid_span(s + i, n - i);
		run = i;
	}
	if (rc == FATHOM_OK)
		rc = fbuf_append(out, s + run, n - run);
	if (n_invalid)
		*n_invalid = bad;
	return rc;
}

size_t text_utf8_floor(const char *str, size_t n, size_t pos)
{
	const unsigned char *s = (const unsigned char *)str;
	if (pos >= n)
		return n;
	/* A character is at most four bytes, so its lead is at most three bytes
	 * back. pos is inside a character only if that lead starts a valid
	 * sequence reaching past pos; stray bytes of invalid input are their
	 * own units and any of them is a fine boundary. */
	for (size_t back = 1; back <= 3 && back <= pos; back++) {
		unsigned char c = s[pos - back];
		if ((c & 0xC0) == 0x80)
			continue;
		size_t k = text_utf8_seq_len(s + pos - back, n - (pos - back));
		return k > back ? pos - back : pos;
	}
	return pos;
}

static int normalize_ascii(fbuf *out, const unsigned char *s, size_t n)
{
	int rc = fbuf_reserve(out, n);
	if (rc != FATHOM_OK)
		return rc;
	unsigned char *d = out->data + out->len;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		d[i] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
	}
	out->len += n;
	return FATHOM_OK;
}

/* Decompose valid UTF-8 into code points (with the options' case folding
 * and compatibility mappings), then compose and re-encode in place. */
static int normalize_unicode(fbuf *out, const unsigned char *s, size_t n)
{
	utf8proc_int32_t stack[NORMALIZE_STACK_CPS];
	utf8proc_int32_t *cps = stack;
	utf8proc_ssize_t cap = NORMALIZE_STACK_CPS - 1; /* reencode wants one spare */
	int rc = FATHOM_OK;

	if (n > NORMALIZE_MAX_BYTES)
		return fa_err(FATHOM_ETOOBIG, "text to normalise is too long (%zu bytes)", n);
	utf8proc_ssize_t got = utf8proc_decompose(s, (utf8proc_ssize_t)n, cps, cap,
	                                          (utf8proc_option_t)NORMALIZE_OPTIONS);
	if (got > cap) {
		size_t bytes;
		if (fa_mul((size_t)got + 1, sizeof *cps, &bytes) != 0)
			return fa_err(FATHOM_ETOOBIG, "text to normalise is too long");
		cps = fa_malloc(bytes);
		if (!cps)
			return fa_err(FATHOM_ENOMEM, "normalising %zu bytes", n);
		cap = got;
		got = utf8proc_decompose(s, (utf8proc_ssize_t)n, cps, cap,
		                         (utf8proc_option_t)NORMALIZE_OPTIONS);
	}
	if (got < 0 || got > cap) {
		rc = fa_err(FATHOM_EINVAL, "utf8proc: %s", utf8proc_errmsg(got < 0 ? got : 0));
		goto cleanup;
	}
	utf8proc_ssize_t bytes = utf8proc_reencode(cps, got, (utf8proc_option_t)NORMALIZE_OPTIONS);
	if (bytes < 0) {
		rc = fa_err(FATHOM_EINVAL, "utf8proc: %s", utf8proc_errmsg(bytes));
		goto cleanup;
	}
	rc = fbuf_append(out, cps, (size_t)bytes);
cleanup:
	if (cps != stack)
		fa_free(cps);
	return rc;
}

int text_normalize(fbuf *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n && s[i] < 0x80)
		i++;
	if (i == n)
		return normalize_ascii(out, s, n);

	if (text_utf8_invalid_count(str, n) == 0)
		return normalize_unicode(out, s, n);

	/* utf8proc refuses invalid input, so repair it first. */
	fbuf fixed;
	size_t max_len;
	if (fa_mul(n, 3, &max_len) != 0)
		return fa_err(FATHOM_ETOOBIG, "text to normalise is too long");
	fbuf_init(&fixed, max_len);
	int rc = text_utf8_repair(&fixed, str, n, NULL);
	if (rc == FATHOM_OK)
		rc = normalize_unicode(out, fixed.data, fixed.len);
	fbuf_free(&fixed);
	return rc;
}
