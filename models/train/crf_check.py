"""Checks nets.Transitions.nll and nets.viterbi against enumerating every label path on
small random cases, and times nll on a full batch (the CRF must stay cheap beside the
network's step).

Usage: /usr/bin/python3 models/train/crf_check.py
"""

import itertools
import time

import numpy as np
import torch

import common
import nets


def path_score(em, scores, gaps, path):
    """Score of a full path (its first and last labels are the [CLS]/[SEP] O)."""
    s = 0.0
    for i in range(1, len(path)):
        s += scores[gaps[i], path[i - 1], path[i]] + (em[i, path[i]] if i < len(path) - 1 else 0.0)
    return s


def main():
    common.setup(1)
    rng = np.random.default_rng(1)
    n_labels = 4
    for case in range(20):
        # Every other case has two matrices only, as in the main training loop.
        classes = 3 - case % 2
        crf = nets.Transitions(n_labels, rng.normal(size=(classes, n_labels, n_labels)))
        scores = crf.scores.detach().numpy().astype(np.float64)
        s = int(rng.integers(3, 6))
        em = torch.tensor(rng.normal(size=(1, s, n_labels)), dtype=torch.float32)
        gaps = torch.tensor(rng.integers(0, classes, size=(1, s)))
        gaps[0, 1] = gaps[0, -1] = nets.SPACED  # around [CLS] and [SEP], as train_ner builds it
        tags = torch.tensor([[0] + list(rng.integers(0, n_labels, size=s - 2)) + [0]])
        mask = torch.ones((1, s), dtype=torch.bool)
        e, t = em[0].double().numpy(), gaps[0].numpy()
        all_scores = [path_score(e, scores, t, (0,) + mid + (0,))
                      for mid in itertools.product(range(n_labels), repeat=s - 2)]
        want = np.logaddexp.reduce(all_scores) - path_score(e, scores, t, tuple(tags[0].tolist()))
        got = crf.nll(em, tags, gaps, mask).item()
        if abs(got - want) > 1e-3:
            raise SystemExit(f"case {case}: nll {got}, enumeration {want}")
        mids = list(itertools.product(range(n_labels), repeat=s - 2))
        best = max(mids, key=lambda mid: path_score(e, scores, t, (0,) + mid + (0,)))
        if tuple(nets.viterbi(e[1:-1], t[1:-1], scores)) != best:
            raise SystemExit(f"case {case}: viterbi differs from the best enumerated path")
    crf = nets.Transitions(33, np.zeros((2, 33, 33)))  # the main training loop's two matrices
    em = torch.randn(32, 128, 33, requires_grad=True)
    tags = torch.randint(0, 33, (32, 128))
    gaps = torch.randint(0, 2, (32, 128))
    mask = torch.ones((32, 128), dtype=torch.bool)
    t0 = time.time()
    for _ in range(5):
        crf.nll(em, tags, gaps, mask).sum().backward()
    print(f"nll and viterbi agree with enumeration on 20 cases; nll forward+backward on "
          f"32 x 128 tokens: {(time.time() - t0) / 5 * 1000:.0f} ms")


if __name__ == "__main__":
    main()
