package grpcserve

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/inferencepb"
)

// v2Route answers POST /v2/models/pii/infer as the REST route's edge does: 401 without an
// authorization header, 422 for a body that is not UTF-8 (what invalid sends), 413 past
// limit bytes; otherwise it keeps the body and answers an empty success.
type v2Route struct {
	mu     sync.Mutex
	posted [][]byte
}

func (v *v2Route) app(limit int) *fiber.App {
	app := fiber.New(fiber.Config{BodyLimit: 64 << 20})
	app.Post("/v2/models/pii/infer", func(c *fiber.Ctx) error {
		switch {
		case c.Get("Authorization") == "":
			return c.Status(401).JSON(fiber.Map{"error": "Missing credentials"})
		case len(c.Body()) > limit:
			return c.Status(413).JSON(fiber.Map{"error": "The body exceeds the limit"})
		case !json.Valid(c.Body()):
			return c.Status(422).JSON(fiber.Map{"error": "The body is not JSON"})
		}
		v.mu.Lock()
		v.posted = append(v.posted, append([]byte(nil), c.Body()...))
		v.mu.Unlock()
		return c.JSON(fiber.Map{"model_name": "pii", "outputs": []fiber.Map{}})
	})
	return app
}

func callerContext(authorized bool) context.Context {
	md := metadata.Pairs(":authority", "localhost")
	if authorized {
		md.Append("authorization", "Bearer a-key")
	}
	return metadata.NewIncomingContext(context.Background(), md)
}

func oneText(texts ...string) []*inferencepb.ModelInferRequest_InferInputTensor {
	in := &inferencepb.ModelInferRequest_InferInputTensor{Name: "text", Datatype: "BYTES", Shape: []int64{int64(len(texts))},
		Contents: &inferencepb.InferTensorContents{}}
	for _, t := range texts {
		in.Contents.BytesContents = append(in.Contents.BytesContents, []byte(t))
	}
	return []*inferencepb.ModelInferRequest_InferInputTensor{in}
}

// TestModelInferRefusesManyInputsBeforeBuildingAnything: the model takes one input and has one
// output, so a request with more is refused before its REST body is built, and only after the
// route has heard the credentials. The whole body was built first, where an empty input is 2
// bytes of the message and ~127 of Go and JSON: a 990 KB message of empty inputs cost 312 MB
// before the route answered 401, unauthenticated.
func TestModelInferRefusesManyInputsBeforeBuildingAnything(t *testing.T) {
	var route v2Route
	s := &inference{calls: handlers.NewInProcess(route.app(1 << 20)), maxBody: 1 << 20}
	inputs := make([]*inferencepb.ModelInferRequest_InferInputTensor, 495_000)
	outputs := make([]*inferencepb.ModelInferRequest_InferRequestedOutputTensor, 495_000)
	for i := range inputs {
		inputs[i], outputs[i] = &inferencepb.ModelInferRequest_InferInputTensor{}, &inferencepb.ModelInferRequest_InferRequestedOutputTensor{}
	}
	for name, req := range map[string]*inferencepb.ModelInferRequest{
		"empty inputs":  {ModelName: "pii", Inputs: inputs},
		"empty outputs": {ModelName: "pii", Inputs: oneText("Alice"), Outputs: outputs},
	} {
		wire, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		decoded := &inferencepb.ModelInferRequest{}
		if err := proto.Unmarshal(wire, decoded); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = s.ModelInfer(callerContext(false), decoded)
		runtime.ReadMemStats(&after)
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s without credentials: %v", name, err)
		}
		if spent := after.TotalAlloc - before.TotalAlloc; spent > 4*uint64(len(wire)) {
			t.Errorf("%s: %d bytes allocated for a message of %d", name, spent, len(wire))
		}
		if _, err := s.ModelInfer(callerContext(true), decoded); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(route.posted) != 0 {
		t.Errorf("%d refused requests reached the route", len(route.posted))
	}
}

// TestModelInferWritesTheBodyEncodingJSONWould: the body written piece by piece is byte for
// byte what encoding/json (HTML left unescaped) writes for the request, with texts that escape
// and a text whose pieces end inside a character.
func TestModelInferWritesTheBodyEncodingJSONWould(t *testing.T) {
	texts := []string{"<Alice & \"Bob\">\x01\u2028\\", strings.Repeat("€", 3000)}
	req := &inferencepb.ModelInferRequest{ModelName: "pii", Id: "q<1>", Inputs: oneText(texts...),
		Parameters: map[string]*inferencepb.InferParameter{"lang": {ParameterChoice: &inferencepb.InferParameter_StringParam{StringParam: "fr"}}},
		Outputs:    []*inferencepb.ModelInferRequest_InferRequestedOutputTensor{{Name: "entities"}}}
	type tensor struct {
		Name     string   `json:"name"`
		Shape    []int64  `json:"shape"`
		Datatype string   `json:"datatype"`
		Data     []string `json:"data"`
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		ID         string            `json:"id"`
		Parameters map[string]string `json:"parameters"`
		Inputs     []tensor          `json:"inputs"`
		Outputs    []map[string]any  `json:"outputs"`
	}{"q<1>", map[string]string{"lang": "fr"}, []tensor{{"text", []int64{2}, "BYTES", texts}}, []map[string]any{{"name": "entities"}}}); err != nil {
		t.Fatal(err)
	}
	got := inferBody(req, req.Inputs[0].Contents.BytesContents, 1<<20)
	if !bytes.Equal(got, bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
		t.Fatalf("written:\n%.300s\nencoding/json:\n%.300s", got, want.Bytes())
	}
}

