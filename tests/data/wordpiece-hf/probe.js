// probe.js — every code point c encoded as "a" c "b" by HF tokenizers
// (as gen.js), one line "HEX ids" each: how HF classes each character
// (removed, whitespace, punctuation, part of a word); classes.py makes
// src/embed/wordpiece_classes.inc from two runs. Made once, not run by
// the tests (from where the package is installed, as gen.js):
//   node probe.js .../all-MiniLM-L6-v2/tokenizer.json probe.txt
//   node probe.js tokenizer-nostrip.json probe2.txt   (the same file with
//     "normalizer": {"type": "BertNormalizer", "clean_text": true,
//     "handle_chinese_chars": false, "strip_accents": false,
//     "lowercase": false})
// wordpiece.c then gave HF's ids for every code point in both runs, and
// in a third with clean_text false.
const { Tokenizer } = require('@anush008/tokenizers');
const fs = require('fs');
const tok = Tokenizer.fromFile(process.argv[2]);
tok.disableTruncation(); tok.disablePadding();
(async () => {
  const out = [];
  const B = 4096;
  for (let base = 0; base < 0x110000; base += B) {
    const texts = [], cps = [];
    for (let c = base; c < base + B && c < 0x110000; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      texts.push('a' + String.fromCodePoint(c) + 'b'); cps.push(c);
    }
    const enc = await tok.encodeBatch(texts, { addSpecialTokens: false });
    for (let i = 0; i < enc.length; i++) out.push(cps[i].toString(16) + ' ' + enc[i].getIds().join(','));
  }
  fs.writeFileSync(process.argv[3], out.join('\n') + '\n');
})();
