#!/usr/bin/env bash
# A full disk: the index on a 3 MiB tmpfs, then more than fits. The write
# fails with a clear error (no space), nothing is half-committed, the index
# verifies and answers as before, the space is given back, and the next
# small write succeeds; through the CLI and through the daemon (whose
# /health stays green).
# The tmpfs is mounted in a private mount namespace (unshare -m as root,
# unshare -rm otherwise); where neither is allowed the test skips.
if [ -z "${FATHOM_DISKFULL_NS:-}" ]; then
	command -v unshare > /dev/null || { echo "skip: no unshare (util-linux)"; exit 77; }
	export FATHOM_DISKFULL_NS=1
	if [ "$(id -u)" = 0 ]; then
		exec unshare -m bash "$0" "$@"
	fi
	unshare -rm true 2> /dev/null || { echo "skip: cannot make a mount namespace for a tmpfs (not root, no user namespaces)"; exit 77; }
	exec unshare -rm bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
command -v curl > /dev/null || { echo "skip: no curl"; exit 77; }
command -v jq > /dev/null || { echo "skip: no jq"; exit 77; }
mkdir -p "$T/full"
mount -t tmpfs -o size=3m tmpfs "$T/full" 2> "$T/mount.err" || { echo "skip: cannot mount a tmpfs: $(cat "$T/mount.err")"; exit 77; }
trap 'kill -9 ${PID:-} 2> /dev/null; umount "$T/full" 2> /dev/null; rm -rf "$T"' EXIT
IX=$T/full/ix
for i in $(seq 1 20); do printf '{"id":"s%d","body":"small document %d about otters"}\n' "$i" "$i"; done > "$T/small.jsonl"
# 6 MiB of random bytes as base64 lines: too much for 3 MiB, compressed or not
head -c 6291456 /dev/urandom | base64 -w 2000 | awk '{ printf "{\"id\":\"b%d\",\"body\":\"%s\"}\n", NR, $0 }' > "$T/big.jsonl"
expect_rc 0 "$F" add -q --index "$IX" "$T/small.jsonl"
before=$("$F" search --index "$IX" -k 50 --json otters | jq .count)
used0=$(du -sk "$IX" | cut -f1)

# the CLI
expect_rc 2 "$F" add -q --index "$IX" "$T/big.jsonl"
grep -q "No space left on device" "$T/.err" && ok || fail "no clear error: $(cat "$T/.err")"
"$F" verify --index "$IX" > /dev/null 2>&1 && ok || fail "index does not verify after a full disk"
[ "$("$F" search --index "$IX" -k 50 --json otters | jq .count)" = "$before" ] && ok || fail "answers changed after a failed write"
[ "$("$F" stats --index "$IX" | awk '/^documents/ {print $2}')" = 20 ] && ok || fail "a failed write left documents behind"
used1=$(du -sk "$IX" | cut -f1)
[ "$used1" -le $((used0 + 64)) ] && ok || fail "the failed write's files are left behind (${used0} KiB -> ${used1} KiB)"
printf '{"id":"after","body":"written after the failure"}\n' | expect_rc 0 "$F" add -q --index "$IX" -
"$F" search --index "$IX" failure | grep -q after && ok || fail "a small write after the failure"

# the daemon
serve_start
s=$(curl -s -o "$T/b" -w '%{http_code}' -X POST "$U/documents" -H 'Content-Type: application/json' --data-binary @"$T/big.jsonl")
[ "$s" = 500 ] && jq -e '.error.message | test("No space left")' "$T/b" > /dev/null && ok || fail "daemon: status $s, $(head -c 300 "$T/b")"
s=$(curl -s -o "$T/b" -w '%{http_code}' "$U/health")
[ "$s" = 200 ] && jq -e '.status == "ok"' "$T/b" > /dev/null && ok || fail "health after a full disk: $s"
s=$(curl -s -o "$T/b" -w '%{http_code}' -X POST "$U/search" -H 'Content-Type: application/json' --data-binary '{"query":"otters","k":50}')
[ "$s" = 200 ] && [ "$(jq .count "$T/b")" = "$before" ] && ok || fail "daemon search after a full disk"
s=$(curl -s -o "$T/b" -w '%{http_code}' -X POST "$U/documents" -H 'Content-Type: application/json' --data-binary '{"id":"after2","body":"second recovery"}')
[ "$s" = 200 ] && ok || fail "daemon: a small write after the failure: $s $(cat "$T/b")"
serve_stop
"$F" verify --index "$IX" > /dev/null 2>&1 && ok || fail "index does not verify after the daemon's full disk"
[ "$("$F" stats --index "$IX" | awk '/^documents/ {print $2}')" = 22 ] && ok || fail "documents after recovery"
finish
