"""The small networks: the token classifier (ConvTagger: dilated convolutions under a
per-word output layer; WordVecTagger, the same over word vectors; Averaged, the mean of
several), a GPT-2-shaped causal LM with a key/value cache, and the CRF layer with its
Viterbi decoder. All are written so that torch.onnx.export (tracing) keeps batch and
sequence axes dynamic: positions come from cumsum over masks, never from Python ints.
"""

import math

import torch
from torch import nn


def init_weights(module):
    """GPT-2/BERT-style init: small normal weights, zero biases."""
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)

    def split(self, x):
        # [b, s, h*d] -> [b, h, s, d]
        b = x.shape[0]
        return x.reshape(b, -1, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, bias, past_k=None, past_v=None):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = self.split(q), self.split(k), self.split(v)
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + bias
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2)
        y = y.reshape(x.shape[0], -1, self.heads * self.head_dim)
        return self.out(y), k, v


class Block(nn.Module):
    """Pre-norm transformer block."""

    def __init__(self, hidden, heads, ffn, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.att = SelfAttention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden)
        self.ff = nn.Sequential(nn.Linear(hidden, ffn), nn.GELU(), nn.Linear(ffn, hidden))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, bias, past_k=None, past_v=None):
        a, k, v = self.att(self.ln1(x), bias, past_k, past_v)
        x = x + self.drop(a)
        x = x + self.drop(self.ff(self.ln2(x)))
        return x, k, v


