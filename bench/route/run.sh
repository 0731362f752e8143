#!/bin/sh
# The router's cost per query (parse + route) over the evaluation sets'
# queries, and the shapes it reads; skipped when ../shared is absent.
bin=${1:-build/bench/route_bench}
data=${FATHOM_DATA:-../shared/data}
set --
for f in "$data/scifact/queries.jsonl" "$data/cosqa/queries.jsonl"; do
	[ -f "$f" ] && set -- "$@" "$f"
done
if [ $# -eq 0 ]; then
	echo "route bench: skipped ($data has no queries)"
	exit 0
fi
exec "$bin" "$@"
