/*
 * query_string.c — the targets of requests: percent-decoding (of a path,
 * and of query-string members, '+' as a space there), and the members of
 * a query string by name. A bad escape or a NUL is refused, never passed
 * on; so is what decodes to invalid UTF-8 (sv_check_target, before any
 * operation sees the target), which no document id, path or name holds.
 */
#include <errno.h>
#include <limits.h>
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

/* ---- UTF-8 ------------------------------------------------------------------------ */

size_t sv_utf8_char(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t len;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		lo = c == 0xE0 ? 0xA0 : 0x80;
		hi = c == 0xED ? 0x9F : 0xBF;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		lo = c == 0xF0 ? 0x90 : 0x80;
		hi = c == 0xF4 ? 0x8F : 0xBF;
	} else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		unsigned char b = s[i];
		if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
			return 0;
	}
	return len;
}

int sv_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t k = sv_utf8_char(p + i, n - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}

int sv_utf8_cut(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;   /* s[n] continues a character: cut before its start */
	}
	return n > (size_t)INT_MAX ? INT_MAX : (int)n;
}

/* ---- the target as a whole ---------------------------------------------------------- */

/* One member of a query string: 0 good, or -1 with e set naming it. */
static int check_member(const char *p, size_t n, sv_err *e)
{
	const char *eq = memchr(p, '=', n);
	size_t nl = eq ? (size_t)(eq - p) : n;
	char *k = sv_pct_decode(p, nl, 1);
	char *v = eq ? sv_pct_decode(eq + 1, n - nl - 1, 1) : NULL;
	int rc = 0;
	if (!k || !sv_utf8_valid(k, strlen(k))) {
		sv_err_set(e, 400, "a query parameter's name is %s", !k ? "malformed (a bad %% escape "
		           "or a NUL)" : "not valid UTF-8 after percent-decoding");
		rc = -1;
	} else if (eq && (!v || !sv_utf8_valid(v, strlen(v)))) {
		sv_err_set(e, 400, "query parameter \"%.*s\" is %s", sv_utf8_cut(k, 64), k,
		           !v ? "malformed (a bad %% escape or a NUL)"
		              : "not valid UTF-8 after percent-decoding");
		rc = -1;
	}
	fathom_free(k);
	fathom_free(v);
	return rc;
}

int sv_check_target(const char *path, const char *qs, sv_err *e)
{
	if (!sv_utf8_valid(path, strlen(path))) {
		sv_err_set(e, 400, "%s is not valid UTF-8 after percent-decoding",
		           strncmp(path, "/documents/", 11) == 0 ? "the document id in the path"
		                                                 : "the path");
		return -1;
	}
	for (const char *p = qs; p && *p;) {
		const char *amp = strchr(p, '&');
		size_t n = amp ? (size_t)(amp - p) : strlen(p);
		if (n && check_member(p, n, e))
			return -1;
		p = amp ? amp + 1 : NULL;
	}
	return 0;
}
