// make_bpe_tokenizers.js writes the byte-level BPE tokenizer.json files that, beside the
// real GPT-2 file (gpt2.json, see SOURCES.md), the conformance tests run against. Each one
// takes the layout of a model family that serves token classification (RoBERTa and
// Longformer, ModernBERT) or turns on the BPE options those leave off (unknown bytes,
// ignore_merges, subword prefix and word suffix, no regex split). A few thousand merges are
// learned here from the training corpus of texts.js, so the files stay small while test
// texts still meet unseen words, multi-piece splits and, where the alphabet is partial,
// unknown bytes. HF's own tokenizers package builds and saves every file; the parts its node
// binding cannot set (the ByteLevel decoder, a few flags) are patched into the JSON, and
// each file is loaded back through HF to prove it is valid.
//
// Run once (outputs are committed; go test does not need node):
//   mkdir -p /tmp/hftok && (cd /tmp/hftok && npm install tokenizers@0.23.2)
//   cd tokenizer/testdata && NODE_PATH=/tmp/hftok/node_modules node make_bpe_tokenizers.js
'use strict';
const fs = require('fs');
const tk = require('tokenizers');
const { makeTexts } = require('./texts.js');

const corpus = makeTexts(7, 4000);

// byteChar is GPT-2's byte-to-character table, in byte order (HF's alphabet call returns a
// set in no fixed order).
const byteChar = (() => {
  const printable = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const out = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + n++);
  return out;
})();

// words pre-tokenizes the corpus the way the tokenizer will and counts byte-level words.
function words(normalizer, useRegex = true, texts = corpus) {
  const pre = tk.byteLevelPreTokenizer(false, useRegex);
  const counts = new Map();
  for (const text of texts) {
    const norm = normalizer ? normalizer.normalizeString(text) : text;
    for (const [w] of pre.preTokenizeString(norm)) counts.set(w, (counts.get(w) || 0) + 1);
  }
  return counts;
}

// learn is plain BPE training: repeatedly merge the most frequent adjacent pair (ties by
// spelling) over the most frequent words. Symbols other than a word's first carry prefix
// and a word's last carries suffix, as HF's BPE model spells them when it starts a word.
function learn(counts, nMerges, { prefix = '', suffix = '', alphabet }) {
  const top = Array.from(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 6000);
  const ws = top.map(([w, n]) => {
    const cs = Array.from(w);
    return { n, syms: cs.map((c, i) => (i ? prefix : '') + c + (i === cs.length - 1 ? suffix : '')) };
  });
  const vocab = new Set(alphabet);
  if (!alphabet) {
    // A partial alphabet: symbols seen at least twice, so rarer bytes stay unknown.
    const seen = new Map();
    for (const w of ws) for (const s of w.syms) seen.set(s, (seen.get(s) || 0) + w.n);
    for (const [s, n] of Array.from(seen).sort()) if (n >= 2) vocab.add(s);
  }
  const merges = [];
  for (let k = 0; k < nMerges; k++) {
    const pairs = new Map();
    for (const w of ws) {
      for (let i = 0; i + 1 < w.syms.length; i++) {
        if (!vocab.has(w.syms[i]) || !vocab.has(w.syms[i + 1])) continue;
        const key = w.syms[i] + '\u0000' + w.syms[i + 1];
        pairs.set(key, (pairs.get(key) || 0) + w.n);
      }
    }
    let best = null; let bestN = 1;
    for (const [key, n] of pairs) if (n > bestN || (n === bestN && best !== null && key < best)) { best = key; bestN = n; }
    if (best === null) break;
    const [a, b] = best.split('\u0000');
    const merged = a + b.slice(prefix.length);
    merges.push([a, b]);
    vocab.add(merged);
    for (const w of ws) {
      const out = [];
      for (let i = 0; i < w.syms.length; i++) {
        if (i + 1 < w.syms.length && w.syms[i] === a && w.syms[i + 1] === b) { out.push(merged); i++; } else out.push(w.syms[i]);
      }
      w.syms = out;
    }
  }
  return { vocab: Array.from(vocab), merges };
}

function build(file, opts) {
  const vocab = {};
  let id = 0;
  for (const t of opts.head || []) vocab[t] = id++;
  for (const t of opts.learned.vocab) if (!(t in vocab)) vocab[t] = id++;
  for (const t of opts.extra || []) if (!(t in vocab)) vocab[t] = id++;
  const model = tk.BPE.init(vocab, opts.learned.merges, opts.bpe || {});
  const t = new tk.Tokenizer(model);
  if (opts.normalizer) t.setNormalizer(opts.normalizer);
  t.setPreTokenizer(tk.byteLevelPreTokenizer(opts.addPrefixSpace, opts.useRegex !== false));
  if (opts.post) t.setPostProcessor(opts.post);
  if (opts.added) t.addAddedTokens(opts.added);
  t.save(file, false);
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  j.decoder = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  if (opts.patch) opts.patch(j);
  fs.writeFileSync(file, JSON.stringify(j));
  console.log(file, tk.Tokenizer.fromFile(file).getVocabSize(true), 'merges', opts.learned.merges.length);
}

const added = (content, special, o = {}) => new tk.AddedToken(content, special, {
  singleWord: !!o.singleWord, leftStrip: !!o.lstrip, rightStrip: !!o.rstrip, normalized: o.normalized ?? !special,
});

