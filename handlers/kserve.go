package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
)

// The Open Inference Protocol (KServe V2) over REST, for the PII models: what KServe, Triton and
// Seldon clients send. A model is one the PII endpoint serves by that name (or lends from the
// pool); its input is one BYTES tensor of texts, its output one BYTES tensor of the same shape
// whose elements are each text's entities as a JSON array, as /pii/extract finds them (code
// point offsets). Parameters are /pii/extract's options by their names.
const (
	v2InferPath = "/v2/models/{name}/infer"
	v2ModelPath = "/v2/models/{name}"
	v2ReadyPath = "/v2/models/{name}/ready"
	// The protocol's versioned forms of the three. The server keeps no versions (a model's
	// metadata lists none), so each is answered 404 in the protocol's shape, saying so.
	v2VersionPath      = "/v2/models/{name}/versions/{version}"
	v2VersionReadyPath = v2VersionPath + "/ready"
	v2VersionInferPath = v2VersionPath + "/infer"
	v2Server           = "/v2"
	v2Live             = "/v2/health/live"
	v2Ready            = "/v2/health/ready"
	// V2MaxTexts bounds one request's batch: every text is admitted with the request.
	V2MaxTexts = 64
)

// KServeInfer is POST /v2/models/{name}/infer over ep, the PII endpoint; New adds the protocol's
// health and metadata routes beside it.
func KServeInfer(ep Endpoint) Route {
	return Route{
		Path: v2InferPath,
		Gate: ep.Gate,
		wire: v2Wire{},
		v2:   &ep,
		serve: func(s *server, c *fiber.Ctx, x *exchange) error {
			return s.serveV2Infer(c, x, &ep)
		},
	}
}

// routeOf is the route a path is labelled and authorized as: a client-chosen part (a job's id,
// a model's name) made a placeholder, so that it never becomes a route of its own.
func routeOf(path string) string {
	if rest, ok := strings.CutPrefix(path, "/v2/models/"); ok && rest != "" {
		name, tail, _ := strings.Cut(rest, "/")
		if name != "" {
			switch tail {
			case "":
				if !strings.HasSuffix(rest, "/") {
					return v2ModelPath
				}
			case "ready":
				return v2ReadyPath
			case "infer":
				return v2InferPath
			}
			if v, ok := strings.CutPrefix(tail, "versions/"); ok {
				if version, after, _ := strings.Cut(v, "/"); version != "" {
					switch {
					case after == "" && !strings.HasSuffix(v, "/"):
						return v2VersionPath
					case after == "ready":
						return v2VersionReadyPath
					case after == "infer":
						return v2VersionInferPath
					}
				}
			}
		}
		return path
	}
	return jobRoute(path)
}

// fiberPath is a route's path in the router's syntax: "{name}" as ":name".
func fiberPath(path string) string {
	return strings.NewReplacer("{name}", ":name", "{id}", ":id", "{version}", ":version").Replace(path)
}

