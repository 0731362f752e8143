/*
 * handlers.c — the JSON API, with no HTTP in it: a method, a target (path
 * and query string) and a body in; a status and a JSON body out. The
 * daemon, the MCP tools and the fuzz target all come through here.
 *
 * Every input is checked before use: types, ranges, lengths. What fails
 * is an error reply ({"error":{"code","message"}}), never a crash.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

#define SV_MAX_QUERY 4096       /* bytes of a query or pattern */
#define SV_MAX_K 1000
#define SV_MAX_FILTERS 16
#define SV_MAX_PATHS 64
#define SV_LINE_TEXT 1024       /* bytes of a grep line returned */

/* ---- small helpers ------------------------------------------------------------ */

static void err_set(sv_err *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void err_set(sv_err *e, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	e->status = status;
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
}

/* An API error code as an HTTP status, the message from fathom_errmsg(). */
static void err_api(sv_err *e, int rc, const char *what)
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
	err_set(e, st, "%s: %s", what, m && *m ? m : fathom_strerror(rc));
}

/* A JSON string of n bytes; invalid UTF-8 becomes U+FFFD. */
static json_t *jstrn(const char *s, size_t n)
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

static json_t *jstr(const char *s)
{
	return jstrn(s, s ? strlen(s) : 0);
}

/* Members of args, typed. 0 absent, 1 present and good, -1 wrong (e set). */
static int arg_str(json_t *args, const char *name, const char **out, size_t max, sv_err *e)
{
	json_t *v = args ? json_object_get(args, name) : NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		err_set(e, 400, "\"%s\" must be a string", name);
		return -1;
	}
	if (json_string_length(v) > max) {
		err_set(e, 413, "\"%s\" is longer than %zu bytes", name, max);
		return -1;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		err_set(e, 400, "\"%s\" holds a NUL character", name);
		return -1;
	}
	*out = json_string_value(v);
	return 1;
}

static int arg_int(json_t *args, const char *name, long long lo, long long hi, long long *out,
                   sv_err *e)
{
	json_t *v = args ? json_object_get(args, name) : NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		err_set(e, 400, "\"%s\" must be an integer from %lld to %lld", name, lo, hi);
		return -1;
	}
	*out = json_integer_value(v);
	return 1;
}

static int arg_bool(json_t *args, const char *name, int *out, sv_err *e)
{
	json_t *v = args ? json_object_get(args, name) : NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v)) {
		err_set(e, 400, "\"%s\" must be true or false", name);
		return -1;
	}
	*out = json_is_true(v);
	return 1;
}

/* Refuse members the operation does not know: a typo is an error, not a
 * silently ignored option. */
static int only_known(json_t *args, const char *const *known, sv_err *e)
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
			err_set(e, 400, "unknown member \"%.64s\" (known: %s)", key, list);
			return -1;
		}
	}
	return 0;
}

/* A read-only handle for this request; NULL with e set when the index
 * cannot be opened. */
static fathom_index *reader(sv_state *s, sv_err *e)
{
	fathom_index *ix = sv_reader_get(s);
	if (!ix)
		err_api(e, FATHOM_EIO, "opening the index");
	return ix;
}

/* ---- search -------------------------------------------------------------------- */

static json_t *hit_json(const fathom_hit *h, size_t rank, int explain)
{
	json_t *o = json_object();
	json_object_set_new(o, "rank", json_integer((json_int_t)rank));
	json_object_set_new(o, "id", jstr(h->doc_id));
	json_object_set_new(o, "chunk_id", json_integer((json_int_t)h->chunk_id));
	json_object_set_new(o, "path", jstr(h->path));
	json_object_set_new(o, "title", jstr(h->title));
	if (h->url && *h->url)
		json_object_set_new(o, "url", jstr(h->url));
	json_object_set_new(o, "lines", json_pack("[ii]", (json_int_t)h->line_start,
	                                          (json_int_t)h->line_end));
	json_object_set_new(o, "score", json_real(h->score));
	json_object_set_new(o, "snippet", jstr(h->snippet));
	json_t *hl = json_array();
	for (uint32_t j = 0; j < h->n_highlights; j++)
		json_array_append_new(hl, json_pack("[ii]", (json_int_t)h->highlights[j].start,
		                                    (json_int_t)h->highlights[j].len));
	json_object_set_new(o, "highlights", hl);
	json_t *ml = json_array();
	for (uint32_t j = 0; j < h->n_match_lines; j++)
		json_array_append_new(ml, json_integer(h->match_lines[j]));
	json_object_set_new(o, "match_lines", ml);
	if (explain) {
		json_t *parts = json_object(), *matched = json_object(), *sources = json_array();
		for (int f = 0; f < FATHOM_NFIELDS; f++) {
			int has = (uint32_t)f < h->n_fields;
			json_object_set_new(parts, fathom_field_name(f), json_real(has ? h->field_score[f] : 0.0));
			if (!has || !h->n_matched[f])
				continue;
			json_t *a = json_array();
			for (uint32_t j = 0; j < h->n_matched[f]; j++)
				json_array_append_new(a, jstr(h->matched[f][j]));
			json_object_set_new(matched, fathom_field_name(f), a);
		}
		json_object_set_new(parts, "bonus", json_real(h->bonus));
		for (uint32_t j = 0; j < h->n_sources; j++)
			json_array_append_new(sources, json_pack("{s:s,s:f,s:I}", "source",
			                                         fathom_source_name(h->sources[j].source),
			                                         "score", h->sources[j].score, "rank",
			                                         (json_int_t)h->sources[j].rank));
		json_object_set_new(o, "score_parts", parts);
		json_object_set_new(o, "sources", sources);
		json_object_set_new(o, "matched", matched);
	}
	return o;
}

static json_t *receipt_json(const fathom_results *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "parsed", jstr(fathom_results_parsed(r)));
	json_object_set_new(o, "filters", jstr(fathom_results_filters(r)));
	json_t *terms = json_array();
	for (size_t i = 0; i < fathom_results_nterms(r); i++) {
		int req = 0;
		const char *t = fathom_results_term(r, i, &req);
		json_array_append_new(terms, json_pack("{s:o,s:b,s:b}", "term", jstr(t), "required", req,
		                                       "negated", fathom_results_term_negated(r, i)));
	}
	json_object_set_new(o, "terms", terms);
	json_t *ids = json_array();
	for (size_t i = 0; i < fathom_results_nidents(r); i++) {
		const fathom_ident_receipt *x = fathom_results_ident(r, i);
		json_array_append_new(ids, json_pack("{s:o,s:o,s:s,s:b,s:I}", "text", jstr(x->text), "key",
		                                     jstr(x->key), "category", x->category, "filter",
		                                     x->applied, "chunks", (json_int_t)x->chunks));
	}
	json_object_set_new(o, "identifiers", ids);
	json_t *gl = json_array();
	for (size_t i = 0; i < fathom_results_nexpansions(r); i++) {
		const fathom_expansion *x = fathom_results_expansion(r, i);
		json_t *al = json_array();
		for (size_t k = 0; k < x->n_aliases; k++)
			json_array_append_new(al, jstr(x->aliases[k]));
		json_array_append_new(gl, json_pack("{s:o,s:I,s:o}", "text", jstr(x->text), "group",
		                                    (json_int_t)x->group, "aliases", al));
	}
	json_object_set_new(o, "glossary", gl);
	return o;
}

