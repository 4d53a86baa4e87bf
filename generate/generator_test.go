package generate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/models"
)

// newTinyLM serves the shipped tiny-lm through a real runner.
func newTinyLM(t *testing.T) (*Generator, *models.Model) {
	t.Helper()
	m, err := models.Load(models.Embedded(), "tiny-lm")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := engine.NewRuntime(engine.RuntimeOptions{IntraOpThreads: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Skipf("ONNX Runtime: %v", err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	c := m.Config
	dec, err := rt.NewDecoder(m.Name, m.ONNX, engine.DecoderShape{Layers: c.NumLayers, Heads: c.NumHeads, HeadDim: c.HeadDim, Vocab: c.VocabSize})
	if err != nil {
		t.Fatal(err)
	}
	sh := dec.Shape()
	pool, err := kvcache.NewPool(kvcache.Config{Blocks: 128, Layers: sh.Layers, Heads: sh.Heads, HeadDim: sh.HeadDim, MaxSeqLen: c.MaxPositionEmbeddings})
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.NewRunner(m.Name, dec, pool, engine.RunnerConfig{MaxRunning: 8, MaxStepTokens: 2048, QueueSize: 16,
		OutBuffer: 16, StallTimeout: time.Minute, MaxPositions: c.MaxPositionEmbeddings}, clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.Start(ctx)
	t.Cleanup(func() { cancel(); _ = r.Close(context.Background()) })
	g, err := New(m.Name, r, m.Tokenizer, Config{EOS: c.EOSTokenID, MaxPositions: c.MaxPositionEmbeddings, DefaultMaxNewTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	return g, m
}

func readAll(t *testing.T, s *Stream) (string, []int64, Event) {
	t.Helper()
	var text strings.Builder
	var ids []int64
	for {
		ev, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ev.HasToken {
			text.WriteString(ev.Text)
			ids = append(ids, ev.ID)
		}
		if ev.Done {
			return text.String(), ids, ev
		}
	}
}

type golden struct {
	Prompt string  `json:"prompt"`
	Greedy []int64 `json:"greedy_ids"`
}

// TestGreedyTextFollowsTheGoldens: greedy generation reproduces torch's ids up to the end of
// sequence, stops there (eos_token), and its text is the decoded continuation.
func TestGreedyTextFollowsTheGoldens(t *testing.T) {
	g, m := newTinyLM(t)
	f, err := os.Open(filepath.Join("..", "models", "testdata", "golden", "tiny-lm.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var gd golden
		if err := json.Unmarshal(sc.Bytes(), &gd); err != nil {
			t.Fatal(err)
		}
		s, err := g.Generate(context.Background(), admission.Interactive, gd.Prompt, Params{MaxNewTokens: len(gd.Greedy)})
		if err != nil {
			t.Fatal(err)
		}
		text, ids, last := readAll(t, s)
		want := gd.Greedy
		finish := FinishLength
		for i, id := range gd.Greedy {
			if id == m.Config.EOSTokenID {
				want, finish = gd.Greedy[:i+1], FinishEOS
				break
			}
		}
		if len(ids) != len(want) || last.Finish != finish {
			t.Fatalf("%q: ids %v (finish %s), want %v (%s)", gd.Prompt, ids, last.Finish, want, finish)
		}
		for i := range want {
			if ids[i] != want[i] {
				t.Fatalf("%q: ids %v, want %v", gd.Prompt, ids, want)
			}
		}
		prompt := m.Tokenizer.Encode(gd.Prompt, false).IDs
		full := m.Tokenizer.Decode(append(prompt, want...), true)
		if wantText := strings.TrimPrefix(full, m.Tokenizer.Decode(prompt, true)); text != wantText {
			t.Fatalf("%q: text %q, want %q", gd.Prompt, text, wantText)
		}
	}
}

func TestStopSequenceAndSeed(t *testing.T) {
	g, _ := newTinyLM(t)
	// The first golden prompt continues "behalf of Dr. ...": stop at "of".
	s, err := g.Generate(context.Background(), admission.Interactive, "The patient was started on", Params{MaxNewTokens: 16, Stop: []string{" of"}})
	if err != nil {
		t.Fatal(err)
	}
	text, _, last := readAll(t, s)
	if last.Finish != FinishStopSequence || !strings.HasSuffix(text, " of") {
		t.Fatalf("text %q finish %s, want it to end at the stop sequence", text, last.Finish)
	}
	sampled := func(seed uint64) string {
		s, err := g.Generate(context.Background(), admission.Interactive, "She was admitted to",
			Params{MaxNewTokens: 12, Sampling: Sampling{DoSample: true, Temperature: 1.5, Seed: seed}, SeedSet: true})
		if err != nil {
			t.Fatal(err)
		}
		text, _, _ := readAll(t, s)
		return text
	}
	if a, b := sampled(5), sampled(5); a != b {
		t.Fatalf("seed 5 twice: %q / %q", a, b)
	}
	if _, err := g.Generate(context.Background(), admission.Interactive, "   ", Params{}); !errors.Is(err, ErrEmptyPrompt) {
		t.Fatalf("blank prompt: %v", err)
	}
	if _, err := g.Generate(context.Background(), admission.Interactive, "x", Params{MaxNewTokens: 300}); !errors.Is(err, ErrTooLong) {
		t.Fatalf("too long: %v", err)
	}
}