class WordTagger(nn.Module):
    """The output layer shared by the token classifiers: input_ids, attention_mask [b, s]
    int64 -> logits [b, s, 1 + 2 * types], from the hidden states a subclass's encode()
    gives.

    Labels are ordered O, B-T1, I-T1, B-T2, I-T2, ... The logits factorise
    into O / B / I scores and entity-type scores, both from the mean of the
    hidden states of the token's whole word (a word is a token that does not
    start with "##" plus the "##" tokens after it). The word's first token
    carries the decision; its "##" pieces can only be O or I of the same type
    (their B score is -1e4). So every piece of a word gets the same label,
    which a small model trained for minutes would otherwise not learn
    reliably: a held-out word split into unusual pieces came out as two
    entities, or half an entity.
    """

    def __init__(self, vocab, labels, hidden, continuation=None):
        super().__init__()
        self.types = (labels - 1) // 2
        self.tok = nn.Embedding(vocab, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.bio = nn.Linear(hidden, 3)
        self.typ = nn.Linear(hidden, self.types)
        cont = torch.zeros(vocab, dtype=torch.long)
        if continuation is not None:
            cont = torch.tensor([1 if c else 0 for c in continuation], dtype=torch.long)
        self.register_buffer("continuation", cont)

    def encode(self, input_ids, attention_mask, sub=None):
        raise NotImplementedError

    def embed(self, input_ids, attention_mask, sub=None):
        """The encoder's input vectors [b, s, hidden]. sub (training only, bool [b, s]) is
        for networks that can read a token from other pieces (WordVecTagger)."""
        return self.tok(input_ids)

    def continues(self, input_ids):
        """1 where a token continues the word before it ("##"), else 0, int64 [b, s]."""
        return self.continuation[input_ids]

    def forward(self, input_ids, attention_mask, sub=None):
        h = self.ln(self.encode(input_ids, attention_mask, sub))
        # A padded slot never continues a word, whatever id it holds, so a real word's
        # pooled state cannot take in padding.
        cont = self.continues(input_ids) * attention_mask.to(torch.long)
        word = torch.cumsum(1 - cont, dim=1)
        same = (word[:, :, None] == word[:, None, :]).to(h.dtype)
        pooled = torch.matmul(same, h) / same.sum(-1, keepdim=True)
        typ = self.typ(pooled)
        # One O/B/I decision per word: the word's first token carries it, its "##"
        # pieces can only be O or I of the same type, so a word is never split
        # between entities.
        bio = self.bio(pooled)
        first = (1 - cont).to(h.dtype)[:, :, None]
        b_w, i_w = bio[:, :, 1:2], bio[:, :, 2:3]
        b_scores = first * b_w + (1 - first) * -1e4 + typ
        i_scores = first * i_w + (1 - first) * torch.maximum(b_w, i_w) + typ
        pairs = torch.stack([b_scores, i_scores], dim=-1).flatten(2)
        return torch.cat([bio[:, :, 0:1], pairs], dim=-1)


class ConvBlock(nn.Module):
    """Pre-norm residual block: a dilated convolution over the sequence with a gated linear
    unit. Padded slots are zeroed before the convolution, so a real slot next to padding
    sees what it would see at the end of an unpadded row.

    The weights are one matrix over the kernel's taps laid side by side (`mix`: [kernel *
    hidden] -> [2 * hidden]), applied two equal ways. In eval mode (evaluation, goldens,
    the ONNX export) it is one matrix product over shifted copies of the sequence: no
    transposes, and ONNX Runtime runs it faster than the same weights as Conv nodes
    (docs/BENCHMARKS.md). In training it is conv1d over the same weights, which torch runs
    faster on the CPU. same_paths() checks that both give the same numbers."""

    def __init__(self, hidden, kernel, dilation):
        super().__init__()
        if kernel % 2 != 1:
            raise ValueError("ConvBlock needs an odd kernel, centred on each token")
        self.kernel, self.dilation = kernel, dilation
        self.ln1 = nn.LayerNorm(hidden)
        self.mix = nn.Linear(kernel * hidden, 2 * hidden)

    def forward(self, x, live):
        y = self.ln1(x) * live
        d, half = self.dilation, self.kernel // 2
        if self.training:
            # mix.weight [2h, k*h] as conv1d's [2h, h, k]: tap j's columns are j*h..(j+1)*h.
            w = self.mix.weight.view(self.mix.out_features, self.kernel, -1).transpose(1, 2)
            mixed = nn.functional.conv1d(y.transpose(1, 2), w, self.mix.bias, padding=half * d,
                                         dilation=d).transpose(1, 2)
        else:
            # Zeros on both ends; tap j of token t is token t + (j - kernel // 2) * dilation.
            s = y.shape[1]
            padded = nn.functional.pad(y, (0, 0, half * d, half * d))
            mixed = self.mix(torch.cat([padded[:, j * d:j * d + s] for j in range(self.kernel)], dim=-1))
        return x + nn.functional.glu(mixed, dim=-1)


class ConvTagger(WordTagger):
    """A stack of dilated convolutions (ConvBlock) under WordTagger's output layer. It
    has no position embeddings and no attention: each token sees a fixed neighbourhood,
    (kernel - 1) / 2 * sum(dilations) tokens either side, the same wherever it sits, so a
    pattern learnt in one template's layout carries over to any other's."""

    def __init__(self, vocab, labels, hidden=128, kernel=3, dilations=(1, 2, 4, 8, 1, 2, 4, 8), continuation=None):
        super().__init__(vocab, labels, hidden, continuation)
        # What config.json's sluice.encoder says of the network; ffn 0: no feed-forward layers.
        self.cfg = dict(kind="dilated_conv", hidden=hidden, kernel=kernel, dilations=list(dilations), ffn=0)
        self.blocks = nn.ModuleList([ConvBlock(hidden, kernel, d) for d in dilations])
        init_weights(self)

    def encode(self, input_ids, attention_mask, sub=None):
        live = attention_mask[:, :, None].to(self.tok.weight.dtype)
        x = self.embed(input_ids, attention_mask, sub)
        for blk in self.blocks:
            x = blk(x, live)
        return x


class WordVecTagger(ConvTagger):
    """ConvTagger over a vocabulary with whole-word entries that carry pretrained word
    vectors (wordvec.py). Only the shared WordPiece entries have learnt embeddings: a token
    is embedded as the mean of its first and last shared piece (a shared entry is both),
    plus a learnt projection of its word vector when it has one and is a whole word (the
    next token does not continue it). In training, a token that sub marks reads the
    pieces of its other cut (wordvec.Tables.sub_pieces) instead, with its vector. The
    tables are buffers in the storage types the export keeps (int8 vectors with float16
    row scales, int16 pieces, int32 rows) and are widened after the lookup, so the export
    stays small and the network reads exactly the numbers it is served with."""

    def __init__(self, vocab, labels, tables, continuation, hidden=128, **hp):
        super().__init__(tables.shared, labels, hidden=hidden, **hp)
        self.register_buffer("continuation", torch.tensor([1 if c else 0 for c in continuation], dtype=torch.int8))
        if len(continuation) != vocab or len(tables.rows) != vocab:
            raise ValueError("WordVecTagger: tables and continuation must cover the vocabulary")
        self.register_buffer("pieces", torch.tensor(tables.pieces))
        self.register_buffer("rows", torch.tensor(tables.rows))
        self.register_buffer("vq", torch.tensor(tables.vq))
        self.register_buffer("vscale", torch.tensor(tables.vscale))
        # Training only, so not exported: the word's other cut (wordvec.Tables.sub_pieces).
        self.register_buffer("sub_pieces", torch.tensor(tables.sub_pieces), persistent=False)
        self.vproj = nn.Linear(tables.vq.shape[1], hidden)
        init_weights(self.vproj)
        self.cfg["word_vectors"] = dict(shared=tables.shared, vocab=vocab, rows=int(tables.vq.shape[0]), dims=int(tables.vq.shape[1]))

    def continues(self, input_ids):
        return self.continuation[input_ids].long()

    def embed(self, input_ids, attention_mask, sub=None):
        p = self.pieces[input_ids].long()
        if sub is not None:
            p = torch.where(sub[..., None], self.sub_pieces[input_ids].long(), p)
        x = (self.tok(p[..., 0]) + self.tok(p[..., 1])) * 0.5
        r = self.rows[input_ids].long()
        vec = self.vq[r].float() * self.vscale[r].float()[..., None]
        # A padded slot never continues the word before it, whatever id it holds.
        nxt = self.continues(input_ids[:, 1:]) * attention_mask[:, 1:].to(torch.long)
        nxt = torch.cat([nxt, torch.zeros_like(input_ids[:, :1])], dim=1)
        whole = ((r > 0).long() * (1 - nxt)).to(x.dtype)[..., None]
        return x + self.vproj(vec) * whole


# WordVecTagger's buffers that come from the tokenizer's tables, not from training: an
# Averaged network's members hold one copy of them.
TABLE_BUFFERS = ("continuation", "pieces", "rows", "vq", "vscale", "sub_pieces")


class Averaged(nn.Module):
    """The mean of the logits of several networks of one shape, trained apart (another
    initialisation and batch order each, the same documents). Two networks so averaged
    score higher than either alone, as their errors differ. Members share the tokenizer's
    tables (TABLE_BUFFERS), so the export stores those once. To its caller it is one token
    classifier: same inputs, one logits output; the CRF scores are the members' mean."""

    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)
        first = members[0]
        for m in members[1:]:
            for name in TABLE_BUFFERS:
                if name in m._buffers and name in first._buffers:
                    m._buffers[name] = first._buffers[name]
        self.cfg = dict(first.cfg, members=len(members))

    def forward(self, input_ids, attention_mask, sub=None):
        out = self.members[0](input_ids, attention_mask, sub)
        for m in self.members[1:]:
            out = out + m(input_ids, attention_mask, sub)
        return out / len(self.members)


