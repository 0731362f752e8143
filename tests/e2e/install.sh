#!/usr/bin/env bash
# Installable like a Debian tool:
# - make install DESTDIR=stage installs the binary, libfathom.so with its
#   soname, libfathom.a, fathom.h, fathom.pc, fathom(1) and the bash and
#   zsh completions; a small C program builds from that tree with
#   pkg-config (against the .so, and statically), links and searches an
#   index; make uninstall removes it all;
# - the man page renders; the completions parse and complete;
# - help, the man page and both completions list the same options for
#   every command (they are written from one table: no drift);
# - --version, -V, and fathom --index DIR COMMAND;
# - a plain make on a machine without a library names the Debian package
#   and make deps instead of failing at a missing header.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
command -v pkg-config > /dev/null || { echo "skip: no pkg-config (make deps installs it)"; exit 77; }
CC=${CC:-cc}
SAN=
if [ "${FATHOM_SANITIZE:-0}" = 1 ]; then
	# the library under test is built with ASan and UBSan: so is the program
	CC=clang
	SAN="-fsanitize=address,undefined"
fi
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"; }

# ---- make install into a stage ----
S=$T/stage
if ! mk -s BUILD="$B" DESTDIR="$S" PREFIX=/usr/local install > "$T/install.out" 2>&1; then
	fail "make install DESTDIR=$S failed:"; sed 's/^/    /' "$T/install.out" | tail -20
	finish; exit 1
fi
P=$S/usr/local
V=$(sed -n 's/^#define FATHOM_VERSION_STRING "\([^"]*\)".*/\1/p' include/fathom.h)
SOV=$(echo "$V" | cut -d. -f1-2)
for f in bin/fathom lib/libfathom.so.$V lib/libfathom.a include/fathom.h lib/pkgconfig/fathom.pc \
	share/man/man1/fathom.1 share/bash-completion/completions/fathom \
	share/zsh/site-functions/_fathom; do
	[ -f "$P/$f" ] && ok || fail "make install did not install $f"
done
[ "$(readlink "$P/lib/libfathom.so.$SOV")" = "libfathom.so.$V" ] && ok \
	|| fail "libfathom.so.$SOV -> $(readlink "$P/lib/libfathom.so.$SOV"), want libfathom.so.$V"
[ "$(readlink "$P/lib/libfathom.so")" = "libfathom.so.$SOV" ] && ok \
	|| fail "libfathom.so -> $(readlink "$P/lib/libfathom.so"), want libfathom.so.$SOV"
if command -v readelf > /dev/null; then
	readelf -d "$P/lib/libfathom.so.$V" | grep -q "SONAME.*\[libfathom.so.$SOV\]" && ok \
		|| fail "libfathom.so's soname: $(readelf -d "$P/lib/libfathom.so.$V" | grep SONAME)"
fi
[ -x "$P/bin/fathom" ] && ok || fail "bin/fathom is not executable"

# ---- a C program built with pkg-config from the staged tree ----
export PKG_CONFIG_PATH=$P/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$S
[ "$(pkg-config --modversion fathom)" = "$V" ] && ok || fail "pkg-config --modversion fathom: $(pkg-config --modversion fathom 2>&1)"
cat > "$T/prog.c" << 'EOF'
#include <stdio.h>
#include <fathom.h>

/* prog INDEX QUERY: each hit as doc_id:first_line */
int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	fathom_index *ix;
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	int rc = fathom_open(&ix, argv[1], &oo);
	if (rc) {
		fprintf(stderr, "open %s: %s\n", argv[1], fathom_strerror(rc));
		return 2;
	}
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	fathom_results *r;
	rc = fathom_search(&r, ix, argv[2], &so);
	if (rc) {
		fprintf(stderr, "search: %s\n", fathom_strerror(rc));
		fathom_close(ix);
		return 2;
	}
	for (size_t i = 0; i < fathom_results_count(r); i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		printf("%s:%u\n", h->doc_id, h->line_start);
	}
	fathom_results_free(r);
	fathom_close(ix);
	return 0;
}
EOF
mkdir -p "$T/tree"
printf '# Birds\n\nThe kestrel hovers over the field.\n' > "$T/tree/birds.md"
printf 'Fish swim in the river.\n' > "$T/tree/fish.txt"
# the index is built by the installed binary, searched by the program
(cd "$T" && "$P/bin/fathom" index -q --index ix tree) && ok || fail "installed fathom index failed"
# shellcheck disable=SC2046
if $CC $SAN -std=c11 -Wall -Wextra -Werror -o "$T/prog" "$T/prog.c" $(pkg-config --cflags --libs fathom) \
	2> "$T/cc.err"; then
	ok
	if command -v readelf > /dev/null; then
		readelf -d "$T/prog" | grep -q "NEEDED.*\[libfathom.so.$SOV\]" && ok \
			|| fail "the program does not need libfathom.so.$SOV: $(readelf -d "$T/prog" | grep NEEDED)"
	fi
	out=$(LD_LIBRARY_PATH=$P/lib "$T/prog" "$T/ix" kestrel 2>&1)
	[ "$out" = "tree/birds.md:1" ] && ok || fail "the program linked against libfathom.so printed '$out'"
	out=$(LD_LIBRARY_PATH=$P/lib "$T/prog" "$T/ix" river 2>&1)
	[ "$out" = "tree/fish.txt:1" ] && ok || fail "the program's search for river printed '$out'"
