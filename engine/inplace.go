package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
)

// An in-place graph (models/train/export_inplace.py writes tiny-lm's) is a decoder's network
// that keeps each layer's keys and values in one buffer of the served length, both its past
// input and its present output: ONNX Runtime's GroupQueryAttention writes the new positions
// into it in place and attends over each row's own length. A step on it copies no past and
// attends over no padding, where the decoder-with-past graph joins every row's whole past to
// the new positions and attends over the longest row's. It computes one new token a row after
// a past, or first prompts (no past, rows right padded). Its inputs: input_ids and
// position_ids [batch, seq] int64, seqlens_k [batch] int32 (each row's length after the step,
// less one), total_sequence_length (an int32 scalar: the longest row's length after the step)
// and past_key_values.{i}.key / .value [batch, heads, positions, head dim]; its outputs logits
// [batch, seq, vocab] and present.{i}.key / .value, the same buffers.
const (
	inputSeqLens = "seqlens_k"
	inputTotal   = "total_sequence_length"
)

// DecodeStep is one step on a decoder's in-place graph: one new token for each of Batch rows
// after its past (Seq 1), or every row's prompt (every Past 0, Seq the longest prompt). Row i's
// keys and values sit at the front of its row of KV: its first Past[i] positions are its past,
// and the step writes its New[i] new tokens' at the positions after. The caller owns every
// slice.
type DecodeStep struct {
	Batch, Seq int
	// IDs is [Batch, Seq]: row i's new tokens first, then padding (any valid id). The graph
	// writes keys and values for the padding too, after the row's new ones: a row's positions
	// from Past+New on hold nothing to read.
	IDs []int64
	// Past is each row's cached positions, New its new tokens (1 to Seq).
	Past, New []int64
	// KV[layer][0] holds the layer's keys and [1] its values, [Batch, heads, InPlacePositions,
	// head dim] each: read as the past and written in place.
	KV [][2][]float32
	// Logits receives [Batch, Seq, vocab]: row i's scores after each of its new tokens, first.
	Logits []float32

	positions []int64 // [Batch, Seq]: each new token's, Past+j, 0 on padding
	seqLens   []int32
}

// inPlaceGraph is a decoder's in-place graph and its tensors' order.
type inPlaceGraph struct {
	s         *Session
	positions int
	inputs    []decoderSlot
	outputs   []decoderSlot
}

// AddInPlaceDecode gives d an in-place decode graph of the same network, whose buffers hold
// positions positions a row (the served length), for RunDecode. It checks the graph's tensors
// against d's shape, then runs both graphs on probes (probeInPlace) and refuses the graph
// unless their scores and the keys and values they write agree: a graph of other weights or
// another network is an error here, not a wrong token later. Call it before d's first step,
// from the goroutine that made d.
func (d *Decoder) AddInPlaceDecode(onnx []byte, positions int) error {
	if positions < 2 {
		return fmt.Errorf("engine: session %q: an in-place graph of %d positions", d.s.name, positions)
	}
	if d.inplace != nil {
		return fmt.Errorf("engine: session %q: has an in-place graph already", d.s.name)
	}
	s, err := d.s.runtime.NewGeneralSession(d.s.name+" (in place)", onnx)
	if err != nil {
		return err
	}
	g, err := newInPlaceLayout(s, d.shape)
	if err == nil {
		g.positions = positions
		err = d.probeInPlace(g)
	}
	if err != nil {
		_ = s.Close()
		return fmt.Errorf("engine: session %q: in-place decode graph refused: %w", d.s.name, err)
	}
	d.inplace = g
	return nil
}

