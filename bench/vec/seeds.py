#!/usr/bin/env python3
"""seeds.py — how much the corpus embedder's seed moves nDCG@10.
    bench/vec/seeds.py [--fathom build/fathom] [--data ../shared/data]
                       [--work bench/work/seeds] [--seeds 24301,1,2,3,4,5,6]

The corpus embedder's truncated SVD starts from a seeded random
projection (setting embedder.seed, default 24301). Another seed gives
another model, as good in expectation, and the rankings move a little.
A target met by one seed by less than that spread is met by luck, so
this builds SciFact and CoSQA once per seed (`fathom config
embedder.seed S`, then `fathom add --embedder corpus`), runs `fathom eval
--run` in the modes hybrid, strict and semantic (keyword once: the seed
does not touch it) on SciFact test and train and CoSQA dev, and prints
nDCG@10 per seed, then the mean, standard deviation, minimum and maximum
of each column, and how many seeds keep hybrid and strict at or above
keyword. Sets missing from DATA are skipped with a message. Standard
library only; nDCG is bench/ndcg.py's.
"""
import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ndcg", os.path.join(HERE, "..", "ndcg.py"))
ndcg = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ndcg)

# (set, qrels evaluated)
SETS = (("scifact", "test"), ("scifact", "train"), ("cosqa", "dev"))
MODES = ("hybrid", "strict", "semantic")


def build(a, name, seed):
    corpus = os.path.join(a.data, name, "corpus.jsonl")
    index = os.path.join(a.work, f"{name}-{seed}")
    shutil.rmtree(index, ignore_errors=True)
    if seed is not None:
        subprocess.run([a.fathom, "config", "--index", index, "embedder.seed", str(seed)],
                       check=True, stdout=subprocess.DEVNULL)
    cmd = [a.fathom, "add", "-q", "--index", index, "--jsonl", corpus]
    if seed is not None:
        cmd[2:2] = ["--embedder", "corpus"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return index


def score(a, index, name, qrels_name, mode):
    base = os.path.join(a.data, name)
    qrels_path = os.path.join(base, "qrels", qrels_name + ".tsv")
    run = f"{index}.{qrels_name}.{mode}.run"
    subprocess.run([a.fathom, "eval", "--index", index, "--mode", mode, "--corpus",
                    os.path.join(base, "corpus.jsonl"), "--queries",
                    os.path.join(base, "queries.jsonl"), "--qrels", qrels_path, "--run", run],
                   check=True, stdout=subprocess.DEVNULL)
    qrels = ndcg.read_qrels(qrels_path)
    got = ndcg.read_run(run)
    return sum(ndcg.ndcg_at(got.get(q, []), rels, 10) for q, rels in qrels.items()) / len(qrels)


def main():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--fathom", default="build/fathom")
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--work", default="bench/work/seeds")
    p.add_argument("--seeds", default="24301,1,2,3,4,5,6")
    a = p.parse_args()
    seeds = [int(s) for s in a.seeds.split(",") if s]
    os.makedirs(a.work, exist_ok=True)
    sets = [s for s in SETS if os.path.isfile(os.path.join(a.data, s[0], "corpus.jsonl"))]
    for name in sorted({s[0] for s in SETS} - {s[0] for s in sets}):
        print(f"({name}: not in {a.data}, skipped)")
    if not sets:
        return 0
    cols = [(n, q, m) for m in MODES for n, q in sets]
    keyword = {}
    for name in sorted({n for n, _ in sets}):
        index = build(a, name, None)
        for n, q in sets:
            if n == name:
                keyword[(n, q)] = score(a, index, n, q, "keyword")
    print("nDCG@10 of the corpus embedder by embedder.seed; keyword: " +
          ", ".join(f"{n} {q} {keyword[(n, q)]:.4f}" for n, q in sets) + "\n")
    print("| seed | " + " | ".join(f"{m} {n} {q}" for n, q, m in cols) + " |")
    print("|---|" + "---|" * len(cols))
    rows = []
    for seed in seeds:
        idx = {name: build(a, name, seed) for name in sorted({n for n, _ in sets})}
        row = [score(a, idx[n], n, q, m) for n, q, m in cols]
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
