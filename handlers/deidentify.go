package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
)

// PIIDeidentify is POST /pii/deidentify: the PII model's spans masked, removed, replaced,
// hashed or date-shifted by r, in OpenMed's request and response shape. It shares the PII
// endpoint's models and gate with /pii/extract: both are the same model's work.
func PIIDeidentify(ep Endpoint, r *deid.Redactor) Route {
	return Route{
		Path:   "/pii/deidentify",
		Gate:   ep.Gate,
		Models: ep.models(),
		serve: func(s *server, c *fiber.Ctx, x *exchange) error {
			return s.serveDeidentify(c, x, &ep, r.Scoped(tenantOf(c)))
		},
	}
}

// deidentifyThreshold is OpenMed's default confidence threshold for de-identification,
// higher than extraction's.
const deidentifyThreshold = 0.7

// maxShiftDays bounds date_shift_days to a century either way (OpenMed has no bound; a
// larger shift only writes years past 9999).
const maxShiftDays = 36500

type deidentifyRequest struct {
	Text                *string         `json:"text"`
	Method              *string         `json:"method"`
	ModelName           *string         `json:"model_name"`
	ConfidenceThreshold json.RawMessage `json:"confidence_threshold"`
	KeepYear            *bool           `json:"keep_year"`
	ShiftDates          *bool           `json:"shift_dates"`
	DateShiftDays       json.RawMessage `json:"date_shift_days"`
	KeepMapping         *bool           `json:"keep_mapping"`
	Policy              *string         `json:"policy"`
	UseSmartMerging     *bool           `json:"use_smart_merging"`
	UseSafetySweep      *bool           `json:"use_safety_sweep"`
	Lang                *string         `json:"lang"`
	NormalizeAccents    *bool           `json:"normalize_accents"`
	KeepAlive           json.RawMessage `json:"keep_alive"`
	SubjectID           *string         `json:"subject_id"`
	AllowList           json.RawMessage `json:"allow_list"`
	DenyList            json.RawMessage `json:"deny_list"`
}

type deidEntityJSON struct {
	Text           string         `json:"text"`
	Label          string         `json:"label"`
	EntityType     string         `json:"entity_type"`
	Start          int            `json:"start"`
	End            int            `json:"end"`
	Confidence     float64        `json:"confidence"`
	RedactedText   string         `json:"redacted_text"`
	CanonicalLabel string         `json:"canonical_label"`
	Sources        []string       `json:"sources"`
	Evidence       map[string]any `json:"evidence"`
	Threshold      float64        `json:"threshold"`
	Action         string         `json:"action"`
	Surrogate      *string        `json:"surrogate"`
	Metadata       map[string]any `json:"metadata"`
	ReversibleID   string         `json:"reversible_id,omitempty"`
}

type deidentifyResponse struct {
	OriginalText        string            `json:"original_text"`
	DeidentifiedText    string            `json:"deidentified_text"`
	PIIEntities         []deidEntityJSON  `json:"pii_entities"`
	Method              string            `json:"method"`
	Timestamp           string            `json:"timestamp"`
	NumEntitiesRedacted int               `json:"num_entities_redacted"`
	Metadata            map[string]any    `json:"metadata"`
	AuditReport         any               `json:"audit_report"`
	Mapping             map[string]string `json:"mapping,omitempty"`
}

// deidentifyPlan is a validated /pii/deidentify request.
type deidentifyPlan struct {
	text   string
	model  modelChoice
	lang   string // the language code
	opts   entities.Options
	deid   deid.Options
	sweep  bool
	policy *deid.Policy
}

