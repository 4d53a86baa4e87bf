#!/usr/bin/env bash
# Head-of-line blocking (issue 31): short interactive /analyze requests (open loop) while a
# client sends 100,000-character /analyze requests back to back beside them, against the same
# short load alone; p99 of the short ones and how many were refused, from loadgen's summaries.
# The server runs on CPU 0 and the clients on CPU 1 (taskset). Writes $OUT (default
# docs/bench/hol); about 2 minutes.
#
#   scripts/hol-bench.sh [seconds per run, default 30]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-30}"
out="${OUT:-docs/bench/hol}"
port="${PORT:-18282}"
url="http://127.0.0.1:$port"
mkdir -p "$out" bin
make -s ort
go build -o bin/sluice ./cmd/serve
go build -o bin/loadgen ./cmd/loadgen
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"
log="${TMPDIR:-/tmp}/sluice-hol-bench.log"

server_pid=""
start_server() {
	taskset -c 0 env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_INTRA_OP_THREADS=1 \
		SLUICE_GENERATE_MODEL=none ./bin/sluice >"$log" 2>&1 &
	server_pid=$!
	for _ in $(seq 1 300); do
		curl -sf "$url/readyz" >/dev/null 2>&1 && return 0
		kill -0 "$server_pid" 2>/dev/null || { cat "$log"; return 1; }
		sleep 0.2
	done
	return 1
}
stop_server() { kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
trap 'stop_server; kill "${long_pid:-0}" 2>/dev/null || true' EXIT
short() { # name
	taskset -c 1 ./bin/loadgen -url "$url" -quiet -mode open -rate 20 -mix analyze=1 -priority-mix interactive=1 \
		-lengths short=1 -duration "${secs}s" -warmup 5s -json "$out/$1.json"
}
body="$out/long-body.json"
python3 -c 'import json; print(json.dumps({"text": "." * 100000}))' >"$body"

start_server
echo "== short requests alone"
short alone
echo "== short requests beside 100,000-character ones"
( while kill -0 "$server_pid" 2>/dev/null; do
	taskset -c 1 curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$url/analyze" -H 'Content-Type: application/json' --data-binary "@$body"
done ) >"$out/long-requests.txt" 2>/dev/null &
long_pid=$!
short beside-long
kill "$long_pid" 2>/dev/null || true
rm -f "$body"
python3 - "$out" <<'PY' | tee "$out/SUMMARY.md"
import json, os, sys, collections
out = sys.argv[1]
print("| short requests | served/s | p50 ms | p99 ms | refusals |")
print("|---|---|---|---|---|")
for name in ("alone", "beside-long"):
    d = json.load(open(os.path.join(out, name + ".json")))
    print(f"| {name} | {d['goodput']['rps']} | {d['latency_ms']['p50']} | {d['latency_ms']['p99']} | {d['refusals']} |")
longs = [l.split() for l in open(os.path.join(out, "long-requests.txt")) if l.strip()]
codes = collections.Counter(c for c, _ in longs)
secs = sorted(float(t) for c, t in longs if c == "200")
print()
print(f"100,000-character requests: {dict(codes)}; served in " +
      (f"{secs[len(secs)//2]:.2f} s (median)" if secs else "n/a"))
PY
