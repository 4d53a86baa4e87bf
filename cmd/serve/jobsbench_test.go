package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// benchNote is the i-th note of the job benchmark: distinct text per note, so that no two
// requests in flight are coalesced.
func benchNote(i int) string {
	return fmt.Sprintf("Patient Maria Garcia, MRN %07d, was seen on 03/04/2021 in Springfield by Dr. John Smith; "+
		"call her at 555-%03d-%04d about the results of visit %d.", i, i%1000, i%10000, i)
}

// postNotes posts notes first..first+n-1 to /pii/deidentify from clients concurrent clients and
// returns the notes per second; any answer but 200 fails.
func postNotes(t *testing.T, url string, first, n, clients int) float64 {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	next := make(chan int)
	var wg sync.WaitGroup
	var failed sync.Once
	var failure error
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := deidentifyOnce(client, url, benchNote(i)); err != nil {
					failed.Do(func() { failure = err })
				}
			}
		}()
	}
	start := time.Now()
	for i := first; i < first+n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if failure != nil {
		t.Fatal(failure)
	}
	return float64(n) / time.Since(start).Seconds()
}

func deidentifyOnce(client *http.Client, url, note string) error {
	body, _ := json.Marshal(map[string]any{"text": note, "method": "replace"})
	resp, err := client.Post(url+"/pii/deidentify", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d: %.300s", resp.StatusCode, answer)
	}
	return nil
}

// interactive offers rate requests per second (open loop, one goroutine per request) for d and
// returns their latencies, sorted.
func interactive(t *testing.T, url string, rate float64, d time.Duration, first int) []time.Duration {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	var failure error
	every := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for i := 0; time.Since(start) < d; i++ {
		at := start.Add(time.Duration(i) * every)
		time.Sleep(time.Until(at)) // pacing the offered load, not waiting for a state
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			err := deidentifyOnce(client, url, benchNote(first+i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil && failure == nil {
				failure = err
			}
			lat = append(lat, time.Since(t0))
		}()
	}
	wg.Wait()
	if failure != nil {
		t.Fatal(failure)
	}
	slices.Sort(lat)
	return lat
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// runJob submits notes first..first+n-1 as one job and returns its id and the moment it was
// accepted.
func runJob(t *testing.T, c openMedJobs, first, n int) (string, time.Time) {
	t.Helper()
	docs := make([]omDocument, n)
	for i := range docs {
		docs[i] = omDocument{ID: "n" + strconv.Itoa(first+i), Text: benchNote(first + i)}
	}
	start := time.Now()
	created, _, err := c.CreateJob(omCreateJob{Documents: docs, Method: "replace"})
	if err != nil {
		t.Fatal(err)
	}
	return created.ID, start
}

// servedBatcher is the process's batcher submissions served so far, every queue and class.
func servedBatcher(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "sluice_batcher_requests_total{") && strings.Contains(l, `outcome="served"`) {
			f, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			n += f
		}
	}
	return int(n)
}

// TestJobsBench measures a job of SLUICE_JOBS_BENCH_DOCS notes (make jobs-bench): alone against
// /pii/deidentify's served capacity, beside an interactive load at half that capacity, and
// across a SIGKILL at half way. It runs only when the variable is set.
func TestJobsBench(t *testing.T) {
	// Not parallel: a benchmark, which pins servers with serverCPUs.
	n, _ := strconv.Atoi(os.Getenv("SLUICE_JOBS_BENCH_DOCS"))
	if n <= 0 {
		t.Skip("the job benchmark runs with SLUICE_JOBS_BENCH_DOCS set (make jobs-bench)")
	}
	clients := 32
	env := []string{"SLUICE_GENERATE_MODEL=none", "SLUICE_INTRA_OP_THREADS=0",
		"SLUICE_IGNORE_VARS=SLUICE_JOBS_BENCH_DOCS,SLUICE_JOBS_BENCH_PART,SLUICE_JOBS_BENCH_SERVER_CPUS,SLUICE_JOBS_BENCH_ROUNDS", "SLUICE_JOBS_KEY_FILE=" + jobKey(t), "SLUICE_JOBS_MAX_DOCUMENTS=" + strconv.Itoa(max(n, 10000)),
		"SLUICE_MAX_BODY_BYTES=" + strconv.Itoa(max(n*256, 1<<20))} // a job is one body; the default 1 MiB holds about 7,000 of these notes
	if cpus := os.Getenv("SLUICE_JOBS_BENCH_SERVER_CPUS"); cpus != "" {
		serverCPUs = cpus
		defer func() { serverCPUs = "" }()
		env = append(env, "SLUICE_INTRA_OP_THREADS=1")
	}
	if w := os.Getenv("SLUICE_JOBS_WORKERS"); w != "" {
		env = append(env, "SLUICE_JOBS_WORKERS="+w)
	}
	if os.Getenv("SLUICE_JOBS_BENCH_PART") != "c" {
		jobsBenchAlone(t, env, n, clients)
	}
	jobsBenchKill(t, env, n)
}

