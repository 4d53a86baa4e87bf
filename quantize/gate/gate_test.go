package gate

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/quantize"
)

// windows is the extract configuration the gate measures with in these tests: the server's
// defaults.
var windows = extract.Config{Stride: 32, Batch: batcher.Config{MaxBatchSize: 32, MaxWait: 5 * time.Millisecond,
	MaxPaddedTokens: 4096, QueueSize: 256, Workers: 1}}

// TestCheckMeasuresOnceAndKeepsTheFigures: the shipped PII model's int8 rewrite finds the
// float32 model's entities on the sample; the figures are kept beside the cached rewrite and
// read back on the next check, and a change of what they depend on (the stride) measures
// again.
func TestCheckMeasuresOnceAndKeepsTheFigures(t *testing.T) {
	rt, err := engine.NewRuntime(engine.RuntimeOptions{})
	if err != nil {
		t.Skipf("no ONNX Runtime: %v", err)
	}
	defer rt.Close()
	m, err := models.Load(models.Embedded(), "pii")
	if err != nil {
		t.Fatal(err)
	}
	cache, err := quantize.NewCache(t.TempDir(), quantize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cache.Int8(m.Name, m.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := Check(ctx, rt, m, res, windows)
	if err != nil {
		t.Fatal(err)
	}
	if first.Kept || first.Measure != ByEntities || first.Texts != len(Sample) || first.Agreement < 0.99 {
		t.Fatalf("first check: %+v (%v)", first, first)
	}
	if !strings.Contains(first.String(), "entity F1") {
		t.Errorf("figures read %q", first)
	}
	if _, err := os.Stat(res.Path + ".agreement.json"); err != nil {
		t.Fatalf("figures not kept: %v", err)
	}
	again, err := Check(ctx, rt, m, res, windows)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Kept || again.Agreement != first.Agreement || again.Matched != first.Matched {
		t.Errorf("second check: %+v, want the kept figures of %+v", again, first)
	}
	other := windows
	other.Stride = 16
	if measured, err := Check(ctx, rt, m, res, other); err != nil || measured.Kept {
		t.Errorf("another stride: kept %v (%v), want measured again", measured.Kept, err)
	}
}