// TestModelInferHoldsItsBodyToTheMessageLimit: the body is written no further than a byte past
// the limit, for the route to answer its 413 as it would the whole; the body was built whole,
// and a text of control characters is six times its size escaped.
func TestModelInferHoldsItsBodyToTheMessageLimit(t *testing.T) {
	const limit = 64 << 10
	var route v2Route
	s := &inference{calls: handlers.NewInProcess(route.app(limit)), maxBody: limit}
	text := strings.Repeat("\x01", limit-100) // fits the message; 6 times the limit escaped
	req := &inferencepb.ModelInferRequest{ModelName: "pii", Inputs: oneText(text)}
	inferBody(req, req.Inputs[0].Contents.BytesContents, limit) // fills encoding/json's caches
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	body := inferBody(req, req.Inputs[0].Contents.BytesContents, limit)
	runtime.ReadMemStats(&after)
	if len(body) != limit+1 {
		t.Errorf("a body of %d bytes for a limit of %d", len(body), limit)
	}
	if spent := after.TotalAlloc - before.TotalAlloc; spent > 4*limit {
		t.Errorf("%d bytes allocated to write a body held to %d", spent, limit)
	}
	if _, err := s.ModelInfer(callerContext(true), req); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a body past the limit: %v", err)
	}
}

// TestAModelVersionIsAskedOfItsVersionedRoute: ModelReady, ModelMetadata and ModelInfer with a
// version ask the REST route of that version, which says (404, after the credentials) that the
// server keeps no versions. ModelReady and ModelMetadata asked the model's own route and
// answered for any version; ModelInfer refused it as INVALID_ARGUMENT.
func TestAModelVersionIsAskedOfItsVersionedRoute(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	app := fiber.New()
	app.Use(func(c *fiber.Ctx) error {
		mu.Lock()
		asked = append(asked, c.Method()+" "+c.Path())
		mu.Unlock()
		if c.Get("Authorization") == "" {
			return c.Status(401).JSON(fiber.Map{"error": "Missing credentials"})
		}
		return c.Next()
	})
	noVersions := func(c *fiber.Ctx) error {
		return c.Status(404).JSON(fiber.Map{"error": "The server keeps no model versions"})
	}
	app.Get("/v2/models/pii/versions/:v", noVersions)
	app.Get("/v2/models/pii/versions/:v/ready", noVersions)
	app.Post("/v2/models/pii/versions/:v/infer", noVersions)
	app.Get("/v2/models/pii", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"name": "pii"}) })
	app.Get("/v2/models/pii/ready", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"ready": true}) })
	s := &inference{calls: handlers.NewInProcess(app), maxBody: 1 << 20}

	calls := map[string]func(ctx context.Context, version string) error{
		"ModelReady": func(ctx context.Context, v string) error {
			_, err := s.ModelReady(ctx, &inferencepb.ModelReadyRequest{Name: "pii", Version: v})
			return err
		},
		"ModelMetadata": func(ctx context.Context, v string) error {
			_, err := s.ModelMetadata(ctx, &inferencepb.ModelMetadataRequest{Name: "pii", Version: v})
			return err
		},
		"ModelInfer": func(ctx context.Context, v string) error {
			_, err := s.ModelInfer(ctx, &inferencepb.ModelInferRequest{ModelName: "pii", ModelVersion: v, Inputs: oneText("Alice")})
			return err
		},
	}
	for name, do := range calls {
		if err := do(callerContext(true), "7"); status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "no model versions") {
			t.Errorf("%s of version 7: %v", name, err)
		}
		if err := do(callerContext(false), "7"); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s of version 7 without credentials: %v", name, err)
		}
	}
	for _, name := range []string{"ModelReady", "ModelMetadata"} {
		if err := calls[name](callerContext(true), ""); err != nil {
			t.Errorf("%s of no version: %v", name, err)
		}
	}
	want := map[string]bool{"GET /v2/models/pii/versions/7/ready": true, "GET /v2/models/pii/versions/7": true,
		"POST /v2/models/pii/versions/7/infer": true, "GET /v2/models/pii/ready": true, "GET /v2/models/pii": true}
	for _, a := range asked {
		if !want[a] {
			t.Errorf("asked %s", a)
		}
	}
}

// TestANonFiniteDoubleParamIsRefusedAfterTheCredentials: NaN and ±Inf, which JSON cannot
// carry, are INVALID_ARGUMENT once the route has heard the credentials, as every fault the
// gRPC side finds is; they were refused before, to a caller without any.
func TestANonFiniteDoubleParamIsRefusedAfterTheCredentials(t *testing.T) {
	var route v2Route
	s := &inference{calls: handlers.NewInProcess(route.app(1 << 20)), maxBody: 1 << 20}
	for _, d := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		req := &inferencepb.ModelInferRequest{ModelName: "pii", Inputs: oneText("Alice"), Parameters: map[string]*inferencepb.InferParameter{
			"confidence_threshold": {ParameterChoice: &inferencepb.InferParameter_DoubleParam{DoubleParam: d}}}}
		if _, err := s.ModelInfer(callerContext(false), req); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%v without credentials: %v", d, err)
		}
		if _, err := s.ModelInfer(callerContext(true), req); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "finite") {
			t.Errorf("%v: %v", d, err)
		}
	}
	if len(route.posted) != 0 {
		t.Errorf("%d refused requests reached the route", len(route.posted))
	}
}
