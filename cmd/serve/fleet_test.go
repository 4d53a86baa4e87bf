package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/fleetbudget/redistest"
	"github.com/sluice-serving/sluice/natsbox/natstest"
)

// fleetOffer is an open-loop load: one tenant's requests, the same body each time, sent at a
// fixed rate round-robin over a fleet's replicas, each answer counted.
type fleetOffer struct {
	replicas []*testServer
	key      string
	path     string
	body     string
	rate     float64 // requests offered per second
	duration time.Duration
}

// fleetResult is what an offer got: answers by status, per replica, and the window from the
// first request sent to the last answer.
type fleetResult struct {
	served, refused []int
	other           map[int]int
	window          time.Duration
	servedAt        []time.Duration // each 200's answer, from the start
	servedBy        map[string]int  // each 200's X-Request-ID: the replica that answered it
}

// fleetRequestIDs numbers the requests of every offer in the test binary, so that no two
// share an X-Request-ID (32 hex digits: a form the server keeps).
var fleetRequestIDs atomic.Uint64

// servedIn counts the requests served in [from, to).
func (r fleetResult) servedIn(from, to time.Duration) (n int) {
	for _, at := range r.servedAt {
		if at >= from && at < to {
			n++
		}
	}
	return n
}

func (r fleetResult) total(counts []int) (n int) {
	for _, c := range counts {
		n += c
	}
	return n
}

