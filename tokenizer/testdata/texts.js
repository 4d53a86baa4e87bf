// texts.js builds the deterministic test texts shared by make_tokenizers.js and
// gen_golden.js. Same seed, same texts: the golden files depend on it, so changing
// anything here means regenerating every golden file.
'use strict';

function rng(seed) {
  // mulberry32: tiny, deterministic, good enough to shuffle test material.
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const names = ['José', 'Zoë', 'Łukasz', 'Müller', 'Nguyễn', 'François', 'Søren', 'Dvořák', 'Ñúñez',
  'Ångström', 'Chloé', 'Björk', 'Şükrü', 'İsmail', 'Ørsted', 'Ćosić', 'Żaneta', 'Mário', 'Núria',
  'Siobhán', 'Ólafur', 'Eleni Παπαδοπούλου', 'Дмитрий Иванов', 'ΟΔΥΣΣΕΑΣ', 'Straße', 'Ǆuro',
  'John Smith', 'Mary O\'Brien', 'Anne-Marie', 'Li Wei', '王小明', '佐藤 花子', '김민준', 'محمد',
  'דוד', 'Jos\u0065\u0301', 'Zo\u0065\u0308', 'Ren\u00e9e', 'Noe\u0308l', 'ǘber', 'ﬁona'];
const conditions = ['type 2 diabetes', 'hypertension', 'COPD', 'atrial fibrillation', 'pneumonia',
  'chronic kidney disease stage 3', 'asthma', 'migraine', 'Crohn\'s disease', 'anémie',
  'hypothyroidism', 'sepsis', 'cellulitis', 'myocardial infarction', 'Guillain–Barré syndrome',
  'Sjögren\'s syndrome', 'Ménière\'s disease', 'osteoarthritis', 'CHF (EF 35%)', 'UTI'];
const meds = ['metformin', 'lisinopril', 'atorvastatin', 'amoxicillin/clavulanate', 'warfarin',
  'insulin glargine', 'salbutamol', 'levothyroxine', 'ibuprofen', 'paracetamol', 'furosemide',
  'apixaban', 'prednisolone', 'omeprazole', 'sertraline'];
const doses = ['5 mg', '10mg', '0.5 mg/kg', '500 mg BID', '20 units qHS', '2.5 µg', '1 g IV q8h',
  '½ tab', '100 mg/m²', '40 mg PO daily', '2×250mg', '12.5mg', '75 µg'];
const places = ['St. Mary\'s Hospital', 'Hôpital Saint-Louis', 'Klinikum München', 'ICU-3',
  'Ward 7B', 'Cork University Hospital', 'São Paulo', 'Zürich', '東京病院', 'Kraków'];
const dates = ['2024-03-05', '03/05/2024', '5 March 2024', 'Mar 5th', '05.03.24', '12:30', 'T+2h'];
const emoji = ['😀', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '❤️', '🇫🇷', '1️⃣', '🥰', '🫠', '🧑🏿‍⚕️', '💊', '🩺', '☺',
  '👩🏻‍🔬', '🤷‍♀️', '✅', '⚠️', '©', '™'];
const cjk = ['患者は東京で入院した。', '病人在医院接受治疗。', '한국어 환자 기록', '血压 120/80 毫米汞柱',
  'カタカナとひらがな', '發燒三天，咳嗽。', '𠀋𡈽𡌛 rare ideographs', '丽 compat 兀', '㐀㐁 ext-A',
  '𪜀 ext-C 𫝀 ext-D 𫠠 ext-E 𬺰 ext-F 𰀀 ext-G', '全角ＡＢＣ１２３'];
const rtl = ['مَرِيض يعاني من الحُمّى', 'שָׁלוֹם עוֹלָם', 'المريض \u200fعمره 45 سنة', 'חולה בן 30',
  'تم إعطاء ٥ ملغ', 'فارسی: بیمار'];
const combining = ['e\u0301', 'a\u0316\u0301', '\u01d8\u0316', 'o\u0302\u0323', 'नमस्ते', 'สวัสดีครับ',
  'Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L\u0368\u0367\u0369\u0358\u0320G\u0311\u0357\u030e\u0305\u035b\u0341\u0334\u033b\u0348\u034d\u0354\u0339O\u0342\u030c\u030c\u0358\u0328\u0335\u0339\u033b\u031d\u0333',
  '\u0301leading mark', 'x\u20dd', 'q\u0300\u0301\u0302\u0303\u0304', '\ud834\udd65\ud834\udd6d', 'ক্ষ', 'ᄀ\u1161\u11a8',
  '\u0903\u093e\u0340\u07fd\u1c89\ua7cb', '\u0890\u08e2 \ud804\udccd \ud80d\udc30 \u061d \u2e43 \u166d \ud804\uddc9'];
const controls = ['\u0000', '\u0007', '\u001b', '\u007f', '\u0085', '\u200b', '\u200d', '\ufeff',
  '\ufffd', '\u00ad', '\ue000', '\u2028', '\u2029', '\u000b', '\u000c', '\u202e', '\u2066', '\udb80\udc00'];
const spaces = [' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u2009', '\u3000', '\u2003', '\u202f', '\u1680'];
const specials = ['[CLS]', '[SEP]', '[UNK]', '[PAD]', '[MASK]', '[cls]', '[CLS', 'CLS]', '[[SEP]]'];
const words = ['the', 'patient', 'was', 'admitted', 'with', 'history', 'of', 'and', 'presented',
  'to', 'emergency', 'department', 'complaining', 'chest', 'pain', 'shortness', 'breath', 'denies',
  'fever', 'allergic', 'penicillin', 'discharged', 'follow-up', 'in', 'two', 'weeks', 'BP', 'HR',
  'SpO₂', 'temp', '38.2°C', 'labs', 'notable', 'for', 'Na', 'K+', 'creatinine', 'eGFR', 'HbA1c',
  'x-ray', 'CT', 'MRI', 'unremarkable', 'mild', 'severe', 'bilateral', 'left', 'right', 'lower',
  'extremity', 'edema', 'no', 'known', 'drug', 'allergies', 'NKDA', 'smoker', 'pack-years'];
const templates = [
  (r) => `Patient ${pick(r, names)} was admitted to ${pick(r, places)} on ${pick(r, dates)} with ${pick(r, conditions)}.`,
  (r) => `Started ${pick(r, meds)} ${pick(r, doses)}; continue ${pick(r, meds)} ${pick(r, doses)}.`,
  (r) => `${pick(r, names)} (DOB ${pick(r, dates)}) reports ${pick(r, conditions)} since ${pick(r, dates)}.`,
  (r) => `Dr. ${pick(r, names)} reviewed the chart: ${pick(r, conditions)}, on ${pick(r, meds)}.`,
  (r) => `Contact ${pick(r, names).toLowerCase()}@example.org or +1 (555) 012-${1000 + Math.floor(r() * 8999)}.`,
  (r) => `MRN ${Math.floor(r() * 1e8)}; SSN ***-**-${1000 + Math.floor(r() * 8999)}; room ${pick(r, places)}.`,
  (r) => `Allergies: ${pick(r, meds)} → rash ${pick(r, emoji)}. Family hx: ${pick(r, conditions)}.`,
  (r) => `${pick(r, names)} said: “I feel better today” ${pick(r, emoji)}${pick(r, emoji)}`,
];

function pick(r, a) { return a[Math.floor(r() * a.length)]; }

function randomWords(r, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const k = r();
    if (k < 0.6) out.push(pick(r, words));
    else if (k < 0.7) out.push(pick(r, names));
    else if (k < 0.75) out.push(pick(r, emoji));
    else if (k < 0.8) out.push(pick(r, cjk));
    else if (k < 0.84) out.push(pick(r, rtl));
    else if (k < 0.88) out.push(pick(r, combining));
    else if (k < 0.91) out.push(pick(r, controls) + pick(r, words));
    else if (k < 0.94) out.push(pick(r, specials));
    else if (k < 0.97) out.push(pick(r, doses));
    else out.push(pick(r, meds) + pick(r, ['.', ',', ';', '!', '?', ':', '…', '—', '«', '»', '"', '\'s']));
  }
  let s = '';
  for (let i = 0; i < out.length; i++) s += (i ? (r() < 0.9 ? ' ' : pick(r, spaces)) : '') + out[i];
  return s;
}