else
	fail "cc \$(pkg-config --cflags --libs fathom) failed:"; sed 's/^/    /' "$T/cc.err" | head -20
fi
if [ -z "$SAN" ]; then
	# statically: libfathom.a and the libraries fathom.pc names as private
	# shellcheck disable=SC2046
	if $CC -static -std=c11 -o "$T/prog_static" "$T/prog.c" $(pkg-config --static --cflags --libs fathom) \
		2> "$T/cc.err"; then
		ok
		out=$("$T/prog_static" "$T/ix" kestrel 2>&1)
		[ "$out" = "tree/birds.md:1" ] && ok || fail "the static program printed '$out'"
	elif grep -qE "undefined reference to .(libssh2_|gss_|ldap_)" "$T/cc.err" &&
	     ! grep -qE "undefined reference to .(cblas_|LAPACKE_|openblas_|fathom_|em_|ix_|q_|fa_|text_|ZSTD|utf8proc|json_|pcre2|sb_stemmer|curl_)" "$T/cc.err"; then
		# libfathom links libcurl (the remote embedder); Debian's libcurl.a
		# needs libraries Debian ships no static archive of (libssh2,
		# gssapi, ldap): only those are missing, so the static half is not
		# linkable on Debian, whatever fathom does
		echo "  skip: a static link: Debian's libcurl.a needs libssh2, gssapi and ldap archives Debian does not ship"
	else
		fail "cc -static \$(pkg-config --static --cflags --libs fathom) failed:"
		sed 's/^/    /' "$T/cc.err" | head -20
	fi
fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# ---- --version, -V, and --index before the command ----
want="fathom $V"
for v in --version -V version; do
	[ "$("$F" $v)" = "$want" ] && ok || fail "fathom $v printed '$("$F" $v 2>&1)', want '$want'"
done
[ "$("$P/bin/fathom" -V)" = "$want" ] && ok || fail "the installed fathom -V"
grep -q "fathom $V" "$P/share/man/man1/fathom.1" && ok || fail "the man page does not carry version $V"
(cd "$T" && "$F" search --index ix kestrel) > "$T/after.out" 2>&1
(cd "$T" && "$F" --index ix search kestrel) > "$T/before.out" 2>&1
grep -q 'birds\.md' "$T/after.out" && cmp -s "$T/after.out" "$T/before.out" && ok \
	|| fail "fathom --index X search differs from fathom search --index X: $(head -3 "$T/before.out")"
(cd "$T" && "$F" --index=ix list) | grep -q 'fish\.txt' && ok || fail "fathom --index=X list"
# the command's own --index wins over the one before it
(cd "$T" && "$F" --index nowhere list --index ix) | grep -q 'fish\.txt' && ok \
	|| fail "fathom --index A list --index B does not read B"
(cd "$T" && "$F" --index ix grep -c kestrel) | grep -q 'birds\.md:1' && ok || fail "fathom --index X grep"
expect_rc 2 "$F" --index
expect_err "unknown option '--bogus'" "$F" --bogus list
expect_out '^usage: fathom search' "$F" --index "$T/ix" search --help
[ -e "$T/nowhere" ] && fail "a stray index was created" || ok

# ---- the man page renders ----
MAN=$P/share/man/man1/fathom.1
head -5 "$MAN" | grep -q '^\.TH FATHOM 1' && ok || fail "fathom.1 has no .TH FATHOM 1"
for sec in NAME SYNOPSIS DESCRIPTION COMMANDS 'COMMON OPTIONS' 'EXIT STATUS'; do
	grep -q "^\.SH \"*$sec" "$MAN" && ok || fail "fathom.1 has no $sec section"
