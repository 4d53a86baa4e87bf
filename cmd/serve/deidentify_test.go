package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The types and calls below are OpenMed's Go client (clients/go) for /pii/deidentify, rebuilt
// from its documented field names, JSON tags and checks: a JSON body with Content-Type and
// Accept application/json, an answer that must be a JSON object, and a non-2xx answer read as
// the error envelope only when it is application/json with a code and a message.

type omDeidentifyRequest struct {
	Text                string   `json:"text"`
	Method              string   `json:"method,omitempty"`
	ModelName           string   `json:"model_name,omitempty"`
	ConfidenceThreshold *float64 `json:"confidence_threshold,omitempty"`
	KeepYear            bool     `json:"keep_year,omitempty"`
	ShiftDates          *bool    `json:"shift_dates,omitempty"`
	DateShiftDays       *int     `json:"date_shift_days,omitempty"`
	KeepMapping         bool     `json:"keep_mapping,omitempty"`
	Policy              string   `json:"policy,omitempty"`
	UseSmartMerging     *bool    `json:"use_smart_merging,omitempty"`
	UseSafetySweep      *bool    `json:"use_safety_sweep,omitempty"`
	Lang                string   `json:"lang,omitempty"`
	NormalizeAccents    *bool    `json:"normalize_accents,omitempty"`
	KeepAlive           any      `json:"keep_alive,omitempty"`
}

type omDeidentifiedEntity struct {
	Text           string         `json:"text"`
	Label          string         `json:"label"`
	Confidence     float64        `json:"confidence"`
	Start          *int           `json:"start"`
	End            *int           `json:"end"`
	Metadata       map[string]any `json:"metadata"`
	EntityType     string         `json:"entity_type"`
	RedactedText   *string        `json:"redacted_text"`
	CanonicalLabel *string        `json:"canonical_label"`
	Sources        []string       `json:"sources"`
	Evidence       map[string]any `json:"evidence"`
	Threshold      *float64       `json:"threshold"`
	Action         *string        `json:"action"`
	Surrogate      *string        `json:"surrogate"`
	ReversibleID   string         `json:"reversible_id,omitempty"`
}

type omDeidentifyResponse struct {
	OriginalText        string                 `json:"original_text"`
	DeidentifiedText    string                 `json:"deidentified_text"`
	PIIEntities         []omDeidentifiedEntity `json:"pii_entities"`
	Method              string                 `json:"method"`
	Timestamp           string                 `json:"timestamp"`
	NumEntitiesRedacted int                    `json:"num_entities_redacted"`
	Metadata            map[string]any         `json:"metadata"`
	AuditReport         map[string]any         `json:"audit_report"`
	Mapping             map[string]string      `json:"mapping,omitempty"`
}

type omErrorBody struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Details   any    `json:"details"`
	RequestID string `json:"request_id,omitempty"`
}

type omAPIError struct {
	StatusCode int
	Error      omErrorBody
}

