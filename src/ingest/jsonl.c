/*
 * jsonl.c — documents from JSON lines: one object per line.
 *
 *   {"id": "a1", "title": "...", "body": "...", "url": "...", "tags": [...], ...}
 *
 * Recognised members: "id" (else "_id": a non-empty string, or an integer
 * written in decimal), "title", "body" (else "text", else "content"),
 * "url", "path", "tags" (an array of strings, or one string). Every other
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
 */
#include <errno.h>
#include <inttypes.h>
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
		"id", "_id", "title", "body", "text", "content", "url", "path", "tags"
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
	size_t key_len = strlen(key), total;
	if (fa_add(key_len, val_len, &total) || fa_add(total, 2, &total))
		return NULL;
	char *s = fa_arena_alloc(a, total);
	if (!s)
		return NULL;
	memcpy(s, key, key_len);
	s[key_len] = '=';
	memcpy(s + key_len + 1, val, val_len);
	s[key_len + 1 + val_len] = '\0';
	return s;
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

int jsonl_parse_doc(jsonl_doc *d, void **root_out, const char *line, size_t n,
                    uint64_t line_no, fa_arena *a, char *idbuf, size_t idcap, char *msg)
{
	json_error_t jerr;
	memset(d, 0, sizeof *d);
	d->line_no = line_no;
	*root_out = NULL;
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
