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

# records.jsonl + embeddings.bin -> fathom JSON lines; the documents' ids
# and vectors (unit length) for the reference.
python3 - "$D" "$T" <<'PY' || { echo "conversion failed"; exit 2; }
import json, math, struct, sys
d, t = sys.argv[1], sys.argv[2]
recs = [json.loads(l) for l in open(d + "/records.jsonl", encoding="utf-8")]
raw = open(d + "/embeddings.bin", "rb").read()
meta = json.load(open(d + "/metadata.json"))
dim = meta["dimensions"]
assert len(raw) == 4 * dim * len(recs), "embeddings.bin does not hold one vector per record"
vals = struct.unpack("<%df" % (len(raw) // 4), raw)
with open(t + "/docs.jsonl", "w") as o, open(t + "/ref.json", "w") as r:
    ref = []
    for i, rec in enumerate(recs):
        v = list(vals[i * dim:(i + 1) * dim])
        o.write(json.dumps({"id": rec["id"], "title": rec["title"], "body": rec["content"],
                            "path": rec["path"], "vector": v}) + "\n")
        n = math.sqrt(sum(x * x for x in v))
        ref.append([rec["id"], [x / n for x in v]])
    json.dump({"dim": dim, "docs": ref}, r)
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

# qvec I: document I's vector as a JSON array
qvec() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["docs"][int(sys.argv[2])][1]))' "$T/ref.json" "$1"; }

# check_knn NAME VECFILE: fathom's semantic top 10 documents (first chunk of
# each) against the brute-force cosine over every document: each rank's
# document has the reference's cosine at that rank (ties may swap), and
# fathom's score is that cosine.
check_knn() {
	local name=$1 vf=$2
	"$F" search --index "$IX" --mode semantic --vector "$(cat "$vf")" -k 60 --json x > "$T/knn.json" 2> "$T/knn.err" ||
		{ fail "$name: semantic search failed: $(cat "$T/knn.err")"; return; }
	if python3 - "$T/ref.json" "$vf" "$T/knn.json" > "$T/knn.out" 2>&1 <<'PY'; then ok; else fail "$name: $(cat "$T/knn.out")"; fi
import json, math, sys
ref = json.load(open(sys.argv[1]))
q = json.load(open(sys.argv[2]))
n = math.sqrt(sum(x * x for x in q))
q = [x / n for x in q]
cos = {i: sum(a * b for a, b in zip(q, v)) for i, v in ref["docs"]}
want = sorted(cos.items(), key=lambda kv: -kv[1])[:10]
got = []
for h in json.load(open(sys.argv[3]))["results"]:
    if all(h["id"] != g[0] for g in got):
        got.append((h["id"], h["score"]))
got = got[:10]
bad = []
if len(got) < 10:
    bad.append("only %d documents" % len(got))
for r, ((gid, gs), (wid, ws)) in enumerate(zip(got, want), 1):
    if abs(cos[gid] - ws) > 1e-5:
        bad.append("rank %d: %s (cosine %.6f), brute force %s (%.6f)" % (r, gid, cos[gid], wid, ws))
    if abs(gs - cos[gid]) > 1e-4:
        bad.append("rank %d: %s scored %.6f, its cosine is %.6f" % (r, gid, gs, cos[gid]))
if bad:
    print("; ".join(bad[:4]))
    sys.exit(1)
PY
}

# Documents' own vectors: the document first, at cosine 1, then its neighbours.
for i in 0 5 137 400 777; do
	qvec "$i" > "$T/q$i.json"
	id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["docs"][int(sys.argv[2])][0])' "$T/ref.json" "$i")
	"$F" search --index "$IX" --mode semantic --vector "$(cat "$T/q$i.json")" -k 1 --json x > "$T/one.json" 2>&1
	if jq -e --arg id "$id" '.results[0].id == $id and (.results[0].score - 1 | fabs) < 1e-4' "$T/one.json" > /dev/null; then ok
	else fail "document $i ($id) is not its own nearest at cosine 1: $(head -c 300 "$T/one.json")"; fi
	check_knn "document $i" "$T/q$i.json"
done
# A vector no document has (two documents' mean, not normalised): the same
# neighbours as brute force.
python3 -c '
import json,sys
d = json.load(open(sys.argv[1]))["docs"]
print(json.dumps([a + b for a, b in zip(d[10][1], d[600][1])]))' "$T/ref.json" > "$T/qmix.json"
check_knn "mean of documents 10 and 600" "$T/qmix.json"

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
