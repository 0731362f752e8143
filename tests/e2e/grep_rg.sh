#!/usr/bin/env bash
# fathom grep against ripgrep (Debian's rg): on a fixture tree built here,
# each of ripgrep's options that fathom grep takes, alone and in the
# common pairs, must print what `rg` prints: the same lines in the same
# order. Both sides run with --sort path (rg: -j1 --sort path) for one
# order, --color never, and -n (fathom numbers lines by default; rg only
# on a terminal). --json is compared with the fields ripgrep's timing and
# bookkeeping set (elapsed, bytes_printed, the summary's searches) left out:
# fathom reads only the files the index cannot rule out, so it cannot
# count the searches rg makes.
source "$(dirname "$0")/lib.sh"
command -v rg > /dev/null || { echo "skip: no rg (Debian's ripgrep; make deps installs it)"; exit 77; }
command -v jq > /dev/null || { echo "skip: no jq"; exit 77; }
export LC_ALL=C.UTF-8
R=$T/tree
mkdir -p "$R/linux" "$R/src/net" "$R/a-b" "$R/docs" "$R/scripts"
printf '#ifndef _LINUX_IF_H\n#define IFNAMSIZ 16\nstruct ifreq {\n\tchar ifr_name[IFNAMSIZ];\n};\n\n#endif\n' > "$R/linux/if.h"
cat > "$R/src/net/sock.c" <<'C'
#include <linux/if.h>
static int sock_alloc(struct socket *sock)
{
	if (!sock)
		return -ENOMEM;
	sock->state = SS_UNCONNECTED; /* sock sock */
	return 0;
}
C
printf 'def Sock():\n    return "sock"\n\nclass Socket:\n    pass\n' > "$R/src/net/sock.py"
printf 'package main\n// a socket in a-b\nfunc main() {}\n' > "$R/a-b/main.go"
printf '# Sockets\n\nA socket is an endpoint.\nSOCK_STREAM and SOCK_DGRAM.\nsock\n' > "$R/docs/net.md"
printf '#!/bin/sh\necho sock\nexit 0\n' > "$R/scripts/run.sh"
printf 'nothing to see\nhere\n' > "$R/docs/empty.txt"
printf 'all:\n\techo sock\n' > "$R/scripts/Makefile"
(cd "$R" && "$F" index -q --index "$T/ix" .) || { fail "index"; finish; }

