/*
 * fuzz_grepplan.c — the trigram planner must never lose a match. The input
 * is a flags byte, a pattern up to the first NUL, and a text. When PCRE2
 * (as fathom grep compiles it) finds the pattern in the text, the text's
 * trigram set must satisfy the planned query; otherwise the index would
 * skip a file that matches.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <stdlib.h>

#include "grep/grep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *seen, *set;

static int collect(void *ctx, uint32_t tri)
{
	(void)ctx;
	set[tri >> 3] |= (uint8_t)(1u << (tri & 7));
	return 0;
}

static int has(void *ctx, uint32_t tri)
{
	(void)ctx;
	return set[tri >> 3] >> (tri & 7) & 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	if (!seen && (!(seen = calloc(1u << 21, 1)) || !(set = calloc(1u << 21, 1))))
		abort();
	unsigned flags = data[0] & 3;
	const uint8_t *pat = data + 1, *nul = memchr(pat, 0, size - 1);
	size_t plen = nul ? (size_t)(nul - pat) : size - 1;
	const uint8_t *text = nul ? nul + 1 : data + size;
	size_t tlen = (size_t)(data + size - text);
	if ((flags & G_LITERAL) && memchr(pat, '\n', plen))
		return 0;   /* grep -F lines are alternatives; PCRE2_LITERAL has one */

	uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
	if (flags & G_CASELESS)
		opts |= PCRE2_CASELESS;
	if (flags & G_LITERAL)
		opts |= PCRE2_LITERAL;
	int err;
	PCRE2_SIZE erroff;
	pcre2_code *re = pcre2_compile(pat, plen, opts, &err, &erroff, NULL);
	if (!re)
		return 0;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	pcre2_match_context *mc = pcre2_match_context_create(NULL);
	pcre2_set_match_limit(mc, 100000);
	pcre2_set_depth_limit(mc, 1000);
	int m = pcre2_match(re, text, tlen, 0, 0, md, mc);
	if (m >= 0) {
		fa_arena a;
		fa_arena_init(&a, 16 * 1024, 0);
		g_query *q;
		if (g_plan(&a, (const char *)pat, plen, flags, &q) == 0) {
			memset(set, 0, 1u << 21);
			ix_trigrams(text, tlen, seen, collect, NULL);
			if (!g_query_eval(q, has, NULL))
				abort();   /* the plan would skip a matching file */
		}
		fa_arena_free(&a);
	}
	pcre2_match_context_free(mc);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return 0;
}
