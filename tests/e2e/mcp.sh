#!/usr/bin/env bash
# fathom mcp: a scripted MCP client session over stdio. initialize, the
# initialized notification, ping, tools/list, a call of every tool, bad
# arguments (tool errors, not crashes), unknown tools and methods, and
# malformed messages (JSON-RPC errors), answered in order, one per line.
source "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skip: no jq"; exit 77; }
R=$T/tree
mkdir -p "$R/docs"
printf '# Sessions\n\nThe login service validates session tokens.\nTC-1001 covers an expired token.\n' > "$R/docs/auth.md"
printf 'Transport Layer Security (TLS) protects the wire.\nUse TLS for every login.\n' > "$R/docs/tls.md"
(cd "$R" && "$F" index -q --index "$T/ix" . && "$F" glossary --index "$T/ix" propose > /dev/null)
cand=$("$F" glossary --index "$T/ix" --json pending | jq -r '.id' | head -1)
"$F" mcp --index "$T/ix" > "$T/out" 2> "$T/err" <<MSG
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"ping"}
{"jsonrpc":"2.0","id":3,"method":"tools/list"}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":{"query":"session tokens","k":3}}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_full_content","arguments":{"path":"docs/auth.md","from":3,"count":1}}}
{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"TC-\\\\d+"}}}
{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_sources","arguments":{}}}
{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"glossary_pending"}}
{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"glossary_review","arguments":{"candidate":${cand:-1},"decision":"approve"}}}
{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"search","arguments":{"k":3}}}
{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"a(b"}}}
{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_full_content","arguments":{"path":"/etc/passwd"}}}
{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}
{"jsonrpc":"2.0","id":14,"method":"resources/list"}
{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"search","arguments":{"query":"x","bogus":1}}}
{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"search","arguments":"not an object"}}
this is not json
[{"jsonrpc":"2.0","id":17,"method":"ping"}]
{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"search","arguments":{"query":"TLS"}}}
{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"search","arguments":{"query":"session (tokens"}}}
{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"search","arguments":{"query":"session (tokens","strict":true}}}
MSG
rc=$?
[ $rc -eq 0 ] && ok || fail "fathom mcp exit $rc: $(cat "$T/err")"
[ "$(wc -l < "$T/out")" = 21 ] && ok || fail "$(wc -l < "$T/out") answers, want 21 (one per request, none for the notification)"
jq -e . "$T/out" > /dev/null 2>&1 && ok || fail "an answer is not JSON"
a() { jq -c "select(.id == $1)" "$T/out"; }   # the answer to request id
check() { # ID JQ_TEST what
	if a "$1" | jq -e "$2" > /dev/null 2>&1; then ok; else fail "$3: $(a "$1" | head -c 300)"; fi
}
check 1 '.result.protocolVersion == "2025-06-18" and .result.capabilities.tools != null and .result.serverInfo.name == "fathom"' "initialize"
check 2 '.result == {}' "ping"
check 3 '[.result.tools[].name] == ["search","get_full_content","grep","list_sources","glossary_pending","glossary_review"]' "tools/list"
check 3 '[.result.tools[] | .inputSchema.type == "object" and (.description | length) > 40] | all' "tool schemas and descriptions"
check 4 '.result.isError == false and .result.structuredContent.results[0].path == "docs/auth.md" and (.result.content[0].text | test("docs/auth.md"))' "search tool"
check 5 '.result.content[0].text == "The login service validates session tokens.\n"' "get_full_content tool"
check 6 '.result.isError == false and (.result.content[0].text | test("docs/auth.md:4:TC-1001"))' "grep tool"
check 7 '.result.structuredContent.documents == 2' "list_sources tool"
check 8 '.result.isError == false and (.result.structuredContent.items | length) >= 1' "glossary_pending tool"
check 9 '.result.isError == false and .result.structuredContent.decision == "approved"' "glossary_review tool"
check 10 '.result.isError == true and (.result.content[0].text | test("query"))' "missing argument: a tool error"
check 11 '.result.isError == true and (.result.content[0].text | test("column"))' "bad regex: a tool error"
check 12 '.result.isError == true' "a path outside the index"
check 13 '.error.code == -32602' "unknown tool"
check 14 '.error.code == -32601' "unknown method"
check 15 '.result.isError == true and (.result.content[0].text | test("unknown member"))' "unknown argument"
check 16 '.error.code == -32602' "arguments not an object"
jq -e 'select(.id == null) | .error.code' "$T/out" | grep -qx -- -32700 && ok || fail "parse error"
jq -e 'select(.id == null) | .error.code' "$T/out" | grep -qx -- -32600 && ok || fail "batch refused"
check 18 '.result.isError == false and .result.structuredContent.count >= 1' "search after review"
check 19 '.result.isError == false and .result.structuredContent.count >= 1 and .result.structuredContent.receipt.read_literally == "unclosed '"'('"' at column 9"' "lenient search: read literally"
check 20 '.result.isError == true and (.result.content[0].text | test("column 9: this .*is never closed"))' "strict search: the syntax error"
# the review was committed: the candidate is a group now, the lock let go
"$F" glossary --index "$T/ix" --json list group > "$T/groups" 2>&1
jq -e 'select(.terms == ["tls","transport layer security"])' "$T/groups" > /dev/null && ok ||
	fail "glossary_review did not commit a group: $(cat "$T/groups")"
finish
