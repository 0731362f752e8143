/*
 * mcp_reply.c — a tool's result as the client gets it: the compact text an
 * agent reads (content) and the full JSON of the HTTP API
 * (structuredContent), together within the reply's byte budget
 * (--max-reply-bytes). A client reads one message into a bounded buffer
 * (the official SDK's is 10 MiB): a larger reply closes the connection
 * and every later call fails, so no reply may grow with the corpus.
 *
 * A reply too large is cut into pages. What a page counts depends on the
 * tool: search results, grep lines (files with files_only or count_only),
 * glossary candidates, list_sources' entries (its folders, then each
 * metadata value), or bytes of a document's text. The page says so
 * (reply_truncated, next_offset, and a last line of text), and the same
 * call with offset = next_offset answers the next one. How much fits is
 * found by bisection on the serialized size, so both the text and the
 * JSON count, escapes included.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "serve/mcp_int.h"

/* ---- the text an agent reads ------------------------------------------------------- */

static void text_add(char **buf, size_t *n, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void text_add(char **buf, size_t *n, size_t *cap, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(*buf ? *buf + *n : NULL, *buf ? *cap - *n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return;
		if (*buf && (size_t)k < *cap - *n) {
			*n += (size_t)k;
			return;
		}
		size_t nc = (*cap ? *cap * 2 : 4096) + (size_t)k;
		char *nb = fathom_realloc(*buf, nc);
		if (!nb)
			return;
		*buf = nb;
		*cap = nc;
	}
}

static const char *sget(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

static const char *stale_note(json_t *o)
{
	return json_is_true(json_object_get(o, "changed_since_indexing")) ? " " SV_STALE_NOTE : "";
}

/* What an agent reads: compact text; the JSON goes in structuredContent. */
static char *render(const char *name, json_t *r)
{
	char *b = NULL;
	size_t n = 0, cap = 0;
	if (strcmp(name, "search") == 0) {
		json_t *hits = json_object_get(r, "results");
		size_t i;
		json_t *h;
		if (json_array_size(hits) == 0 && !json_object_get(r, "next_offset"))
			text_add(&b, &n, &cap, "no results: %s\n", sget(r, "why"));
		json_array_foreach(hits, i, h) {
			json_t *lines = json_object_get(h, "lines");
			text_add(&b, &n, &cap, "%lld. %s%s (lines %lld-%lld, score %.3f) id=%s\n",
			         json_integer_value(json_object_get(h, "rank")),
			         *sget(h, "path") ? sget(h, "path") : sget(h, "id"), stale_note(h),
			         json_integer_value(json_array_get(lines, 0)),
			         json_integer_value(json_array_get(lines, 1)),
			         json_real_value(json_object_get(h, "score")), sget(h, "id"));
			if (*sget(h, "title"))
				text_add(&b, &n, &cap, "   %s\n", sget(h, "title"));
			text_add(&b, &n, &cap, "   %s\n", sget(h, "snippet"));
		}
	} else if (strcmp(name, "grep") == 0) {
		json_t *files = json_object_get(r, "files");
		size_t i, j;
		json_t *f, *l;
		if (json_array_size(files) == 0 && !json_object_get(r, "next_offset"))
			text_add(&b, &n, &cap, "no matching lines\n");
		json_array_foreach(files, i, f) {
			json_t *lines = json_object_get(f, "lines");
			/* a changed file's lines are read from it as it is now: the
			 * note heads them, on a line of its own */
			if (!lines || *stale_note(f))
				text_add(&b, &n, &cap, "%s%s\n", sget(f, "path"), stale_note(f));
			json_array_foreach(lines, j, l)
				text_add(&b, &n, &cap, "%s:%lld:%s\n", sget(f, "path"),
				         json_integer_value(json_object_get(l, "line")), sget(l, "text"));
		}
		if (json_is_true(json_object_get(r, "truncated")))
			text_add(&b, &n, &cap, "(more files match: raise limit or narrow the pattern)\n");
	} else if (strcmp(name, "get_full_content") == 0) {
		if (*stale_note(r))
			text_add(&b, &n, &cap, "[%s%s: this is the indexed copy; grep reads the file as "
			         "it is now]\n", sget(r, "id"), stale_note(r));
		text_add(&b, &n, &cap, "%s", sget(r, "text"));
	}
	if (!b) {
		b = json_dumps(r, JSON_INDENT(1));
		if (!b)
			b = sv_strdup("");
	}
	return b;
}

/* ---- pages ------------------------------------------------------------------------- */

/* What a tool's answer is a list of, for paging. */
typedef struct pager {
	const char *tool;
	const char *what;    /* "results", "lines", ... for the text */
	json_t *r;           /* the whole answer */
	size_t total;        /* its items */
} pager;

/* Items of a grep file entry: its lines, or 1 (files_only, count_only). */
static size_t grep_items(json_t *f)
{
	json_t *l = json_object_get(f, "lines");
	return l ? json_array_size(l) : 1;
}

/* list_sources' items, in order: each top-level folder (key: its name,
 * val NULL, x: its counts), then each value of each metadata key (key, val,
 * x: its document count). fn returns non-zero to stop, and so does this. */
typedef int (*source_fn)(void *ctx, const char *key, const char *val, json_t *x);

static int sources_each(json_t *r, source_fn fn, void *ctx)
{
	const char *k, *v;
	json_t *x, *vals;
	json_object_foreach(json_object_get(r, "folders"), k, x)
		if (fn(ctx, k, NULL, x))
			return 1;
	json_object_foreach(json_object_get(r, "metadata"), k, vals)
		json_object_foreach(vals, v, x)
			if (fn(ctx, k, v, x))
				return 1;
	return 0;
}

static int source_count(void *ctx, const char *key, const char *val, json_t *x)
{
	(void)key;
	(void)val;
	(void)x;
	++*(size_t *)ctx;
	return 0;
}

/* A page of list_sources: items [from, from + n) into new folders and
 * metadata objects (a key only with its values in the page). */
typedef struct source_page {
	size_t at, from, n;
	json_t *folders, *meta;
	int bad;
} source_page;

static int source_take(void *ctx, const char *key, const char *val, json_t *x)
{
	source_page *sp = ctx;
	size_t at = sp->at++;
	if (at < sp->from)
		return 0;
	if (at - sp->from >= sp->n)
		return 1;
	if (!val) {
		sp->bad = json_object_set(sp->folders, key, x) != 0;
		return sp->bad;
	}
	json_t *vals = json_object_get(sp->meta, key);
	if (!vals && json_object_set_new(sp->meta, key, vals = json_object())) {
		sp->bad = 1;
		return 1;
	}
	sp->bad = json_object_set(vals, val, x) != 0;
	return sp->bad;
}

static json_t *sources_slice(const pager *p, size_t from, size_t n, json_t *out)
{
	source_page sp = { 0, from, n, json_object(), json_object(), 0 };
	if (sp.folders && sp.meta)
		sources_each(p->r, source_take, &sp);
	if (!sp.folders || !sp.meta || sp.bad || json_object_set(out, "folders", sp.folders) ||
	    json_object_set(out, "metadata", sp.meta)) {
		json_decref(out);
		out = NULL;
	}
	json_decref(sp.folders);
	json_decref(sp.meta);
	return out;
}

/* A copy of r with items [from, from + n) (borrowed pieces, new
 * containers); NULL when out of memory, never a page missing items. */
static json_t *slice(const pager *p, size_t from, size_t n)
{
	json_t *out = json_copy(p->r);
	if (!out)
		return NULL;
	if (!strcmp(p->tool, "list_sources"))
		return sources_slice(p, from, n, out);
	if (!strcmp(p->tool, "get_full_content")) {
		const char *t = json_string_value(json_object_get(p->r, "text"));
		while (n && ((unsigned char)t[from + n] & 0xC0) == 0x80)
			n--;   /* never half a character (t ends with a NUL) */
		if (json_object_set_new(out, "text", json_stringn(t + from, n))) {
			json_decref(out);
			return NULL;
		}
		return out;
	}
	const char *key = !strcmp(p->tool, "search") ? "results" : !strcmp(p->tool, "grep") ? "files" : "items";
	json_t *src = json_object_get(p->r, key), *dst = json_array(), *x;
	size_t i, at = 0;
	int bad = !dst;
	json_array_foreach(src, i, x) {
		if (bad)
			break;
		if (strcmp(p->tool, "grep") != 0) {
			if (i >= from && i < from + n)
				bad = json_array_append(dst, x) != 0;
			continue;
		}
		/* grep: the file's lines that fall in the page, under a copy of its entry */
		size_t k = grep_items(x);
		if (at + k > from && at < from + n) {
			json_t *lines = json_object_get(x, "lines");
			json_t *f = json_copy(x);
			if (lines && f) {
				size_t lo = from > at ? from - at : 0, hi = from + n - at < k ? from + n - at : k;
				json_t *sub = json_array();
				for (size_t j = lo; j < hi && sub; j++)
					if (json_array_append(sub, json_array_get(lines, j))) {
						json_decref(sub);
						sub = NULL;
					}
				bad = json_object_set_new(f, "lines", sub) != 0;
			}
			bad |= json_array_append_new(dst, f) != 0;
		}
		at += k;
	}
	if (bad || json_object_set_new(out, key, dst)) {
		if (bad)
			json_decref(dst);
		json_decref(out);
		return NULL;
	}
	return out;
}

/* The result object for items [from, from + n): with cut, the page marks. */
static json_t *page(const pager *p, size_t from, size_t n, int cut)
{
	json_t *r = slice(p, from, n);
	if (!r)
		return NULL;
	char *text = render(p->tool, r);
	if (cut && text) {
		size_t next = from + n;
		json_object_set_new(r, "reply_truncated", json_true());
		json_object_set_new(r, "next_offset", json_integer((json_int_t)next));
		size_t tl = strlen(text), room = tl + 256;
		char *t2 = fathom_realloc(text, room);
		if (t2) {
			text = t2;
			snprintf(text + tl, room - tl,
			         "%s[reply cut at the byte limit: %s %zu-%zu of %zu; call again with "
			         "offset=%zu for the rest]\n", tl && text[tl - 1] != '\n' ? "\n" : "",
			         p->what, from + 1, next, p->total, next);
		}
	}
	json_t *content = json_pack("[{s:s,s:s}]", "type", "text", "text", text ? text : "");
	fathom_free(text);
	if (!content) /* invalid UTF-8 cannot happen: jstrn repaired it, pages cut at characters */
		content = json_pack("[{s:s,s:s}]", "type", "text", "text", "");
	return json_pack("{s:o,s:o,s:b}", "content", content, "structuredContent", r, "isError", 0);
}

/* list_sources' share of items_fitting: a folder or value counts its name
 * and its JSON. */
typedef struct source_fit {
	size_t at, from, room, used, n;
} source_fit;

static int source_fits(void *ctx, const char *key, const char *val, json_t *x)
{
	source_fit *sf = ctx;
	if (sf->at++ < sf->from)
		return 0;
	sf->used += strlen(val ? val : key) + json_dumpb(x, NULL, 0, JSON_COMPACT);
	if (sf->used > sf->room)
		return 1;
	sf->n++;
	return 0;
}

/* How many items from 'from' on could fit in room bytes, counting each
 * item's JSON once (the text adds to it): an upper bound, so that no page
 * far over the room is ever built. */
static size_t items_fitting(const pager *p, size_t from, size_t room)
{
	if (!strcmp(p->tool, "get_full_content"))
		return p->total - from < room ? p->total - from : room;
	if (!strcmp(p->tool, "list_sources")) {
		source_fit sf = { 0, from, room, 0, 0 };
		sources_each(p->r, source_fits, &sf);
		return sf.n;
	}
	const char *key = !strcmp(p->tool, "search") ? "results" : !strcmp(p->tool, "grep") ? "files" : "items";
	json_t *x;
	size_t i, at = 0, n = 0, used = 0;
	json_array_foreach(json_object_get(p->r, key), i, x) {
		json_t *lines = strcmp(p->tool, "grep") ? NULL : json_object_get(x, "lines");
		size_t k = lines ? json_array_size(lines) : 1;
		for (size_t j = 0; j < k; j++, at++) {
			if (at < from)
				continue;
			used += json_dumpb(lines ? json_array_get(lines, j) : x, NULL, 0, JSON_COMPACT);
			if (used > room)
				return n;
			n++;
		}
	}
	return n;
}

static size_t size_of(json_t *j)
{
	return j ? json_dumpb(j, NULL, 0, JSON_COMPACT) : (size_t)-1;
}

/* The end of a text page of at most n bytes from 'from': never inside a
 * UTF-8 character, and after a newline when one is in its second half. */
static size_t text_cut(const char *t, size_t from, size_t n)
{
	size_t end = from + n;
	while (end > from && ((unsigned char)t[end] & 0xC0) == 0x80)
		end--;
	for (size_t e = end; e > from + (end - from) / 2; e--)
		if (t[e - 1] == '\n')
			return e - from;
	return end - from;
}

json_t *sv_mcp_tool_result(const char *tool, json_t *r, size_t offset, size_t room, sv_err *e)
{
	pager p = { tool, "items", r, 0 };
	int pages = 1;
	if (!strcmp(tool, "search")) {
		p.what = "results";
		p.total = json_array_size(json_object_get(r, "results"));
	} else if (!strcmp(tool, "grep")) {
		json_t *f;
		size_t i;
		json_array_foreach(json_object_get(r, "files"), i, f)
			p.total += grep_items(f);
		p.what = "lines";
	} else if (!strcmp(tool, "glossary_pending")) {
		p.what = "candidates";
		p.total = json_array_size(json_object_get(r, "items"));
	} else if (!strcmp(tool, "list_sources")) {
		p.what = "entries (folders, then metadata values)";
		sources_each(r, source_count, &p.total);
	} else if (!strcmp(tool, "get_full_content")) {
		p.what = "bytes";
		p.total = json_string_length(json_object_get(r, "text"));
		const char *t = json_string_value(json_object_get(r, "text"));
		while (t && offset < p.total && ((unsigned char)t[offset] & 0xC0) == 0x80)
			offset++;   /* a page starts at a character */
	} else {
		pages = 0;
	}
	if (!pages) {
		json_t *whole = page(&p, 0, 0, 0);
		if (whole && size_of(whole) > room) {
			sv_err_set(e, 413, "the reply would be %zu bytes, over the limit of %zu "
			           "(--max-reply-bytes)", size_of(whole), room);
			json_decref(whole);
			return NULL;
		}
		if (!whole)
			sv_err_set(e, 500, "out of memory");
		return whole;
	}
	if (offset > p.total)
		offset = p.total;
	size_t left = p.total - offset;
	size_t hi = items_fitting(&p, offset, room);
	if (hi >= left) {   /* all of it may fit */
		json_t *all = page(&p, offset, left, 0);
		if (!all || size_of(all) <= room) {
			if (!all)
				sv_err_set(e, 500, "out of memory");
			return all;
		}
		json_decref(all);
		hi = left;
	}
	size_t lo = 0;   /* lo fits; hi + 1 does not */
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;
		json_t *t = page(&p, offset, mid, 1);
		size_t sz = size_of(t);
		json_decref(t);
		if (sz <= room)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (lo && !strcmp(tool, "get_full_content"))
		lo = text_cut(json_string_value(json_object_get(r, "text")), offset, lo);
	if (lo == 0) {
		sv_err_set(e, 413, "item %zu of the reply alone is over the limit of %zu bytes "
		           "(--max-reply-bytes)", offset, room);
		return NULL;
	}
	json_t *out = page(&p, offset, lo, 1);
	if (!out)
		sv_err_set(e, 500, "out of memory");
	return out;
}
