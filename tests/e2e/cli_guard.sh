#!/usr/bin/env bash
# End-to-end: the fathom command against hostile names and careless
# arguments (issue 13):
# - file names holding a newline, a tab, an escape or a backslash are
#   written escaped (\n, \t, \xNN, \\) by grep, search and list, so no name
#   forges an output line; --json keeps the exact bytes;
# - every value list_sources shows under "metadata" works as a filter
#   (--filter lang=c was once empty while lang:c and --lang c worked);
# - an unknown option is an error with a hint, never a query word; "--"
#   ends the options; every command's -h and --help print its help, and
#   get, list, stats, verify and vocab take only the options their help lists.
source "$(dirname "$0")/lib.sh"
R=$T/tree; IX=$T/ix
mkdir -p "$R/src" "$R/docs"
nl=$'evil\nfake.txt:1:forged line'   # a name that would forge a grep line
printf 'the forgery word TC-4242\n' > "$R/$nl"
printf 'the forgery word\n' > "$R/tab"$'\t'"name.txt"
printf 'the forgery word\n' > "$R/esc"$'\033'"[31mred.txt"
printf 'the forgery word\n' > "$R/back\\slash.txt"
printf 'int forgery_c(void) { return 1; }\n' > "$R/src/impl.c"
printf 'def forgery_py():\n    return 1\n' > "$R/src/impl.py"
printf '# Notes\n\nforgery in markdown\n' > "$R/docs/notes.md"
(cd "$R" && "$F" index -q --index "$IX" --meta library=demo --meta team=a --meta team=b .) \
	&& ok || fail "index the tree"

# ---- item 7: names escaped in human output ----
# Every printer writes one line per file: 4 text files, the .md and the .c
# and .py files hold "forgery".
for args in "grep -l forgery" "grep -c forgery" "grep forgery" "grep -n forgery"; do
	# shellcheck disable=SC2086
	"$F" $args --index "$IX" > "$T/g.out" 2> "$T/g.err"
	[ "$(wc -l < "$T/g.out")" = 7 ] && ok || fail "fathom $args: $(wc -l < "$T/g.out") lines, want 7: $(cat "$T/g.out")"
	grep -q '^fake\.txt:1:' "$T/g.out" && fail "fathom $args: a name forged a line" || ok
	grep -qF 'evil\nfake.txt:1:forged line' "$T/g.out" && ok || fail "fathom $args: the newline is not written \\n"
	grep -qF 'tab\tname.txt' "$T/g.out" && ok || fail "fathom $args: the tab is not written \\t"
	grep -qF 'esc\x1b[31mred.txt' "$T/g.out" && ok || fail "fathom $args: the escape is not written \\x1b"
	grep -qF 'back\\slash.txt' "$T/g.out" && ok || fail "fathom $args: the backslash is not written \\\\"
	LC_ALL=C grep -q $'[\t\033]' "$T/g.out" && fail "fathom $args: a raw tab or escape" || ok
done
# grep's color output escapes the name too
"$F" grep --index "$IX" --color always -l forgery > "$T/g.out"
[ "$(wc -l < "$T/g.out")" = 7 ] && ok || fail "grep --color always: $(wc -l < "$T/g.out") lines"
# grep --chunks names its chunks by path as well
"$F" grep --index "$IX" --chunks forgery > "$T/g.out"
[ "$(wc -l < "$T/g.out")" = 7 ] && ok || fail "grep --chunks: $(wc -l < "$T/g.out") lines, want 7"
grep -qF 'evil\nfake.txt:1:forged line' "$T/g.out" && ok || fail "grep --chunks: the newline is not escaped"

# search: each hit is a line "path:line: ..." and then its lines, "N:text"
"$F" search --index "$IX" -k 20 forgery > "$T/s.out" 2>&1
grep -q '^fake\.txt' "$T/s.out" && fail "search: a name forged a line" || ok
grep -qF 'evil\nfake.txt:1:forged line' "$T/s.out" && ok || fail "search: the newline is not written \\n: $(cat "$T/s.out")"
grep -qF 'tab\tname.txt' "$T/s.out" && ok || fail "search: the tab is not written \\t"
LC_ALL=C grep -q $'[\t\033]' "$T/s.out" && fail "search: a raw tab or escape" || ok
[ "$(grep -Evc '^([0-9]+[-:]|$)' "$T/s.out")" = 7 ] && ok || fail "search: want 7 hits: $(cat "$T/s.out")"

