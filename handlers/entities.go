package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
)

// Extractor finds entities in text with one model; extract.Classifier is the real one. Its
// errors wrap admission's (ErrQueueFull, ErrExpired, ErrClosed) and context's when the work
// was refused, expired or abandoned.
type Extractor interface {
	Extract(ctx context.Context, p admission.Priority, text string, opts entities.Options) ([]entities.Entity, extract.Stats, error)
	Name() string
	MaxLength() int
}

// Endpoint is what one entity route serves.
type Endpoint struct {
	// Default is the model used, and the model_name reported, when a request names none.
	Default string
	// Models maps every accepted model_name (names and aliases) to its extractor.
	Models map[string]Extractor
	// Gate is the endpoint's admission control (required): it refuses before the body is
	// parsed and turns the Queue's refusals into answers with a computed Retry-After.
	Gate *admission.Gate
	// Footprint is what the default model's weights take resident, in bytes (its ONNX graph,
	// as loaded), for /models/loaded.
	Footprint int64
}

// Analyze is POST /analyze: clinical entities, in OpenMed's request and response shape.
func Analyze(ep Endpoint) Route {
	return entityRoute("/analyze", ep, func(s *server) parseFunc { return s.parseAnalyze })
}

// PIIExtract is POST /pii/extract: PII/PHI entities, in OpenMed's request and response shape.
func PIIExtract(ep Endpoint) Route {
	return entityRoute("/pii/extract", ep, func(s *server) parseFunc { return s.parsePII })
}

// parseFunc reads one entity route's body.
type parseFunc func(body []byte, errs *fieldErrors) (parsedRequest, *apiError)

func entityRoute(path string, ep Endpoint, parser func(*server) parseFunc) Route {
	return Route{
		Path:   path,
		Gate:   ep.Gate,
		Models: ep.models(),
		serve: func(s *server, c *fiber.Ctx, x *exchange) error {
			return s.serveEntities(c, x, &ep, parser(s))
		},
	}
}