func newInPlaceLayout(s *Session, shape DecoderShape) (*inPlaceGraph, error) {
	g := &inPlaceGraph{s: s}
	layers := 0
	for _, in := range s.inputs {
		var want ElementType
		rank := 2
		slot := decoderSlot{}
		switch {
		case in.Name == inputIDs:
			slot.kind, want = slotIDs, ElementInt64
		case in.Name == inputPositionIDs:
			slot.kind, want = slotPositions, ElementInt64
		case in.Name == inputSeqLens:
			slot.kind, want, rank = slotSeqLens, ElementInt32, 1
		case in.Name == inputTotal:
			slot.kind, want, rank = slotTotal, ElementInt32, 0
		case strings.HasPrefix(in.Name, pastPrefix):
			layer, value, err := cacheName(in.Name, pastPrefix)
			if err != nil {
				return nil, err
			}
			if err := cacheAxes(in, &shape); err != nil { // shape is known: a check
				return nil, err
			}
			slot = decoderSlot{kind: slotPast, layer: layer, value: value}
			want, rank = ElementFloat32, 4
			layers = max(layers, layer+1)
		default:
			return nil, fmt.Errorf("input %q is none of %s, %s, %s, %s, %s{i}.key/value", in.Name, inputIDs, inputPositionIDs, inputSeqLens, inputTotal, pastPrefix)
		}
		if in.Type != want || len(in.Shape) != rank {
			return nil, fmt.Errorf("input %q is %s of rank %d; want %s of rank %d", in.Name, in.Type, len(in.Shape), want, rank)
		}
		g.inputs = append(g.inputs, slot)
	}
	for _, out := range s.outputs {
		switch {
		case out.Name == outputLogits:
			if out.Type != ElementFloat32 || len(out.Shape) != 3 || (out.Shape[2] >= 0 && int(out.Shape[2]) != shape.Vocab) {
				return nil, fmt.Errorf("output %q is %s %v; want float32 [batch, seq, %d]", out.Name, out.Type, out.Shape, shape.Vocab)
			}
			g.outputs = append(g.outputs, decoderSlot{kind: slotLogits})
		case strings.HasPrefix(out.Name, presentPrefix):
			layer, value, err := cacheName(out.Name, presentPrefix)
			if err != nil {
				return nil, err
			}
			if err := cacheAxes(out, &shape); err != nil {
				return nil, err
			}
			g.outputs = append(g.outputs, decoderSlot{kind: slotPresent, layer: layer, value: value})
		default:
			return nil, fmt.Errorf("output %q is neither %s nor %s{i}.key/value", out.Name, outputLogits, presentPrefix)
		}
	}
	counts := map[slotKind]int{}
	for _, sl := range append(slices.Clone(g.inputs), g.outputs...) {
		counts[sl.kind]++
	}
	if counts[slotIDs] != 1 || counts[slotPositions] != 1 || counts[slotSeqLens] != 1 || counts[slotTotal] != 1 || counts[slotLogits] != 1 {
		return nil, fmt.Errorf("need one each of %s, %s, %s, %s and %s", inputIDs, inputPositionIDs, inputSeqLens, inputTotal, outputLogits)
	}
	if layers != shape.Layers || !everyLayerOnce(g.inputs, slotPast, layers) || !everyLayerOnce(g.outputs, slotPresent, layers) {
		return nil, fmt.Errorf("need a key and a value, in and out, for each of the decoder's %d layers", shape.Layers)
	}
	return g, nil
}

// InPlacePositions is how many positions a row of RunDecode's buffers holds; 0 when d has no
// in-place graph.
func (d *Decoder) InPlacePositions() int {
	if d.inplace == nil {
		return 0
	}
	return d.inplace.positions
}

// RunDecode runs one decode step on d's in-place graph. Sizes that do not add up, or a row
// whose new position falls past the buffers, are an ErrInvalidInput error and nothing runs.
// ctx is checked before the pass; Terminate stops a pass that hangs, as for RunStep.
func (d *Decoder) RunDecode(ctx context.Context, st *DecodeStep) error {
	if d.inplace == nil {
		return fmt.Errorf("engine: session %q: no in-place decode graph", d.s.name)
	}
	return d.decode(ctx, d.inplace, st)
}

