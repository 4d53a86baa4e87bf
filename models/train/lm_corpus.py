"""Clinical sentences for the tiny causal LM: short narrative passages built
from the same split templates and word lists as the NER corpus, without noise,
so held-out perplexity is measured on unseen sentence shapes and words.
"""

import common
import corpus

LM_POOLS = ["NARRATIVE", "NARRATIVE", "NARRATIVE", "LETTER", "ADMIN"]


def passage(gen, n):
    b = corpus.Builder()
    for i in range(n):
        if i > 0:
            b.add(" ")
        pool = gen.rng.choice(LM_POOLS)
        gen.render(gen.rng.choice(gen.pools[pool]), b)
    return b.build()[0]


def sentences(split, count, seed):
    gen = corpus.Corpus(split, seed=seed, noise=False, pseudo_p=corpus.BASE_PSEUDO_P, novel_p=0,
                        editions=common.VOCAB_EDITIONS)
    return [passage(gen, gen.rng.randint(1, 4)) for _ in range(count)]
