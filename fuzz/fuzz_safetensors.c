/*
 * fuzz_safetensors.c — arbitrary bytes as a safetensors file: what parses
 * must describe tensors inside the data, and reading every floating point
 * one (up to a million values) must stay inside it (ASan sees a stray
 * read).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so a read past the end is seen */
	unsigned char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	em_st *st = NULL;
	if (em_st_parse(&st, buf, size, "fuzz") != 0) {
		if (st)
			__builtin_trap();
		free(buf);
		return 0;
	}
	for (uint32_t i = 0; i < st->n; i++) {
		const em_tensor *t = &st->t[i];
		if (t->off > st->data_len || t->len > st->data_len - t->off)
			__builtin_trap();
		if (em_st_find(st, t->name) == NULL)
			__builtin_trap();
		if (t->count > (1u << 20))
			continue;
		float *out = malloc((t->count ? t->count : 1) * sizeof *out);
		if (out) {
			int rc = em_st_floats(st, t, out);
			if (rc != 0 && rc != FATHOM_EINVAL && rc != FATHOM_ESYNTAX)
				__builtin_trap();
			free(out);
		}
	}
	em_st_free(st);
	free(buf);
	return 0;
}
