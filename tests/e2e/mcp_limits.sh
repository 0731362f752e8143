#!/usr/bin/env bash
# MCP limits and schemas (issue 13, items 8a, 11 and 12):
# - every tool reply fits --max-reply-bytes (text and structuredContent
#   together); a larger one says it was cut (reply_truncated, next_offset,
#   a line of text) and the pages, offset after offset, add up to the whole
#   answer: grep, get_full_content, glossary_pending, search, list_sources;
# - the tools' schemas are docs/openapi.json's ("x-mcp-tools", $refs
#   resolved here with jq): tools/list shows exactly them, with an
#   outputSchema for every tool, and the HTTP operations take what the
#   schemas say up to each bound and refuse one past it (the C limits and
#   the file cannot drift apart);
# - arguments the schema forbids are tool errors naming the argument;
# - --read-only lists no tool that writes; --index /missing answers the
#   handshake and says why in each tool result;
# - over HTTP: a bogus MCP-Protocol-Version is 400, a JSON-RPC response
#   posted by the client 202 with no body, and with --allow-origin (CORS)
#   a browser client's preflight OPTIONS is answered, and every reply to
#   that origin names it, the refusals before routing too (401, 413, 415...);
# - no strtok in the daemon (its threads share strtok's state).
source "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skip: no jq"; exit 77; }
command -v curl > /dev/null || { echo "skip: no curl"; exit 77; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OA=$SRC/docs/openapi.json
MAX=20000
R=$T/tree
mkdir -p "$R/docs"
# a header of 3000 lines, each with an "e" (the issue's grep e, max_count 0)
seq 1 3000 | awk '{ printf "#define E%d \"hello there\" /* entry %d */\n", $1, $1 }' > "$R/big.h"
# 120 documents for a search with many results
for i in $(seq 1 120); do printf '# Note %d\n\nThe walrus note number %d.\n' "$i" "$i" > "$R/docs/n$i.md"; done
# 300 acronym definitions: 300 glossary candidates
awk 'BEGIN {
	c = "bcdfghjklmnprstvz"; v = "aeiou"
	for (i = 0; i < 300; i++) {
		a = substr(c, i % 17 + 1, 1); b = substr(c, int(i / 17) % 17 + 1, 1); d = substr(c, (i * 7) % 17 + 1, 1)
		w1 = toupper(a) substr(v, i % 5 + 1, 1) "lom" a; w2 = toupper(b) "ar" substr(v, (i + 2) % 5 + 1, 1) b "en"
		w3 = toupper(d) substr(v, (i + 4) % 5 + 1, 1) "st" d "ik"
		printf "%s %s %s (%s) is a thing. The %s is used here.\n\n", w1, w2, w3, toupper(a b d), toupper(a b d)
	}
}' > "$R/docs/glossary.md"
# 400 documents with metadata of their own: list_sources with 1200 values
for i in $(seq -w 1 400); do
	printf '{"id":"m%s","body":"metadata note %s","library":"library-name-%s","version":"v1.2.%s","system":"system-%s"}\n' \
		"$i" "$i" "$i" "$i" "$i"
done > "$T/meta.jsonl"
(cd "$R" && "$F" index -q --index "$T/ix" . && "$F" add -q --index "$T/ix" --jsonl "$T/meta.jsonl" &&
	"$F" glossary --index "$T/ix" propose > /dev/null)
npend=$("$F" glossary --index "$T/ix" --json pending | wc -l)
[ "$npend" -ge 100 ] && ok || fail "the fixture gives $npend glossary candidates, want 100 or more"

