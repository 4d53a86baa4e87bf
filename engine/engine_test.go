package engine

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// requireLibrary skips when no ONNX Runtime library can be found at all (a checkout where
// scripts/fetch-onnxruntime.sh has not run); a library that is found but fails to load fails.
func requireLibrary(t testing.TB) {
	t.Helper()
	if LibraryPath() == librarySoname {
		t.Skip("ONNX Runtime library not found: run scripts/fetch-onnxruntime.sh or set " + LibraryEnv)
	}
}

func newTestRuntime(t testing.TB, opts RuntimeOptions) *Runtime {
	t.Helper()
	requireLibrary(t)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r, err := NewRuntime(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

func newTestSession(t testing.TB, r *Runtime, model string) *Session {
	t.Helper()
	s, err := r.NewSession(model, readTestdata(t, model))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// randomBatch fills a batch with ids from the tiny vocabulary; lengths gives each row's real
// length (the rest is padding with arbitrary ids), or nil for no padding.
func randomBatch(rng *rand.Rand, batch, seqLen int, lengths []int) EncoderBatch {
	b := EncoderBatch{Batch: batch, SeqLen: seqLen, IDs: make([]int64, batch*seqLen), Mask: make([]int64, batch*seqLen)}
	for row := 0; row < batch; row++ {
		n := seqLen
		if lengths != nil {
			n = lengths[row]
		}
		for t := 0; t < seqLen; t++ {
			b.IDs[row*seqLen+t] = int64(rng.IntN(tinyVocab))
			if t < n {
				b.Mask[row*seqLen+t] = 1
			}
		}
	}
	return b
}

func TestParseDevice(t *testing.T) {
	for in, want := range map[string]Device{"cpu": DeviceCPU, " CUDA ": DeviceCUDA, "Auto": DeviceAuto} {
		got, err := ParseDevice(in)
		if err != nil || got != want {
			t.Errorf("ParseDevice(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "gpu", "cuda:0"} {
		if _, err := ParseDevice(in); err == nil {
			t.Errorf("ParseDevice(%q) succeeded", in)
		}
	}
}

func TestLibraryPath(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	lib := filepath.Join(root, "third_party", "onnxruntime", librarySoname)
	for _, dir := range []string{sub, filepath.Dir(lib)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(LibraryEnv, "")
	t.Chdir(sub)

	if got := LibraryPath(); got != librarySoname {
		t.Errorf("without the library file: got %q, want the soname", got)
	}
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := LibraryPath(); got != lib {
		t.Errorf("from a subdirectory: got %q, want %q", got, lib)
	}
	t.Setenv(LibraryEnv, "/opt/ort/libonnxruntime.so.1")
	if got := LibraryPath(); got != "/opt/ort/libonnxruntime.so.1" {
		t.Errorf("with %s set: got %q", LibraryEnv, got)
	}
}

func TestSessionReportsModelInputsAndOutputs(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	for model, wantInputs := range map[string][]string{
		"tiny_tokclass.onnx":    {"input_ids", "attention_mask"},
		"tiny_tokclass_tt.onnx": {"input_ids", "attention_mask", "token_type_ids"},
	} {
		s := newTestSession(t, r, model)
		if got := names(s.Inputs()); strings.Join(got, ",") != strings.Join(wantInputs, ",") {
			t.Errorf("%s: inputs %v, want %v", model, got, wantInputs)
		}
		for _, in := range s.Inputs() {
			if in.Type != ElementInt64 || len(in.Shape) != 2 || in.Shape[0] != -1 || in.Shape[1] != -1 {
				t.Errorf("%s: input %+v, want dynamic int64 [batch, sequence]", model, in)
			}
		}
		out := s.Outputs()
		if len(out) != 1 || out[0].Name != "logits" || out[0].Type != ElementFloat32 ||
			len(out[0].Shape) != 3 || out[0].Shape[2] != tinyLabels {
			t.Errorf("%s: outputs %+v, want logits float32 [-1 -1 %d]", model, out, tinyLabels)
		}
		s.Inputs()[0].Shape[0] = 99
		if s.Inputs()[0].Shape[0] != -1 {
			t.Errorf("%s: Inputs exposes the session's own slices", model)
		}
	}
}

func TestRunEncoderMatchesHandComputedLogits(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{IntraOpThreads: 1})
	b := EncoderBatch{
		IDs:   []int64{1, 5, 9, 15, 0, 3, 3, 12},
		Mask:  []int64{1, 1, 1, 1, 1, 1, 1, 0},
		Batch: 2, SeqLen: 4,
	}
	for model, withTypes := range map[string]bool{"tiny_tokclass.onnx": false, "tiny_tokclass_tt.onnx": true} {
		t.Run(model, func(t *testing.T) {
			got, err := newTestSession(t, r, model).RunEncoder(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			assertLogits(t, got, b, withTypes)
		})
	}
}

// TestRunEncoderFeedsEachLayout: models that take int32 inputs, position_ids or a global
// attention mask, or give float16 logits, are fed and read as they declare, and give the
// hand-computed logits (float16 to its precision; the global mask all zeros, so the base
// model's).
func TestRunEncoderFeedsEachLayout(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{IntraOpThreads: 1})
	b := EncoderBatch{
		IDs:   []int64{1, 5, 9, 15, 0, 3, 3, 12},
		Mask:  []int64{1, 1, 1, 1, 1, 1, 1, 0},
		Batch: 2, SeqLen: 4,
	}
	for _, tc := range []struct {
		model string
		v     tinyVariant
		tol   float64
	}{
		{"tiny_int32.onnx", tinyVariant{types: true}, 1e-5},
		{"tiny_positions.onnx", tinyVariant{positions: true}, 1e-5},
		{"tiny_fp16.onnx", tinyVariant{}, 2e-3},
		{"tiny_global.onnx", tinyVariant{}, 1e-5},
	} {
		t.Run(tc.model, func(t *testing.T) {
			got, err := newTestSession(t, r, tc.model).RunEncoder(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			assertVariantLogits(t, got, b, tc.v, tc.tol)
		})
	}
}

func TestHalfToFloat32(t *testing.T) {
	for _, tc := range []struct {
		bits uint16
		want float32
	}{
		{0x3c00, 1}, {0xc000, -2}, {0x3555, 0.33325195}, {0x0001, 5.9604645e-08}, {0x7bff, 65504},
		{0x0000, 0}, {0x7c00, float32(math.Inf(1))},
	} {
		got := halfToFloat32([]byte{byte(tc.bits), byte(tc.bits >> 8)})[0]
		if got != tc.want {
			t.Errorf("half %#04x = %v, want %v", tc.bits, got, tc.want)
		}
	}
}

func TestRunEncoderBatchSizes(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	s := newTestSession(t, r, "tiny_tokclass_tt.onnx")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []struct{ batch, seqLen int }{{1, 1}, {1, 7}, {3, 5}, {8, 16}, {32, 9}} {
		b := randomBatch(rng, size.batch, size.seqLen, nil)
		got, err := s.RunEncoder(context.Background(), b)
		if err != nil {
			t.Fatalf("%d x %d: %v", size.batch, size.seqLen, err)
		}
		assertLogits(t, got, b, true)
	}
}

func TestPaddedBatchMatchesSingleRuns(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	s := newTestSession(t, r, "tiny_tokclass.onnx")
	ctx := context.Background()
	lengths := []int{2, 6, 1, 4}
	padded := randomBatch(rand.New(rand.NewPCG(3, 4)), len(lengths), 6, lengths)
	batched, err := s.RunEncoder(ctx, padded)
	if err != nil {
		t.Fatal(err)
	}
	for row, n := range lengths {
		start := row * padded.SeqLen
		single := EncoderBatch{IDs: padded.IDs[start : start+n], Mask: padded.Mask[start : start+n], Batch: 1, SeqLen: n}
		alone, err := s.RunEncoder(ctx, single)
		if err != nil {
			t.Fatal(err)
		}
		for pos := 0; pos < n; pos++ {
			for l, want := range alone.Row(0, pos) {
				// Bit-for-bit is too strict across different reduction lengths.
				if got := batched.Row(row, pos)[l]; abs32(got-want) > 1e-6 {
					t.Fatalf("row %d pos %d label %d: batched %v, alone %v", row, pos, l, got, want)
				}
			}
		}
	}
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

func TestConcurrentRunsOnOneSession(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{IntraOpThreads: 1})
	s := newTestSession(t, r, "tiny_tokclass_tt.onnx")
	const workers, runs = 8, 25
	batches := make([][]EncoderBatch, workers)
	for w := range batches {
		rng := rand.New(rand.NewPCG(uint64(w), 99))
		for i := 0; i < runs; i++ {
			batches[w] = append(batches[w], randomBatch(rng, 1+rng.IntN(4), 1+rng.IntN(12), nil))
		}
	}
	results := make([][]Logits, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, b := range batches[w] {
				got, err := s.RunEncoder(context.Background(), b)
				if err != nil {
					errs <- err
					return
				}
				results[w] = append(results[w], got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w := range batches {
		for i, b := range batches[w] {
			assertLogits(t, results[w][i], b, true)
		}
	}
}

func TestRunEncoderRejectsBadShapes(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	s := newTestSession(t, r, "tiny_tokclass.onnx")
	six := make([]int64, 6)
	for name, b := range map[string]EncoderBatch{
		"zero batch":       {IDs: nil, Mask: nil, Batch: 0, SeqLen: 3},
		"zero length":      {IDs: nil, Mask: nil, Batch: 2, SeqLen: 0},
		"negative":         {IDs: six, Mask: six, Batch: -2, SeqLen: -3},
		"short ids":        {IDs: six[:5], Mask: six, Batch: 2, SeqLen: 3},
		"long mask":        {IDs: six[:4], Mask: six, Batch: 2, SeqLen: 2},
		"sizes swapped up": {IDs: six, Mask: six, Batch: 3, SeqLen: 3},
	} {
		_, err := s.RunEncoder(context.Background(), b)
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: err = %v, want ErrInvalidInput", name, err)
		}
	}
}

func TestRunEncoderHidesTokenIDsInEngineErrors(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	s := newTestSession(t, r, "tiny_tokclass.onnx")
	const canary = 987654321
	_, err := s.RunEncoder(context.Background(), EncoderBatch{IDs: []int64{1, canary}, Mask: []int64{1, 1}, Batch: 1, SeqLen: 2})
	if err == nil {
		t.Fatal("an id outside the vocabulary ran")
	}
	if strings.Contains(err.Error(), "987654321") || strings.Contains(err.Error(), "87654") {
		t.Fatalf("error quotes the token id: %v", err)
	}
	if !strings.Contains(err.Error(), "Gather") {
		t.Errorf("error lost the failing operator: %v", err)
	}
}

func TestCancelledContextDoesNotRun(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	s := newTestSession(t, r, "tiny_tokclass.onnx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// The batch is malformed on purpose: had the session looked at it, the error would differ.
	_, err := s.RunEncoder(ctx, EncoderBatch{Batch: 1, SeqLen: 1})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("RunEncoder: err = %v, want context.Canceled", err)
	}
	_, err = s.Run(ctx, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run: err = %v, want context.Canceled", err)
	}
}

func TestNewSessionRejectsUnknownEncoderInput(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	model := readTestdata(t, "tiny_extra_input.onnx")
	_, err := r.NewSession("extra", model)
	if err == nil || !strings.Contains(err.Error(), `"extra_ids"`) {
		t.Fatalf("NewSession: err = %v, want one naming input extra_ids", err)
	}

	// A general session loads it, Run feeds it, and RunEncoder explains why it cannot.
	s, err := r.NewGeneralSession("extra", model)
	if err != nil {
		t.Fatal(err)
	}
	b := EncoderBatch{IDs: []int64{1, 2, 3}, Mask: []int64{1, 1, 1}, Batch: 1, SeqLen: 3}
	if _, err := s.RunEncoder(context.Background(), b); err == nil || !strings.Contains(err.Error(), "extra_ids") {
		t.Errorf("RunEncoder on a general session: err = %v", err)
	}
	shape := []int64{1, 3}
	out, err := s.Run(context.Background(), map[string]Tensor{
		"input_ids":      Int64Tensor(shape, b.IDs),
		"attention_mask": Int64Tensor(shape, b.Mask),
		"extra_ids":      Int64Tensor(shape, []int64{2, 2, 2}), // the graph adds it to input_ids
	})
	if err != nil {
		t.Fatal(err)
	}
	shifted := EncoderBatch{IDs: []int64{3, 4, 5}, Mask: b.Mask, Batch: 1, SeqLen: 3}
	assertLogits(t, Logits{Data: out["logits"].Float32, Batch: 1, SeqLen: 3, Labels: tinyLabels}, shifted, false)
}

func TestRunMatchesRunEncoder(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	s := newTestSession(t, r, "tiny_tokclass_tt.onnx")
	b := randomBatch(rand.New(rand.NewPCG(5, 6)), 3, 4, []int{4, 2, 3})
	shape := []int64{3, 4}
	out, err := s.Run(context.Background(), map[string]Tensor{
		"input_ids":      Int64Tensor(shape, b.IDs),
		"attention_mask": Int64Tensor(shape, b.Mask),
		"token_type_ids": Int64Tensor(shape, make([]int64, 12)),
	})
	if err != nil {
		t.Fatal(err)
	}
	logits := out["logits"]
	if logits.Type != ElementFloat32 || len(logits.Shape) != 3 || logits.Shape[0] != 3 || logits.Shape[1] != 4 || logits.Shape[2] != tinyLabels {
		t.Fatalf("logits %v of shape %v", logits.Type, logits.Shape)
	}
	assertLogits(t, Logits{Data: logits.Float32, Batch: 3, SeqLen: 4, Labels: tinyLabels}, b, true)
}

func TestRunRejectsTensorsThatDoNotFit(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	s := newTestSession(t, r, "tiny_tokclass.onnx")
	ids := Int64Tensor([]int64{1, 2}, []int64{1, 2})
	for name, in := range map[string]map[string]Tensor{
		"missing mask":  {"input_ids": ids},
		"unknown input": {"input_ids": ids, "attention_mask": ids, "pixel_values": ids},
		"float ids":     {"input_ids": Float32Tensor([]int64{1, 2}, []float32{1, 2}), "attention_mask": ids},
		"rank 1":        {"input_ids": Int64Tensor([]int64{2}, []int64{1, 2}), "attention_mask": ids},
		"too few":       {"input_ids": Int64Tensor([]int64{2, 2}, []int64{1, 2}), "attention_mask": ids},
		"negative axis": {"input_ids": Int64Tensor([]int64{-1, -2}, []int64{1, 2}), "attention_mask": ids},
		"int32":         {"input_ids": {Type: ElementInt32, Shape: []int64{1, 2}}, "attention_mask": ids},
	} {
		if _, err := s.Run(context.Background(), in); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: err = %v, want ErrInvalidInput", name, err)
		}
	}
}

func TestProbeModelIsValidONNX(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{})
	s, err := r.NewGeneralSession("probe", probeModel())
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(context.Background(), map[string]Tensor{probeInput: Float32Tensor([]int64{1}, []float32{2.5})})
	if err != nil {
		t.Fatal(err)
	}
	if y := out[probeOutput]; len(y.Float32) != 1 || y.Float32[0] != 2.5 {
		t.Errorf("probe output %+v, want [2.5]", y)
	}
}

func TestCloseStopsRunsAndSessions(t *testing.T) {
	requireLibrary(t)
	r, err := NewRuntime(RuntimeOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSession(t, r, "tiny_tokclass.onnx")
	closedEarly := newTestSession(t, r, "tiny_tokclass_tt.onnx")
	if err := closedEarly.Close(); err != nil {
		t.Fatal(err)
	}
	b := EncoderBatch{IDs: []int64{1}, Mask: []int64{1}, Batch: 1, SeqLen: 1}
	if _, err := closedEarly.RunEncoder(context.Background(), b); !errors.Is(err, ErrReleased) {
		t.Errorf("run on a closed session: err = %v, want ErrReleased", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.RunEncoder(context.Background(), b); !errors.Is(err, ErrReleased) {
		t.Errorf("run after the runtime closed: err = %v, want ErrReleased", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("closing a session its runtime already closed: %v", err)
	}
	if _, err := r.NewSession("late", readTestdata(t, "tiny_tokclass.onnx")); !errors.Is(err, ErrReleased) {
		t.Errorf("NewSession after Close: err = %v, want ErrReleased", err)
	}
}

func TestCloseDuringRunsIsSafe(t *testing.T) {
	r := newTestRuntime(t, RuntimeOptions{IntraOpThreads: 1})
	s := newTestSession(t, r, "tiny_tokclass.onnx")
	b := randomBatch(rand.New(rand.NewPCG(7, 8)), 4, 8, nil)
	started := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := s.RunEncoder(context.Background(), b)
				once.Do(func() { close(started) })
				if errors.Is(err, ErrReleased) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				if len(got.Data) != 4*8*tinyLabels {
					errs <- errors.New("short logits")
					return
				}
			}
		}()
	}
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRuntimesShareOneEnvironment(t *testing.T) {
	first := newTestRuntime(t, RuntimeOptions{})
	second := newTestRuntime(t, RuntimeOptions{})
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	s := newTestSession(t, first, "tiny_tokclass.onnx")
	if _, err := s.RunEncoder(context.Background(), EncoderBatch{IDs: []int64{1}, Mask: []int64{1}, Batch: 1, SeqLen: 1}); err != nil {
		t.Fatalf("the first runtime stopped working when the second closed: %v", err)
	}
	other := filepath.Join(t.TempDir(), librarySoname)
	if _, err := NewRuntime(RuntimeOptions{LibraryPath: other}); err == nil || !strings.Contains(err.Error(), "already loaded") {
		t.Errorf("a second library path while one is loaded: err = %v", err)
	}
}

func TestNewRuntimeNamesAMissingLibrary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing", librarySoname)
	_, err := NewRuntime(RuntimeOptions{LibraryPath: missing})
	if err == nil {
		t.Fatal("NewRuntime succeeded without a library")
	}
	for _, want := range []string{missing, LibraryEnv, "fetch-onnxruntime.sh"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestNewRuntimeRejectsBadOptions(t *testing.T) {
	for name, opts := range map[string]RuntimeOptions{
		"device":  {Device: "tpu"},
		"threads": {IntraOpThreads: -1},
	} {
		if _, err := NewRuntime(opts); err == nil {
			t.Errorf("%s: NewRuntime accepted %+v", name, opts)
		}
	}
}

// The two device tests check the fallback on machines without CUDA; where CUDA works they
// have nothing to check and skip.

func TestDeviceCUDAFailsClearlyWithoutCUDA(t *testing.T) {
	requireLibrary(t)
	r, err := NewRuntime(RuntimeOptions{Device: DeviceCUDA, Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		r.Close()
		t.Skip("CUDA works on this machine")
	}
	for _, want := range []string{"device cuda", "CUDA execution provider", "libonnxruntime_providers_cuda.so", "cuDNN", "auto"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The failed attempt must leave the environment usable for the next runtime.
	s := newTestSession(t, newTestRuntime(t, RuntimeOptions{}), "tiny_tokclass.onnx")
	if _, err := s.RunEncoder(context.Background(), EncoderBatch{IDs: []int64{1}, Mask: []int64{1}, Batch: 1, SeqLen: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestDeviceAutoOnACPUMachineSaysNothing: with no CUDA provider beside ONNX Runtime, device
// auto is the CPU without a word (a CPU machine asked for nothing about CUDA); a provider that
// is installed but fails is the one warning (runtime.go), and cudaInstalled tells the two apart.
func TestDeviceAutoOnACPUMachineSaysNothing(t *testing.T) {
	var log bytes.Buffer
	r := newTestRuntime(t, RuntimeOptions{Device: DeviceAuto, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if r.Device() == DeviceCUDA {
		t.Skip("CUDA works on this machine")
	}
	if r.Device() != DeviceCPU {
		t.Fatalf("Device() = %q, want cpu", r.Device())
	}
	if cudaInstalled(LibraryPath()) {
		t.Skip("a CUDA provider is installed here: auto tried it")
	}
	if log.Len() != 0 {
		t.Fatalf("log = %q, want nothing on a machine without a CUDA provider", log.String())
	}
	s := newTestSession(t, r, "tiny_tokclass.onnx")
	b := EncoderBatch{IDs: []int64{4, 2}, Mask: []int64{1, 1}, Batch: 1, SeqLen: 2}
	got, err := s.RunEncoder(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	assertLogits(t, got, b, false)
	dir := t.TempDir()
	main := filepath.Join(dir, "libonnxruntime.so.1")
	if cudaInstalled(main) {
		t.Fatal("an empty directory holds a CUDA provider")
	}
	if err := os.WriteFile(filepath.Join(dir, providersCUDA), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !cudaInstalled(main) {
		t.Fatal("the provider beside the main library is not seen")
	}
}

func TestLogitsRow(t *testing.T) {
	l := Logits{Data: []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Batch: 2, SeqLen: 3, Labels: 2}
	if row := l.Row(1, 2); len(row) != 2 || cap(row) != 2 || row[0] != 10 || row[1] != 11 {
		t.Errorf("Row(1, 2) = %v (cap %d)", row, cap(row))
	}
	for _, bt := range [][2]int{{2, 0}, {0, 3}, {-1, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Row(%d, %d) did not panic", bt[0], bt[1])
				}
			}()
			l.Row(bt[0], bt[1])
		}()
	}
}
