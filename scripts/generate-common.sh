# Sourced by the generation benchmarks (generate-bench.sh, generate-fairness.sh) after they set
# secs, out, port and url: builds the server and the load generator, starts and stops the
# server on CPU 0 (start_server ENV=VALUE..., stop_server) and runs the closed-loop load on
# CPU 1 (load NAME loadgen-flags...).
mkdir -p "$out" bin
make -s ort
go build -o bin/sluice ./cmd/serve
go build -o bin/loadgen ./cmd/loadgen
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"
server_log="${TMPDIR:-/tmp}/sluice-$(basename "$0" .sh).log"

server_pid=""
start_server() { # env assignments...
	taskset -c 0 env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_INTRA_OP_THREADS=1 \
		SLUICE_GENERATE_QUEUE_SIZE=128 SLUICE_GENERATE_MAX_QUEUE_WAIT_MS=600000 SLUICE_GENERATE_TIMEOUT_MS=600000 \
		SLUICE_GENERATE_FIRST_TOKEN_TIMEOUT_MS=0 "$@" ./bin/sluice >"$server_log" 2>&1 &
	server_pid=$!
	for _ in $(seq 1 300); do
		curl -sf "$url/readyz" >/dev/null 2>&1 && return 0
		kill -0 "$server_pid" 2>/dev/null || { cat "$server_log"; return 1; }
		sleep 0.2
	done
	echo "server not ready" >&2
	return 1
}
stop_server() { kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
load() { # name, loadgen flags...
	local name="$1"; shift
	taskset -c 1 ./bin/loadgen -generate -url "$url" -quiet -mode closed -timeout 600s -warmup 3s \
		-duration "${secs}s" -json "$out/$name.json" -html "$out/$name.html" "$@"
}