# call TOOL ARGS [OPTIONS...]: one tools/call over stdio; the answer in $T/a
call() {
	local tool=$1 args=$2; shift 2
	printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' \
		"$tool" "$args" | "$F" mcp --index "$T/ix" "$@" > "$T/a" 2> "$T/a.err"
}
# pages TOOL ARGS JQ: every page of the answer under --max-reply-bytes $MAX;
# JQ (applied to structuredContent) extracts its items, one JSON per line,
# into $T/paged; the whole answer's, with no limit to speak of, into $T/whole
pages() {
	local tool=$1 args=$2 items=$3 off=0 n=0 bad=0
	: > "$T/paged"
	while :; do
		call "$tool" "$(jq -c ". + {offset: $off}" <<< "$args")" --max-reply-bytes $MAX
		n=$((n + 1))
		local len; len=$(wc -c < "$T/a")
		[ "$len" -le $MAX ] || { fail "$tool page $n: $len bytes, over $MAX"; bad=1; }
		jq -e '.result.isError == false' "$T/a" > /dev/null || { fail "$tool page $n: $(head -c 300 "$T/a")"; return; }
		jq -c ".result.structuredContent | $items" "$T/a" >> "$T/paged"
		jq -e '.result.structuredContent.reply_truncated == true' "$T/a" > /dev/null || break
		local next; next=$(jq '.result.structuredContent.next_offset' "$T/a")
		jq -e --arg o "offset=$next" '.result.content[0].text | contains($o)' "$T/a" > /dev/null ||
			{ fail "$tool page $n: the text does not say how to go on"; bad=1; }
		[ "$next" -gt "$off" ] || { fail "$tool page $n: next_offset $next does not move on from $off"; return; }
		off=$next
		[ $n -lt 500 ] || { fail "$tool: more than 500 pages"; return; }
	done
	[ $n -ge 3 ] && ok || fail "$tool: $n pages, want several (the fixture should be over $MAX bytes)"
	call "$tool" "$args" --max-reply-bytes 1073741824
	jq -c ".result.structuredContent | $items" "$T/a" > "$T/whole"
	[ -s "$T/whole" ] && cmp -s <(jq -rj . "$T/paged") <(jq -rj . "$T/whole") && ok ||
		fail "$tool: the pages do not add up to the whole answer ($(wc -l < "$T/paged") vs $(wc -l < "$T/whole") items)"
	[ $bad = 0 ] && ok
}

# ---- item 11: byte budget and pages --------------------------------------------------
pages grep '{"pattern":"e","max_count":0,"limit":1000}' '.files[] | {path} + (.lines[] | {line, text})'
pages get_full_content '{"path":"big.h"}' '.text'
# get's pages are pieces of one text: joined they are the document
jq -rj '.' "$T/paged" > "$T/joined"; cmp -s "$T/joined" "$R/big.h" && ok || fail "get_full_content pages joined are not big.h"
pages glossary_pending '{}' '.items[] | .id'
pages search '{"query":"walrus","k":120}' '.results[] | .id'
# list_sources: its folders, then every metadata value; each page has the counts
pages list_sources '{}' '(.folders | to_entries[] | {folder: .key} + .value),
	(.metadata | to_entries[] | .key as $k | .value | to_entries[] | {key: $k, value: .key, documents: .value})'
jq -e '.result.structuredContent.metadata.library | length == 400' "$T/a" > /dev/null && ok || fail "list_sources: not every library value"
jq -e '.result.structuredContent | has("metadata_truncated") | not' "$T/a" > /dev/null && ok || fail "list_sources: metadata_truncated with nothing left out"
# past 1000 values of one key the answer is bounded, and says so (GET /sources alike)
for i in $(seq 1 1001); do printf '{"id":"c%s","body":"capped","release":"r%s"}\n' "$i" "$i"; done |
	"$F" add -q --index "$T/ixc" --jsonl - &&
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_sources","arguments":{}}}' |
	"$F" mcp --index "$T/ixc" --max-reply-bytes 1073741824 > "$T/a"
jq -e '.result.structuredContent | .metadata_truncated == true and (.metadata.release | length) == 1000' "$T/a" > /dev/null &&
	ok || fail "list_sources past 1000 values: $(head -c 300 "$T/a")"
call list_sources '{"offset":5}' --max-reply-bytes 16384
jq -e '.result.structuredContent | .documents == 522 and .reply_truncated and .next_offset > 5 and
	(.metadata | length) >= 1' "$T/a" > /dev/null && ok || fail "list_sources offset 5: $(head -c 300 "$T/a")"
