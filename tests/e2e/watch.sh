#!/usr/bin/env bash
# Watch mode: `fathom index --watch` and `fathom serve --watch` keep the
# index current as files are created, changed, renamed and deleted
# (folders created later included), .gitignore still applies, the index's
# own folder inside the tree does not wake the watcher, other writers go on
# between batches, and /metrics shows the delay.
source "$(dirname "$0")/lib.sh"
[ -d /proc/sys/fs/inotify ] || { echo "skip: no inotify"; exit 77; }
R=$T/tree
mkdir -p "$R/docs"
printf '*.log\n' > "$R/.gitignore"
printf 'alpha aardvark\n' > "$R/docs/a.md"
printf 'beta badger\n' > "$R/docs/b.md"
IX=$R/.fathom    # inside the watched tree on purpose

# until PATTERN is (or, with -n, is not) in the output of CMD, for up to 10 s
until_out() {
	local neg=0; [ "$1" = -n ] && { neg=1; shift; }
	local pat=$1; shift
	for _ in $(seq 1 100); do
		if "$@" 2> /dev/null | grep -Eq -- "$pat"; then [ $neg = 0 ] && return 0
		else [ $neg = 1 ] && return 0; fi
		sleep 0.1
	done
	return 1
}
ids() { "$F" search --index "$IX" --json -k 20 "$1" 2> /dev/null | grep -o '"id":"[^"]*"' | sort | tr '\n' ' '; }
gen() { "$F" stats --index "$IX" | awk '/^generation/ {print $2}'; }

(cd "$R" && exec "$F" index --index "$IX" --watch --debounce 0.1 .) 2> "$T/watch.err" &
WP=$!
trap 'kill -9 $WP $PID 2> /dev/null; rm -rf "$T"' EXIT
until_out "watching" cat "$T/watch.err" && ok || fail "index --watch did not start: $(cat "$T/watch.err")"

printf 'gamma gazelle\n' > "$R/docs/c.md"
until_out '"docs/c.md"' ids gazelle && ok || fail "a new file is not found"
printf 'alpha anteater\n' > "$R/docs/a.md"
until_out '"docs/a.md"' ids anteater && ok || fail "a changed file: new words not found"
[ -z "$(ids aardvark)" ] && ok || fail "a changed file: old words still found: $(ids aardvark)"
mv "$R/docs/b.md" "$R/docs/b2.md"
until_out '"docs/b2.md"' ids badger && ok || fail "a renamed file is not found under its new name"
[ "$(ids badger)" = '"id":"docs/b2.md" ' ] && ok || fail "the old name stays: $(ids badger)"
rm "$R/docs/c.md"
until_out -n gazelle ids gazelle && ok || fail "a deleted file is still found"
mkdir -p "$R/new/deeper"
printf 'delta dingo\n' > "$R/new/deeper/d.md"
until_out '"new/deeper/d.md"' ids dingo && ok || fail "a file in a new folder is not found"
printf 'epsilon emu\n' > "$R/new/deeper/e.log"
printf 'zeta zebu\n' > "$R/new/z.md"
until_out '"new/z.md"' ids zebu && ok || fail "a second file in a new folder"
[ -z "$(ids emu)" ] && ok || fail ".gitignore ignored under watch: $(ids emu)"
# other writers go on between batches
printf '{"id":"j1","body":"jsonl jackal"}\n' > "$T/j.jsonl"
expect_rc 0 "$F" add -q --index "$IX" "$T/j.jsonl"
printf 'eta elk\n' > "$R/docs/h.md"
until_out '"docs/h.md"' ids elk && ok || fail "watch after another writer"
[ "$(ids jackal)" = '"id":"j1" ' ] && ok || fail "a JSON document removed by the watcher: $(ids jackal)"
# quiet: the index's own commits do not wake the watcher
sleep 0.5; g1=$(gen); sleep 1; g2=$(gen)
[ -n "$g1" ] && [ "$g1" = "$g2" ] && ok || fail "the watcher commits with nothing changed ($g1 -> $g2)"
kill -INT $WP; wait $WP; rc=$?
[ $rc = 0 ] && grep -q "watch stopped" "$T/watch.err" && ok || fail "SIGINT: exit $rc, $(tail -2 "$T/watch.err")"
"$F" verify --index "$IX" > /dev/null 2>&1 && ok || fail "index does not verify after watching"

# serve --watch: changes made while nothing watched are caught up at start
printf 'theta tapir\n' > "$R/docs/t.md"
rm -f "$IX/SERVE"
(cd "$R" && exec "$F" serve --index "$IX" --listen 127.0.0.1:0 --watch . --debounce 0.1) 2> "$T/serve.err" &
PID=$!
for _ in $(seq 1 100); do [ -s "$IX/SERVE" ] && break; sleep 0.05; done
U=$(cut -d' ' -f1 "$IX/SERVE")
sq() { curl -s -X POST "$U/search" -H 'Content-Type: application/json' --data-binary "{\"query\":\"$1\"}"; }
until_out '"docs/t.md"' sq tapir && ok || fail "serve --watch: changes before the start"
printf 'iota ibex\n' > "$R/new/i.md"
until_out '"new/i.md"' sq ibex && ok || fail "serve --watch: a new file"
m=$(curl -s "$U/metrics")
echo "$m" | grep -Eq '^fathom_watch_batches_total\{result="ok"\} [1-9]' && ok || fail "watch batches not counted"
echo "$m" | grep -Eq '^fathom_watch_last_delay_seconds 0\.[0-9]*[1-9]' && ok || fail "watch delay not in /metrics"
echo "$m" | grep -Eq '^fathom_watch_folders [1-9]' && ok || fail "watched folders not in /metrics"
# the CLI writes through the daemon meanwhile
printf '{"id":"j2","body":"jsonl jerboa"}\n' > "$T/j2.jsonl"
expect_err "through $U" "$F" add --index "$IX" "$T/j2.jsonl"
until_out '"j2"' sq jerboa && ok || fail "add through a watching daemon"
kill -TERM $PID; wait $PID
"$F" verify --index "$IX" > /dev/null 2>&1 && ok || fail "index does not verify after serve --watch"
finish