json_t *sv_do_search(sv_state *s, json_t *args, sv_err *e)
{
	static const char *const known[] = { "query", "k", "mode", "filters", "path", "lang",
	                                     "explain", "snippet_bytes", NULL };
	if (!json_is_object(args)) {
		err_set(e, 400, "the request must be a JSON object");
		return NULL;
	}
	if (only_known(args, known, e))
		return NULL;
	const char *query = NULL, *mode = NULL, *path = NULL, *lang = NULL;
	long long k = 10, snip = 240;
	int explain = 0;
	if (arg_str(args, "query", &query, SV_MAX_QUERY, e) < 0 ||
	    arg_int(args, "k", 1, SV_MAX_K, &k, e) < 0 || arg_str(args, "mode", &mode, 16, e) < 0 ||
	    arg_str(args, "path", &path, 1024, e) < 0 || arg_str(args, "lang", &lang, 64, e) < 0 ||
	    arg_bool(args, "explain", &explain, e) < 0 ||
	    arg_int(args, "snippet_bytes", 0, 4096, &snip, e) < 0)
		return NULL;
	if (!query) {
		err_set(e, 400, "\"query\" is required");
		return NULL;
	}
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.k = (uint32_t)k;
	so.snippet_bytes = (uint32_t)snip;
	so.time_limit = sv_options(s)->request_timeout;   /* 504 past it */
	so.path_glob = path;
	so.lang = lang;
	if (mode) {
		if (strcmp(mode, "all") == 0)
			so.match = FATHOM_MATCH_ALL;
		else if (strcmp(mode, "any") == 0)
			so.match = FATHOM_MATCH_ANY;
		else if (strcmp(mode, "auto") == 0 || strcmp(mode, "keyword") == 0)
			so.match = FATHOM_MATCH_AUTO;
		else {
			err_set(e, 400, "\"mode\" must be auto, all or any (keyword search; vector modes "
			                "come with the vector issue)");
			return NULL;
		}
	}
	/* filters: {"library":"fastapi"} or ["library=fastapi"] */
	char *fbuf[SV_MAX_FILTERS];
	const char *filters[SV_MAX_FILTERS];
	size_t nf = 0;
	json_t *fj = json_object_get(args, "filters");
	if (fj && !json_is_null(fj)) {
		if (json_is_object(fj)) {
			const char *key;
			json_t *v;
			json_object_foreach(fj, key, v) {
				if (nf == SV_MAX_FILTERS || !json_is_string(v) || !*key || strchr(key, '=') ||
				    json_string_length(v) > 1024 || strlen(key) > 128) {
					err_set(e, 400, "\"filters\" must map at most %d names to strings",
					        SV_MAX_FILTERS);
					goto bad;
				}
				size_t n = strlen(key) + json_string_length(v) + 2;
				if (!(fbuf[nf] = fathom_malloc(n)))
					goto bad;
				snprintf(fbuf[nf], n, "%s=%s", key, json_string_value(v));
				filters[nf] = fbuf[nf];
				nf++;
			}
		} else if (json_is_array(fj)) {
			size_t i;
			json_t *v;
			json_array_foreach(fj, i, v) {
				if (nf == SV_MAX_FILTERS || !json_is_string(v) ||
				    !strchr(json_string_value(v), '=') || json_string_length(v) > 1024) {
					err_set(e, 400, "\"filters\" must be at most %d \"key=value\" strings",
					        SV_MAX_FILTERS);
					goto bad;
				}
				if (!(fbuf[nf] = sv_strdup(json_string_value(v))))
					goto bad;
				filters[nf] = fbuf[nf];
				nf++;
			}
		} else {
			err_set(e, 400, "\"filters\" must be an object or an array");
			goto bad;
		}
	}
	so.filters = nf ? filters : NULL;
	so.n_filters = nf;
	fathom_index *ix = reader(s, e);
	if (!ix)
		goto bad;
	double t0 = sv_now();
	fathom_results *r = NULL;
	int rc = fathom_search(&r, ix, query, &so);
	double took = sv_now() - t0;
	if (rc) {
		err_api(e, rc, "search");
		sv_reader_put(s, ix);
		goto bad;
	}
	json_t *out = json_object();
	json_object_set_new(out, "query", jstr(query));
	size_t n = fathom_results_count(r);
	json_object_set_new(out, "count", json_integer((json_int_t)n));
	if (n == 0)
		json_object_set_new(out, "why", jstr(fathom_results_why(r)));
	json_t *hits = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(hits, hit_json(fathom_results_hit(r, i), i + 1, explain));
	json_object_set_new(out, "results", hits);
	json_object_set_new(out, "receipt", receipt_json(r));
	json_object_set_new(out, "generation", json_integer((json_int_t)fathom_generation(ix)));
	json_object_set_new(out, "took_ms", json_real(took * 1000));
	fathom_results_free(r);
	sv_reader_put(s, ix);
	for (size_t i = 0; i < nf; i++)
		fathom_free(fbuf[i]);
	return out;
bad:
	for (size_t i = 0; i < nf; i++)
		fathom_free(fbuf[i]);
	if (!e->status)
		err_set(e, 500, "out of memory");
	return NULL;
}

/* ---- grep ------------------------------------------------------------------------- */

typedef struct grep_acc {
	json_t *files;
	size_t limit, nfiles;
	int truncated, timed_out, files_only, count_only;
	double deadline;
} grep_acc;

static int grep_cb(void *ctx, const fathom_grep_file *f)
{
	grep_acc *a = ctx;
	if (a->nfiles >= a->limit) {
		a->truncated = 1;
		return 1;
	}
	if (a->deadline > 0 && sv_now() > a->deadline) {
		a->timed_out = a->truncated = 1;
		return 1;
	}
	json_t *o = json_object();
	json_object_set_new(o, "path", jstr(f->path));
	json_object_set_new(o, "id", jstr(f->doc_id));
	if (!a->files_only)
		json_object_set_new(o, "count", json_integer((json_int_t)f->n_lines));
	if (f->text) {
		json_t *lines = json_array();
		for (size_t i = 0; i < f->n_lines; i++) {
			const fathom_grep_line *l = &f->lines[i];
			size_t n = l->end - l->start;
			int cut = n > SV_LINE_TEXT;
			json_t *lo = json_object();
			json_object_set_new(lo, "line", json_integer(l->line));
			json_object_set_new(lo, "text", jstrn(f->text + l->start, cut ? SV_LINE_TEXT : n));
			json_object_set_new(lo, "match", json_pack("[II]",
			                                           (json_int_t)(l->match_start - l->start),
			                                           (json_int_t)(l->match_end - l->start)));
			if (cut)
				json_object_set_new(lo, "cut", json_true());
			json_array_append_new(lines, lo);
		}
		json_object_set_new(o, "lines", lines);
	}
	if (f->fresh_from_disk)
		json_object_set_new(o, "changed_since_indexing", json_true());
	json_array_append_new(a->files, o);
	a->nfiles++;
	return 0;
}

