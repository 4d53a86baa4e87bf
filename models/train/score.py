"""Scores an exported token-classification model of this recipe on the held-out split, from
its files alone: the weights are read back from model.onnx into the network config.json
describes. It gives the card's figures for a model directory (the committed one, or one
from another commit), on the same documents the card was measured on.

Usage: /usr/bin/python3 models/train/score.py DIR pii|clinical-ner [--editions N] [--argmax]
  DIR holds model.onnx, tokenizer.json and config.json. Labels are the Viterbi path under
  config.json's CRF scores (sluice.crf_transitions), as the server decodes them; --argmax
  takes each token's argmax instead. --editions N scores on the first N editions'
  held-out parts (default: all editions).
"""

import argparse
import json
import os
import re

import common
import config
import train_ner


def linear_order(model):
    """The names of the model's Linear weights in the order its forward pass first uses
    them, found by running it once on a dummy input in eval mode, as it is exported (a
    ConvTagger applies its blocks' `mix` weights as Linear layers only then)."""
    import torch
    model.eval()
    order, hooks = [], []
    for name, mod in model.named_modules():
        if isinstance(mod, torch.nn.Linear):
            hooks.append(mod.register_forward_hook(
                lambda m, i, o, name=name: order.append(name + ".weight") if name + ".weight" not in order else None))
    with torch.no_grad():
        model(torch.tensor([[2, 10, 11, 3]]), torch.ones((1, 4), dtype=torch.long))
    for h in hooks:
        h.remove()
    return order


def load_from_onnx(path, model):
    """Copies an export's initializers into model. torch.onnx keeps the names of parameters
    it stores as they are, except the Linear weights it transposes for MatMul; those come
    unnamed, in the order the forward pass uses them."""
    import onnx
    import torch
    from onnx import numpy_helper
    graph = onnx.load(path).graph
    raw = {i.name: numpy_helper.to_array(i).copy() for i in graph.initializer}
    init = {}
    for name, a in raw.items():
        # Weights stored as float16 (train_ner.halve_initializers) are read back widened, and
        # those stored as int8 with float16 steps (train_ner.quantize_initializers) multiplied
        # back, in float32 as ONNX Runtime does.
        if name.endswith(".fp16"):
            name, a = name[:-len(".fp16")], a.astype("float32")
        elif name.endswith(".q8"):
            name, a = name[:-len(".q8")], a.astype("float32") * raw[name + "step"].astype("float32")
        elif name.endswith(".q8step"):
            continue
        init[name] = torch.tensor(a)
    state = {k: v for k, v in init.items() if not k.startswith("onnx::")}
    # The members of a nets.Averaged share their tables, which the export stores once.
    for key in model.state_dict():
        first = re.sub(r"^members\.\d+\.", "members.0.", key)
        if key not in state and first in state:
            state[key] = state[first]
    mats = [v for k, v in init.items() if k.startswith("onnx::MatMul")]
    order = linear_order(model)
    if len(mats) != len(order):
        raise SystemExit(f"{path}: {len(mats)} MatMul weights, expected {len(order)}: not this recipe's layout")
    for name, w in zip(order, mats):
        state[name] = w.t().contiguous()
    model.load_state_dict(state)


def network_for(cfg, tok, names):
    """An untrained network of the shape config.json's sluice.encoder describes."""
    import nets
    cont = [v.startswith("##") for v in tok.vocab]
    enc = dict(cfg["sluice"]["encoder"])
    if enc.pop("kind") != "dilated_conv" or enc.pop("ffn"):
        raise SystemExit("config.json: not an encoder this recipe builds")
    wv = enc.pop("word_vectors", None)
    members = enc.pop("members", 1)
    if wv is None:
        return nets.ConvTagger(len(tok.vocab), len(names), continuation=cont, **enc)
    import wordvec
    tables = wordvec.Tables.empty(wv["shared"], wv["vocab"], wv["rows"], wv["dims"])
    nets_ = [nets.WordVecTagger(len(tok.vocab), len(names), tables, cont, **enc) for _ in range(members)]
    return nets_[0] if members == 1 else nets.Averaged(nets_)


def load(model_dir, name, crf=True):
    """The exported model in model_dir as (its config.Ner, tokenizer, label names, network,
    CRF scores); the scores are None without crf. It also seeds the run as training did
    (common.setup)."""
    import wordpiece
    cfg = config.NER[name]
    common.setup(cfg.seed)
    tok = wordpiece.Tokenizer.load(os.path.join(model_dir, "tokenizer.json"))
    names = train_ner.label_names(cfg.task)
    with open(os.path.join(model_dir, "config.json")) as f:
        model_cfg = json.load(f)
    model = network_for(model_cfg, tok, names)
    load_from_onnx(os.path.join(model_dir, "model.onnx"), model)
    model.eval()
    trans = None
    if crf:
        trans = train_ner.rounded_scores(model_cfg)
    return cfg, tok, names, model, trans


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("name", choices=sorted(config.NER))
    ap.add_argument("--editions", type=int, default=None)
    ap.add_argument("--argmax", action="store_true", help="each token's argmax, even if the model has a CRF")
    args = ap.parse_args()
    cfg, tok, names, model, trans = load(args.dir, args.name, crf=not args.argmax)
    m = train_ner.evaluate(cfg, model, tok, names, editions=args.editions, trans=trans)
    ov = m["overall"]
    print(f"{args.name} editions={args.editions or 'all'} {'crf' if trans is not None else 'argmax'}: F1 {ov['f1']:.3f} "
          f"(precision {ov['precision']:.3f}, recall {ov['recall']:.3f}, {ov['support']} entities, "
          f"{m['documents']} documents); lenient (same type, overlapping) F1 {m['lenient']['f1']:.3f}")


if __name__ == "__main__":
    main()
