#!/bin/bash
# grep_bench.sh — fathom grep against ripgrep, GNU grep and codesearch on the
# Linux 6.1 source tree (the files bench/prepare_kernel.sh extracts), side by
# side in one run, same machine, warm page cache.
#
#   bench/grep_bench.sh          (make bench runs it after run.sh)
#
# Environment: FATHOM=path (default build/fathom), GREP_RUNS=n (timed runs
# per query and tool after one warm-up run, default 5; hyperfine reports the
# median), GREP_FULL=0 to skip the full (search + grep) index build.
#
# Builds, each timed as a whole command (/usr/bin/time):
#   fathom index --grep-only   the trigram index and file table alone
#   fathom index               search and grep together (GREP_FULL=1)
#   cindex                     codesearch's trigram index
# Then per query, with hyperfine (no shell, one warm-up run), the median wall
# time of the whole command, process start to exit, listing matching files:
#   fathom grep -l             default: every file is checked for changes
#                              since indexing (one stat per file)
#   fathom grep -l --trust-index   only the files the index lists are read
#   rg -L -l                   ripgrep (-L: links followed, as fathom indexes)
#   grep -R -l                 GNU grep (-R: links followed)
#   csearch -l                 codesearch (no check for changed files)
# and the files each reports; fathom's must be exactly ripgrep's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=$here/work/grep
tree_parent=$here/work/kernel/tree
tree=linux-source-6.1
FATHOM=${FATHOM:-$root/build/fathom}
case $FATHOM in /*) ;; *) FATHOM=$root/$FATHOM ;; esac
RUNS=${GREP_RUNS:-5}
FULL=${GREP_FULL:-1}
queries=$here/grep_queries.txt
mkdir -p "$work" "$here/results"
say() { printf 'grep-bench %s\n' "$*" >&2; }
[ -f "$tree_parent/.done" ] || "$here/prepare_kernel.sh" "$FATHOM" > /dev/null
for t in rg grep cindex csearch hyperfine python3; do
	command -v $t > /dev/null || { echo "grep_bench: $t missing (make deps-bench)" >&2; exit 1; }
done
cd "$tree_parent"
src_bytes=$(du -sb "$tree" | cut -f1)
nfiles=$(find "$tree" -type f | wc -l)

timed() {   # OUTFILE CMD...: wall seconds of CMD into OUTFILE
	local out=$1; shift
	if ! /usr/bin/time -f %e -o "$out" "$@" > /dev/null 2> "$work/err"; then
		echo "grep_bench: failed: $*" >&2
		tail -5 "$work/err" >&2
		exit 1
	fi
	tail -1 "$out" > "$out.s" && mv "$out.s" "$out"
}
# every build and query below runs on a warm page cache: read the tree once
say "warming the page cache"
rg -L -c zzzz_warm "$tree" > /dev/null 2>&1 || true
say "fathom index --grep-only"
rm -rf "$work/fathom-grep.idx"
timed "$work/t.grep" "$FATHOM" index -q --grep-only --index "$work/fathom-grep.idx" "$tree"
g_build=$(cat "$work/t.grep")
g_size=$(du -sb "$work/fathom-grep.idx" | cut -f1)
if [ "$FULL" = 1 ]; then
	say "fathom index (search and grep)"
	rm -rf "$work/fathom.idx"
	timed "$work/t.full" "$FATHOM" index -q --index "$work/fathom.idx" "$tree"
	f_build=$(cat "$work/t.full")
	f_size=$(du -sb "$work/fathom.idx" | cut -f1)
	f_tri=$("$FATHOM" stats --index "$work/fathom.idx" --json |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes_trigrams"])')
fi
say "cindex"
export CSEARCHINDEX=$work/csearch.idx
rm -f "$CSEARCHINDEX"
timed "$work/t.cindex" cindex "$tree"
c_build=$(cat "$work/t.cindex")
c_size=$(stat -c %s "$CSEARCHINDEX")
rg -L -c zzzz_warm "$tree" > /dev/null 2>&1 || true   # and again after the builds
IX=$work/fathom-grep.idx

q1() { printf "'%s'" "$1"; }   # one shell word for hyperfine (no ' in the patterns)
median_ms() {   # the hyperfine JSON's medians, in order, in ms
	python3 -c 'import json,sys; print(" ".join("%.1f" % (r["median"] * 1000) for r in json.load(open(sys.argv[1]))["results"]))' "$1"
}
rows=""
sel_ratios="" sel_ratios_t="" nq=0 n_rg=0 n_rg_t=0 n_cs=0 n_cs_t=0 n_same=0
while IFS=$'\t' read -r kind q; do
	[ -z "$q" ] && continue
	case $kind in \#*) continue ;; esac
	case $q in *"'"*) echo "grep_bench: no ' in patterns" >&2; exit 1 ;; esac
	fl="" rl="" gl="-P" cl=""
	case $kind in
	F) fl="-F"; rl="-F"; gl="-F" ;;
	Fi) fl="-F -i"; rl="-F -i"; gl="-F -i"; cl="-i" ;;
	Ri) fl="-i"; rl="-i"; gl="-P -i"; cl="-i" ;;
	esac
	# csearch takes RE2 syntax: a literal is quoted for it
	cq=$q
	case $kind in F*) cq=$(printf '%s' "$q" | sed 's/[][\\.^$*+?(){}|]/\\&/g') ;; esac
	say "query [$q]"
	c_f="$FATHOM grep --index $IX -l $fl -- $(q1 "$q") $tree"
	c_t="$FATHOM grep --index $IX --trust-index -l $fl -- $(q1 "$q") $tree"
	c_r="rg -L -l $rl -- $(q1 "$q") $tree"
	c_g="grep -R -l $gl -- $(q1 "$q") $tree"
	c_c="csearch -l $cl -- $(q1 "$cq")"
	hyperfine -N -i -w 1 -r "$RUNS" --export-json "$work/h.json" "$c_f" "$c_t" "$c_r" "$c_g" "$c_c" > /dev/null 2>&1
	read -r tf tt tr tg tc < <(median_ms "$work/h.json")
	# the files each reports (one more run, outside the timing)
	eval "$c_f" 2> /dev/null | sort > "$work/f.l" || true
	eval "$c_t" 2> /dev/null | sort > "$work/t.l" || true
	eval "$c_r" 2> /dev/null | sort > "$work/r.l" || true
	nf=$(wc -l < "$work/f.l"); nr=$(wc -l < "$work/r.l")
	nc=$(eval "$c_c" 2> /dev/null | wc -l || true)
	same=yes
	cmp -s "$work/f.l" "$work/r.l" && cmp -s "$work/t.l" "$work/r.l" || same="no ($nf vs rg $nr)"
	[ "$same" = yes ] && n_same=$((n_same + 1))
	nq=$((nq + 1))
	r_f=$(awk "BEGIN { printf \"%.1f\", $tr / $tf }")
	r_t=$(awk "BEGIN { printf \"%.1f\", $tr / $tt }")
	awk "BEGIN { exit !($tf < $tr) }" && n_rg=$((n_rg + 1))
	awk "BEGIN { exit !($tt < $tr) }" && n_rg_t=$((n_rg_t + 1))
	awk "BEGIN { exit !($tf < $tc) }" && n_cs=$((n_cs + 1))
	awk "BEGIN { exit !($tt < $tc) }" && n_cs_t=$((n_cs_t + 1))
	pct=$(awk "BEGIN { printf \"%.2f\", 100 * $nr / $nfiles }")
	sel=""
	if awk "BEGIN { exit !($nr < $nfiles / 100) }"; then
		sel=" *"
		sel_ratios="$sel_ratios $r_f"
		sel_ratios_t="$sel_ratios_t $r_t"
	fi
	qmd=${q//|/\\|}   # a | inside a table cell
	rows="$rows| \`$qmd\` ($kind)$sel | $nr ($pct%) | $tf | $tt | $tr | $tg | $tc | ${r_f}× | ${r_t}× | $same |
"
done < "$queries"

stat_line() {   # RATIOS: min median max
	printf '%s\n' $1 | sort -g | awk '{ a[NR] = $1 } END { if (NR) printf "%s× / %s× / %s×", a[1], a[int((NR + 1) / 2)], a[NR]; else printf "–" }'
}
frac() { awk "BEGIN { printf \"%.3f\", $1 / $src_bytes }"; }
mib() { echo $(( $1 / 1048576 )); }
out=$here/results/grep-latest.md
{
	echo "# fathom grep vs ripgrep, GNU grep and codesearch"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo) RAM"
	echo "- command: \`bench/grep_bench.sh\` (hyperfine -N, 1 warm-up and $RUNS timed runs of each whole command, median; warm page cache)"
	echo "- versions: $("$FATHOM" version); $(rg --version | head -1); $(grep --version | head -1); codesearch $(dpkg-query -W -f='${Version}' codesearch 2>/dev/null); $(hyperfine --version)"
	echo "- corpus: the Linux 6.1 tree as bench/prepare_kernel.sh extracts it: $nfiles files, $(mib "$src_bytes") MiB"
	echo
	echo "| index | build s | size MiB | size / source |"
	echo "|---|---|---|---|"
	echo "| fathom --grep-only (trigrams + file table) | $g_build | $(mib "$g_size") | $(frac "$g_size") |"
	if [ "$FULL" = 1 ]; then
		echo "| fathom (search + grep) | $f_build | $(mib "$f_size") | $(frac "$f_size") |"
		echo "| fathom (search + grep), its trigram part | – | $(mib "$f_tri") | $(frac "$f_tri") |"
	fi
	echo "| codesearch (cindex) | $c_build | $(mib "$c_size") | $(frac "$c_size") |"
	echo
	echo "Per query: files matching (share of all files; * selective, under 1%), median ms of"
	echo "each whole command listing the matching files, and ripgrep's time over fathom's."
	echo
	echo "| query | files | fathom | fathom --trust-index | rg | grep -R | csearch | rg / fathom | rg / fathom --trust-index | same files as rg |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	printf '%s' "$rows"
	echo
	echo "- selective queries, ripgrep's time over fathom's (min / median / max): default $(stat_line "$sel_ratios"); --trust-index $(stat_line "$sel_ratios_t")"
	echo "- faster than ripgrep: default $n_rg of $nq queries, --trust-index $n_rg_t of $nq"
	echo "- faster than codesearch: default $n_cs of $nq queries, --trust-index $n_cs_t of $nq"
	echo "- the same files as ripgrep: $n_same of $nq queries"
} > "$out"
cat "$out"
