package grpcserve

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/inferencepb"
)

// inference is the Open Inference Protocol's GRPCInferenceService over its REST routes
// (handlers' kserve.go, the protocol's one home): a model is a PII model, its input one BYTES
// tensor of texts, its output the texts' entities as JSON, one BYTES element each.
type inference struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
	calls *handlers.InProcess
	// maxBody bounds the REST body a ModelInfer writes: the message's limit, which the route's
	// body limit is (Config.MaxMessageBytes).
	maxBody int
}

func (s *inference) ServerLive(ctx context.Context, _ *inferencepb.ServerLiveRequest) (*inferencepb.ServerLiveResponse, error) {
	var out struct{ Live bool }
	if err := s.get(ctx, "/v2/health/live", &out); err != nil {
		return nil, err
	}
	return &inferencepb.ServerLiveResponse{Live: out.Live}, nil
}

func (s *inference) ServerReady(ctx context.Context, _ *inferencepb.ServerReadyRequest) (*inferencepb.ServerReadyResponse, error) {
	r := call(ctx, s.calls, http.MethodGet, "/v2/health/ready", nil)
	return &inferencepb.ServerReadyResponse{Ready: r.Status == http.StatusOK}, nil
}

func (s *inference) ModelReady(ctx context.Context, req *inferencepb.ModelReadyRequest) (*inferencepb.ModelReadyResponse, error) {
	r := call(ctx, s.calls, http.MethodGet, versionedPath(req.GetName(), req.GetVersion())+"/ready", nil)
	switch r.Status {
	case http.StatusOK:
		return &inferencepb.ModelReadyResponse{Ready: true}, nil
	case http.StatusServiceUnavailable:
		return &inferencepb.ModelReadyResponse{Ready: false}, nil
	}
	return nil, failure(ctx, r)
}

func (s *inference) ServerMetadata(ctx context.Context, _ *inferencepb.ServerMetadataRequest) (*inferencepb.ServerMetadataResponse, error) {
	var out struct {
		Name, Version string
		Extensions    []string
	}
	if err := s.get(ctx, "/v2", &out); err != nil {
		return nil, err
	}
	return &inferencepb.ServerMetadataResponse{Name: out.Name, Version: out.Version, Extensions: out.Extensions}, nil
}

func (s *inference) ModelMetadata(ctx context.Context, req *inferencepb.ModelMetadataRequest) (*inferencepb.ModelMetadataResponse, error) {
	type tensor struct {
		Name, Datatype string
		Shape          []int64
	}
	var out struct {
		Name, Platform  string
		Versions        []string
		Inputs, Outputs []tensor
	}
	if err := s.get(ctx, versionedPath(req.GetName(), req.GetVersion()), &out); err != nil {
		return nil, err
	}
	meta := func(ts []tensor) []*inferencepb.ModelMetadataResponse_TensorMetadata {
		var m []*inferencepb.ModelMetadataResponse_TensorMetadata
		for _, t := range ts {
			m = append(m, &inferencepb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape})
		}
		return m
	}
	return &inferencepb.ModelMetadataResponse{Name: out.Name, Versions: out.Versions, Platform: out.Platform,
		Inputs: meta(out.Inputs), Outputs: meta(out.Outputs)}, nil
}

