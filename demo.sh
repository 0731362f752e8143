#!/usr/bin/env bash
# make demo: index what any Debian machine has (fathom's own tree and
# /usr/share/doc), then show a few searches (the dialect, exact identifiers,
# a glossary group), receipts, fathom grep, a document fetch and the index
# statistics. The index lives in demo-index/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")"
F=${FATHOM:-build/fathom}
IX=demo-index
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@" || true; }

rm -rf "$IX"
run "$F" index --index "$IX" --meta collection=fathom .
run "$F" index --index "$IX" --meta collection=debian-doc /usr/share/doc
say "$F index --index $IX --meta collection=fathom .   # again: nothing changed"
"$F" index --index "$IX" --meta collection=fathom .
run "$F" stats --index "$IX"
run "$F" search --index "$IX" -k 3 --path 'src/*' "atomic manifest rename"
run "$F" search --index "$IX" -k 3 --filter collection=debian-doc "GNU General Public License version 3"
run "$F" search --index "$IX" -k 3 --lang c "fa_crc32c"
run "$F" search --index "$IX" -k 3 --vimgrep "atomic manifest rename"   # for an editor
run "$F" search --index "$IX" -k 2 --path 'src/*' --explain "block max WAND"
run "$F" search --index "$IX" -k 1 --json "getUserName"
# The dialect: OR, negation, a field scope; the parsed form in the receipt.
run "$F" search --index "$IX" -k 2 --explain 'manifest OR tombstone -test path:src'
# Exact identifiers found at ingest, and one as a hard filter.
run "$F" vocab --index "$IX" --category function fa_crc32
run "$F" search --index "$IX" -k 2 --explain "fa_crc32c()"
# A glossary group expands a query word into its aliases.
run "$F" glossary --index "$IX" add checksum crc
run "$F" search --index "$IX" -k 2 --explain --path 'docs/*' checksum
# A word built here, so this script does not contain (and index) it.
nonsense="quux""frobnicat""ezz"
run "$F" search --index "$IX" "$nonsense"
# fathom grep: PCRE2 over the indexed files, only those the trigram index
# cannot rule out; --stats shows how many were read.
run "$F" grep --index "$IX" --stats 'fa_crc32c\(0, [a-z]+' src/
run "$F" grep --index "$IX" -l -i -F "general public license" /usr/share/doc
run "$F" grep --index "$IX" --explain 'spin_(un)?lock_irq(save|restore)'
# A boolean query in the style of Zoekt, and grep hits as chunks.
run "$F" grep --index "$IX" -Q -l 'lang:c pcre2_match_data -file:fuzz'
run "$F" grep --index "$IX" --chunks=3 'FATHOM_E[A-Z]+'
run "$F" get --index "$IX" README.md:1:12
run "$F" verify --index "$IX"
printf '\nThe index is in %s/; try: %s search --index %s "your words"\n' "$IX" "$F" "$IX"
