/*
 * json.c — the pieces every operation of the JSON API uses: errors as
 * (status, message), replies ({"error":{"code","message"}} for errors),
 * typed members of a request object, and the index handle of a request
 * (a reader, or the writer with its commit or rollback).
 *
 * Every input is checked before use: types, ranges, lengths. What fails
 * is an error reply, never a crash.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

/* ---- errors ---------------------------------------------------------------------- */

void sv_err_set(sv_err *e, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	e->status = status;
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	/* a message cut at its buffer's end loses the cut character whole:
	 * back to the last character's first byte, dropped if incomplete */
	size_t n = strlen(e->msg), i = n;
	while (i > 0 && n - i < 3 && ((unsigned char)e->msg[i - 1] & 0xC0) == 0x80)
		i--;
	if (i > 0 && (unsigned char)e->msg[i - 1] >= 0xC0 && !sv_utf8_valid(e->msg + i - 1, n - i + 1))
		e->msg[i - 1] = '\0';
}

void sv_err_api(sv_err *e, int rc, const char *what)
{
	int st = 500;
	switch (rc) {
	case FATHOM_EINVAL: case FATHOM_ESYNTAX: st = 400; break;
	case FATHOM_ENOTFOUND: st = 404; break;
	case FATHOM_ETOOBIG: st = 413; break;
	case FATHOM_ELOCKED: case FATHOM_EREADONLY: st = 503; break;
	case FATHOM_ETIMEOUT: st = 504; break;      /* a search past --timeout */
	case FATHOM_EINTERRUPTED: st = 504; break;  /* an ingest stopped at --timeout */
	default: break;
	}
	const char *m = fathom_errmsg();
	sv_err_set(e, st, "%s: %s", what, m && *m ? m : fathom_strerror(rc));
}

void sv_limit(int which, long long cap, long long *lo, long long *hi)
{
	double a = 0, b = 0;
	fathom_limit(which, &a, &b);
	if (cap > 0 && b > (double)cap)
		b = (double)cap;
	if (lo)
		*lo = (long long)a;
	if (hi)
		*hi = (long long)b;
}

/* ---- values and members -------------------------------------------------------------- */

json_t *sv_jstrn(const char *s, size_t n)
{
	if (!s)
		return json_string("");
	json_t *j = json_stringn(s, n);
	if (j)
		return j;
	char *o = fathom_malloc(n * 3 + 1);
	if (!o)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 :
		             c >= 0xf0 && c < 0xf5 ? 4 : 0;
		int good = len > 0 && i + len <= n && c != 0;
		for (size_t t = 1; good && t < len; t++)
			good = ((unsigned char)s[i + t] & 0xc0) == 0x80;
		if (good && len > 1) {
			json_t *probe = json_stringn(s + i, len);   /* overlongs, surrogates */
			good = probe != NULL;
			json_decref(probe);
		}
		if (good) {
			memcpy(o + k, s + i, len);
			k += len;
			i += len;
		} else {
			memcpy(o + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		}
	}
	j = json_stringn(o, k);
	fathom_free(o);
	return j;
}

json_t *sv_jstr(const char *s)
{
	return sv_jstrn(s, s ? strlen(s) : 0);
}

int sv_arg_str(json_t *args, const char *name, const char **out, size_t max, sv_err *e)
{
	json_t *v = args ? json_object_get(args, name) : NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		sv_err_set(e, 400, "\"%s\" must be a string", name);
		return -1;
	}
	if (json_string_length(v) > max) {
		sv_err_set(e, 413, "\"%s\" is longer than %zu bytes", name, max);
		return -1;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		sv_err_set(e, 400, "\"%s\" holds a NUL character", name);
		return -1;
	}
	*out = json_string_value(v);
	return 1;
}

int sv_arg_int(json_t *args, const char *name, long long lo, long long hi, long long *out,
                   sv_err *e)
{
	json_t *v = args ? json_object_get(args, name) : NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		sv_err_set(e, 400, "\"%s\" must be an integer from %lld to %lld", name, lo, hi);
		return -1;
	}
	*out = json_integer_value(v);
	return 1;
}

int sv_arg_bool(json_t *args, const char *name, int *out, sv_err *e)
{
	json_t *v = args ? json_object_get(args, name) : NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v)) {
		sv_err_set(e, 400, "\"%s\" must be true or false", name);
		return -1;
	}
	*out = json_is_true(v);
	return 1;
}

