package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/stepplan"
)

// fakeDecoder is a decoder whose next token is a known function of the whole sequence,
// computed from the past keys and values a Runner hands it and the ones it writes: a runner
// that gathers the wrong block, pads or masks a row wrongly, reuses a present that is not
// this step's past, or loses a position gets another token than fakeReference computes from
// the token ids alone. It checks every step's shapes and positions.
type fakeDecoder struct {
	shape DecoderShape
	steps int
	fail  error // the next step fails with it, before computing anything
	// inPlace, when not 0, gives the fake an in-place graph of that many positions a row;
	// decodes counts the steps it ran, oneToken RunStep's steps of one new token a row.
	inPlace, decodes, oneToken int
}

var fakeDecoderShape = DecoderShape{Layers: 2, Heads: 2, HeadDim: 2, Vocab: 97}

func (f *fakeDecoder) Shape() DecoderShape   { return f.shape }
func (f *fakeDecoder) Terminate()            {}
func (f *fakeDecoder) InPlacePositions() int { return f.inPlace }

// RunDecode is RunStep's sum on the in-place layout: row i's past at the front of its row of
// the buffers, each new token's keys and values written after it, nothing read past them. It
// takes the steps the real graph takes (checkDecodeRows) and, as the real graph does, writes
// the padding's positions too, here with NaNs, which a runner that read them would pass on.
func (f *fakeDecoder) RunDecode(ctx context.Context, st *DecodeStep) error {
	f.decodes++
	if err := f.fail; err != nil {
		f.fail = nil
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sh, n, q := f.shape, f.inPlace, st.Seq
	if _, err := checkDecodeRows(st, n); err != nil {
		return err
	}
	if n == 0 || len(st.IDs) != st.Batch*q || len(st.Logits) != st.Batch*q*sh.Vocab || len(st.KV) != sh.Layers {
		return fmt.Errorf("fake: decode sizes do not add up: %+v", st)
	}
	at := func(row, h, pos, d int) int { return ((row*sh.Heads+h)*n+pos)*sh.HeadDim + d }
	for row := range st.Batch {
		for j := range q {
			pos := int(st.Past[row]) + j
			if j >= int(st.New[row]) {
				for l := range sh.Layers {
					for k := range 2 {
						for h := range sh.Heads {
							for d := range sh.HeadDim {
								if pos < n {
									st.KV[l][k][at(row, h, pos, d)] = float32(math.NaN())
								}
							}
						}
					}
				}
				continue
			}
			var sum float64
			for l := range sh.Layers {
				for k := range 2 {
					if len(st.KV[l][k]) != st.Batch*sh.Heads*n*sh.HeadDim {
						return fmt.Errorf("fake: layer %d: %d cached values", l, len(st.KV[l][k]))
					}
					for h := range sh.Heads {
						for d := range sh.HeadDim {
							st.KV[l][k][at(row, h, pos, d)] = fakeKV(st.IDs[row*q+j], pos, l, k, h, d)
							for p := 0; p <= pos; p++ {
								sum += float64(st.KV[l][k][at(row, h, p, d)]) * fakeWeight(p, l, k, h, d)
							}
						}
					}
				}
			}
			logits := st.Logits[(row*q+j)*sh.Vocab : (row*q+j+1)*sh.Vocab]
			clear(logits)
			if !math.IsNaN(sum) {
				logits[int64(sum)%int64(sh.Vocab)] = 1
			}
		}
	}
	return nil
}

// fakeKV is the key (kind 0) or value (kind 1) the fake computes for token id at position
// pos: a small integer, exact in float32.
func fakeKV(id int64, pos, layer, kind, head, d int) float32 {
	return float32((id*31 + int64(pos*7+layer*5+kind*13+head*3+d*11)) % 97)
}

// fakeWeight is how much each cached number counts toward the next token.
func fakeWeight(pos, layer, kind, head, d int) float64 {
	return float64((pos + 1) * (1 + layer + 2*kind + 3*head + 5*d))
}

// fakeReference is the token the fake gives after tokens, from the ids alone.
func fakeReference(tokens []int64) int64 {
	sh := fakeDecoderShape
	var sum float64
	for p, id := range tokens {
		for l := range sh.Layers {
			for k := range 2 {
				for h := range sh.Heads {
					for d := range sh.HeadDim {
						sum += float64(fakeKV(id, p, l, k, h, d)) * fakeWeight(p, l, k, h, d)
					}
				}
			}
		}
	}
	return int64(sum) % int64(sh.Vocab)
}

func (f *fakeDecoder) RunStep(ctx context.Context, st *Step) error {
	f.steps++
	if st.Seq == 1 {
		f.oneToken++
	}
	if err := f.fail; err != nil {
		f.fail = nil
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sh := f.shape
	b, past, seq := st.Batch, st.Past, st.Seq
	width := past + seq
	switch {
	case len(st.IDs) != b*seq || len(st.Mask) != b*width || len(st.Positions) != b*seq || len(st.Logits) != b*seq*sh.Vocab:
		return fmt.Errorf("fake: step sizes do not add up: %+v", st)
	case len(st.PastKV) != sh.Layers || len(st.Present) != sh.Layers:
		return errors.New("fake: wrong number of layers")
	}
	for row := range b {
		mask := st.Mask[row*width : (row+1)*width]
		real := 0 // real tokens before the position being read
		var sum float64
		for j := range width {
			if mask[j] == 0 {
				continue
			}
			if j >= past {
				at := row*seq + j - past
				id := st.IDs[at]
				if st.Positions[at] != int64(real) {
					return fmt.Errorf("fake: row %d new token %d at position %d, the mask says %d", row, j-past, st.Positions[at], real)
				}
				for l := range sh.Layers {
					for k := range 2 {
						for h := range sh.Heads {
							for d := range sh.HeadDim {
								st.Present[l][k][((row*sh.Heads+h)*width+j)*sh.HeadDim+d] = fakeKV(id, real, l, k, h, d)
							}
						}
					}
				}
			}
			for l := range sh.Layers {
				for k := range 2 {
					for h := range sh.Heads {
						for d := range sh.HeadDim {
							var v float32
							if j < past {
								v = st.PastKV[l][k][((row*sh.Heads+h)*past+j)*sh.HeadDim+d]
								st.Present[l][k][((row*sh.Heads+h)*width+j)*sh.HeadDim+d] = v
							} else {
								v = st.Present[l][k][((row*sh.Heads+h)*width+j)*sh.HeadDim+d]
							}
							sum += float64(v) * fakeWeight(real, l, k, h, d)
						}
					}
				}
			}
			real++
			if j >= past {
				logits := st.Logits[(row*seq+j-past)*sh.Vocab : (row*seq+j-past+1)*sh.Vocab]
				clear(logits)
				logits[int64(sum)%int64(sh.Vocab)] = 1
			}
		}
	}
	return nil
}

// runnerHarness plays the scheduler's part: a block pool, sequences with tables, and plans.
type runnerHarness struct {
	t    *testing.T
	pool *kvcache.Pool
	r    *Runner
	dec  *fakeDecoder
	plan stepplan.Plan
}

type harnessSeq struct {
	id     uint64
	tokens []int64 // prompt, then generated
	table  *kvcache.Table
	all    bool // wants every new position's scores
	scores [][]float32
}

// newRunnerHarness makes a runner over a pool of blocks blocks on the fake, with an
// in-place graph of inPlace positions a row when it is not 0.
func newRunnerHarness(t *testing.T, blocks, inPlace int) *runnerHarness {
	t.Helper()
	sh := fakeDecoderShape
	pool, err := kvcache.NewPool(kvcache.Config{BlockTokens: 4, Blocks: blocks, Layers: sh.Layers, Heads: sh.Heads,
		HeadDim: sh.HeadDim, MaxSeqLen: 64})
	if err != nil {
		t.Fatal(err)
	}
	dec := &fakeDecoder{shape: sh, inPlace: inPlace}
	r, err := newRunner(dec, pool.Blocks(), pool.BlockTokens())
	if err != nil {
		t.Fatal(err)
	}
	return &runnerHarness{t: t, pool: pool, r: r, dec: dec}
}

// step computes every uncached token of rows in one step, in their order, and appends each
// row's next token (the argmax of its last scores).
func (h *runnerHarness) step(rows ...*harnessSeq) error {
	h.t.Helper()
	p := &h.plan
	p.Reset()
	for _, q := range rows {
		if !h.pool.Reserve(q.table, len(q.tokens)-q.table.Len()) {
			h.t.Fatal("out of blocks")
		}
	}
	for _, c := range h.pool.TakeCopies() {
		p.Copies = append(p.Copies, stepplan.Copy{From: int32(c.From), To: int32(c.To)})
	}
	for _, q := range rows {
		var blocks []int32
		for _, b := range q.table.IDs() {
			blocks = append(blocks, int32(b))
		}
		past := q.table.Len()
		p.Rows = append(p.Rows, stepplan.Row{Seq: q.id, Past: past, Tokens: q.tokens[past:], Blocks: blocks, AllLogits: q.all})
	}
	if err := h.r.Run(context.Background(), p); err != nil {
		return err
	}
	v := fakeDecoderShape.Vocab
	for i, q := range rows {
		row := p.Rows[i]
		want := v
		if q.all {
			want = len(row.Tokens) * v
		}
		if len(row.Logits) != want {
			h.t.Fatalf("row %d: %d scores, want %d", i, len(row.Logits), want)
		}
		for j := 0; j < len(row.Logits); j += v {
			q.scores = append(q.scores, row.Logits[j:j+v])
		}
		h.pool.Append(q.table, q.tokens[q.table.Len():])
		q.tokens = append(q.tokens, int64(argmax(row.Logits[len(row.Logits)-v:])))
	}
	return nil
}

// steps runs h.step and fails the test on its error.
func (h *runnerHarness) steps(t *testing.T, rows ...*harnessSeq) {
	t.Helper()
	if err := h.step(rows...); err != nil {
		t.Fatal(err)
	}
}

func (h *runnerHarness) seq(id uint64, prompt ...int64) *harnessSeq {
	return &harnessSeq{id: id, tokens: slices.Clone(prompt), table: h.pool.NewTable(0)}
}

// onGraphs runs a runner test on the decoder-with-past graph alone (0) and with in-place
// graphs of the given positions a row: 8 is shorter than the tests' sequences grow, so their
// steps move from one graph to the other as rows outgrow it.
func onGraphs(t *testing.T, inPlace []int, test func(t *testing.T, inPlace int)) {
	t.Helper()
	for _, n := range inPlace {
		t.Run(fmt.Sprintf("in-place=%d", n), func(t *testing.T) { test(t, n) })
	}
}

// expect checks that q's generated tokens are the reference's, one at a time after prompt.
func expect(t *testing.T, q *harnessSeq, promptLen int) {
	t.Helper()
	for i := promptLen; i < len(q.tokens); i++ {
		if want := fakeReference(q.tokens[:i]); q.tokens[i] != want {
			t.Fatalf("sequence %d token %d: %d, want %d (tokens %v)", q.id, i, q.tokens[i], want, q.tokens)
		}
	}
}

// TestRunnerMatchesTheReferenceThroughTheBlocks: prompts of different lengths in one
// left-padded prefill, then decode steps whose rows change (one leaves, the order turns, one
// joins from the prefix cache), each sequence generating what the model gives it alone.
func TestRunnerMatchesTheReferenceThroughTheBlocks(t *testing.T) {
	onGraphs(t, []int{0, 8, 64}, func(t *testing.T, inPlace int) {
		h := newRunnerHarness(t, 64, inPlace)
		a, b, c := h.seq(1, 5, 6, 7), h.seq(2, 9, 8, 7, 6, 5, 4, 3, 2, 1), h.seq(3, 11)
		if err := h.step(a, b, c); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := h.step(a, b, c); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			if err := h.step(c, a); err != nil { // b left, the order turned
				t.Fatal(err)
			}
		}
		// d shares b's first two full blocks through the prefix cache: its past is b's blocks.
		d := h.seq(4, 9, 8, 7, 6, 5, 4, 3, 2, 40, 41)
		if got := h.pool.Match(d.table, d.tokens); got != 8 {
			t.Fatalf("matched %d tokens of b's prompt, want 8", got)
		}
		if err := h.step(d); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			if err := h.step(a, d, c); err != nil {
				t.Fatal(err)
			}
		}
		expect(t, a, 3)
		expect(t, b, 9)
		expect(t, c, 1)
		expect(t, d, 10)
		switch {
		case inPlace > 0 && h.dec.decodes == 0:
			t.Fatal("no step ran on the in-place graph")
		case inPlace == 64 && h.dec.oneToken > 0:
			t.Fatalf("%d steps of one token a row ran on the other graph", h.dec.oneToken)
		case inPlace == 8 && h.dec.oneToken == 0:
			t.Fatal("rows that outgrew the in-place graph's buffers stayed on it")
		}
	})
}

