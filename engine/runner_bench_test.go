package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/stepplan"
)

// BenchmarkDecodeStepKV measures one decode step of the shipped tiny-lm through a Runner over
// a paged KV store, split into its parts: gathering every sequence's past keys and values
// from the blocks into the step's tensors, the ONNX Runtime pass, and writing the new
// position back into the blocks. kv-share is (gather + write-back) / the whole step: what
// paging costs over a cache that feeds each step's present back as the next past. Every step
// here gathers (each is a new batch to the runner), the worst case.
func BenchmarkDecodeStepKV(b *testing.B) {
	d := benchDecoder(b)
	sh := d.Shape()
	const bt = 16
	for _, c := range decodeCases() {
		b.Run(c.name, func(b *testing.B) {
			p, blocks := decodePlanOf(c.pasts, bt)
			batch, past := len(c.pasts), p.Past()
			r, err := NewRunner(d, blocks, bt)
			if err != nil {
				b.Fatal(err)
			}
			var st *Step
			gather, run, scatter := timeDecodeSteps(b,
				func() {
					r.sc.lastOK = false // a new batch every step: gather it all
					st = r.sc.build(&p, r.kv, sh)
				},
				func() error { return d.RunStep(context.Background(), st) },
				func() {
					for i := range p.Rows {
						row := &p.Rows[i]
						for l := range sh.Layers {
							r.kv.Scatter(row.Blocks, row.Past, i, st.Past, 1, l, Key, KVTensor{Data: st.Present[l][0], Batch: batch, Positions: past + 1})
							r.kv.Scatter(row.Blocks, row.Past, i, st.Past, 1, l, Value, KVTensor{Data: st.Present[l][1], Batch: batch, Positions: past + 1})
						}
					}
				})
			b.ReportMetric(float64(gather+scatter)/float64(gather+run+scatter), "kv-share")
		})
	}
}