/* Refuse members the operation does not know: a typo is an error, not a
 * silently ignored option. */
int sv_only_known(json_t *args, const char *const *known, sv_err *e)
{
	const char *key;
	json_t *v;
	json_object_foreach(args, key, v) {
		int ok = 0;
		for (size_t i = 0; known[i] && !ok; i++)
			ok = strcmp(key, known[i]) == 0;
		if (!ok) {
			char list[256] = "";
			size_t n = 0;
			for (size_t i = 0; known[i] && n < sizeof list - 1; i++)
				n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", known[i]);
			sv_err_set(e, 400, "unknown member \"%.64s\" (known: %s)", key, list);
			return -1;
		}
	}
	return 0;
}

/* ---- the handles of a request ---------------------------------------------------------- */

fathom_index *sv_reader(sv_state *s, sv_err *e)
{
	fathom_index *ix = sv_reader_get(s);
	if (!ix)
		sv_err_api(e, FATHOM_EIO, "opening the index");
	return ix;
}

/* Run a write under the writer lock and commit it; what a caller sees
 * acknowledged is durable. */
fathom_index *sv_writer(sv_state *s, sv_err *e)
{
	fathom_index *w = sv_writer_lock(s);
	if (!w)
		sv_err_set(e, 503, "the index is read-only here (--read-only, or another process holds "
		                "the writer lock: %s)", fathom_errmsg());
	return w;
}

json_t *sv_commit_done(sv_state *s, fathom_index *w, json_t *out, sv_err *e)
{
	int rc = fathom_commit(w);
	if (rc) {
		sv_err_api(e, rc, "commit");
		fathom_rollback(w);
		sv_writer_unlock(s, 0);
		json_decref(out);
		return NULL;
	}
	json_object_set_new(out, "generation", json_integer((json_int_t)fathom_generation(w)));
	sv_writer_unlock(s, 1);
	return out;
}

json_t *sv_write_failed(sv_state *s, fathom_index *w, int rc, const char *what, sv_err *e)
{
	sv_err_api(e, rc, what);
	fathom_rollback(w);
	sv_writer_unlock(s, 0);
	return NULL;
}

/* ---- replies ----------------------------------------------------------------------------- */

void sv_reply_json(sv_reply *r, int status, json_t *j)
{
	r->status = status;
	r->ctype = "application/json";
	r->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!r->body) {
		r->status = 500;
		r->body = sv_strdup("{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}");
	}
	if (r->body) {
		size_t n = strlen(r->body);
		char *b = fathom_realloc(r->body, n + 2);
		if (b) {
			b[n] = '\n';
			b[n + 1] = '\0';
			r->body = b;
			n++;
		}
		r->len = n;
	}
}

static const char *status_code(int st)
{
	switch (st) {
	case 400: return "bad_request";
	case 401: return "unauthorized";
	case 403: return "forbidden";
	case 404: return "not_found";
	case 405: return "method_not_allowed";
	case 413: return "too_large";
	case 415: return "unsupported_media_type";
	case 503: return "unavailable";
	case 504: return "timeout";
	default: return "internal";
	}
}

void sv_reply_err(sv_reply *r, const sv_err *e)
{
	int st = e->status ? e->status : 500;
	/* sv_jstr: a message quoting request bytes that are not UTF-8 is still
	 * this error, with U+FFFD for them, not "out of memory" */
	sv_reply_json(r, st, json_pack("{s:{s:s,s:o}}", "error", "code", status_code(st), "message",
	                               sv_jstr(e->msg[0] ? e->msg : "internal error")));
}

void sv_reply_result(sv_reply *r, json_t *j, const sv_err *e)
{
	if (j)
		sv_reply_json(r, 200, j);
	else
		sv_reply_err(r, e);
}

void sv_reply_free(sv_reply *r)
{
	fathom_free(r->body);
	r->body = NULL;
}

json_t *sv_parse_body(const char *body, size_t len, sv_err *e)
{
	if (!body || !len) {
		sv_err_set(e, 400, "a JSON body is required");
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		sv_err_set(e, 400, "malformed JSON at line %d column %d: %s", je.line, je.column, je.text);
	return j;
}

void sv_reply_error(sv_reply *r, int status, const char *msg)
{
	sv_err e = { status, "" };
	snprintf(e.msg, sizeof e.msg, "%s", msg);
	sv_reply_err(r, &e);
}
