#!/usr/bin/env bash
# The generation measurements behind docs/BENCHMARKS.md: tokens per second with continuous
# batching against one sequence at a time, at 1, 4, 16 and 64 concurrent streams, and seed
# 002's exercise (a fifth of the clients hang up at half their generation) with the server
# noticing departures and with it ignoring them (SLUICE_BENCH_IGNORE_DISCONNECTS). The server
# runs on CPU 0 and the load generator on CPU 1 (taskset), so they do not take each other's
# core. Every run writes its JSON summary and HTML report to $OUT (default docs/bench/generate).
# About 6 minutes at the default 20 s per run; run it on an otherwise idle machine.
#
#   scripts/generate-bench.sh [seconds per run, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-20}"
out="${OUT:-docs/bench/generate}"
port="${PORT:-18181}"
url="http://127.0.0.1:$port"
. scripts/generate-common.sh
trap stop_server EXIT

for running in 64 1; do
	echo "== at most $running sequence(s) running together"
	start_server SLUICE_GENERATE_MAX_RUNNING="$running"
	for streams in 1 4 16 64; do
		load "batching-max$running-streams$streams" -workers "$streams" -max-tokens 64
	done
	stop_server
done

for mode in notice ignore; do
	echo "== 32 streams of 128 tokens, 8 running at once, a fifth hang up at half ($mode departures)"
	extra=()
	[ "$mode" = ignore ] && extra=(SLUICE_BENCH_IGNORE_DISCONNECTS=true)
	start_server SLUICE_GENERATE_MAX_RUNNING=8 "${extra[@]}"
	load "abandon-$mode" -workers 32 -max-tokens 128 -abandon 0.2
	stop_server
done

python3 - "$out" >"$out/SUMMARY.md" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(n): return json.load(open(os.path.join(out, n + ".json")))
print("| streams | tokens/s, one at a time | tokens/s, continuous batching | ratio | TTFT p50 / p99 ms (batching) | inter-token p50 / p99 ms (batching) |")
print("|---|---|---|---|---|---|")
for s in (1, 4, 16, 64):
    one, cb = load(f"batching-max1-streams{s}"), load(f"batching-max64-streams{s}")
    r = cb["good_tokens_per_second"] / one["good_tokens_per_second"]
    print(f"| {s} | {one['good_tokens_per_second']:.0f} | {cb['good_tokens_per_second']:.0f} | {r:.2f} | "
          f"{cb['time_to_first_token_ms']['p50']} / {cb['time_to_first_token_ms']['p99']} | "
          f"{cb['inter_token_ms']['p50']} / {cb['inter_token_ms']['p99']} |")
print()
print("| departures | streams served whole/s | their tokens/s | all tokens received/s | server tokens | server tokens after a client left |")
print("|---|---|---|---|---|---|")
for mode in ("notice", "ignore"):
    d = load(f"abandon-{mode}")
    print(f"| {mode} | {d['good_streams_per_second']} | {d['good_tokens_per_second']} | {d['tokens_per_second']} | "
          f"{d['server_tokens']} | {d['server_tokens_after_disconnect']} |")
PY
cat "$out/SUMMARY.md"