done
if command -v groff > /dev/null; then
	# (without a terminal grotty overstrikes bold and underlined letters)
	groff -man -Tutf8 -ww "$MAN" 2> "$T/man.err" | sed 's/.\x08//g' > "$T/man.txt"
	[ -s "$T/man.err" ] && fail "groff warns on fathom.1: $(head -5 "$T/man.err")" || ok
	grep -q -- '--max-count' "$T/man.txt" && grep -q 'fathom - search for documentation' "$T/man.txt" && ok \
		|| fail "the rendered man page lacks its name or options: $(head -20 "$T/man.txt")"
	if command -v man > /dev/null; then
		MANWIDTH=80 man -l "$MAN" 2> /dev/null | grep -q 'fathom grep' && ok || fail "man -l fathom.1"
	fi
else
	echo "note: no groff; the man page's structure alone is checked"
fi

# ---- bash completion ----
BC=$P/share/bash-completion/completions/fathom
bash -n "$BC" && ok || fail "bash -n on the bash completion"
# complete WORDS...: what _fathom offers for the last word
cat > "$T/complete.sh" << 'EOF'
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
_fathom
printf '%s\n' "${COMPREPLY[@]}"
EOF
complete_is() { # WANT WORDS...
	local want=$1; shift
	local got
	got=$(cd "$T" && bash "$T/complete.sh" "$BC" "$@" | sort | tr '\n' ' ')
	[ "$got" = "$want " ] && ok || fail "completing '$*': got '$got', want '$want'"
}
complete_is "search" fathom sea
complete_is "search serve" fathom se
complete_is "search" fathom --index ix sea
complete_is "--match" fathom search --ma
complete_is "always auto" fathom grep --color a
complete_is "--max-size" fathom --index ix index --max
complete_is "" fathom index --max-size ''
complete_is "approve" fathom glossary ap
complete_is "bash zsh" fathom completion ''
complete_is "grep" fathom help gre
complete_is "tree" fathom index tre
complete_is "--help --index --version -V -h" fathom -

# ---- zsh completion ----
ZC=$P/share/zsh/site-functions/_fathom
head -1 "$ZC" | grep -q '^#compdef fathom' && ok || fail "_fathom does not start with #compdef fathom"
if command -v zsh > /dev/null; then
	zsh -n "$ZC" && ok || fail "zsh -n on the zsh completion"
else
	echo "note: no zsh; its completion is not parsed"
fi

# ---- one table: help, the man page and both completions agree ----
# what is installed is what the binary writes
cmp -s "$MAN" <("$F" help --man) && ok || fail "the installed fathom.1 differs from fathom help --man"
cmp -s "$BC" <("$F" completion bash) && ok || fail "the installed bash completion differs from fathom completion bash"
cmp -s "$ZC" <("$F" completion zsh) && ok || fail "the installed zsh completion differs from fathom completion zsh"
# help's option rows: lines "  -x, --long ARG   what it does"
help_opts() {
	"$F" help "$1" | grep -E '^  -' | sed -E 's/^  (.*)/\1/; s/   .*//' | grep -oE -- '(^|[ ,])--?[a-zA-Z0-9][a-zA-Z0-9-]*' |
		tr -d ' ,' | sort -u
}
# the options of command $1 in the man page's roff: the .TP rows of its section
man_opts() {
	awk -v c="$1" '/^\.SS /{ split($0, w, /[ "]+/); on = (w[2] == c) } /^\.SH /{ on = 0 }
		on && prev == ".TP" { print } { prev = $0 }' "$MAN" |
		sed 's/\\f[BIR]//g; s/\\-/-/g' | grep -oE -- '^(-[a-zA-Z0-9](, )?)?(--[a-zA-Z0-9-]+)?' |
		tr ',' '\n' | tr -d ' ' | grep . | sort -u
}
bash_opts() {
	awk -v c="$1" '$0 ~ "^\t" c "\\)$" { getline; sub(/^[ \t]*opts=./, ""); sub(/.$/, ""); print; exit }' "$BC" |
		tr ' ' '\n' | grep . | sort -u
}
commands=$("$F" help | awk '/^commands:/{ on = 1; next } /^$/{ on = 0 } on && /^  [a-z]/{ print $1 }')
[ "$(echo "$commands" | wc -l)" -ge 19 ] && ok || fail "fathom help lists too few commands: $commands"
if command -v zsh > /dev/null; then
	# the specs each _fathom_cmd_X passes to _arguments, their options alone
	zsh -f -c 'source_specs() {
			_arguments() { print -rl -- "$@"; }
			eval "$(sed "\$d" "$1")"   # the functions, not the final call
			for c in ${=2}; do print -r -- "== $c"; _fathom_cmd_$c; done
		}; source_specs "$1" "$2"' zsh "$ZC" "$(echo $commands)" > "$T/zsh.specs" 2> "$T/zsh.err" \
		&& ok || fail "loading the zsh completion: $(head -3 "$T/zsh.err")"
