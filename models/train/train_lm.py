"""Trains and exports tiny-lm, a small causal LM on synthetic clinical text (config.TINY_LM).

Usage: /usr/bin/python3 models/train/train_lm.py [--steps N]

Writes models/tiny-lm/{config.json, generation_config.json, model.onnx,
MODEL_CARD.md} and models/testdata/golden/tiny-lm.jsonl. The ONNX graph has the
optimum decoder-with-past layout: inputs input_ids, attention_mask,
past_key_values.{i}.key/.value [batch, heads, past, head_dim]; outputs logits,
present.{i}.key/.value. Position ids are computed inside the graph from
attention_mask (cumsum - 1), so there is no position_ids input.
"""

import argparse
import json
import math
import os
import time

import common
import config


def pack(tok, texts, eos, block):
    """All passages, each followed by eos, cut into rows of block tokens."""
    stream = []
    for t in texts:
        stream += tok.encode(t, specials=False)[0] + [eos]
    n = len(stream) // block
    return [stream[i * block:(i + 1) * block] for i in range(n)]


def empty_past(model, batch):
    import torch
    c = model.cfg
    hd = c["hidden"] // c["heads"]
    return [(torch.zeros(batch, c["heads"], 0, hd), torch.zeros(batch, c["heads"], 0, hd))
            for _ in range(c["layers"])]


def greedy(model, ids, n):
    """Greedy decoding with the KV cache: one prompt pass, then one token a step."""
    import torch
    with torch.no_grad():
        x = torch.tensor([ids])
        mask = torch.ones_like(x)
        logits, past = model(x, mask, empty_past(model, 1))
        out = []
        for _ in range(n):
            nxt = int(logits[0, -1].argmax())
            out.append(nxt)
            x = torch.tensor([[nxt]])
            mask = torch.ones((1, mask.shape[1] + 1), dtype=torch.long)
            logits, past = model(x, mask, past)
    return out


class Export:
    """Wraps CausalLM with flat past/present tensors for torch.onnx.export."""

    @staticmethod
    def module(model):
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = model

            def forward(self, input_ids, attention_mask, *flat):
                past = [(flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2)]
                logits, presents = self.m(input_ids, attention_mask, past)
                outs = [logits]
                for k, v in presents:
                    outs += [k, v]
                return tuple(outs)

        return Wrapped()


