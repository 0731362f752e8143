#!/usr/bin/env bash
# Retrieval quality on SciFact (BEIR): nDCG@10 on the test split with the
# default settings must be at least 0.70, and the default matching mode must
# answer (nearly) every natural-language claim.
source "$(dirname "$0")/lib.sh"
D=${SHARED_DATA:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/data}/scifact
if [ ! -f "$D/corpus.jsonl" ]; then
	echo "skipped: SciFact not found at $D (../shared/data is only on the team's machines)"
	exit 77
fi
"$F" eval --index "$T/ix" --corpus "$D/corpus.jsonl" --queries "$D/queries.jsonl" \
	--qrels "$D/qrels/test.tsv" --run "$T/run.txt" > "$T/eval.txt" 2>"$T/eval.err" || {
	fail "eval failed: $(cat "$T/eval.err")"; finish; exit 1; }
cat "$T/eval.txt"
ndcg=$(awk '/^nDCG@10/ {print $2}' "$T/eval.txt")
answered=$(sed -n 's/.*answered \([0-9]*\).*/\1/p' "$T/eval.txt")
awk -v x="$ndcg" 'BEGIN { exit !(x >= 0.70) }' && ok || fail "nDCG@10 $ndcg < 0.70"
[ "${answered:-0}" -ge 295 ] && ok || fail "only $answered of 300 queries answered"
# The run file has 300 queries with up to 100 distinct documents each.
nq=$(cut -d' ' -f1 "$T/run.txt" | sort -u | wc -l)
[ "$nq" -ge 295 ] && ok || fail "run file has $nq queries"
dups=$(cut -d' ' -f1,3 "$T/run.txt" | sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] && ok || fail "run file repeats documents within a query"
# Reusing the index gives the same figures.
"$F" eval --index "$T/ix" --queries "$D/queries.jsonl" --qrels "$D/qrels/test.tsv" > "$T/eval2.txt"
[ "$(awk '/^nDCG@10/ {print $2}' "$T/eval2.txt")" = "$ndcg" ] && ok || fail "reused index gives another nDCG"
finish
