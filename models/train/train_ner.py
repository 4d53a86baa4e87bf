"""Trains, evaluates and exports one token-classification model (config.NER).

Usage: /usr/bin/python3 models/train/train_ner.py pii|clinical-ner [--steps N]

Writes into models/<name>/: config.json, model.onnx, MODEL_CARD.md (ner_card.py) and, for a
model with word vectors, tokenizer.json (the others' come from build_tokenizer.py); and
models/testdata/golden/<name>.jsonl (and long.jsonl for the model that writes it). Every
figure in the card is measured here on the held-out split (held-out words in held-out
templates). A model with several members trains each in a process of its own (--member K).
"""

import argparse
import json
import os
import time

import common
import config

# Train under bfloat16 autocast (evaluation, goldens and export are float32) where the CPU
# multiplies bfloat16 in hardware; emulated, it is far slower than float32.
BF16 = common.native_bf16()


def new_model(cfg, tok, names, tables=None):
    """An untrained network of cfg's shape for this tokenizer and label set, over the
    word-vector tables (wordvec.Tables) when the vocabulary has them."""
    import nets
    cont = [v.startswith("##") for v in tok.vocab]
    shape = dict(hidden=cfg.hidden, kernel=cfg.kernel, dilations=cfg.dilations)
    if tables is not None:
        return nets.WordVecTagger(len(tok.vocab), len(names), tables, cont, **shape)
    return nets.ConvTagger(len(tok.vocab), len(names), continuation=cont, **shape)


def new_network(cfg, tok, names, tables):
    """new_model, or for a model with several members that many of them averaged
    (nets.Averaged)."""
    import nets
    if cfg.members == 1:
        return new_model(cfg, tok, names, tables)
    return nets.Averaged([new_model(cfg, tok, names, tables) for _ in range(cfg.members)])


def tokenizer_for(cfg):
    """(tokenizer, word-vector tables or None) for the model: its committed tokenizer.json,
    or for a model with word vectors the shared vocabulary extended by wordvec.build (written
    to its tokenizer.json, which is then this)."""
    import wordpiece
    path = os.path.join(common.MODELS, cfg.name, "tokenizer.json")
    if cfg.word_vectors is None:
        return wordpiece.Tokenizer.load(path), None
    import wordvec
    tok, tables = wordvec.build(wordpiece.Tokenizer.load(common.SHARED_TOKENIZER), cfg.word_vectors)
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


def make_training_set(cfg, tok, l2i):
    """Training windows as (ids, labels, gap classes) without [CLS]/[SEP], from
    cfg.train_docs documents of the train split."""
    import random

    import corpus
    import nets
    gen = corpus.Corpus("train", seed=cfg.seed, augment=cfg.augment)
    # Other cuts of words draw from random numbers of their own, so the documents do not
    # depend on them.
    cuts = (random.Random(cfg.seed + 7), cfg.segment_q) if cfg.segment_q else None
    limit = cfg.max_positions - 2  # and [CLS], [SEP]
    xs = []
    for _ in range(cfg.train_docs):
        text, spans = gen.doc()
        ids, offs = tok.encode(text, specials=False, sample=cuts)
        labs = token_labels(offs, spans, cfg.task, l2i, text)
        gaps = nets.gap_classes(offs, text)
        if len(ids) <= limit:
            xs.append((ids, labs, gaps))
            continue
        # Long documents: windows that start anywhere, as the server's will.
        start = 0
        while start < len(ids):
            end = min(start + limit, len(ids))
            xs.append((ids[start:end], labs[start:end], [nets.SPACED] + gaps[start + 1:end]))
            if end == len(ids):
                break
            # The server cuts windows between words; so do we.
            start = end - gen.rng.randint(0, 32)
            while start < end and tok.vocab[ids[start]].startswith("##"):
                start += 1
    return xs


def batches(xs, rng, tok, batch):
    """Endless batches; windows of similar length are batched together so
    little compute goes to padding."""
    import torch
    order = list(range(len(xs)))
    while True:
        rng.shuffle(order)
        groups = []
        for g in range(0, len(order), batch * 50):
            chunk = sorted(order[g:g + batch * 50], key=lambda j: len(xs[j][0]))
            groups += [chunk[i:i + batch] for i in range(0, len(chunk) - batch + 1, batch)]
        rng.shuffle(groups)
        for group in groups:
            chunk = [xs[j] for j in group]
            n = max(len(c[0]) for c in chunk) + 2
            ids = torch.zeros((batch, n), dtype=torch.long)
            mask = torch.zeros((batch, n), dtype=torch.long)
            labs = torch.full((batch, n), -100, dtype=torch.long)
            gaps = torch.zeros((batch, n), dtype=torch.long)
            for r, (a, y, t) in enumerate(chunk):
                row = [tok.cls] + a + [tok.sep]
                ids[r, :len(row)] = torch.tensor(row)
                mask[r, :len(row)] = 1
                labs[r, :len(row)] = torch.tensor([0] + y + [0])
                gaps[r, 1:len(row) - 1] = torch.tensor(t)
            yield ids, mask, labs, gaps


