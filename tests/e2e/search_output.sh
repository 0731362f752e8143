#!/usr/bin/env bash
# search_output.sh — fathom search's output as an editor and a terminal
# read it (issue 16, deliverable 2):
# - each hit leads with path:line: (the first of its best lines), then the
#   snippet's lines, "12-" context and "13:" lines with a query term,
#   bounded by the snippet size (a minified line is cut, "..." at the cuts;
#   a window of short lines keeps a few)
# - paths relative to the current folder when inside it, else absolute
# - --vimgrep: path:line:col:text, one line per hit
# - --color auto|always|never, NO_COLOR, TERM=dumb, on a real terminal
#   (script(1)) and through a pipe; grep -l and -c paths coloured too
# - errors on stderr, "fathom: ... (see 'fathom help CMD')"; "no results"
#   on stderr with nothing on stdout; a syntax error with --json is JSON
# - a grep-only index says it is one
# The README's search examples are the commands and outputs checked here.
. "$(dirname "$0")/lib.sh"
command -v jq > /dev/null || { echo "skip: jq not installed (make deps)"; exit 77; }

R=$T/tree
mkdir -p "$R/docs" "$R/src"
printf '# Authentication guide\n\nTokens are refreshed every hour.\n\n## Rate limiting\n\nLogin attempts are throttled: five failures lock the account for a minute.\nAdmins can lift the lock.\n' > "$R/docs/auth.md"
printf 'int retry_budget(int n)\n{\n\t/* the backoff doubles */\n\treturn n * 2;\n}\n' > "$R/src/retry.c"
# a minified file: one line of 30 KB, the word in its middle
{ for _ in $(seq 1 2500); do printf 'xx '; done; printf 'needle '
  for _ in $(seq 1 2500); do printf 'yy '; done; echo; } > "$R/src/min.js"
# many short lines: the window would hold dozens
seq 1 400 | sed 's/$/ w/; 200s/$/ pin/; 203s/$/ pin/' > "$R/src/many.txt"
# control characters in a document's text never reach the terminal raw
printf 'the quokka \033[31m is red \007 here\n' > "$R/src/ctl.txt"
(cd "$R" && "$F" index -q .) || fail "index"
cd "$R" || exit 2

# scores are the ranking's business, not the layout's: masked
mask() { sed -E 's/^([^0-9].*:[0-9]+: (.* )?)[0-9]+\.[0-9]{3}$/\1S/'; }

# the lead line, then the snippet's lines: README's example
"$F" search throttled > "$T/out" 2> "$T/err"
[ $? = 0 ] && ok || fail "search throttled: exit"
mask < "$T/out" > "$T/got"
cat > "$T/want" << 'EOF'
docs/auth.md:7: Authentication guide  S
5-## Rate limiting
6-
7:Login attempts are throttled: five failures lock the account for a minute.
8-Admins can lift the lock.
EOF
diff "$T/want" "$T/got" > /dev/null && ok || fail "search throttled: $(diff "$T/want" "$T/got")"
[ -s "$T/err" ] && fail "search throttled: stderr $(cat "$T/err")" || ok
# a code file's title is its name: not repeated after path:line:
"$F" search backoff | mask > "$T/got"
printf 'src/retry.c:3: S\n1-int retry_budget(int n)\n2-{\n3:\t/* the backoff doubles */\n4-\treturn n * 2;\n5-}\n' > "$T/want"
diff "$T/want" "$T/got" > /dev/null && ok || fail "search backoff: $(diff "$T/want" "$T/got")"
# two hits: a blank line between them
"$F" search throttled backoff > "$T/out"
[ "$(grep -c '^$' "$T/out")" = 1 ] && [ "$(grep -Evc '^([0-9]+[-:]|$)' "$T/out")" = 2 ] && ok \
	|| fail "two hits: $(cat "$T/out")"
# --explain: the receipt, then the hits with their score parts
expect_out '^query: throttled' "$F" search --explain throttled
grep -q '^docs/auth.md:7: ' "$T/.out" && grep -q '^   score .* = ' "$T/.out" && ok || fail "--explain: $(cat "$T/.out")"

