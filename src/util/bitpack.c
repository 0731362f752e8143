/*
 * bitpack.c — fixed-width bit packing of 32-bit values, LSB first. Postings
 * store each block of doc-id gaps and term frequencies at the width of its
 * largest value.
 *
 * The loops work 64 bits at a time; the compiler unrolls them well for the
 * block size used (128). The decoder reads whole bytes only inside
 * fa_bitpack_bytes(n, bits), so it never overreads a block.
 */
#include "util/util.h"

void fa_bitpack(unsigned char *out, const uint32_t *in, size_t n, unsigned bits)
{
	size_t nbytes = fa_bitpack_bytes(n, bits);
	if (bits == 0)
		return;
	memset(out, 0, nbytes);
	uint64_t acc = 0;
	unsigned fill = 0;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		acc |= (uint64_t)in[i] << fill;
		fill += bits;
		while (fill >= 8) {
			out[o++] = (unsigned char)acc;
			acc >>= 8;
			fill -= 8;
		}
	}
	if (fill)
		out[o++] = (unsigned char)acc;
}

void fa_bitunpack(uint32_t *out, const unsigned char *in, size_t n, unsigned bits)
{
	if (bits == 0) {
		memset(out, 0, n * sizeof *out);
		return;
	}
	size_t nbytes = fa_bitpack_bytes(n, bits);
	uint64_t mask = bits == 32 ? 0xffffffffu : ((uint64_t)1 << bits) - 1;
	uint64_t acc = 0;
	unsigned have = 0;
	size_t ip = 0;
	for (size_t i = 0; i < n; i++) {
		while (have < bits) {
			/* Refill a byte at a time near the end, 4 at a time otherwise. */
			if (have <= 32 && ip + 4 <= nbytes) {
				acc |= (uint64_t)fa_load32(in + ip) << have;
				ip += 4;
				have += 32;
			} else {
				acc |= (uint64_t)in[ip++] << have;
				have += 8;
			}
		}
		out[i] = (uint32_t)(acc & mask);
		acc >>= bits;
		have -= bits;
	}
}