// ModelInfer is POST /v2/models/{name}/infer (with a model_version, its versioned form, which
// answers as the REST route does): the texts from the input's contents or, as Triton's clients
// send them, its raw bytes (each a 4-byte little-endian length, then the bytes); the entities
// come back the same way the texts came.
func (s *inference) ModelInfer(ctx context.Context, req *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	path := versionedPath(req.GetModelName(), req.GetModelVersion()) + "/infer"
	raw := len(req.GetRawInputContents()) > 0
	// What the protocol forbids is refused rather than read past (after the route's checks),
	// and before anything is built: an empty input is 2 bytes of the message and was ~127 of
	// Go and JSON, so a message of empty inputs cost 300 times its size before any credentials
	// were heard.
	switch {
	case len(req.GetInputs()) != 1:
		return nil, invalid(ctx, s.calls, path, "validation_error: exactly one input tensor is expected: the texts, datatype BYTES")
	case len(req.GetOutputs()) > 1:
		return nil, invalid(ctx, s.calls, path, "validation_error: the model has one output, entities: ask for it at most once")
	case raw && len(req.GetRawInputContents()) != 1:
		return nil, invalid(ctx, s.calls, path, "validation_error: raw_input_contents must hold one entry for each input")
	case !finiteParameters(req.GetParameters()):
		// JSON has no form for them: the body could not carry the request.
		return nil, invalid(ctx, s.calls, path, "validation_error: a double_param must be a finite number")
	}
	in := req.GetInputs()[0]
	var elems [][]byte
	if raw {
		if in.GetContents() != nil {
			return nil, invalid(ctx, s.calls, path, "validation_error: an input's contents must be empty when raw_input_contents carries them")
		}
		var ok bool
		if elems, ok = splitRaw(req.GetRawInputContents()[0], handlers.V2MaxTexts+1); !ok {
			return nil, invalid(ctx, s.calls, path, "validation_error: raw BYTES contents are a 4-byte length before each element")
		}
	} else {
		elems = in.GetContents().GetBytesContents()
	}
	if len(elems) > handlers.V2MaxTexts {
		return nil, invalid(ctx, s.calls, path, fmt.Sprintf("validation_error: at most %d texts a request", handlers.V2MaxTexts))
	}
	for _, e := range elems {
		if !utf8.Valid(e) {
			// JSON would carry it as U+FFFD: the text the model read would not be the client's.
			return nil, invalid(ctx, s.calls, path, "validation_error: every BYTES element must be UTF-8 text")
		}
	}
	r := call(ctx, s.calls, http.MethodPost, path, inferBody(req, elems, s.maxBody))
	if r.Status != http.StatusOK {
		return nil, failure(ctx, r)
	}
	type tensor struct {
		Name     string   `json:"name"`
		Shape    []int64  `json:"shape"`
		Datatype string   `json:"datatype"`
		Data     []string `json:"data"`
	}
	var got struct {
		ModelName string   `json:"model_name"`
		ID        string   `json:"id"`
		Outputs   []tensor `json:"outputs"`
	}
	if err := json.Unmarshal(r.Body, &got); err != nil {
		return nil, status.Error(codes.Internal, "the answer does not fit the protocol")
	}
	out := &inferencepb.ModelInferResponse{ModelName: got.ModelName, Id: got.ID}
	for _, t := range got.Outputs {
		o := &inferencepb.ModelInferResponse_InferOutputTensor{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape}
		if raw {
			out.RawOutputContents = append(out.RawOutputContents, joinRaw(t.Data))
		} else {
			o.Contents = &inferencepb.InferTensorContents{}
			for _, d := range t.Data {
				o.Contents.BytesContents = append(o.Contents.BytesContents, []byte(d))
			}
		}
		out.Outputs = append(out.Outputs, o)
	}
	return out, nil
}

// inferBody is req's REST body, its one input's data elems, held to most bytes as it is
// written (see restBody).
func inferBody(req *inferencepb.ModelInferRequest, elems [][]byte, most int) []byte {
	in := req.GetInputs()[0]
	// Room for about the message's size (a body is about its message's, save for escapes),
	// so that most bodies are written without growing.
	w := newRESTBody(most, proto.Size(req)+256)
	w.raw("{")
	if id := req.GetId(); id != "" {
		w.raw(`"id":`)
		writeString(w, id)
		w.raw(",")
	}
	if ps := req.GetParameters(); len(ps) > 0 {
		w.raw(`"parameters":`)
		writeParameters(w, ps)
		w.raw(",")
	}
	w.raw(`"inputs":[{"name":`)
	writeString(w, in.GetName())
	w.raw(`,"shape":[`)
	for i, d := range in.GetShape() {
		if i > 0 {
			w.raw(",")
		}
		w.int64(d)
	}
	w.raw(`],"datatype":`)
	writeString(w, in.GetDatatype())
	w.raw(`,"data":[`)
	for i, e := range elems {
		if i > 0 {
			w.raw(",")
		}
		writeString(w, e)
	}
	w.raw("]}]")
	if outs := req.GetOutputs(); len(outs) > 0 {
		w.raw(`,"outputs":[{"name":`)
		writeString(w, outs[0].GetName())
		w.raw("}]")
	}
	w.raw("}")
	return w.b
}

func (s *inference) get(ctx context.Context, path string, out any) error {
	r := call(ctx, s.calls, http.MethodGet, path, nil)
	if r.Status != http.StatusOK {
		return failure(ctx, r)
	}
	if err := json.Unmarshal(r.Body, out); err != nil {
		return status.Error(codes.Internal, "the answer does not fit the protocol")
	}
	return nil
}

