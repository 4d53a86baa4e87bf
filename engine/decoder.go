package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	ort "github.com/yalue/onnxruntime_go"
)

// Names of a decoder export's tensors in the layout HuggingFace optimum writes for decoders
// with a KV cache ("decoder-with-past"): past_key_values.{i}.key / .value in, present.{i}.key /
// .value out, each [batch, heads, positions, head dim].
const (
	inputPositionIDs = "position_ids"
	pastPrefix       = "past_key_values."
	presentPrefix    = "present."
)

// DecoderShape is a decoder's geometry. NewDecoder reads what the model's declared axes fix
// and takes the rest from the hint (the model's config.json), checking that both agree.
// Heads counts the heads of the past keys and values, which grouped-query attention keeps
// fewer of than it has query heads.
type DecoderShape struct {
	Layers, Heads, HeadDim, Vocab int
}

// Decoder is a causal language model that RunStep can feed: input_ids and attention_mask
// (and position_ids when the model declares it), past keys and values per layer in, logits and
// present keys and values out. One caller runs its steps, one at a time (a generation
// scheduler); Terminate may come from any goroutine.
type Decoder struct {
	s     *Session
	shape DecoderShape
	// opts carry ONNX Runtime's terminate flag for the step in flight; terminated says the
	// flag is raised and must come down once that step has returned. mu keeps Close from
	// destroying them under a Terminate.
	opts       *ort.RunOptions
	terminated atomic.Bool
	mu         sync.Mutex
	// positionIDs says the model takes position_ids; without it the graph derives positions
	// from the attention mask, which makes left padding safe either way.
	positionIDs bool
	// order maps the model's inputs and outputs, in its own order, to what RunStep feeds.
	inputs, outputs []decoderSlot
	// inplace is the network's in-place decode graph (AddInPlaceDecode), nil without one.
	inplace *inPlaceGraph
}

// decoderSlot names one tensor of a step: a kind and, for caches, the layer and key or value.
type decoderSlot struct {
	kind  slotKind
	layer int
	value bool
}

type slotKind int

const (
	slotIDs slotKind = iota
	slotMask
	slotPositions
	slotPast
	slotLogits
	slotPresent
	slotSeqLens // the in-place graph's seqlens_k
	slotTotal   // the in-place graph's total_sequence_length
)

// NewDecoder loads a decoder-with-past model. Any input or output it does not recognise is an
// error here rather than at the first request.
func (r *Runtime) NewDecoder(name string, onnx []byte, hint DecoderShape) (*Decoder, error) {
	s, err := r.NewGeneralSession(name, onnx)
	if err != nil {
		return nil, err
	}
	d, err := newDecoderLayout(s, hint)
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("engine: session %q: not a decoder-with-past model: %w", name, err)
	}
	if d.opts, err = ort.NewRunOptions(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("engine: session %q: run options: %w", name, err)
	}
	return d, nil
}

