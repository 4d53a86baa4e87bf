package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-serving/sluice/embed"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/openmedpb"
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
	drive(b, srv.url+"/pii/extract", body, concurrency)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seq/s")
}

// drive posts body to url b.N times from concurrency clients; any answer but 200 fails.
func drive(b *testing.B, url string, body []byte, concurrency int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	driveCalls(b, concurrency, func() error {
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// driveCalls makes call b.N times from concurrency clients; the first failure fails b.
func driveCalls(b *testing.B, concurrency int, call func() error) {
	var wg sync.WaitGroup
	jobs := make(chan struct{})
	errs := make(chan error, concurrency)
	for range concurrency {
		wg.Go(func() {
			for range jobs {
				if err := call(); err != nil {
					errs <- err
					return
				}
			}
		})
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

// BenchmarkAuditOverhead is served /pii/deidentify with the durable audit on (each request's
// record stored in the embedded JetStream before it is answered) and off, at 32 clients (the
// batch size) and 64 (twice it: the server saturated), alternated in one run: two server
// processes (the binary), one driven at a time, the order swapped every round, so that a
// neighbour's load falls on both alike. It reports each side's throughput and the CPU time its
// process spent per request (from /proc), which is what bounds the throughput of a server
// that has its cores to itself. docs/BENCHMARKS.md records a run and the command.
func BenchmarkAuditOverhead(b *testing.B) {
	procs := map[bool]*process{}
	for _, on := range []bool{false, true} {
		procs[on] = startProcess(b, "SLUICE_BATCH_MAX_WAIT_MS=2", "SLUICE_INTRA_OP_THREADS=0",
			"SLUICE_DEVICE="+string(benchDevice()), "SLUICE_GENERATE_MODEL=none", "SLUICE_AUDIT="+fmt.Sprint(on))
	}
	body, _ := json.Marshal(map[string]any{"text": benchText})
	for _, clients := range []int{32, 64} {
		for round := range 8 {
			for i := range 2 {
				on := (round+i)%2 == 1 // off first, then on first, ...
				b.Run(fmt.Sprintf("clients=%d/round=%d/audit=%v", clients, round+1, on), func(b *testing.B) {
					p := procs[on]
					before := cpuTime(b, p.cmd.Process.Pid)
					drive(b, p.url+"/pii/deidentify", body, clients)
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
					b.ReportMetric(float64((cpuTime(b, p.cmd.Process.Pid)-before).Microseconds())/float64(b.N), "cpu-us/req")
				})
			}
		}
	}
	resp, err := http.Get(procs[true].url + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	var sum, count float64
	for _, line := range strings.Split(string(metrics), "\n") {
		if v, ok := strings.CutPrefix(line, "sluice_audit_append_seconds_sum "); ok {
			sum, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(line, "sluice_audit_append_seconds_count "); ok {
			count, _ = strconv.ParseFloat(v, 64)
		}
	}
	b.Logf("audit on: %.0f records, mean append (publish to acknowledgement) %.2f ms", count, 1000*sum/max(count, 1))
}

// cpuTime is the user and system time a process has spent, from /proc (clock ticks of 10 ms).
func cpuTime(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// BenchmarkGRPCvsHTTP is /pii/extract served over HTTP and the same request as OpenMed's gRPC
// Extract (run through the HTTP route in the process) on one server, alternated round by
// round, at 32 clients: what the gRPC face costs beside the route. Clients and server share
// the process. docs/BENCHMARKS.md records a run and the command.
func BenchmarkGRPCvsHTTP(b *testing.B) {
	// The ready line names the gRPC address, but at this log level it is not written: a port
	// taken and given back is the address instead.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := startServer(b, "SLUICE_BATCH_MAX_WAIT_MS=2", "SLUICE_LOG_LEVEL=error", "SLUICE_INTRA_OP_THREADS=0",
		"SLUICE_DEVICE="+string(benchDevice()), "SLUICE_GENERATE_MODEL=none", "SLUICE_GRPC_ADDR="+addr)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	om := openmedpb.NewOpenMedServiceClient(conn)
	body, _ := json.Marshal(map[string]any{"text": benchText})
	const clients = 32
	for round := range 3 {
		b.Run(fmt.Sprintf("round=%d/http", round+1), func(b *testing.B) {
			drive(b, srv.url+"/pii/extract", body, clients)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
		b.Run(fmt.Sprintf("round=%d/grpc", round+1), func(b *testing.B) {
			driveCalls(b, clients, func() error {
				_, err := om.Extract(context.Background(), &openmedpb.ExtractRequest{Text: benchText})
				return err
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkEmbeddingsServedVsEngine (issue 58, 4): the shipped embed-mini on the short note,
// the raw engine's pass at batch 32 (pooling included) against /v1/embeddings served to 64
// clients of one text each, batched to 32, ONNX Runtime's default threads on both sides.
func BenchmarkEmbeddingsServedVsEngine(b *testing.B) {
	m, err := models.Load(models.Embedded(), "embed-mini")
	if err != nil {
		b.Fatal(err)
	}
	ids := m.Tokenizer.Encode(benchText, true).IDs
	b.Run("engine/batch=32", func(b *testing.B) {
		rt, err := engine.NewRuntime(engine.RuntimeOptions{Device: benchDevice(), InterOpThreads: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer rt.Close()
		sess, err := rt.NewSession(m.Name, m.ONNX)
		if err != nil {
			b.Fatal(err)
		}
		const batch = 32
		in := engine.EncoderBatch{Batch: batch, SeqLen: len(ids)}
		for range batch {
			in.IDs = append(in.IDs, ids...)
			for range ids {
				in.Mask = append(in.Mask, 1)
			}
		}
		b.ResetTimer()
		for b.Loop() {
			out, err := sess.RunEncoder(context.Background(), in)
			if err != nil {
				b.Fatal(err)
			}
			for r := range batch {
				per := out.SeqLen * out.Labels
				embed.Normalize(embed.Pool("mean", out.Data[r*per:(r+1)*per], len(ids), out.Labels))
			}
		}
		b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "seq/s")
	})
	b.Run("http/batch=32/clients=64", func(b *testing.B) {
		srv := startServer(b, "SLUICE_BATCH_MAX_WAIT_MS=2", "SLUICE_LOG_LEVEL=error", "SLUICE_INTRA_OP_THREADS=0",
			"SLUICE_BATCH_MAX_SIZE=32", "SLUICE_GENERATE_MODEL=none", "SLUICE_DEVICE="+string(benchDevice()))
		body, _ := json.Marshal(map[string]any{"model": "embed-mini", "input": benchText, "encoding_format": "base64"})
		drive(b, srv.url+"/v1/embeddings", body, 64)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seq/s")
	})
}
