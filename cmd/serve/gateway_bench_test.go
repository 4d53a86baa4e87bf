package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkGatewayOverhead measures, in one run, chat streams straight to the model
// (/v1/chat/completions) and through the privacy gateway (/gateway/v1/chat/completions: the
// PII model over every message, redaction, restoration of the stream) at 1 and 16 concurrent
// streams of 64 tokens (ignore_eos) for a note with identifiers: time to first token and
// tokens/s. docs/BENCHMARKS.md records a run and the command.
func BenchmarkGatewayOverhead(b *testing.B) {
	srv := startServer(b, "SLUICE_LOG_LEVEL=error")
	body, _ := json.Marshal(map[string]any{"model": "tiny-lm", "max_tokens": 64, "ignore_eos": true, "temperature": 0, "stream": true,
		"messages": []map[string]string{{"role": "user", "content": benchText}}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	for _, path := range []string{"/v1/chat/completions", "/gateway/v1/chat/completions"} {
		for _, streams := range []int{1, 16} {
			b.Run(fmt.Sprintf("path=%s/streams=%d", strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/chat/completions"), streams), func(b *testing.B) {
				var mu sync.Mutex
				var ttft time.Duration
				tokens := 0
				jobs := make(chan struct{})
				var wg sync.WaitGroup
				for range streams {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range jobs {
							first, n := streamOnce(b, client, srv.url+path, body)
							mu.Lock()
							ttft += first
							tokens += n
							mu.Unlock()
						}
					}()
				}
				b.ResetTimer()
				for range b.N {
					jobs <- struct{}{}
				}
				close(jobs)
				wg.Wait()
				b.ReportMetric(float64(ttft.Microseconds())/1000/float64(b.N), "ttft-ms")
				b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// streamOnce reads one chat stream to its end: the time to its first content, and how many
// content chunks came.
func streamOnce(b *testing.B, client *http.Client, url string, body []byte) (time.Duration, int) {
	start := time.Now()
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Error(err)
		return 0, 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Errorf("status %d", resp.StatusCode)
		return 0, 0
	}
	var first time.Duration
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: {") && strings.Contains(line, `"content"`) {
			if n == 0 {
				first = time.Since(start)
			}
			n++
		}
	}
	return first, n
}
