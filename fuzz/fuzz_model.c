/*
 * fuzz_model.c — arbitrary bytes as the corpus embedder's model file
 * (src/embed/model.c). Each input is read twice: as it is, and with its
 * last four bytes made the right CRC32C, so that mutations reach the
 * checks behind the checksum. What reads must hold together: every word
 * found at its place, every value finite, and written back it is the same
 * bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size)
{
	em_model *m = NULL;
	if (em_model_read(&m, data, size, "fuzz") != 0) {
		if (m)
			__builtin_trap();   /* an error leaves nothing behind */
		return;
	}
	const em_vectors *v = m->vec;
	if (v->n == 0 || v->dim == 0 || !m->weight || !m->count)
		__builtin_trap();
	for (uint32_t i = 0; i < v->n; i++) {
		const char *w = em_vectors_word(v, i);
		if (em_vectors_find(v, w, strlen(w)) != (int64_t)i)
			__builtin_trap();
		for (uint32_t k = 0; k < v->dim; k++)
			if (!isfinite(em_vectors_row(v, i)[k]))
				__builtin_trap();
		if (!(m->weight[i] > 0 && m->weight[i] <= 1))
			__builtin_trap();
	}
	unsigned char *b = NULL;
	size_t len = 0;
	if (em_model_write(m, &b, &len) != 0 || len != size || memcmp(b, data, size) != 0)
		__builtin_trap();
	fa_free(b);
	em_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size);
	if (size < 4 || size > ((size_t)64 << 20))
		return 0;
	uint8_t *c = malloc(size);
	if (!c)
		return 0;
	memcpy(c, data, size);
	fa_store32(c + size - 4, fa_crc32c(0, c, size - 4));
	check(c, size);
	free(c);
	return 0;
}
