#!/usr/bin/python3
"""peers.py — the vectors bench/vec/hnsw_bench.c wrote (-o DIR) through
hnswlib (M 16, ef_construction 64, one thread, inner product) and faiss's
IndexHNSWFlat (the same M and efConstruction, inner product, one thread):
build time, then recall@10 against the same float32 brute-force truth and
single-thread queries per second at each ef (the median of 5 passes), as
hnsw_bench prints them.
Then the filtered searches hnsw_bench wrote (DIR/filter<P>.u8, the allowed
ids as a bitmap, DIR/truth<P>.i32): faiss with an IDSelectorBitmap in its
SearchParametersHNSW (applied during the walk); Debian's hnswlib 0.6.2 has
no filter argument (it came in 0.7.0), so it is left out there.
Debian's python3-hnswlib and python3-faiss (DEPS_BENCH); run with the
system python3, which has them.

    bench/vec/peers.py DIR
"""
import sys
import time

import numpy as np

EFS = (10, 20, 40, 80, 160)
K = 10


def load(d):
    n, dim, nq = (int(x) for x in open(f"{d}/meta.txt").read().split())
    base = np.fromfile(f"{d}/base.f32", dtype="<f4").reshape(n, dim)
    qs = np.fromfile(f"{d}/queries.f32", dtype="<f4").reshape(nq, dim)
    truth = np.fromfile(f"{d}/truth.i32", dtype="<i4").reshape(nq, K)
    return base, qs, truth


def recall(found, truth):
    return sum(len(set(f) & set(t)) for f, t in zip(found, truth)) / truth.size


PASSES = 5


def timed_queries(search, qs):
    """one query at a time, as a single-thread server answers them; the
    queries per second of the median of PASSES passes (hnsw_bench.c's rule)"""
    out, rates = [], []
    rows = [q.reshape(1, -1) for q in qs]
    for p in range(PASSES):
        found = []
        t0 = time.perf_counter()
        for q in rows:
            found.append(search(q))
        rates.append(len(rows) / (time.perf_counter() - t0))
        if p == 0:
            out = found
    return out, sorted(rates)[PASSES // 2]


def run_hnswlib(base, qs, truth):
    import hnswlib
    idx = hnswlib.Index(space="ip", dim=base.shape[1])
    idx.set_num_threads(1)
    t0 = time.perf_counter()
    idx.init_index(max_elements=base.shape[0], M=16, ef_construction=64, random_seed=1)
    idx.add_items(base, np.arange(base.shape[0]), num_threads=1)
    build = time.perf_counter() - t0
    rows = []
    for ef in EFS:
        idx.set_ef(max(ef, K))
        found, qps = timed_queries(lambda q: idx.knn_query(q, k=K, num_threads=1)[0][0], qs)
        rows.append((ef, recall(found, truth), qps))
    return build, rows


FAISS_INDEX = []


def run_faiss(base, qs, truth):
    import faiss
    faiss.omp_set_num_threads(1)
    idx = faiss.IndexHNSWFlat(base.shape[1], 16, faiss.METRIC_INNER_PRODUCT)
    idx.hnsw.efConstruction = 64
    t0 = time.perf_counter()
    idx.add(base)
    build = time.perf_counter() - t0
    FAISS_INDEX.append(idx)
    rows = []
    for ef in EFS:
        idx.hnsw.efSearch = max(ef, K)
        found, qps = timed_queries(lambda q: idx.search(q, K)[1][0], qs)
        rows.append((ef, recall(found, truth), qps))
    return build, rows


def run_filtered(d, n, qs):
    """faiss under the filters hnsw_bench wrote, at ef 40, 80, 160"""
    import glob
    import os
    if not FAISS_INDEX:
        return
    import faiss
    idx = FAISS_INDEX[0]
    for path in sorted(glob.glob(f"{d}/filter*.u8"), reverse=True):
        pct = os.path.basename(path)[6:-3]
        bits = np.fromfile(path, dtype=np.uint8)
        truth = np.fromfile(f"{d}/truth{pct}.i32", dtype="<i4").reshape(len(qs), K)
        allowed = int(np.unpackbits(bits, bitorder="little")[:n].sum())
        print(f"\nfiltered: {pct}% allowed ({allowed} vectors); hnswlib 0.6.2: no filter")
        sel = faiss.IDSelectorBitmap(len(bits), faiss.swig_ptr(bits))
        for ef in (40, 80, 160):
            params = faiss.SearchParametersHNSW(sel=sel, efSearch=ef)
            found, qps = timed_queries(lambda q: idx.search(q, K, params=params)[1][0], qs)
            ok = [[i for i in f if i >= 0] for f in found]
            print(f"  faiss ef {ef:3d}: recall@10 {recall(ok, truth):.4f}, {qps:.0f} QPS")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: peers.py DIR (written by hnsw_bench -o DIR)")
    base, qs, truth = load(sys.argv[1])
    print(f"{base.shape[0]} vectors of {base.shape[1]} dimensions, {qs.shape[0]} queries")
    res = {}
    for name, fn in (("hnswlib", run_hnswlib), ("faiss", run_faiss)):
        try:
            res[name] = fn(base, qs, truth)
        except ImportError as e:
            print(f"{name}: not installed ({e})")
    for name, (build, _) in res.items():
        print(f"{name} build (M 16, efC 64, one thread): {build:.1f} s")
    print()
    print("  ef | " + " | ".join(f"{n:>8} recall    QPS" for n in res))
    for i, ef in enumerate(EFS):
        cells = [f"{rows[i][1]:15.4f} {rows[i][2]:6.0f}" for _, rows in res.values()]
        print(f" {ef:3d} | " + " | ".join(cells))
    run_filtered(sys.argv[1], base.shape[0], qs)


if __name__ == "__main__":
    main()
