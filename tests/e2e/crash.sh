#!/usr/bin/env bash
# Crash safety: kill -9 `fathom index` at random moments, at least 50 times.
# After each kill the index must open, pass every checksum (verify) and hold
# exactly the documents of its last commit: the old tree or the new one,
# never a mix.
source "$(dirname "$0")/lib.sh"
N=${CRASH_RUNS:-50}
[ "${FATHOM_SANITIZE:-0}" = 1 ] && N=${CRASH_RUNS:-12}
A=$T/a; B=$T/b
mkdir -p "$A" "$B"
# Tree A: 1500 files. Tree B: the same folder with a third changed, a third
# removed and 500 new files, so a commit of B differs from A everywhere.
for i in $(seq 1 1500); do
	d=$A/d$((i % 30)); mkdir -p "$d"
	printf 'file %d alpha%d common words here\n%s\n' "$i" "$i" "$(seq -s ' ' "$i" $((i + 200)))" > "$d/f$i.txt"
done
IX0=$T/ix0
"$F" index --index "$IX0" -q "$A" || { echo "setup failed"; exit 2; }
"$F" list --index "$IX0" | cut -f1 | sort > "$T/list_a"
cp -a "$A/." "$B/"
for i in $(seq 1 1500); do
	f=$B/d$((i % 30))/f$i.txt
	case $((i % 3)) in
	0) printf 'changed %d betaword\n' "$i" >> "$f" ;;
	1) rm "$f" ;;
	esac
done
for i in $(seq 2001 2500); do printf 'new file %d betaword\n' "$i" > "$B/d$((i % 30))/n$i.txt"; done
# Index B at A's paths: move B into A's place for the run.
IX1=$T/ix1
cp -a "$IX0" "$IX1"
mv "$A" "$T/a.orig"; cp -a "$B" "$A"
"$F" index --index "$IX1" -q "$A"
"$F" list --index "$IX1" | cut -f1 | sort > "$T/list_b"
t0=$(date +%s%N); "$F" index --index "$T/ixt" -q "$A" >/dev/null; t1=$(date +%s%N)
full_ms=$(( (t1 - t0) / 1000000 + 1 ))
cmp -s "$T/list_a" "$T/list_b" && { echo "setup: lists should differ"; exit 2; }

seen_a=0; seen_b=0
for run in $(seq 1 "$N"); do
	IX=$T/ix_run
	rm -rf "$IX"; cp -a "$IX0" "$IX"
	# Spread the kills over the whole run, commit included.
	delay_us=$(( (RANDOM * 32768 + RANDOM) % (full_ms * 1200 + 1) ))
	"$F" index --index "$IX" -q "$A" >/dev/null 2>&1 &
	pid=$!
	sleep "$(printf '0.%06d' $((delay_us % 1000000)))"
	[ $delay_us -ge 1000000 ] && sleep $((delay_us / 1000000))
	kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
	if ! "$F" verify --index "$IX" >"$T/v" 2>&1; then
		fail "run $run (kill after ${delay_us}us): verify failed: $(cat "$T/v")"; continue
	fi
	"$F" list --index "$IX" | cut -f1 | sort > "$T/list_now"
	if cmp -s "$T/list_now" "$T/list_a"; then
		seen_a=$((seen_a + 1)); ok
		"$F" search --index "$IX" betaword >/dev/null && fail "run $run: old commit but new words found"
	elif cmp -s "$T/list_now" "$T/list_b"; then
		seen_b=$((seen_b + 1)); ok
		"$F" search --index "$IX" betaword >/dev/null || fail "run $run: new commit but its words missing"
	else
		fail "run $run (kill after ${delay_us}us): documents are neither the old nor the new commit"
	fi
	# The next writer cleans up and carries on from the last commit.
	"$F" index --index "$IX" -q "$A" >/dev/null 2>&1 || fail "run $run: writer after crash failed"
	"$F" list --index "$IX" | cut -f1 | sort | cmp -s - "$T/list_b" || fail "run $run: re-index after crash differs"
done
echo "kills: $N, index at old commit: $seen_a, at new commit: $seen_b (full run ${full_ms} ms)"
finish
