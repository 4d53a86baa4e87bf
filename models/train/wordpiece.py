"""A cased WordPiece tokenizer that behaves like HuggingFace tokenizers.

It reproduces, on the same tokenizer.json, what the Rust implementation does
with BertNormalizer(clean_text, handle_chinese_chars, lowercase=False,
strip_accents=None), BertPreTokenizer, WordPiece("##", max 100 chars) and the
[CLS] $A [SEP] template, including offsets in code points into the original
text. check_tokenizer.js compares the two on real texts.

It also trains the vocabulary: BPE merges over word counts with "##" marking
word-internal pieces (what HF's WordPieceTrainer does), from the train split.
"""

import collections
import json
import unicodedata

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

# Rust's char::is_whitespace (Unicode White_Space).
_WHITE_SPACE = set(
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029,
     0x202F, 0x205F, 0x3000] + list(range(0x2000, 0x200B))
)

_CJK = [
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
]


def _is_whitespace(c):
    return c in "\t\n\r" or ord(c) in _WHITE_SPACE


def _is_control(c):
    if c in "\t\n\r":
        return False
    return unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn")


def _is_cjk(c):
    o = ord(c)
    return any(lo <= o <= hi for lo, hi in _CJK)


def _is_punct(c):
    o = ord(c)
    if o < 128:
        return (33 <= o <= 47) or (58 <= o <= 64) or (91 <= o <= 96) or (123 <= o <= 126)
    return unicodedata.category(c).startswith("P")


def normalize(text, base=0):
    """Returns [(char, original index)] after BertNormalizer."""
    out = []
    for i, c in enumerate(text):
        o = ord(c)
        if o == 0 or o == 0xFFFD or _is_control(c):
            continue
        if _is_whitespace(c):
            out.append((" ", base + i))
        elif _is_cjk(c):
            out.append((" ", base + i))
            out.append((c, base + i))
            out.append((" ", base + i))
        else:
            out.append((c, base + i))
    return out


def pre_tokenize(norm):
    """Splits normalized chars into words: whitespace drops, punctuation isolates."""
    words, cur = [], []
    for c, i in norm:
        if c == " ":
            if cur:
                words.append(cur)
                cur = []
        elif _is_punct(c):
            if cur:
                words.append(cur)
                cur = []
            words.append([(c, i)])
        else:
            cur.append((c, i))
    if cur:
        words.append(cur)
    return words


def train_vocab(word_counts, size, base_chars=""):
    """BPE over word counts with ## continuation pieces; returns a token list."""
    chars = set(base_chars)
    for w in word_counts:
        chars.update(w)
    alphabet = set()
    for c in chars:
        alphabet.add(c)
        alphabet.add("##" + c)
    vocab = list(SPECIALS) + sorted(alphabet)
    seen = set(vocab)
    words = []
    counts = []
    for w, n in word_counts.items():
        if len(w) > 100:
            continue
        words.append([w[0]] + ["##" + c for c in w[1:]])
        counts.append(n)
    pair_count = collections.Counter()
    where = collections.defaultdict(set)
    for wi, syms in enumerate(words):
        for a, b in zip(syms, syms[1:]):
            pair_count[(a, b)] += counts[wi]
            where[(a, b)].add(wi)
    while len(vocab) < size and pair_count:
        (a, b), n = max(pair_count.items(), key=lambda kv: (kv[1], kv[0]))
        if n < 2:
            break
        merged = a + b[2:]
        if merged not in seen:
            vocab.append(merged)
            seen.add(merged)
        for wi in list(where[(a, b)]):
            syms = words[wi]
            for x, y in zip(syms, syms[1:]):
                pair_count[(x, y)] -= counts[wi]
                if pair_count[(x, y)] <= 0:
                    del pair_count[(x, y)]
                where[(x, y)].discard(wi)
            out, i = [], 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            words[wi] = out
            for x, y in zip(out, out[1:]):
                pair_count[(x, y)] += counts[wi]
                where[(x, y)].add(wi)
        pair_count.pop((a, b), None)
    return vocab


