#!/usr/bin/env bash
# fathom grep against GNU grep: on a fixture tree, for every pattern below
# (literals, classes, alternations, anchors, repetitions, case-insensitive,
# whole words, Unicode), the (path, line) pairs must be exactly those of
# `grep -rnP` (or -rnF for literals), and the trigram index must have left
# files unread where it could.
source "$(dirname "$0")/lib.sh"
command -v grep > /dev/null || { echo "skip: no grep"; exit 77; }
echo x | grep -qP x 2> /dev/null || { echo "skip: grep has no -P"; exit 77; }
export LC_ALL=C.UTF-8
R=$T/tree
mkdir -p "$R/src/net" "$R/src/fs" "$R/docs" "$R/misc"
cat > "$R/src/net/sock.c" <<'C'
#include <linux/net.h>
static int sock_alloc(struct socket *sock)
{
	if (!sock)
		return ERR_PTR(-ENOMEM);
	spin_lock_irqsave(&sock->lock, flags);
	sock->state = SS_UNCONNECTED;
	spin_unlock_irqrestore(&sock->lock, flags);
	return 0;
}
static const struct proto_ops inet_stream_ops = {
	.family = PF_INET,
};
C
cat > "$R/src/fs/inode.c" <<'C'
#include <linux/fs.h>
struct inode *new_inode(struct super_block *sb)
{
	struct inode *inode = alloc_inode(sb);
	if (IS_ERR(inode))
		return ERR_PTR(-EINVAL);
	return inode; /* TODO: locking */
}
static const struct file_operations def_file_ops = { 0 };
C
cat > "$R/docs/guide.md" <<'M'
# Networking guide

The socket layer allocates a `struct socket` for each open connection.
Use spin_lock_irqsave() when the lock is taken in interrupt context.

## Errors

Functions return ERR_PTR(-ENOMEM) on allocation failure.
Café, naïve, Straße and ΑΒΓ are here for Unicode.
Hello World. hello world. HELLO WORLD.
M
cat > "$R/misc/notes.txt" <<'T'
colour and color
version 2.0.1 and 2.0.10
TC-1001 TC-10010 tc_1001
a+b=c (parenthesised) [bracketed] {braced}
tabs	and  spaces
ends with a dot.
T
# U+017F (long s) and U+212A (Kelvin sign): caseless, they are s and k
printf '\xc5\xbfecret \xc5\xbfauce at 5 \xe2\x84\xaaelvin\n' > "$R/misc/unicode.txt"
for i in $(seq 1 20); do printf 'filler file %d about nothing in particular\nline two %d\n' "$i" "$i" > "$R/misc/f$i.txt"; done
(cd "$R" && "$F" index -q --index "$T/ix" .)

check() {   # MODE PATTERN [grep options]: fathom grep == grep -rn<MODE>
	local mode=$1 pat=$2; shift 2
	local fopt=()
	[ "$mode" = F ] && fopt=(-F)
	(cd "$R" && "$F" grep --index "$T/ix" --color never "${fopt[@]}" "$@" -- "$pat" . ) 2> "$T/err" | cut -d: -f1,2 | sort > "$T/got"
	(cd "$R" && grep -rn"$mode" "$@" -- "$pat" . ) 2> /dev/null | cut -d: -f1,2 | sort > "$T/want"
	if cmp -s "$T/got" "$T/want"; then ok; else
		fail "pattern [$pat] ($mode $*): fathom and grep differ"
		diff "$T/got" "$T/want" | head -5
	fi
}
n=0
for p in ERR_PTR sock 'spin_lock' 'struct socket' 'inode' '#include' 'TODO' 'ENOMEM' 'colour' \
	'2.0.1' 'TC-1001' '(parenthesised)' '[bracketed]' 'a+b=c' 'Café' 'Straße' 'ΑΒΓ' 'ends with a dot.' \
	'filler file 1' 'nothing at all here'; do check F "$p"; n=$((n + 1)); done
