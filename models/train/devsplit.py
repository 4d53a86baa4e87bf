"""A development split carved out of the train side, for choices that must not be made on
the held-out split (first used for a decoding bias: README.md, "A decoding bias chosen on a
development split, not taken").

Usage, in a scratch copy of the repository (training writes models/NAME and the goldens):
  /usr/bin/python3 models/train/devsplit.py train_ner.py clinical-ner --steps 5400
  /usr/bin/python3 models/train/devsplit.py diagnose.py models/clinical-ner clinical-ner decode-bias --docs 1500

It runs a recipe script (train_ner.py, diagnose.py or score.py, from models/train) with the
train side split once more: a fixed quarter of each open word list's train entries (grouped
by lower case, so no word sits on both sides) and 30 % of each pool's train templates become
the "heldout" side, the rest the train side. Closed classes (routes, frequencies, units)
stay on both sides, as in wordlists.split_all. Everything the recipe derives from the train
side follows: the word vectors are chosen from the reduced train entries, invented words
avoid the development words, and marks holding a development-only word stay unlabelled in
train templates. The held-out split is never read.
"""

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import corpus  # noqa: E402
import wordlists  # noqa: E402

WORD_SHARE = 0.25
TEMPLATE_SHARE = 0.3

_split_all = wordlists.split_all
_split_templates = corpus.split_templates


def split_all(seed=1234, editions=None):
    """wordlists.split_all with its train side as {"train", "heldout"}."""
    out = _split_all(seed, editions)
    train, dev = {}, {}
    for i, (name, items) in enumerate(sorted(out["train"].items())):
        if name in wordlists.CLOSED:
            train[name] = dev[name] = items
            continue
        groups = sorted({w.lower() for w in items})
        random.Random(99000 + i).shuffle(groups)
        held = set(groups[:max(1, int(round(len(groups) * WORD_SHARE)))])
        dev[name] = [w for w in items if w.lower() in held]
        train[name] = [w for w in items if w.lower() not in held]
    return {"train": train, "heldout": dev}


def split_templates(pool, seed, heldout_share=0.3):
    """corpus.split_templates's train part, split again."""
    train, _ = _split_templates(pool, seed, heldout_share)
    return _split_templates(train, seed + 50000, TEMPLATE_SHARE)


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("train_ner.py", "diagnose.py", "score.py"):
        raise SystemExit(__doc__)
    wordlists.split_all = split_all
    corpus.split_templates = split_templates
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    module = __import__(script[:-len(".py")])
    module.main()


if __name__ == "__main__":
    main()