// omDo is the client's buffered call: the JSON answer decoded into out, or the error
// envelope of a non-2xx answer.
func omDo(t *testing.T, base, path string, req, out any) *omAPIError {
	t.Helper()
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	hr, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(raw))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var env struct {
			Error omErrorBody `json:"error"`
		}
		if media != "application/json" || json.Unmarshal(body, &env) != nil || env.Error.Code == "" || env.Error.Message == "" {
			t.Fatalf("%s: status %d without an error envelope: %s", path, resp.StatusCode, body)
		}
		return &omAPIError{StatusCode: resp.StatusCode, Error: env.Error}
	}
	if trimmed := bytes.TrimSpace(body); len(trimmed) == 0 || trimmed[0] != '{' {
		t.Fatalf("%s response is not a JSON object: %s", path, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return nil
}

func omDeidentify(t *testing.T, base string, req omDeidentifyRequest) (omDeidentifyResponse, *omAPIError) {
	t.Helper()
	var out omDeidentifyResponse
	return out, omDo(t, base, "/pii/deidentify", req, &out)
}

// richNote holds every kind of identifier the shipped PII model labels on it (first and last
// name, age, two dates, street, city, state, postcode, phone, fax, e-mail, URL, MRN, SSN,
// account number).
const richNote = "Patient Maria Gonzalez, 67 years old, DOB 03/14/1957, seen on 01/31/2024 at 221 Baker Street, " +
	"Springfield, IL 62704. Phone (415) 555-0132, fax 415-555-0199, e-mail maria.g@example.com, " +
	"portal https://portal.example.org/maria. MRN: 00482913. SSN 123-45-6789. Account number 9988776655."

// restoreMapping puts the originals back: each entity's replacement, found in the text after
// the previous one's, is looked up in the mapping (under its key, or the "#n" key of a
// replacement that stands for several originals).
func restoreMapping(res omDeidentifyResponse) string {
	var b strings.Builder
	text, used := res.DeidentifiedText, map[string]int{}
	for _, e := range res.PIIEntities {
		at := strings.Index(text, *e.RedactedText)
		if at < 0 {
			return "replacement not found"
		}
		key := *e.RedactedText
		for n := 2; res.Mapping[key] != e.Text && n < 10; n++ {
			key = *e.RedactedText + "#" + fmt.Sprint(n)
		}
		original, ok := res.Mapping[key]
		if !ok {
			return "no mapping for a replacement"
		}
		used[key]++
		b.WriteString(text[:at])
		b.WriteString(original)
		text = text[at+len(*e.RedactedText):]
	}
	b.WriteString(text)
	if len(used) != len(res.Mapping) {
		return "mapping has keys no entity uses"
	}
	return b.String()
}

// spliced is the original text with each entity's span (code point offsets, in text order)
// replaced by its redacted_text: the de-identified text, when the entities say truly where
// each replacement stands.
func spliced(res omDeidentifyResponse) string {
	var b strings.Builder
	runes, at := []rune(res.OriginalText), 0
	for _, e := range res.PIIEntities {
		if *e.Start < at {
			return "entities out of order"
		}
		b.WriteString(string(runes[at:*e.Start]))
		b.WriteString(*e.RedactedText)
		at = *e.End
	}
	b.WriteString(string(runes[at:]))
	return b.String()
}

// checkEntities checks each entity's code point offsets against the original text and its
// replacement against the de-identified text.
func checkEntities(t *testing.T, res omDeidentifyResponse) {
	t.Helper()
	runes := []rune(res.OriginalText)
	if res.NumEntitiesRedacted != len(res.PIIEntities) {
		t.Fatalf("num_entities_redacted %d for %d entities", res.NumEntitiesRedacted, len(res.PIIEntities))
	}
	for _, e := range res.PIIEntities {
		if e.Start == nil || e.End == nil || *e.Start < 0 || *e.End > len(runes) || string(runes[*e.Start:*e.End]) != e.Text {
			t.Fatalf("entity %s: offsets do not slice its text", e.Label)
		}
		if e.RedactedText == nil || e.Action == nil || e.CanonicalLabel == nil || e.Threshold == nil ||
			e.EntityType != e.Label || len(e.Sources) != 1 || e.Evidence["raw_label"] != e.Label {
			t.Fatalf("entity %s: fields missing: %+v", e.Label, e)
		}
		if *e.RedactedText != "" && !strings.Contains(res.DeidentifiedText, *e.RedactedText) {
			t.Fatalf("entity %s: its replacement is not in the text", e.Label)
		}
	}
}

// TestRebuiltOpenMedGoClientDeidentifiesWithEveryMethod: each method, with the mapping,
// through the rebuild of OpenMed's Go client: no identifier is left in the text (shift_dates:
// no date; replace keeps an age up to 89, which agrees with the shifted birth date), the mapping restores the original exactly, and every entity's fields and offsets
// are there.
func TestRebuiltOpenMedGoClientDeidentifiesWithEveryMethod(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none")
	labels := map[string]bool{}
	for _, method := range []string{"mask", "remove", "replace", "hash", "shift_dates"} {
		res, apiErr := omDeidentify(t, srv.url, omDeidentifyRequest{Text: richNote, Method: method, KeepMapping: true})
		if apiErr != nil {
			t.Fatalf("%s: %+v", method, apiErr)
		}
		if res.Method != method || res.OriginalText != richNote || res.Mapping == nil {
			t.Fatalf("%s: method %q, mapping %v", method, res.Method, res.Mapping != nil)
		}
		checkEntities(t, res)
		// Each identifier is checked where it stood: the text is the original with every span
		// replaced, so what stands there is the entity's redacted_text, which must not be the
		// identifier. A short one ("67", "IL") may also occur elsewhere, inside a hash or a
		// surrogate, so only the longer ones are looked for in the whole text too.
		if got := spliced(res); got != res.DeidentifiedText {
			t.Fatalf("%s: the entities' replacements at their offsets give\n%q\nnot\n%q", method, got, res.DeidentifiedText)
		}
		for _, e := range res.PIIEntities {
			labels[e.Label] = true
			isDate := *e.CanonicalLabel == "DATE"
			left := *e.RedactedText == e.Text || (len(e.Text) > 4 && strings.Contains(res.DeidentifiedText, e.Text))
			if n, err := strconv.Atoi(e.Text); method == "replace" && *e.CanonicalLabel == "AGE" && err == nil && n <= 89 {
				left = false // an age up to 89 stays, to agree with the shifted date of birth (Safe Harbor keeps it)
			}
			if (method != "shift_dates" || isDate) && left {
				t.Errorf("%s: %s left in the text", method, e.Label)
			}
			if *e.Action != method {
				t.Errorf("%s: action %q", method, *e.Action)
			}
		}
		if got := restoreMapping(res); got != richNote {
			t.Errorf("%s: the mapping restores\n%q\nnot\n%q", method, got, richNote)
		}
	}
	want := []string{"first_name", "last_name", "age", "date", "street_address", "city", "state", "postcode",
		"phone_number", "fax_number", "email", "url", "medical_record_number", "ssn", "account_number"}
	for _, l := range want {
		if !labels[l] {
			t.Errorf("no %s entity: the note no longer covers every kind", l)
		}
	}
}

// TestDeidentifyShiftsDatesAcrossMonthEndsAndLeapDays sends dates at month ends and on 29
// February through the server with a fixed offset, with and without keep_year.
func TestDeidentifyShiftsDatesAcrossMonthEndsAndLeapDays(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none")
	text := "Admitted on 01/31/2023, operated on 02/29/2024 and discharged on 12/31/2024."
	for _, c := range []struct {
		days     int
		keepYear bool
		want     []string
	}{
		{1, false, []string{"02/01/2023", "03/01/2024", "01/01/2025"}},
		{-1, false, []string{"01/30/2023", "02/28/2024", "12/30/2024"}},
		// keep_year shifts, then puts the year back: 29 February 2024 + 366 days is 1 March 2025,
		// so 1 March 2024.
		{366, true, []string{"02/01/2023", "03/01/2024", "01/01/2024"}},
	} {
		days := c.days
		res, apiErr := omDeidentify(t, srv.url, omDeidentifyRequest{Text: text, Method: "shift_dates", DateShiftDays: &days, KeepYear: c.keepYear})
		if apiErr != nil {
			t.Fatalf("%+v", apiErr)
		}
		var got []string
		for _, e := range res.PIIEntities {
			got = append(got, *e.RedactedText)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%+d keep_year=%v: %v, want %v (%q)", c.days, c.keepYear, got, c.want, res.DeidentifiedText)
		}
	}
	// A date shifted onto 29 February of a leap year whose year is then put back in a year
	// without one is the 28th; where that is the date it was, it is not written.
	days := 367
	res, apiErr := omDeidentify(t, srv.url, omDeidentifyRequest{Text: "Seen on 02/27/2023.", Method: "shift_dates", DateShiftDays: &days, KeepYear: true})
	if apiErr != nil || res.DeidentifiedText != "Seen on 02/28/2023." {
		t.Fatalf("%+v %q", apiErr, res.DeidentifiedText)
	}
	days = 366
	res, apiErr = omDeidentify(t, srv.url, omDeidentifyRequest{Text: "Seen on 02/28/2023.", Method: "shift_dates", DateShiftDays: &days, KeepYear: true})
	if apiErr != nil || res.DeidentifiedText != "Seen on [DATE_SHIFTED]." {
		t.Fatalf("%+v %q", apiErr, res.DeidentifiedText)
	}
	// The deprecated alias turns any method into shift_dates, with its offset.
	days = 1
	yes := true
	res, apiErr = omDeidentify(t, srv.url, omDeidentifyRequest{Text: text, Method: "hash", ShiftDates: &yes, DateShiftDays: &days})
	if apiErr != nil || res.Method != "shift_dates" || !strings.Contains(res.DeidentifiedText, "03/01/2024") {
		t.Fatalf("%+v %q", apiErr, res.DeidentifiedText)
	}
}

// TestDeidentifyPolicies: a policy named as users write it decides each span's action and says
// so in the entity's and the result's metadata; gdpr keeps the mapping and gives reversible
// ids without being asked.
func TestDeidentifyPolicies(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none")
	res, apiErr := omDeidentify(t, srv.url, omDeidentifyRequest{Text: richNote, Method: "replace", Policy: "Research-Limited-Dataset"})
	if apiErr != nil {
		t.Fatalf("%+v", apiErr)
	}
	checkEntities(t, res)
	if p, _ := res.Metadata["policy"].(map[string]any); p["name"] != "research_limited_dataset" {
		t.Fatalf("metadata %v", res.Metadata)
	}
	for _, e := range res.PIIEntities {
		pa, _ := e.Metadata["policy_action"].(map[string]any)
		if *e.CanonicalLabel == "DATE" || *e.CanonicalLabel == "AGE" || pa["action"] != "mask" || *e.Action != "mask" {
			t.Errorf("research_limited_dataset: %s %s with %v", *e.CanonicalLabel, *e.Action, pa)
		}
	}
	if !strings.Contains(res.DeidentifiedText, "03/14/1957") || strings.Contains(res.DeidentifiedText, "Gonzalez") {
		t.Fatalf("dates are kept and names masked: %q", res.DeidentifiedText)
	}
	res, apiErr = omDeidentify(t, srv.url, omDeidentifyRequest{Text: richNote, Policy: "gdpr"})
	if apiErr != nil || res.Mapping == nil || restoreMapping(res) != richNote {
		t.Fatalf("gdpr: %+v %v", apiErr, res.Mapping)
	}
	for _, e := range res.PIIEntities {
		if !regexp.MustCompile(`^rev_[0-9a-f]{24}$`).MatchString(e.ReversibleID) {
			t.Fatalf("gdpr: reversible id %q", e.ReversibleID)
		}
	}
}

// TestDeidentifyRefusesWhatOpenMedRefuses: OpenMed's 422s, in its envelope, as its client
// reads them; nothing of the request's text in them.
func TestDeidentifyRefusesWhatOpenMedRefuses(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none")
	days, half := 3, 1.5
	no := false
	for _, c := range []struct {
		req   omDeidentifyRequest
		field string
	}{
		{omDeidentifyRequest{Text: richNote, Method: "blur"}, "body.method"},
		{omDeidentifyRequest{Text: richNote, Policy: "Maria Gonzalez"}, "body.policy"},
		{omDeidentifyRequest{Text: richNote, Method: "mask", DateShiftDays: &days}, "body"},
		{omDeidentifyRequest{Text: richNote, Method: "shift_dates", ShiftDates: &no}, "body"},
		{omDeidentifyRequest{Text: richNote, ConfidenceThreshold: &half}, "body.confidence_threshold"},
		{omDeidentifyRequest{Text: "  "}, "body.text"},
	} {
		_, apiErr := omDeidentify(t, srv.url, c.req)
		if apiErr == nil || apiErr.StatusCode != 422 || apiErr.Error.Code != "validation_error" {
			t.Fatalf("%+v: %+v", c.req, apiErr)
		}
		details := fmt.Sprint(apiErr.Error.Details)
		if !strings.Contains(details, "field:"+c.field+" ") || strings.Contains(details, "Gonzalez") {
			t.Errorf("%+v: details %s", c.req, details)
		}
	}
}

// TestDeidentifyHashIsKeyed: two servers with one SLUICE_DEID_HASH_KEY hash a name alike, a
// third with another key differently.
func TestDeidentifyHashIsKeyed(t *testing.T) {
	t.Parallel()
	hashOf := func(key string) string {
		srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_DEID_HASH_KEY="+key)
		res, apiErr := omDeidentify(t, srv.url, omDeidentifyRequest{Text: richNote, Method: "hash"})
		if apiErr != nil || len(res.PIIEntities) == 0 {
			t.Fatalf("%+v", apiErr)
		}
		return *res.PIIEntities[0].RedactedText
	}
	a, b, c := hashOf("a key of sixteen bytes"), hashOf("a key of sixteen bytes"), hashOf("another key, also long")
	if a != b || a == c || !regexp.MustCompile(`^first_name_[0-9a-f]{8}$`).MatchString(a) {
		t.Fatalf("%q %q %q", a, b, c)
	}
}

// TestOpenMedDashboardsReadTheirFamilies: with SLUICE_METRICS_COMPAT=openmed, a scrape has
// OpenMed's families with the requests just served, next to Sluice's; /health has OpenMed's
// fields.
func TestOpenMedDashboardsReadTheirFamilies(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_METRICS_COMPAT=openmed")
	for range 3 {
		if _, apiErr := omDeidentify(t, srv.url, omDeidentifyRequest{Text: "Call Maria at (415) 555-0132."}); apiErr != nil {
			t.Fatalf("%+v", apiErr)
		}
	}
	srv.waitForMetric(t, `openmed_service_request_total{route="/pii/deidentify",status_code="200"} 3`)
	srv.waitForMetric(t, `openmed_service_request_duration_seconds_count{route="/pii/deidentify"} 3`)
	srv.waitForMetric(t, `openmed_service_inflight_requests 0`)
	srv.waitForMetric(t, `openmed_service_model_resident_total 2`)
	srv.waitForMetric(t, `openmed_service_admission_queue_shedding{queue="pii_extract"} 0`)
	srv.waitForMetric(t, `sluice_http_requests_total{outcome="served",route="/pii/deidentify",status="200"} 3`)
	resp, err := http.Get(srv.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil || health["status"] != "ok" || health["version"] == nil || health["profile"] == nil {
		t.Fatalf("/health %v %v", health, err)
	}
}

// OpenMed's Go client's LoadedModels and UnloadModels types, rebuilt from their wire names.
type omLoadedModelsResponse struct {
	DefaultKeepAliveSeconds *float64                  `json:"default_keep_alive_seconds"`
	MaxResidentModels       *int                      `json:"max_resident_models"`
	WarmModels              []string                  `json:"warm_models"`
	Models                  map[string]map[string]any `json:"models"`
}

type omUnloadRequest struct {
	ModelName string `json:"model_name,omitempty"`
	All       bool   `json:"all,omitempty"`
}

type omUnloadResponse struct {
	Unloaded       *bool              `json:"unloaded"`
	ModelName      string             `json:"model_name"`
	Released       map[string]float64 `json:"released"`
	ActiveRequests *int               `json:"active_requests"`
}

// TestRebuiltOpenMedGoClientListsAndUnloadsModels: LoadedModels decodes the resident models
// with OpenMed's fields; UnloadModels of a model (by an alias too) or of all answers in
// OpenMed's shape that nothing was unloaded, Sluice's models being pinned; a missing name is
// its 422. Every model reports its footprint.
func TestRebuiltOpenMedGoClientListsAndUnloadsModels(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none")
	resp, err := http.Get(srv.url + "/models/loaded")
	if err != nil {
		t.Fatal(err)
	}
	var loaded omLoadedModelsResponse
	err = json.NewDecoder(resp.Body).Decode(&loaded)
	resp.Body.Close()
	if err != nil || len(loaded.Models) != 2 || loaded.Models["pii"]["resident"] != true || loaded.Models["pii"]["loading"] != false {
		t.Fatalf("%+v %v", loaded, err)
	}
	for name, m := range loaded.Models { // every resident model says what it holds
		if b, _ := m["footprint_bytes"].(float64); b < 1<<20 {
			t.Errorf("%s: footprint_bytes %v", name, m["footprint_bytes"])
		}
	}
	for _, req := range []omUnloadRequest{{ModelName: "pii"}, {ModelName: "OpenMed/OpenMed-PII-SuperClinical-Small-44M-v1"}, {All: true}} {
		var out omUnloadResponse
		if apiErr := omDo(t, srv.url, "/models/unload", req, &out); apiErr != nil {
			t.Fatalf("%+v: %+v", req, apiErr)
		}
		if out.Unloaded == nil || *out.Unloaded || out.Released["models"] != 0 || (!req.All && (out.ModelName != "pii" || out.ActiveRequests == nil)) {
			t.Fatalf("%+v: %+v", req, out)
		}
	}
	var out omUnloadResponse
	if apiErr := omDo(t, srv.url, "/models/unload", omUnloadRequest{}, &out); apiErr == nil || apiErr.StatusCode != 422 {
		t.Fatalf("no model_name: %+v", apiErr)
	}
}
