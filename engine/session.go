package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ErrInvalidInput marks a call whose tensors do not fit the model (wrong rank, fixed axis,
// element count or type). Such calls never reach ONNX Runtime.
var ErrInvalidInput = errors.New("invalid input")

// Session is one loaded model. Any number of goroutines may call its Run methods at once: ONNX
// Runtime's Run is thread-safe, and the session only reads its own fields while running.
type Session struct {
	name    string
	runtime *Runtime
	inputs  []TensorInfo
	outputs []TensorInfo
	encoder encoderLayout
	// encoderErr says why RunEncoder cannot feed this model; nil when it can.
	encoderErr error

	// mu is held shared by every run and exclusively by Close, so that the ONNX Runtime
	// session is never released under a running call.
	mu  sync.RWMutex
	ort *ort.DynamicAdvancedSession // nil once closed
}

// NewSession loads an encoder model that RunEncoder can feed: inputs input_ids and
// attention_mask, optionally token_type_ids, all int64, and a float32 output "logits" (or a
// single output) of rank 3. Any other input is an error here, not at the first request. name
// identifies the session in errors and logs.
func (r *Runtime) NewSession(name string, onnx []byte) (*Session, error) {
	return r.newSession(name, onnx, true)
}

// NewGeneralSession loads any model whose inputs and outputs are tensors, for use with Run (a
// decoder with a KV cache, for example). RunEncoder still works if the model happens to have
// the encoder layout.
func (r *Runtime) NewGeneralSession(name string, onnx []byte) (*Session, error) {
	return r.newSession(name, onnx, false)
}

func (r *Runtime) newSession(name string, onnx []byte, needEncoder bool) (*Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("engine: session %q: runtime %w", name, ErrReleased)
	}
	if len(onnx) == 0 {
		return nil, fmt.Errorf("engine: session %q: empty model", name)
	}
	// The binding reads names and types from a throwaway session; costly for big models, but
	// it runs once at start-up and keeps every name out of the code.
	inInfo, outInfo, err := ort.GetInputOutputInfoWithONNXData(onnx)
	if err != nil {
		return nil, fmt.Errorf("engine: session %q: reading model (%d bytes): %w", name, len(onnx), err)
	}
	s := &Session{name: name, runtime: r}
	if s.inputs, err = tensorInfos("input", inInfo); err != nil {
		return nil, fmt.Errorf("engine: session %q: %w", name, err)
	}
	if s.outputs, err = tensorInfos("output", outInfo); err != nil {
		return nil, fmt.Errorf("engine: session %q: %w", name, err)
	}
	s.encoder, s.encoderErr = newEncoderLayout(s.inputs, s.outputs)
	if s.encoderErr != nil {
		s.encoderErr = fmt.Errorf("engine: session %q: not an encoder RunEncoder can feed: %w", name, s.encoderErr)
		if needEncoder {
			return nil, s.encoderErr
		}
	}

	so, err := r.sessionOptions()
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	s.ort, err = ort.NewDynamicAdvancedSessionWithONNXData(onnx, names(s.inputs), names(s.outputs), so)
	if err != nil {
		return nil, fmt.Errorf("engine: session %q on %s: %w", name, r.device, err)
	}
	r.sessions[s] = struct{}{}
	return s, nil
}

func tensorInfos(kind string, infos []ort.InputOutputInfo) ([]TensorInfo, error) {
	out := make([]TensorInfo, len(infos))
	for i, info := range infos {
		if info.OrtValueType != ort.ONNXTypeTensor {
			return nil, fmt.Errorf("%s %q is a %s; only tensors are supported", kind, info.Name, info.OrtValueType)
		}
		out[i] = TensorInfo{Name: info.Name, Type: elementTypeOf(info.DataType), Shape: []int64(info.Dimensions.Clone())}
	}
	return out, nil
}

func names(infos []TensorInfo) []string {
	out := make([]string, len(infos))
	for i, info := range infos {
		out[i] = info.Name
	}
	return out
}

// Name returns the name the session was created with.
func (s *Session) Name() string { return s.name }

// Inputs returns the model's inputs in the model's order.
func (s *Session) Inputs() []TensorInfo { return cloneInfos(s.inputs) }

// Outputs returns the model's outputs in the model's order.
func (s *Session) Outputs() []TensorInfo { return cloneInfos(s.outputs) }

func cloneInfos(infos []TensorInfo) []TensorInfo {
	out := make([]TensorInfo, len(infos))
	for i, info := range infos {
		info.Shape = append([]int64(nil), info.Shape...)
		out[i] = info
	}
	return out
}

// Close releases the model once the calls running on it have returned. Later calls return
// ErrReleased. Calling it again does nothing.
func (s *Session) Close() error {
	err := s.destroy()
	s.runtime.forget(s)
	return err
}

func (s *Session) destroy() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ort == nil {
		return nil
	}
	err := s.ort.Destroy()
	s.ort = nil
	return err
}

// Run feeds every model input from inputs (by name) and returns every model output by name.
//
// ctx is checked before the model starts, and a ctx that ends during the pass terminates it
// through ONNX Runtime's run options: the error then wraps ctx's. This is what lets a server
// keep its shutdown promise while a large batch is on the CPU.
func (s *Session) Run(ctx context.Context, inputs map[string]Tensor) (map[string]Tensor, error) {
	return s.runShaped(ctx, inputs, nil)
}

