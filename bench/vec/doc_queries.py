#!/usr/bin/env python3
"""doc_queries.py — short queries drawn from a documentation tree.

    bench/vec/doc_queries.py [DIR] [N] > queries.jsonl

Walks DIR (default /usr/share/doc) in sorted order and, from a seeded
shuffle of its plain-text files (UTF-8, not compressed, not links), takes
one line per file: a line of 4 to 12 words of three or more letters,
without "copyright" (licence boilerplate is a large share of these trees
and makes poor queries). Stops at N queries (default 1000). Writes them as
BEIR queries.jsonl ({"_id", "text"}), which `hnsw_bench -x INDEX -Q FILE`
embeds with the index's own embedder. The queries come from the corpus
itself, as a user's would: in its words. Standard library only; the same
tree gives the same queries.
"""
import json
import os
import random
import re
import sys

SKIP = (".gz", ".bz2", ".xz", ".zip", ".png", ".jpg", ".gif", ".svg", ".pdf", ".ico")


def main(argv):
    top = argv[1] if len(argv) > 1 else "/usr/share/doc"
    want = int(argv[2]) if len(argv) > 2 else 1000
    files = []
    for root, dirs, names in os.walk(top):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            if not name.endswith(SKIP) and not os.path.islink(path) and os.path.isfile(path):
                files.append(path)
    rng = random.Random(7)
    rng.shuffle(files)
    words = re.compile(r"[A-Za-z]{3,}")
    n = 0
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="strict") as f:
                text = f.read(1 << 20)
        except (OSError, UnicodeDecodeError):
            continue
        lines = [line.strip() for line in text.splitlines()
                 if 4 <= len(words.findall(line)) <= 12 and "copyright" not in line.lower()]
        if not lines:
            continue
        print(json.dumps({"_id": str(n), "text": rng.choice(lines)}))
        n += 1
        if n >= want:
            break
    if n == 0:
        print(f"doc_queries.py: no usable text under {top}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
