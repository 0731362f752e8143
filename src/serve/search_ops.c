/*
 * search_ops.c — the operations that read: POST /search, POST /grep,
 * GET /get and /documents/{id}, GET /sources, /stats and /health (and the
 * MCP tools search, grep, get_full_content, list_sources). Search results
 * are the library's one serializer's (fathom_results_json), so the
 * daemon, the MCP tool and `fathom search --json` give the same objects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

#define SV_MAX_FILTERS 16
#define SV_MAX_PATHS 64
#define SV_LINE_TEXT 1024       /* bytes of a grep line returned */

/* ---- search -------------------------------------------------------------------- */

/* A request that leaves k or snippet_bytes out takes the index's setting
 * (the library fills it); the daemon still bounds one request's work, so
 * a setting above the daemon's cap is lowered to it. */
static uint32_t capped_setting(fathom_index *ix, const char *name, long long cap)
{
	char *v = NULL;
	long long n = 0;
	if (fathom_config_get(&v, NULL, ix, name) == 0)
		n = strtoll(v, NULL, 10);
	fathom_free(v);
	return n > cap ? (uint32_t)cap : 0;   /* 0 (or unset): the library's fill */
}

/* One search: args checked, the query run on a reader, and the results as
 * the library's one serializer writes them (*text, freed with fathom_free;
 * the same bytes as `fathom search --json`), with what only the daemon
 * knows: the generation searched and the time taken. 0, or -1 with e set.
 * "explain" is accepted and changes nothing: every result carries its
 * score_parts and matched terms. */
