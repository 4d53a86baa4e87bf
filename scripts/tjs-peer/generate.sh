#!/usr/bin/env bash
# Generation against transformers.js: Sluice's /v1/completions streams (continuous batching)
# and a transformers.js server of the same tiny-lm graph (server.mjs, task "generate": each
# request runs the model's own generate() alone), both driven by the load generator's closed
# loop of N streams of greedy tokens with ignore_eos, at 1, 4, 16 and 64 streams. Each server
# on CPU 0 with one ONNX Runtime thread, the load generator on CPU 1; the two servers
# alternate at each stream count, PAIRS times. Not run by CI.
#
#   scripts/tjs-peer/generate.sh [seconds per run, default 12] [tokens per stream, default 64]
#   PAIRS=2 STREAMS="16" scripts/tjs-peer/generate.sh 12 64      (NODE_MODULES: where to install)
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-12}"; tokens="${2:-64}"; pairs="${PAIRS:-1}"; streams="${STREAMS:-1 4 16 64}"
port="${PORT:-18196}"; url="http://127.0.0.1:$port"
. scripts/tjs-peer/common.sh

# The peer reads the graph from onnx/model.onnx; the rest of tiny-lm's directory as it is.
peer="$work/models/tiny-lm"; mkdir -p "$peer/onnx"
cp models/tiny-lm/config.json models/tiny-lm/generation_config.json models/tiny-lm/tokenizer.json \
	models/tiny-lm/tokenizer_config.json "$peer/"
cp models/tiny-lm/model.onnx "$peer/onnx/model.onnx"

load() { # name streams
	taskset -c 1 "$work/loadgen" -generate -url "$url" -quiet -mode closed -timeout 600s -warmup 3s \
		-duration "${secs}s" -json "$work/$1.json" -workers "$2" -max-tokens "$tokens"
}
sluice() { # streams rep
	taskset -c 0 env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_INTRA_OP_THREADS=1 \
		SLUICE_GENERATE_QUEUE_SIZE=128 SLUICE_GENERATE_MAX_QUEUE_WAIT_MS=600000 SLUICE_GENERATE_TIMEOUT_MS=600000 \
		SLUICE_GENERATE_FIRST_TOKEN_TIMEOUT_MS=0 SLUICE_GENERATE_MAX_RUNNING=64 "$work/sluice" >"$work/sluice.log" 2>&1 &
	pid=$!; wait_ready sluice; load "sluice-$1-$2" "$1"; kill -TERM "$pid"; wait "$pid" || true; pid=""
}
peer() { # streams rep
	taskset -c 0 node "$nm/server.mjs" "$peer" "$port" fp32 generate >"$work/peer.log" 2>&1 &
	pid=$!; wait_ready peer; load "peer-$1-$2" "$1"; kill -TERM "$pid"; wait "$pid" || true; pid=""
}
for n in $streams; do
	for rep in $(seq 1 "$pairs"); do
		if [ $((rep % 2)) = 1 ]; then peer "$n" "$rep"; sluice "$n" "$rep"; else sluice "$n" "$rep"; peer "$n" "$rep"; fi
	done
done
python3 - "$work" "$pairs" $streams <<'PY'
import json, statistics, sys
work, pairs, streams = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def get(side, n, r): return json.load(open(f"{work}/{side}-{n}-{r}.json"))
print("| streams | transformers.js tokens/s | Sluice tokens/s | Sluice ÷ peer | TTFT p50 ms, peer / Sluice | inter-token p50 ms, peer / Sluice |")
print("|---|---|---|---|---|---|")
for n in streams:
    p = [get("peer", n, r) for r in range(1, pairs + 1)]
    s = [get("sluice", n, r) for r in range(1, pairs + 1)]
    pt = statistics.median(x["good_tokens_per_second"] for x in p)
    st = statistics.median(x["good_tokens_per_second"] for x in s)
    ttft = lambda xs: statistics.median(x["time_to_first_token_ms"]["p50"] for x in xs)
    gap = lambda xs: statistics.median(x["inter_token_ms"]["p50"] for x in xs)
    print(f"| {n} | {pt:,.0f} | {st:,.0f} | {st/pt:.2f} | {ttft(p):.1f} / {ttft(s):.1f} | {gap(p):.2f} / {gap(s):.2f} |")
PY
