# Sourced by run.sh and generate.sh after they set port and url: a work directory removed at
# exit with no server left running ($pid), the peer's packages installed into $nm, server.mjs
# beside them, Sluice and the load generator built into $work, and wait_ready NAME.
work="$(mktemp -d)"; pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT # no server outlives a failed run
nm="${NODE_MODULES:-/tmp/tjs-peer-node}"
# The peer's packages are the lockfile's (package-lock.json here), installed once into $nm and
# again whenever the lockfile changes. --ignore-scripts: onnxruntime-node's install script only
# fetches GPU providers from the internet; the CPU library is in the package.
if ! cmp -s scripts/tjs-peer/package-lock.json "$nm/package-lock.json" || [ ! -d "$nm/node_modules/@huggingface/transformers" ]; then
	mkdir -p "$nm" && cp scripts/tjs-peer/package.json scripts/tjs-peer/package-lock.json "$nm/"
	(cd "$nm" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
fi
cp scripts/tjs-peer/server.mjs "$nm/" # ES modules resolve packages from their own directory
make -s ort
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"
go build -o "$work/sluice" ./cmd/serve
go build -o "$work/loadgen" ./cmd/loadgen

wait_ready() { # name
	for _ in $(seq 1 600); do
		kill -0 "$pid" 2>/dev/null || { echo "exited before ready: $1" >&2; exit 1; }
		curl -sf "$url/readyz" >/dev/null 2>&1 && return 0; sleep 0.2
	done
	echo "not ready: $1" >&2; exit 1
}
