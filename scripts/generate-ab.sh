#!/usr/bin/env bash
# A/B of generation throughput: the server built from a base revision against the working
# tree, on the generation bench's closed loop (tiny-lm, 64 greedy tokens a stream, ignore_eos,
# through /v1/completions), alternating the two servers so that drift hits both. The server
# runs on CPU 0, the load generator on CPU 1. Prints tokens/s of whole streams and TTFT p50 per
# run, then the medians and their ratio. Run it on an otherwise idle machine. ENV_BASE and
# ENV_TREE add settings to one side's server (BASE_REV HEAD with
# ENV_TREE="SLUICE_GENERATE_STREAM_INTERVAL=4" compares a setting). BESIDE is a command run on
# CPU 1 beside the load for the run's length, given the server's URL and the seconds
# (BESIDE="python3 scripts/hostile-constraints.py" adds clients whose every answer's masks are new).
#
#   scripts/generate-ab.sh BASE_REV [pairs, default 6] [streams, default 16] [seconds, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:?base revision}"; pairs="${2:-6}"; streams="${3:-16}"; secs="${4:-15}"
read -ra env_base <<<"${ENV_BASE:-}"; read -ra env_tree <<<"${ENV_TREE:-}"
work="$(mktemp -d)"; port="${PORT:-18191}"; url="http://127.0.0.1:$port"
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
make -s ort
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"
git worktree add --detach "$work/base" "$base" >/dev/null
(cd "$work/base" && go build -o "$work/sluice-base" ./cmd/serve)
go build -o "$work/sluice-tree" ./cmd/serve
go build -o "$work/loadgen" ./cmd/loadgen
run() { # side rep
	local -n extra="env_$1"
	taskset -c 0 env ${extra[@]+"${extra[@]}"} SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_INTRA_OP_THREADS=1 \
		SLUICE_GENERATE_QUEUE_SIZE=128 SLUICE_GENERATE_MAX_QUEUE_WAIT_MS=600000 SLUICE_GENERATE_TIMEOUT_MS=600000 \
		SLUICE_GENERATE_FIRST_TOKEN_TIMEOUT_MS=0 SLUICE_GENERATE_MAX_RUNNING=64 "$work/sluice-$1" >"$work/$1-$2.log" 2>&1 &
	local pid=$!
	for _ in $(seq 1 300); do curl -sf "$url/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
	local beside=""
	if [ -n "${BESIDE:-}" ]; then
		taskset -c 1 $BESIDE "$url" "$((secs + 3))" 2>>"$work/beside-$1.log" & beside=$!
	fi
	taskset -c 1 "$work/loadgen" -generate -url "$url" -quiet -mode closed -timeout 600s -warmup 3s \
		-duration "${secs}s" -json "$work/$1-$2.json" -workers "$streams" -max-tokens 64
	[ -z "$beside" ] || wait "$beside" || true
	kill -TERM "$pid"; wait "$pid" || true
}
for rep in $(seq 1 "$pairs"); do run base "$rep"; run tree "$rep"; done
python3 - "$work" "$pairs" <<'PY'
import json, statistics, sys
work, pairs = sys.argv[1], int(sys.argv[2])
tps = {"base": [], "tree": []}
print("| pair | base tokens/s | tree tokens/s | TTFT p50 ms base / tree | inter-token p50 / p99 ms base | tree |")
print("|---|---|---|---|---|---|")
for r in range(1, pairs + 1):
    b = json.load(open(f"{work}/base-{r}.json")); t = json.load(open(f"{work}/tree-{r}.json"))
    tps["base"].append(b["good_tokens_per_second"]); tps["tree"].append(t["good_tokens_per_second"])
    print(f"| {r} | {b['good_tokens_per_second']:,.0f} | {t['good_tokens_per_second']:,.0f} | "
          f"{b['time_to_first_token_ms']['p50']:.1f} / {t['time_to_first_token_ms']['p50']:.1f} | "
          f"{b['inter_token_ms']['p50']:.2f} / {b['inter_token_ms']['p99']:.2f} | {t['inter_token_ms']['p50']:.2f} / {t['inter_token_ms']['p99']:.2f} |")
mb, mt = statistics.median(tps["base"]), statistics.median(tps["tree"])
for side in ("base", "tree"):
    try:
        print(side + ":", open(f"{work}/beside-{side}.log").read().strip().replace("\n", "; "))
    except FileNotFoundError:
        pass
print(f"\nmedian base {mb:,.0f}, tree {mt:,.0f}, tree/base {mt/mb:.3f}")
PY
