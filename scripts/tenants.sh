#!/usr/bin/env bash
# Two tenants, one flooding (issue 39): each has a budget of BUDGET requests a second in the
# key file; the quiet one offers QUIET a second alone, beside the other tenant at its budget,
# and beside it flooding at ten times its budget. Between the last two the quiet tenant's
# goodput and p99 should not move: what the flood sends past its budget is refused in
# microseconds, and what it may send it sends in both. The server runs on
# CPU 0 and the harness on CPU 1 (taskset), since they share this machine's two cores. Writes
# the JSON summaries and SUMMARY.md to $OUT (default docs/bench/tenants).
#
#   scripts/tenants.sh [seconds per run, default 30]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-30}"
budget="${BUDGET:-50}"
quiet="${QUIET:-40}"
out="${OUT:-docs/bench/tenants}"
port="${PORT:-18081}"
url="http://127.0.0.1:$port"
mkdir -p "$out" bin
make -s ort
go build -o bin/sluice ./cmd/serve
go build -o bin/loadgen ./cmd/loadgen
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"

keys="$(mktemp)"
trap 'rm -f "$keys"' EXIT
hash() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
rpm=$((budget * 60))
cat >"$keys" <<JSON
[{"id":"quiet","key_hash":"sha256:$(hash quiet-key-bench)","tenant":"quiet","scopes":"*","budget":{"requests_per_minute":$rpm,"request_burst":$budget}},
 {"id":"flood","key_hash":"sha256:$(hash flood-key-bench)","tenant":"flood","scopes":"*","budget":{"requests_per_minute":$rpm,"request_burst":$budget}}]
JSON

server_pid=""
start_server() {
	env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_INTRA_OP_THREADS=1 SLUICE_GENERATE_MODEL=none \
		SLUICE_API_KEYS_FILE="$keys" taskset -c 0 ./bin/sluice >"$out/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 1 300); do
		curl -sf "$url/readyz" >/dev/null 2>&1 && return 0
		kill -0 "$server_pid" 2>/dev/null || { cat "$out/server.log"; return 1; }
		sleep 0.2
	done
	echo "server not ready" >&2
	return 1
}
stop_server() { kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
trap 'stop_server; rm -f "$keys"' EXIT
load() { # name, key, rate, extra flags...
	local name="$1" key="$2" rate="$3"; shift 3
	taskset -c 1 ./bin/loadgen -url "$url" -quiet -mode open -rate "$rate" -api-key "$key" -lengths short=0.7,medium=0.3 \
		-duration "${secs}s" -warmup 5s -json "$out/$name.json" "$@"
}

start_server
echo "== the quiet tenant alone, $quiet req/s (budget $budget)"
load quiet-alone quiet-key-bench "$quiet"
echo "== the quiet tenant beside the other at its budget, $budget req/s"
load other-at-budget flood-key-bench "$budget" &
other=$!
load quiet-beside-budget quiet-key-bench "$quiet"
wait "$other"
echo "== the quiet tenant beside a flood of $((budget * 10)) req/s (10x its budget)"
load flood flood-key-bench "$((budget * 10))" -max-in-flight 4096 &
flood=$!
load quiet-beside-flood quiet-key-bench "$quiet"
wait "$flood"
curl -s "$url/metrics" | grep '^sluice_budget_refusals_total' >"$out/refusals.txt" || true
stop_server

python3 - "$out" >"$out/SUMMARY.md" <<'PY'
import json, os, sys
out = sys.argv[1]
def get(name):
    return json.load(open(os.path.join(out, name + ".json")))
print("| run | offered/s | goodput/s | p50 ms | p99 ms | refused |")
print("|---|---|---|---|---|---|")
for name in ["quiet-alone", "quiet-beside-budget", "other-at-budget", "quiet-beside-flood", "flood"]:
    d = get(name)
    lat = d["latency_ms"]
    print(f"| {name} | {d['offered']['rps']:.1f} | {d['goodput']['rps']:.1f} | {lat['p50']:.2f} | {lat['p99']:.2f} | {d['refusal_rate']:.3f} |")
a, b = get("quiet-beside-budget"), get("quiet-beside-flood")
print(f"\nquiet tenant beside the flood / beside the other at its budget: goodput {b['goodput']['rps'] / a['goodput']['rps']:.3f}, "
      f"p99 {b['latency_ms']['p99'] / a['latency_ms']['p99']:.3f}")
PY
cat "$out/SUMMARY.md"