// Code points drawn from assorted blocks, including unassigned and private-use ones, but
// never surrogates (Go strings cannot hold them and HF never sees them).
const soupRanges = [[0x20, 0x7e], [0xa0, 0x24f], [0x300, 0x36f], [0x370, 0x3ff], [0x400, 0x4ff],
  [0x590, 0x6ff], [0x900, 0x97f], [0xe00, 0xe7f], [0x1100, 0x11ff], [0x1e00, 0x1eff], [0x2000, 0x206f],
  [0x20a0, 0x20cf], [0x2100, 0x22ff], [0x2e00, 0x2e7f], [0x3000, 0x30ff], [0x4e00, 0x9fff],
  [0xac00, 0xd7a3], [0xe000, 0xe0ff], [0xf900, 0xfaff], [0xfb00, 0xfb4f], [0xfe00, 0xfe6f],
  [0xff00, 0xffef], [0xfff0, 0xffff], [0x10000, 0x1007f], [0x1d100, 0x1d1ff], [0x1f300, 0x1faff],
  [0x20000, 0x2a6df], [0x2b740, 0x2b81f], [0x2b820, 0x2b92f], [0x2ceb0, 0x2ebe0], [0x30000, 0x3134a],
  [0xe0000, 0xe007f], [0xf0000, 0xf00ff], [0x16ea0, 0x16edf], [0x10d40, 0x10d8f], [0xa7c0, 0xa7df]];

