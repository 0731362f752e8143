/*
 * fuzz_glossary.c — arbitrary bytes as a glossary payload (what the index
 * stores inside glossary-<n>.fglo). The parser must never crash; a payload
 * it accepts serialises back to exactly the same bytes (no payload at all is
 * the empty glossary, written as its header), and the lookups and the
 * protection check run over every term.
 */
#include <stdint.h>
#include <stdlib.h>

#include "query/glossary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q_glossary g;
	if (q_gloss_parse(&g, data, size) != 0)
		return 0;
	fbuf b;
	fbuf_init(&b, 0);
	if (q_gloss_serialize(&g, &b) != 0)
		abort();
	if (size == 0) {
		/* No payload is the empty glossary (an index without one): it
		 * serialises as the empty glossary's header, which must parse
		 * back to no items. */
		q_glossary e;
		if (g.n != 0 || b.len == 0 || q_gloss_parse(&e, b.data, b.len) != 0 || e.n != 0)
			abort();
		q_gloss_free(&e);
	} else if (b.len != size || memcmp(b.data, data, size) != 0) {
		abort();
	}
	for (size_t i = 0; i < g.n; i++) {
		for (uint32_t t = 0; t < g.items[i].nterms; t++) {
			const char *term = g.items[i].terms[t];
			(void)q_gloss_group_of(&g, term, strlen(term));
			(void)q_gloss_protected(&g, term, strlen(term));
		}
	}
	fbuf_free(&b);
	q_gloss_free(&g);
	return 0;
}
