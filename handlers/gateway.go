package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/chat"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/gateway"
	"github.com/sluice-serving/sluice/generate"
)

// GatewayEndpoint is what POST /privacy-gateway/complete needs: the PII model that finds what
// must not leave, what answers the redacted text (Upstream when set, else the in-process
// Generation; neither: the route answers privacy_gateway_not_configured). Its requests' records
// go to Options.Audit.
type GatewayEndpoint struct {
	PII        Endpoint
	Generation *GenerationEndpoint
	Upstream   Upstream
	// ChatUpstream, when set, answers the OpenAI face's conversations instead of Generation.
	ChatUpstream ChatUpstream
	// MaxNewTokens bounds the answer (0: 256; never more than a quarter of the model's context).
	MaxNewTokens int
	// upstreamChat is ChatUpstream as a generation endpoint (WithDefaults).
	upstreamChat *GenerationEndpoint
}

// PrivacyGateway is OpenMed's POST /privacy-gateway/complete, with the completion from the
// in-process generation model: the text's PII is found, the request is refused if the policy
// disallows any of it (a span under confidence_threshold, a disallowed category), the spans
// are replaced by placeholders, an independent second scan of the outbound text (the pattern
// sweep, and every original the map holds) must find nothing, the model answers the redacted
// text, and the answer's placeholders are restored; one that the map does not hold refuses
// the answer. Each request leaves one audit record, hashes only, stored before it is answered.
func PrivacyGateway(gw GatewayEndpoint) Route {
	gw.MaxNewTokens = gw.maxNewTokens()
	var timeout time.Duration
	if gw.Generation != nil {
		timeout = gw.Generation.Timeout
	}
	return Route{
		Path:    "/privacy-gateway/complete",
		Gate:    gw.PII.Gate,
		Models:  gw.PII.models(),
		timeout: timeout,
		cost:    func(_ *server, c *fiber.Ctx) float64 { return textCost(c.Body()) + float64(gw.answerRoom()) },
		serve: func(s *server, c *fiber.Ctx, x *exchange) error {
			return s.serveGateway(c, x, &gw)
		},
	}
}

// maxNewTokens is MaxNewTokens with its default.
func (gw *GatewayEndpoint) maxNewTokens() int {
	if gw.MaxNewTokens <= 0 {
		return 256
	}
	return gw.MaxNewTokens
}

// answerRoom is how long an answer of /privacy-gateway/complete may be: the bound, and from
// the in-process model at most a quarter of its context, which leaves the rest to the prompt
// (a longer one is the model's 422).
func (gw *GatewayEndpoint) answerRoom() int {
	if gw.Upstream != nil || gw.Generation == nil {
		return gw.maxNewTokens()
	}
	return min(gw.maxNewTokens(), max(1, gw.Generation.Model.MaxPositions()/4))
}

// Upstream is an external language model behind the gateway (package upstream's).
type Upstream interface {
	Complete(ctx context.Context, requestID, prompt string, metadata map[string]any) (string, error)
	// Kind names it in the audit.
	Kind() string
}

// ChatUpstream is an external model that takes conversations, streamed (an OpenAI-compatible
// server; package upstream's): it hands each piece of its answer to onDelta and returns its
// finish reason.
type ChatUpstream interface {
	Chat(ctx context.Context, msgs []chat.Message, opts chat.Options, onDelta func(chat.Delta) error) (string, error)
	Kind() string
}

type gatewayRequest struct {
	Text                       *string         `json:"text"`
	ModelName                  *string         `json:"model_name"`
	ConfidenceThreshold        *float64        `json:"confidence_threshold"`
	DetectorConfidenceFloor    *float64        `json:"detector_confidence_floor"`
	Policy                     *string         `json:"policy"`
	DisallowedEntityCategories json.RawMessage `json:"disallowed_entity_categories"`
	UseSmartMerging            *bool           `json:"use_smart_merging"`
	Lang                       *string         `json:"lang"`
	NormalizeAccents           *bool           `json:"normalize_accents"`
	KeepAlive                  json.RawMessage `json:"keep_alive"`
	AllowList                  json.RawMessage `json:"allow_list"`
	DenyList                   json.RawMessage `json:"deny_list"`
}

