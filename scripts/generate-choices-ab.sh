#!/usr/bin/env bash
# n = 4 choices of one prompt (about 214 tokens of tiny-lm, a different first word each request
# so that requests do not share it), 40 requests one after another, against a server built from
# BASE_REV and one from the working tree, alternating three times: milliseconds per request and
# prompt tokens computed per request (sluice_generate_prompt_tokens_total, source computed).
# Server on CPU 0, client on CPU 1 (docs/BENCHMARKS.md, issue 38).
#
#   scripts/generate-choices-ab.sh BASE_REV
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:?usage: scripts/generate-choices-ab.sh BASE_REV}"
port="${PORT:-18185}"
url="http://127.0.0.1:$port"
work="$(mktemp -d)"
make -s ort
git worktree add -f --detach "$work/base" "$base" >/dev/null
trap 'git worktree remove --force "$work/base"; rm -rf "$work"' EXIT
(cd "$work/base" && go build -o "$work/sluice-base" ./cmd/serve)
go build -o "$work/sluice-tree" ./cmd/serve
export SLUICE_ORT_LIB="${SLUICE_ORT_LIB:-$PWD/third_party/onnxruntime/libonnxruntime.so.1}"
text=$(printf 'The patient was started on metformin and followed up in clinic. %.0s' $(seq 1 15))
computed() { curl -s "$url/metrics" | awk '/^sluice_generate_prompt_tokens_total\{queue="tiny-lm",source="computed"\}/{print $2}'; }
run() { # binary label
	taskset -c 0 env SLUICE_ADDR="127.0.0.1:$port" SLUICE_LOG_LEVEL=warn SLUICE_INTRA_OP_THREADS=1 "$1" >"$work/server.log" 2>&1 &
	local pid=$!
	for _ in $(seq 1 300); do curl -sf "$url/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
	local c0 s e
	c0=$(computed)
	s=$(date +%s%N)
	for i in $(seq 1 40); do
		taskset -c 1 curl -sf -o /dev/null "$url/v1/completions" -H 'Content-Type: application/json' -d \
			"$(printf '{"model":"m","prompt":"Case %s %s","n":4,"max_tokens":16,"temperature":1.0,"seed":1}' "$RANDOM$i" "$text")"
	done
	e=$(date +%s%N)
	echo "$2 ms_per_request=$(((e - s) / 40000000)) prompt_tokens_computed_per_request=$(echo "($(computed) - $c0) / 40" | bc -l | cut -c1-6)"
	kill -TERM "$pid"
	wait "$pid" || true
}
for _ in 1 2 3; do
	run "$work/sluice-base" base
	run "$work/sluice-tree" tree
done
