/*
 * mcp.c — the Model Context Protocol: JSON-RPC 2.0 messages (initialize,
 * ping, tools/list, tools/call) over stdio (`fathom mcp`, one message per
 * line) and over Streamable HTTP (POST /mcp on the daemon, one JSON
 * response per request). The tools call the same operations as the HTTP
 * API; their schemas are docs/openapi.json's (mcp_schema.c) and their
 * replies fit a byte budget (mcp_reply.c). A tool that fails answers a
 * tool error (isError), never a crash; a malformed message answers a
 * JSON-RPC error. Without an index (fathom mcp --index /missing) the
 * server still answers the handshake, and every tool says why it cannot
 * work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/mcp_int.h"

/* Protocol versions we speak; the first is ours. */
static const char *const versions[] = { SV_MCP_PROTOCOL, "2025-03-26", "2024-11-05", NULL };

static const char instructions[] =
	"fathom searches the documentation and code of this index, and says why each result "
	"matched. Use `search` first: words are all required by default, \"quoted phrases\" "
	"match exactly, OR between words means either, -word excludes, parentheses group, and "
	"field:word limits a word to path, title, headings, tags or body. Exact identifiers "
	"(TC-1001, v2.0.1, AuthService, handle_login()) are hard filters. Use `grep` for exact "
	"strings and regexes over whole files (line by line, like ripgrep). Read more with "
	"`get_full_content` by the id or path a result gives, with a line range.";

/* Where the messages go: the index (NULL when it could not be opened, and
 * why says so), the options (the budget, read-only). */
typedef struct mcp_ctx {
	sv_state *s;
	const sv_opts *o;
	const char *why;
} mcp_ctx;

static json_t *call_tool(sv_state *s, const char *name, json_t *args, sv_err *e)
{
	if (strcmp(name, "search") == 0)
		return sv_do_search(s, args, e);
	if (strcmp(name, "grep") == 0)
		return sv_do_grep(s, args, e);
	if (strcmp(name, "get_full_content") == 0)
		return sv_do_get(s, json_string_value(json_object_get(args, "id")),
		                 json_string_value(json_object_get(args, "path")),
		                 json_object_get(args, "from"), json_object_get(args, "count"), e);
	if (strcmp(name, "list_sources") == 0)
		return sv_do_sources(s, e);
	if (strcmp(name, "glossary_pending") == 0)
		return sv_do_glossary_list(s, "pending", e);
	return sv_do_glossary_review(s, args, e);   /* the last of the list */
}

/* ---- JSON-RPC ------------------------------------------------------------------------ */

static char *rpc_dump(json_t *msg)
{
	char *t = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	return t;
}

static char *rpc_error(json_t *id, int code, const char *message)
{
	return rpc_dump(json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
	                          id ? id : json_null(), "error", "code", code, "message", message));
}

