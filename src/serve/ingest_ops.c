/*
 * ingest_ops.c — the writes that change documents: POST /documents (JSON
 * lines), POST /index (what `fathom index PATH...` does, on the daemon's
 * writer), POST /optimize, DELETE /documents/{id}; and the ingest options
 * a request may give, by the CLI's names (a table of fathom_ingest_opts
 * members, bounded by the library's published limits). Each write is one
 * commit: what a caller sees acknowledged is durable.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

#define SV_META_ROOM 256     /* room for the library's FATHOM_LIMIT_META */
#define SV_MAX_INDEX_PATHS 4096

/* ---- the ingest options of a request ---------------------------------------------- */

/* The ingest options of a request, by the CLI's names spelled with _
 * (chunk_target for --chunk-target). Values are strings: from the query
 * string of POST /documents, or JSON scalars of POST /index "options". */
typedef struct ingest_req {
	fathom_ingest_opts io;
	const char *meta[SV_META_ROOM];
	char *owned[SV_META_ROOM + 32];  /* decoded query-string values */
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
 * uint64_t, by size) or a boolean (int). A number's bounds are the
 * library's (limit, from fathom_limit) where it publishes them. */
#define IO_MEMBER(m) offsetof(fathom_ingest_opts, m), sizeof(((fathom_ingest_opts *)0)->m)
static int ingest_opt(ingest_req *r, const char *name, const char *v, int for_index, sv_err *e)
{
	static const struct {
		const char *name;
		char kind;          /* n: number, b: boolean */
		int limit;          /* FATHOM_LIMIT_*, or 0: lo and hi */
		uint64_t lo, hi;
		int index_only;
		size_t off, size;
	} opts[] = {
		{ "max_size", 'n', 0, 1, UINT64_MAX, 1, IO_MEMBER(max_file_size) },
		{ "grep_max_size", 'n', 0, 0, UINT64_MAX, 1, IO_MEMBER(grep_max_file_size) },
		{ "grep_only", 'b', 0, 0, 1, 1, IO_MEMBER(grep_only) },
		{ "gitignore", 'b', 0, 0, 1, 1, IO_MEMBER(use_gitignore) },
		{ "follow_symlinks", 'b', 0, 0, 1, 1, IO_MEMBER(follow_symlinks) },
		{ "remove_missing", 'b', 0, 0, 1, 1, IO_MEMBER(remove_missing) },
		{ "chunk_target", 'n', FATHOM_LIMIT_CHUNK_TARGET, 0, 0, 0, IO_MEMBER(chunk_target) },
		{ "chunk_overlap", 'n', FATHOM_LIMIT_CHUNK_OVERLAP, 0, 0, 0, IO_MEMBER(chunk_overlap) },
		{ "chunk_max", 'n', FATHOM_LIMIT_CHUNK_MAX, 0, 0, 0, IO_MEMBER(chunk_max) },
		{ "ident_min_len", 'n', FATHOM_LIMIT_IDENT_MIN_LEN, 0, 0, 0, IO_MEMBER(ident_min_len) },
		{ "ident_max", 'n', FATHOM_LIMIT_IDENT_MAX, 0, 0, 0, IO_MEMBER(ident_max) },
	};
	if (strcmp(name, "meta") == 0) {
		long long nmax, bmax;
		sv_limit(FATHOM_LIMIT_META, SV_META_ROOM, NULL, &nmax);
		sv_limit(FATHOM_LIMIT_META_BYTES, 0, NULL, &bmax);
		if (!strchr(v, '=') || v[0] == '=' || strlen(v) > (size_t)bmax) {
			sv_err_set(e, 400, "\"meta\" wants key=value strings of at most %lld bytes, got "
			           "\"%.64s\"", bmax, v);
			return -1;
		}
		if (r->io.n_meta >= (size_t)nmax) {
			sv_err_set(e, 400, "at most %lld meta values", nmax);
			return -1;
		}
		r->meta[r->io.n_meta++] = v;
		return 0;
	}
	if (!for_index && strcmp(name, "on_bad") == 0) {
		if (strcmp(v, "skip") && strcmp(v, "fail")) {
			sv_err_set(e, 400, "\"on_bad\" is skip or fail");
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
		uint64_t x = 0, lo = opts[i].lo, hi = opts[i].hi;
		int b = 0;
		if (opts[i].limit) {
			long long llo, lhi;
			sv_limit(opts[i].limit, 0, &llo, &lhi);
			lo = (uint64_t)llo;
			hi = (uint64_t)lhi;
		}
		if (opts[i].kind == 'b' ? parse_bools(v, &b) : parse_u64s(v, lo, hi, &x)) {
			if (opts[i].kind == 'b')
				sv_err_set(e, 400, "\"%s\" must be true or false", name);
			else
				sv_err_set(e, 400, "\"%s\" must be an integer from %llu to %llu", name,
				           (unsigned long long)lo, (unsigned long long)hi);
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
	sv_err_set(e, 400, "unknown %s option \"%.64s\" (docs/API.md lists them)",
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
				sv_err_set(e, 400, "too many query parameters");
				return -1;
			}
			char *k = sv_pct_decode(p, nl, 1);
			if (k)
				r->owned[r->n_owned++] = k;
			char *v = eq ? sv_pct_decode(eq + 1, n - nl - 1, 1) : sv_strdup("");
			if (v)
				r->owned[r->n_owned++] = v;
			if (!k || !v) {
				sv_err_set(e, 400, "malformed query string (a bad %% escape or a NUL)");
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
		sv_err_set(e, 400, "\"options\" must be an object");
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
						sv_err_set(e, 400, "\"meta\" wants key=value strings");
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
					sv_err_set(e, 400, "\"meta\" must map names to strings");
					return -1;
				}
				size_t n = strlen(mk) + json_string_length(m) + 2;
				char *kv = fathom_malloc(n);
				if (!kv) {
					sv_err_set(e, 500, "out of memory");
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
			sv_err_set(e, 400, "option \"%.64s\" must be a number, a boolean or a string", key);
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
		json_object_set_new(o, "first_bad", sv_jstr(r->first_bad));
	}
	return o;
}

/* ---- the writes -------------------------------------------------------------------- */

/* POST /documents: JSON lines, all or none (on_bad=skip: bad lines are
 * skipped and counted, the rest committed, as `fathom add` does). */
json_t *sv_op_add(sv_state *s, const sv_req *rq, sv_err *e)
{
	const char *qs = rq->qs, *body = rq->body;
	size_t len = rq->len;
	if (!body || !len) {
		sv_err_set(e, 400, "the body must hold JSON lines (one document per line)");
		return NULL;
	}
	ingest_req r;
	ingest_req_init(&r);
	json_t *out = NULL;
	if (ingest_opts_qs(&r, qs, e))
		goto done;
	fathom_index *w = sv_writer(s, e);
	if (!w)
		goto done;
	ingest_req_arm(&r, s, 0);
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	int rc = fathom_add_jsonl_mem(w, body, len, "<request>", &r.io, &st);
	if (rc) {
		sv_write_failed(s, w, rc, "adding documents", e);
		goto done;
	}
	if (r.nbad && !r.skip_bad) {
		fathom_rollback(w);
		sv_writer_unlock(s, 0);
		sv_err_set(e, 400, "%zu bad line%s, nothing added; the first: %s", r.nbad,
		        r.nbad == 1 ? "" : "s", r.first_bad);
		goto done;
	}
	out = sv_commit_done(s, w, ingest_stats_json(&st, &r), e);
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
 * daemon, only paths inside that folder may be read: a path named outside
 * it is refused (403), and a file or folder the walk reaches through a
 * link is skipped when its real path lies outside (confine_root). */
json_t *sv_op_index(sv_state *s, const sv_req *rq, sv_err *e)
{
	json_t *args = rq->args;
	static const char *const known[] = { "paths", "options", "wait", NULL };
	if (!json_is_object(args) || sv_only_known(args, known, e)) {
		if (!e->status)
			sv_err_set(e, 400, "the request must be a JSON object");
		return NULL;
	}
	json_t *pj = json_object_get(args, "paths");
	if (!json_is_array(pj) || json_array_size(pj) == 0 ||
	    json_array_size(pj) > SV_MAX_INDEX_PATHS) {
		sv_err_set(e, 400, "\"paths\" must be an array of 1 to %d paths", SV_MAX_INDEX_PATHS);
		return NULL;
	}
	int wait = 0;
	if (sv_arg_bool(args, "wait", &wait, e) < 0)
		return NULL;
	ingest_req r;
	ingest_req_init(&r);
	json_t *out = NULL;
	const char **paths = fathom_calloc(json_array_size(pj), sizeof *paths);
	if (!paths) {
		sv_err_set(e, 500, "out of memory");
		return NULL;
	}
	size_t i;
	json_t *v;
	json_array_foreach(pj, i, v) {
		if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= 4096 ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			sv_err_set(e, 400, "\"paths\" must be non-empty strings of under 4096 bytes");
			goto done;
		}
		paths[i] = json_string_value(v);
	}
	if (ingest_opts_json(&r, json_object_get(args, "options"), e))
		goto done;
	fathom_index *w = sv_writer(s, e);
	if (!w)
		goto done;
	for (i = 0; i < json_array_size(pj); i++) {
		if (sv_path_has_base(w, paths[i], e)) {
			sv_writer_unlock(s, 0);
			goto done;
		}
	}
	if (!sv_options(s)->any_path) {
		const char *root = fathom_root(w);
		for (i = 0; i < json_array_size(pj); i++) {
			if (!root || !*root || !inside_root(root, paths[i])) {
				sv_writer_unlock(s, 0);
				sv_err_set(e, 403, "%.256s is outside the index's root folder %.256s (a daemon "
				                "started with --token-file may index any path)",
				        paths[i], root && *root ? root : "(none yet)");
				goto done;
			}
		}
	}
	/* Nor may a link in the tree lead the walk out of it. */
	if (!sv_options(s)->any_path)
		r.io.confine_root = fathom_root(w);
	ingest_req_arm(&r, s, wait);
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	int rc = fathom_index_paths(w, paths, json_array_size(pj), &r.io, &st);
	if (rc) {
		sv_write_failed(s, w, rc, "indexing", e);
		goto done;
	}
	out = sv_commit_done(s, w, ingest_stats_json(&st, &r), e);
done:
	fathom_free(paths);
	ingest_req_free(&r);
	return out;
}

/* POST /optimize: merge every segment into one (fathom optimize). */
json_t *sv_op_optimize(sv_state *s, const sv_req *rq, sv_err *e)
{
	(void)rq;
	fathom_index *w = sv_writer(s, e);
	if (!w)
		return NULL;
	fathom_stats before = FATHOM_STATS_INIT, after = FATHOM_STATS_INIT;
	int rc = fathom_stats_get(&before, w);
	if (!rc)
		rc = fathom_optimize(w);
	if (!rc)
		rc = fathom_stats_get(&after, w);
	if (rc)
		return sv_write_failed(s, w, rc, "optimize", e);
	json_t *out = json_pack("{s:I,s:I,s:I,s:I,s:I}", "segments", (json_int_t)after.segments,
	                        "bytes", (json_int_t)after.bytes_total, "segments_before",
	                        (json_int_t)before.segments, "bytes_before",
	                        (json_int_t)before.bytes_total, "generation",
	                        (json_int_t)fathom_generation(w));
	sv_writer_unlock(s, 1);
	return out;
}

/* DELETE /documents/{id} */
json_t *sv_op_delete(sv_state *s, const sv_req *rq, sv_err *e)
{
	const char *id = rq->tail;
	fathom_index *w = sv_writer(s, e);
	if (!w)
		return NULL;
	int rc = fathom_delete_doc(w, id);
	if (rc)
		return sv_write_failed(s, w, rc, id, e);
	return sv_commit_done(s, w, json_pack("{s:o}", "deleted", sv_jstr(id)), e);
}
