#!/usr/bin/env bash
# A/B of two Sluice builds serving /pii/extract, alternated in one run (A B B A ... so that a
# drift in the machine falls on both alike): each server alone on CPU 0 with one ONNX Runtime
# thread, the load generator on CPU 1 (closed loop, 32 clients, medium notes of ~120 tokens),
# the model in int8 as shipped. Prints one table row per run and the ratio of the medians.
#
#   scripts/served-ab.sh REV_A REV_B [rounds, default 3] [seconds per run, default 12]
#   (a REV is a git revision, or "work" for the working tree)
#
# QUANTIZE (int8, or off for float32) and PRIORITY_MIX (the load generator's -priority-mix, its
# own 80/20 mix when unset) set the load; ENV_A and ENV_B add settings to one side's server
# ("work work" with ENV_A="SLUICE_BATCH_MAX_PADDED_TOKENS=1024" compares a setting); PERF=DIR
# records each server's CPU profile (perf record -g, 8 s from the fourth second) as DIR/A-1.data...
set -euo pipefail
cd "$(dirname "$0")/.."
a="$1"; b="$2"; rounds="${3:-3}"; secs="${4:-12}"; port="${PORT:-18197}"
quantize="${QUANTIZE:-int8}"; prio=(); [ -z "${PRIORITY_MIX:-}" ] || prio=(-priority-mix "$PRIORITY_MIX")
read -ra env_A <<<"${ENV_A:-}"; read -ra env_B <<<"${ENV_B:-}"
work="$(mktemp -d)"; pid=""
trap '[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; } || true; rm -rf "$work"; git worktree prune' EXIT
make -s ort
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"
build() { # rev out
	if [ "$1" = work ]; then go build -o "$2" ./cmd/serve; return; fi
	git worktree add -q --detach "$work/src-$1" "$1"
	(cd "$work/src-$1" && go build -o "$2" ./cmd/serve)
	git worktree remove --force "$work/src-$1"
}
build "$a" "$work/A"; build "$b" "$work/B"
go build -o "$work/loadgen" ./cmd/loadgen
run() { # A|B round
	local -n extra="env_$1"
	taskset -c 0 env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_INTRA_OP_THREADS=1 SLUICE_GENERATE_MODEL=none \
		SLUICE_QUANTIZE="$quantize" SLUICE_QUANTIZE_CACHE_DIR="$work/cache" SLUICE_DATA_DIR="$work/data-$1" ${extra[@]+"${extra[@]}"} \
		"$work/$1" >"$work/$1.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 600); do
		kill -0 "$pid" 2>/dev/null || { cat "$work/$1.log" >&2; exit 1; } # it ended: the port taken, say
		curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.2
	done
	curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || { echo "server $1 never became ready" >&2; exit 1; }
	taskset -c 1 "$work/loadgen" -url "http://127.0.0.1:$port" -quiet -mode closed -workers 32 -mix pii=1 -lengths medium=1 \
		${prio[@]+"${prio[@]}"} -scrape-interval 0 -warmup 3s -duration "${secs}s" -json "$work/$1-$2.json" &
	local lg=$!
	if [ -n "${PERF:-}" ]; then
		mkdir -p "$PERF"; sleep 4 # the warmup and a second of load: profile the steady part
		perf record -q -F 2000 -g -p "$pid" -o "$PERF/$1-$2.data" -- sleep 8 >/dev/null 2>&1
	fi
	wait "$lg"
	kill -TERM "$pid"; wait "$pid" || true; pid=""
	python3 - "$work/$1-$2.json" "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"| {sys.argv[3]} | {sys.argv[2]} | {s['goodput']['rps']:.0f} | {s['latency_ms']['p50']:.1f} | {s['latency_ms']['p99']:.1f} |")
PY
}
echo "| round | build | goodput/s | p50 ms | p99 ms |"
echo "|---|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then run A "$r"; run B "$r"; else run B "$r"; run A "$r"; fi
done
python3 - "$work" "$rounds" <<'PY'
import json, sys, statistics
w, n = sys.argv[1], int(sys.argv[2])
med = {k: statistics.median(json.load(open(f"{w}/{k}-{r}.json"))["goodput"]["rps"] for r in range(1, n + 1)) for k in "AB"}
print(f"median goodput A {med['A']:.0f}/s, B {med['B']:.0f}/s: A/B {med['A'] / med['B']:.3f}")
PY
