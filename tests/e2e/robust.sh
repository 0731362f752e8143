#!/usr/bin/env bash
# What a careless filesystem and a careless user do (issue 13): a FIFO in a
# file's place (item 2), a segment truncated under a running daemon (3),
# grep's PATH arguments from any folder and a daemon's relative paths (9), a
# file changed since indexing marked in get, search, grep and MCP text (15), and
# indexing mistakes (16). Commands that hung before their fix run under
# `timeout`, so a hang fails instead of stopping the suite.
source "$(dirname "$0")/lib.sh"
command -v timeout > /dev/null || { echo "skip: no timeout"; exit 77; }
PID=
trap '[ -n "$PID" ] && kill -9 $PID 2> /dev/null; rm -rf "$T"' EXIT

# ---- item 16: indexing mistakes ---------------------------------------------------
mkdir -p "$T/w" && cd "$T/w" || exit 2
expect_rc 2 "$F" index --index "$T/w/ix" /nonexistent
[ -e "$T/w/ix" ] && fail "a failed first run left an index behind" || ok
expect_err 'nonexistent' "$F" index --index "$T/w/ix" /nonexistent
expect_no_out . "$F" index --index "$T/w/ix" /nonexistent   # no "indexed 0 documents" on stdout
grep -q 'indexed 0 documents' "$T/.err" && fail "a failed run reports 'indexed 0 documents'" || ok
expect_rc 2 "$F" add --index "$T/w/ix2" --jsonl /nonexistent.jsonl
[ -e "$T/w/ix2" ] && fail "a failed first add left an index behind" || ok
mkdir -p "$T/w/good"
echo 'the quokka smiles' > "$T/w/good/q.txt"
echo 'the numbat digs' > "$T/w/n.txt"
# one bad path among several: reported, the rest indexed, exit 2
expect_rc 2 "$F" index --index "$T/w/ix" good /nonexistent/x n.txt
grep -q '/nonexistent/x' "$T/.err" || fail "the bad path is not reported: $(cat "$T/.err")"
expect_out 'q.txt' "$F" search --index "$T/w/ix" quokka
expect_out 'n.txt' "$F" search --index "$T/w/ix" numbat
expect_rc 0 "$F" index --index "$T/w/ix" good n.txt