func newDecoderLayout(s *Session, hint DecoderShape) (*Decoder, error) {
	d := &Decoder{s: s, shape: hint}
	layers := 0
	cacheAxis := func(info TensorInfo) error { return cacheAxes(info, &d.shape) }
	for _, in := range s.inputs {
		switch {
		case in.Name == inputIDs:
			d.inputs = append(d.inputs, decoderSlot{kind: slotIDs})
		case in.Name == inputMask:
			d.inputs = append(d.inputs, decoderSlot{kind: slotMask})
		case in.Name == inputPositionIDs:
			d.positionIDs = true
			d.inputs = append(d.inputs, decoderSlot{kind: slotPositions})
		case strings.HasPrefix(in.Name, pastPrefix):
			layer, value, err := cacheName(in.Name, pastPrefix)
			if err != nil {
				return nil, err
			}
			if err := cacheAxis(in); err != nil {
				return nil, err
			}
			layers = max(layers, layer+1)
			d.inputs = append(d.inputs, decoderSlot{kind: slotPast, layer: layer, value: value})
		default:
			return nil, fmt.Errorf("input %q is none of %s, %s, %s, %s{i}.key/value", in.Name, inputIDs, inputMask, inputPositionIDs, pastPrefix)
		}
		if (in.Name == inputIDs || in.Name == inputMask || in.Name == inputPositionIDs) && (in.Type != ElementInt64 || len(in.Shape) != 2) {
			return nil, fmt.Errorf("input %q is %s of rank %d; want int64 [batch, positions]", in.Name, in.Type, len(in.Shape))
		}
	}
	for _, out := range s.outputs {
		switch {
		case out.Name == outputLogits:
			if out.Type != ElementFloat32 || len(out.Shape) != 3 {
				return nil, fmt.Errorf("output %q is %s of rank %d; want float32 [batch, positions, vocab]", out.Name, out.Type, len(out.Shape))
			}
			if err := fixAxis(&d.shape.Vocab, out.Shape[2], out.Name, "vocab"); err != nil {
				return nil, err
			}
			d.outputs = append(d.outputs, decoderSlot{kind: slotLogits})
		case strings.HasPrefix(out.Name, presentPrefix):
			layer, value, err := cacheName(out.Name, presentPrefix)
			if err != nil {
				return nil, err
			}
			if err := cacheAxis(out); err != nil {
				return nil, err
			}
			d.outputs = append(d.outputs, decoderSlot{kind: slotPresent, layer: layer, value: value})
		default:
			return nil, fmt.Errorf("output %q is neither %s nor %s{i}.key/value", out.Name, outputLogits, presentPrefix)
		}
	}
	if d.shape.Layers != 0 && d.shape.Layers != layers {
		return nil, fmt.Errorf("the model has %d layers of past keys and values, its config %d", layers, d.shape.Layers)
	}
	d.shape.Layers = layers
	counts := map[slotKind]int{}
	for _, in := range d.inputs {
		counts[in.kind]++
	}
	for _, out := range d.outputs {
		counts[out.kind]++
	}
	switch {
	case counts[slotIDs] != 1 || counts[slotMask] != 1:
		return nil, fmt.Errorf("need one %s and one %s input", inputIDs, inputMask)
	case counts[slotLogits] != 1:
		return nil, fmt.Errorf("need a %s output", outputLogits)
	case layers == 0 || !everyLayerOnce(d.inputs, slotPast, layers) || !everyLayerOnce(d.outputs, slotPresent, layers):
		return nil, fmt.Errorf("need a key and a value, in and out, for each of %d layers", layers)
	case d.shape.Heads <= 0 || d.shape.HeadDim <= 0 || d.shape.Vocab <= 0:
		return nil, fmt.Errorf("heads %d, head dim %d and vocab %d must be known from the model or its config",
			d.shape.Heads, d.shape.HeadDim, d.shape.Vocab)
	}
	return d, nil
}

// cacheAxes checks a past or present tensor's type and rank, and reconciles its heads and head
// dim with shape's (filling in those shape does not know yet).
func cacheAxes(info TensorInfo, shape *DecoderShape) error {
	if info.Type != ElementFloat32 || len(info.Shape) != 4 {
		return fmt.Errorf("%q is %s of rank %d; want float32 [batch, heads, positions, head dim]", info.Name, info.Type, len(info.Shape))
	}
	if err := fixAxis(&shape.Heads, info.Shape[1], info.Name, "heads"); err != nil {
		return err
	}
	return fixAxis(&shape.HeadDim, info.Shape[3], info.Name, "head dim")
}

// fixAxis reconciles a declared axis (-1: dynamic) with what is known so far.
func fixAxis(known *int, declared int64, name, what string) error {
	switch {
	case declared < 0:
		return nil
	case *known == 0:
		*known = int(declared)
	case int64(*known) != declared:
		return fmt.Errorf("%q fixes %s at %d, the config says %d", name, what, declared, *known)
	}
	return nil
}

