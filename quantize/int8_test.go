package quantize

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/sluice-serving/sluice/onnxpb"
)

// A small graph in the shapes the rule cares about:
//
//	x ─MatMul(W1)─Add(b1)─ h ─MatMul(W2 as float16, widened by Cast)─ g ─Relu─ r ─Gemm(W3ᵀ, c3)─ logits
//
// W1 and W2 are hidden products (rewritten, W1 with its bias folded in); the Gemm is the
// output layer (kept).
func testGraph(t *testing.T, rng *rand.Rand) (*onnxpb.ModelProto, map[string][]float32) {
	t.Helper()
	weights := map[string][]float32{}
	w := func(name string, dims ...int64) *onnxpb.TensorProto {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(rng.NormFloat64()) * (1 + float32(i%7)) // columns of different ranges
		}
		weights[name] = vals
		return floatTensor(name, vals, dims...)
	}
	w2 := w("W2", 64, 48)
	half := make([]byte, 2*len(weights["W2"]))
	for i, v := range weights["W2"] {
		binary.LittleEndian.PutUint16(half[2*i:], floatToHalf(v))
		weights["W2"][i] = halfToFloat(floatToHalf(v)) // what the graph really holds
	}
	w2.Name, w2.DataType, w2.RawData = proto.String("W2.fp16"), proto.Int32(int32(onnxpb.TensorProto_FLOAT16)), half
	g := &onnxpb.GraphProto{
		Name:        proto.String("test"),
		Initializer: []*onnxpb.TensorProto{w("W1", 32, 64), w("b1", 64), w2, w("W3", 5, 48), w("c3", 5)},
		Input:       []*onnxpb.ValueInfoProto{valueInfo("x", 0, 32)},
		Output:      []*onnxpb.ValueInfoProto{valueInfo("logits", 0, 5)},
		Node: []*onnxpb.NodeProto{
			node("MatMul", "mm1", []string{"x", "W1"}, "h0"),
			node("Add", "add1", []string{"h0", "b1"}, "h"),
			node("Cast", "widen", []string{"W2.fp16"}, "W2", intAttr("to", int64(onnxpb.TensorProto_FLOAT))),
			node("MatMul", "mm2", []string{"h", "W2"}, "g"),
			node("Relu", "relu", []string{"g"}, "r"),
			node("Gemm", "head", []string{"r", "W3", "c3"}, "logits", intAttr("transB", 1)),
		},
	}
	return &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(14)}}}, weights
}