function soup(r, n) {
  let s = '';
  for (let i = 0; i < n; i++) {
    const [lo, hi] = pick(r, soupRanges);
    s += String.fromCodePoint(lo + Math.floor(r() * (hi - lo + 1)));
    if (r() < 0.2) s += ' ';
  }
  return s;
}

function fixedTexts() {
  const t = ['', ' ', '   ', '\t\n\r ', '\u00a0\u3000\u2009', '\u200b\u200b', '\u0000', '\ufffd',
    'see [CLS] here', '[CLS]', '[CLS][SEP]', 'x[CLS]y', '[[CLS]]', '[cls] lower', '[UNK] token [UNK]',
    '[PAD][PAD] [MASK]', ' [SEP] ', '[SEP', 'José', 'Jos\u0065\u0301', 'İstanbul İİ', 'ΟΔΟΣ σοφός',
    'Straße ẞ', 'ǅemal ǈ ǋ', 'ﬁne ﬂow ﬃ', 'ⅷ Ⅻ', '①②③', 'x²+y³', '½ ¼ ¾', '°C µg Ω Å K',
    'a'.repeat(100), 'b'.repeat(101), 'é'.repeat(101), 'ab'.repeat(60) + ' short', '😀'.repeat(120),
    'supercalifragilisticexpialidocious'.repeat(4), 'hello...world!!!', '(a)[b]{c}<d>', '$100 & 50% #1 @home ^_^ ~x~ `q` |p| \\n',
    '¿Qué? ¡Sí!', '«citation» „Zitat“ ‘single’', 'em—dash en–dash', '…', '٪ ٫ ۔', '、。・',
    '👨‍👩‍👧‍👦', '👍🏽👍🏿', '🏳️‍🌈', 'a\u200db', 'a\u00adb', 'tab\there', 'new\nline', 'crlf\r\nline',
    'nbsp\u00a0here', 'ideo\u3000space', 'zero\u200bwidth', 'bom\ufeffhere', 'bell\u0007x', 'del\u007fx',
    'nel\u0085x', 'vt\u000bx ff\u000cx', 'ls\u2028ps\u2029x', 'pua\ue000x \udb80\udc00', '中文abc中文',
    '中', 'ab中', '中ab', 'a 中 b', '𠀀', 'ㄅㄆ', '가각', 'ｶﾀｶﾅ', 'Ａｂｃ', '\u0301', '\u0301\u0301a', 'a\u0301\u0316',
    'e\u0301\u0301\u0301', '\ud834\udd5e\ud834\udd65', 'ꦲꦏ꧀ꦱꦫ', 'ᬅᬓ᭄ᬱᬭ', 'A\u0345\u0300', 'Ɑ ɑ Ᵽ ᵽ',
    '\u1c89\u1c8a \ua7cb \ua7dc \ud81b\udea0 \ud803\udd50', '\u0130\u0307', 'K\u212a', 'ΐ ΰ',
    'Hello, World!', 'HELLO world', 'don\'t won\'t I\'m', 'e.g. i.e. etc.', 'U.S.A.', '3.14159', '1,000,000',
    '2024-03-05T12:30:00Z', 'user@example.com', 'https://example.org/path?q=1&r=2#frag', 'C:\\Users\\x',
    '### heading', '*bold* _it_', '"quoted"', '\'single\'', 'a-b-c', 'a_b_c', 'a/b/c', 'a|b|c'];
  for (const s of specials) t.push(s, 'a' + s + 'b', ' ' + s + ' ', s + s);
  // Added tokens of tiny.json (single_word, lstrip/rstrip, normalized) in and out of words.
  t.push('<med> aspirin', 'a<med>b', 'x <med>', '<med>', '<MED> caps', '<med>\t<med>', '(<med>)', '_<med>',
    'New York', 'new york city', 'NEW YORK', 'in New York  now', 'New York\u00a0\u3000x', 'NewYork',
    '<mask>', 'a <mask> b', 'a  <mask>  b', 'a\t<mask>\nb', '<MASK>', '[MASK]', ' [MASK]x', 'a  [MASK]  b',
    '<mask><mask>', 'New York<mask>New York', '[CLS]中', '中[SEP]中', 'İ<med>İ', 'Jose\u0301<mask>');
  // New York and the tiny added tokens inside generated sentences too.
  for (const w of ['New York', '<med>', '<mask>', '[MASK]']) t.push(`Patient moved to ${w} in 2020, ${w}.`);
  return t;
}