# --vimgrep: path:line:col:text, the column of the first match on the line
"$F" search --vimgrep throttled backoff > "$T/out"
printf 'src/retry.c:3:9:\t/* the backoff doubles */\ndocs/auth.md:7:20:Login attempts are throttled: five failures lock the account for a minute.\n' > "$T/want"
diff "$T/want" "$T/out" > /dev/null && ok || fail "--vimgrep: $(cat "$T/out")"
expect_rc 2 "$F" search --vimgrep --json throttled

# bounded: the minified line is cut around the match, "..." at both cuts
"$F" search --vimgrep needle > "$T/out"
grep -q '^src/min.js:1:7501:\.\.\.\(xx .*\)\?needle yy .*\.\.\.$' "$T/out" && ok || fail "min.js vimgrep: $(cut -c1-200 "$T/out")"
"$F" search needle > "$T/out"
[ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$T/out")" -lt 500 ] && ok \
	|| fail "a minified line is not cut: $(awk '{ print length($0) }' "$T/out")"
# a chunk inside a long line below line 1: its column in that line
{ echo "first line"; for _ in $(seq 1 3000); do printf 'aa '; done; printf 'zebu '
  for _ in $(seq 1 3000); do printf 'bb '; done; echo; } > "$R/src/long.txt"
"$F" index -q --index "$T/long" "$R/src/long.txt"
"$F" search --index "$T/long" --vimgrep zebu | grep -q "^src/long.txt:2:9001:\.\.\.\(aa .*\)\?zebu bb .*\.\.\.$" && ok \
	|| fail "a long line's column: $("$F" search --index "$T/long" --vimgrep zebu | cut -c1-100)"
rm "$R/src/long.txt"
# a window of short lines: 15 lines at most, from two before the lead
"$F" search pin > "$T/out"
head -3 "$T/out" | mask > "$T/got"
printf 'src/many.txt:200: S\n198-198 w\n199-199 w\n' > "$T/want"
diff "$T/want" "$T/got" > /dev/null && ok || fail "many lines: $(head -5 "$T/out")"
[ "$(grep -c '^[0-9]*[-:]' "$T/out")" -le 15 ] && grep -q '^203:203 w pin$' "$T/out" && ok \
	|| fail "many lines: $(grep -c '^[0-9]*[-:]' "$T/out") lines"
# control characters of the text are written as spaces
"$F" search --color never quokka > "$T/out"
LC_ALL=C grep -q $'[\033\007]' "$T/out" && fail "a raw control character: $(od -c "$T/out" | head)" || ok
grep -q '^1:the quokka  \[31m is red   here$' "$T/out" && ok || fail "control characters: $(cat "$T/out")"

# paths as grep shows them: relative inside the current folder, else absolute
(cd "$R/docs" && "$F" search --index ../.fathom throttled) | head -1 | grep -q '^auth\.md:7: ' && ok \
	|| fail "from a subfolder: $(cd "$R/docs" && "$F" search --index ../.fathom throttled | head -1)"
(cd "$T" && "$F" search --index tree/.fathom throttled) | head -1 | grep -q '^tree/docs/auth\.md:7: ' && ok \
	|| fail "from the parent folder"
mkdir -p "$T/elsewhere"
(cd "$T/elsewhere" && "$F" search --index "$R/.fathom" throttled) | head -1 | grep -qx "$R/docs/auth\.md:7: Authentication guide  [0-9.]*" && ok \
	|| fail "from outside: $(cd "$T/elsewhere" && "$F" search --index "$R/.fathom" throttled | head -1)"
(cd "$T/elsewhere" && "$F" search --index "$R/.fathom" --vimgrep throttled) | grep -q "^$R/docs/auth\.md:7:20:" && ok \
	|| fail "--vimgrep from outside"
# an index of absolute paths: relative again when searched from inside
"$F" index -q --index "$T/abs" "$R/docs"
(cd "$R" && "$F" search --index "$T/abs" throttled) | head -1 | grep -q '^docs/auth\.md:7: ' && ok \
	|| fail "absolute keys from inside: $(cd "$R" && "$F" search --index "$T/abs" throttled | head -1)"
# a JSON lines document has no path: its id, as stored
printf '{"id":"note-1","title":"A note","body":"first\\nthe platypus line\\nlast"}\n' | "$F" add -q --index "$T/j" -
"$F" search --index "$T/j" platypus | mask > "$T/got"
printf 'note-1:2: A note  S\n1-first\n2:the platypus line\n3-last\n' > "$T/want"
diff "$T/want" "$T/got" > /dev/null && ok || fail "JSON lines: $(cat "$T/got")"

