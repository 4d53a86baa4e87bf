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

// An in-place decode graph (models/train/export_inplace.py writes tiny-lm's) is a decoder's
// network for one new token a row that keeps each layer's keys and values in one buffer of
// the model's full length, both its past input and its present output: ONNX Runtime's
// GroupQueryAttention writes the new position into it in place and attends over each row's
// own length. A decode step on it copies no past and attends over no padding, where the
// decoder-with-past graph joins every row's whole past to the new position and attends over
// the longest row's. Its inputs: input_ids and position_ids [batch, 1] int64, seqlens_k
// [batch] int32 (each row's past: where its new position goes), total_sequence_length (an
// int32 scalar: the longest row's length with the new token) and past_key_values.{i}.key /
// .value [batch, heads, positions, head dim]; its outputs logits and present.{i}.key / .value,
// the same buffers.
const (
	inputSeqLens = "seqlens_k"
	inputTotal   = "total_sequence_length"
)

// DecodeStep is one new token for each of Batch rows on a decoder's in-place graph. Row i's
// keys and values sit at the front of its row of KV: its first Lens[i] positions are its
// past, and the step writes the new token's at position Lens[i]. The caller owns every slice.
type DecodeStep struct {
	Batch int
	IDs   []int64 // [Batch]
	// Lens is each row's past: the new token's position.
	Lens []int64
	// KV[layer][0] holds the layer's keys and [1] its values, [Batch, heads, InPlacePositions,
	// head dim] each: read as the past and written in place.
	KV [][2][]float32
	// Logits receives [Batch, vocab].
	Logits []float32

	seqLens []int32
}

// inPlaceGraph is a decoder's in-place graph and its tensors' order.
type inPlaceGraph struct {
	s         *Session
	positions int
	inputs    []decoderSlot
	outputs   []decoderSlot
}