// runShaped is Run with the shapes of float16 outputs known in advance (shapes, by name):
// those are allocated here, because the binding's copy of a float16 output ONNX Runtime
// allocated takes half its bytes.
func (s *Session) runShaped(ctx context.Context, inputs map[string]Tensor, shapes map[string][]int64) (map[string]Tensor, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("engine: session %q: not run: %w", s.name, err)
	}
	if err := s.checkInputs(inputs); err != nil {
		return nil, fmt.Errorf("engine: session %q: %w: %w", s.name, ErrInvalidInput, err)
	}
	release, err := s.hold()
	if err != nil {
		return nil, err
	}
	defer release()
	values := make([]ort.Value, len(s.inputs))
	defer destroyAll(values)
	for i, info := range s.inputs {
		v, err := inputs[info.Name].toORT()
		if err != nil {
			return nil, s.runError(err)
		}
		values[i] = v
	}
	outs, err := s.run(ctx, values, shapes)
	if err != nil {
		return nil, err
	}
	defer destroyAll(outs)
	result := make(map[string]Tensor, len(outs))
	for i, info := range s.outputs {
		if result[info.Name], err = fromORT(info.Name, outs[i]); err != nil {
			return nil, fmt.Errorf("engine: session %q: %w", s.name, err)
		}
	}
	return result, nil
}

func (s *Session) checkInputs(inputs map[string]Tensor) error {
	var missing []string
	for _, info := range s.inputs {
		t, ok := inputs[info.Name]
		if !ok {
			missing = append(missing, info.Name)
			continue
		}
		if err := t.fits(info); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing inputs %s", strings.Join(missing, ", "))
	}
	if len(inputs) != len(s.inputs) {
		var unknown []string
		for name := range inputs {
			if !s.hasInput(name) {
				unknown = append(unknown, name)
			}
		}
		sort.Strings(unknown)
		return fmt.Errorf("the model has no inputs named %s", strings.Join(unknown, ", "))
	}
	return nil
}

func (s *Session) hasInput(name string) bool {
	for _, info := range s.inputs {
		if info.Name == name {
			return true
		}
	}
	return false
}

// hold keeps the session (and with it ONNX Runtime) open until release is called. Every call
// holds it from its first tensor to its last: even releasing a tensor calls into the library.
func (s *Session) hold() (release func(), err error) {
	s.mu.RLock()
	if s.ort == nil {
		s.mu.RUnlock()
		return nil, fmt.Errorf("engine: session %q: %w", s.name, ErrReleased)
	}
	return s.mu.RUnlock, nil
}

// run executes the model on values in the model's input order and returns every output, which
// the caller destroys. The caller holds the session. When ctx can end, the pass runs with its
// own run options, whose terminate flag is raised if ctx ends before the pass does.
func (s *Session) run(ctx context.Context, values []ort.Value, shapes map[string][]int64) ([]ort.Value, error) {
	outs := make([]ort.Value, len(s.outputs)) // nil entries: ONNX Runtime allocates them
	for i, info := range s.outputs {
		if info.Type != ElementFloat16 {
			continue
		}
		shape, ok := shapes[info.Name]
		n, sized := elements(shape)
		if !ok || !sized {
			destroyAll(outs)
			return nil, fmt.Errorf("engine: session %q: output %q is float16, whose shape must be known before the run", s.name, info.Name)
		}
		v, err := ort.NewCustomDataTensor(ort.Shape(shape), make([]byte, 2*n), ort.TensorElementDataTypeFloat16)
		if err != nil {
			destroyAll(outs)
			return nil, s.runError(err)
		}
		outs[i] = v
	}
	var err error
	if ctx.Done() == nil {
		err = s.ort.Run(values, outs)
	} else {
		err = s.runStoppable(ctx, values, outs)
	}
	if err != nil {
		destroyAll(outs)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("engine: session %q: run stopped: %w", s.name, ctx.Err())
		}
		return nil, s.runError(err)
	}
	return outs, nil
}

func (s *Session) runStoppable(ctx context.Context, values, outs []ort.Value) error {
	opts, err := ort.NewRunOptions()
	if err != nil {
		return err
	}
	raised := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(raised)
		_ = opts.Terminate()
	})
	err = s.ort.RunWithOptions(values, outs, opts)
	if !stop() {
		<-raised // the flag is being raised: the options must outlive that
	}
	_ = opts.Destroy()
	return err
}

var digits = regexp.MustCompile(`[0-9]+`)

// runError wraps a failure from ONNX Runtime. Its messages can quote tensor values (a Gather
// out of range names the offending token id), so every number in them is masked; the text
// that remains still names the failing operator.
func (s *Session) runError(err error) error {
	return fmt.Errorf("engine: session %q: onnxruntime: %s", s.name, digits.ReplaceAllString(err.Error(), "#"))
}

func destroyAll(values []ort.Value) {
	for _, v := range values {
		if v != nil {
			v.Destroy()
		}
	}
}