// TestRunnerTakesThePresentOfTheSameRowsAsThePast: a decode step over the previous step's
// rows, in the same order, each one token longer, takes that step's present as its past
// instead of gathering it, and the tokens stay exact; a batch whose rows changed gathers (in
// place, only when a row is new).
func TestRunnerTakesThePresentOfTheSameRowsAsThePast(t *testing.T) {
	onGraphs(t, []int{0, 64}, func(t *testing.T, inPlace int) {
		h := newRunnerHarness(t, 64, inPlace)
		a, b := h.seq(1, 5, 6, 7), h.seq(2, 9, 8, 7, 6, 5)
		// The prefill leaves nothing to take on the decoder-with-past graph, whose present is
		// padded to the longer prompt; in place, the prompts' keys and values are the first
		// decode's past.
		if err := h.step(a, b); err != nil {
			t.Fatal(err)
		}
		const n = 12
		for range n {
			if err := h.step(a, b); err != nil {
				t.Fatal(err)
			}
		}
		want := n - 1 // every decode step after the first
		if inPlace > 0 {
			want = n
		}
		if got := h.r.sc.reused; got != want {
			t.Fatalf("%d steps took the previous present, want %d", got, want)
		}
		for range 3 {
			if err := h.step(b, a); err != nil { // the order turned: gather, then take again
				t.Fatal(err)
			}
		}
		turned := 2
		if inPlace > 0 {
			turned = 3 // the buffers' rows belong to sequences, not to places in the plan
		}
		if got := h.r.sc.reused; got != want+turned {
			t.Fatalf("%d steps took the previous present, want %d", got, want+turned)
		}
		expect(t, a, 3)
		expect(t, b, 5)
	})
}

