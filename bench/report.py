#!/usr/bin/env python3
"""report.py — the Markdown table of a bench/run.sh run.

    bench/report.py --results DIR --out FILE [--command CMD] [--elapsed S]
                    [--fathom BIN] [--quick 0|1]

Reads DIR/<corpus>.jsonl (one JSON line per engine: the peers' harness
output, or run.sh's line for fathom) and DIR/scifact-ndcg.jsonl (ndcg.py),
prints the tables and writes them to FILE with the date, the machine and
the command. Standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

ORDER = ["fathom", "fts5", "xapian", "postgres", "postgres-ts_rank"]
NAMES = {
    "fathom": "fathom",
    "fts5": "SQLite FTS5 (bm25, porter)",
    "xapian": "Xapian (BM25Weight)",
    "postgres": "PostgreSQL 15 (GIN, ts_rank_cd)",
    "postgres-ts_rank": "PostgreSQL 15 (GIN, ts_rank)",
}
CORPORA = {
    "scifact": "SciFact (BEIR test queries, OR semantics, top-10)",
    "kernel": "Linux kernel 6.1 source (keyword queries, AND semantics, top-10)",
}


def read_jsonl(path):
    rows = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
    return rows


def normalise(rows):
    """One dict per label with the same keys for every engine."""
    text_bytes = max((r.get("text_bytes", 0) for r in rows), default=0)
    chunks = max((r.get("chunks", 0) for r in rows), default=0)
    out = {}
    for r in rows:
        label = r["label"]
        if label == "fathom":
            t = r.get("timing") or {}
            st = r.get("stats") or {}
            fig = {
                "build_s": r.get("build_s", 0.0),
                "index_bytes": r.get("index_bytes", -1),
                "p50_ms": t.get("p50_ms"), "p99_ms": t.get("p99_ms"),
                "mean_ms": t.get("mean_ms"), "queries": t.get("queries"),
                "answered": t.get("answered"), "chunks": st.get("chunks"),
                "peak_kb": r.get("peak_kb"),
            }
        else:
            fig = {k: r.get(k) for k in ("build_s", "index_bytes", "p50_ms", "p99_ms",
                                         "mean_ms", "queries", "answered", "chunks", "peak_kb")}
        fig["text_bytes"] = text_bytes
        # a row that reused an index built by another row has no build figures
        if not fig["build_s"]:
            fig["build_s"] = None
        if fig["build_s"] and text_bytes:
            fig["mb_per_s"] = text_bytes / 1e6 / fig["build_s"]
        else:
            fig["mb_per_s"] = None
        if fig["index_bytes"] is not None and fig["index_bytes"] >= 0 and text_bytes:
            fig["size_ratio"] = fig["index_bytes"] / text_bytes
        else:
            fig["size_ratio"] = None
        out[label] = fig
    return out, text_bytes, chunks


def num(v, fmt="{:.2f}"):
    return "–" if v is None else fmt.format(v)


def table(figs, ndcg):
    head = ["engine", "index build s", "MB/s", "peak MB", "index MB", "index / raw text",
            "p50 ms", "p99 ms", "mean ms", "answered"]
    if ndcg:
        head += ["nDCG@10", "recall@100"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label in sorted(figs, key=lambda l: ORDER.index(l) if l in ORDER else 99):
        f = figs[label]
        answered = "–" if f["queries"] is None else f"{f['answered']}/{f['queries']}"
        pk = f.get("peak_kb")
        cells = [NAMES.get(label, label), num(f["build_s"], "{:.1f}"), num(f["mb_per_s"]),
                 num(pk / 1024 if pk is not None and pk >= 0 else None, "{:.0f}"),
                 num(None if f["index_bytes"] is None or f["index_bytes"] < 0
                     else f["index_bytes"] / 1e6, "{:.1f}"),
                 num(f["size_ratio"]), num(f["p50_ms"], "{:.3f}"),
                 num(f["p99_ms"], "{:.3f}"), num(f["mean_ms"], "{:.3f}"), answered]
        if ndcg:
            n = ndcg.get(label, {})
            cells += [num(n.get("ndcg"), "{:.4f}"), num(n.get("recall_100"), "{:.4f}")]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ratio(a, b):
    return a / b if a and b else None


def ratios(corpus, figs):
    fa = figs.get("fathom")
    if not fa:
        return None
    cells = [corpus]
    for peer in ("xapian", "fts5", "postgres"):
        p = figs.get(peer)
        cells.append(num(ratio(p and p["p50_ms"], fa["p50_ms"]), "{:.1f}×"))
    for peer in ("xapian", "fts5"):
        p = figs.get(peer)
        cells.append(num(ratio(fa["mb_per_s"], p and p["mb_per_s"]), "{:.2f}×"))
    cells.append(num(fa["size_ratio"]))
    return "| " + " | ".join(cells) + " |"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def mem_gib():
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            kb = int(f.readline().split()[1])
        return f"{kb / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        return "?"


def version(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout
        return out.strip().splitlines()[0] if out.strip() else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="make bench")
    ap.add_argument("--elapsed", type=int, default=0)
    ap.add_argument("--fathom", default="build/fathom")
    ap.add_argument("--quick", default="0")
    a = ap.parse_args()

    ndcg = {}
    for r in read_jsonl(os.path.join(a.results, "scifact-ndcg.jsonl")):
        ndcg[os.path.basename(r["run"]).rsplit(".", 1)[0]] = r

    md = ["# fathom vs SQLite FTS5, Xapian and PostgreSQL", ""]
    md.append(f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}")
    md.append(f"- machine: {os.cpu_count()} CPUs ({cpu_model()}), {mem_gib()} RAM, "
              f"{platform.system()} {platform.release()}")
    via = " (bench/run.sh)" if a.command.endswith("make bench") else ""
    md.append(f"- command: `{a.command}`{via}, {a.elapsed // 60} min {a.elapsed % 60} s in all")
    fathom_version = version([a.fathom, "--version"])
    if fathom_version.startswith("fathom "):
        fathom_version = fathom_version[len("fathom "):]
    md.append(f"- versions: fathom {fathom_version}; "
              f"SQLite {version(['sqlite3', '--version']).split(' ')[0]}; "
              f"Xapian {version(['xapian-config', '--version']).split(' ')[-1]}; "
              f"{version(['/usr/lib/postgresql/15/bin/postgres', '--version'])}")
    if a.quick == "1":
        md.append("- BENCH_QUICK=1: the small kernel subset (Documentation kernel mm fs include)")
    md.append("")

    summary = []
    for corpus in ("scifact", "kernel"):
        rows = read_jsonl(os.path.join(a.results, corpus + ".jsonl"))
        if not rows:
            continue
        figs, text_bytes, chunks = normalise(rows)
        md.append(f"## {CORPORA[corpus]}")
        md.append("")
        md.append(f"{chunks:,} chunks, {text_bytes / 1e6:.1f} MB of text (title + text, "
                  "the numerator of MB/s and the denominator of index / raw text). "
                  "Peak MB: the largest resident set (GNU time) of fathom's build "
                  "processes (add, optimize; the pages of the segments they map "
                  "count) and of each peer's harness (its build and its queries).")
        md.append("")
        md.extend(table(figs, ndcg if corpus == "scifact" else None))
        md.append("")
        r = ratios(corpus, figs)
        if r:
            summary.append(r)

    if summary:
        md.append("## fathom against the peers")
        md.append("")
        md.append("Query speedup is the peer's p50 over fathom's (above 1: fathom is faster); "
                  "indexing ratio is fathom's MB/s over the peer's.")
        md.append("")
        md.append("| corpus | p50 speedup vs Xapian | vs FTS5 | vs PostgreSQL "
                  "| indexing vs Xapian | vs FTS5 | fathom index / raw text |")
        md.append("|---|---|---|---|---|---|---|")
        md.extend(summary)
        md.append("")

    text = "\n".join(md)
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
