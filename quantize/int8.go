package quantize

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/sluice-serving/sluice/onnxpb"
)

// Version names the rewrite: a cached result made by another version is made again.
const Version = "int8-v3"

// Options tunes which products are rewritten. The zero value is the documented rule.
type Options struct {
	// MinColumns is the fewest output columns a weight needs to be rewritten (default 32).
	MinColumns int
	// ReduceRange stores the weights in seven bits (±63, twice each scale): a uint8 x int8
	// kernel that adds a pair of products in 16 bits (x86 without VNNI) then cannot saturate.
	// ForCPU sets it where that kernel is the one ONNX Runtime runs.
	ReduceRange bool
}

// Reason says why a weight-bearing product stayed in float32.
type Reason string

// The reasons a product keeps its float32 weights.
const (
	KeptOutputLayer Reason = "output_layer"  // nearest the scores: its error lands in them undamped
	KeptNarrow      Reason = "narrow"        // fewer than MinColumns output columns
	KeptNotFloat    Reason = "not_float32"   // the weight is another type (already quantized, fp16)
	KeptShape       Reason = "not_2d"        // the weight is not a matrix
	KeptExternal    Reason = "external_data" // the weight lives outside the graph's bytes
	KeptGemmForm    Reason = "gemm_form"     // a Gemm with alpha, beta or transA, or a bias of another shape
)

// Report counts what a rewrite did.
type Report struct {
	Quantized int            // products rewritten to int8
	Kept      map[Reason]int // products left in float32, by reason
	// FloatBytes and Int8Bytes are the weight bytes of the rewritten products before and
	// after (int8 values and per-column scales).
	FloatBytes, Int8Bytes int64
}

func (r Report) String() string {
	var kept []string
	for _, why := range []Reason{KeptOutputLayer, KeptNarrow, KeptNotFloat, KeptShape, KeptExternal, KeptGemmForm} {
		if n := r.Kept[why]; n > 0 {
			kept = append(kept, fmt.Sprintf("%d %s", n, why))
		}
	}
	s := fmt.Sprintf("%d products to int8 (weights %.1f MB to %.1f MB)", r.Quantized,
		float64(r.FloatBytes)/1e6, float64(r.Int8Bytes)/1e6)
	if len(kept) > 0 {
		s += ", kept in float32: " + strings.Join(kept, ", ")
	}
	return s
}

// ErrNotONNX is returned for bytes that do not decode as an ONNX model with a graph.
var ErrNotONNX = errors.New("quantize: not an ONNX model")

const (
	msDomain = "com.microsoft"
	qmatmul  = "DynamicQuantizeMatMul"
)

// Int8 rewrites model's weight-bearing float32 MatMul and Gemm nodes to ONNX Runtime's
// DynamicQuantizeMatMul: the weight becomes int8 with one symmetric scale per output column,
// and the activation is quantized to uint8 per tensor as each batch runs. A bias added
// straight after the product is folded into the node. Which products stay float32 is the
// package's rule (see the package documentation); Report says how many and why.
func Int8(model []byte, opts Options) (out []byte, rep Report, err error) {
	opts = opts.withDefaults()
	// A graph is the user's file: whatever shape it is in must come back as an error, not
	// take the server down with it.
	defer func() {
		if p := recover(); p != nil {
			out, rep, err = nil, Report{}, fmt.Errorf("%w: the graph could not be rewritten (%v)", ErrNotONNX, p)
		}
	}()
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(model, &m); err != nil {
		return nil, Report{}, fmt.Errorf("%w: %v", ErrNotONNX, err)
	}
	g := m.GetGraph()
	if g == nil {
		return nil, Report{}, fmt.Errorf("%w: no graph", ErrNotONNX)
	}
	rw := newRewrite(g, opts)
	rw.run()
	if rw.report.Quantized > 0 {
		addOpset(&m, msDomain, 1)
	}
	out, err = proto.MarshalOptions{Deterministic: true}.Marshal(&m)
	if err != nil {
		return nil, Report{}, fmt.Errorf("quantize: writing the graph: %w", err)
	}
	return out, rw.report, nil
}

