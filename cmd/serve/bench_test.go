package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/models"
)

// benchText is a typical short note: one window, ~40 tokens.
const benchText = "Pt Maria Gonzalez, 58F, DOB 03/14/1962, seen 2024-01-05 at Mercy General for chest pain; " +
	"call (415) 555-0132. Started metoprolol 25 mg twice daily."

// BenchmarkEngineVsServed measures, in one run, the raw engine (padded batches straight into
// ONNX Runtime) and the same model served over HTTP with batching and with batch size 1, at
// the same concurrency. Compare sequences/s across the sub-benchmarks; docs/BENCHMARKS.md
// records a run and the command.
func BenchmarkEngineVsServed(b *testing.B) {
	m, err := models.Load(os.DirFS(filepath.Join("..", "..", "models")), "pii")
	if err != nil {
		b.Fatal(err)
	}
	ids := m.Tokenizer.Encode(benchText, true).IDs
	for _, batch := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("engine/batch=%d", batch), func(b *testing.B) {
			benchEngine(b, m, ids, batch)
		})
	}
	const concurrency = 64
	for _, batch := range []int{1, 32} {
		for _, spin := range []bool{false, true} {
			b.Run(fmt.Sprintf("http/batch=%d/clients=%d/spinning=%v", batch, concurrency, spin), func(b *testing.B) {
				benchServed(b, concurrency, "SLUICE_BATCH_MAX_SIZE="+fmt.Sprint(batch), "SLUICE_ORT_SPINNING="+fmt.Sprint(spin))
			})
		}
	}
}

func benchEngine(b *testing.B, m *models.Model, ids []int64, batch int) {
	rt, err := engine.NewRuntime(engine.RuntimeOptions{Device: benchDevice(), InterOpThreads: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	sess, err := rt.NewSession("pii", m.ONNX)
	if err != nil {
		b.Fatal(err)
	}
	in := engine.EncoderBatch{Batch: batch, SeqLen: len(ids)}
	for i := 0; i < batch; i++ {
		in.IDs = append(in.IDs, ids...)
		for range ids {
			in.Mask = append(in.Mask, 1)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := sess.RunEncoder(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "seq/s")
}

// benchDevice is the device of the benchmarks: SLUICE_BENCH_DEVICE (cpu or cuda;
// scripts/gpu-check.sh sets it), cpu by default.
func benchDevice() engine.Device {
	if d, err := engine.ParseDevice(os.Getenv("SLUICE_BENCH_DEVICE")); err == nil {
		return d
	}
	return engine.DeviceCPU
}

func benchServed(b *testing.B, concurrency int, env ...string) {
	srv := startServer(b, append([]string{"SLUICE_BATCH_MAX_WAIT_MS=2", "SLUICE_LOG_LEVEL=error",
		"SLUICE_INTRA_OP_THREADS=0", "SLUICE_DEVICE=" + string(benchDevice())}, env...)...)
	body, _ := json.Marshal(map[string]any{"text": benchText})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	var wg sync.WaitGroup
	jobs := make(chan struct{})
	errs := make(chan error, concurrency)
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				resp, err := client.Post(srv.url+"/pii/extract", "application/json", bytes.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		select {
		case jobs <- struct{}{}:
		case err := <-errs:
			b.Fatal(err)
		}
	}
	close(jobs)
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seq/s")
}

// BenchmarkCoalescedBurst is 64 clients sending the same note at once, with coalescing off
// and on: identical requests in flight share one model call when it is on.
func BenchmarkCoalescedBurst(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("coalesce=%v", on), func(b *testing.B) {
			benchServed(b, 64, "SLUICE_BATCH_MAX_SIZE=32", "SLUICE_COALESCE="+fmt.Sprint(on))
		})
	}
}
