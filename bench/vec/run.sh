#!/usr/bin/env bash
# bench/vec/run.sh — `make bench`'s vector part: hnsw_bench, then the same
# vectors through hnswlib and faiss (bench/vec/peers.py), on three sets:
#   1. 100k clustered 384-d vectors (tests/vecmix.h)
#   2. GloVe 6B 50-d, 10k words (../shared/data/glove50d10k; skipped when absent)
#   3. SciFact's own chunk vectors: an index built with `fathom add
#      --embedder corpus`, the first 300 of its queries.jsonl embedded by it (skipped when
#      ../shared/data/scifact is absent)
#   4. a documentation tree's chunk vectors (BENCH_DOC_DIR, default
#      /usr/share/doc, which every Debian machine has): `fathom index
#      --embedder corpus`, 1000 of its own lines as queries
#      (bench/vec/doc_queries.py); the figures depend on the machine's tree
# each with filtered searches at 10% and 1% of the vectors allowed. The
# tables go to bench/results/vec-latest.txt.
#   bench/vec/run.sh BUILD/bench/hnsw_bench [hnsw_bench options for set 1...]
set -eu
bin=$(realpath "$1")
shift
fathom=$(dirname "$bin")/../fathom
cd "$(dirname "$0")/../.."
out=bench/results/vec-latest.txt
data=../shared/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

peers() {
	if /usr/bin/python3 -c 'import hnswlib, faiss' 2>/dev/null; then
		/usr/bin/python3 bench/vec/peers.py "$1"
	else
		echo "hnswlib or faiss missing (make deps-bench): peers skipped"
	fi
}

{
	echo "== 1. clustered 384-d vectors"
	mkdir "$tmp/mix"
	"$bin" -o "$tmp/mix" "$@"
	echo
	peers "$tmp/mix"
	echo
	echo "== 2. GloVe 50-d, 10k words"
	glove=$data/glove50d10k/glove.6B.50d.10k.txt
	if [ -f "$glove" ]; then
		mkdir "$tmp/glove"
		"$bin" -g "$glove" -o "$tmp/glove"
		echo
		peers "$tmp/glove"
	else
		echo "$glove absent: skipped"
	fi
	echo
	echo "== 3. SciFact chunk vectors (fathom add --embedder corpus)"
	if [ -f "$data/scifact/corpus.jsonl" ] && [ -x "$fathom" ]; then
		"$fathom" add -q --index "$tmp/sfc" --embedder corpus --jsonl "$data/scifact/corpus.jsonl"
		mkdir "$tmp/sfv"
		"$bin" -x "$tmp/sfc" -Q "$data/scifact/queries.jsonl" -q 300 -o "$tmp/sfv"
		echo
		peers "$tmp/sfv"
	else
		echo "$data/scifact or $fathom absent: skipped"
	fi
	echo
	doc=${BENCH_DOC_DIR:-/usr/share/doc}
	echo "== 4. $doc chunk vectors (fathom index --embedder corpus), its own lines as queries"
	if [ -d "$doc" ] && [ -x "$fathom" ] &&
	   /usr/bin/python3 bench/vec/doc_queries.py "$doc" 1000 >"$tmp/docq.jsonl"; then
		"$fathom" index -q --index "$tmp/doc" --embedder corpus "$doc" >/dev/null
		mkdir "$tmp/docv"
		"$bin" -x "$tmp/doc" -Q "$tmp/docq.jsonl" -q 1000 -o "$tmp/docv"
		echo
		peers "$tmp/docv"
	else
		echo "$doc or $fathom absent: skipped"
	fi
} | tee "$out"
