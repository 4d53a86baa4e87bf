#!/usr/bin/env bash
# A stream of minutes, read slowly, on a slowed model (docs/BENCHMARKS.md, issue 38): tiny-lm
# at 700 ms a step (SLUICE_BENCH_STEP_DELAY_MS), n = 4 choices of 240 tokens, read by curl at
# 2 KB/s. It must arrive whole: every token event, [DONE], no error, although the HTTP write
# timeout (30 s) is far shorter than the stream. Prints one line of counts. About 3 minutes.
#
#   scripts/generate-long-stream.sh
set -euo pipefail
cd "$(dirname "$0")/.."
port="${PORT:-18184}"
url="http://127.0.0.1:$port"
out="${TMPDIR:-/tmp}/sluice-long-stream.out"
make -s ort
go build -o bin/sluice ./cmd/serve
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"
taskset -c 0 env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_BENCH_STEP_DELAY_MS=700 \
	SLUICE_GENERATE_TIMEOUT_MS=600000 ./bin/sluice >"${TMPDIR:-/tmp}/sluice-long-stream.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do curl -sf "$url/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
start=$(date +%s)
taskset -c 1 curl -sN --limit-rate 2k "$url/v1/completions" -H 'Content-Type: application/json' \
	-d '{"model":"m","prompt":"The patient was started on","max_tokens":240,"n":4,"temperature":0,"ignore_eos":true,"stream":true}' >"$out"
echo "seconds=$(($(date +%s) - start)) token_events=$(grep -c '^data: {"id"' "$out" || true)" \
	"done=$(grep -c '^data: \[DONE\]' "$out" || true) errors=$(grep -c '"error"' "$out" || true)" \
	"keepalives=$(grep -c '^: keep-alive' "$out" || true) bytes=$(wc -c <"$out")"
