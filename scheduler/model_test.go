package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluice-serving/sluice/stepplan"
)

// fakeModel is a runner whose model's next token is a known function of the whole sequence,
// computed from the keys and values it reads back from the blocks the plan names and the ones
// it writes into them: a scheduler that hands it the wrong block, a wrong past or a lost
// position, or forgets a copy on write, gets another token than reference computes from the
// token ids alone. It holds the blocks' contents as a runner does, checks every plan's
// tables and positions, counts its steps, and runs a test's hook inside each one (a step that
// hangs, a slow step, a failure).
type fakeModel struct {
	shape fakeGeometry
	steps atomic.Int64
	// terminated holds Terminate's signal until a step that hangs takes it.
	terminated chan struct{}

	mu   sync.Mutex
	hook func(step int64, p *stepplan.Plan) error
	// rows records, for each step, the first token of every row whose prompt it computed
	// from the start; tests that read it give every prompt a distinct first token.
	rows [][]int64
	// kept counts decode steps over the previous decode step's rows, in the same order,
	// each one token longer: the batches whose past a runner can take from its previous
	// step's present instead of gathering it (engine's Runner does).
	kept int

	// Owned by the step in flight (the scheduler's loop).
	blocks   map[int32][]float32 // per block: blockTokens positions of slot numbers each
	logits   []float32
	last     []uint64 // the previous decode step's rows and their pasts
	lastPast []int
	lastOK   bool
}

// fakeGeometry is the fake model's: Layers x 2 x Heads x HeadDim numbers per position.
type fakeGeometry struct {
	Layers, Heads, HeadDim, Vocab int
}

var fakeShape = fakeGeometry{Layers: 2, Heads: 2, HeadDim: 2, Vocab: 97}

// blockTokens is the block size of every test's pool.
const blockTokens = 16

// slot is how many numbers one position holds.
var slot = fakeShape.Layers * 2 * fakeShape.Heads * fakeShape.HeadDim

func newFakeModel() *fakeModel {
	return &fakeModel{shape: fakeShape, terminated: make(chan struct{}, 1), blocks: map[int32][]float32{}}
}

func (f *fakeModel) Shape() fakeGeometry { return f.shape }

// Vocab implements Runner.
func (f *fakeModel) Vocab() int { return f.shape.Vocab }

// Terminate raises the flag a step that hangs reads when it is let go (see hang).
func (f *fakeModel) Terminate() {
	select {
	case f.terminated <- struct{}{}:
	default:
	}
}

// setHook sets the function every later step runs first; nil clears it.
func (f *fakeModel) setHook(h func(step int64, p *stepplan.Plan) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = h
}

// keptSteps is kept, read from the test's goroutine.
func (f *fakeModel) keptSteps() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kept
}

// errTerminated is what a step that hangs returns once terminated.
var errTerminated = errors.New("fake: terminated")

// hang makes the step wait until release is closed, then fail as ONNX Runtime's terminated
// runs do when Terminate was called meanwhile.
func (f *fakeModel) hang(release <-chan struct{}) error {
	<-release
	select {
	case <-f.terminated:
		return errTerminated
	default:
		return nil
	}
}

// kv is the key (kind 0) or value (kind 1) the fake computes for token id at position pos: a
// small integer, exact in float32.
func kv(id int64, pos, layer, kind, head, d int) float32 {
	return float32((id*31 + int64(pos*7+layer*5+kind*13+head*3+d*11)) % 97)
}

// weight is how much each cached number counts toward the next token.
func weight(pos, layer, kind, head, d int) float64 {
	return float64((pos + 1) * (1 + layer + 2*kind + 3*head + 5*d))
}

// reference is the token the fake gives after tokens, from the ids alone.
func reference(tokens []int64, vocab int) int64 {
	var sum float64
	for p, id := range tokens {
		for l := range fakeShape.Layers {
			for k := range 2 {
				for h := range fakeShape.Heads {
					for d := range fakeShape.HeadDim {
						sum += float64(kv(id, p, l, k, h, d)) * weight(p, l, k, h, d)
					}
				}
			}
		}
	}
	return int64(sum) % int64(vocab)
}

