"""Times training steps of the token classifier (train_ner.HP) under one thread layout, for choosing the
layout common.setup uses. Alternate the layouts in one session; these machines are noisy.

Usage: OPENBLAS_NUM_THREADS=B /usr/bin/python3 models/train/step_bench.py TORCH_THREADS [default-malloc] [bf16]
  default-malloc leaves glibc's malloc as it is instead of common.keep_freed_memory();
  bf16 runs the forward pass under bfloat16 autocast, as train_ner.py does.
"""

import os
import sys
import time

import torch

import common
import nets
import train_ner


def main():
    tuned = "default-malloc" not in sys.argv[2:]
    bf16 = "bf16" in sys.argv[2:]
    if tuned:
        common.keep_freed_memory()
    torch.set_num_threads(int(sys.argv[1]))
    model = nets.ConvTagger(5000, 33, **train_ner.HP)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 5000, (32, 100), generator=g)
    mask = torch.ones_like(ids)
    labels = torch.randint(0, 33, (32, 100), generator=g)
    lossf = torch.nn.CrossEntropyLoss()

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = model(ids, mask)
        loss = lossf(logits.float().reshape(-1, 33), labels.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(5):
        step()
    t = time.time()
    for _ in range(40):
        step()
    print(f"torch threads {sys.argv[1]}, OPENBLAS_NUM_THREADS {os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"malloc {'keeps freed memory' if tuned else 'default'}, {'bf16 autocast' if bf16 else 'float32'}: "
          f"{(time.time() - t) / 40 * 1000:.0f} ms/step")


if __name__ == "__main__":
    main()
