#!/bin/bash
# run.sh — fathom against SQLite FTS5, Xapian and PostgreSQL, side by side.
#
#   bench/run.sh            (what `make bench` runs; see bench/README.md)
#
# Environment:
#   FATHOM=path        the fathom binary (default build/fathom)
#   BENCH_QUICK=1      a small kernel subset, for a quick check
#   BENCH_ENGINES="fathom fts5 xapian postgres"   a subset of the engines
#   BENCH_CORPORA="scifact kernel"                 a subset of the corpora
#   SCIFACT=dir        SciFact in BEIR layout (default ../shared/data/scifact)
#   BENCH_PG_PORT=n    port of the throwaway PostgreSQL (default 54329)
#
# Every engine builds its index from the same JSONL and runs the same
# queries, one engine at a time so they do not compete for the 2 cores.
# Raw figures go to bench/work/results/, the table to stdout and to
# bench/results/latest.md (latest-quick.md with BENCH_QUICK=1).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=$here/work
bin=$work/bin
res=$work/results
# shellcheck disable=SC2034 # read as ${!v} where the command is written down
FATHOM_GIVEN=${FATHOM:-} SCIFACT_GIVEN=${SCIFACT:-}
FATHOM=${FATHOM:-$root/build/fathom}
case $FATHOM in /*) ;; *) FATHOM=$root/$FATHOM ;; esac
SCIFACT=${SCIFACT:-$root/../shared/data/scifact}
ENGINES=${BENCH_ENGINES:-fathom fts5 xapian postgres}
CORPORA=${BENCH_CORPORA:-scifact kernel}
PG_PORT=${BENCH_PG_PORT:-54329}
started=$(date +%s)

say() { printf '%s [%4ds] %s\n' "bench" "$(($(date +%s) - started))" "$*" >&2; }
has() { case " $ENGINES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
now() { date +%s.%N; }
# peak FILE...: the largest of the peak resident sets (KiB) GNU time wrote
peak() { cat "$@" 2>/dev/null | awk 'BEGIN { m = -1 } $1 ~ /^[0-9]+$/ && $1 > m { m = $1 } END { print m }'; }

mkdir -p "$bin" "$res" "$here/results"
rm -f "$res"/*.jsonl

# --- harnesses -------------------------------------------------------------
cflags=(-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
	-Wmissing-prototypes -Wvla)
say "building the peer harnesses"
cc "${cflags[@]}" -c -o "$bin/harness.o" "$here/peers/harness.c"
# only the harnesses of the engines asked for: a machine without Xapian or
# PostgreSQL's headers can still compare with FTS5
if has fts5; then
	cc "${cflags[@]}" -o "$bin/fts5_bench" "$here/peers/fts5_bench.c" "$bin/harness.o" -lsqlite3 -ljansson
fi
if has xapian; then
	read -r -a xapian_cflags <<< "$(pkg-config --cflags xapian-core)"
	read -r -a xapian_libs <<< "$(pkg-config --libs xapian-core)"
	g++ -std=c++17 -O2 -Wall -Wextra -Werror -Wshadow "${xapian_cflags[@]}" \
		-o "$bin/xapian_bench" "$here/peers/xapian_bench.cc" "$bin/harness.o" "${xapian_libs[@]}" -ljansson
fi
if has postgres; then
	cc "${cflags[@]}" -I"$(pg_config --includedir)" -o "$bin/pg_bench" "$here/peers/pg_bench.c" \
		"$bin/harness.o" -lpq -ljansson
fi

if has fathom && [ ! -x "$FATHOM" ]; then
	echo "bench: $FATHOM missing: run make first (or set FATHOM=)" >&2
	exit 1
fi

pg_conn=""
if has postgres; then
	pg_conn=$("$here/peers/pg_cluster.sh" start "$work/pg" "$PG_PORT")
	trap '"$here/peers/pg_cluster.sh" stop "$work/pg" || true' EXIT INT TERM
fi

# run_peer CORPUS ENGINE LABEL CHUNKS QUERIES MATCH [RUNFILE]
run_peer() {
	local corpus="$1" engine="$2" label="$3" chunks="$4" queries="$5" match="$6" runfile="${7:-}"
	local dir="$work/$1" prog where line
	case $engine in
	fts5) prog=$bin/fts5_bench where=$dir/fts5.db ;;
	xapian) prog=$bin/xapian_bench where=$dir/xapian.db ;;
	postgres) prog=$bin/pg_bench where=$pg_conn ;;
	esac
	set -- --index "$where" --queries "$queries" --match "$match" -k 10
	if [ -n "$chunks" ]; then set -- "$@" --chunks "$chunks"; fi
	if [ -n "$runfile" ]; then set -- "$@" --run "$runfile" --run-k 100 --tag "$label"; fi
	say "$corpus: $label"
	line=$(/usr/bin/time -f %M -o "$dir/$label.peak" "$prog" "$@" 2>"$dir/$label.log") ||
		{ cat "$dir/$label.log" >&2; exit 1; }
	# peak_kb: the harness's largest resident set (its build and its queries)
	echo "{\"corpus\":\"$corpus\",\"label\":\"$label\",\"peak_kb\":$(peak "$dir/$label.peak"),${line#\{}" >> "$res/$corpus.jsonl"
}

# run_fathom CORPUS CHUNKS QUERIES MATCH [RUNFILE]
run_fathom() {
	local corpus="$1" chunks="$2" queries="$3" match="$4" runfile="${5:-}"
	local dir="$work/$1" ix="$work/$1/fathom.idx" t0 t1 bytes stats timing
	say "$corpus: fathom add"
	rm -rf "$ix"
	t0=$(now)
	# the build ends with one segment, as FTS5's ends with its 'optimize'
	{ /usr/bin/time -f %M -o "$dir/fathom-add.peak" "$FATHOM" add --index "$ix" --jsonl "$chunks" &&
	  /usr/bin/time -f %M -o "$dir/fathom-optimize.peak" "$FATHOM" optimize --index "$ix"; } \
		> "$dir/fathom-add.log" 2>&1 || { cat "$dir/fathom-add.log" >&2; exit 1; }
	t1=$(now)
	bytes=$(du -sb "$ix" 2>/dev/null | cut -f1)
	stats=$("$FATHOM" stats --index "$ix" --json 2>/dev/null | tr -d '\n' || echo null)
	say "$corpus: fathom search"
	# one untimed pass first for the page cache, then in the timed process
	# each query once untimed and once timed (--warmup), as the peers'
	# harness does in its process
	"$FATHOM" search --index "$ix" -k 10 --match "$match" --batch "$queries" \
		--timing-json > /dev/null 2>> "$dir/fathom-search.log"
	timing=$("$FATHOM" search --index "$ix" -k 10 --match "$match" --batch "$queries" \
		--warmup --timing-json 2>> "$dir/fathom-search.log" | tail -n 1)
	if [ -n "$runfile" ]; then
		"$FATHOM" search --index "$ix" -k 100 --match "$match" --batch "$queries" \
			--run "$runfile" > /dev/null 2>> "$dir/fathom-search.log"
	fi
	printf '{"corpus":"%s","label":"fathom","engine":"fathom","build_s":%s,"index_bytes":%s,"peak_kb":%s,"match":"%s","k":10,"timing":%s,"stats":%s}\n' \
		"$corpus" "$(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }")" "${bytes:--1}" \
		"$(peak "$dir/fathom-add.peak" "$dir/fathom-optimize.peak")" "$match" "${timing:-null}" "${stats:-null}" \
		>> "$res/$corpus.jsonl"
}

# --- SciFact: disjunctive BM25, nDCG@10 --------------------------------------
case " $CORPORA " in *" scifact "*)
if [ -f "$SCIFACT/corpus.jsonl" ] && [ -f "$SCIFACT/qrels/test.tsv" ]; then
	sf=$work/scifact
	mkdir -p "$sf"
	sf_corpus=$SCIFACT/corpus.jsonl sf_qrels=$SCIFACT/qrels/test.tsv
	sf_queries=$sf/queries-test.jsonl
	# the queries that have judgements (the BEIR test split)
	python3 -c '
import json, sys
ids = {l.split("\t")[0] for l in open(sys.argv[1], encoding="utf-8")}
for l in open(sys.argv[2], encoding="utf-8"):
    if l.strip() and json.loads(l)["_id"] in ids:
        sys.stdout.write(l)
' "$sf_qrels" "$SCIFACT/queries.jsonl" > "$sf_queries"
	runs=""
	if has fathom; then
		run_fathom scifact "$sf_corpus" "$sf_queries" any "$sf/fathom.run"
		runs="$runs $sf/fathom.run"
	fi
	for e in fts5 xapian postgres; do
		if has $e; then
			run_peer scifact $e $e "$sf_corpus" "$sf_queries" any "$sf/$e.run"
			runs="$runs $sf/$e.run"
		fi
	done
	if has postgres; then
		# ts_rank as well: ts_rank_cd is what the comparison asks for, but on
		# OR queries ts_rank is the better of PostgreSQL's two rankers
		export BENCH_PG_RANK=ts_rank
		run_peer scifact postgres postgres-ts_rank "" "$sf_queries" any "$sf/postgres-ts_rank.run"
		unset BENCH_PG_RANK
		runs="$runs $sf/postgres-ts_rank.run"
	fi
	# shellcheck disable=SC2086 # the list of run files is meant to split
	python3 "$here/ndcg.py" "$sf_qrels" $runs --json > "$res/scifact-ndcg.jsonl"
else
	say "SciFact not found at $SCIFACT: skipped (set SCIFACT=)"
fi
;; esac

# --- Linux kernel: conjunctive keyword queries --------------------------------
case " $CORPORA " in *" kernel "*)
	[ -x "$FATHOM" ] || { echo "bench: the kernel chunks come from $FATHOM chunk: build it first" >&2; exit 1; }
	say "kernel: preparing the corpus (cached in bench/work/kernel/)"
	k_chunks=$("$here/prepare_kernel.sh" "$FATHOM")
	k_queries=$here/kernel_queries.txt
	mkdir -p "$work/kernel"
	if has fathom; then run_fathom kernel "$k_chunks" "$k_queries" all; fi
	for e in fts5 xapian postgres; do
		if has $e; then run_peer kernel $e $e "$k_chunks" "$k_queries" all; fi
	done
;; esac

# --- the table -----------------------------------------------------------------
# a quick check does not overwrite the figures of the last full run
out_name=latest.md
if [ "${BENCH_QUICK:-0}" = 1 ]; then out_name=latest-quick.md; fi
# the command as given: make or the script, with the settings that change a run
cmd=bench/run.sh
if [ -n "${MAKELEVEL:-}" ]; then cmd="make bench"; fi
for v in BENCH_QUICK BENCH_ENGINES BENCH_CORPORA SCIFACT_GIVEN FATHOM_GIVEN; do
	if [ -n "${!v:-}" ]; then printf -v val '%q' "${!v}"; cmd="${v%_GIVEN}=$val $cmd"; fi
done
python3 "$here/report.py" --results "$res" --command "$cmd" \
	--elapsed "$(($(date +%s) - started))" --fathom "$FATHOM" \
	--quick "${BENCH_QUICK:-0}" --out "$here/results/$out_name"
