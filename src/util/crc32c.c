/*
 * crc32c.c — CRC-32C (Castagnoli), the checksum of every index file.
 *
 * The SSE4.2 crc32 instruction does 8 bytes per cycle-ish; the table version
 * (slicing by 1) is the portable fallback and the slow reference the fast
 * path is tested against. The CPU is asked once.
 */
#include "util/util.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FA_HAVE_SSE42_PATH 1
#include <cpuid.h>
#endif

static uint32_t crc_table[256];
static int crc_table_ready;

static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
	__atomic_store_n(&crc_table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t fa_crc32c_sw(uint32_t crc, const void *data, size_t n)
{
	const unsigned char *p = data;
	if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE))
		crc_table_init();
	crc = ~crc;
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#ifdef FA_HAVE_SSE42_PATH
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t c = ~crc;
	while (n && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		n--;
	}
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		n -= 8;
	}
	while (n--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}

static int cpu_has_sse42(void)
{
	static int cached = -1;
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	if (v < 0) {
		unsigned a, b, c, d;
		v = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) ? 1 : 0;
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}
#endif

uint32_t fa_crc32c(uint32_t crc, const void *data, size_t n)
{
#ifdef FA_HAVE_SSE42_PATH
	if (cpu_has_sse42())
		return crc32c_hw(crc, data, n);
#endif
	return fa_crc32c_sw(crc, data, n);
}
