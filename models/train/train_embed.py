"""Trains and exports the two small encoders of /v1/embeddings and /rerank:

- embed-mini, a sentence embedder in the sentence-transformers layout (mean pooling,
  normalised): a sentence of a note and another sentence written from the same template with
  other names, dates, drugs and values are pulled together, sentences of other templates
  pushed apart (in-batch negatives, InfoNCE). It is good for grouping the lines of notes by
  what kind of line they are (an allergy line, a follow-up instruction, a lab result),
  whatever their particulars; it knows nothing of medicine beyond the recipe's templates and
  is no general-purpose semantic search model.
- rerank-mini, a cross-encoder over the same vocabulary: [CLS] query [SEP] passage [SEP] in
  one pass to one score (the scaled cosine of the two parts' mean states), started from
  embed-mini's encoder and trained to tell a passage written from the query's template from
  one that is not.

Both read the shared vocabulary (models/pii/tokenizer.json) and the recipe's train templates
only; the held-out split scores them (recall@1 of the embedder over held-out templates, the
cross-encoder's accuracy on held-out pairs), printed and written to their model cards.

    /usr/bin/python3 train_embed.py [--steps N]
"""

import argparse
import json
import math
import os
import random
import shutil
import time

import common
import config


def sentence_pairs(corpus, rng, n):
    """n pairs (a, b, template id): two renderings of one template of the narrative, list and
    lab pools, each filled anew."""
    import corpus as corpus_mod
    pools = [p for k, p in sorted(corpus.pools.items()) if k in ("NARRATIVE", "LIST_ITEM", "LAB", "ADMIN", "MESSAGE")]
    templates = [t for p in pools for t in p]
    out = []
    for _ in range(n):
        ti = rng.randrange(len(templates))
        texts = []
        for _ in range(2):
            b = corpus_mod.Builder()
            corpus.render(templates[ti], b)
            texts.append(b.build()[0].strip())
        out.append((texts[0], texts[1], ti))
    return out


def encode(tok, texts, max_len):
    """Padded ids and masks [n, longest], each text cut to max_len tokens with its [CLS] and
    [SEP]."""
    import torch
    rows = []
    for t in texts:
        ids, _ = tok.encode(t)
        if len(ids) > max_len:
            ids = ids[:max_len - 1] + [tok.sep]
        rows.append(ids)
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), tok.pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
        mask[i, :len(r)] = 1
    return ids, mask


def encode_pairs(tok, pairs, max_len):
    """[CLS] a [SEP] b [SEP], a cut to half of max_len and b to the rest."""
    import torch
    rows = []
    for a, b in pairs:
        ia, _ = tok.encode(a, specials=False)
        ib, _ = tok.encode(b, specials=False)
        ia = ia[:max_len // 2 - 2]
        ib = ib[:max_len - len(ia) - 3]
        rows.append([tok.cls] + ia + [tok.sep] + ib + [tok.sep])
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), tok.pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
        mask[i, :len(r)] = 1
    return ids, mask


def mean_pool(h, mask):
    import torch
    m = mask.to(h.dtype)[:, :, None]
    return (h * m).sum(1) / m.sum(1).clamp(min=1.0)


