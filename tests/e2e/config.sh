#!/usr/bin/env bash
# fathom config: per-index settings. List, get, set, unset and --json;
# a bad value is an error naming the setting and writes nothing; search
# (CLI, daemon, MCP) takes the index's k, mode and snippet size where no
# option is given and an option still wins; fathom index takes the size
# caps and ignore rules, --max-size and --no-ignore win; an index without
# settings lists the defaults; setting a value on a new folder creates
# the index (reading one, or another writer's command, says there is no
# index and leaves nothing behind); kill -9 during config commits leaves
# the old value or the new one, never a torn index.
source "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skip: no jq"; exit 77; }
R=$T/tree
mkdir -p "$R/docs" "$R/logs"
for i in $(seq 1 15); do printf '# Note %d\n\nwalrus facts number %d\n' "$i" "$i" > "$R/docs/n$i.md"; done
printf 'walrus in a log\n' > "$R/logs/a.log"
head -c 3000 /dev/zero | tr '\0' 'w' > "$R/docs/big.txt"
IX=$T/ix
(cd "$R" && "$F" index -q --index "$IX" .)

# an index without settings: every one at its default
expect_out '^k += 10 \(default\)$' "$F" config --index "$IX"
"$F" config --index "$IX" --json > "$T/all.json"
jq -e 'length >= 13 and ([.[] | .set] | any | not) and (.[] | select(.name == "k") | .value == 10 and .min == 1)' "$T/all.json" > /dev/null && ok || fail "config --json: $(head -c 300 "$T/all.json")"
jq -e '.[] | select(.name == "match") | .choices == ["auto","all","any"]' "$T/all.json" > /dev/null && ok || fail "match choices"
expect_out '^10$' "$F" config --index "$IX" k
expect_out '^"auto"$' sh -c "'$F' config --index '$IX' --json match | jq .value"

# stats says what an index without an embedder is: lexical only
expect_out '^embedder +none: lexical only' "$F" stats --index "$IX"
[ "$("$F" stats --index "$IX" --json | jq -r '.embedder + " " + .default_mode')" = "none keyword" ] && ok || fail "stats --json embedder"

# search takes the index's k; -k wins
n() { "$F" search --index "$IX" --json "$@" walrus | jq .count; }
[ "$(n)" = 10 ] && ok || fail "default k: $(n)"
expect_rc 0 "$F" config --index "$IX" k 3
expect_out '^3$' "$F" config --index "$IX" k
[ "$(n)" = 3 ] && ok || fail "the index's k: $(n)"
[ "$(n -k 7)" = 7 ] && ok || fail "-k 7 wins: $(n -k 7)"
expect_out '"set":true' "$F" config --index "$IX" --json k

# bad values: an error naming the setting and its range; nothing written
gen=$("$F" stats --index "$IX" --json | jq .generation)
expect_rc 2 "$F" config --index "$IX" k 0
expect_err 'k wants an integer from 1 to 100000' "$F" config --index "$IX" k 0
expect_err 'b wants a number from 0 to 1' "$F" config --index "$IX" b 1.5
expect_err 'match wants one of auto all any' "$F" config --index "$IX" match most
expect_err "no setting 'nosuch'" "$F" config --index "$IX" nosuch 1
expect_err 'takes one value' "$F" config --index "$IX" k 1 2
[ "$("$F" stats --index "$IX" --json | jq .generation)" = "$gen" ] && ok || fail "a refused value committed"
expect_out '^3$' "$F" config --index "$IX" k

# matching mode and snippet size
expect_rc 0 "$F" config --index "$IX" match all
expect_rc 1 "$F" search --index "$IX" walrus zebra
expect_rc 0 "$F" search --index "$IX" --match any walrus zebra
expect_rc 0 "$F" config --index "$IX" snippet-bytes 0
[ "$("$F" search --index "$IX" --json walrus | jq '[.results[].snippet] | map(. // "") | all(. == "")')" = true ] && ok || fail "snippet-bytes 0"

