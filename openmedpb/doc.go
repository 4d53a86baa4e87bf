// Package openmedpb is OpenMed's gRPC contract as Go types: openmed.proto, written here from
// OpenMed's documented package, service, message and field names and numbers, and the
// protoc-gen-go and protoc-gen-go-grpc output for it (scripts/gen-grpc.sh; never edited by
// hand). grpcserve serves it.
package openmedpb
