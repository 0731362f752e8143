#!/usr/bin/env bash
# End-to-end: the fathom command on a small fixture tree — ingest rules,
# search modes and output, filters, get, incremental re-indexing, JSONL.
source "$(dirname "$0")/lib.sh"
R=$T/tree; IX=$T/ix
mkdir -p "$R/docs" "$R/src" "$R/.git/objects" "$R/build" "$R/deep/er"
cat > "$R/docs/auth.md" <<'MD'
# Authentication guide

How users sign in.

## Rate limiting

Login attempts are throttled: five failures lock the account for a minute.

## Tokens

```
token = issue_token(user)
```

The refresh token rotates on every use.
MD
cat > "$R/src/user.c" <<'C'
#include <stdio.h>

/* Look a user up by id. */
const char *getUserName(int id)
{
	return id == 1 ? "root" : "nobody";
}

int parse_http_request(const char *buf)
{
	return buf[0] == 'G';
}
C
cat > "$R/src/server.py" <<'PY'
def handle_login(request):
    """Check the password and open a session."""
    return request.user is not None
PY
printf 'ignored.txt\nbuild/\n' > "$R/.gitignore"
echo "secret words zebra" > "$R/ignored.txt"
echo "built artefact zebra" > "$R/build/out.txt"
echo "inside git zebra" > "$R/.git/objects/x"
printf 'binary\0data zebra' > "$R/src/blob.bin"
head -c 300000 /dev/zero | tr '\0' 'a' > "$R/big.txt"
echo "中华人民共和国 的 首都 是 北京" > "$R/docs/zh.txt"
echo "nested quokka notes" > "$R/deep/er/notes.txt"
ln -s .. "$R/deep/er/loop"

expect_rc 0 "$F" index --index "$IX" --max-size 100k --grep-max-size 0 --meta library=demo --meta version=1.0 "$R"
expect_err "1 binary" "$F" index --index "$T/ix2" --max-size 100k "$R"
expect_err "over the size cap" "$F" index --index "$T/ix3" --max-size 100k --grep-max-size 0 "$R"
# Over --max-size but not --grep-max-size: in grep, not in search; get reads it from disk.
expect_err "1 for grep alone \(over --max-size\)" "$F" index --index "$T/ix7" --max-size 100k "$R"
expect_out "big.txt" "$F" grep --index "$T/ix7" -l 'a{50}'
expect_rc 1 "$F" search --index "$T/ix7" aaaaaaaaaa
n=$("$F" get --index "$T/ix7" "$R/big.txt" | tr -d '\n' | tr -d a | wc -c; "$F" get --index "$T/ix7" "$R/big.txt" | wc -c)
[ "$n" = "$(printf '0\n300001')" ] && ok || fail "get of a grep-only file: not the file's bytes ($n)"
expect_err "skip .*ignored.txt: ignored" "$F" index --index "$T/ix4" -v "$R"
expect_err "skip .*\.git: version-control" "$F" index --index "$T/ix5" -v "$R"
expect_err "symlink loop" "$F" index --index "$T/ix6" -v "$R"

# What was indexed: not the ignored, VCS, binary or too-big files.
expect_out "docs/auth.md" "$F" list --index "$IX"
expect_no_out "ignored.txt|build/out.txt|blob.bin|big.txt|\.git/" "$F" list --index "$IX"
expect_rc 1 "$F" search --index "$IX" zebra
expect_err "^fathom: no results" "$F" search --index "$IX" zebra
[ -s "$T/.out" ] && fail "no results: stdout holds $(cat "$T/.out")" || ok

# Search: headings, code identifiers, CJK, snippets, JSON.
expect_out "auth.md:[0-9]+: " "$F" search --index "$IX" "throttled"
expect_out "Authentication guide" "$F" search --index "$IX" "rate limiting"
expect_out "user.c" "$F" search --index "$IX" getUserName
expect_out "user.c" "$F" search --index "$IX" "user name"
expect_out "user.c" "$F" search --index "$IX" "http request"
expect_out "server.py" "$F" search --index "$IX" handle_login
expect_out "zh.txt" "$F" search --index "$IX" "北京"
expect_out "zh.txt" "$F" search --index "$IX" "人民"
# lenient by default: an unclosed '(' is read literally and --explain says so;
# --strict keeps the syntax error and its column
expect_out "Authentication guide" "$F" search --index "$IX" "rate (limiting"
expect_out "^read literally: unclosed '\(' at column 6" "$F" search --index "$IX" --explain "rate (limiting"
expect_rc 2 "$F" search --index "$IX" --strict "rate (limiting"
"$F" search --index "$IX" --strict "rate (limiting" 2>&1 | grep -q "column 6: this '(' is never closed" && ok ||
	fail "--strict: no syntax error with its column"
expect_out '"id":"[^"]*auth.md".*"lines":\[[0-9]+,[0-9]+\].*"score":[0-9.]+.*"matched":\{[^}]*"body":\["throttl' \
	"$F" search --index "$IX" --json throttled
expect_out '"highlights":\[\[[0-9]+,[0-9]+\]' "$F" search --index "$IX" --json "refresh token"
expect_out "score .* = .*body" "$F" search --index "$IX" --explain "refresh token"

