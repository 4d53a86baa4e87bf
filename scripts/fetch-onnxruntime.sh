#!/usr/bin/env bash
# Fetch ONNX Runtime's Linux x64 shared library from the npm package onnxruntime-node and
# verify it against a pinned sha256. With --cuda, also fetch the CUDA execution provider
# (libonnxruntime_providers_shared.so and libonnxruntime_providers_cuda.so, built for CUDA 13
# and cuDNN 9) of the same ORT release from the npm package
# com.github.asus4.onnxruntime.linux-x64-gpu, verified the same way, into the same folder,
# where SLUICE_DEVICE=auto and cuda look for it. Idempotent: verified copies already in place
# are kept.
#
#   scripts/fetch-onnxruntime.sh [--cuda]
#
# The npm registry is the one place these machines can get an ORT build from; a plain
# `npm install onnxruntime-node` fails (its postinstall downloads CUDA parts), so we take the
# tarballs with `npm pack` and extract only the libraries.
set -euo pipefail

ORT_VERSION="1.29.0"
ORT_SHA256="89688f5cf51c7e31befbb7b9101bc027799009b18d1baa9a5b1146a72e69538d"
MEMBER="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"

# The CUDA provider: a packaging of ORT 1.29.0 (the release above) for CUDA 13.
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
dest_dir="${SLUICE_ORT_DIR:-$root/third_party/onnxruntime}"
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
