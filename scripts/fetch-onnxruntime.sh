#!/usr/bin/env bash
# Fetch ONNX Runtime's Linux x64 shared library from the npm package onnxruntime-node and
# verify it against a pinned sha256. With --cuda, fetch instead the CUDA stack: the CUDA
# execution provider (libonnxruntime_providers_shared.so and libonnxruntime_providers_cuda.so,
# built for CUDA 13 and cuDNN 9) from the npm package
# com.github.asus4.onnxruntime.linux-x64-gpu, and the core library of the release that provider
# is built for (a provider only loads into its own release), verified the same way, into a
# folder of their own, third_party/onnxruntime-cuda (SLUICE_ORT_DIR chooses another): point
# SLUICE_ORT_LIB at its libonnxruntime.so.1 to run on the GPU. The two never share a folder,
# so neither run can leave a core beside providers of another release. Idempotent: verified
# copies already in place are kept.
#
# The two can differ: the CPU library is the fastest release measured here (1.30.0 runs a float32
# pass of the pii graph on one thread in 1.46 ms, 1.29.0 in 2.42; docs/BENCHMARKS.md "int8"), while the registry's
# newest CUDA provider is built for 1.29.0, the release the GPU check ran. Dockerfile.gpu
# follows the CUDA stack (deploy's tests hold them equal); both are at or past the 1.29 C API
# the Go binding needs.
#
#   scripts/fetch-onnxruntime.sh [--cuda]
#
# The npm registry is the one place these machines can get an ORT build from; a plain
# `npm install onnxruntime-node` fails (its postinstall downloads CUDA parts), so we take the
# tarballs with `npm pack` and extract only the libraries.
set -euo pipefail

ORT_VERSION="1.30.0"
ORT_SHA256="ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23"
MEMBER="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"

# The CUDA stack: a packaging of ORT 1.29.0 for CUDA 13, and that release's core library.
CUDA_ORT_VERSION="1.29.0"
CUDA_ORT_SHA256="89688f5cf51c7e31befbb7b9101bc027799009b18d1baa9a5b1146a72e69538d"
CUDA_PACKAGE="com.github.asus4.onnxruntime.linux-x64-gpu"
CUDA_PACKAGE_VERSION="0.4.9"
CUDA_DIR="package/Plugins/Linux/x64"
CUDA_LIBS=(
	"libonnxruntime_providers_shared.so c6a12593396095f5670160e284c35d1700b7708cf3037b7042e2a5200ccae772"
	"libonnxruntime_providers_cuda.so 56cf3254b118ad837ccc4ed8f6d1b23504bbf7ef91b34cbc0b289cb7f10b3037"
)

cuda=false
for arg in "$@"; do
	case "$arg" in
	--cuda) cuda=true ;;
	*) echo "usage: $0 [--cuda]" >&2; exit 2 ;;
	esac
done

root="$(cd "$(dirname "$0")/.." && pwd)"
if $cuda; then
	ORT_VERSION="$CUDA_ORT_VERSION" ORT_SHA256="$CUDA_ORT_SHA256"
	dest_dir="${SLUICE_ORT_DIR:-$root/third_party/onnxruntime-cuda}"
else
	dest_dir="${SLUICE_ORT_DIR:-$root/third_party/onnxruntime}"
fi
dest="$dest_dir/libonnxruntime.so.1"

verify() { [ -f "$1" ] && echo "$2  $1" | sha256sum --check --status; }

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
	echo "fetch-onnxruntime: only Linux x86_64 is packaged here; set SLUICE_ORT_LIB to your own libonnxruntime" >&2
	exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# install MEMBER-PATH SHA256 DEST: verify an extracted file and move it into place.
install() {
	if ! verify "$1" "$2"; then
		echo "fetch-onnxruntime: sha256 mismatch for $(basename "$1") (want $2)" >&2
		exit 1
	fi
	mkdir -p "$dest_dir"
	mv "$1" "$3.tmp"
	mv "$3.tmp" "$3"
	touch "$3" # tar kept the package's 1985 date, which make would read as out of date
	echo "fetch-onnxruntime: $3 verified" >&2
}

if ! verify "$dest" "$ORT_SHA256"; then
	echo "fetch-onnxruntime: npm pack onnxruntime-node@$ORT_VERSION" >&2
	(cd "$work" && npm pack --silent "onnxruntime-node@$ORT_VERSION" >/dev/null)
	tar -xzf "$work/onnxruntime-node-$ORT_VERSION.tgz" -C "$work" "$MEMBER"
	install "$work/$MEMBER" "$ORT_SHA256" "$dest"
fi

$cuda || exit 0
missing=()
for entry in "${CUDA_LIBS[@]}"; do
	read -r name sum <<<"$entry"
	verify "$dest_dir/$name" "$sum" || missing+=("$entry")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
echo "fetch-onnxruntime: npm pack $CUDA_PACKAGE@$CUDA_PACKAGE_VERSION (about 180 MB)" >&2
(cd "$work" && npm pack --silent "$CUDA_PACKAGE@$CUDA_PACKAGE_VERSION" >/dev/null)
for entry in "${missing[@]}"; do
	read -r name sum <<<"$entry"
	tar -xzf "$work/$CUDA_PACKAGE-$CUDA_PACKAGE_VERSION.tgz" -C "$work" "$CUDA_DIR/$name"
	install "$work/$CUDA_DIR/$name" "$sum" "$dest_dir/$name"
done
echo "fetch-onnxruntime: the CUDA provider also needs CUDA 13 (libcudart.so.13, libcublas.so.13, libcublasLt.so.13, libcurand.so.10) and cuDNN 9 on the loader path" >&2
