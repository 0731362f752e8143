/*
 * fuzz_html.c — HTML read as text (text/html.c), then chunked at its
 * headings, on arbitrary bytes (repaired to UTF-8 first, as ingest does).
 * Checks that every newline stays in place (the text has the source's
 * lines), that the text is valid UTF-8 and at most 6/5 of the source, that
 * headings are in order inside the text with levels 1-6 and bounded text,
 * that the title is bounded, and that the chunks tile the text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t newlines(const char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

typedef struct tile {
	size_t covered, n;
} tile;

static int check_chunk(void *ctx, const text_chunk *c)
{
	tile *t = ctx;
	if (c->byte_start > t->covered || c->byte_end <= t->covered || c->byte_end > t->n)
		abort();
	if (!c->headings || strlen(c->headings) != c->headings_len)
		abort();
	t->covered = c->byte_end;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fbuf src;
	fbuf_init(&src, 0);
	if (text_utf8_repair(&src, (const char *)data, size, NULL) != 0) {
		fbuf_free(&src);
		return 0;
	}
	const char *s = src.len ? (const char *)src.data : "";
	text_html h;
	text_html_init(&h);
	if (text_html_to_text(&h, s, src.len) != 0)
		abort();
	const char *t = h.text.len ? (const char *)h.text.data : "";
	if (newlines(t, h.text.len) != newlines(s, src.len))
		abort();
	if (text_utf8_invalid_count(t, h.text.len) != 0 || h.text.len > src.len + src.len / 5)
		abort();
	uint32_t prev = 0;
	for (size_t i = 0; i < h.n_headings; i++) {
		const text_heading *x = &h.headings[i];
		if (x->off < prev || x->off > h.text.len || x->level < 1 || x->level > 6 || x->len == 0 ||
		    x->len > 256 || text_utf8_invalid_count(x->text, x->len) != 0)
			abort();
		prev = x->off;
	}
	if (h.title && (h.title_len == 0 || h.title_len > 512))
		abort();
	text_chunk_opts o = { .target = 1 + (size > 0 ? data[0] : 0) * 4u, .max = 2048,
	                      .headings = h.headings, .n_headings = h.n_headings };
	tile tl = { 0, h.text.len };
	if (text_chunk_doc(t, h.text.len, DOC_HTML, &o, check_chunk, &tl) != 0 || tl.covered != h.text.len)
		abort();
	text_html_free(&h);
	fbuf_free(&src);
	return 0;
}
