#!/bin/sh
# make_segment_seeds.sh — rebuilds the seed corpus of fuzz_segment from
# small indexes written by the fathom CLI. Run it after a change to the
# segment format (docs/FORMAT.md), then commit fuzz/corpus/fuzz_segment.
#
#   fuzz/make_segment_seeds.sh [build/fathom]
#
# Seeds: "small" (a few documents with tags, metadata, a shared path and a
# title equal to the path), "multiblock" (a term in 300 chunks: a block
# directory and several postings blocks), "twoframes" (more than 64 KiB of
# text: two document store frames), "graph" (48 documents with 4-d vectors,
# hnsw.min-vectors 16: VECS and an HNSW section made by a merge; graph-i8 and
# graph-i8r the same stored as int8 and as int8-rescore); each but those also
# cut short (half, one byte less, without its footer) so the readers see
# truncation.
set -eu
FATHOM=${1:-build/fathom}
OUT=fuzz/corpus/fuzz_segment
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

seg() {   # index DIR → the path of its only segment (after optimize)
	"$FATHOM" optimize -q --index "$1" >/dev/null
	ls "$1"/seg-*.fseg
}

cut() {   # FILE NAME: half, one byte less, no footer
	n=$(wc -c <"$1")
	head -c $((n / 2)) "$1" >"$OUT/$2-cut0"
	head -c $((n - 1)) "$1" >"$OUT/$2-cut1"
	head -c $((n - 300)) "$1" >"$OUT/$2-cut2"
}

rm -f "$OUT"/small* "$OUT"/multiblock* "$OUT"/twoframes* "$OUT"/graph*
mkdir -p "$OUT"

cat >"$tmp/small.jsonl" <<'JSONL'
{"id":"doc/a.md#0","title":"doc/a.md","path":"doc/a.md","text":"# Setup\nInstall the getUserName helper and parse_config() first.","tags":["guide","setup"],"library":"demo","version":"1.0"}
{"id":"doc/a.md#1","title":"doc/a.md","path":"doc/a.md","text":"Then run TC-1001 against the AuthService. 東京の天気","url":"http://example.com/a"}
{"id":"src/b.c","title":"b.c","path":"src/b.c","text":"int parse_config(const char *p) { return p != 0; }"}
JSONL
"$FATHOM" add -q --index "$tmp/small" --jsonl "$tmp/small.jsonl"
s=$(seg "$tmp/small")
cp "$s" "$OUT/small"
cut "$s" small

awk 'BEGIN { for (i = 0; i < 300; i++)
	printf "{\"id\":\"m%d\",\"title\":\"block %d\",\"text\":\"common word%d shared%d text %d\"}\n", i, i, i, i % 7, i }' \
	>"$tmp/multi.jsonl"
"$FATHOM" add -q --index "$tmp/multi" --jsonl "$tmp/multi.jsonl"
s=$(seg "$tmp/multi")
cp "$s" "$OUT/multiblock"
cut "$s" multiblock

awk 'BEGIN { srand(7); for (d = 0; d < 2; d++) { printf "{\"id\":\"f%d\",\"title\":\"frames\",\"text\":\"", d;
	for (i = 0; i < 10000; i++) printf "w%d ", int(rand() * 40); print "\"}" } }' >"$tmp/frames.jsonl"
"$FATHOM" add -q --index "$tmp/frames" --jsonl "$tmp/frames.jsonl"
s=$(seg "$tmp/frames")
cp "$s" "$OUT/twoframes"
cut "$s" twoframes
awk 'BEGIN { srand(3); for (i = 0; i < 48; i++)
	printf "{\"id\":\"v%d\",\"text\":\"vector doc %d\",\"vector\":[%.3f,%.3f,%.3f,%.3f]}\n", i, i,
	    rand() - 0.5, rand() - 0.5, rand() - 0.5, rand() - 0.5 }' >"$tmp/v.jsonl"
head -2 "$tmp/v.jsonl" >"$tmp/v0.jsonl"
tail -n +3 "$tmp/v.jsonl" >"$tmp/v1.jsonl"
"$FATHOM" add -q --index "$tmp/graph" --jsonl "$tmp/v0.jsonl"
"$FATHOM" config --index "$tmp/graph" hnsw.min-vectors 16
"$FATHOM" add -q --index "$tmp/graph" --jsonl "$tmp/v1.jsonl"
s=$(seg "$tmp/graph")
cp "$s" "$OUT/graph"
cut "$s" graph
# the same vectors stored as int8 (VECS element type 2), then as int8 with
# the float32 rows (element type 3): optimize rewrites a segment of another
# type
for st in int8:graph-i8 int8-rescore:graph-i8r; do
	"$FATHOM" config --index "$tmp/graph" vector.storage "${st%%:*}"
	s=$(seg "$tmp/graph")
	cp "$s" "$OUT/${st#*:}"
done
ls -l "$OUT"