def train_embedder(tok, cfg, steps, train, held):
    import torch
    import torch.nn.functional as F
    import nets
    model = nets.Encoder(len(tok.vocab), hidden=cfg.hidden, layers=cfg.layers, heads=cfg.heads, ffn=cfg.ffn,
                         max_pos=cfg.max_pos, dropout=cfg.dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / cfg.warmup) * max(0.0, 1 - s / steps))
    rng = random.Random(cfg.seed)
    model.train()
    t0 = time.time()
    for step in range(steps):
        batch = []
        seen = set()
        while len(batch) < cfg.batch:  # one pair per template, so no in-batch negative is a positive
            p = train[rng.randrange(len(train))]
            if p[2] not in seen:
                seen.add(p[2])
                batch.append(p)
        ids_a, mask_a = encode(tok, [p[0] for p in batch], cfg.max_pos)
        ids_b, mask_b = encode(tok, [p[1] for p in batch], cfg.max_pos)
        ea = F.normalize(mean_pool(model(ids_a, mask_a), mask_a), dim=-1)
        eb = F.normalize(mean_pool(model(ids_b, mask_b), mask_b), dim=-1)
        sim = ea @ eb.T / cfg.temperature
        target = torch.arange(len(batch))
        loss = (F.cross_entropy(sim, target) + F.cross_entropy(sim.T, target)) / 2
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 200 == 0 or step == steps - 1:
            print(f"embed-mini: step {step} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
    model.eval()
    # Recall@1 on held-out templates: each first rendering finds its own template's second
    # among 200 held-out pairs of distinct templates.
    with torch.no_grad():
        by_t = {}
        for p in held:
            by_t.setdefault(p[2], p)
        sample = list(by_t.values())[:200]
        ids_a, mask_a = encode(tok, [p[0] for p in sample], cfg.max_pos)
        ids_b, mask_b = encode(tok, [p[1] for p in sample], cfg.max_pos)
        ea = F.normalize(mean_pool(model(ids_a, mask_a), mask_a), dim=-1)
        eb = F.normalize(mean_pool(model(ids_b, mask_b), mask_b), dim=-1)
        recall = (ea @ eb.T).argmax(1).eq(torch.arange(len(sample))).float().mean().item()
    print(f"embed-mini: held-out recall@1 {recall:.3f} over {len(sample)} templates", flush=True)
    return model, recall, len(sample)


def train_reranker(tok, cfg, steps, train, held, embedder):
    import copy

    import torch
    import torch.nn.functional as F
    import nets
    model = nets.CrossEncoder(copy.deepcopy(embedder), tok.cls, tok.sep)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.rerank_lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / cfg.warmup) * max(0.0, 1 - s / steps))
    rng = random.Random(cfg.seed + 1)

    def pairs(source, n):
        out, labels = [], []
        for _ in range(n):
            p = source[rng.randrange(len(source))]
            if rng.random() < 0.5:
                out.append((p[0], p[1]))
                labels.append(1.0)
            else:
                q = source[rng.randrange(len(source))]
                while q[2] == p[2]:
                    q = source[rng.randrange(len(source))]
                out.append((p[0], q[1]))
                labels.append(0.0)
        return out, torch.tensor(labels)

    model.train()
    t0 = time.time()
    for step in range(steps):
        batch, labels = pairs(train, cfg.batch)
        ids, mask = encode_pairs(tok, batch, cfg.max_pos)
        loss = F.binary_cross_entropy_with_logits(model(ids, mask)[:, 0], labels)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 200 == 0 or step == steps - 1:
            print(f"rerank-mini: step {step} loss {loss.item():.4f} {time.time() - t0:.0f}s", flush=True)
    model.eval()
    with torch.no_grad():
        batch, labels = pairs(held, 1000)
        ids, mask = encode_pairs(tok, batch, cfg.max_pos)
        acc = ((model(ids, mask)[:, 0] > 0).float() == labels).float().mean().item()
    print(f"rerank-mini: held-out pair accuracy {acc:.3f} over 1000 pairs", flush=True)
    return model, acc


def export(model, path, output):
    import torch
    ids = torch.tensor([[2, 100, 200, 3], [2, 300, 3, 0]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])
    torch.onnx.export(model, (ids, mask), path, input_names=["input_ids", "attention_mask"], output_names=[output],
                      dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
                                    output: {0: "batch", 1: "sequence"} if output == "last_hidden_state" else {0: "batch"}},
                      opset_version=17)


