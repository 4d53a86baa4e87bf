#!/usr/bin/env bash
# Rebuilds the shipped default models from scratch (see README.md); what each model is trained
# from and how, step counts included, is in config.py.
#   bash models/train/run.sh            # tokenizer + clinical-ner + pii + tiny-lm + embed-mini and rerank-mini
#   bash models/train/run.sh pii        # one model, with the committed tokenizer.json
#   bash models/train/run.sh tokenizer  # only the shared vocabulary / tokenizer.json files
# SKIP_APT=1 skips the apt-get step (packages already installed).
set -euo pipefail
cd "$(dirname "$0")"

if [ "${SKIP_APT:-0}" != "1" ]; then
  # A fresh machine has no package lists yet; install fails without them.
  apt-get update -qq
  apt-get install -y python3-torch python3-onnx python3-numpy libopenblas0-pthread
fi

# Debian's packages live under /usr/bin/python3, not a pyenv/venv python.
PY=/usr/bin/python3
# OpenBLAS reads its thread count when it loads, so it is set here, from the layout measured
# fastest on this kind of CPU (common.thread_layout; common.setup sets torch's side).
OPENBLAS_NUM_THREADS="$($PY -c 'import common; print(common.thread_layout()[1])')"
export OPENBLAS_NUM_THREADS
export PYTHONHASHSEED=0

what="${1:-all}"
case "$what" in
  all)
    $PY build_tokenizer.py
    $PY train_ner.py clinical-ner
    $PY train_ner.py pii
    $PY train_lm.py
    $PY export_inplace.py ../tiny-lm
    $PY train_embed.py
    ;;
  tokenizer) $PY build_tokenizer.py ;;
  clinical-ner) $PY train_ner.py clinical-ner ;;
  pii) $PY train_ner.py pii ;;
  tiny-lm) $PY train_lm.py && $PY export_inplace.py ../tiny-lm ;;
  embed) $PY train_embed.py ;;
  *)
    echo "usage: run.sh [all|tokenizer|clinical-ner|pii|tiny-lm|embed]" >&2
    exit 2
    ;;
esac
