#!/bin/bash
# grep_bench.sh — fathom grep against ripgrep, GNU grep and codesearch on the
# Linux 6.1 source tree (the files bench/prepare_kernel.sh extracts), side by
# side in one run, same machine, warm page cache.
#
#   bench/grep_bench.sh          (make bench runs it after run.sh)
#
# Environment: FATHOM=path (default build/fathom), GREP_REPS=n (timed runs
# per query and tool, default 3; the median is reported).
#
# For each tool: index build time and size (fathom: `fathom index` of the
# tree, which builds the lexical index too; codesearch: cindex), then per
# query the median wall time of the whole command (process start to exit)
# and the files it reports. Every tool must report the same files.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=$here/work/grep
tree_parent=$here/work/kernel/tree
tree=linux-source-6.1
FATHOM=${FATHOM:-$root/build/fathom}
case $FATHOM in /*) ;; *) FATHOM=$root/$FATHOM ;; esac
REPS=${GREP_REPS:-3}
queries=$here/grep_queries.txt
mkdir -p "$work" "$here/results"
say() { printf 'grep-bench %s\n' "$*" >&2; }
now() { date +%s%N; }
[ -d "$tree_parent/$tree" ] || "$here/prepare_kernel.sh" > /dev/null
for t in rg grep cindex csearch; do
	command -v $t > /dev/null || { echo "grep_bench: $t missing (make deps-bench)" >&2; exit 1; }
done
cd "$tree_parent"
src_bytes=$(du -sb "$tree" | cut -f1)
nfiles=$(find "$tree" -type f | wc -l)

say "fathom index"
rm -rf "$work/fathom.idx"
t0=$(now); "$FATHOM" index -q --index "$work/fathom.idx" "$tree"; t1=$(now)
f_build=$(( (t1 - t0) / 1000000 ))
f_size=$(du -sb "$work/fathom.idx" | cut -f1)
f_tri=$("$FATHOM" stats --index "$work/fathom.idx" --json | python3 -c 'import json,sys; print(json.load(sys.stdin).get("bytes_trigrams", 0))')
say "cindex"
export CSEARCHINDEX=$work/csearch.idx
rm -f "$CSEARCHINDEX"
t0=$(now); cindex "$tree" > /dev/null 2>&1; t1=$(now)
c_build=$(( (t1 - t0) / 1000000 ))
c_size=$(stat -c %s "$CSEARCHINDEX")
rg -c zzzz_warm "$tree" > /dev/null 2>&1 || true   # warm the page cache

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
time_cmd() {   # command... -> median ms on stdout; output of the last run in $work/out
	local i s e
	for i in $(seq 1 "$REPS"); do
		s=$(now); "$@" > "$work/out" 2> /dev/null || true; e=$(now)
		echo $(( (e - s) / 1000000 ))
	done | median
}
rows=""
while IFS=$'\t' read -r kind q; do
	[ -z "$q" ] && continue
	case $kind in \#*) continue ;; esac
	fl=(); gl=(-P); cl=()
	case $kind in
	F) fl=(-F); gl=(-F); rl=(-F) ;;
	Fi) fl=(-F -i); gl=(-F -i); rl=(-F -i); cl=(-i) ;;
	R) rl=() ;;
	Ri) fl=(-i); gl=(-P -i); rl=(-i); cl=(-i) ;;
	esac
	say "query [$q]"
	tf=$(time_cmd "$FATHOM" grep --index "$work/fathom.idx" -l "${fl[@]}" -- "$q" "$tree"); nf=$(wc -l < "$work/out"); sort "$work/out" > "$work/f.l"
	tr=$(time_cmd rg -l "${rl[@]}" -- "$q" "$tree"); nr=$(wc -l < "$work/out"); sort "$work/out" > "$work/r.l"
	tg=$(time_cmd grep -rl "${gl[@]}" -- "$q" "$tree"); ng=$(wc -l < "$work/out")
	# csearch takes RE2 syntax; a literal is quoted for it
	cq=$q
	case $kind in F*) cq=$(printf '%s' "$q" | sed 's/[][\\.^$*+?(){}|]/\\&/g') ;; esac
	tc=$(time_cmd csearch -l "${cl[@]}" -- "$cq"); nc=$(wc -l < "$work/out")
	same=yes; cmp -s "$work/f.l" "$work/r.l" || same="no ($nf vs rg $nr)"
	rows="$rows| \`$q\` ($kind) | $nf | $tf | $tr | $tg | $tc | $(awk "BEGIN { printf \"%.1f\", $tr / ($tf > 0 ? $tf : 1) }")× | $same |
"
done < "$queries"

out=$here/results/grep-latest.md
{
	echo "# fathom grep vs ripgrep, GNU grep and codesearch"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo) RAM"
	echo "- command: \`bench/grep_bench.sh\` (GREP_REPS=$REPS: median of $REPS runs of each whole command, warm page cache)"
	echo "- versions: $("$FATHOM" version); $(rg --version | head -1); $(grep --version | head -1); codesearch $(dpkg-query -W -f='${Version}' codesearch 2>/dev/null)"
	echo "- corpus: the Linux 6.1 tree as bench/prepare_kernel.sh extracts it: $nfiles files, $(( src_bytes / 1048576 )) MiB"
	echo
	echo "| index | build s | size MiB | size / source |"
	echo "|---|---|---|---|"
	echo "| fathom (lexical + trigram index) | $(awk "BEGIN { printf \"%.1f\", $f_build / 1000 }") | $(( f_size / 1048576 )) | $(awk "BEGIN { printf \"%.2f\", $f_size / $src_bytes }") |"
	echo "| fathom, trigram part | – | $(( f_tri / 1048576 )) | $(awk "BEGIN { printf \"%.2f\", $f_tri / $src_bytes }") |"
	echo "| codesearch (cindex) | $(awk "BEGIN { printf \"%.1f\", $c_build / 1000 }") | $(( c_size / 1048576 )) | $(awk "BEGIN { printf \"%.2f\", $c_size / $src_bytes }") |"
	echo
	echo "| query | files | fathom ms | rg ms | grep -r ms | csearch ms | fathom vs rg | same files as rg |"
	echo "|---|---|---|---|---|---|---|---|"
	printf '%s' "$rows"
} > "$out"
cat "$out"