// TestInPlaceRowsStayWhereTheirSequencesAre: in place, a sequence that leaves mid-batch costs
// one row copied (the last into its place), a sequence that joins has its prompt computed in
// a row after the batch, so that the next decode gathers nothing, and prompts whose sequences
// never decode there do not grow the buffers past twice the widest decode. Every token stays
// the reference's.
func TestInPlaceRowsStayWhereTheirSequencesAre(t *testing.T) {
	h := newRunnerHarness(t, 64, 64)
	a, b, c := h.seq(1, 5, 6, 7), h.seq(2, 9, 8), h.seq(3, 4, 4, 4, 4)
	step := func(rows ...*harnessSeq) { t.Helper(); h.steps(t, rows...) }
	step(a, b, c)
	step(a, b, c)
	reused, moved := h.r.sc.reused, h.r.sc.moved
	step(b, c) // a leaves: c, the last row, takes its place
	if h.r.sc.reused != reused+1 || h.r.sc.moved != moved+1 {
		t.Fatalf("after a row left: %d steps without a gather (want %d), %d rows moved (want %d)",
			h.r.sc.reused, reused+1, h.r.sc.moved, moved+1)
	}
	d := h.seq(4, 7, 7)
	step(d) // joins after b and c
	step(b, c, d)
	step(d, c, b)
	if h.r.sc.reused != reused+3 || h.r.sc.moved != moved+1 {
		t.Fatalf("after a row joined: %d steps without a gather (want %d), %d rows moved (want %d)",
			h.r.sc.reused, reused+3, h.r.sc.moved, moved+1)
	}
	expect(t, a, 3)
	expect(t, b, 2)
	expect(t, c, 4)
	expect(t, d, 2)
	for i := range 20 {
		step(h.seq(uint64(10+i), 1, 2, 3)) // prompts that never decode
		if n := len(h.r.sc.slots); n > 2*h.r.sc.widest {
			t.Fatalf("the buffers hold %d rows after %d lone prompts, the widest decode %d", n, i+1, h.r.sc.widest)
		}
	}
	step(b, c, d) // gathered again, exactly
	expect(t, b, 2)
	expect(t, c, 4)
	expect(t, d, 2)
}

