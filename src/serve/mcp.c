/*
 * mcp.c — the Model Context Protocol: JSON-RPC 2.0 messages (initialize,
 * ping, tools/list, tools/call) over stdio (`fathom mcp`, one message per
 * line) and over Streamable HTTP (POST /mcp on the daemon, one JSON
 * response per request). The tools call the same operations as the HTTP
 * API. A tool that fails answers a tool error (isError), never a crash;
 * a malformed message answers a JSON-RPC error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

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

/* ---- tool schemas ----------------------------------------------------------------- */

static json_t *prop(const char *type, const char *desc)
{
	return json_pack("{s:s,s:s}", "type", type, "description", desc);
}

/* An integer property bounded as the operation bounds it (what, then
 * "(LO to HI, default D)" and any note), never a copy of the numbers. */
static json_t *prop_range(const char *what, long long lo, long long hi, long long dflt,
                          const char *note)
{
	char desc[256];
	snprintf(desc, sizeof desc, "%s (%lld to %lld, default %lld%s).", what, lo, hi, dflt, note);
	return json_pack("{s:s,s:s,s:I,s:I}", "type", "integer", "description", desc, "minimum",
	                 (json_int_t)lo, "maximum", (json_int_t)hi);
}

static json_t *tool(const char *name, const char *title, const char *desc, json_t *props,
                    const char *required, int read_only)
{
	json_t *schema = json_pack("{s:s,s:o,s:b}", "type", "object", "properties", props,
	                           "additionalProperties", 0);
	if (required) {
		json_t *req = json_array();
		char buf[128];
		snprintf(buf, sizeof buf, "%s", required);
		for (char *p = strtok(buf, ","); p; p = strtok(NULL, ","))
			json_array_append_new(req, json_string(p));
		json_object_set_new(schema, "required", req);
	}
	return json_pack("{s:s,s:s,s:s,s:o,s:{s:b,s:b}}", "name", name, "title", title, "description",
	                 desc, "inputSchema", schema, "annotations", "readOnlyHint", read_only,
	                 "openWorldHint", 0);
}

