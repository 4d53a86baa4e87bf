package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/onnxpb"
	"github.com/sluice-serving/sluice/stepplan"
)

func readInPlace(t *testing.T) []byte {
	t.Helper()
	g, err := os.ReadFile(filepath.Join("..", "models", "tiny-lm", "decode_inplace.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestInPlaceDecodeKeepsTorchsGreedyTokens: the golden prompts as one continuously batched
// run through a Runner on tiny-lm with its in-place graph (a left-padded prefill, then decode
// steps in place), rows leaving as they finish and the order turning every third step, so
// that the buffers are gathered again over what rows that left wrote there: every row
// continues its prompt with the ids torch chose.
func TestInPlaceDecodeKeepsTorchsGreedyTokens(t *testing.T) {
	d := tinyLM(t)
	if err := d.AddInPlaceDecode(readInPlace(t), 256); err != nil {
		t.Fatal(err)
	}
	sh := d.Shape()
	pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: 16, Blocks: 64, Layers: sh.Layers, Heads: sh.Heads,
		HeadDim: sh.HeadDim, MaxSeqLen: 256})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(d, pool.Blocks(), pool.BlockTokens())
	if err != nil {
		t.Fatal(err)
	}
	type seq struct {
		id     uint64
		tokens []int64
		want   []int64
		out    []int64
		table  *kvcache.Table
	}
	var running []*seq
	for i, g := range readLMGoldens(t) {
		n := len(g.Greedy) - 2*i // each leaves at its own step
		running = append(running, &seq{id: uint64(i + 1), tokens: slices.Clone(g.PromptIDs), want: g.Greedy[:n], table: pool.NewTable(0)})
	}
	all := slices.Clone(running)
	var p stepplan.Plan
	inPlace := 0
	for step := 0; len(running) > 0; step++ {
		if step%3 == 2 {
			slices.Reverse(running)
		}
		p.Reset()
		for _, q := range running {
			if !pool.Reserve(q.table, len(q.tokens)-q.table.Len()) {
				t.Fatal("out of blocks")
			}
		}
		for _, q := range running {
			var blocks []int32
			for _, b := range q.table.IDs() {
				blocks = append(blocks, int32(b))
			}
			past := q.table.Len()
			p.Rows = append(p.Rows, stepplan.Row{Seq: q.id, Past: past, Tokens: q.tokens[past:], Blocks: blocks})
		}
		if err := r.Run(context.Background(), &p); err != nil {
			t.Fatal(err)
		}
		if r.sc.lastInPlace {
			inPlace++
		}
		for i, q := range running {
			pool.Append(q.table, q.tokens[q.table.Len():])
			next := argmax(p.Rows[i].Logits[len(p.Rows[i].Logits)-sh.Vocab:])
			q.tokens, q.out = append(q.tokens, next), append(q.out, next)
		}
		running = slices.DeleteFunc(running, func(q *seq) bool {
			if len(q.out) < len(q.want) {
				return false
			}
			pool.Release(q.table)
			return true
		})
	}
	for _, q := range all {
		if !slices.Equal(q.out, q.want) {
			t.Fatalf("sequence %d: greedy %v, torch %v", q.id, q.out, q.want)
		}
	}
	if inPlace == 0 || r.sc.reused == 0 {
		t.Fatalf("%d steps in place, %d of them on the previous step's keys and values", inPlace, r.sc.reused)
	}
}

// TestInPlaceDecodeRefusesAnotherNetwork: a graph that is not an in-place graph, and an
// in-place graph with one weight changed, are refused when added, and the decoder keeps
// stepping without one.
func TestInPlaceDecodeRefusesAnotherNetwork(t *testing.T) {
	d := tinyLM(t)
	model, err := os.ReadFile(filepath.Join("..", "models", "tiny-lm", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.AddInPlaceDecode(model, 256); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("the decoder-with-past graph added as an in-place one: %v", err)
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(readInPlace(t), &m); err != nil {
		t.Fatal(err)
	}
	for _, w := range m.GetGraph().GetInitializer() {
		if w.GetName() == "m.ln.bias" { // the final norm's: every score moves
			raw := w.GetRawData()
			binary.LittleEndian.PutUint32(raw, math.Float32bits(math.Float32frombits(binary.LittleEndian.Uint32(raw))+0.5))
		}
	}
	other, err := proto.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.AddInPlaceDecode(other, 256); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Fatalf("an in-place graph of other weights was added: %v", err)
	}
	if d.InPlacePositions() != 0 {
		t.Fatal("a refused graph was kept")
	}
	if got := greedy(t, d, []int64{1198, 922}, 3); len(got) != 3 {
		t.Fatalf("%d tokens", len(got))
	}
}

// TestInPlaceDecodeRejectsBadSteps: a new position past the buffers, a prompt after a past
// (not a step the in-place graph is checked for), or sizes that do not add up, are
// ErrInvalidInput and nothing runs.
func TestInPlaceDecodeRejectsBadSteps(t *testing.T) {
	d := tinyLM(t)
	if err := d.AddInPlaceDecode(readInPlace(t), 8); err != nil {
		t.Fatal(err)
	}
	sh := d.Shape()
	kv := make([][2][]float32, sh.Layers)
	for l := range kv {
		for k := range 2 {
			kv[l][k] = make([]float32, sh.Heads*8*sh.HeadDim)
		}
	}
	one := func(past, fresh, seq int64) *DecodeStep {
		return &DecodeStep{Batch: 1, Seq: int(seq), IDs: make([]int64, seq),
			Past: []int64{past}, New: []int64{fresh}, KV: kv, Logits: make([]float32, int(seq)*sh.Vocab)}
	}
	short := one(3, 1, 1)
	short.Logits = short.Logits[:3]
	for name, st := range map[string]*DecodeStep{
		"past the buffers":           one(8, 1, 1),
		"a prompt past the buffers":  one(0, 9, 9),
		"a prompt after a past":      one(2, 3, 3),
		"a prompt short of its step": one(0, 2, 3),
		"no new token":               one(3, 0, 1),
		"a short logits":             short,
	} {
		if err := d.RunDecode(context.Background(), st); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", name, err)
		}
	}
}