# colour: ripgrep's (magenta path, green line number, bold red match)
P=$'\033[35m' L=$'\033[32m' M=$'\033[1;31m' Z=$'\033[0m'
"$F" search --color always throttled > "$T/out"
head -2 "$T/out" | grep -qF "${P}docs/auth.md${Z}:${L}7${Z}:" && grep -qF "${L}7${Z}:Login attempts are ${M}throttled${Z}:" "$T/out" \
	&& ok || fail "--color always: $(cat -v "$T/out")"
"$F" search --color always --vimgrep throttled | grep -qF "${P}docs/auth.md${Z}:${L}7${Z}:20:Login attempts are ${M}throttled${Z}:" \
	&& ok || fail "--color always --vimgrep"
for args in "--color never" "--color auto" ""; do
	# shellcheck disable=SC2086
	"$F" search $args throttled > "$T/out"
	LC_ALL=C grep -q $'\033' "$T/out" && fail "search $args through a pipe: coloured" || ok
	grep -q '^docs/auth.md:7: ' "$T/out" && ok || fail "search $args through a pipe: $(cat -v "$T/out")"
done
expect_rc 2 "$F" search --color sometimes throttled
grep -q "^fathom: --color wants auto, always or never, got 'sometimes' (see 'fathom help search')$" "$T/.err" && ok \
	|| fail "--color sometimes: $(cat "$T/.err")"
# NO_COLOR and TERM do not override a word on the command line
NO_COLOR=1 TERM=dumb "$F" search --color always throttled | LC_ALL=C grep -q $'\033' && ok || fail "NO_COLOR beat --color always"
"$F" grep --color always -l throttled > "$T/out"
grep -qxF "${P}docs/auth.md${Z}" "$T/out" && ok || fail "grep -l --color always: $(cat -v "$T/out")"
"$F" grep --color always -c throttled | grep -qxF "${P}docs/auth.md${Z}:1" && ok || fail "grep -c --color always"
"$F" grep -l throttled > "$T/out"
LC_ALL=C grep -q $'\033' "$T/out" && fail "grep -l through a pipe: coloured" || ok
grep -qxF docs/auth.md "$T/out" && ok || fail "grep -l through a pipe: $(cat -v "$T/out")"

# On a terminal: script(1) runs the command on a pseudo-terminal. TERM is
# set for it, as a terminal emulator sets it (a CI runner may have none).
if command -v script > /dev/null; then
	tty_run() { # ENV... -- ARGS: fathom on a terminal, its output to $T/tty
		local envs=()
		while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
		local cmd="" a
		for a in "$F" "$@"; do cmd+=" $(printf '%q' "$a")"; done
		env TERM=xterm "${envs[@]}" script -qec "$cmd" /dev/null < /dev/null > "$T/tty" 2>&1
	}
	tty_run -- search throttled
	grep -qF "${P}docs/auth.md${Z}:${L}7${Z}:" "$T/tty" && grep -qF "${M}throttled${Z}" "$T/tty" && ok \
		|| fail "auto on a terminal: no colour: $(cat -v "$T/tty")"
	tty_run NO_COLOR=1 -- search throttled
	LC_ALL=C grep -q $'\033' "$T/tty" && fail "NO_COLOR on a terminal: coloured" || ok
	grep -q '^docs/auth.md:7: ' "$T/tty" && ok || fail "NO_COLOR on a terminal: $(cat -v "$T/tty")"
	tty_run NO_COLOR= -- search throttled    # set but empty: no effect
	LC_ALL=C grep -q $'\033' "$T/tty" && ok || fail "NO_COLOR='' on a terminal: not coloured"
	tty_run TERM=dumb -- search throttled
	LC_ALL=C grep -q $'\033' "$T/tty" && fail "TERM=dumb on a terminal: coloured" || ok
	grep -q '^docs/auth.md:7: ' "$T/tty" && ok || fail "TERM=dumb on a terminal: $(cat -v "$T/tty")"
	tty_run -- search --color never throttled
	LC_ALL=C grep -q $'\033' "$T/tty" && fail "--color never on a terminal: coloured" || ok
	grep -q '^docs/auth.md:7: ' "$T/tty" && ok || fail "--color never on a terminal: $(cat -v "$T/tty")"
	tty_run -- grep -l throttled
	grep -qF "${P}docs/auth.md${Z}" "$T/tty" && ok || fail "grep -l on a terminal: $(cat -v "$T/tty")"
	tty_run TERM=dumb -- grep -l throttled
	LC_ALL=C grep -q $'\033' "$T/tty" && fail "grep -l, TERM=dumb: coloured" || ok
	grep -q '^docs/auth.md' "$T/tty" && ok || fail "grep -l, TERM=dumb: $(cat -v "$T/tty")"
