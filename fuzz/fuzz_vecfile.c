/*
 * fuzz_vecfile.c — arbitrary bytes as a word vector file: the first byte
 * picks the format (auto, GloVe, word2vec text, word2vec binary), the rest
 * is the file. What parses must hold together: every value finite, every
 * word found again at its first place, and normalising leaves unit or zero
 * rows.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "embed/embed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	em_vectors *v = NULL;
	if (em_vectors_parse(&v, (const char *)data + 1, size - 1, data[0] % 4, "fuzz") != 0) {
		if (v)
			__builtin_trap();   /* an error leaves nothing behind */
		return 0;
	}
	if (v->dim == 0 && v->n > 0)
		__builtin_trap();
	for (uint32_t i = 0; i < v->n; i++) {
		const char *w = em_vectors_word(v, i);
		size_t len = strlen(w);
		int64_t at = em_vectors_find(v, w, len);
		if (len == 0 || at < 0 || at > (int64_t)i ||
		    strcmp(em_vectors_word(v, (uint32_t)at), w) != 0)
			__builtin_trap();
		for (uint32_t k = 0; k < v->dim; k++)
			if (!isfinite(em_vectors_row(v, i)[k]))
				__builtin_trap();
	}
	em_vectors_normalize(v);
	for (uint32_t i = 0; i < v->n; i++) {
		double ss = 0;
		for (uint32_t k = 0; k < v->dim; k++)
			ss += (double)em_vectors_row(v, i)[k] * em_vectors_row(v, i)[k];
		if (!(ss == 0.0 || fabs(ss - 1.0) < 1e-3))
			__builtin_trap();
	}
	em_vectors_free(v);
	return 0;
}
