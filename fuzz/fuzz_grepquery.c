/*
 * fuzz_grepquery.c — the boolean grep query parser (fathom grep -Q): any
 * input parses or fails with FATHOM_ESYNTAX, never crashes, and what parses
 * stays within its limits (patterns, nesting) and plans into a trigram
 * query. The first byte holds the flags (-F, -i).
 */
#include <stdint.h>
#include <stdlib.h>

#include "grep/grep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int depth_of(const g_expr *x)
{
	int d = 0;
	for (uint32_t i = 0; i < x->n; i++) {
		int k = depth_of(x->kid[i]);
		if (k > d)
			d = k;
	}
	return d + 1;
}

static uint32_t terms_of(const g_expr *x)
{
	uint32_t n = x->op == GX_TERM;
	for (uint32_t i = 0; i < x->n; i++)
		n += terms_of(x->kid[i]);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	unsigned flags = data[0] & (G_LITERAL | G_CASELESS);
	fa_arena a;
	fa_arena_init(&a, 16 * 1024, 0);
	g_expr *x;
	uint32_t n;
	int rc = g_parse_query(&a, (const char *)data + 1, size - 1, flags, &x, &n);
	if (rc == 0) {
		if (n > G_MAX_TERMS || terms_of(x) != n || depth_of(x) > 2 * G_MAX_DEPTH + 2)
			abort();
		fbuf b;
		fbuf_init(&b, 0);
		g_expr_format(x, &b);
		fbuf_free(&b);
		g_query *q;
		if (g_expr_plan(&a, x, &q) != 0 && fathom_errmsg()[0] == '\0')
			abort();
	} else if (rc != FATHOM_ESYNTAX && rc != FATHOM_ENOMEM && rc != FATHOM_ETOOBIG) {
		abort();
	}
	fa_arena_free(&a);
	return 0;
}
