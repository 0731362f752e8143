/*
 * alloc.c — the one allocation seam. Tests can make allocations fail after
 * a countdown to check that every error path cleans up (curl's torture
 * mode, SQLite's fault tests). fathom_malloc & co. open the seam to
 * clients; the countdown stays internal (a test links libfathom.a and
 * calls fa_alloc_fail_after), so no test hook becomes part of the ABI.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "util/util.h"

static atomic_long fail_countdown = -1;
static atomic_long failed_count;

/* The countdown moves by compare-and-swap: allocations on the pool's
 * threads race, and two that both saw 1 must not take it to -1 (which
 * would end the failing in the middle of a fault test). */
static int should_fail(void)
{
	long n = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
	for (;;) {
		if (FA_LIKELY(n < 0))
			return 0;
		if (n == 0) {
			atomic_fetch_add_explicit(&failed_count, 1, memory_order_relaxed);
			return 1;
		}
		if (atomic_compare_exchange_weak_explicit(&fail_countdown, &n, n - 1,
		                                          memory_order_relaxed, memory_order_relaxed))
			return 0;
	}
}

void fa_alloc_fail_after(long n)
{
	atomic_store(&failed_count, 0);
	atomic_store(&fail_countdown, n);
}

long fa_alloc_failed(void)
{
	return atomic_load(&failed_count);
}

void *fa_malloc(size_t n)
{
	if (should_fail())
		return NULL;
	return malloc(n ? n : 1);
}

void *fa_calloc(size_t count, size_t size)
{
	if (should_fail())
		return NULL;
	if (count == 0 || size == 0)
		count = size = 1;
	return calloc(count, size);
}

void *fa_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	return realloc(p, n ? n : 1);
}

void fa_free(void *p)
{
	free(p);
}

/* The same, public: for clients (the daemon) and for releasing what the
 * library hands out. */
void *fathom_malloc(size_t n)
{
	return fa_malloc(n);
}

void *fathom_calloc(size_t count, size_t size)
{
	return fa_calloc(count, size);
}

void *fathom_realloc(void *p, size_t n)
{
	return fa_realloc(p, n);
}

void fathom_free(void *p)
{
	fa_free(p);
}

char *fa_strndup(const char *s, size_t n)
{
	size_t sz;
	if (fa_add(n, 1, &sz))
		return NULL;
	char *d = fa_malloc(sz);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *fa_strdup(const char *s)
{
	return fa_strndup(s, strlen(s));
}

int fa_grow(void **arr, size_t *cap, size_t need, size_t elsz)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return fa_err(FATHOM_ENOMEM, "array too large");
		ncap *= 2;
	}
	size_t bytes;
	if (fa_mul(ncap, elsz, &bytes))
		return fa_err(FATHOM_ENOMEM, "array too large");
	void *p = fa_realloc(*arr, bytes);
	if (!p)
		return fa_err(FATHOM_ENOMEM, "out of memory growing an array to %zu bytes", bytes);
	*arr = p;
	*cap = ncap;
	return 0;
}
