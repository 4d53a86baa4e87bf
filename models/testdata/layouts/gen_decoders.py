#!/usr/bin/env python3
"""Write small decoder-with-past model directories for the generation routes, one per
tokenizer family whose decoding is hard to stream: byte-level BPE (GPT-2, whose pieces are
bytes, so one character can take several ids) and SentencePiece BPE with byte fallback
(Llama: <0xE4>-style byte tokens and a leading "▁" that decoding strips).

Run from the repository root with Debian's interpreter:

    /usr/bin/python3 models/testdata/layouts/gen_decoders.py

The graph is the recipe's CausalLM (models/train/nets.py) with untrained, seeded weights and
the same optimum decoder-with-past I/O as the shipped tiny-lm. Untrained on purpose: sampling
from it draws ids from the whole vocabulary, byte pieces and special tokens included, which
is what the streaming tests need; what the model says is not the point.
"""

import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "models", "train"))

# name -> (tokenizer file under tokenizer/testdata, end-of-sequence token)
DECODERS = {
    "lm-bytelevel": ("roberta.json", "</s>"),
    "lm-llama": ("llama-bpe.json", "</s>"),
}
HIDDEN, LAYERS, HEADS, FFN, MAX_POS = 16, 2, 2, 32, 128


def write(name, tok_file, eos_token):
    import torch

    import nets
    import train_lm

    src = os.path.join(ROOT, "tokenizer", "testdata", tok_file)
    with open(src) as f:
        tok = json.load(f)
    vocab = tok["model"]["vocab"]
    ids = list(vocab.values()) if isinstance(vocab, dict) else list(range(len(vocab)))
    size = 1 + max(ids + [a["id"] for a in tok["added_tokens"]])
    eos = next(a["id"] for a in tok["added_tokens"] if a["content"] == eos_token)
    torch.manual_seed(20261203)
    model = nets.CausalLM(size, hidden=HIDDEN, layers=LAYERS, heads=HEADS, ffn=FFN, max_pos=MAX_POS, dropout=0.0)
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    if "Roberta" in json.dumps(tok.get("post_processor")):
        # A decoder's prompt is not wrapped in <s> ... </s>: GPT-2's files say so with a
        # ByteLevel post-processor that adds nothing.
        tok["post_processor"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                 "use_regex": True}
        with open(os.path.join(d, "tokenizer.json"), "w") as f:
            json.dump(tok, f, ensure_ascii=False, separators=(",", ":"))
    else:
        shutil.copyfile(src, os.path.join(d, "tokenizer.json"))
    train_lm.export(model, os.path.join(d, "model.onnx"))
    cfg = {
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": size,
        "n_layer": LAYERS, "n_head": HEADS, "n_embd": HIDDEN, "head_dim": HIDDEN // HEADS, "n_inner": FFN,
        "n_positions": MAX_POS, "max_position_embeddings": MAX_POS,
        "bos_token_id": eos, "eos_token_id": eos, "tie_word_embeddings": True, "use_cache": True,
    }
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    with open(os.path.join(d, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": eos, "max_new_tokens": 32}, f, indent=2)
        f.write("\n")
    print(f"{name}: vocab {size}, eos {eos}")


if __name__ == "__main__":
    for name, (tok_file, eos) in DECODERS.items():
        write(name, tok_file, eos)