json_t *sv_do_grep(sv_state *s, json_t *args, sv_err *e)
{
	static const char *const known[] = { "pattern", "literal", "ignore_case", "word", "paths",
	                                     "glob", "lang", "max_count", "files_only", "count_only",
	                                     "boolean", "limit", NULL };
	if (!json_is_object(args)) {
		err_set(e, 400, "the request must be a JSON object");
		return NULL;
	}
	if (only_known(args, known, e))
		return NULL;
	const char *pattern = NULL, *glob = NULL, *lang = NULL;
	int literal = 0, icase = 0, word = 0, files_only = 0, count_only = 0, boolean = 0;
	long long max_count = 20, limit = 100;
	if (arg_str(args, "pattern", &pattern, SV_MAX_QUERY, e) < 0 ||
	    arg_bool(args, "literal", &literal, e) < 0 || arg_bool(args, "ignore_case", &icase, e) < 0 ||
	    arg_bool(args, "word", &word, e) < 0 || arg_str(args, "glob", &glob, 1024, e) < 0 ||
	    arg_str(args, "lang", &lang, 64, e) < 0 ||
	    arg_int(args, "max_count", 0, 100000, &max_count, e) < 0 ||
	    arg_bool(args, "files_only", &files_only, e) < 0 ||
	    arg_bool(args, "count_only", &count_only, e) < 0 ||
	    arg_bool(args, "boolean", &boolean, e) < 0 || arg_int(args, "limit", 1, 10000, &limit, e) < 0)
		return NULL;
	if (!pattern) {
		err_set(e, 400, "\"pattern\" is required");
		return NULL;
	}
	const char *paths[SV_MAX_PATHS];
	size_t np = 0;
	json_t *pj = json_object_get(args, "paths");
	if (pj && !json_is_null(pj)) {
		size_t i;
		json_t *v;
		if (!json_is_array(pj) || json_array_size(pj) > SV_MAX_PATHS) {
			err_set(e, 400, "\"paths\" must be an array of at most %d strings", SV_MAX_PATHS);
			return NULL;
		}
		json_array_foreach(pj, i, v) {
			if (!json_is_string(v) || json_string_length(v) > 4096 ||
			    strlen(json_string_value(v)) != json_string_length(v)) {
				err_set(e, 400, "\"paths\" must be an array of strings");
				return NULL;
			}
			paths[np++] = json_string_value(v);
		}
	}
	fathom_grep_opts go = FATHOM_GREP_OPTS_INIT;
	go.literal = literal;
	go.caseless = icase;
	go.word = word;
	go.glob = glob;
	go.lang = lang;
	go.prefixes = np ? paths : NULL;
	go.n_prefixes = np;
	go.max_count = (uint32_t)max_count;
	go.files_only = files_only;
	go.count_only = count_only && !files_only;
	go.boolean = boolean;
	go.threads = 4;   /* many requests share the CPUs */
	grep_acc a = { json_array(), (size_t)limit, 0, 0, 0, files_only, go.count_only, 0 };
	double tl = sv_options(s)->request_timeout;
	if (tl > 0)
		a.deadline = sv_now() + tl;
	fathom_index *ix = reader(s, e);
	if (!ix) {
		json_decref(a.files);
		return NULL;
	}
	fathom_grep_stats st = FATHOM_GREP_STATS_INIT;
	int rc = fathom_grep(ix, pattern, &go, grep_cb, &a, &st);
	sv_reader_put(s, ix);
	if (rc == FATHOM_EINTERRUPTED && a.truncated)
		rc = 0;
	if (rc) {
		json_decref(a.files);
		err_api(e, rc, "grep");
		return NULL;
	}
	json_t *out = json_object();
	json_object_set_new(out, "pattern", jstr(pattern));
	json_object_set_new(out, "files", a.files);
	json_object_set_new(out, "count", json_integer((json_int_t)a.nfiles));
	json_object_set_new(out, "truncated", json_boolean(a.truncated));
	if (a.timed_out)
		json_object_set_new(out, "timed_out", json_true());
	json_object_set_new(out, "stats", json_pack("{s:I,s:I,s:I,s:b}", "files", (json_int_t)st.files,
	                                            "read", (json_int_t)st.candidates, "changed",
	                                            (json_int_t)st.changed, "planned", st.planned));
	return out;
}

/* ---- documents ---------------------------------------------------------------------- */

json_t *sv_do_get(sv_state *s, const char *id, const char *path, json_t *from, json_t *count,
                  sv_err *e)
{
	const char *key = id && *id ? id : path;
	if (!key || !*key) {
		err_set(e, 400, "an \"id\" or a \"path\" is required");
		return NULL;
	}
	long long f = 1, c = 0;
	if ((from && !json_is_null(from) &&
	     (!json_is_integer(from) || (f = json_integer_value(from)) < 1 || f > UINT32_MAX)) ||
	    (count && !json_is_null(count) &&
	     (!json_is_integer(count) || (c = json_integer_value(count)) < 0 || c > UINT32_MAX))) {
		err_set(e, 400, "\"from\" must be a line number from 1, \"count\" a number of lines");
		return NULL;
	}
	fathom_index *ix = reader(s, e);
	if (!ix)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	/* only what the index holds: an id or path is looked up, never opened */
	int rc = fathom_get(&text, &len, ix, key, (uint32_t)f, (uint32_t)c);
	sv_reader_put(s, ix);
	if (rc) {
		err_api(e, rc, key);
		return NULL;
	}
	json_t *out = json_pack("{s:o,s:I}", "id", jstr(key), "from", (json_int_t)f);
	if (c)
		json_object_set_new(out, "count", json_integer(c));
	json_object_set_new(out, "text", jstrn(text, len));
	fathom_free(text);
	return out;
}

typedef struct src_acc {
	json_t *roots;
	uint64_t docs, chunks, bytes;
} src_acc;

static int src_cb(void *ctx, const char *id, const char *path, uint64_t size, uint32_t n_chunks)
{
	src_acc *a = ctx;
	const char *p = path && *path ? path : id;
	const char *slash = strchr(p + (*p == '/'), '/');
	char top[256];
	size_t n = slash ? (size_t)(slash - p) : 0;
	if (!path || !*path)
		snprintf(top, sizeof top, "(documents)");
	else if (n == 0 || n >= sizeof top)
		snprintf(top, sizeof top, ".");
	else
		snprintf(top, sizeof top, "%.*s", (int)n, p);
	json_t *r = json_object_get(a->roots, top);
	if (!r) {
		r = json_pack("{s:I,s:I}", "documents", (json_int_t)0, "chunks", (json_int_t)0);
		json_object_set_new(a->roots, top, r);
	}
	json_object_set_new(r, "documents",
	                    json_integer(json_integer_value(json_object_get(r, "documents")) + 1));
	json_object_set_new(r, "chunks", json_integer(json_integer_value(json_object_get(r, "chunks")) +
	                                              (json_int_t)n_chunks));
	a->docs++;
	a->chunks += n_chunks;
	a->bytes += size;
	return 0;
}

/* metadata: {"library": {"fastapi": 12}, "lang": {"c": 3}} */
static int meta_cb(void *ctx, const char *key, const char *value, uint64_t docs)
{
	json_t *m = ctx, *k = json_object_get(m, key);
	if (!k) {
		if (json_object_size(m) >= 256)
			return 0;   /* a bounded answer: the first 256 keys */
		json_object_set_new(m, key, k = json_object());
	}
	if (json_object_size(k) < 1000)
		json_object_set_new(k, value, json_integer((json_int_t)docs));
	return 0;
}

