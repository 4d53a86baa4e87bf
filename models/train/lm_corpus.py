"""Clinical passages for the tiny causal LM: short narrative passages built from the same
split templates and word lists as the NER corpus, without noise, so held-out perplexity is
measured on unseen sentence shapes and words.
"""

import corpus

# Pools a passage's sentences are drawn from, narrative three times as often.
LM_POOLS = ["NARRATIVE", "NARRATIVE", "NARRATIVE", "LETTER", "ADMIN"]


def passage(gen, n):
    b = corpus.Builder()
    for i in range(n):
        if i > 0:
            b.add(" ")
        pool = gen.rng.choice(LM_POOLS)
        gen.render(gen.rng.choice(gen.pools[pool]), b)
    return b.build()[0]


def sentences(split, count, seed, cfg):
    """count passages of one to four sentences from the split, drawn as cfg (config.Vocab or
    config.Lm: its editions and augment) says."""
    gen = corpus.Corpus(split, seed=seed, editions=cfg.editions, noise=False, augment=cfg.augment)
    return [passage(gen, gen.rng.randint(1, 4)) for _ in range(count)]
