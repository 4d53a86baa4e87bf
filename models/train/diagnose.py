"""What became of each held-out entity under an exported NER model, per label: found, missed,
found with other bounds, found with another type, or overlapped only by another type's
entity; and the predicted entities that touch no gold one (spurious). K examples of each
kind are shown in their context (synthetic text). The documents are the card's.

Usage: /usr/bin/python3 models/train/diagnose.py DIR pii|clinical-ner errors [--docs N] [--examples K]
  DIR holds model.onnx, tokenizer.json and config.json (as score.py reads them).
"""

import argparse
import collections
import random

import config
import score
import train_ner


def errors(args):
    import corpus
    cfg, tok, names, model, trans = score.load(args.dir, args.name)
    task = cfg.task
    gen = corpus.Corpus("heldout", seed=cfg.seed + 1)  # the card's documents
    docs, preds, _ = train_ner.predicted_entities(cfg, model, tok, names, gen, args.docs, trans)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("name", choices=sorted(config.NER))
    ap.add_argument("what", choices=["errors"])
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--examples", type=int, default=5, help="examples shown of each kind")
    args = ap.parse_args()
    errors(args)


if __name__ == "__main__":
    main()