static char *rpc_result(json_t *id, json_t *result)
{
	return rpc_dump(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

static json_t *tool_error(const char *msg)
{
	return json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text", msg, "isError", 1);
}

/* tools/call: the arguments checked against the tool's schema, the
 * operation, and its answer within the budget (what the envelope around
 * the result takes counts too). */
static char *tools_call(const mcp_ctx *c, json_t *id, json_t *params)
{
	json_t *tn = json_object_get(params, "name"), *args = json_object_get(params, "arguments");
	if (!json_is_string(tn))
		return rpc_error(id, -32602, "Invalid params: tools/call needs a tool name");
	if (args && !json_is_object(args))
		return rpc_error(id, -32602, "Invalid params: arguments must be an object");
	const char *name = json_string_value(tn);
	if (!sv_mcp_tool_known(name, c->o->read_only)) {
		char buf[200];
		snprintf(buf, sizeof buf, "Unknown tool: %.100s", name);
		return rpc_error(id, -32602, buf);
	}
	if (!c->s)   /* no index: the reason, as a tool error the agent can read */
		return rpc_result(id, tool_error(c->why));
	sv_err e = { 0, "" };
	json_t *a = args ? json_copy(args) : json_object();
	json_t *res = NULL, *r = NULL;
	if (a && !sv_mcp_check_args(name, a, &e)) {
		/* offset is the page's, not the operation's */
		json_int_t off = json_integer_value(json_object_get(a, "offset"));
		json_object_del(a, "offset");
		r = call_tool(c->s, name, a, &e);
		size_t max = c->o->max_reply ? c->o->max_reply : SV_MCP_REPLY_DEFAULT;
		/* the envelope rpc_result writes around the result */
		static const char env[] = "{\"jsonrpc\":\"2.0\",\"id\":,\"result\":}";
		size_t used = sizeof env - 1 + json_dumpb(id, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
		if (r && used < max)
			res = sv_mcp_tool_result(name, r, (size_t)off, max - used, &e);
	} else if (!a) {
		sv_err_set(&e, 500, "out of memory");
	}
	json_decref(a);
	json_decref(r);
	if (!res)   /* a tool error: the agent reads it and may try again */
		res = tool_error(e.msg[0] ? e.msg : "internal error");
	return rpc_result(id, res);
}

/* One message; *bad set when it is no JSON-RPC message at all (a parse
 * error, an invalid request with no id): HTTP answers 400. */
static char *message(const mcp_ctx *c, const char *msg, size_t len, int *bad)
{
	*bad = 0;
	json_error_t je;
	json_t *m = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &je);
	if (!m) {
		char buf[256];
		snprintf(buf, sizeof buf, "Parse error: %s (line %d, column %d)", je.text, je.line, je.column);
		*bad = 1;
		return rpc_error(NULL, -32700, buf);
	}
	char *out = NULL;
	json_t *id = json_object_get(m, "id");
	json_t *method = json_object_get(m, "method");
	json_t *params = json_object_get(m, "params");
	int id_ok = json_is_string(id) || json_is_integer(id);
	if (json_is_object(m) && !method && id &&
	    (json_object_get(m, "result") || json_object_get(m, "error"))) {
		/* a response (to a request we never send): accepted, no answer */
		json_decref(m);
		return NULL;
	}
	if (!json_is_object(m) || !json_is_string(json_object_get(m, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0") != 0 ||
	    (id && !id_ok) || (params && !json_is_object(params)) || !json_is_string(method)) {
		*bad = !id_ok;
		out = rpc_error(id_ok ? id : NULL, -32600,
		                "Invalid Request: a JSON-RPC 2.0 object with a method (batches are "
		                "not accepted)");
		json_decref(m);
		return out;
	}
	const char *name = json_string_value(method);
	if (!id) {
		/* a notification (notifications/initialized, cancelled...): no answer */
		json_decref(m);
		return NULL;
	}
	if (strcmp(name, "initialize") == 0) {
		const char *want = json_string_value(json_object_get(params, "protocolVersion"));
		const char *ver = versions[0];
		for (size_t i = 0; want && versions[i]; i++)
			if (strcmp(want, versions[i]) == 0)
				ver = versions[i];
		out = rpc_result(id, json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}", "protocolVersion",
		                               ver, "capabilities", "tools", "listChanged", 0,
		                               "serverInfo", "name", "fathom", "title", "fathom search",
		                               "version", FATHOM_VERSION_STRING, "instructions",
		                               instructions));
	} else if (strcmp(name, "ping") == 0) {
		out = rpc_result(id, json_object());
	} else if (strcmp(name, "tools/list") == 0) {
		json_t *tools = sv_mcp_tools(c->o->read_only);
		out = tools ? rpc_result(id, json_pack("{s:o}", "tools", tools)) : NULL;
	} else if (strcmp(name, "tools/call") == 0) {
		out = tools_call(c, id, params);
	} else {
		char buf[200];
		snprintf(buf, sizeof buf, "Method not found: %.100s", name);
		out = rpc_error(id, -32601, buf);
	}
	json_decref(m);
	if (!out)
		out = sv_strdup("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
		             "\"message\":\"Internal error\"}}");
	return out;
}

char *sv_mcp_message(sv_state *s, const char *msg, size_t len)
{
	mcp_ctx c = { s, sv_options(s), NULL };
	int bad;
	return message(&c, msg, len, &bad);
}

/* POST /mcp: a request is answered (200), a notification or a response
 * accepted with 202 and no body, what is no JSON-RPC message refused with
 * 400 (and the JSON-RPC error). */
void sv_raw_mcp(sv_state *s, const sv_req *rq, sv_reply *out)
{
	mcp_ctx c = { s, sv_options(s), NULL };
	int bad;
	out->body = message(&c, rq->body ? rq->body : "", rq->len, &bad);
	out->status = !out->body ? 202 : bad ? 400 : 200;
	out->ctype = "application/json";
	if (!out->body)
		out->body = sv_strdup("");   /* 202: an empty body, never a NULL one */
	out->len = out->body ? strlen(out->body) : 0;
	if (!out->body)
		sv_reply_error(out, 500, "out of memory");
}

int sv_mcp_version_ok(const char *v)
{
	for (size_t i = 0; versions[i]; i++)
		if (strcmp(v, versions[i]) == 0)
			return 1;
	return 0;
}

static void write_line(char *msg)
{
	if (!msg)
		return;
	fputs(msg, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	fathom_free(msg);
}

int sv_mcp_stdio(sv_state *s, const sv_opts *o, const char *why)
{
	mcp_ctx c = { s, s ? sv_options(s) : o, why ? why : "the index is not open" };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int bad;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		if ((size_t)n > c.o->max_body)
			write_line(rpc_error(NULL, -32600, "Invalid Request: message too large"));
		else
			write_line(message(&c, line, (size_t)n, &bad));
	}
	free(line);   /* getline's, from libc */
	return 0;
}
