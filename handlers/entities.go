package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/handlers/connwatch"
)

// errClientGone marks work abandoned because the client disconnected.
var errClientGone = errors.New("client disconnected")

// Extractor finds entities in text with one model; extract.Classifier is the real one.
type Extractor interface {
	Extract(ctx context.Context, text string, opts entities.Options) ([]entities.Entity, extract.Stats, error)
	Name() string
	MaxLength() int
	Depth() (waiting, running int)
}

// Endpoint is what one entity route serves.
type Endpoint struct {
	// Queue names the endpoint's queue in error details and metrics ("analyze", "pii_extract").
	Queue string
	// Default is the model used, and the model_name reported, when a request names none.
	Default string
	// Models maps every accepted model_name (names and aliases) to its extractor.
	Models map[string]Extractor
	// Gate is the endpoint's admission control (required): it refuses before the body is
	// parsed and turns the batcher's refusals into answers with a computed Retry-After.
	Gate *admission.Gate
}

type analyzeRequest struct {
	Text                *string         `json:"text"`
	ModelName           *string         `json:"model_name"`
	ConfidenceThreshold *float64        `json:"confidence_threshold"`
	GroupEntities       *bool           `json:"group_entities"`
	AggregationStrategy json.RawMessage `json:"aggregation_strategy"`
	SentenceDetection   *bool           `json:"sentence_detection"`
	SentenceLanguage    *string         `json:"sentence_language"`
	SentenceClean       *bool           `json:"sentence_clean"`
	UseFastTokenizer    *bool           `json:"use_fast_tokenizer"`
	KeepAlive           json.RawMessage `json:"keep_alive"`
}

type piiRequest struct {
	Text                *string         `json:"text"`
	ModelName           *string         `json:"model_name"`
	ConfidenceThreshold json.RawMessage `json:"confidence_threshold"`
	UseSmartMerging     *bool           `json:"use_smart_merging"`
	Lang                *string         `json:"lang"`
	NormalizeAccents    *bool           `json:"normalize_accents"`
	KeepAlive           json.RawMessage `json:"keep_alive"`
}

type entityJSON struct {
	Text       string         `json:"text"`
	Label      string         `json:"label"`
	Confidence float64        `json:"confidence"`
	Start      int            `json:"start"`
	End        int            `json:"end"`
	Metadata   map[string]any `json:"metadata"`
}

type extractResponse struct {
	Text           string         `json:"text"`
	Entities       []entityJSON   `json:"entities"`
	ModelName      string         `json:"model_name"`
	Timestamp      string         `json:"timestamp"`
	ProcessingTime float64        `json:"processing_time"`
	Metadata       map[string]any `json:"metadata"`
}

// requestStats are what the access log records of an entity request: sizes and timings only.
type requestStats struct {
	model   string
	stats   extract.Stats
	results int
}

func (s *requestStats) attrs() []slog.Attr {
	return []slog.Attr{
		slog.String("model", s.model),
		slog.Int("tokens", s.stats.Tokens),
		slog.Int("windows", s.stats.Windows),
		slog.Int("entities", s.results),
		slog.Float64("inference_ms", float64(s.stats.Inference.Microseconds())/1000),
	}
}

func (s *server) analyze(c *fiber.Ctx) error {
	return s.entityRoute(c, &s.opts.Analyze, s.parseAnalyze)
}

func (s *server) piiExtract(c *fiber.Ctx) error {
	return s.entityRoute(c, &s.opts.PII, s.parsePII)
}

// parsedRequest is what both entity routes read from their body.
type parsedRequest struct {
	text  *string
	model *string
	opts  entities.Options
}

// fieldErrors collects every validation failure of a request, so a client fixes them at once.
type fieldErrors []FieldError

func (f *fieldErrors) add(e *FieldError) {
	if e != nil {
		*f = append(*f, *e)
	}
}