json_t *sv_do_sources(sv_state *s, sv_err *e)
{
	fathom_index *ix = reader(s, e);
	if (!ix)
		return NULL;
	src_acc a = { json_object(), 0, 0, 0 };
	json_t *meta = json_object();
	int rc = fathom_list_docs(ix, src_cb, &a);
	if (!rc)
		rc = fathom_list_meta(ix, meta_cb, meta);
	const char *root = fathom_root(ix);
	json_t *out = NULL;
	if (rc) {
		err_api(e, rc, "listing documents");
		json_decref(a.roots);
		json_decref(meta);
	} else {
		out = json_pack("{s:o,s:I,s:I,s:I,s:o,s:o}", "root", jstr(root), "documents",
		                (json_int_t)a.docs, "chunks", (json_int_t)a.chunks, "bytes",
		                (json_int_t)a.bytes, "folders", a.roots, "metadata", meta);
	}
	sv_reader_put(s, ix);
	return out;
}

/* ---- glossary and vocabulary ------------------------------------------------------ */

static int gloss_cb(void *ctx, const fathom_gloss_item *it)
{
	json_t *a = ctx;
	json_t *terms = json_array();
	for (size_t i = 0; i < it->n_terms; i++)
		json_array_append_new(terms, jstr(it->terms[i]));
	json_t *o = json_pack("{s:s,s:I,s:o}", "kind", it->kind, "id", (json_int_t)it->id, "terms", terms);
	if (strcmp(it->kind, "candidate") == 0) {
		json_object_set_new(o, "status", jstr(it->status));
		json_object_set_new(o, "source", jstr(it->source));
		json_object_set_new(o, "evidence", jstr(it->evidence));
		json_object_set_new(o, "count", json_integer((json_int_t)it->count));
	}
	json_array_append_new(a, o);
	return json_array_size(a) >= 10000;   /* bounded */
}

json_t *sv_do_glossary_list(sv_state *s, const char *kind, sv_err *e)
{
	if (kind && *kind && strcmp(kind, "group") && strcmp(kind, "protected") &&
	    strcmp(kind, "candidate") && strcmp(kind, "pending")) {
		err_set(e, 400, "kind must be group, protected, candidate or pending");
		return NULL;
	}
	fathom_index *ix = reader(s, e);
	if (!ix)
		return NULL;
	json_t *items = json_array();
	int rc = fathom_glossary_list(ix, kind && *kind ? kind : NULL, gloss_cb, items);
	sv_reader_put(s, ix);
	if (rc && rc != 1) {
		json_decref(items);
		err_api(e, rc, "glossary");
		return NULL;
	}
	return json_pack("{s:o}", "items", items);
}

/* Run a write under the writer lock and commit it; what a caller sees
 * acknowledged is durable. */
static fathom_index *writer(sv_state *s, sv_err *e)
{
	fathom_index *w = sv_writer_lock(s);
	if (!w)
		err_set(e, 503, "the index is read-only here (--read-only, or another process holds "
		                "the writer lock: %s)", fathom_errmsg());
	return w;
}

static json_t *commit_done(sv_state *s, fathom_index *w, json_t *out, sv_err *e)
{
	int rc = fathom_commit(w);
	if (rc) {
		err_api(e, rc, "commit");
		fathom_rollback(w);
		sv_writer_unlock(s, 0);
		json_decref(out);
		return NULL;
	}
	json_object_set_new(out, "generation", json_integer((json_int_t)fathom_generation(w)));
	sv_writer_unlock(s, 1);
	return out;
}

static json_t *write_failed(sv_state *s, fathom_index *w, int rc, const char *what, sv_err *e)
{
	err_api(e, rc, what);
	fathom_rollback(w);
	sv_writer_unlock(s, 0);
	return NULL;
}

json_t *sv_do_glossary_review(sv_state *s, json_t *args, sv_err *e)
{
	static const char *const known[] = { "candidate", "decision", NULL };
	if (!json_is_object(args) || only_known(args, known, e)) {
		if (!e->status)
			err_set(e, 400, "the request must be a JSON object");
		return NULL;
	}
	long long cand = 0;
	const char *decision = NULL;
	if (arg_int(args, "candidate", 1, UINT32_MAX, &cand, e) <= 0 ||
	    arg_str(args, "decision", &decision, 16, e) <= 0 ||
	    (strcmp(decision, "approve") && strcmp(decision, "reject"))) {
		if (!e->status || e->status == 0)
			err_set(e, 400, "\"candidate\" (an id from the pending list) and \"decision\" "
			                "(approve or reject) are required");
		return NULL;
	}
	fathom_index *w = writer(s, e);
	if (!w)
		return NULL;
	int approve = strcmp(decision, "approve") == 0;
	int rc = fathom_glossary_decide(w, (uint32_t)cand, approve);
	if (rc)
		return write_failed(s, w, rc, "glossary review", e);
	return commit_done(s, w, json_pack("{s:I,s:s}", "candidate", (json_int_t)cand, "decision",
	                                   approve ? "approved" : "rejected"), e);
}

/* POST /glossary: one change, committed: {"terms": [...]} adds a group;
 * {"remove": "id or term"}, {"protect": "name"}, {"unprotect": "name"};
 * {"propose": true} mines new candidates for the review queue. */
static json_t *do_glossary_post(sv_state *s, json_t *args, sv_err *e)
{
	static const char *const acts[] = { "remove", "protect", "unprotect", "propose", NULL };
	if (json_is_object(args) && json_object_size(args) == 1 &&
	    !json_object_get(args, "terms")) {
		if (only_known(args, acts, e))
			return NULL;
		const char *what = json_object_iter_key(json_object_iter(args));
		const char *arg = NULL;
		int prop = 0;
		if (strcmp(what, "propose") == 0) {
			if (arg_bool(args, "propose", &prop, e) <= 0 || !prop) {
				if (!e->status)
					err_set(e, 400, "\"propose\" must be true");
				return NULL;
			}
		} else if (arg_str(args, what, &arg, 256, e) <= 0 || !*arg) {
			if (!e->status)
				err_set(e, 400, "\"%s\" wants a non-empty string", what);
			return NULL;
		}
		fathom_index *w = writer(s, e);
		if (!w)
			return NULL;
		size_t n = 0;
		int rc = prop ? fathom_glossary_propose(w, &n)
		       : strcmp(what, "remove") == 0 ? fathom_glossary_remove(w, arg)
		       : fathom_glossary_protect(w, arg, strcmp(what, "protect") == 0);
		if (rc)
			return write_failed(s, w, rc, "glossary", e);
		json_t *out = prop ? json_pack("{s:I}", "proposed", (json_int_t)n)
		                   : json_pack("{s:s,s:o}", "done", what, "term", jstr(arg));
		return commit_done(s, w, out, e);
	}
	json_t *tj = json_is_object(args) ? json_object_get(args, "terms") : NULL;
	if (!json_is_array(tj) || json_array_size(tj) < 2 || json_array_size(tj) > 64) {
		err_set(e, 400, "\"terms\" must be an array of 2 to 64 strings");
		return NULL;
	}
	const char *terms[64];
	size_t i;
	json_t *v;
	json_array_foreach(tj, i, v) {
		if (!json_is_string(v) || json_string_length(v) > 256 || json_string_length(v) == 0) {
			err_set(e, 400, "\"terms\" must be non-empty strings of at most 256 bytes");
			return NULL;
		}
		terms[i] = json_string_value(v);
	}
	fathom_index *w = writer(s, e);
	if (!w)
		return NULL;
	uint32_t group = 0;
	int rc = fathom_glossary_add(w, terms, json_array_size(tj), &group);
	if (rc)
		return write_failed(s, w, rc, "glossary", e);
	return commit_done(s, w, json_pack("{s:I}", "group", (json_int_t)group), e);
}