# the default budget: 256 KiB, far below the SDK's 10 MiB
call grep '{"pattern":"e","max_count":0,"limit":1000}'
len=$(wc -c < "$T/a")
[ "$len" -le 262144 ] && jq -e '.result.structuredContent.reply_truncated' "$T/a" > /dev/null && ok ||
	fail "default budget: $len bytes"
call grep '{"pattern":"e","offset":-1}'
jq -e '.result.isError and (.result.content[0].text | test("offset"))' "$T/a" > /dev/null && ok || fail "offset -1: $(cat "$T/a")"
expect_rc 2 "$F" mcp --index "$T/ix" --max-reply-bytes 100

# ---- item 12: schemas from docs/openapi.json ------------------------------------------
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | "$F" mcp --index "$T/ix" > "$T/list"
# what the file says, resolved: $refs inlined, no top-level oneOf, pages' members in the output
jq -c --slurpfile oa "$OA" '
	def deref: walk(if type == "object" and has("$ref")
	                then (.["$ref"] as $r | $oa[0] | getpath($r | ltrimstr("#/") | split("/"))) | deref else . end);
	$oa[0]["x-mcp-tools"][] | {name, title, description,
		inputSchema: (.inputSchema | deref | del(.oneOf)),
		outputSchema: ((.outputSchema | deref) as $o | if .pages then $o | .properties += {
			reply_truncated: $oa[0].components.schemas.McpPage.properties.reply_truncated,
			next_offset: $oa[0].components.schemas.McpPage.properties.next_offset} else $o end),
		annotations: {readOnlyHint: .readOnly, openWorldHint: false}}' -n > "$T/want"
jq -c '.result.tools[]' "$T/list" > "$T/got"
cmp -s "$T/want" "$T/got" && ok || { fail "tools/list is not docs/openapi.json's x-mcp-tools"; diff <(jq . "$T/want") <(jq . "$T/got") | head -20; }
# what the issue found missing
jq -e '.result.tools | map({(.name): .}) | add |
	.search.inputSchema.properties.k.maximum == 1000 and .search.inputSchema.properties.k.minimum == 1 and
	.search.inputSchema.properties.mode.enum == ["auto","all","any","keyword","semantic","hybrid","strict"] and
	.search.inputSchema.properties.fusion.enum == ["rrf","convex","rrf-weighted"] and
	.search.inputSchema.properties.filters.type == "object" and
	.grep.inputSchema.properties.paths.items.type == "string" and
	.grep.inputSchema.properties.max_count.maximum == 100000 and
	.glossary_review.inputSchema.properties.decision.enum == ["approve","reject"] and
	(.get_full_content.inputSchema.properties.id.description | test("path")) and
	([.[] | .outputSchema.type == "object" and .inputSchema.additionalProperties == false] | all) and
	([.[] | .inputSchema.properties.offset != null] == [true,true,true,true,true,false])' "$T/list" > /dev/null && ok ||
	fail "tools/list lacks bounds, enums, item types or output schemas"

# every tool's structuredContent (whole, and a cut page) is valid against its
# outputSchema, and every schema is a valid JSON Schema (when python3 has jsonschema)
if python3 -c 'import jsonschema' 2> /dev/null; then
	printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"tools/list"}' \
		'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"walrus","k":50}}}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"zebra"}}}' \
		'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"e","max_count":0}}}' \
		'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"e","files_only":true}}}' \
		'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_full_content","arguments":{"path":"big.h","from":2,"count":500}}}' \
		'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_sources","arguments":{}}}' \
		'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"glossary_pending","arguments":{}}}' |
		"$F" mcp --index "$T/ix" --max-reply-bytes $MAX > "$T/v"
	python3 - "$T/v" > "$T/v.err" 2>&1 <<'PY' && ok || fail "structuredContent against outputSchema: $(cat "$T/v.err")"
import json, sys, jsonschema
msgs = [json.loads(l) for l in open(sys.argv[1])]
tools = {t["name"]: t for t in msgs[0]["result"]["tools"]}
for t in tools.values():
    jsonschema.Draft7Validator.check_schema(t["inputSchema"])
    jsonschema.Draft7Validator.check_schema(t["outputSchema"])