// parseDeidentify validates a request: the field checks first (joined to errs, the caller's
// own), then, when they pass, the rules across fields (shift_dates against method,
// date_shift_days against the method), as OpenMed's model validator runs after its field
// validators.
func (s *server) parseDeidentify(req *deidentifyRequest, ep *Endpoint, errs fieldErrors) (deidentifyPlan, *apiError) {
	var plan deidentifyPlan
	plan.lang = langCode(req.Lang)
	plan.opts = s.piiLangOptions(req.ConfidenceThreshold, req.UseSmartMerging, plan.lang, req.KeepAlive, &errs)
	if len(req.ConfidenceThreshold) == 0 {
		plan.opts.ConfidenceThreshold = deidentifyThreshold
	}
	plan.deid.Method = deid.Mask
	if req.Method != nil {
		m, ok := deid.ParseMethod(*req.Method)
		if !ok {
			errs.add(&FieldError{Field: "body.method", Type: "literal_error",
				Message: "Input should be " + literals(deid.Methods)})
		}
		plan.deid.Method = m
	}
	days, ferr := parseShiftDays(req.DateShiftDays)
	errs.add(ferr)
	plan.deid.ShiftDays = days
	if req.Policy != nil {
		p, err := deid.LookupPolicy(*req.Policy)
		if err != nil {
			errs.add(&FieldError{Field: "body.policy", Type: "value_error", Message: "Value error, " + err.Error()})
		}
		plan.policy = p
	}
	plan.deid.Subject = parseSubject(req.SubjectID, "body.subject_id", &errs)
	plan.deid.Lists = parseLists(req.AllowList, req.DenyList, &errs)
	text, ferr := checkText(req.Text, s.opts.Limits)
	errs.add(ferr)
	plan.model, ferr = ep.resolveLang(req.ModelName, plan.lang, s.opts.Pool != nil)
	errs.add(ferr)
	if len(errs) > 0 {
		return plan, validationError(errs...)
	}
	if req.ShiftDates != nil {
		switch {
		case *req.ShiftDates:
			plan.deid.Method = deid.ShiftDates // the deprecated alias wins over method
		case plan.deid.Method == deid.ShiftDates:
			return plan, validationError(FieldError{Field: "body", Type: "value_error",
				Message: "Value error, shift_dates=false conflicts with method='shift_dates'"})
		}
	}
	if days != nil && plan.deid.Method != deid.ShiftDates {
		return plan, validationError(FieldError{Field: "body", Type: "value_error",
			Message: "Value error, date_shift_days requires method='shift_dates'"})
	}
	plan.text = text
	plan.deid.Policy, plan.deid.Lang = plan.policy, plan.lang
	plan.deid.KeepYear = req.KeepYear != nil && *req.KeepYear
	plan.deid.KeepMapping = req.KeepMapping != nil && *req.KeepMapping
	plan.sweep = req.UseSafetySweep == nil || *req.UseSafetySweep || (plan.policy != nil && plan.policy.SweepMandatory)
	return plan, nil
}

// parseShiftDays reads date_shift_days: null or absent is none; otherwise a whole number of
// days within maxShiftDays.
func parseShiftDays(raw json.RawMessage) (*int, *FieldError) {
	v := bytes.TrimSpace(raw)
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return nil, &FieldError{Field: "body.date_shift_days", Message: "Input should be a valid integer", Type: "int_type"}
	}
	if f < -maxShiftDays || f > maxShiftDays {
		return nil, &FieldError{Field: "body.date_shift_days", Type: "value_error",
			Message: fmt.Sprintf("Value error, date_shift_days must be between %d and %d", -maxShiftDays, maxShiftDays)}
	}
	if f != float64(int64(f)) {
		return nil, &FieldError{Field: "body.date_shift_days", Type: "int_from_float",
			Message: "Input should be a valid integer, got a number with a fractional part"}
	}
	n := int(f)
	return &n, nil
}