// installV2 adds the protocol's health and metadata routes for the infer route r.
func (s *server) installV2(app *fiber.App, r *Route) {
	ep := r.v2
	app.Get(v2Live, func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"live": true}) })
	app.Get(v2Ready, func(c *fiber.Ctx) error {
		ready := s.opts.Ready()
		if !ready {
			c.Status(fiber.StatusServiceUnavailable)
		}
		return c.JSON(fiber.Map{"ready": ready})
	})
	app.Get(v2Server, func(c *fiber.Ctx) error {
		return c.JSON(fiber.Map{"name": "sluice", "version": s.opts.Version, "extensions": []string{}})
	})
	// model is the model the path names, with its max length, if it can answer now: an
	// endpoint's, or one of the pool that is loaded (one that is not is loaded by an infer,
	// never by a read).
	model := func(c *fiber.Ctx) (maxLength int, name string, ok bool) {
		name, ok = v2ModelName(c)
		if !ok {
			return 0, "", false
		}
		ex, reported, pooled, ferr := ep.resolve(&name, s.opts.Pool != nil)
		if ferr != nil {
			return 0, "", false
		}
		if pooled == "" {
			return ex.MaxLength(), reported, true
		}
		// Read from the pool's listing, never lent: a lend is a use, and a probe's reads would
		// keep the model loaded past its keep-alive.
		listed := s.opts.Pool.Models()
		i := slices.IndexFunc(listed, func(m PooledModel) bool { return m.Name == pooled && !m.Loading })
		if i < 0 {
			return 0, "", false
		}
		return listed[i].MaxLength, reported, true
	}
	app.Get(fiberPath(v2ModelPath), func(c *fiber.Ctx) error {
		maxLength, name, ok := model(c)
		if !ok {
			return s.answerError(c, v2NotFound(), v2Wire{})
		}
		return c.JSON(fiber.Map{
			"name": name, "versions": []string{}, "platform": "onnxruntime",
			"inputs":  []fiber.Map{{"name": "text", "datatype": "BYTES", "shape": []int{-1}}},
			"outputs": []fiber.Map{{"name": "entities", "datatype": "BYTES", "shape": []int{-1}}},
			"parameters": fiber.Map{"max_length": maxLength,
				"options": []string{"confidence_threshold", "use_smart_merging", "lang"}},
		})
	})
	app.Get(fiberPath(v2ReadyPath), func(c *fiber.Ctx) error {
		if _, _, ok := model(c); !ok {
			return s.answerError(c, v2NotFound(), v2Wire{})
		}
		ready := s.opts.Ready()
		if !ready {
			c.Status(fiber.StatusServiceUnavailable)
		}
		name, _ := v2ModelName(c)
		return c.JSON(fiber.Map{"name": name, "ready": ready})
	})
	noVersions := func(c *fiber.Ctx) error {
		return s.answerError(c, &apiError{Status: fiber.StatusNotFound, Code: codeNotFound,
			Message: "The server keeps no model versions: use the model's path without /versions", Outcome: OutcomeFailed}, v2Wire{})
	}
	app.Get(fiberPath(v2VersionPath), noVersions)
	app.Get(fiberPath(v2VersionReadyPath), noVersions)
	app.Post(fiberPath(v2VersionInferPath), noVersions)
	for _, p := range []string{v2Live, v2Ready, v2Server, v2ModelPath, v2ReadyPath, v2VersionPath, v2VersionReadyPath, v2VersionInferPath} {
		s.known[p] = p
		s.wires[p] = v2Wire{}
	}
}

// v2ModelName is the model the path names, its escapes undone (a name with a "/", as
// OpenMed's are, can only be sent as "%2F"); false when it does not unescape. A copy: the
// parameter is a view of the request's path, which the connection's next request writes over,
// and the pool keeps the name as the loaded model's.
func v2ModelName(c *fiber.Ctx) (string, bool) {
	name, err := url.PathUnescape(c.Params("name"))
	return strings.Clone(name), err == nil
}

func v2NotFound() *apiError {
	return &apiError{Status: fiber.StatusNotFound, Code: codeNotFound, Message: "No model of that name is served", Outcome: OutcomeFailed}
}

