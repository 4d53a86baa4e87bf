package grpcserve

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	protoV2 "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluice-serving/sluice/handlers"
)

// decoder is the server's codec: grpc-go's own for protobuf, save that a request message
// that does not decode (a string that is not UTF-8, bytes that are not the message) is kept
// as a fault of that message for its method to answer INVALID_ARGUMENT, the caller's fault as
// the HTTP routes' 422 says. A codec's failure is INTERNAL in grpc-go, sent before the method
// sees it: a code a caller's retry discipline reads as the server's.
type decoder struct {
	encoding.CodecV2
	faults sync.Map // a request message → why it did not decode
	// calls answers a fault of a method that stands for a route of posted after that route's
	// checks (invalid); nil answers every fault at once.
	calls *handlers.InProcess
}

func newDecoder(calls *handlers.InProcess) *decoder {
	return &decoder{CodecV2: encoding.GetCodecV2(proto.Name), calls: calls}
}

// posted are the routes of the methods that post the caller's text, by full method name: a
// message of theirs that does not decode is answered once the route has heard the call's
// credentials, as its HTTP body would be. The others read, and carry no text.
var posted = map[string]string{
	"/openmed.service.v1.OpenMedService/Analyze":          analyzePath,
	"/openmed.service.v1.OpenMedService/Extract":          extractPath,
	"/openmed.service.v1.OpenMedService/Deidentify":       deidentifyPath,
	"/openmed.service.v1.OpenMedService/StreamDeidentify": deidentifyStreamPath,
	"/inference.GRPCInferenceService/ModelInfer":          modelPath("_") + "/infer", // any name: the scope is the route's
}

func (d *decoder) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(protoV2.Message)
	if !ok {
		if err := d.CodecV2.Unmarshal(data, v); err != nil {
			d.faults.Store(v, err)
		}
		return nil
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	b := buf.ReadOnlyData()
	// Counted before the decode, which makes a struct of each: an empty message is two bytes
	// on the wire and a hundred and more decoded, so a message of empty inputs held to the
	// size limit decoded to some 78 MB before its method could ask for the credentials.
	if messages(b, m.ProtoReflect().Descriptor(), 0) > maxMessages {
		d.faults.Store(v, errManyMessages)
		return nil
	}
	if err := protoV2.Unmarshal(b, m); err != nil {
		d.faults.Store(v, err)
	}
	return nil
}

// maxMessages bounds the messages one request decodes into: those of a request the methods
// answer are a few dozen.
const maxMessages = 4096

var errManyMessages = fmt.Errorf("it holds more than %d messages", maxMessages)

// messages is how many messages decoding b as md makes, md's own included, counting no
// further once past maxMessages; b that is not md (or nested past protobuf's depth limit)
// counts 0, left to the decode to refuse with its reason.
func messages(b []byte, md protoreflect.MessageDescriptor, depth int) int {
	if depth > 100 {
		return 0
	}
	n := 1
	for len(b) > 0 && n <= maxMessages {
		num, typ, tag := protowire.ConsumeTag(b)
		if tag < 0 {
			return 0
		}
		b = b[tag:]
		size := protowire.ConsumeFieldValue(num, typ, b)
		if size < 0 {
			return 0
		}
		if fd := md.Fields().ByNumber(num); fd != nil && typ == protowire.BytesType && fd.Message() != nil {
			inner, _ := protowire.ConsumeBytes(b)
			n += messages(inner, fd.Message(), depth+1) // a map's entries are messages too
		}
		b = b[size:]
	}
	return n
}

// fault is the status of a message of method that did not decode, nil for one that did; ctx is
// the call's, asked for only then. The protobuf library's words name the fault, never the
// message's content.
func (d *decoder) fault(ctx func() context.Context, method string, v any) error {
	err, ok := d.faults.LoadAndDelete(v)
	if !ok {
		return nil
	}
	msg := "validation_error: the request message does not decode: " + err.(error).Error()
	if path, ok := posted[method]; ok && d.calls != nil {
		return invalid(ctx(), d.calls, path, msg)
	}
	return status.Error(codes.InvalidArgument, msg)
}

// methods is desc with each method's request read through fault. Every service the server
// registers must be, since the codec's Unmarshal never fails.
func (d *decoder) methods(desc *grpc.ServiceDesc) *grpc.ServiceDesc {
	out := *desc
	out.Methods = make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		handler, method := m.Handler, "/"+desc.ServiceName+"/"+m.MethodName
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			return handler(srv, ctx, func(v any) error {
				return d.checked(func() context.Context { return ctx }, method, v, dec(v))
			}, in)
		}
		out.Methods[i] = m
	}
	out.Streams = make([]grpc.StreamDesc, len(desc.Streams))
	for i, s := range desc.Streams {
		handler, method := s.Handler, "/"+desc.ServiceName+"/"+s.StreamName
		s.Handler = func(srv any, stream grpc.ServerStream) error {
			return handler(srv, &checkedStream{ServerStream: stream, d: d, method: method})
		}
		out.Streams[i] = s
	}
	return &out
}

type checkedStream struct {
	grpc.ServerStream
	d      *decoder
	method string
}

func (s *checkedStream) RecvMsg(m any) error {
	return s.d.checked(s.Context, s.method, m, s.ServerStream.RecvMsg(m))
}

// checked is a receive's error, else v's fault. The fault is taken whatever the receive
// says: grpc-go reads on past a unary request to see the stream end, and a second message,
// a reset or a cancel fails the receive after v was decoded.
func (d *decoder) checked(ctx func() context.Context, method string, v any, received error) error {
	if received != nil {
		d.faults.Delete(v)
		return received
	}
	return d.fault(ctx, method, v)
}
