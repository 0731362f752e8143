/*
 * fuzz_tokenize.c — the analyser on arbitrary bytes. Checks what every
 * consumer of tokens relies on: positions never go back, byte ranges lie
 * inside the input, terms are non-empty valid UTF-8 of at most
 * TEXT_MAX_TERM bytes, and the invalid count agrees with utf8.c. Also
 * checks that repair and normalisation always give valid UTF-8.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct state {
	size_t size;
	uint32_t last_pos;
	int any;
} state;

static int check_token(void *ctx, const text_token *t)
{
	state *st = ctx;
	if (t->len == 0 || t->len > TEXT_MAX_TERM || strlen(t->term) != t->len)
		abort();
	if (text_utf8_invalid_count(t->term, t->len) != 0)
		abort();
	if (t->start >= t->end || t->end > st->size || t->kind > TOK_CJK_CHAR)
		abort();
	if (st->any && t->pos < st->last_pos)
		abort();
	st->last_pos = t->pos;
	st->any = 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static text_analyzer *english, *none;
	if (!english && text_analyzer_new(&english, "english") != 0)
		abort();
	if (!none && text_analyzer_new(&none, "none") != 0)
		abort();

	const char *s = (const char *)data;
	text_analyzer *a = size > 0 && (data[0] & 1) ? none : english;
	state st = { size, 0, 0 };
	uint32_t pos = 5;
	size_t invalid = 0;
	if (text_analyze(a, s, size, &pos, check_token, &st, &invalid) != 0)
		abort();
	if (invalid != text_utf8_invalid_count(s, size))
		abort();
	if (st.any && pos <= st.last_pos)
		abort();

	fbuf b;
	fbuf_init(&b, 0);
	size_t repaired = 0;
	if (text_utf8_repair(&b, s, size, &repaired) != 0 || repaired != invalid ||
	    text_utf8_invalid_count((const char *)b.data, b.len) != 0)
		abort();
	fbuf_reset(&b);
	if (size <= 4096) {
		if (text_normalize(&b, s, size) != 0 ||
		    text_utf8_invalid_count((const char *)b.data, b.len) != 0)
			abort();
	}
	fbuf_free(&b);

	/* floor: a start of a character, at most 3 bytes back, idempotent. */
	for (size_t p = 0; p <= size && p < 64; p++) {
		size_t f = text_utf8_floor(s, size, p);
		if (f > p || p - f > 3 || text_utf8_floor(s, size, f) != f)
			abort();
	}
	return 0;
}
