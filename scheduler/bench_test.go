package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/kvcache"
)

// BenchmarkDecodeStepKV measures one decode step of the shipped tiny-lm over the paged KV
// cache, split into its parts: gathering every sequence's past keys and values from the pool's
// blocks into the step's tensors, the ONNX Runtime pass, and writing the new position back
// into the blocks. kv-share is (gather + write-back) / the whole step: what paging costs over
// a cache that feeds each step's present back as the next past. It is the one benchmark of
// this package that needs ONNX Runtime (it skips without it); the tests never do.
func BenchmarkDecodeStepKV(b *testing.B) {
	model, err := os.ReadFile(filepath.Join("..", "models", "tiny-lm", "model.onnx"))
	if err != nil {
		b.Fatal(err)
	}
	rt, err := engine.NewRuntime(engine.RuntimeOptions{IntraOpThreads: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Skipf("ONNX Runtime: %v", err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	d, err := rt.NewDecoder("tiny-lm", model, engine.DecoderShape{Layers: 2, Heads: 4, HeadDim: 32, Vocab: 5000})
	if err != nil {
		b.Fatal(err)
	}
	sh := d.Shape()
	for _, past := range []int{32, 128} {
		for _, batch := range []int{1, 4, 16, 64} {
			b.Run(fmt.Sprintf("past=%d/batch=%d", past, batch), func(b *testing.B) {
				pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: 16, Blocks: batch * 16, Layers: sh.Layers,
					Heads: sh.Heads, HeadDim: sh.HeadDim, MaxSeqLen: 256})
				if err != nil {
					b.Fatal(err)
				}
				rows := make([]*sequence, batch)
				for i := range rows {
					t := pool.NewTable()
					pool.Reserve(t, past+1)
					tokens := make([]int64, past+1)
					for j := range tokens {
						tokens[j] = int64(600 + (i*7+j)%1000)
					}
					pool.Append(t, tokens[:past])
					rows[i] = &sequence{table: t, tokens: tokens}
				}
				var sc stepScratch
				var gather, run, scatter time.Duration
				for b.Loop() {
					t0 := time.Now()
					st := sc.build(rows, pool, sh, 0)
					t1 := time.Now()
					if err := d.RunStep(context.Background(), st); err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					for i, q := range rows {
						for l := range sh.Layers {
							pool.Scatter(q.table, i, st.Past, 1, l, kvcache.Key, kvcache.Tensor{Data: st.Present[l][0], Batch: batch, Positions: past + 1})
							pool.Scatter(q.table, i, st.Past, 1, l, kvcache.Value, kvcache.Tensor{Data: st.Present[l][1], Batch: batch, Positions: past + 1})
						}
					}
					t3 := time.Now()
					gather += t1.Sub(t0)
					run += t2.Sub(t1)
					scatter += t3.Sub(t2)
				}
				n := float64(b.N)
				b.ReportMetric(float64(gather.Nanoseconds())/n, "gather-ns/op")
				b.ReportMetric(float64(run.Nanoseconds())/n, "run-ns/op")
				b.ReportMetric(float64(scatter.Nanoseconds())/n, "scatter-ns/op")
				b.ReportMetric(float64(gather+scatter)/float64(gather+run+scatter), "kv-share")
			})
		}
	}
}
