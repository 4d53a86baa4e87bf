#!/usr/bin/env bash
# The GPU check (issue 33): the engine on CUDA and on the CPU (batch 1/8/32/128 at 32 and 128
# tokens), the served throughput at saturation with and without batching on CUDA, and a
# report in $OUT (default ./gpu-check-out). About 5 minutes on one GPU once the files are there.
#
# On any Linux x86-64 machine with one NVIDIA GPU, its driver, CUDA 13 and cuDNN 9 user-space
# libraries (system-wide, or the pip packages nvidia-cublas, nvidia-cuda-runtime, nvidia-curand,
# nvidia-cudnn-cu13, which this script finds), Go, gcc and npm:
#
#   scripts/gpu-check.sh            # fetch ORT and its CUDA provider, build, run, report
#
# On a GPU machine with neither Go nor a registry (the device machine this project borrows:
# at most 64 MiB travel per call, the working tree included, and files outside the checkout
# last only while it stays warm), build everything here and carry it over in parts:
#
#   scripts/gpu-check.sh prepare    # here: .gpucheck/ holds the stripped test binaries, ORT
#                                   # and its CUDA provider as one xz-compressed tar (~190 MB)
#                                   # in parts of PART_SIZE (default 36M: 64 MB less the ~26 MB light tree)
#   scripts/gpu-check.sh light      # here: the tracked files the check never reads (tokenizer
#                                   # and layout test data, ~25 MB) stop travelling: untracked
#                                   # in the index and excluded, until `heavy` puts them back
#   then, back to back so that the machine stays warm, one call per part but the last,
#   carrying that part alone (carry: [".gpucheck/bundle.part-aa"]) and running
#       scripts/gpu-check.sh stash  # there: keep the carried parts in /tmp/sluice-gpucheck
#   and a last call carrying the last part and running
#       scripts/gpu-check.sh run    # there: reassemble, run, report to $OUT
#                                   # (`served` in place of `run`: the served benchmark alone)
#   scripts/gpu-check.sh heavy      # here, afterwards: the index and excludes as they were
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
work="$root/.gpucheck"
stash="/tmp/sluice-gpucheck"
out="${OUT:-$root/gpu-check-out}"
benchtime="${BENCHTIME:-2s}"
export GPU_CHECK_DEVICE="${GPU_CHECK_DEVICE:-cuda}"
device="$GPU_CHECK_DEVICE" # cpu makes a dry run of the whole script on a machine without a GPU

prepare() {
	mkdir -p "$work"
	grep -qxF '/.gpucheck/' .git/info/exclude 2>/dev/null || echo '/.gpucheck/' >>.git/info/exclude
	local stage="$work/stage"
	rm -rf "$stage" "$work"/bundle.part-*
	SLUICE_ORT_DIR="$stage" bash scripts/fetch-onnxruntime.sh --cuda
	go test -c -ldflags='-s -w' -o "$stage/engine.test" ./engine
	go test -c -ldflags='-s -w' -o "$stage/serve.test" ./cmd/serve
	tar -C "$stage" -cf - . | xz -T0 -6 | split -b "${PART_SIZE:-36M}" - "$work/bundle.part-"
	rm -rf "$stage"
	ls -la "$work"
}

# The tracked paths the check never reads: they stay here while the tree travels light.
heavyPaths=(tokenizer/testdata models/testdata entities/testdata)

light() {
	heavy >/dev/null
	git rm -r -q --cached -- "${heavyPaths[@]}"
	{
		echo "# gpu-check light: begin"
		printf '/%s/\n' "${heavyPaths[@]}"
		echo "# gpu-check light: end"
	} >>.git/info/exclude
	echo "travelling: $(git ls-files -z | du -cb --files0-from=- | tail -1 | cut -f1) bytes tracked; commit nothing before: $0 heavy"
}

heavy() {
	git reset -q -- "${heavyPaths[@]}"
	sed -i '/^# gpu-check light: begin$/,/^# gpu-check light: end$/d' .git/info/exclude
	git status --short | head
}

