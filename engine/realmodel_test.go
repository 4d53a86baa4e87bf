package engine

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// TestRealModelPaddedBatchMatchesSingleRuns checks the shipped PII export through the engine:
// it loads as an encoder, and padding in a batch leaves the real rows' logits alone (the export
// must mask attention). It skips until models/pii/model.onnx exists.
func TestRealModelPaddedBatchMatchesSingleRuns(t *testing.T) {
	model, err := os.ReadFile(filepath.Join(benchModelDir, "model.onnx"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s/model.onnx not found", benchModelDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg := readModelConfig(t)
	r := newTestRuntime(t, RuntimeOptions{})
	s, err := r.NewSession("pii", model)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(13, 14))
	lengths := []int{5, 17, 1, 12}
	padded := EncoderBatch{Batch: len(lengths), SeqLen: 17}
	for _, n := range lengths {
		for pos := 0; pos < padded.SeqLen; pos++ {
			padded.IDs = append(padded.IDs, int64(5+rng.IntN(cfg.VocabSize-5)))
			padded.Mask = append(padded.Mask, boolToInt64(pos < n))
		}
	}
	batched, err := s.RunEncoder(context.Background(), padded)
	if err != nil {
		t.Fatal(err)
	}
	for row, n := range lengths {
		start := row * padded.SeqLen
		alone, err := s.RunEncoder(context.Background(), EncoderBatch{
			IDs: padded.IDs[start : start+n], Mask: padded.Mask[start : start+n], Batch: 1, SeqLen: n})
		if err != nil {
			t.Fatal(err)
		}
		for pos := 0; pos < n; pos++ {
			for l, want := range alone.Row(0, pos) {
				if got := batched.Row(row, pos)[l]; abs32(got-want) > 1e-4 {
					t.Fatalf("row %d pos %d label %d: batched %v, alone %v", row, pos, l, got, want)
				}
			}
		}
	}
}

func boolToInt64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
