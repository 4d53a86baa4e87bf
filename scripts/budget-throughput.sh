#!/usr/bin/env bash
# Served throughput with the caller's budget kept in this process and in Redis on loopback:
# one server, a tenant whose budget (requests and tokens; -slots: concurrency too) is far above
# what it sends, so that every request is charged and settled and none is refused; the load harness
# closed-loop with 32 clients, short /analyze and /pii/extract texts. Runs alternate (local,
# local-slots, redis, redis-slots, local, ...) so that a neighbour's load on a shared machine falls on both. With
# at least 2 CPUs the server runs on the first half of them and the harness and redis-server on
# the rest (taskset). Summaries go to $OUT (default docs/bench/budget).
#
#   scripts/budget-throughput.sh [seconds per run, default 30] [rounds, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-30}"
rounds="${2:-3}"
out="${OUT:-docs/bench/budget}"
port="${PORT:-18090}"
url="http://127.0.0.1:$port"
mkdir -p "$out" bin
make -s ort redis
go build -o bin/sluice ./cmd/serve
go build -o bin/loadgen ./cmd/loadgen
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"

cpus=$(nproc)
on_server=() on_harness=() # command prefixes that pin
if [ "$cpus" -ge 2 ]; then
	half=$((cpus / 2))
	on_server=(taskset -c "0-$((half - 1))")
	on_harness=(taskset -c "$half-$((cpus - 1))")
fi

redis_port=$((port + 1))
"${on_harness[@]}" third_party/redis/redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
	--dir "$(mktemp -d)" --logfile "" >"$out/redis.log" 2>&1 &
redis_pid=$! # the wrapper and taskset exec: this is redis-server's own
keys=$(mktemp)
# Two tenants: one budgeted in requests and tokens, one in concurrency too (a slot per request,
# freed before its answer leaves: a second round trip to Redis).
entry() { # key, tenant, budget
	echo "{\"id\":\"$2\",\"key_hash\":\"$(printf %s "$1" | sha256sum | cut -d' ' -f1)\",\"tenant\":\"$2\",\"scopes\":\"*\",\"budget\":$3}"
}
echo "[$(entry bench-secret bench '{"requests_per_minute":6e7,"tokens_per_minute":6e9}'),$(entry slots-secret slots '{"requests_per_minute":6e7,"tokens_per_minute":6e9,"max_concurrency":10000}')]" >"$keys"
server_pid=""
stop_server() { [ -n "$server_pid" ] && { kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }; server_pid=""; }
trap 'stop_server; kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; rm -f "$keys"' EXIT
start_server() { # env assignments...
	env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_API_KEYS_FILE="$keys" SLUICE_GENERATE_MODEL=none \
		SLUICE_INTRA_OP_THREADS=1 "$@" \
		"${on_server[@]}" ./bin/sluice >"$out/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 1 300); do
		curl -sf "$url/readyz" >/dev/null 2>&1 && return 0
		kill -0 "$server_pid" 2>/dev/null || { cat "$out/server.log"; return 1; }
		sleep 0.2
	done
	echo "server not ready" >&2
	return 1
}
# CPU seconds (user + system) a process has used so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }
echo "store round served/s p50_ms p99_ms server_cores redis_cores served_per_server_core_s"
for round in $(seq 1 "$rounds"); do
	for store in local local-slots redis redis-slots; do
		env=() key=bench-secret
		case "$store" in redis*) env=(SLUICE_REDIS_URL="redis://127.0.0.1:$redis_port/0") ;; esac
		case "$store" in *-slots) key=slots-secret ;; esac
		start_server "${env[@]}"
		s0=$(cpu_s "$server_pid") r0=$(cpu_s "$redis_pid") w0=$(date +%s.%N)
		"${on_harness[@]}" ./bin/loadgen -url "$url" -quiet -mode closed -workers 32 -duration "${secs}s" -warmup 5s \
			-lengths short=1 -api-key "$key" -scrape-interval 0 -json "$out/$store-$round.json"
		s1=$(cpu_s "$server_pid") r1=$(cpu_s "$redis_pid") w1=$(date +%s.%N)
		stop_server
		python3 - "$out/$store-$round.json" "$store" "$round" "$s0" "$s1" "$r0" "$r1" "$w0" "$w1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s0, s1, r0, r1, w0, w1 = map(float, sys.argv[4:10])
if d["refusals"] or d["errors"]:
    sys.exit(f"refusals {d['refusals']} errors {d['errors']}: the budget must take every request")
wall = w1 - w0
server, redis = (s1 - s0) / wall, (r1 - r0) / wall
rps = d["served"]["rps"]
print(sys.argv[2], sys.argv[3], rps, d["latency_ms"]["p50"], d["latency_ms"]["p99"], round(server, 2), round(redis, 2),
      round(rps / server, 1))
PY
	done
done
