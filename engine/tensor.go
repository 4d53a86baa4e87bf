package engine

import (
	"fmt"
	"math"

	ort "github.com/yalue/onnxruntime_go"
)

// ElementType is the element type of a model input or output.
type ElementType int

const (
	// ElementOther is any type the engine has no name for.
	ElementOther ElementType = iota
	// ElementFloat32 is float; Run and RunEncoder return logits of this type.
	ElementFloat32
	// ElementFloat16 is float16, which Run cannot feed or return.
	ElementFloat16
	// ElementInt64 is int64, the type of token ids and masks.
	ElementInt64
	// ElementInt32 is int32, which Run cannot feed or return.
	ElementInt32
	// ElementBool is bool, which Run cannot feed or return.
	ElementBool
)

func (t ElementType) String() string {
	switch t {
	case ElementFloat32:
		return "float32"
	case ElementFloat16:
		return "float16"
	case ElementInt64:
		return "int64"
	case ElementInt32:
		return "int32"
	case ElementBool:
		return "bool"
	}
	return "other"
}

func elementTypeOf(t ort.TensorElementDataType) ElementType {
	switch t {
	case ort.TensorElementDataTypeFloat:
		return ElementFloat32
	case ort.TensorElementDataTypeFloat16:
		return ElementFloat16
	case ort.TensorElementDataTypeInt64:
		return ElementInt64
	case ort.TensorElementDataTypeInt32:
		return ElementInt32
	case ort.TensorElementDataTypeBool:
		return ElementBool
	}
	return ElementOther
}

// TensorInfo describes one input or output as the model declares it.
type TensorInfo struct {
	Name string
	Type ElementType
	// Shape has one entry per axis; -1 marks a dynamic axis (batch, sequence, ...).
	Shape []int64
}

// Tensor is a dense int64, int32 or float32 tensor for Session.Run. Exactly the slice matching
// Type holds the data, row-major, with as many elements as Shape multiplies to (zero is
// allowed, as for an empty KV cache). Run reads the slices in place while it runs. Outputs a
// model declares as float16 come back as float32.
type Tensor struct {
	Type    ElementType
	Shape   []int64
	Int64   []int64
	Int32   []int32
	Float32 []float32
}

// Int64Tensor returns an int64 tensor over data.
func Int64Tensor(shape []int64, data []int64) Tensor {
	return Tensor{Type: ElementInt64, Shape: shape, Int64: data}
}

// Int32Tensor returns an int32 tensor over data.
func Int32Tensor(shape []int64, data []int32) Tensor {
	return Tensor{Type: ElementInt32, Shape: shape, Int32: data}
}

// Float32Tensor returns a float32 tensor over data.
func Float32Tensor(shape []int64, data []float32) Tensor {
	return Tensor{Type: ElementFloat32, Shape: shape, Float32: data}
}

// fits checks t against what the model declares for the input, before ONNX Runtime sees it.
// Only sizes and names go into the error: the values are request data.
func (t Tensor) fits(info TensorInfo) error {
	if t.Type != ElementInt64 && t.Type != ElementInt32 && t.Type != ElementFloat32 {
		return fmt.Errorf("input %q: Run feeds only int64, int32 and float32 tensors, got %s", info.Name, t.Type)
	}
	if t.Type != info.Type {
		return fmt.Errorf("input %q wants %s, got %s", info.Name, info.Type, t.Type)
	}
	if err := checkShape(info, t.Shape); err != nil {
		return err
	}
	n, ok := elements(t.Shape)
	if !ok {
		return fmt.Errorf("input %q: shape %v has a negative axis or too many elements", info.Name, t.Shape)
	}
	have := len(t.Int64)
	switch t.Type {
	case ElementFloat32:
		have = len(t.Float32)
	case ElementInt32:
		have = len(t.Int32)
	}
	if int64(have) != n {
		return fmt.Errorf("input %q: shape %v needs %d elements, got %d", info.Name, t.Shape, n, have)
	}
	return nil
}

// checkShape compares a shape with the model's declared rank and fixed axes.
func checkShape(info TensorInfo, shape []int64) error {
	if len(shape) != len(info.Shape) {
		return fmt.Errorf("input %q has rank %d, got shape %v", info.Name, len(info.Shape), shape)
	}
	for i, want := range info.Shape {
		if want >= 0 && shape[i] != want {
			return fmt.Errorf("input %q: axis %d is fixed at %d, got %d", info.Name, i, want, shape[i])
		}
	}
	return nil
}

// elements multiplies out a shape; ok is false for a negative axis or an overflow.
func elements(shape []int64) (n int64, ok bool) {
	const limit = 1 << 40 // far above any real tensor, far below overflow
	n = 1
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		if d != 0 && n > limit/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// toORT wraps t's slice in an ONNX Runtime tensor without copying it.
func (t Tensor) toORT() (ort.Value, error) {
	switch t.Type {
	case ElementFloat32:
		return ort.NewTensor(ort.Shape(t.Shape), t.Float32)
	case ElementInt32:
		return ort.NewTensor(ort.Shape(t.Shape), t.Int32)
	}
	return ort.NewTensor(ort.Shape(t.Shape), t.Int64)
}

// fromORT copies an output ONNX Runtime produced into a Tensor.
func fromORT(name string, v ort.Value) (Tensor, error) {
	shape := []int64(v.GetShape())
	switch t := v.(type) {
	case *ort.Tensor[float32]:
		return Float32Tensor(shape, t.GetData()), nil
	case *ort.Tensor[int64]:
		return Int64Tensor(shape, t.GetData()), nil
	case *ort.Tensor[int32]:
		return Int32Tensor(shape, t.GetData()), nil
	case *ort.CustomDataTensor:
		if t.DataType() == ort.TensorElementDataTypeFloat16 {
			return Float32Tensor(shape, halfToFloat32(t.GetData())), nil
		}
	}
	return Tensor{}, fmt.Errorf("output %q has a type Run does not return (only float32, float16, int64 and int32)", name)
}

// halfToFloat32 widens IEEE 754 half-precision values (little-endian bytes) to float32.
func halfToFloat32(b []byte) []float32 {
	out := make([]float32, len(b)/2)
	for i := range out {
		h := uint32(b[2*i]) | uint32(b[2*i+1])<<8
		sign, exp, frac := h>>15, (h>>10)&0x1f, h&0x3ff
		var bits uint32
		switch {
		case exp == 0x1f: // infinity or NaN
			bits = sign<<31 | 0xff<<23 | frac<<13
		case exp != 0: // normal
			bits = sign<<31 | (exp+127-15)<<23 | frac<<13
		case frac == 0: // zero
			bits = sign << 31
		default: // subnormal: normalise
			e := uint32(127 - 15 + 1)
			for frac&0x400 == 0 {
				frac <<= 1
				e--
			}
			bits = sign<<31 | e<<23 | (frac&0x3ff)<<13
		}
		out[i] = math.Float32frombits(bits)
	}
	return out
}
