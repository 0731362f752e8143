#!/usr/bin/env bash
# The CLI's writes while a daemon holds the index: index, add, delete,
# glossary and optimize go through it (SERVE names it) instead of failing on
# the lock; keys come out as a local run would make them; paths outside the
# root are refused without a token; a token daemon is reached with the token
# from its file; a daemon killed with -9 leaves a stale SERVE that is ignored.
source "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || { echo "skip: no curl"; exit 77; }
command -v jq > /dev/null || { echo "skip: no jq"; exit 77; }
R=$T/tree
mkdir -p "$R/docs/sub" "$T/outside"
printf '# Alpha\n\nalpha zebra notes\n' > "$R/docs/a.md"
printf 'beta walrus\n' > "$R/docs/sub/b.md"
printf 'outside platypus\n' > "$T/outside/o.md"
(cd "$R" && "$F" index -q --index "$T/ix" .)

start() { serve_start "$@"; }
stop() { serve_stop; }
trap 'kill -9 $PID 2> /dev/null; rm -rf "$T"' EXIT
search() { curl -s -X POST "$U/search" -H "Authorization: Bearer ${TOKEN:-}" -H 'Content-Type: application/json' --data-binary "{\"query\":\"$1\",\"k\":20}"; }
keys() { "$F" list --index "$T/ix" | cut -f1 | sort | tr '\n' ' '; }

start
# without the daemon the lock would fail the write; with it, it goes through
printf 'gamma quokka\n' > "$R/docs/sub/c.md"
(cd "$R/docs/sub" && expect_err "indexing through $U" "$F" index --index "$T/ix" .)
[ "$(search quokka | jq -r '.results[0].id')" = "docs/sub/c.md" ] && ok || fail "index through the daemon: $(search quokka)"
echo "$(keys)" | grep -q "docs/sub/c.md " && ok || fail "key from a subfolder: $(keys)"
# a relative path that leaves the root from inside it, and a removed file
rm "$R/docs/sub/b.md"
(cd "$R/docs/sub" && expect_rc 0 "$F" index -q --index "$T/ix" ../sub)
[ "$(search walrus | jq '.count')" = 0 ] && ok || fail "removed file still found: $(search walrus)"
# without a token, the daemon reads nothing outside the index's root
(cd "$T" && expect_rc 2 "$F" index -q --index "$T/ix" outside)
grep -q "outside the index's root" "$T/.err" && ok || fail "outside path: $(cat "$T/.err")"
[ "$(search platypus | jq '.count')" = 0 ] && ok || fail "outside file indexed"
# options travel: --meta, chunk sizes
printf '{"id":"j1","title":"one","body":"narwhal one"}\n{bad line\n{"id":"j2","body":"narwhal two"}\n' > "$T/d.jsonl"
expect_err "skipped .*:2" "$F" add --index "$T/ix" --meta library=zoo "$T/d.jsonl"
r=$(curl -s -X POST "$U/search" -H 'Content-Type: application/json' --data-binary '{"query":"narwhal","filters":{"library":"zoo"}}')
[ "$(echo "$r" | jq -c '[.results[].id] | sort')" = '["j1","j2"]' ] && ok || fail "add with --meta: $r"
[ "$(curl -s "$U/sources" | jq '.metadata.library.zoo')" = 2 ] && ok || fail "sources lacks library=zoo: $(curl -s "$U/sources")"
printf '{"id":"j3","body":"narwhal three"}\n' | expect_rc 0 "$F" add -q --index "$T/ix" -
[ "$(search narwhal | jq '.count')" = 3 ] && ok || fail "add from stdin: $(search narwhal)"
# the options reach the ingest: a small chunk target cuts a long body into
# several chunks; an unknown or out-of-range option is refused
body=$(printf 'sentence number %d about chunking here. ' $(seq 1 40))
r=$(curl -s -X POST "$U/documents?chunk_target=200&chunk_max=300" -H 'Content-Type: application/json' --data-binary "{\"id\":\"long1\",\"body\":\"$body\"}")
[ "$(echo "$r" | jq '.chunks')" -gt 3 ] && ok || fail "chunk_target not applied: $r"
s=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/documents?chunk_targte=200" -H 'Content-Type: application/json' --data-binary '{"id":"x","body":"y"}')
[ "$s" = 400 ] && ok || fail "unknown document option: $s"
s=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U/index" -H 'Content-Type: application/json' --data-binary '{"paths":["docs"],"options":{"gitignore":"maybe"}}')
[ "$s" = 400 ] && ok || fail "bad boolean option: $s"
expect_rc 0 "$F" delete -q --index "$T/ix" j1
[ "$(search narwhal | jq -c '[.results[].id] | sort')" = '["j2","j3"]' ] && ok || fail "delete through the daemon"
expect_rc 2 "$F" delete -q --index "$T/ix" no-such-doc
expect_out "^group [0-9]+" "$F" glossary --index "$T/ix" add narwhal unicorn
[ "$(search unicorn | jq '.count')" = 2 ] && ok || fail "glossary add through the daemon: $(search unicorn)"
expect_rc 0 "$F" glossary --index "$T/ix" remove narwhal
[ "$(search unicorn | jq '.count')" = 0 ] && ok || fail "glossary remove through the daemon"
expect_rc 0 "$F" glossary --index "$T/ix" protect ZEBRA
expect_out "protected +[0-9]+ +zebra" "$F" glossary --index "$T/ix" list
expect_out "optimized through .*: 1 segment" "$F" optimize --index "$T/ix"
"$F" verify --index "$T/ix" > /dev/null 2>&1 && ok || fail "index does not verify after writes through the daemon"
stop

