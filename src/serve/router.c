/*
 * router.c — the JSON API's front door, with no HTTP in it: a method, a
 * target (path and query string) and a body in; a status and a body out.
 * The daemon, the MCP transport over HTTP and the fuzz target all come
 * through sv_handle(). One table says which operation answers which
 * (method, path); a path it knows with a method it does not is 405, a
 * path it does not know 404.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

enum { M_GET = 1, M_POST = 2, M_DELETE = 4 };   /* HEAD is answered as GET */

static void raw_metrics(sv_state *s, const sv_req *rq, sv_reply *out)
{
	(void)rq;
	out->status = 200;
	out->ctype = "text/plain; version=0.0.4";
	out->body = sv_metrics_text(s, &out->len);
	if (!out->body)
		sv_reply_error(out, 500, "out of memory");
}

static const struct route {
	const char *path;       /* exact; one ending in '/' is a prefix with a non-empty tail */
	unsigned method;
	int endpoint;           /* sv_endpoint, for metrics */
	int json_body;          /* the body parsed as JSON into rq->args first */
	sv_op op;               /* or */
	sv_raw raw;
} routes[] = {
	{ "/health", M_GET, SV_EP_HEALTH, 0, sv_op_health, NULL },
	{ "/stats", M_GET, SV_EP_STATS, 0, sv_op_stats, NULL },
	{ "/search", M_POST, SV_EP_SEARCH, 1, NULL, sv_raw_search },
	{ "/grep", M_POST, SV_EP_GREP, 1, sv_op_grep, NULL },
	{ "/get", M_GET, SV_EP_GET, 0, sv_op_get, NULL },
	{ "/documents", M_POST, SV_EP_ADD, 0, sv_op_add, NULL },   /* JSON lines */
	{ "/documents/", M_GET, SV_EP_GET, 0, sv_op_get, NULL },
	{ "/documents/", M_DELETE, SV_EP_DELETE, 0, sv_op_delete, NULL },
	{ "/glossary", M_GET, SV_EP_GLOSSARY, 0, sv_op_glossary_get, NULL },
	{ "/glossary", M_POST, SV_EP_GLOSSARY, 1, sv_op_glossary_post, NULL },
	{ "/glossary/review", M_POST, SV_EP_GLOSSARY, 1, sv_op_glossary_review, NULL },
	{ "/index", M_POST, SV_EP_INDEX, 1, sv_op_index, NULL },
	{ "/config", M_GET, SV_EP_OTHER, 0, sv_op_config_get, NULL },
	{ "/config", M_POST, SV_EP_OTHER, 1, sv_op_config_post, NULL },
	{ "/optimize", M_POST, SV_EP_OPTIMIZE, 0, sv_op_optimize, NULL },
	{ "/vocabulary", M_GET, SV_EP_VOCAB, 0, sv_op_vocab, NULL },
	{ "/sources", M_GET, SV_EP_SOURCES, 0, sv_op_sources, NULL },
	{ "/metrics", M_GET, SV_EP_METRICS, 0, NULL, raw_metrics },
	{ "/mcp", M_POST, SV_EP_MCP, 0, NULL, sv_raw_mcp },
};

const char *sv_endpoint_name(int ep)
{
	static const char *const names[SV_NEP] = { "search", "grep", "get", "documents_add",
	                                           "documents_delete", "glossary", "vocabulary",
	                                           "sources", "stats", "health", "metrics", "mcp",
	                                           "index", "optimize", "other" };
	return ep >= 0 && ep < SV_NEP ? names[ep] : "other";
}

/* Does path match the route's? Sets *tail for a prefix route. */
static int path_matches(const char *rpath, const char *path, const char **tail)
{
	size_t n = strlen(rpath);
	*tail = NULL;
	if (n && rpath[n - 1] == '/') {
		if (strncmp(path, rpath, n) != 0 || !path[n])
			return 0;
		*tail = path + n;
		return 1;
	}
	return strcmp(path, rpath) == 0;
}

static unsigned method_bit(const char *m)
{
	return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0 ? M_GET
	     : strcmp(m, "POST") == 0 ? M_POST : strcmp(m, "DELETE") == 0 ? M_DELETE : 0;
}

void sv_handle(sv_state *s, const char *method, const char *target, const char *body,
               size_t len, sv_reply *out)
{
	memset(out, 0, sizeof *out);
	out->endpoint = SV_EP_OTHER;
	sv_err e = { 0, "" };
	const char *q = strchr(target, '?');
	size_t pl = q ? (size_t)(q - target) : strlen(target);
	char *path = sv_pct_decode(target, pl, 0);
	if (!path) {
		sv_err_set(&e, 400, "malformed target (a bad %% escape or a NUL)");
		sv_reply_err(out, &e);
		return;
	}
	sv_req rq = { method, q ? q + 1 : "", NULL, body, len, NULL };
	if (sv_check_target(path, rq.qs, &e)) {
		sv_reply_err(out, &e);
		fathom_free(path);
		return;
	}
	unsigned m = method_bit(method);
	const struct route *hit = NULL;
	int known = 0;
	for (size_t i = 0; i < sizeof routes / sizeof routes[0] && !hit; i++) {
		const char *tail;
		if (!path_matches(routes[i].path, path, &tail))
			continue;
		known = 1;
		out->endpoint = routes[i].endpoint;   /* a 405 counts as the path's last route */
		if (routes[i].method & m) {
			hit = &routes[i];
			rq.tail = tail;
		}
	}
	json_t *res = NULL;
	int replied = 0;
	if (!known)
		sv_err_set(&e, 404, "no such endpoint: %.*s (docs/API.md lists them)",
		           sv_utf8_cut(path, 200), path);
	else if (!hit)
		sv_err_set(&e, 405, "%.*s is not allowed on %.*s", sv_utf8_cut(method, 32), method,
		           sv_utf8_cut(path, 200), path);
	else if (!hit->json_body || (rq.args = sv_parse_body(body, len, &e)) != NULL) {
		if (hit->raw) {
			int ep = out->endpoint;
			hit->raw(s, &rq, out);
			out->endpoint = ep;
			replied = 1;
		} else {
			res = hit->op(s, &rq, &e);
		}
	}
	json_decref(rq.args);
	if (!replied)
		sv_reply_result(out, res, &e);
	fathom_free(path);
}