def card(name, what, figure):
    return f"""# {name}

{what}

- Trained by `models/train/train_embed.py` from the recipe's synthetic train templates only
  (`models/train/README.md`), on the shared 5,000-entry cased WordPiece vocabulary.
- Held out: {figure}
- Not for: anything outside the recipe's kinds of note lines; it has never seen real text.
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, help="training steps of each model; default: config.EMBED's")
    ap.add_argument("--rerank-only", action="store_true", help="train rerank-mini from the embedder saved in out/")
    args = ap.parse_args()
    cfg = config.EMBED
    steps = args.steps or cfg.steps
    common.setup(cfg.seed)
    import corpus as corpus_mod
    import wordpiece

    tok = wordpiece.Tokenizer.load(common.SHARED_TOKENIZER)
    rng = random.Random(cfg.seed)
    train = sentence_pairs(corpus_mod.Corpus("train", seed=cfg.seed, editions=3, augment=config.Augment(invented=0.35)), rng, cfg.pairs)
    held = sentence_pairs(corpus_mod.Corpus("heldout", seed=cfg.seed + 1, editions=3), rng, cfg.pairs // 10)
    print(f"embed: {len(train)} train pairs, {len(held)} held-out pairs", flush=True)

    import torch
    import nets
    saved = os.path.join(common.OUT, "embed-mini.pt")
    if args.rerank_only:
        embedder = nets.Encoder(len(tok.vocab), hidden=cfg.hidden, layers=cfg.layers, heads=cfg.heads, ffn=cfg.ffn,
                                max_pos=cfg.max_pos, dropout=cfg.dropout)
        embedder.load_state_dict(torch.load(saved))
        train_and_write_reranker(tok, cfg, steps, train, held, embedder)
        return
    embedder, recall, n = train_embedder(tok, cfg, steps, train, held)
    os.makedirs(common.OUT, exist_ok=True)
    torch.save(embedder.state_dict(), saved)
    out = os.path.join(common.MODELS, "embed-mini")
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    export(embedder, os.path.join(out, "model.onnx"), "last_hidden_state")
    shutil.copy(common.SHARED_TOKENIZER, os.path.join(out, "tokenizer.json"))
    base = {"vocab_size": len(tok.vocab), "hidden_size": cfg.hidden, "num_hidden_layers": cfg.layers,
            "num_attention_heads": cfg.heads, "intermediate_size": cfg.ffn, "max_position_embeddings": cfg.max_pos,
            "pad_token_id": tok.pad}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"architectures": ["SluiceEncoderModel"], "model_type": "sluice_encoder", **base,
                   "sluice": {"trained_by": "models/train/train_embed.py"}}, f, indent=2)
    with open(os.path.join(out, "modules.json"), "w") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                   {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}], f, indent=2)
    with open(os.path.join(out, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": cfg.hidden, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
                   "pooling_mode_max_tokens": False, "pooling_mode_lasttoken": False}, f, indent=2)
    with open(os.path.join(out, "MODEL_CARD.md"), "w") as f:
        f.write(card("embed-mini", "A sentence embedder (mean pooling, normalised, 128 dimensions): lines of notes written "
                     "from the same template land together whatever their names, dates, drugs and values. Good for grouping "
                     "note lines by kind; not a general-purpose semantic search model.",
                     f"recall@1 {recall:.3f}: each of {n} held-out templates' first rendering finds its second among all {n}."))

    train_and_write_reranker(tok, cfg, steps, train, held, embedder)


def train_and_write_reranker(tok, cfg, steps, train, held, embedder):
    reranker, acc = train_reranker(tok, cfg, cfg.rerank_steps, train, held, embedder)
    out = os.path.join(common.MODELS, "rerank-mini")
    base = {"vocab_size": len(tok.vocab), "hidden_size": cfg.hidden, "num_hidden_layers": cfg.layers,
            "num_attention_heads": cfg.heads, "intermediate_size": cfg.ffn, "max_position_embeddings": cfg.max_pos,
            "pad_token_id": tok.pad}
    os.makedirs(out, exist_ok=True)
    export(reranker, os.path.join(out, "model.onnx"), "logits")
    shutil.copy(common.SHARED_TOKENIZER, os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"architectures": ["SluiceCrossEncoderForSequenceClassification"], "model_type": "sluice_encoder", **base,
                   "id2label": {"0": "LABEL_0"}, "sluice": {"trained_by": "models/train/train_embed.py"}}, f, indent=2)
    with open(os.path.join(out, "MODEL_CARD.md"), "w") as f:
        f.write(card("rerank-mini", "A cross-encoder: [CLS] query [SEP] passage [SEP], read in one pass, to one relevance "
                     "score (a logit: the scaled cosine of the two parts' mean token states), started from embed-mini's encoder. "
                     "It scores high a passage written from the same kind of line as the query.",
                     f"accuracy {acc:.3f} on 1,000 held-out pairs, half of one template, half of two."))


if __name__ == "__main__":
    main()