n=0
# same ARGS...: fathom grep and rg print the same, from the tree's root
same() {
	(cd "$R" && "$F" grep --index "$T/ix" --color never -n --sort path "$@") > "$T/got" 2>&1
	local frc=$?
	(cd "$R" && rg -j1 --sort path --color never -n "$@") > "$T/want" 2>&1
	local rrc=$?
	n=$((n + 1))
	if cmp -s "$T/got" "$T/want" && [ "$frc" = "$rrc" ]; then ok; else
		fail "[$*]: fathom (exit $frc) and rg (exit $rrc) differ"
		diff "$T/got" "$T/want" | head -6 | sed 's/^/    /'
	fi
}
# The options alone
same sock
same sock .
same sock ./
same sock src
same sock src/net/
same sock "$R/src"          # absolute only when the argument was
same sock linux/if.h src/net/sock.c
same -e sock -e ifreq
same -e sock -e 'IF\w+' .
same -F -e 'sock->' -e '[IFNAMSIZ]'
same -v sock
same -v sock docs
same -o sock
same -o 'so\w+' .
same -x sock
printf 'sock_\\w+\nifr\n' > "$T/pats"; : > "$T/nopats"
same -f "$T/pats"
same -f "$T/pats" -e ENOMEM src
same -f "$T/nopats"
same -f "$T/pats" -o -w
same -x -F 'exit 0'
same -H sock docs/net.md
same sock docs/net.md
same --no-filename sock
same -I sock
same -P 'sock(?=\))'
same -S sock
same -S Sock
same -S 'SOCK_\w+'
same -i sock
same -w sock
same --files-without-match sock
same -l sock
same -c sock
same --heading sock
same --no-heading sock
same --vimgrep sock
same --vimgrep 'sock|ifr'
same -g '*.py' sock
same -g '!*.py' sock
same -g '*.c' -g '*.md' sock
same -g '!src' sock
same -g 'src/**' sock
same -g 'src/net/*.c' sock
same -t c sock
same -t py sock
same -t c -t md sock
same -T c sock
same -t sh sock
same -t go socket
same -t make sock
same -m 1 sock
same -C 1 sock
same -A 1 sock
same -B 2 sock
same -N sock
same --column sock
same --count-matches sock
# The common pairs
same -i -o sock
same -i -w sock
same -v -c sock
same -v -l sock
same -v -x sock
same -v -m 1 sock
same -o -w sock
same -l -t c sock
same -c -g '*.md' sock
same -i -c sock
same -C 1 --heading sock
same -C 1 -v sock
same -A 1 -t py sock
same -e sock -e Sock -c
same -e sock -e pass -o
same -x -e sock -e '    pass'
same -S -w Sock
same --vimgrep -t c sock
same --heading -g '!*.c' sock
same -F -x -v sock
same -l -v -t md sock
same sock src docs
same --column -o 'so\w+'
same --column -v sock docs
same --column -C 1 sock src
same --count-matches -i -w sock
same --count-matches -v sock
echo "    $n rg commands compared"
# Where fathom follows grep, not rg: -E (rg's --encoding) is accepted as
# grep's extended syntax, and -L is grep's files-without-match (rg's
# --follow): compared with the rg commands that mean the same.
differs_as() {   # "FATHOM ARGS" "RG ARGS"
	# shellcheck disable=SC2086
	(cd "$R" && "$F" grep --index "$T/ix" --color never -n --sort path $1) > "$T/got" 2>&1
	# shellcheck disable=SC2086
	(cd "$R" && rg -j1 --sort path --color never -n $2) > "$T/want" 2>&1
	cmp -s "$T/got" "$T/want" && [ -s "$T/want" ] && ok || { fail "[$1] differs from rg [$2]"; diff "$T/got" "$T/want" | head -4; }
}
differs_as "-E sock(et)?" "sock(et)?"
differs_as "-L sock" "--files-without-match sock"
differs_as "-L -t c ifreq" "--files-without-match -t c ifreq"

# --json: the JSON Lines of rg, timings and rg's bookkeeping left out
json_same() {
	local norm='del(.data.stats.elapsed, .data.stats.bytes_printed, .data.elapsed_total, .data.stats.searches, .data.stats.searches_with_match)'
	(cd "$R" && "$F" grep --index "$T/ix" --sort path --json "$@") | jq -c "$norm" > "$T/got" 2>&1
	(cd "$R" && rg -j1 --sort path --json "$@") | jq -c "$norm" > "$T/want" 2>&1
	if cmp -s "$T/got" "$T/want" && [ -s "$T/want" ]; then ok; else
		fail "--json [$*]: fathom and rg differ"
		diff "$T/got" "$T/want" | head -6 | sed 's/^/    /'
	fi
}
json_same sock
json_same 'so\w+' src
json_same -C 1 sock
json_same -v sock docs
json_same -e sock -e ifr -i
json_same -w -t c sock
# -c, -l and --files-without-match with --json: an error, exit 2, as rg
for o in -c -l --files-without-match --count-matches; do
	expect_rc 2 "$F" grep --index "$T/ix" --json "$o" sock "$R"
	rg --json "$o" sock "$R" > /dev/null 2>&1; [ $? = 2 ] && ok || fail "rg --json $o: not an error"
done

# --type-list: the same types, for the names fathom knows, as rg's
"$F" grep --type-list > "$T/types"
while IFS= read -r line; do
	rg --type-list | grep -qxF -- "$line" && ok || fail "--type-list line not rg's: $line"
done < "$T/types"
expect_rc 2 "$F" grep --index "$T/ix" -t nosuchtype sock
expect_err "unknown file type 'nosuchtype'" "$F" grep --index "$T/ix" -t nosuchtype sock

# Options about finding files on disk: said plainly, not "unknown option"
for o in --no-ignore --hidden -u --follow --no-ignore-vcs --one-file-system; do
	expect_rc 2 "$F" grep --index "$T/ix" "$o" sock
	expect_err "^fathom: $o cannot apply to an index: .*indexed" "$F" grep --index "$T/ix" "$o" sock
done
finish
