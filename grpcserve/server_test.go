package grpcserve

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/inferencepb"
	"github.com/sluice-serving/sluice/openmedpb"
)

func TestHTTPStatusesBecomeTheirGRPCCodes(t *testing.T) {
	for status, want := range map[int]codes.Code{400: codes.InvalidArgument, 401: codes.Unauthenticated, 403: codes.PermissionDenied,
		404: codes.NotFound, 413: codes.ResourceExhausted, 422: codes.InvalidArgument, 429: codes.ResourceExhausted, 499: codes.Canceled,
		500: codes.Internal, 503: codes.Unavailable, 504: codes.DeadlineExceeded, 507: codes.FailedPrecondition} {
		if got := codeOf(status); got != want {
			t.Errorf("%d: %v, want %v", status, got, want)
		}
	}
}

func TestErrorMessagesAreTheEnvelopes(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"code":"validation_error","message":"Request validation failed","details":[{"field":"body.text","message":"Field required","type":"missing"}]}}`: "validation_error: Request validation failed; body.text: Field required",
		`{"error":"No model of that name is served","code":"not_found"}`:                                                                                            "No model of that name is served",
		`not json`: "Too Many Requests",
	} {
		if got := errorMessage([]byte(body), 429); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

func TestRawBytesRoundTrip(t *testing.T) {
	elems := []string{"first text", "", "dritter Text, äöü"}
	split, ok := splitRaw(joinRaw(elems), len(elems))
	if !ok || len(split) != 3 || string(split[2]) != elems[2] || len(split[1]) != 0 {
		t.Fatalf("%q, %v", split, ok)
	}
	for _, bad := range [][]byte{{1, 0, 0}, {9, 0, 0, 0, 'a'}} {
		if _, ok := splitRaw(bad, 100); ok {
			t.Errorf("%v read as raw contents", bad)
		}
	}
	if !bytes.Equal(joinRaw([]string{"ab"}), []byte{2, 0, 0, 0, 'a', 'b'}) {
		t.Error("the length is not 4 bytes little-endian")
	}
}

// TestParametersKeepTheirTypes: each parameter is written as the JSON value of its own type;
// one with no value set is left out.
func TestParametersKeepTheirTypes(t *testing.T) {
	w := newRESTBody(1<<10, 0)
	writeParameters(w, map[string]*inferencepb.InferParameter{
		"confidence_threshold": {ParameterChoice: &inferencepb.InferParameter_DoubleParam{DoubleParam: 0.4}},
		"lang":                 {ParameterChoice: &inferencepb.InferParameter_StringParam{StringParam: "fr"}},
		"use_smart_merging":    {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: false}},
		"priority":             {ParameterChoice: &inferencepb.InferParameter_Int64Param{Int64Param: -3}},
		"timeout":              {ParameterChoice: &inferencepb.InferParameter_Uint64Param{Uint64Param: 7}},
		"unset":                {},
	})
	var got map[string]any
	if err := json.Unmarshal(w.b, &got); err != nil {
		t.Fatalf("%s: %v", w.b, err)
	}
	if len(got) != 5 || got["confidence_threshold"] != 0.4 || got["lang"] != "fr" || got["use_smart_merging"] != false ||
		got["priority"] != -3.0 || got["timeout"] != 7.0 {
		t.Errorf("%s", w.b)
	}
}

// TestAStreamsErrorLineBecomesItsGRPCCode: a refusal met mid-stream (a later window shed, the
// audit out of reach at the end) is UNAVAILABLE, to be retried, as its HTTP status would say;
// only an unknown code is INTERNAL.
func TestAStreamsErrorLineBecomesItsGRPCCode(t *testing.T) {
	for code, want := range map[string]codes.Code{
		handlers.CodeTimeout: codes.DeadlineExceeded, handlers.CodeBackpressure: codes.Unavailable,
		handlers.CodeAuditUnavailable: codes.Unavailable, handlers.CodeServiceBusy: codes.Unavailable,
		handlers.CodeModelLoading: codes.Unavailable, "internal_error": codes.Internal,
	} {
		if got := streamCode(code); got != want {
			t.Errorf("%s: %v, want %v", code, got, want)
		}
	}
}

// TestAFaultFoundHereIsAnsweredAfterTheRoutesChecks: invalid answers the gRPC side's message
// only where the route refused the body itself (422: every check before it passed); the
// route's earlier refusals (the hosts check's 400, the credentials' 401) are the answer, and
// say nothing of the message's fault.
func TestAFaultFoundHereIsAnsweredAfterTheRoutesChecks(t *testing.T) {
	app := fiber.New()
	for path, status := range map[string]int{"/body": 422, "/host": 400, "/key": 401} {
		app.Post(path, func(c *fiber.Ctx) error {
			return c.Status(status).JSON(fiber.Map{"error": fiber.Map{"code": "refused", "message": "the route's"}})
		})
	}
	calls := handlers.NewInProcess(app)
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(":authority", "localhost"))
	const fault = "validation_error: the message's own fault"
	for path, want := range map[string]codes.Code{"/body": codes.InvalidArgument, "/host": codes.InvalidArgument, "/key": codes.Unauthenticated} {
		err := invalid(ctx, calls, path, fault)
		if status.Code(err) != want || (path == "/body") != strings.Contains(err.Error(), fault) {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestModelInferRefusesWhatTheProtocolForbids: contents beside raw_input_contents and raw
// entries that do not match the inputs one for one are refused after the route's checks,
// where they were read past; an output asked for goes to the route, which knows the outputs
// there are.
func TestModelInferRefusesWhatTheProtocolForbids(t *testing.T) {
	var posted []string
	app := fiber.New()
	app.Post("/v2/models/pii/infer", func(c *fiber.Ctx) error {
		if !json.Valid(c.Body()) {
			return c.Status(422).JSON(fiber.Map{"error": "the body is not JSON"})
		}
		posted = append(posted, string(c.Body()))
		return c.JSON(fiber.Map{"model_name": "pii", "outputs": []fiber.Map{}})
	})
	s := &inference{calls: handlers.NewInProcess(app), maxBody: 1 << 20}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(":authority", "localhost"))
	text := func(name string) *inferencepb.ModelInferRequest_InferInputTensor {
		return &inferencepb.ModelInferRequest_InferInputTensor{Name: name, Datatype: "BYTES", Shape: []int64{1}}
	}
	raw := joinRaw([]string{"Alice"})
	both := text("text")
	both.Contents = &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte("Bob")}}
	for name, req := range map[string]*inferencepb.ModelInferRequest{
		"contents beside raw":  {ModelName: "pii", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{both}, RawInputContents: [][]byte{raw}},
		"a raw entry too many": {ModelName: "pii", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{text("text")}, RawInputContents: [][]byte{raw, raw}},
	} {
		if _, err := s.ModelInfer(ctx, req); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(posted) != 0 {
		t.Fatalf("refused requests reached the route: %q", posted)
	}
	req := &inferencepb.ModelInferRequest{ModelName: "pii", Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{text("text")},
		RawInputContents: [][]byte{raw}, Outputs: []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "scores"}}}
	if _, err := s.ModelInfer(ctx, req); err != nil || len(posted) != 1 || !strings.Contains(posted[0], `"outputs":[{"name":"scores"}]`) {
		t.Fatalf("an output asked for: %v, the route got %q", err, posted)
	}
}

// TestARetryReservationTravelsWithTheCall: a refusal's retry token comes back in the trailer
// beside retry-after, and a token in a call's metadata reaches the route, so a gRPC caller can
// claim the place booked for it. Only retry-after was copied and the token never forwarded:
// every reservation booked for a gRPC caller was a place held for nobody.
func TestARetryReservationTravelsWithTheCall(t *testing.T) {
	brought := make(chan string, 1)
	app := fiber.New()
	app.Post(extractPath, func(c *fiber.Ctx) error {
		brought <- c.Get(admission.RetryTokenHeader)
		c.Set(fiber.HeaderRetryAfter, "2")
		c.Set(admission.RetryTokenHeader, "booked-for-the-retry")
		return c.Status(503).JSON(fiber.Map{"error": fiber.Map{"code": handlers.CodeServiceBusy, "message": "Service busy"}})
	})
	srv, err := New(Config{Calls: handlers.NewInProcess(app), MaxMessageBytes: 1 << 20, Stall: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-sluice-retry-token", "brought-back")
	var trailer metadata.MD
	_, err = openmedpb.NewOpenMedServiceClient(conn).Extract(ctx, &openmedpb.ExtractRequest{Text: "Alice"}, grpc.Trailer(&trailer))
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a refusal: %v", err)
	}
	if got := <-brought; got != "brought-back" {
		t.Errorf("the route got the token %q", got)
	}
	if ra, tok := trailer.Get("retry-after"), trailer.Get("x-sluice-retry-token"); len(ra) != 1 || ra[0] != "2" || len(tok) != 1 || tok[0] != "booked-for-the-retry" {
		t.Errorf("trailer %v", trailer)
	}
}