def same_paths(model, input_ids, attention_mask):
    """Whether a ConvTagger gives the same logits in training mode (conv1d) and in eval
    mode (the matrix product that is exported), on one float32 batch, up to float32
    rounding (relative, as the "##" pieces' B logits sit near -1e4); the model is left in
    eval mode. It has no dropout, so the two modes differ only in how ConvBlock computes."""
    with torch.no_grad():
        model.train()
        a = model(input_ids, attention_mask)
        model.eval()
        b = model(input_ids, attention_mask)
    return torch.allclose(a, b, rtol=1e-5, atol=1e-4)


class CausalLM(nn.Module):
    """GPT-2-shaped decoder with a KV cache.

    forward(input_ids [b, s], attention_mask [b, past+s], past: list of (k, v)
    [b, heads, past, head_dim]) -> logits [b, s, vocab], presents.
    Position ids are computed inside: cumsum(attention_mask) - 1 over the full
    past+current mask, the last s of them; left padding therefore works.
    """

    def __init__(self, vocab, hidden=128, layers=2, heads=4, ffn=512, max_pos=256, dropout=0.1):
        super().__init__()
        self.cfg = dict(vocab=vocab, hidden=hidden, layers=layers, heads=heads, ffn=ffn, max_pos=max_pos)
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(hidden, heads, ffn, dropout) for _ in range(layers)])
        self.ln = nn.LayerNorm(hidden)
        init_weights(self)

    def forward(self, input_ids, attention_mask, past):
        m = attention_mask.to(torch.int64)
        ones_q = torch.ones_like(input_ids[0])
        ones_k = torch.ones_like(m[0])
        past_len = ones_k.sum() - ones_q.sum()
        # query i sits at absolute slot past_len + i; it sees keys j <= that slot.
        q_idx = torch.cumsum(ones_q, 0) - 1 + past_len
        k_idx = torch.cumsum(ones_k, 0) - 1
        pos_all = (torch.cumsum(m, dim=1) - 1).masked_fill(m == 0, 1)
        pos = torch.index_select(pos_all, 1, q_idx)
        x = self.drop(self.tok(input_ids) + self.pos(pos))
        causal = k_idx[None, :] <= q_idx[:, None]
        allowed = causal[None, None, :, :] & (m[:, None, None, :] == 1)
        bias = (~allowed).to(x.dtype) * -1e9
        presents = []
        for i, blk in enumerate(self.blocks):
            pk, pv = past[i]
            x, k, v = blk(x, bias, pk, pv)
            presents.append((k, v))
        logits = torch.matmul(self.ln(x), self.tok.weight.t())
        return logits, presents


