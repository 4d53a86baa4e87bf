package engine

import (
	"context"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
)

// Input names an encoder export uses; RunEncoder recognises exactly these.
const (
	inputIDs       = "input_ids"
	inputMask      = "attention_mask"
	inputTypeIDs   = "token_type_ids"
	outputLogits   = "logits"
	absent         = -1
	encoderInRank  = 2 // [batch, sequence]
	encoderOutRank = 3 // [batch, sequence, labels]
)

// EncoderBatch is one padded batch of token sequences, row-major: token t of sequence b is at
// IDs[b*SeqLen+t]. Mask is 1 on real tokens and 0 on padding. RunEncoder reads both slices in
// place while it runs, so they must not change until it returns.
type EncoderBatch struct {
	IDs    []int64
	Mask   []int64
	Batch  int
	SeqLen int
}

// Logits holds a token-classification result: Labels scores for every position of every
// sequence, row-major like the batch.
type Logits struct {
	Data   []float32
	Batch  int
	SeqLen int
	Labels int
}

// Row returns the scores of token t in sequence b. It shares memory with Data and panics when
// b or t is out of range, like any slice index.
func (l Logits) Row(b, t int) []float32 {
	if b < 0 || b >= l.Batch || t < 0 || t >= l.SeqLen {
		panic(fmt.Sprintf("engine: Logits.Row(%d, %d) outside %d x %d", b, t, l.Batch, l.SeqLen))
	}
	start := (b*l.SeqLen + t) * l.Labels
	return l.Data[start : start+l.Labels : start+l.Labels]
}

// encoderLayout records where the encoder's tensors sit in the model's input and output lists.
type encoderLayout struct {
	ids, mask, typeIDs int // input positions; typeIDs is absent when the model has none
	logits             int // output position
}

func newEncoderLayout(inputs, outputs []TensorInfo) (encoderLayout, error) {
	l := encoderLayout{ids: absent, mask: absent, typeIDs: absent, logits: absent}
	for i, in := range inputs {
		switch in.Name {
		case inputIDs:
			l.ids = i
		case inputMask:
			l.mask = i
		case inputTypeIDs:
			l.typeIDs = i
		default:
			return l, fmt.Errorf("input %q is none of %s, %s, %s", in.Name, inputIDs, inputMask, inputTypeIDs)
		}
		if in.Type != ElementInt64 || len(in.Shape) != encoderInRank {
			return l, fmt.Errorf("input %q is %s of rank %d; want int64 [batch, sequence]", in.Name, in.Type, len(in.Shape))
		}
	}
	if l.ids == absent {
		return l, fmt.Errorf("no %s input", inputIDs)
	}
	if l.mask == absent {
		// Without a mask the model would attend to padding and a batch would not match single runs.
		return l, fmt.Errorf("no %s input", inputMask)
	}
	for i, out := range outputs {
		if out.Name == outputLogits || len(outputs) == 1 {
			l.logits = i
		}
	}
	if l.logits == absent {
		return l, fmt.Errorf("no %q output among %d outputs", outputLogits, len(outputs))
	}
	if out := outputs[l.logits]; out.Type != ElementFloat32 || len(out.Shape) != encoderOutRank {
		return l, fmt.Errorf("output %q is %s of rank %d; want float32 [batch, sequence, labels]", out.Name, out.Type, len(out.Shape))
	}
	return l, nil
}

// RunEncoder runs one forward pass over a padded batch and returns the logits. token_type_ids,
// when the model declares it, is fed as zeros (single-segment input). A batch whose sizes do
// not add up, or do not fit the model's fixed axes, is an ErrInvalidInput error and is not run.
// ctx is checked before the pass starts; see Run for why not during it.
func (s *Session) RunEncoder(ctx context.Context, b EncoderBatch) (Logits, error) {
	if err := ctx.Err(); err != nil {
		return Logits{}, fmt.Errorf("engine: session %q: not run: %w", s.name, err)
	}
	if s.encoderErr != nil {
		return Logits{}, s.encoderErr
	}
	if err := s.checkBatch(b); err != nil {
		return Logits{}, fmt.Errorf("engine: session %q: %w: %w", s.name, ErrInvalidInput, err)
	}
	release, err := s.hold()
	if err != nil {
		return Logits{}, err
	}
	defer release()
	shape := ort.NewShape(int64(b.Batch), int64(b.SeqLen))
	values := make([]ort.Value, len(s.inputs))
	defer destroyAll(values)
	feed := map[int][]int64{s.encoder.ids: b.IDs, s.encoder.mask: b.Mask}
	if s.encoder.typeIDs != absent {
		feed[s.encoder.typeIDs] = make([]int64, len(b.IDs))
	}
	for i, data := range feed {
		v, err := ort.NewTensor(shape, data)
		if err != nil {
			return Logits{}, s.runError(err)
		}
		values[i] = v
	}

	outs, err := s.run(values)
	if err != nil {
		return Logits{}, err
	}
	defer destroyAll(outs)
	out, ok := outs[s.encoder.logits].(*ort.Tensor[float32])
	if !ok {
		return Logits{}, fmt.Errorf("engine: session %q: logits are not float32", s.name)
	}
	got := out.GetShape()
	if len(got) != encoderOutRank || got[0] != int64(b.Batch) || got[1] != int64(b.SeqLen) || got[2] <= 0 {
		return Logits{}, fmt.Errorf("engine: session %q: model returned logits of shape %v for a %d x %d batch",
			s.name, got, b.Batch, b.SeqLen)
	}
	return Logits{Data: out.GetData(), Batch: b.Batch, SeqLen: b.SeqLen, Labels: int(got[2])}, nil
}

func (s *Session) checkBatch(b EncoderBatch) error {
	if b.Batch <= 0 || b.SeqLen <= 0 {
		return fmt.Errorf("batch %d x %d: both sizes must be positive", b.Batch, b.SeqLen)
	}
	n, ok := elements([]int64{int64(b.Batch), int64(b.SeqLen)})
	if !ok || int64(len(b.IDs)) != n || int64(len(b.Mask)) != n {
		return fmt.Errorf("batch %d x %d needs %d ids and mask values, got %d and %d",
			b.Batch, b.SeqLen, b.Batch*b.SeqLen, len(b.IDs), len(b.Mask))
	}
	shape := []int64{int64(b.Batch), int64(b.SeqLen)}
	for _, i := range []int{s.encoder.ids, s.encoder.mask, s.encoder.typeIDs} {
		if i == absent {
			continue
		}
		if err := checkShape(s.inputs[i], shape); err != nil {
			return err
		}
	}
	return nil
}
