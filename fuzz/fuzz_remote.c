/*
 * fuzz_remote.c — arbitrary bytes as an embeddings service's reply: the
 * first byte picks the number of texts (1..8), the second the dimension
 * expected (0: learnt from the reply, else 1..16), the rest is the body.
 * What parses must hold together: the dimension in 1..EM_MAX_DIM (the one
 * asked for when one was), every row finite and unit or zero.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "embed/embed.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t n = (size_t)(data[0] % 8) + 1;
	uint32_t asked = data[1] % 17, dim = asked;
	float *out = fa_malloc(n * EM_MAX_DIM * sizeof *out);
	if (!out)
		return 0;
	if (em_remote_parse(out, &dim, (const char *)data + 2, size - 2, n, "fuzz") == 0) {
		if (dim == 0 || dim > EM_MAX_DIM || (asked && dim != asked))
			__builtin_trap();
		for (size_t i = 0; i < n; i++) {
			double ss = 0;
			for (uint32_t k = 0; k < dim; k++) {
				float v = out[i * dim + k];
				if (!isfinite(v))
					__builtin_trap();
				ss += (double)v * v;
			}
			if (!(ss == 0.0 || fabs(ss - 1.0) < 1e-3))
				__builtin_trap();
		}
	}
	fa_free(out);
	return 0;
}
