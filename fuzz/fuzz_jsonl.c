/*
 * fuzz_jsonl.c — arbitrary bytes as JSON lines: each line through
 * jsonl_parse_line, then the whole input through jsonl_read_stream with a
 * small line limit taken from the first byte. Every field of every
 * delivered document is read in full, so a bad pointer shows under ASan.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t sink;

static int on_doc(void *ctx, const jsonl_doc *d)
{
	(void)ctx;
	sink += strlen(d->id) + strlen(d->title) + strlen(d->url) + d->body_len;
	if (d->id[0] == '\0')
		__builtin_trap(); /* an empty id must have been rejected */
	if (d->body_len && d->body[d->body_len - 1] == '\0')
		__builtin_trap();
	if (d->path)
		sink += strlen(d->path);
	for (size_t i = 0; i < d->n_tags; i++)
		sink += strlen(d->tags[i]);
	for (size_t i = 0; i < d->n_meta; i++) {
		if (!strchr(d->meta[i], '='))
			__builtin_trap();
		sink += strlen(d->meta[i]);
	}
	return 0;
}

static void on_error(void *ctx, uint64_t line_no, const char *msg)
{
	(void)ctx;
	sink += line_no + strlen(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jsonl_opts o;
	memset(&o, 0, sizeof o);
	o.on_doc = on_doc;
	o.on_error = on_error;
	const char *p = (const char *)data;
	size_t i = 0;
	uint64_t line_no = 0;
	while (i < size) {
		const char *nl = memchr(p + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - p) : size;
		jsonl_parse_line(p + i, end - i, ++line_no, &o);
		i = end + 1;
	}
	if (size == 0)
		return 0;
	o.max_line = 1 + (size_t)data[0] * 4;
	FILE *f = fmemopen((void *)(uintptr_t)data, size, "rb");
	if (!f)
		return 0;
	jsonl_stats st;
	jsonl_read_stream(f, &o, &st);
	fclose(f);
	if (st.docs + st.blank + st.errors != st.lines)
		__builtin_trap();
	return 0;
}
