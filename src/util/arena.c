/*
 * arena.c — a bump allocator. Per-query and per-document work allocates
 * here and releases everything with one fa_arena_reset/fa_arena_free.
 */
#include "util/util.h"

struct fa_arena_block {
	fa_arena_block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

void fa_arena_init(fa_arena *a, size_t block_size, size_t max)
{
	a->head = NULL;
	a->block_size = block_size ? block_size : 64 * 1024;
	a->total = 0;
	a->max = max;
}

void *fa_arena_alloc(fa_arena *a, size_t n)
{
	size_t need;
	if (fa_add(n, 15, &need))
		return NULL;
	need &= ~(size_t)15;
	fa_arena_block *b = a->head;
	if (!b || b->size - b->used < need) {
		size_t sz = need > a->block_size ? need : a->block_size, bytes;
		if (fa_add(sz, sizeof(fa_arena_block), &bytes))
			return NULL;
		if (a->max && (a->total + bytes > a->max))
			return NULL;
		b = fa_malloc(bytes);
		if (!b)
			return NULL;
		b->size = sz;
		b->used = 0;
		b->next = a->head;
		a->head = b;
		a->total += bytes;
	}
	void *p = b->data + b->used;
	b->used += need;
	return p;
}

void *fa_arena_calloc(fa_arena *a, size_t count, size_t size)
{
	size_t n;
	if (fa_mul(count, size, &n))
		return NULL;
	void *p = fa_arena_alloc(a, n);
	if (p)
		memset(p, 0, n);
	return p;
}

char *fa_arena_strndup(fa_arena *a, const char *s, size_t n)
{
	size_t sz;
	if (fa_add(n, 1, &sz))
		return NULL;
	char *d = fa_arena_alloc(a, sz);
	if (!d)
		return NULL;
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void fa_arena_reset(fa_arena *a)
{
	/* Keep the oldest block (the last in the list): a reused arena then
	 * usually allocates nothing. */
	fa_arena_block *b = a->head, *keep = NULL;
	while (b) {
		fa_arena_block *next = b->next;
		if (!next) {
			keep = b;
			break;
		}
		a->total -= b->size + sizeof(fa_arena_block);
		fa_free(b);
		b = next;
	}
	if (keep)
		keep->used = 0;
	a->head = keep;
}

void fa_arena_free(fa_arena *a)
{
	fa_arena_block *b = a->head;
	while (b) {
		fa_arena_block *next = b->next;
		fa_free(b);
		b = next;
	}
	a->head = NULL;
	a->total = 0;
}