// roberta: roberta-base's layout. <s> <pad> </s> <unk> head the vocab (normalized special
// tokens, as that file has them), <mask> strips the space before it, RobertaProcessing
// trims offsets, no prefix space, unk_token null.
const robertaVocab = learn(words(null), 2500, { alphabet: byteChar });
const robertaHead = ['<s>', '<pad>', '</s>', '<unk>'];
build('roberta.json', {
  head: robertaHead, learned: robertaVocab, addPrefixSpace: false,
  post: tk.robertaProcessing(['</s>', 2], ['<s>', 0], true, false),
  added: [...robertaHead.map((s) => added(s, true, { normalized: true })), added('<mask>', true, { lstrip: true })],
});

// roberta-prefix: how RoBERTa and Longformer token classifiers are often saved, with
// add_prefix_space on in both the pre-tokenizer and the post-processor.
build('roberta-prefix.json', {
  head: robertaHead, learned: robertaVocab, addPrefixSpace: true,
  post: tk.robertaProcessing(['</s>', 2], ['<s>', 0], true, true),
  added: [...robertaHead.map((s) => added(s, true, { normalized: true })), added('<mask>', true, { lstrip: true })],
});

// modernbert: ModernBERT's layout (the OLMo/GPT-NeoX tokenizer): NFC normalizer,
// TemplateProcessing with [CLS]/[SEP], no offset trimming, non-special normalized added
// tokens for runs of spaces and for masked PII, [MASK] stripping the space before it.
const nfc = tk.nfcNormalizer();
const modernVocab = learn(words(nfc), 2500, { alphabet: byteChar });
const spaceRuns = [];
for (let n = 24; n >= 2; n--) spaceRuns.push(' '.repeat(n));
const modernAdded = ['|||IP_ADDRESS|||', '<|padding|>', ...spaceRuns, '|||EMAIL_ADDRESS|||', '|||PHONE_NUMBER|||',
  '<|endoftext|>', '[UNK]', '[CLS]', '[SEP]', '[PAD]', '[MASK]', '[unused0]', '[unused1]'];
const modernSpecial = new Set(['<|padding|>', '<|endoftext|>', '[UNK]', '[CLS]', '[SEP]', '[PAD]', '[MASK]', '[unused0]', '[unused1]']);
const modernLearned = { vocab: modernVocab.vocab, merges: modernVocab.merges };
build('modernbert.json', {
  learned: modernLearned, normalizer: nfc, addPrefixSpace: false,
  added: modernAdded.map((s) => added(s, modernSpecial.has(s), { lstrip: s === '[MASK]', normalized: !modernSpecial.has(s) })),
  post: null,
  patch: (j) => {
    const ids = Object.fromEntries(j.added_tokens.map((a) => [a.content, a.id]));
    j.post_processor = JSON.parse(JSON.stringify(templateJSON(ids)));
  },
});

function templateJSON(ids) {
  const t = tk.templateProcessing('[CLS] $A [SEP]', '[CLS] $A [SEP] $B [SEP]', [['[CLS]', ids['[CLS]']], ['[SEP]', ids['[SEP]']]]);
  const tmp = new tk.Tokenizer(tk.BPE.empty());
  tmp.setPostProcessor(t);
  tmp.save('/tmp/.template.json', false);
  return JSON.parse(fs.readFileSync('/tmp/.template.json', 'utf8')).post_processor;
}

// edge-unk: a partial byte alphabet with an unk token (not fused), ignore_merges, a prefix
// space and the ByteLevel post-processor trimming offsets, so unknown bytes, whole-word
// hits and trimmed unknowns all occur. Frequent words the merges do not build are added to
// the vocab whole, so that ignore_merges decides how they are split.
const partialVocab = learn(words(null), 1500, {});
const learnedSet = new Set(partialVocab.vocab);
const wholeWords = Array.from(words(null)).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  .map(([w]) => w).filter((w) => !learnedSet.has(w)).slice(0, 400);
build('edge-unk.json', {
  head: ['<unk>', '<|endoftext|>'], learned: partialVocab, extra: wholeWords, addPrefixSpace: true,
  bpe: { unkToken: '<unk>', fuseUnk: false },
  post: tk.byteLevelProcessing(true),
  added: [added('<|endoftext|>', true)],
  patch: (j) => {
    j.model.ignore_merges = true;
    j.post_processor.add_prefix_space = true;
  },
});

// edge-drop: the partial alphabet with unk_token null, so HF drops unknown bytes (and
// shifts the offsets of the rest of their word), under RobertaProcessing's trimming.
build('edge-drop.json', {
  head: ['<s>', '<pad>', '</s>'], learned: partialVocab, addPrefixSpace: false,
  post: tk.robertaProcessing(['</s>', 2], ['<s>', 0], true, false),
  added: [added('<s>', true), added('</s>', true), added('<mask>', true, { lstrip: true, rstrip: true })],
});

// edge-affix: continuing_subword_prefix and end_of_word_suffix (merges strip the prefix of
// their right part), fused unknowns, no regex split (each stretch between added tokens is
// one word), merges written in the older "a b" form.
const affixLearned = learn(words(nfc, false, corpus.slice(0, 800)), 800, { prefix: '##', suffix: '</w>' });
build('edge-affix.json', {
  head: ['<unk>'], learned: affixLearned, normalizer: nfc, addPrefixSpace: false, useRegex: false,
  bpe: { unkToken: '<unk>', fuseUnk: true, continuingSubwordPrefix: '##', endOfWordSuffix: '</w>' },
  added: [added('<unk>', true), added('<sep>', true, { rstrip: true })],
  patch: (j) => { j.model.merges = j.model.merges.map(([a, b]) => a + ' ' + b); },
});
