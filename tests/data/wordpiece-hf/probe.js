// probe.js — every code point c encoded as "a" c "b" by HF tokenizers
// (as gen.js), one line "HEX ids" each: how HF classes each character
// (removed, whitespace, punctuation, part of a word). Where wordpiece.c
// without its hf_class table differed from this, the table says HF's
// class (568 code points). Made once, not run by the tests:
//   node probe.js .../all-MiniLM-L6-v2/tokenizer.json probe.txt
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