# Matching modes: the default never starves (words in different files, none
# holding both, still answer, and the receipt names the word each lacks);
# --match all requires every word.
expect_rc 0 "$F" search --index "$IX" "refresh quokka"
expect_out "missing +refresh" "$F" search --index "$IX" --explain "refresh quokka"
expect_rc 0 "$F" search --index "$IX" --match any "refresh quokka"
expect_rc 1 "$F" search --index "$IX" --match all "refresh quokka"
expect_out "notes.txt" "$F" search --index "$IX" "where could I find the nested quokka notes and other useful docs"
# Phrases are exact. Under the default, a phrase no chunk holds is read as
# its words, and the receipt says so; --match all and --strict keep it.
expect_rc 0 "$F" search --index "$IX" '"refresh token rotates"'
expect_rc 1 "$F" search --index "$IX" --match all '"token refresh rotates"'
expect_rc 1 "$F" search --index "$IX" --strict '"token refresh rotates"'
expect_out "read literally: the quotes of a phrase that no chunk holds at column 1" \
	"$F" search --index "$IX" --explain '"token refresh rotates"'

# Filters before ranking.
expect_rc 0 "$F" search --index "$IX" --filter library=demo token
expect_rc 1 "$F" search --index "$IX" --filter library=other token
expect_rc 1 "$F" search --index "$IX" --filter version=2.0 token
expect_out "server.py" "$F" search --index "$IX" --lang python login
expect_rc 1 "$F" search --index "$IX" --lang c login
expect_out "user.c" "$F" search --index "$IX" --path '*.c' user
expect_rc 1 "$F" search --index "$IX" --path 'docs/*' getUserName

# get: whole document, a line range, errors.
expect_out "^# Authentication guide" "$F" get --index "$IX" "$R/docs/auth.md"
"$F" get --index "$IX" "$R/docs/auth.md:5:3" > "$T/range"
if [ "$(sed -n 1p "$T/range")" = "## Rate limiting" ] && [ "$(wc -l < "$T/range")" -eq 3 ]; then ok; else fail "get range: $(cat "$T/range")"; fi
expect_rc 1 "$F" get --index "$IX" "$R/nope.md"
expect_err "no document" "$F" get --index "$IX" "$R/nope.md"

# Stats and verify.
expect_out "documents +[0-9]+" "$F" stats --index "$IX"
expect_out '"documents":[0-9]+' "$F" stats --index "$IX" --json
expect_rc 0 "$F" verify --index "$IX"

# Incremental: nothing changed -> nothing re-read.
expect_err "indexed 0 documents .*unchanged" "$F" index --index "$IX" --max-size 100k --grep-max-size 0 "$R"
# A change, a removal and a touch without change.
echo "a brand new wombat paragraph" >> "$R/docs/auth.md"
rm "$R/src/server.py"
touch -d '2001-01-01' "$R/docs/zh.txt"
expect_err "indexed 1 documents .*1 removed" "$F" index --index "$IX" --max-size 100k --grep-max-size 0 "$R"
expect_out "auth.md" "$F" search --index "$IX" wombat
expect_rc 1 "$F" search --index "$IX" handle_login
expect_out "zh.txt" "$F" search --index "$IX" "北京"

# JSON lines, stdin, bad lines reported with their line number.
cat > "$T/docs.jsonl" <<'J'
{"id": "d1", "title": "Kestrel tuning", "body": "Set the worker count.", "library": "fastapi", "version": "0.110", "tags": ["perf"]}
{"_id": "d2", "title": "Other", "text": "Nothing about birds."}
not json at all
{"id": 3, "title": "Numeric id", "text": "Numbers become strings."}
J
expect_err "docs.jsonl:3" "$F" add --index "$T/j" --jsonl "$T/docs.jsonl"
expect_out "Kestrel tuning" "$F" search --index "$T/j" kestrel
expect_rc 0 "$F" search --index "$T/j" --filter library=fastapi --filter version=0.110 worker
expect_rc 1 "$F" search --index "$T/j" --filter version=0.111 worker
expect_rc 0 "$F" search --index "$T/j" perf
expect_out "Numbers become" "$F" get --index "$T/j" 3
echo '{"id":"s1","text":"piped platypus"}' | "$F" add --index "$T/j" --jsonl - -q
expect_out "s1" "$F" search --index "$T/j" platypus

# A progress line on a terminal (files, MB/s), none when piped.
if command -v script >/dev/null; then
	script -qec "$F index --index $T/ixp $R" /dev/null > "$T/tty.out" 2>&1
	grep -q "files, .* MB/s" "$T/tty.out" && ok || fail "no progress line on a terminal"
	"$F" index --index "$T/ixq" "$R" 2> "$T/pipe.err" >/dev/null
	grep -q "MB/s" "$T/pipe.err" && fail "progress line printed into a pipe" || ok
fi

