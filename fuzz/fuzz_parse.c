/*
 * fuzz_parse.c — arbitrary bytes as a query for the dialect's parser alone
 * (no index, so many more inputs per second than fuzz_query). The parser
 * must never crash or recurse without bound; a query it accepts has a
 * canonical form that names only nodes it made, and parsing that form's
 * source again gives the same form (the parser is deterministic).
 */
#include <stdint.h>
#include <stdlib.h>

#include "query/query_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fa_arena a;
	fa_arena_init(&a, 64 * 1024, 0);
	q_ast t, t2;
	fbuf f, f2;
	fbuf_init(&f, 1u << 20);
	fbuf_init(&f2, 1u << 20);
	if (q_parse(&t, &a, (const char *)data, size) == 0) {
		if (t.root >= t.nnodes || t.nkids > t.nnodes)
			abort();
		for (uint32_t i = 0; i < t.nnodes; i++) {
			const q_node *n = &t.node[i];
			if (n->kind > QN_NOT || (uint64_t)n->first + n->n > t.nkids)
				abort();
			if ((n->kind == QN_WORD || n->kind == QN_PHRASE) &&
			    (n->text < (const char *)data || n->text + n->len > (const char *)data + size))
				abort();
		}
		q_ast_format(&t, &f);
		if (q_parse(&t2, &a, (const char *)data, size) != 0)
			abort();
		q_ast_format(&t2, &f2);
		if (f.len != f2.len || (f.len && memcmp(f.data, f2.data, f.len) != 0))
			abort();
	}
	fbuf_free(&f);
	fbuf_free(&f2);
	fa_arena_free(&a);
	return 0;
}
