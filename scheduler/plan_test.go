package scheduler

import (
	"slices"
	"testing"

	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/stepplan"
)

// TestPlanNamesEachRowsBlocksAndCarriesTheCopiesOnWrite: a step's plan gives each row its
// past, its new tokens and its block table, and carries, once, the copy on write the pool
// decided for a table about to write into the half-full block it shares (a fork).
func TestPlanNamesEachRowsBlocksAndCarriesTheCopiesOnWrite(t *testing.T) {
	pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: blockTokens, Blocks: 8, Layers: 1, Heads: 1, HeadDim: 1, MaxSeqLen: 64})
	if err != nil {
		t.Fatal(err)
	}
	tokens := make([]int64, 20)
	for i := range tokens {
		tokens[i] = int64(i + 1)
	}
	a := pool.NewTable(0)
	pool.Reserve(a, len(tokens))
	pool.Append(a, tokens)
	b := pool.Fork(a)
	if !pool.Reserve(b, 1) {
		t.Fatal("no room for the fork's token")
	}
	fork := &sequence{id: 7, table: b, tokens: append(slices.Clone(tokens), 99), take: 1, scorer: &scoringChooser{}}
	other := &sequence{id: 3, table: pool.NewTable(0), tokens: []int64{5, 6, 7}, take: 2}
	pool.Reserve(other.table, 3)
	var sc stepScratch
	p := sc.build([]*sequence{fork, other}, pool, 42)
	wantCopies := []stepplan.Copy{{From: int32(a.IDs()[1]), To: int32(b.IDs()[1])}}
	if !slices.Equal(p.Copies, wantCopies) || p.Pad != 42 {
		t.Fatalf("copies %v, pad %d; want %v and 42", p.Copies, p.Pad, wantCopies)
	}
	ids := func(t *kvcache.Table) (out []int32) {
		for _, b := range t.IDs() {
			out = append(out, int32(b))
		}
		return out
	}
	for i, want := range []stepplan.Row{
		{Seq: 7, Past: 20, Tokens: []int64{99}, Blocks: ids(b), AllLogits: true},
		{Seq: 3, Past: 0, Tokens: []int64{5, 6}, Blocks: ids(other.table)},
	} {
		got := p.Rows[i]
		if got.Seq != want.Seq || got.Past != want.Past || !slices.Equal(got.Tokens, want.Tokens) ||
			!slices.Equal(got.Blocks, want.Blocks) || got.AllLogits != want.AllLogits {
			t.Fatalf("row %d: %+v, want %+v", i, got, want)
		}
	}
	if p.Seq() != 2 || p.Past() != 20 {
		t.Fatalf("plan of %d new positions after %d, want 2 after 20", p.Seq(), p.Past())
	}
	if p = sc.build([]*sequence{other}, pool, 42); len(p.Copies) != 0 || len(p.Rows) != 1 {
		t.Fatalf("the next plan: %d copies, %d rows; want none again and 1", len(p.Copies), len(p.Rows))
	}
}