# optimize: one segment, nothing deleted left, the same answers.
for i in 1 2 3; do echo "{\"id\":\"o$i\",\"text\":\"osprey number $i\"}" | "$F" add -q --index "$T/o" --jsonl -; done
expect_out "segments +3" "$F" stats --index "$T/o"
"$F" delete --index "$T/o" o2
"$F" search --index "$T/o" --json osprey > "$T/o.before"
expect_out "optimized: 1 segment" "$F" optimize --index "$T/o"
expect_out "segments +1" "$F" stats --index "$T/o"
expect_out "chunks +2 \(0 deleted" "$F" stats --index "$T/o"
"$F" search --index "$T/o" --json osprey > "$T/o.after"
sed 's/"chunk_id":[0-9]*//g' "$T/o.before" > "$T/o.b"; sed 's/"chunk_id":[0-9]*//g' "$T/o.after" > "$T/o.a"
cmp -s "$T/o.b" "$T/o.a" && ok || fail "optimize changed the results"
expect_rc 0 "$F" verify --index "$T/o"
expect_rc 2 "$F" optimize --index "$T/none"

# Exact identifiers: the vocabulary, and the filter in every spelling.
cat > "$T/ids.jsonl" <<'J'
{"id":"i1","text":"Run TC-1001 before JIRA-4521 lands in v2.0.1"}
{"id":"i2","text":"tc_1002 and TC1001 fail with ENOENT"}
{"id":"i3","text":"TC-10010 is another case"}
{"id":"i4","text":"CD169+ macrophages present lipid antigens"}
{"id":"i5","text":"sinus CD169(+) macrophages retained antigen"}
J
"$F" add -q --index "$T/ids" --jsonl "$T/ids.jsonl"
expect_out "tc-1001 +testcase +2 +2  TC-1001, TC1001  \(first: i1\)" "$F" vocab --index "$T/ids" tc-1001
expect_out "jira-4521 +ticket" "$F" vocab --index "$T/ids" --category ticket
expect_rc 1 "$F" vocab --index "$T/ids" --category version 3
expect_rc 2 "$F" vocab --index "$T/ids" --category nonsense
expect_out '"key":"2.0.1","category":"version"' "$F" vocab --index "$T/ids" --json
for q in "TC-1001" "tc_1001" "TC 1001" "tc1001"; do
	"$F" search --index "$T/ids" --json "$q" > "$T/idq.json"
	grep -q '"id":"i3"' "$T/idq.json" && fail "$q matched TC-10010" || ok
	grep -q '"id":"i1"' "$T/idq.json" && grep -q '"id":"i2"' "$T/idq.json" && ok || fail "$q missed a spelling"
	grep -q '"filter":true' "$T/idq.json" && ok || fail "$q: no identifier receipt"
done
expect_out "TC-9999 .*occurs nowhere: filter dropped" "$F" search --index "$T/ids" --explain "TC-9999"
expect_err "no results: identifier TC-9999 occurs in no document" "$F" search --index "$T/ids" "TC-9999"
expect_err 'no results: "kubernetes" occurs in no document' "$F" search --index "$T/ids" kubernetes
# one identifier in two roles: one key, one vocabulary entry, both found
expect_out "cd-169 +function,model +2 +2  CD169" "$F" vocab --index "$T/ids" CD169
expect_out '"key":"cd-169","category":"function","categories":\["function","model"\]' "$F" vocab --index "$T/ids" --json CD169
"$F" search --index "$T/ids" --json "CD169 macrophages" > "$T/idq.json"
grep -q '"id":"i4"' "$T/idq.json" && grep -q '"id":"i5"' "$T/idq.json" && ok || fail "CD169 missed a role"
# an identifier whose chunks hold none of the other words: the answer names both
expect_err 'no results: identifier CD169 occurs in 2 chunks, but none of them has "kubernetes" \("kubernetes" occurs in no document\)' "$F" search --index "$T/ids" "CD169 AND kubernetes"
expect_out '"why":"identifier CD169 occurs in 2 chunks, but none of them has \\"lands\\""' "$F" search --index "$T/ids" --json --match all "CD169 lands"
"$F" add -q --index "$T/ids2" --jsonl "$T/ids.jsonl" --ident-max 1
[ "$("$F" vocab --index "$T/ids2" | wc -l)" -eq 5 ] && ok || fail "--ident-max 1 kept more than one per chunk"
expect_rc 1 "$F" search --index "$T/ids" --explain "TC-9999"

# Errors are clear and exit 2.
expect_rc 2 "$F" search --index "$T/none" anything
expect_err "cannot open index" "$F" search --index "$T/none" anything
expect_rc 2 "$F" search --index "$IX" -k 0 x
expect_rc 2 "$F" bogus
expect_rc 2 "$F" index --index "$IX" --meta novalue "$R"
# a first add that fails leaves no index behind; a failed add to an index
# that was there keeps it
expect_rc 2 "$F" add -q --index "$T/failed" --jsonl "$T/no-such.jsonl"
[ ! -e "$T/failed" ] && ok || fail "a failed first add left $T/failed behind"
expect_rc 2 "$F" add -q --index "$IX" --jsonl "$T/no-such.jsonl"
expect_out '"id"' "$F" search --index "$IX" -k 1 --json authentication
finish
