#!/usr/bin/env bash
# The daemon under load: two measurements in one run, on SciFact (5,183
# abstracts, 1,109 queries as POST /search {"query", "k":10}, snippets
# built as by default), with bench/loadgen.c on loopback keep-alive
# connections:
#  1. throughput: the daemon's saturated throughput (loadgen closed loop,
#     CONNECTIONS connections each sending its next request when the last
#     is answered) over `fathom search --batch --snippets` throughput on
#     the same queries, in process, one thread (1000 / its mean ms).
#     Target >= 0.8. Also the daemon's CPU per request (/proc/PID/stat
#     before and after) against the batch's time per query.
#  2. latency: p50 and p99 at a fixed arrival rate of half the saturated
#     throughput, open loop (loadgen -r: requests fall due at fixed
#     intervals whatever the answers do, latency counted from the due
#     time). Target p99 < 10 ms.
# Then the same open-loop rate while a writer posts documents (one commit
# per request). The table goes to bench/results/serve-latest.md.
#   bench/serve_bench.sh [SECONDS] [CONNECTIONS]
# The machine's other load shows in the figures: compare runs on a quiet
# machine.
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-30}
CONN=${2:-16}
DATA=../shared/data/scifact
[ -f "$DATA/corpus.jsonl" ] || { echo "skip: no $DATA (the SciFact data set)"; exit 0; }
make -s build/fathom build/bench/loadgen
F=$PWD/build/fathom
LG=$PWD/build/bench/loadgen
W=bench/work/serve
rm -rf "$W" && mkdir -p "$W"
"$F" add --index "$W/ix" --jsonl "$DATA/corpus.jsonl" -q
# the request bodies, JSON-escaped by jq
jq -c '{query: .text, k: 10}' "$DATA/queries.jsonl" > "$W/bodies.txt"

echo "== in process: fathom search --batch --snippets --warmup (one thread)"
"$F" search --index "$W/ix" -k 10 --batch "$DATA/queries.jsonl" --snippets --warmup --timing-json \
	| tee "$W/batch.json"
batch_mean=$(jq -r .mean_ms "$W/batch.json")
batch_qps=$(awk -v m="$batch_mean" 'BEGIN { printf "%.1f", 1000 / m }')

"$F" serve --index "$W/ix" --listen 127.0.0.1:0 -q &
PID=$!
trap 'kill $PID 2> /dev/null' EXIT
for _ in $(seq 1 100); do [ -s "$W/ix/SERVE" ] && break; sleep 0.05; done
U=$(cut -d' ' -f1 "$W/ix/SERVE")
HZ=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }

echo "== saturated: loadgen closed loop, $CONN connections, ${DUR}s (2 s warm-up)"
t0=$(cpu_ticks)
"$LG" -u "$U" -f "$W/bodies.txt" -c "$CONN" -w 2 -d "$DUR" | tee "$W/saturated.txt"
t1=$(cpu_ticks)
v() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" "$W/$1.txt"; }
sat_qps=$(v saturated qps)
sat_reqs=$(v saturated total)
cpu_ms=$(awk -v a="$t0" -v b="$t1" -v hz="$HZ" -v n="$sat_reqs" 'BEGIN { printf "%.3f", (b - a) * 1000 / hz / n }')
ratio=$(awk -v s="$sat_qps" -v b="$batch_qps" 'BEGIN { printf "%.2f", s / b }')
rate=$(awk -v s="$sat_qps" 'BEGIN { printf "%.0f", s / 2 }')
echo "throughput ratio: $sat_qps / $batch_qps = $ratio (target >= 0.8); daemon CPU ${cpu_ms} ms/request, batch ${batch_mean} ms/query"

echo "== latency: open loop at $rate requests/s (half the saturated throughput), ${DUR}s"
"$LG" -u "$U" -f "$W/bodies.txt" -c 64 -r "$rate" -w 1 -d "$DUR" | tee "$W/open.txt"

echo "== the same while a writer posts documents (one commit per request)"
( i=0; while :; do i=$((i + 1))
	curl -s -o /dev/null -X POST "$U/documents" -H 'Content-Type: application/json' \
		--data-binary "{\"id\":\"load$i\",\"title\":\"load $i\",\"body\":\"concurrent indexing document $i about cells and proteins\"}" || break
	echo "$i" > "$W/writes"; done ) &
WP=$!
"$LG" -u "$U" -f "$W/bodies.txt" -c 64 -r "$rate" -w 1 -d "$DUR" | tee "$W/writing.txt"
kill $WP 2> /dev/null; wait $WP 2> /dev/null || true
echo "writer: $(cat "$W/writes" 2> /dev/null || echo 0) documents committed during the run"
{
	echo "# fathom serve under load ($(date -u +%Y-%m-%d), $(nproc) CPUs)"
	echo
	echo "command: bench/serve_bench.sh $DUR $CONN (SciFact queries, POST /search k=10 with snippets, bench/loadgen.c)"
	echo
	echo "| measurement | figure | target |"
	echo "|---|---|---|"
	echo "| in process (\`search --batch --snippets\`, 1 thread) | $batch_qps queries/s ($batch_mean ms mean) | |"
	echo "| daemon saturated ($CONN connections, closed loop) | $sat_qps requests/s, $cpu_ms ms CPU each | |"
	echo "| **throughput ratio** | **$ratio** | >= 0.8 |"
	echo "| open loop at $rate/s: p50 / p99 | **$(v open p50_ms) / $(v open p99_ms) ms** (p99.9 $(v open p999_ms), errors $(v open errors)) | p99 < 10 ms |"
	echo "| the same with a writer: p50 / p99 | $(v writing p50_ms) / $(v writing p99_ms) ms (errors $(v writing errors)) | |"
	echo
	echo "writer: $(cat "$W/writes" 2> /dev/null || echo 0) documents committed (one POST /documents each) during the last run."
	echo "The machine's other load is in these figures."
} > bench/results/serve-latest.md
cat bench/results/serve-latest.md