// entityRoute is the flow both entity routes share: admission before anything is read, then
// the route's own parsing, the common text and model checks, and the extraction.
func (s *server) entityRoute(c *fiber.Ctx, ep *Endpoint, parse func([]byte, *fieldErrors) (parsedRequest, *apiError)) error {
	prio, err := s.admit(c, ep)
	if err != nil {
		return err
	}
	var errs fieldErrors
	req, aerr := parse(c.Body(), &errs)
	if aerr != nil {
		return aerr
	}
	text, ferr := checkText(req.text, s.opts.Limits)
	errs.add(ferr)
	ex, reported, ferr := ep.resolve(req.model)
	errs.add(ferr)
	if len(errs) > 0 {
		return validationError(errs...)
	}
	return s.runExtract(c, ep, prio, ex, reported, text, req.opts)
}

func (s *server) parseAnalyze(body []byte, errs *fieldErrors) (parsedRequest, *apiError) {
	var req analyzeRequest
	if err := decodeStrict(body, &req); err != nil {
		return parsedRequest{}, err
	}
	opts := entities.AnalyzeOptions()
	if req.ConfidenceThreshold != nil {
		errs.add(checkThreshold(*req.ConfidenceThreshold))
		opts.ConfidenceThreshold = *req.ConfidenceThreshold
	}
	if req.GroupEntities != nil {
		opts.GroupEntities = *req.GroupEntities
	}
	strategy, ferr := parseStrategy(req.AggregationStrategy)
	errs.add(ferr)
	opts.Strategy = strategy
	errs.add(checkKeepAlive(req.KeepAlive))
	return parsedRequest{text: req.Text, model: req.ModelName, opts: opts}, nil
}

func (s *server) parsePII(body []byte, errs *fieldErrors) (parsedRequest, *apiError) {
	var req piiRequest
	if err := decodeStrict(body, &req); err != nil {
		return parsedRequest{}, err
	}
	opts := s.piiDefaults // a copy; its pattern list is shared read-only
	if len(req.ConfidenceThreshold) > 0 {
		// Unlike /analyze, OpenMed's PII request has a non-nullable threshold.
		var v float64
		if err := json.Unmarshal(req.ConfidenceThreshold, &v); err != nil || string(req.ConfidenceThreshold) == "null" {
			errs.add(&FieldError{Field: "body.confidence_threshold", Message: "Input should be a valid number", Type: "float_type"})
		} else {
			errs.add(checkThreshold(v))
		}
		opts.ConfidenceThreshold = v
	}
	if req.UseSmartMerging != nil && !*req.UseSmartMerging {
		opts.SmartMerge = nil
	}
	if req.Lang != nil && strings.ToLower(strings.TrimSpace(*req.Lang)) != "en" {
		// The shipped PII model and its patterns are English; answering another language
		// with English patterns would silently miss identifiers.
		errs.add(&FieldError{Field: "body.lang", Message: "Input should be 'en' (the only language the loaded PII model serves)", Type: "literal_error"})
	}
	errs.add(checkKeepAlive(req.KeepAlive))
	return parsedRequest{text: req.Text, model: req.ModelName, opts: opts}, nil
}

// resolve maps a request's model_name to an extractor and the name to report back.
func (e *Endpoint) resolve(name *string) (Extractor, string, *FieldError) {
	if name == nil {
		return e.Models[e.Default], e.Default, nil
	}
	n := strings.TrimSpace(*name)
	if ex, ok := e.Models[n]; ok {
		return ex, *name, nil
	}
	known := make([]string, 0, len(e.Models))
	for k := range e.Models {
		known = append(known, k)
	}
	sort.Strings(known)
	return nil, "", &FieldError{Field: "body.model_name", Type: "value_error",
		Message: "Value error, model_name is not a loaded model; loaded: " + strings.Join(known, ", ")}
}

