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
# at most 64 MiB travel per call, and files outside the checkout last only while it stays
# warm), build everything here and carry it over in pieces:
#
#   scripts/gpu-check.sh prepare    # here: .gpucheck/ holds the test binaries, ORT, and the
#                                   # CUDA provider xz-compressed (164 MB) in parts of
#                                   # PART_SIZE (default 24M: the tracked tree is ~35 MB)
#   then, back to back so that the machine stays warm, one call per part carrying only that
#   part in .gpucheck/ and running
#       scripts/gpu-check.sh stash  # there: keep the parts in /tmp/sluice-gpucheck
#   and a last call carrying the binaries, ORT and the shared provider:
#       scripts/gpu-check.sh run    # there: reassemble, run, report to $OUT
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
	SLUICE_ORT_DIR="$work/ort" bash scripts/fetch-onnxruntime.sh --cuda
	go test -c -o "$work/engine.test" ./engine
	go test -c -o "$work/serve.test" ./cmd/serve
	xz -T0 -6 -k -c "$work/ort/libonnxruntime.so.1" >"$work/libonnxruntime.so.1.xz"
	rm -f "$work"/provider.xz.part-*
	xz -T0 -6 -c "$work/ort/libonnxruntime_providers_cuda.so" | split -b "${PART_SIZE:-24M}" - "$work/provider.xz.part-"
	cp "$work/ort/libonnxruntime_providers_shared.so" "$work/"
	rm -rf "$work/ort"
	ls -la "$work"
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

# install puts ORT and its CUDA provider in $1, from the parts (stashed or carried) or by fetching.
install() {
	local dir="$1"
	mkdir -p "$dir"
	if [ -f "$work/libonnxruntime.so.1.xz" ]; then
		xz -d -c "$work/libonnxruntime.so.1.xz" >"$dir/libonnxruntime.so.1"
		cp "$work/libonnxruntime_providers_shared.so" "$dir/"
		local parts=() name
		for name in $(ls "$stash" "$work" 2>/dev/null | grep '^provider.xz.part-' | sort -u); do
			if [ -f "$work/$name" ]; then parts+=("$work/$name"); else parts+=("$stash/$name"); fi
		done
		cat "${parts[@]}" | xz -d >"$dir/libonnxruntime_providers_cuda.so"
		sha256sum "$dir"/*.so* | tee "$out/libraries.sha256"
	else
		SLUICE_ORT_DIR="$dir" bash scripts/fetch-onnxruntime.sh --cuda
	fi
}

run() {
	mkdir -p "$out"
	cudaLibs
	local ortdir="/tmp/sluice-gpucheck-ort"
	install "$ortdir"
	export SLUICE_ORT_LIB="$ortdir/libonnxruntime.so.1"
	local engine_test serve_test
	if [ -x "$work/engine.test" ]; then
		engine_test="$work/engine.test" serve_test="$work/serve.test"
	else
		go test -c -o /tmp/sluice-engine.test ./engine
		go test -c -o /tmp/sluice-serve.test ./cmd/serve
		engine_test=/tmp/sluice-engine.test serve_test=/tmp/sluice-serve.test
	fi
	{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } >"$out/gpu.txt" 2>&1 || true
	echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >>"$out/gpu.txt"
	(cd engine && SLUICE_BENCH_DEVICE=$device "$engine_test" -test.run '^$' -test.bench 'RunEncoder/model=pii' \
		-test.benchtime "$benchtime") 2>&1 | tee "$out/engine-cuda.txt"
	(cd engine && SLUICE_BENCH_DEVICE=cpu "$engine_test" -test.run '^$' -test.bench 'RunEncoder/model=pii' \
		-test.benchtime "$benchtime") 2>&1 | tee "$out/engine-cpu.txt"
	(cd cmd/serve && SLUICE_BENCH_DEVICE=$device "$serve_test" -test.run '^$' -test.bench 'EngineVsServed' \
		-test.benchtime "$benchtime") 2>&1 | tee "$out/served-cuda.txt"
	report | tee "$out/REPORT.md"
}

# report turns the benchmark lines into the tables docs/BENCHMARKS.md takes.
report() {
	python3 - "$out" <<'PY'
import os, re, sys
out = sys.argv[1]
def rows(name, unit):
    got = {}
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return got
    for line in open(path):
        m = re.match(r"Benchmark\S+?/(\S+?)-\d+\s+\d+\s+.*?([\d.]+) " + unit, line)
        if m:
            got[m.group(1)] = float(m.group(2))
    return got
print("# GPU check (device: " + os.environ.get("GPU_CHECK_DEVICE", "cuda") + ")\n")
print(open(os.path.join(out, "gpu.txt")).read().strip().replace("\n", "  \n"), "\n")
cuda, cpu = rows("engine-cuda.txt", "ms/seq"), rows("engine-cpu.txt", "ms/seq")
print("| engine, pii | CUDA ms/seq | CPU ms/seq | CPU / CUDA |\n|---|---|---|---|")
for k in cuda:
    c = cpu.get(k)
    print(f"| {k} | {cuda[k]:.4f} | {c if c is not None else '-'} | {c / cuda[k]:.1f}x |" if c else f"| {k} | {cuda[k]:.4f} | - | - |")
served = rows("served-cuda.txt", "seq/s")
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
PY
}

case "${1:-all}" in
prepare) prepare ;;
stash) mkdir -p "$stash" && cp "$work"/provider.xz.part-* "$stash"/ && ls -la "$stash" ;;
run) run ;;
all) run ;;
*) echo "usage: $0 [prepare|stash|run]" >&2; exit 2 ;;
esac
