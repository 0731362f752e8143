/*
 * fuzz_chunk.c — the chunkers on arbitrary bytes. The first four bytes pick
 * the document kind and small options; the rest is the document. Checks
 * coverage (chunks tile the document, overlap aside), order, the max size,
 * UTF-8 boundaries and line numbers, and that a title lies inside the
 * document.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct state {
	const char *doc;
	size_t n;
	uint32_t overlap, max;
	size_t covered;       /* end of the previous chunk */
	size_t prev_start;
	size_t line;          /* line number at byte line_at */
	size_t line_at;
	uint32_t count;
} state;

/* 1-based line of byte off, counting forward from the last answer (chunk
 * starts only move forward). */
static size_t line_of(state *st, size_t off)
{
	if (off < st->line_at) {
		st->line = 1;
		st->line_at = 0;
	}
	for (; st->line_at < off; st->line_at++)
		st->line += st->doc[st->line_at] == '\n';
	return st->line;
}

static int check_chunk(void *ctx, const text_chunk *c)
{
	state *st = ctx;
	size_t s = c->byte_start, e = c->byte_end;
	if (c->order != st->count++)
		abort();
	if (s >= e || e > st->n || s > st->covered || e <= st->covered)
		abort();
	if (st->covered - s > st->overlap || s < st->prev_start)
		abort();
	if (e - s > st->max)
		abort();
	if (text_utf8_floor(st->doc, st->n, s) != s || text_utf8_floor(st->doc, st->n, e) != e)
		abort();
	if (!c->headings || strlen(c->headings) != c->headings_len)
		abort();
	if (c->line_start != line_of(st, s) || c->line_end != line_of(st, e - 1))
		abort();
	st->covered = e;
	st->prev_start = s;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	int kind = data[0] % 6;   /* every enum text_doc_kind */
	text_chunk_opts o;
	o.headings = NULL;   /* DOC_HTML's come from text/html.c: fuzz_html.c */
	o.n_headings = 0;
	o.max = 4u + (uint32_t)data[1] * 4u;
	o.target = 1u + (uint32_t)data[2] * 2u;
	o.overlap = data[3];
	const char *doc = (const char *)data + 4;
	size_t n = size - 4;

	/* What the chunker will use after clamping (see chunk_opts()). */
	uint32_t target = o.target > o.max ? o.max : o.target;
	uint32_t overlap = o.overlap >= target ? target / 2 : o.overlap;
	state st = { doc, n, overlap, o.max, 0, 0, 1, 0, 0 };
	if (text_chunk_doc(doc, n, kind, &o, check_chunk, &st) != 0)
		abort();
	if (st.covered != n)
		abort();

	size_t len;
	const char *t = text_markdown_title(doc, n, &len);
	if (t && (t < doc || len == 0 || t + len > doc + n))
		abort();
	t = text_markup_title(doc, n, kind, &len);
	if (t && (t < doc || len == 0 || t + len > doc + n))
		abort();

	char name[32];
	size_t k = n < sizeof name - 1 ? n : sizeof name - 1;
	memcpy(name, doc, k);
	name[k] = '\0';
	const char *lang = NULL;
	int dk = text_detect_kind(name, &lang);
	if (dk < DOC_TEXT || dk > DOC_ASCIIDOC || !lang)
		abort();
	return 0;
}
