// make_tokenizers.js writes the tokenizer.json files the conformance tests run against.
// The files are saved by HuggingFace's own tokenizers package, so their layout is the
// real one; the vocabularies are built here from a training corpus (texts.js, a
// different seed than the golden texts) so that test texts contain unseen words,
// unknown characters and multi-piece splits.
//
// Run once (outputs are committed; go test does not need node):
//   mkdir -p /tmp/hftok && (cd /tmp/hftok && npm install tokenizers@0.23.2)
//   cd tokenizer/testdata && NODE_PATH=/tmp/hftok/node_modules node make_tokenizers.js
'use strict';
const fs = require('fs');
const tk = require('tokenizers');
const { makeTexts } = require('./texts.js');

const corpus = makeTexts(7, 4000);
const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

// buildVocab counts pre-tokenized words (after the given normalizer) and keeps characters
// seen at least twice, the most frequent words and the most frequent word pieces.
function buildVocab(normalizer, prefix, nWords, nPieces) {
  const pre = tk.bertPreTokenizer();
  const words = new Map();
  for (const text of corpus) {
    const norm = normalizer ? normalizer.normalizeString(text) : text;
    for (const [w] of pre.preTokenizeString(norm)) words.set(w, (words.get(w) || 0) + 1);
  }
  const chars = new Map();
  const pieces = new Map();
  const bump = (m, k, n) => m.set(k, (m.get(k) || 0) + n);
  for (const [w, n] of words) {
    const cs = Array.from(w);
    cs.forEach((c, i) => bump(chars, i ? prefix + c : c, n));
    for (let len = 2; len <= 6; len++) {
      for (let i = 0; i + len <= cs.length && i < 8; i++) {
        const p = cs.slice(i, i + len).join('');
        bump(pieces, i ? prefix + p : p, n);
      }
    }
  }
  const vocab = {};
  let id = 0;
  const add = (t) => { if (!(t in vocab)) vocab[t] = id++; };
  SPECIALS.forEach(add);
  const byCount = (m) => Array.from(m).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  byCount(chars).filter(([, n]) => n >= 2).forEach(([c]) => add(c));
  byCount(words).slice(0, nWords).forEach(([w]) => add(w));
  byCount(pieces).slice(0, nPieces).forEach(([p]) => add(p));
  return vocab;
}

function build(file, opts) {
  const model = tk.WordPiece.init(opts.vocab, {
    unkToken: '[UNK]', continuingSubwordPrefix: opts.prefix, maxInputCharsPerWord: opts.maxChars,
  });
  const t = new tk.Tokenizer(model);
  if (opts.normalizer) t.setNormalizer(opts.normalizer);
  t.setPreTokenizer(tk.bertPreTokenizer());
  if (opts.post) t.setPostProcessor(opts.post);
  if (opts.decoder) t.setDecoder(opts.decoder);
  t.addSpecialTokens(SPECIALS.filter((s) => s in opts.vocab));
  if (opts.added) t.addAddedTokens(opts.added);
  if (opts.padding) t.setPadding(opts.padding);
  t.save(file, false);
  if (opts.patch) {
    const j = JSON.parse(fs.readFileSync(file, 'utf8'));
    opts.patch(j);
    fs.writeFileSync(file, JSON.stringify(j));
  }
  console.log(file, tk.Tokenizer.fromFile(file).getVocabSize(true));
}

const cased = tk.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: false, lowercase: false });
const uncased = tk.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: true, lowercase: true });
const casedVocab = buildVocab(cased, '##', 1200, 1500);
const template = (v) => tk.templateProcessing('[CLS] $A [SEP]', '[CLS] $A [SEP] $B:1 [SEP]:1',
  [['[CLS]', v['[CLS]']], ['[SEP]', v['[SEP]']]]);

// cased: BERT-cased layout, explicit padding section.
build('cased.json', {
  vocab: casedVocab, prefix: '##', maxChars: 100, normalizer: cased, post: template(casedVocab),
  decoder: tk.wordPieceDecoder('##', true), padding: { padId: 0, padToken: '[PAD]' },
});

// uncased: lowercase with strip_accents left null (HF: follows lowercase).
const uncasedVocab = buildVocab(uncased, '##', 1000, 1200);
build('uncased.json', {
  vocab: uncasedVocab, prefix: '##', maxChars: 100, normalizer: uncased, post: template(uncasedVocab),
  decoder: tk.wordPieceDecoder('##', true),
  // The node binding only takes a boolean; real BERT files carry null here.
  patch: (j) => { j.normalizer.strip_accents = null; },
});

// tiny: unit-level vocabulary, lowercase without accent stripping (İ lowercases to two
// chars), no chinese handling, BertProcessing, short max word, added tokens with flags.
const tinyVocab = {};
['[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'pat', '##ient', 'jose', 'né', 'mg', 'new', '##s', '##ing', '.', ',', '!', '?', '\'', 'n', '##\'', '##t']
  .concat('abcdefghijklmnopqrstuvwxyz0123456789'.split(''))
  .concat('abcdefghijklmnopqrstuvwxyz'.split('').map((c) => '##' + c))
  .forEach((t, i) => { tinyVocab[t] = i; });
build('tiny.json', {
  vocab: tinyVocab, prefix: '##', maxChars: 12,
  normalizer: tk.bertNormalizer({ cleanText: true, handleChineseChars: false, stripAccents: false, lowercase: true }),
  post: tk.bertProcessing(['[SEP]', tinyVocab['[SEP]']], ['[CLS]', tinyVocab['[CLS]']]),
  decoder: tk.wordPieceDecoder('##', false),
  added: [
    new tk.AddedToken('<med>', false, { singleWord: true, normalized: true }),
    new tk.AddedToken('New York', false, { rightStrip: true, normalized: true }),
    new tk.AddedToken('<mask>', true, { leftStrip: true, rightStrip: true, normalized: false }),
    new tk.AddedToken('[MASK]', true, { leftStrip: true }),
  ],
});

// seq: Sequence normalizer, "@@" continuation prefix, no post-processor.
const seqNorm = tk.sequenceNormalizer([
  tk.bertNormalizer({ cleanText: true, handleChineseChars: true, stripAccents: false, lowercase: false }),
  tk.nfdNormalizer(), tk.stripAccentsNormalizer(), tk.lowercase()]);
build('seq.json', {
  vocab: buildVocab(seqNorm, '@@', 800, 900), prefix: '@@', maxChars: 40, normalizer: seqNorm,
  decoder: tk.wordPieceDecoder('@@', false),
});

// raw: no normalizer at all (whitespace and punctuation only), cased vocabulary.
build('raw.json', {
  vocab: casedVocab, prefix: '##', maxChars: 100, post: template(casedVocab),
  decoder: tk.wordPieceDecoder('##', true),
});
