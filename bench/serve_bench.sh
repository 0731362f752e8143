#!/usr/bin/env bash
# The daemon under load: wrk on loopback, 32 connections for 30 s of
# POST /search over the SciFact queries (each connection walks the query
# list), first alone, then with a writer posting documents all along
# (concurrent indexing). Prints wrk's figures and the writer's count; the
# results go to bench/results/serve-latest.md.
#   bench/serve_bench.sh [DURATION_SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-30}
CONN=${2:-32}
DATA=../shared/data/scifact
[ -f "$DATA/corpus.jsonl" ] || { echo "skip: no $DATA (the SciFact data set)"; exit 0; }
command -v wrk > /dev/null || { echo "wrk is missing: make deps-bench"; exit 1; }
F=$PWD/build/fathom
W=bench/work/serve
rm -rf "$W" && mkdir -p "$W"
"$F" add --index "$W/ix" --jsonl "$DATA/corpus.jsonl" -q
# the queries as a Lua table, JSON-escaped by jq
jq -r '.text | @json' "$DATA/queries.jsonl" > "$W/q.txt"
cat > "$W/search.lua" <<'LUA'
local queries = {}
for line in io.lines(os.getenv("QFILE")) do queries[#queries + 1] = line end
local n = 0
request = function()
	n = n + 1
	local q = queries[(n % #queries) + 1]
	return wrk.format("POST", "/search", { ["Content-Type"] = "application/json" },
		'{"query":' .. q .. ',"k":10}')
end
done = function(summary, latency, requests)
	io.write(string.format("RESULT qps=%.0f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f errors=%d requests=%d\n",
		summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
		latency:percentile(90) / 1000, latency:percentile(99) / 1000,
		summary.errors.status + summary.errors.connect + summary.errors.read +
		summary.errors.write + summary.errors.timeout, summary.requests))
end
LUA
"$F" serve --index "$W/ix" --listen 127.0.0.1:0 -q &
PID=$!
trap 'kill $PID 2> /dev/null' EXIT
for _ in $(seq 1 100); do [ -s "$W/ix/SERVE" ] && break; sleep 0.05; done
U=$(cut -d' ' -f1 "$W/ix/SERVE")
export QFILE=$PWD/$W/q.txt
echo "== search alone: $CONN connections, ${DUR}s"
wrk -t2 -c"$CONN" -d"${DUR}s" --latency -s "$W/search.lua" "$U" | tee "$W/alone.txt" | grep RESULT
echo "== search while a writer posts documents (one commit per request)"
( i=0; while :; do i=$((i + 1))
	curl -s -o /dev/null -X POST "$U/documents" -H 'Content-Type: application/json' --data-binary "{\"id\":\"load$i\",\"title\":\"load $i\",\"body\":\"concurrent indexing document $i about cells and proteins\"}" || break
	echo "$i" > "$W/writes"; done ) &
WP=$!
wrk -t2 -c"$CONN" -d"${DUR}s" --latency -s "$W/search.lua" "$U" | tee "$W/writing.txt" | grep RESULT
kill $WP 2> /dev/null; wait $WP 2> /dev/null || true
echo "writer: $(cat "$W/writes") documents committed during the run"
{
	echo "# fathom serve under load ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
	echo
	echo "command: bench/serve_bench.sh $DUR $CONN (wrk -t2 -c$CONN -d${DUR}s, POST /search, SciFact queries, k=10)"
	echo
	echo "| run | QPS | p50 ms | p90 ms | p99 ms | errors |"
	echo "|---|---|---|---|---|---|"
	for r in alone writing; do
		l=$(grep RESULT "$W/$r.txt")
		v() { echo "$l" | sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
		echo "| $r | $(v qps) | $(v p50_ms) | $(v p90_ms) | $(v p99_ms) | $(v errors) |"
	done
	echo
	echo "writer: $(cat "$W/writes") documents committed (one POST /documents each) during the second run"
} > bench/results/serve-latest.md
cat bench/results/serve-latest.md
