"""The corpus's raw material, read from data/, and its fixed train / held-out splits.

data/words/N/SLOT.txt holds edition N of a word list, one entry per line; SLOT is the
template slot it fills ({FIRST}, {COND}, ...). data/templates/N/POOL.txt holds edition N of
a template pool, one template per line (the syntax is in README.md). Editions are the
batches the data was written in. Each edition is split on its own, so an entry or template
added later never moves an earlier one from one side to the other, and the first editions'
held-out parts stay what the first models were measured on.
"""

import os
import random

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

# Closed classes (PO, BID, mg, Street...): every user expects the common forms, so a held-out
# part would only remove them from training. Both sides get all of them; the cards say so.
CLOSED = ("STREET_TYPE", "UNIT", "HOSP_TAIL", "ROUTE", "FREQ")
WORD_SEED = 1234
WORD_HELDOUT = 0.25
TEMPLATE_SEED = 777
TEMPLATE_HELDOUT = 0.3


def _lines(path):
    with open(path, encoding="utf-8") as f:
        return [line for line in f.read().splitlines() if line.strip()]


def _editions(kind):
    """[{name: lines}], one dict per edition of data/KIND, in edition order."""
    root = os.path.join(DATA, kind)
    out = []
    for ed in sorted(os.listdir(root), key=int):
        d = os.path.join(root, ed)
        out.append({fn[:-len(".txt")]: _lines(os.path.join(d, fn)) for fn in sorted(os.listdir(d)) if fn.endswith(".txt")})
    return out


WORD_EDITIONS = [{k: [w.strip() for w in v] for k, v in ed.items()} for ed in _editions("words")]
# {pool: [edition 1's templates, edition 2's, ...]}, and every pool's templates in one list.
_TEMPLATES = _editions("templates")
TEMPLATE_EDITIONS = {name: [ed.get(name, []) for ed in _TEMPLATES] for name in sorted({n for ed in _TEMPLATES for n in ed})}
TEMPLATE_POOLS = {name: [t for ed in eds for t in ed] for name, eds in TEMPLATE_EDITIONS.items()}


def split(items, seed, heldout_share):
    """(train, held-out): a seeded, disjoint split of items, duplicates removed first."""
    uniq = sorted(set(items))
    rng = random.Random(seed)
    rng.shuffle(uniq)
    n_held = max(1, int(round(len(uniq) * heldout_share)))
    return uniq[n_held:], uniq[:n_held]


def word_splits(editions=None):
    """{"train": {slot: entries}, "heldout": {slot: entries}} from the first `editions`
    editions of the word lists (None: all). An entry of a later edition that an earlier one
    has in any casing is dropped, so no word sits on both sides."""
    eds = WORD_EDITIONS[:editions]
    out = {"train": {}, "heldout": {}}
    for i, name in enumerate(sorted(WORD_EDITIONS[0])):
        if name in CLOSED:
            every = sorted({w for ed in eds for w in ed.get(name, [])})
            out["train"][name], out["heldout"][name] = every, list(every)
            continue
        train, held, known = [], [], set()
        for e, ed in enumerate(eds):
            new = [w for w in ed.get(name, []) if w.lower() not in known]
            if not new:
                continue
            tr, ho = split(new, WORD_SEED + 100 * e + i, WORD_HELDOUT)
            train, held = train + tr, held + ho
            known |= {w.lower() for w in new}
        out["train"][name], out["heldout"][name] = train, held
    return out


def template_splits(editions=None):
    """{"train": {pool: templates}, "heldout": {pool: templates}} from the first `editions`
    editions of the templates (None: all)."""
    out = {"train": {}, "heldout": {}}
    for i, (name, eds) in enumerate(sorted(TEMPLATE_EDITIONS.items())):
        out["train"][name], out["heldout"][name] = [], []
        for e, pool in enumerate(eds[:editions]):
            if not pool:
                continue
            tr, ho = split_templates(pool, TEMPLATE_SEED + i + 100 * e)
            out["train"][name] += tr
            out["heldout"][name] += ho
    return out


def split_templates(pool, seed):
    """(train, held-out) templates of one edition of a pool: a seeded shuffle of the pool
    as written, cut at the held-out share."""
    rng = random.Random(seed)
    items = list(pool)
    rng.shuffle(items)
    n = max(1, int(round(len(items) * TEMPLATE_HELDOUT)))
    return items[n:], items[:n]
