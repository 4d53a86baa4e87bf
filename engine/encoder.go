package engine

import (
	"context"
	"fmt"
)

// The names an encoder export gives its tensors; RunEncoder recognises exactly these inputs.
const (
	inputIDs       = "input_ids"
	inputMask      = "attention_mask"
	inputTypeIDs   = "token_type_ids"
	inputPositions = "position_ids"
	inputGlobal    = "global_attention_mask"
	outputLogits   = "logits"
	outputHidden   = "last_hidden_state" // an embedder's token states, pooled by the caller
)

// EncoderBatch is one padded batch of token sequences, row-major: token t of sequence b is at
// IDs[b*SeqLen+t]. Mask is 1 on real tokens and 0 on padding. RunEncoder reads both slices in
// place while it runs, so they must not change until it returns.
type EncoderBatch struct {
	IDs    []int64
	Mask   []int64
	Batch  int
	SeqLen int
	// TypeIDs are each token's type (a pair's second sequence 1, for a BERT cross-encoder),
	// fed as token_type_ids where the model takes them; nil: every token 0.
	TypeIDs []int64
}

// Logits holds a token-classification result: Labels scores for every position of every
// sequence, row-major like the batch.
type Logits struct {
	Data   []float32
	Batch  int
	SeqLen int
	Labels int
}

// Row returns the scores of token t in sequence b, sharing memory with Data. It panics when b
// or t is out of range.
func (l Logits) Row(b, t int) []float32 {
	if b < 0 || b >= l.Batch || t < 0 || t >= l.SeqLen {
		panic(fmt.Sprintf("engine: Logits.Row(%d, %d) outside %d x %d", b, t, l.Batch, l.SeqLen))
	}
	start := (b*l.SeqLen + t) * l.Labels
	return l.Data[start : start+l.Labels : start+l.Labels]
}

// encoderLayout is what RunEncoder needs to know about a model beyond its input names: which
// optional inputs it takes, the integer type of each input (optimum exports int64; other
// exporters use int32), and the logits' output and type.
type encoderLayout struct {
	typeIDs   bool                   // the model takes token_type_ids (fed zeros)
	positions bool                   // the model takes position_ids (fed 0..seq-1 in every row)
	global    bool                   // the model takes Longformer's global_attention_mask (fed zeros)
	types     map[string]ElementType // each input's type, int64 or int32
	logits    string                 // the output to return
	half      bool                   // the logits are float16
	labels    int64                  // the logits' last axis, which must be fixed when half
	pooled    bool                   // the output is [batch, labels]: one row per sequence (a cross-encoder's score)
}

func newEncoderLayout(inputs, outputs []TensorInfo) (encoderLayout, error) {
	l := encoderLayout{types: map[string]ElementType{}}
	var ids, mask bool
	for _, in := range inputs {
		switch in.Name {
		case inputIDs:
			ids = true
		case inputMask:
			mask = true
		case inputTypeIDs:
			l.typeIDs = true
		case inputPositions:
			l.positions = true
		case inputGlobal:
			l.global = true
		default:
			return l, fmt.Errorf("input %q is none of %s, %s, %s, %s, %s", in.Name, inputIDs, inputMask, inputTypeIDs, inputPositions, inputGlobal)
		}
		if in.Type != ElementInt64 && in.Type != ElementInt32 || len(in.Shape) != 2 {
			return l, fmt.Errorf("input %q is %s of rank %d; want int64 or int32 [batch, sequence]", in.Name, in.Type, len(in.Shape))
		}
		l.types[in.Name] = in.Type
	}
	if !ids {
		return l, fmt.Errorf("no %s input", inputIDs)
	}
	if !mask {
		// Without a mask the model would attend to padding and a batch would not match single runs.
		return l, fmt.Errorf("no %s input", inputMask)
	}
	for _, out := range outputs {
		if out.Name == outputLogits || out.Name == outputHidden || len(outputs) == 1 {
			rank := len(out.Shape)
			if out.Type != ElementFloat32 && out.Type != ElementFloat16 || rank != 3 && rank != 2 {
				return l, fmt.Errorf("output %q is %s of rank %d; want float32 or float16 [batch, sequence, labels] or [batch, labels]", out.Name, out.Type, rank)
			}
			l.logits, l.half, l.labels, l.pooled = out.Name, out.Type == ElementFloat16, out.Shape[rank-1], rank == 2
			if l.half && l.labels <= 0 {
				return l, fmt.Errorf("output %q is float16 with a dynamic label axis; the engine needs it fixed to size the output", out.Name)
			}
			return l, nil
		}
	}
	return l, fmt.Errorf("no %q or %q output among %d outputs", outputLogits, outputHidden, len(outputs))
}

