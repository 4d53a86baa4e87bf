#!/usr/bin/env bash
# The issue-38 measurements behind docs/BENCHMARKS.md ("Long prompts and priorities"), each an
# A/B pair in one run on tiny-lm:
#   chunked: 16 greedy streams of 128 tokens, closed loop, while a prompt of nearly the model's
#            whole context (240 tokens) arrives every second; inter-token time of the streams
#            with the whole prompt prefilled in one step (SLUICE_GENERATE_MAX_STEP_TOKENS=4096)
#            and in chunks of 32.
#   priority: 32 streams of 128 tokens, 8 running at once, a fifth interactive; interactive time
#            to first token with priority preemption off (SLUICE_GENERATE_PREEMPT_LIMIT=0) and on.
# The server runs on CPU 0, the load generator and the long-prompt sender on CPU 1 (taskset).
# Every run writes its JSON summary and HTML report to $OUT (default docs/bench/fairness).
#
#   scripts/generate-fairness.sh [seconds per run, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
out="${OUT:-docs/bench/fairness}"
port="${PORT:-18182}"
url="http://127.0.0.1:$port"
. scripts/generate-common.sh
sender_pid=""
stop_sender() { [ -n "$sender_pid" ] && kill "$sender_pid" 2>/dev/null || true; sender_pid=""; }
trap 'stop_sender; stop_server' EXIT

# A prompt of 240 tokens (checked with POST /tokenize), sent with max_tokens 1 every second.
long_body() {
	local text
	text=$(printf 'The patient was started on metformin and followed up in clinic. %.0s' $(seq 1 40))
	while :; do
		local n
		n=$(curl -sf "$url/tokenize" -H 'Content-Type: application/json' -d "{\"inputs\":\"$text\"}" | grep -o '"id"' | wc -l)
		[ "$n" -le 240 ] && break
		text="${text% *}"
	done
	printf '{"model":"m","prompt":"%s","max_tokens":1,"temperature":0}' "$text"
}
start_sender() {
	local body
	body=$(long_body)
	( while :; do
		taskset -c 1 curl -s -o /dev/null "$url/v1/completions" -H 'Content-Type: application/json' \
			-H 'x-openmed-priority: bulk' -d "$body" &
		sleep 1
	done ) &
	sender_pid=$!
}

for budget in 4096 32; do
	echo "== 16 streams while a 240-token prompt arrives every second, prefill budget $budget"
	start_server SLUICE_GENERATE_MAX_RUNNING=32 SLUICE_GENERATE_MAX_STEP_TOKENS="$budget"
	start_sender
	load "chunked-budget$budget" -workers 16 -max-tokens 128 -priority-mix interactive=1
	stop_sender
	stop_server
done

for limit in 0 2; do
	echo "== 32 streams, 8 running, a fifth interactive, preempt limit $limit"
	start_server SLUICE_GENERATE_MAX_RUNNING=8 SLUICE_GENERATE_PREEMPT_LIMIT="$limit"
	load "priority-limit$limit" -workers 32 -max-tokens 128 -priority-mix interactive=0.2,bulk=0.8
	stop_server
done