// everyLayerOnce says whether slots hold a key and a value of kind for each layer below
// layers, each once, and nothing of kind besides: a count alone passes a present.5 beside a
// past of two layers, which a step would index out of range.
func everyLayerOnce(slots []decoderSlot, kind slotKind, layers int) bool {
	seen := make(map[[2]int]bool, 2*layers)
	for _, sl := range slots {
		if sl.kind != kind {
			continue
		}
		k := [2]int{sl.layer, 0}
		if sl.value {
			k[1] = 1
		}
		if sl.layer >= layers || seen[k] {
			return false
		}
		seen[k] = true
	}
	return len(seen) == 2*layers
}

// cacheName reads the layer and key/value of "past_key_values.3.value" or "present.3.key".
func cacheName(name, prefix string) (layer int, value bool, err error) {
	rest := strings.TrimPrefix(name, prefix)
	num, kind, ok := strings.Cut(rest, ".")
	layer, perr := strconv.Atoi(num)
	if !ok || perr != nil || layer < 0 || layer > 1<<12 || num != strconv.Itoa(layer) || (kind != "key" && kind != "value") {
		return 0, false, fmt.Errorf("%q is not %s{layer}.key or .value", name, prefix)
	}
	return layer, kind == "value", nil
}

// Shape is the decoder's geometry.
func (d *Decoder) Shape() DecoderShape { return d.shape }

// Name is the model's name.
func (d *Decoder) Name() string { return d.s.name }

// Close releases the model once a step in flight has returned; later steps fail with
// ErrReleased and Terminate does nothing.
func (d *Decoder) Close() error {
	err := d.s.Close() // waits for the step in flight; no step uses opts after it
	if d.inplace != nil {
		err = errors.Join(err, d.inplace.s.Close())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.opts != nil {
		_ = d.opts.Destroy()
		d.opts = nil
	}
	return err
}

// Terminate stops the step in flight as soon as ONNX Runtime notices: RunStep returns an
// error. A watchdog calls it for a step that hangs. A step that starts while the flag is still
// up (Terminate raced the end of the step it meant) is stopped too; the step after runs.
func (d *Decoder) Terminate() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.opts == nil {
		return
	}
	// The flag goes up before terminated says so: a step that ends in between leaves both
	// up for the next step, which fails and brings them down. The other order could leave
	// the flag up with nobody to lower it, failing every step after.
	_ = d.opts.Terminate()
	d.terminated.Store(true)
}

// Step is one forward pass of a decoder over a batch. Every row has Past cached positions and
// Seq new ones, both left padded: Mask is [Batch, Past+Seq], 1 on a row's real cached and new
// tokens, 0 on padding, and the model's positions count only the ones. The caller owns every
// slice, inputs and outputs alike; RunStep writes the outputs in place.
type Step struct {
	Batch, Past, Seq int
	IDs              []int64 // [Batch, Seq]
	Mask             []int64 // [Batch, Past+Seq]
	// Positions is [Batch, Seq]: each new token's position (its count of real tokens before
	// it). Fed only to models that declare position_ids.
	Positions []int64
	// PastKV[layer][0] holds the layer's keys and [1] its values, [Batch, heads, Past, dim].
	PastKV [][2][]float32
	// Logits receives [Batch, Seq, vocab].
	Logits []float32
	// Present[layer][k] receives [Batch, heads, Past+Seq, dim].
	Present [][2][]float32
}