def export(model, path):
    import onnx
    import torch
    c = model.cfg
    hd = c["hidden"] // c["heads"]
    L = c["layers"]
    ids = torch.tensor([[10, 11], [12, 13]])
    mask = torch.ones((2, 5), dtype=torch.long)
    past = []
    for _ in range(L):
        past += [torch.randn(2, c["heads"], 3, hd), torch.randn(2, c["heads"], 3, hd)]
    in_names = ["input_ids", "attention_mask"]
    out_names = ["logits"]
    dyn = {"input_ids": {0: "batch_size", 1: "sequence_length"},
           "attention_mask": {0: "batch_size", 1: "past_sequence_length + sequence_length"},
           "logits": {0: "batch_size", 1: "sequence_length"}}
    for i in range(L):
        for kv in ("key", "value"):
            n = f"past_key_values.{i}.{kv}"
            in_names.append(n)
            dyn[n] = {0: "batch_size", 2: "past_sequence_length"}
            o = f"present.{i}.{kv}"
            out_names.append(o)
            dyn[o] = {0: "batch_size", 2: "past_sequence_length + sequence_length"}
    model.eval()
    torch.onnx.export(Export.module(model), (ids, mask, *past), path, input_names=in_names,
                      output_names=out_names, dynamic_axes=dyn, opset_version=14, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, help="training steps; default: config.TINY_LM's")
    args = ap.parse_args()
    cfg = config.TINY_LM
    steps = args.steps or cfg.steps
    common.setup(cfg.seed)
    import random

    import torch

    import lm_corpus
    import nets
    import wordpiece

    out_dir = os.path.join(common.MODELS, "tiny-lm")
    tok = wordpiece.Tokenizer.load(os.path.join(out_dir, "tokenizer.json"))
    eos = tok.sep
    t0 = time.time()
    rows = pack(tok, lm_corpus.sentences("train", cfg.train_passages, cfg.seed, cfg), eos, cfg.block)
    held = pack(tok, lm_corpus.sentences("heldout", cfg.eval_passages, cfg.seed + 1, cfg), eos, cfg.block)
    print(f"tiny-lm: {len(rows)} train blocks, {len(held)} held-out blocks, prep {time.time() - t0:.0f}s", flush=True)
    model = nets.CausalLM(len(tok.vocab), hidden=cfg.hidden, layers=cfg.layers, heads=cfg.heads, ffn=cfg.ffn,
                          max_pos=cfg.max_pos, dropout=cfg.dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / cfg.warmup) * max(0.0, 1 - s / steps))
    rng = random.Random(cfg.seed)
    data = torch.tensor(rows)
    model.train()
    t1 = time.time()
    mask = torch.ones((cfg.batch, cfg.block), dtype=torch.long)
    past = empty_past(model, cfg.batch)
    for step in range(steps):
        idx = torch.tensor([rng.randrange(len(rows)) for _ in range(cfg.batch)])
        x = data[idx]
        logits, _ = model(x[:, :-1], mask[:, :-1], past)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 200 == 0 or step == steps - 1:
            print(f"step {step} loss {loss.item():.4f} {time.time() - t1:.0f}s", flush=True)
    train_s = time.time() - t1
    model.eval()
    nll, count = 0.0, 0
    with torch.no_grad():
        hd = torch.tensor(held)
        for i in range(0, len(held), 64):
            x = hd[i:i + 64]
            logits, _ = model(x[:, :-1], torch.ones_like(x[:, :-1]), empty_past(model, x.shape[0]))
            nll += torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1),
                                                     reduction="sum").item()
            count += x[:, 1:].numel()
    ppl = math.exp(nll / count)
    print(f"tiny-lm: held-out perplexity {ppl:.2f} over {count} tokens", flush=True)
    onnx_path = os.path.join(out_dir, "model.onnx")
    export(model, onnx_path)
    c = model.cfg
    model_cfg = {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": len(tok.vocab),
        "n_layer": c["layers"], "num_hidden_layers": c["layers"],
        "n_head": c["heads"], "num_attention_heads": c["heads"],
        "n_embd": c["hidden"], "hidden_size": c["hidden"],
        "head_dim": c["hidden"] // c["heads"],
        "n_inner": c["ffn"],
        "n_positions": c["max_pos"], "max_position_embeddings": c["max_pos"],
        "bos_token_id": eos, "eos_token_id": eos, "pad_token_id": tok.pad,
        "tie_word_embeddings": True, "use_cache": True,
        "sluice": {"position_ids": "computed in the graph: cumsum(attention_mask) - 1 over past+current, "
                                   "last sequence_length of them; no position_ids input",
                   "prompt_prefix": "none: prompts are not prefixed with bos",
                   "pre_norm": True, "trained_by": "models/train/train_lm.py"},
    }
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(model_cfg, f, indent=2)
        f.write("\n")
    gen_cfg = {"bos_token_id": eos, "eos_token_id": eos, "pad_token_id": tok.pad, "max_new_tokens": 64,
               "do_sample": False}
    with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
        json.dump(gen_cfg, f, indent=2)
        f.write("\n")
    samples = []
    with open(os.path.join(common.GOLDEN, "tiny-lm.jsonl"), "w", encoding="utf-8") as f:
        for p in cfg.prompts:
            ids = tok.encode(p, specials=False)[0]
            g = greedy(model, ids, cfg.new_tokens)
            f.write(json.dumps({"prompt": p, "prompt_ids": ids, "greedy_ids": g}, ensure_ascii=False) + "\n")
            samples.append((p, tok.decode(g), eos in g))
    torch.save(model.state_dict(), os.path.join(common.OUT, "tiny-lm.pt"))
    params = sum(p.numel() for p in model.parameters())
    size = os.path.getsize(onnx_path)
    with open(os.path.join(common.OUT, "tiny-lm.metrics.json"), "w") as f:
        json.dump({"perplexity": ppl, "tokens": count, "train_seconds": train_s, "parameters": params,
                   "onnx_bytes": size, "steps": steps}, f, indent=2)
    cont = "\n".join(f"- `{p}` → `{s}`" + (" (reaches eos)" if e else "") for p, s, e in samples)
    card = f"""# tiny-lm

A tiny causal language model for `POST /generate`, trained on synthetic clinical sentences. It
exists so the streaming generation path has a real model to run with no download; its text is
fluent-looking template prose, not medical advice.

**Trained only on synthetic text. Not validated for clinical use.** The sentences come from
`models/train/lm_corpus.py` (the same split templates and word lists as the NER corpus, no noise;
35 % of the train word-list slots hold invented words from `pseudo.py`, never a held-out word).

## Model

- GPT-2-shaped pre-norm decoder (`models/train/nets.py`): {c['layers']} layers, {c['heads']} heads, head_dim
  {c['hidden'] // c['heads']}, hidden {c['hidden']}, feed-forward {c['ffn']}, max positions {c['max_pos']}, tied input/output
  embeddings. Parameters: {params:,}; `model.onnx` {size:,} bytes (fp32, opset 14).
- Tokenizer: the project's cased WordPiece ({len(tok.vocab)} entries, train split only), `post_processor`
  null: nothing is added to prompts. eos = `[SEP]` (id {eos}); bos_token_id is set to the same id (GPT-2
  style) and is **not** prepended to prompts. Passages were packed as `text [SEP] text [SEP] ...`.
- ONNX layout (optimum decoder-with-past): inputs `input_ids` [batch, seq], `attention_mask`
  [batch, past+seq], `past_key_values.{{i}}.key` / `.value` [batch, {c['heads']}, past, {c['hidden'] // c['heads']}] for
  i in 0..{c['layers'] - 1} (past length 0 works: pass empty tensors); outputs `logits` [batch, seq, {len(tok.vocab)}],
  `present.{{i}}.key` / `.value` [batch, {c['heads']}, past+seq, {c['hidden'] // c['heads']}]. No `position_ids` input: positions
  are `cumsum(attention_mask) - 1` over past+current inside the graph, so left padding works.
- `decode_inplace.onnx` (written after training by `export_inplace.py`): the same weights for one new token a row
  after a past or for first prompts, around ONNX Runtime's `com.microsoft.GroupQueryAttention`, each layer's keys and values in one buffer that is both
  past and present (right padded; `seqlens_k` gives each row's length). Sluice decodes on it.
- Training: {steps} steps, batch {cfg.batch} x {cfg.block} tokens, AdamW lr {cfg.lr}, {cfg.warmup} warm-up steps, linear
  decay, seed {cfg.seed}; {common.threads_line()}. Training time: {train_s:.0f} s on this project's
  2-core build machine.

## Held-out evaluation

Perplexity per WordPiece token on {count:,} held-out tokens (held-out templates filled with held-out
words, packed like the training data): **{ppl:.2f}**.

Greedy continuations ({cfg.new_tokens} new tokens, KV cache; the same ids are in
`models/testdata/golden/tiny-lm.jsonl`, generated without stopping at eos):

{cont}

Produced by: `/usr/bin/python3 models/train/train_lm.py --steps {steps}` (part of
`bash models/train/run.sh tiny-lm`).
"""
    with open(os.path.join(out_dir, "MODEL_CARD.md"), "w", encoding="utf-8") as f:
        f.write(card)
    print(f"tiny-lm: done, train {train_s:.0f}s, onnx {size} bytes", flush=True)


if __name__ == "__main__":
    main()