type gatewayResponse struct {
	RequestID         string         `json:"request_id"`
	RedactedPrompt    string         `json:"redacted_prompt"`
	ExternalResponse  string         `json:"external_response"`
	ReidentifiedText  string         `json:"reidentified_text"`
	EntityCounts      map[string]int `json:"entity_counts"`
	PlaceholderHashes []string       `json:"placeholder_hashes"`
	Audit             gatewayAudit   `json:"audit"`
}

// gatewayAudit is the answer's word on its record: its hash, and whether it is stored
// (verified: stored in its replica's chain; false with the audit off).
type gatewayAudit struct {
	RecordHash string `json:"record_hash"`
	Verified   bool   `json:"verified"`
}

// The gateway's defaults: no span is refused for its score (every span is redacted whatever
// its score, so refusing an unsure one protects nothing; OpenMed refuses under 0.85, which
// blocks ordinary notes), and OpenMed's policy name.
const (
	gatewayThreshold = 0.0
	gatewayPolicy    = "strict"
)

// The gateway's error codes, OpenMed's.
const (
	codeGatewayBlocked       = "privacy_gateway_blocked"
	codeGatewayReidentify    = "privacy_gateway_reidentification_error"
	codeGatewayNotConfigured = "privacy_gateway_not_configured"
	codeGatewayTransport     = "privacy_gateway_transport_error"
)

