// m2v.js — m2v.jsonl: what model2vec's StaticModel.encode gives, computed
// here from HF tokenizers' ids (as model2vec does: the text cut to 512
// times the median token length in characters, special tokens off, the
// unknown token dropped, the first 512 ids, the weighted mean of their
// rows, unit length), for a model made of all-MiniLM-L6-v2's
// tokenizer.json and an 8-column matrix and weights given by formulas
// (tests/test_model2vec.c writes the same model). Texts: random.jsonl's
// (line "i"), and long ones, lines a..b-1 joined by spaces ("join"),
// past the characters they are cut to, and ones of many known tokens,
// past the 512 tokens ("repeat" i: ("a b. c, d; e f g h i j " + line i +
// " ") 60 times).
// Made once, not run by the tests (from where @anush008/tokenizers is
// installed): node m2v.js .../tokenizer.json random.jsonl m2v.jsonl
const { Tokenizer } = require('@anush008/tokenizers');
const fs = require('fs');
const tj = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const tok = Tokenizer.fromFile(process.argv[2]);
tok.disableTruncation(); tok.disablePadding();
const texts = fs.readFileSync(process.argv[3], 'utf8').trim().split('\n').map(l => JSON.parse(l).text);
const D = 8;
const row = (i, k) => Math.fround((((i * 2654435761 + k * 40503) % 2003) / 1001) - 1);
const weight = i => Math.fround(0.5 + (i % 7) / 8);
const unk = tj.model.vocab[tj.model.unk_token];
const L = Object.keys(tj.model.vocab).map(s => [...s].length).sort((a, b) => a - b);
const n = L.length, med = Math.floor(n % 2 ? L[(n - 1) / 2] : (L[n / 2 - 1] + L[n / 2]) / 2);
async function embed(s) {
  s = [...s].slice(0, 512 * med).join('');
  const e = await tok.encode(s, null, { addSpecialTokens: false });
  const ids = e.getIds().filter(x => x !== unk).slice(0, 512);
  const v = new Array(D).fill(0);
  for (const id of ids) for (let k = 0; k < D; k++) v[k] += row(id, k) * weight(id);
  let ss = 0;
  for (let k = 0; k < D; k++) { v[k] /= ids.length || 1; ss += v[k] * v[k]; }
  const nn = Math.sqrt(ss);
  return v.map(x => nn > 0 ? x / nn : 0);
}
(async () => {
  const out = [];
  for (let i = 0; i < 300; i++) out.push(JSON.stringify({ i, vec: await embed(texts[i]) }));
  for (let a = 0; a < 750; a += 25) {
    const b = a + 250;
    out.push(JSON.stringify({ join: [a, b], vec: await embed(texts.slice(a, b).join(' ')) }));
  }
  // many known tokens: the 512 cap comes before the cut
  const prefix = 'a b. c, d; e f g h i j ';
  for (let i = 0; i < 10; i++)
    out.push(JSON.stringify({ repeat: i, times: 60, vec: await embed((prefix + texts[i] + ' ').repeat(60)) }));
  fs.writeFileSync(process.argv[4], out.join('\n') + '\n');
})();
