#!/usr/bin/env bash
# The daemon's guards that an audit broke (issue 13), each checked as the
# attack was made:
#   symlinks   a link in the tree (to a folder, to a file, a prefix trick
#              like root2 beside root, a link in a named path) never leads
#              POST /index or serve --watch out of the root; the CLI still
#              follows links, and --no-follow does not
#   slowloris  with --max-connections 16, 16 connections sending a header
#              line twice a second neither lock out a client from another
#              address nor live past --head-timeout
#   cross-site Origin null and an Origin on another port are refused, reads
#              included; a POST without a JSON Content-Type is refused
#   malformed  invalid UTF-8 after percent-decoding is a 400 naming the
#              parameter; a 404 message cut inside a character; duplicate
#              Host and Content-Length headers
#   port       a second daemon on a busy port is a startup error
source "$(dirname "$0")/lib.sh"
for c in curl jq timeout; do command -v $c > /dev/null || { echo "skip: no $c"; exit 77; }; done
trap 'kill -9 $PID 2> /dev/null; [ -n "${SLOW:-}" ] && kill "$SLOW" 2> /dev/null; rm -rf "$T"' EXIT

R=$T/root
E=$T/elsewhere
mkdir -p "$R/docs" "$E/sub" "$T/root2"
echo "public page about otters" > "$R/docs/otters.md"
echo "secret walrus outside the root" > "$E/secret.txt"
echo "deep secret narwhal outside the root" > "$E/sub/deep.txt"
echo "prefix trick beluga outside the root" > "$T/root2/p.txt"
ln -s "$E" "$R/linkout"                      # a linked folder
ln -s "$E/secret.txt" "$R/docs/leak.txt"     # a linked file
ln -s ../root2 "$R/prefix"                   # $T/root2 starts with $T/root
ln -s docs/otters.md "$R/otters-link.md"     # a link that stays inside
mkdir -p "$R/notes"
echo "harmless notes" > "$R/notes/n.txt"
# the CLI follows links: docs/leak.txt is indexed with what it leads to
(cd "$R" && "$F" index -q --index "$T/ix" docs && "$F" index -q --index "$T/ix" --grep-only notes)
# a file indexed for grep alone (read from disk), swapped for a link since
rm "$R/notes/n.txt"
ln -s "$E/secret.txt" "$R/notes/n.txt"

