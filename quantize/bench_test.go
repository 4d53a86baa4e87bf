package quantize_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/quantize"
)

// BenchmarkInt8Encoder times one encoder pass, float32 against its int8 rewrites (full range,
// and seven-bit weights as ForCPU gives x86 without VNNI), at batch 1,
// 8 and 32 of 64-token rows (a short note), on the shipped token classifiers and on the model
// directory SLUICE_BENCH_ENCODER_DIR when set (a BERT-base-shaped encoder from
// models/train/export_recipe_shaped.py). It reports sequences per second; compare the pairs
// within one run.
func BenchmarkInt8Encoder(b *testing.B) {
	dirs := []string{filepath.Join("..", "models", "pii"), filepath.Join("..", "models", "clinical-ner")}
	if d := os.Getenv("SLUICE_BENCH_ENCODER_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	lib := engine.LibraryPath()
	if _, err := os.Stat(lib); err != nil {
		b.Skip("ONNX Runtime library not found: run scripts/fetch-onnxruntime.sh")
	}
	rt, err := engine.NewRuntime(engine.RuntimeOptions{LibraryPath: lib, Device: engine.DeviceCPU,
		IntraOpThreads: runtime.NumCPU(), InterOpThreads: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	for _, dir := range dirs {
		src, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
		if err != nil {
			b.Fatal(err)
		}
		var cfg struct {
			VocabSize int `json:"vocab_size"`
		}
		raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err != nil || json.Unmarshal(raw, &cfg) != nil || cfg.VocabSize < 10 {
			b.Fatalf("%s: config.json without vocab_size", dir)
		}
		kinds := []struct {
			name  string
			graph []byte
		}{{"float32", src}}
		for _, form := range []struct {
			name string
			opts quantize.Options
		}{{"int8", quantize.Options{}}, {"int8-7bit", quantize.Options{ReduceRange: true}}} {
			g, _, err := quantize.Int8(src, form.opts)
			if err != nil {
				b.Fatal(err)
			}
			kinds = append(kinds, struct {
				name  string
				graph []byte
			}{form.name, g})
		}
		for _, kind := range kinds {
			sess, err := rt.NewSession(filepath.Base(dir), kind.graph)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(21, 22))
			for _, batch := range []int{1, 8, 32} {
				in := engine.EncoderBatch{Batch: batch, SeqLen: 64, IDs: make([]int64, batch*64), Mask: make([]int64, batch*64)}
				for i := range in.IDs {
					in.IDs[i], in.Mask[i] = int64(5+rng.IntN(min(cfg.VocabSize, 5000)-5)), 1
				}
				b.Run(fmt.Sprintf("model=%s/%s/batch=%d", filepath.Base(dir), kind.name, batch), func(b *testing.B) {
					runs := 0
					for b.Loop() {
						if _, err := sess.RunEncoder(context.Background(), in); err != nil {
							b.Fatal(err)
						}
						runs++
					}
					b.ReportMetric(float64(runs*batch)/b.Elapsed().Seconds(), "seq/s")
				})
			}
			_ = sess.Close()
		}
	}
}
