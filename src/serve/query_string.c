/*
 * query_string.c — the targets of requests: percent-decoding (of a path,
 * and of query-string members, '+' as a space there), and the members of
 * a query string by name. A bad escape or a NUL is refused, never passed
 * on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

static int hexv(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

char *sv_pct_decode(const char *p, size_t n, int plus)
{
	char *o = fathom_malloc(n + 1);
	if (!o)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)p[i];
		if (c == '%') {
			if (i + 2 >= n) {
				fathom_free(o);
				return NULL;
			}
			int a = hexv(p[i + 1]), b = hexv(p[i + 2]);
			if (a < 0 || b < 0) {
				fathom_free(o);
				return NULL;
			}
			c = a * 16 + b;
			i += 2;
		} else if (c == '+' && plus) {
			c = ' ';
		}
		if (c == 0) {
			fathom_free(o);
			return NULL;
		}
		o[k++] = (char)c;
	}
	o[k] = '\0';
	return o;
}

char *sv_qs_get(const char *qs, const char *key, int *bad)
{
	size_t kl = strlen(key);
	for (const char *p = qs; p && *p;) {
		const char *amp = strchr(p, '&');
		size_t n = amp ? (size_t)(amp - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		size_t nl = eq ? (size_t)(eq - p) : n;
		if (nl == kl && memcmp(p, key, kl) == 0) {
			char *v = eq ? sv_pct_decode(eq + 1, n - nl - 1, 1) : sv_strdup("");
			if (!v)
				*bad = 1;
			return v;
		}
		p = amp ? amp + 1 : NULL;
	}
	return NULL;
}

json_t *sv_qs_int(const char *qs, const char *key, int *bad)
{
	char *v = sv_qs_get(qs, key, bad);
	if (!v)
		return NULL;
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	json_t *j = NULL;
	if (*v && !*end && !errno)
		j = json_integer(x);
	else
		*bad = 1;
	fathom_free(v);
	return j;
}