# list: one line per document
"$F" list --index "$IX" > "$T/l.out"
[ "$(wc -l < "$T/l.out")" = 7 ] && ok || fail "list: $(wc -l < "$T/l.out") lines, want 7: $(cat "$T/l.out")"
grep -qF 'evil\nfake.txt:1:forged line' "$T/l.out" && ok || fail "list: the newline is not written \\n"
LC_ALL=C grep -q $'\033' "$T/l.out" && fail "list: a raw escape" || ok

# vocab names the first document holding an identifier
"$F" vocab --index "$IX" TC-4242 > "$T/v.out"
[ "$(grep -c . "$T/v.out")" = 2 ] && ok || fail "vocab: want a header and one line: $(cat "$T/v.out")"
grep -qF '(first: evil\nfake.txt:1:forged line)' "$T/v.out" && ok || fail "vocab: the newline is not written \\n"

# JSON keeps the exact name
if command -v jq > /dev/null; then
	"$F" grep --index "$IX" --json forgery | jq -r 'select(.type == "match").data.path.text' > "$T/j.out"
	grep -q '/evil$' "$T/j.out" && grep -qxF 'fake.txt:1:forged line' "$T/j.out" && ok \
		|| fail "grep --json: the name is not exact: $(cat "$T/j.out")"
	[ "$("$F" list --index "$IX" --json | jq -r .id | grep -c .)" = 8 ] && ok \
		|| fail "list --json: the newline name is not exact"
fi

# ---- item 13: every metadata value works as a filter ----
expect_out 'impl\.c' "$F" search --index "$IX" --filter lang=c forgery_c
expect_rc 0 "$F" search --index "$IX" --filter lang=c forgery_c
expect_no_out 'impl\.py' "$F" search --index "$IX" --filter lang=c 'forgery*'
expect_out 'impl\.py' "$F" search --index "$IX" --filter lang=python forgery_py
expect_rc 1 "$F" search --index "$IX" --filter lang=python forgery_c
# the same in the query and with --lang
expect_out 'impl\.c' "$F" search --index "$IX" lang:c forgery_c
expect_out 'impl\.c' "$F" search --index "$IX" --lang c forgery_c
# a key with two values: either selects the document
expect_out 'notes\.md' "$F" search --index "$IX" --filter team=a forgery
expect_out 'notes\.md' "$F" search --index "$IX" --filter team=b forgery
expect_rc 1 "$F" search --index "$IX" --filter team=c forgery
# a "lang" member of a JSON document is metadata, and a filter as well
printf '{"id":"j1","body":"forgery in french","lang":"fr"}\n' > "$T/j.jsonl"
"$F" add --index "$IX" -q --jsonl "$T/j.jsonl"
expect_out 'j1' "$F" search --index "$IX" --filter lang=fr forgery
expect_out 'j1' "$F" search --index "$IX" --filter lang=text french
if command -v jq > /dev/null; then
	# every key=value list_sources reports selects at least one document
	"$F" mcp --index "$IX" > "$T/m.out" 2> "$T/m.err" <<'MSG'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_sources","arguments":{}}}
MSG
	jq -r 'select(.id == 2) | .result.structuredContent.metadata | to_entries[] |
		.key as $k | .value | keys[] | "\($k)=\(.)"' "$T/m.out" > "$T/facets"
	[ "$(wc -l < "$T/facets")" -ge 8 ] && ok || fail "list_sources: too few facets: $(cat "$T/facets") $(cat "$T/m.out")"
	grep -qx 'lang=c' "$T/facets" && ok || fail "list_sources does not list lang=c"
	while read -r kv; do
		"$F" search --index "$IX" -k 50 --filter "$kv" 'forg*' > /dev/null 2>&1 && ok \
			|| fail "list_sources shows $kv, but --filter $kv matches nothing"
	done < "$T/facets"
fi