for p in 'ERR_PTR\(-E' 'struct \w+_ops' 'spin_(un)?lock' 'colou?r' '^#include' 'ops;?$' '\bsock\b' \
	'2\.0\.1\b' 'TC-1001\b' '[A-Z]{2}-\d+' 'file_op(eration)?s' '\{\s*0\s*\}' 'alloc_\w+\(' \
	'(?i)hello world' 'sock->\w+ = ' 'return [A-Z_]+\(' '^\s+if' 'Stra(ß|ss)e' 'na[ïi]ve' '\d{2}$' \
	'line two 1\d' 'a.b' '.*' 'x{0}y?' 'TODO|FIXME' '(?:inet|file)_\w+_ops' 'é' 'ΑΒ+Γ' \
	'\A\s+return' 'flags\);\z' '\{\Z' 'inode(?!\s)' '(?<=struct )inode' 'lock(?=\()' '\Gstatic' \
	'x\Q\E*inode' 'sock(?#c)+' '[\Q]\E]braced'; do
	check P "$p"; n=$((n + 1))
done
for p in 'hello world' 'ERR_ptr' 'STRUCT inode' 'café' 'secret sauce' 'kelvin' 'SAUCE AT \d'; do check P "$p" -i; n=$((n + 1)); done
for p in 'sock' 'inode' 'lock' '2.0'; do check P "$p" -w; n=$((n + 1)); done
check F 'hello' -i; check F 'ops' -w; n=$((n + 2))
# -w around a pattern with leading settings or an open \Q: as the plain one
(cd "$R" && "$F" grep --index "$T/ix" -w sock .) > "$T/w1"
for p in '(*UCP)sock' '\Qsock' '(*LIMIT_MATCH=100000)(*UCP)sock'; do
	(cd "$R" && "$F" grep --index "$T/ix" -w -- "$p" .) > "$T/w2" 2>&1
	cmp -s "$T/w1" "$T/w2" && [ -s "$T/w1" ] && ok || { fail "-w [$p] differs from -w sock"; head -3 "$T/w2"; }
done
echo "    $n patterns compared with grep"
[ "$n" -ge 40 ] && ok || fail "fewer than 40 patterns"

# The same comparison through other doors: two threads or one, and an index
# built for grep alone (--grep-only) must give the same lines as above.
(cd "$R" && "$F" index -q --grep-only --index "$T/ixg" .)
for p in 'ERR_PTR\(-E' 'struct \w+_ops' 'TODO|FIXME' 'Café' '.*' 'line two 1\d'; do
	(cd "$R" && "$F" grep --index "$T/ix" --color never -j 1 -- "$p" .) > "$T/a" 2>&1
	(cd "$R" && "$F" grep --index "$T/ix" --color never -j 4 -- "$p" .) > "$T/b" 2>&1
	(cd "$R" && "$F" grep --index "$T/ixg" --color never -- "$p" .) > "$T/c" 2>&1
	cmp -s "$T/a" "$T/b" && cmp -s "$T/a" "$T/c" && [ -s "$T/a" ] && ok ||
		fail "[$p]: -j 1, -j 4 and --grep-only outputs differ"
done

# -l and -c as grep -rl and grep -rc (files with a count above 0).
for p in 'sock' 'ERR_PTR' 'TODO|FIXME' 'line two' '\{\Z' 'nothing(?!\s)' '\A\s+return'; do
	(cd "$R" && "$F" grep --index "$T/ix" -l -- "$p" .) | sort > "$T/got"
	(cd "$R" && grep -rlP -- "$p" .) | sort > "$T/want"
	cmp -s "$T/got" "$T/want" && ok || fail "-l [$p] differs from grep -rl"
	(cd "$R" && "$F" grep --index "$T/ix" -c -- "$p" .) | sort > "$T/got"
	(cd "$R" && grep -rcP -- "$p" .) | grep -v ':0$' | sort > "$T/want"
	cmp -s "$T/got" "$T/want" && ok || fail "-c [$p] differs from grep -rc"
