#!/usr/bin/env bash
# Indexes of formats 5 and 6, written by earlier releases and kept in
# tests/data, open, search, grep and `get` without a rebuild; the next
# commit, or `fathom optimize`, upgrades them to format 7, and they verify.
source "$(dirname "$0")/lib.sh"
DATA=$(cd "$(dirname "$0")/../data" && pwd)
manifest_version() { od -An -tu4 -j8 -N4 "$1/MANIFEST" | tr -d ' '; }
segment_versions() { for s in "$1"/seg-*.fseg; do od -An -tu4 -j8 -N4 "$s" | tr -d ' '; done | sort -u | tr '\n' ' '; }

# Format 6, read as it is (a copy: reading must not write).
cp -r "$DATA/index-v6" "$T/v6"
cp -r "$DATA/index-v6-src" "$T/src"
expect_out "^[^ ]*guide\.md:[0-9]+: Fathom v6 guide " "$F" search --index "$T/v6" -k 1 authentication
expect_out "glossary: auth -> \(auth \| authentication \| sign in\)" "$F" search --index "$T/v6" --explain auth
expect_rc 1 "$F" search --index "$T/v6" xylophone       # a deleted JSON document
expect_rc 1 "$F" search --index "$T/v6" quetzalcoatl    # a deleted file
# a call's key ended in "()" before keys left the category: still found
expect_out "^[^ ]*sched\.c:[0-9]+: " "$F" search --index "$T/v6" -k 1 "pick_next_task()"
expect_out "identifier pickNextTask\(\) \(function, key picknexttask\): only the 1 chunk" "$F" search --index "$T/v6" --explain "pickNextTask()"
expect_out "^picknexttask +function +1 +1  pick_next_task" "$F" vocab --index "$T/v6"
expect_out "^The throttle and the quota" "$F" get --index "$T/v6" v6-a
expect_out "^The kernel scheduler" "$F" get --index "$T/v6" docs/notes.txt
expect_out "auth = authentication = sign in" "$F" glossary --index "$T/v6" list
# grep reads the files: from their folder (the indexed root is gone).
(cd "$T/src" && "$F" grep --index "$T/v6" "kernel sched") > "$T/grep.out" 2>&1
grep -q "^docs/notes.txt:1:The kernel scheduler" "$T/grep.out" && grep -q "^src/sched.c:4:" "$T/grep.out" && ok ||
	{ fail "grep on format 6"; cat "$T/grep.out"; }
expect_rc 0 "$F" verify --index "$T/v6"
[ "$(manifest_version "$T/v6")" = 6 ] && ok || fail "a reader changed the format 6 manifest"
cmp -s "$T/v6/MANIFEST" "$DATA/index-v6/MANIFEST" && ok || fail "a reader rewrote MANIFEST"

# The next commit (here: a new document) upgrades the manifest and moves the
# glossary to a payload file; old segments stay as they are.
echo '{"id":"v7-new","text":"Written after the upgrade: zeppelin."}' > "$T/new.jsonl"
expect_rc 0 "$F" add -q --index "$T/v6" --jsonl "$T/new.jsonl"
[ "$(manifest_version "$T/v6")" = 7 ] && ok || fail "commit did not upgrade the manifest"
ls "$T/v6" | grep -q '\.fglo$' && fail "the format 6 glossary file is left" || ok
ls "$T/v6" | grep -q '^glossary\.[0-9]*\.fpay$' && ok || fail "no glossary payload file"
[ "$(segment_versions "$T/v6")" = "6 7 " ] && ok || fail "segments: $(segment_versions "$T/v6")"
expect_rc 0 "$F" verify --index "$T/v6"
expect_out "auth = authentication = sign in" "$F" glossary --index "$T/v6" list
expect_out "^[^ ]*guide\.md:[0-9]+: Fathom v6 guide " "$F" search --index "$T/v6" -k 1 authentication
expect_out "zeppelin" "$F" get --index "$T/v6" v7-new
# optimize rewrites every segment as format 7.
expect_rc 0 "$F" optimize --index "$T/v6"
[ "$(segment_versions "$T/v6")" = "7 " ] && ok || fail "after optimize: $(segment_versions "$T/v6")"
expect_rc 0 "$F" verify --index "$T/v6"
expect_out "^The throttle and the quota" "$F" get --index "$T/v6" v6-a
expect_out "glossary: auth -> \(auth \| authentication \| sign in\)" "$F" search --index "$T/v6" --explain auth

# Format 5: read, then `fathom optimize` alone upgrades it.
cp -r "$DATA/index-v5" "$T/v5"
expect_out "v5-c" "$F" list --index "$T/v5"
expect_out "^The replacement text" "$F" get --index "$T/v5" v5-c
expect_out "^v5-[ab]:1: " "$F" search --index "$T/v5" kernel scheduler
expect_rc 0 "$F" verify --index "$T/v5"
expect_rc 0 "$F" optimize --index "$T/v5"
[ "$(manifest_version "$T/v5")" = 7 ] && ok || fail "optimize did not upgrade the manifest"
[ "$(segment_versions "$T/v5")" = "7 " ] && ok || fail "after optimize: $(segment_versions "$T/v5")"
expect_rc 0 "$F" verify --index "$T/v5"
expect_out "^The replacement text" "$F" get --index "$T/v5" v5-c
expect_out "^v5-[ab]:1: " "$F" search --index "$T/v5" kernel scheduler

# Settings on an index of format 5 (no named values): the defaults; the
# first `fathom config` is the commit that upgrades it, and keeps the rest.
cp -r "$DATA/index-v5" "$T/v5s"
expect_out '^k += 10 \(default\)$' "$F" config --index "$T/v5s"
expect_rc 0 "$F" config --index "$T/v5s" k 1
[ "$(manifest_version "$T/v5s")" = 7 ] && ok || fail "config did not upgrade the manifest"
expect_out '^1$' "$F" config --index "$T/v5s" k
expect_out '^v5-c:1: ' "$F" search --index "$T/v5s" replacement
expect_out '"count": *1[,}]' "$F" search --index "$T/v5s" --json replacement
expect_out "v5-c" "$F" list --index "$T/v5s"
expect_rc 0 "$F" verify --index "$T/v5s"

echo "$checks checks, $fails failures"
[ "$fails" -eq 0 ]