func (s *server) runExtract(c *fiber.Ctx, ep *Endpoint, prio admission.Priority, ex Extractor, reported, text string, opts entities.Options) error {
	ctx := c.UserContext()
	if s.opts.Watcher != nil {
		// fasthttp never tells a handler that its client left; the watcher does, so a queued
		// request is dropped before it is computed.
		var stop func()
		ctx, stop = s.opts.Watcher.Watch(ctx, c.Context().Conn())
		defer stop()
	}
	ctx, cancel := context.WithTimeout(batcher.WithPriority(ctx, prio), s.opts.RequestTimeout)
	defer cancel()
	start := s.opts.Clock.Now()
	ents, st, err := ex.Extract(ctx, text, opts)
	elapsed := s.opts.Clock.Now().Sub(start)
	c.Locals(localStats, &requestStats{model: ex.Name(), stats: st, results: len(ents)})
	if err != nil {
		if ref, ok := ep.Gate.Refuse(prio, err); ok {
			return s.writeRefusal(c, ref)
		}
		if errors.Is(err, context.Canceled) {
			s.countAborted(ctx, ep, err)
		}
		if errors.Is(context.Cause(ctx), connwatch.ErrClientGone) {
			err = errClientGone
		}
		return s.extractError(err)
	}
	spans := entities.CodePointSpans(text, ents)
	out := extractResponse{
		Text:           text,
		Entities:       make([]entityJSON, len(ents)),
		ModelName:      reported,
		Timestamp:      s.opts.Clock.Now().Format("2006-01-02T15:04:05.000000"),
		ProcessingTime: elapsed.Seconds(),
		Metadata: map[string]any{
			"sentence_detection": false,
			"max_length":         ex.MaxLength(),
			"windows":            st.Windows,
		},
	}
	for i, e := range ents {
		out.Entities[i] = entityJSON{
			Text: text[e.Start:e.End], Label: e.Label, Confidence: e.Score,
			Start: spans[i].Start, End: spans[i].End,
			Metadata: map[string]any{"span_valid": true},
		}
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(out)
}

func (s *server) extractError(err error) *apiError {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		secs := s.opts.RequestTimeout.Seconds()
		return &apiError{Status: fiber.StatusGatewayTimeout, Code: CodeTimeout, Outcome: OutcomeTimedOut,
			Message: "Request exceeded configured timeout of " + strconv.FormatFloat(secs, 'g', -1, 64) + " seconds",
			Details: map[string]any{"timeout_seconds": secs}}
	case errors.Is(err, errClientGone), errors.Is(err, context.Canceled):
		// The client has gone; nobody reads this answer, but the outcome must be counted.
		return &apiError{Status: 499, Code: "client_closed_request", Outcome: OutcomeAborted,
			Message: "Client closed the request"}
	case errors.Is(err, batcher.ErrClosed):
		return &apiError{Status: fiber.StatusServiceUnavailable, Code: CodeNotReady, Outcome: OutcomeRefused,
			Message: "Service is shutting down and not accepting new requests",
			Details: map[string]string{"reason": "shutting_down"},
			Headers: map[string]string{fiber.HeaderRetryAfter: "1"}}
	default:
		return &apiError{Status: fiber.StatusInternalServerError, Code: CodeInternal, Outcome: OutcomeFailed,
			Message: "Internal server error"}
	}
}

// parseStrategy reads aggregation_strategy: absent means OpenMed's default "simple"; an
// explicit null is forwarded to HF by OpenMed as "no aggregation", i.e. raw tokens.
func parseStrategy(raw json.RawMessage) (entities.Strategy, *FieldError) {
	if len(raw) == 0 {
		return entities.StrategySimple, nil
	}
	if string(raw) == "null" {
		return entities.StrategyNone, nil
	}
	var name string
	if json.Unmarshal(raw, &name) == nil {
		switch name {
		case "simple", "first", "average", "max":
			st, err := entities.ParseStrategy(name)
			if err == nil {
				return st, nil
			}
		}
	}
	return 0, &FieldError{Field: "body.aggregation_strategy",
		Message: "Input should be 'simple', 'first', 'average' or 'max'", Type: "literal_error"}
}