# The gap between two neighbouring tokens, which picks the CRF's transition matrix.
SPACED, TOUCHING, BREAK = 0, 1, 2
# A line break or tab between two tokens is a BREAK gap; any other whitespace is SPACED.
BREAK_CHARS = frozenset("\n\r\t\v\f\x85\u2028\u2029")


def gap_classes(offs, text):
    """The gap class of each token (offsets into text) with the token before it: TOUCHING
    when it starts where that one ends (the pieces of "555-0134"), BREAK when a line break
    or tab lies between them, SPACED otherwise and for the first token. The tokenizer drops
    whitespace, so the network cannot see a line break; the CRF can."""
    out = [SPACED] * len(offs)
    for i in range(1, len(offs)):
        end, start = offs[i - 1][1], offs[i][0]
        if end == start:
            out[i] = TOUCHING
        elif not BREAK_CHARS.isdisjoint(text[end:start]):
            out[i] = BREAK
    return out


class Transitions(nn.Module):
    """Linear-chain CRF transition scores over a token classifier's logits.

    scores[k, a, b] is added when label b follows label a across a gap of class k
    (gap_classes): SPACED, TOUCHING (no whitespace between, as in the pieces of
    "555-0134" or "ibuprofen.") or BREAK (a line break or tab between). Touching tokens
    almost never start a new entity of another type, while "Maria Lopez" is first_name
    then last_name across a space: one matrix could not say both. No entity of the corpus
    runs across a line break or a table's tab, while two list items, one per line, are
    two entities; the network cannot tell, as the tokenizer drops whitespace. A sequence
    starts and ends in O (the [CLS] and [SEP] slots).

    The module is not part of the exported graph: model.onnx keeps emitting per-token
    logits, and the scores ship in config.json for the server's Viterbi decoder.
    """

    def __init__(self, labels, init=None):
        super().__init__()
        start = torch.zeros(3, labels, labels) if init is None else torch.as_tensor(init, dtype=torch.float32)
        self.scores = nn.Parameter(start.clone())

    def nll(self, emissions, tags, gaps, mask):
        """Negative log-likelihood per sequence. emissions [b, s, L]; tags, gaps [b, s]
        int64 (tags of masked slots are ignored; a gap class indexes scores, which may
        hold fewer than three matrices if gaps never reach the others); mask [b, s] bool,
        True for real slots, which start at slot 0 and are contiguous. Slot 0 and the
        last real slot are the [CLS] and [SEP] slots: their emissions are replaced so
        that only O is possible."""
        b, s, n_labels = emissions.shape
        rows = torch.arange(b)
        last = mask.sum(1) - 1
        fixed = torch.full((n_labels,), -1e4, dtype=emissions.dtype)
        fixed[0] = 0.0
        em = emissions.clone()
        em[:, 0] = fixed
        em[rows, last] = fixed
        tags = tags.clamp(min=0)
        # The gold path's score in one gather each (indexing inside the loop would
        # make autograd allocate a full-size gradient per step).
        gold_em = em.gather(2, tags[:, :, None]).squeeze(2)
        gold_tr = self.scores[gaps[:, 1:], tags[:, :-1], tags[:, 1:]]
        gold = gold_em[:, 0] + ((gold_em[:, 1:] + gold_tr) * mask[:, 1:]).sum(1)
        # The forward algorithm in probability space, renormalised at every step: one
        # small matrix product per token instead of a log-sum-exp over [b, L, L] keeps
        # the CRF's cost well below the network's. A padded slot gets a flat emission
        # and keeps alpha as it was. unbind once: slicing inside the loop would make
        # autograd allocate a full-size gradient for every slice.
        live = mask[:, :, None]
        top = torch.where(live, em, torch.zeros_like(em)).max(dim=2, keepdim=True).values
        probs = torch.where(live, (em - top).exp(), torch.ones_like(em)).unbind(1)
        classes = self.scores.shape[0]
        every = torch.cat([self.scores[k].exp() for k in range(classes)], dim=1)  # [L, classes * L]
        pick = gaps[:, :, None, None].expand(b, s, 1, n_labels).unbind(1)
        lives = live.unbind(1)
        alpha = probs[0]
        norms = [alpha.sum(1, keepdim=True)]
        alpha = alpha / norms[0]
        for i in range(1, s):
            q = (alpha @ every).view(b, classes, n_labels)
            a = q.gather(1, pick[i]).squeeze(1) * probs[i]
            a = torch.where(lives[i], a, alpha)
            norms.append(a.sum(1, keepdim=True))
            alpha = a / norms[-1]
        log_z = top.squeeze(2).mul(mask).sum(1) + torch.cat(norms, dim=1).log().sum(1)
        return log_z - gold


