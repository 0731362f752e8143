/*
 * fuzz_gunzip.c — gzip data decompressed (util/gz.c) from arbitrary bytes:
 * the first byte picks the output cap (so bombs meet it), the rest is the
 * data. Checks that the result is an error or at most the cap, and never a
 * crash or a leak.
 */
#include <stdint.h>
#include <stdlib.h>

#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t cap = (size_t)data[0] * 64;
	char *out = NULL;
	size_t len = 0;
	int rc = fa_gunzip(&out, &len, data + 1, size - 1, cap);
	if (rc == 0 && (!out || len > cap || out[len] != '\0'))
		abort();
	if (rc != 0 && (out || (rc != FATHOM_ECORRUPT && rc != FATHOM_ETOOBIG && rc != FATHOM_ENOMEM)))
		abort();
	fa_free(out);
	return 0;
}
