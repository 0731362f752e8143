#!/usr/bin/env bash
# The documents people have, end to end: a tree of HTML, gzip-compressed
# HTML and text, a corrupt .gz, reStructuredText and AsciiDoc, made here
# (nothing binary is committed). fathom index reads them as text; fathom
# search finds their words (not their markup) with their titles, heading
# trails and the file's own line numbers; fathom grep reads the .gz files
# decompressed and prints their paths as they are; fathom get reads them.
source "$(dirname "$0")/lib.sh"
command -v gzip > /dev/null || { echo "skip: no gzip"; exit 77; }
command -v jq > /dev/null || { echo "skip: no jq"; exit 77; }
export LC_ALL=C.UTF-8
R=$T/tree
IX=$T/ix
mkdir -p "$R/html" "$R/pkg" "$R/rst"
cat > "$R/html/guide.html" <<'H'
<!DOCTYPE html>
<html><head><title>Guide to &ldquo;Wombats&rdquo;</title>
<style>
.hljs-keyword { color: #a626a4 }
</style>
<script>hljs.highlightAll();</script>
</head><body>
<h1>Wombat care</h1>
<p>Feed the <b>wom</b>bat carrots &amp; grass.</p>
<h2 id="burrows">Burrows<a class="mark" href="#burrows">#</a></h2>
<p>A burrow is dug with <code>quokkaspade</code>
and kept dry.</p>
<!-- hljs: a comment, not text -->
</body></html>
H
# the same page compressed, as /usr/share/doc keeps many
cp "$R/html/guide.html" "$R/html/manual.html"
gzip -n "$R/html/manual.html"
printf 'pkg (1.0-1) unstable; urgency=low\n\n  * Initial release.\n  * Teach the numbat to dig.\n' \
	| gzip -n > "$R/pkg/changelog.Debian.gz"
printf 'this is not gzip data\n' > "$R/pkg/broken.txt.gz"
cat > "$R/rst/index.rst" <<'S'
.. _top:

===============
 Kernel Guide
===============

Intro words.

Memory management
=================

The slab allocator.

Page tables
-----------

Echidna walk the page tables.
S
cat > "$R/rst/book.adoc" <<'A'
= Field Book

Preface.

== Birds

The lyrebird mimics.
A

# small chunks, so that these small files split at their headings
C="--chunk-target 64 --chunk-max 1000"
# a corrupt .gz: skipped with its reason, never a crash
"$F" index --index "$IX" $C -v "$R" > "$T/index.out" 2> "$T/index.err"
grep -q 'broken.txt.gz: corrupt gzip' "$T/index.err" && ok || { fail "no corrupt-gzip skip"; cat "$T/index.err"; }
grep -q 'indexed 5 documents' "$T/index.err" "$T/index.out" && ok || { fail "not 5 documents"; cat "$T/index.out" "$T/index.err"; }

# HTML: the words, not the markup; the title; lines of the file
expect_rc 1 "$F" search --index "$IX" hljs
expect_rc 1 "$F" search --index "$IX" a626a4
expect_rc 1 "$F" search --index "$IX" highlightAll
"$F" search --index "$IX" --json quokkaspade > "$T/q.json"
jq -r '.results[] | "\(.path | sub(".*/tree/"; "")) \(.title) \(.lines[0])-\(.lines[1]) \(.match_lines | join(","))"' \
	"$T/q.json" | sort > "$T/q.txt"
want="html/guide.html Guide to “Wombats” 10-14 11
html/manual.html.gz Guide to “Wombats” 10-14 11"
[ "$(cat "$T/q.txt")" = "$want" ] && ok || { fail "quokkaspade hits:"; cat "$T/q.txt"; echo "want:"; echo "$want"; }
# line 11 of the file is where the word is
[ "$(sed -n 11p "$R/html/guide.html" | grep -c quokkaspade)" = 1 ] && ok || fail "fixture moved"
# entities decoded: "carrots & grass"
expect_out 'carrots & grass' "$F" search --index "$IX" carrots
# the heading trail: chunks of the page split at h1/h2, the permalink mark gone
"$F" chunk $C "$R/html/guide.html" "$R/rst/index.rst" "$R/rst/book.adoc" > "$T/chunks.json"
jq -r '"\(.path | sub(".*/tree/"; "")):\(.lines[0]) \(.headings)"' "$T/chunks.json" > "$T/trails.txt"
for want in "html/guide.html:10 Wombat care > Burrows" \
            "rst/index.rst:9 Kernel Guide > Memory management" \
            "rst/index.rst:14 Kernel Guide > Memory management > Page tables" \
            "rst/book.adoc:5 Field Book > Birds"; do
	grep -qxF "$want" "$T/trails.txt" && ok || { fail "no chunk '$want':"; cat "$T/trails.txt"; }
done
expect_out '"count": *2' "$F" search --index "$IX" --json 'headings:burrows'
expect_out '"count": *1' "$F" search --index "$IX" --json 'headings:tables'
# titles of the markups
expect_out '"title": *"Kernel Guide"' "$F" search --index "$IX" --json echidna
expect_out '"title": *"Field Book"' "$F" search --index "$IX" --json lyrebird

# gzip: searched, grepped and read decompressed; paths as they are
expect_out 'pkg/changelog.Debian.gz' "$F" search --index "$IX" numbat
cd "$R"
expect_out '(^|/)pkg/changelog.Debian.gz:4:  \* Teach the numbat to dig\.$' "$F" grep --index "$IX" numbat
expect_out '(^|/)html/manual.html.gz:11:<p>A burrow is dug with <code>quokkaspade</code>$' \
	"$F" grep --index "$IX" -H quokkaspade html/manual.html.gz
expect_out '(^|/)pkg/changelog.Debian.gz$' "$F" grep --index "$IX" -l urgency
expect_no_out 'broken' "$F" grep --index "$IX" -l -F 'not gzip'
expect_out 'Teach the numbat' "$F" get --index "$IX" "$R/pkg/changelog.Debian.gz"
cd - > /dev/null
# --max-size is the decompressed size: over it, a .gz is for grep alone,
# which (as get) reads it decompressed from disk
IX2=$T/ix2
"$F" index --index "$IX2" --max-size 40 "$R/pkg" > "$T/ix2.out" 2>&1
grep -q '1 for grep alone' "$T/ix2.out" && ok || { fail "changelog not for grep alone"; cat "$T/ix2.out"; }
expect_rc 1 "$F" search --index "$IX2" numbat
expect_out 'changelog.Debian.gz:4:  \* Teach the numbat' "$F" grep --index "$IX2" numbat "$R"
expect_out '^  \* Teach the numbat to dig\.$' "$F" get --index "$IX2" "$R/pkg/changelog.Debian.gz"
# a .gz changed on disk: grep reads the new text
printf 'pkg (1.1-1) unstable; urgency=low\n\n  * The numbat sleeps.\n' | gzip -n > "$R/pkg/changelog.Debian.gz"
expect_out 'changelog.Debian.gz:3:  \* The numbat sleeps\.' "$F" grep --index "$IX" numbat "$R"
# ... and turned corrupt: skipped with a reason, not a crash
printf 'garbage' > "$R/pkg/changelog.Debian.gz"
not_signal "$F" grep --index "$IX" numbat "$R"
expect_err 'changelog.Debian.gz' "$F" grep --index "$IX" numbat "$R"
# the index follows: reindexed, the corrupt file leaves it
"$F" index --index "$IX" $C "$R" > /dev/null 2>&1
expect_rc 1 "$F" search --index "$IX" numbat

[ $fails -eq 0 ] || { echo "$fails of $((checks + fails)) checks failed"; exit 1; }
echo "$checks checks passed"