done
# Context lines, "--" between groups, as grep -n -H prints them.
for opt in "-C 1" "-A 2" "-B 1" "-C 3"; do
	(cd "$R" && "$F" grep --index "$T/ix" --color never -H $opt -- 'e' docs/guide.md) > "$T/got"
	(cd "$R" && grep -HnP $opt -- 'e' docs/guide.md) > "$T/want"
	cmp -s "$T/got" "$T/want" && ok || { fail "context $opt differs from grep"; diff "$T/got" "$T/want" | head -5; }
	(cd "$R" && "$F" grep --index "$T/ix" --color never $opt -- 'spin_lock|TODO' src/net/sock.c src/fs/inode.c) > "$T/got"
	(cd "$R" && grep -HnP $opt -- 'spin_lock|TODO' src/fs/inode.c src/net/sock.c) > "$T/want"
	cmp -s "$T/got" "$T/want" && ok || { fail "context $opt over two files differs from grep"; diff "$T/got" "$T/want" | head -5; }
done
# -m, -q, --json.
[ "$(cd "$R" && "$F" grep --index "$T/ix" -m 1 -- 'sock' src/net/sock.c | wc -l)" = 1 ] && ok || fail "-m 1"
in_r() { (cd "$R" && "$@"); }
expect_rc 0 in_r "$F" grep --index "$T/ix" -q sock
[ ! -s "$T/.out" ] && ok || fail "-q printed something"
expect_rc 1 in_r "$F" grep --index "$T/ix" -q 'no such thing anywhere'
# --json: ripgrep's JSON Lines (tests/e2e/grep_rg.sh compares it with rg)
(cd "$R" && "$F" grep --index "$T/ix" --json 'ERR_PTR\(-E(\w+)\)') > "$T/j"
[ "$(jq -c 'select(.type == "match")' "$T/j" | wc -l)" = 3 ] && ok || fail "--json: not 3 matches: $(cat "$T/j")"
jq -c 'select(.type == "match" and .data.path.text == "src/fs/inode.c")' "$T/j" | jq -e '
	.data.line_number == 6 and .data.lines.text == "\t\treturn ERR_PTR(-EINVAL);\n" and
	.data.submatches == [{"match": {"text": "ERR_PTR(-EINVAL)"}, "start": 9, "end": 25}]' > /dev/null &&
	ok || { fail "--json line"; cat "$T/j"; }