calls = {1: "search", 2: "search", 3: "grep", 4: "grep", 5: "get_full_content", 6: "list_sources", 7: "glossary_pending"}
for m in msgs[1:]:
    assert not m["result"]["isError"], m
    jsonschema.validate(m["result"]["structuredContent"], tools[calls[m["id"]]]["outputSchema"])
assert sum(bool(m["result"]["structuredContent"].get("reply_truncated")) for m in msgs[1:]) >= 3
PY
else
	echo "note: python3 has no jsonschema; outputSchema validation skipped"
fi

# arguments the schema forbids: tool errors that name the argument
bad() { # ARGS TOOL PATTERN
	call "$2" "$1"
	jq -e --arg p "$3" '.result.isError == true and (.result.content[0].text | test($p))' "$T/a" > /dev/null && ok ||
		fail "$2 $1 is not refused naming $3: $(head -c 300 "$T/a")"
}
bad '{"query":"x","explain":true}' search '"explain".*unknown'
bad '{"query":"x","snippet_bytes":10}' search '"snippet_bytes".*unknown'
bad '{"query":"x","filters":["library=a"]}' search '"filters".*object'
bad '{"query":"x","k":1001}' search '"k".*maximum'
bad '{"query":"x","k":0}' search '"k".*minimum'
bad '{"query":"x","mode":"fast"}' search '"mode".*one of'
bad '{"query":"x","k":"3"}' search '"k".*integer'
bad '{"pattern":"x","paths":[1]}' grep '"paths"\[0\].*string'
bad '{"pattern":"x","count_only":true}' grep '"count_only".*unknown'
bad '{}' get_full_content 'one of "id" or "path"'
bad '{"id":"a","path":"b"}' get_full_content 'one of "id" or "path"'
bad '{"path":"big.h","from":0}' get_full_content '"from".*minimum'
bad '{"candidate":1,"decision":"maybe"}' glossary_review '"decision".*approve, reject'
bad '{"x":1}' list_sources '"x".*unknown'

# --read-only lists only what works
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"glossary_review","arguments":{"candidate":1,"decision":"approve"}}}' |
	"$F" mcp --index "$T/ix" --read-only > "$T/ro"
jq -s -e '(.[0].result.tools | map(.name)) == ["search","get_full_content","grep","list_sources","glossary_pending"] and
	.[1].error.code == -32602' "$T/ro" > /dev/null && ok || fail "--read-only: $(head -c 400 "$T/ro")"

# --index /missing: the handshake, then the reason in every tool result
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
	'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}' |
	"$F" mcp --index "$T/missing" > "$T/miss" 2> "$T/miss.err"
rc=$?
[ $rc = 0 ] && ok || fail "mcp --index /missing exits $rc"
jq -s -e 'length == 3 and .[0].result.protocolVersion == "2025-06-18" and (.[1].result.tools | length) == 6 and
	.[2].result.isError == true and (.[2].result.content[0].text | test("missing.*No such file"))' "$T/miss" > /dev/null && ok ||
	fail "mcp --index /missing: $(head -c 400 "$T/miss")"

# ---- over HTTP: the protocol's details, and the schemas' bounds in the operations ------
serve_start --max-reply-bytes $MAX --allow-origin http://localhost:6274
trap 'kill -9 $PID 2> /dev/null; rm -rf "$T"' EXIT
post() { # PATH BODY [HEADER]: status to stdout, body to $T/b
	curl -s -o "$T/b" -w '%{http_code}' -X POST "$U$1" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' ${3:+-H "$3"} --data-binary "$2"
}
init='{"jsonrpc":"2.0","id":1,"method":"ping"}'
s=$(post /mcp "$init" 'MCP-Protocol-Version: 2025-06-18'); [ "$s" = 200 ] && ok || fail "MCP-Protocol-Version 2025-06-18: $s"
s=$(post /mcp "$init" 'MCP-Protocol-Version: 1999-01-01'); [ "$s" = 400 ] && ok || fail "bogus MCP-Protocol-Version: $s"
s=$(post /mcp '{"jsonrpc":"2.0","id":7,"result":{}}'); [ "$s" = 202 ] && [ ! -s "$T/b" ] && ok ||
	fail "a JSON-RPC response posted: $s $(head -c 200 "$T/b")"