// decodingInPlace is a runner with an in-place graph whose buffers hold two sequences, a
// (prompt of 3) and b (prompt of 2), after their prompts and one decode.
func decodingInPlace(t *testing.T) (h *runnerHarness, a, b *harnessSeq) {
	t.Helper()
	h = newRunnerHarness(t, 64, 64)
	a, b = h.seq(1, 5, 6, 7), h.seq(2, 9, 8)
	h.steps(t, a, b)
	h.steps(t, a, b)
	return h, a, b
}

// TestInPlaceBuffersKeepWhatTheyHoldWhenTheyGrow: prompts that join after the rows held make
// the buffers grow, and the rows held come through it: their next decode gathers nothing and
// every token stays the reference's.
func TestInPlaceBuffersKeepWhatTheyHoldWhenTheyGrow(t *testing.T) {
	h, a, b := decodingInPlace(t) // the buffers hold two rows (and a quarter)
	c, d := h.seq(3, 4, 4), h.seq(4, 7)
	h.steps(t, c, d) // rows 2 and 3: the buffers grow
	reused := h.r.sc.reused
	h.steps(t, a, b, c, d)
	if h.r.sc.reused != reused+1 {
		t.Fatal("the decode after the buffers grew gathered")
	}
	expect(t, a, 3)
	expect(t, b, 2)
	expect(t, c, 2)
	expect(t, d, 1)
}