typedef struct vocab_acc {
	json_t *items;
	size_t limit;
} vocab_acc;

static int vocab_cb(void *ctx, const fathom_vocab_entry *v)
{
	vocab_acc *a = ctx;
	if (json_array_size(a->items) >= a->limit)
		return 1;
	json_t *vars = json_array();
	for (size_t i = 0; i < v->n_variants; i++)
		json_array_append_new(vars, jstr(v->variants[i]));
	json_array_append_new(a->items, json_pack("{s:o,s:s,s:o,s:I,s:I}", "key", jstr(v->key),
	                                          "category", v->category, "variants", vars, "chunks",
	                                          (json_int_t)v->chunks, "occurrences",
	                                          (json_int_t)v->occurrences));
	return 0;
}

/* ---- targets ------------------------------------------------------------------------- */

static int hexv(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Percent-decode [p, p+n) ('+' as space in a query); NULL when it holds
 * a NUL or a bad escape. */
static char *pct_decode(const char *p, size_t n, int plus)
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

/* The value of key in a query string (decoded, fathom_malloc'd); NULL if absent;
 * *bad set when present but malformed. */
static char *qs_get(const char *qs, const char *key, int *bad)
{
	size_t kl = strlen(key);
	for (const char *p = qs; p && *p;) {
		const char *amp = strchr(p, '&');
		size_t n = amp ? (size_t)(amp - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		size_t nl = eq ? (size_t)(eq - p) : n;
		if (nl == kl && memcmp(p, key, kl) == 0) {
			char *v = eq ? pct_decode(eq + 1, n - nl - 1, 1) : sv_strdup("");
			if (!v)
				*bad = 1;
			return v;
		}
		p = amp ? amp + 1 : NULL;
	}
	return NULL;
}

/* A query-string number as a JSON integer (NULL when absent; *bad when
 * not a number). */
static json_t *qs_int(const char *qs, const char *key, int *bad)
{
	char *v = qs_get(qs, key, bad);
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

const char *sv_endpoint_name(int ep)
{
	static const char *const names[SV_NEP] = { "search", "grep", "get", "documents_add",
	                                           "documents_delete", "glossary", "vocabulary",
	                                           "sources", "stats", "health", "metrics", "mcp",
	                                           "index", "optimize", "other" };
	return ep >= 0 && ep < SV_NEP ? names[ep] : "other";
}

static void reply_json(sv_reply *r, int status, json_t *j)
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
	case 503: return "unavailable";
	case 504: return "timeout";
	default: return "internal";
	}
}

static void reply_err(sv_reply *r, const sv_err *e)
{
	int st = e->status ? e->status : 500;
	reply_json(r, st, json_pack("{s:{s:s,s:s}}", "error", "code", status_code(st), "message",
	                            e->msg[0] ? e->msg : "internal error"));
}

static void reply_result(sv_reply *r, json_t *j, const sv_err *e)
{
	if (j)
		reply_json(r, 200, j);
	else
		reply_err(r, e);
}

void sv_reply_free(sv_reply *r)
{
	fathom_free(r->body);
	r->body = NULL;
}

static json_t *parse_body(const char *body, size_t len, sv_err *e)
{
	if (!body || !len) {
		err_set(e, 400, "a JSON body is required");
		return NULL;
	}
	json_error_t je;
	json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		err_set(e, 400, "malformed JSON at line %d column %d: %s", je.line, je.column, je.text);
	return j;
}

/* ---- writes that ingest: POST /documents, POST /index ------------------------------ */

#define SV_MAX_META 64
#define SV_MAX_INDEX_PATHS 4096

/* The ingest options of a request, by the CLI's names spelled with _
 * (chunk_target for --chunk-target). Values are strings: from the query
 * string of POST /documents, or JSON scalars of POST /index "options". */
typedef struct ingest_req {
	fathom_ingest_opts io;
	const char *meta[SV_MAX_META];
	char *owned[SV_MAX_META + 32];   /* decoded query-string values */
	size_t n_owned;
	int skip_bad;                    /* on_bad=skip: bad lines skipped, not fatal */
	/* callbacks */
	char first_bad[512];
	size_t nbad;
	double deadline;
} ingest_req;

static void ingest_req_init(ingest_req *r)
{
	fathom_ingest_opts d = FATHOM_INGEST_OPTS_INIT;
	memset(r, 0, sizeof *r);
	r->io = d;
	r->io.meta = r->meta;
}

static void ingest_req_free(ingest_req *r)
{
	for (size_t i = 0; i < r->n_owned; i++)
		fathom_free(r->owned[i]);
}

static int parse_u64s(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!*v || *v == '-')
		return -1;
	unsigned long long x = strtoull(v, &end, 10);
	if (*end || errno || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

static int parse_bools(const char *v, int *out)
{
	if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = 1;
	else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = 0;
	else
		return -1;
	return 0;
}

/* One option; index_only options are refused for POST /documents. Each
 * names the fathom_ingest_opts member it sets: a number (uint32_t or
 * uint64_t, by size) or a boolean (int). */
#define IO_MEMBER(m) offsetof(fathom_ingest_opts, m), sizeof(((fathom_ingest_opts *)0)->m)
static int ingest_opt(ingest_req *r, const char *name, const char *v, int for_index, sv_err *e)
{
	static const struct {
		const char *name;
		char kind;          /* n: number, b: boolean */
		uint64_t lo, hi;
		int index_only;
		size_t off, size;
	} opts[] = {
		{ "max_size", 'n', 1, UINT64_MAX, 1, IO_MEMBER(max_file_size) },
		{ "grep_max_size", 'n', 0, UINT64_MAX, 1, IO_MEMBER(grep_max_file_size) },
		{ "grep_only", 'b', 0, 1, 1, IO_MEMBER(grep_only) },
		{ "gitignore", 'b', 0, 1, 1, IO_MEMBER(use_gitignore) },
		{ "follow_symlinks", 'b', 0, 1, 1, IO_MEMBER(follow_symlinks) },
		{ "remove_missing", 'b', 0, 1, 1, IO_MEMBER(remove_missing) },
		{ "chunk_target", 'n', 1, 1u << 30, 0, IO_MEMBER(chunk_target) },
		{ "chunk_overlap", 'n', 0, 1u << 30, 0, IO_MEMBER(chunk_overlap) },
		{ "chunk_max", 'n', 1, 1u << 30, 0, IO_MEMBER(chunk_max) },
		{ "ident_min_len", 'n', 1, 64, 0, IO_MEMBER(ident_min_len) },
		{ "ident_max", 'n', 1, 1000, 0, IO_MEMBER(ident_max) },
	};
	if (strcmp(name, "meta") == 0) {
		if (!strchr(v, '=') || v[0] == '=' || strlen(v) > 1024) {
			err_set(e, 400, "\"meta\" wants key=value strings, got \"%.64s\"", v);
			return -1;
		}
		if (r->io.n_meta == SV_MAX_META) {
			err_set(e, 400, "at most %d meta values", SV_MAX_META);
			return -1;
		}
		r->meta[r->io.n_meta++] = v;
		return 0;
	}
	if (!for_index && strcmp(name, "on_bad") == 0) {
		if (strcmp(v, "skip") && strcmp(v, "fail")) {
			err_set(e, 400, "\"on_bad\" is skip or fail");
			return -1;
		}
		r->skip_bad = strcmp(v, "skip") == 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		if (strcmp(name, opts[i].name) != 0)
			continue;
		if (opts[i].index_only && !for_index)
			break;
		uint64_t x = 0;
		int b = 0;
		if (opts[i].kind == 'b' ? parse_bools(v, &b) : parse_u64s(v, opts[i].lo, opts[i].hi, &x)) {
			if (opts[i].kind == 'b')
				err_set(e, 400, "\"%s\" must be true or false", name);
			else
				err_set(e, 400, "\"%s\" must be an integer from %llu to %llu", name,
				        (unsigned long long)opts[i].lo, (unsigned long long)opts[i].hi);
			return -1;
		}
		char *m = (char *)&r->io + opts[i].off;
		if (opts[i].kind == 'b')
			memcpy(m, &b, sizeof b);
		else if (opts[i].size == sizeof(uint32_t))
			memcpy(m, &(uint32_t){ (uint32_t)x }, sizeof(uint32_t));
		else
			memcpy(m, &x, sizeof x);
		return 0;
	}
	err_set(e, 400, "unknown %s option \"%.64s\" (docs/API.md lists them)",
	        for_index ? "indexing" : "document", name);
	return -1;
}
#undef IO_MEMBER

/* A target above the cap raises the cap, as on the command line. */
static void ingest_req_done(ingest_req *r)
{
	if (r->io.chunk_max < r->io.chunk_target)
		r->io.chunk_max = r->io.chunk_target;
}

/* POST /documents?chunk_target=..&meta=k%3Dv&on_bad=skip */
static int ingest_opts_qs(ingest_req *r, const char *qs, sv_err *e)
{
	for (const char *p = qs; p && *p;) {
		const char *amp = strchr(p, '&');
		size_t n = amp ? (size_t)(amp - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		size_t nl = eq ? (size_t)(eq - p) : n;
		if (n) {
			if (r->n_owned + 2 > sizeof r->owned / sizeof r->owned[0]) {
				err_set(e, 400, "too many query parameters");
				return -1;
			}
			char *k = pct_decode(p, nl, 1);
			if (k)
				r->owned[r->n_owned++] = k;
			char *v = eq ? pct_decode(eq + 1, n - nl - 1, 1) : sv_strdup("");
			if (v)
				r->owned[r->n_owned++] = v;
			if (!k || !v) {
				err_set(e, 400, "malformed query string (a bad %% escape or a NUL)");
				return -1;
			}
			if (ingest_opt(r, k, v, 0, e))
				return -1;
		}
		p = amp ? amp + 1 : NULL;
	}
	ingest_req_done(r);
	return 0;
}

/* POST /index "options": {"chunk_target": 2000, "gitignore": false,
 * "meta": ["library=x"] or {"library": "x"}} */
static int ingest_opts_json(ingest_req *r, json_t *o, sv_err *e)
{
	if (!o || json_is_null(o))
		return 0;
	if (!json_is_object(o)) {
		err_set(e, 400, "\"options\" must be an object");
		return -1;
	}
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) {
		char num[32];
		const char *sv = NULL;
		if (strcmp(key, "meta") == 0 && (json_is_array(v) || json_is_object(v))) {
			size_t i;
			json_t *m;
			if (json_is_array(v)) {
				json_array_foreach(v, i, m) {
					if (!json_is_string(m)) {
						err_set(e, 400, "\"meta\" wants key=value strings");
						return -1;
					}
					if (ingest_opt(r, "meta", json_string_value(m), 1, e))
						return -1;
				}
				continue;
			}
			const char *mk;
			json_object_foreach(v, mk, m) {
				if (!json_is_string(m) || !*mk || strchr(mk, '=') || strlen(mk) > 128 ||
				    json_string_length(m) > 1024 ||
				    r->n_owned == sizeof r->owned / sizeof r->owned[0]) {
					err_set(e, 400, "\"meta\" must map names to strings");
					return -1;
				}
				size_t n = strlen(mk) + json_string_length(m) + 2;
				char *kv = fathom_malloc(n);
				if (!kv) {
					err_set(e, 500, "out of memory");
					return -1;
				}
				snprintf(kv, n, "%s=%s", mk, json_string_value(m));
				r->owned[r->n_owned++] = kv;
				if (ingest_opt(r, "meta", kv, 1, e))
					return -1;
			}
			continue;
		}
		if (json_is_string(v))
			sv = json_string_value(v);
		else if (json_is_boolean(v))
			sv = json_is_true(v) ? "true" : "false";
		else if (json_is_integer(v)) {
			snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
			sv = num;
		} else {
			err_set(e, 400, "option \"%.64s\" must be a number, a boolean or a string", key);
			return -1;
		}
		if (ingest_opt(r, key, sv, 1, e))
			return -1;
	}
	ingest_req_done(r);
	return 0;
}

static void ingest_skip(void *ctx, const char *path, int reason)
{
	ingest_req *r = ctx;
	if (reason != FATHOM_SKIP_BAD_RECORD)
		return;
	if (!r->nbad++)
		snprintf(r->first_bad, sizeof r->first_bad, "%s", path);
}

static int ingest_progress(void *ctx, const fathom_ingest_stats *st, uint64_t total, double eta)
{
	(void)st;
	(void)total;
	(void)eta;
	ingest_req *r = ctx;
	return r->deadline > 0 && sv_now() > r->deadline;
}

/* The per-request time limit applies unless the caller asks to wait
 * (POST /index "wait": true: the CLI, indexing a large tree). */
static void ingest_req_arm(ingest_req *r, sv_state *s, int wait)
{
	double tl = sv_options(s)->request_timeout;
	if (tl > 0 && !wait)
		r->deadline = sv_now() + tl;
	r->io.on_skip = ingest_skip;
	r->io.progress = ingest_progress;
	r->io.cb_ctx = r;
}

static json_t *ingest_stats_json(const fathom_ingest_stats *st, const ingest_req *r)
{
	json_t *sk = json_object();
	for (int i = 1; i < 16; i++)
		if (st->skipped_by_reason[i])
			json_object_set_new(sk, fathom_skip_reason_name(i),
			                    json_integer((json_int_t)st->skipped_by_reason[i]));
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:o}",
	                      "added", (json_int_t)st->docs_added,
	                      "chunks", (json_int_t)st->chunks_added,
	                      "files_seen", (json_int_t)st->files_seen,
	                      "files_indexed", (json_int_t)st->files_indexed,
	                      "files_unchanged", (json_int_t)st->files_unchanged,
	                      "files_deleted", (json_int_t)st->files_deleted,
	                      "files_skipped", (json_int_t)st->files_skipped,
	                      "files_grep_only", (json_int_t)st->files_grep_only,
	                      "bytes_read", (json_int_t)st->bytes_read,
	                      "invalid_utf8", (json_int_t)st->invalid_utf8,
	                      "seconds", st->elapsed_sec, "skipped", sk);
	if (o && r->nbad) {
		json_object_set_new(o, "bad_lines", json_integer((json_int_t)r->nbad));
		json_object_set_new(o, "first_bad", jstr(r->first_bad));
	}
	return o;
}