// v2Tensor is one input or output tensor in the protocol's JSON.
type v2Tensor struct {
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	Datatype   string          `json:"datatype"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	Data       json.RawMessage `json:"data"`
}

type v2Request struct {
	ID *string `json:"id"`
	// Parameters are read by name (v2Options): the protocol's own (binary_data_output,
	// priority, timeout, ...) that clients send by default are left alone, not refused.
	Parameters map[string]json.RawMessage `json:"parameters"`
	Inputs     []v2Tensor                 `json:"inputs"`
	// Outputs, when given, may only ask for the one output there is.
	Outputs []struct {
		Name       string                     `json:"name"`
		Parameters map[string]json.RawMessage `json:"parameters"`
	} `json:"outputs"`
}

type v2Output struct {
	Name     string   `json:"name"`
	Shape    []int64  `json:"shape"`
	Datatype string   `json:"datatype"`
	Data     []string `json:"data"`
}

type v2Response struct {
	ModelName string     `json:"model_name"`
	ID        string     `json:"id,omitempty"`
	Outputs   []v2Output `json:"outputs"`
}

// serveV2Infer runs every text of the request's one BYTES input through the model at once, so
// that the batcher sees them together.
func (s *server) serveV2Infer(c *fiber.Ctx, x *exchange, ep *Endpoint) error {
	var req v2Request
	if err := decodeStrict(c.Body(), &req); err != nil {
		return err
	}
	var errs fieldErrors
	texts, shape, ferr := v2Texts(req.Inputs, s.opts.Limits)
	errs.add(ferr)
	opts := s.v2Options(req.Parameters, &errs)
	for i, o := range req.Outputs {
		if o.Name != "entities" {
			errs.add(&FieldError{Field: "body.outputs." + strconv.Itoa(i) + ".name", Type: "value_error",
				Message: "Value error, the model's one output is entities"})
		}
	}
	name, ok := v2ModelName(c)
	ex, reported, pooled, ferr := ep.resolve(&name, s.opts.Pool != nil)
	if !ok || ferr != nil {
		return v2NotFound()
	}
	if len(errs) > 0 {
		return validationError(errs...)
	}
	release := func() {}
	if pooled != "" {
		var err error
		if ex, release, err = s.borrow(c, x, pooled, nil); errors.Is(err, ErrModelUnknown) {
			return v2NotFound() // the protocol's answer: it has no model_name field to blame
		} else if err != nil {
			return err
		}
	}
	defer release()
	ctx, done := s.workContext(c, x)
	defer done()
	results, stats, err := s.extractAll(ctx, x, ex, texts, opts)
	c.Locals(localStats, &entityStats{model: ex.Name(), stats: stats, results: len(texts)})
	if err != nil {
		return s.workError(c, x, ctx, err)
	}
	out := v2Output{Name: "entities", Shape: shape, Datatype: "BYTES", Data: make([]string, len(texts))}
	for i, ents := range results {
		b, err := marshal(entitiesJSON(texts[i], ents))
		if err != nil {
			return err
		}
		out.Data[i] = strings.TrimSuffix(string(b), "\n")
	}
	resp := v2Response{ModelName: reported, Outputs: []v2Output{out}}
	if req.ID != nil {
		resp.ID = *req.ID
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(resp)
}

// v2Options are /pii/extract's options from the parameters of their names; a parameter of
// the wrong type is named in the validation failure.
func (s *server) v2Options(params map[string]json.RawMessage, errs *fieldErrors) entities.Options {
	var smart *bool
	var lang *string
	if raw, ok := params["use_smart_merging"]; ok {
		smart = new(bool)
		if json.Unmarshal(raw, smart) != nil {
			errs.add(&FieldError{Field: "body.parameters.use_smart_merging", Message: "Input should be a valid boolean", Type: "bool_type"})
		}
	}
	if raw, ok := params["lang"]; ok {
		lang = new(string)
		if json.Unmarshal(raw, lang) != nil {
			errs.add(&FieldError{Field: "body.parameters.lang", Message: "Input should be a valid string", Type: "string_type"})
		}
	}
	var own fieldErrors
	opts := s.piiOptions(params["confidence_threshold"], smart, lang, nil, &own)
	for _, e := range own { // named where this protocol carries them
		e.Field = "body.parameters." + strings.TrimPrefix(e.Field, "body.")
		errs.add(&e)
	}
	return opts
}

// extractAll extracts every text concurrently; the first failure is the request's.
func (s *server) extractAll(ctx context.Context, x *exchange, ex Extractor, texts []string, opts entities.Options) ([][]entities.Entity, extract.Stats, error) {
	results := make([][]entities.Entity, len(texts))
	var (
		mu    sync.Mutex
		total extract.Stats
		first error
		wg    sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i, t := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ents, st, err := extractRecovered(ctx, x, ex, t, opts)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
					cancel()
				}
				return
			}
			results[i] = ents
			total.Tokens += st.Tokens
			total.Windows += st.Windows
			total.Inference += st.Inference
		}()
	}
	wg.Wait()
	return results, total, first
}

// extractRecovered is ex.Extract on a goroutine of the request's own: a panic there would end
// the process, so it becomes the request's failure (a 500 that says nothing of the text).
func extractRecovered(ctx context.Context, x *exchange, ex Extractor, text string, opts entities.Options) (ents []entities.Entity, st extract.Stats, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errExtractPanicked
		}
	}()
	return ex.Extract(ctx, x.prio, text, opts)
}

var errExtractPanicked = errors.New("handlers: the model call panicked")

// v2Texts reads the request's one BYTES input: its data flat or nested as its shape, every
// element a text /pii/extract would take.
func v2Texts(inputs []v2Tensor, lim Limits) ([]string, []int64, *FieldError) {
	if len(inputs) != 1 {
		return nil, nil, &FieldError{Field: "body.inputs", Message: "Exactly one input tensor is expected: the texts, datatype BYTES", Type: "value_error"}
	}
	in := inputs[0]
	if in.Datatype != "BYTES" {
		return nil, nil, &FieldError{Field: "body.inputs[0].datatype", Message: "Input should be 'BYTES'", Type: "literal_error"}
	}
	var texts []string
	if err := flattenStrings(in.Data, &texts, 0); err != nil || len(texts) == 0 {
		return nil, nil, &FieldError{Field: "body.inputs[0].data", Message: "Input should be a non-empty array of strings, flat or nested as the shape", Type: "list_type"}
	}
	n := int64(1)
	for _, d := range in.Shape {
		if d < 0 || d > V2MaxTexts {
			n = -1
			break
		}
		n *= d
	}
	if len(in.Shape) == 0 || n != int64(len(texts)) {
		return nil, nil, &FieldError{Field: "body.inputs[0].shape", Message: "The shape's element count should equal the number of texts in data", Type: "value_error"}
	}
	if len(texts) > V2MaxTexts {
		return nil, nil, &FieldError{Field: "body.inputs[0].data", Message: "At most " + strconv.Itoa(V2MaxTexts) + " texts a request", Type: "too_long"}
	}
	for i := range texts {
		t, ferr := checkText(&texts[i], lim)
		if ferr != nil {
			ferr.Field = "body.inputs[0].data[" + strconv.Itoa(i) + "]"
			return nil, nil, ferr
		}
		texts[i] = t
	}
	return texts, in.Shape, nil
}

// flattenStrings appends raw's strings, depth-first, to out: a string, or an array of them
// nested at most four deep.
func flattenStrings(raw json.RawMessage, out *[]string, depth int) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		*out = append(*out, s)
		return nil
	}
	var list []json.RawMessage
	if depth > 4 || json.Unmarshal(raw, &list) != nil {
		return errNotStrings
	}
	for _, item := range list {
		if err := flattenStrings(item, out, depth+1); err != nil {
			return err
		}
		if len(*out) > V2MaxTexts {
			return nil
		}
	}
	return nil
}

var errNotStrings = errors.New("not strings")

// v2Wire is the protocol's error shape: {"error": message}, with the status of the failure.
type v2Wire struct{}

func (v2Wire) reply(e *apiError, _ string) (int, any) {
	msg := e.Message
	if fields, ok := e.Details.([]FieldError); ok {
		for _, f := range fields {
			msg += "; " + f.Field + ": " + f.Message
		}
	}
	return e.Status, fiber.Map{"error": msg, "code": e.Code}
}
