package grpcserve

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// decoder is the server's codec: grpc-go's own for protobuf, save that a request message
// that does not decode (a string that is not UTF-8, bytes that are not the message) is kept
// as a fault of that message for its method to answer INVALID_ARGUMENT, the caller's fault as
// the HTTP routes' 422 says. A codec's failure is INTERNAL in grpc-go, sent before the method
// sees it: a code a caller's retry discipline reads as the server's.
type decoder struct {
	encoding.CodecV2
	faults sync.Map // a request message → why it did not decode
}

func newDecoder() *decoder { return &decoder{CodecV2: encoding.GetCodecV2(proto.Name)} }

func (d *decoder) Unmarshal(data mem.BufferSlice, v any) error {
	if err := d.CodecV2.Unmarshal(data, v); err != nil {
		d.faults.Store(v, err)
	}
	return nil
}

// fault is the status of a message that did not decode, nil for one that did. The protobuf
// library's words name the fault, never the message's content.
func (d *decoder) fault(v any) error {
	if err, ok := d.faults.LoadAndDelete(v); ok {
		return status.Error(codes.InvalidArgument, "validation_error: the request message does not decode: "+err.(error).Error())
	}
	return nil
}

// methods is desc with each method's request read through fault. Every service the server
// registers must be, since the codec's Unmarshal never fails.
func (d *decoder) methods(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	out := *desc
	out.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		handler := m.Handler
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			return handler(srv, ctx, func(v any) error { return d.checked(v, dec(v)) }, in)
		}
		out.Methods[i] = m
	}
	out.Streams = make([]grpc.StreamDesc, len(desc.Streams))
	for i, s := range desc.Streams {
		handler := s.Handler
		s.Handler = func(srv any, stream grpc.ServerStream) error {
			return handler(srv, &checkedStream{ServerStream: stream, d: d})
		}
		out.Streams[i] = s
	}
	return &out
}

type checkedStream struct {
	grpc.ServerStream
	d *decoder
}

func (s *checkedStream) RecvMsg(m any) error { return s.d.checked(m, s.ServerStream.RecvMsg(m)) }

// checked is a receive's error, else v's fault. The fault is taken whatever the receive
// says: grpc-go reads on past a unary request to see the stream end, and a second message,
// a reset or a cancel fails the receive after v was decoded.
func (d *decoder) checked(v any, received error) error {
	fault := d.fault(v)
	if received != nil {
		return received
	}
	return fault
}