def bigram_scores(xs, n_labels, smooth):
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
    counts += smooth
    return np.log(counts / counts.sum(-1, keepdims=True))


def break_scores(spaced, bigram):
    """The CRF's BREAK matrix (a line break or tab between two tokens) from the trained
    spaced matrix and bigram_scores: the spaced scores, except that an entity going on
    across the break (B-X or I-X followed by I-X) scores at most the training windows'
    smoothed log-frequency of that. No entity of the corpus runs across a line break or a
    tab, so that is -8 to -11 after I-X; B-X hardly ever meets a break, and its row holds
    only the smoothing's log(1 / labels), no evidence that an entity goes on, hence never
    above the spaced score. It is not trained (the main loop scores BREAK gaps with the
    spaced matrix): trained, it learns where the train templates' lines start entities."""
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


def predicted_entities(cfg, model, tok, names, gen, docs_n, trans=None):
    """Draws docs_n documents from gen (a corpus.Corpus), cuts them into windows between words,
    and labels them: the Viterbi path under trans (the CRF scores) or, without it, each
    token's argmax. Returns the (text, spans) documents, a set of predicted (start, end,
    label) entities per document, and the number of windows."""
    docs, items, gaps = windows(tok, cfg.task, gen, docs_n, cfg.max_positions - 2)
    paths = predict(model, tok, [it[1] for it in items], gaps, trans)
    preds = [set() for _ in docs]
    for (d, ids, offs), p in zip(items, paths):
        for e in bio_decode([names[x] for x in p], offs, docs[d][0], {0, len(ids) - 1}):
            preds[d].add((e["start"], e["end"], e["label"]))
    return docs, preds, len(items)


def windows(tok, task, gen, docs_n, limit):
    """Draws docs_n (text, spans) documents from gen and cuts them into windows of at most
    limit tokens between words: the documents, the windows as (document index, ids,
    offsets), specials included, and each window's nets.gap_classes (specials excluded)."""
    import nets
    docs, items = [], []
    for _ in range(docs_n):
        text, spans = gen.doc()
        ids, offs = tok.encode(text, specials=False)
        docs.append((text, spans))
        cont = [tok.vocab[i].startswith("##") for i in ids]
        for a, b in cut_points(offs, spans, task, limit, cont):
            items.append((len(docs) - 1, [tok.cls] + ids[a:b] + [tok.sep], [(0, 0)] + offs[a:b] + [(0, 0)]))
    return docs, items, [nets.gap_classes(it[2][1:-1], docs[it[0]][0]) for it in items]


def overlaps(x, y):
    """Whether two (start, end, ...) spans share a character."""
    return x[0] < y[1] and y[0] < x[1]


def evaluate(cfg, model, tok, names, editions=None, trans=None):
    """Entity-level strict P/R/F1 (span and type) on the card's held-out documents
    (cfg.eval_docs of them, from the seed after the model's); editions=1 draws them from the
    first edition's held-out words and templates only. Labels are the Viterbi path under trans (the CRF
    scores) or, without it, each token's argmax. "lenient" is the overall P/R/F1 when an
    entity counts as found if one of the same type overlaps it (precision over predicted
    entities, recall over gold ones): what is left between it and the strict figure is
    entities found with other bounds."""
    import corpus
    task = cfg.task
    gen = corpus.Corpus("heldout", seed=cfg.seed + 1, editions=editions)
    docs, preds, windows = predicted_entities(cfg, model, tok, names, gen, cfg.eval_docs, trans)
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