function makeTexts(seed, count) {
  const r = rng(seed);
  const out = fixedTexts();
  while (out.length < count) {
    const k = r();
    if (k < 0.35) out.push(pick(r, templates)(r));
    else if (k < 0.7) out.push(randomWords(r, 3 + Math.floor(r() * 30)));
    else if (k < 0.8) out.push(soup(r, 1 + Math.floor(r() * 40)));
    else if (k < 0.85) out.push(pick(r, names) + ' ' + pick(r, templates)(r) + ' ' + pick(r, emoji));
    else if (k < 0.9) {
      // Long words: past max_input_chars_per_word and around it.
      const base = pick(r, words) + pick(r, names).replace(/\s/g, '');
      let w = '';
      while (w.length < 90 + Math.floor(r() * 30)) w += base;
      out.push('before ' + w + ' after');
    } else if (k < 0.95) out.push(pick(r, templates)(r) + pick(r, controls) + pick(r, spaces) + pick(r, templates)(r));
    else out.push(randomWords(r, 60 + Math.floor(r() * 80)));
  }
  return out;
}

// bpeTexts adds what byte-level BPE tokenizers treat specially and the WordPiece texts above
// rarely hold: their special tokens typed in the text (with the spaces lstrip and the prefix
// space act on), runs of spaces and other whitespace (the split regex keeps a run's last
// space for the next word), contractions, digits, the byte-level alphabet typed literally,
// sequences that NFC composes or reorders, and words long enough for thousands of merges.
// makeTexts is left as it was, so the WordPiece golden files do not change.
const bpeSpecials = ['<s>', '</s>', '<pad>', '<unk>', '<mask>', '<|endoftext|>', '<|padding|>', '[MASK]', '[CLS]',
  '[SEP]', '[PAD]', '[UNK]', '<sep>', '|||IP_ADDRESS|||', '|||EMAIL_ADDRESS|||', '[unused0]', '<MASK>', '< mask>',
  '<s', 's>', '<<s>>', '</s></s>'];