static json_t *tools_list(void)
{
	json_t *t = json_array();
	json_t *p = json_object();
	json_object_set_new(p, "query", prop("string",
		"What to find. Words are all required; \"a phrase\" exactly; a OR b; -word excludes; "
		"(a OR b) c groups; title:word or path:word limits a field; library:NAME and "
		"version:V filter metadata. Identifiers such as TC-1001 or AuthService match exactly."));
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	long long kmin, kmax;   /* the library's k, lowered to the daemon's cap */
	sv_limit(FATHOM_LIMIT_K, SV_CAP_K, &kmin, &kmax);
	json_object_set_new(p, "k", prop_range("How many results", kmin, kmax, so.k, ""));
	json_object_set_new(p, "mode", prop("string",
		"auto (default: short queries need every word, long ones rank any), all, or any."));
	json_object_set_new(p, "filters", prop("object",
		"Metadata that must match exactly, e.g. {\"library\": \"fastapi\", \"version\": \"0.110\"}."));
	json_object_set_new(p, "path", prop("string", "Only paths matching this glob, e.g. \"docs/*.md\"."));
	json_object_set_new(p, "lang", prop("string", "Only source files of this language: c, python, ..."));
	json_array_append_new(t, tool("search", "Search documents and code",
		"Full-text search (BM25F) over the index. Each result has the document id and path, the "
		"matching lines, a score, a snippet, and the chunk id; pass the id or path with a line "
		"range to get_full_content to read more. An empty answer says why nothing matched.",
		p, "query", 1));

	p = json_object();
	json_object_set_new(p, "id", prop("string", "A document id (the \"id\" of a search result)."));
	json_object_set_new(p, "path", prop("string", "Or a document path as the index has it."));
	json_object_set_new(p, "from", prop("integer", "First line, from 1 (default 1)."));
	json_object_set_new(p, "count", prop("integer", "Number of lines (default: to the end)."));
	json_array_append_new(t, tool("get_full_content", "Read a document",
		"The text of an indexed document, whole or a range of its lines. Only documents in the "
		"index can be read.", p, NULL, 1));

	p = json_object();
	json_object_set_new(p, "pattern", prop("string",
		"A PCRE2 regex (or a literal string with literal: true), matched line by line."));
	json_object_set_new(p, "literal", prop("boolean", "The pattern is a plain string."));
	json_object_set_new(p, "ignore_case", prop("boolean", "Ignore case."));
	json_object_set_new(p, "word", prop("boolean", "Whole words only."));
	json_object_set_new(p, "paths", prop("array", "Only files under these folders or paths."));
	json_object_set_new(p, "glob", prop("string", "Only paths (or file names) matching this glob."));
	json_object_set_new(p, "lang", prop("string", "Only files of this language."));
	json_object_set_new(p, "max_count", prop_range("Lines per file", 0, SV_GREP_MAX_COUNT,
	                                               SV_GREP_COUNT, "; 0: all"));
	json_object_set_new(p, "limit", prop_range("Files at most", 1, SV_GREP_MAX_FILES,
	                                           SV_GREP_FILES, ""));
	json_object_set_new(p, "files_only", prop("boolean", "Only the paths of matching files."));
	json_object_set_new(p, "boolean", prop("boolean",
		"The pattern is a boolean query: error AND handler, lock OR mutex, -test, file:\\.c$, lang:go."));
	json_array_append_new(t, tool("grep", "Grep the indexed files",
		"Exact strings and regular expressions over whole files, like ripgrep, fast through a "
		"trigram index, always on the files as they are on disk now. Returns path, line number "
		"and text of each matching line.", p, "pattern", 1));

	json_array_append_new(t, tool("list_sources", "List what is indexed",
		"The index's root folder, its documents and chunks, its top-level folders with "
		"their document counts, and the metadata the documents carry (library, version, "
		"system, lang, ...: each value with its document count). Those values are what "
		"search's filters and library:X version:Y in a query select on.",
		json_object(), NULL, 1));
	json_array_append_new(t, tool("glossary_pending", "Glossary candidates to review",
		"Alias groups proposed from the corpus (acronyms and spelling variants) waiting for a "
		"decision, with their evidence. Approve or reject them with glossary_review.",
		json_object(), NULL, 1));
	p = json_object();
	json_object_set_new(p, "candidate", prop("integer", "The candidate's id from glossary_pending."));
	json_object_set_new(p, "decision", prop("string", "approve or reject."));
	json_array_append_new(t, tool("glossary_review", "Approve or reject a glossary candidate",
		"An approved candidate becomes an alias group that expands queries (auth = "
		"authentication); a rejected one is never proposed again.", p, "candidate,decision", 0));
	return t;
}

/* ---- tool results as text -------------------------------------------------------- */

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