class Tokenizer:
    """Encodes text to ids and code-point offsets as HF tokenizers would."""

    def __init__(self, vocab, add_specials=True):
        self.vocab = list(vocab)
        self.ids = {t: i for i, t in enumerate(self.vocab)}
        self.unk = self.ids["[UNK]"]
        self.cls = self.ids["[CLS]"]
        self.sep = self.ids["[SEP]"]
        self.pad = self.ids["[PAD]"]
        self.add_specials = add_specials
        self._cache = {}

    def _wordpiece(self, word, sample=None):
        s = "".join(c for c, _ in word)
        if sample:
            hit = self._sampled_pieces(s, *sample)
        else:
            hit = self._cache.get(s)
            if hit is None:
                hit = self._pieces(s)
                if len(self._cache) < 500000:
                    self._cache[s] = hit
        return [(tid, word[a][1], word[b - 1][1] + 1) for tid, a, b in hit]

    def _pieces(self, s):
        if len(s) > 100:
            return [(self.unk, 0, len(s))]
        out, start = [], 0
        while start < len(s):
            end = len(s)
            found = None
            while start < end:
                sub = s[start:end]
                if start > 0:
                    sub = "##" + sub
                tid = self.ids.get(sub)
                if tid is not None:
                    found = tid
                    break
                end -= 1
            if found is None:
                return [(self.unk, 0, len(s))]
            out.append((found, start, end))
            start = end
        return out

    def _split_specials(self, text):
        """Yields (is_special, piece, start); specials match the raw text first."""
        i, last = 0, 0
        while i < len(text):
            if text[i] == "[":
                for sp in SPECIALS:
                    if text.startswith(sp, i):
                        if last < i:
                            yield False, text[last:i], last
                        yield True, sp, i
                        i += len(sp)
                        last = i
                        break
                else:
                    i += 1
            else:
                i += 1
        if last < len(text):
            yield False, text[last:], last

    def _sampled_pieces(self, s, rng, q):
        """Another cut of s into pieces, for training only: at each piece, with chance q,
        a shorter piece than the longest that matches. A word the greedy cut cannot make
        keeps that cut ([UNK])."""
        if len(s) > 100:
            return self._pieces(s)
        out, start = [], 0
        while start < len(s):
            prefix = "##" if start > 0 else ""
            ends = [e for e in range(start + 1, len(s) + 1) if prefix + s[start:e] in self.ids]
            if not ends:
                return self._pieces(s)
            end = ends[-1]
            if len(ends) > 1 and rng.random() < q:
                end = rng.choice(ends[:-1])
            out.append((self.ids[prefix + s[start:end]], start, end))
            start = end
        return out

    def encode(self, text, specials=None, sample=None):
        """Returns (ids, offsets) with offsets [start, end) in code points. sample, an
        (rng, q) pair, cuts each word with _sampled_pieces() instead (training only)."""
        if specials is None:
            specials = self.add_specials
        ids, offs = [], []
        for is_sp, piece, base in self._split_specials(text):
            if is_sp:
                ids.append(self.ids[piece])
                offs.append((base, base + len(piece)))
                continue
            for word in pre_tokenize(normalize(piece, base)):
                for tid, a, b in self._wordpiece(word, sample):
                    ids.append(tid)
                    offs.append((a, b))
        if specials:
            ids = [self.cls] + ids + [self.sep]
            offs = [(0, 0)] + offs + [(0, 0)]
        return ids, offs

    def decode(self, ids):
        """WordPiece decoder with cleanup, as HF's decoder does it."""
        toks = [self.vocab[i] for i in ids if self.vocab[i] not in SPECIALS]
        out = ""
        for i, t in enumerate(toks):
            if t.startswith("##"):
                out += t[2:]
            else:
                out += (" " if i > 0 else "") + t
        # HF tokenizers 0.23.2's WordPiece cleanup only rejoins these four.
        for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ",")):
            out = out.replace(a, b)
        return out

    def to_json(self, template=True):
        """The tokenizer.json document, HF format."""
        added = [
            {"id": self.ids[t], "content": t, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
            for t in SPECIALS
        ]
        post = None
        if template:
            def sp(name, type_id):
                return {"SpecialToken": {"id": name, "type_id": type_id}}

            def seq(name, type_id):
                return {"Sequence": {"id": name, "type_id": type_id}}

            post = {
                "type": "TemplateProcessing",
                "single": [sp("[CLS]", 0), seq("A", 0), sp("[SEP]", 0)],
                "pair": [sp("[CLS]", 0), seq("A", 0), sp("[SEP]", 0), seq("B", 1), sp("[SEP]", 1)],
                "special_tokens": {
                    "[CLS]": {"id": "[CLS]", "ids": [self.cls], "tokens": ["[CLS]"]},
                    "[SEP]": {"id": "[SEP]", "ids": [self.sep], "tokens": ["[SEP]"]},
                },
            }
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": added,
            "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                           "strip_accents": None, "lowercase": False},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": post,
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
            "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                      "max_input_chars_per_word": 100,
                      "vocab": {t: i for i, t in enumerate(self.vocab)}},
        }

    def save(self, path, template=True, compact=False):
        """Writes tokenizer.json; compact leaves out the indentation (a vocabulary of whole
        words is a third smaller without it)."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(template), f, ensure_ascii=False, indent=None if compact else 1,
                      separators=(",", ":") if compact else None)
            f.write("\n")

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        vocab = sorted(doc["model"]["vocab"].items(), key=lambda kv: kv[1])
        return cls([t for t, _ in vocab], add_specials=doc.get("post_processor") is not None)


def word_counts(texts):
    """Counts pre-tokenized words over texts, for train_vocab."""
    c = collections.Counter()
    for t in texts:
        for w in pre_tokenize(normalize(t)):
            c["".join(ch for ch, _ in w)] += 1
    return c
