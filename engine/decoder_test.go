package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

type lmGolden struct {
	Prompt    string  `json:"prompt"`
	PromptIDs []int64 `json:"prompt_ids"`
	Greedy    []int64 `json:"greedy_ids"`
}

func readLMGoldens(t testing.TB) []lmGolden {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "models", "testdata", "golden", "tiny-lm.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []lmGolden
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var g lmGolden
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

func tinyLM(t testing.TB) *Decoder {
	t.Helper()
	model, err := os.ReadFile(filepath.Join("..", "models", "tiny-lm", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := newTestRuntime(t, RuntimeOptions{IntraOpThreads: 1}).NewDecoder("tiny-lm", model, DecoderShape{Layers: 2, Heads: 4, HeadDim: 32, Vocab: 5000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// stepState carries one sequence's cache between steps, the way an unpaged decoder would: the
// present of one step is the past of the next.
type stepState struct{ past [][2][]float32 }

// greedy decodes n tokens after prompt with RunStep alone.
func greedy(t *testing.T, d *Decoder, prompt []int64, n int) []int64 {
	t.Helper()
	sh := d.Shape()
	var st stepState
	st.past = make([][2][]float32, sh.Layers)
	input, past := prompt, 0
	var out []int64
	for range n {
		step := &Step{Batch: 1, Past: past, Seq: len(input), IDs: input,
			Mask: ones(past + len(input)), Logits: make([]float32, len(input)*sh.Vocab),
			PastKV: st.past, Present: make([][2][]float32, sh.Layers)}
		for l := range sh.Layers {
			for k := range 2 {
				step.Present[l][k] = make([]float32, sh.Heads*(past+len(input))*sh.HeadDim)
			}
		}
		if err := d.RunStep(context.Background(), step); err != nil {
			t.Fatal(err)
		}
		next := argmax(step.Logits[(len(input)-1)*sh.Vocab:])
		out = append(out, next)
		st.past = step.Present
		past += len(input)
		input = []int64{next}
	}
	return out
}

func ones(n int) []int64 {
	m := make([]int64, n)
	for i := range m {
		m[i] = 1
	}
	return m
}

func argmax(v []float32) int64 {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return int64(best)
}

// TestDecoderGreedyMatchesTorch: the shipped tiny-lm, stepped with its cache through ONNX
// Runtime, continues every golden prompt with the ids torch chose.
func TestDecoderGreedyMatchesTorch(t *testing.T) {
	d := tinyLM(t)
	if sh := d.Shape(); sh != (DecoderShape{Layers: 2, Heads: 4, HeadDim: 32, Vocab: 5000}) {
		t.Fatalf("shape %+v", sh)
	}
	for _, g := range readLMGoldens(t) {
		got := greedy(t, d, g.PromptIDs, len(g.Greedy))
		for i := range g.Greedy {
			if got[i] != g.Greedy[i] {
				t.Fatalf("%q: greedy %v, torch %v", g.Prompt, got, g.Greedy)
			}
		}
	}
}

func TestDecoderRejectsBadSteps(t *testing.T) {
	d := tinyLM(t)
	err := d.RunStep(context.Background(), &Step{Batch: 1, Seq: 2, IDs: []int64{1}})
	if err == nil {
		t.Fatal("a step with too few ids ran")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.RunStep(ctx, &Step{}); err == nil {
		t.Fatal("a step ran after its context ended")
	}
}

// TestTerminatedStepFailsAndTheNextRuns: Terminate makes the step it lands on fail (here, the
// step right after it, as when it races the end of a hung one), and the flag comes down
// afterwards, so the following step runs and is right.
func TestTerminatedStepFailsAndTheNextRuns(t *testing.T) {
	d := tinyLM(t)
	g := readLMGoldens(t)[0]
	sh := d.Shape()
	step := func() *Step {
		st := &Step{Batch: 1, Seq: len(g.PromptIDs), IDs: g.PromptIDs, Mask: ones(len(g.PromptIDs)),
			Logits: make([]float32, len(g.PromptIDs)*sh.Vocab), PastKV: make([][2][]float32, sh.Layers),
			Present: make([][2][]float32, sh.Layers)}
		for l := range sh.Layers {
			for k := range 2 {
				st.Present[l][k] = make([]float32, sh.Heads*len(g.PromptIDs)*sh.HeadDim)
			}
		}
		return st
	}
	d.Terminate()
	if err := d.RunStep(context.Background(), step()); err == nil {
		t.Fatal("the step after Terminate ran")
	}
	st := step()
	if err := d.RunStep(context.Background(), st); err != nil {
		t.Fatalf("the next step: %v", err)
	}
	if next := argmax(st.Logits[(len(g.PromptIDs)-1)*sh.Vocab:]); next != g.Greedy[0] {
		t.Fatalf("after a terminated step: %d, torch %d", next, g.Greedy[0])
	}
}

// TestDecoderLayoutHoldsEachLayerOnce: a model directory whose present outputs name a layer
// its past inputs do not have (or name one twice, "01" beside "1") is refused when loaded,
// not indexed out of range by its first step.
func TestDecoderLayoutHoldsEachLayerOnce(t *testing.T) {
	ids := func(name string) TensorInfo {
		return TensorInfo{Name: name, Type: ElementInt64, Shape: []int64{-1, -1}}
	}
	cache := func(name string) TensorInfo {
		return TensorInfo{Name: name, Type: ElementFloat32, Shape: []int64{-1, 2, -1, 4}}
	}
	layout := func(past, present []string) error {
		s := &Session{inputs: []TensorInfo{ids(inputIDs), ids(inputMask)},
			outputs: []TensorInfo{{Name: outputLogits, Type: ElementFloat32, Shape: []int64{-1, -1, 16}}}}
		for _, n := range past {
			s.inputs = append(s.inputs, cache(pastPrefix+n))
		}
		for _, n := range present {
			s.outputs = append(s.outputs, cache(presentPrefix+n))
		}
		_, err := newDecoderLayout(s, DecoderShape{})
		return err
	}
	two := []string{"0.key", "0.value", "1.key", "1.value"}
	if err := layout(two, two); err != nil {
		t.Fatalf("a good layout: %v", err)
	}
	for name, present := range map[string][]string{
		"a layer past the last": {"0.key", "0.value", "5.key", "5.value"},
		"one layer twice":       {"0.key", "0.value", "0.key", "1.value"},
		"a layer spelt 01":      {"0.key", "0.value", "01.key", "1.value"},
	} {
		if err := layout(two, present); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}