/* POST /documents: JSON lines, all or none (on_bad=skip: bad lines are
 * skipped and counted, the rest committed, as `fathom add` does). */
static json_t *do_add(sv_state *s, const char *qs, const char *body, size_t len, sv_err *e)
{
	if (!body || !len) {
		err_set(e, 400, "the body must hold JSON lines (one document per line)");
		return NULL;
	}
	ingest_req r;
	ingest_req_init(&r);
	json_t *out = NULL;
	if (ingest_opts_qs(&r, qs, e))
		goto done;
	fathom_index *w = writer(s, e);
	if (!w)
		goto done;
	ingest_req_arm(&r, s, 0);
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	int rc = fathom_add_jsonl_mem(w, body, len, "<request>", &r.io, &st);
	if (rc) {
		write_failed(s, w, rc, "adding documents", e);
		goto done;
	}
	if (r.nbad && !r.skip_bad) {
		fathom_rollback(w);
		sv_writer_unlock(s, 0);
		err_set(e, 400, "%zu bad line%s, nothing added; the first: %s", r.nbad,
		        r.nbad == 1 ? "" : "s", r.first_bad);
		goto done;
	}
	out = commit_done(s, w, ingest_stats_json(&st, &r), e);
done:
	ingest_req_free(&r);
	return out;
}