# Boolean queries (-Q): the files are those the parts' own file sets give.
files() { (cd "$R" && grep -rlP -- "$1" . | sed 's|^\./||' | sort); }
bq() { (cd "$R" && "$F" grep --index "$T/ix" -Q -l -- "$1") | sort; }
files 'ERR_PTR' > "$T/A"; files 'spin_lock' > "$T/B"; files 'TODO' > "$T/C"; files 'colou?r' > "$T/D"
comm -12 "$T/A" "$T/B" > "$T/want"; bq 'ERR_PTR AND spin_lock' > "$T/got"
cmp -s "$T/got" "$T/want" && [ -s "$T/want" ] && ok || fail "-Q AND"
bq 'ERR_PTR spin_lock' > "$T/got"; cmp -s "$T/got" "$T/want" && ok || fail "-Q implied AND"
sort -u "$T/C" "$T/D" > "$T/want"; bq 'TODO OR colou?r' > "$T/got"
cmp -s "$T/got" "$T/want" && ok || fail "-Q OR"
comm -23 "$T/A" "$T/C" > "$T/want"; bq 'ERR_PTR -TODO' > "$T/got"
cmp -s "$T/got" "$T/want" && [ -s "$T/want" ] && ok || fail "-Q negation"
bq 'ERR_PTR NOT TODO' > "$T/got"; cmp -s "$T/got" "$T/want" && ok || fail "-Q NOT"
grep '\.md$' "$T/A" > "$T/want"; bq 'file:\.md$ ERR_PTR' > "$T/got"
cmp -s "$T/got" "$T/want" && [ -s "$T/want" ] && ok || fail "-Q file:"
grep '\.c$' "$T/A" > "$T/want"; bq 'lang:c ERR_PTR' > "$T/got"
cmp -s "$T/got" "$T/want" && [ -s "$T/want" ] && ok || fail "-Q lang:"
grep -v '^src/' "$T/A" > "$T/want"; bq 'ERR_PTR -file:^src/' > "$T/got"
cmp -s "$T/got" "$T/want" && ok || fail "-Q -file:"
files 'Hello World' > "$T/want"; bq '"Hello World"' > "$T/got"
cmp -s "$T/got" "$T/want" && [ -s "$T/want" ] && ok || fail "-Q quoted"
files '(?i)hello world' > "$T/want"; bq 'case:no "Hello World"' > "$T/got"
cmp -s "$T/got" "$T/want" && ok || fail "-Q case:no"
comm -12 "$T/A" "$T/B" | sort -u - "$T/D" > "$T/want"; bq '(ERR_PTR spin_lock) OR colou?r' > "$T/got"
cmp -s "$T/got" "$T/want" && ok || fail "-Q parentheses"
# its lines: those of any positive part, in the files that satisfy the query
(cd "$R" && "$F" grep --index "$T/ix" -Q --color never 'ERR_PTR AND spin_lock -nothing_here') | cut -d: -f1,2 > "$T/got"
(cd "$R" && grep -rnP 'ERR_PTR|spin_lock' $(comm -12 "$T/A" "$T/B")) | cut -d: -f1,2 > "$T/want"
cmp -s "$T/got" "$T/want" && ok || { fail "-Q lines"; diff "$T/got" "$T/want" | head; }
# OR: a file that holds the first part reports the lines of both
(cd "$R" && "$F" grep --index "$T/ix" -Q --color never 'ERR_PTR OR spin_lock OR TODO') | cut -d: -f1,2 | sort > "$T/got"
(cd "$R" && grep -rnP 'ERR_PTR|spin_lock|TODO' .) | sed 's|^\./||' | cut -d: -f1,2 | sort > "$T/want"
cmp -s "$T/got" "$T/want" && ok || { fail "-Q OR lines"; diff "$T/got" "$T/want" | head; }
expect_err "bad query at column 9: unclosed parenthesis" in_r "$F" grep --index "$T/ix" -Q 'ERR_PTR (sock'
expect_err "bad pattern in the query at column 14" in_r "$F" grep --index "$T/ix" -Q 'ERR_PTR sock('
expect_rc 2 in_r "$F" grep --index "$T/ix" -Q 'a OR'

# Paths: from a subfolder, paths print relative to it and PATH arguments
# are read from it; from outside the indexed folder, paths print absolute.
(cd "$R/src" && "$F" grep --index "$T/ix" -l ERR_PTR) | sort > "$T/got"
printf 'docs/guide.md\nfs/inode.c\nnet/sock.c\n' > "$T/want"
sed -i "s|^docs/guide.md|$R/docs/guide.md|" "$T/want"; sort -o "$T/want" "$T/want"
cmp -s "$T/got" "$T/want" && ok || { fail "paths from a subfolder"; diff "$T/got" "$T/want"; }
[ "$(cd "$R/src" && "$F" grep --index "$T/ix" -l ERR_PTR fs)" = "fs/inode.c" ] && ok || fail "PATH from a subfolder"
[ "$(cd "$R/src/net" && "$F" grep --index "$T/ix" -l ERR_PTR ../fs)" = "../fs/inode.c" ] ||
[ "$(cd "$R/src/net" && "$F" grep --index "$T/ix" -l ERR_PTR ../fs)" = "$R/src/fs/inode.c" ] && ok || fail "PATH ../fs"
[ "$(cd "$T" && "$F" grep --index "$T/ix" -l EINVAL)" = "$R/src/fs/inode.c" ] && ok || fail "paths from outside"

# grep as a retrieval source: chunks with their matching lines, most first.
(cd "$R" && "$F" grep --index "$T/ix" --chunks --json 'sock|lock') > "$T/ch"
[ -s "$T/ch" ] && ok || fail "--chunks gave nothing"
# the result set as search --json writes it (one serializer): a hit's grep
# score is its number of matching lines, which lie inside its chunk
jq -e '[.results[] | . as $h | ($h.score == ($h.match_lines | length)) and
	($h.sources == [{"source": "grep", "score": $h.score, "rank": $h.rank}]) and
	all($h.match_lines[]; . >= $h.lines[0] and . <= $h.lines[1])] | all' "$T/ch" >/dev/null &&
	ok || fail "--chunks: $(head -c 600 "$T/ch")"