else
	echo "note: no script(1) (bsdutils): the terminal checks are skipped"
fi

# errors: stderr, "fathom: ", the command's help named; nothing on stdout
expect_rc 2 "$F" search --foo throttled
grep -qx "fathom: unknown option '--foo' (see 'fathom help search')" "$T/.err" && ok || fail "--foo: $(cat "$T/.err")"
[ -s "$T/.out" ] && fail "--foo: stdout $(cat "$T/.out")" || ok
expect_err "^fathom: unknown option '-f' in '-folding' \(-word in a query excludes word: .*; see 'fathom help search'\)$" "$F" search -folding
for c in grep index get list stats; do
	expect_err "^fathom: unknown option '--foo' \(see 'fathom help $c'\)$" "$F" $c --foo x
done
expect_err "^fathom: -k wants a number from 1 to [0-9]+ \(see 'fathom help search'\)$" "$F" search -k 0 x
expect_err "^fathom: what query\? .*\(see 'fathom help search'\)$" "$F" search
expect_err "^fathom: unknown command 'serach' \(see 'fathom help'\)$" "$F" serach x

# no results: the reason on stderr, stdout empty, exit 1; --json keeps it
expect_rc 1 "$F" search zebra
[ -s "$T/.out" ] && fail "no results: stdout holds $(cat "$T/.out")" || ok
grep -qx 'fathom: no results: "zebra" occurs in no document' "$T/.err" && ok || fail "no results: $(cat "$T/.err")"
expect_rc 1 "$F" search --json zebra
jq -e '.count == 0 and .why == "\"zebra\" occurs in no document"' "$T/.out" > /dev/null && ok || fail "--json why: $(cat "$T/.out")"

# a syntax error with --json: JSON on stdout (message, column), exit 2
expect_rc 2 "$F" search --json --strict 'rate "limiting'
jq -e '.query == "rate \"limiting" and (.error.message | test("never closed")) and .error.column == 6' "$T/.out" > /dev/null \
	&& ok || fail "--json syntax error: $(cat "$T/.out")"
grep -q '^fathom: search: query syntax, column 6' "$T/.err" && ok || fail "--json syntax error, stderr: $(cat "$T/.err")"
expect_rc 2 "$F" search --json --strict $'rate "lim\xff'    # not UTF-8: no "query", still JSON
jq -e '.error.column == 6' "$T/.out" > /dev/null && ok || fail "--json syntax error, bytes not UTF-8: $(cat "$T/.out")"
expect_rc 2 "$F" search --strict 'rate "limiting'
[ -s "$T/.out" ] && fail "a syntax error without --json: stdout $(cat "$T/.out")" || ok

# a grep-only index says so, and names fathom grep
"$F" index -q --grep-only --index "$T/g" "$R/docs"
expect_rc 1 "$F" search --index "$T/g" throttled
grep -q "^fathom: .*for grep alone.*'fathom grep PATTERN'" "$T/.err" && ok || fail "grep-only: $(cat "$T/.err")"
grep -q "no results" "$T/.err" && fail "grep-only: says no results" || ok
expect_rc 1 "$F" search --index "$T/g" --json throttled
jq -e '.count == 0 and (.why | test("for grep alone"))' "$T/.out" > /dev/null && ok || fail "grep-only --json: $(cat "$T/.out")"
expect_out 'docs/auth.md:7:Login attempts are throttled' "$F" grep --index "$T/g" throttled "$R/docs"

echo "$checks checks passed, $fails failed"
[ "$fails" -eq 0 ]
