package grpcserve

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

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