s=$(post /mcp '{"jsonrpc":"2.0","id":8,"error":{"code":-1,"message":"no"}}'); [ "$s" = 202 ] && ok || fail "a JSON-RPC error response posted: $s"
s=$(post /mcp 'not json'); [ "$s" = 400 ] && jq -e '.error.code == -32700' "$T/b" > /dev/null && ok || fail "parse error over HTTP: $s"
s=$(post /mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"e","max_count":0,"limit":1000}}}')
[ "$s" = 200 ] && [ "$(wc -c < "$T/b")" -le $MAX ] && jq -e '.result.structuredContent.next_offset > 0' "$T/b" > /dev/null && ok ||
	fail "daemon --max-reply-bytes: $s, $(wc -c < "$T/b") bytes"

# CORS configured (--allow-origin): a browser client's preflight, then its POST
O=http://localhost:6274
curl -s -o /dev/null -D "$T/h" -w '%{http_code}' -X OPTIONS "$U/mcp" -H "Origin: $O" \
	-H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: content-type, mcp-protocol-version' > "$T/s"
[ "$(cat "$T/s")" = 204 ] && grep -qi "^access-control-allow-origin: $O" "$T/h" &&
	grep -qi '^access-control-allow-headers:.*MCP-Protocol-Version' "$T/h" &&
	grep -qi '^access-control-allow-methods:.*POST' "$T/h" && ok || fail "CORS preflight: $(cat "$T/s") $(cat "$T/h")"
s=$(curl -s -o "$T/b" -D "$T/h" -w '%{http_code}' -X POST "$U/mcp" -H "Origin: $O" -H 'Content-Type: application/json' --data-binary "$init")
[ "$s" = 200 ] && grep -qi "^access-control-allow-origin: $O" "$T/h" && ok || fail "CORS POST: $s $(cat "$T/h")"
s=$(curl -s -o /dev/null -w '%{http_code}' -X OPTIONS "$U/mcp" -H 'Origin: http://evil.example:6274' -H 'Access-Control-Request-Method: POST')
[ "$s" != 204 ] && ok || fail "a preflight from an origin not allowed: $s"