const bpeSpaces = [' ', '  ', '   ', '    ', '\t', '\n', '\n\n', '\r\n', ' \n', '\t ', '\u00a0', ' \u00a0 ', '\u3000',
  '\u2009', '\u2028', '\u0085', '\u000b', '\u000c', '\u001c', '\u001f', '\u180e', '\u200b', '\u2003 ', '        '];
const contractions = ['I\'m', 'don\'t', 'we\'ll', 'you\'ve', 'they\'re', 'she\'d', 'it\'s', 'IT\'S', '\'s\'', '\'\'',
  '\'', '\'re\'', 'x\'d\'', 'rock\'n\'roll', 'it’s', ' \'s', 'a \'s', '\'S \'T \'RE', '\'ll\'ll', 'O\'Brien\'s'];
const numbers = ['123', '1,234.56', '١٢٣', '½', 'Ⅻ', 'x²', '٣٤ ٥', '𝟙𝟚', '12abc', 'abc12', '3rd', '0x1F', '2024-03-05',
  '+1 (555) 012-3456', '98.6°F', '10⁻³', '①②'];
const literalBytes = ['Ġ', 'Ċ', 'ĠĠ', 'Ã©', 'âĢĻ', 'ðŁĺĢ', 'Ġthe', 'ĉ', 'Ń', 'ł'];
const composing = ['e\u0301', 'a\u0316\u0301', 'e\u0301\u0301', '\u1100\u1161\u11a8', '\u1100\u1161', '\uac00\u11a8',
  '\u212b', '\u2126', '\u0344', '\u0958', '\u0f73', 'A\u030a\u0301', '\u00c5\u0301', 'o\u0328\u0304', 'ǭ', 'ṩ',
  's\u0307\u0323', 'ﬁ', 'ḱ', 'ẛ\u0323', '\u0915\u093c', '\u09c7\u09be', '\u0b47\u0b3e', 'José\u0301',
  'Jos\u0065\u0301 Mu\u0308ller', 'a\u0301\u0316\u0300', 'u\u0308\u0301', '\u0061\u0328\u0301', 'Å\u0323',
  '\u05d1\u05bc\u05bf', '\u0041\u0301\u0328', '\u1e0b\u0323', 'q\u0307\u0323', '\u0301e', '\u1161\u1100',
  '\u11a8\uac00', '\u1100\u1100\u1161', 'Ω\u0301', '\u0300\u0300\u0300', '가\u0301', '\u00e9\u0300'];
const longWords = ['a'.repeat(300), 'ab'.repeat(200), ' '.repeat(100), '😀'.repeat(60), '漢'.repeat(50),
  'supercalifragilisticexpialidocious'.repeat(10), 'x😀y'.repeat(30), '\t'.repeat(40), '1'.repeat(120),
  '!?'.repeat(80), 'é'.repeat(150), 'e\u0301'.repeat(60)];

function bpeFixed() {
  const t = [];
  for (const s of bpeSpecials) {
    t.push(s, 'a' + s + 'b', ' ' + s + ' ', s + s, 'x  ' + s + '  y', '\t' + s + '\n', 'Hello' + s, s + ' world',
      '   ' + s, s + '   ', 'é' + s + '中');
  }
  for (let n = 1; n <= 30; n++) t.push(' '.repeat(n), 'x' + ' '.repeat(n) + 'y', ' '.repeat(n) + 'z');
  for (const w of bpeSpaces) t.push(w, 'a' + w + 'b', w + 'lead', 'trail' + w, w + w + 'x', 'x ' + w + ' y');
  t.push('Hello world', ' Hello', '  Hello', 'Hello  ', 'Hello world!', 'hello\nworld\n', 'a\r\nb', '\r', 'a \u00a0b');
  for (const c of contractions) t.push(c, 'He said ' + c + ' twice', c + c);
  for (const n of numbers) t.push(n, 'dose ' + n + ' mg');
  for (const b of literalBytes) t.push(b, 'x' + b + 'y', ' ' + b);
  for (const c of composing) t.push(c, 'x' + c, c + ' y', ' ' + c + c);
  for (const w of longWords) t.push(w, 'before ' + w + ' after');
  return t;
}

