/*
 * serve.h — the search daemon and the MCP server. A client of the public
 * API like the CLI: it includes fathom.h and nothing else of the library,
 * so nothing here sees how the index is laid out.
 *
 *   state.c         the shared state: read-only handles, one per request
 *                   in flight, moved to each new commit; the one writer
 *   router.c        the JSON API's entry, sv_handle(): (method, target,
 *                   body) -> (status, JSON) through a table of routes, with
 *                   no HTTP in it, so the MCP tools and the fuzz target call
 *                   it as the daemon does
 *   query_string.c  percent-decoding, query-string members
 *   json.c          errors, replies, typed request members, request handles
 *   search_ops.c    search, grep, get, sources, stats, health (search
 *                   results through the library's fathom_results_json)
 *   ingest_ops.c    documents, index, optimize, delete; the ingest options
 *   glossary_ops.c  the glossary and the identifier vocabulary
 *   mcp.c           JSON-RPC 2.0 for the Model Context Protocol (stdio, /mcp);
 *                   mcp_schema.c its tools' schemas (docs/openapi.json's),
 *                   mcp_reply.c its replies within the byte budget
 *   metrics.c       counters and latency histograms, Prometheus text
 *   http.c          libmicrohttpd: limits, slow clients, token, Host/Origin
 *                   and Content-Type checks, signals
 *   watch.c         inotify: re-index what changed (index --watch, serve --watch)
 *
 * This header is what the CLI uses (fathom serve, fathom mcp, index
 * --watch); serve_int.h is what the files above share.
 * docs/API.md describes the API; docs/openapi.json is its schema.
 *
 * Memory comes from the library's allocator (fathom_malloc, fathom_free;
 * jansson too, from sv_open on), so allocation-failure tests reach the
 * daemon as they reach the library.
 */
#ifndef FATHOM_SERVE_H
#define FATHOM_SERVE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "fathom.h"

/* The note after the path of a file changed on disk since it was indexed
 * (JSON's changed_since_indexing), in the MCP tools' text and the fathom
 * command's human output alike. */
#define SV_STALE_NOTE "(changed since indexing)"

/* Length of the valid UTF-8 character at s[0..n) (no overlong forms, no
 * surrogates, nothing past U+10FFFF), 0 when there is none
 * (query_string.c; the CLI's names in human output use it too). */
size_t sv_utf8_char(const unsigned char *s, size_t n);

/* strdup through the library's allocator: freed with fathom_free. */
static inline char *sv_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = fathom_malloc(n);
	return d ? memcpy(d, s, n) : NULL;
}

/* ---- shared state (state.c) ------------------------------------------------ */

typedef struct sv_state sv_state;

typedef struct sv_opts {
	const char *index;          /* the index folder */
	int read_only;              /* never take the writer lock */
	int lazy_writer;            /* take the writer lock per write, not for good
	                             * (fathom mcp: other writers can go on) */
	size_t max_body;            /* bytes; larger requests get 413 */
	double request_timeout;     /* seconds a grep or an ingest may run */
	int any_path;               /* POST /index may read paths outside the
	                             * index's root folder (set when a token
	                             * guards the daemon) */
	size_t max_reply;           /* bytes of one MCP reply (0: 256 KiB) */
	int confine;                /* read from disk (grep, get) nothing whose
	                             * real path lies outside the index's root
	                             * (FATHOM_OPEN_CONFINE: fathom serve without
	                             * a token) */
} sv_opts;

/* Open the index: a writer unless read_only or another process holds the
 * lock (then read-only, and *why says so). */
int sv_open(sv_state **out, const sv_opts *o, char *why, size_t why_len);
void sv_close(sv_state *s);
const sv_opts *sv_options(const sv_state *s);
int sv_writable(const sv_state *s);
const char *sv_index_dir(const sv_state *s);

/* A read-only handle on the newest commit, for one request. */
fathom_index *sv_reader_get(sv_state *s);
void sv_reader_put(sv_state *s, fathom_index *ix);

/* The writer, locked for one request (NULL: read-only: 503). */
fathom_index *sv_writer_lock(sv_state *s);
/* Unlock; committed = 1 after a commit (new readers see it). */
void sv_writer_unlock(sv_state *s, int committed);

double sv_now(void);              /* seconds, monotonic */
double sv_started(const sv_state *s);
double sv_last_commit(const sv_state *s);   /* unix time; 0: none since start */

/* ---- the JSON API (router.c, *_ops.c) ------------------------------------------ */

typedef struct sv_reply {
	int status;                  /* HTTP status */
	char *body;                  /* fathom_malloc'd */
	size_t len;
	const char *ctype;           /* static */
	int endpoint;                /* sv_endpoint, for metrics */
} sv_reply;

enum sv_endpoint {
	SV_EP_SEARCH, SV_EP_GREP, SV_EP_GET, SV_EP_ADD, SV_EP_DELETE, SV_EP_GLOSSARY,
	SV_EP_VOCAB, SV_EP_SOURCES, SV_EP_STATS, SV_EP_HEALTH, SV_EP_METRICS, SV_EP_MCP,
	SV_EP_INDEX, SV_EP_OPTIMIZE, SV_EP_OTHER, SV_NEP
};
const char *sv_endpoint_name(int ep);

