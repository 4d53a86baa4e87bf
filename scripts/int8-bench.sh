#!/usr/bin/env bash
# float32 against int8 (SLUICE_QUANTIZE), one table per question, on this machine:
#   engine   go test -bench Int8Encoder ./quantize (shipped models, and SHAPED/enc-base if there)
#   served   /pii/extract closed loop, 32 clients, medium notes (~120 tokens); server on CPU 0
#            (one ONNX Runtime thread), load generator on CPU 1
#   decoder  tokens/s of SHAPED/dec-small (GPT-2-small-shaped) at 1 and 16 streams, 32 greedy
#            tokens each through /v1/completions, same pinning
#   memory   the server's resident size once ready, float32 and int8, per model (int8 on a
#            second start, which reads the cache as every start after the first does)
# SHAPED is a directory written by models/train/export_recipe_shaped.py (encoder enc-base,
# decoder dec-small; the decoder runs link models/pii into it for their entity endpoints);
# without it those rows are skipped. Not run by CI.
#
#   scripts/int8-bench.sh [SHAPED, default /tmp/shaped] [seconds per run, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
shaped="${1:-/tmp/shaped}"; secs="${2:-15}"
work="$(mktemp -d)"; port="${PORT:-18193}"; url="http://127.0.0.1:$port"
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT # no server outlives a failed run
make -s ort
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"
go build -o "$work/sluice" ./cmd/serve
go build -o "$work/loadgen" ./cmd/loadgen
cache="$work/cache"

only="${ONLY:-engine served memory decoder}" # a subset of the tables, e.g. ONLY=memory
if [[ " $only " == *" engine "* ]]; then
echo "## engine"
if [ -f "$shaped/enc-base/model.onnx" ]; then export SLUICE_BENCH_ENCODER_DIR="$shaped/enc-base"; fi
go test -run "^$" -bench Int8Encoder -benchtime "${BENCH_TIME:-3s}" -count "${COUNT:-1}" ./quantize | grep -E 'seq/s' |
	awk '{printf "%-60s %12s seq/s\n", $1, $(NF-1)}'
fi

start() { # log-name env... ; starts the server on CPU 0 and waits for /readyz
	local name=$1; shift
	taskset -c 0 env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=info SLUICE_INTRA_OP_THREADS=1 \
		SLUICE_QUANTIZE_CACHE_DIR="$cache" "$@" "$work/sluice" >"$work/$name.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 600); do
		kill -0 "$pid" 2>/dev/null || { echo "server $name exited:" >&2; tail -5 "$work/$name.log" >&2; exit 1; }
		curl -sf "$url/readyz" >/dev/null 2>&1 && return 0; sleep 0.2
	done
	echo "server $name did not get ready:" >&2; tail -5 "$work/$name.log" >&2; exit 1
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=""; }
rss() { awk '/VmRSS/ {printf "%.0f", $2/1024}' "/proc/$pid/status"; }
mem() { # label env...
	local label=$1; shift
	start "mem-$label" "$@"; [[ "$*" == *int8* ]] && { stop; start "mem-$label-again" "$@"; }
	echo "$label: $(rss) MB"; stop
}

if [[ " $only " == *" served "* ]]; then
echo "## served /pii/extract (32 clients, medium notes)"
for mode in off int8 off int8; do
	start "pii-$mode" SLUICE_GENERATE_MODEL=none SLUICE_QUANTIZE="$mode"
	taskset -c 1 "$work/loadgen" -url "$url" -quiet -mode closed -workers 32 -mix pii=1 -lengths medium=1 \
		-warmup 3s -duration "${secs}s" -json "$work/pii-$mode.json"
	stop
	python3 - "$work/pii-$mode.json" "$mode" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:>5}: goodput {s['goodput']['rps']:.0f}/s, p50 {s['latency_ms']['p50']:.1f} ms, p99 {s['latency_ms']['p99']:.1f} ms")
PY
done

fi
if [[ " $only " == *" memory "* ]]; then
echo "## memory (resident MB once ready; both entity endpoints on the model named)"
for model in pii clinical-ner; do
	for mode in off int8; do
		mem "$model $mode" SLUICE_GENERATE_MODEL=none SLUICE_PII_MODEL="$model" SLUICE_ANALYZE_MODEL="$model" SLUICE_QUANTIZE="$mode"
	done
done
if [ -f "$shaped/enc-base/model.onnx" ]; then
	for mode in off int8; do
		mem "enc-base $mode" SLUICE_MODELS_DIR="$shaped" SLUICE_GENERATE_MODEL=none SLUICE_PII_MODEL=enc-base \
			SLUICE_ANALYZE_MODEL=enc-base SLUICE_QUANTIZE="$mode" SLUICE_QUANTIZE_MIN_AGREEMENT=0
	done
fi

fi
if [[ " $only " == *" decoder "* ]] && [ -f "$shaped/dec-small/model.onnx" ]; then
	echo "## decoder dec-small (GPT-2-small-shaped), 32 greedy tokens a stream"
	ln -sfn "$PWD/models/pii" "$shaped/pii"
	for mode in off int8; do
		mem "dec-small $mode" SLUICE_MODELS_DIR="$shaped" SLUICE_GENERATE_MODEL=dec-small SLUICE_PII_MODEL=pii \
			SLUICE_ANALYZE_MODEL=pii SLUICE_QUANTIZE="pii=off,dec-small=$mode" SLUICE_QUANTIZE_MIN_AGREEMENT=0
	done
	for streams in 1 16; do
		for mode in off int8; do
			start "dec-$mode-$streams" SLUICE_MODELS_DIR="$shaped" SLUICE_GENERATE_MODEL=dec-small SLUICE_PII_MODEL=pii \
				SLUICE_ANALYZE_MODEL=pii SLUICE_QUANTIZE="pii=off,dec-small=$mode" SLUICE_QUANTIZE_MIN_AGREEMENT=0 SLUICE_GENERATE_MAX_RUNNING=64 \
				SLUICE_GENERATE_TIMEOUT_MS=600000 SLUICE_GENERATE_FIRST_TOKEN_TIMEOUT_MS=0 SLUICE_GENERATE_MAX_QUEUE_WAIT_MS=600000
			taskset -c 1 "$work/loadgen" -generate -url "$url" -quiet -mode closed -timeout 600s -warmup 3s \
				-duration "${secs}s" -json "$work/dec-$mode-$streams.json" -workers "$streams" -max-tokens 32
			stop
			# Tokens are counted as whole streams x 32 (ignore_eos makes every stream exactly that
			# long): dec-small's ids past its borrowed 5,000-entry tokenizer decode to no text, so
			# the harness's own token count (text-bearing events) undercounts, and by how much
			# depends on which ids each model happens to pick.
			python3 - "$work/dec-$mode-$streams.json" "$mode" "$streams" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"{sys.argv[3]:>2} streams {sys.argv[2]:>5}: {32 * s['good_streams_per_second']:.1f} tokens/s, stream p50 {s['served_stream_ms']['p50']:.0f} ms")
PY
		done
	done
fi