func (d *Decoder) decode(ctx context.Context, g *inPlaceGraph, st *DecodeStep) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("engine: session %q: not run: %w", d.s.name, err)
	}
	total, err := d.checkDecode(g, st)
	if err != nil {
		return fmt.Errorf("engine: session %q: %w: %w", d.s.name, ErrInvalidInput, err)
	}
	release, err := g.s.hold()
	if err != nil {
		return err
	}
	defer release()
	b, q, h, n, dim := int64(st.Batch), int64(st.Seq), int64(d.shape.Heads), int64(g.positions), int64(d.shape.HeadDim)
	st.seqLens = grow(st.seqLens, st.Batch)
	st.positions = grow(st.positions, st.Batch*st.Seq)
	for i := range st.Batch {
		st.seqLens[i] = int32(st.Past[i] + st.New[i] - 1)
		row := st.positions[i*st.Seq : (i+1)*st.Seq]
		for j := range row {
			row[j] = 0
			if j < int(st.New[i]) {
				row[j] = st.Past[i] + int64(j)
			}
		}
	}
	return d.run(g.s, g.inputs, g.outputs, func(slot decoderSlot) (ort.Value, error) {
		switch slot.kind {
		case slotIDs:
			return ort.NewTensor(ort.NewShape(b, q), st.IDs)
		case slotPositions:
			return ort.NewTensor(ort.NewShape(b, q), st.positions)
		case slotSeqLens:
			return ort.NewTensor(ort.NewShape(b), st.seqLens)
		case slotTotal:
			return ort.NewScalar(total)
		default: // slotPast
			return ort.NewTensor(ort.NewShape(b, h, n, dim), st.KV[slot.layer][boolIndex(slot.value)])
		}
	}, func(slot decoderSlot) (ort.Value, error) {
		if slot.kind == slotLogits {
			return ort.NewTensor(ort.NewShape(b, q, int64(d.shape.Vocab)), st.Logits)
		}
		// The same memory as the past: ONNX Runtime sees one buffer and writes the new
		// positions into it.
		return ort.NewTensor(ort.NewShape(b, h, n, dim), st.KV[slot.layer][boolIndex(slot.value)])
	})
}

func (d *Decoder) checkDecode(g *inPlaceGraph, st *DecodeStep) (total int32, err error) {
	b, q := st.Batch, st.Seq
	if b > 0 && q > 0 && (len(st.IDs) != b*q || len(st.Logits) != b*q*d.shape.Vocab || len(st.KV) != d.shape.Layers) {
		return 0, fmt.Errorf("%d ids, %d logits and %d layers for %d rows of %d", len(st.IDs), len(st.Logits), len(st.KV), b, q)
	}
	longest, err := checkDecodeRows(st, g.positions)
	if err != nil {
		return 0, err
	}
	cache := b * d.shape.Heads * g.positions * d.shape.HeadDim
	for l := range st.KV {
		for k := range 2 {
			if len(st.KV[l][k]) != cache {
				return 0, fmt.Errorf("layer %d: %d cached values, want %d", l, len(st.KV[l][k]), cache)
			}
		}
	}
	return int32(longest), nil
}

// checkDecodeRows checks st's rows against buffers of positions positions and returns the
// longest row's length after the step: one new token a row after a past, or first prompts of
// which the longest fills the step (GroupQueryAttention's prompt after a past, the one other
// case, is not one the probe checks).
func checkDecodeRows(st *DecodeStep, positions int) (int64, error) {
	b, q := st.Batch, st.Seq
	if b <= 0 || q <= 0 || len(st.Past) != b || len(st.New) != b {
		return 0, fmt.Errorf("%d pasts and %d counts for %d rows of %d new positions", len(st.Past), len(st.New), b, q)
	}
	longest := int64(0)
	for i := range b {
		past, fresh := st.Past[i], st.New[i]
		switch {
		case past < 0 || fresh < 1 || fresh > int64(q):
			return 0, fmt.Errorf("row %d: %d new tokens after %d in a step of %d", i, fresh, past, q)
		case q > 1 && past != 0:
			return 0, fmt.Errorf("row %d: %d new tokens after a past of %d: one token a row after a past, or first prompts", i, fresh, past)
		case past+fresh > int64(positions):
			return 0, fmt.Errorf("row %d: %d positions in buffers of %d", i, past+fresh, positions)
		}
		longest = max(longest, past+fresh)
	}
	if q > 1 && longest != int64(q) {
		return 0, fmt.Errorf("prompts of at most %d tokens in a step of %d", longest, q)
	}
	return longest, nil
}

// probeInPlace runs d's two graphs on the same rows, a decode of three rows of different
// pasts, three first prompts of different lengths and two of one token, random keys and values
// for the pasts, and compares their scores after every new token and the keys and values they
// write.
func (d *Decoder) probeInPlace(g *inPlaceGraph) error {
	rng := rand.New(rand.NewPCG(7, 9))
	last := int64(g.positions - 1)
	decode := [][2]int64{{1, 1}, {min(5, last), 1}, {min(9, last), 1}}
	prompts := [][2]int64{{0, 2}, {0, min(5, last+1)}, {0, min(3, last+1)}}
	single := [][2]int64{{0, 1}, {0, 1}} // prompts of one token: a step of one position
	for _, rows := range [][][2]int64{decode, prompts, single} {
		if err := d.probeRows(g, rng, rows); err != nil {
			return err
		}
	}
	return nil
}