func TestInt8RewritesHiddenProductsAndKeepsTheHead(t *testing.T) {
	m, weights := testGraph(t, rand.New(rand.NewPCG(1, 2)))
	src, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out, rep, err := Int8(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Quantized != 2 || rep.Kept[KeptOutputLayer] != 1 || len(rep.Kept) != 1 {
		t.Fatalf("report %+v, want 2 rewritten and the head kept", rep)
	}
	var q onnxpb.ModelProto
	if err := proto.Unmarshal(out, &q); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, n := range q.GetGraph().GetNode() {
		ops = append(ops, n.GetOpType())
	}
	if want := []string{qmatmul, qmatmul, "Relu", "Gemm"}; !slices.Equal(ops, want) {
		t.Fatalf("nodes %v, want %v (Add folded, Cast gone)", ops, want)
	}
	first := q.GetGraph().GetNode()[0]
	if want := []string{"x", "W1_int8", "W1_int8_scale", "", "b1"}; !slices.Equal(first.GetInput(), want) || first.GetOutput()[0] != "h" {
		t.Errorf("first product reads %v and writes %v, want %v and h", first.GetInput(), first.GetOutput(), want)
	}
	inits := map[string]*onnxpb.TensorProto{}
	for _, in := range q.GetGraph().GetInitializer() {
		inits[in.GetName()] = in
	}
	for _, gone := range []string{"W1", "W2.fp16"} {
		if inits[gone] != nil {
			t.Errorf("the float weight %s is still in the graph", gone)
		}
	}
	for _, kept := range []string{"W3", "c3", "b1"} {
		if inits[kept] == nil {
			t.Errorf("%s is gone; the head and the folded bias still need it", kept)
		}
	}
	// Each column's values come back within half a step of that column's scale.
	for name, dims := range map[string][2]int{"W1": {32, 64}, "W2": {64, 48}} {
		vals, err := decode(inits[name+"_int8"])
		if err != nil {
			t.Fatal(err)
		}
		scales, err := decode(inits[name+"_int8_scale"])
		if err != nil {
			t.Fatal(err)
		}
		rows, cols := dims[0], dims[1]
		if len(scales) != cols {
			t.Fatalf("%s: %d scales for %d columns", name, len(scales), cols)
		}
		for r := range rows {
			for c := range cols {
				orig, back := weights[name][r*cols+c], vals[r*cols+c]*scales[c]
				if d := math.Abs(float64(orig - back)); d > float64(scales[c])/2+1e-6 {
					t.Fatalf("%s[%d,%d]: %v came back as %v (scale %v)", name, r, c, orig, back, scales[c])
				}
			}
		}
	}
	if !slices.ContainsFunc(q.GetOpsetImport(), func(o *onnxpb.OperatorSetIdProto) bool { return o.GetDomain() == msDomain }) {
		t.Error("the com.microsoft opset is not imported")
	}
}

// With ReduceRange every weight is stored within ±63 (a kernel that adds pairs of uint8 x
// int8 products in 16 bits cannot saturate: 2 x 255 x 63 < 32767), each column's largest at
// the bound, and comes back within half of its step, which is twice the full range's.
func TestInt8ReduceRangeKeepsSevenBits(t *testing.T) {
	m, weights := testGraph(t, rand.New(rand.NewPCG(1, 2)))
	src, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := Int8(src, Options{ReduceRange: true})
	if err != nil {
		t.Fatal(err)
	}
	var q onnxpb.ModelProto
	if err := proto.Unmarshal(out, &q); err != nil {
		t.Fatal(err)
	}
	inits := map[string]*onnxpb.TensorProto{}
	for _, in := range q.GetGraph().GetInitializer() {
		inits[in.GetName()] = in
	}
	rows, cols := 32, 64
	raw := inits["W1_int8"].GetRawData()
	scales, err := decode(inits["W1_int8_scale"])
	if err != nil {
		t.Fatal(err)
	}
	for c := range cols {
		peak := 0
		for r := range rows {
			v := int(int8(raw[r*cols+c]))
			if v < -63 || v > 63 {
				t.Fatalf("W1[%d,%d] is stored as %d, outside seven bits", r, c, v)
			}
			peak = max(peak, v, -v)
			if d := math.Abs(float64(weights["W1"][r*cols+c] - float32(v)*scales[c])); d > float64(scales[c])/2+1e-6 {
				t.Fatalf("W1[%d,%d]: %v came back as %v", r, c, weights["W1"][r*cols+c], float32(v)*scales[c])
			}
		}
		if peak != 63 {
			t.Fatalf("column %d's largest weight is stored as %d, not at the bound", c, peak)
		}
	}
}

func TestInt8KeepsNarrowProductsAndTransposesGemm(t *testing.T) {
	vals := normals(rand.New(rand.NewPCG(3, 4)))
	wt := vals(40 * 16) // Gemm's B stored [N=40, K=16], transB
	g := &onnxpb.GraphProto{
		Initializer: []*onnxpb.TensorProto{floatTensor("Wt", wt, 40, 16), floatTensor("c", vals(40), 1, 40),
			floatTensor("narrow", vals(40*8), 40, 8), floatTensor("head", vals(8*3), 8, 3)},
		Input:  []*onnxpb.ValueInfoProto{valueInfo("x", 0, 16)},
		Output: []*onnxpb.ValueInfoProto{valueInfo("y", 0, 3)},
		Node: []*onnxpb.NodeProto{
			node("Gemm", "g", []string{"x", "Wt", "c"}, "a", intAttr("transB", 1)),
			node("MatMul", "n", []string{"a", "narrow"}, "b"),
			node("MatMul", "h", []string{"b", "head"}, "y"),
		},
	}
	src, _ := proto.Marshal(&onnxpb.ModelProto{Graph: g})
	out, rep, err := Int8(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Quantized != 1 || rep.Kept[KeptNarrow] != 1 || rep.Kept[KeptOutputLayer] != 1 {
		t.Fatalf("report %v, want the Gemm rewritten, the 8-column product narrow and the head kept", rep)
	}
	var q onnxpb.ModelProto
	if err := proto.Unmarshal(out, &q); err != nil {
		t.Fatal(err)
	}
	n := q.GetGraph().GetNode()[0]
	if n.GetOpType() != qmatmul || len(n.GetInput()) != 5 || n.GetInput()[4] != "c_row" {
		t.Fatalf("the Gemm became %s %v, want a product with the bias as a vector", n.GetOpType(), n.GetInput())
	}
	inits := map[string]*onnxpb.TensorProto{}
	for _, in := range q.GetGraph().GetInitializer() {
		inits[in.GetName()] = in
	}
	qw, scales := inits[n.GetInput()[1]], inits[n.GetInput()[2]]
	if qw == nil || scales == nil || !slices.Equal(qw.GetDims(), []int64{16, 40}) {
		t.Fatalf("the int8 weight is %v, want the transpose [16 40]", qw.GetDims())
	}
	qv, _ := decode(qw)
	sv, _ := decode(scales)
	for k := range 16 {
		for c := range 40 {
			if d := math.Abs(float64(wt[c*16+k] - qv[k*40+c]*sv[c])); d > float64(sv[c])/2+1e-6 {
				t.Fatalf("[%d,%d]: %v came back as %v", k, c, wt[c*16+k], qv[k*40+c]*sv[c])
			}
		}
	}
}

// TestInt8ResolvesScaledInt8Weights: a weight stored as int8 with a float16 step per column
// (Cast, Cast, Mul; models/train's compact form) is read through its nodes, requantized to the
// same int8 values, and the widening nodes go.
func TestInt8ResolvesScaledInt8Weights(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	q8 := make([]byte, 48*64)
	for i := range q8 {
		q8[i] = byte(int8(rng.IntN(255) - 127))
	}
	for c := range 64 { // every column reaches ±127, as the recipe's steps make it
		q8[c] = 127
	}
	step := make([]byte, 2*64)
	for c := range 64 {
		binary.LittleEndian.PutUint16(step[2*c:], floatToHalf(0.001*float32(c+1)))
	}
	g := &onnxpb.GraphProto{
		Initializer: []*onnxpb.TensorProto{
			{Name: proto.String("w.q8"), DataType: proto.Int32(int32(onnxpb.TensorProto_INT8)), Dims: []int64{48, 64}, RawData: q8},
			{Name: proto.String("w.q8step"), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT16)), Dims: []int64{1, 64}, RawData: step},
			floatTensor("head", make([]float32, 64*3), 64, 3)},
		Input:  []*onnxpb.ValueInfoProto{valueInfo("x", 0, 48)},
		Output: []*onnxpb.ValueInfoProto{valueInfo("y", 0, 3)},
		Node: []*onnxpb.NodeProto{
			node("Cast", "a", []string{"w.q8"}, "w.q8f", intAttr("to", int64(onnxpb.TensorProto_FLOAT))),
			node("Cast", "b", []string{"w.q8step"}, "w.stepf", intAttr("to", int64(onnxpb.TensorProto_FLOAT))),
			node("Mul", "c", []string{"w.q8f", "w.stepf"}, "w"),
			node("MatMul", "m", []string{"x", "w"}, "h"),
			node("MatMul", "out", []string{"h", "head"}, "y"),
		},
	}
	src, _ := proto.Marshal(&onnxpb.ModelProto{Graph: g})
	out, rep, err := Int8(src, Options{})
	if err != nil || rep.Quantized != 1 {
		t.Fatalf("%v %v, want the product rewritten", rep, err)
	}
	var q onnxpb.ModelProto
	if err := proto.Unmarshal(out, &q); err != nil {
		t.Fatal(err)
	}
	if n := len(q.GetGraph().GetNode()); n != 2 {
		t.Fatalf("%d nodes, want the product and the head (the Casts and Mul gone)", n)
	}
	weight := q.GetGraph().GetNode()[0].GetInput()[1]
	found := false
	for _, in := range q.GetGraph().GetInitializer() {
		if in.GetName() == weight {
			found = true
			if !slices.Equal(in.GetRawData(), q8) {
				t.Error("requantizing an int8-stored weight changed its values")
			}
		}
	}
	if !found {
		t.Fatalf("the product reads %q, which is no initializer", weight)
	}
}

