#!/usr/bin/env python3
# Writes src/text/html_entities.h (run from the top folder).
import html.entities as E
ents = {k[:-1]: v for k, v in E.html5.items() if k.endswith(';')}
names = sorted(ents, key=lambda x: x.encode())
def cesc(b):
    return ''.join(chr(c) if (chr(c).isalnum() and c < 0x7f) or c in b' &<>=-_.,' else '\\%03o' % c for c in b)
out = ['/*',
' * html_entities.h: HTML5\'s named character references (those written',
' * with their semicolon), sorted by name (strcmp) for binary search: the',
' * name without "&" and ";", and its UTF-8 (octal escapes). Generated from',
' * the WHATWG table as Python\'s html.entities.html5 holds it, by',
' * src/text/gen_html_entities.py; do not edit by hand.',
' */',
'static const struct html_entity {',
'\tconst char *name;',
'\tconst char *utf8;',
'} html_entities[] = {']
for n in names:
    out.append('\t{ "%s", "%s" },' % (n, cesc(ents[n].encode('utf-8'))))
out.append('};')
open('src/text/html_entities.h', 'w').write('\n'.join(out) + '\n')
