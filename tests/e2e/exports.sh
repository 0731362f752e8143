#!/usr/bin/env bash
# The public ABI: libfathom.so exports exactly the functions that
# include/fathom.h declares (all named fathom_*; the rest is built hidden),
# and the CLI and the daemon (src/cli, src/serve) call nothing of the
# library's but those, although they link the static archive, which
# would let them reach internals.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
SO=$B/libfathom.so
[ -f "$SO" ] || { echo "no $SO"; exit 2; }
CC=${CC:-cc}

# Every dynamic symbol the library defines must be fathom_*. A sanitizer
# build adds its own (ASan's __odr_asan_gen_*, ...), which start with "__".
nm -D --defined-only "$SO" | awk '{print $NF}' | sort -u > "$T/exported"
skip='^(_init|_fini|_edata|_end|__bss_start)$'
[ "${FATHOM_SANITIZE:-0}" = 1 ] && skip='^(_init|_fini|_edata|_end|__bss_start|__.*)$'
grep -Ev "$skip" "$T/exported" | grep -v '^fathom_' > "$T/internal"
if [ -s "$T/internal" ]; then
	fail "libfathom.so exports $(wc -l < "$T/internal") symbols not named fathom_*: $(head -20 "$T/internal" | tr '\n' ' ')"
else ok; fi

# ... and they are exactly the functions fathom.h declares: none missing
# (declared, never defined), none extra.
"$CC" -Iinclude -E -P include/fathom.h | grep -oE '\bfathom_[a-z_0-9]+ *\(' | tr -d ' (' |
	sort -u > "$T/declared"
grep '^fathom_' "$T/exported" > "$T/exported_fathom"
if ! diff "$T/declared" "$T/exported_fathom" > "$T/diff"; then
	fail "exports differ from fathom.h's declarations (< declared only, > exported only):"
	sed 's/^/    /' "$T/diff" | head -20
else ok; fi

# The CLI and the daemon: the symbols they take from libfathom.a.
objs=$(ls "$B"/src/cli/*.o "$B"/src/serve/*.o 2>/dev/null)
[ -n "$objs" ] || { echo "no objects under $B/src/cli, $B/src/serve"; exit 2; }
nm -g --defined-only $objs | awk 'NF == 3 {print $3}' | sort -u > "$T/client_def"
nm -u $objs | awk '{print $NF}' | sort -u > "$T/client_undef"
nm -g --defined-only "$B/libfathom.a" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u > "$T/lib_def"
comm -23 "$T/client_undef" "$T/client_def" | comm -12 - "$T/lib_def" | grep -v '^fathom_' \
	> "$T/reach"
if [ -s "$T/reach" ]; then
	fail "src/cli or src/serve calls the library's internals: $(tr '\n' ' ' < "$T/reach")"
	for s in $(cat "$T/reach"); do grep -ln "\\b$s\\b" src/cli/*.c src/serve/*.c | sed "s/^/    $s: /"; done
else ok; fi

finish