# the daemon and MCP: the index's defaults, a request's own parameters win
serve_start
s=$(req POST /search '{"query":"walrus"}'); is 200 "$s" '.count == 3' "daemon: the index's k"
s=$(req POST /search '{"query":"walrus","k":5}'); is 200 "$s" '.count == 5' "daemon: k in the request wins"
s=$(req POST /search '{"query":"walrus zebra"}'); is 200 "$s" '.count == 0' "daemon: the index's match all"
s=$(req POST /search '{"query":"walrus zebra","mode":"any"}'); is 200 "$s" '.count == 3' "daemon: mode wins"
# GET /config: the library's serializer, as config --json prints it
s=$(req GET /config); is 200 "$s" '(.settings[] | select(.name == "k") | .value == 3 and .set) and .generation > 0' "GET /config"
jq -c .settings "$T/b" > "$T/get.json"
"$F" config --index "$IX" --json | jq -c . | cmp -s - "$T/get.json" && ok || fail "GET /config differs from config --json"
# writes while the daemon holds the index go through it (POST /config)
expect_rc 0 "$F" config --index "$IX" k 4
s=$(req POST /search '{"query":"walrus"}'); is 200 "$s" '.count == 4' "daemon: the new k at once"
expect_out '^4$' "$F" config --index "$IX" k
expect_rc 2 "$F" config --index "$IX" k 0
expect_out '^4$' "$F" config --index "$IX" k
s=$(req POST /config '{"key":"k","value":0}'); is 400 "$s" '.error.message | test("k wants an integer from 1 to 100000")' "POST /config: a bad value"
s=$(req POST /config '{"key":"ignore","value":["*.tmp","cache/"]}'); is 200 "$s" '.set and .value == "*.tmp\ncache/"' "POST /config: patterns"
s=$(req POST /config '{"key":"ignore","unset":true}'); is 200 "$s" '.set == false' "POST /config: unset"
s=$(req POST /config '{"key":"nosuch","value":1}'); is 400 "$s" '.error.message | test("key")' "POST /config: an unknown key"
s=$(req POST /config '{"key":"k","value":3}'); is 200 "$s" '.value == "3"' "POST /config: a number"
serve_stop
"$F" mcp --index "$IX" > "$T/mcp.out" 2> "$T/mcp.err" <<'MSG'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"walrus"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"walrus","k":6}}}
MSG
jq -se 'map(select(.id == 2))[0].result.structuredContent.count == 3' "$T/mcp.out" > /dev/null && ok || fail "mcp: the index's k: $(jq -c 'select(.id == 2)' "$T/mcp.out" | head -c 300)"
jq -se 'map(select(.id == 3))[0].result.structuredContent.count == 6' "$T/mcp.out" > /dev/null && ok || fail "mcp: k in the call wins"

# unset (and --reset), back to the default
expect_rc 0 "$F" config --index "$IX" --unset k
expect_out '^k += 10 \(default\)$' "$F" config --index "$IX"
expect_rc 0 "$F" config --index "$IX" match --reset
expect_rc 0 "$F" config --index "$IX" snippet-bytes --unset
[ "$(n)" = 10 ] && ok || fail "unset k: $(n)"

# index: the caps and ignore rules; options win
"$F" list --index "$IX" | cut -f1 | sort > "$T/l0"
grep -q 'logs/a.log' "$T/l0" && grep -q 'docs/big.txt' "$T/l0" && ok || fail "setup: $(cat "$T/l0")"
expect_rc 0 "$F" config --index "$IX" ignore '*.log' 'nothing/'
expect_out '^\*\.log$' "$F" config --index "$IX" ignore
expect_rc 0 "$F" config --index "$IX" max-size 1000
expect_rc 0 "$F" config --index "$IX" grep-max-size 0
(cd "$R" && "$F" index -q --index "$IX" .)
"$F" list --index "$IX" | cut -f1 > "$T/l1"
grep -q 'logs/a.log' "$T/l1" && fail "ignore setting not applied" || ok
grep -q 'docs/big.txt' "$T/l1" && fail "max-size setting not applied" || ok
grep -q 'docs/n15.md' "$T/l1" && ok || fail "the index lists no docs/n15.md: $(head -5 "$T/l1")"
(cd "$R" && "$F" index -q --index "$IX" --no-ignore --max-size 100000 .)
"$F" list --index "$IX" | cut -f1 | sort | cmp -s - "$T/l0" && ok || fail "--no-ignore and --max-size do not win"
expect_rc 0 "$F" verify --index "$IX"

# a new folder: setting a value creates the index with it, set before
# the first documents (the corpus embedder's seed, read when it trains)
N=$T/new
expect_err 'no index here' "$F" config --index "$N" k
expect_err 'no index here' "$F" optimize --index "$N"
expect_err 'no index here' "$F" config --index "$N" --unset k
[ ! -e "$N" ] && ok || fail "a failed command left $N behind"
mkdir "$N"
expect_err 'no index here' "$F" delete --index "$N" x
[ ! -e "$N/LOCK" ] && ok || fail "delete on a folder without an index left a LOCK file"
expect_rc 0 "$F" config --index "$N" embedder.seed 7
expect_out '^7$' "$F" config --index "$N" embedder.seed
expect_out '^documents +0$' "$F" stats --index "$N"
expect_err "embedder.seed wants an integer from 0 to 4294967295" "$F" config --index "$N" -- embedder.seed -3

# help and completions list the settings from the library's table
expect_out 'weight\.title' "$F" help config
expect_out 'grep-max-size' "$F" completion bash
expect_out '^.fBweight.title.fR$' "$F" help --man

# kill -9 during config commits: the old value or the new, never torn
for run in $(seq 1 20); do
	"$F" config --index "$IX" k 42 > /dev/null 2>&1 &
	pid=$!
	sleep "0.00$((RANDOM % 10))"
	kill -9 $pid 2> /dev/null; wait $pid 2> /dev/null
	"$F" verify --index "$IX" > "$T/v" 2>&1 || fail "run $run: verify: $(cat "$T/v")"
	v=$("$F" config --index "$IX" k)
	case $v in 10 | 42) ok ;; *) fail "run $run: k is '$v'" ;; esac
	"$F" config --index "$IX" --unset k > /dev/null 2>&1 || fail "run $run: writer after the kill failed"
done
finish