func (o Options) limit() float64 {
	if o.ReduceRange {
		return 63
	}
	return 127
}

func (o Options) withDefaults() Options {
	if o.MinColumns <= 0 {
		o.MinColumns = 32
	}
	return o
}

type rewrite struct {
	g          *onnxpb.GraphProto
	opts       Options
	inits      map[string]*onnxpb.TensorProto
	producer   map[string]int // tensor name -> index of the node that writes it
	uses       map[string]int // tensor name -> how many node inputs (subgraphs too) read it
	graphOut   map[string]bool
	outputSide map[int]bool // products nearest the scores
	consts     map[string]constTensor
	quantized  map[string]quantized // weight name (and transposition) -> its int8 form
	dropped    map[int]bool         // nodes folded into a rewritten one
	names      map[string]bool      // every tensor name in the graph, for new ones to avoid
	rows       map[string]string    // a [1, N] Gemm bias -> its vector copy
	report     Report
	limit      float64 // the largest weight magnitude stored: 127, or 63 with ReduceRange
}

type quantized struct{ values, scales string }

func newRewrite(g *onnxpb.GraphProto, opts Options) *rewrite {
	rw := &rewrite{g: g, opts: opts, limit: opts.limit(), inits: map[string]*onnxpb.TensorProto{}, producer: map[string]int{},
		uses: map[string]int{}, graphOut: map[string]bool{}, outputSide: map[int]bool{},
		consts: map[string]constTensor{}, quantized: map[string]quantized{}, dropped: map[int]bool{},
		names: map[string]bool{}, rows: map[string]string{}, report: Report{Kept: map[Reason]int{}}}
	for _, t := range g.GetInitializer() {
		rw.inits[t.GetName()] = t
		rw.names[t.GetName()] = true
	}
	for i, n := range g.GetNode() {
		for _, o := range n.GetOutput() {
			rw.producer[o] = i
			rw.names[o] = true
		}
		countUses(n, rw.uses)
	}
	for _, o := range g.GetOutput() {
		rw.graphOut[o.GetName()] = true
	}
	for _, v := range append(slices.Clone(g.GetInput()), g.GetValueInfo()...) {
		rw.names[v.GetName()] = true
	}
	for _, n := range g.GetNode() {
		subgraphNames(n, rw.names)
	}
	rw.markOutputSide()
	return rw
}

// countUses counts every input a node reads, including what its subgraphs take from the
// enclosing scope (inputs of their nodes, and outputs that name an outer tensor directly), so
// a tensor an If branch needs is never folded away.
func countUses(n *onnxpb.NodeProto, uses map[string]int) {
	for _, in := range n.GetInput() {
		if in != "" {
			uses[in]++
		}
	}
	for _, a := range n.GetAttribute() {
		graphs := slices.Clone(a.GetGraphs())
		if a.GetG() != nil {
			graphs = append(graphs, a.GetG())
		}
		for _, sub := range graphs {
			local := map[string]bool{}
			for _, v := range sub.GetInput() {
				local[v.GetName()] = true
			}
			for _, t := range sub.GetInitializer() {
				local[t.GetName()] = true
			}
			for _, sn := range sub.GetNode() {
				countUses(sn, uses)
				for _, o := range sn.GetOutput() {
					local[o] = true
				}
			}
			for _, o := range sub.GetOutput() {
				if !local[o.GetName()] {
					uses[o.GetName()]++
				}
			}
		}
	}
}