# a token daemon: the CLI reads the token from the file SERVE names, and
# may index outside the root
printf 's3cret\n' > "$T/token"
start --token-file "$T/token"
grep -q " $T/token\$" "$T/ix/SERVE" && ok || fail "SERVE lacks the token file: $(cat "$T/ix/SERVE")"
(cd "$T" && expect_rc 0 "$F" index -q --index "$T/ix" outside)
TOKEN=s3cret
[ "$(search platypus | jq -r '.results[0].id')" = "$T/outside/o.md" ] && ok || fail "outside path with a token: $(search platypus)"
# a token file the CLI cannot read: a clear error, nothing written
sed -i "s| $T/token\$| $T/missing-token|" "$T/ix/SERVE"
expect_err "wants the token in $T/missing-token" "$F" delete --index "$T/ix" j2
[ "$(search narwhal | jq '.count')" = 2 ] && ok || fail "a failed forward changed the index"
stop

# kill -9 leaves SERVE behind and frees the lock: the CLI writes itself
start
kill -9 "$PID"; wait "$PID" 2> /dev/null
[ -e "$T/ix/SERVE" ] && ok || fail "SERVE should survive kill -9 for this test"
printf '{"id":"j9","body":"manatee"}\n' > "$T/e.jsonl"
expect_rc 0 "$F" add --index "$T/ix" "$T/e.jsonl"
grep -q "through" "$T/.err" && fail "went to a dead daemon" || ok
"$F" search --index "$T/ix" manatee | grep -q j9 && ok || fail "local add after a stale SERVE"

# the per-request time limit covers searches: past it, 504 and no answer
start --timeout 0.000000001
s=$(curl -s -o "$T/b" -w '%{http_code}' -X POST "$U/search" -H 'Content-Type: application/json' --data-binary '{"query":"narwhal"}')
[ "$s" = 504 ] && jq -e '.error.message | test("time limit")' "$T/b" > /dev/null && ok || fail "search past --timeout: $s $(cat "$T/b")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$U/health")" = 200 ] && ok || fail "health with a tiny --timeout"
stop
finish