func (s *server) serveGateway(c *fiber.Ctx, x *exchange, gw *GatewayEndpoint) (err error) {
	var sess *gateway.Session
	var unconfigured bool
	x.gateway = true
	defer s.auditAtExit(c, x, func(err error) audit.Record { return gatewayRecord(c, sess, unconfigured, err) }, &err)
	if gw.Upstream == nil && (gw.Generation == nil || gw.Generation.Model == nil) {
		unconfigured = true
		return gatewayNotConfigured("The privacy gateway has no model to complete with")
	}
	var req gatewayRequest
	if aerr := decodeStrict(c.Body(), &req); aerr != nil {
		return aerr
	}
	var errs fieldErrors
	threshold, floor := gatewayThreshold, 0.0
	for _, f := range []struct {
		name string
		v    *float64
		dst  *float64
	}{{"confidence_threshold", req.ConfidenceThreshold, &threshold}, {"detector_confidence_floor", req.DetectorConfidenceFloor, &floor}} {
		if f.v == nil {
			continue
		}
		if !(*f.v >= 0 && *f.v <= 1) {
			errs.add(&FieldError{Field: "body." + f.name, Type: "value_error", Message: "Value error, must be between 0 and 1"})
		}
		*f.dst = *f.v
	}
	policy := gatewayPolicy
	if req.Policy != nil {
		if policy = strings.TrimSpace(*req.Policy); !policyName.MatchString(policy) {
			errs.add(&FieldError{Field: "body.policy", Type: "value_error",
				Message: "Value error, policy must be a name of 1 to 64 letters, digits, '.', '_' or '-'"})
		}
		policy = knownPolicy(policy)
	}
	disallowed, ferr := parseCategories(req.DisallowedEntityCategories)
	errs.add(ferr)
	lists := parseLists(req.AllowList, req.DenyList, &errs)
	// Every span the model finds is redacted, whatever its score (fail closed): the floor only
	// decides which of them the threshold judges.
	lang := langCode(req.Lang)
	opts := s.piiLangOptions(json.RawMessage("0"), req.UseSmartMerging, lang, req.KeepAlive, &errs)
	text, ferr := checkText(req.Text, s.opts.Limits)
	errs.add(ferr)
	model, ferr := gw.PII.resolveLang(req.ModelName, lang, s.opts.Pool != nil)
	errs.add(ferr)
	if len(errs) > 0 {
		return validationError(errs...)
	}
	ex, lent, err := s.lendChoice(c, x, &model, req.KeepAlive)
	if err != nil {
		return err
	}
	release := sync.OnceFunc(lent) // after the extraction, not the generation
	defer release()
	ctx, done := s.workContext(c, x)
	defer done()

	completion := "local"
	if gw.Upstream != nil {
		completion = gw.Upstream.Kind()
	}
	rule := gateway.Policy{Name: policy, MinConfidence: threshold, Floor: floor, Disallowed: disallowed}
	sweep := s.sweepFor(lang)
	sess = gateway.Begin(completion, rule, s.residualAllowing(lists, sweep))
	ents, st, err := ex.Extract(ctx, x.prio, text, opts)
	release()
	c.Locals(localStats, &entityStats{model: ex.Name(), stats: st, results: len(ents)})
	if err != nil {
		if ref, ok := x.gate.Refuse(x.prio, err); ok {
			sess.End(gateway.Failed, gateway.DetectionRefused)
			return s.writeRefusal(c, ref)
		}
		e := s.failure(x, ctx, err)
		endFailed(sess, e, gateway.Failed, gateway.DetectionFailed)
		return e
	}
	ents = lists.Apply(text, ents) // what the caller allows is neither judged nor redacted
	if ref := sess.Screen(ents); ref != nil {
		return gatewayRefusal(ref)
	}
	// What the model found, and the sweep's second look (identifier patterns, names where
	// people write them), is redacted: what the first pass missed is not forwarded.
	ents, added := entities.SafetySweep(text, ents, sweep)
	ents, added = lists.DropAllowed(text, ents), lists.DropAllowed(text, added)
	if ref := sess.Also(added); ref != nil {
		return gatewayRefusal(ref)
	}
	outbound := sess.Redact(text, ents)
	if ref := sess.Send(outbound, outbound); ref != nil {
		return gatewayRefusal(ref)
	}
	var answer string
	if gw.Upstream != nil {
		answer, err = gw.Upstream.Complete(ctx, x.id, outbound, map[string]any{"policy": rule.Record(), "entity_counts": sess.Counts()})
		if err != nil {
			e := s.upstreamFailed(x, ctx, err)
			endFailed(sess, e, gateway.TransportError, gateway.TransportFailed)
			return e
		}
	} else {
		if ref, ok := gw.Generation.Gate.AdmitUnbooked(x.prio); !ok { // the retry's token is the PII gate's
			sess.End(gateway.TransportError, gateway.CompletionRefused)
			return s.writeRefusal(c, ref)
		}
		if answer, err = s.completeLocally(ctx, x, gw, outbound); err != nil {
			var long *generate.TooLongError
			switch ref, refused := gw.Generation.Gate.RefuseUnbooked(x.prio, err); {
			case refused:
				sess.End(gateway.TransportError, gateway.CompletionRefused)
				return s.writeRefusal(c, ref)
			case errors.As(err, &long):
				// The caller's text, not the model, is at fault: said in the gateway's own
				// terms (its text and the room the model leaves it), audited as rejected.
				sess.End(gateway.Rejected, gateway.InvalidRequest)
				return validationError(FieldError{Field: "body.text", Type: "value_error", Message: "Value error, the text is " +
					strconv.Itoa(long.Prompt) + " tokens; the privacy gateway's model takes at most " +
					strconv.Itoa(max(long.MaxPositions-long.MaxNewTokens, 0)) + " (its context of " + strconv.Itoa(long.MaxPositions) +
					" less the answer's " + strconv.Itoa(long.MaxNewTokens) + ")"})
			case errors.Is(err, chat.ErrSpecialText):
				// The text, not the model: its redacted form spells a special token the
				// template changes. (A template that refuses one user message is the
				// deployment's, a 500.)
				sess.End(gateway.Rejected, gateway.InvalidRequest)
				return validationError(FieldError{Field: "body.text", Type: "value_error",
					Message: "Value error, the privacy gateway's model cannot take this text as its chat template writes it"})
			}
			e := s.failure(x, ctx, err)
			endFailed(sess, e, gateway.TransportError, gateway.CompletionFailed)
			return e
		}
	}
	restored, ref := sess.Restore(answer)
	if ref != nil {
		return gatewayRefusal(ref)
	}
	kept, aerr := s.keepRecord(x, sess.Forward(), fiber.StatusOK)
	if aerr != nil {
		return aerr
	}
	return c.JSON(gatewayResponse{RequestID: x.id, RedactedPrompt: outbound, ExternalResponse: answer,
		ReidentifiedText: restored[0], EntityCounts: sess.Counts(), PlaceholderHashes: orEmpty(sess.PlaceholderHashes()),
		Audit: gatewayAudit{RecordHash: kept.RecordHash, Verified: kept.RecordHash != ""}})
}

