package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// BenchmarkRunEncoder measures one encoder pass on each shipped token classifier (trained by
// models/train) for batch sizes 1 to 32 in powers of two and 128, at a short and at the
// longest sequence length, and reports ms per sequence: the number the batcher's sizing
// trades against latency. The two networks have the same shape; clinical-ner also embeds
// pretrained word vectors, so the ratio between them in one run is what those cost. A model
// skips until its model.onnx exists.
func BenchmarkRunEncoder(b *testing.B) {
	for _, name := range []string{"pii", "clinical-ner"} {
		b.Run("model="+name, func(b *testing.B) { benchRunEncoder(b, name) })
	}
}

// benchDevice is the device the engine benchmarks run on: SLUICE_BENCH_DEVICE (cpu, cuda;
// scripts/gpu-check.sh sets it), cpu by default. cuda fails the benchmark where CUDA cannot
// start rather than measuring the CPU under its name.
func benchDevice() Device {
	if d, err := ParseDevice(os.Getenv("SLUICE_BENCH_DEVICE")); err == nil && d != "" {
		return d
	}
	return DeviceCPU
}

func benchRunEncoder(b *testing.B, name string) {
	s, cfg, _ := shippedSession(b, name, RuntimeOptions{IntraOpThreads: runtime.NumCPU(), Device: benchDevice()})
	benchEncoderShapes(b, s, cfg)
}

// benchEncoderShapes runs s at batch 1, 2, 4, 8, 16, 32 and 128 of 32 tokens and of the longest
// sequence, on random ids from the vocabulary, and reports ms per sequence.
func benchEncoderShapes(b *testing.B, s *Session, cfg modelConfig) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, seqLen := range []int{32, cfg.MaxPositions} {
		for _, batch := range []int{1, 2, 4, 8, 16, 32, 128} {
			in := EncoderBatch{Batch: batch, SeqLen: seqLen, IDs: make([]int64, batch*seqLen), Mask: make([]int64, batch*seqLen)}
			for i := range in.IDs {
				// Ids from the whole vocabulary but the first few, where special tokens live.
				in.IDs[i] = int64(5 + rng.IntN(cfg.VocabSize-5))
				in.Mask[i] = 1
			}
			b.Run(fmt.Sprintf("seq=%d/batch=%d", seqLen, batch), func(b *testing.B) {
				runs := 0
				for b.Loop() {
					if _, err := s.RunEncoder(context.Background(), in); err != nil {
						b.Fatal(err)
					}
					runs++
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(runs*batch), "ms/seq")
			})
		}
	}
}

// shippedSession opens a session on the shipped model `name` (models/<name>, trained by
// models/train), with its config and directory; it skips when model.onnx is not there.
func shippedSession(t testing.TB, name string, opts RuntimeOptions) (*Session, modelConfig, string) {
	t.Helper()
	dir := filepath.Join("..", "models", name)
	model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s/model.onnx not found; it is produced by `make models`", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg := readModelConfig(t, dir)
	s, err := newTestRuntime(t, opts).NewSession(name, model)
	if err != nil {
		t.Fatal(err)
	}
	return s, cfg, dir
}

type modelConfig struct {
	VocabSize    int `json:"vocab_size"`
	MaxPositions int `json:"max_position_embeddings"`
}

func readModelConfig(t testing.TB, dir string) modelConfig {
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg modelConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.VocabSize <= 5 || cfg.MaxPositions <= 0 {
		t.Fatalf("config.json: vocab_size %d, max_position_embeddings %d", cfg.VocabSize, cfg.MaxPositions)
	}
	return cfg
}

// BenchmarkRunEncoderFile is BenchmarkRunEncoder on any encoder export: SLUICE_BENCH_ONNX names
// the model.onnx and SLUICE_BENCH_VOCAB its vocabulary size (scripts/gpu-check.sh exports a
// BERT-base-shaped one there); it skips without them.
func BenchmarkRunEncoderFile(b *testing.B) {
	path := os.Getenv("SLUICE_BENCH_ONNX")
	vocab, _ := strconv.Atoi(os.Getenv("SLUICE_BENCH_VOCAB"))
	if path == "" || vocab <= 5 {
		b.Skip("SLUICE_BENCH_ONNX and SLUICE_BENCH_VOCAB name the model and its vocabulary size")
	}
	model, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	s, err := newTestRuntime(b, RuntimeOptions{IntraOpThreads: runtime.NumCPU(), Device: benchDevice()}).NewSession("file", model)
	if err != nil {
		b.Fatal(err)
	}
	benchEncoderShapes(b, s, modelConfig{VocabSize: vocab, MaxPositions: 128})
}

// TestWriteEncoderProfile writes ONNX Runtime's profile of 50 runs of the pii model, at batch
// 1 and at batch 32 of 32 tokens and at batch 16 of 128 (the medium notes' batches), each from
// its own session, into the folder SLUICE_BENCH_PROFILE names, on SLUICE_BENCH_DEVICE: per
// operator, where a pass's time goes (scripts/gpu-check.sh sums the files). It skips without
// the variable.
func TestWriteEncoderProfile(t *testing.T) {
	dir := os.Getenv("SLUICE_BENCH_PROFILE")
	if dir == "" {
		t.Skip("SLUICE_BENCH_PROFILE names the folder for the profiles")
	}
	for _, shape := range []struct{ batch, seq int }{{1, 32}, {32, 32}, {16, 128}} {
		batch, seq := shape.batch, shape.seq
		name := fmt.Sprintf("pii-batch%d", batch)
		if seq != 32 {
			name = fmt.Sprintf("pii-batch%d-seq%d", batch, seq)
		}
		opts := RuntimeOptions{IntraOpThreads: runtime.NumCPU(), Device: benchDevice(),
			profilePrefix: filepath.Join(dir, name)}
		s, cfg, _ := shippedSession(t, "pii", opts)
		in := EncoderBatch{Batch: batch, SeqLen: seq, IDs: make([]int64, batch*seq), Mask: make([]int64, batch*seq)}
		for i := range in.IDs {
			in.IDs[i], in.Mask[i] = int64(5+i%(cfg.VocabSize-5)), 1
		}
		for range 50 {
			if _, err := s.RunEncoder(context.Background(), in); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
