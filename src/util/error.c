/*
 * error.c — error codes and the thread-local detail message.
 *
 * Every failing library function returns a negative code; fa_err() also
 * records why, so callers can print fathom_errmsg() ("seg-3.fseg: page 12
 * checksum mismatch") instead of just "index file is corrupt".
 */
#include <stdio.h>

#include "util/util.h"

static _Thread_local char err_detail[1024];

int fa_err(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err_detail, sizeof err_detail, fmt, ap);
	va_end(ap);
	return code;
}

int fa_err_wrap(int code, const char *fmt, ...)
{
	char prefix[512], old[sizeof err_detail];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err_detail, sizeof old);
	/* Built piecewise: a long detail is cut, never overflowed. */
	size_t n = strlen(prefix), cap = sizeof err_detail - 1;
	if (n > cap)
		n = cap;
	memcpy(err_detail, prefix, n);
	if (old[0] && n + 2 < cap) {
		memcpy(err_detail + n, ": ", 2);
		n += 2;
		size_t m = strlen(old);
		if (m > cap - n)
			m = cap - n;
		memcpy(err_detail + n, old, m);
		n += m;
	}
	err_detail[n] = '\0';
	return code;
}

void fa_err_clear(void)
{
	err_detail[0] = '\0';
}

const char *fathom_errmsg(void)
{
	return err_detail;
}

const char *fathom_strerror(int code)
{
	switch (code) {
	case FATHOM_OK: return "success";
	case FATHOM_ENOMEM: return "out of memory";
	case FATHOM_EIO: return "input/output error";
	case FATHOM_ECORRUPT: return "index file is corrupt";
	case FATHOM_EINVAL: return "invalid argument";
	case FATHOM_ENOTFOUND: return "not found";
	case FATHOM_ELOCKED: return "index is locked by another writer";
	case FATHOM_ETOOBIG: return "input too large";
	case FATHOM_EVERSION: return "unsupported index format version";
	case FATHOM_ESYNTAX: return "syntax error";
	case FATHOM_EEXISTS: return "already exists";
	case FATHOM_EREADONLY: return "index is open read-only";
	case FATHOM_EINTERRUPTED: return "interrupted";
	case FATHOM_ETIMEOUT: return "time limit exceeded";
	default: return "unknown error";
	}
}

const char *fathom_field_name(int field)
{
	static const char *const names[FATHOM_NFIELDS] = {
		"path", "title", "headings", "tags", "body"
	};
	if (field < 0 || field >= FATHOM_NFIELDS)
		return NULL;
	return names[field];
}
