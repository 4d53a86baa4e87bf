"""Builds the shared cased WordPiece vocabulary (config.VOCAB) from the TRAIN split only and
writes tokenizer.json for pii (with the [CLS] $A [SEP] template) and tiny-lm (without a
post-processor). clinical-ner's tokenizer.json is this vocabulary with whole-word entries
after it; train_ner.py writes it (wordvec.py).

Usage: /usr/bin/python3 models/train/build_tokenizer.py
"""

import json
import os
import time

import common
import config
import corpus
import lm_corpus
import wordpiece


def corpus_texts(cfg=config.VOCAB):
    """The texts the vocabulary is counted from: train documents, then half as many
    tiny-lm passages."""
    gen = corpus.Corpus("train", seed=cfg.seed, editions=cfg.editions, augment=cfg.augment)
    texts = [gen.doc()[0] for _ in range(cfg.docs)]
    return texts + lm_corpus.sentences("train", cfg.docs // 2, cfg.seed, cfg)


def main():
    cfg = config.VOCAB
    common.setup(cfg.seed)
    t0 = time.time()
    counts = wordpiece.word_counts(corpus_texts(cfg))
    vocab = wordpiece.train_vocab(counts, cfg.size, common.base_alphabet())
    tok = wordpiece.Tokenizer(vocab)
    for name, template in (("pii", True), ("tiny-lm", False)):
        d = os.path.join(common.MODELS, name)
        os.makedirs(d, exist_ok=True)
        tok.save(os.path.join(d, "tokenizer.json"), template=template)
    with open(os.path.join(common.OUT, "vocab.json"), "w") as f:
        json.dump({"size": len(vocab), "word_types": len(counts), "seconds": round(time.time() - t0, 1)}, f)
    print(f"vocab {len(vocab)} tokens from {len(counts)} word types in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
