#!/usr/bin/env bash
# Vectors that come with the documents (issue 15), with real embeddings:
# ../shared/data/minilm-fiori holds 778 texts with their all-MiniLM-L6-v2
# vectors (384 float32 each, embeddings.bin in records.jsonl's order). They
# are converted to fathom's JSON lines with a "vector" member and added;
# then a document's own vector, as the query, finds the document itself
# first with a cosine of 1, and the nearest neighbours fathom returns are
# those of a brute-force cosine computed here independently (python3).
# Hybrid and strict modes take the vector too; a query vector of another
# dimension, or none, is refused with a clear error; the index keeps the
# embedder "external" with the dimension. Skips (77) without ../shared.
source "$(dirname "$0")/lib.sh"
D=$(cd "$(dirname "$0")/../.." && pwd)/../shared/data/minilm-fiori
if [ ! -f "$D/records.jsonl" ] || [ ! -f "$D/embeddings.bin" ]; then
	echo "skip: no ../shared/data/minilm-fiori (the MiniLM vectors)"; exit 77
fi
command -v python3 > /dev/null || { echo "skip: no python3"; exit 77; }

# records.jsonl + embeddings.bin -> fathom JSON lines; the query vectors
# (documents' own, and the sum of two) with the expected ids; the
# documents' ids and unit vectors for the reference.
QDOCS="0 5 137 400 777"
python3 - "$D" "$T" $QDOCS <<'PY' || { echo "conversion failed"; exit 2; }
import json, math, struct, sys
d, t, qdocs = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
recs = [json.loads(l) for l in open(d + "/records.jsonl", encoding="utf-8")]
raw = open(d + "/embeddings.bin", "rb").read()
dim = json.load(open(d + "/metadata.json"))["dimensions"]
assert len(raw) == 4 * dim * len(recs), "embeddings.bin does not hold one vector per record"
vals = struct.unpack("<%df" % (len(raw) // 4), raw)
vec = [list(vals[i * dim:(i + 1) * dim]) for i in range(len(recs))]
with open(t + "/docs.jsonl", "w") as o:
    for rec, v in zip(recs, vec):
        o.write(json.dumps({"id": rec["id"], "title": rec["title"], "body": rec["content"],
                            "path": rec["path"], "vector": v}) + "\n")
for i in qdocs:
    json.dump(vec[i], open("%s/q%d.json" % (t, i), "w"))
    open("%s/id%d" % (t, i), "w").write(recs[i]["id"])
json.dump([a + b for a, b in zip(vec[10], vec[600])], open(t + "/qmix.json", "w"))
norm = [math.sqrt(sum(x * x for x in v)) for v in vec]
unit = [[x / n for x in v] for v, n in zip(vec, norm)]
json.dump({"dim": dim, "docs": [[r["id"], u] for r, u in zip(recs, unit)]}, open(t + "/ref.json", "w"))
PY
IX=$T/ix
# One chunk per document where the chunker allows (every chunk of a
# document carries the document's vector either way).
t0=$(date +%s%N)
expect_rc 0 "$F" add -q --index "$IX" --chunk-target 1000000 --chunk-max 1000000 --jsonl "$T/docs.jsonl"
t1=$(date +%s%N)
echo "added 778 documents with their vectors in $(( (t1 - t0) / 1000000 )) ms"
expect_out '^documents +778$' "$F" stats --index "$IX"
expect_rc 0 "$F" verify --index "$IX"
# the manifest names the external embedder and its dimension
expect_out '^embedder += external$' "$F" config --index "$IX"
grep -aq 'external v1 dim=384' "$IX/MANIFEST" && ok || fail "the manifest lacks 'external v1 dim=384'"
# every chunk carries its document's vector
expect_rc 0 "$F" stats --index "$IX" --json
jq -e '.embedder == "external" and .vector_dim == 384 and .vector_chunks == .chunks and .chunks >= 778' \
	"$T/.out" > /dev/null && ok || fail "stats: $(cat "$T/.out")"

# Documents' own vectors: the document first, at cosine 1.
for i in $QDOCS; do
	"$F" search --index "$IX" --mode semantic --vector "$(cat "$T/q$i.json")" -k 1 --json x > "$T/one.json" 2>&1
	if jq -e --arg id "$(cat "$T/id$i")" '.results[0].id == $id and (.results[0].score - 1 | fabs) < 1e-4' \
		"$T/one.json" > /dev/null; then ok
	else fail "document $i is not its own nearest at cosine 1: $(head -c 300 "$T/one.json")"; fi
done
# The nearest neighbours of those vectors, and of one no document has (two
# documents' sum, not normalised): fathom's semantic top 10 documents (the
# first chunk of each) against a brute-force cosine over every document.
# Each rank's document has the reference's cosine at that rank (ties may
# swap), and fathom's score is that cosine.
knn=()
for q in $QDOCS mix; do
	if "$F" search --index "$IX" --mode semantic --vector "$(cat "$T/q$q.json")" -k 60 --json x \
		> "$T/knn$q.json" 2> "$T/knn.err"; then knn+=("$q"); ok
	else fail "query $q: semantic search failed: $(cat "$T/knn.err")"; fi
done
if python3 - "$T" "${knn[@]}" > "$T/knn.out" 2>&1 <<'PY'; then ok; else fail "$(cat "$T/knn.out")"; fi
import json, math, sys
t = sys.argv[1]
ref = json.load(open(t + "/ref.json"))
bad = []
for name in sys.argv[2:]:
    q = json.load(open("%s/q%s.json" % (t, name)))
    n = math.sqrt(sum(x * x for x in q))
    q = [x / n for x in q]
    cos = {i: sum(a * b for a, b in zip(q, v)) for i, v in ref["docs"]}
    want = sorted(cos.items(), key=lambda kv: -kv[1])[:10]
    got = []
    for h in json.load(open("%s/knn%s.json" % (t, name)))["results"]:
        if all(h["id"] != g[0] for g in got):
            got.append((h["id"], h["score"]))
    got = got[:10]
    if len(got) < 10:
        bad.append("query %s: only %d documents" % (name, len(got)))
    for r, ((gid, gs), (wid, ws)) in enumerate(zip(got, want), 1):
        if abs(cos[gid] - ws) > 1e-5:
            bad.append("query %s, rank %d: %s (cosine %.6f), brute force %s (%.6f)" % (name, r, gid, cos[gid], wid, ws))
        if abs(gs - cos[gid]) > 1e-4:
            bad.append("query %s, rank %d: %s scored %.6f, its cosine is %.6f" % (name, r, gid, gs, cos[gid]))
if bad:
    print("nearest neighbours: " + "; ".join(bad[:6]))
    sys.exit(1)
PY

# Hybrid: the words and the vector both count; the document its own vector
# names is found by both lists.
expect_rc 0 "$F" search --index "$IX" --mode hybrid --vector "$(cat "$T/q5.json")" -k 5 --json deploy cloud foundry
if jq -e '.results[0].id == "local-btp-fiori-tools-5-chunk-0" and
          ([.results[0].sources[].source] | index("keyword") != null and index("vector") != null)' \
	"$T/.out" > /dev/null; then ok; else fail "hybrid: $(head -c 400 "$T/.out")"; fi
# Strict: only what full text found, reordered by the vector: every hit
# has a keyword source, and words no document holds give nothing.
expect_rc 0 "$F" search --index "$IX" --mode strict --vector "$(cat "$T/q5.json")" -k 10 --json deploy cloud foundry
if jq -e '(.results | length) > 0 and all(.results[]; [.sources[].source] | index("keyword") != null)
          and .results[0].id == "local-btp-fiori-tools-5-chunk-0"' "$T/.out" > /dev/null; then ok
else fail "strict: $(head -c 400 "$T/.out")"; fi
expect_rc 1 "$F" search --index "$IX" --mode strict --vector "$(cat "$T/q5.json")" zzqqxxunfound
# Refused: a query vector of another dimension, and none at all (this
# index cannot embed a query itself).
expect_rc 2 "$F" search --index "$IX" --mode semantic --vector "[0.1,0.2,0.3]" x
grep -q "3 dimensions; the index's have 384" "$T/.err" && ok || fail "wrong dimension: $(cat "$T/.err")"
expect_rc 2 "$F" search --index "$IX" --mode semantic deploy
grep -q "give a query vector" "$T/.err" && ok || fail "no query vector: $(cat "$T/.err")"
# Documents with vectors of another dimension are refused, and leave the
# index as it was.
head -n 1 "$T/docs.jsonl" | jq -c '.id = "short" | .vector = [1, 0, 0]' > "$T/short.jsonl"
expect_rc 2 "$F" add -q --index "$IX" --jsonl "$T/short.jsonl"
grep -q "the index's vectors were made by \"external v1 dim=384" "$T/.err" && ok ||
	fail "a 3-dimension vector: $(cat "$T/.err")"
expect_out '^documents +778$' "$F" stats --index "$IX"
expect_rc 0 "$F" verify --index "$IX"
finish
