package grpcserve

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/openmedpb"
)

// openMed is OpenMedService. Its messages are OpenMed's REST bodies field for field (the same
// names), so a request is its REST body by protojson with the proto's own names, and a REST
// answer reads back into the response message, fields the message lacks left out.
type openMed struct {
	openmedpb.UnimplementedOpenMedServiceServer
	calls *handlers.InProcess
	stall time.Duration
}

// The routes OpenMedService's methods stand for.
const (
	analyzePath          = "/analyze"
	extractPath          = "/pii/extract"
	deidentifyPath       = "/pii/deidentify"
	deidentifyStreamPath = "/pii/deidentify/stream"
)

var (
	asBody   = protojson.MarshalOptions{UseProtoNames: true}
	fromBody = protojson.UnmarshalOptions{DiscardUnknown: true}
)

func (o *openMed) Analyze(ctx context.Context, req *openmedpb.AnalyzeRequest) (*openmedpb.AnalyzeResponse, error) {
	out := &openmedpb.AnalyzeResponse{}
	return out, o.unary(ctx, analyzePath, req, out)
}

func (o *openMed) Extract(ctx context.Context, req *openmedpb.ExtractRequest) (*openmedpb.ExtractResponse, error) {
	out := &openmedpb.ExtractResponse{}
	return out, o.unary(ctx, extractPath, req, out)
}

func (o *openMed) Deidentify(ctx context.Context, req *openmedpb.DeidentifyRequest) (*openmedpb.DeidentifyResponse, error) {
	out := &openmedpb.DeidentifyResponse{}
	return out, o.unary(ctx, deidentifyPath, req, out)
}

// unary posts req's REST body to path and reads the answer into out.
func (o *openMed) unary(ctx context.Context, path string, req, out proto.Message) error {
	body, err := asBody.Marshal(req)
	if err != nil {
		return status.Error(codes.InvalidArgument, "the request could not be encoded")
	}
	r := call(ctx, o.calls, http.MethodPost, path, body)
	if r.Stream != nil {
		r.Stream.Close()
		return status.Error(codes.Internal, "the route answered with a stream")
	}
	if r.Status != http.StatusOK {
		return failure(ctx, r)
	}
	if err := fromBody.Unmarshal(r.Body, out); err != nil {
		return status.Error(codes.Internal, "the answer does not fit the contract's message")
	}
	return nil
}

// StreamDeidentify is POST /pii/deidentify/stream: the request's text (or its chunks, joined:
// the stream's own windows decide where it cuts), each redacted fragment as one message, then
// the final message with the spans and the audit record.
func (o *openMed) StreamDeidentify(req *openmedpb.DeidentifyStreamRequest, stream grpc.ServerStreamingServer[openmedpb.DeidentifyStreamResponse]) error {
	ctx := stream.Context()
	if req.GetMaxBuffer() < 0 || req.GetChunkSize() < 0 {
		return invalid(ctx, o.calls, deidentifyStreamPath, "validation_error: chunk_size and max_buffer should be positive")
	}
	inner := proto.Clone(req.GetRequest()).(*openmedpb.DeidentifyRequest)
	if inner == nil {
		inner = &openmedpb.DeidentifyRequest{}
	}
	if len(req.GetChunks()) > 0 {
		inner.Text = strings.Join(req.GetChunks(), "")
	}
	body, err := asBody.Marshal(inner)
	if err != nil {
		return status.Error(codes.InvalidArgument, "the request could not be encoded")
	}
	if n := req.GetChunkSize(); n > 0 {
		var fields map[string]json.RawMessage
		if json.Unmarshal(body, &fields) == nil {
			fields["chunk_size"], _ = json.Marshal(n)
			body, _ = json.Marshal(fields)
		}
	}
	r := call(ctx, o.calls, http.MethodPost, deidentifyStreamPath, body)
	if r.Stream == nil {
		if r.Status != http.StatusOK {
			return failure(ctx, r)
		}
		return status.Error(codes.Internal, "the route did not stream")
	}
	defer r.Stream.Close() // an early return (the client left or stalled) stops the stream's work
	lines := bufio.NewScanner(r.Stream)
	lines.Buffer(make([]byte, 64<<10), 16<<20)
	for lines.Scan() {
		msg, err := streamMessage(lines.Bytes())
		if err != nil {
			return err
		}
		if msg == nil {
			continue
		}
		if err := o.send(stream, msg); err != nil {
			return err
		}
		if msg.Final {
			return nil
		}
	}
	return status.Error(codes.Internal, "the stream ended without its final message")
}

