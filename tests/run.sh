#!/usr/bin/env bash
# Run every test: unit test binaries, end-to-end shell tests, and the fuzz
# seed replays. Prints one line per test file and the total at the end.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
export FATHOM_BIN="$PWD/$BUILD/fathom"
pass=0; fail=0; skip=0; failed=()
log=$(mktemp -d)
run_one() { # name cmd...
	local name=$1; shift
	local t0=$SECONDS
	if "$@" >"$log/out" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); printf 'ok   %-40s %3ss\n' "$name" $((SECONDS - t0))
	elif [ $rc -eq 77 ]; then
		skip=$((skip + 1)); printf 'skip %-40s %s\n' "$name" "$(tail -n 1 "$log/out")"
	else
		fail=$((fail + 1)); failed+=("$name"); printf 'FAIL %-40s (exit %d)\n' "$name" $rc
		sed 's/^/    /' "$log/out" | tail -n 40
	fi
}
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for t in tests/e2e/*.sh; do
	[ "$(basename "$t")" = lib.sh ] && continue
	[ -f "$t" ] || continue
	run_one "e2e/$(basename "$t" .sh)" bash "$t"
done
for r in "$BUILD"/fuzz/replay_*; do
	[ -x "$r" ] || continue
	n=${r##*/replay_}
	run_one "fuzz-replay/$n" "$r" "fuzz/corpus/$n"
done
rm -rf "$log"
echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
