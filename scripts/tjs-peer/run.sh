#!/usr/bin/env bash
# Served /pii/extract: Sluice (float32 and int8) against a transformers.js server (server.mjs)
# of the same pii graph, float32 and, as the fair row, the very int8 file Sluice serves
# (transformers.js loads it as its q8 model). Same note mix and load for all: the load
# generator's closed loop, 32 clients, medium notes (~120 tokens) or, with LENGTHS=short, short
# ones (~20 tokens); each server on CPU 0 with one ONNX Runtime thread, the load generator on
# CPU 1. Every request is interactive (PRIORITY_MIX, as the load generator's -priority-mix): the
# peer has no classes, and under the load generator's own 80/20 mix Sluice's p99 is its bulk
# requests', held back for the interactive ones by design. Not run by CI.
#
#   scripts/tjs-peer/run.sh [seconds per run, default 15]   (NODE_MODULES: where to install)
#   LENGTHS=short scripts/tjs-peer/run.sh 15                 (the short-note load)
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-15}"; lengths="${LENGTHS:-medium}"; prio="${PRIORITY_MIX:-interactive=1}"; port="${PORT:-18195}"; url="http://127.0.0.1:$port"
. scripts/tjs-peer/common.sh

# The peer's copy of the model: transformers.js reads onnx/model.onnx (fp32) and
# onnx/model_quantized.onnx (q8), and knows the architecture by a model_type of its own.
peer="$work/models/pii"; mkdir -p "$peer/onnx"
cp models/pii/tokenizer.json "$peer/"
cp models/pii/model.onnx "$peer/onnx/model.onnx"
python3 - models/pii/config.json "$peer/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["model_type"], c["architectures"] = "bert", ["BertForTokenClassification"]
json.dump(c, open(sys.argv[2], "w"))
PY
echo '{"model_max_length": 128}' > "$peer/tokenizer_config.json"

load() { # name
	taskset -c 1 "$work/loadgen" -url "$url" -quiet -mode closed -workers 32 -mix pii=1 -lengths "$lengths=1" -priority-mix "$prio" \
		-scrape-interval 0 -warmup 3s -duration "${secs}s" -json "$work/$1.json"
	python3 - "$work/$1.json" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"| {sys.argv[2]} | {s['goodput']['rps']:.0f} | {s['latency_ms']['p50']:.1f} | {s['latency_ms']['p99']:.1f} | {s['served']['count']} |")
PY
}
sluice() { # mode
	taskset -c 0 env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_INTRA_OP_THREADS=1 SLUICE_GENERATE_MODEL=none \
		SLUICE_QUANTIZE="$1" SLUICE_QUANTIZE_CACHE_DIR="$work/cache" "$work/sluice" >"$work/sluice-$1.log" 2>&1 &
	pid=$!; wait_ready "sluice $1"; load "Sluice, $1"; kill -TERM "$pid"; wait "$pid" || true; pid=""
}
peer() { # dtype
	taskset -c 0 node "$nm/server.mjs" "$peer" "$port" "$1" >"$work/peer-$1.log" 2>&1 &
	pid=$!; wait_ready "peer $1"; load "transformers.js, $1"; kill -TERM "$pid"; wait "$pid" || true; pid=""
}
echo "| server | goodput/s | p50 ms | p99 ms | served |"
echo "|---|---|---|---|---|"
peer fp32
sluice off
sluice int8
# The int8 graph Sluice served (its cache holds the pii and clinical-ner rewrites; pii's is the one
# whose source is pii's model.onnx) becomes the peer's q8 file.
for f in "$work"/cache/*.int8.onnx; do
	if grep -q "$(sha256sum models/pii/model.onnx | cut -d' ' -f1)" "$f.json"; then cp "$f" "$peer/onnx/model_quantized.onnx"; fi
done
peer q8
