#!/usr/bin/env bash
# Parallel ingest on SciFact (BEIR): the corpus added with one thread and
# with two builds the same segment bytes, and every test query gets the same
# ranking from both (a TREC run of the top 100 each). The same on a small
# tree of files runs in test_parallel, which never skips.
source "$(dirname "$0")/lib.sh"
expect_rc 2 "$F" add --threads 0 --index "$T/bad" --jsonl /dev/null
expect_rc 2 "$F" index --threads 65 --index "$T/bad" .
D=${SHARED_DATA:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/data}/scifact
if [ ! -f "$D/corpus.jsonl" ]; then
	echo "skipped: SciFact not found at $D (../shared/data is only on the team's machines)"
	exit 77
fi
for t in 1 2; do
	expect_rc 0 "$F" add --threads "$t" --index "$T/ix$t" --jsonl "$D/corpus.jsonl"
	"$F" search --index "$T/ix$t" -k 100 --match any --batch "$D/queries.jsonl" \
		--run "$T/run$t.txt" > /dev/null 2> "$T/search$t.err" || fail "search with $t: $(cat "$T/search$t.err")"
done
for f in "$T"/ix1/*; do
	n=$(basename "$f")
	[ "$n" = LOCK ] && continue
	cmp -s "$f" "$T/ix2/$n" && ok || fail "$n differs between 1 and 2 threads"
done
nq=$(cut -d' ' -f1 "$T/run1.txt" | sort -u | wc -l)
[ "$nq" -ge 1000 ] && ok || fail "only $nq queries in the run"
cmp -s "$T/run1.txt" "$T/run2.txt" && ok || fail "rankings differ between 1 and 2 threads"
finish