# ---- item 14: options ----
# an unknown short option is an error, not a query word
expect_rc 2 "$F" search --index "$IX" -i 'gpg sign'
expect_err "unknown option '-i'" "$F" search --index "$IX" -i 'gpg sign'
expect_err "search -- " "$F" search --index "$IX" -i 'gpg sign'
expect_err "unknown option '-f' in '-folding'" "$F" search --index "$IX" protein -folding
expect_rc 2 "$F" search --index "$IX" forgery -word
expect_rc 2 "$F" search --index "$IX" --bogus forgery
expect_err "unknown option '--bogus'" "$F" search --index "$IX" --bogus forgery
expect_err "option '-k' wants a value" "$F" search --index "$IX" forgery -k
expect_err "option '--filter' wants a value" "$F" search --index "$IX" forgery --filter
expect_err "option '--json' takes no value" "$F" search --index "$IX" --json=yes forgery
expect_err "option '--ex' is ambiguous" "$F" search --index "$IX" --ex forgery
expect_rc 2 "$F" search --index "$IX" --ex=1 forgery
expect_err "unknown option '--listen' \(an option of serve" "$F" search --index "$IX" --listen forgery
# after --, -word is the dialect's NOT
expect_out 'query: \(AND forgery \(NOT markdown\)\)' "$F" search --index "$IX" --explain -- forgery -markdown
expect_out 'query: \(AND \(NOT markdown\) forgery\)' "$F" search --index "$IX" --explain -- '-markdown forgery'
expect_no_out 'notes\.md' "$F" search --index "$IX" -k 20 -- forgery -markdown
# grep: a pattern starting with '-' goes after --
printf 'a -K line\n' > "$R/dash.txt"
(cd "$R" && "$F" index -q --index "$IX" .)
expect_out 'dash\.txt:1:a -K line' "$F" grep --index "$IX" -- -K
expect_rc 2 "$F" grep --index "$IX" -K
expect_err "unknown option '-K'" "$F" grep --index "$IX" -K
expect_rc 2 "$F" grep --index "$IX" -Z forgery
# an option of another command is no silent no-op
expect_rc 2 "$F" delete --index "$IX" --max-size 5 src/impl.c
expect_err "^fathom: unknown option '--max-size' \(an option of index, chunk; see 'fathom help delete'\)" "$F" delete --index "$IX" --max-size 5 src/impl.c
expect_err "^fathom: unknown option '--meta' \(an option of index, add; see 'fathom help optimize'\)" "$F" optimize --index "$IX" --meta a=b
expect_out 'impl\.c' "$F" list --index "$IX"
# nothing is created by a command that fails on its options
expect_rc 2 "$F" index --index "$T/none" -Z "$R"
[ -e "$T/none" ] && fail "index -Z created an index" || ok
# get, list, stats, verify and vocab each take their own options alone (they
# once shared one table: verify --json and list --chunk 1 ran silently), and
# each --help lists exactly those
declare -A own=([get]="--chunk --index" [list]="--index --json" [stats]="--index --json"
	[verify]="--index" [vocab]="--category --index --json")
declare -A val=([--chunk]=1 [--category]=version [--index]="$IX" [--json]=)
for c in get list stats verify vocab; do
	for o in --chunk --category --json; do
		case " ${own[$c]} " in *" $o "*) continue ;; esac
		# shellcheck disable=SC2086
		expect_rc 2 "$F" "$c" --index "$IX" $o ${val[$o]}
		# shellcheck disable=SC2086
		expect_err "unknown option '$o'" "$F" "$c" --index "$IX" $o ${val[$o]}
	done
	expect_err "unknown option '-k'" "$F" "$c" --index "$IX" -k 3
	listed=$("$F" "$c" --help | grep -o -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ')
	[ "$listed" = "${own[$c]} " ] && ok || fail "fathom $c --help lists '$listed', it takes '${own[$c]}'"
done
# every command's -h and --help: its help on stdout, exit 0, nothing run
for c in index add search get list delete stats verify optimize vocab glossary grep serve mcp chunk eval; do
	"$F" "$c" --help > "$T/h.out" 2> "$T/h.err"
	rc=$?
	[ $rc -eq 0 ] && ok || fail "fathom $c --help: exit $rc: $(cat "$T/h.err")"
	grep -q "^usage: fathom $c" "$T/h.out" && ok || fail "fathom $c --help: $(head -3 "$T/h.out")"
	[ -s "$T/h.err" ] && fail "fathom $c --help wrote to stderr: $(cat "$T/h.err")" || ok
	"$F" "$c" -h > "$T/h2.out" 2> /dev/null && cmp -s "$T/h.out" "$T/h2.out" && ok || fail "fathom $c -h"
	# after other options too
	"$F" "$c" --index "$T/nowhere" --help > "$T/h2.out" 2> /dev/null && cmp -s "$T/h.out" "$T/h2.out" && ok \
		|| fail "fathom $c --index X --help"
	[ -e "$T/nowhere" ] && fail "fathom $c --help created $T/nowhere" || ok
	expect_rc 2 "$F" "$c" --index "$T/nowhere" -Z
	expect_err "unknown option '-Z'" "$F" "$c" --index "$T/nowhere" -Z
done
finish
