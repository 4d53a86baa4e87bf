package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/gateway"
	"github.com/sluice-serving/sluice/identity"
	"github.com/sluice-serving/sluice/natsbox"
)

// newAuditLog is a real audit log: an embedded NATS server on a temporary directory.
func newAuditLog(t *testing.T) *audit.Log {
	l, _ := newAuditBox(t)
	return l
}

// newAuditBox is newAuditLog with its server's connection.
func newAuditBox(t *testing.T) (*audit.Log, *natsbox.Box) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	box, err := natsbox.Open(context.Background(), natsbox.Config{DataDir: t.TempDir(), Replicas: 1, Replica: "test"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.Close)
	l, err := audit.Open(context.Background(), box, "test", audit.Config{Enabled: true, AckTimeout: 5 * time.Second},
		clock.Real(), nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close) // before the box's: cleanups run last first
	return l, box
}

// auditRecords reads back every record the log holds, which must verify as chains.
func auditRecords(t *testing.T, l *audit.Log) []audit.Stored {
	t.Helper()
	page, err := l.Read(context.Background(), audit.Query{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if !page.Verified {
		t.Errorf("the audit does not verify: %+v", page.Breaks)
	}
	return page.Records
}

// Every de-identification request leaves one record, stored before it is answered: the
// request's id as answered, the caller's tenant (never its key), the route, the status, the
// model and method, keyed hashes of the text and of what it became, and counts; never the
// text. GET /privacy-gateway/audit reads them back by tenant, a page at a time.
func TestDeidentificationIsAudited(t *testing.T) {
	f, trail := everyRouteFixture(t, withTenants(t, map[string]string{"clinic": "null", "lab": "null"}))
	ids := map[string]string{}
	for i, c := range []struct{ path, body, key string }{
		{"/pii/deidentify", `{"text":"Alice was seen."}`, "clinic"},
		{"/pii/deidentify/stream", `{"text":"Alice was seen."}`, "clinic"},
		{"/pii/deidentify", `{"text":"Alice was seen.","method":"nonsense"}`, "clinic"},
		{"/pii/deidentify", `{"text":"Alice was seen."}`, "lab"},
	} {
		id := fmt.Sprintf("%032x", i+1)
		r := f.do(t, "POST", c.path, c.body, "Authorization", "Bearer "+c.key+"-key", "X-Request-ID", id)
		if r.header.Get("X-Request-ID") != id || (i != 2) != (r.status == 200) {
			t.Fatalf("%s: %d %s", c.path, r.status, r.raw)
		}
		ids[id] = c.path
	}
	recs := auditRecords(t, trail)
	if len(recs) != 4 {
		t.Fatalf("%d records: %+v", len(recs), recs)
	}
	for i, r := range recs {
		want := []struct {
			status string
			code   int
			tenant string
		}{{"served", 200, "clinic"}, {"served", 200, "clinic"}, {"failed", 422, "clinic"}, {"served", 200, "lab"}}[i]
		if r.Route != ids[r.RequestID] || r.Status != want.status || r.HTTPStatus != want.code || r.Tenant != want.tenant {
			t.Errorf("record %d: %+v", i, r)
		}
		if i != 2 && (r.Entities["FIRST_NAME"] != 1 || r.Method != "mask" || r.Model != "pii" ||
			!strings.HasPrefix(r.InputHash, "hmac-sha256:") || !strings.HasPrefix(r.OutputHash, "hmac-sha256:") || r.InputHash == r.OutputHash) {
			t.Errorf("record %d's hashes and counts: %+v", i, r)
		}
	}
	if recs[0].InputHash != recs[1].InputHash || recs[0].OutputHash != recs[1].OutputHash {
		t.Error("the same text, whole and streamed, hashed differently")
	}
	data, _ := json.Marshal(recs)
	if strings.Contains(string(data), "Alice") || strings.Contains(string(data), "-key") {
		t.Errorf("a text or a key reached the audit: %s", data)
	}

	var pages []auditPage
	for cursor := ""; ; {
		r := f.do(t, "GET", "/privacy-gateway/audit?tenant=clinic&limit=2"+cursor, "", "Authorization", "Bearer clinic-key")
		var page auditPage
		if err := json.Unmarshal([]byte(r.raw), &page); err != nil || r.status != 200 || !page.Verified || len(pages) > 3 {
			t.Fatalf("page %d: %d %s", len(pages), r.status, r.raw)
		}
		pages = append(pages, page)
		if page.NextCursor == nil {
			break
		}
		cursor = fmt.Sprintf("&cursor=%d", *page.NextCursor)
	}
	if len(pages) != 2 || pages[0].Count != 2 || pages[1].Count != 1 || pages[1].Records[0].RequestID != fmt.Sprintf("%032x", 3) ||
		pages[1].Chains[0].Replica != "test" || !pages[1].Chains[0].Verified {
		t.Errorf("pages %+v", pages)
	}
	r := f.do(t, "GET", "/privacy-gateway/audit?from=yesterday&limit=0&cursor=x&replica=a.b", "", "Authorization", "Bearer clinic-key")
	if e := errorOf(t, r); r.status != 422 || !strings.Contains(r.raw, "query.from") || !strings.Contains(r.raw, "query.limit") ||
		!strings.Contains(r.raw, "query.cursor") || !strings.Contains(r.raw, "query.replica") || e["code"] != CodeValidation {
		t.Errorf("bad parameters: %d %s", r.status, r.raw)
	}
	// A time whose offset puts it past the years JSON writes is refused as a bad time.
	for _, from := range []string{"9999-12-31T23:59:59-23:59", "0000-01-01T00:00:00%2B00:01"} {
		if r := f.do(t, "GET", "/privacy-gateway/audit?from="+from, "", "Authorization", "Bearer clinic-key"); r.status != 422 || !strings.Contains(r.raw, "query.from") {
			t.Errorf("from=%s: %d %s", from, r.status, r.raw)
		}
	}
	// Up to the zero time, which a query reads as no bound, is refused, not read as none given;
	// from it is from the start.
	if r := f.do(t, "GET", "/privacy-gateway/audit?to=0001-01-01T00:00:00Z", "", "Authorization", "Bearer clinic-key"); r.status != 422 || !strings.Contains(r.raw, "query.to") {
		t.Errorf("to the zero time: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "GET", "/privacy-gateway/audit?from=0001-01-01T00:00:00Z", "", "Authorization", "Bearer clinic-key"); r.status != 200 {
		t.Errorf("from the zero time: %d %s", r.status, r.raw)
	}
	// Nothing since from: an empty list, not null.
	if r := f.do(t, "GET", "/privacy-gateway/audit?from=2999-01-01T00:00:00Z", "", "Authorization", "Bearer clinic-key"); r.status != 200 || !strings.Contains(r.raw, `"records":[]`) {
		t.Errorf("nothing since: %d %s", r.status, r.raw)
	}
}

// A key marked for the gateway has its /v1/chat/completions audited whatever its answer, the
// 503 of a server without the gateway's face included (that answer left no record; the
// gateway's own routes record theirs). Its record says why, gateway_not_configured, and is
// counted in sluice_gateway_requests_total, as every gateway record is: the metric counted
// only records with a completion source, which a refusal before any session has not.
func TestGatewayKeyWithoutTheFaceIsAudited(t *testing.T) {
	f, trail := everyRouteFixture(t, func(o *fixtureOptions) {
		keys, err := identity.ParseKeys([]byte(`[{"id":"gw","key_hash":"` + identity.HashKey("gateway-writer") +
			`","tenant":"gw","scopes":"pii:write generate:write","gateway":true}]`))
		if err != nil {
			t.Fatal(err)
		}
		if o.Auth, err = identity.New(identity.Config{Keys: keys}, o.Clock); err != nil {
			t.Fatal(err)
		}
		o.GatewayFace = nil
	})
	r := f.do(t, "POST", "/v1/chat/completions", workBodies["/v1/chat/completions"], "Authorization", "Bearer gateway-writer")
	if e := errorOf(t, r); r.status != 503 || e["code"] != codeGatewayNotConfigured {
		t.Fatalf("status %d %s", r.status, r.raw)
	}
	recs := auditRecords(t, trail)
	if len(recs) != 1 {
		t.Fatalf("a gateway key's chat request answered %d left %d audit records, want 1", r.status, len(recs))
	}
	if rec := recs[0]; rec.Route != "/v1/chat/completions" || rec.HTTPStatus != 503 || rec.Status != "error" || rec.Tenant != "gw" ||
		rec.Reason != string(gateway.NotConfigured) || rec.RequestID != r.header.Get("X-Request-ID") {
		t.Errorf("record %+v", rec)
	}
	if m := f.do(t, "GET", "/metrics", "").raw; !strings.Contains(m, `sluice_gateway_requests_total{reason="gateway_not_configured",status="error"} 1`) {
		t.Errorf("the refusal's record is not counted in sluice_gateway_requests_total")
	}
}

// A request whose record cannot be stored is not answered as if it were: 503
// audit_unavailable (a stream ends with that error instead of its final line), on the
// de-identification routes and the gateway alike; reading the audit says the same.
func TestUnstoredRecordIsNotAnswered(t *testing.T) {
	trail, box := newAuditBox(t)
	f, _ := everyRouteFixture(t, func(o *fixtureOptions) { o.Audit = trail })
	if r := f.do(t, "POST", "/pii/deidentify", workBodies["/pii/deidentify"]); r.status != 200 {
		t.Fatalf("with the stream there: %d %s", r.status, r.raw)
	}
	if err := box.JetStream().DeleteStream(context.Background(), audit.Stream); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/pii/deidentify", "/privacy-gateway/complete"} {
		r := f.do(t, "POST", path, workBodies[path])
		if r.status != 503 || errorOf(t, r)["code"] != CodeAuditUnavailable || r.header.Get("Retry-After") != "1" || strings.Contains(r.raw, "Alice") {
			t.Errorf("%s: %d %v %s", path, r.status, r.header, r.raw)
		}
	}
	r := f.do(t, "POST", "/pii/deidentify/stream", workBodies["/pii/deidentify/stream"])
	lines := strings.Split(strings.TrimSpace(r.raw), "\n")
	if last := lines[len(lines)-1]; r.status != 200 || !strings.Contains(last, CodeAuditUnavailable) || strings.Contains(r.raw, `"final"`) {
		t.Errorf("stream: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "GET", "/privacy-gateway/audit", ""); r.status != 503 || errorOf(t, r)["code"] != CodeAuditUnavailable {
		t.Errorf("reading: %d %s", r.status, r.raw)
	}
	// Three records lost within one second of the fixture's clock: one line says so (the
	// access log has every request).
	if n := strings.Count(f.logs.String(), "record was not stored"); n != 1 {
		t.Errorf("%d lines for three records not stored in one second, want 1", n)
	}
}

// TestATenantsAuditIsItsOwn: audit:read reads the caller's own tenant's records, whatever its
// query's tenant; another tenant's is a 403 naming audit:read_all, which (as `*` does) reads
// every tenant's.
func TestATenantsAuditIsItsOwn(t *testing.T) {
	var open bool // the audit route opened to callers without a credential
	withAuditors := func(o *fixtureOptions) {
		keys, err := identity.ParseKeys([]byte(`[
			{"id":"c","key_hash":"` + identity.HashKey("clinic-key") + `","tenant":"clinic","scopes":"pii:write audit:read"},
			{"id":"l","key_hash":"` + identity.HashKey("lab-key") + `","tenant":"lab","scopes":"pii:write audit:read"},
			{"id":"o","key_hash":"` + identity.HashKey("operator-key") + `","tenant":"ops","scopes":"audit:read_all audit:read"}]`))
		if err != nil {
			t.Fatal(err)
		}
		cfg := identity.Config{Keys: keys}
		if open {
			cfg.Open, cfg.RouteScopes = true, map[string][]string{"GET /privacy-gateway/audit": {}}
		}
		if o.Auth, err = identity.New(cfg, o.Clock); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := everyRouteFixture(t, withAuditors)
	for _, key := range []string{"clinic-key", "lab-key", "lab-key"} {
		if r := f.do(t, "POST", "/pii/deidentify", `{"text":"Alice was seen."}`, "Authorization", "Bearer "+key); r.status != 200 {
			t.Fatalf("%s: %d %s", key, r.status, r.raw)
		}
	}
	var page auditPage
	read := func(key, query string) (int, []string) {
		r := f.do(t, "GET", "/privacy-gateway/audit"+query, "", "Authorization", "Bearer "+key)
		page = auditPage{}
		_ = json.Unmarshal([]byte(r.raw), &page)
		var tenants []string
		for _, rec := range page.Records {
			tenants = append(tenants, rec.Tenant)
		}
		return r.status, tenants
	}
	for _, c := range []struct {
		key, query string
		status     int
		tenants    []string
	}{
		{"clinic-key", "", 200, []string{"clinic"}},
		{"lab-key", "", 200, []string{"lab", "lab"}},
		{"lab-key", "?tenant=lab", 200, []string{"lab", "lab"}},
		{"lab-key", "?tenant=clinic", 403, nil},
		{"operator-key", "", 200, []string{"clinic", "lab", "lab"}},
		{"operator-key", "?tenant=clinic", 200, []string{"clinic"}},
	} {
		if status, tenants := read(c.key, c.query); status != c.status || !slices.Equal(tenants, c.tenants) {
			t.Errorf("%s%s: %d %v, want %d %v", c.key, c.query, status, tenants, c.status, c.tenants)
		}
		// The chains and the records scanned would count the other tenants' requests.
		if ownOnly := c.key != "operator-key"; c.status == 200 && !page.Verified ||
			ownOnly && (page.Scanned != len(c.tenants) || len(page.Chains) != 0) ||
			!ownOnly && (page.Scanned != 3 || len(page.Chains) != 1 || page.Chains[0].Records != 3) {
			t.Errorf("%s%s: scanned %d, chains %+v", c.key, c.query, page.Scanned, page.Chains)
		}
	}
	// An audit route the operator opened is read as with authentication off by a caller
	// without a credential, and scoped for one with.
	open = true
	f, _ = everyRouteFixture(t, withAuditors)
	f.do(t, "POST", "/pii/deidentify", `{"text":"Alice was seen."}`, "Authorization", "Bearer clinic-key")
	f.do(t, "POST", "/pii/deidentify", `{"text":"Alice was seen."}`, "Authorization", "Bearer lab-key")
	if r := f.do(t, "GET", "/privacy-gateway/audit", ""); r.status != 200 || !strings.Contains(r.raw, `"count":2`) {
		t.Errorf("an opened route without a credential: %d %s", r.status, r.raw)
	}
	if status, tenants := read("lab-key", ""); status != 200 || !slices.Equal(tenants, []string{"lab"}) {
		t.Errorf("an opened route with a credential: %d %v", status, tenants)
	}
}

// A tenant's own page, filled to its limit by its last record, has the same next_cursor
// (null) whether or not another tenant made a request after it: the cursor was decided by the
// stream's next record of any tenant, so it told the caller (and, moving `to`, when) of the
// other tenant's request.
func TestOwnTenantsCursorSaysNothingOfOthers(t *testing.T) {
	withAuditors := func(o *fixtureOptions) {
		keys, err := identity.ParseKeys([]byte(`[
			{"id":"c","key_hash":"` + identity.HashKey("clinic-key") + `","tenant":"clinic","scopes":"pii:write audit:read"},
			{"id":"l","key_hash":"` + identity.HashKey("lab-key") + `","tenant":"lab","scopes":"pii:write audit:read"}]`))
		if err != nil {
			t.Fatal(err)
		}
		if o.Auth, err = identity.New(identity.Config{Keys: keys}, o.Clock); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := everyRouteFixture(t, withAuditors)
	cursor := func() *uint64 {
		t.Helper()
		r := f.do(t, "GET", "/privacy-gateway/audit?limit=1", "", "Authorization", "Bearer clinic-key")
		var page auditPage
		if err := json.Unmarshal([]byte(r.raw), &page); err != nil || r.status != 200 || page.Count != 1 {
			t.Fatalf("%d %s", r.status, r.raw)
		}
		return page.NextCursor
	}
	deidentify := func(key string) {
		t.Helper()
		if r := f.do(t, "POST", "/pii/deidentify", `{"text":"Alice was seen."}`, "Authorization", "Bearer "+key); r.status != 200 {
			t.Fatalf("%s: %d %s", key, r.status, r.raw)
		}
	}
	deidentify("clinic-key")
	if alone := cursor(); alone != nil {
		t.Fatalf("clinic's only record: next_cursor %d", *alone)
	}
	deidentify("lab-key")
	if after := cursor(); after != nil {
		t.Errorf("clinic's full page once lab made a request after it: next_cursor %d, null alone", *after)
	}
}
