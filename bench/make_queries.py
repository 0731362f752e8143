#!/usr/bin/env python3
"""make_queries.py — the fixed kernel query set (bench/kernel_queries.txt).

    bench/make_queries.py TREE > bench/kernel_queries.txt

TREE is the extracted kernel (bench/work/kernel/tree/linux-source-6.1, made
by prepare_kernel.sh). Run once; the output is committed so that every run
of the benchmark uses the same queries. Short keyword queries, as people
type them into code search, all taken from the tree so each has an answer:

    function names     from definitions in .c files ("name(" at the start of
                       a line of a definition whose body opens on the next line)
    struct names       from "struct name {" ("struct name" for a third of them)
    macro names        from "#define NAME" in headers
    config symbols     from "config NAME" in Kconfig files, as CONFIG_NAME, kept
                       only when CONFIG_NAME is also used in code or a Makefile
    phrases            2 to 4 words from section headings in Documentation/*.rst
                       (English only: translations/ is left out)

Files are visited in sorted order and sampled with a fixed seed, so the same
tree gives the same file. Standard library only. drivers/gpu/drm/amd, which
the benchmark does not index, is left out, so that every query can be
answered in the full run.
"""
import os
import random
import re
import sys

SEED = 20240607
COUNTS = {"function": 90, "struct": 60, "macro": 60, "config": 40, "phrase": 50}
SKIP_DIRS = ("drivers/gpu/drm/amd",)
FILES_PER_KIND = 3000  # files sampled per kind: plenty of candidates, quick to read

FUNC_RE = re.compile(r"^[a-z][\w \t\*]*?\b([a-z][a-z0-9_]{5,40})\([^;]*$")
STRUCT_RE = re.compile(r"^struct ([a-z][a-z0-9_]{3,40}) \{", re.M)
MACRO_RE = re.compile(r"^#define ([A-Z][A-Z0-9_]{5,40})\b", re.M)
CONFIG_RE = re.compile(r"^(?:menu)?config ([A-Z][A-Z0-9_]{3,40})\s*$", re.M)
USED_RE = re.compile(r"\bCONFIG_([A-Z0-9_]+)")
WORD_RE = re.compile(r"^[A-Za-z][a-z]+$")
STOP = {"the", "and", "for", "with", "from", "into", "that", "this", "are", "its",
        "how", "what", "when", "using", "use", "of", "to", "in", "on", "a", "an", "or",
        "by", "at", "as", "is", "be", "not", "your", "our", "other", "some", "all"}


def files_under(tree):
    out = {"c": [], "h": [], "kconfig": [], "rst": [], "makefile": []}
    for root, dirs, files in os.walk(tree):
        dirs.sort()
        rel = os.path.relpath(root, tree)
        if rel.startswith(SKIP_DIRS):
            dirs[:] = []
            continue
        for f in sorted(files):
            path = os.path.join(root, f)
            if f.endswith(".c"):
                out["c"].append(path)
            elif f.endswith(".h"):
                out["h"].append(path)
            elif f == "Makefile":
                out["makefile"].append(path)
            elif f.startswith("Kconfig"):
                out["kconfig"].append(path)
            elif (f.endswith(".rst") and rel.startswith("Documentation")
                  and not rel.startswith("Documentation/translations")):
                out["rst"].append(path)
    return out


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def sample_files(rng, paths):
    return sorted(rng.sample(paths, min(FILES_PER_KIND, len(paths))))


def functions(text):
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        m = FUNC_RE.match(line)
        if not m or line.startswith(("return", "else", "if ", "while", "for ", "switch")):
            continue
        # a definition: the parameter list closes and the body opens below
        j = i
        while j < len(lines) - 1 and j < i + 4 and not lines[j].rstrip().endswith(")"):
            j += 1
        if lines[j].rstrip().endswith(")") and lines[j + 1].strip() == "{":
            yield m.group(1)


def headings(text):
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        title, rule = lines[i].strip(), lines[i + 1].strip()
        if title and len(rule) >= len(title) and len(set(rule)) == 1 and rule[0] in "=-~^*":
            words = [w.lower() for w in title.split()]
            if all(WORD_RE.match(w) for w in words):
                yield words


def phrase(rng, words):
    """2 to 4 consecutive words with a content word at each end."""
    for _ in range(8):
        n = rng.randint(2, min(4, len(words)))
        start = rng.randint(0, len(words) - n)
        cut = words[start:start + n]
        if cut[0] not in STOP and cut[-1] not in STOP and len(set(cut)) == n:
            return " ".join(cut)
    return None


def main(argv):
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        sys.stderr.write("usage: make_queries.py TREE > kernel_queries.txt\n")
        return 2
    rng = random.Random(SEED)
    files = files_under(argv[0])
    found = {kind: set() for kind in COUNTS}
    used = set()
    for path in sample_files(rng, files["c"]):
        text = read(path)
        found["function"].update(functions(text))
        used.update(USED_RE.findall(text))
    for path in sample_files(rng, files["h"]):
        text = read(path)
        used.update(USED_RE.findall(text))
        found["struct"].update(STRUCT_RE.findall(text))
        found["macro"].update(MACRO_RE.findall(text))
    for path in sample_files(rng, files["kconfig"]):
        found["config"].update("CONFIG_" + s for s in CONFIG_RE.findall(read(path)))
    for path in files["makefile"]:
        used.update(USED_RE.findall(read(path)))
    found["config"] = {c for c in found["config"] if c[len("CONFIG_"):] in used}
    heads = []
    for path in sample_files(rng, files["rst"]):
        heads.extend(h for h in headings(read(path)) if len(h) >= 2)
    for words in heads:
        p = phrase(rng, words)
        if p:
            found["phrase"].add(p)

    queries = []
    for kind, n in COUNTS.items():
        pool = sorted(found[kind])
        if len(pool) < n:
            sys.stderr.write(f"make_queries: only {len(pool)} {kind} candidates\n")
        picked = rng.sample(pool, min(n, len(pool)))
        if kind == "struct":
            picked = [("struct " + s if i % 3 == 0 else s) for i, s in enumerate(picked)]
        queries.extend(picked)
    rng.shuffle(queries)
    sys.stdout.write("".join(q + "\n" for q in queries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
