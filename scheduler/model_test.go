package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluice-serving/sluice/engine"
)

// fakeModel is a decoder whose next token is a known function of the whole sequence, computed
// from the past keys and values it is handed and the ones it writes: a scheduler that gathers
// the wrong block, pads or masks a row wrongly, or loses a position gets another token than
// reference computes from the token ids alone. It checks every step's shapes and positions,
// counts its steps, and runs a test's hook inside each one (a step that hangs, a slow step, a
// failure).
type fakeModel struct {
	shape engine.DecoderShape
	steps atomic.Int64
	// terminated holds Terminate's signal until a step that hangs takes it.
	terminated chan struct{}

	mu   sync.Mutex
	hook func(step int64, st *engine.Step) error
	// rows records, for each step, the first token of every row whose prompt it computed
	// from the start; tests that read it give every prompt a distinct first token.
	rows [][]int64
}

var fakeShape = engine.DecoderShape{Layers: 2, Heads: 2, HeadDim: 2, Vocab: 97}

func newFakeModel() *fakeModel {
	return &fakeModel{shape: fakeShape, terminated: make(chan struct{}, 1)}
}

func (f *fakeModel) Shape() engine.DecoderShape { return f.shape }

// Terminate raises the flag a step that hangs reads when it is let go (see hang).
func (f *fakeModel) Terminate() {
	select {
	case f.terminated <- struct{}{}:
	default:
	}
}

// setHook sets the function every later step runs first; nil clears it.
func (f *fakeModel) setHook(h func(step int64, st *engine.Step) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = h
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

func (f *fakeModel) RunStep(ctx context.Context, st *engine.Step) error {
	n := f.steps.Add(1)
	f.mu.Lock()
	hook := f.hook
	f.mu.Unlock()
	if hook != nil {
		if err := hook(n, st); err != nil {
			return err
		}
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
	var firsts []int64
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
				if real == 0 {
					firsts = append(firsts, id)
				}
				for l := range sh.Layers {
					for k := range 2 {
						for h := range sh.Heads {
							for d := range sh.HeadDim {
								st.Present[l][k][((row*sh.Heads+h)*width+j)*sh.HeadDim+d] = kv(id, real, l, k, h, d)
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
							sum += float64(v) * weight(real, l, k, h, d)
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
	f.mu.Lock()
	f.rows = append(f.rows, firsts)
	f.mu.Unlock()
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