// TestInPlaceRowIsGatheredAfterAStepElsewhere: a sequence that stepped on the
// decoder-with-past graph (a step that mixed it with a prompt) is a position ahead of its row
// of the buffers, and is gathered again; the other row stays.
func TestInPlaceRowIsGatheredAfterAStepElsewhere(t *testing.T) {
	h, a, b := decodingInPlace(t)
	e := h.seq(3, 3, 1, 4)
	decodes := h.dec.decodes
	h.steps(t, a, e) // mixed: not the in-place graph's
	if h.dec.decodes != decodes {
		t.Fatal("a step of a decode and a prompt ran in place")
	}
	reused := h.r.sc.reused
	h.steps(t, a, b)
	if h.r.sc.reused != reused {
		t.Fatal("a row a position ahead of the buffers was taken from them")
	}
	expect(t, a, 3)
	expect(t, b, 2)
}

// TestInPlaceSequenceComputedAgainFromTheStart: a sequence preempted and computed again from
// its first token forgets its old row: its next decode finds the new one and gathers nothing.
func TestInPlaceSequenceComputedAgainFromTheStart(t *testing.T) {
	h, a, b := decodingInPlace(t)
	h.pool.Release(a.table) // preempted, its blocks given back
	a.table = h.pool.NewTable(0)
	h.steps(t, a) // its prompt and tokens so far, again
	reused := h.r.sc.reused
	h.steps(t, a, b)
	if h.r.sc.reused != reused+1 {
		t.Fatal("the decode after a sequence was computed again gathered")
	}
	expect(t, a, 3)
	expect(t, b, 2)
}

