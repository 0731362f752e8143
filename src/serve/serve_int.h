/*
 * serve_int.h — what the files of the JSON API share. Only src/serve
 * includes it; the CLI sees serve.h.
 *
 * A request goes through four kinds of file:
 *   router.c        the table of routes: (method, path) -> an operation;
 *                   404 and 405; the POST body parsed as JSON when the
 *                   route takes JSON
 *   query_string.c  percent-decoding and the members of a query string
 *   json.c          errors (status and message), replies, typed members of
 *                   a request object, the reader and writer of a request
 *   *_ops.c         the operations, one subsystem each: search_ops.c
 *                   (search, grep, get, sources, stats, health),
 *                   ingest_ops.c (documents, index, optimize, delete and
 *                   the ingest options), glossary_ops.c (glossary and
 *                   identifier vocabulary)
 */
#ifndef FATHOM_SERVE_INT_H
#define FATHOM_SERVE_INT_H

#include "serve/serve.h"

/* ---- one request, as the router hands it to an operation ------------------- */

typedef struct sv_req {
	const char *method;
	const char *qs;          /* the query string ("" for none), undecoded */
	const char *tail;        /* what follows a prefix route ("/documents/{id}") */
	const char *body;        /* may be NULL */
	size_t len;
	json_t *args;            /* the body as JSON, for routes that take JSON */
} sv_req;

/* An operation: a JSON result, or NULL with e set; the router replies. */
typedef json_t *(*sv_op)(sv_state *s, const sv_req *rq, sv_err *e);
/* One that writes its reply itself (a body that is no jansson tree). */
typedef void (*sv_raw)(sv_state *s, const sv_req *rq, sv_reply *out);

/* ---- limits ------------------------------------------------------------------ */

/* Where the daemon bounds one request's work more tightly than the library
 * does (fathom_limit): a network client gets at most this much. */
#define SV_CAP_K 1000            /* results per search */
#define SV_CAP_QUERY 4096        /* bytes of a query or a grep pattern */
#define SV_CAP_SNIPPET 4096      /* snippet_bytes */
/* grep's own: the library bounds neither */
#define SV_GREP_COUNT 20         /* lines per file, by default (0: all) */
#define SV_GREP_MAX_COUNT 100000
#define SV_GREP_FILES 100        /* files returned, by default */
#define SV_GREP_MAX_FILES 10000

/* The range the daemon accepts for a FATHOM_LIMIT_*: the library's bounds,
 * the maximum lowered to cap (0: no cap of its own). lo or hi may be NULL. */
void sv_limit(int which, long long cap, long long *lo, long long *hi);

/* ---- errors, replies and request members (json.c) ---------------------------- */

void sv_err_set(sv_err *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A relative path is relative to the index's root folder, where the
 * daemon works. An index with no root recorded (built from absolute paths)
 * gives it no base: the folder the daemon happened to start in would
 * decide which files it names, so such a path is refused (400; the MCP
 * tools' error). 0 when path may be used. */
int sv_path_has_base(fathom_index *ix, const char *path, sv_err *e);
/* An API error code as an HTTP status, the message from fathom_errmsg(). */
void sv_err_api(sv_err *e, int rc, const char *what);

/* A JSON string of n bytes; invalid UTF-8 becomes U+FFFD. */
json_t *sv_jstrn(const char *s, size_t n);
json_t *sv_jstr(const char *s);

/* Members of args, typed. 0 absent, 1 present and good, -1 wrong (e set). */
int sv_arg_str(json_t *args, const char *name, const char **out, size_t max, sv_err *e);
int sv_arg_int(json_t *args, const char *name, long long lo, long long hi, long long *out,
               sv_err *e);
int sv_arg_bool(json_t *args, const char *name, int *out, sv_err *e);
/* Refuse members not in known (NULL-terminated). */
int sv_only_known(json_t *args, const char *const *known, sv_err *e);
/* A request body as a JSON value (400 when it is not one). */
json_t *sv_parse_body(const char *body, size_t len, sv_err *e);

void sv_reply_json(sv_reply *r, int status, json_t *j);   /* steals j */
void sv_reply_err(sv_reply *r, const sv_err *e);
void sv_reply_result(sv_reply *r, json_t *j, const sv_err *e);

/* A read-only handle for this request; NULL with e set. */
fathom_index *sv_reader(sv_state *s, sv_err *e);
/* The writer for one write (NULL with e set: read-only here), then either
 * sv_commit_done (commit, "generation" added to out) or sv_write_failed
 * (roll back); both unlock it. */
fathom_index *sv_writer(sv_state *s, sv_err *e);
json_t *sv_commit_done(sv_state *s, fathom_index *w, json_t *out, sv_err *e);
json_t *sv_write_failed(sv_state *s, fathom_index *w, int rc, const char *what, sv_err *e);

/* ---- query strings (query_string.c) ------------------------------------------ */

/* Percent-decode [p, p+n) ('+' as space when plus); NULL when it holds a
 * NUL or a bad escape. fathom_malloc'd. */
char *sv_pct_decode(const char *p, size_t n, int plus);
/* The value of key (decoded, fathom_malloc'd); NULL if absent; *bad set when
 * present but malformed. */
char *sv_qs_get(const char *qs, const char *key, int *bad);
/* A number as a JSON integer (NULL when absent; *bad when not a number). */
json_t *sv_qs_int(const char *qs, const char *key, int *bad);
/* A request's decoded path and its query string (undecoded): 0 when every
 * part decodes to valid UTF-8; else -1 and a 400 naming the part. */
int sv_check_target(const char *path, const char *qs, sv_err *e);
/* Is s[0..n) valid UTF-8? */
int sv_utf8_valid(const char *s, size_t n);
/* The bytes of s to print in at most max (for "%.*s"), not cutting a
 * character in two. */
int sv_utf8_cut(const char *s, size_t max);

/* ---- the operations behind the routes ------------------------------------------ */

/* search_ops.c */
void sv_raw_search(sv_state *s, const sv_req *rq, sv_reply *out);
json_t *sv_op_grep(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_get(sv_state *s, const sv_req *rq, sv_err *e);   /* ?path=|id=, or the tail */
json_t *sv_op_sources(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_stats(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_health(sv_state *s, const sv_req *rq, sv_err *e);
/* ingest_ops.c */
json_t *sv_op_add(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_index(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_optimize(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_delete(sv_state *s, const sv_req *rq, sv_err *e);
/* mcp.c: POST /mcp */
void sv_raw_mcp(sv_state *s, const sv_req *rq, sv_reply *out);
/* glossary_ops.c */
json_t *sv_op_glossary_get(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_glossary_post(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_glossary_review(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_vocab(sv_state *s, const sv_req *rq, sv_err *e);
/* config_ops.c */
json_t *sv_op_config_get(sv_state *s, const sv_req *rq, sv_err *e);
json_t *sv_op_config_post(sv_state *s, const sv_req *rq, sv_err *e);

#endif /* FATHOM_SERVE_INT_H */
