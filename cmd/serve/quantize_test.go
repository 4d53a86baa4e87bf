package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/onnxpb"
	"github.com/sluice-serving/sluice/quantize/gate"
)

func TestParseQuantize(t *testing.T) {
	t.Parallel()
	p, err := parseQuantize("pii=int8, tiny-lm=off")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, declared, want string }{
		{"pii", "", "int8"}, {"tiny-lm", "int8", "off"}, {"clinical-ner", "int8", "int8"}, {"clinical-ner", "", ""},
	} {
		if got, _ := p.modeFor(c.name, c.declared); got != c.want {
			t.Errorf("%s (config.json %q): %q, want %q", c.name, c.declared, got, c.want)
		}
	}
	if all, _ := parseQuantize("off"); func() string { m, _ := all.modeFor("pii", "int8"); return m }() != "off" {
		t.Error("SLUICE_QUANTIZE=off does not override config.json")
	}
	for _, bad := range []string{"int4", "pii=fp16", "=int8", "pii"} {
		if _, err := parseQuantize(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A name no served model has is a typo, refused at start (without SLUICE_MODELS_DIR).
	var logs bytes.Buffer
	if code := run(context.Background(), []string{"SLUICE_DEVICE=cpu", "SLUICE_GENERATE_MODEL=none", "SLUICE_QUANTIZE=piii=off,pii=int8"},
		&logs, &logs, nil); code == 0 || !strings.Contains(logs.String(), "SLUICE_QUANTIZE names piii") {
		t.Errorf("a misspelt model name: exit %d\n%s", code, logs.String())
	}
	if _, err := loadConfig([]string{"SLUICE_QUANTIZE=int4", "SLUICE_QUANTIZE_MIN_AGREEMENT=1.5"}, thisMachine()); err == nil ||
		!strings.Contains(err.Error(), "SLUICE_QUANTIZE ") || !strings.Contains(err.Error(), "SLUICE_QUANTIZE_MIN_AGREEMENT") {
		t.Errorf("both bad settings not reported: %v", err)
	}
}

// TestInt8RefusedOnCUDA: the variable asking for int8 on a GPU stops the start; a model's
// own config.json asking for it is served in float32 there.
func TestInt8RefusedOnCUDA(t *testing.T) {
	t.Parallel()
	p, _ := parseQuantize("pii=int8")
	if err := quantizeOnDevice(p, engine.DeviceCUDA); err == nil || !strings.Contains(err.Error(), "CPU only") {
		t.Errorf("int8 on CUDA: %v, want a refusal", err)
	}
	if err := quantizeOnDevice(p, engine.DeviceCPU); err != nil {
		t.Errorf("int8 on the CPU: %v", err)
	}
	off, _ := parseQuantize("")
	if err := quantizeOnDevice(off, engine.DeviceCUDA); err != nil {
		t.Errorf("no SLUICE_QUANTIZE on CUDA: %v", err)
	}
}

// TestInt8ThroughTheServer serves the shipped entity models as they ship (int8, asked for by
// their config.json): the answers equal the float32 server's, the next start reads the cache instead of rewriting
// (the log's outcomes are the count), and a damaged entry is rebuilt, not served.
func TestInt8ThroughTheServer(t *testing.T) {
	t.Parallel()
	texts := gate.Sample[:8]
	answers := func(srv *testServer) [][]servedEntity {
		var out [][]servedEntity
		for _, path := range []string{"/pii/extract", "/analyze"} {
			for _, text := range texts {
				status, body := srv.post(t, path, map[string]any{"text": text})
				if status != 200 {
					t.Fatalf("%s: status %d", path, status)
				}
				out = append(out, entitiesOf(t, body))
			}
		}
		return out
	}
	want := answers(startServer(t, "SLUICE_GENERATE_MODEL=none"))

	cache := t.TempDir()
	// SLUICE_QUANTIZE empty: each model's config.json decides, and both shipped ones say int8.
	env := []string{"SLUICE_GENERATE_MODEL=none", "SLUICE_QUANTIZE=", "SLUICE_QUANTIZE_CACHE_DIR=" + cache}
	outcomes := func(srv *testServer) map[string]int {
		counts := map[string]int{}
		for _, line := range strings.Split(srv.logs.String(), "\n") {
			if strings.Contains(line, "model runs with int8 matrix products") {
				for _, o := range []string{"rewritten", "cached", "rebuilt", "unstored"} {
					if strings.Contains(line, `"outcome":"`+o+`"`) {
						counts[o]++
					}
				}
			}
		}
		return counts
	}
	first := startServer(t, env...)
	if got := outcomes(first); !reflect.DeepEqual(got, map[string]int{"rewritten": 2}) {
		t.Fatalf("first start: %v, want both models rewritten\n%s", got, first.logs.String())
	}
	if got := answers(first); !reflect.DeepEqual(got, want) {
		t.Errorf("int8 answers differ from float32's:\n%v\n%v", got, want)
	}
	second := startServer(t, env...)
	if got := outcomes(second); !reflect.DeepEqual(got, map[string]int{"cached": 2}) {
		t.Fatalf("second start: %v, want both from the cache", got)
	}
	if n := strings.Count(second.logs.String(), `"measured_now":false`); n != 2 {
		t.Fatalf("second start: %d agreements read from the cache, want both", n)
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "*.int8.onnx"))
	if len(entries) != 2 {
		t.Fatalf("cache holds %v", entries)
	}
	data, _ := os.ReadFile(entries[0])
	data[len(data)/3] ^= 0x10
	if err := os.WriteFile(entries[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	third := startServer(t, env...)
	if got := outcomes(third); !reflect.DeepEqual(got, map[string]int{"cached": 1, "rebuilt": 1}) {
		t.Fatalf("after damaging an entry: %v, want it rebuilt", got)
	}
	if got := answers(third); !reflect.DeepEqual(got, want) {
		t.Errorf("answers after the rebuild differ from float32's")
	}
	// The rebuilt entry took its own place: still one entry a model, each with its notes.
	if files, _ := filepath.Glob(filepath.Join(cache, "*")); len(files) != 6 {
		t.Errorf("cache holds %v, want two entries, their sidecars and agreements", files)
	}
}

// TestEveryEncoderLayoutServesInInt8 serves each encoder layout with three products added in
// front of its output (an orthonormal lift to 64 wide, an orthogonal mix and the way back, so
// the float32 answer is unchanged): int8 rewrites the first two, keeps the output layer, and
// the served entities are the float32 layout's.
func TestEveryEncoderLayoutServesInInt8(t *testing.T) {
	t.Parallel()
	const text = "Patient Jonathan Smithers was admitted for review."
	want := []servedEntity{
		{Text: "Jonathan", Label: "first_name", Start: 8, End: 16},
		{Text: "Smithers", Label: "last_name", Start: 17, End: 25},
	}
	for _, family := range layoutFamilies {
		t.Run(family, func(t *testing.T) {
			dir := widenedLayout(t, family, false)
			srv := startServer(t, "SLUICE_MODELS_DIR="+dir, "SLUICE_PII_MODEL="+family, "SLUICE_ANALYZE_MODEL="+family,
				"SLUICE_GENERATE_MODEL=none", "SLUICE_QUANTIZE=int8", "SLUICE_QUANTIZE_CACHE_DIR="+t.TempDir())
			if !strings.Contains(srv.logs.String(), `"rewrite":"2 products to int8`) || !strings.Contains(srv.logs.String(), "1 output_layer") {
				t.Fatalf("the rewrite is not the one expected:\n%s", srv.logs.String())
			}
			for path, body := range map[string]map[string]any{"/pii/extract": {"text": text},
				"/analyze": {"text": text, "aggregation_strategy": "first"}} {
				status, body := srv.post(t, path, body)
				if status != 200 {
					t.Fatalf("%s status %d: %v", path, status, body)
				}
				if got := entitiesOf(t, body); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: %+v, want %+v", path, got, want)
				}
			}
		})
	}
}

// TestInt8GateRefusesADamagingRewrite: a layout whose mixing matrix has one huge row that
// the float32 model never reads (its input is always zero) is exact in float32 and ruined in
// int8 (the row sets every column's scale); the server refuses to start with it, names the
// threshold, and starts when the threshold is lowered, saying so.
func TestInt8GateRefusesADamagingRewrite(t *testing.T) {
	t.Parallel()
	dir := widenedLayout(t, "bert", true)
	base := []string{"SLUICE_MODELS_DIR=" + dir, "SLUICE_PII_MODEL=bert", "SLUICE_ANALYZE_MODEL=bert", "SLUICE_GENERATE_MODEL=none"}
	env := append(slices.Clone(base), "SLUICE_QUANTIZE=int8", "SLUICE_QUANTIZE_CACHE_DIR="+t.TempDir())
	var logs bytes.Buffer
	code := run(context.Background(), append(slices.Clone(env), "SLUICE_ADDR=127.0.0.1:0", "SLUICE_DEVICE=cpu", "SLUICE_INTRA_OP_THREADS=1",
		"SLUICE_DATA_DIR="+t.TempDir()),
		&logs, &logs, make(chan net.Addr, 1))
	if code == 0 || !strings.Contains(logs.String(), "SLUICE_QUANTIZE_MIN_AGREEMENT") || !strings.Contains(logs.String(), "serve it in float32") {
		t.Fatalf("exit %d, want a refusal naming the threshold:\n%s", code, logs.String())
	}
	srv := startServer(t, append(env, "SLUICE_QUANTIZE_MIN_AGREEMENT=0")...)
	if !strings.Contains(srv.logs.String(), "SLUICE_QUANTIZE_MIN_AGREEMENT is below its default") {
		t.Fatalf("a lowered threshold is not said:\n%s", srv.logs.String())
	}
	// Asked for by the model's own config.json instead, the same failure serves float32 and
	// says why: a machine whose int8 is poor still starts with the shipped models.
	cfgPath := filepath.Join(dir, "bert", "config.json")
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["sluice"] = map[string]any{"quantize": "int8"}
	raw, _ = json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	declared := startServer(t, append(slices.Clone(base), "SLUICE_QUANTIZE=", "SLUICE_QUANTIZE_CACHE_DIR="+t.TempDir())...)
	if !strings.Contains(declared.logs.String(), "the model runs in float32") {
		t.Fatalf("config.json's int8 under the threshold does not fall back to float32:\n%s", declared.logs.String())
	}
	status, body := declared.post(t, "/pii/extract", map[string]any{"text": "Patient Jonathan Smithers was admitted for review."})
	if status != 200 || len(entitiesOf(t, body)) != 2 {
		t.Fatalf("served after the fall back: %d %v", status, body)
	}
	// The float32 layout still answers exactly: the poison is int8's alone.
	float := startServer(t, base...)
	status, body = float.post(t, "/pii/extract", map[string]any{"text": "Patient Jonathan Smithers was admitted for review."})
	if status != 200 || len(entitiesOf(t, body)) != 2 {
		t.Fatalf("float32 widened layout: %d %v", status, body)
	}
}

func TestCheckModelInt8Report(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code := checkModel([]string{"-quantize", "int8", filepath.Join("..", "..", "models", "pii")}, nil, &out, io.Discard)
	report := out.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, report)
	}
	for _, want := range []string{"int8 rewrite: 8 products to int8", "kept in float32: 2 output_layer",
		"int8 sample: the built-in sample, 32 texts", "int8 agreement: float32 finds 84 entities, int8 84, 84 with the same label and span: agreement 1.0000",
		"int8 largest logit difference: 0.", "int8 verdict: agreement 1.0000 meets SLUICE_QUANTIZE_MIN_AGREEMENT 0.9900"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// Unasked, the check still compares the shipped model, since its config.json asks for int8.
	out.Reset()
	if code := checkModel([]string{filepath.Join("..", "..", "models", "pii")}, nil, &out, io.Discard); code != 0 ||
		!strings.Contains(out.String(), "int8: asked for by its config.json") || !strings.Contains(out.String(), "int8 verdict") {
		t.Errorf("unasked: exit %d:\n%s", code, out.String())
	}
	sample := filepath.Join(t.TempDir(), "sample.txt")
	if err := os.WriteFile(sample, []byte("Call Maria Lopez at (415) 555-0132.\n\nSeen on 03/14/2024.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := checkModel([]string{"-quantize", "int8", "-sample", sample, filepath.Join("..", "..", "models", "pii")}, nil, &out, io.Discard); code != 0 ||
		!strings.Contains(out.String(), "int8 sample: "+sample+", 2 texts") {
		t.Errorf("exit %d with a sample file:\n%s", code, out.String())
	}
	if code := checkModel([]string{"-quantize", "int4", "x"}, nil, io.Discard, io.Discard); code != 2 {
		t.Errorf("-quantize int4: exit %d, want a usage error", code)
	}
	// A generation model: next tokens compared, then built and run on the int8 graph. tiny-lm
	// falls under the default threshold (its card says so); with a lower one it passes.
	tiny := filepath.Join("..", "..", "models", "tiny-lm")
	out.Reset()
	if code := checkModel([]string{"-quantize", "int8", tiny}, nil, &out, io.Discard); code != 1 ||
		!strings.Contains(out.String(), "positions have the same most likely next token") {
		t.Errorf("tiny-lm at the default threshold: exit %d, want 1 with its next-token agreement:\n%s", code, out.String())
	}
	out.Reset()
	if code := checkModel([]string{"-quantize", "int8", tiny}, []string{"SLUICE_QUANTIZE_MIN_AGREEMENT=0.95"}, &out, io.Discard); code != 0 ||
		!strings.Contains(out.String(), "int8 generation: the rewritten graph built and generated through the server's path") ||
		!strings.Contains(out.String(), "WARNING: SLUICE_QUANTIZE_MIN_AGREEMENT is 0.9500") {
		t.Errorf("tiny-lm at 0.95: exit %d:\n%s", code, out.String())
	}
}

// widenedLayout copies an encoder layout and puts three products between its scores and its
// logits output: x·A (A: the labels' rows, orthonormal, lifted to 64 wide), ·W (orthogonal),
// ·V (Wᵀ·Aᵀ, back to the labels). In float32 that is the identity up to rounding. With
// poison, column 0 of A is zero, so the lifted scores never use W's row 0, and that row is
// set to 10,000: still the identity in float32, not in int8.
func widenedLayout(t *testing.T, family string, poison bool) string {
	t.Helper()
	src := filepath.Join("..", "..", "models", "testdata", "layouts", family)
	cfg, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		ID2Label map[string]string `json:"id2label"`
	}
	if err := json.Unmarshal(cfg, &c); err != nil || len(c.ID2Label) == 0 {
		t.Fatalf("config.json: %v", err)
	}
	root := t.TempDir()
	copyDir(t, src, filepath.Join(root, family), func(file string, data []byte) []byte {
		if file == "model.onnx" {
			return widen(t, data, len(c.ID2Label), poison)
		}
		return data
	})
	return root
}

func widen(t *testing.T, model []byte, labels int, poison bool) []byte {
	t.Helper()
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(model, &m); err != nil {
		t.Fatal(err)
	}
	g := m.GetGraph()
	out := g.GetOutput()[0].GetName()
	for _, n := range g.GetNode() {
		for i, o := range n.GetOutput() {
			if o == out {
				n.Output[i] = out + "_scores"
			}
		}
	}
	const wide = 64
	rng := rand.New(rand.NewPCG(42, uint64(labels)))
	first := 0
	if poison {
		first = 1 // A's rows live in the coordinates 1..63
	}
	a := orthonormalRows(rng, labels, wide, first)
	w := orthonormalRows(rng, wide, wide, 0)
	v := make([]float64, wide*labels) // V = Wᵀ·Aᵀ: V[i][l] = Σ_j W[j][i]·A[l][j]
	for i := range wide {
		for l := range labels {
			for j := range wide {
				v[i*labels+l] += w[j*wide+i] * a[l*wide+j]
			}
		}
	}
	if poison {
		for c := range wide {
			w[c] = 1e4
		}
	}
	l := int64(labels)
	g.Initializer = append(g.Initializer, f32Tensor("lift", a, l, wide), f32Tensor("mix", w, wide, wide),
		f32Tensor("back", v, wide, l))
	mm := func(name, in, weight, out string) *onnxpb.NodeProto {
		return &onnxpb.NodeProto{OpType: proto.String("MatMul"), Name: proto.String(name), Input: []string{in, weight}, Output: []string{out}}
	}
	g.Node = append(g.Node, mm("lift", out+"_scores", "lift", "lifted"), mm("mix", "lifted", "mix", "mixed"),
		mm("back", "mixed", "back", out))
	data, err := proto.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// orthonormalRows returns rows×cols (row-major) with orthonormal rows that are zero in the
// columns before first (Gram-Schmidt over random vectors).
func orthonormalRows(rng *rand.Rand, rows, cols, first int) []float64 {
	out := make([]float64, rows*cols)
	for r := range rows {
		row := out[r*cols : (r+1)*cols]
		for c := first; c < cols; c++ {
			row[c] = rng.NormFloat64()
		}
		for p := range r {
			prev := out[p*cols : (p+1)*cols]
			var dot float64
			for c := range cols {
				dot += row[c] * prev[c]
			}
			for c := range cols {
				row[c] -= dot * prev[c]
			}
		}
		var norm float64
		for _, x := range row {
			norm += x * x
		}
		for c := range row {
			row[c] /= math.Sqrt(norm)
		}
	}
	return out
}

func f32Tensor(name string, vals []float64, dims ...int64) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
	}
	return &onnxpb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), Dims: dims, RawData: raw}
}

