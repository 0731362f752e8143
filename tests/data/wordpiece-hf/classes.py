#!/usr/bin/env python3
# classes.py — src/embed/wordpiece_classes.inc from two runs of probe.js:
# probe.txt with all-MiniLM-L6-v2's tokenizer.json as it is, probe2.txt
# with its normalizer changed to strip_accents false, lowercase false,
# handle_chinese_chars false. For each code point c, what HF made of
# "a" c "b" says its class: removed in both runs, a control character
# (clean_text drops it); removed only when accents are stripped, a
# nonspacing mark; "a", one token, "b" in the second run (without NFD:
# U+2260 is not "=" there, and not a CJK ideograph), punctuation;
# anything else, part of a word (or whitespace, which wordpiece.c knows). The ranges of the first three classes (whitespace
# is written in wordpiece.c) become the table.
#   python3 classes.py probe.txt probe2.txt > src/embed/wordpiece_classes.inc
import sys


def load(path):
    d = {}
    for line in open(path):
        cp, ids = line.split(' ', 1)
        d[int(cp, 16)] = ids.strip()
    return d


def chinese(c):
    return any(lo <= c <= hi for lo, hi in (
        (0x4e00, 0x9fff), (0x3400, 0x4dbf), (0x20000, 0x2a6df), (0x2a700, 0x2b73f),
        (0x2b740, 0x2b81f), (0x2b920, 0x2ceaf), (0xf900, 0xfaff), (0x2f800, 0x2fa1f)))


p1, p2 = load(sys.argv[1]), load(sys.argv[2])
ab1, ab2 = p1[0], p2[0]          # NUL is removed: "ab"
ranges = []
for c in sorted(p1):
    a, b = p1[c], p2[c]
    t = b.split(',')   # punctuation as the character itself, before NFD
    if b == ab2:
        k = 'WP_CONTROL'
    elif a == ab1:
        k = 'WP_MARK'
    elif len(t) == 3 and t[0] == '1037' and t[2] == '1038' and not chinese(c):
        k = 'WP_PUNCT'
    else:
        continue
    # surrogates are no code points: a range may run across them
    if ranges and ranges[-1][2] == k and (c == ranges[-1][1] + 1 or (ranges[-1][1] == 0xd7ff and c == 0xe000)):
        ranges[-1][1] = c
    else:
        ranges.append([c, c, k])
print('/* wordpiece_classes.inc — made by tests/data/wordpiece-hf/classes.py from')
print(' * HF tokenizers\' own output for every code point (probe.js): the ranges')
print(' * of characters it drops as control characters, strips as nonspacing')
print(' * marks, or splits off as punctuation. Included by wordpiece.c. */')
for i in range(0, len(ranges), 3):
    print('\t' + ' '.join('{ 0x%x, 0x%x, %s },' % tuple(r) for r in ranges[i:i + 3]))