static int search_text(sv_state *s, json_t *args, sv_err *e, char **text, size_t *tlen,
                       uint64_t *generation, double *took_ms)
{
	*text = NULL;
	static const char *const known[] = { "query", "k", "mode", "filters", "path", "lang",
	                                     "explain", "snippet_bytes", "strict", "fusion",
	                                     "alpha", "query_vector", NULL };
	if (!json_is_object(args)) {
		sv_err_set(e, 400, "the request must be a JSON object");
		return -1;
	}
	if (sv_only_known(args, known, e))
		return -1;
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	const char *query = NULL, *mode = NULL, *path = NULL, *lang = NULL;
	long long k = so.k, snip = so.snippet_bytes, kmin, kmax, smin, smax, qmax;
	int explain = 0, strict = 0;
	sv_limit(FATHOM_LIMIT_K, SV_CAP_K, &kmin, &kmax);
	sv_limit(FATHOM_LIMIT_SNIPPET_BYTES, SV_CAP_SNIPPET, &smin, &smax);
	sv_limit(FATHOM_LIMIT_QUERY_BYTES, SV_CAP_QUERY, NULL, &qmax);
	if (sv_arg_str(args, "query", &query, (size_t)qmax, e) < 0 ||
	    sv_arg_int(args, "k", kmin, kmax, &k, e) < 0 || sv_arg_str(args, "mode", &mode, 16, e) < 0 ||
	    sv_arg_str(args, "path", &path, 1024, e) < 0 || sv_arg_str(args, "lang", &lang, 64, e) < 0 ||
	    sv_arg_bool(args, "explain", &explain, e) < 0 ||
	    sv_arg_bool(args, "strict", &strict, e) < 0 ||
	    sv_arg_int(args, "snippet_bytes", smin, smax, &snip, e) < 0)
		return -1;
	if (!query) {
		sv_err_set(e, 400, "\"query\" is required");
		return -1;
	}
	so.k = (uint32_t)k;
	so.strict = strict;
	so.snippet_bytes = (uint32_t)snip;
	so.time_limit = sv_options(s)->request_timeout;   /* 504 past it */
	so.path_glob = path;
	so.lang = lang;
	if (mode) {
		int rm = -1;
		for (int m = FATHOM_MODE_KEYWORD; m <= FATHOM_MODE_STRICT; m++)
			if (strcmp(mode, fathom_mode_name(m)) == 0)
				rm = m;
		if (strcmp(mode, "all") == 0)
			so.match = FATHOM_MATCH_ALL;
		else if (strcmp(mode, "any") == 0)
			so.match = FATHOM_MATCH_ANY;
		else if (strcmp(mode, "auto") == 0)
			so.match = FATHOM_MATCH_AUTO;
		else if (rm >= 0)
			so.mode = rm;
		else {
			sv_err_set(e, 400, "\"mode\" must be auto, all, any, keyword, semantic, hybrid or "
			                "strict");
			return -1;
		}
	}
	const char *fusion = NULL;
	if (sv_arg_str(args, "fusion", &fusion, 16, e) < 0)
		return -1;
	if (fusion) {
		for (int f = FATHOM_FUSION_RRF; f <= FATHOM_FUSION_RRF_WEIGHTED; f++)
			if (strcmp(fusion, fathom_fusion_name(f)) == 0)
				so.fusion = f;
		if (so.fusion == FATHOM_FUSION_DEFAULT) {
			sv_err_set(e, 400, "\"fusion\" must be rrf, convex or rrf-weighted");
			return -1;
		}
	}
	json_t *aj = json_object_get(args, "alpha");
	if (aj && !json_is_null(aj)) {
		double a = json_is_number(aj) ? json_number_value(aj) : -1;
		if (!(a >= 0 && a <= 1)) {
			sv_err_set(e, 400, "\"alpha\" must be a number from 0 to 1");
			return -1;
		}
		so.alpha = (float)a;
	}
	float qv[4096];
	json_t *vj = json_object_get(args, "query_vector");
	if (vj && !json_is_null(vj)) {
		size_t n = json_is_array(vj) ? json_array_size(vj) : 0;
		if (n == 0 || n > 4096) {
			sv_err_set(e, 400, "\"query_vector\" must be an array of 1 to 4096 numbers");
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			json_t *x = json_array_get(vj, i);
			if (!json_is_number(x)) {
				sv_err_set(e, 400, "\"query_vector\" must hold numbers only");
				return -1;
			}
			qv[i] = (float)json_number_value(x);
		}
		so.query_vector = qv;
		so.query_vector_dim = (uint32_t)n;
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
					sv_err_set(e, 400, "\"filters\" must map at most %d names to strings",
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
					sv_err_set(e, 400, "\"filters\" must be at most %d \"key=value\" strings",
					        SV_MAX_FILTERS);
					goto bad;
				}
				if (!(fbuf[nf] = sv_strdup(json_string_value(v))))
					goto bad;
				filters[nf] = fbuf[nf];
				nf++;
			}
		} else {
			sv_err_set(e, 400, "\"filters\" must be an object or an array");
			goto bad;
		}
	}
	so.filters = nf ? filters : NULL;
	so.n_filters = nf;
	fathom_index *ix = sv_reader(s, e);
	if (!ix)
		goto bad;
	if (so.k == 0 && (k = capped_setting(ix, "k", kmax)) != 0)
		so.k = (uint32_t)k;
	if (so.snippet_bytes == FATHOM_UNSET_SNIPPET &&
	    (snip = capped_setting(ix, "snippet-bytes", smax)) != 0)
		so.snippet_bytes = (uint32_t)snip;
	double t0 = sv_now();
	fathom_results *r = NULL;
	int rc = fathom_search(&r, ix, query, &so);
	*took_ms = (sv_now() - t0) * 1000;
	if (rc) {
		sv_err_api(e, rc, "search");
		sv_reader_put(s, ix);
		goto bad;
	}
	fathom_json_opts jo = FATHOM_JSON_OPTS_INIT;
	jo.query = query;
	rc = fathom_results_json(text, tlen, r, &jo);
	if (rc)
		sv_err_api(e, rc, "search");
	*generation = fathom_generation(ix);
	fathom_results_free(r);
	sv_reader_put(s, ix);
	if (rc)
		goto bad;
	for (size_t i = 0; i < nf; i++)
		fathom_free(fbuf[i]);
	return 0;
bad:
	for (size_t i = 0; i < nf; i++)
		fathom_free(fbuf[i]);
	if (!e->status)
		sv_err_set(e, 500, "out of memory");
	return -1;
}

