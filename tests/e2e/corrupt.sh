#!/usr/bin/env bash
# Damaged index files: flip bytes at many offsets and truncate at several
# lengths, in every file of the index. verify must fail naming the file;
# search, get, list and stats may fail but must never crash (under
# `make sanitize` ASan/UBSan turn any memory error into a crash here).
source "$(dirname "$0")/lib.sh"
R=$T/tree; IX=$T/ix
mkdir -p "$R"
for i in $(seq 1 120); do
	printf '# Doc %d\n\nalpha beta gamma%d delta %s\n\n## Part two\n\nepsilon zeta %d\n' \
		"$i" "$i" "$(seq -s ' ' 1 $((i * 3)))" "$i" > "$R/doc$i.md"
done
"$F" index --index "$IX" -q "$R" || { echo "setup failed"; exit 2; }
# A second commit with deletions, so tombstone files exist too.
rm "$R/doc7.md" "$R/doc8.md"; echo "more words" > "$R/extra.md"
"$F" index --index "$IX" -q "$R" || { echo "setup failed"; exit 2; }
"$F" verify --index "$IX" >/dev/null || { echo "fresh index fails verify"; exit 2; }
files=$(cd "$IX" && ls | grep -v '^LOCK$')
[ -n "$files" ] || { echo "no index files"; exit 2; }
NPOS=${CORRUPT_POSITIONS:-12}
[ "${FATHOM_SANITIZE:-0}" = 1 ] && NPOS=${CORRUPT_POSITIONS:-5}
exercise() { # the reads a user would do on a damaged index
	not_signal "$F" search --index "$1" alpha
	not_signal "$F" search --index "$1" --match any "gamma5 epsilon zeta"
	not_signal "$F" search --index "$1" '"epsilon zeta"'
	not_signal "$F" get --index "$1" "$R/doc5.md"
	not_signal "$F" list --index "$1"
	not_signal "$F" stats --index "$1"
}
for f in $files; do
	size=$(stat -c %s "$IX/$f")
	[ "$size" -gt 0 ] || continue
	offs="0 $((size / 2)) $((size - 1))"
	for j in $(seq 1 "$NPOS"); do offs="$offs $(( (RANDOM * 32768 + RANDOM) % size ))"; done
	for off in $offs; do
		C=$T/c; rm -rf "$C"; cp -a "$IX" "$C"
		orig=$(od -An -tu1 -j "$off" -N1 "$C/$f" | tr -d ' ')
		printf "$(printf '\\%03o' $(( (orig ^ 0x5a) & 255 )))" | dd of="$C/$f" bs=1 seek="$off" conv=notrunc status=none
		"$F" verify --index "$C" >/dev/null 2>"$T/err"; rc=$?
		if [ $rc -ne 2 ]; then fail "$f: byte $off flipped, verify exit $rc"; cat "$T/err"
		elif ! grep -q -- "$f" "$T/err"; then fail "$f: byte $off flipped, error does not name the file: $(cat "$T/err")"
		else ok; fi
		exercise "$C"
	done
	for len in 0 1 $((size / 3)) $((size - 1)); do
		C=$T/c; rm -rf "$C"; cp -a "$IX" "$C"
		truncate -s "$len" "$C/$f"
		"$F" verify --index "$C" >/dev/null 2>"$T/err"; rc=$?
		if [ $rc -ne 2 ]; then fail "$f: truncated to $len, verify exit $rc"
		elif ! grep -q -- "$f" "$T/err"; then fail "$f: truncated to $len, error does not name the file: $(cat "$T/err")"
		else ok; fi
		exercise "$C"
	done
done
finish
