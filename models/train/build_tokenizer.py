"""Builds the shared cased WordPiece vocabulary from the TRAIN split only and
writes tokenizer.json for pii (with the [CLS] $A [SEP] template) and tiny-lm
(without a post-processor). clinical-ner's tokenizer.json is this vocabulary with
whole-word entries after it; train_ner.py writes it (wordvec.py).

Usage: /usr/bin/python3 models/train/build_tokenizer.py
"""

import json
import os
import time

import common
import corpus
import lm_corpus
import wordpiece


def main():
    common.setup(common.VOCAB_SEED)
    t0 = time.time()
    gen = corpus.Corpus("train", seed=common.VOCAB_SEED, pseudo_p=corpus.BASE_PSEUDO_P, context_swap=False,
                         novel_p=0, editions=common.VOCAB_EDITIONS)
    texts = [gen.doc()[0] for _ in range(common.VOCAB_DOCS)]
    texts += lm_corpus.sentences("train", common.VOCAB_DOCS // 2, seed=common.VOCAB_SEED)
    counts = wordpiece.word_counts(texts)
    vocab = wordpiece.train_vocab(counts, common.VOCAB_SIZE, common.base_alphabet())
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