func modelPath(name string) string { return "/v2/models/" + url.PathEscape(name) }

// versionedPath is the model's path, in its versioned form when a version is named: the
// server keeps none, and the route says so (404), after its checks, as over REST.
func versionedPath(name, version string) string {
	if version == "" {
		return modelPath(name)
	}
	return modelPath(name) + "/versions/" + url.PathEscape(version)
}

// finiteParameters is whether every double_param of ps is a number JSON can write.
func finiteParameters(ps map[string]*inferencepb.InferParameter) bool {
	for _, p := range ps {
		if d, ok := p.GetParameterChoice().(*inferencepb.InferParameter_DoubleParam); ok && (math.IsNaN(d.DoubleParam) || math.IsInf(d.DoubleParam, 0)) {
			return false
		}
	}
	return true
}

// writeParameters writes ps as a JSON object of their values, each of its own type (one with
// no value set left out); every double is finite (finiteParameters).
func writeParameters(w *restBody, ps map[string]*inferencepb.InferParameter) {
	w.raw("{")
	first := true
	for k, p := range ps {
		choice := p.GetParameterChoice()
		if choice == nil {
			continue
		}
		if !first {
			w.raw(",")
		}
		first = false
		writeString(w, k)
		w.raw(":")
		switch c := choice.(type) {
		case *inferencepb.InferParameter_BoolParam:
			w.raw(strconv.FormatBool(c.BoolParam))
		case *inferencepb.InferParameter_Int64Param:
			w.int64(c.Int64Param)
		case *inferencepb.InferParameter_Uint64Param:
			w.uint64(c.Uint64Param)
		case *inferencepb.InferParameter_DoubleParam:
			w.float(c.DoubleParam)
		case *inferencepb.InferParameter_StringParam:
			writeString(w, c.StringParam)
		}
	}
	w.raw("}")
}

// restBody is a REST body written as it is built, held to most bytes: past them it keeps
// most+1, enough for the route to answer its 413 as it would the whole body, and writes
// nothing more. Its values are encoding/json's forms, unescaped for HTML: a text of "<" and
// "&" keeps its size, within the body limit its message kept.
type restBody struct {
	b    []byte
	most int
}

func newRESTBody(most, room int) *restBody {
	return &restBody{b: make([]byte, 0, min(most+1, room)), most: most}
}

func (w *restBody) full() bool { return len(w.b) > w.most }

func (w *restBody) raw(s string) {
	if !w.full() {
		w.b = append(w.b, s...)
		w.clip()
	}
}

func (w *restBody) int64(n int64) {
	if !w.full() {
		w.b = strconv.AppendInt(w.b, n, 10)
		w.clip()
	}
}

func (w *restBody) uint64(n uint64) {
	if !w.full() {
		w.b = strconv.AppendUint(w.b, n, 10)
		w.clip()
	}
}

// clip keeps most+1 bytes of a body past most.
func (w *restBody) clip() {
	if w.full() {
		w.b = w.b[:w.most+1]
	}
}

// float writes a finite f as encoding/json does.
func (w *restBody) float(f float64) {
	out, _ := json.Marshal(f)
	w.raw(string(out))
}

// stringPiece is how much of a string is escaped at once: escaping may make a text six times
// its size ("\u0001" for a control character), so a text is escaped a piece at a time and
// stops at the bound.
const stringPiece = 1 << 10

// writeString writes s as a JSON string, a piece at a time (each cut at a character's start,
// where escaping may resume), none once the body is full.
func writeString[T string | []byte](w *restBody, s T) {
	w.raw(`"`)
	for len(s) > 0 && !w.full() {
		n := min(len(s), stringPiece)
		for n < len(s) && n > 1 && !utf8.RuneStart(s[n]) {
			n--
		}
		w.b = handlers.AppendJSONEscaped(w.b, s[:n])
		w.clip()
		s = s[n:]
	}
	w.raw(`"`)
}

// splitRaw reads raw BYTES contents: each element a 4-byte little-endian length, then that many
// bytes; it stops after most elements (a request past the texts' bound needs no more read).
func splitRaw(b []byte, most int) ([][]byte, bool) {
	var out [][]byte
	for len(b) > 0 && len(out) < most {
		if len(b) < 4 {
			return nil, false
		}
		n := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, false
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out, true
}

func joinRaw(elems []string) []byte {
	var out []byte
	for _, e := range elems {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(e)))
		out = append(out, e...)
	}
	return out
}
