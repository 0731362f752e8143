/*
 * varint.c — LEB128 variable-length integers (7 bits a byte, low first).
 */
#include "util/util.h"

size_t fa_varint_put(unsigned char *out, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (unsigned char)v;
	return n;
}

int fa_varint_get_long(const unsigned char **pp, const unsigned char *end, uint64_t *v)
{
	const unsigned char *p = *pp;
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (p >= end)
			return -1;
		unsigned char b = *p++;
		/* The tenth byte may only carry the top bit of a uint64_t. */
		if (shift == 63 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*v = x;
			return 0;
		}
	}
	return -1;
}

int fa_varint_get32_long(const unsigned char **pp, const unsigned char *end, uint32_t *v)
{
	uint64_t x;
	if (fa_varint_get_long(pp, end, &x) || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}
