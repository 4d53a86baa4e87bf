#!/usr/bin/env python3
"""Write small decoder-with-past model directories for the generation routes, one per
tokenizer family whose decoding is hard to stream: byte-level BPE (GPT-2, whose pieces are
bytes, so one character can take several ids) and SentencePiece BPE with byte fallback
(Llama: <0xE4>-style byte tokens and a leading "▁" that decoding strips).

Run from the repository root with Debian's interpreter (and, for lm-gqa's prompts, HF's
tokenizers for node):

    NODE_PATH=/tmp/hftok/node_modules /usr/bin/python3 models/testdata/layouts/gen_decoders.py

The graph is the recipe's CausalLM (models/train/nets.py) with untrained, seeded weights and
the same optimum decoder-with-past I/O as the shipped tiny-lm. Untrained on purpose: sampling
from it draws ids from the whole vocabulary, byte pieces and special tokens included, which
is what the streaming tests need; what the model says is not the point.

lm-gqa is a Llama-shaped decoder instead: grouped-query attention (4 query heads sharing 2
key/value heads, so the KV cache holds 2), a position_ids input, and the Llama-style
SentencePiece BPE tokenizer with its <s> template, exported with optimum's Llama I/O. Its
weights are seeded and scaled up so that greedy choices are not near ties, and its torch
greedy continuations of a few prompts are written to greedy.jsonl for the serving test.
"""

import json
import math
import os
import shutil
import subprocess
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


