// Package inferencepb is the Open Inference Protocol's gRPC service (KServe V2's
// inference.GRPCInferenceService) as Go types: inference.proto, written here from the
// protocol's documented names and field numbers, and the protoc-gen-go and protoc-gen-go-grpc
// output for it (scripts/gen-grpc.sh; never edited by hand). grpcserve serves it.
package inferencepb