// TestRunnerMakesTheCopiesOnWriteFirst: a sequence forked from another, both writing into
// the half-full block they share, each goes on with its own tokens: the plan's copy is made
// before the step reads or writes a block.
func TestRunnerMakesTheCopiesOnWriteFirst(t *testing.T) {
	onGraphs(t, []int{0, 8, 64}, func(t *testing.T, inPlace int) {
		h := newRunnerHarness(t, 64, inPlace)
		a := h.seq(1, 5, 6, 7, 8, 9, 10)
		if err := h.step(a); err != nil {
			t.Fatal(err)
		}
		b := &harnessSeq{id: 2, tokens: slices.Clone(a.tokens), table: h.pool.Fork(a.table)}
		b.tokens[len(b.tokens)-1] = (a.tokens[len(a.tokens)-1] + 1) % 97 // b chose another token
		for range 5 {
			if err := h.step(b, a); err != nil {
				t.Fatal(err)
			}
		}
		if st := h.pool.Stats(); st.CopiesOnWrite != 1 {
			t.Fatalf("%d copies on write, want 1", st.CopiesOnWrite)
		}
		expect(t, a, 6)
		expect(t, b, 7)
	})
}

// TestRunnerScoresEveryNewPositionWhenAsked: a row that asks for every position's scores gets
// them, each predicting the token after it; the others get their last only.
func TestRunnerScoresEveryNewPositionWhenAsked(t *testing.T) {
	onGraphs(t, []int{0, 64}, func(t *testing.T, inPlace int) {
		h := newRunnerHarness(t, 64, inPlace)
		a, b := h.seq(1, 5, 6, 7, 8, 9), h.seq(2, 3, 4)
		a.all = true
		if err := h.step(a, b); err != nil {
			t.Fatal(err)
		}
		if len(a.scores) != 5 || len(b.scores) != 1 {
			t.Fatalf("%d and %d score rows, want 5 and 1", len(a.scores), len(b.scores))
		}
		for i, s := range a.scores {
			if got, want := int64(argmax(s)), fakeReference(a.tokens[:i+1]); got != want {
				t.Fatalf("position %d predicts %d, want %d", i, got, want)
			}
		}
		if inPlace > 0 && h.dec.decodes != 1 {
			t.Fatalf("the prompts ran %d times on the in-place graph, want once", h.dec.decodes)
		}
	})
}

// TestRunnerRefusesAPlanThatDoesNotFit: a block outside the store, or a table too short for
// its positions, is an ErrInvalidInput error and the decoder does not run.
func TestRunnerRefusesAPlanThatDoesNotFit(t *testing.T) {
	h := newRunnerHarness(t, 8, 0)
	for name, p := range map[string]stepplan.Plan{
		"no rows":        {},
		"block":          {Rows: []stepplan.Row{{Tokens: []int64{1}, Blocks: []int32{8}}}},
		"negative block": {Rows: []stepplan.Row{{Tokens: []int64{1}, Blocks: []int32{-1}}}},
		"short table":    {Rows: []stepplan.Row{{Past: 3, Tokens: []int64{1, 2}, Blocks: []int32{0}}}},
		"no tokens":      {Rows: []stepplan.Row{{Blocks: []int32{0}}}},
		"copy":           {Rows: []stepplan.Row{{Tokens: []int64{1}, Blocks: []int32{0}}}, Copies: []stepplan.Copy{{From: 0, To: 9}}},
	} {
		if err := h.r.Run(context.Background(), &p); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", name, err)
		}
	}
	if h.dec.steps != 0 {
		t.Fatalf("the decoder ran %d steps of plans that do not fit", h.dec.steps)
	}
	// A copy the scheduler has handed over is made even when a row is wrong: the scheduler
	// will not hand it over again, and a later step reads the copy.
	for i := range h.r.kv.block(1) {
		h.r.kv.block(1)[i] = float32(i + 1)
	}
	p := stepplan.Plan{Rows: []stepplan.Row{{Tokens: []int64{1}, Blocks: []int32{-1}}}, Copies: []stepplan.Copy{{From: 1, To: 2}}}
	if err := h.r.Run(context.Background(), &p); !errors.Is(err, ErrInvalidInput) || !slices.Equal(h.r.kv.block(2), h.r.kv.block(1)) {
		t.Fatalf("a valid copy beside a wrong row: %v; copied %v", err, slices.Equal(h.r.kv.block(2), h.r.kv.block(1)))
	}
}