// endFailed ends sess for the work (detection or completion) that failed with e: aborted when
// its client left (the abort's reason), whatever noticed it, else with status and reason.
func endFailed(sess *gateway.Session, e *apiError, status gateway.Status, reason gateway.Reason) {
	if e.Outcome == OutcomeAborted {
		sess.End(gateway.Aborted, leftReason(e.aborted))
		return
	}
	sess.End(status, reason)
}

// gatewayRecord is the audit record of a gateway request answered with err: its session's,
// ended now if the handler did not end it; a request refused before its session began (its
// fields invalid, no model: unconfigured) has a record without one.
func gatewayRecord(c *fiber.Ctx, sess *gateway.Session, unconfigured bool, err error) audit.Record {
	if sess == nil {
		if unconfigured {
			return audit.Record{Status: string(gateway.Failed), Reason: string(gateway.NotConfigured)}
		}
		if status, _ := answerOf(c, err); status < 500 {
			return audit.Record{Status: string(gateway.Rejected), Reason: string(gateway.InvalidRequest)}
		}
		return audit.Record{Status: string(gateway.Failed)}
	}
	if !sess.Ended() {
		sess.End(gateway.Failed, "")
	}
	return sess.Record()
}

// gatewayRefusal words a request the gateway refused, in OpenMed's terms.
func gatewayRefusal(ref *gateway.Refusal) *apiError {
	details := map[string]any{"reason": string(ref.Reason)}
	if len(ref.Judged) > 0 {
		details["spans"] = ref.Judged // labels and scores, never the text
	}
	e := &apiError{Status: fiber.StatusBadRequest, Code: codeGatewayBlocked, Outcome: OutcomeFailed,
		Details: details, param: "messages"}
	switch ref.Reason {
	case gateway.BelowThreshold:
		e.Message = "A detected span is below the policy's confidence threshold"
	case gateway.DisallowedCategory:
		e.Message = "The text holds a category of identifier the policy disallows"
	case gateway.UnknownPlaceholder:
		e.Code, e.Message = codeGatewayReidentify, "The completion holds a placeholder this request did not send"
	default: // the tripwire, or messages that do not read one way
		e.Message = "Outbound tripwire detected residual PHI"
	}
	return e
}

// upstreamFailed is the answer to an external model that did not answer: the client leaving or
// the deadline as any route says them, anything else as OpenMed's transport error (502).
func (s *server) upstreamFailed(x *exchange, ctx context.Context, err error) *apiError {
	if ctx.Err() != nil {
		return s.failure(x, ctx, ctx.Err())
	}
	s.opts.Logger.Warn("privacy gateway: the external model failed", slog.String("request_id", x.id),
		slog.String("route", x.route.Path), slog.String("error_type", errorType(err)))
	return &apiError{Status: fiber.StatusBadGateway, Code: codeGatewayTransport, Outcome: OutcomeFailed,
		Message: "External LLM transport failed", Details: map[string]string{"reason": string(gateway.TransportFailed)}}
}

// gatewayNotConfigured is OpenMed's 503 of a privacy gateway with no model to answer.
func gatewayNotConfigured(message string) *apiError {
	return &apiError{Status: fiber.StatusServiceUnavailable, Code: codeGatewayNotConfigured, Outcome: OutcomeFailed,
		Message: message, Details: map[string]string{"reason": "missing_completion_model"}}
}