/* Is path (relative to the current folder, the index's root) inside root?
 * A path that does not exist is judged by its longest existing prefix:
 * what lies past a missing part cannot be opened either. */
static int inside_root(const char *root, const char *path)
{
	char rr[4096], pr[4096], tmp[4096];
	if (!realpath(root, rr))
		return 0;
	snprintf(tmp, sizeof tmp, "%s", path);
	while (!realpath(*tmp ? tmp : ".", pr)) {
		char *sl = strrchr(tmp, '/');
		if (!sl) {
			tmp[0] = '\0';
			continue;
		}
		*sl = '\0';
		if (sl == tmp) {
			snprintf(tmp, sizeof tmp, "/");
		}
	}
	size_t n = strlen(rr);
	if (strcmp(rr, "/") == 0)
		return 1;
	return strncmp(pr, rr, n) == 0 && (pr[n] == '\0' || pr[n] == '/');
}

/* POST /index {"paths": [...], "options": {...}, "wait": false}: what
 * `fathom index PATH...` does, on the daemon's writer. Relative paths are
 * relative to the index's root folder. Without a token guarding the
 * daemon, only paths inside that folder may be read. */
static json_t *do_index(sv_state *s, json_t *args, sv_err *e)
{
	static const char *const known[] = { "paths", "options", "wait", NULL };
	if (!json_is_object(args) || only_known(args, known, e)) {
		if (!e->status)
			err_set(e, 400, "the request must be a JSON object");
		return NULL;
	}
	json_t *pj = json_object_get(args, "paths");
	if (!json_is_array(pj) || json_array_size(pj) == 0 ||
	    json_array_size(pj) > SV_MAX_INDEX_PATHS) {
		err_set(e, 400, "\"paths\" must be an array of 1 to %d paths", SV_MAX_INDEX_PATHS);
		return NULL;
	}
	int wait = 0;
	if (arg_bool(args, "wait", &wait, e) < 0)
		return NULL;
	ingest_req r;
	ingest_req_init(&r);
	json_t *out = NULL;
	const char **paths = fathom_calloc(json_array_size(pj), sizeof *paths);
	if (!paths) {
		err_set(e, 500, "out of memory");
		return NULL;
	}
	size_t i;
	json_t *v;
	json_array_foreach(pj, i, v) {
		if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= 4096 ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			err_set(e, 400, "\"paths\" must be non-empty strings of under 4096 bytes");
			goto done;
		}
		paths[i] = json_string_value(v);
	}
	if (ingest_opts_json(&r, json_object_get(args, "options"), e))
		goto done;
	fathom_index *w = writer(s, e);
	if (!w)
		goto done;
	if (!sv_options(s)->any_path) {
		const char *root = fathom_root(w);
		for (i = 0; i < json_array_size(pj); i++) {
			if (!root || !*root || !inside_root(root, paths[i])) {
				sv_writer_unlock(s, 0);
				err_set(e, 403, "%.256s is outside the index's root folder %.256s (a daemon "
				                "started with --token-file may index any path)",
				        paths[i], root && *root ? root : "(none yet)");
				goto done;
			}
		}
	}
	ingest_req_arm(&r, s, wait);
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	int rc = fathom_index_paths(w, paths, json_array_size(pj), &r.io, &st);
	if (rc) {
		write_failed(s, w, rc, "indexing", e);
		goto done;
	}
	out = commit_done(s, w, ingest_stats_json(&st, &r), e);
done:
	fathom_free(paths);
	ingest_req_free(&r);
	return out;
}

/* POST /optimize: merge every segment into one (fathom optimize). */
static json_t *do_optimize(sv_state *s, sv_err *e)
{
	fathom_index *w = writer(s, e);
	if (!w)
		return NULL;
	fathom_stats before = FATHOM_STATS_INIT, after = FATHOM_STATS_INIT;
	int rc = fathom_stats_get(&before, w);
	if (!rc)
		rc = fathom_optimize(w);
	if (!rc)
		rc = fathom_stats_get(&after, w);
	if (rc)
		return write_failed(s, w, rc, "optimize", e);
	json_t *out = json_pack("{s:I,s:I,s:I,s:I,s:I}", "segments", (json_int_t)after.segments,
	                        "bytes", (json_int_t)after.bytes_total, "segments_before",
	                        (json_int_t)before.segments, "bytes_before",
	                        (json_int_t)before.bytes_total, "generation",
	                        (json_int_t)fathom_generation(w));
	sv_writer_unlock(s, 1);
	return out;
}

static json_t *do_delete(sv_state *s, const char *id, sv_err *e)
{
	fathom_index *w = writer(s, e);
	if (!w)
		return NULL;
	int rc = fathom_delete_doc(w, id);
	if (rc)
		return write_failed(s, w, rc, id, e);
	return commit_done(s, w, json_pack("{s:o}", "deleted", jstr(id)), e);
}

static json_t *do_stats(sv_state *s, sv_err *e)
{
	fathom_index *ix = reader(s, e);
	if (!ix)
		return NULL;
	fathom_stats st = FATHOM_STATS_INIT;
	int rc = fathom_stats_get(&st, ix);
	sv_reader_put(s, ix);
	if (rc) {
		err_api(e, rc, "stats");
		return NULL;
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:i,s:I,s:I,s:I,s:s,s:b}", "generation",
	                 (json_int_t)st.generation, "documents", (json_int_t)st.docs, "chunks",
	                 (json_int_t)st.chunks, "deleted_chunks", (json_int_t)st.deleted_chunks, "terms",
	                 (json_int_t)st.terms, "segments", (int)st.segments, "bytes",
	                 (json_int_t)st.bytes_total, "grep_files", (json_int_t)st.grep_files,
	                 "bytes_trigrams", (json_int_t)st.bytes_trigrams, "stem_language",
	                 st.stem_language, "writable", sv_writable(s));
}

