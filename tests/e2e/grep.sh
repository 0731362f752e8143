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
for i in $(seq 1 20); do printf 'filler file %d about nothing in particular\nline two %d\n' "$i" "$i" > "$R/misc/f$i.txt"; done
(cd "$R" && "$F" index -q --index "$T/ix" .)

check() {   # MODE PATTERN [grep options]: fathom grep == grep -rn<MODE>
	local mode=$1 pat=$2; shift 2
	local fopt=()
	[ "$mode" = F ] && fopt=(-F)
	(cd "$R" && "$F" grep --index "$T/ix" --color never "${fopt[@]}" "$@" -- "$pat" . ) 2> "$T/err" | cut -d: -f1,2 | sort > "$T/got"
	(cd "$R" && grep -rn"$mode" "$@" -- "$pat" . ) 2> /dev/null | sed 's|^\./||' | cut -d: -f1,2 | sort > "$T/want"
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
	'line two 1\d' 'a.b' '.*' 'x{0}y?' 'TODO|FIXME' '(?:inet|file)_\w+_ops' 'é' 'ΑΒ+Γ'; do
	check P "$p"; n=$((n + 1))
done
for p in 'hello world' 'ERR_ptr' 'STRUCT inode' 'café'; do check P "$p" -i; n=$((n + 1)); done
for p in 'sock' 'inode' 'lock' '2.0'; do check P "$p" -w; n=$((n + 1)); done
check F 'hello' -i; check F 'ops' -w; n=$((n + 2))
echo "    $n patterns compared with grep"
[ "$n" -ge 40 ] && ok || fail "fewer than 40 patterns"

# The index skips files: a selective literal reads one file of 24.
(cd "$R" && "$F" grep --index "$T/ix" --stats -F 'TC-10010' . 2> "$T/st" > /dev/null)
grep -q "24 files, 1 read (trigram index)" "$T/st" && ok || fail "trigram index did not narrow: $(cat "$T/st")"
# Freshness: a file changed since indexing is searched as it is now.
printf 'brand new line with zebra\n' >> "$R/misc/notes.txt"
touch -d '+1 minute' "$R/misc/notes.txt"
(cd "$R" && "$F" grep --index "$T/ix" zebra .) > "$T/fresh"
grep -q "misc/notes.txt:7:brand new line with zebra" "$T/fresh" && ok || fail "a changed file was not searched fresh"
# Errors: a bad pattern names its column; no match exits 1.
cd "$R"
expect_rc 2 "$F" grep --index "$T/ix" 'a(b'
expect_err "bad pattern at column" "$F" grep --index "$T/ix" 'a(b'
expect_rc 1 "$F" grep --index "$T/ix" 'zzzz_not_anywhere'
# A catastrophic pattern is bounded, not hung.
printf '%s\n' "$(head -c 30000 /dev/zero | tr '\0' a)" > "$R/misc/aaa.txt"
(cd "$R" && "$F" index -q --index "$T/ix" .)
timeout 20 "$F" grep --index "$T/ix" '(a*)*b' > /dev/null 2>&1; rc=$?
[ "$rc" -le 2 ] && ok || fail "catastrophic pattern: exit $rc"
finish