# ---- item 2: a FIFO where a file was -----------------------------------------------
R=$T/tree
mkdir -p "$R/sub"
printf 'the okapi sleeps\nline two\n' > "$R/sub/a.txt"
printf 'another okapi\n' > "$R/sub/b.txt"
printf 'a big okapi file\n%.0s' $(seq 1 200) > "$R/big.log"
"$F" index -q --index "$T/ix" --max-size 1000 "$R" || fail "index"
rm "$R/sub/b.txt" && mkfifo "$R/sub/b.txt"
rm "$R/big.log" && mkfifo "$R/big.log"   # indexed for grep alone: get reads it from disk
# grep reads changed files from disk: it must skip the FIFO, not wait on it
timeout 30 "$F" grep --index "$T/ix" okapi "$R" > "$T/g.out" 2> "$T/g.err"
rc=$?
[ $rc -eq 124 ] && fail "grep hung on a FIFO"
# as for an unreadable file: the others are searched, the skip said, exit 2
[ $rc -eq 2 ] || fail "grep exit $rc: $(cat "$T/g.err")"
grep -q 'a.txt' "$T/g.out" || fail "grep lost a.txt: $(cat "$T/g.out")"
grep -q 'b.txt: not a regular file' "$T/g.err" || fail "grep does not say why b.txt was skipped: $(cat "$T/g.err")"
ok
timeout 30 "$F" get --index "$T/ix" "$R/big.log" > /dev/null 2> "$T/g.err"
rc=$?
[ $rc -eq 124 ] && fail "get hung on a FIFO"
grep -q 'not a regular file' "$T/g.err" || fail "get of a FIFO: exit $rc, $(cat "$T/g.err")"
ok
# through the daemon: a grep that meets the FIFO answers, and SIGTERM stops it
if command -v curl > /dev/null; then
	IX=$T/ix serve_start
	code=$(curl -s -m 20 -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' \
		-X POST "$U/grep" --data-binary '{"pattern":"okapi"}')
	[ "$code" = 200 ] || fail "POST /grep with a FIFO in the tree: $code $(cat "$T/b")"
	ok
	kill -TERM "$PID"
	for _ in $(seq 1 100); do kill -0 "$PID" 2> /dev/null || break; sleep 0.1; done
	kill -0 "$PID" 2> /dev/null && { fail "SIGTERM did not stop the daemon"; kill -9 "$PID"; }
	wait "$PID" 2> /dev/null
	PID=
fi
# index again: the FIFO is skipped with its reason, and the run ends
timeout 30 "$F" index -v --index "$T/ix" "$R" > /dev/null 2> "$T/i.err"
rc=$?
[ $rc -eq 124 ] && fail "index hung on a FIFO"
[ $rc -eq 0 ] || fail "index exit $rc: $(cat "$T/i.err")"
grep -q 'b.txt: not a regular file' "$T/i.err" || fail "the FIFO's skip is not reported: $(cat "$T/i.err")"
ok
rm -f "$R/sub/b.txt" "$R/big.log"

# ---- item 9: grep PATH arguments from any folder (absolute keys, no root) --------
G=$T/g
mkdir -p "$G/a/deep" "$G/b"
for i in 1 2 3; do echo "the tapir $i" > "$G/a/x$i.c"; echo "a tapir $i" > "$G/b/y$i.c"; done
echo 'deep tapir' > "$G/a/deep/z.c"
"$F" index -q --index "$T/gix" "$G" || fail "index $G"
n_here=$(cd "$T" && "$F" grep --index "$T/gix" -l tapir "$G/a" | wc -l)
n_root=$(cd / && "$F" grep --index "$T/gix" -l tapir "$G/a" | wc -l)
[ "$n_here" -eq 4 ] || fail "grep -l tapir $G/a from $T: $n_here files, want 4"
[ "$n_root" -eq 4 ] || fail "grep -l tapir $G/a from /: $n_root files, want 4"
ok
# "." is the current folder, not the whole index
out=$(cd "$G/b" && "$F" grep --index "$T/gix" -l tapir .)
[ "$(echo "$out" | wc -l)" -eq 3 ] || fail "grep . from $G/b: $out"
echo "$out" | grep -q 'x1.c' && fail "grep . matched a file outside the current folder" || ok
out=$(cd "$G/a" && "$F" grep --index "$T/gix" -l tapir deep ../b/y2.c)
[ "$(echo "$out" | wc -l)" -eq 2 ] || fail "grep deep ../b/y2.c from $G/a: $out"
ok

# ---- item 15: a stale get --------------------------------------------------------
S=$T/s
mkdir -p "$S/docs"
printf 'first line of the wombat\nsecond\nthird\n' > "$S/docs/w.txt"
printf 'a fresh wombat\n' > "$S/docs/f.txt"
(cd "$S" && "$F" index -q --index "$T/six" docs) || fail "index $S"
printf 'FIRST line of the wombat\nsecond\nthird\n' > "$S/docs/w.txt"
touch -d '2001-01-01' "$S/docs/w.txt"
(cd "$S/docs" && "$F" get --index "$T/six" w.txt > "$T/get.out" 2> "$T/get.err")
grep -q 'first line' "$T/get.out" || fail "get w.txt from docs/: $(cat "$T/get.out" "$T/get.err")"
grep -qF 'w.txt (changed since indexing): this is the indexed copy' "$T/get.err" \
	|| fail "get does not say w.txt is stale: $(cat "$T/get.err")"
ok
(cd "$S" && "$F" grep --index "$T/six" --json FIRST docs) > "$T/gj.out"
grep -q 'FIRST' "$T/gj.out" || fail "grep does not see the change"
grep -q '"changed_since_indexing":true' "$T/gj.out" && ok || fail "grep --json does not mark the changed file: $(cat "$T/gj.out")"
expect_out '"changed_since_indexing":true' "$F" search --index "$T/six" --json wombat
# human output says it too, in one wording after the path (JSON's
# changed_since_indexing): search hits, grep (on stderr, so path:line:text
# stays as scripts read it), get, and the MCP tools' text
"$F" search --index "$T/six" wombat > "$T/s.out"
grep -Eq '^(/.*/)?docs/w\.txt:[0-9]+: .*  \(changed since indexing\)$' "$T/s.out" && ok \
	|| fail "search does not mark the stale hit: $(cat "$T/s.out")"
grep -Eq '^(/.*/)?docs/f\.txt:[0-9]+: [0-9.]+$' "$T/s.out" && ok || fail "search marks a fresh hit: $(cat "$T/s.out")"
(cd "$S" && "$F" grep --index "$T/six" 'FIRST|fresh' docs > "$T/g.out" 2> "$T/g.err")
grep -qx 'docs/w.txt:1:FIRST line of the wombat' "$T/g.out" && grep -qx 'docs/f.txt:1:a fresh wombat' "$T/g.out" \
	&& ok || fail "grep lines: $(cat "$T/g.out")"
grep -qF 'docs/w.txt (changed since indexing)' "$T/g.err" && ok || fail "grep does not mark w.txt: $(cat "$T/g.err")"
grep -q 'f\.txt' "$T/g.err" && fail "grep marks the fresh f.txt: $(cat "$T/g.err")" || ok
(cd "$S" && "$F" grep --index "$T/six" -l 'FIRST|fresh' docs > "$T/g.out" 2> "$T/g.err")
[ "$(cat "$T/g.out")" = "$(printf 'docs/f.txt\ndocs/w.txt')" ] && grep -qF 'docs/w.txt (changed since indexing)' "$T/g.err" \
	&& ok || fail "grep -l: $(cat "$T/g.out" "$T/g.err")"
(cd "$S" && "$F" mcp --index "$T/six" > "$T/m.out" 2> "$T/m.err") <<'MSG'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"wombat"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"FIRST|fresh"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_full_content","arguments":{"id":"docs/w.txt"}}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_full_content","arguments":{"id":"docs/f.txt"}}}
{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"FIRST|fresh","files_only":true}}}
MSG
sed -n 2p "$T/m.out" | grep -qF '"text":"1. docs/w.txt (changed since indexing) (lines' && ok \
	|| sed -n 2p "$T/m.out" | grep -qF '\n2. docs/w.txt (changed since indexing) (lines' && ok \
	|| fail "MCP search text: $(sed -n 2p "$T/m.out")"