/* One request. target is the path and query string as sent
 * ("/get?path=a.md&from=3"); body may be NULL. Never fails: errors are
 * replies ({"error":{"code","message"}} with a 4xx/5xx status). */
void sv_handle(sv_state *s, const char *method, const char *target, const char *body,
               size_t len, sv_reply *out);
void sv_reply_free(sv_reply *r);
/* An error reply ({"error":{"code","message"}}) with this status. */
void sv_reply_error(sv_reply *r, int status, const char *msg);

/* The operations behind the endpoints and the MCP tools: args in, a JSON
 * result or an error (status and message) out. */
typedef struct sv_err {
	int status;
	char msg[512];
} sv_err;

json_t *sv_do_search(sv_state *s, json_t *args, sv_err *e);
json_t *sv_do_grep(sv_state *s, json_t *args, sv_err *e);
json_t *sv_do_get(sv_state *s, const char *id, const char *path, json_t *from, json_t *count,
                  sv_err *e);
json_t *sv_do_sources(sv_state *s, sv_err *e);
json_t *sv_do_glossary_list(sv_state *s, const char *kind, sv_err *e);
json_t *sv_do_glossary_review(sv_state *s, json_t *args, sv_err *e);

/* ---- MCP (mcp.c) -------------------------------------------------------------- */

#define SV_MCP_PROTOCOL "2025-06-18"

/* One JSON-RPC message in; the response (JSON text, freed with fathom_free), or NULL for a
 * notification, which has none. */
char *sv_mcp_message(sv_state *s, const char *msg, size_t len);
/* The stdio transport: one message per line until EOF. s may be NULL (the
 * index could not be opened): the handshake is answered, and every tool
 * call is a tool error saying why; o gives the options then. */
int sv_mcp_stdio(sv_state *s, const sv_opts *o, const char *why);
/* Is v (an MCP-Protocol-Version header) a version this server speaks? */
int sv_mcp_version_ok(const char *v);

/* ---- metrics (metrics.c) ------------------------------------------------------ */

void sv_metrics_record(int endpoint, int status, double seconds);
/* Watch mode: folders watched (turns the watch metrics on), and each batch. */
void sv_metrics_watch_folders(size_t n);
void sv_metrics_watch(double delay, size_t events, int ok);
/* Prometheus text exposition; freed with fathom_free. */
char *sv_metrics_text(sv_state *s, size_t *len);

/* ---- watch mode (watch.c) ------------------------------------------------------ */

typedef struct sv_watch sv_watch;

typedef struct sv_watch_opts {
	double debounce;             /* seconds of quiet before a batch is applied (0.2) */
	double max_wait;             /* a batch waits at most this long (2) */
	int (*apply)(void *ctx, size_t events);   /* re-index and commit: 0 on success */
	void (*done)(void *ctx, size_t events, double delay, int rc);   /* may be NULL */
	void *ctx;
} sv_watch_opts;

/* Watch the folders under paths (files: their folder), never index_dir. */
int sv_watch_open(sv_watch **out, const char *const *paths, size_t n, const char *index_dir,
                  char *err, size_t errlen);
/* Apply batches until *stop; returns 0, or -1 if inotify failed. */
int sv_watch_run(sv_watch *w, const sv_watch_opts *o, _Atomic int *stop);
size_t sv_watch_folders(const sv_watch *w);
/* One batch on a writer: index paths again (only what changed is read) and
 * commit when something changed (*committed), else roll back. */
int sv_watch_reindex(fathom_index *w, const char *const *paths, size_t n,
                     const fathom_ingest_opts *io, fathom_ingest_stats *st, int *committed);
void sv_watch_close(sv_watch *w);

/* fathom serve --watch: a thread re-indexing paths (relative to the
 * index's root, the daemon's folder) on the daemon's writer. */
int sv_serve_watch_start(sv_state *s, const char *const *paths, size_t n, double debounce,
                         int quiet, char *err, size_t errlen);
void sv_serve_watch_stop(void);

/* ---- the daemon (http.c) -------------------------------------------------------- */

typedef struct sv_http_opts {
	const char *listen;          /* "127.0.0.1:7700" */
	const char *token_file;      /* bearer token, or NULL */
	const char *const *allow_hosts; /* more Host/Origin names to accept */
	size_t n_allow_hosts;
	unsigned max_connections;
	unsigned header_limit;       /* bytes of request headers */
	unsigned idle_timeout;       /* seconds a slow client may stall */
	int quiet;
	const char *const *cors_origins; /* origins ("http://host:port") a browser
	                              * client may call from (CORS) */
	size_t n_cors_origins;
	double head_timeout;         /* seconds a request head may take in all
	                              * (0: 10) */
} sv_http_opts;

/* Serve until SIGTERM or SIGINT; then finish what is in flight and close. */
int sv_http_run(sv_state *s, const sv_http_opts *o);

#endif /* FATHOM_SERVE_H */
