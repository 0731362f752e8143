#!/usr/bin/env bash
# bench/vec/run.sh — `make bench`'s vector part: hnsw_bench on 100k
# clustered 384-d vectors, then the same vectors through hnswlib and faiss
# (bench/vec/peers.py), the tables in bench/results/vec-latest.txt.
#   bench/vec/run.sh BUILD/bench/hnsw_bench [hnsw_bench options...]
set -eu
bin=$1
shift
cd "$(dirname "$0")/../.."
out=bench/results/vec-latest.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
	"$bin" -o "$tmp" "$@"
	echo
	if /usr/bin/python3 -c 'import hnswlib, faiss' 2>/dev/null; then
		/usr/bin/python3 bench/vec/peers.py "$tmp"
	else
		echo "hnswlib or faiss missing (make deps-bench): peers skipped"
	fi
} | tee "$out"
