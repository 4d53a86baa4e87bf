"""Diagnostics of an exported NER model, behind the recipe's last choices.

Usage: /usr/bin/python3 models/train/diagnose.py DIR pii|clinical-ner COMMAND [--docs N] [--examples K]
       [--with DIR2]

  crossings      entity F1 on four crossings of words x templates: train or held-out words
                 in train or held-out templates. It tells how much of the gap to the
                 training figure each kind of unseen material costs.
  context-words  how often a context word (a word of no entity) gets an entity label, for
                 words that occur in train templates and for those that do not.
  errors         per label, what became of each held-out entity (found; missed; found with
                 other bounds; found with another type; overlapped only by another type's
                 entity) and how many predicted entities touch no entity at all (spurious),
                 with K examples of each kind in their context (synthetic text), on the
                 card's documents.
  editions       strict and lenient entity F1, overall and per label, on the held-out split
                 with the first edition's templates or all of them, crossed with the first
                 edition's held-out words or all of them: what the later editions' words and
                 templates each cost.
  decode-bias    strict F1 on the card's documents with a constant added to every entity
                 label's score and another to every transition that continues an entity
                 (both folded into config.json's CRF scores), over a grid. On the held-out
                 split the best cell is an upper bound, as the split itself chose it;
                 devsplit.py runs it on a development split instead.
  ensemble       strict and lenient F1 of DIR, of DIR2 (--with) and of the two averaged
                 (logits and CRF scores), on the card's documents.
  word-lists     per slot, the WordPiece pieces per word of train and held-out entries, and
                 how often a held-out entry's last word ends train entries of the same type,
                 of another type, or none: whether held-out words are cut up differently, and
                 how often the word lists themselves leave a term's type open.

DIR holds model.onnx, tokenizer.json and config.json (as score.py reads them).
"""

import argparse
import collections
import random
import re

import score
import train_ner


def crossings(args):
    import corpus
    task, seed, tok, names, model, trans = score.load(args.dir, args.name)
    train = corpus.Corpus("train", seed=1, invented=False)
    held = corpus.Corpus("heldout", seed=1)
    for wname, words in (("train words", train.words), ("held-out words", held.words)):
        for tname, pools in (("train templates", train.pools), ("held-out templates", held.pools)):
            # The card's documents (seed + 1), drawn from this mix of words and templates.
            gen = corpus.Corpus("heldout", seed=seed + 1)
            gen.words, gen.pools = words, pools
            m = train_ner.evaluate(model, tok, task, names, seed + 1, trans=trans, gen=gen, docs_n=args.docs)
            print(f"{args.name}: {wname} in {tname}: F1 {m['overall']['f1']:.3f}", flush=True)


def editions(args):
    import corpus
    import wordlists
    task, seed, tok, names, model, trans = score.load(args.dir, args.name)
    for tmpl in (1, None):
        for words in (1, None):
            # The card's documents (seed + 1), drawn from this mix of editions.
            gen = corpus.Corpus("heldout", seed=seed + 1, editions=tmpl)
            gen.words = wordlists.split_all(editions=words)["heldout"]
            m = train_ner.evaluate(model, tok, task, names, seed + 1, trans=trans, gen=gen, docs_n=args.docs)
            labels = " ".join(f"{lab} {v['f1']:.3f}" for lab, v in m["per_label"].items())
            print(f"{args.name}: templates of {'the first edition' if tmpl else 'all editions'}, held-out words of "
                  f"{'the first edition' if words else 'all editions'}: F1 {m['overall']['f1']:.3f} "
                  f"(lenient {m['lenient']['f1']:.3f}); {labels}", flush=True)