// jobsBenchAlone is parts (a) and (b): the job alone against the route's capacity, then beside
// an interactive load at half that capacity.
func jobsBenchAlone(t *testing.T, env []string, n, clients int) {
	p := startProcess(t, env...)
	c := openMedJobs{base: p.url}
	postNotes(t, p.url, 1_000_000, 200, clients) // warm-up
	// (a) Alternating: capacity, job, capacity, job, ... (SLUICE_JOBS_BENCH_ROUNDS, default 2).
	rounds, _ := strconv.Atoi(os.Getenv("SLUICE_JOBS_BENCH_ROUNDS"))
	rounds = max(rounds, 2)
	var caps, rates, ratios []float64
	for round := range rounds {
		caps = append(caps, postNotes(t, p.url, 2_000_000+round*n, n, clients))
		id, start := runJob(t, c, 3_000_000+round*n, n)
		waitJob(t, c, id, 30*time.Minute, func(j omJob) bool { return j.Status == "done" })
		rates = append(rates, float64(n)/time.Since(start).Seconds())
		t.Logf("(a) round %d: /pii/deidentify served %.1f notes/s with %d clients; the job %.1f documents/s (ratio %.2f)",
			round+1, caps[round], clients, rates[round], rates[round]/caps[round])
		ratios = append(ratios, rates[round]/caps[round])
	}
	slices.Sort(ratios)
	median := (ratios[(rounds-1)/2] + ratios[rounds/2]) / 2
	t.Logf("(a) median ratio of %d rounds: %.2f (from %.2f to %.2f)", rounds, median, ratios[0], ratios[rounds-1])
	capacity := (caps[0] + caps[1]) / 2
	// (b) Interactive at half capacity alone, then beside a job, alternating, rounds times; each
	// beside-run is compared with the mean of the alone-runs on either side of it.
	d := time.Duration(float64(n)/max(rates[0], rates[1])*float64(time.Second)) * 3 / 4
	alone := [][]time.Duration{interactive(t, p.url, capacity/2, d, 4_000_000)}
	for round := range rounds {
		id, start := runJob(t, c, 5_000_000+round*n, n)
		beside := interactive(t, p.url, capacity/2, d, 6_000_000+round*n*2)
		waitJob(t, c, id, 30*time.Minute, func(j omJob) bool { return j.Status == "done" })
		slowed := float64(n) / time.Since(start).Seconds()
		alone = append(alone, interactive(t, p.url, capacity/2, d, 7_000_000+round*n*2))
		before, after := alone[round], alone[round+1]
		base := func(q float64) float64 { return float64(quantile(before, q)+quantile(after, q)) / 2 }
		t.Logf("(b) round %d, interactive %.1f req/s for %s: alone p50 %s p99 %s, then %s %s; beside the job p50 %s p99 %s: "+
			"p50 ratio %.2f, p99 ratio %.2f; the job %.1f documents/s beside it (alone %.1f)", round+1, capacity/2, d.Round(time.Second),
			quantile(before, .5), quantile(before, .99), quantile(after, .5), quantile(after, .99), quantile(beside, .5), quantile(beside, .99),
			float64(quantile(beside, .5))/base(.5), float64(quantile(beside, .99))/base(.99), slowed, (rates[0]+rates[1])/2)
	}
	p.cmd.Process.Kill()
	<-p.exited
}

// jobsBenchKill is part (c): SIGKILL at half way, a restart on the same data directory, and
// every result read back.
func jobsBenchKill(t *testing.T, env []string, n int) {

	// (c) SIGKILL at half way, restart on the same data directory.
	dir := t.TempDir()
	kenv := append(env, "SLUICE_DATA_DIR="+dir, "SLUICE_REPLICA_ID=bench")
	k := startProcess(t, kenv...)
	c := openMedJobs{base: k.url}
	id, start := runJob(t, c, 8_000_000, n)
	mid := waitJob(t, c, id, 30*time.Minute, func(j omJob) bool { return j.ProcessedCount >= n/2 })
	if err := k.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-k.exited
	restart := time.Now()
	t.Logf("(c) before the kill: %d documents in %s", mid.ProcessedCount, restart.Sub(start).Round(time.Millisecond))
	k = startProcess(t, kenv...)
	ready := time.Since(restart)
	c = openMedJobs{base: k.url}
	first := waitJob(t, c, id, time.Minute, func(omJob) bool { return true })
	resumed := waitJob(t, c, id, 30*time.Minute, func(j omJob) bool { return j.ProcessedCount > first.ProcessedCount })
	resume := time.Since(restart)
	done := waitJob(t, c, id, 30*time.Minute, func(j omJob) bool { return j.Status == "done" })
	finish := time.Since(restart)
	served := servedBatcher(t, k.url)
	res := jobResults(t, k.url, id)
	seen := map[string]int{}
	for _, r := range res {
		seen[r.DocumentID]++
	}
	twiceInResults, missing := 0, 0
	for i := range n {
		switch seen["n"+strconv.Itoa(8_000_000+i)] {
		case 0:
			missing++
		case 1:
		default:
			twiceInResults++
		}
	}
	t.Logf("(c) killed at %d of %d (the record read before the kill); restarted: ready %s, progressing again %s (at %d), done %s (processed %d, failed %d)",
		mid.ProcessedCount, n, ready.Round(time.Millisecond), resume.Round(time.Millisecond), resumed.ProcessedCount, finish.Round(time.Millisecond),
		done.ProcessedCount, done.FailedCount)
	t.Logf("(c) the restarted process ran %d documents; %d to %d were not counted when it started (the reads before the kill and after the restart): "+
		"work redone is what was in flight at the kill; results %d, missing %d, more than once %d",
		served, n-first.ProcessedCount, n-mid.ProcessedCount, len(res), missing, twiceInResults)
	if missing != 0 || twiceInResults != 0 || len(res) != n {
		t.Fatalf("results: %d for %d documents, %d missing, %d more than once", len(res), n, missing, twiceInResults)
	}
}
