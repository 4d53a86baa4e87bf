package grpcserve

import (
	"context"
	"strconv"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-serving/sluice/inferencepb"
	"github.com/sluice-serving/sluice/openmedpb"
)

// TestADecodingFaultIsTheCallersAndIsNotKept: a request whose string is not UTF-8 is
// INVALID_ARGUMENT; a receive that fails after the message was decoded (grpc-go reads on past
// a unary request, and a second message fails it) answers the receive's error; either way the
// codec keeps no fault behind, on a unary method and a stream.
func TestADecodingFaultIsTheCallersAndIsNotKept(t *testing.T) {
	d := newDecoder(nil)
	latin1 := mem.BufferSlice{mem.SliceBuffer(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "Ren\xe9"))}
	second := status.Error(codes.Internal, "cardinality violation")
	unary := d.methods(&grpc.ServiceDesc{Methods: []grpc.MethodDesc{{Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		return nil, dec(&openmedpb.ExtractRequest{})
	}}}}).Methods[0].Handler
	stream := d.methods(&grpc.ServiceDesc{Streams: []grpc.StreamDesc{{Handler: func(_ any, s grpc.ServerStream) error {
		return s.RecvMsg(&openmedpb.ExtractRequest{})
	}}}}).Streams[0].Handler
	for _, after := range []error{nil, second} {
		receive := func(v any) error {
			if err := d.Unmarshal(latin1, v); err != nil {
				t.Fatal(err)
			}
			return after
		}
		want := codes.InvalidArgument
		if after != nil {
			want = codes.Internal
		}
		if _, err := unary(nil, context.Background(), receive, nil); status.Code(err) != want {
			t.Errorf("unary, the receive's error %v: %v", after, err)
		}
		if err := stream(nil, fakeStream{recv: receive}); status.Code(err) != want {
			t.Errorf("stream, the receive's error %v: %v", after, err)
		}
	}
	kept := 0
	d.faults.Range(func(any, any) bool { kept++; return true })
	if kept != 0 {
		t.Fatalf("%d faults kept after their calls", kept)
	}
}

type fakeStream struct {
	grpc.ServerStream
	recv func(any) error
}

func (f fakeStream) RecvMsg(m any) error { return f.recv(m) }

// TestAMessageOfManyMessagesIsRefusedUndecoded: a request of more messages than any method
// answers (empty inputs, two bytes each on the wire, or a parameter map of empty entries
// inside one input) is a fault found before the decode, which made a struct of each: a
// message of empty inputs held to the size limit decoded to some 78 MB before its method
// could ask for the credentials. A request of a few messages decodes as before.
func TestAMessageOfManyMessagesIsRefusedUndecoded(t *testing.T) {
	d := newDecoder(nil)
	many := &inferencepb.ModelInferRequest{ModelName: "pii"}
	for range maxMessages {
		many.Inputs = append(many.Inputs, &inferencepb.ModelInferRequest_InferInputTensor{})
	}
	deep := &inferencepb.ModelInferRequest{ModelName: "pii", Inputs: oneText("Alice")}
	deep.Inputs[0].Parameters = map[string]*inferencepb.InferParameter{}
	for i := range maxMessages / 2 {
		deep.Inputs[0].Parameters[strconv.Itoa(i)] = &inferencepb.InferParameter{}
	}
	few := &inferencepb.ModelInferRequest{ModelName: "pii", Inputs: oneText("Alice"),
		Parameters: map[string]*inferencepb.InferParameter{"lang": {ParameterChoice: &inferencepb.InferParameter_StringParam{StringParam: "fr"}}}}
	for name, c := range map[string]struct {
		req     *inferencepb.ModelInferRequest
		refused bool
	}{"many inputs": {many, true}, "a map of many entries in an input": {deep, true}, "a few": {few, false}} {
		wire, err := proto.Marshal(c.req)
		if err != nil {
			t.Fatal(err)
		}
		got := &inferencepb.ModelInferRequest{}
		if err := d.Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, got); err != nil {
			t.Fatal(err)
		}
		fault := d.fault(context.Background, "", got)
		switch {
		case c.refused && (status.Code(fault) != codes.InvalidArgument || len(got.Inputs) != 0):
			t.Errorf("%s: %v, %d inputs decoded", name, fault, len(got.Inputs))
		case !c.refused && (fault != nil || !proto.Equal(got, c.req)):
			t.Errorf("%s: %v", name, fault)
		}
	}
}