// AddInPlaceDecode gives d an in-place decode graph of the same network, whose buffers hold
// positions positions a row (the model's context), for RunDecode. It checks the graph's
// tensors against d's shape, then runs both graphs on a probe (three rows of different pasts,
// random keys and values) and refuses the graph unless every score agrees within 1e-3: a
// graph of other weights or another network is an error here, not a wrong token later. Call
// it before d's first step, from the goroutine that made d.
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
			slot = decoderSlot{kind: slotPast, layer: layer, value: value}
			want, rank = ElementFloat32, 4
			layers = max(layers, layer+1)
		default:
			return nil, fmt.Errorf("input %q is none of %s, %s, %s, %s, %s{i}.key/value", in.Name, inputIDs, inputPositionIDs, inputSeqLens, inputTotal, pastPrefix)
		}
		if in.Type != want || len(in.Shape) != rank {
			return nil, fmt.Errorf("input %q is %s of rank %d; want %s of rank %d", in.Name, in.Type, len(in.Shape), want, rank)
		}
		if slot.kind == slotPast {
			if err := sameCacheAxes(in, shape); err != nil {
				return nil, err
			}
		}
		g.inputs = append(g.inputs, slot)
	}
	for _, out := range s.outputs {
		switch {
		case out.Name == outputLogits:
			if out.Type != ElementFloat32 || len(out.Shape) != 3 || (out.Shape[2] >= 0 && int(out.Shape[2]) != shape.Vocab) {
				return nil, fmt.Errorf("output %q is %s %v; want float32 [batch, 1, %d]", out.Name, out.Type, out.Shape, shape.Vocab)
			}
			g.outputs = append(g.outputs, decoderSlot{kind: slotLogits})
		case strings.HasPrefix(out.Name, presentPrefix):
			layer, value, err := cacheName(out.Name, presentPrefix)
			if err != nil {
				return nil, err
			}
			if out.Type != ElementFloat32 || len(out.Shape) != 4 {
				return nil, fmt.Errorf("output %q is %s of rank %d; want float32 of rank 4", out.Name, out.Type, len(out.Shape))
			}
			if err := sameCacheAxes(out, shape); err != nil {
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
	if layers != shape.Layers || counts[slotPast] != 2*layers || counts[slotPresent] != 2*layers {
		return nil, fmt.Errorf("need a key and a value, in and out, for each of the decoder's %d layers", shape.Layers)
	}
	return g, nil
}

// sameCacheAxes checks a cache tensor's fixed heads and head dim against the decoder's.
func sameCacheAxes(info TensorInfo, shape DecoderShape) error {
	if h := info.Shape[1]; h >= 0 && int(h) != shape.Heads {
		return fmt.Errorf("%q has %d heads, the decoder %d", info.Name, h, shape.Heads)
	}
	if dim := info.Shape[3]; dim >= 0 && int(dim) != shape.HeadDim {
		return fmt.Errorf("%q has a head dim of %d, the decoder %d", info.Name, dim, shape.HeadDim)
	}
	return nil
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
	b, h, n, dim := int64(st.Batch), int64(d.shape.Heads), int64(g.positions), int64(d.shape.HeadDim)
	st.seqLens = grow(st.seqLens, st.Batch)
	for i, l := range st.Lens {
		st.seqLens[i] = int32(l)
	}
	ins := make([]ort.Value, len(g.inputs))
	outs := make([]ort.Value, len(g.outputs))
	defer destroyAll(ins)
	defer destroyAll(outs)
	for i, slot := range g.inputs {
		var v ort.Value
		switch slot.kind {
		case slotIDs:
			v, err = ort.NewTensor(ort.NewShape(b, 1), st.IDs)
		case slotPositions:
			v, err = ort.NewTensor(ort.NewShape(b, 1), st.Lens)
		case slotSeqLens:
			v, err = ort.NewTensor(ort.NewShape(b), st.seqLens)
		case slotTotal:
			v, err = ort.NewScalar(total)
		case slotPast:
			v, err = ort.NewTensor(ort.NewShape(b, h, n, dim), st.KV[slot.layer][boolIndex(slot.value)])
		}
		if err != nil {
			return g.s.runError(err)
		}
		ins[i] = v
	}
	for i, slot := range g.outputs {
		var v ort.Value
		switch slot.kind {
		case slotLogits:
			v, err = ort.NewTensor(ort.NewShape(b, 1, int64(d.shape.Vocab)), st.Logits)
		case slotPresent:
			// The same memory as the past: ONNX Runtime sees one buffer and writes the new
			// position into it.
			v, err = ort.NewTensor(ort.NewShape(b, h, n, dim), st.KV[slot.layer][boolIndex(slot.value)])
		}
		if err != nil {
			return g.s.runError(err)
		}
		outs[i] = v
	}
	return d.run(g.s, ins, outs)
}

func (d *Decoder) checkDecode(g *inPlaceGraph, st *DecodeStep) (total int32, err error) {
	b := st.Batch
	if b <= 0 {
		return 0, fmt.Errorf("batch %d", b)
	}
	if len(st.IDs) != b || len(st.Lens) != b || len(st.Logits) != b*d.shape.Vocab || len(st.KV) != d.shape.Layers {
		return 0, fmt.Errorf("%d ids, %d lengths, %d logits and %d layers for a batch of %d", len(st.IDs), len(st.Lens), len(st.Logits), len(st.KV), b)
	}
	longest := int64(0)
	for i, l := range st.Lens {
		if l < 0 || l >= int64(g.positions) {
			return 0, fmt.Errorf("row %d: a past of %d in buffers of %d positions", i, l, g.positions)
		}
		longest = max(longest, l)
	}
	cache := b * d.shape.Heads * g.positions * d.shape.HeadDim
	for l := range st.KV {
		for k := range 2 {
			if len(st.KV[l][k]) != cache {
				return 0, fmt.Errorf("layer %d: %d cached values, want %d", l, len(st.KV[l][k]), cache)
			}
		}
	}
	return int32(longest + 1), nil
}

// probeInPlace runs d's two graphs on the same three rows and compares their scores.
func (d *Decoder) probeInPlace(g *inPlaceGraph) error {
	sh := d.shape
	rng := rand.New(rand.NewPCG(7, 9))
	lens := []int64{1, min(5, int64(g.positions)-1), min(9, int64(g.positions)-1)}
	b, past := len(lens), int(slices.Max(lens))
	ids := make([]int64, b)
	for i := range ids {
		ids[i] = int64(rng.IntN(sh.Vocab))
	}
	// The same keys and values, left padded for the step and at the front for the decode.
	st := &Step{Batch: b, Past: past, Seq: 1, IDs: ids, Mask: make([]int64, b*(past+1)), Positions: slices.Clone(lens),
		Logits: make([]float32, b*sh.Vocab)}
	ds := &DecodeStep{Batch: b, IDs: ids, Lens: lens, Logits: make([]float32, b*sh.Vocab)}
	for range sh.Layers {
		var step, present, front [2][]float32
		for k := range 2 {
			step[k] = make([]float32, b*sh.Heads*past*sh.HeadDim)
			present[k] = make([]float32, b*sh.Heads*(past+1)*sh.HeadDim)
			front[k] = make([]float32, b*sh.Heads*g.positions*sh.HeadDim)
			for i, n := range lens {
				for h := range sh.Heads {
					for p := range int(n) {
						for j := range sh.HeadDim {
							v := float32(rng.NormFloat64())
							step[k][((i*sh.Heads+h)*past+past-int(n)+p)*sh.HeadDim+j] = v
							front[k][((i*sh.Heads+h)*g.positions+p)*sh.HeadDim+j] = v
						}
					}
				}
			}
		}
		st.PastKV, st.Present, ds.KV = append(st.PastKV, step), append(st.Present, present), append(ds.KV, front)
	}
	for i, n := range lens {
		for j := past - int(n); j <= past; j++ {
			st.Mask[i*(past+1)+j] = 1
		}
	}
	if err := d.RunStep(context.Background(), st); err != nil {
		return err
	}
	if err := d.decode(context.Background(), g, ds); err != nil {
		return err
	}
	for i := range st.Logits {
		if diff := math.Abs(float64(st.Logits[i] - ds.Logits[i])); !(diff <= 1e-3) {
			return fmt.Errorf("its scores differ from the decoder's by %g on a probe", diff)
		}
	}
	// The Runner copies the new position out of the buffers and takes them as the next
	// step's past: the graph must have written it there, where the decoder's present has it.
	for l := range sh.Layers {
		for k := range 2 {
			for i, n := range lens {
				for h := range sh.Heads {
					got := ds.KV[l][k][((i*sh.Heads+h)*g.positions+int(n))*sh.HeadDim:][:sh.HeadDim]
					want := st.Present[l][k][((i*sh.Heads+h)*(past+1)+past)*sh.HeadDim:][:sh.HeadDim]
					for j := range got {
						if diff := math.Abs(float64(got[j] - want[j])); !(diff <= 1e-4) {
							return fmt.Errorf("the keys and values it writes in place differ from the decoder's by %g on a probe", diff)
						}
					}
				}
			}
		}
	}
	return nil
}