/* What an agent reads: compact text; the JSON goes in structuredContent. */
static char *render(const char *name, json_t *r)
{
	char *b = NULL;
	size_t n = 0, cap = 0;
	if (strcmp(name, "search") == 0) {
		json_t *hits = json_object_get(r, "results");
		size_t i;
		json_t *h;
		if (json_array_size(hits) == 0)
			text_add(&b, &n, &cap, "no results: %s\n", sget(r, "why"));
		json_array_foreach(hits, i, h) {
			json_t *lines = json_object_get(h, "lines");
			text_add(&b, &n, &cap, "%zu. %s (lines %lld-%lld, score %.3f) id=%s\n", i + 1,
			         *sget(h, "path") ? sget(h, "path") : sget(h, "id"),
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
		if (json_array_size(files) == 0)
			text_add(&b, &n, &cap, "no matching lines\n");
		json_array_foreach(files, i, f) {
			json_t *lines = json_object_get(f, "lines");
			if (!lines)
				text_add(&b, &n, &cap, "%s\n", sget(f, "path"));
			json_array_foreach(lines, j, l)
				text_add(&b, &n, &cap, "%s:%lld:%s\n", sget(f, "path"),
				         json_integer_value(json_object_get(l, "line")), sget(l, "text"));
		}
		if (json_is_true(json_object_get(r, "truncated")))
			text_add(&b, &n, &cap, "(more files match: raise limit or narrow the pattern)\n");
	} else if (strcmp(name, "get_full_content") == 0) {
		text_add(&b, &n, &cap, "%s", sget(r, "text"));
	}
	if (!b) {
		b = json_dumps(r, JSON_INDENT(1));
		if (!b)
			b = sv_strdup("");
	}
	return b;
}

static json_t *call_tool(sv_state *s, const char *name, json_t *args, sv_err *e, int *known)
{
	*known = 1;
	if (strcmp(name, "search") == 0)
		return sv_do_search(s, args, e);
	if (strcmp(name, "grep") == 0)
		return sv_do_grep(s, args, e);
	if (strcmp(name, "get_full_content") == 0) {
		json_t *id = json_object_get(args, "id"), *path = json_object_get(args, "path");
		if ((id && !json_is_string(id)) || (path && !json_is_string(path))) {
			snprintf(e->msg, sizeof e->msg, "\"id\" and \"path\" must be strings");
			e->status = 400;
			return NULL;
		}
		return sv_do_get(s, json_string_value(id), json_string_value(path),
		                 json_object_get(args, "from"), json_object_get(args, "count"), e);
	}
	if (strcmp(name, "list_sources") == 0)
		return sv_do_sources(s, e);
	if (strcmp(name, "glossary_pending") == 0)
		return sv_do_glossary_list(s, "pending", e);
	if (strcmp(name, "glossary_review") == 0)
		return sv_do_glossary_review(s, args, e);
	*known = 0;
	return NULL;
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

char *sv_mcp_message(sv_state *s, const char *msg, size_t len)
{
	json_error_t je;
	json_t *m = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &je);
	if (!m) {
		char buf[256];
		snprintf(buf, sizeof buf, "Parse error: %s (line %d, column %d)", je.text, je.line, je.column);
		return rpc_error(NULL, -32700, buf);
	}
	char *out = NULL;
	json_t *id = json_object_get(m, "id");
	json_t *method = json_object_get(m, "method");
	json_t *params = json_object_get(m, "params");
	if (!json_is_object(m) || !json_is_string(json_object_get(m, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0") != 0 ||
	    (id && !json_is_string(id) && !json_is_integer(id)) ||
	    (params && !json_is_object(params))) {
		if (json_is_object(m) && !method && id)
			out = NULL;   /* a response to us: we sent no request; ignore it */
		else
			out = rpc_error(json_is_string(id) || json_is_integer(id) ? id : NULL, -32600,
			                "Invalid Request: a JSON-RPC 2.0 object with a method (batches "
			                "are not accepted)");
		json_decref(m);
		return out;
	}
	if (!json_is_string(method)) {
		out = id ? rpc_error(id, -32600, "Invalid Request: no method") : NULL;
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
		out = rpc_result(id, json_pack("{s:o}", "tools", tools_list()));
	} else if (strcmp(name, "tools/call") == 0) {
		json_t *tn = json_object_get(params, "name"), *args = json_object_get(params, "arguments");
		if (!json_is_string(tn)) {
			out = rpc_error(id, -32602, "Invalid params: tools/call needs a tool name");
		} else if (args && !json_is_object(args)) {
			out = rpc_error(id, -32602, "Invalid params: arguments must be an object");
		} else {
			json_t *a = args ? json_incref(args) : json_object();
			sv_err e = { 0, "" };
			int known = 1;
			json_t *r = call_tool(s, json_string_value(tn), a, &e, &known);
			json_decref(a);
			if (!known) {
				char buf[200];
				snprintf(buf, sizeof buf, "Unknown tool: %.100s", json_string_value(tn));
				out = rpc_error(id, -32602, buf);
			} else if (!r) {
				/* a tool error: the agent reads it and may try again */
				out = rpc_result(id, json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text",
				                               "text", e.msg[0] ? e.msg : "internal error",
				                               "isError", 1));
			} else {
				char *text = render(json_string_value(tn), r);
				json_t *content = json_pack("[{s:s,s:s}]", "type", "text", "text", text ? text : "");
				if (!content) /* invalid UTF-8 cannot happen: jstrn repaired it */
					content = json_pack("[{s:s,s:s}]", "type", "text", "text", "");
				out = rpc_result(id, json_pack("{s:o,s:o,s:b}", "content", content,
				                               "structuredContent", r, "isError", 0));
				fathom_free(text);
			}
		}
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

static void write_line(char *msg)
{
	if (!msg)
		return;
	fputs(msg, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	fathom_free(msg);
}

int sv_mcp_stdio(sv_state *s)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		if ((size_t)n > sv_options(s)->max_body)
			write_line(rpc_error(NULL, -32600, "Invalid Request: message too large"));
		else
			write_line(sv_mcp_message(s, line, (size_t)n));
	}
	free(line);   /* getline's, from libc */
	return 0;
}
