package engine

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealModelPaddedBatchMatchesSingleRuns checks the shipped token classifiers through the
// engine: each loads as an encoder, and padding in a batch leaves the real rows' logits alone,
// even when the padded slots hold ids of word-continuing pieces ("##..."), which the exported
// graphs read to group pieces into words (and clinical-ner to tell a whole word from a prefix).
// It skips a model until its model.onnx exists.
func TestRealModelPaddedBatchMatchesSingleRuns(t *testing.T) {
	for _, name := range []string{"pii", "clinical-ner"} {
		t.Run(name, func(t *testing.T) {
			s, cfg, dir := shippedSession(t, name, RuntimeOptions{})
			cont := continuationIDs(t, dir)
			rng := rand.New(rand.NewPCG(13, 14))
			lengths := []int{5, 17, 1, 12}
			padded := EncoderBatch{Batch: len(lengths), SeqLen: 17}
			for _, n := range lengths {
				for pos := 0; pos < padded.SeqLen; pos++ {
					id := int64(5 + rng.IntN(cfg.VocabSize-5))
					if pos >= n {
						id = cont[rng.IntN(len(cont))]
					}
					padded.IDs = append(padded.IDs, id)
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
		})
	}
}

// continuationIDs returns the ids of the "##" entries of the model's tokenizer.json.
func continuationIDs(t *testing.T, dir string) []int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Model struct {
			Vocab map[string]int64 `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for tok, id := range doc.Model.Vocab {
		if strings.HasPrefix(tok, "##") {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		t.Fatalf("%s/tokenizer.json has no continuation entries", dir)
	}
	return ids
}

func boolToInt64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// checkedOnce is a context whose Err reports the first check to the test, which cancels it
// then: the cancellation lands after the session has looked at ctx, while it sets up or runs
// the pass, never before.
type checkedOnce struct {
	context.Context
	checked chan struct{}
	once    bool
}

// Err reads the context's state before it signals the first check: the canceller may run
// the moment checked closes, and the first check must still see a live context.
func (c *checkedOnce) Err() error {
	err := c.Context.Err()
	if !c.once {
		c.once = true
		close(c.checked)
	}
	return err
}

// TestContextEndingDuringARunTerminatesIt: a pass of thousands of rows stops when its context
// ends, with an error that wraps the context's, instead of finishing the pass.
func TestContextEndingDuringARunTerminatesIt(t *testing.T) {
	s, cfg, _ := shippedSession(t, "clinical-ner", RuntimeOptions{IntraOpThreads: 1})
	rng := rand.New(rand.NewPCG(5, 6))
	b := EncoderBatch{Batch: 2048, SeqLen: 128}
	for range b.Batch * b.SeqLen {
		b.IDs = append(b.IDs, int64(5+rng.IntN(cfg.VocabSize-5)))
		b.Mask = append(b.Mask, 1)
	}
	inner, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := &checkedOnce{Context: inner, checked: make(chan struct{})}
	go func() {
		<-ctx.checked
		cancel()
	}()
	_, err := s.RunEncoder(ctx, b)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "run stopped") {
		t.Fatalf("got %v, want the run stopped with context.Canceled", err)
	}
}