// send sends msg, or ends the call when the client takes nothing for the stall limit, as the
// HTTP listener cuts a stream whose write times out. Send blocks for as long as a client that
// does not read keeps its connection (grpc-go waits for flow-control room), so it runs aside:
// returning from the handler is what ends the call, cancels the stream's context and so
// releases that Send, which then ends with the stream's error. The message is sent once or not
// at all, never again.
func (o *openMed) send(stream grpc.ServerStreamingServer[openmedpb.DeidentifyStreamResponse], msg *openmedpb.DeidentifyStreamResponse) error {
	sent := make(chan error, 1) // buffered: a Send the stall gave up on ends without a reader
	go func() { sent <- stream.Send(msg) }()
	stalled := time.NewTimer(o.stall)
	defer stalled.Stop()
	select {
	case err := <-sent:
		return err
	case <-stalled.C:
		return errStalled
	}
}

// errStalled ends a stream whose client took nothing for the stall limit: a write that timed
// out, DEADLINE_EXCEEDED, as a stream's timeout is.
var errStalled = status.Error(codes.DeadlineExceeded, "the client took no message for the stall limit")

// streamCode is the gRPC status of a stream's error line, from its error code: the stream's
// status line has long gone, so the code is all there is.
func streamCode(code string) codes.Code {
	switch code {
	case handlers.CodeTimeout:
		return codes.DeadlineExceeded
	case handlers.CodeNotReady, handlers.CodeServiceBusy, handlers.CodeCircuitOpen, handlers.CodeModelLoading,
		handlers.CodeBackpressure, handlers.CodeAuditUnavailable:
		return codes.Unavailable
	}
	return codes.Internal
}

// streamMessage is one NDJSON line of the REST stream as a message: nil for a line the contract
// has no message for.
func streamMessage(line []byte) (*openmedpb.DeidentifyStreamResponse, error) {
	var ev struct {
		Type         string            `json:"type"`
		RedactedText string            `json:"redacted_text"`
		Spans        []json.RawMessage `json:"spans"`
		Audit        map[string]any    `json:"audit"`
		Error        json.RawMessage   `json:"error"`
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		return nil, status.Error(codes.Internal, "the stream sent a line that is not JSON")
	}
	switch ev.Type {
	case "chunk":
		return &openmedpb.DeidentifyStreamResponse{RedactedText: ev.RedactedText}, nil
	case "final":
		out := &openmedpb.DeidentifyStreamResponse{Final: true}
		for _, raw := range ev.Spans {
			sp := &openmedpb.OpenMedSpan{}
			if err := fromBody.Unmarshal(raw, sp); err != nil {
				return nil, status.Error(codes.Internal, "a span does not fit the contract's message")
			}
			if sp.SchemaVersion == 0 {
				sp.SchemaVersion = 1
			}
			out.Spans = append(out.Spans, sp)
		}
		if ev.Audit != nil {
			rec, err := structpb.NewStruct(ev.Audit)
			if err != nil {
				return nil, status.Error(codes.Internal, "the audit record does not fit a Struct")
			}
			out.AuditRecord = rec
		}
		return out, nil
	case "error":
		body, _ := json.Marshal(map[string]json.RawMessage{"error": ev.Error})
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(ev.Error, &e)
		return nil, status.Error(streamCode(e.Code), errorMessage(body, http.StatusInternalServerError))
	}
	return nil, nil
}