jq -e '[.results[].score] as $s | $s == ($s | sort | reverse)' "$T/ch" >/dev/null &&
	ok || fail "--chunks: not sorted by score"
jq -e '[.results[].path] | index("src/net/sock.c") != null' "$T/ch" >/dev/null &&
	ok || fail "--chunks lacks sock.c"
expect_rc 1 in_r "$F" grep --index "$T/ix" --chunks 'no such thing anywhere'

# The index skips files: a selective literal reads one file of 25.
(cd "$R" && "$F" grep --index "$T/ix" --stats -F 'TC-10010' . 2> "$T/st" > /dev/null)
grep -q "25 files, 1 read (trigram index)" "$T/st" && ok || fail "trigram index did not narrow: $(cat "$T/st")"
# Freshness: a file changed since indexing is searched as it is now.
printf 'brand new line with zebra\n' >> "$R/misc/notes.txt"
touch -d '+1 minute' "$R/misc/notes.txt"
(cd "$R" && "$F" grep --index "$T/ix" zebra .) > "$T/fresh"
grep -q "misc/notes.txt:7:brand new line with zebra" "$T/fresh" && ok || fail "a changed file was not searched fresh"
# --stats counts it as changed; --trust-index reads only what the index
# lists, so it misses this file (the trade it makes for speed).
(cd "$R" && "$F" grep --index "$T/ix" --stats zebra . 2> "$T/st" > /dev/null)
grep -q "1 changed since indexing" "$T/st" && ok || fail "--stats: $(cat "$T/st")"
expect_rc 1 in_r "$F" grep --index "$T/ix" --trust-index zebra .
# A changed file the index lists is read as it is now, even when trusted.
sed -i 's/TC-1001 TC-10010/TC-2002 TC-20020/' "$R/misc/notes.txt"
expect_rc 1 in_r "$F" grep --index "$T/ix" --trust-index -F 'TC-10010' .
# A deleted file is gone from the results.
rm "$R/src/fs/inode.c"
[ "$(cd "$R" && "$F" grep --index "$T/ix" -l EINVAL .)" = "" ] && ok || fail "a deleted file was reported"
(cd "$R" && "$F" grep --index "$T/ix" --stats -l ERR_PTR . 2> "$T/st" > /dev/null)
grep -q "1 gone" "$T/st" && ok || fail "--stats gone: $(cat "$T/st")"
# Errors: a bad pattern names its column; no match exits 1.
cd "$R"
expect_rc 2 "$F" grep --index "$T/ix" 'a(b'
expect_err "bad pattern at column" "$F" grep --index "$T/ix" 'a(b'
expect_rc 1 "$F" grep --index "$T/ix" 'zzzz_not_anywhere'
# -w does not hide a pattern's own error (its stray ')' would close the wrapper)
expect_err "bad pattern at column 5" "$F" grep --index "$T/ix" -w 'sock)(x'
# A file there but not searchable (over 1 GiB, sparse) is named on stderr and
# the exit status is 2, as grep's; the other files are still searched.
printf 'sock here too\n' > "$R/misc/huge.txt"
(cd "$R" && "$F" index -q --index "$T/ix" .)
truncate -s 1100M "$R/misc/huge.txt"
expect_rc 2 "$F" grep --index "$T/ix" -l sock .
grep -qx './src/net/sock.c' "$T/.out" && ok || fail "the other files were not searched: $(cat "$T/.out")"
grep -q 'misc/huge.txt: larger than 1024 MiB' "$T/.err" && ok || fail "no word of the huge file: $(cat "$T/.err")"
rm -f "$R/misc/huge.txt"
# A catastrophic pattern is bounded, not hung.
printf '%s\n' "$(head -c 30000 /dev/zero | tr '\0' a)" > "$R/misc/aaa.txt"
(cd "$R" && "$F" index -q --index "$T/ix" .)
timeout 20 "$F" grep --index "$T/ix" '(a*)*b' > /dev/null 2>&1; rc=$?
[ "$rc" -le 2 ] && ok || fail "catastrophic pattern: exit $rc"
finish
