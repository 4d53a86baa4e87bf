package grpcserve

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/inferencepb"
)

// inference is the Open Inference Protocol's GRPCInferenceService over its REST routes
// (handlers' kserve.go, the protocol's one home): a model is a PII model, its input one BYTES
// tensor of texts, its output the texts' entities as JSON, one BYTES element each.
type inference struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
	calls *handlers.InProcess
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
	r := call(ctx, s.calls, http.MethodGet, modelPath(req.GetName())+"/ready", nil)
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
	if err := s.get(ctx, modelPath(req.GetName()), &out); err != nil {
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

// ModelInfer is POST /v2/models/{name}/infer: the texts from the input's contents or, as
// Triton's clients send them, its raw bytes (each a 4-byte little-endian length, then the
// bytes); the entities come back the same way the texts came.
func (s *inference) ModelInfer(ctx context.Context, req *inferencepb.ModelInferRequest) (*inferencepb.ModelInferResponse, error) {
	raw := len(req.GetRawInputContents()) > 0
	type tensor struct {
		Name     string   `json:"name"`
		Shape    []int64  `json:"shape"`
		Datatype string   `json:"datatype"`
		Data     []string `json:"data"`
	}
	type output struct {
		Name string `json:"name"`
	}
	body := struct {
		ID         string         `json:"id,omitempty"`
		Parameters map[string]any `json:"parameters,omitempty"`
		Inputs     []tensor       `json:"inputs"`
		Outputs    []output       `json:"outputs,omitempty"`
	}{ID: req.GetId(), Parameters: parameters(req.GetParameters())}
	for _, o := range req.GetOutputs() {
		body.Outputs = append(body.Outputs, output{Name: o.GetName()})
	}
	path := modelPath(req.GetModelName()) + "/infer"
	// What the protocol forbids is refused rather than read past (after the route's checks).
	switch {
	case req.GetModelVersion() != "":
		return nil, invalid(ctx, s.calls, path, "validation_error: the server keeps no model versions; leave model_version empty")
	case raw && len(req.GetRawInputContents()) != len(req.GetInputs()):
		return nil, invalid(ctx, s.calls, path, "validation_error: raw_input_contents must hold one entry for each input")
	}
	texts := 0
	for i, in := range req.GetInputs() {
		t := tensor{Name: in.GetName(), Shape: in.GetShape(), Datatype: in.GetDatatype(), Data: []string{}}
		var elems [][]byte
		if raw {
			if in.GetContents() != nil {
				return nil, invalid(ctx, s.calls, path, "validation_error: an input's contents must be empty when raw_input_contents carries them")
			}
			var ok bool
			if elems, ok = splitRaw(req.GetRawInputContents()[i], handlers.V2MaxTexts+1); !ok {
				return nil, invalid(ctx, s.calls, path, "validation_error: raw BYTES contents are a 4-byte length before each element")
			}
		} else {
			elems = in.GetContents().GetBytesContents()
		}
		if texts += len(elems); texts > handlers.V2MaxTexts {
			return nil, invalid(ctx, s.calls, path, fmt.Sprintf("validation_error: at most %d texts a request", handlers.V2MaxTexts))
		}
		for _, e := range elems {
			if !utf8.Valid(e) {
				// JSON would carry it as U+FFFD: the text the model read would not be the client's.
				return nil, invalid(ctx, s.calls, path, "validation_error: every BYTES element must be UTF-8 text")
			}
			t.Data = append(t.Data, string(e))
		}
		body.Inputs = append(body.Inputs, t)
	}
	// Unescaped: a text of "<" and "&" keeps its size, within the body limit its message kept.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, status.Error(codes.InvalidArgument, "the request could not be encoded")
	}
	data := buf.Bytes()
	r := call(ctx, s.calls, http.MethodPost, path, data)
	if r.Status != http.StatusOK {
		return nil, failure(ctx, r)
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

// parameters are the request's parameters as JSON values.
func parameters(ps map[string]*inferencepb.InferParameter) map[string]any {
	if len(ps) == 0 {
		return nil
	}
	out := make(map[string]any, len(ps))
	for k, p := range ps {
		switch v := p.GetParameterChoice().(type) {
		case *inferencepb.InferParameter_BoolParam:
			out[k] = v.BoolParam
		case *inferencepb.InferParameter_Int64Param:
			out[k] = v.Int64Param
		case *inferencepb.InferParameter_StringParam:
			out[k] = v.StringParam
		case *inferencepb.InferParameter_DoubleParam:
			out[k] = v.DoubleParam
		case *inferencepb.InferParameter_Uint64Param:
			out[k] = v.Uint64Param
		}
	}
	return out
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
