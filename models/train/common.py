"""Paths, seeds, the CPU's bfloat16 support and thread settings shared by the recipe's scripts."""

import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out")
GOLDEN = os.path.join(MODELS, "testdata", "golden")

# The shared vocabulary as build_tokenizer.py writes it (pii and tiny-lm use it as it is;
# clinical-ner extends it with whole words, see wordvec.py).
SHARED_TOKENIZER = os.path.join(MODELS, "pii", "tokenizer.json")


def keep_freed_memory():
    """Tells glibc's malloc to keep freed memory for reuse instead of handing large blocks
    back to the kernel. Its default serves every block over a (moving) threshold with its own
    mmap and unmaps it on free, and a training step frees and reallocates its activations,
    so each step would pay millions of page faults (steps ran 1.6-1.9x faster with this).
    Numerics are unchanged; only where memory comes from. Harmless without glibc."""
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


def native_bf16(cpuinfo="/proc/cpuinfo"):
    """Whether the CPU multiplies bfloat16 in hardware (AVX-512 BF16 or AMX). Without it,
    torch emulates bfloat16 autocast, 13-14x slower than float32 on an AVX2-only machine, so
    the recipe trains in float32 there."""
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        pass
    return False


def thread_layout():
    """(torch threads, BLAS threads): the layout that trained fastest on each of the two
    kinds of 2-core build machine the recipe has run on, told apart by bfloat16 hardware.
    On the AVX-512 kind, two torch threads over single-threaded BLAS (the other way round,
    OpenBLAS spent half the CPU time spinning); on the AVX2 kind, one torch thread over two
    BLAS threads (two over one runs each of OpenBLAS's matrix products on one core)."""
    return (2, 1) if native_bf16() else (1, 2)


def setup(seed, torch_threads=None):
    """Fixed seeds, malloc that keeps its memory (keep_freed_memory) and the thread layout of
    thread_layout(), or torch_threads torch threads when given (a process that shares the
    machine with another, as train_ner.py's members do). OpenBLAS reads its thread count
    when it loads, so run.sh exports it from thread_layout() before Python starts; the
    default here covers scripts run by hand."""
    keep_freed_memory()
    default_threads, blas_threads = thread_layout()
    torch_threads = torch_threads or default_threads
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(blas_threads))
    import numpy as np
    import torch

    torch.set_num_threads(torch_threads)
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


def threads_line():
    """The thread layout in effect, as the model cards quote it."""
    import torch
    return f"{torch.get_num_threads()} torch thread{'s' if torch.get_num_threads() != 1 else ''}, " \
           f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"