def gqa_model(vocab, hidden=32, layers=2, heads=4, kv_heads=2, max_pos=128):
    import torch
    from torch import nn

    hd = hidden // heads

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.q = nn.Linear(hidden, heads * hd, bias=False)
            self.k = nn.Linear(hidden, kv_heads * hd, bias=False)
            self.v = nn.Linear(hidden, kv_heads * hd, bias=False)
            self.o = nn.Linear(heads * hd, hidden, bias=False)
            self.mlp = nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.GELU(), nn.Linear(2 * hidden, hidden))

        def forward(self, x, bias, pk, pv):
            b, s, _ = x.shape
            h = self.ln1(x)
            q = self.q(h).view(b, s, heads, hd).transpose(1, 2)
            k = torch.cat([pk, self.k(h).view(b, s, kv_heads, hd).transpose(1, 2)], dim=2)
            v = torch.cat([pv, self.v(h).view(b, s, kv_heads, hd).transpose(1, 2)], dim=2)
            # Each key/value head serves heads // kv_heads query heads: group the queries
            # and let MatMul broadcast over the group (repeat_interleave exports with the
            # example's fixed shapes).
            qg = q.reshape(b, kv_heads, heads // kv_heads, s, hd)
            scores = qg @ k.unsqueeze(2).transpose(-1, -2) / math.sqrt(hd) + bias.unsqueeze(2)
            ctx = torch.softmax(scores, dim=-1) @ v.unsqueeze(2)
            x = x + self.o(ctx.reshape(b, heads, s, hd).transpose(1, 2).reshape(b, s, heads * hd))
            return x + self.mlp(self.ln2(x)), k, v

    class GQALM(nn.Module):
        def __init__(self):
            super().__init__()
            self.cfg = dict(hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads, hd=hd, max_pos=max_pos)
            self.tok = nn.Embedding(vocab, hidden)
            self.pos = nn.Embedding(max_pos, hidden)
            self.blocks = nn.ModuleList([Layer() for _ in range(layers)])
            self.ln = nn.LayerNorm(hidden)

        def forward(self, input_ids, attention_mask, position_ids, *flat):
            s = input_ids.shape[1]
            m = attention_mask.to(torch.int64)
            total = m.shape[1]
            past_len = total - s
            q_idx = torch.arange(s) + past_len
            k_idx = torch.arange(total)
            allowed = (k_idx[None, :] <= q_idx[:, None])[None, None] & (m[:, None, None, :] == 1)
            bias = (~allowed).to(torch.float32) * -1e9
            x = self.tok(input_ids) + self.pos(position_ids)
            outs = []
            for i, blk in enumerate(self.blocks):
                x, k, v = blk(x, bias, flat[2 * i], flat[2 * i + 1])
                outs += [k, v]
            return (self.ln(x) @ self.tok.weight.t(), *outs)

    return GQALM()


def write_gqa(name="lm-gqa", tok_file="llama-bpe.json", eos_token="</s>"):
    import onnx
    import torch

    src = os.path.join(ROOT, "tokenizer", "testdata", tok_file)
    with open(src) as f:
        tok = json.load(f)
    size = 1 + max(list(tok["model"]["vocab"].values()) + [a["id"] for a in tok["added_tokens"]])
    eos = next(a["id"] for a in tok["added_tokens"] if a["content"] == eos_token)
    bos = next(a["id"] for a in tok["added_tokens"] if a["content"] == "<s>")
    torch.manual_seed(20261204)
    model = gqa_model(size)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.3)
    model.eval()
    c = model.cfg
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    shutil.copyfile(src, os.path.join(d, "tokenizer.json"))

    def empty(b):
        return [torch.zeros(b, c["kv_heads"], 0, c["hd"]) for _ in range(2 * c["layers"])]

    def greedy(ids, n):
        with torch.no_grad():
            x = torch.tensor([ids])
            mask = torch.ones_like(x)
            pos = torch.arange(len(ids))[None]
            out = model(x, mask, pos, *empty(1))
            logits, past = out[0], list(out[1:])
            got, margins = [], []
            for _ in range(n):
                top = torch.topk(logits[0, -1], 2).values
                margins.append(float(top[0] - top[1]))
                nxt = int(logits[0, -1].argmax())
                got.append(nxt)
                if nxt == eos:
                    break
                step = len(ids) + len(got) - 1
                out = model(torch.tensor([[nxt]]), torch.ones((1, step + 1), dtype=torch.long),
                            torch.tensor([[step]]), *past)
                logits, past = out[0], list(out[1:])
        return got, min(margins)

    in_names = ["input_ids", "attention_mask", "position_ids"]
    out_names = ["logits"]
    dyn = {"input_ids": {0: "batch_size", 1: "sequence_length"},
           "attention_mask": {0: "batch_size", 1: "past_sequence_length + sequence_length"},
           "position_ids": {0: "batch_size", 1: "sequence_length"},
           "logits": {0: "batch_size", 1: "sequence_length"}}
    for i in range(c["layers"]):
        for kv in ("key", "value"):
            in_names.append(f"past_key_values.{i}.{kv}")
            dyn[in_names[-1]] = {0: "batch_size", 2: "past_sequence_length"}
            out_names.append(f"present.{i}.{kv}")
            dyn[out_names[-1]] = {0: "batch_size", 2: "past_sequence_length + sequence_length"}
    past = [torch.randn(2, c["kv_heads"], 3, c["hd"]) for _ in range(2 * c["layers"])]
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, (torch.tensor([[10, 11], [12, 13]]), torch.ones((2, 5), dtype=torch.long),
                              torch.tensor([[3, 4], [3, 4]]), *past), path, input_names=in_names,
                      output_names=out_names, dynamic_axes=dyn, opset_version=14, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    cfg = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": size,
        "hidden_size": c["hidden"], "num_hidden_layers": c["layers"], "num_attention_heads": c["heads"],
        "num_key_value_heads": c["kv_heads"], "max_position_embeddings": c["max_pos"],
        "bos_token_id": bos, "eos_token_id": eos, "tie_word_embeddings": True, "use_cache": True,
    }
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    with open(os.path.join(d, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": bos, "eos_token_id": eos, "max_new_tokens": 16}, f, indent=2)
        f.write("\n")
    with open(os.path.join(d, "greedy.jsonl"), "w", encoding="utf-8") as f:
        for prompt in ["Patient presents with", "The results were reviewed", "café 中文 and more"]:
            enc = subprocess.run(["node", "-e", ENCODE_JS, src, prompt], check=True, capture_output=True, text=True)
            ids = json.loads(enc.stdout)
            got, margin = greedy(ids, 12)
            if margin < 1e-2:
                raise SystemExit(f"{prompt!r}: a greedy choice is a near tie ({margin}); change the seed")
            f.write(json.dumps({"prompt": prompt, "prompt_ids": ids, "greedy_ids": got}) + "\n")
    print(f"{name}: vocab {size}, {c['heads']} heads, {c['kv_heads']} key/value heads")


# Encodes a prompt with its special tokens, as the server does, by HF's own tokenizer.
ENCODE_JS = r"""
const tk = require('tokenizers');
(async () => {
  const tok = tk.Tokenizer.fromFile(process.argv[1]);
  const enc = await tok.encode(process.argv[2], null, { addSpecialTokens: true });
  process.stdout.write(JSON.stringify(enc.getIds()));
})();
"""


if __name__ == "__main__":
    for name, (tok_file, eos) in DECODERS.items():
        write(name, tok_file, eos)
    write_gqa()