def export(model, path, tok, compact=False):
    """model.onnx, opset 14; with compact, the token embeddings and convolutions stored as
    int8 (quantize_initializers) and the other large float initializers as float16
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
    if compact:
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


def goldens(cfg, model, tok, names, trans):
    """30 held-out texts that fit in one window, with torch's argmax labels (what ONNX
    Runtime's logits must reproduce) and the Viterbi path under the CRF scores trans
    (what the server's decoder must reproduce), and the entities of that path."""
    import corpus
    import nets
    import torch
    name = cfg.name
    gen = corpus.Corpus("heldout", seed=cfg.seed + 5000)
    rows, want_emoji, want_accent = [], 2, 8
    torch_logits = []
    styles = ["message", "header", "progress", "lab", "lists", "admin", "letter", "narrative", "discharge"]
    # A style whose documents seldom fit (discharge summaries) is skipped after 200 tries.
    tries, skip = 0, 0
    while len(rows) < 30 and tries < 20000:
        tries += 1
        if tries % 200 == 0:
            skip += 1
        text, spans = gen.doc(styles[(len(rows) + skip) % len(styles)])
        if want_emoji > 0 and len(rows) % 15 == 3:
            text = text + gen.rng.choice([" 🙏", " 😢", " 👍🏽 thanks"])
        ids, offs = tok.encode(text)
        if len(ids) > cfg.max_positions or len(ids) < 8:
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
        raise SystemExit(f"{name}: only {len(rows)} golden texts fit in {cfg.max_positions} tokens")
    with open(os.path.join(common.GOLDEN, f"{name}.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    # For check_onnx.js: torch logits of the goldens, to bound the ONNX difference.
    with open(os.path.join(common.OUT, f"{name}.golden_logits.json"), "w") as f:
        json.dump(torch_logits, f)
    return rows


def long_docs(tok, seed):
    """long.jsonl: 5 held-out documents of 300 to 600 tokens, for the server's windowing."""
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


def train_network(cfg, tok, tables, names, xs, steps, member=0):
    """Trains one network and its CRF on the training windows xs; returns the network, the
    CRF scores (numpy [3, L, L], rounded as config.json stores them) and the loop's seconds.
    Member 0 draws the initialisation and batch order from the run's seeds as they stand;
    member k from seed + 1000 k."""
    import random

    import numpy as np
    import torch

    import nets
    name, seed = cfg.name, cfg.seed
    if member:
        torch.manual_seed(seed + 1000 * member)
    model = new_model(cfg, tok, names, tables)
    bigram = bigram_scores(xs, len(names), cfg.trans_smooth)
    # The network trains with the spaced and touching matrices; the BREAK one comes after
    # (break_scores).
    crf = nets.Transitions(len(names), bigram[:2])
    opt = torch.optim.AdamW([{"params": model.parameters()},
                             {"params": crf.parameters(), "lr": cfg.lr * cfg.trans_lr_scale, "weight_decay": 0.0}],
                            lr=cfg.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / cfg.warmup) * max(0.0, 1 - s / steps))
    rng = random.Random(seed + 1000 * member)
    gen = batches(xs, rng, tok, cfg.batch)
    lossf = torch.nn.CrossEntropyLoss(ignore_index=-100)
    model.train()
    t1 = time.time()
    for step in range(steps):
        ids, mask, labs, gaps = next(gen)
        if cfg.unk_drop:
            # Hidden tokens (ids above the specials): entity tokens with ent_unk, others with unk_drop.
            p = torch.where(labs > 0, torch.full(ids.shape, cfg.ent_unk), torch.full(ids.shape, cfg.unk_drop))
            drop = (torch.rand(ids.shape) < p) & (ids > 4)
            ids = ids.masked_fill(drop, tok.unk)
        piece_drop = cfg.word_vectors.piece_drop if tables is not None else 0
        sub = torch.rand(ids.shape) < piece_drop if piece_drop else None
        # The network's matrix products in bfloat16; weights, optimizer and the CRF stay float32.
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


def train_member(cfg, steps, member):
    """One member of an averaged model, in a process of its own with one torch thread: the
    training windows (the run's, from its seed), the network, and its weights, CRF scores
    and times under out/."""
    import numpy as np
    import torch
    name = cfg.name
    common.setup(cfg.seed, torch_threads=1)
    tok, tables = tokenizer_for(cfg)
    names = label_names(cfg.task)
    l2i = {n: i for i, n in enumerate(names)}
    t0 = time.time()
    xs = make_training_set(cfg, tok, l2i)
    prep_s = time.time() - t0
    print(f"{name} member {member}: {len(xs)} training windows, {sum(len(x[0]) for x in xs)} tokens, "
          f"prep {prep_s:.0f}s", flush=True)
    model, trans, train_s = train_network(cfg, tok, tables, names, xs, steps, member)
    torch.save(model.state_dict(), os.path.join(common.OUT, f"{name}.member{member}.pt"))
    np.save(os.path.join(common.OUT, f"{name}.member{member}.crf.npy"), trans)
    with open(os.path.join(common.OUT, f"{name}.member{member}.json"), "w") as f:
        json.dump({"prep_seconds": prep_s, "train_seconds": train_s, "threads": common.threads_line()}, f)


def train_members(cfg):
    """Trains cfg.members networks side by side, one process and one core each, and waits
    for them: the wall seconds, and each member's preparation and loop seconds. Each
    process builds the same training windows from the run's seed (that costs a core's
    time, not wall time), so nothing large passes between them."""
    import subprocess
    import sys
    name = cfg.name
    if cfg.word_vectors is not None:
        # Fetched once here, not by every member at once.
        import wordvec
        wordvec.fetch()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    t0 = time.time()
    # This process's own command line, so that a script that wraps this one wraps the members too.
    procs = [subprocess.Popen(sys.orig_argv + ["--member", str(k)], env=env) for k in range(cfg.members)]
    codes = [p.wait() for p in procs]
    if any(codes):
        raise SystemExit(f"{name}: member processes exited with {codes}")
    out = {"wall": time.time() - t0, "members": []}
    for k in range(cfg.members):
        with open(os.path.join(common.OUT, f"{name}.member{k}.json")) as f:
            out["members"].append(json.load(f))
    return out


def round_to_int8(model):
    """Rounds each token embedding (a row of tok.weight) and each convolution's output unit (a
    row of a ConvBlock's mix.weight) to 255 levels of one float16 step each, so that what is
    evaluated is what quantize_initializers stores."""
    import torch
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not (name.endswith("tok.weight") or name.endswith("mix.weight")):
                continue
            top = p.abs().amax(dim=1, keepdim=True)
            step = (top / 127).half().float()
            q = torch.where(step > 0, (p / step.clamp_min(1e-30)).round().clamp(-127, 127), torch.zeros_like(p))
            p.copy_(q * step)


def model_config(cfg, model, tok, names, trans):
    """config.json: HuggingFace's token-classification fields, and under "sluice" what the
    server needs beyond them (the CRF scores) and what describes the network."""
    compact = cfg.word_vectors is not None
    return {
        "architectures": ["SluiceConvTaggerForTokenClassification"],
        "model_type": "sluice_conv_tagger",
        "hidden_size": cfg.hidden,
        "num_hidden_layers": len(cfg.dilations),
        "max_position_embeddings": cfg.max_positions,
        "vocab_size": len(tok.vocab),
        "pad_token_id": tok.pad,
        "type_vocab_size": 0,
        "id2label": {str(i): n for i, n in enumerate(names)},
        "label2id": {n: i for i, n in enumerate(names)},
        # quantize: served with int8 products (SLUICE_QUANTIZE); a retrained model keeps it
        # only if `sluice check-model -quantize int8 -sample` on held-out texts (heldout_texts.py)
        # still agrees on 0.99 of the entities.
        "sluice": {"quantize": "int8", "pre_norm": True, "token_type_ids": False, "trained_by": "models/train/train_ner.py",
                   **({"weights": "float16, token embeddings and convolutions int8"} if compact else {}),
                   "encoder": model.cfg,
                   "crf_transitions": {k: [[round(float(v), 5) for v in row] for row in trans[i]]
                                       for i, k in enumerate(("spaced", "touching", "break"))}},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name", choices=sorted(config.NER))
    ap.add_argument("--steps", type=int, help="training steps (per member); default: the model's config")
    ap.add_argument("--member", type=int, help="train one member of an averaged model and exit")
    args = ap.parse_args()
    cfg = config.NER[args.name]
    name, task, seed = cfg.name, cfg.task, cfg.seed
    steps = args.steps or cfg.steps
    if args.member is not None:
        train_member(cfg, steps, args.member)
        return
    common.setup(seed)

    import numpy as np
    import torch

    import nets
    out_dir = os.path.join(common.MODELS, name)
    names = label_names(task)
    if cfg.members > 1:
        times = train_members(cfg)
        tok, tables = tokenizer_for(cfg)
        member_scores = [np.load(os.path.join(common.OUT, f"{name}.member{k}.crf.npy")) for k in range(cfg.members)]
        model = new_network(cfg, tok, names, tables)
        members = list(model.members)
        for k, m in enumerate(members):
            m.load_state_dict(torch.load(os.path.join(common.OUT, f"{name}.member{k}.pt")))
        # The mean of the members' CRF scores, rounded as config.json stores them.
        trans = np.mean(member_scores, axis=0).round(5)
        train_s = times["wall"]
    else:
        tok, tables = tokenizer_for(cfg)
        l2i = {n: i for i, n in enumerate(names)}
        t0 = time.time()
        xs = make_training_set(cfg, tok, l2i)
        print(f"{name}: {len(xs)} training windows, {sum(len(x[0]) for x in xs)} tokens, "
              f"prep {time.time() - t0:.0f}s", flush=True)
        model, trans, train_s = train_network(cfg, tok, tables, names, xs, steps)
        times = None
    # A vocabulary with word vectors would take the model directory past 10 MB in float32:
    # its weights are stored small, and rounded here first so that what is evaluated is
    # what is served.
    compact = cfg.word_vectors is not None
    if compact:
        round_to_half(model)
        round_to_int8(model)
    # Training ran ConvBlock's conv1d; evaluation, the goldens and the export run its matrix
    # product. Both must give the same numbers (also leaves the model in eval mode).
    probe = torch.randint(5, len(tok.vocab), (4, 60), generator=torch.Generator().manual_seed(seed))
    if not nets.same_paths(model, probe, torch.ones_like(probe)):
        raise SystemExit(f"{name}: the network's training and eval paths disagree")
    if cfg.members > 1:
        metrics_members = [evaluate(cfg, m, tok, names, trans=sc)["overall"] for m, sc in zip(members, member_scores)]
        for k, mm in enumerate(metrics_members):
            print(f"member {k} alone: {json.dumps(mm)}", flush=True)
    metrics = evaluate(cfg, model, tok, names, trans=trans)
    first = evaluate(cfg, model, tok, names, editions=1, trans=trans)
    metrics["first_edition"] = {k: first[k] for k in ("overall", "lenient", "documents", "windows")}
    # The split every model before the fourth template edition was measured on.
    three = evaluate(cfg, model, tok, names, editions=3, trans=trans)
    metrics["three_editions"] = {k: three[k] for k in ("overall", "lenient", "documents", "windows")}
    print("first three editions:", json.dumps(three["overall"]), flush=True)
    # The same network and CRF with the spaced matrix in place of the break one.
    no_break = trans.copy()
    no_break[nets.BREAK] = no_break[nets.SPACED]
    metrics["no_break"] = {"overall": evaluate(cfg, model, tok, names, trans=no_break)["overall"],
                           "first_edition": {"overall": evaluate(cfg, model, tok, names, editions=1,
                                                                 trans=no_break)["overall"]}}
    # The same network read token by token, as a client without the CRF would read it.
    alone = evaluate(cfg, model, tok, names)
    metrics["argmax"] = {k: alone[k] for k in ("overall",)}
    print("argmax alone:", json.dumps(alone["overall"]), flush=True)
    print(json.dumps(metrics["overall"]), flush=True)
    print("first edition:", json.dumps(first["overall"]), flush=True)
    for lab, m in metrics["per_label"].items():
        print(f"  {lab:24s} P {m['precision']:.3f} R {m['recall']:.3f} F1 {m['f1']:.3f} n {m['support']}")
    onnx_path = os.path.join(out_dir, "model.onnx")
    export(model, onnx_path, tok, compact=compact)
    model_cfg = model_config(cfg, model, tok, names, trans)
    write_config(os.path.join(out_dir, "config.json"), model_cfg)
    goldens(cfg, model, tok, names, rounded_scores(model_cfg))
    if cfg.long_goldens:
        long_docs(tok, seed + 9000)
    torch.save(model.state_dict(), os.path.join(common.OUT, f"{name}.pt"))
    np.save(os.path.join(common.OUT, f"{name}.crf.npy"), trans)
    if tables is not None:
        import wordvec
        metrics["word_vectors"] = wordvec.coverage(tok, tables, cfg.word_vectors)
    metrics.update(parameters=sum(p.numel() for p in model.parameters()),
                   onnx_bytes=os.path.getsize(onnx_path), vocab_size=len(tok.vocab), steps=steps,
                   seed=seed, train_seconds=train_s, bf16=BF16,
                   threads=times["members"][0]["threads"] if times else common.threads_line())
    if times:
        metrics["members"] = [dict(t, overall=mm) for t, mm in zip(times["members"], metrics_members)]
    with open(os.path.join(common.OUT, f"{name}.metrics.json"), "w") as f:
        json.dump(metrics, f, indent=2)
    import ner_card
    argv = f"/usr/bin/python3 models/train/train_ner.py {name} --steps {steps}"
    ner_card.write_card(cfg, names, model_cfg, metrics, argv)
    print(f"{name}: done, train {train_s:.0f}s, onnx {metrics['onnx_bytes']} bytes", flush=True)


if __name__ == "__main__":
    main()