// probeRows probes rows of {past, new tokens}.
func (d *Decoder) probeRows(g *inPlaceGraph, rng *rand.Rand, rows [][2]int64) error {
	sh := d.shape
	b, past, seq := len(rows), 0, 0
	for _, r := range rows {
		past, seq = max(past, int(r[0])), max(seq, int(r[1]))
	}
	width := past + seq
	// The step left pads the pasts and the new tokens; the decode puts both at the front.
	st := &Step{Batch: b, Past: past, Seq: seq, IDs: make([]int64, b*seq), Mask: make([]int64, b*width),
		Positions: make([]int64, b*seq), Logits: make([]float32, b*seq*sh.Vocab)}
	ds := &DecodeStep{Batch: b, Seq: seq, IDs: make([]int64, b*seq), Past: make([]int64, b), New: make([]int64, b),
		Logits: make([]float32, b*seq*sh.Vocab)}
	for i, r := range rows {
		n, fresh := int(r[0]), int(r[1])
		ds.Past[i], ds.New[i] = r[0], r[1]
		for j := range fresh {
			id := int64(rng.IntN(sh.Vocab))
			st.IDs[i*seq+seq-fresh+j], st.Positions[i*seq+seq-fresh+j] = id, int64(n+j)
			ds.IDs[i*seq+j] = id
		}
		for j := past - n; j < past; j++ {
			st.Mask[i*width+j] = 1
		}
		for j := width - fresh; j < width; j++ {
			st.Mask[i*width+j] = 1
		}
	}
	for range sh.Layers {
		var step, present, front [2][]float32
		for k := range 2 {
			step[k] = make([]float32, b*sh.Heads*past*sh.HeadDim)
			present[k] = make([]float32, b*sh.Heads*width*sh.HeadDim)
			front[k] = make([]float32, b*sh.Heads*g.positions*sh.HeadDim)
			for i, r := range rows {
				n := int(r[0])
				for h := range sh.Heads {
					for p := range n {
						for j := range sh.HeadDim {
							v := float32(rng.NormFloat64())
							step[k][((i*sh.Heads+h)*past+past-n+p)*sh.HeadDim+j] = v
							front[k][((i*sh.Heads+h)*g.positions+p)*sh.HeadDim+j] = v
						}
					}
				}
			}
		}
		st.PastKV, st.Present, ds.KV = append(st.PastKV, step), append(st.Present, present), append(ds.KV, front)
	}
	if err := d.RunStep(context.Background(), st); err != nil {
		return err
	}
	if err := d.decode(context.Background(), g, ds); err != nil {
		return err
	}
	for i, r := range rows {
		n, fresh := int(r[0]), int(r[1])
		for j := range fresh {
			want := st.Logits[(i*seq+seq-fresh+j)*sh.Vocab:][:sh.Vocab]
			got := ds.Logits[(i*seq+j)*sh.Vocab:][:sh.Vocab]
			if diff := maxDiff(got, want); !(diff <= 1e-3) {
				return fmt.Errorf("its scores differ from the decoder's by %g on a probe", diff)
			}
			// The Runner copies the new positions out of the buffers and takes them as the
			// next step's past: the graph must have written them where the decoder's present
			// has them.
			for l := range sh.Layers {
				for k := range 2 {
					for h := range sh.Heads {
						got := ds.KV[l][k][((i*sh.Heads+h)*g.positions+n+j)*sh.HeadDim:][:sh.HeadDim]
						want := st.Present[l][k][((i*sh.Heads+h)*width+width-fresh+j)*sh.HeadDim:][:sh.HeadDim]
						if diff := maxDiff(got, want); !(diff <= 1e-4) {
							return fmt.Errorf("the keys and values it writes in place differ from the decoder's by %g on a probe", diff)
						}
					}
				}
			}
		}
	}
	return nil
}

// maxDiff is the largest absolute difference of two equally long rows (NaN if either has one).
func maxDiff(a, b []float32) float64 {
	worst := 0.0
	for i := range a {
		diff := math.Abs(float64(a[i] - b[i]))
		if math.IsNaN(diff) {
			return diff
		}
		worst = max(worst, diff)
	}
	return worst
}
