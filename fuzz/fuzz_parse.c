/*
 * fuzz_parse.c — arbitrary bytes as a query for the dialect's parser alone
 * (no index, so many more inputs per second than fuzz_query), read both
 * ways. The parser must never crash or recurse without bound; a query it
 * accepts has a canonical form that names only nodes it made, and parsing
 * it again gives the same form (the parser is deterministic).
 *
 * Lenient (the default) must accept every input under the length limit:
 * it may fail only past the limits (length, nodes), out of memory, or on
 * a query of blanks. A query the strict reading accepts reads the same
 * leniently, with nothing read literally; one it refuses (other than past
 * a limit) is read with at least one literal reading noted. The relaxed
 * reading (q_parse_relaxed: top-level phrases as words) of a query the
 * lenient one accepts fails only past the node limit.
 */
#include <stdint.h>
#include <stdlib.h>

#include "query/query_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int blank(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i] != ' ' && d[i] != '\t' && d[i] != '\n' && d[i] != '\r' && d[i] != '\f' &&
		    d[i] != '\v')
			return 0;
	return 1;
}

/* The tree's invariants, and a second parse giving the same form. */
static void check_tree(const q_ast *t, fa_arena *a, const uint8_t *data, size_t size, int strict,
                       fbuf *f)
{
	if (t->root >= t->nnodes || t->nkids > t->nnodes)
		abort();
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const q_node *n = &t->node[i];
		if (n->kind > QN_NOT || (uint64_t)n->first + n->n > t->nkids)
			abort();
		if ((n->kind == QN_WORD || n->kind == QN_PHRASE) &&
		    (n->text < (const char *)data || n->text + n->len > (const char *)data + size))
			abort();
	}
	q_ast_format(t, f);
	q_ast t2;
	fbuf f2;
	fbuf_init(&f2, 1u << 20);
	if (q_parse(&t2, a, (const char *)data, size, strict) != 0)
		abort();
	q_ast_format(&t2, &f2);
	if (f->len != f2.len || (f->len && memcmp(f->data, f2.data, f->len) != 0) ||
	    t->nlit != t2.nlit)
		abort();
	fbuf_free(&f2);
	if (t->nlit) {   /* the receipt's text is bounded and well formed */
		fbuf_init(&f2, 1u << 20);
		q_ast_format_literal(t, &f2);
		if (f2.err || f2.len == 0 || f2.len > 4096)
			abort();
		fbuf_free(&f2);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fa_arena a;
	fa_arena_init(&a, 64 * 1024, 0);
	q_ast ts, tl;
	fbuf fs, fl;
	fbuf_init(&fs, 1u << 20);
	fbuf_init(&fl, 1u << 20);
	int rs = q_parse(&ts, &a, (const char *)data, size, 1);
	int strict_limit = rs != 0 && strstr(fathom_errmsg(), "too many terms") != NULL;
	if (rs == 0)
		check_tree(&ts, &a, data, size, 1, &fs);
	int rl = q_parse(&tl, &a, (const char *)data, size, 0);
	if (rl == 0) {
		check_tree(&tl, &a, data, size, 0, &fl);
		if (rs == 0 && (tl.nlit || fl.len != fs.len ||
		                (fl.len && memcmp(fl.data, fs.data, fl.len) != 0)))
			abort();   /* well formed: the same reading */
		if (rs != 0 && !strict_limit && tl.nlit == 0)
			abort();   /* refused by strict: something was read literally */
		/* the default mode's second reading, the phrases as words: it
		 * fails only past the node limit, and notes each phrase */
		q_ast tr;
		uint32_t nr = 0;
		int rr = q_parse_relaxed(&tr, &a, (const char *)data, size, &tl, &nr);
		if (rr == 0 && nr) {
			if (tr.root >= tr.nnodes || tr.nkids > tr.nnodes || tr.nlit < nr)
				abort();
			for (uint32_t i = 0; i < tr.nnodes; i++) {
				const q_node *n = &tr.node[i];
				if (n->kind > QN_NOT || (uint64_t)n->first + n->n > tr.nkids)
					abort();
				if ((n->kind == QN_WORD || n->kind == QN_PHRASE) &&
				    (n->text < (const char *)data ||
				     n->text + n->len > (const char *)data + size))
					abort();
			}
		} else if (rr != 0 && rr != FATHOM_ENOMEM &&
		           !strstr(fathom_errmsg(), "too many terms"))
			abort();
	} else {
		int limit = size > Q_MAX_QUERY_BYTES || rl == FATHOM_ENOMEM ||
		            strstr(fathom_errmsg(), "too many terms") != NULL;
		if (!limit && !blank(data, size))
			abort();   /* lenient fails only past a limit or on blanks */
		if (rs == 0 && !limit)
			abort();
	}
	fbuf_free(&fs);
	fbuf_free(&fl);
	fa_arena_free(&a);
	return 0;
}
