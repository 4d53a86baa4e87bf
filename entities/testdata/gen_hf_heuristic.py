#!/usr/bin/env python3
"""Record what HF's token-classification pipeline answers for tokenizers without word ids.

HF's pipeline trusts a tokenizer's word boundaries only when its model has a
continuing_subword_prefix (WordPiece's "##"). For byte-level BPE (RoBERTa, ModernBERT) and
SentencePiece (DeBERTa-v3, XLM-R) it decides whether a piece continues the previous word
from the text around the piece's start: it does when the piece does not start the text and
neither the character before it nor its first character is an ASCII space; the unknown
token never continues a word. This script writes random cases shaped like those families'
offsets, with the entities the pipeline's post-processing gives for each strategy, to
hf_heuristic_golden.json. Run from the repository root:

    /usr/bin/python3 entities/testdata/gen_hf_heuristic.py

The post-processing below is transformers' TokenClassificationPipeline.postprocess
(gather_pre_entities, aggregate, aggregate_word(s), group_entities) restated step by step in
float32 numpy, as the pipeline computes it from a model's float32 logits. Only spans, labels
and scores are recorded; the Go decoder trims whitespace from spans, so the test trims these
the same way before comparing.
"""

import json
import os
import random

import numpy as np

LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "MISC"]
UNK = 3
CASES = 400
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hf_heuristic_golden.json")


def continues(text, start, is_unk):
    """The pipeline's fallback is_subword, on code point offsets."""
    if is_unk:
        return False
    return start > 0 and " " not in text[start - 1:start + 1]


def softmax(logits):
    m = np.max(logits, axis=-1, keepdims=True)
    e = np.exp(logits - m)
    return e / e.sum(axis=-1, keepdims=True)


def tag(label):
    if label.startswith("B-"):
        return "B", label[2:]
    if label.startswith("I-"):
        return "I", label[2:]
    return "I", label


def word_entity(group, strategy):
    if strategy == "first":
        scores = group[0]["scores"]
        idx = int(scores.argmax())
        score = scores[idx]
    elif strategy == "max":
        best = max(group, key=lambda e: e["scores"].max())
        idx = int(best["scores"].argmax())
        score = best["scores"][idx]
    else:  # average
        avg = np.nanmean(np.stack([e["scores"] for e in group]), axis=0)
        idx = int(avg.argmax())
        score = avg[idx]
    return {"entity": LABELS[idx], "score": score, "start": group[0]["start"], "end": group[-1]["end"]}


def postprocess(text, ids, offsets, logits, strategy):
    scores = softmax(logits)
    pre = []
    for i, (s, e) in enumerate(offsets):
        pre.append({"scores": scores[i], "start": s, "end": e, "is_subword": continues(text, s, ids[i] == UNK)})
    if strategy in ("none", "simple"):
        ents = []
        for p in pre:
            idx = int(p["scores"].argmax())
            ents.append({"entity": LABELS[idx], "score": p["scores"][idx], "start": p["start"], "end": p["end"]})
    else:
        ents, group = [], None
        for p in pre:
            if group is None:
                group = [p]
            elif p["is_subword"]:
                group.append(p)
            else:
                ents.append(word_entity(group, strategy))
                group = [p]
        ents.append(word_entity(group, strategy))
    if strategy == "none":
        out = [e for e in ents if e["entity"] != "O"]
        return [[e["entity"], e["start"], e["end"], float(e["score"])] for e in out]
    groups, current = [], []

    def close():
        label = current[0]["entity"].split("-")[-1]
        score = np.mean(np.nanmean([e["score"] for e in current]))
        groups.append([label, current[0]["start"], current[-1]["end"], float(score)])

    for e in ents:
        if current:
            bi, t = tag(e["entity"])
            _, last_t = tag(current[-1]["entity"])
            if t == last_t and bi != "B":
                current.append(e)
                continue
            close()
        current = [e]
    if current:
        close()
    return [g for g in groups if g[0] != "O"]


WORD_CHARS = "abcdefghijklmnopqrstuvwxyzéü中"
PUNCT = ".,;:-/()"


def case(rng):
    """A random text and its tokens in one family's offset style."""
    style = rng.choice(["trimmed", "untrimmed", "metaspace"])
    text, ids, offsets = "", [], []

    def tok(s, e, unk=False):
        ids.append(UNK if unk else rng.randrange(10, 1000))
        offsets.append([s, e])

    for w in range(rng.randrange(1, 9)):
        if w > 0:
            gap = rng.choice([" ", " ", " ", "  ", "\n", "", " \t"])
        else:
            gap = rng.choice(["", "", " "])
        gap_start = len(text)
        text += gap
        if rng.random() < 0.25:
            word = rng.choice(PUNCT) * rng.randrange(1, 3)
        else:
            word = "".join(rng.choice(WORD_CHARS) for _ in range(rng.randrange(1, 8)))
        start = len(text)
        text += word
        cuts = sorted(rng.sample(range(1, len(word)), min(len(word) - 1, rng.randrange(0, 3)))) if len(word) > 1 else []
        bounds = [0] + cuts + [len(word)]
        lone_marker = gap.endswith(" ") and rng.random() < 0.2
        if lone_marker:
            # Byte-level BPE with no merge for "Ġx", or SentencePiece's lone "▁".
            if style == "untrimmed":
                tok(start - 1, start)
            elif style == "metaspace" and rng.random() < 0.5:
                tok(gap_start, start)
            else:
                tok(start, start)
        for k in range(len(bounds) - 1):
            s, e = start + bounds[k], start + bounds[k + 1]
            if k == 0 and style == "untrimmed" and gap.endswith(" ") and not lone_marker:
                s -= 1
            tok(s, e, unk=rng.random() < 0.05)
    logits = np.array([[rng.choice([-2, -1, 0, 1, 2, 0.5, 3]) for _ in LABELS] for _ in ids], dtype=np.float32)
    return style, text, ids, offsets, logits


def main():
    rng = random.Random(20261203)
    cases = []
    for _ in range(CASES):
        style, text, ids, offsets, logits = case(rng)
        want = {s: postprocess(text, ids, offsets, logits, s) for s in ("none", "simple", "first", "average", "max")}
        cases.append({"style": style, "text": text, "ids": ids, "offsets": offsets,
                      "logits": [float(x) for x in logits.flatten()], "want": want})
    with open(OUT, "w") as f:
        json.dump({"labels": LABELS, "unknown_id": UNK, "cases": cases}, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
