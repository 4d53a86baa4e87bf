// gen_golden.js records what HuggingFace's own tokenizer (the Rust core, through the npm
// package tokenizers@0.23.2) produces for the deterministic texts of texts.js, so that
// the Go conformance test can compare ids, offsets, word ids, special masks and decoding
// without node.
//
// Usage (from the repository root):
//   mkdir -p /tmp/hftok && (cd /tmp/hftok && npm install tokenizers@0.23.2)
//   NODE_PATH=/tmp/hftok/node_modules node tokenizer/testdata/gen_golden.js \
//       <tokenizer.json> tokenizer/testdata/golden/<name>.jsonl.gz [count]
// e.g. for a shipped model:
//   NODE_PATH=/tmp/hftok/node_modules node tokenizer/testdata/gen_golden.js \
//       models/pii/tokenizer.json tokenizer/testdata/golden/pii.jsonl.gz
// With --bpe the 1,100 texts are followed by 1,400 of texts.js's bpeTexts (special tokens of
// byte-level families, whitespace runs, contractions, NFC cases, very long words); the
// byte-level golden files were made that way:
//   for f in gpt2 roberta roberta-prefix modernbert edge-unk edge-affix; do
//     NODE_PATH=/tmp/hftok/node_modules node tokenizer/testdata/gen_golden.js --bpe \
//         tokenizer/testdata/$f.json tokenizer/testdata/golden/$f.jsonl.gz; done
// With --spm the byte-level texts are followed by 2,000 of texts.js's spmTexts (what
// SentencePiece's normalization rules and Metaspace treat specially); the SentencePiece golden
// files were made that way:
//   for f in deberta-v3 xlm-roberta unigram-bytes llama-bpe; do
//     NODE_PATH=/tmp/hftok/node_modules node tokenizer/testdata/gen_golden.js --spm \
//         tokenizer/testdata/$f.json tokenizer/testdata/golden/$f.jsonl.gz; done
// The Go test picks up every testdata/golden/*.jsonl.gz; the first line names the tokenizer
// (relative to the golden file) and its sha256, so a retrained tokenizer fails the test
// until its golden file is regenerated.
//
// Offsets: the node binding reports offsets in Unicode code points (Rust chars), not
// UTF-16 units and not bytes; they are converted here to UTF-8 byte offsets, the unit
// the Go package promises.
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const path = require('path');
const crypto = require('crypto');
const tk = require('tokenizers');
const { makeTexts, bpeTexts, spmTexts, rng } = require(path.join(__dirname, 'texts.js'));

const SEED = 20261130;

function byteOffsets(text) {
  // byteAt[i] is the UTF-8 byte offset of code point i; one extra entry for the end.
  const byteAt = [0];
  for (const c of text) byteAt.push(byteAt[byteAt.length - 1] + Buffer.byteLength(c, 'utf8'));
  return byteAt;
}

function record(enc, byteAt) {
  const offsets = [];
  for (const [s, e] of enc.getOffsets()) {
    if (s >= byteAt.length || e >= byteAt.length) throw new Error('offset outside text');
    offsets.push(byteAt[s], byteAt[e]);
  }
  return {
    ids: enc.getIds(),
    offsets,
    words: enc.getWordIds().map((w) => (w === null || w === undefined ? -1 : w)),
    special: enc.getSpecialTokensMask(),
  };
}

async function main() {
  const args = process.argv.slice(2);
  const spm = args[0] === '--spm';
  const bpe = args[0] === '--bpe' || spm;
  if (bpe) args.shift();
  const [tokPath, outPath, countArg] = args;
  if (!tokPath || !outPath) {
    console.error('usage: gen_golden.js [--bpe] <tokenizer.json> <out.jsonl.gz> [count]');
    process.exit(2);
  }
  const count = countArg ? parseInt(countArg, 10) : 1100;
  const raw = fs.readFileSync(tokPath);
  const tok = tk.Tokenizer.fromFile(tokPath);
  const vocabSize = tok.getVocabSize(true);
  let texts = makeTexts(SEED, count);
  if (bpe) texts = texts.concat(bpeTexts(SEED + 2, 1400));
  if (spm) texts = texts.concat(spmTexts(SEED + 3, 2000));
  const r = rng(SEED + 1);
  const lines = [JSON.stringify({
    tokenizer: path.relative(path.dirname(outPath), tokPath),
    sha256: crypto.createHash('sha256').update(raw).digest('hex'),
    generator: 'tokenizers@0.23.2', seed: SEED, texts: texts.length, vocab_size: vocabSize,
  })];
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i];
    const byteAt = byteOffsets(text);
    const plain = record(await tok.encode(text, null, { addSpecialTokens: false }), byteAt);
    const fullEnc = await tok.encode(text, null, { addSpecialTokens: true });
    const full = record(fullEnc, byteAt);
    // Template tokens sit at [0, 0] with word -1 around the plain encoding (the Go test
    // checks that shape), so only the ids and the mask of the full encoding are kept.
    const rec = { text, plain, full: { ids: full.ids, special: full.special },
      decode: await tok.decode(full.ids, false), decode_skip: await tok.decode(full.ids, true) };
    if (i % 10 === 0) {
      // Arbitrary id sequences, including ids past the vocabulary, which HF drops.
      const ids = [];
      const n = Math.floor(r() * 20);
      for (let k = 0; k < n; k++) ids.push(Math.floor(r() * (vocabSize + 3)));
      rec.rand = { ids, decode: await tok.decode(ids, false), decode_skip: await tok.decode(ids, true) };
    }
    lines.push(JSON.stringify(rec));
  }
  fs.mkdirSync(path.dirname(outPath), { recursive: true });
  // Compressed: the golden files are a sixth of their size gzipped, and no header carries a
  // name or time, so the same texts give the same bytes.
  fs.writeFileSync(outPath, zlib.gzipSync(lines.join('\n') + '\n', { level: 9 }));
  console.log(`${outPath}: ${texts.length} texts`);
}

main().catch((e) => { console.error(e); process.exit(1); });
