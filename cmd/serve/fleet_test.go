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
	"testing"
	"time"

	"github.com/sluice-serving/sluice/fleetbudget/redistest"
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
}

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
	res := fleetResult{served: make([]int, len(o.replicas)), refused: make([]int, len(o.replicas)), other: map[int]int{}}
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

// fleet starts n replicas with the same key file and env.
func fleet(t testing.TB, n int, keys string, env ...string) []*testServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte("["+keys+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	env = append([]string{"SLUICE_GENERATE_MODEL=none", "SLUICE_API_KEYS_FILE=" + path, "SLUICE_LOG_REFUSALS_PER_S=1"}, env...)
	out := make([]*testServer, n)
	for i := range out {
		out[i] = startServer(t, env...)
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

// fleetRatio offers c's tenant four times its budget round-robin over replicas for d and says
// what was served against what the budget allows over the window (its burst and its rate), in
// the budget's unit.
func fleetRatio(t testing.TB, replicas []*testServer, c fleetCase, requestRate float64, d time.Duration) (ratio float64, res fleetResult, used, allowed float64) {
	t.Helper()
	res = fleetOffer{replicas: replicas, key: c.name + "-secret", path: "/analyze", body: fleetBody, rate: requestRate, duration: d}.run(t, nil)
	if len(res.other) > 0 {
		t.Fatalf("answers other than 200 and 429: %v", res.other)
	}
	used = float64(res.total(res.served))
	if c.tokens {
		used *= float64(tokensPerRequest(t, replicas[0], "/analyze"))
	}
	allowed = c.burst + c.perSecond*res.window.Seconds()
	return used / allowed, res, used, allowed
}

// TestFleetSharesOneBudget: three Sluice replicas on one Redis (SLUICE_REDIS_URL), a tenant
// budgeted at 20 requests a second offered 80 a second round-robin for 3 s: what the fleet
// serves is within 1.1x of what the budget allows over the window (each replica on its own
// would serve about 3x); the same for a budget of 140 tokens a second offered 560. Every answer
// is counted.
func TestFleetSharesOneBudget(t *testing.T) {
	srv := redistest.Start(t)
	requests := fleetCase{name: "req", allowance: `{"requests_per_minute":1200,"request_burst":10}`, perSecond: 20, burst: 10}
	// fleetBody uses 7 tokens: 80 requests a second offer 560 tokens a second, 4x 140.
	tokens := fleetCase{name: "tok", allowance: `{"tokens_per_minute":8400,"token_burst":70}`, perSecond: 140, burst: 70, tokens: true}
	replicas := fleet(t, 3, budgetKey(requests.name+"-secret", requests.name, requests.allowance)+","+
		budgetKey(tokens.name+"-secret", tokens.name, tokens.allowance),
		"SLUICE_REDIS_URL="+srv.URL, "SLUICE_FLEET_REPLICAS=3", "SLUICE_REDIS_TIMEOUT_MS=1000", "SLUICE_REDIS_LEASE_MS=3000")
	for _, c := range []fleetCase{requests, tokens} {
		t.Run(c.name, func(t *testing.T) {
			ratio, res, used, allowed := fleetRatio(t, replicas, c, 80, 3*time.Second)
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
		})
	}
}

// TestRedisOutageThroughHTTP: with SLUICE_REDIS_FAILURE=closed, a budgeted request while Redis
// is stopped is answered 429 rate_limited, reason unavailable, Retry-After 1, and served again
// once Redis is back; a caller without a budget is served throughout.
func TestRedisOutageThroughHTTP(t *testing.T) {
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
			ratio, res, used, allowed := fleetRatio(t, replicas, c, rate, d)
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
