"""Export full-size networks built from the recipe's own modules (models/train/nets.py) with
random weights, for timing the engine on the shapes real models have. Nothing here needs
transformers (export_shaped.py does, for HF's BertForTokenClassification). The files are
large (440-500 MB) and not committed; the commands are:

    /usr/bin/python3 models/train/export_recipe_shaped.py encoder OUT_DIR   # BERT-base-shaped tagger
    /usr/bin/python3 models/train/export_recipe_shaped.py decoder OUT_DIR   # GPT-2-small-shaped LM with past

encoder: 12 pre-norm blocks, hidden 768, 12 heads, FFN 3072, vocabulary 30,522, 9 labels;
inputs input_ids and attention_mask, output logits, written as OUT_DIR/model.onnx with a
config.json and the pii model's tokenizer.json (ids stay below the vocabulary).
decoder: nets.CausalLM with 12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 50,257,
1,024 positions, in the optimum decoder-with-past layout train_lm.export writes, with
tiny-lm's tokenizer and generation config, so the server loads it as a generation model.
"""

import json
import os
import shutil
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nets  # noqa: E402
import train_lm  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HIDDEN, LAYERS, HEADS, FFN = 768, 12, 12, 3072


class Encoder(nn.Module):
    """Embeddings, LAYERS bidirectional blocks and a per-token output layer."""

    def __init__(self, vocab, labels, max_pos=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, HIDDEN)
        self.pos = nn.Embedding(max_pos, HIDDEN)
        self.blocks = nn.ModuleList([nets.Block(HIDDEN, HEADS, FFN, 0.0) for _ in range(LAYERS)])
        self.ln = nn.LayerNorm(HIDDEN)
        self.out = nn.Linear(HIDDEN, labels)
        nets.init_weights(self)

    def forward(self, input_ids, attention_mask):
        m = attention_mask.to(torch.int64)
        pos = (torch.cumsum(torch.ones_like(m), dim=1) - 1)
        x = self.tok(input_ids) + self.pos(pos)
        bias = (m[:, None, None, :] == 0).to(x.dtype) * -1e9
        for blk in self.blocks:
            x, _, _ = blk(x, bias)
        return self.out(self.ln(x))


def encoder(out):
    torch.manual_seed(0)
    labels = ["O"] + [f"{p}-T{i}" for i in range(4) for p in ("B", "I")]
    model = Encoder(30522, len(labels)).eval()
    ids = torch.randint(5, 5000, (2, 16))
    mask = torch.ones_like(ids)
    axes = {0: "batch_size", 1: "sequence_length"}
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), os.path.join(out, "model.onnx"), input_names=["input_ids", "attention_mask"],
                          output_names=["logits"], opset_version=14,
                          dynamic_axes={"input_ids": axes, "attention_mask": axes, "logits": axes})
    cfg = {"model_type": "bert", "architectures": ["BertForTokenClassification"], "max_position_embeddings": 512,
           "vocab_size": 30522, "hidden_size": HIDDEN, "num_hidden_layers": LAYERS, "pad_token_id": 0,
           "id2label": {str(i): l for i, l in enumerate(labels)}}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    shutil.copy(os.path.join(ROOT, "models", "pii", "tokenizer.json"), out)


def decoder(out):
    torch.manual_seed(0)
    model = nets.CausalLM(50257, hidden=HIDDEN, layers=LAYERS, heads=HEADS, ffn=FFN, max_pos=1024, dropout=0.0).eval()
    with torch.no_grad():
        train_lm.export(model, os.path.join(out, "model.onnx"))
    with open(os.path.join(ROOT, "models", "tiny-lm", "config.json")) as f:
        cfg = json.load(f)
    cfg.update({"vocab_size": 50257, "n_embd": HIDDEN, "hidden_size": HIDDEN, "n_layer": LAYERS, "num_hidden_layers": LAYERS,
                "n_head": HEADS, "num_attention_heads": HEADS, "head_dim": HIDDEN // HEADS, "n_inner": FFN, "n_positions": 1024, "max_position_embeddings": 1024})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    for name in ("tokenizer.json", "generation_config.json"):
        shutil.copy(os.path.join(ROOT, "models", "tiny-lm", name), out)


if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    {"encoder": encoder, "decoder": decoder}[kind](out)
    print(f"export_recipe_shaped: {kind} written to {out}")