// TestDecodersGenerateInInt8 serves generation models with past (tiny-lm and the Llama-shaped
// lm-gqa) in int8 through the paged KV cache and compares their greedy answers with torch's
// float32 ones: the rewrite must load, keep the language-model head, and leave the greedy
// path where the float32 model's is.
func TestDecodersGenerateInInt8(t *testing.T) {
	t.Parallel()
	layouts, err := filepath.Abs(filepath.Join("..", "..", "models", "testdata", "layouts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, goldens string
		cut           func([]int64) []int64 // where generation stops
		// share is the fewest answers in five that must equal torch's.
		share int
	}{
		{"tiny-lm", filepath.Join("..", "..", "models", "testdata", "golden", "tiny-lm.jsonl"), untilEOS, 4},
		// lm-gqa's random weights leave near ties at every position: with seven-bit weights
		// (ForCPU on x86 without VNNI) 2 of its 3 answers stay, with eight all 3.
		{"lm-gqa", filepath.Join(layouts, "lm-gqa", "greedy.jsonl"), func(ids []int64) []int64 { return ids }, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Their next-token agreement (tiny-lm 0.983, lm-gqa 0.952 with its random weights) is
			// under the default threshold; the gate's refusal is TestCheckModelInt8Report's.
			env := []string{"SLUICE_GENERATE_MODEL=" + tc.name, "SLUICE_QUANTIZE=" + tc.name + "=int8", "SLUICE_QUANTIZE_CACHE_DIR=" + t.TempDir(),
				"SLUICE_QUANTIZE_MIN_AGREEMENT=0.9"}
			if tc.name != "tiny-lm" {
				env = append(env, "SLUICE_MODELS_DIR="+layouts, "SLUICE_PII_MODEL=bert", "SLUICE_ANALYZE_MODEL=bert")
			}
			srv := startServer(t, env...)
			if !strings.Contains(srv.logs.String(), "model runs with int8 matrix products") || !strings.Contains(srv.logs.String(), `"measure":"next_tokens"`) {
				t.Fatalf("not rewritten:\n%s", srv.logs.String())
			}
			raw, err := os.ReadFile(tc.goldens)
			if err != nil {
				t.Fatal(err)
			}
			same, total := 0, 0
			for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
				var g lmGolden
				if err := json.Unmarshal(line, &g); err != nil {
					t.Fatal(err)
				}
				got, ok := greedyIDs(t, srv.url+"/generate", g.Prompt, len(g.Greedy))
				if !ok {
					continue
				}
				total++
				if slices.Equal(got, tc.cut(g.Greedy)) {
					same++
				}
			}
			// Rounding may move a near tie between two tokens, not the answers wholesale: one
			// answer in five may part from torch's (tiny-lm: 4 of 5 measured, lm-gqa 3 of 3).
			t.Logf("%s: %d of %d greedy answers equal torch's float32 ones", tc.name, same, total)
			if total == 0 || 5*same < tc.share*total {
				t.Errorf("%s: %d of %d greedy answers equal torch's float32 ones, want at least %d in five", tc.name, same, total, tc.share)
			}
		})
	}
}