def viterbi(emissions, gaps, scores):
    """Best label path for one sequence of content tokens (no [CLS]/[SEP] rows), starting
    and ending in O as the CRF was trained. emissions [n, L] and scores [3, L, L] are
    numpy arrays; gaps[i] is the gap class between token i - 1 and token i (gaps[0] is
    ignored)."""
    import numpy as np
    # float64, as the Go decoder adds them, so both pick the same path.
    emissions = np.asarray(emissions, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)
    n = len(emissions)
    if n == 0:
        return []
    score = scores[0, 0] + emissions[0]
    back = []
    for i in range(1, n):
        cand = score[:, None] + scores[gaps[i]]
        best = cand.argmax(0)
        back.append(best)
        score = cand[best, np.arange(len(best))] + emissions[i]
    score = score + scores[0, :, 0]
    path = [int(score.argmax())]
    for best in reversed(back):
        path.append(int(best[path[-1]]))
    return path[::-1]


class Encoder(nn.Module):
    """A bidirectional transformer encoder: input_ids, attention_mask [b, s] int64 ->
    last_hidden_state [b, s, hidden] (embed-mini; pooled outside the graph, as
    sentence-transformers pools). Positions count real tokens (cumsum of the mask)."""

    def __init__(self, vocab, hidden, layers, heads, ffn, max_pos, dropout):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.blocks = nn.ModuleList([Block(hidden, heads, ffn, dropout) for _ in range(layers)])
        self.ln = nn.LayerNorm(hidden)
        self.drop = nn.Dropout(dropout)
        init_weights(self)

    def forward(self, input_ids, attention_mask):
        pos = (torch.cumsum(attention_mask, dim=1) - 1).clamp(min=0)
        x = self.drop(self.tok(input_ids) + self.pos(pos))
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -1e4
        for b in self.blocks:
            x, _, _ = b(x, bias)
        return self.ln(x)


class CrossEncoder(nn.Module):
    """A pair scorer over one Encoder pass of [CLS] query [SEP] passage [SEP]: input_ids,
    attention_mask [b, s] -> logits [b, 1], the scaled cosine of the query's and the passage's
    mean token states (rerank-mini). Both parts are read together, so each attends to the
    other; it starts from embed-mini's encoder, which knows what lines are alike."""

    def __init__(self, encoder, cls_id, sep_id):
        super().__init__()
        self.enc = encoder
        self.cls_id, self.sep_id = cls_id, sep_id
        self.scale = nn.Parameter(torch.tensor(10.0))
        self.bias = nn.Parameter(torch.tensor(-5.0))

    def forward(self, input_ids, attention_mask):
        h = self.enc(input_ids, attention_mask)
        sep = (input_ids == self.sep_id).to(torch.long)
        part = torch.cumsum(sep, dim=1) - sep  # 0 up to the first [SEP], 1 after it
        real = attention_mask.to(h.dtype) * (1 - sep.to(h.dtype)) * (input_ids != self.cls_id).to(h.dtype)
        qm = (real * (part == 0).to(h.dtype))[:, :, None]
        pm = (real * (part == 1).to(h.dtype))[:, :, None]
        q = (h * qm).sum(1) / qm.sum(1).clamp(min=1.0)
        p = (h * pm).sum(1) / pm.sum(1).clamp(min=1.0)
        cos = torch.nn.functional.cosine_similarity(q, p, dim=-1)
        return (self.scale * cos + self.bias)[:, None]
