"""Paths, seeds and thread settings shared by the recipe's scripts."""

import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
GOLDEN = os.path.join(MODELS, "testdata", "golden")

VOCAB_SIZE = 5000
VOCAB_DOCS = 20000
VOCAB_SEED = 11


def keep_freed_memory():
    """Tells glibc's malloc to keep freed memory for reuse instead of handing large blocks
    back to the kernel. Its default serves every block over a (moving) threshold with its own
    mmap and unmaps it on free, and a training step frees and reallocates its activations,
    so each step paid millions of page faults: step_bench.py measured 1.6-1.9x the steps per
    second with this (see README.md). Numerics are unchanged; only where memory comes from.
    Harmless where it does not apply (no glibc)."""
    import ctypes
    import ctypes.util
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
    libc.mallopt(m_mmap_threshold, 1 << 30)
    libc.mallopt(m_trim_threshold, 1 << 31)
    libc.mallopt(m_top_pad, 256 << 20)


def setup(seed):
    """Fixed seeds, malloc that keeps its memory (keep_freed_memory) and the thread layout
    that is fastest on 2 cores: two torch threads over single-threaded BLAS (1.2-1.6x the
    steps per second of one torch thread over two BLAS threads, whose spinning took half
    the CPU time as system time)."""
    keep_freed_memory()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import numpy as np
    import torch

    torch.set_num_threads(2)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(GOLDEN, exist_ok=True)


def base_alphabet():
    """Characters every vocabulary carries even if training text lacks them."""
    chars = [chr(c) for c in range(0x21, 0x7F)]
    chars += [chr(c) for c in range(0xC0, 0x180) if chr(c).isalpha()]
    chars += list("°µ±×÷•–—‘’“”…€£")
    return "".join(chars)
