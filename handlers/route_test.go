package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/settings"
)

// echoRoute is a route kind the package does not ship: it answers with its admitted class.
// Registering it is all a new kind of route needs.
func echoRoute(gate *fakeLoad, t *testing.T) Route {
	return Route{
		Path:   "/echo",
		Gate:   newTestGate(t, "echo", gate, time.Second),
		Models: []ModelInfo{{Name: "echo-model", Aliases: []string{"parrot"}, MaxLength: 7}},
		serve: func(s *server, c *fiber.Ctx, x *exchange) error {
			c.Locals(localOutcome, OutcomeServed)
			return c.JSON(fiber.Map{"priority": x.prio.String()})
		},
	}
}

// TestRoutesAreOneTable: a route added to Options.Routes is served behind its gate, listed by
// /models/loaded, labelled in metrics, and known to the 404/405 logic, with no other change.
func TestRoutesAreOneTable(t *testing.T) {
	load := newFakeLoad(16)
	f := newFixture(t, func(o *fixtureOptions) { o.extra = []Route{echoRoute(load, t)} })
	if r := f.do(t, "POST", "/echo", "", "x-openmed-priority", "bulk"); r.status != 200 || r.body["priority"] != "bulk" {
		t.Fatalf("POST /echo: %d %s", r.status, r.raw)
	}
	load.setWaiting(200) // over the gate's high watermark of 100
	if r := f.do(t, "POST", "/echo", ""); r.status != 503 || errorOf(t, r)["details"].(map[string]any)["queue"] != "echo" {
		t.Fatalf("POST /echo over the watermark: %d %s", r.status, r.raw)
	}
	r := f.do(t, "GET", "/models/loaded", "")
	m, _ := r.body["models"].(map[string]any)["echo-model"].(map[string]any)
	if m == nil || m["queue"] != "echo" || m["max_length"] != 7.0 || m["active_requests"] != 200.0 ||
		m["aliases"].([]any)[0] != "parrot" {
		t.Fatalf("/models/loaded = %s", r.raw)
	}
	if r := f.do(t, "GET", "/echo", ""); r.status != 405 || errorOf(t, r)["code"] != "bad_request" {
		t.Fatalf("GET /echo: %d %s", r.status, r.raw)
	}
	metrics := f.do(t, "GET", "/metrics", "").raw
	for _, want := range []string{
		`sluice_http_requests_total{outcome="served",route="/echo",status="200"} 1`,
		`sluice_http_requests_total{outcome="refused",route="/echo",status="503"} 1`,
		`sluice_http_requests_total{outcome="failed",route="/echo",status="405"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestNewChecksEveryOption(t *testing.T) {
	gate := newTestGate(t, "analyze", newFakeLoad(4), time.Second)
	ep := Endpoint{Default: "m", Models: map[string]Extractor{"m": &fakeExtractor{name: "m"}}, Gate: gate}
	_, err := New(Options{
		Routes:     []Route{Analyze(ep), Analyze(ep), {Path: "/health"}},
		Limits:     Limits{MaxBodyBytes: 0, MaxTextChars: -1, MaxTextBytes: 10},
		RetryAfter: -time.Second,
	})
	var fields []string
	problems, other := settings.Problems(err)
	if len(other) > 0 {
		t.Fatalf("%v are not settings.Problems", other)
	}
	for _, p := range problems {
		fields = append(fields, p.Field)
	}
	got := strings.Join(fields, " ")
	for _, want := range []string{"Limits.MaxBodyBytes", "Limits.MaxTextChars", "Limits.RequestTimeout", "Limits.WriteTimeout",
		"RetryAfter", "Logger, Clock, Gatherer, Ready", "Routes[1]", "Routes[2]"} {
		if !strings.Contains(got, want) {
			t.Errorf("New's errors name %q, want %s among them", got, want)
		}
	}
	if strings.Contains(got, "Limits.MaxTextBytes") || strings.Contains(got, "Routes[0]") {
		t.Errorf("New's errors name %q: a valid field is reported", got)
	}
}
