package quantize

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-serving/sluice/onnxpb"
)

// constTensor is a tensor the graph computes from initializers alone: an initializer, or one
// widened by Cast to float32 and scaled by Mul. That covers weights stored as float16 or as
// int8 with per-column steps (how models/train shrinks the shipped models) as well as plain
// float32 ones; values reads them as float32.
type constTensor struct {
	dims     []int64
	dtype    onnxpb.TensorProto_DataType
	external bool
	values   func() ([]float32, error)
}

// constant resolves name as a constTensor, remembering the answer either way.
func (rw *rewrite) constant(name string) (constTensor, bool) {
	if c, ok := rw.consts[name]; ok {
		return c, c.values != nil
	}
	// Not a constant while it resolves: a graph whose Cast or Mul reads its own output, at any
	// remove, ends there rather than in a recursion no recover catches.
	rw.consts[name] = constTensor{}
	c, ok := rw.resolve(name)
	if !ok {
		c = constTensor{}
	}
	rw.consts[name] = c
	return c, ok
}

func (rw *rewrite) resolve(name string) (constTensor, bool) {
	if isGraphInput(rw.g, name) {
		return constTensor{}, false // an initializer a caller may override is not a constant
	}
	if t, ok := rw.inits[name]; ok {
		return constTensor{dims: t.GetDims(), dtype: onnxpb.TensorProto_DataType(t.GetDataType()),
			external: t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL, values: func() ([]float32, error) { return decode(t) }}, true
	}
	i, ok := rw.producer[name]
	if !ok {
		return constTensor{}, false
	}
	n := rw.g.GetNode()[i]
	if n.GetDomain() != "" || len(n.GetOutput()) != 1 || len(n.GetInput()) == 0 {
		return constTensor{}, false
	}
	switch n.GetOpType() {
	case "Cast":
		in, ok := rw.constant(n.GetInput()[0])
		if !ok || len(n.GetAttribute()) != 1 || n.GetAttribute()[0].GetName() != "to" ||
			n.GetAttribute()[0].GetI() != int64(onnxpb.TensorProto_FLOAT) {
			return constTensor{}, false
		}
		in.dtype = onnxpb.TensorProto_FLOAT
		return in, true
	case "Mul":
		if len(n.GetInput()) != 2 {
			return constTensor{}, false
		}
		a, okA := rw.constant(n.GetInput()[0])
		b, okB := rw.constant(n.GetInput()[1])
		if !okA || !okB || a.dtype != onnxpb.TensorProto_FLOAT || b.dtype != onnxpb.TensorProto_FLOAT {
			return constTensor{}, false
		}
		dims, ok := broadcast2(a.dims, b.dims)
		// A scale multiplies a weight of its own size: a product that would be larger than
		// both (an outer product of two vectors) is no weight, and could be any size.
		if !ok || elements(dims) > max(elements(a.dims), elements(b.dims)) {
			return constTensor{}, false
		}
		return constTensor{dims: dims, dtype: onnxpb.TensorProto_FLOAT, external: a.external || b.external,
			values: func() ([]float32, error) { return multiply(a, b, dims) }}, true
	}
	return constTensor{}, false
}

func elements(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		if d < 0 || (d > 0 && n > math.MaxInt32/d) {
			return math.MaxInt64
		}
		n *= d
	}
	return n
}

// broadcast2 is numpy's broadcast of two shapes, for results of at most two dimensions.
func broadcast2(a, b []int64) ([]int64, bool) {
	if len(a) > 2 || len(b) > 2 {
		return nil, false
	}
	out := make([]int64, max(len(a), len(b)))
	for k := range out {
		da, db := dimFromEnd(a, len(out)-1-k), dimFromEnd(b, len(out)-1-k)
		switch {
		case da == db, db == 1:
			out[k] = da
		case da == 1:
			out[k] = db
		default:
			return nil, false
		}
	}
	return out, true
}

func dimFromEnd(dims []int64, k int) int64 {
	if k >= len(dims) {
		return 1
	}
	return dims[len(dims)-1-k]
}

func multiply(a, b constTensor, dims []int64) ([]float32, error) {
	av, err := a.values()
	if err != nil {
		return nil, err
	}
	bv, err := b.values()
	if err != nil {
		return nil, err
	}
	rows, cols := int64(1), dims[len(dims)-1]
	if len(dims) == 2 {
		rows = dims[0]
	}
	index := func(d []int64, r, c int64) int64 {
		var rr, cc int64
		if dimFromEnd(d, 1) > 1 {
			rr = r
		}
		if dimFromEnd(d, 0) > 1 {
			cc = c
		}
		return rr*dimFromEnd(d, 0) + cc
	}
	out := make([]float32, rows*cols)
	for r := range rows {
		for c := range cols {
			out[r*cols+c] = av[index(a.dims, r, c)] * bv[index(b.dims, r, c)]
		}
	}
	return out, nil
}

// decode reads an initializer's values as float32: float32, float16, int8 and uint8 data,
// from raw_data or the typed fields.
func decode(t *onnxpb.TensorProto) ([]float32, error) {
	typ := onnxpb.TensorProto_DataType(t.GetDataType())
	raw := t.GetRawData()
	// The element count is checked against the data the tensor holds before anything is
	// allocated, so a shape that lies (negative, huge) is an error, not a crash.
	n := int64(1)
	for _, d := range t.GetDims() {
		if d < 0 || (d > 0 && n > math.MaxInt32/d) {
			return nil, fmt.Errorf("quantize: a weight's shape %v is not a size", t.GetDims())
		}
		n *= d
	}
	held := int64(max(len(raw), len(t.GetFloatData()), len(t.GetInt32Data())))
	if n > held {
		return nil, errSize(t, n)
	}
	out := make([]float32, n)
	switch {
	case typ == onnxpb.TensorProto_FLOAT && raw == nil:
		if int64(len(t.GetFloatData())) != n {
			return nil, errSize(t, n)
		}
		copy(out, t.GetFloatData())
	case typ == onnxpb.TensorProto_FLOAT:
		if int64(len(raw)) != 4*n {
			return nil, errSize(t, n)
		}
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case typ == onnxpb.TensorProto_FLOAT16 && raw != nil:
		if int64(len(raw)) != 2*n {
			return nil, errSize(t, n)
		}
		for i := range out {
			out[i] = halfToFloat(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case (typ == onnxpb.TensorProto_INT8 || typ == onnxpb.TensorProto_UINT8) && raw != nil:
		if int64(len(raw)) != n {
			return nil, errSize(t, n)
		}
		for i, v := range raw {
			if typ == onnxpb.TensorProto_INT8 {
				out[i] = float32(int8(v))
			} else {
				out[i] = float32(v)
			}
		}
	case typ == onnxpb.TensorProto_FLOAT16 || typ == onnxpb.TensorProto_INT8 || typ == onnxpb.TensorProto_UINT8:
		// int32_data holds one value per entry (float16 as its bits).
		if int64(len(t.GetInt32Data())) != n {
			return nil, errSize(t, n)
		}
		for i, v := range t.GetInt32Data() {
			if typ == onnxpb.TensorProto_FLOAT16 {
				out[i] = halfToFloat(uint16(v))
			} else {
				out[i] = float32(v)
			}
		}
	default:
		return nil, fmt.Errorf("quantize: tensor of type %v is not read as a weight", typ)
	}
	return out, nil
}

func errSize(t *onnxpb.TensorProto, n int64) error {
	return fmt.Errorf("quantize: a weight's data does not hold the %d values of its shape %v", n, t.GetDims())
}

// halfToFloat widens an IEEE 754 binary16 value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}
