#!/usr/bin/env bash
# The overload checks of issue 4, end to end: build the server and the load harness, measure
# capacity C (closed loop at saturation), then drive the server open-loop at 2x C with each
# Retry-After policy (with retry tokens, and drain_rate without them), at 10x C while sampling
# its RSS, and bulk saturation beside a trickle of interactive requests. Every run writes its JSON summary and HTML report to $OUT (default
# docs/bench/overload). Takes about 10 minutes; run it on an otherwise idle machine.
#
#   scripts/overload.sh [seconds per run, default 60]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
out="${OUT:-docs/bench/overload}"
port="${PORT:-18080}"
url="http://127.0.0.1:$port"
mkdir -p "$out" bin
make -s ort
go build -o bin/sluice ./cmd/serve
go build -o bin/loadgen ./cmd/loadgen
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"

lengths="short=0.7,medium=0.3"
# Two workers of one ONNX Runtime thread each, one of them kept from bulk batches, and a high
# watermark near what one endpoint completes within the max queue wait (admission's doc says why).
read -r -a server_env <<<"${SERVER_ENV:-SLUICE_BATCH_WORKERS=2 SLUICE_BATCH_MAX_BULK_WORKERS=1 SLUICE_INTRA_OP_THREADS=1 SLUICE_BATCH_HIGH_WATERMARK=128}"
server_pid=""
start_server() { # env assignments...
	env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn "${server_env[@]}" "$@" ./bin/sluice >"$out/server.log" 2>&1 &
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
trap stop_server EXIT
# CPU seconds (user + system) the process has used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
# Each run also records the cores the server and the harness used over it (name.cpu.json): on
# one machine they share the cores, so goodput is compared per server core as well.
load() { # name, loadgen flags...
	local name="$1"; shift
	local s0 w0 s1 w1
	s0=$(cpu_s "$server_pid"); w0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$out/$name.harness-cpu" \
		./bin/loadgen -url "$url" -quiet -lengths "$lengths" -json "$out/$name.json" -html "$out/$name.html" "$@"
	s1=$(cpu_s "$server_pid"); w1=$(date +%s.%N)
	python3 - "$s0" "$s1" "$w0" "$w1" "$out/$name.harness-cpu" >"$out/$name.cpu.json" <<'PY'
import json, sys
s0, s1, w0, w1 = map(float, sys.argv[1:5])
u, k = map(float, open(sys.argv[5]).read().split()[-2:])
wall = w1 - w0
print(json.dumps({"wall_s": round(wall, 1), "server_cores": round((s1 - s0) / wall, 2),
                  "harness_cores": round((u + k) / wall, 2)}))
PY
	rm -f "$out/$name.harness-cpu"
}
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

echo "== capacity: closed loop at saturation"
start_server SLUICE_RETRY_AFTER_POLICY=drain_rate
load capacity -mode closed -workers 128 -duration 30s -warmup 5s
C=$(field "$out/capacity.json" "round(d['goodput']['rps'], 1)")
echo "C = $C req/s"
load unloaded-interactive -mode open -rate "$(field "$out/capacity.json" "max(1, round(d['goodput']['rps'] / 10, 1))")" \
	-priority-mix interactive=1 -duration 30s -warmup 5s

# A client waiting out its Retry-After counts as in flight; the cap is raised so that waiting
# clients never throttle the offered 2x.
for policy in drain_rate static; do
	echo "== 2x C, retries honour Retry-After and send back their token, policy $policy"
	stop_server
	start_server SLUICE_RETRY_AFTER_POLICY="$policy"
	load "2x-$policy" -mode open -rate "$(python3 -c "print(2*$C)")" -duration "${secs}s" -warmup 10s -retry -max-in-flight 8192
done
echo "== 2x C, policy drain_rate without retry reservations (the estimate alone)"
stop_server
start_server SLUICE_RETRY_AFTER_POLICY=drain_rate SLUICE_RETRY_RESERVE=0
load "2x-drain_rate-no-tokens" -mode open -rate "$(python3 -c "print(2*$C)")" -duration "${secs}s" -warmup 10s -retry -max-in-flight 8192

echo "== 10x C for ${secs}s, RSS sampled every second"
stop_server
start_server SLUICE_RETRY_AFTER_POLICY=drain_rate
( while kill -0 "$server_pid" 2>/dev/null; do
	awk '/VmRSS/ {print $2}' "/proc/$server_pid/status"; sleep 1
done ) >"$out/10x-rss-kb.txt" &
sampler=$!
load 10x -mode open -rate "$(python3 -c "print(10*$C)")" -duration "${secs}s" -warmup 10s -max-in-flight 1024
kill "$sampler" 2>/dev/null || true

echo "== interactive beside bulk saturation"
stop_server
start_server SLUICE_RETRY_AFTER_POLICY=drain_rate
load bulk-saturation -mode closed -workers 64 -priority-mix bulk=1 -duration "$((secs + 20))s" -warmup 5s &
bulk=$!
load interactive-under-bulk -mode open -rate "$(field "$out/capacity.json" "max(1, round(d['goodput']['rps'] / 10, 1))")" \
	-priority-mix interactive=1 -duration "${secs}s" -warmup 10s
wait "$bulk"

python3 scripts/overload_summary.py "$out" > "$out/SUMMARY.md"
echo "done: $out (summary in $out/SUMMARY.md)"
