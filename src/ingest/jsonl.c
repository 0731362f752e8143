/*
 * jsonl.c — documents from JSON lines: one object per line.
 *
 *   {"id": "a1", "title": "...", "body": "...", "url": "...", "tags": [...], ...}
 *
 * Recognised members: "id" (else "_id": a non-empty string, or an integer
 * written in decimal), "title", "body" (else "text", else "content"),
 * "url", "path", "tags" (an array of strings, or one string), "vector" (the
 * document's embedding: an array of 1 to 4096 finite numbers). Every other
 * top-level string, number or boolean becomes metadata "key=value";
 * nested objects and arrays, and nulls, are left out. So a BEIR corpus
 * line {"_id": "...", "title": "...", "text": "...", "metadata": {}} loads
 * as it is.
 *
 * Lines are read in bounded pieces: a line over max_line is reported and
 * skipped without ever being held whole. CRLF line ends and a UTF-8
 * byte-order mark at the start are accepted; blank lines are counted and
 * skipped. A bad line is reported through on_error with its number, and
 * reading goes on. JSON itself is parsed by jansson, which also rejects
 * invalid UTF-8 and "\u0000" inside strings (JSON_ALLOW_NUL is off, so
 * every string can be used as a C string).
 *
 * jansson builds a tree of allocated values and was a sixth of a SciFact
 * build, so the common line goes through a fast path first: one flat
 * object whose members are strings (with the simple escapes and \uXXXX
 * outside the surrogates), decimal integers of up to 18 digits, true, false,
 * null, {} and arrays of those scalars, no key twice. It gives the document the
 * jansson path would; any other line (a syntax error, a nested value,
 * a real number, a surrogate pair...) goes to jansson, which decides, and
 * words its errors, as before.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ingest/ingest.h"

#define JSONL_READ_CHUNK ((size_t)64 << 10)

/* ---- one line to one document --------------------------------------------- */

static int is_reserved_key(const char *k)
{
	static const char *const keys[] = {
		"id", "_id", "title", "body", "text", "content", "url", "path", "tags", "vector"
	};
	for (size_t i = 0; i < FA_ARRAY_LEN(keys); i++)
		if (strcmp(k, keys[i]) == 0)
			return 1;
	return 0;
}

/* The shortest decimal form that reads back as the same double. */
static void format_real(char *out, size_t cap, double v)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, cap, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

/* "key=value" in the arena (NULL when out of memory), as both paths store
 * a metadata member. */
static char *join_kv(fa_arena *a, const char *key, size_t kl, const char *val, size_t vl)
{
	size_t total;
	if (fa_add(kl, vl, &total) || fa_add(total, 2, &total))
		return NULL;
	char *s = fa_arena_alloc(a, total);
	if (!s)
		return NULL;
	memcpy(s, key, kl);
	s[kl] = '=';
	memcpy(s + kl + 1, val, vl);
	s[kl + 1 + vl] = '\0';
	return s;
}

/* "key=value" in the arena; NULL when the value is of a kind we skip
 * (*skipped set) or on allocation failure (*skipped clear). */
static const char *meta_string(fa_arena *a, const char *key, json_t *v, int *skipped)
{
	char num[64];
	const char *val;
	size_t val_len;
	*skipped = 0;
	switch (json_typeof(v)) {
	case JSON_STRING:
		val = json_string_value(v);
		val_len = json_string_length(v);
		break;
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		val = num;
		val_len = strlen(num);
		break;
	case JSON_REAL:
		format_real(num, sizeof num, json_real_value(v));
		val = num;
		val_len = strlen(num);
		break;
	case JSON_TRUE:
		val = "true";
		val_len = 4;
		break;
	case JSON_FALSE:
		val = "false";
		val_len = 5;
		break;
	case JSON_OBJECT:
	case JSON_ARRAY:
	case JSON_NULL:
	default:
		*skipped = 1;
		return NULL;
	}
	return join_kv(a, key, strlen(key), val, val_len);
}

