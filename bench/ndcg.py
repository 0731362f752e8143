#!/usr/bin/env python3
"""ndcg.py — nDCG@k (and recall@100) of TREC run files against BEIR qrels.

    bench/ndcg.py QRELS RUN [RUN...] [--k 10] [--json]

QRELS is a BEIR qrels TSV (query-id, corpus-id, score, with a header line)
or a TREC qrels file (qid 0 docid rel). RUN is a TREC run file
(qid Q0 docid rank score tag). Gains are the graded relevance as given
(linear, as BEIR's pytrec_eval does); a run's hits are ranked by score,
highest first, ties kept in file order. Every query of the qrels counts,
so a query the engine answered with nothing scores 0 (pytrec_eval would
leave it out, which flatters an engine that returns nothing).
Standard library only.
"""
import json
import math
import sys


def read_qrels(path):
    qrels = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                qid, docid, rel = parts
            elif len(parts) == 4:
                qid, _, docid, rel = parts
            else:
                continue
            try:
                rel = int(rel)
            except ValueError:
                continue  # the header line
            if rel > 0:
                qrels.setdefault(qid, {})[docid] = rel
    return qrels


def read_run(path):
    run = {}
    with open(path, encoding="utf-8") as f:
        for order, line in enumerate(f):
            parts = line.split()
            if len(parts) < 5:
                continue
            qid, docid, score = parts[0], parts[2], float(parts[4])
            run.setdefault(qid, []).append((-score, order, docid))
    for qid in run:
        run[qid].sort()
        seen, ranked = set(), []
        for _, _, docid in run[qid]:
            if docid not in seen:  # a doc counts once, at its best rank
                seen.add(docid)
                ranked.append(docid)
        run[qid] = ranked
    return run


def ndcg_at(ranked, rels, k):
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def evaluate(qrels, run, k):
    ndcg = recall = 0.0
    for qid, rels in qrels.items():
        ranked = run.get(qid, [])
        ndcg += ndcg_at(ranked, rels, k)
        recall += len(set(ranked[:100]) & set(rels)) / len(rels)
    n = len(qrels) or 1
    return {"queries": len(qrels), "ndcg": ndcg / n, "recall_100": recall / n,
            "answered": sum(1 for q in qrels if run.get(q))}


def main(argv):
    k, as_json, paths = 10, False, []
    i = 0
    while i < len(argv):
        if argv[i] == "--k":
            k = int(argv[i + 1])
            i += 2
            continue
        if argv[i] == "--json":
            as_json = True
        else:
            paths.append(argv[i])
        i += 1
    if len(paths) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    qrels = read_qrels(paths[0])
    for path in paths[1:]:
        r = evaluate(qrels, read_run(path), k)
        r["run"] = path
        r["k"] = k
        if as_json:
            print(json.dumps(r))
        else:
            print(f"{path}: nDCG@{k} {r['ndcg']:.4f}  recall@100 {r['recall_100']:.4f}"
                  f"  ({r['answered']}/{r['queries']} queries answered)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
