#!/usr/bin/env bash
# fuzz/smoke.sh — `make fuzz-smoke`: run each libFuzzer target built by
# `make fuzz` (build-fuzz/, ASan + UBSan) for FUZZ_SECONDS (default 60)
# from its saved corpus, and print per target the executions, exec/s, the
# coverage (libFuzzer's "cov", edges reached) and the new corpus entries.
# Fails when any target crashes, leaks, times out or gets a sanitizer
# report (UBSan halts on the first one). New inputs go to
# build-fuzz/smoke/TARGET/, a crasher to build-fuzz/smoke/TARGET-crash-*;
# after fixing the bug, copy it into fuzz/corpus/TARGET/ so that
# `make test` replays it.
#   fuzz/smoke.sh TARGET...
set -u
cd "$(dirname "$0")/.."
SECS=${FUZZ_SECONDS:-60}
[ $# -gt 0 ] || { echo "usage: fuzz/smoke.sh TARGET..." >&2; exit 2; }
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
out=build-fuzz/smoke
mkdir -p "$out"
failed=()
printf '%-16s %12s %9s %8s %6s  %s\n' target executions exec/s cov new result
for t in "$@"; do
	bin=build-fuzz/$t
	[ -x "$bin" ] || { echo "$bin is missing: make fuzz" >&2; exit 2; }
	rm -rf "${out:?}/$t" && mkdir -p "$out/$t"
	# the first folder receives new inputs; the saved corpus is read only
	"$bin" "$out/$t" "fuzz/corpus/$t" -max_total_time="$SECS" -timeout=25 -rss_limit_mb=4096 \
		-print_final_stats=1 -artifact_prefix="$out/$t-" > "$out/$t.log" 2>&1
	rc=$?
	stat() { sed -n "s/^stat::$1: *//p" "$out/$t.log" | tail -1; }
	execs=$(stat number_of_executed_units)
	rate=$(stat average_exec_per_sec)
	cov=$(grep -o 'cov: [0-9]*' "$out/$t.log" | tail -1 | cut -d' ' -f2)
	new=$(find "$out/$t" -type f | wc -l)
	result=ok
	if [ $rc -ne 0 ] || grep -q 'ERROR: \(AddressSanitizer\|LeakSanitizer\|libFuzzer\)\|runtime error:' "$out/$t.log"; then
		result="FAILED (exit $rc): $(ls "$out/$t"-* 2> /dev/null | head -1)"
		failed+=("$t")
	fi
	printf '%-16s %12s %9s %8s %6s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$new" "$result"
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "failed: ${failed[*]} (logs in $out/TARGET.log)"
	for t in "${failed[@]}"; do
		grep -m1 -A12 'ERROR:\|runtime error:' "$out/$t.log" | sed 's/^/    /'
	done
	exit 1
fi
echo "all ${#} targets ran ${SECS}s each without a crash"