/* The MCP tool's search: the serializer's object, read back, with the
 * daemon's members. */
json_t *sv_do_search(sv_state *s, json_t *args, sv_err *e)
{
	char *text;
	size_t len;
	uint64_t gen;
	double took;
	if (search_text(s, args, e, &text, &len, &gen, &took))
		return NULL;
	json_t *out = json_loadb(text, len, 0, NULL);
	fathom_free(text);
	if (!out) {
		sv_err_set(e, 500, "out of memory");
		return NULL;
	}
	json_object_set_new(out, "generation", json_integer((json_int_t)gen));
	json_object_set_new(out, "took_ms", json_real(took));
	return out;
}

/* POST /search: the serializer's text as it is, the daemon's members
 * spliced in before its closing brace; reading it back into a jansson tree
 * and writing it out again cost as much as the serializing itself. */
void sv_raw_search(sv_state *s, const sv_req *rq, sv_reply *out)
{
	sv_err e = { 0, "" };
	char *text;
	size_t len;
	uint64_t gen;
	double took;
	if (search_text(s, rq->args, &e, &text, &len, &gen, &took)) {
		sv_reply_err(out, &e);
		return;
	}
	char tail[96];
	int n = snprintf(tail, sizeof tail, ",\"generation\":%llu,\"took_ms\":%.3f}\n",
	                 (unsigned long long)gen, took);
	char *body = len && text[len - 1] == '}' ? fathom_malloc(len + (size_t)n) : NULL;
	if (body) {
		memcpy(body, text, len - 1);
		memcpy(body + len - 1, tail, (size_t)n + 1);
		out->status = 200;
		out->ctype = "application/json";
		out->body = body;
		out->len = len - 1 + (size_t)n;
	} else {
		sv_reply_error(out, 500, "out of memory");
	}
	fathom_free(text);
}

/* ---- grep ------------------------------------------------------------------------- */