// subgraphNames adds every name an If or Loop body defines, so a new outer name never
// shadows one of them.
func subgraphNames(n *onnxpb.NodeProto, names map[string]bool) {
	for _, a := range n.GetAttribute() {
		graphs := slices.Clone(a.GetGraphs())
		if a.GetG() != nil {
			graphs = append(graphs, a.GetG())
		}
		for _, sub := range graphs {
			for _, v := range append(slices.Clone(sub.GetInput()), sub.GetOutput()...) {
				names[v.GetName()] = true
			}
			for _, t := range sub.GetInitializer() {
				names[t.GetName()] = true
			}
			for _, sn := range sub.GetNode() {
				for _, o := range sn.GetOutput() {
					names[o] = true
				}
				subgraphNames(sn, names)
			}
		}
	}
}

// fresh returns base, or base with a number after it, whichever no tensor is named yet, and
// claims it.
func (rw *rewrite) fresh(base string) string {
	name := base
	for i := 2; rw.names[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	rw.names[name] = true
	return name
}

// weightInput is the initializer a product multiplies by, or "" when it has none: MatMul's
// second input, Gemm's B.
func (rw *rewrite) weightInput(n *onnxpb.NodeProto) string {
	if n.GetDomain() != "" && n.GetDomain() != "ai.onnx" {
		return ""
	}
	op := n.GetOpType()
	if (op != "MatMul" && op != "Gemm") || len(n.GetInput()) < 2 || len(n.GetOutput()) != 1 ||
		(op == "MatMul" && len(n.GetInput()) != 2) {
		return ""
	}
	if _, ok := rw.constant(n.GetInput()[0]); ok {
		return "" // a constant times an activation: not the layout dynamic quantization fits
	}
	if _, ok := rw.constant(n.GetInput()[1]); !ok {
		return ""
	}
	return n.GetInput()[1]
}

// markOutputSide walks back from each graph output that carries scores (every output but a
// decoder's present key/value tensors) and marks the first weight-bearing product on each
// path: the classifier head or language-model head, whose rounding error nothing downstream
// averages away.
func (rw *rewrite) markOutputSide() {
	var stack []string
	for _, o := range rw.g.GetOutput() {
		if !strings.HasPrefix(o.GetName(), "present") {
			stack = append(stack, o.GetName())
		}
	}
	seen := map[int]bool{}
	nodes := rw.g.GetNode()
	for len(stack) > 0 {
		name := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		i, ok := rw.producer[name]
		if !ok || seen[i] {
			continue
		}
		seen[i] = true
		if rw.weightInput(nodes[i]) != "" {
			rw.outputSide[i] = true
			continue
		}
		stack = append(stack, nodes[i].GetInput()...)
	}
}

func (rw *rewrite) run() {
	nodes := rw.g.GetNode()
	for i, n := range nodes {
		w := rw.weightInput(n)
		if w == "" {
			continue
		}
		c, _ := rw.constant(w)
		if why, ok := rw.rewriteNode(i, n, c); !ok {
			rw.report.Kept[why]++
		}
	}
	kept := nodes[:0]
	for i, n := range nodes {
		if !rw.dropped[i] {
			kept = append(kept, n)
		}
	}
	rw.g.Node = kept
	rw.dropUnused()
}

// rewriteNode replaces node i (a MatMul or Gemm by the constant w) with a
// DynamicQuantizeMatMul, or says why it stays.
func (rw *rewrite) rewriteNode(i int, n *onnxpb.NodeProto, w constTensor) (Reason, bool) {
	switch {
	case rw.outputSide[i]:
		return KeptOutputLayer, false
	case w.external:
		return KeptExternal, false
	case w.dtype != onnxpb.TensorProto_FLOAT:
		return KeptNotFloat, false
	case len(w.dims) != 2:
		return KeptShape, false
	}
	transposed, bias := false, ""
	if n.GetOpType() == "Gemm" {
		var ok bool
		if transposed, bias, ok = rw.gemmForm(n, w); !ok {
			return KeptGemmForm, false
		}
	}
	cols := w.dims[1]
	if transposed {
		cols = w.dims[0]
	}
	if cols < int64(rw.opts.MinColumns) {
		return KeptNarrow, false
	}
	q, err := rw.quantizeWeight(n.GetInput()[1], w, transposed)
	if err != nil {
		return KeptNotFloat, false // malformed data: leave the node as the model wrote it
	}
	output := n.GetOutput()[0]
	if bias == "" && n.GetOpType() == "MatMul" {
		if j, b, ok := rw.foldableBias(output, cols); ok {
			bias, output = b, rw.g.GetNode()[j].GetOutput()[0]
			rw.dropped[j] = true
		}
	}
	inputs := []string{n.GetInput()[0], q.values, q.scales}
	if bias != "" {
		inputs = append(inputs, "", bias)
	}
	name := n.GetName()
	if name == "" {
		name = output
	}
	rw.g.GetNode()[i] = &onnxpb.NodeProto{
		Name:      proto.String(name + "_int8"),
		OpType:    proto.String(qmatmul),
		Domain:    proto.String(msDomain),
		Input:     inputs,
		Output:    []string{output},
		DocString: proto.String("int8 form of " + n.GetOpType() + " " + n.GetName()),
	}
	rw.report.Quantized++
	return "", true
}

// gemmForm reads a Gemm that is a plain product plus an optional bias over the columns.
func (rw *rewrite) gemmForm(n *onnxpb.NodeProto, w constTensor) (transposed bool, bias string, ok bool) {
	for _, a := range n.GetAttribute() {
		switch a.GetName() {
		case "alpha", "beta":
			if a.GetF() != 1 {
				return false, "", false
			}
		case "transA":
			if a.GetI() != 0 {
				return false, "", false
			}
		case "transB":
			transposed = a.GetI() != 0
		}
	}
	if len(n.GetInput()) < 3 || n.GetInput()[2] == "" {
		return transposed, "", true
	}
	c, isInit := rw.inits[n.GetInput()[2]]
	if !isInit || isGraphInput(rw.g, c.GetName()) || c.GetDataType() != int32(onnxpb.TensorProto_FLOAT) {
		return false, "", false
	}
	cols := w.dims[1]
	if transposed {
		cols = w.dims[0]
	}
	dims := c.GetDims()
	if len(dims) == 0 || len(dims) > 2 || dims[len(dims)-1] != cols || (len(dims) == 2 && dims[0] != 1) {
		return false, "", false
	}
	if len(dims) == 2 { // [1, N]: the same numbers as a vector, made once however many share it
		if row, ok := rw.rows[c.GetName()]; ok {
			return transposed, row, true
		}
		flat := proto.Clone(c).(*onnxpb.TensorProto)
		flat.Name = proto.String(rw.fresh(c.GetName() + "_row"))
		flat.Dims = []int64{cols}
		rw.addInit(flat)
		rw.rows[c.GetName()] = flat.GetName()
		return transposed, flat.GetName(), true
	}
	return transposed, c.GetName(), true
}

// foldableBias finds the Add that only adds a float32 vector of cols to the product's output
// (the one node that reads it, and not a graph output), so the product can add it itself.
func (rw *rewrite) foldableBias(output string, cols int64) (node int, bias string, ok bool) {
	if rw.uses[output] != 1 || rw.graphOut[output] {
		return 0, "", false
	}
	for j, n := range rw.g.GetNode() {
		if n.GetOpType() != "Add" || n.GetDomain() != "" || len(n.GetInput()) != 2 {
			continue
		}
		var other string
		switch output {
		case n.GetInput()[0]:
			other = n.GetInput()[1]
		case n.GetInput()[1]:
			other = n.GetInput()[0]
		default:
			continue
		}
		b, isInit := rw.inits[other]
		if !isInit || b.GetDataType() != int32(onnxpb.TensorProto_FLOAT) || len(b.GetDims()) != 1 || b.GetDims()[0] != cols {
			return 0, "", false
		}
		return j, other, true
	}
	return 0, "", false
}

// quantizeWeight adds the weight's int8 values ([rows, cols], transposed first when asked)
// and its per-column scales as initializers, once per weight however many products share it.
func (rw *rewrite) quantizeWeight(name string, w constTensor, transposed bool) (quantized, error) {
	key := name
	if transposed {
		key += "^T"
	}
	if q, ok := rw.quantized[key]; ok {
		return q, nil
	}
	vals, err := w.values()
	if err != nil {
		return quantized{}, err
	}
	rows, cols := int(w.dims[0]), int(w.dims[1])
	at := func(r, c int) float32 { return vals[r*cols+c] }
	if transposed {
		rows, cols = cols, rows
		at = func(r, c int) float32 { return vals[c*rows+r] }
	}
	scales := make([]float32, cols)
	for c := range cols {
		var peak float32
		for r := range rows {
			peak = max(peak, float32(math.Abs(float64(at(r, c)))))
		}
		scales[c] = 1
		if peak > 0 {
			scales[c] = peak / float32(rw.limit)
		}
	}
	q := make([]byte, rows*cols)
	for r := range rows {
		for c := range cols {
			v := math.RoundToEven(float64(at(r, c) / scales[c]))
			q[r*cols+c] = byte(int8(max(-rw.limit, min(rw.limit, v))))
		}
	}
	sb := make([]byte, 4*cols)
	for c, s := range scales {
		binary.LittleEndian.PutUint32(sb[4*c:], math.Float32bits(s))
	}
	base := name + "_int8"
	if transposed {
		base += "_t"
	}
	qz := quantized{values: rw.fresh(base), scales: rw.fresh(base + "_scale")}
	rw.addInit(&onnxpb.TensorProto{Name: proto.String(qz.values), DataType: proto.Int32(int32(onnxpb.TensorProto_INT8)),
		Dims: []int64{int64(rows), int64(cols)}, RawData: q})
	rw.addInit(&onnxpb.TensorProto{Name: proto.String(qz.scales), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
		Dims: []int64{int64(cols)}, RawData: sb})
	rw.report.FloatBytes += int64(4 * rows * cols)
	rw.report.Int8Bytes += int64(rows*cols + 4*cols)
	rw.quantized[key] = qz
	return qz, nil
}

func (rw *rewrite) addInit(t *onnxpb.TensorProto) {
	rw.g.Initializer = append(rw.g.Initializer, t)
	rw.inits[t.GetName()] = t
}

// dropUnused removes what nothing reads any more: nodes that only fed a rewritten weight
// (the Cast and Mul that widened it), the float32 weights themselves, and the value
// descriptions of folded outputs.
func (rw *rewrite) dropUnused() {
	var used map[string]bool
	for {
		used = map[string]bool{}
		for name := range rw.graphOut {
			used[name] = true
		}
		for _, n := range rw.g.GetNode() {
			u := map[string]int{}
			countUses(n, u)
			for name := range u {
				used[name] = true
			}
		}
		nodes := rw.g.Node[:0]
		for _, n := range rw.g.GetNode() {
			if slices.ContainsFunc(n.GetOutput(), func(o string) bool { return used[o] }) {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) == len(rw.g.GetNode()) {
			break
		}
		rw.g.Node = nodes
	}
	inits := rw.g.Initializer[:0]
	for _, t := range rw.g.Initializer {
		if used[t.GetName()] || isGraphInput(rw.g, t.GetName()) {
			inits = append(inits, t)
		}
	}
	rw.g.Initializer = inits
	infos := rw.g.ValueInfo[:0]
	for _, v := range rw.g.ValueInfo {
		if used[v.GetName()] {
			infos = append(infos, v)
		}
	}
	rw.g.ValueInfo = infos
}

func isGraphInput(g *onnxpb.GraphProto, name string) bool {
	for _, in := range g.GetInput() {
		if in.GetName() == name {
			return true
		}
	}
	return false
}

func addOpset(m *onnxpb.ModelProto, domain string, version int64) {
	for _, o := range m.GetOpsetImport() {
		if o.GetDomain() == domain {
			return
		}
	}
	m.OpsetImport = append(m.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: proto.String(domain), Version: proto.Int64(version)})
}