static const char *string_member(json_t *root, const char *key)
{
	json_t *v = json_object_get(root, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Fill d from the parsed object. Pointers stay valid while root and the
 * arena live. Returns 0, FATHOM_ESYNTAX with msg filled, or FATHOM_ENOMEM. */
static int doc_from_object(jsonl_doc *d, json_t *root, fa_arena *a, char *idbuf,
                           size_t idcap, char *msg)
{
	if (!json_is_object(root)) {
		snprintf(msg, JSONL_MSG_MAX, "not a JSON object");
		return FATHOM_ESYNTAX;
	}
	json_t *id = json_object_get(root, "id");
	if (!id || json_is_null(id))
		id = json_object_get(root, "_id");
	if (json_is_string(id)) {
		if (json_string_length(id) == 0) {
			snprintf(msg, JSONL_MSG_MAX, "empty id");
			return FATHOM_ESYNTAX;
		}
		d->id = json_string_value(id);
	} else if (json_is_integer(id)) {
		snprintf(idbuf, idcap, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
		d->id = idbuf;
	} else {
		snprintf(msg, JSONL_MSG_MAX, id ? "id must be a string or an integer"
		                                : "no \"id\" or \"_id\" member");
		return FATHOM_ESYNTAX;
	}

	const char *s = string_member(root, "title");
	d->title = s ? s : "";
	static const char *const body_keys[] = { "body", "text", "content" };
	d->body = "";
	d->body_len = 0;
	for (size_t i = 0; i < FA_ARRAY_LEN(body_keys); i++) {
		json_t *b = json_object_get(root, body_keys[i]);
		if (json_is_string(b)) {
			d->body = json_string_value(b);
			d->body_len = json_string_length(b);
			break;
		}
	}
	s = string_member(root, "url");
	d->url = s ? s : "";
	d->path = string_member(root, "path");

	json_t *tags = json_object_get(root, "tags");
	d->tags = NULL;
	d->n_tags = 0;
	if (json_is_array(tags) && json_array_size(tags) > 0) {
		const char **t = fa_arena_calloc(a, json_array_size(tags), sizeof *t);
		if (!t)
			return fa_err(FATHOM_ENOMEM, "out of memory reading tags");
		size_t i;
		json_t *v;
		json_array_foreach(tags, i, v) {
			if (json_is_string(v) && json_string_length(v) > 0)
				t[d->n_tags++] = json_string_value(v);
		}
		d->tags = t;
	} else if (json_is_string(tags) && json_string_length(tags) > 0) {
		const char **t = fa_arena_alloc(a, sizeof *t);
		if (!t)
			return fa_err(FATHOM_ENOMEM, "out of memory reading tags");
		t[0] = json_string_value(tags);
		d->tags = t;
		d->n_tags = 1;
	}

	json_t *vec = json_object_get(root, "vector");
	if (vec && !json_is_null(vec)) {
		size_t n = json_is_array(vec) ? json_array_size(vec) : 0;
		if (n == 0 || n > JSONL_MAX_VECTOR) {
			snprintf(msg, JSONL_MSG_MAX, "\"vector\" must be an array of 1 to %u numbers",
			         JSONL_MAX_VECTOR);
			return FATHOM_ESYNTAX;
		}
		float *v = fa_arena_alloc(a, n * sizeof *v);
		if (!v)
			return fa_err(FATHOM_ENOMEM, "out of memory reading the vector");
		size_t i;
		json_t *x;
		json_array_foreach(vec, i, x) {
			double f = json_is_number(x) ? json_number_value(x) : NAN;
			if (!isfinite(f) || fabs(f) > 3.0e38) {
				snprintf(msg, JSONL_MSG_MAX, "\"vector\" value %zu is not a finite number", i);
				return FATHOM_ESYNTAX;
			}
			v[i] = (float)f;
		}
		d->vector = v;
		d->vector_dim = (uint32_t)n;
	}

	d->meta = NULL;
	d->n_meta = 0;
	size_t n_members = json_object_size(root);
	if (n_members > 0) {
		const char **m = fa_arena_calloc(a, n_members, sizeof *m);
		if (!m)
			return fa_err(FATHOM_ENOMEM, "out of memory reading metadata");
		const char *key;
		json_t *v;
		json_object_foreach(root, key, v) {
			/* A '=' in the key would make "key=value" ambiguous. */
			if (is_reserved_key(key) || !*key || strchr(key, '='))
				continue;
			int skipped;
			const char *kv = meta_string(a, key, v, &skipped);
			if (kv)
				m[d->n_meta++] = kv;
			else if (!skipped)
				return fa_err(FATHOM_ENOMEM, "out of memory reading metadata");
		}
		d->meta = m;
	}
	return 0;
}

/* ---- the fast path ------------------------------------------------------------ */

typedef struct fj {
	const unsigned char *p, *end;
	fa_arena *a;
} fj;

enum { FJ_STRING, FJ_INT, FJ_TRUE, FJ_FALSE, FJ_NULL, FJ_OBJECT, FJ_ARRAY };

typedef struct fj_member {
	const char *key;
	int type;
	const char *str;       /* FJ_STRING: decoded, NUL-terminated */
	size_t len;
	long long num;         /* FJ_INT */
	const char **items;    /* FJ_ARRAY: its strings */
	size_t n_items;
} fj_member;

#define FJ_MAX_MEMBERS 64
#define FJ_MAX_ITEMS 256

static void fj_ws(fj *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* Length of the valid UTF-8 sequence at s (as jansson accepts it), or 0. */
static size_t fj_utf8(const unsigned char *s, const unsigned char *end)
{
	unsigned c = s[0];
	size_t n;
	uint32_t cp;
	if (c < 0xC2 || c > 0xF4)
		return 0;
	if (c < 0xE0) {
		n = 2;
		cp = c & 0x1F;
	} else if (c < 0xF0) {
		n = 3;
		cp = c & 0x0F;
	} else {
		n = 4;
		cp = c & 0x07;
	}
	if ((size_t)(end - s) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

static int fj_hex(const unsigned char *s, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned c = s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

/* Bytes as eight lanes of a word: whether any lane is zero, or below n
 * (n <= 128), exactly as a yes or no. */
#define FJ_ONES 0x0101010101010101ull
#define FJ_HIGHS 0x8080808080808080ull
#define FJ_ANY_BELOW(x, n) ((((x) - FJ_ONES * (n)) & ~(x) & FJ_HIGHS) != 0)
#define FJ_ANY_ZERO(x) FJ_ANY_BELOW(x, 1)

/* Eight bytes that hold no '"' and no '\\': the scan steps over them. */
static int fj_no_quote_or_escape(uint64_t x)
{
	return !FJ_ANY_ZERO(x ^ (FJ_ONES * '"')) && !FJ_ANY_ZERO(x ^ (FJ_ONES * '\\'));
}

/* Eight bytes of printable ASCII without '\\': copied as they are. */
static int fj_plain_ascii(uint64_t x)
{
	return !(x & FJ_HIGHS) && !FJ_ANY_BELOW(x, 0x20) && !FJ_ANY_ZERO(x ^ (FJ_ONES * '\\'));
}

/* A string at j->p (on its '"'): 0 with *out decoded in the arena, 1 when
 * the fast path does not take it, or FATHOM_ENOMEM. */
static int fj_string(fj *j, const char **out, size_t *len)
{
	const unsigned char *q = ++j->p, *end = j->end;
	int plain = 1;
	/* Bodies are long and mostly plain: both loops below take eight such
	 * bytes at a time, then go on byte by byte from the first that is not. */
	for (;;) {
		while (end - q >= 8 && fj_no_quote_or_escape(fa_load64(q)))
			q += 8;
		if (q >= end || *q == '"')
			break;
		if (*q == '\\') {
			plain = 0;
			q += 2;
		} else {
			q++;
		}
	}
	if (q >= end)
		return 1;
	/* the decoded string is never longer than its source */
	char *d = fa_arena_alloc(j->a, (size_t)(q - j->p) + 1);
	if (!d)
		return FATHOM_ENOMEM;
	size_t o = 0;
	const unsigned char *s = j->p;
	while (s < q) {
		while (q - s >= 8 && fj_plain_ascii(fa_load64(s))) {
			memcpy(d + o, s, 8);
			o += 8;
			s += 8;
		}
		if (s == q)
			break;
		unsigned c = *s;
		if (c < 0x20)
			return 1;
		if (c < 0x80 && c != '\\') {
			d[o++] = (char)c;
			s++;
			continue;
		}
		if (c >= 0x80) {
			size_t k = fj_utf8(s, q);
			if (!k)
				return 1;
			memcpy(d + o, s, k);
			o += k;
			s += k;
			continue;
		}
		if (plain || s + 1 >= q)
			return 1;
		c = s[1];
		s += 2;
		switch (c) {
		case '"': d[o++] = '"'; break;
		case '\\': d[o++] = '\\'; break;
		case '/': d[o++] = '/'; break;
		case 'b': d[o++] = '\b'; break;
		case 'f': d[o++] = '\f'; break;
		case 'n': d[o++] = '\n'; break;
		case 'r': d[o++] = '\r'; break;
		case 't': d[o++] = '\t'; break;
		case 'u': {
			uint32_t v;
			if (q - s < 4 || fj_hex(s, &v) || v == 0 || (v >= 0xD800 && v <= 0xDFFF))
				return 1;
			s += 4;
			if (v < 0x80) {
				d[o++] = (char)v;
			} else if (v < 0x800) {
				d[o++] = (char)(0xC0 | v >> 6);
				d[o++] = (char)(0x80 | (v & 0x3F));
			} else {
				d[o++] = (char)(0xE0 | v >> 12);
				d[o++] = (char)(0x80 | (v >> 6 & 0x3F));
				d[o++] = (char)(0x80 | (v & 0x3F));
			}
			break;
		}
		default:
			return 1;
		}
	}
	d[o] = '\0';
	*out = d;
	*len = o;
	j->p = q + 1;
	return 0;
}

static int fj_word(fj *j, const char *w, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return 0;
	j->p += n;
	return 1;
}

/* One member's value into m: 0, 1 (not for the fast path), FATHOM_ENOMEM. */
static int fj_value(fj *j, fj_member *m)
{
	if (j->p >= j->end)
		return 1;
	unsigned c = *j->p;
	if (c == '"') {
		m->type = FJ_STRING;
		return fj_string(j, &m->str, &m->len);
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		const unsigned char *s = j->p;
		int neg = c == '-';
		if (neg)
			s++;
		size_t nd = 0;
		long long v = 0;
		while (s + nd < j->end && s[nd] >= '0' && s[nd] <= '9') {
			if (nd < 18)
				v = v * 10 + (s[nd] - '0');   /* longer ones go to jansson */
			nd++;
		}
		if (nd == 0 || nd > 18 || (nd > 1 && s[0] == '0'))
			return 1;
		if (s + nd < j->end && (s[nd] == '.' || s[nd] == 'e' || s[nd] == 'E'))
			return 1;
		m->type = FJ_INT;
		m->num = neg ? -v : v;
		j->p = s + nd;
		return 0;
	}
	if (fj_word(j, "true", 4)) {
		m->type = FJ_TRUE;
		return 0;
	}
	if (fj_word(j, "false", 5)) {
		m->type = FJ_FALSE;
		return 0;
	}
	if (fj_word(j, "null", 4)) {
		m->type = FJ_NULL;
		return 0;
	}
	if (c == '{') {
		j->p++;
		fj_ws(j);
		if (j->p >= j->end || *j->p != '}')
			return 1;
		j->p++;
		m->type = FJ_OBJECT;
		return 0;
	}
	if (c == '[') {
		j->p++;
		fj_ws(j);
		m->type = FJ_ARRAY;
		const char *items[FJ_MAX_ITEMS];
		size_t n = 0;
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return 0;
		}
		for (;;) {
			if (j->p >= j->end || *j->p == '[' || *j->p == '{')
				return 1;
			if (*j->p != '"') {
				/* a number, true, false or null: valid JSON that no
				 * member reads (tags keep their strings, like jansson's
				 * path), as in "lines": [51, 86] */
				fj_member item;
				int rc = fj_value(j, &item);
				if (rc)
					return rc;
			} else {
				if (n == FJ_MAX_ITEMS)
					return 1;
				size_t len;
				int rc = fj_string(j, &items[n], &len);
				if (rc)
					return rc;
				if (len)
					n++;   /* empty tags are dropped */
			}
			fj_ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				fj_ws(j);
				continue;
			}
			if (j->p < j->end && *j->p == ']') {
				j->p++;
				break;
			}
			return 1;
		}
		if (n) {
			m->items = fa_arena_alloc(j->a, n * sizeof *m->items);
			if (!m->items)
				return FATHOM_ENOMEM;
			memcpy(m->items, items, n * sizeof *items);
		}
		m->n_items = n;
		return 0;
	}
	return 1;
}

static const fj_member *fj_get(const fj_member *m, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(m[i].key, key) == 0)
			return &m[i];
	return NULL;
}

static const char *fj_str(const fj_member *m)
{
	return m && m->type == FJ_STRING ? m->str : NULL;
}

/* Parse a line on the fast path: 0, 1 when it is not for it, or
 * FATHOM_ENOMEM. On 1 the arena may hold leftovers, which is harmless. */
static int fast_doc(jsonl_doc *d, const char *line, size_t n, fa_arena *a, char *idbuf,
                    size_t idcap)
{
	fj j = { (const unsigned char *)line, (const unsigned char *)line + n, a };
	fj_member m[FJ_MAX_MEMBERS];
	size_t nm = 0;
	fj_ws(&j);
	if (j.p >= j.end || *j.p != '{')
		return 1;
	j.p++;
	fj_ws(&j);
	if (j.p < j.end && *j.p == '}') {
		j.p++;
	} else {
		for (;;) {
			if (j.p >= j.end || *j.p != '"' || nm == FJ_MAX_MEMBERS)
				return 1;
			size_t klen;
			memset(&m[nm], 0, sizeof m[nm]);
			int rc = fj_string(&j, &m[nm].key, &klen);
			if (rc)
				return rc;
			if (fj_get(m, nm, m[nm].key))
				return 1;   /* a key twice: jansson's rule decides */
			fj_ws(&j);
			if (j.p >= j.end || *j.p != ':')
				return 1;
			j.p++;
			fj_ws(&j);
			if ((rc = fj_value(&j, &m[nm])) != 0)
				return rc;
			nm++;
			fj_ws(&j);
			if (j.p < j.end && *j.p == ',') {
				j.p++;
				fj_ws(&j);
				continue;
			}
			if (j.p < j.end && *j.p == '}') {
				j.p++;
				break;
			}
			return 1;
		}
	}
	fj_ws(&j);
	if (j.p != j.end)
		return 1;

	if (fj_get(m, nm, "vector"))
		return 1;   /* numbers: jansson's path reads them */
	/* What doc_from_object makes of the same object. */
	const fj_member *id = fj_get(m, nm, "id");
	if (!id || id->type == FJ_NULL)
		id = fj_get(m, nm, "_id");
	if (id && id->type == FJ_STRING && id->len > 0) {
		d->id = id->str;
	} else if (id && id->type == FJ_INT) {
		snprintf(idbuf, idcap, "%lld", id->num);
		d->id = idbuf;
	} else {
		return 1;   /* an error: jansson's path words it */
	}
	const char *s = fj_str(fj_get(m, nm, "title"));
	d->title = s ? s : "";
	static const char *const body_keys[] = { "body", "text", "content" };
	d->body = "";
	d->body_len = 0;
	for (size_t i = 0; i < FA_ARRAY_LEN(body_keys); i++) {
		const fj_member *b = fj_get(m, nm, body_keys[i]);
		if (b && b->type == FJ_STRING) {
			d->body = b->str;
			d->body_len = b->len;
			break;
		}
	}
	s = fj_str(fj_get(m, nm, "url"));
	d->url = s ? s : "";
	d->path = fj_str(fj_get(m, nm, "path"));
	const fj_member *tags = fj_get(m, nm, "tags");
	d->tags = NULL;
	d->n_tags = 0;
	if (tags && tags->type == FJ_ARRAY && tags->n_items) {
		d->tags = tags->items;
		d->n_tags = tags->n_items;
	} else if (tags && tags->type == FJ_STRING && tags->len > 0) {
		const char **t = fa_arena_alloc(a, sizeof *t);
		if (!t)
			return FATHOM_ENOMEM;
		t[0] = tags->str;
		d->tags = t;
		d->n_tags = 1;
	}
	d->meta = NULL;
	d->n_meta = 0;
	if (nm) {
		const char **mv = fa_arena_calloc(a, nm, sizeof *mv);
		if (!mv)
			return FATHOM_ENOMEM;
		for (size_t i = 0; i < nm; i++) {
			const char *key = m[i].key;
			if (is_reserved_key(key) || !*key || strchr(key, '='))
				continue;
			char num[32];
			const char *val;
			switch (m[i].type) {
			case FJ_STRING: val = m[i].str; break;
			case FJ_INT: snprintf(num, sizeof num, "%lld", m[i].num); val = num; break;
			case FJ_TRUE: val = "true"; break;
			case FJ_FALSE: val = "false"; break;
			default: continue;
			}
			size_t vl = m[i].type == FJ_STRING ? m[i].len : strlen(val);
			char *kv = join_kv(a, key, strlen(key), val, vl);
			if (!kv)
				return FATHOM_ENOMEM;
			mv[d->n_meta++] = kv;
		}
		d->meta = mv;
	}
	return 0;
}

static int fast_path = 1;

void jsonl_set_fast_path(int on)
{
	fast_path = on;
}

int jsonl_parse_doc(jsonl_doc *d, void **root_out, const char *line, size_t n,
                    uint64_t line_no, fa_arena *a, char *idbuf, size_t idcap, char *msg)
{
	json_error_t jerr;
	memset(d, 0, sizeof *d);
	d->line_no = line_no;
	*root_out = NULL;
	if (fast_path) {
		int rc = fast_doc(d, line, n, a, idbuf, idcap);
		if (rc <= 0)
			return rc ? fa_err(rc, "out of memory parsing JSON") : 0;
		memset(d, 0, sizeof *d);
		d->line_no = line_no;
	}
	json_t *root = json_loadb(line, n, 0, &jerr);
	if (!root) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			return fa_err(FATHOM_ENOMEM, "out of memory parsing JSON");
		snprintf(msg, JSONL_MSG_MAX, "%s (column %d)", jerr.text, jerr.column);
		return FATHOM_ESYNTAX;
	}
	int rc = doc_from_object(d, root, a, idbuf, idcap, msg);
	if (rc) {
		json_decref(root);
		return rc;
	}
	*root_out = root;
	return 0;
}

void jsonl_doc_release(void *root)
{
	if (root)
		json_decref(root);
}

int jsonl_parse_line(const char *line, size_t n, uint64_t line_no, const jsonl_opts *opts)
{
	if ((!line && n) || !opts)
		return fa_err(FATHOM_EINVAL, "jsonl_parse_line: bad arguments");
	fa_arena a;
	fa_arena_init(&a, 4096, 0);
	jsonl_doc d;
	void *root;
	char idbuf[32], msg[JSONL_MSG_MAX];
	int rc = jsonl_parse_doc(&d, &root, line ? line : "", n, line_no, &a, idbuf, sizeof idbuf, msg);
	if (rc == FATHOM_ESYNTAX) {
		rc = fa_err(FATHOM_ESYNTAX, "line %" PRIu64 ": %s", line_no, msg);
	} else if (rc == 0) {
		if (opts->on_doc)
			rc = opts->on_doc(opts->ctx, &d);
		jsonl_doc_release(root);
	}
	fa_arena_free(&a);
	return rc;
}

/* ---- the stream ---------------------------------------------------------------- */

struct jsonl_reader {
	FILE *f;
	size_t max_line;
	jsonl_stats *st;
	jsonl_stats own_stats;
	char *chunk;          /* JSONL_READ_CHUNK bytes read ahead */
	size_t got, pos;
	/* A line that fits in the chunk is returned where it lies; only lines
	 * that straddle a chunk boundary are gathered in `line`. */
	fbuf line;
	int pending, too_long; /* a partial line is in `line` / over max */
	int eof;
	uint64_t line_no;
};

int jsonl_reader_new(jsonl_reader **out, FILE *f, size_t max_line, jsonl_stats *st)
{
	*out = NULL;
	if (!f)
		return fa_err(FATHOM_EINVAL, "jsonl_reader_new: no stream");
	jsonl_reader *r = fa_calloc(1, sizeof *r);
	char *chunk = fa_malloc(JSONL_READ_CHUNK);
	if (!r || !chunk) {
		fa_free(r);
		fa_free(chunk);
		return fa_err(FATHOM_ENOMEM, "out of memory reading JSON lines");
	}
	r->f = f;
	r->max_line = max_line ? max_line : JSONL_DEFAULT_MAX_LINE;
	r->st = st ? st : &r->own_stats;
	memset(r->st, 0, sizeof *r->st);
	r->chunk = chunk;
	fbuf_init(&r->line, 0);
	*out = r;
	return 0;
}

void jsonl_reader_free(jsonl_reader *r)
{
	if (!r)
		return;
	fa_free(r->chunk);
	fbuf_free(&r->line);
	fa_free(r);
}

static int is_blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\f' && p[i] != '\v')
			return 0;
	return 1;
}

/* A whole line read (without its '\n'), or one over the limit (p NULL):
 * 1 when it is worth returning, 0 for a blank line. */
static int take_line(jsonl_reader *r, const char **line, size_t *len, const char *p, size_t n)
{
	r->line_no++;
	r->st->lines++;
	if (!p) {
		r->st->errors++;
		*line = NULL;
		*len = 0;
		return 1;
	}
	if (n && p[n - 1] == '\r')
		n--;
	if (r->line_no == 1 && n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
		p += 3;
		n -= 3;
	}
	if (is_blank(p, n)) {
		r->st->blank++;
		return 0;
	}
	*line = p;
	*len = n;
	return 1;
}

int jsonl_reader_next(jsonl_reader *r, const char **line, size_t *len, uint64_t *line_no)
{
	int rc = 0;
	while (rc == 0) {
		if (r->pos >= r->got) {
			if (r->eof)
				return 0;
			r->got = fread(r->chunk, 1, JSONL_READ_CHUNK, r->f);
			r->pos = 0;
			if (r->got == 0) {
				if (ferror(r->f))
					return fa_err(FATHOM_EIO, "reading JSON lines: %s", strerror(errno));
				r->eof = 1;
				if (!r->pending)
					return 0;
				/* the last line had no '\n' */
				r->pending = 0;
				rc = take_line(r, line, len, r->too_long ? NULL : (const char *)r->line.data,
				               r->line.len);
				r->too_long = 0;
				break;
			}
		}
		const char *chunk = r->chunk;
		size_t pos = r->pos, got = r->got;
		const char *nl = memchr(chunk + pos, '\n', got - pos);
		size_t end = nl ? (size_t)(nl - chunk) : got, seg = end - pos;
		r->pos = end + 1;
		if (!r->pending && nl) {
			rc = take_line(r, line, len, seg > r->max_line ? NULL : chunk + pos, seg);
			continue;
		}
		if (!r->pending)
			fbuf_reset(&r->line);
		r->pending = 1;
		if (!r->too_long && (r->line.len > r->max_line || seg > r->max_line - r->line.len)) {
			r->too_long = 1;
			fbuf_reset(&r->line);
		}
		if (!r->too_long && fbuf_append(&r->line, chunk + pos, seg) != 0)
			return fa_err(FATHOM_ENOMEM, "out of memory reading a %zu-byte line",
			              r->line.len + seg);
		if (nl) {
			rc = take_line(r, line, len, r->too_long ? NULL : (const char *)r->line.data,
			               r->line.len);
			r->pending = r->too_long = 0;
		}
	}
	*line_no = r->line_no;
	return rc;
}

int jsonl_read_stream(FILE *f, const jsonl_opts *opts, jsonl_stats *st)
{
	jsonl_stats local;
	if (!st)
		st = &local;
	memset(st, 0, sizeof *st);
	if (!f || !opts)
		return fa_err(FATHOM_EINVAL, "jsonl_read_stream: bad arguments");
	jsonl_reader *r;
	int rc = jsonl_reader_new(&r, f, opts->max_line, st);
	if (rc)
		return rc;
	fa_arena arena;    /* per-line allocations, reset after each line */
	fa_arena_init(&arena, 16384, 0);
	const char *p;
	size_t n;
	uint64_t line_no;
	while ((rc = jsonl_reader_next(r, &p, &n, &line_no)) > 0) {
		char idbuf[32], msg[JSONL_MSG_MAX];
		jsonl_doc d;
		void *root = NULL;
		rc = 0;
		if (!p) {
			snprintf(msg, sizeof msg, "line longer than %zu bytes", r->max_line);
			rc = FATHOM_ESYNTAX;
		} else {
			rc = jsonl_parse_doc(&d, &root, p, n, line_no, &arena, idbuf, sizeof idbuf, msg);
			if (rc == FATHOM_ESYNTAX)
				st->errors++;
		}
		if (rc == FATHOM_ESYNTAX) {
			if (opts->on_error)
				opts->on_error(opts->ctx, line_no, msg);
			rc = 0;
		} else if (rc == 0) {
			st->docs++;
			if (opts->on_doc)
				rc = opts->on_doc(opts->ctx, &d);
			jsonl_doc_release(root);
		}
		fa_arena_reset(&arena);
		if (rc)
			break;
	}
	fa_arena_free(&arena);
	jsonl_reader_free(r);
	return rc;
}