int sv_path_has_base(fathom_index *ix, const char *path, sv_err *e)
{
	const char *root = fathom_root(ix);
	if (path[0] == '/' || (root && *root))
		return 0;
	sv_err_set(e, 400, "the path \"%.200s\" is relative, and the index has no root folder (it "
	           "was built from absolute paths) to resolve it against: give an absolute path", path);
	return -1;
}

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
	json_object_set_new(o, "path", sv_jstr(f->path));
	json_object_set_new(o, "id", sv_jstr(f->doc_id));
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
			json_object_set_new(lo, "text", sv_jstrn(f->text + l->start, cut ? SV_LINE_TEXT : n));
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
		sv_err_set(e, 400, "the request must be a JSON object");
		return NULL;
	}
	if (sv_only_known(args, known, e))
		return NULL;
	const char *pattern = NULL, *glob = NULL, *lang = NULL;
	int literal = 0, icase = 0, word = 0, files_only = 0, count_only = 0, boolean = 0;
	long long max_count = SV_GREP_COUNT, limit = SV_GREP_FILES;
	if (sv_arg_str(args, "pattern", &pattern, SV_CAP_QUERY, e) < 0 ||
	    sv_arg_bool(args, "literal", &literal, e) < 0 || sv_arg_bool(args, "ignore_case", &icase, e) < 0 ||
	    sv_arg_bool(args, "word", &word, e) < 0 || sv_arg_str(args, "glob", &glob, 1024, e) < 0 ||
	    sv_arg_str(args, "lang", &lang, 64, e) < 0 ||
	    sv_arg_int(args, "max_count", 0, SV_GREP_MAX_COUNT, &max_count, e) < 0 ||
	    sv_arg_bool(args, "files_only", &files_only, e) < 0 ||
	    sv_arg_bool(args, "count_only", &count_only, e) < 0 ||
	    sv_arg_bool(args, "boolean", &boolean, e) < 0 || sv_arg_int(args, "limit", 1, SV_GREP_MAX_FILES, &limit, e) < 0)
		return NULL;
	if (!pattern) {
		sv_err_set(e, 400, "\"pattern\" is required");
		return NULL;
	}
	const char *paths[SV_MAX_PATHS];
	size_t np = 0;
	json_t *pj = json_object_get(args, "paths");
	if (pj && !json_is_null(pj)) {
		size_t i;
		json_t *v;
		if (!json_is_array(pj) || json_array_size(pj) > SV_MAX_PATHS) {
			sv_err_set(e, 400, "\"paths\" must be an array of at most %d strings", SV_MAX_PATHS);
			return NULL;
		}
		json_array_foreach(pj, i, v) {
			if (!json_is_string(v) || json_string_length(v) > 4096 ||
			    strlen(json_string_value(v)) != json_string_length(v)) {
				sv_err_set(e, 400, "\"paths\" must be an array of strings");
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
	fathom_index *ix = sv_reader(s, e);
	if (!ix) {
		json_decref(a.files);
		return NULL;
	}
	for (size_t i = 0; i < np; i++) {
		if (sv_path_has_base(ix, paths[i], e)) {
			sv_reader_put(s, ix);
			json_decref(a.files);
			return NULL;
		}
	}
	fathom_grep_stats st = FATHOM_GREP_STATS_INIT;
	int rc = fathom_grep(ix, pattern, &go, grep_cb, &a, &st);
	sv_reader_put(s, ix);
	if (rc == FATHOM_EINTERRUPTED && a.truncated)
		rc = 0;
	if (rc) {
		json_decref(a.files);
		sv_err_api(e, rc, "grep");
		return NULL;
	}
	json_t *out = json_object();
	json_object_set_new(out, "pattern", sv_jstr(pattern));
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
		sv_err_set(e, 400, "an \"id\" or a \"path\" is required");
		return NULL;
	}
	long long f = 1, c = 0;
	if ((from && !json_is_null(from) &&
	     (!json_is_integer(from) || (f = json_integer_value(from)) < 1 || f > UINT32_MAX)) ||
	    (count && !json_is_null(count) &&
	     (!json_is_integer(count) || (c = json_integer_value(count)) < 0 || c > UINT32_MAX))) {
		sv_err_set(e, 400, "\"from\" must be a line number from 1, \"count\" a number of lines");
		return NULL;
	}
	fathom_index *ix = sv_reader(s, e);
	if (!ix)
		return NULL;
	if (key == path && sv_path_has_base(ix, path, e)) {
		sv_reader_put(s, ix);
		return NULL;
	}
	char *text = NULL;
	size_t len = 0;
	fathom_get_info info = FATHOM_GET_INFO_INIT;
	/* only what the index holds: an id or path is looked up, never opened */
	int rc = fathom_get_ex(&text, &len, ix, key, (uint32_t)f, (uint32_t)c, &info);
	sv_reader_put(s, ix);
	if (rc) {
		sv_err_api(e, rc, key);
		return NULL;
	}
	json_t *out = json_pack("{s:o,s:I}", "id", sv_jstr(key), "from", (json_int_t)f);
	/* the lines delivered, not those asked for */
	json_object_set_new(out, "count", json_integer((json_int_t)info.count));
	if (info.stale)
		json_object_set_new(out, "changed_since_indexing", json_true());
	json_object_set_new(out, "text", sv_jstrn(text, len));
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

/* metadata: {"library": {"fastapi": 12}, "lang": {"c": 3}}; a bounded
 * answer, the first 256 keys and 1000 values of each, and cut says when
 * something was left out. */
typedef struct meta_acc {
	json_t *m;
	int cut;
} meta_acc;

static int meta_cb(void *ctx, const char *key, const char *value, uint64_t docs)
{
	meta_acc *a = ctx;
	json_t *k = json_object_get(a->m, key);
	if (!k) {
		if (json_object_size(a->m) >= 256) {
			a->cut = 1;
			return 0;
		}
		json_object_set_new(a->m, key, k = json_object());
	}
	if (json_object_size(k) < 1000)
		json_object_set_new(k, value, json_integer((json_int_t)docs));
	else
		a->cut = 1;
	return 0;
}

json_t *sv_do_sources(sv_state *s, sv_err *e)
{
	fathom_index *ix = sv_reader(s, e);
	if (!ix)
		return NULL;
	src_acc a = { json_object(), 0, 0, 0 };
	meta_acc m = { json_object(), 0 };
	json_t *meta = m.m;
	int rc = fathom_list_docs(ix, src_cb, &a);
	if (!rc)
		rc = fathom_list_meta(ix, meta_cb, &m);
	const char *root = fathom_root(ix);
	json_t *out = NULL;
	if (rc) {
		sv_err_api(e, rc, "listing documents");
		json_decref(a.roots);
		json_decref(meta);
	} else {
		out = json_pack("{s:o,s:I,s:I,s:I,s:o,s:o}", "root", sv_jstr(root), "documents",
		                (json_int_t)a.docs, "chunks", (json_int_t)a.chunks, "bytes",
		                (json_int_t)a.bytes, "folders", a.roots, "metadata", meta);
		if (out && m.cut)
			json_object_set_new(out, "metadata_truncated", json_true());
	}
	sv_reader_put(s, ix);
	return out;
}

/* ---- the routes ---------------------------------------------------------------------- */

json_t *sv_op_grep(sv_state *s, const sv_req *rq, sv_err *e)
{
	return sv_do_grep(s, rq->args, e);
}

json_t *sv_op_sources(sv_state *s, const sv_req *rq, sv_err *e)
{
	(void)rq;
	return sv_do_sources(s, e);
}

json_t *sv_op_stats(sv_state *s, const sv_req *rq, sv_err *e)
{
	(void)rq;
	fathom_index *ix = sv_reader(s, e);
	if (!ix)
		return NULL;
	fathom_stats st = FATHOM_STATS_INIT;
	int rc = fathom_stats_get(&st, ix);
	sv_reader_put(s, ix);
	if (rc) {
		sv_err_api(e, rc, "stats");
		return NULL;
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:i,s:I,s:I,s:I,s:I,s:s,s:b}", "generation",
	                 (json_int_t)st.generation, "documents", (json_int_t)st.docs, "chunks",
	                 (json_int_t)st.chunks, "deleted_chunks", (json_int_t)st.deleted_chunks, "terms",
	                 (json_int_t)st.terms, "segments", (int)st.segments, "bytes",
	                 (json_int_t)st.bytes_total, "grep_files", (json_int_t)st.grep_files,
	                 "bytes_trigrams", (json_int_t)st.bytes_trigrams, "bytes_vectors",
	                 (json_int_t)st.bytes_vectors, "stem_language",
	                 st.stem_language, "writable", sv_writable(s));
}

/* GET /get?path=|id=&from=&count=, GET /documents/{id}?from=&count= */
json_t *sv_op_get(sv_state *s, const sv_req *rq, sv_err *e)
{
	const char *qs = rq->qs, *doc_id = rq->tail;
	int bad = 0;
	char *p = doc_id ? NULL : sv_qs_get(qs, "path", &bad), *id = doc_id ? NULL : sv_qs_get(qs, "id", &bad);
	json_t *from = sv_qs_int(qs, "from", &bad), *count = sv_qs_int(qs, "count", &bad), *res = NULL;
	if (bad)
		sv_err_set(e, 400, "malformed query string (path, id, from, count)");
	else
		res = sv_do_get(s, doc_id ? doc_id : id, p, from, count, e);
	fathom_free(p);
	fathom_free(id);
	json_decref(from);
	json_decref(count);
	return res;
}

json_t *sv_op_health(sv_state *s, const sv_req *rq, sv_err *e)
{
	(void)rq;
	fathom_index *ix = sv_reader_get(s);
	if (!ix) {
		sv_err_set(e, 503, "the index cannot be opened");
		return NULL;
	}
	json_t *res = json_pack("{s:s,s:I,s:b}", "status", "ok", "generation",
	                        (json_int_t)fathom_generation(ix), "writable", sv_writable(s));
	sv_reader_put(s, ix);
	return res;
}