// models is the endpoint's default model with every other name that maps to it.
func (e *Endpoint) models() []ModelInfo {
	ex, ok := e.Models[e.Default]
	if !ok {
		return nil
	}
	info := ModelInfo{Name: ex.Name(), MaxLength: ex.MaxLength(), Footprint: e.Footprint}
	for name, other := range e.Models {
		if other == ex && name != e.Default {
			info.Aliases = append(info.Aliases, name)
		}
	}
	sort.Strings(info.Aliases)
	return []ModelInfo{info}
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
	AllowList           json.RawMessage `json:"allow_list"`
	DenyList            json.RawMessage `json:"deny_list"`
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

// entityStats are what the access log records of an entity request: sizes and timings only.
type entityStats struct {
	model   string
	stats   extract.Stats
	results int
}

func (s *entityStats) tokensUsed() int { return s.stats.Tokens }

func (s *entityStats) attrs() []slog.Attr {
	return []slog.Attr{
		slog.String("model", s.model),
		slog.Int("tokens", s.stats.Tokens),
		slog.Int("windows", s.stats.Windows),
		slog.Int("entities", s.results),
		slog.Float64("inference_ms", float64(s.stats.Inference.Microseconds())/1000),
	}
}

// parsedRequest is what both entity routes read from their body.
type parsedRequest struct {
	text      *string
	model     *string
	opts      entities.Options
	keepAlive json.RawMessage
	lists     *entities.Lists // /pii/extract's allow and deny lists
	lang      string          // /pii/extract's language code ("" on /analyze)
}

// fieldErrors collects every validation failure of a request, so a client fixes them at once.
type fieldErrors []FieldError

// maxFieldErrors bounds what one answer lists: a body of a million small mistakes (a job's
// documents, each without its fields) is answered in a page, not in tens of megabytes.
const maxFieldErrors = 100

func (f *fieldErrors) add(e *FieldError) {
	switch {
	case e == nil:
	case len(*f) < maxFieldErrors:
		*f = append(*f, *e)
	case len(*f) == maxFieldErrors:
		*f = append(*f, FieldError{Field: "body", Type: "too_many_errors",
			Message: fmt.Sprintf("More errors than the first %d listed", maxFieldErrors)})
	}
}

// serveEntities is what both entity routes do once admitted: the route's own parsing, the
// common text and model checks, and the extraction.
func (s *server) serveEntities(c *fiber.Ctx, x *exchange, ep *Endpoint, parse parseFunc) error {
	var errs fieldErrors
	req, aerr := parse(c.Body(), &errs)
	if aerr != nil {
		return aerr
	}
	text, ferr := checkText(req.text, s.opts.Limits)
	errs.add(ferr)
	model, ferr := ep.resolveLang(req.model, req.lang, s.opts.Pool != nil)
	errs.add(ferr)
	if len(errs) > 0 {
		return validationError(errs...)
	}
	ex, release, err := s.lendChoice(c, x, &model, req.keepAlive)
	if err != nil {
		return err
	}
	defer release()
	return s.runExtract(c, x, ex, model.reported, text, req.opts, req.lists)
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
	return parsedRequest{text: req.Text, model: req.ModelName, opts: opts, keepAlive: req.KeepAlive}, nil
}

func (s *server) parsePII(body []byte, errs *fieldErrors) (parsedRequest, *apiError) {
	var req piiRequest
	if err := decodeStrict(body, &req); err != nil {
		return parsedRequest{}, err
	}
	lang := langCode(req.Lang)
	opts := s.piiLangOptions(req.ConfidenceThreshold, req.UseSmartMerging, lang, req.KeepAlive, errs)
	lists := parseLists(req.AllowList, req.DenyList, errs)
	return parsedRequest{text: req.Text, model: req.ModelName, opts: opts, keepAlive: req.KeepAlive, lists: lists, lang: lang}, nil
}

// piiOptions reads the fields OpenMed's PII routes share into the extraction's options,
// starting from the PII defaults of the request's language, for a route whose model the
// language does not choose: a language without Sluice's patterns is refused there.
func (s *server) piiOptions(threshold json.RawMessage, smartMerging *bool, lang *string, keepAlive json.RawMessage, errs *fieldErrors) entities.Options {
	code := langCode(lang)
	opts := s.piiLangOptions(threshold, smartMerging, code, keepAlive, errs)
	if _, patterns := s.langOptions(code); !patterns && langCodeShape.MatchString(code) {
		errs.add(unservedLang(false))
	}
	return opts
}

// piiLangOptions is piiOptions for a route that resolves its model with resolveLang, which
// decides whether a language without patterns is served.
func (s *server) piiLangOptions(threshold json.RawMessage, smartMerging *bool, code string, keepAlive json.RawMessage, errs *fieldErrors) entities.Options {
	opts, patterns := s.langOptions(code) // a copy; its pattern list is shared read-only
	if !patterns && !langCodeShape.MatchString(code) {
		errs.add(unservedLang(s.opts.Pool != nil))
	}
	if len(threshold) > 0 {
		// Unlike /analyze, OpenMed's PII requests have a non-nullable threshold.
		var v float64
		if err := json.Unmarshal(threshold, &v); err != nil || string(threshold) == "null" {
			errs.add(&FieldError{Field: "body.confidence_threshold", Message: "Input should be a valid number", Type: "float_type"})
		} else {
			errs.add(checkThreshold(v))
		}
		opts.ConfidenceThreshold = v
	}
	if smartMerging != nil && !*smartMerging {
		opts.SmartMerge = nil
	}
	errs.add(checkKeepAlive(keepAlive))
	return opts
}

// resolve maps a request's model_name to the endpoint's extractor and the name to report back.
// A name the endpoint does not serve is left to the server's model pool (pooled is the name to
// lend), when there is one and the name can be a model directory's; otherwise it is a 422.
func (e *Endpoint) resolve(name *string, pool bool) (ex Extractor, reported, pooled string, ferr *FieldError) {
	if name == nil {
		return e.Models[e.Default], e.Default, "", nil
	}
	n := strings.TrimSpace(*name)
	if ex, ok := e.Models[n]; ok {
		return ex, *name, "", nil
	}
	if pool && modelDirName.MatchString(n) {
		return nil, *name, n, nil
	}
	known := make([]string, 0, len(e.Models))
	for k := range e.Models {
		known = append(known, k)
	}
	sort.Strings(known)
	return nil, "", "", &FieldError{Field: "body.model_name", Type: "value_error",
		Message: "Value error, model_name is not a loaded model; loaded: " + strings.Join(known, ", ")}
}

// extraction is one model pass over a text: its entities and what it cost.
type extraction struct {
	ents []entities.Entity
	st   extract.Stats
}

// extractOnce is ex.Extract, answered from one call for identical requests in flight at once
// when Options.Coalesce is on: the same caller, route, model, priority class and body (an
// interactive request never waits in a bulk call's queue). The entities are shared: callers
// read them and never change them.
func (s *server) extractOnce(ctx context.Context, c *fiber.Ctx, x *exchange, ex Extractor, text string, opts entities.Options) ([]entities.Entity, extract.Stats, error) {
	if !s.opts.Coalesce {
		return ex.Extract(ctx, x.prio, text, opts)
	}
	tenant, _ := c.Locals(localTenant).(string)
	body := sha256.Sum256(c.Body())
	key := strings.Join([]string{tenant, x.route.Path, ex.Name(), strconv.Itoa(int(x.prio)), string(body[:])}, "\x00")
	r, _, err := s.extractions.Do(ctx, key, func(ctx context.Context) (extraction, error) {
		ents, st, err := ex.Extract(ctx, x.prio, text, opts)
		return extraction{ents, st}, err
	})
	return r.ents, r.st, err
}

// modelDirName is what a model directory's name may be: a name, never a path.
var modelDirName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (s *server) runExtract(c *fiber.Ctx, x *exchange, ex Extractor, reported, text string, opts entities.Options, lists *entities.Lists) error {
	ctx, done := s.workContext(c, x)
	defer done()
	start := s.opts.Clock.Now()
	ents, st, err := s.extractOnce(ctx, c, x, ex, text, opts)
	if err == nil {
		ents = lists.Apply(text, ents)
	}
	elapsed := s.opts.Clock.Now().Sub(start)
	c.Locals(localStats, &entityStats{model: ex.Name(), stats: st, results: len(ents)})
	if err != nil {
		return s.workError(c, x, ctx, err)
	}
	out := extractResponse{
		Text:           text,
		Entities:       entitiesJSON(text, ents),
		ModelName:      reported,
		Timestamp:      s.opts.Clock.Now().Format("2006-01-02T15:04:05.000000"),
		ProcessingTime: elapsed.Seconds(),
		Metadata: map[string]any{
			"sentence_detection": false,
			"max_length":         ex.MaxLength(),
			"windows":            st.Windows,
		},
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(out)
}

// entitiesJSON is how an entity route writes text's entities: OpenMed's fields, offsets in
// code points. The Open Inference Protocol's output writes the same.
func entitiesJSON(text string, ents []entities.Entity) []entityJSON {
	spans := entities.CodePointSpans(text, ents)
	out := make([]entityJSON, len(ents))
	for i, e := range ents {
		out[i] = entityJSON{
			Text: text[e.Start:e.End], Label: e.Label, Confidence: e.Score,
			Start: spans[i].Start, End: spans[i].End,
			Metadata: map[string]any{"span_valid": true},
		}
	}
	return out
}

// parseStrategy reads aggregation_strategy: absent means OpenMed's default "simple"; an
// explicit null is forwarded to HF by OpenMed as "no aggregation", i.e. raw tokens, whose
// labels OpenMed's formatter then strips of B-/I- (entities.PostProcess does).
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
