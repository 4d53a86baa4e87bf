#!/usr/bin/env bash
# Regenerates onnxpb/onnx.pb.go from the official onnx.proto. The schema comes from Debian's
# python3-onnx (the ONNX release the recipe exports with), protoc from protobuf-compiler, and
# protoc-gen-go at the google.golang.org/protobuf version go.mod already requires.
#
#   apt-get install -y protobuf-compiler python3-onnx && bash scripts/gen-onnxpb.sh
set -euo pipefail
cd "$(dirname "$0")/.."
proto=${ONNX_PROTO:-/usr/lib/python3/dist-packages/onnx/onnx.proto}
version=$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install "google.golang.org/protobuf/cmd/protoc-gen-go@$version"
PATH=$bin:$PATH protoc -I "$(dirname "$proto")" --go_out=onnxpb --go_opt=paths=source_relative \
	--go_opt="M$(basename "$proto")=github.com/sluice-serving/sluice/onnxpb;onnxpb" "$(basename "$proto")"
echo "onnxpb/onnx.pb.go written from $proto"
