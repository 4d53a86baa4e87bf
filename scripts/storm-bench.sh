#!/usr/bin/env bash
# A storm of clients that resend at once, ignoring Retry-After, beside 16 closed-loop streams
# on /v1/completions (128 tokens each), against the same 16 alone: what refusals cost the work
# that is served. The server (tiny-lm, one ONNX Runtime thread) alone on CPU 0, both load
# generators on CPU 1; alone and storm alternated. A storm client is the load generator's
# closed loop, which sends its next stream the moment one is refused.
#
#   scripts/storm-bench.sh [rounds, default 2] [seconds, default 15] [storm clients, default 300]
#   (SERVER_BIN: a server binary to run instead of this tree's build, for a before/after)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-2}"; secs="${2:-15}"; storm="${3:-300}"; port="${PORT:-18198}"; url="http://127.0.0.1:$port"
work="$(mktemp -d)"; pid=""; spid=""
trap 'for p in $pid $spid; do kill "$p" 2>/dev/null || true; done; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
make -s ort
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"
if [ -n "${SERVER_BIN:-}" ]; then cp "$SERVER_BIN" "$work/sluice"; else go build -o "$work/sluice" ./cmd/serve; fi
go build -o "$work/loadgen" ./cmd/loadgen
taskset -c 0 env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_INTRA_OP_THREADS=1 SLUICE_DATA_DIR="$work/data" \
	"$work/sluice" >"$work/sluice.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
	kill -0 "$pid" 2>/dev/null || break
	curl -sf "$url/readyz" >/dev/null 2>&1 && break; sleep 0.2
done
curl -sf "$url/readyz" >/dev/null || { cat "$work/sluice.log" >&2; exit 1; }
gen() { # workers warm-up-seconds seconds json
	taskset -c 1 "$work/loadgen" -url "$url" -quiet -generate -mode closed -workers "$1" -max-tokens 128 \
		-scrape-interval 0 -warmup "${2}s" -duration "${3}s" -drain 10s -json "$4"
}
echo "| round | run | the 16: good tokens/s | storm: good tokens/s | storm refusals/s | total ÷ the 16 alone |"
echo "|---|---|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
	gen 16 3 "$secs" "$work/alone-$r.json"
	# The storm starts 3 s before the 16 and warms up 3 s longer, so both measure the same
	# window.
	gen "$storm" 6 "$secs" "$work/storm-$r.json" &
	spid=$!
	sleep 3
	gen 16 3 "$secs" "$work/beside-$r.json"
	wait "$spid"; spid=""
	python3 - "$work" "$r" <<'PY'
import json, sys
w, r = sys.argv[1], sys.argv[2]
alone = json.load(open(f"{w}/alone-{r}.json"))
beside = json.load(open(f"{w}/beside-{r}.json"))
storm = json.load(open(f"{w}/storm-{r}.json"))
refused = sum(storm["refusals"].values()) / storm["duration_s"]
a, b, s = alone["good_tokens_per_second"], beside["good_tokens_per_second"], storm["good_tokens_per_second"]
print(f"| {r} | alone | {a:.0f} | | | |")
print(f"| {r} | storm of {storm['workers']} | {b:.0f} | {s:.0f} | {refused:.0f} | {(b + s) / a:.2f} |")
PY
done
