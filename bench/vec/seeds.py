#!/usr/bin/env python3
"""seeds.py — how much the corpus embedder's seed moves nDCG@10.
    bench/vec/seeds.py [--fathom build/fathom] [--data ../shared/data]
                       [--work bench/work/seeds] [--seeds 24301,1,2,3,4,5,6]

The corpus embedder's truncated SVD starts from a seeded random
projection (setting embedder.seed, default 24301). Another seed gives
another model, as good in expectation, and the rankings move a little.
A target met by one seed by less than that spread is met by luck, so
this builds SciFact and CoSQA once per seed (subsets.py's build: `fathom
config embedder.seed S`, then `fathom add --embedder corpus`), runs
`fathom eval --run` in the modes hybrid, strict and semantic (keyword
once, on the first seed's index: it reads no vector) on SciFact test and
train and CoSQA dev, and prints nDCG@10 per seed, then the mean,
standard deviation, minimum and maximum of each column, and how many
seeds keep hybrid and strict at or above keyword. Sets missing from DATA are skipped with a message. Standard
library only; nDCG is bench/ndcg.py's, through subsets.py.
"""
import argparse
import importlib.util
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("subsets", os.path.join(HERE, "subsets.py"))
subsets = importlib.util.module_from_spec(spec)
spec.loader.exec_module(subsets)

# (set, qrels evaluated)
SETS = (("scifact", "test"), ("scifact", "train"), ("cosqa", "dev"))
MODES = ("hybrid", "strict", "semantic")


def ndcg10(a, index, name, qrels_name, mode):
    corpus = os.path.join(a.data, name, "corpus.jsonl")
    per = subsets.mode_scores(a, index, corpus, name, qrels_name, mode)
    return sum(per.values()) / len(per)


def main():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--fathom", default="build/fathom")
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--work", default="bench/work/seeds")
    p.add_argument("--seeds", default="24301,1,2,3,4,5,6")
    a = p.parse_args()
    a.embedder = "corpus"   # what subsets.build reads
    seeds = [int(s) for s in a.seeds.split(",") if s]
    os.makedirs(a.work, exist_ok=True)
    sets = [s for s in SETS if os.path.isfile(os.path.join(a.data, s[0], "corpus.jsonl"))]
    for name in sorted({s[0] for s in SETS} - {s[0] for s in sets}):
        print(f"({name}: not in {a.data}, skipped)")
    if not sets or not seeds:
        return 0
    names = sorted({n for n, _ in sets})
    cols = [(n, q, m) for m in MODES for n, q in sets]
    keyword, rows, built = {}, [], set()
    for i, seed in enumerate(seeds):
        a.seed = seed
        idx = {name: subsets.build(a, os.path.join(a.data, name, "corpus.jsonl"),
                                   os.path.join(a.work, name), built) for name in names}
        if i == 0:
            # keyword search reads no vector: any seed's index gives it
            keyword = {(n, q): ndcg10(a, idx[n], n, q, "keyword") for n, q in sets}
            print("nDCG@10 of the corpus embedder by embedder.seed; keyword: " +
                  ", ".join(f"{n} {q} {keyword[(n, q)]:.4f}" for n, q in sets) + "\n")
            print("| seed | " + " | ".join(f"{m} {n} {q}" for n, q, m in cols) + " |")
            print("|---|" + "---|" * len(cols))
        row = [ndcg10(a, idx[n], n, q, m) for n, q, m in cols]
        rows.append(row)
        print(f"| {seed} | " + " | ".join(f"{v:.4f}" for v in row) + " |", flush=True)
    if len(rows) > 1:
        for label, fn in (("mean", statistics.mean), ("sd", statistics.stdev), ("min", min),
                          ("max", max)):
            print(f"| {label} | " +
                  " | ".join(f"{fn([r[i] for r in rows]):.4f}" for i in range(len(cols))) + " |")
    print()
    for m in ("hybrid", "strict"):
        for n, q in sets:
            i = cols.index((n, q, m))
            at = sum(1 for r in rows if r[i] >= keyword[(n, q)])
            print(f"{m} >= keyword on {n} {q}: {at} of {len(rows)} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
