/*
 * buf.c — a growable byte buffer with a hard maximum and a sticky error:
 * after one failed append the rest are no-ops, so a writer checks b->err
 * once at the end (SQLite's p->rc idiom).
 */
#include <stdio.h>

#include "util/util.h"

void fbuf_init(fbuf *b, size_t max)
{
	b->data = NULL;
	b->len = b->cap = 0;
	b->max = max ? max : SIZE_MAX;
	b->err = 0;
}

void fbuf_free(fbuf *b)
{
	fa_free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void fbuf_reset(fbuf *b)
{
	b->len = 0;
	b->err = 0;
}

int fbuf_reserve(fbuf *b, size_t extra)
{
	size_t need;
	if (b->err)
		return b->err;
	/* +1 keeps room for the NUL that fbuf_detach adds. */
	if (fa_add(b->len, extra, &need) || need > b->max || fa_add(need, 1, &need))
		return b->err = fa_err(FATHOM_ETOOBIG, "buffer over its limit of %zu bytes", b->max);
	if (need <= b->cap)
		return 0;
	size_t ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
	unsigned char *p = fa_realloc(b->data, ncap);
	if (!p)
		return b->err = fa_err(FATHOM_ENOMEM, "out of memory (buffer of %zu bytes)", ncap);
	b->data = p;
	b->cap = ncap;
	return 0;
}

int fbuf_append(fbuf *b, const void *p, size_t n)
{
	if (n == 0)
		return b->err;
	int rc = fbuf_reserve(b, n);
	if (rc)
		return rc;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int fbuf_putc(fbuf *b, int c)
{
	unsigned char ch = (unsigned char)c;
	return fbuf_append(b, &ch, 1);
}

int fbuf_puts(fbuf *b, const char *s)
{
	return fbuf_append(b, s, strlen(s));
}

int fbuf_printf(fbuf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return b->err = fa_err(FATHOM_EINVAL, "bad format");
	if ((size_t)n < sizeof small)
		return fbuf_append(b, small, (size_t)n);
	int rc = fbuf_reserve(b, (size_t)n + 1);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int fbuf_put_u16(fbuf *b, uint16_t v)
{
	unsigned char x[2] = { (unsigned char)v, (unsigned char)(v >> 8) };
	return fbuf_append(b, x, 2);
}

int fbuf_put_u32(fbuf *b, uint32_t v)
{
	unsigned char x[4];
	fa_store32(x, v);
	return fbuf_append(b, x, 4);
}

int fbuf_put_u64(fbuf *b, uint64_t v)
{
	unsigned char x[8];
	fa_store64(x, v);
	return fbuf_append(b, x, 8);
}

int fbuf_put_varint(fbuf *b, uint64_t v)
{
	unsigned char x[10];
	return fbuf_append(b, x, fa_varint_put(x, v));
}

int fbuf_put_zeros(fbuf *b, size_t n)
{
	int rc = fbuf_reserve(b, n);
	if (rc)
		return rc;
	memset(b->data + b->len, 0, n);
	b->len += n;
	return 0;
}

char *fbuf_detach(fbuf *b, size_t *len)
{
	if (b->err)
		return NULL;
	if (fbuf_reserve(b, 0))
		return NULL;
	b->data[b->len] = '\0';
	char *p = (char *)b->data;
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
