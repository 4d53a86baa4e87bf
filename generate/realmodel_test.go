package generate

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluice-serving/sluice/scheduler"
)

// The scheduler's promises on the real tiny-lm through ONNX Runtime, with torch's greedy ids
// as the goldens (the scheduler's own tests prove the same with a fake model).

type lmGolden struct {
	Prompt    string  `json:"prompt"`
	PromptIDs []int64 `json:"prompt_ids"`
	Greedy    []int64 `json:"greedy_ids"`
}

func readLMGoldens(t *testing.T) []lmGolden {
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

// argmaxChooser picks the highest score and never stops early.
type argmaxChooser struct{}

func (argmaxChooser) Choose(logits []float32) scheduler.Choice {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return scheduler.Choice{ID: int64(best)}
}

// greedyIDs submits every golden prompt at once and reads each stream's ids.
func greedyIDs(t *testing.T, s *scheduler.Scheduler, goldens []lmGolden) [][]int64 {
	t.Helper()
	var streams []*scheduler.Stream
	for _, g := range goldens {
		st, err := s.Submit(context.Background(), scheduler.Request{Prompt: g.PromptIDs, MaxNewTokens: len(g.Greedy), Chooser: argmaxChooser{}})
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st)
	}
	var out [][]int64
	for i, st := range streams {
		var ids []int64
		for {
			ev, err := st.Next(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if ev.HasToken() {
				ids = append(ids, ev.ID)
			}
			if ev.Done {
				if ev.Err != nil || ev.Finish != scheduler.FinishLength || ev.Index != len(goldens[i].Greedy) {
					t.Fatalf("%q: last event %+v", goldens[i].Prompt, ev)
				}
				break
			}
		}
		out = append(out, ids)
	}
	return out
}

// TestSchedulerBatchesMixedPromptsLikeTorch: the golden prompts, of different lengths, run
// together as one batch, each come out as torch's greedy ids.
func TestSchedulerBatchesMixedPromptsLikeTorch(t *testing.T) {
	_, _, s := newTinyLMWith(t, 128, nil)
	goldens := readLMGoldens(t)
	for i, ids := range greedyIDs(t, s, goldens) {
		if !slices.Equal(ids, goldens[i].Greedy) {
			t.Fatalf("%q batched: %v, torch %v", goldens[i].Prompt, ids, goldens[i].Greedy)
		}
	}
}

// TestPreemptedSequencesResumeLikeTorch: a pool too small for every sequence at once makes the
// scheduler preempt and recompute; every sequence still ends with torch's greedy ids.
func TestPreemptedSequencesResumeLikeTorch(t *testing.T) {
	reg := prometheus.NewRegistry()
	_, _, s := newTinyLMWith(t, 4, reg) // 64 positions for 5 sequences of ~20
	goldens := readLMGoldens(t)
	for i, ids := range greedyIDs(t, s, goldens) {
		if !slices.Equal(ids, goldens[i].Greedy) {
			t.Fatalf("%q: %v, torch %v", goldens[i].Prompt, ids, goldens[i].Greedy)
		}
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	preempted := 0.0
	for _, f := range fams {
		if f.GetName() == "sluice_generate_preemptions_total" {
			preempted = f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if preempted == 0 {
		t.Fatal("nothing was preempted: the pool was not short")
	}
}

// TestPrefixCacheServesASharedPromptExactly: the second of two sequences with the same
// 40-token prompt takes the first's full blocks from the cache, and generates the same ids.
func TestPrefixCacheServesASharedPromptExactly(t *testing.T) {
	_, _, s := newTinyLMWith(t, 128, nil)
	prompt := make([]int64, 40)
	for i := range prompt {
		prompt[i] = int64(600 + i)
	}
	g := []lmGolden{{Prompt: "ids 600-639", PromptIDs: prompt, Greedy: make([]int64, 8)}}
	first := greedyIDs(t, s, g)[0]
	second := greedyIDs(t, s, g)[0]
	if st := s.Pool().Stats(); st.Hits < 2 {
		t.Fatalf("prefix cache %+v, want the two full blocks of the prompt hit", st)
	}
	if !slices.Equal(first, second) {
		t.Fatalf("cached prompt generated %v, computed %v", second, first)
	}
}