// referenceGreedy is n tokens generated after prompt, one at a time.
func referenceGreedy(prompt []int64, n int) []int64 {
	seq := append([]int64(nil), prompt...)
	for range n {
		seq = append(seq, reference(seq, fakeShape.Vocab))
	}
	return seq[len(prompt):]
}

// block is the numbers block b holds, made (zero) when first named.
func (f *fakeModel) block(b int32) []float32 {
	v, ok := f.blocks[b]
	if !ok {
		v = make([]float32, blockTokens*slot)
		f.blocks[b] = v
	}
	return v
}

// at is the number of position pos in row's blocks for layer l, key or value k, head h, dim d.
func (f *fakeModel) at(row *stepplan.Row, pos, l, k, h, d int) *float32 {
	b := f.block(row.Blocks[pos/blockTokens])
	return &b[(pos%blockTokens)*slot+((l*2+k)*f.shape.Heads+h)*f.shape.HeadDim+d]
}

// Run implements Runner: the copies, the hook, then every row computed through its blocks.
func (f *fakeModel) Run(ctx context.Context, p *stepplan.Plan) error {
	for _, c := range p.Copies {
		copy(f.block(c.To), f.block(c.From))
	}
	n := f.steps.Add(1)
	f.mu.Lock()
	hook := f.hook
	f.mu.Unlock()
	if hook != nil {
		if err := hook(n, p); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sh := f.shape
	want := 0
	for i := range p.Rows {
		row := &p.Rows[i]
		switch {
		case len(row.Tokens) == 0 || row.Past < 0:
			return fmt.Errorf("fake: row %d: %d new tokens after %d", i, len(row.Tokens), row.Past)
		case len(row.Blocks)*blockTokens < row.Past+len(row.Tokens):
			return fmt.Errorf("fake: row %d: %d blocks for %d positions", i, len(row.Blocks), row.Past+len(row.Tokens))
		}
		if row.AllLogits {
			want += len(row.Tokens)
		} else {
			want++
		}
	}
	if cap(f.logits) < want*sh.Vocab {
		f.logits = make([]float32, want*sh.Vocab)
	}
	f.logits = f.logits[:want*sh.Vocab]
	var firsts []int64
	out := 0
	for i := range p.Rows {
		row := &p.Rows[i]
		if row.Past == 0 {
			firsts = append(firsts, row.Tokens[0])
		}
		first := out
		var sum float64
		for pos := range row.Past + len(row.Tokens) {
			for l := range sh.Layers {
				for k := range 2 {
					for h := range sh.Heads {
						for d := range sh.HeadDim {
							v := f.at(row, pos, l, k, h, d)
							if pos >= row.Past {
								*v = kv(row.Tokens[pos-row.Past], pos, l, k, h, d)
							}
							sum += float64(*v) * weight(pos, l, k, h, d)
						}
					}
				}
			}
			if last := pos == row.Past+len(row.Tokens)-1; last || (row.AllLogits && pos >= row.Past) {
				logits := f.logits[out*sh.Vocab : (out+1)*sh.Vocab]
				clear(logits)
				logits[int64(sum)%int64(sh.Vocab)] = 1
				out++
			}
		}
		row.Logits = f.logits[first*sh.Vocab : out*sh.Vocab]
	}
	f.mu.Lock()
	f.rows = append(f.rows, firsts)
	if p.Seq() == 1 && f.lastOK && len(p.Rows) == len(f.last) {
		same := true
		for i := range p.Rows {
			same = same && p.Rows[i].Seq == f.last[i] && p.Rows[i].Past == f.lastPast[i]+1
		}
		if same {
			f.kept++
		}
	}
	f.mu.Unlock()
	f.lastOK = p.Seq() == 1
	f.last, f.lastPast = f.last[:0], f.lastPast[:0]
	for i := range p.Rows {
		f.last = append(f.last, p.Rows[i].Seq)
		f.lastPast = append(f.lastPast, p.Rows[i].Past)
	}
	return nil
}

// prefilled lists, in step order, the first token of every sequence whose prompt a step
// computed from its start.
func (f *fakeModel) prefilled() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int64
	for _, r := range f.rows {
		out = append(out, r...)
	}
	return out
}