def context_words(args):
    import corpus
    import nets
    task, seed, tok, names, model, trans = score.load(args.dir, args.name)
    seen = {w.lower() for w in corpus.template_words(corpus.Corpus("train", seed=1).pools)}
    gen = corpus.Corpus("heldout", seed=seed + 7000)
    count, labelled = {"seen": 0, "unseen": 0}, {"seen": 0, "unseen": 0}
    for _ in range(args.docs):
        text, spans = gen.doc()
        ids, offs = tok.encode(text, specials=False)
        cont = [tok.vocab[i].startswith("##") for i in ids]
        for a, b in train_ner.cut_points(offs, spans, task, train_ner.MAX_TOKENS, cont):
            row = [tok.cls] + ids[a:b] + [tok.sep]
            path = train_ner.predict(model, tok, [row], [nets.gap_classes(offs[a:b], text)], trans)[0]
            first = {offs[a + i][0]: lab for i, lab in enumerate(path[1:-1])}
            lo, hi = offs[a][0], offs[b - 1][1]
            for w in re.finditer(r"[A-Za-z]+", text[lo:hi]):
                start = lo + w.start()
                if start not in first or any(s <= start < e for s, e, _, _ in spans):
                    continue
                kind = "seen" if w.group().lower() in seen else "unseen"
                count[kind] += 1
                labelled[kind] += first[start] != 0
    for kind in ("seen", "unseen"):
        print(f"{args.name}: context words {kind} in train templates: {count[kind]}, "
              f"labelled as entities {labelled[kind]} ({labelled[kind] / max(1, count[kind]):.1%})")


def errors(args):
    import corpus
    task, seed, tok, names, model, trans = score.load(args.dir, args.name)
    gen = corpus.Corpus("heldout", seed=seed + 1)  # the card's documents
    docs, preds, _ = train_ner.predicted_entities(model, tok, task, names, gen, args.docs, trans)
    counts, examples = collections.Counter(), collections.defaultdict(list)

    def note(kind, label, text, span, others):
        counts[(label, kind)] += 1
        if kind == "found":
            return
        a, b = span
        shown = (text[max(0, a - 40):a] + "[[" + text[a:b] + "]]" + text[b:b + 40]).replace("\n", " / ")
        examples[(label, kind)].append(shown + ("   <- " + "; ".join(others) if others else ""))

    for (text, spans), pred in zip(docs, preds):
        gold = {(a, b, lab) for a, b, t, lab in spans if t == task}
        for a, b, lab in gold:
            over = [p for p in pred if train_ner.overlaps(p, (a, b))]
            if (a, b, lab) in pred:
                kind = "found"
            elif any(p[:2] == (a, b) for p in over):
                kind = "type"
            elif any(p[2] == lab for p in over):
                kind = "bounds"
            elif over:
                kind = "overlapped"
            else:
                kind = "missed"
            note(kind, lab, text, (a, b), [f"{text[p[0]:p[1]]!r} {p[2]}" for p in over if p != (a, b, lab)])
        for a, b, lab in pred:
            if not any(train_ner.overlaps(g, (a, b)) for g in gold):
                note("spurious", lab, text, (a, b), [])
    kinds = ["found", "missed", "bounds", "type", "overlapped", "spurious"]
    labels = sorted({lab for lab, _ in counts})
    print(f"{args.name}, {args.docs} held-out documents. Gold entities: found; missed; bounds (found "
          "with other bounds); type (same bounds, another type); overlapped (only by another type's "
          "entity). Spurious: predicted entities that touch no gold entity.")
    print(f"{'label':24s}" + "".join(f"{k:>11s}" for k in kinds))
    for lab in labels:
        print(f"{lab:24s}" + "".join(f"{counts[(lab, k)]:>11d}" for k in kinds))
    rng = random.Random(0)
    for (lab, kind), shown in sorted(examples.items()):
        if not args.examples:
            continue
        print(f"\n{lab} / {kind}:")
        for line in rng.sample(shown, min(args.examples, len(shown))):
            print("   ", line)


def biased(trans, entity, continuation):
    """The CRF scores [3, L, L] with entity added to every transition into an entity label
    (B-X or I-X) and continuation to every B-X or I-X -> I-X step across a space or between
    touching tokens (not across a line break, where entities never go on)."""
    import nets
    import numpy as np
    out = np.array(trans, dtype=np.float64)
    out[:, :, 1:] += entity
    for i in range(2, out.shape[1], 2):  # I-X is 2, 4, ...; B-X is the one before it
        out[nets.SPACED, i - 1:i + 1, i] += continuation
        out[nets.TOUCHING, i - 1:i + 1, i] += continuation
    return out