// run sends the offer and waits for every answer; at, when not nil, is called at each
// second's mark from the start with the second's number (a run's events: Redis stopped). The pacing is the load generator's own
// schedule (request i at i / rate), not a wait for the server's state.
func (o fleetOffer) run(t testing.TB, at func(second int)) fleetResult {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	res := fleetResult{served: make([]int, len(o.replicas)), refused: make([]int, len(o.replicas)), other: map[int]int{},
		servedBy: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var last time.Time
	n := int(o.rate * o.duration.Seconds())
	start := time.Now()
	second := 0
	for i := range n {
		next := time.Duration(float64(i) / o.rate * float64(time.Second))
		time.Sleep(time.Until(start.Add(next)))
		if at != nil && next >= time.Duration(second+1)*time.Second {
			second++
			at(second)
		}
		srv := o.replicas[i%len(o.replicas)]
		wg.Add(1)
		go func(replica int) {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, srv.url+o.path, strings.NewReader(o.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-API-Key", o.key)
			id := fmt.Sprintf("%032x", fleetRequestIDs.Add(1))
			req.Header.Set("X-Request-ID", id)
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			last = time.Now()
			switch resp.StatusCode {
			case http.StatusOK:
				res.served[replica]++
				res.servedAt = append(res.servedAt, last.Sub(start))
				if got := resp.Header.Get("X-Request-ID"); got != id {
					t.Errorf("answered with X-Request-ID %q, sent %q", got, id)
				}
				res.servedBy[id] = replica
			case http.StatusTooManyRequests:
				res.refused[replica]++
			default:
				res.other[resp.StatusCode]++
			}
		}(i % len(o.replicas))
	}
	wg.Wait()
	res.window = last.Sub(start)
	return res
}

// tokensPerRequest is what the access log of srv says one request to path used: the tokens
// the budget is settled with.
func tokensPerRequest(t testing.TB, srv *testServer, path string) int {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(srv.logs.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg    string `json:"msg"`
			Route  string `json:"route"`
			Status int    `json:"status"`
			Tokens *int   `json:"tokens"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "request" && line.Route == path && line.Status == 200 && line.Tokens != nil {
			return *line.Tokens
		}
	}
	t.Fatalf("no served request to %s in the access log", path)
	return 0
}

// fleet starts n replicas with the same key file and env, replica i named fleet-i
// (SLUICE_REPLICA_ID: its audit chain).
func fleet(t testing.TB, n int, keys string, env ...string) []*testServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte("["+keys+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append([]string{"SLUICE_GENERATE_MODEL=none", "SLUICE_API_KEYS_FILE=" + path, "SLUICE_LOG_REFUSALS_PER_S=1"}, env...)
	out := make([]*testServer, n)
	for i := range out {
		out[i] = startServer(t, append([]string{fmt.Sprintf("SLUICE_REPLICA_ID=fleet-%d", i)}, env...)...)
	}
	return out
}

// fleetCase is one dimension of a tenant's budget offered four times over.
type fleetCase struct {
	name      string
	allowance string // the key file's budget
	perSecond float64
	burst     float64
	tokens    bool // the budget counts tokens (else requests)
}

var fleetBody = `{"text": "Started metformin 500 mg twice daily."}`

// fleetRatio offers c's tenant four times its budget on path round-robin over replicas for d
// and says what was served against what the budget allows over the window (its burst and its
// rate), in the budget's unit.
func fleetRatio(t testing.TB, replicas []*testServer, c fleetCase, path string, requestRate float64, d time.Duration) (ratio float64, res fleetResult, used, allowed float64) {
	t.Helper()
	res = fleetOffer{replicas: replicas, key: c.name + "-secret", path: path, body: fleetBody, rate: requestRate, duration: d}.run(t, nil)
	if len(res.other) > 0 {
		t.Fatalf("answers other than 200 and 429: %v", res.other)
	}
	used = float64(res.total(res.served))
	if c.tokens {
		used *= float64(tokensPerRequest(t, replicas[0], path))
	}
	allowed = c.burst + c.perSecond*res.window.Seconds()
	return used / allowed, res, used, allowed
}

// fleetNATSPort is the first of the fleet test's NATS cluster route ports (natsbox's tests
// take 7122 up, audit's 7222 up).
const fleetNATSPort = 7322

// TestFleetSharesOneBudget: three Sluice replicas (SLUICE_REPLICA_ID fleet-0 to fleet-2) on
// one Redis (SLUICE_REDIS_URL) and one three-node JetStream cluster (SLUICE_NATS_URL, streams
// kept in three copies). A tenant budgeted at 20 requests a second offered 80 a second of
// /pii/deidentify round-robin for 3 s: what the fleet serves is within 1.1x of what the budget
// allows over the window (each replica on its own would serve about 3x); the same for a budget
// of 140 tokens a second offered four times over. Every answer is counted. Then the
// audit the fleet shares: any one replica's GET /privacy-gateway/audit holds the record of
// every request the fleet answered 200 (each in the chain of the replica that answered it) and
// none of the refused ones, and all three chains, each whole and verified.
func TestFleetSharesOneBudget(t *testing.T) {
	// Not parallel: a rate a second is sent and measured.
	srv := redistest.Start(t)
	nats, _ := natstest.Cluster(t, 3, fleetNATSPort)
	requests := fleetCase{name: "req", allowance: `{"requests_per_minute":1200,"request_burst":10}`, perSecond: 20, burst: 10}
	tokens := fleetCase{name: "tok", allowance: `{"tokens_per_minute":8400,"token_burst":70}`, perSecond: 140, burst: 70, tokens: true}
	replicas := fleet(t, 3, budgetKey(requests.name+"-secret", requests.name, requests.allowance)+","+
		budgetKey(tokens.name+"-secret", tokens.name, tokens.allowance)+","+keyEntry("auditor-secret", "auditor", "audit:read audit:read_all"),
		"SLUICE_REDIS_URL="+srv.URL, "SLUICE_FLEET_REPLICAS=3", "SLUICE_REDIS_TIMEOUT_MS=1000", "SLUICE_REDIS_LEASE_MS=3000",
		"SLUICE_NATS_URL="+nats, "SLUICE_NATS_REPLICAS=3")
	served := map[string]fleetServed{} // every request answered 200, by X-Request-ID
	for _, c := range []fleetCase{requests, tokens} {
		t.Run(c.name, func(t *testing.T) {
			rate := 4 * c.perSecond
			if c.tokens { // 4x in tokens: what a request used, from the access log of the requests case
				rate = math.Round(4 * c.perSecond / float64(tokensPerRequest(t, replicas[0], "/pii/deidentify")))
			}
			ratio, res, used, allowed := fleetRatio(t, replicas, c, "/pii/deidentify", rate, 3*time.Second)
			t.Logf("%s: served %v (%d requests, per replica %v; refused %d) in %.2f s; the budget allows %.0f: %.2fx",
				c.name, used, res.total(res.served), res.served, res.total(res.refused), res.window.Seconds(), allowed, ratio)
			if ratio > 1.1 || ratio < 0.5 {
				t.Errorf("served %.2fx of the shared budget; want at most 1.1x (and at least half: the fleet serves its budget)", ratio)
			}
			for i, n := range res.served {
				if n == 0 {
					t.Errorf("replica %d served nothing", i)
				}
			}
			for id, replica := range res.servedBy {
				served[id] = fleetServed{replica: fmt.Sprintf("fleet-%d", replica), tenant: c.name}
			}
		})
	}
	perReplica := map[string]int{}
	for _, s := range served {
		perReplica[s.replica]++
	}
	for i, r := range replicas {
		view := fleetAuditOf(t, r, len(served))
		if !view.verified || len(view.breaks) > 0 || view.repeated > 0 {
			t.Errorf("replica %d's audit: verified %v, breaks %+v, %d request ids recorded twice", i, view.verified, view.breaks, view.repeated)
		}
		if len(view.chains) != len(perReplica) {
			t.Errorf("replica %d's audit holds %d chains %+v; the fleet has %d replicas", i, len(view.chains), view.chains, len(perReplica))
		}
		for name, n := range perReplica {
			c, ok := view.chains[name]
			switch {
			case !ok:
				t.Errorf("replica %d's audit has no chain of %s; want %d records", i, name, n)
			case !c.Verified || c.Records != n || c.FirstSeq != 1 || c.LastSeq != uint64(n):
				t.Errorf("replica %d's audit: chain of %s %+v; want %d records, 1 to %d, verified", i, name, c, n, n)
			}
		}
		missing, wrong := 0, 0
		for id, want := range served {
			rec, ok := view.records[id]
			switch {
			case !ok:
				missing++
			case rec.Replica != want.replica || rec.Tenant != want.tenant || rec.Route != "/pii/deidentify" || rec.HTTPStatus != 200 || rec.Status != "served":
				wrong++
				if wrong == 1 {
					t.Errorf("replica %d's audit: request %s was answered 200 by %s for %s, its record is %+v", i, id, want.replica, want.tenant, rec.Record)
				}
			}
		}
		if missing > 0 || wrong > 0 || len(view.records) != len(served) {
			t.Errorf("replica %d's audit: %d records for %d requests answered 200; %d of those without a record, %d with a wrong one",
				i, len(view.records), len(served), missing, wrong)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("audit: %d records in %d chains %v, read whole and verified through each replica", len(served), len(perReplica), perReplica)
}

// fleetServed is who answered a request 200, and for whom.
type fleetServed struct{ replica, tenant string }

// fleetAudit is what one replica's GET /privacy-gateway/audit says, every page of it: the
// records by request id (and how many ids had a second), each replica's chain over the pages,
// and whether every page verified.
type fleetAudit struct {
	records  map[string]audit.Stored
	repeated int
	chains   map[string]audit.Segment
	breaks   []audit.Break
	verified bool
}

// fleetAuditOf reads srv's audit whole, again until it holds at least want records: a read may
// be answered by a copy of the stream that has not yet stored the newest ones. Past a hang
// guard it returns what it read, for the caller to say what is missing.
func fleetAuditOf(t *testing.T, srv *testServer, want int) fleetAudit {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		view := fleetAudit{records: map[string]audit.Stored{}, chains: map[string]audit.Segment{}, verified: true}
		cursor := ""
		for {
			req, _ := http.NewRequest(http.MethodGet, srv.url+"/privacy-gateway/audit?limit=1000"+cursor, nil)
			req.Header.Set("X-API-Key", "auditor-secret")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var page struct {
				Records    []audit.Stored  `json:"records"`
				Chains     []audit.Segment `json:"chains"`
				Breaks     []audit.Break   `json:"breaks"`
				Verified   bool            `json:"verified"`
				NextCursor *uint64         `json:"next_cursor"`
			}
			err = json.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET /privacy-gateway/audit: %d, %v", resp.StatusCode, err)
			}
			for _, r := range page.Records {
				if _, dup := view.records[r.RequestID]; dup {
					view.repeated++
				}
				view.records[r.RequestID] = r
			}
			for _, c := range page.Chains { // a chain's segments, page after page
				if seen, ok := view.chains[c.Replica]; ok {
					c.Verified = c.Verified && seen.Verified && c.FirstSeq == seen.LastSeq+1
					c.Records += seen.Records
					c.FirstSeq = seen.FirstSeq
				}
				view.chains[c.Replica] = c
			}
			view.breaks = append(view.breaks, page.Breaks...)
			view.verified = view.verified && page.Verified
			if page.NextCursor == nil {
				break
			}
			cursor = fmt.Sprintf("&cursor=%d", *page.NextCursor)
		}
		if len(view.records) >= want || time.Now().After(deadline) {
			return view
		}
		time.Sleep(20 * time.Millisecond) // the next read; the copies catch up within milliseconds
	}
}

// TestRedisOutageThroughHTTP: with SLUICE_REDIS_FAILURE=closed, a budgeted request while Redis
// is stopped is answered 429 rate_limited, reason unavailable, Retry-After 1, and served again
// once Redis is back; a caller without a budget is served throughout.
func TestRedisOutageThroughHTTP(t *testing.T) {
	// Not parallel: it restarts its Redis on the port it had, which a test beside it could take.
	srv := redistest.Start(t)
	replica := fleet(t, 1, budgetKey("b-secret", "b", `{"requests_per_minute":6000}`)+","+keyEntry("free-secret", "free", "*"),
		"SLUICE_REDIS_URL="+srv.URL, "SLUICE_REDIS_FAILURE=closed")[0]
	if status, _, _ := call(t, replica, "/analyze", fleetBody, "X-API-Key", "b-secret"); status != http.StatusOK {
		t.Fatalf("with Redis: %d", status)
	}
	srv.Stop()
	status, h, code := call(t, replica, "/analyze", fleetBody, "X-API-Key", "b-secret")
	if status != http.StatusTooManyRequests || code != "rate_limited" || h.Get("Retry-After") != "1" {
		t.Fatalf("Redis stopped, mode closed: %d %q Retry-After %q; want 429 rate_limited, 1", status, code, h.Get("Retry-After"))
	}
	if n := strings.Count(replica.logs.String(), "Redis is out of reach"); n != 1 {
		t.Errorf("%d warnings of the outage in the log; want 1", n)
	}
	if status, _, _ := call(t, replica, "/analyze", fleetBody, "X-API-Key", "free-secret"); status != http.StatusOK {
		t.Errorf("a caller without a budget, Redis stopped: %d", status)
	}
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, _ := call(t, replica, "/analyze", fleetBody, "X-API-Key", "b-secret")
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Redis back for 10 s, still %d", status)
		}
		time.Sleep(20 * time.Millisecond) // the next try; one a second reaches Redis
	}
}

// TestFleetBench is the 20 s version behind docs/BENCHMARKS.md (make fleet-bench): 100
// requests a second and 1,500 tokens a second offered four times over, with Redis and without
// it (each replica its own budget). It runs only when SLUICE_FLEET_BENCH_S is set.
func TestFleetBench(t *testing.T) {
	// Not parallel: a benchmark.
	secs := os.Getenv("SLUICE_FLEET_BENCH_S")
	if secs == "" {
		t.Skip("the fleet benchmark runs with SLUICE_FLEET_BENCH_S set (make fleet-bench)")
	}
	var s float64
	if _, err := fmt.Sscan(secs, &s); err != nil || s <= 0 {
		t.Fatalf("SLUICE_FLEET_BENCH_S=%q: want seconds", secs)
	}
	d := time.Duration(s * float64(time.Second))
	srv := redistest.Start(t)
	requests := fleetCase{name: "req", allowance: `{"requests_per_minute":6000,"request_burst":100}`, perSecond: 100, burst: 100}
	tokens := fleetCase{name: "tok", allowance: `{"tokens_per_minute":90000,"token_burst":1500}`, perSecond: 1500, burst: 1500, tokens: true}
	keys := budgetKey(requests.name+"-secret", requests.name, requests.allowance) + "," + budgetKey(tokens.name+"-secret", tokens.name, tokens.allowance)
	for _, setup := range []struct {
		name string
		env  []string
	}{{"redis", []string{"SLUICE_REDIS_URL=" + srv.URL, "SLUICE_FLEET_REPLICAS=3"}}, {"local", nil}} {
		replicas := fleet(t, 3, keys, setup.env...)
		for _, c := range []fleetCase{requests, tokens} {
			rate := 4 * c.perSecond
			if c.tokens {
				perRequest := float64(tokensPerRequest(t, replicas[0], "/analyze")) // served by the requests run
				rate = math.Round(4 * c.perSecond / perRequest)
			}
			ratio, res, used, allowed := fleetRatio(t, replicas, c, "/analyze", rate, d)
			t.Logf("| %s | %s | %.0f/s | %.1f | %d | %v | %d | %.0f | %.0f | %.2fx |", setup.name, c.name, rate, res.window.Seconds(),
				res.total(res.served), res.served, res.total(res.refused), used, allowed, ratio)
		}
	}
	// Redis stopped for the middle third of the run, then back (empty), in each failure mode.
	third := max(int(s/3), 1)
	for _, mode := range []string{"local", "closed"} {
		replicas := fleet(t, 3, keys, "SLUICE_REDIS_URL="+srv.URL, "SLUICE_FLEET_REPLICAS=3", "SLUICE_REDIS_FAILURE="+mode)
		res := fleetOffer{replicas: replicas, key: "req-secret", path: "/analyze", body: fleetBody, rate: 4 * requests.perSecond,
			duration: time.Duration(3*third) * time.Second}.run(t, func(second int) {
			switch second {
			case third:
				srv.Stop()
			case 2 * third:
				srv.Restart()
			}
		})
		if len(res.other) > 0 {
			t.Fatalf("answers other than 200 and 429: %v", res.other)
		}
		span := time.Duration(third) * time.Second
		t.Logf("| %s | %d | %d | %d | %d |", mode, res.servedIn(0, span), res.servedIn(span, 2*span), res.servedIn(2*span, 4*span), res.total(res.refused))
	}
}

// The shared budgets' settings are checked when SLUICE_REDIS_URL is set, each problem under
// its own variable; without the URL the others are not read.
func TestFleetSettingsAreChecked(t *testing.T) {
	t.Parallel()
	_, err := LoadConfig([]string{"SLUICE_REDIS_URL=http://cache:6379", "SLUICE_REDIS_FAILURE=open", "SLUICE_FLEET_REPLICAS=0",
		"SLUICE_REDIS_TIMEOUT_MS=500", "SLUICE_REDIS_LEASE_MS=1000"})
	for _, name := range []string{"SLUICE_REDIS_URL", "SLUICE_REDIS_FAILURE", "SLUICE_FLEET_REPLICAS", "SLUICE_REDIS_LEASE_MS"} {
		if err == nil || !strings.Contains(err.Error(), name+" ") {
			t.Errorf("%v does not name %s", err, name)
		}
	}
	if _, err := LoadConfig([]string{"SLUICE_REDIS_FAILURE=closed"}); err != nil {
		t.Errorf("a failure mode without Redis: %v", err)
	}
}
