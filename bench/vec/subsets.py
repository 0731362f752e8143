#!/usr/bin/env python3
"""subsets.py — hybrid against keyword on smaller corpora cut from BEIR sets.

    bench/vec/subsets.py [--fathom build/fathom] [--data ../shared/data]
                         [--work bench/work/subsets] [--embedder corpus]
                         [--full] [--boot 2000] [--seed N]

fathom is judged on collections it has never seen, many of them smaller
than SciFact or CoSQA. A corpus embedder trained on less text has noisier
vectors, so "hybrid never below keyword" is worth checking where the text
is short. This cuts sub-corpora out of the BEIR sets in DATA (each keeps
every document the chosen qrels judge relevant, plus a seeded random
sample of the others), indexes each with `fathom add --embedder E`, runs
`fathom eval --run` in the modes keyword, hybrid, strict and semantic, and
prints nDCG@10 per mode with, for hybrid and strict, the mean per-query
difference from keyword and its 95% interval (paired bootstrap over the
queries, seeded). --full adds the whole sets.

--seed sets the corpus embedder's embedder.seed before each index is
built (bench/vec/seeds.py: seeds alone move hybrid nDCG@10 by about 0.002).

The sub-corpora are easier than the sets they come from (relevant
documents are denser), so compare modes within a row, not rows with each
other. Sets missing from DATA are skipped with a message. Standard library
only; nDCG is bench/ndcg.py's.
"""
import argparse
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ndcg", os.path.join(HERE, "..", "ndcg.py"))
ndcg = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ndcg)

MODES = ("keyword", "hybrid", "strict", "semantic")

# (set, qrels files whose relevant documents are kept, other documents
# sampled, seed, qrels evaluated)
CUTS = (
    ("scifact", ("test",), 0, 1, "test"),
    ("scifact", ("test",), 700, 1, "test"),
    ("scifact", ("test", "train"), 1000, 2, "test"),
    ("cosqa", ("dev",), 0, 1, "dev"),
    ("cosqa", ("dev",), 1000, 1, "dev"),
    ("cosqa", ("dev",), 3000, 2, "dev"),
)
FULL = (("scifact", "test"), ("scifact", "train"), ("cosqa", "dev"))


def relevant(path):
    return {d for rels in ndcg.read_qrels(path).values() for d in rels}


def cut(data, work, name, keep_qrels, extra, seed):
    base = os.path.join(data, name)
    keep = set()
    for q in keep_qrels:
        keep |= relevant(os.path.join(base, "qrels", q + ".tsv"))
    lines = open(os.path.join(base, "corpus.jsonl"), encoding="utf-8").readlines()
    ids = [json.loads(line)["_id"] for line in lines]
    others = [i for i in ids if i not in keep]
    keep |= set(random.Random(seed).sample(others, min(extra, len(others))))
    out = os.path.join(work, f"{name}-{'+'.join(keep_qrels)}-{extra}.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(line for line, i in zip(lines, ids) if i in keep)
    return out, len(keep)


def per_query(qrels, run):
    return {q: ndcg.ndcg_at(run.get(q, []), rels, 10) for q, rels in qrels.items()}


def boot(diffs, n, seed=1):
    rng = random.Random(seed)
    means = sorted(sum(diffs[rng.randrange(len(diffs))] for _ in diffs) / len(diffs)
                   for _ in range(n))
    return means[int(0.025 * n)], means[int(0.975 * n) - 1]


def build(a, corpus, stem, built):
    """The index of corpus at stem.EMBEDDER, built once per run (never a
    stale binary's from an earlier run)."""
    index = stem + "." + a.embedder.replace("/", "_").replace(":", "_")
    if a.seed is not None:
        index += f".seed{a.seed}"
    if index not in built:
        shutil.rmtree(index, ignore_errors=True)
        if a.seed is not None:
            subprocess.run([a.fathom, "config", "--index", index, "embedder.seed", str(a.seed)],
                           check=True, stdout=subprocess.DEVNULL)
        subprocess.run([a.fathom, "add", "-q", "--index", index, "--embedder", a.embedder,
                        "--jsonl", corpus], check=True, stdout=subprocess.DEVNULL)
        built.add(index)
    return index


def mode_scores(a, index, corpus, name, qrels_name, mode):
    """nDCG@10 per query of `fathom eval --mode mode` on index, for set
    name's queries judged by qrels_name."""
    base = os.path.join(a.data, name)
    qrels_path = os.path.join(base, "qrels", qrels_name + ".tsv")
    run = f"{index}.{qrels_name}.{mode}.run"
    subprocess.run([a.fathom, "eval", "--index", index, "--mode", mode, "--corpus", corpus,
                    "--queries", os.path.join(base, "queries.jsonl"), "--qrels", qrels_path,
                    "--run", run], check=True, stdout=subprocess.DEVNULL)
    return per_query(ndcg.read_qrels(qrels_path), ndcg.read_run(run))


def run_row(a, label, corpus, ndocs, name, qrels_name, index):
    scores = {m: mode_scores(a, index, corpus, name, qrels_name, m) for m in MODES}
    qs = sorted(scores["keyword"])
    cells = [f"{sum(scores[m][q] for q in qs) / len(qs):.4f}" for m in MODES]
    for m in ("hybrid", "strict"):
        d = [scores[m][q] - scores["keyword"][q] for q in qs]
        lo, hi = boot(d, a.boot)
        cells.append(f"{sum(d) / len(d):+.4f} [{lo:+.4f}, {hi:+.4f}]")
    print(f"| {label} | {ndocs} | {len(qs)} | " + " | ".join(cells) + " |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--fathom", default="build/fathom")
    p.add_argument("--data", default="../shared/data")
    p.add_argument("--work", default="bench/work/subsets")
    p.add_argument("--embedder", default="corpus")
    p.add_argument("--full", action="store_true")
    p.add_argument("--boot", type=int, default=2000)
    p.add_argument("--seed", type=int, default=None)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    seed = "" if a.seed is None else f" (embedder.seed {a.seed})"
    print(f"embedder {a.embedder}{seed}; nDCG@10; hybrid and strict minus keyword per query, "
          f"mean [95% interval, paired bootstrap of {a.boot}]\n")
    print("| corpus | documents | queries | keyword | hybrid | strict | semantic | "
          "hybrid − keyword | strict − keyword |")
    print("|---|---|---|---|---|---|---|---|---|")
    built, missing = set(), set()
    for name, keep_qrels, extra, seed, qrels_name in CUTS:
        if not os.path.isfile(os.path.join(a.data, name, "corpus.jsonl")):
            if name not in missing:
                print(f"({name}: not in {a.data}, skipped)")
                missing.add(name)
            continue
        corpus, ndocs = cut(a.data, a.work, name, keep_qrels, extra, seed)
        index = build(a, corpus, corpus[:-len(".jsonl")], built)
        label = f"{name}: {'+'.join(keep_qrels)} relevant + {extra}"
        run_row(a, label, corpus, ndocs, name, qrels_name, index)
    if a.full:
        for name, qrels_name in FULL:
            corpus = os.path.join(a.data, name, "corpus.jsonl")
            if not os.path.isfile(corpus):
                continue
            ndocs = sum(1 for _ in open(corpus, encoding="utf-8"))
            index = build(a, corpus, os.path.join(a.work, f"{name}-full"), built)
            run_row(a, f"{name} {qrels_name}, whole", corpus, ndocs, name, qrels_name, index)
    return 0


if __name__ == "__main__":
    sys.exit(main())