fi
zsh_opts() {
	# (the first words are _arguments' own flags, -s -S)
	awk -v c="$1" '/^== /{ on = ($2 == c); next } on' "$T/zsh.specs" | grep -vxE -- '-s|-S' |
		sed -E 's/^\*?(\([^)]*\))?\*?//' | grep -oE -- '^--?[a-zA-Z0-9][a-zA-Z0-9-]*' | sort -u
}
for c in $commands; do
	h=$(help_opts "$c" | tr '\n' ' ')
	m=$(man_opts "$c" | tr '\n' ' ')
	b=$(bash_opts "$c" | tr '\n' ' ')
	[ "$h" = "$m" ] && ok || fail "$c: help lists '$h', the man page '$m'"
	[ "$h" = "$b" ] && ok || fail "$c: help lists '$h', the bash completion '$b'"
	if [ -s "$T/zsh.specs" ]; then
		z=$(zsh_opts "$c" | tr '\n' ' ')
		[ "$h" = "$z" ] && ok || fail "$c: help lists '$h', the zsh completion '$z'"
	fi
	# and each is an option the parser takes: --help after it still prints
	# the help, where an unknown option would be an error
	for o in $h; do
		case $o in --index) continue ;; esac
		"$F" "$c" --help "$o" > /dev/null 2>&1 && ok || fail "fathom $c --help $o"
	done
done
# the commands too
mc=$(grep '^\.SS ' "$MAN" | sed -E 's/^\.SS "?([a-z]+).*/\1/' | tr '\n' ' ')
[ "$mc" = "$(echo $commands) " ] && ok || fail "the man page's commands '$mc' differ from help's"
bc=$(sed -n "s/^[[:space:]]*local commands='\(.*\)'$/\1/p" "$BC")
[ "$bc" = "$(echo $commands)" ] && ok || fail "the bash completion's commands '$bc' differ from help's"

# ---- make uninstall ----
mk -s BUILD="$B" DESTDIR="$S" PREFIX=/usr/local uninstall > "$T/uninstall.out" 2>&1 && ok \
	|| fail "make uninstall: $(tail -5 "$T/uninstall.out")"
left=$(find "$S" ! -type d | sed "s|^$S/||")
[ -z "$left" ] && ok || fail "make uninstall left: $left"

# ---- a machine without a library: the packages are named ----
# a compiler that cannot find jansson.h, as on a machine without libjansson-dev
cat > "$T/nojansson-cc" << EOF
#!/bin/sh
case " \$* " in
*" -E "*) src=\$(cat); case \$src in *jansson.h*)
	echo "<stdin>:1:10: fatal error: jansson.h: No such file or directory" >&2; exit 1 ;; esac
	printf '%s\n' "\$src" | exec $CC "\$@" ;;
esac
exec $CC "\$@"
EOF
chmod +x "$T/nojansson-cc"
# a plain make (its first object waits for the check; one job, so nothing
# else starts)
mk -j1 BUILD="$T/b" CC="$T/nojansson-cc" > "$T/make.out" 2>&1
rc=$?
[ $rc -ne 0 ] && ok || fail "make without jansson.h succeeded"
grep -q 'libjansson-dev' "$T/make.out" && grep -q 'make deps' "$T/make.out" && ok \
	|| fail "make without jansson.h does not name libjansson-dev and make deps: $(cat "$T/make.out")"
grep -q 'libzstd-dev\|libpcre2-dev' "$T/make.out" && fail "it names packages that are there: $(cat "$T/make.out")" || ok
grep -q 'No such file' "$T/make.out" && fail "make reached the compiler: $(cat "$T/make.out")" || ok
[ -n "$(find "$T/b" -name '*.o')" ] && fail "make compiled before the check" || ok
mk -j1 BUILD="$T/b" CC="$T/no/such/cc" > "$T/make.out" 2>&1
grep -q 'gcc' "$T/make.out" && grep -q 'make deps' "$T/make.out" && ok \
	|| fail "make without a compiler does not name gcc and make deps: $(cat "$T/make.out")"
# with the libraries there, the check passes
mk -s BUILD="$T/b" "$T/b/.deps-ok" > "$T/make.out" 2>&1 && ok || fail "the dependency check fails here: $(cat "$T/make.out")"

finish