# every bound of the request schemas the tools use, in the HTTP operation:
# the bound itself is taken, one past it refused naming the member
refused() { [ "$1" -ge 400 ] && [ "$1" -lt 500 ] && jq -r .error.message "$T/b" 2> /dev/null | grep -q "\"$2\""; }
bounds() { # SCHEMA PATH BASE_JSON
	local schema=$1 path=$2 base=$3 name
	for name in $(jq -r --arg s "$schema" '.components.schemas[$s].properties | to_entries[] |
	              select(.value.maximum != null or .value.minimum != null or .value.maxLength != null or
	                     .value.enum != null or .value.maxItems != null) | .key' "$OA"); do
		jq -c --arg s "$schema" --arg n "$name" --argjson base "$base" '.components.schemas[$s].properties[$n] as $p |
			(if $p.maximum != null then [[true, $p.maximum], [false, $p.maximum + 1]] else [] end) +
			(if $p.minimum != null then [[true, $p.minimum], [false, $p.minimum - 1]] else [] end) +
			(if $p.maxLength != null then [[true, ("a" * $p.maxLength)], [false, ("a" * ($p.maxLength + 1))]] else [] end) +
			(if $p.maxItems != null then (if $p.items.type == "number" then 0.5 else "x" end) as $it |
				[[true, [range($p.maxItems) | $it]], [false, [range($p.maxItems + 1) | $it]]] else [] end) +
			(if $p.enum != null then [$p.enum[] | [true, .]] + [[false, "zzz"]] else [] end) |
			.[] | [.[0], ($base + {($n): .[1]})]' "$OA" > "$T/cases"
		while read -r c; do
			local want body st
			want=$(jq -r '.[0]' <<< "$c"); body=$(jq -c '.[1]' <<< "$c")
			st=$(post "$path" "$body")
			if [ "$want" = true ]; then
				refused "$st" "$name" && fail "$schema.$name: $path refuses what the schema allows: $(head -c 80 <<< "$body") -> $st $(head -c 200 "$T/b")" || ok
			else
				refused "$st" "$name" && ok || fail "$schema.$name: $path takes what the schema forbids: $(head -c 80 <<< "$body") -> $st"
			fi
		done < "$T/cases"
	done
}
bounds SearchRequest /search '{"query":"walrus"}'
bounds GrepRequest /grep '{"pattern":"walrus","literal":true}'
bounds GlossaryReview /glossary/review '{"candidate":4000000000,"decision":"reject"}'
# GET /get's parameters (GetRequest)
for q in "from=0:false" "from=1:true" "from=4294967295:true" "from=4294967296:false" "count=-1:false" "count=0:true" "count=4294967296:false"; do
	st=$(curl -s -o "$T/b" -w '%{http_code}' "$U/get?path=big.h&${q%:*}")
	n=${q%%=*}
	if [ "${q#*:}" = true ]; then refused "$st" "$n" && fail "GET /get ${q%:*}: $st" || ok
	else refused "$st" "$n" && ok || fail "GET /get ${q%:*} taken: $st"; fi
done
serve_stop

# CORS on the errors answered before routing: a browser client from an
# allowed origin must read every status (a reply without the header is a
# network error to it), and an origin not allowed never gets it
printf 's3cret\n' > "$T/token"
serve_start --allow-origin "$O" --token-file "$T/token" --max-body 1024
cors() { # WANT_STATUS WHAT CURL_ARGS...: the status, and the origin named
	local want=$1 what=$2 s; shift 2
	s=$(curl -s -o "$T/b" -D "$T/h" -w '%{http_code}' -H "Origin: $O" "$@")
	[ "$s" = "$want" ] && grep -qi "^access-control-allow-origin: $O" "$T/h" && ok ||
		fail "CORS on $what: $s (want $want), $(tr -d '\r' < "$T/h" | head -c 400)"
}
A='Authorization: Bearer s3cret'
cors 401 "401 (no token)" -X POST "$U/mcp" -H 'Content-Type: application/json' --data-binary "$init"
cors 413 "413 (body over --max-body)" -X POST "$U/mcp" -H "$A" -H 'Content-Type: application/json' \
	--data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"$(head -c 2000 /dev/zero | tr '\0' a)\"}"
cors 415 "415 (Content-Type text/plain)" -X POST "$U/mcp" -H "$A" -H 'Content-Type: text/plain' --data-binary "$init"
cors 400 "400 (bogus MCP-Protocol-Version)" -X POST "$U/mcp" -H "$A" -H 'Content-Type: application/json' \
	-H 'MCP-Protocol-Version: 1999-01-01' --data-binary "$init"
cors 400 "400 (two Content-Type headers)" -X POST "$U/mcp" -H "$A" -H 'Content-Type: application/json' \
	-H 'Content-Type: application/json' --data-binary "$init"
cors 403 "403 (Host not allowed)" -H "$A" -H 'Host: evil.example' "$U/stats"
cors 200 "200 (the token)" -X POST "$U/mcp" -H "$A" -H 'Content-Type: application/json' --data-binary "$init"
s=$(curl -s -o /dev/null -D "$T/h" -w '%{http_code}' -X POST "$U/mcp" -H 'Origin: http://evil.example:6274' \
	-H 'Content-Type: application/json' --data-binary "$init")
[ "$s" = 403 ] && ! grep -qi '^access-control-allow-origin' "$T/h" && ok || fail "an origin not allowed: $s $(cat "$T/h")"
serve_stop

# ---- item 8a: strtok keeps its state in a global: never on the daemon's threads ---------
grep -n 'strtok *(' "$SRC"/src/serve/*.c > "$T/strtok" && fail "strtok in src/serve: $(cat "$T/strtok")" || ok
finish