def decode_bias(args):
    import corpus
    import nets
    task, seed, tok, names, model, trans = score.load(args.dir, args.name)
    gen = corpus.Corpus("heldout", seed=seed + 1)  # the card's documents
    docs, items, gaps = train_ner.windows(tok, task, gen, args.docs)
    # Computed once: only the CRF scores change across the grid.
    emissions = [lg[1:-1].double().numpy() for lg in train_ner.row_logits(model, [it[1] for it in items])]
    gold = [{(a, b, lab) for a, b, t, lab in spans if t == task} for _, spans in docs]
    for entity in (-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5):
        for stick in (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5):
            scores = biased(trans, entity, stick)
            preds = [set() for _ in docs]
            for (d, ids, offs), em, gap in zip(items, emissions, gaps):
                path = [0] + nets.viterbi(em, gap, scores) + [0]
                for e in train_ner.bio_decode([names[x] for x in path], offs, docs[d][0], {0, len(ids) - 1}):
                    preds[d].add((e["start"], e["end"], e["label"]))
            tp = sum(len(g & q) for g, q in zip(gold, preds))
            p, r = tp / max(1, sum(map(len, preds))), tp / max(1, sum(map(len, gold)))
            f1 = 2 * p * r / (p + r) if p + r else 0.0
            print(f"{args.name}: entity bias {entity:+.2f}, continuation bias {stick:+.2f}: "
                  f"F1 {f1:.5f} (precision {p:.3f}, recall {r:.3f})", flush=True)


def ensemble(args):
    import torch
    if not args.with_dir:
        raise SystemExit("ensemble needs --with DIR2")
    task, seed, tok, names, first, trans = score.load(args.dir, args.name)
    second, trans2 = score.load(args.with_dir, args.name)[4:]

    class Average(torch.nn.Module):
        def forward(self, ids, mask):
            return (first(ids, mask) + second(ids, mask)) / 2

    for what, model, scores in ((args.dir, first, trans), (args.with_dir, second, trans2),
                                ("both averaged", Average(), (trans + trans2) / 2)):
        m = train_ner.evaluate(model, tok, task, names, seed + 1, trans=scores, docs_n=args.docs)
        print(f"{args.name}: {what}: F1 {m['overall']['f1']:.3f} (lenient {m['lenient']['f1']:.3f})", flush=True)


def word_lists(args):
    import os
    import statistics
    import corpus
    import wordlists
    import wordpiece
    tok = wordpiece.Tokenizer.load(os.path.join(args.dir, "tokenizer.json"))
    splits = wordlists.split_all()
    slots = [s for s, (task, _) in corpus.SLOT_LABEL.items()
             if task == train_ner.SETTINGS[args.name][0] and s in splits["train"]]
    ends = collections.defaultdict(collections.Counter)
    for s in slots:
        for entry in splits["train"][s]:
            ends[entry.split()[-1].lower()][s] += 1
    for s in slots:
        pieces = {}
        for split in ("train", "heldout"):
            words = [w for entry in splits[split][s] for w in entry.split()]
            pieces[split] = statistics.mean(len(tok.encode(w, specials=False)[0]) for w in words)
        held = splits["heldout"][s]
        kinds = collections.Counter()
        for entry in held:
            c = ends.get(entry.split()[-1].lower())
            kinds["none" if not c else "same" if c.most_common(1)[0][0] == s else "other"] += 1
        print(f"{args.name} {s}: pieces per word train {pieces['train']:.2f}, held-out {pieces['heldout']:.2f}; "
              f"held-out entries ({len(held)}) whose last word ends train entries of the same type "
              f"{kinds['same'] / len(held):.2f}, of another type {kinds['other'] / len(held):.2f}, "
              f"of none {kinds['none'] / len(held):.2f}")


COMMANDS = {"crossings": crossings, "context-words": context_words, "errors": errors, "editions": editions,
            "decode-bias": decode_bias, "ensemble": ensemble, "word-lists": word_lists}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("name", choices=sorted(train_ner.SETTINGS))
    ap.add_argument("what", choices=list(COMMANDS))
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--examples", type=int, default=5, help="errors: examples shown of each kind")
    ap.add_argument("--with", dest="with_dir", help="ensemble: the second model's directory")
    args = ap.parse_args()
    COMMANDS[args.what](args)


if __name__ == "__main__":
    main()