// RunEncoder runs one forward pass over a padded batch and returns the logits as float32: per
// token ([batch, sequence, labels]: a token classifier's logits, an embedder's
// last_hidden_state) or, for a model whose output is [batch, labels] (a cross-encoder), one
// row per sequence (Logits.SeqLen 1).
// token_type_ids, when the model declares it, is fed as the batch's TypeIDs (zeros without), and
// position_ids as each row's positions from 0 (rows are padded at the end), and Longformer's
// global_attention_mask as zeros: local attention everywhere, which is what HF's token
// classifier does when given none; inputs go in the
// integer type the model declares, and float16 logits come back widened. A batch whose sizes do
// not add up, or do not fit the model's fixed axes, is an ErrInvalidInput error and is not run.
// A ctx that ends during the pass terminates it (see Run).
func (s *Session) RunEncoder(ctx context.Context, b EncoderBatch) (Logits, error) {
	if s.encoderErr != nil {
		return Logits{}, s.encoderErr
	}
	if b.Batch <= 0 || b.SeqLen <= 0 {
		return Logits{}, fmt.Errorf("engine: session %q: %w: batch %d x %d: both sizes must be positive",
			s.name, ErrInvalidInput, b.Batch, b.SeqLen)
	}
	shape := []int64{int64(b.Batch), int64(b.SeqLen)}
	l := s.encoder
	inputs := map[string]Tensor{inputIDs: l.tensor(inputIDs, shape, b.IDs), inputMask: l.tensor(inputMask, shape, b.Mask)}
	if l.typeIDs {
		types := b.TypeIDs
		if types == nil {
			types = make([]int64, len(b.IDs))
		}
		inputs[inputTypeIDs] = l.tensor(inputTypeIDs, shape, types)
	}
	if l.global {
		inputs[inputGlobal] = l.tensor(inputGlobal, shape, make([]int64, len(b.IDs)))
	}
	if l.positions {
		pos := make([]int64, len(b.IDs))
		for i := range pos {
			pos[i] = int64(i % b.SeqLen)
		}
		inputs[inputPositions] = l.tensor(inputPositions, shape, pos)
	}
	var shapes map[string][]int64
	if l.half {
		shapes = map[string][]int64{l.logits: {shape[0], shape[1], l.labels}}
		if l.pooled {
			shapes[l.logits] = []int64{shape[0], l.labels}
		}
	}
	outputs, err := s.runShaped(ctx, inputs, shapes)
	if err != nil {
		return Logits{}, err
	}
	logits := outputs[s.encoder.logits]
	got := logits.Shape
	if l.pooled {
		if len(got) != 2 || got[0] != shape[0] || got[1] <= 0 {
			return Logits{}, fmt.Errorf("engine: session %q: model returned scores of shape %v for a batch of %d", s.name, got, b.Batch)
		}
		return Logits{Data: logits.Float32, Batch: b.Batch, SeqLen: 1, Labels: int(got[1])}, nil
	}
	if len(got) != 3 || got[0] != shape[0] || got[1] != shape[1] || got[2] <= 0 {
		return Logits{}, fmt.Errorf("engine: session %q: model returned logits of shape %v for a %d x %d batch",
			s.name, got, b.Batch, b.SeqLen)
	}
	return Logits{Data: logits.Float32, Batch: b.Batch, SeqLen: b.SeqLen, Labels: int(got[2])}, nil
}

// tensor is data as input name's declared type.
func (l encoderLayout) tensor(name string, shape, data []int64) Tensor {
	if l.types[name] != ElementInt32 {
		return Int64Tensor(shape, data)
	}
	narrow := make([]int32, len(data))
	for i, v := range data {
		narrow[i] = int32(v)
	}
	return Int32Tensor(shape, narrow)
}