function bpeTexts(seed, count) {
  const r = rng(seed);
  const out = bpeFixed();
  const parts = [() => pick(r, words), () => pick(r, names), () => pick(r, bpeSpecials), () => pick(r, emoji),
    () => pick(r, cjk), () => pick(r, combining), () => pick(r, composing), () => pick(r, contractions),
    () => pick(r, numbers), () => pick(r, literalBytes), () => pick(r, controls) + pick(r, words), () => pick(r, doses)];
  while (out.length < count) {
    const k = r();
    if (k < 0.25) {
      out.push(pick(r, templates)(r));
      continue;
    }
    if (k < 0.3) {
      out.push(soup(r, 1 + Math.floor(r() * 60)));
      continue;
    }
    const n = 2 + Math.floor(r() * (k < 0.9 ? 20 : 90));
    let s = r() < 0.2 ? pick(r, bpeSpaces) : '';
    for (let i = 0; i < n; i++) {
      s += (i ? (r() < 0.7 ? ' ' : pick(r, bpeSpaces)) : '') + pick(r, parts)();
    }
    if (r() < 0.2) s += pick(r, bpeSpaces);
    out.push(s);
  }
  return out;
}

module.exports = { makeTexts, bpeTexts, rng, pick };

// spmTexts adds what the SentencePiece families treat specially: characters SentencePiece's
// nmt_nfkc rules rewrite (compatibility forms, full-width and half-width letters, ligatures,
// circled numbers, fractions), rules that delete characters (controls, at the start of a text
// too, where HF loses the deletion and shifts offsets), clusters shorter than 6 bytes that
// start with a rewritten character (HF rewrites the whole cluster from its first character's
// rule), "\r\n" as one cluster, spaces of every kind in runs (Strip, Replace " {2,}", the
// Metaspace "▁"), "▁" and "<0x41>" typed literally, and the special tokens of the DeBERTa-v3,
// XLM-R and Llama layouts. makeTexts and bpeTexts are left as they were.
const spmSpecials = ['[CLS]', '[SEP]', '[PAD]', '[UNK]', '[MASK]', '<s>', '</s>', '<pad>', '<unk>', '<mask>', '[mask]',
  '<s', '</s', '<<s>>', '[MASK][MASK]', '< mask >'];