// RunStep runs one step. Sizes that do not add up are an ErrInvalidInput error and nothing
// runs. ctx is checked before the pass; Terminate stops a pass that hangs.
func (d *Decoder) RunStep(ctx context.Context, st *Step) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("engine: session %q: not run: %w", d.s.name, err)
	}
	if err := d.check(st); err != nil {
		return fmt.Errorf("engine: session %q: %w: %w", d.s.name, ErrInvalidInput, err)
	}
	release, err := d.s.hold()
	if err != nil {
		return err
	}
	defer release()
	b, p, q := int64(st.Batch), int64(st.Past), int64(st.Seq)
	h, dim := int64(d.shape.Heads), int64(d.shape.HeadDim)
	return d.run(d.s, d.inputs, d.outputs, func(slot decoderSlot) (ort.Value, error) {
		switch slot.kind {
		case slotIDs:
			return ort.NewTensor(ort.NewShape(b, q), st.IDs)
		case slotMask:
			return ort.NewTensor(ort.NewShape(b, p+q), st.Mask)
		case slotPositions:
			return ort.NewTensor(ort.NewShape(b, q), st.Positions)
		default: // slotPast
			return newCacheTensor(ort.NewShape(b, h, p, dim), st.PastKV[slot.layer][boolIndex(slot.value)])
		}
	}, func(slot decoderSlot) (ort.Value, error) {
		if slot.kind == slotLogits {
			return ort.NewTensor(ort.NewShape(b, q, int64(d.shape.Vocab)), st.Logits)
		}
		return ort.NewTensor(ort.NewShape(b, h, p+q, dim), st.Present[slot.layer][boolIndex(slot.value)])
	})
}

// bindSlots makes the values of a graph's inputs or outputs, in the graph's order, with value;
// on an error it releases those it made.
func bindSlots(slots []decoderSlot, value func(decoderSlot) (ort.Value, error)) ([]ort.Value, error) {
	vs := make([]ort.Value, len(slots))
	for i, slot := range slots {
		v, err := value(slot)
		if err != nil {
			destroyAll(vs)
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

// run runs one of d's graphs, its inputs and outputs made by in and out (bindSlots) and
// released after, with the run options Terminate raises, and lowers them after.
func (d *Decoder) run(s *Session, inSlots, outSlots []decoderSlot, in, out func(decoderSlot) (ort.Value, error)) error {
	ins, err := bindSlots(inSlots, in)
	if err != nil {
		return s.runError(err)
	}
	defer destroyAll(ins)
	outs, err := bindSlots(outSlots, out)
	if err != nil {
		return s.runError(err)
	}
	defer destroyAll(outs)
	err = s.ort.RunWithOptions(ins, outs, d.opts)
	if d.terminated.Swap(false) {
		_ = d.opts.UnsetTerminate()
	}
	if err != nil {
		return s.runError(err)
	}
	return nil
}

// newCacheTensor wraps a past tensor; an empty past (the first step) needs a non-nil backing
// slice for the binding, which refuses zero-length data.
func newCacheTensor(shape ort.Shape, data []float32) (ort.Value, error) {
	if shape.FlattenedSize() == 0 {
		return ort.NewEmptyTensor[float32](shape)
	}
	return ort.NewTensor(shape, data)
}

func (d *Decoder) check(st *Step) error {
	b, p, q := st.Batch, st.Past, st.Seq
	if b <= 0 || q <= 0 || p < 0 {
		return fmt.Errorf("batch %d, past %d, new %d: batch and new must be positive", b, p, q)
	}
	cache := b * d.shape.Heads * d.shape.HeadDim
	want := []struct {
		what      string
		got, want int
	}{
		{"ids", len(st.IDs), b * q}, {"mask", len(st.Mask), b * (p + q)},
		{"logits", len(st.Logits), b * q * d.shape.Vocab},
		{"past layers", len(st.PastKV), d.shape.Layers}, {"present layers", len(st.Present), d.shape.Layers},
	}
	if d.positionIDs {
		want = append(want, struct {
			what      string
			got, want int
		}{"positions", len(st.Positions), b * q})
	}
	for _, w := range want {
		if w.got != w.want {
			return fmt.Errorf("%s: %d values, want %d", w.what, w.got, w.want)
		}
	}
	for l := range st.PastKV {
		for k := range 2 {
			if len(st.PastKV[l][k]) != cache*p || len(st.Present[l][k]) != cache*(p+q) {
				return fmt.Errorf("layer %d: past %d and present %d values, want %d and %d",
					l, len(st.PastKV[l][k]), len(st.Present[l][k]), cache*p, cache*(p+q))
			}
		}
	}
	return nil
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}