J='Content-Type: application/json'
# The daemon may close a connection before this shell has written all it
# meant to (a refused extra connection, a request it answers early): the
# write must fail with EPIPE, not end the test with SIGPIPE (exit 141).
trap '' PIPE
# raw BYTES: sent as they are on a new connection; the status line out
raw() {
	local port=${U##*:} line=
	exec 9<> "/dev/tcp/127.0.0.1/$port"
	printf '%b' "$1" >&9
	read -r -t 10 line <&9
	exec 9>&-
	echo "${line%$'\r'}"
}

# ---- symlinks ----------------------------------------------------------------
serve_start
# what the daemon reads from disk: grep (every file a link leads out to is
# skipped, docs/leak.txt included), get of a file indexed for grep alone
s=$(req POST /grep '{"pattern":"walrus"}'); is 200 "$s" '.count == 0' "grep reads no file a link leads out to"
s=$(req GET '/get?path=notes/n.txt'); is 404 "$s" '.error' "get of a grep-only file swapped for a link"
s=$(req POST /index '{"paths":["."]}')
is 200 "$s" '.skipped["outside the root folder"] >= 3' "POST /index skips what links lead out to"
s=$(req POST /search '{"query":"walrus narwhal beluga","mode":"any"}'); is 200 "$s" '.count == 0' "nothing from outside is searchable"
s=$(req POST /grep '{"pattern":"secret|beluga"}'); is 200 "$s" '.count == 0' "nothing from outside is grepped"
s=$(req GET '/get?path=linkout/secret.txt'); is 404 "$s" '.error' "get of a file behind a linked folder"
s=$(req GET '/get?path=docs/leak.txt'); is 404 "$s" '.error' "get of a linked file outside"
s=$(req GET '/get?path=otters-link.md'); is 200 "$s" '.text | test("otters")' "a link that stays inside is followed"
s=$(req POST /index '{"paths":["linkout/sub"]}'); is 403 "$s" '.error.code == "forbidden"' "a link in a named path"
s=$(req POST /index '{"paths":["prefix"]}'); is 403 "$s" '.error.code == "forbidden"' "a prefix of the root is not inside it"
s=$(req POST /index '{"paths":["docs"],"options":{"follow_symlinks":true}}'); is 200 "$s" '.skipped["outside the root folder"] == 1' "follow_symlinks does not lift the confinement"
serve_stop

# serve --watch: its walks are confined too
(cd "$R" && "$F" index -q --index "$T/ixw" --no-follow docs)
cd "$R"
IX=$T/ixw serve_start --watch . --debounce 0.1
cd - > /dev/null
for _ in $(seq 1 100); do
	s=$(req GET '/get?path=otters-link.md'); [ "$s" = 200 ] && break; sleep 0.1
done
is 200 "$s" '.text | test("otters")' "serve --watch indexed the tree"
s=$(req POST /search '{"query":"walrus narwhal beluga","mode":"any"}'); is 200 "$s" '.count == 0' "serve --watch: nothing from outside"
serve_stop

# the CLI follows links as documented; --no-follow does not
(cd "$R" && "$F" index -q --index "$T/ixf" .)
expect_out 'walrus' "$F" grep --index "$T/ixf" walrus
(cd "$R" && "$F" index -q --index "$T/ixn" --no-follow .)
expect_rc 1 "$F" grep --index "$T/ixn" 'walrus|narwhal|beluga'
expect_out 'otters' "$F" grep --index "$T/ixn" otters
expect_out '"count": *0|^$' "$F" search --index "$T/ixn" --json walrus

# ---- slow request heads ------------------------------------------------------------
serve_start --max-connections 16 --head-timeout 3
port=${U##*:}
fds=()
for i in $(seq 1 16); do
	exec {fd}<> "/dev/tcp/127.0.0.1/$port" && fds+=("$fd")
	printf 'GET /health HTTP/1.1\r\nHost: localhost\r\n' >&"$fd" 2> /dev/null
done
# a header line each, twice a second, for 8 s: never silent, never done
( trap '' PIPE
  for t in $(seq 1 16); do
	for fd in "${fds[@]}"; do printf 'X-Slow-%d: a\r\n' "$t" >&"$fd" 2> /dev/null; done
	sleep 0.5
  done ) &
SLOW=$!
sleep 1
s=$(curl -s -m 20 --interface 127.0.0.2 -o "$T/b" -w '%{http_code}' "$U/health")
is 200 "$s" '.status == "ok"' "/health from another address beside 16 slow clients"
# the slow heads are cut at --head-timeout (3 s), though bytes keep coming:
# a read sees the end of the stream (1), not its own time-out (> 128)
read -r -t 15 -u "${fds[0]}" _; rc=$?
[ "$rc" = 1 ] && ok || fail "a slow request head outlived --head-timeout (read: $rc)"
s=$(curl -s -m 20 -o "$T/b" -w '%{http_code}' "$U/health")
is 200 "$s" '.status == "ok"' "/health from the slow clients' address once they are cut"
kill "$SLOW" 2> /dev/null; wait "$SLOW" 2> /dev/null; SLOW=
for fd in "${fds[@]}"; do exec {fd}>&-; done
serve_stop

# ---- cross-site writes -----------------------------------------------------------------
serve_start
port=${U##*:}
post() { # ORIGIN CTYPE PATH BODY
	local h=()
	[ -n "$1" ] && h+=(-H "Origin: $1")
	h+=(-H "Content-Type: $2")
	curl -s -o "$T/b" -w '%{http_code}' -X POST "${h[@]}" "$U$3" --data-binary "$4"
}
s=$(post null application/json /documents '{"id":"x1","body":"cross site"}'); is 403 "$s" '.error.code == "forbidden"' "Origin null"
s=$(post http://localhost:1234 application/json /documents '{"id":"x2","body":"cross site"}'); is 403 "$s" '.error' "Origin on another port"
s=$(post http://127.0.0.1:$port text/plain /documents '{"id":"x3","body":"cross site"}'); is 415 "$s" '.error.code == "unsupported_media_type"' "text/plain"
s=$(post '' application/x-www-form-urlencoded /optimize ''); is 415 "$s" '.error' "a form POST to /optimize"
s=$(post '' multipart/form-data /glossary '{"terms":["a","b"]}'); is 415 "$s" '.error' "multipart to /glossary"
s=$(post '' text/plain /index '{"paths":["docs"]}'); is 415 "$s" '.error' "text/plain to /index"
s=$(curl -s -o "$T/b" -w '%{http_code}' -X POST "$U/optimize"); is 415 "$s" '.error' "a POST with no Content-Type"
s=$(req GET /documents/x1); is 404 "$s" '.error' "nothing cross-site was added"
s=$(curl -s -o "$T/b" -w '%{http_code}' -H "Origin: http://localhost:1234" "$U/stats"); is 403 "$s" '.error' "reads: Origin on another port"
s=$(curl -s -o "$T/b" -w '%{http_code}' -H "Origin: null" "$U/stats"); is 403 "$s" '.error' "reads: Origin null"
s=$(curl -s -o "$T/b" -w '%{http_code}' -H "Origin: http://localhost:$port" "$U/stats"); is 200 "$s" '.documents' "the daemon's own Origin"
s=$(post "http://127.0.0.1:$port" 'application/json; charset=utf-8' /documents '{"id":"ok1","body":"same origin"}'); is 200 "$s" '.added == 1' "own Origin, JSON"
s=$(post '' application/x-ndjson /documents '{"id":"ok2","body":"json lines"}'); is 200 "$s" '.added == 1' "JSON lines"

# ---- malformed requests -------------------------------------------------------------------
s=$(req GET /documents/%ff%fe); is 400 "$s" '.error.message | test("document id")' "invalid UTF-8 in a document id"
s=$(req GET '/get?id=%ff'); is 400 "$s" '.error.message | test("\"id\"")' "invalid UTF-8 in ?id"
s=$(req GET '/vocabulary?prefix=%ff'); is 400 "$s" '.error.message | test("\"prefix\"")' "invalid UTF-8 in ?prefix"
s=$(req POST '/documents?%ff=1' '{"id":"m1","body":"x"}'); is 400 "$s" '.error.message | test("name")' "invalid UTF-8 in a parameter name"
s=$(req POST '/documents?meta=lib%3D%ff' '{"id":"m2","body":"x"}'); is 400 "$s" '.error.message | test("\"meta\"")' "invalid UTF-8 in meta"
s=$(req GET /documents/m2); is 404 "$s" '.error' "nothing stored with invalid meta"
long=$(printf 'a%.0s' $(seq 1 198))   # "/" and 198 bytes: the message's 200 end inside é
s=$(req GET "/$long%C3%A9"); is 404 "$s" '.error.code == "not_found"' "a 404 message cut inside a character"
st=$(raw 'GET /stats HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nConnection: close\r\n\r\n')
[[ "$st" == *" 400 "* ]] && ok || fail "duplicate Host headers: $st"
st=$(raw 'POST /search HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 18\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{"query":"otters"}')
[[ "$st" == *" 400 "* ]] && ok || fail "conflicting Content-Length headers: $st"
st=$(raw 'GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')
[[ "$st" == *" 200 "* ]] && ok || fail "a plain raw request: $st"

# ---- a busy port ----------------------------------------------------------------------------
cp -r "$T/ix" "$T/ix2"
rm -f "$T/ix2/SERVE"
timeout 10 "$F" serve --index "$T/ix2" --listen "127.0.0.1:$port" 2> "$T/second.err"
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] && ok || fail "a second daemon on a busy port: exit $rc"
grep -q "127.0.0.1 port $port.*in use" "$T/second.err" && ok || fail "busy port message: $(cat "$T/second.err")"
s=$(req GET /health); is 200 "$s" '.status == "ok"' "the first daemon still serves"
serve_stop
finish