// timeDecodeSteps runs a decode step's three parts, gathering, the pass and the write-back,
// b.N times, and reports and returns the time of each.
func timeDecodeSteps(b *testing.B, gather func(), run func() error, scatter func()) (g, r, s time.Duration) {
	for b.Loop() {
		t0 := time.Now()
		gather()
		t1 := time.Now()
		if err := run(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		scatter()
		t3 := time.Now()
		g, r, s = g+t1.Sub(t0), r+t2.Sub(t1), s+t3.Sub(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(g.Nanoseconds())/n, "gather-ns/op")
	b.ReportMetric(float64(r.Nanoseconds())/n, "run-ns/op")
	b.ReportMetric(float64(s.Nanoseconds())/n, "scatter-ns/op")
	return g, r, s
}

type decodeCase struct {
	name  string
	pasts []int
}

// decodeCases are the steps both decode benchmarks time: every row at a past of 32, 64 or
// 128 in batches of 1, 4, 16 and 64, and the 16 staggered rows.
func decodeCases() []decodeCase {
	var cases []decodeCase
	for _, past := range []int{32, 64, 128} {
		for _, batch := range []int{1, 4, 16, 64} {
			pasts := make([]int, batch)
			for i := range pasts {
				pasts[i] = past
			}
			cases = append(cases, decodeCase{fmt.Sprintf("past=%d/batch=%d", past, batch), pasts})
		}
	}
	return append(cases, decodeCase{"past=staggered/batch=16", staggered})
}

// BenchmarkDecodeStepInPlace is BenchmarkDecodeStepKV on tiny-lm's in-place graph: every row's
// past gathered to the front of its row of the buffers (a new batch every step, the worst
// case), the pass, which writes the new position in place, and that position written back.
func BenchmarkDecodeStepInPlace(b *testing.B) {
	d := benchDecoder(b)
	inPlace, err := os.ReadFile(filepath.Join("..", "models", "tiny-lm", "decode_inplace.onnx"))
	if err != nil {
		b.Fatal(err)
	}
	const positions = 256
	if err := d.AddInPlaceDecode(inPlace, positions); err != nil {
		b.Fatal(err)
	}
	sh := d.Shape()
	const bt = 16
	for _, c := range decodeCases() {
		b.Run(c.name, func(b *testing.B) {
			p, blocks := decodePlanOf(c.pasts, bt)
			r, err := NewRunner(d, blocks, bt)
			if err != nil {
				b.Fatal(err)
			}
			var st *DecodeStep
			timeDecodeSteps(b,
				func() {
					r.sc.slots = r.sc.slots[:0] // a new batch every step: gather it all
					st = r.sc.buildInPlace(&p, r.kv, sh, positions)
				},
				func() error { return d.RunDecode(context.Background(), st) },
				func() {
					for i := range p.Rows {
						row := &p.Rows[i]
						for l := range sh.Layers {
							r.kv.Scatter(row.Blocks, row.Past, i, row.Past, 1, l, Key, KVTensor{Data: st.KV[l][0], Batch: st.Batch, Positions: positions})
							r.kv.Scatter(row.Blocks, row.Past, i, row.Past, 1, l, Value, KVTensor{Data: st.KV[l][1], Batch: st.Batch, Positions: positions})
						}
					}
				})
		})
	}
}

// benchDecoder is the shipped tiny-lm on one ONNX Runtime thread; it skips without the library.
func benchDecoder(b *testing.B) *Decoder {
	model, err := os.ReadFile(filepath.Join("..", "models", "tiny-lm", "model.onnx"))
	if err != nil {
		b.Fatal(err)
	}
	rt, err := NewRuntime(RuntimeOptions{IntraOpThreads: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Skipf("ONNX Runtime: %v", err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	d, err := rt.NewDecoder("tiny-lm", model, DecoderShape{Layers: 2, Heads: 4, HeadDim: 32, Vocab: 5000})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// TestWriteDecoderProfile writes ONNX Runtime's profile of 300 decode steps of the shipped
// tiny-lm, 16 rows with a past of 64 positions, one thread, into the folder
// SLUICE_BENCH_PROFILE names: per operator, where a step's time goes (the KV concatenation
// among the rest). It skips without the variable.
func TestWriteDecoderProfile(t *testing.T) {
	dir := os.Getenv("SLUICE_BENCH_PROFILE")
	if dir == "" {
		t.Skip("SLUICE_BENCH_PROFILE names the folder for the profiles")
	}
	model, err := os.ReadFile(filepath.Join("..", "models", "tiny-lm", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := NewRuntime(RuntimeOptions{IntraOpThreads: 1, Logger: slog.New(slog.DiscardHandler),
		profilePrefix: filepath.Join(dir, "tiny-lm-decode-batch16-past64")})
	if err != nil {
		t.Skipf("ONNX Runtime: %v", err)
	}
	defer rt.Close()
	d, err := rt.NewDecoder("tiny-lm", model, DecoderShape{Layers: 2, Heads: 4, HeadDim: 32, Vocab: 5000})
	if err != nil {
		t.Fatal(err)
	}
	const bt = 16
	p, blocks := decodePlan(16, 64, bt)
	r, err := NewRunner(d, blocks, bt)
	if err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if err := d.RunStep(context.Background(), r.sc.build(&p, r.kv, d.Shape())); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil { // the profile is written when the session closes
		t.Fatal(err)
	}
}

// decodePlan is one decode step over batch rows, each with a past of past positions in its own
// blocks of bt tokens, and the number of blocks the rows hold.
func decodePlan(batch, past, bt int) (stepplan.Plan, int) {
	pasts := make([]int, batch)
	for i := range pasts {
		pasts[i] = past
	}
	return decodePlanOf(pasts, bt)
}

// staggered is 16 rows whose pasts are spread as a closed loop of 64-token streams spreads
// them, 5 to 65 positions: a step of the decoder-with-past graph pads every row to the longest.
var staggered = func() []int {
	pasts := make([]int, 16)
	for i := range pasts {
		pasts[i] = 5 + 4*i
	}
	return pasts
}()

// decodePlanOf is decodePlan with each row's own past.
func decodePlanOf(pasts []int, bt int) (stepplan.Plan, int) {
	var p stepplan.Plan
	next := int32(0)
	for i, past := range pasts {
		tokens := make([]int64, past+1)
		for j := range tokens {
			tokens[j] = int64(600 + (i*7+j)%1000)
		}
		blocks := make([]int32, (past+1+bt-1)/bt)
		for j := range blocks {
			blocks[j] = next
			next++
		}
		p.Rows = append(p.Rows, stepplan.Row{Seq: uint64(i), Past: past, Tokens: tokens[past:], Blocks: blocks})
	}
	return p, int(next)
}

// BenchmarkPromptStep is a step of first prompts through a Runner on tiny-lm, on the
// decoder-with-past graph alone and with the in-place graph: 1 and 4 prompts of 5 tokens (a
// closed loop's new streams join one or a few at a time), the step's writing into the blocks
// included.
func BenchmarkPromptStep(b *testing.B) {
	inPlace, err := os.ReadFile(filepath.Join("..", "models", "tiny-lm", "decode_inplace.onnx"))
	if err != nil {
		b.Fatal(err)
	}
	for _, graph := range []string{"model.onnx", "in-place"} {
		d := benchDecoder(b)
		if graph == "in-place" {
			if err := d.AddInPlaceDecode(inPlace, 256); err != nil {
				b.Fatal(err)
			}
		}
		for _, rows := range []int{1, 4} {
			b.Run(fmt.Sprintf("graph=%s/prompts=%d", graph, rows), func(b *testing.B) {
				const bt, prompt = 16, 5
				var p stepplan.Plan
				for i := range rows {
					p.Rows = append(p.Rows, stepplan.Row{Seq: uint64(i), Tokens: []int64{600, 601, 602, 603, int64(604 + i)}, Blocks: []int32{int32(i)}})
				}
				r, err := NewRunner(d, rows, bt)
				if err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					for i := range p.Rows {
						p.Rows[i].Tokens = p.Rows[i].Tokens[:prompt]
					}
					if err := r.Run(context.Background(), &p); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
