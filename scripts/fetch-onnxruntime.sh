#!/usr/bin/env bash
# Fetch ONNX Runtime's Linux x64 shared library from the npm package onnxruntime-node and
# verify it against a pinned sha256. Idempotent: a verified copy already in place is kept.
#
# The npm registry is the one place these machines can get an ORT build from; a plain
# `npm install onnxruntime-node` fails (its postinstall downloads CUDA parts), so we take the
# tarball with `npm pack` and extract only the library.
set -euo pipefail

ORT_VERSION="1.29.0"
ORT_SHA256="89688f5cf51c7e31befbb7b9101bc027799009b18d1baa9a5b1146a72e69538d"
MEMBER="package/bin/napi-v6/linux/x64/libonnxruntime.so.1"

root="$(cd "$(dirname "$0")/.." && pwd)"
dest_dir="${SLUICE_ORT_DIR:-$root/third_party/onnxruntime}"
dest="$dest_dir/libonnxruntime.so.1"

verify() { [ -f "$1" ] && echo "$ORT_SHA256  $1" | sha256sum --check --status; }

if verify "$dest"; then
	exit 0
fi

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
	echo "fetch-onnxruntime: only Linux x86_64 is packaged here; set SLUICE_ORT_LIB to your own libonnxruntime" >&2
	exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "fetch-onnxruntime: npm pack onnxruntime-node@$ORT_VERSION" >&2
(cd "$work" && npm pack --silent "onnxruntime-node@$ORT_VERSION" >/dev/null)
tar -xzf "$work/onnxruntime-node-$ORT_VERSION.tgz" -C "$work" "$MEMBER"

if ! verify "$work/$MEMBER"; then
	echo "fetch-onnxruntime: sha256 mismatch for $MEMBER (want $ORT_SHA256)" >&2
	exit 1
fi
mkdir -p "$dest_dir"
mv "$work/$MEMBER" "$dest.tmp"
mv "$dest.tmp" "$dest"
echo "fetch-onnxruntime: $dest verified" >&2