// TestInt8KeepsWhatSubgraphsReturn: an If branch that returns the product's own output (an
// outer name) keeps that name alive; the bias is not folded over it.
func TestInt8KeepsWhatSubgraphsReturn(t *testing.T) {
	vals := normals(rand.New(rand.NewPCG(11, 12)))
	branch := func(out string) *onnxpb.AttributeProto {
		return &onnxpb.AttributeProto{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(),
			G: &onnxpb.GraphProto{Name: proto.String("b"), Output: []*onnxpb.ValueInfoProto{valueInfo(out, 0, 64)}}}
	}
	elseBranch := branch("h")
	elseBranch.Name = proto.String("else_branch")
	g := &onnxpb.GraphProto{
		Initializer: []*onnxpb.TensorProto{floatTensor("W", vals(32*64), 32, 64), floatTensor("b", vals(64), 64)},
		Input:       []*onnxpb.ValueInfoProto{valueInfo("x", 0, 32), {Name: proto.String("cond")}},
		Output:      []*onnxpb.ValueInfoProto{valueInfo("y", 0, 64)},
		Node: []*onnxpb.NodeProto{
			node("MatMul", "m", []string{"x", "W"}, "h0"),
			node("Add", "a", []string{"h0", "b"}, "h"),
			{OpType: proto.String("If"), Name: proto.String("if"), Input: []string{"cond"}, Output: []string{"y"},
				Attribute: []*onnxpb.AttributeProto{branch("h0"), elseBranch}},
		},
	}
	src, _ := proto.Marshal(&onnxpb.ModelProto{Graph: g})
	out, _, err := Int8(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var q onnxpb.ModelProto
	if err := proto.Unmarshal(out, &q); err != nil {
		t.Fatal(err)
	}
	produced := map[string]bool{}
	for _, n := range q.GetGraph().GetNode() {
		for _, o := range n.GetOutput() {
			produced[o] = true
		}
	}
	if !produced["h0"] || !produced["h"] {
		t.Fatalf("a name a branch returns is gone: produced %v", produced)
	}
}

// TestInt8NamesAvoidSubgraphs: a name an If body defines is not given to a new outer tensor.
func TestInt8NamesAvoidSubgraphs(t *testing.T) {
	body := &onnxpb.GraphProto{Name: proto.String("b"), Output: []*onnxpb.ValueInfoProto{valueInfo("W_int8", 0, 4)},
		Node: []*onnxpb.NodeProto{node("Relu", "r", []string{"z"}, "W_int8")}}
	g := &onnxpb.GraphProto{
		Initializer: []*onnxpb.TensorProto{floatTensor("W", make([]float32, 32*64), 32, 64), floatTensor("head", make([]float32, 64*3), 64, 3)},
		Input:       []*onnxpb.ValueInfoProto{valueInfo("x", 0, 32), valueInfo("z", 0, 4), {Name: proto.String("cond")}},
		Output:      []*onnxpb.ValueInfoProto{valueInfo("y", 0, 3), valueInfo("w", 0, 4)},
		Node: []*onnxpb.NodeProto{node("MatMul", "m", []string{"x", "W"}, "h"), node("MatMul", "o", []string{"h", "head"}, "y"),
			{OpType: proto.String("If"), Name: proto.String("if"), Input: []string{"cond"}, Output: []string{"w"},
				Attribute: []*onnxpb.AttributeProto{{Name: proto.String("then_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: body},
					{Name: proto.String("else_branch"), Type: onnxpb.AttributeProto_GRAPH.Enum(), G: body}}}},
	}
	src, _ := proto.Marshal(&onnxpb.ModelProto{Graph: g})
	out, rep, err := Int8(src, Options{})
	if err != nil || rep.Quantized != 1 {
		t.Fatalf("%v %v", rep, err)
	}
	var q onnxpb.ModelProto
	if err := proto.Unmarshal(out, &q); err != nil {
		t.Fatal(err)
	}
	if w := q.GetGraph().GetNode()[0].GetInput()[1]; w == "W_int8" {
		t.Fatalf("the int8 weight took %q, which the If body defines", w)
	}
}

// TestInt8RefusesMalformedWeights: shapes that lie about the data are errors, not crashes,
// and names already in the graph are not reused.
func TestInt8RefusesMalformedWeights(t *testing.T) {
	for _, dims := range [][]int64{{-64, 64}, {1 << 40, 64}, {64, 64}} {
		w := floatTensor("W", make([]float32, 8), dims...)
		g := &onnxpb.GraphProto{Initializer: []*onnxpb.TensorProto{w, floatTensor("head", make([]float32, 64*3), 64, 3)},
			Output: []*onnxpb.ValueInfoProto{valueInfo("y", 0, 3)},
			Node:   []*onnxpb.NodeProto{node("MatMul", "m", []string{"x", "W"}, "h"), node("MatMul", "o", []string{"h", "head"}, "y")}}
		src, _ := proto.Marshal(&onnxpb.ModelProto{Graph: g})
		if _, rep, err := Int8(src, Options{}); err != nil || rep.Quantized != 0 {
			t.Errorf("dims %v: %v %v, want the product left as it is", dims, rep, err)
		}
	}
	// A graph already holding W_int8 (and a float input of that name) gets other names.
	g := &onnxpb.GraphProto{Initializer: []*onnxpb.TensorProto{floatTensor("W", make([]float32, 32*64), 32, 64),
		floatTensor("W_int8", make([]float32, 4), 4), floatTensor("head", make([]float32, 64*3), 64, 3)},
		Output: []*onnxpb.ValueInfoProto{valueInfo("y", 0, 3), valueInfo("z", 0, 4)},
		Node: []*onnxpb.NodeProto{node("MatMul", "m", []string{"x", "W"}, "h"), node("MatMul", "o", []string{"h", "head"}, "y"),
			node("Relu", "r", []string{"W_int8"}, "z")}}
	src, _ := proto.Marshal(&onnxpb.ModelProto{Graph: g})
	out, rep, err := Int8(src, Options{})
	if err != nil || rep.Quantized != 1 {
		t.Fatalf("%v %v", rep, err)
	}
	var q onnxpb.ModelProto
	if err := proto.Unmarshal(out, &q); err != nil {
		t.Fatal(err)
	}
	seen := map[string]onnxpb.TensorProto_DataType{}
	for _, in := range q.GetGraph().GetInitializer() {
		if _, ok := seen[in.GetName()]; ok {
			t.Errorf("two initializers named %s", in.GetName())
		}
		seen[in.GetName()] = onnxpb.TensorProto_DataType(in.GetDataType())
	}
	// The float W_int8 stays, the int8 weight takes the next free name and W, now unread, is
	// gone: the loop above saw the whole rewritten graph, not an empty one.
	want := map[string]onnxpb.TensorProto_DataType{"W_int8": onnxpb.TensorProto_FLOAT, "W_int8_2": onnxpb.TensorProto_INT8,
		"W_int8_scale": onnxpb.TensorProto_FLOAT, "head": onnxpb.TensorProto_FLOAT}
	if !maps.Equal(seen, want) {
		t.Errorf("initializers %v, want %v", seen, want)
	}
	var reads []string
	if n := q.GetGraph().GetNode(); len(n) > 0 {
		reads = n[0].GetInput()
	}
	if len(reads) < 2 || reads[1] != "W_int8_2" {
		t.Errorf("the int8 product reads %v, want W_int8_2", reads)
	}
	// An initializer that is also a graph input may be fed another value: not a constant.
	g = &onnxpb.GraphProto{Initializer: []*onnxpb.TensorProto{floatTensor("W", make([]float32, 32*64), 32, 64),
		floatTensor("head", make([]float32, 64*3), 64, 3)},
		Input:  []*onnxpb.ValueInfoProto{valueInfo("x", 0, 32), valueInfo("W", 32, 64)},
		Output: []*onnxpb.ValueInfoProto{valueInfo("y", 0, 3)},
		Node:   []*onnxpb.NodeProto{node("MatMul", "m", []string{"x", "W"}, "h"), node("MatMul", "o", []string{"h", "head"}, "y")}}
	src, _ = proto.Marshal(&onnxpb.ModelProto{Graph: g})
	if _, rep, err := Int8(src, Options{}); err != nil || rep.Quantized != 0 {
		t.Errorf("a weight that is a graph input: %v %v, want it left alone", rep, err)
	}
}

// TestInt8TakesAGraphThatReadsItsOwnOutput: a Cast that reads its own output, or a Mul and a
// Cast that read each other's, as a weight ends in "not a constant", not in a recursion that
// overflows the stack (a fatal error no recover catches: the server would go down).
func TestInt8TakesAGraphThatReadsItsOwnOutput(t *testing.T) {
	head := floatTensor("head", make([]float32, 64*3), 64, 3)
	to := intAttr("to", int64(onnxpb.TensorProto_FLOAT))
	for name, nodes := range map[string][]*onnxpb.NodeProto{
		"a Cast of itself":       {node("Cast", "c", []string{"w"}, "w", to)},
		"a Mul and a Cast round": {node("Mul", "m", []string{"a", "s"}, "b"), node("Cast", "c", []string{"b"}, "a", to)},
	} {
		g := &onnxpb.GraphProto{Initializer: []*onnxpb.TensorProto{head, floatTensor("s", []float32{1}, 1)},
			Output: []*onnxpb.ValueInfoProto{valueInfo("y", 0, 3)},
			Node: append(nodes, node("MatMul", "p", []string{"x", nodes[len(nodes)-1].GetOutput()[0]}, "h"),
				node("MatMul", "o", []string{"h", "head"}, "y"))}
		src, _ := proto.Marshal(&onnxpb.ModelProto{Graph: g})
		if _, rep, err := Int8(src, Options{}); err != nil || rep.Quantized != 0 {
			t.Errorf("%s: %v %v, want the product left as it is", name, rep, err)
		}
	}
}

func TestInt8RefusesWhatIsNotAModel(t *testing.T) {
	if _, _, err := Int8([]byte("not a protobuf at all \xff\xff"), Options{}); !errors.Is(err, ErrNotONNX) {
		t.Fatalf("err %v, want ErrNotONNX", err)
	}
	if _, _, err := Int8(nil, Options{}); !errors.Is(err, ErrNotONNX) {
		t.Fatalf("empty input: err %v, want ErrNotONNX", err)
	}
}

func TestCacheReusesVerifiesAndRebuilds(t *testing.T) {
	m, _ := testGraph(t, rand.New(rand.NewPCG(5, 6)))
	src, _ := proto.Marshal(m)
	dir := t.TempDir()
	c, err := NewCache(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.Int8("m", src)
	if err != nil || first.Outcome != Rewritten {
		t.Fatalf("first load: %v %v, want rewritten", first.Outcome, err)
	}
	again, err := c.Int8("m", src)
	if err != nil || again.Outcome != Cached || !slices.Equal(again.ONNX, first.ONNX) || again.Report.Quantized != 2 {
		t.Fatalf("second load: %v %v (%d bytes, report %v), want the same bytes from the cache", again.Outcome, err, len(again.ONNX), again.Report)
	}
	// A flipped byte in the entry: rebuilt, and the rebuilt entry is the rewrite's.
	data, _ := os.ReadFile(first.Path)
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(first.Path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fixed, err := c.Int8("m", src)
	if err != nil || fixed.Outcome != Rebuilt || fixed.Why == nil || !slices.Equal(fixed.ONNX, first.ONNX) {
		t.Fatalf("after corruption: %v %v (why %v), want rebuilt to the same bytes", fixed.Outcome, err, fixed.Why)
	}
	if after, _ := c.Int8("m", src); after.Outcome != Cached {
		t.Fatalf("after the rebuild: %v, want cached", after.Outcome)
	}
	// Another source never meets this entry.
	m.Graph.Name = proto.String("changed")
	other, _ := proto.Marshal(m)
	if res, _ := c.Int8("m2", other); res.Outcome != Rewritten || res.Path == first.Path {
		t.Fatalf("another source: %v at %s, want its own entry", res.Outcome, res.Path)
	}
	// A sidecar that does not parse is a damaged entry too.
	if err := os.WriteFile(first.Path+".json", []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, _ := c.Int8("m", src); res.Outcome != Rebuilt {
		t.Fatalf("torn sidecar: %v, want rebuilt", res.Outcome)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestCacheThatCannotWriteStillAnswers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c, err := NewCache(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The directory replaced by a file: no write can land there, whoever runs the test.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := testGraph(t, rand.New(rand.NewPCG(7, 8)))
	src, _ := proto.Marshal(m)
	res, err := c.Int8("m", src)
	if err != nil || res.Outcome != Unstored || res.Why == nil || len(res.ONNX) == 0 {
		t.Fatalf("%v %v (why %v), want the rewrite, unstored", res.Outcome, err, res.Why)
	}
}

func TestHalfToFloat(t *testing.T) {
	for _, c := range []struct {
		bits uint16
		want float32
	}{{0x3c00, 1}, {0xc000, -2}, {0x3555, 0.33325195}, {0x0001, 5.9604645e-08}, {0x7bff, 65504}, {0x8000, float32(math.Copysign(0, -1))}} {
		if got := halfToFloat(c.bits); got != c.want || math.Signbit(float64(got)) != math.Signbit(float64(c.want)) {
			t.Errorf("halfToFloat(%#04x) = %v, want %v", c.bits, got, c.want)
		}
	}
	if !math.IsInf(float64(halfToFloat(0x7c00)), 1) || !math.IsNaN(float64(halfToFloat(0x7e00))) {
		t.Error("infinity or NaN not kept")
	}
}

// floatToHalf rounds to the nearest binary16 (normal range only, which is all the tests use).
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	frac := b & 0x7fffff
	if exp <= 0 {
		return sign
	}
	h := uint32(exp)<<10 | frac>>13
	if frac&0x1fff > 0x1000 || (frac&0x1fff == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}

// normals returns a source of n standard normal values at a time.
func normals(rng *rand.Rand) func(n int) []float32 {
	return func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
}

func floatTensor(name string, vals []float32, dims ...int64) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: dims, RawData: raw}
}

func valueInfo(name string, dims ...int64) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		if d == 0 {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}
		} else {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Shape: shape}}}}
}

func node(op, name string, in []string, out string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: in, Output: []string{out}, Attribute: attrs}
}

func intAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

// TestTheRewriteIsPinned: the rewrite of a fixed graph is these bytes. A cache entry is
// reused on Version alone, so a change that moves them must bump Version (then update the
// hash here): an entry of the old rewrite would otherwise be served as the new one.
func TestTheRewriteIsPinned(t *testing.T) {
	m, _ := testGraph(t, rand.New(rand.NewPCG(1, 2)))
	src, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := Int8(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const want = "f6752d0a78a80b843fd4b034e25ff80246e54376f201129f397bb2127af65dda"
	if sum := sha256.Sum256(out); hex.EncodeToString(sum[:]) != want {
		t.Fatalf("the rewrite of the fixed graph is %x; if it changed on purpose, bump Version (%s) and put the new hash here", sum, Version)
	}
}

// TestCacheRemovesWhatAKilledWriteLeft: a temporary file older than the bound, as a process
// killed mid-write leaves (the size of a graph each time), is removed, and so is an entry
// named as releases before slots named them, with its sidecar and notes; a temporary file
// younger (a write under way in another process) and other files are kept.
func TestCacheRemovesWhatAKilledWriteLeft(t *testing.T) {
	dir := t.TempDir()
	c, err := NewCache(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	old := "0123456789abcdef0123456789abcdef.int8.onnx" // as releases before slots named an entry
	for name, age := range map[string]time.Duration{".tmp-a.int8.onnx-1": 2 * time.Hour, ".tmp-b.int8.onnx-2": time.Minute,
		"c.int8.onnx": 48 * time.Hour, old: time.Minute, old + ".json": time.Minute, old + ".agreement.json": time.Minute} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.RemoveAbandoned(now.Add(-time.Hour)); n != 4 {
		t.Fatalf("removed %d files, want 4", n)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{".tmp-b.int8.onnx-2", "c.int8.onnx"}) {
		t.Fatalf("left %v", names)
	}
}

// TestCacheKeepsOneEntryAModel: a model's new source (or a new rewrite) replaces its entry,
// sidecar and the notes kept beside it, so that upgrades do not fill the disk; another
// model's entry, and the same model's under other options, stay.
func TestCacheKeepsOneEntryAModel(t *testing.T) {
	m, _ := testGraph(t, rand.New(rand.NewPCG(9, 10)))
	v1, _ := proto.Marshal(m)
	m.Graph.Name = proto.String("v2")
	v2, _ := proto.Marshal(m)
	dir := t.TempDir()
	c, err := NewCache(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reduced, err := NewCache(dir, Options{ReduceRange: true})
	if err != nil {
		t.Fatal(err)
	}
	store := func(c *Cache, model string, src []byte) Result {
		t.Helper()
		res, err := c.Int8(model, src)
		if err != nil || res.Outcome != Rewritten {
			t.Fatalf("%s: %v %v, want rewritten", model, res.Outcome, err)
		}
		return res
	}
	first := store(c, "a", v1)
	if err := os.WriteFile(first.Path+".agreement.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	store(c, "b", v1)
	store(reduced, "a", v1)
	upgraded := store(c, "a", v2)
	if upgraded.Path == first.Path {
		t.Fatal("a new source took the old entry's name")
	}
	for _, gone := range []string{first.Path, first.Path + ".json", first.Path + ".agreement.json"} {
		if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want removed", filepath.Base(gone), err)
		}
	}
	for _, kept := range []struct {
		c     *Cache
		model string
		src   []byte
	}{{c, "b", v1}, {reduced, "a", v1}, {c, "a", v2}} {
		if res, err := kept.c.Int8(kept.model, kept.src); err != nil || res.Outcome != Cached {
			t.Errorf("%s (reduced range %v): %v %v, want cached", kept.model, kept.c.opts.ReduceRange, res.Outcome, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 6 {
		t.Errorf("%d files left, want three entries and their sidecars: %v", len(left), left)
	}
	// A process killed after storing an entry, before removing the one it replaced: the next
	// load from the cache removes that.
	left := map[string][]byte{}
	for _, f := range []string{upgraded.Path, upgraded.Path + ".json"} {
		if left[f], err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	store(c, "a", v1)
	for f, data := range left {
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := c.Int8("a", v1); err != nil || res.Outcome != Cached {
		t.Fatalf("%v %v, want cached", res.Outcome, err)
	}
	if _, err := os.Stat(upgraded.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the entry a killed process left: %v, want removed", err)
	}
}