func (s *server) serveDeidentify(c *fiber.Ctx, x *exchange, ep *Endpoint, r *deid.Redactor) (err error) {
	var rec audit.Record
	defer s.auditAtExit(c, x, func(error) audit.Record { return rec }, &err)
	var req deidentifyRequest
	if aerr := decodeStrict(c.Body(), &req); aerr != nil {
		return aerr
	}
	plan, aerr := s.parseDeidentify(&req, ep, nil)
	if aerr != nil {
		return aerr
	}
	rec.InputHash = r.Fingerprint(plan.text)
	ex, release, err := s.lendChoice(c, x, &plan.model, req.KeepAlive)
	if err != nil {
		return err
	}
	defer release()
	rec.Model = ex.Name()
	ctx, done := s.workContext(c, x)
	defer done()
	ents, st, err := s.extractOnce(ctx, c, x, ex, plan.text, plan.opts)
	if err != nil {
		c.Locals(localStats, &entityStats{model: ex.Name(), stats: st})
		return s.workError(c, x, ctx, err)
	}
	var swept []entities.Entity
	if plan.sweep {
		ents, swept = entities.SafetySweep(plan.text, ents, s.sweepFor(plan.lang))
	}
	added := len(swept)
	res := r.Apply(plan.text, ents, plan.deid)
	c.Locals(localStats, &entityStats{model: ex.Name(), stats: st, results: len(res.Redactions)})

	kept := make([]entities.Entity, len(res.Redactions))
	for i, red := range res.Redactions {
		kept[i] = entities.Entity{Label: red.Label, Start: red.Start, End: red.End, Score: red.Score}
	}
	points := entities.CodePointSpans(plan.text, kept)
	out := deidentifyResponse{
		OriginalText:        plan.text,
		DeidentifiedText:    res.Text,
		PIIEntities:         make([]deidEntityJSON, len(res.Redactions)),
		Method:              deid.Used(res.Redactions, plan.deid.Method),
		Timestamp:           s.opts.Clock.Now().Format("2006-01-02T15:04:05.000000"),
		NumEntitiesRedacted: len(res.Redactions),
		Metadata:            map[string]any{"model_name": plan.model.reported, "max_length": ex.MaxLength(), "windows": st.Windows},
		Mapping:             res.Mapping,
	}
	if plan.sweep {
		out.Metadata["safety_sweep"] = map[string]any{"source": "safety_sweep", "patterns_version": entities.LanguagePatternsVersion(plan.lang), "spans_added": added}
	}
	if plan.deid.Subject != "" {
		out.Metadata["subject_scope"] = subjectScope(r)
	}
	if p := plan.policy; p != nil {
		out.Metadata["policy"] = map[string]any{"name": p.Name, "schema_version": deid.PolicySchemaVersion,
			"arbitration_mode": p.ArbitrationMode, "threshold_profile": p.ThresholdProfile,
			"keep_mapping": p.KeepMapping, "reversible_id": p.ReversibleID}
	}
	for i, red := range res.Redactions {
		source := "ml"
		for _, sw := range swept { // by containment: a redaction may start past a context word
			if sw.Start <= red.Start && red.End <= sw.End {
				source = "safety_sweep"
				break
			}
		}
		if red.Label == entities.DenyLabel {
			source = "deny_list"
		}
		e := deidEntityJSON{
			Text: plan.text[red.Start:red.End], Label: red.Label, EntityType: red.Label,
			Start: points[i].Start, End: points[i].End, Confidence: red.Score,
			RedactedText: red.Replacement, CanonicalLabel: red.Canonical, Sources: []string{source},
			Evidence:  map[string]any{"raw_label": red.Label, "language": plan.lang},
			Threshold: plan.opts.ConfidenceThreshold, Action: string(red.Method),
			Metadata: map[string]any{}, ReversibleID: red.ReversibleID,
		}
		if source == "ml" {
			e.Evidence["model_id"] = ex.Name()
		}
		if red.Replacement != "" {
			e.Surrogate = &res.Redactions[i].Replacement
		}
		if red.PolicyAction != "" {
			e.Metadata["policy_action"] = map[string]any{"policy": plan.policy.Name,
				"schema_version": deid.PolicySchemaVersion, "action": string(red.PolicyAction), "source": "policy_profile"}
		}
		out.PIIEntities[i] = e
	}
	rec.Method, rec.OutputHash = out.Method, r.Fingerprint(res.Text)
	rec.Entities = redactedKinds(res.Redactions)
	rec.Status = OutcomeServed
	if _, aerr := s.keepRecord(x, rec, fiber.StatusOK); aerr != nil {
		return aerr
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(out)
}

// redactedKinds counts redactions by canonical kind, as an audit record keeps them.
func redactedKinds(reds []deid.Redaction) map[string]int {
	out := make(map[string]int, len(reds))
	for _, red := range reds {
		out[red.Canonical]++
	}
	return out
}
