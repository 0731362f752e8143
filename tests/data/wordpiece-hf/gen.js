// gen.js — random.jsonl: 1000 random texts (words, accents, CJK, emoji,
// controls, special tokens, long words, random code points) and the ids
// Hugging Face's tokenizers library (the Rust one, through its Node build)
// gives them with add_special_tokens false; tests/test_wordpiece.c holds
// wordpiece.c to them. Made once, not run by the tests:
//   npm install @anush008/tokenizers   (0.6.0)
//   node gen.js .../all-MiniLM-L6-v2/tokenizer.json random.jsonl
// (from the folder the package was installed in: a copy of gen.js there)
const { Tokenizer } = require('@anush008/tokenizers');
const fs = require('fs');
const tok = Tokenizer.fromFile(process.argv[2]);
tok.disableTruncation(); tok.disablePadding();
let seed = 12345;
function rnd(n) { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; }
const pieces = ['hello', 'World', 'unaffable', 'running', 'Äpfel', 'café', 'naïve', 'ÉCOLE', 'straße', 'İstanbul',
  'ΣΊΣΥΦΟΣ', 'Москва', '中文', '日本語', '한국어', 'ﬁle', 'Ⅻ', '①', 'x²', '🚀', '😶‍🌫️', '\u200b', '\u00ad',
  '[CLS]', '[SEP]', '[MASK]', '[UNK]', '[cls]', '##ing', 'don\'t', 'e-mail', 'a.b.c', '$100', '3.14',
  '```', '->', '::', 'snake_case', 'camelCase', 'http://x.org/a?b=c', 'ÀÁÂÃÄÅ', 'ǅ', 'ﾊﾝｶｸ', 'ｆｕｌｌ',
  '\u0301', 'e\u0301', '\u0000', '\ufffd', '\u0085', '\u00a0', '\u2028', '\u3000', '\t', '\n', '\r\n', '\u000b', '\u000c',
  '\u061f', '\u0e01\u0e32', 'अनुच्छेद', '«»', '“quoted”', '—', '…', '¿', '¡', '§', '©', '°', '±', '×', '÷',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  'pneumonoultramicroscopicsilicovolcanoconiosis', 'ß', 'ŉ', 'ǰ', 'ΐ', 'ﬀ', '\ud800\udc00', '𝒜𝓁𝓅𝒽𝒶', '\u2160', '\u0130'];
const out = [];
for (let i = 0; i < 1000; i++) {
  let n = 1 + rnd(12), s = '';
  for (let k = 0; k < n; k++) {
    const r = rnd(10);
    if (r < 6) s += pieces[rnd(pieces.length)];
    else if (r < 8) s += ' ';
    else s += String.fromCodePoint(rnd(3) ? 32 + rnd(0x3000) : 0x10000 + rnd(0x20000));
  }
  out.push(s);
}
(async () => {
  const lines = [];
  for (const s of out) {
    const e = await tok.encode(s, null, { addSpecialTokens: false });
    lines.push(JSON.stringify({ text: s, ids: e.getIds() }));
  }
  fs.writeFileSync(process.argv[3], lines.join('\n') + '\n');
})();