# cudaLibs puts the pip packages' CUDA libraries on the loader path, where python3 has them.
cudaLibs() {
	local dirs
	dirs="$(python3 - <<'PY' 2>/dev/null || true
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
print(":".join(sorted({d for r in roots for d in glob.glob(os.path.join(r, "nvidia", "*", "lib"))})))
PY
)"
	[ -n "$dirs" ] && export LD_LIBRARY_PATH="$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	return 0
}

# install puts ORT, its CUDA provider and the test binaries in $1, from the bundle's parts
# (stashed or carried), or fetches and builds them where there is no bundle.
install() {
	local dir="$1" parts=() name
	mkdir -p "$dir"
	for name in $(ls "$stash" "$work" 2>/dev/null | grep '^bundle.part-' | sort -u); do
		if [ -f "$work/$name" ]; then parts+=("$work/$name"); else parts+=("$stash/$name"); fi
	done
	if [ "${#parts[@]}" -gt 0 ]; then
		cat "${parts[@]}" | xz -d | tar -C "$dir" -xf -
		sha256sum "$dir"/*.so* | tee "$out/libraries.sha256"
	else
		SLUICE_ORT_DIR="$dir" bash scripts/fetch-onnxruntime.sh --cuda
		go test -c -o "$dir/engine.test" ./engine
		go test -c -o "$dir/serve.test" ./cmd/serve
	fi
}

run() {
	mkdir -p "$out"
	cudaLibs
	local ortdir="/tmp/sluice-gpucheck-ort"
	install "$ortdir"
	export SLUICE_ORT_LIB="$ortdir/libonnxruntime.so.1"
	local engine_test="$ortdir/engine.test" serve_test="$ortdir/serve.test"
	{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } >"$out/gpu.txt" 2>&1 || true
	echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >>"$out/gpu.txt"
	if [ "${1:-}" != served ]; then
		(cd engine && SLUICE_BENCH_DEVICE=$device "$engine_test" -test.run '^$' -test.bench 'RunEncoder/model=pii' \
			-test.benchtime "$benchtime") 2>&1 | tee "$out/engine-cuda.txt"
		(cd engine && SLUICE_BENCH_DEVICE=cpu "$engine_test" -test.run '^$' -test.bench 'RunEncoder/model=pii' \
			-test.benchtime "$benchtime") 2>&1 | tee "$out/engine-cpu.txt"
	fi
	(cd cmd/serve && SLUICE_BENCH_DEVICE=$device "$serve_test" -test.run '^$' -test.bench 'EngineVsServed' \
		-test.benchtime "$benchtime") 2>&1 | tee "$out/served-cuda.txt"
	local prof=/tmp/sluice-profiles dev
	if [ "${1:-}" = served ]; then
		report "$prof" | tee "$out/REPORT.md"
		return
	fi
	# Where one pass of the pii model spends its time, per operator, on each device.
	for dev in "$device" cpu; do
		mkdir -p "$prof/$dev"
		(cd engine && SLUICE_BENCH_DEVICE=$dev SLUICE_BENCH_PROFILE="$prof/$dev" "$engine_test" \
			-test.run '^TestWriteEncoderProfile$') 2>&1 | tail -3
	done
	tar -C "$prof" -czf "$out/profiles.tar.gz" .
	# The shape real clinical models have: BERT-base with random weights, exported there.
	if python3 models/train/export_shaped.py /tmp/bert-base.onnx; then
		for dev in "$device" cpu; do
			echo "device=$dev"
			(cd engine && SLUICE_BENCH_DEVICE=$dev SLUICE_BENCH_ONNX=/tmp/bert-base.onnx SLUICE_BENCH_VOCAB=30522 \
				"$engine_test" -test.run '^$' -test.bench 'RunEncoderFile' -test.benchtime 1s) 2>&1
		done | tee "$out/bert-base.txt"
	fi
	report "$prof" | tee "$out/REPORT.md"
}

# report turns the benchmark lines into the tables docs/BENCHMARKS.md takes.
report() {
	python3 - "$out" "$1" <<'PY'
import collections, glob, json, os, re, statistics, sys
out, prof = sys.argv[1], sys.argv[2]
def text(name):
    path = os.path.join(out, name)
    # Log lines land in the middle of a benchmark's line; take them out first.
    return re.sub(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d [^\n]*\n", "", open(path).read()) if os.path.exists(path) else ""
def rows(body, unit):
    return {m.group(1): float(m.group(2)) for m in
            re.finditer(r"^Benchmark\S+?/(\S+?)-\d+\s+\d+\s+.*?([\d.]+) " + unit, body, re.M)}
def compare(title, cuda, cpu):
    print(f"| {title} | CUDA ms/seq | CPU ms/seq | CPU / CUDA |\n|---|---|---|---|")
    for k in cuda:
        c = cpu.get(k)
        print(f"| {k} | {cuda[k]:.4f} | {c} | {c / cuda[k]:.1f}x |" if c else f"| {k} | {cuda[k]:.4f} | - | - |")
print("# GPU check (device: " + os.environ.get("GPU_CHECK_DEVICE", "cuda") + ")\n")
print(text("gpu.txt").strip().replace("\n", "  \n"), "\n")
compare("engine, pii", rows(text("engine-cuda.txt"), "ms/seq"), rows(text("engine-cpu.txt"), "ms/seq"))
bert = text("bert-base.txt").split("device=cpu")
if len(bert) == 2:
    print()
    compare("engine, BERT-base shape", rows(bert[0], "ms/seq"), rows(bert[1], "ms/seq"))
served = rows(text("served-cuda.txt"), "seq/s")
print("\n| served on CUDA | seq/s |\n|---|---|")
for k, v in served.items():
    print(f"| {k} | {v:,.0f} |")
eng = max((v for k, v in served.items() if k.startswith("engine/")), default=0)
http = {k: v for k, v in served.items() if k.startswith("http/")}
b32 = max((v for k, v in http.items() if "batch=32" in k), default=0)
b1 = max((v for k, v in http.items() if "batch=1/" in k), default=0)
if eng and b32:
    print(f"\nserved / raw engine (best of each): {b32 / eng:.2f}")
if b1 and b32:
    print(f"batching gain on CUDA (served, batch 32 / batch 1): {b32 / b1:.2f}x")
for path in sorted(glob.glob(os.path.join(prof, "*", "*.json"))):
    events = json.load(open(path))
    # The first passes load kernels and size the arena: leave five out.
    passes = sorted((e for e in events if e.get("name") == "model_run"), key=lambda e: e["ts"])[5:]
    runs = [e["dur"] for e in passes]
    per, count = collections.Counter(), collections.Counter()
    for e in events:
        if runs and e["ts"] >= passes[0]["ts"] and e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            key = (e["args"].get("op_name"), e["args"].get("provider", "").replace("ExecutionProvider", ""))
            per[key] += e["dur"]
            count[key] += 1
    if not runs:
        continue
    n = len(runs)
    print(f"\nprofile {os.path.relpath(path, prof)}: {n} runs, median {statistics.median(runs):,} us a run, "
          f"{sum(count.values()) / n:.0f} nodes and {sum(per.values()) / n:,.0f} us of node time a run")
    print("| operator | provider | nodes | us a run |\n|---|---|---|---|")
    for (op, provider), v in per.most_common(8):
        print(f"| {op} | {provider} | {count[(op, provider)] // n} | {v / n:,.1f} |")
PY
}

case "${1:-all}" in
prepare) prepare ;;
stash) mkdir -p "$stash" && cp "$work"/bundle.part-* "$stash"/ && ls -la "$stash" ;;
light) light ;;
heavy) heavy ;;
run) run ;;
served) run served ;;
all) run ;;
*) echo "usage: $0 [prepare|light|stash|run|served|heavy]" >&2; exit 2 ;;
esac
