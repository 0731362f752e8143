#!/usr/bin/env bash
# fathom serve through curl: every endpoint, the guards (Host, Origin,
# token, body limit, slow clients), bad input, a burst of random requests,
# kill -9 in the middle of a stream of writes (every acknowledged document
# is there after a restart), and SIGTERM.
source "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || { echo "skip: no curl"; exit 77; }
command -v jq > /dev/null || { echo "skip: no jq"; exit 77; }
R=$T/tree
mkdir -p "$R/docs" "$R/src"
cat > "$R/docs/auth.md" <<'M'
# Authentication

The login service validates session tokens.
Test case TC-1001 covers an expired token.

## Errors

A bad token returns 401.
M
cat > "$R/src/token.c" <<'C'
int validate_token(const char *t)
{
	return t && *t; /* TC-1001 */
}
C
for i in $(seq 1 5); do printf 'filler %d about nothing\n' "$i" > "$R/docs/f$i.md"; done
(cd "$R" && "$F" index -q --index "$T/ix" .)

start() { serve_start --idle-timeout 2 "$@"; }
stop() { serve_stop; }
trap 'kill -9 $PID 2> /dev/null; rm -rf "$T"' EXIT

start
# every path of docs/openapi.json is served (none is "no such endpoint")
for p in $(jq -r '.paths | keys[]' "$(dirname "$0")/../../docs/openapi.json"); do
	p=${p//\{id\}/docs%2Fauth.md}
	curl -s -X OPTIONS "$U$p" | grep -q 'no such endpoint' && fail "openapi path $p is not served" || ok
done
s=$(req GET /health); is 200 "$s" '.status == "ok" and .writable' "health"
s=$(req POST /search '{"query":"session tokens","k":5}')
is 200 "$s" '.count >= 1 and .results[0].path == "docs/auth.md" and (.results[0].match_lines | index(3))' "search"
s=$(req POST /search '{"query":"TC-1001","explain":true}')
is 200 "$s" '.receipt.identifiers[0].key == "tc-1001" and (.results | length) == 2 and .results[0].score_parts != null' "identifier search"
s=$(req POST /search '{"query":"session (tokens"}')
is 200 "$s" '.count >= 1 and .receipt.read_literally == "unclosed '"'('"' at column 9"' "lenient search"
s=$(req POST /search '{"query":"session (tokens","strict":true}')
is 400 "$s" '.error.message | test("column 9: this .*is never closed")' "strict search"
s=$(req POST /search '{"query":"session tokens","strict":false}')
is 200 "$s" '.count >= 1 and .receipt.read_literally == null' "well formed: nothing read literally"
s=$(req POST /search '{"query":"zebra giraffe"}'); is 200 "$s" '.count == 0 and (.why | length) > 0' "empty search says why"
s=$(req POST /search '{"query":"token","lang":"c","k":3}'); is 200 "$s" '.count == 1 and .results[0].path == "src/token.c"' "lang filter"
s=$(req POST /search '{"query":"token","path":"docs/*","k":5}'); is 200 "$s" '.count >= 1 and ([.results[].path | startswith("docs/")] | all)' "path filter"
s=$(req POST /grep '{"pattern":"validate_\\w+"}')
is 200 "$s" '.count == 1 and .files[0].path == "src/token.c" and .files[0].lines[0].line == 1' "grep"
s=$(req POST /grep '{"pattern":"TC-1001","files_only":true}'); is 200 "$s" '.count == 2 and .files[0].lines == null' "grep files_only"
s=$(req POST /grep '{"pattern":"a(b"}'); is 400 "$s" '.error.message | test("column")' "grep bad pattern"
s=$(req GET '/get?path=docs/auth.md&from=3&count=2')
is 200 "$s" '.text == "The login service validates session tokens.\nTest case TC-1001 covers an expired token.\n"' "get lines"
s=$(req GET /documents/src%2Ftoken.c); is 200 "$s" '.text | test("validate_token")' "get by id"
s=$(req GET '/get?path=../../../etc/passwd'); is 404 "$s" '.error.code == "not_found"' "no path traversal"
# a path names an indexed document however it is spelled (as grep's paths
# do: this one is docs/auth.md); a file the index does not hold is never read
s=$(req GET "/get?path=$R/docs/auth.md"); is 200 "$s" '.text | test("Authentication")' "get by absolute path"
s=$(req GET "/get?path=$T/serve.err"); is 404 "$s" '.error.code == "not_found"' "get only indexed keys"
s=$(req GET /stats); is 200 "$s" '.documents == 7 and .segments >= 1' "stats"
s=$(req GET /sources); is 200 "$s" '.documents == 7 and .folders.docs.documents == 6' "sources"
s=$(req GET '/vocabulary?prefix=TC-10'); is 200 "$s" '.items[0].key == "tc-1001"' "vocabulary"
s=$(req GET '/vocabulary?prefix=TC-10'); is 200 "$s" '.items[0].categories == ["testcase"]' "vocabulary roles"
s=$(req POST /search '{"query":"TC-1001 AND walrus"}')
is 200 "$s" '.count == 0 and (.why | test("identifier TC-1001 occurs in 2 chunks, but none of them has \"walrus\""))' "an identifier alone: the empty answer names both"

# writes: visible to the next search, atomically with their commit
s=$(req POST /documents $'{"id":"w1","title":"Walrus","body":"the walrus eats clams"}\n{"id":"w2","body":"a walrus sleeps"}\n')
is 200 "$s" '.added == 2 and .generation >= 2' "add documents"
s=$(req POST /search '{"query":"walrus"}'); is 200 "$s" '.count == 2' "added documents are searchable"
s=$(req POST /documents $'{"id":"w3","body":"ok"}\n{"id":"w4", broken\n')
is 400 "$s" '.error.message | test("bad line")' "a bad line refuses the batch"
s=$(req GET /documents/w3); is 404 "$s" '.error.code == "not_found"' "nothing of a refused batch is added"
s=$(req DELETE /documents/w2); is 200 "$s" '.deleted == "w2"' "delete"
s=$(req POST /search '{"query":"walrus"}'); is 200 "$s" '.count == 1' "deleted document is gone"
s=$(req DELETE /documents/nope); is 404 "$s" '.error.code == "not_found"' "delete unknown"
s=$(req POST /glossary '{"terms":["walrus","morse"]}'); is 200 "$s" '.group >= 1' "glossary add"
s=$(req POST /search '{"query":"morse"}'); is 200 "$s" '.count == 1 and (.receipt.glossary | length) == 1' "glossary expands"
s=$(req GET '/glossary?kind=group'); is 200 "$s" '.items[0].terms | index("morse")' "glossary list"
s=$(req POST /glossary/review '{"candidate":999,"decision":"approve"}'); is 404 "$s" '.error' "review unknown candidate"

# bad input
s=$(req POST /search '{"query":'); is 400 "$s" '.error.message | test("malformed JSON")' "malformed JSON"
s=$(req POST /search $'{"query":"\xff\xfe"}'); is 400 "$s" '.error.code == "bad_request"' "invalid UTF-8"
s=$(req POST /search '{"query":5}'); is 400 "$s" '.error.message | test("string")' "wrong type"
s=$(req POST /search '{"query":"x","k":0}'); is 400 "$s" '.error.message | test("from 1")' "k out of range"
s=$(req POST /search '{"qurey":"x"}'); is 400 "$s" '.error.message | test("unknown member")' "unknown member"
s=$(req POST /search '[1,2]'); is 400 "$s" '.error' "not an object"
s=$(req GET /search); is 405 "$s" '.error.code == "method_not_allowed"' "wrong method"
s=$(req GET /mcp); is 405 "$s" '.error.code == "method_not_allowed"' "no SSE stream on GET /mcp"
s=$(req POST /metrics x); is 405 "$s" '.error' "POST /metrics"
s=$(req GET /nowhere); is 404 "$s" '.error.code == "not_found"' "unknown endpoint"
s=$(req GET '/get?path=%zz'); is 400 "$s" '.error' "bad escape"
s=$(curl -s -o "$T/b" -w '%{http_code}' -H 'Host: evil.example' "$U/health"); is 403 "$s" '.error.code == "forbidden"' "Host check"
s=$(curl -s -o "$T/b" -w '%{http_code}' -H 'Origin: http://evil.example' "$U/stats"); is 403 "$s" '.error' "Origin check"
s=$(curl -s -o "$T/b" -w '%{http_code}' -H "Origin: http://localhost:${U##*:}" "$U/stats"); is 200 "$s" '.documents' "local Origin"
head -c 70000000 /dev/zero | tr '\0' 'a' > "$T/huge"
s=$(curl -s -o "$T/b" -w '%{http_code}' -X POST "$U/documents" -H 'Content-Type: application/json' --data-binary @"$T/huge"); is 413 "$s" '.error.code == "too_large"' "body limit"
# a slow client (half a request, then silence) is dropped; others are served
exec 7<>/dev/tcp/127.0.0.1/"${U##*:}"; printf 'POST /search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"qu' >&7
s=$(req GET /health); is 200 "$s" '.status == "ok"' "served beside a slow client"
# after --idle-timeout (2 s) the daemon has closed it: a read sees EOF (1),
# not a time-out (> 128)
sleep 3; read -r -t 2 -u 7 _; rc=$?
[ "$rc" = 1 ] && ok || fail "a silent client was not dropped (read: $rc)"
exec 7>&-
# a burst of random requests: the daemon keeps serving
for i in $(seq 1 200); do
	case $((RANDOM % 6)) in
	0) m=POST p=/search b=$(head -c $((RANDOM % 64)) /dev/urandom | base64 | head -c 80) ;;
	1) m=POST p=/grep b="{\"pattern\":\"$(head -c 6 /dev/urandom | base64 | tr -d '/+=')\"}" ;;
	2) m=GET p="/get?path=$(head -c 8 /dev/urandom | base64 | tr -d '/+=')&from=$RANDOM" b= ;;
	3) m=DELETE p=/search b= ;;
	4) m=POST p=/mcp b="{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"$(head -c 5 /dev/urandom | base64)\"}" ;;
	5) m=PUT p="/$(head -c 4 /dev/urandom | base64 | tr -d '/+=')" b='{}' ;;
	esac
	curl -s -o /dev/null -X "$m" "$U$p" --data-binary "$b" || true