const spmRewrites = ['Ａ', 'ａ\u0301', 'Ａ\u0301', 'Ａ\u0300\u0301', 'ｶﾞ', 'ﾊﾟﾋﾟ', 'ｶ\u3099', '①', '⑳', '㈱', '㎏', '㎞', '℃', '™', 'ﬁ',
  'ﬀ\u0301', 'ﬃ', '½', '⅞', 'Ⅻ', 'ⅻ', '²', '₃', 'ℌ', '𝐀𝐁', '𝟗', 'ǅ', 'ǆ\u0301', 'ĳ', 'ŉ', '…', '‥', '⁇', '‼\u0301',
  '︰', '﹏', '＂', '＇', '｀', '～', '￥', '￦', '\u3000', '\u00a0', '\u2002', '\u200b', '\u200c', '\u200d', '\u2060',
  '\ufeff', '\u00ad', '\u0001', '\u0008', '\u001f', '\u007f', '\u0085', '\u0080', '\u009f', '\ufffc', '\ufffd',
  'e\u0301', 'E\u0301\u0301', 'a\u0308', 'o\u0303\u0304', '\u1100\u1161', '\u1100\u1161\u11a8', '\u3131\u314f',
  'ㄱ', 'ᄀ', '가\u0301', '中\u0301', 'ﾟ', '゙', '\u3099', '\u0300', '\u0308\u0301', 'i\u0307', 'İ', 'ß', 'ẞ', 'ς', 'ﬅ',
  '\r\n', '\r', '\n', '\t', '\u000b', '\u000c', '\u001c', '\u2028', '\u2029', '\u180e', '\u3164', '\uffa0', '▁', '▁▁',
  '<0x41>', '<0xE4>', '``', "''", '\'\'quoted\'\'', '``quoted\'\'', 'Ⓐ', '🅰', '🄰', '⒜', '⑴', '⒈', '㋐', '㍿', 'ℓ',
  'µ', 'Ω', 'Å', 'K', '\u0344', '\u0958', 'ﷺ', 'ﷻ', 'ﻼ', 'ﺁ', 'ﭐ', 'ー', 'ｰ', '〜', '・', '･', '｡', '､', '「」', '｢｣'];
const spmSpaces = [' ', '  ', '   ', '\t', '\n', '\r\n', '\u00a0', '\u3000', '\u2009', ' \u00a0 ', '\t\t', '  \n  ',
  '\u200b', '\u2003\u2003', '\u0085', '\u000c'];

function spmFixed() {
  const t = ['', ' ', '  ', '\t', '\u3000', '\u0001', '\u0001\u0001ab', '\u0001ab', 'ab\u0001', 'a\u0001b', '\u200bab',
    '\ufeffab', 'x\ufb01\u0001y', 'a \u0001 b', '▁', '▁a', 'a▁', 'a ▁ b', '▁▁x', ' ▁', '<0x41><0xE4>', 'Hello world',
    ' Hello', 'Hello ', '  Hello  world  ', 'Hello\u3000world', 'Hello\u00a0\u00a0world'];
  for (const w of spmRewrites) t.push(w, 'x' + w, w + 'y', 'x' + w + 'y', ' ' + w, w + ' ', w + w, 'a ' + w + ' b', '\u0001' + w);
  for (const s of spmSpecials) {
    t.push(s, 'a' + s + 'b', ' ' + s + ' ', s + s, 'x  ' + s + '  y', '\t' + s + '\n', s + ' world', 'Ａ' + s + 'Ａ',
      '\u0001' + s, s + '\u0001', '  ' + s, s + '  ');
  }
  for (const w of spmSpaces) t.push(w, 'a' + w + 'b', w + 'lead', 'trail' + w, w + w + 'x', 'x' + w + '\u0001' + w + 'y');
  return t;
}

function spmTexts(seed, count) {
  const r = rng(seed);
  const out = spmFixed();
  const parts = [() => pick(r, words), () => pick(r, names), () => pick(r, spmSpecials), () => pick(r, emoji),
    () => pick(r, cjk), () => pick(r, combining), () => pick(r, spmRewrites), () => pick(r, spmRewrites) + pick(r, words),
    () => pick(r, numbers), () => pick(r, controls) + pick(r, words), () => pick(r, doses), () => pick(r, composing)];
  while (out.length < count) {
    const k = r();
    if (k < 0.2) {
      out.push(pick(r, templates)(r));
      continue;
    }
    if (k < 0.3) {
      out.push(soup(r, 1 + Math.floor(r() * 60)));
      continue;
    }
    const n = 2 + Math.floor(r() * (k < 0.9 ? 20 : 120));
    let s = r() < 0.2 ? pick(r, spmSpaces) : '';
    for (let i = 0; i < n; i++) {
      s += (i ? (r() < 0.6 ? ' ' : pick(r, spmSpaces)) : '') + pick(r, parts)();
    }
    if (r() < 0.2) s += pick(r, spmSpaces);
    out.push(s);
  }
  return out;
}

module.exports.spmTexts = spmTexts;