// TestFailedStepIsNotTakenAsThePast: after a step fails, the next step over the same rows
// gathers from the blocks (the failed step's present is no past) and is exact; the one after
// takes its present again.
func TestFailedStepIsNotTakenAsThePast(t *testing.T) {
	onGraphs(t, []int{0, 64}, func(t *testing.T, inPlace int) {
		h := newRunnerHarness(t, 64, inPlace)
		a, b := h.seq(1, 5, 6, 7), h.seq(2, 9, 8)
		for range 3 {
			if err := h.step(a, b); err != nil {
				t.Fatal(err)
			}
		}
		failure := errors.New("the step failed")
		h.dec.fail = failure
		if err := h.step(a, b); !errors.Is(err, failure) {
			t.Fatalf("%v, want the step's failure", err)
		}
		reused := h.r.sc.reused
		if err := h.step(a, b); err != nil {
			t.Fatal(err)
		}
		if h.r.sc.reused != reused {
			t.Fatal("the step after a failure took the failed step's present")
		}
		if err := h.step(a, b); err != nil {
			t.Fatal(err)
		}
		if h.r.sc.reused != reused+1 {
			t.Fatal("the second step after a failure gathered")
		}
		expect(t, a, 3)
		expect(t, b, 2)
	})
}

// panicking is a decoder whose next step panics after the graph has written its outputs, as a
// bug after the pass would.
type panicking struct {
	*fakeDecoder
	next bool
}

func (p *panicking) RunStep(ctx context.Context, st *Step) error {
	err := p.fakeDecoder.RunStep(ctx, st)
	p.panicNow()
	return err
}

func (p *panicking) RunDecode(ctx context.Context, st *DecodeStep) error {
	err := p.fakeDecoder.RunDecode(ctx, st)
	p.panicNow()
	return err
}

func (p *panicking) panicNow() {
	if p.next {
		p.next = false
		panic("fake: a bug after the pass")
	}
}

// TestAStepThatPanickedLeavesNoPastToReuse: a step that panics (recovered by its caller, which
// goes on stepping) forgets what the buffers held, as a failed step does: its pass wrote over
// the present that the next decode of other rows took for their past, and they went on with
// wrong tokens and no error.
func TestAStepThatPanickedLeavesNoPastToReuse(t *testing.T) {
	onGraphs(t, []int{0, 64}, func(t *testing.T, inPlace int) {
		h := newRunnerHarness(t, 64, inPlace)
		pd := &panicking{fakeDecoder: h.dec}
		h.r.d = pd
		a, b := h.seq(1, 5, 6, 7), h.seq(2, 9, 8, 7)
		h.steps(t, a, b) // the prefill
		h.steps(t, a, b) // a decode, whose buffers the next one may take for its past
		z := h.seq(3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
		pd.next = true
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("the step did not panic")
				}
			}()
			_ = h.step(z)
		}()
		for range 3 {
			h.steps(t, a, b)
		}
		expect(t, a, 3)
		expect(t, b, 3)
	})
}