done
s=$(req GET /health); is 200 "$s" '.status == "ok"' "healthy after random requests"
kill -0 "$PID" 2> /dev/null && ok || fail "the daemon died"

# metrics: counters per endpoint, histograms, index gauges
curl -s "$U/metrics" > "$T/m"
grep -Eq '^fathom_requests_total\{endpoint="search"\} [1-9]' "$T/m" && ok || fail "metrics: search count"
grep -Eq '^fathom_errors_total\{endpoint="search",class="4xx"\} [1-9]' "$T/m" && ok || fail "metrics: errors"
grep -Eq '^fathom_request_duration_seconds_bucket\{endpoint="search",le="\+Inf"\} [1-9]' "$T/m" && ok || fail "metrics: histogram"
grep -Eq '^fathom_documents 8$' "$T/m" && ok || fail "metrics: documents $(grep fathom_documents "$T/m")"
grep -Eq '^fathom_last_commit_time_seconds [1-9]' "$T/m" && ok || fail "metrics: last commit"

# MCP over HTTP
s=$(req POST /mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}')
is 200 "$s" '.result.protocolVersion == "2025-06-18" and .result.serverInfo.name == "fathom"' "mcp initialize over HTTP"
s=$(req POST /mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}'); [ "$s" = 202 ] && ok || fail "mcp notification: $s"
s=$(req POST /mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"walrus"}}}')
is 200 "$s" '.result.isError == false and (.result.content[0].text | test("walrus|w1"))' "mcp search over HTTP"
stop
wait "$PID" 2> /dev/null
grep -q "stopped" "$T/serve.err" && ok || fail "SIGTERM: $(cat "$T/serve.err")"
[ ! -e "$T/ix/SERVE" ] && ok || fail "SERVE file left behind"

