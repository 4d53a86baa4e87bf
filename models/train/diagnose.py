"""Diagnostics of an exported NER model, behind the recipe's last choices.

Usage: /usr/bin/python3 models/train/diagnose.py DIR pii|clinical-ner crossings|context-words|errors|editions
       [--docs N] [--examples K]

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


COMMANDS = {"crossings": crossings, "context-words": context_words, "errors": errors, "editions": editions}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("name", choices=sorted(train_ner.SETTINGS))
    ap.add_argument("what", choices=list(COMMANDS))
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--examples", type=int, default=5, help="errors: examples shown of each kind")
    args = ap.parse_args()
    COMMANDS[args.what](args)


if __name__ == "__main__":
    main()