// residual is the gateway's tripwire's own look at text about to leave the process, the same
// on both faces: whether the sweep (identifier patterns, names where people write them) still
// finds anything in it. The placeholders are read as what they are, no one's name.
func (s *server) residual(text string) bool {
	return s.residualAllowing(nil, s.piiDefaults.SmartMerge)(text)
}

// residualAllowing is residual with the patterns of the request's language, not counting what
// its allow list allows.
func (s *server) residualAllowing(lists *entities.Lists, sweep *entities.SmartMergeConfig) func(text string) bool {
	return func(text string) bool {
		var held []entities.Entity // the placeholders, as spans found already: nothing may overlap them
		for _, m := range placeholders.FindAllStringIndex(text, -1) {
			held = append(held, entities.Entity{Label: "placeholder", Start: m[0], End: m[1]})
		}
		_, found := entities.SafetySweep(text, held, sweep)
		return len(lists.DropAllowed(text, found)) > 0
	}
}

// placeholders are the gateway's ([KIND_n]), as the residual check reads past them.
var placeholders = regexp.MustCompile(`\[[A-Z][A-Z_]*_[0-9]+\]`)

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// completeLocally asks the in-process generation model to answer the redacted text: as the
// user's message where the model has a chat template, as a plain prompt otherwise.
func (s *server) completeLocally(ctx context.Context, x *exchange, gw *GatewayEndpoint, outbound string) (string, error) {
	gen := gw.Generation
	// Without a template the whole prompt is the client's: quoted whole.
	prompt := chat.Prompt{Text: outbound, Quoted: [][2]int{{0, len(outbound)}}}
	if gen.Chat != nil {
		p, err := gen.Chat.Render([]chat.Message{{Role: "user", Content: outbound}}, nil)
		if err != nil {
			return "", err
		}
		prompt = p
	}
	stream, err := gen.Model.Generate(ctx, x.prio, prompt.Text, generate.Params{MaxNewTokens: gw.answerRoom(), Templated: gen.Chat != nil, Quoted: prompt.Quoted,
		CacheScope: x.tenant})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for {
		ev, err := stream.Next(ctx)
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
		if ev.Err != nil {
			return "", ev.Err
		}
		b.WriteString(ev.Trimmed)
		if ev.Done {
			return b.String(), nil
		}
	}
}

// categoryName is what a category may be called: a kind or a label, never free text.
var categoryName = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// policyName is what a policy may be called.
var policyName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// knownPolicy is the name a gateway request's policy is recorded under, in the audit and the
// upstream's metadata: OpenMed's default or one of the policy profiles by its canonical name,
// and any other name (OpenMed takes any, and so do we) as "custom", since a client's own
// word must not enter the audit.
func knownPolicy(name string) string {
	if strings.EqualFold(name, gatewayPolicy) {
		return gatewayPolicy
	}
	if p, err := deid.LookupPolicy(name); err == nil {
		return p.Name
	}
	return "custom"
}

// parseCategories reads disallowed_entity_categories: a list of names or one string of them
// separated by commas; lower-cased, blanks dropped, sorted, each once.
func parseCategories(raw json.RawMessage) ([]string, *FieldError) {
	if len(raw) == 0 || string(raw) == "null" {
		return []string{}, nil
	}
	var items []string
	var one string
	switch {
	case json.Unmarshal(raw, &items) == nil:
	case json.Unmarshal(raw, &one) == nil:
		items = strings.Split(one, ",")
	default:
		return nil, &FieldError{Field: "body.disallowed_entity_categories", Type: "list_type",
			Message: "Input should be a list of category names or a comma-separated string"}
	}
	out := []string{}
	for _, it := range items {
		it = strings.ToLower(strings.TrimSpace(it))
		if it == "" {
			continue
		}
		if !categoryName.MatchString(it) {
			return nil, &FieldError{Field: "body.disallowed_entity_categories", Type: "value_error",
				Message: "Value error, a category is a name of 1 to 64 letters, digits or '_'"}
		}
		if !slices.Contains(out, it) && len(out) < 64 {
			out = append(out, it)
		}
	}
	slices.Sort(out)
	return out, nil
}
