#!/usr/bin/env bash
# Regenerates the Go types and gRPC stubs of the two gRPC contracts Sluice serves:
# openmedpb/openmed.proto (OpenMed's OpenMedService) and inferencepb/inference.proto (the Open
# Inference Protocol). protoc comes from Debian's protobuf-compiler, protoc-gen-go at the
# google.golang.org/protobuf version go.mod requires, protoc-gen-go-grpc at the version below.
#
#   apt-get install -y protobuf-compiler && bash scripts/gen-grpc.sh
set -euo pipefail
cd "$(dirname "$0")/.."
pb=$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
grpcgen=v1.5.1
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install "google.golang.org/protobuf/cmd/protoc-gen-go@$pb"
GOBIN=$bin go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$grpcgen"
for dir in openmedpb inferencepb; do
	PATH=$bin:$PATH protoc -I "$dir" -I /usr/include --go_out="$dir" --go_opt=paths=source_relative \
		--go-grpc_out="$dir" --go-grpc_opt=paths=source_relative "$dir"/*.proto
done
echo "openmedpb and inferencepb regenerated"