sed -n 2p "$T/m.out" | grep -qF 'docs/f.txt (changed' && fail "MCP search marks f.txt" || ok
sed -n 3p "$T/m.out" | grep -qF 'docs/f.txt:1:a fresh wombat\ndocs/w.txt (changed since indexing)\ndocs/w.txt:1:FIRST line' \
	&& ok || fail "MCP grep text: $(sed -n 3p "$T/m.out")"
sed -n 4p "$T/m.out" | grep -qF '"text":"[docs/w.txt (changed since indexing): this is the indexed copy' && ok \
	|| fail "MCP get_full_content text: $(sed -n 4p "$T/m.out")"
sed -n 5p "$T/m.out" | grep -qF '"text":"a fresh wombat\n"' && ok || fail "MCP get_full_content of a fresh file: $(sed -n 5p "$T/m.out")"
sed -n 6p "$T/m.out" | grep -qF '"text":"docs/f.txt\ndocs/w.txt (changed since indexing)\n"' && ok \
	|| fail "MCP grep files_only text: $(sed -n 6p "$T/m.out")"

# ---- items 3 and 15 through the daemon ---------------------------------------------
command -v curl > /dev/null || { echo "skip: no curl (the daemon's part)"; finish; exit $?; }
IX=$T/six serve_start
post() { curl -s -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' -X POST "$U$1" --data-binary "$2"; }
code=$(curl -s -o "$T/b" -w '%{http_code}' "$U/get?path=docs/w.txt&from=2&count=10")
[ "$code" = 200 ] || fail "/get: $code $(cat "$T/b")"
grep -q '"count": *2' "$T/b" || fail "/get count is not the lines delivered: $(cat "$T/b")"
grep -q '"changed_since_indexing": *true' "$T/b" || fail "/get does not mark a stale file: $(cat "$T/b")"
ok
code=$(post /search '{"query":"wombat"}')
[ "$code" = 200 ] || fail "/search before the damage: $code $(cat "$T/b")"
seg=$(ls "$T/six"/seg-*.fseg | head -1)
: > "$seg"   # truncated under the daemon's maps
code=$(post /search '{"query":"wombat second"}')
kill -0 "$PID" 2> /dev/null || fail "the daemon died of a truncated segment"
grep -q "$(basename "$seg")" "$T/b" || fail "/search after truncation: $code $(cat "$T/b")"
ok
code=$(curl -s -o "$T/b" -w '%{http_code}' "$U/get?path=docs/w.txt")
grep -q "$(basename "$seg")" "$T/b" || fail "/get after truncation: $code $(cat "$T/b")"
code=$(curl -s -o "$T/b" -w '%{http_code}' "$U/health")
[ "$code" = 200 ] || fail "/health after truncation: $code"
kill -0 "$PID" 2> /dev/null || fail "the daemon died"
ok
serve_stop
PID=
# POST /grep's paths do not depend on the folder the daemon started in.
# $T/gix has no root (built from an absolute path): a relative path has no
# base there, so every daemon refuses it alike (it once resolved against
# the daemon's starting folder: "a" named 4 files from $G, none from
# $G/b), in POST /grep, GET /get and the MCP grep and get_full_content
n=0
for d in "$G" "$G/b" /; do
	n=$((n + 1))
	cd "$d" && IX=$T/gix serve_start
	code=$(post /grep "{\"pattern\":\"tapir\",\"files_only\":true,\"paths\":[\"$G/a\"]}")
	grep -q '"count": *4' "$T/b" || fail "POST /grep paths [$G/a], daemon started in $d: $code $(cat "$T/b")"
	ok
	code=$(curl -s -o "$T/b" -w '%{http_code}' "$U/get?path=$G/a/x1.c")
	[ "$code" = 200 ] && grep -q 'the tapir 1' "$T/b" && ok || fail "/get $G/a/x1.c from $d: $code $(cat "$T/b")"
	for p in a . ../b; do
		code=$(post /grep "{\"pattern\":\"tapir\",\"files_only\":true,\"paths\":[\"$G/b\",\"$p\"]}")
		echo "$code $(cat "$T/b")" >> "$T/rel.$n"
		[ "$code" = 400 ] && grep -q 'no root folder' "$T/b" && grep -q 'absolute' "$T/b" && ok \
			|| fail "POST /grep paths [$p], daemon started in $d: $code $(cat "$T/b")"
	done
	code=$(curl -s -o "$T/b" -w '%{http_code}' "$U/get?path=a/x1.c")
	echo "$code $(cat "$T/b")" >> "$T/rel.$n"
	[ "$code" = 400 ] && grep -q 'no root folder' "$T/b" && ok || fail "/get?path=a/x1.c from $d: $code $(cat "$T/b")"
	# an id is never read as a path against the starting folder either
	code=$(curl -s -o "$T/b" -w '%{http_code}' "$U/get?id=a/x1.c")
	echo "$code $(cat "$T/b")" >> "$T/rel.$n"
	[ "$code" = 404 ] && ok || fail "/get?id=a/x1.c from $d: $code $(cat "$T/b")"
	for args in '"grep","arguments":{"pattern":"tapir","paths":["a"]}' \
		'"get_full_content","arguments":{"path":"a/x1.c"}' '"get_full_content","arguments":{"id":"a/x1.c"}'; do
		post /mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":$args}}" > /dev/null
		cat "$T/b" >> "$T/rel.$n"
		grep -q '"isError": *true' "$T/b" && grep -Eq 'no root folder|no document' "$T/b" && ok \
			|| fail "MCP $args from $d: $(cat "$T/b")"
	done
	serve_stop
	PID=
done
cmp -s "$T/rel.1" "$T/rel.2" && cmp -s "$T/rel.1" "$T/rel.3" && ok \
	|| fail "relative paths answered differently by daemons started in other folders: $(cat "$T/rel.1" "$T/rel.2")"
# POST /index as well: a daemon guarded by a token may index any path, but
# a relative one still has no base on an index with no root
echo 'sesame' > "$T/token"
for d in "$G" "$G/b"; do
	cd "$d" && IX=$T/gix serve_start --token-file "$T/token"
	code=$(curl -s -o "$T/b" -w '%{http_code}' -H 'Content-Type: application/json' -H 'Authorization: Bearer sesame' \
		-X POST "$U/index" --data-binary '{"paths":["a"],"wait":true}')
	[ "$code" = 400 ] && grep -q 'no root folder' "$T/b" && ok || fail "POST /index [a], daemon started in $d: $code $(cat "$T/b")"
	serve_stop
	PID=
done
cd "$T" || exit 2
# the CLI names the file too
expect_err "$(basename "$seg")" "$F" search --index "$T/six" wombat
finish