static int is(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

/* GET /get?path=|id=&from=&count=, GET /documents/{id}?from=&count= */
static json_t *do_get_qs(sv_state *s, const char *qs, const char *doc_id, sv_err *e)
{
	int bad = 0;
	char *p = doc_id ? NULL : qs_get(qs, "path", &bad), *id = doc_id ? NULL : qs_get(qs, "id", &bad);
	json_t *from = qs_int(qs, "from", &bad), *count = qs_int(qs, "count", &bad), *res = NULL;
	if (bad)
		err_set(e, 400, "malformed query string (path, id, from, count)");
	else
		res = sv_do_get(s, doc_id ? doc_id : id, p, from, count, e);
	fathom_free(p);
	fathom_free(id);
	json_decref(from);
	json_decref(count);
	return res;
}

static json_t *do_glossary_get(sv_state *s, const char *qs, sv_err *e)
{
	int bad = 0;
	char *kind = qs_get(qs, "kind", &bad);
	json_t *res = NULL;
	if (bad)
		err_set(e, 400, "malformed query string (kind)");
	else
		res = sv_do_glossary_list(s, kind, e);
	fathom_free(kind);
	return res;
}

static json_t *do_vocab(sv_state *s, const char *qs, sv_err *e)
{
	int bad = 0;
	char *cat = qs_get(qs, "category", &bad), *prefix = qs_get(qs, "prefix", &bad);
	json_t *lim = qs_int(qs, "limit", &bad), *res = NULL;
	long long limit = lim ? json_integer_value(lim) : 100;
	fathom_index *ix = NULL;
	if (bad || limit < 1 || limit > 100000)
		err_set(e, 400, "malformed query string (category, prefix, limit 1..100000)");
	else if ((ix = reader(s, e)) != NULL) {
		vocab_acc a = { json_array(), (size_t)limit };
		int rc = fathom_vocab(ix, cat && *cat ? cat : NULL, prefix && *prefix ? prefix : NULL,
		                      vocab_cb, &a);
		sv_reader_put(s, ix);
		if (rc && rc != 1) {
			err_api(e, rc, "vocabulary");
			json_decref(a.items);
		} else {
			res = json_pack("{s:o}", "items", a.items);
		}
	}
	fathom_free(cat);
	fathom_free(prefix);
	json_decref(lim);
	return res;
}

static json_t *do_health(sv_state *s, sv_err *e)
{
	fathom_index *ix = sv_reader_get(s);
	if (!ix) {
		err_set(e, 503, "the index cannot be opened");
		return NULL;
	}
	json_t *res = json_pack("{s:s,s:I,s:b}", "status", "ok", "generation",
	                        (json_int_t)fathom_generation(ix), "writable", sv_writable(s));
	sv_reader_put(s, ix);
	return res;
}

void sv_reply_error(sv_reply *r, int status, const char *msg)
{
	sv_err e = { status, "" };
	snprintf(e.msg, sizeof e.msg, "%s", msg);
	reply_err(r, &e);
}

void sv_handle(sv_state *s, const char *method, const char *target, const char *body,
               size_t len, sv_reply *out)
{
	memset(out, 0, sizeof *out);
	out->endpoint = SV_EP_OTHER;
	sv_err e = { 0, "" };
	const char *q = strchr(target, '?');
	size_t pl = q ? (size_t)(q - target) : strlen(target);
	char *path = pct_decode(target, pl, 0);
	const char *qs = q ? q + 1 : "";
	int get = is(method, "GET") || is(method, "HEAD"), post = is(method, "POST"),
	    del = is(method, "DELETE");
	if (!path) {
		err_set(&e, 400, "malformed target (a bad %% escape or a NUL)");
		reply_err(out, &e);
		return;
	}
	/* POST bodies are JSON, except /documents (JSON lines) and /mcp */
	json_t *args = NULL, *res = NULL;
#define BODY() (args = parse_body(body, len, &e))
	int known = 1, allowed = 1, ep = SV_EP_OTHER;
	if (is(path, "/health")) {
		ep = SV_EP_HEALTH;
		if ((allowed = get))
			res = do_health(s, &e);
	} else if (is(path, "/stats")) {
		ep = SV_EP_STATS;
		if ((allowed = get))
			res = do_stats(s, &e);
	} else if (is(path, "/search")) {
		ep = SV_EP_SEARCH;
		if ((allowed = post) && BODY())
			res = sv_do_search(s, args, &e);
	} else if (is(path, "/grep")) {
		ep = SV_EP_GREP;
		if ((allowed = post) && BODY())
			res = sv_do_grep(s, args, &e);
	} else if (is(path, "/get")) {
		ep = SV_EP_GET;
		if ((allowed = get))
			res = do_get_qs(s, qs, NULL, &e);
	} else if (is(path, "/documents")) {
		ep = SV_EP_ADD;
		if ((allowed = post))
			res = do_add(s, qs, body, len, &e);
	} else if (strncmp(path, "/documents/", 11) == 0 && path[11]) {
		ep = get ? SV_EP_GET : SV_EP_DELETE;
		if (get)
			res = do_get_qs(s, qs, path + 11, &e);
		else if ((allowed = del))
			res = do_delete(s, path + 11, &e);
	} else if (is(path, "/glossary")) {
		ep = SV_EP_GLOSSARY;
		if (get)
			res = do_glossary_get(s, qs, &e);
		else if ((allowed = post) && BODY())
			res = do_glossary_post(s, args, &e);
	} else if (is(path, "/glossary/review")) {
		ep = SV_EP_GLOSSARY;
		if ((allowed = post) && BODY())
			res = sv_do_glossary_review(s, args, &e);
	} else if (is(path, "/index")) {
		ep = SV_EP_INDEX;
		if ((allowed = post) && BODY())
			res = do_index(s, args, &e);
	} else if (is(path, "/optimize")) {
		ep = SV_EP_OPTIMIZE;
		if ((allowed = post))
			res = do_optimize(s, &e);
	} else if (is(path, "/vocabulary")) {
		ep = SV_EP_VOCAB;
		if ((allowed = get))
			res = do_vocab(s, qs, &e);
	} else if (is(path, "/sources")) {
		ep = SV_EP_SOURCES;
		if ((allowed = get))
			res = sv_do_sources(s, &e);
	} else if (is(path, "/metrics") && get) {
		out->endpoint = SV_EP_METRICS;
		out->status = 200;
		out->ctype = "text/plain; version=0.0.4";
		out->body = sv_metrics_text(s, &out->len);
		fathom_free(path);
		if (!out->body)
			sv_reply_error(out, 500, "out of memory");
		return;
	} else if (is(path, "/mcp") && post) {
		/* a notification has no answer: 202 and no body */
		out->endpoint = SV_EP_MCP;
		out->body = sv_mcp_message(s, body ? body : "", len);
		out->status = out->body ? 200 : 202;
		out->ctype = "application/json";
		out->len = out->body ? strlen(out->body) : 0;
		fathom_free(path);
		return;
	} else if (is(path, "/metrics") || is(path, "/mcp")) {
		ep = is(path, "/mcp") ? SV_EP_MCP : SV_EP_METRICS;
		allowed = 0;
	} else {
		known = 0;
	}
#undef BODY
	out->endpoint = ep;
	if (!known)
		err_set(&e, 404, "no such endpoint: %.200s (docs/API.md lists them)", path);
	else if (!allowed)
		err_set(&e, 405, "%s is not allowed on %.200s", method, path);
	json_decref(args);
	reply_result(out, res, &e);
	fathom_free(path);
}
