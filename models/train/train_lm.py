"""Trains and exports tiny-lm, a small causal LM on synthetic clinical text.

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

HP = dict(hidden=128, layers=2, heads=4, ffn=512, max_pos=256, dropout=0.0)
SEED = 303
BLOCK = 64
BATCH = 16
LR = 2e-3
WARMUP = 100
TRAIN_PASSAGES = 40000
EVAL_PASSAGES = 2000
NEW_TOKENS = 16
PROMPTS = [
    "The patient was started on",
    "She was admitted to",
    "Follow up with",
    "Assessment: likely",
    "He denies chest pain and",
]


def pack(tok, texts, eos):
    """All passages, each followed by eos, cut into BLOCK-token rows."""
    stream = []
    for t in texts:
        stream += tok.encode(t, specials=False)[0] + [eos]
    n = len(stream) // BLOCK
    return [stream[i * BLOCK:(i + 1) * BLOCK] for i in range(n)]


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
    ap.add_argument("--steps", type=int, default=2000)
    args = ap.parse_args()
    common.setup(SEED)
    import random

    import torch

    import lm_corpus
    import nets
    import wordpiece

    out_dir = os.path.join(common.MODELS, "tiny-lm")
    tok = wordpiece.Tokenizer.load(os.path.join(out_dir, "tokenizer.json"))
    eos = tok.sep
    t0 = time.time()
    rows = pack(tok, lm_corpus.sentences("train", TRAIN_PASSAGES, SEED), eos)
    held = pack(tok, lm_corpus.sentences("heldout", EVAL_PASSAGES, SEED + 1), eos)
    print(f"tiny-lm: {len(rows)} train blocks, {len(held)} held-out blocks, prep {time.time() - t0:.0f}s", flush=True)
    model = nets.CausalLM(len(tok.vocab), **HP)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / WARMUP) * max(0.0, 1 - s / args.steps))
    rng = random.Random(SEED)
    data = torch.tensor(rows)
    model.train()
    t1 = time.time()
    mask = torch.ones((BATCH, BLOCK), dtype=torch.long)
    past = empty_past(model, BATCH)
    for step in range(args.steps):
        idx = torch.tensor([rng.randrange(len(rows)) for _ in range(BATCH)])
        x = data[idx]
        logits, _ = model(x[:, :-1], mask[:, :-1], past)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 200 == 0 or step == args.steps - 1:
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
    cfg = {
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
        json.dump(cfg, f, indent=2)
        f.write("\n")
    gen_cfg = {"bos_token_id": eos, "eos_token_id": eos, "pad_token_id": tok.pad, "max_new_tokens": 64,
               "do_sample": False}
    with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
        json.dump(gen_cfg, f, indent=2)
        f.write("\n")
    samples = []
    with open(os.path.join(common.GOLDEN, "tiny-lm.jsonl"), "w", encoding="utf-8") as f:
        for p in PROMPTS:
            ids = tok.encode(p, specials=False)[0]
            g = greedy(model, ids, NEW_TOKENS)
            f.write(json.dumps({"prompt": p, "prompt_ids": ids, "greedy_ids": g}, ensure_ascii=False) + "\n")
            samples.append((p, tok.decode(g), eos in g))
    torch.save(model.state_dict(), os.path.join(common.OUT, "tiny-lm.pt"))
    params = sum(p.numel() for p in model.parameters())
    size = os.path.getsize(onnx_path)
    with open(os.path.join(common.OUT, "tiny-lm.metrics.json"), "w") as f:
        json.dump({"perplexity": ppl, "tokens": count, "train_seconds": train_s, "parameters": params,
                   "onnx_bytes": size, "steps": args.steps}, f, indent=2)
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
- Training: {args.steps} steps, batch {BATCH} x {BLOCK} tokens, AdamW lr {LR}, {WARMUP} warm-up steps, linear
  decay, seed {SEED}; {common.threads_line()}. Training time: {train_s:.0f} s on this project's
  2-core build machine.

## Held-out evaluation

Perplexity per WordPiece token on {count:,} held-out tokens (held-out templates filled with held-out
words, packed like the training data): **{ppl:.2f}**.

Greedy continuations ({NEW_TOKENS} new tokens, KV cache; the same ids are in
`models/testdata/golden/tiny-lm.jsonl`, generated without stopping at eos):

{cont}

Produced by: `/usr/bin/python3 models/train/train_lm.py --steps {args.steps}` (part of
`bash models/train/run.sh tiny-lm`).
"""
    with open(os.path.join(out_dir, "MODEL_CARD.md"), "w", encoding="utf-8") as f:
        f.write(card)
    print(f"tiny-lm: done, train {train_s:.0f}s, onnx {size} bytes", flush=True)


if __name__ == "__main__":
    main()