# A token: required everywhere but /health.
printf 's3cret\n' > "$T/token"
start --token-file "$T/token"
s=$(req GET /stats); is 401 "$s" '.error.code == "unauthorized"' "token required"
s=$(curl -s -o "$T/b" -w '%{http_code}' -H 'Authorization: Bearer wrong' "$U/stats"); is 401 "$s" '.error' "wrong token"
s=$(curl -s -o "$T/b" -w '%{http_code}' -H 'Authorization: Bearer s3cret' "$U/stats"); is 200 "$s" '.documents' "right token"
s=$(req GET /health); is 200 "$s" '.status' "health needs no token"
stop

# kill -9 in the middle of a stream of writes: every acknowledged document
# is there after a restart, and the index verifies.
start
: > "$T/acked"
( for i in $(seq 1 400); do
	c=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/documents" -H 'Content-Type: application/json' --data-binary "{\"id\":\"k$i\",\"body\":\"kill test $i\"}")
	[ "$c" = 200 ] && echo "k$i" >> "$T/acked"
done ) &
W=$!
sleep 1.5
kill -9 "$PID"; wait "$PID" 2> /dev/null
wait "$W" 2> /dev/null
n=$(wc -l < "$T/acked")
[ "$n" -gt 0 ] && ok || fail "no write was acknowledged before the kill"
"$F" verify --index "$T/ix" > /dev/null 2>&1 && ok || fail "index does not verify after kill -9"
start
missing=0
while read -r id; do
	s=$(req GET "/documents/$id"); [ "$s" = 200 ] || missing=$((missing + 1))
done < "$T/acked"
[ "$missing" = 0 ] && ok || fail "$missing of $n acknowledged documents lost after kill -9"
echo "    $n documents acknowledged before kill -9, all present after restart"
stop
finish
