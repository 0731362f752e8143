/*
 * mcp_int.h — what the files of the MCP server share:
 *   mcp.c         JSON-RPC 2.0: the methods, the stdio and HTTP transports
 *   mcp_schema.c  the tools as docs/openapi.json declares them ("x-mcp-tools",
 *                 built into the binary): the list, and the arguments of a
 *                 call checked against the tool's input schema
 *   mcp_reply.c   a tool's result as the client gets it: the text an agent
 *                 reads and the JSON (structuredContent), both within the
 *                 reply's byte budget, cut into pages (offset) when larger
 */
#ifndef FATHOM_MCP_INT_H
#define FATHOM_MCP_INT_H

#include "serve/serve_int.h"

/* The reply budget when none is set, and the least that may be set: one
 * grep line (1 KiB of text, escaped in both the text and the JSON) fits. */
#define SV_MCP_REPLY_DEFAULT (256u << 10)
#define SV_MCP_REPLY_MIN (16u << 10)

/* ---- mcp_schema.c ----------------------------------------------------------------- */

/* The tools/list array (a new reference; NULL when out of memory); with
 * read_only, only the tools that write nothing. */
json_t *sv_mcp_tools(int read_only);
/* Is name a tool of the list (read_only as above)? */
int sv_mcp_tool_known(const char *name, int read_only);
/* args against the tool's input schema: 0, or -1 with e set (400) naming
 * the argument and what is wrong with it. */
int sv_mcp_check_args(const char *name, json_t *args, sv_err *e);

/* ---- mcp_reply.c ------------------------------------------------------------------ */

/* The result object of a successful call (content, structuredContent,
 * isError) for tool's answer r (borrowed), from offset (the "offset"
 * argument, 0 when absent) within room bytes of JSON: cut to fit, with
 * reply_truncated and next_offset, when larger. NULL with e set when not
 * even one item fits, or out of memory. */
json_t *sv_mcp_tool_result(const char *tool, json_t *r, size_t offset, size_t room, sv_err *e);

#endif /* FATHOM_MCP_INT_H */
