/*
 * hash.c — a 64-bit string hash and an open-addressing string map.
 *
 * The hash mixes 8 bytes at a time with a multiply-xorshift (in the spirit
 * of wyhash/murmur finalizers; written from the idea, not their code). It is
 * used for hash tables and content fingerprints, never for security.
 */
#include "util/util.h"

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	x ^= x >> 32;
	return x;
}

uint64_t fa_hash64(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (0x9e3779b97f4a7c15ull * (n + 1));
	while (n >= 8) {
		h = (h ^ mix64(fa_load64(p))) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t t = 0;
		memcpy(&t, p, n);
		h = (h ^ mix64(t ^ ((uint64_t)n << 56))) * 0x9e3779b97f4a7c15ull;
	}
	return mix64(h);
}

void fa_strmap_init(fa_strmap *m)
{
	m->slots = NULL;
	m->cap = m->count = 0;
	fa_arena_init(&m->keys, 256 * 1024, 0);
}

void fa_strmap_free(fa_strmap *m)
{
	fa_free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
	fa_arena_free(&m->keys);
}

fa_strmap_slot *fa_strmap_find(const fa_strmap *m, const char *key, size_t len)
{
	if (!m->cap || len > UINT32_MAX)
		return NULL;
	uint64_t h = fa_hash64(key, len, 0);
	uint32_t h32 = (uint32_t)h;
	size_t mask = m->cap - 1, i = (size_t)(h >> 32) & mask;
	for (;;) {
		fa_strmap_slot *s = &m->slots[i];
		if (!s->key)
			return NULL;
		if (s->hash32 == h32 && s->len == len && memcmp(s->key, key, len) == 0)
			return s;
		i = (i + 1) & mask;
	}
}

static int strmap_rehash(fa_strmap *m, size_t ncap)
{
	fa_strmap_slot *ns = fa_calloc(ncap, sizeof *ns);
	if (!ns)
		return fa_err(FATHOM_ENOMEM, "out of memory (hash map of %zu slots)", ncap);
	for (size_t i = 0; i < m->cap; i++) {
		fa_strmap_slot *s = &m->slots[i];
		if (!s->key)
			continue;
		uint64_t h = fa_hash64(s->key, s->len, 0);
		size_t j = (size_t)(h >> 32) & (ncap - 1);
		while (ns[j].key)
			j = (j + 1) & (ncap - 1);
		ns[j] = *s;
	}
	fa_free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

fa_strmap_slot *fa_strmap_upsert(fa_strmap *m, const char *key, size_t len, int *is_new)
{
	if (len > UINT32_MAX)
		return NULL;
	/* Keep the load factor under 1/2 so probes stay short. */
	if ((m->count + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		if (ncap < m->cap || strmap_rehash(m, ncap))
			return NULL;
	}
	uint64_t h = fa_hash64(key, len, 0);
	uint32_t h32 = (uint32_t)h;
	size_t mask = m->cap - 1, i = (size_t)(h >> 32) & mask;
	for (;;) {
		fa_strmap_slot *s = &m->slots[i];
		if (!s->key) {
			char *k = fa_arena_strndup(&m->keys, key, len);
			if (!k)
				return NULL;
			s->key = k;
			s->len = (uint32_t)len;
			s->hash32 = h32;
			s->value = 0;
			m->count++;
			if (is_new)
				*is_new = 1;
			return s;
		}
		if (s->hash32 == h32 && s->len == len && memcmp(s->key, key, len) == 0) {
			if (is_new)
				*is_new = 0;
			return s;
		}
		i = (i + 1) & mask;
	}
}
