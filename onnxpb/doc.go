// Package onnxpb is the ONNX model format as Go types: onnx.pb.go is protoc-gen-go's output
// for the official onnx.proto (ONNX 1.12, IR version 8), unchanged. Read a model with
// proto.Unmarshal into a ModelProto and write one back with proto.Marshal; fields newer than
// this schema survive the round trip as unknown fields.
//
// Nothing is written here by hand. scripts/gen-onnxpb.sh regenerates the file from Debian's
// python3-onnx with protoc and the protoc-gen-go of go.mod's google.golang.org/protobuf.
package onnxpb
