package generate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/scheduler"
	"github.com/sluice-serving/sluice/tokenizer"
)

// newTinyLM serves the shipped tiny-lm through a real scheduler.
func newTinyLM(t testing.TB) (*Generator, *models.Model) {
	t.Helper()
	g, m, _ := newTinyLMWith(t, 128, nil)
	return g, m
}

// newTinyLMWith is newTinyLM over a KV pool of the given blocks, with its scheduler, whose
// metrics go to reg (nil: none).
func newTinyLMWith(t testing.TB, blocks int, reg prometheus.Registerer) (*Generator, *models.Model, *scheduler.Scheduler) {
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
	pool, err := kvcache.NewPool(kvcache.Config{Blocks: blocks, Layers: sh.Layers, Heads: sh.Heads, HeadDim: sh.HeadDim, MaxSeqLen: c.MaxPositionEmbeddings})
	if err != nil {
		t.Fatal(err)
	}
	maxLen := min(c.MaxPositionEmbeddings, pool.MaxSequence())
	// As the server runs it: decode steps on the in-place graph (prefill on model.onnx).
	if err := dec.AddInPlaceDecode(m.DecodeInPlace, maxLen); err != nil {
		t.Fatal(err)
	}
	runner, err := engine.NewRunner(dec, pool.Blocks(), pool.BlockTokens())
	if err != nil {
		t.Fatal(err)
	}
	r, err := scheduler.New(m.Name, runner, pool, scheduler.Config{MaxRunning: 8, MaxStepTokens: 2048, QueueSize: 16,
		OutBuffer: 16, StallTimeout: time.Minute, MaxPositions: maxLen}, clock.Real(), scheduler.NewMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.Start(ctx)
	t.Cleanup(func() { cancel(); _ = r.Close(context.Background()) })
	g, err := New(m.Name, r, m.Tokenizer, Config{EOS: c.EOSTokenID, MaxPositions: maxLen, DefaultMaxNewTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	return g, m, r
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
	text, trimmed, last := readAllTrimmed(t, s)
	if last.Finish != FinishStopSequence || !strings.HasSuffix(text, " of") || trimmed != strings.TrimSuffix(text, " of") {
		t.Fatalf("text %q (trimmed %q) finish %s, want it to end at the stop sequence, trimmed without it", text, trimmed, last.Finish)
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

// readAllTrimmed reads a stream to its end: the text with stop sequences and without.
func readAllTrimmed(t *testing.T, s *Stream) (text, trimmed string, last Event) {
	t.Helper()
	var a, b strings.Builder
	for {
		ev, err := s.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ev.HasToken {
			a.WriteString(ev.Text)
			b.WriteString(ev.Trimmed)
		}
		if ev.Done {
			return a.String(), b.String(), ev
		}
	}
}

// TestTrimmedLeavesTheStopSequenceOut drives the chooser's stop search and the stream's
// release over token texts: what is released before the end never holds a piece of a stop
// sequence that later completes, and the whole is the text before the earliest stop.
func TestTrimmedLeavesTheStopSequenceOut(t *testing.T) {
	for _, c := range []struct {
		name   string
		stops  []string
		tokens []string
		want   string
		early  []string // what each event releases
	}{
		{"stop across tokens", []string{"END"}, []string{"ab", "cE", "N", "Dzz"}, "abc", []string{"", "ab", "c", ""}},
		{"earliest of two", []string{"cd", "b"}, []string{"a", "bcd"}, "a", []string{"", "a"}},
		{"no stop reached", []string{"XYZ"}, []string{"ab", "cd", "e"}, "abcde", []string{"", "ab", "cde"}},
		{"characters kept whole", []string{"xy"}, []string{"aé", "b"}, "aéb", []string{"a", "éb"}},
		{"no stops", nil, []string{"ab", "c"}, "abc", []string{"ab", "c"}},
		{"the last token releases what was held", []string{"XYZ"}, []string{"abcd", "e\uFFFD"}, "abcde\uFFFD", []string{"ab", "cde\uFFFD"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := &chooser{stops: c.stops}
			for _, s := range c.stops {
				ch.maxStop = max(ch.maxStop, len(s))
			}
			st := &Stream{c: ch}
			var got strings.Builder
			for i, text := range c.tokens {
				stop := len(c.stops) > 0 && ch.stopped(text)
				finish := Finish("")
				switch {
				case stop:
					finish = FinishStopSequence
				case i == len(c.tokens)-1:
					finish = FinishLength
				}
				out := st.trim(text, finish)
				if out != c.early[i] {
					t.Fatalf("event %d released %q, want %q", i, out, c.early[i])
				}
				got.WriteString(out)
				if stop {
					break
				}
			}
			if got.String() != c.want {
				t.Fatalf("trimmed %q, want %q", got.String(), c.want)
			}
		})
	}
}

// A length near the largest int is too long, not a sum that wraps past the check: the
// scheduler would have made a sequence of that capacity and panicked. Asked of the scheduler
// directly, it is refused there too.
func TestAHugeLengthIsTooLongNotAWrap(t *testing.T) {
	g, _, sched := newTinyLMWith(t, 128, nil)
	for _, n := range []int{math.MaxInt, math.MaxInt - 3, 1 << 62} {
		_, err := g.Generate(context.Background(), admission.Interactive, "The patient was started on", Params{MaxNewTokens: n})
		var long *TooLongError
		if !errors.As(err, &long) {
			t.Errorf("max new tokens %d: %v", n, err)
		}
	}
	_, err := sched.Submit(context.Background(), scheduler.Request{Prompt: []int64{5, 6}, MaxNewTokens: math.MaxInt,
		Chooser: greedyChooser{}, Priority: admission.Interactive})
	if !errors.Is(err, scheduler.ErrInvalidRequest) {
		t.Errorf("the scheduler took a huge length: %v", err)
	}
}

// TestAPromptTokenPastTheModelsRowsIsRefused: a tokenizer that added a token the model has
// no row for ("<extra>" at id 5000 of tiny-lm's 5000) gives the request that spells it
// ErrUnknownToken, where the step it ran in failed for every stream.
func TestAPromptTokenPastTheModelsRowsIsRefused(t *testing.T) {
	_, m, sched := newTinyLMWith(t, 128, nil)
	raw, err := fs.ReadFile(models.Embedded(), "tiny-lm/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	file["added_tokens"] = append(file["added_tokens"].([]any), map[string]any{"id": m.Config.VocabSize, "content": "<extra>",
		"single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false})
	raw, _ = json.Marshal(file)
	tok, err := tokenizer.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(m.Name, sched, tok, Config{EOS: m.Config.EOSTokenID, MaxPositions: 256, DefaultMaxNewTokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Generate(context.Background(), admission.Interactive, "The patient <extra> was", Params{MaxNewTokens: 2}); !errors.Is(err, ErrUnknownToken) {
		t.Fatalf("a prompt token past the vocabulary: %v", err)
	}
	s, err := g.Generate(context.Background(), admission.Interactive, "The patient was", Params{MaxNewTokens: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, last := readAll(t, s); last.Err != nil {
		t.Fatalf("a prompt within it: %v", last.Err)
	}
}

// TestMoreEndsOfSequenceEndAGeneration: a model whose eos_token_id is a list ends a generation
// at any of them (here, the third token tiny-lm's greedy answer takes).
func TestMoreEndsOfSequenceEndAGeneration(t *testing.T) {
	g, m, sched := newTinyLMWith(t, 128, nil)
	const prompt = "The patient was started on"
	s, err := g.Generate(context.Background(), admission.Interactive, prompt, Params{MaxNewTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	_, ids, _ := readAll(t, s)
	if len(ids) < 4 {
		t.Fatalf("the greedy answer is %d tokens", len(ids))
	}
	more, err := New(m.Name, sched, m.Tokenizer, Config{EOS: m.Config.EOSTokenID, MoreEOS: []int64{ids[2]}, MaxPositions: 256, DefaultMaxNewTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	if s, err = more.Generate(context.Background(), admission.Interactive, prompt, Params{MaxNewTokens: 8}); err != nil {
		t.Fatal(err)
	}
	if _, got, last := readAll(t, s); len(got) != 3 || got[2] != ids[2] || last.Err != nil || last.Finish != FinishEOS {
		t.Fatalf("ended after %v (%v, %s), want at the third of %v, as the end of sequence", got, last.Err, last.Finish, ids)
	}
}

// greedyChooser takes token 0: the scheduler's request needs a chooser, which this test's
// refused request never calls.
type greedyChooser struct{}

func (greedyChooser) Choose([]float32) scheduler.Choice { return scheduler.Choice{} }

// TestScoredPromptTokensSpellThePrompt: a scored prompt's tokens are the text each adds to the
// prompt as written, which an echo of it spells (WordPiece's decoding drops the spaces between
// words, and the normalizer's changes), while their pieces stay the tokens alone (TGI's
// prefill).
func TestScoredPromptTokensSpellThePrompt(t *testing.T) {
	g, m := newTinyLM(t)
	prompt := "The  patient, said:don't "
	s, err := g.Generate(context.Background(), admission.Interactive, prompt, Params{MaxNewTokens: 2,
		Sampling: Sampling{TopLogprobs: 2}, Logprobs: true, PromptLogprobs: true})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, s)
	var spelt strings.Builder
	for i, tok := range s.PromptLogprobs() {
		spelt.WriteString(tok.Text)
		if alone := m.Tokenizer.Decode([]int64{tok.ID}, false); tok.Piece != alone {
			t.Errorf("prompt token %d's piece %q, want the token alone, %q", i, tok.Piece, alone)
		}
	}
	if spelt.String() != prompt {
		t.Fatalf("the prompt's tokens spell %q, want %q", spelt.String(), prompt)
	}

	// A template's token spells nothing; a character split across tokens is spelt once.
	b, err := os.ReadFile(filepath.Join("..", "models", "testdata", "layouts", "lm-llama", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	llama, err := tokenizer.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join("..", "tokenizer", "testdata", "gpt2.json"))
	if err != nil {
		t.Fatal(err)
	}
	gpt2, err := tokenizer.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tok    *tokenizer.Tokenizer
		prompt string
	}{{llama, "Hello  world "}, {gpt2, " 😀 ok  "}, {m.Tokenizer, "  héllo wörld"}} {
		enc := c.tok.Encode(c.prompt, true)
		texts := promptTexts(c.prompt, enc, 0)
		if strings.Join(texts, "") != c.prompt {
			t.Errorf("%q: tokens %v spell %q", c.prompt, enc.IDs, texts)
		}
		for i, special := range enc.Special {
			if special && texts[i] != "" {
				t.Errorf("%q: the template's token %d spells %q", c.prompt, enc.IDs[i], texts[i])
			}
		}
		if tail := promptTexts(c.prompt, enc, 1); strings.Join(tail, "") != c.prompt[len(texts[0]):] {
			t.Errorf("%q: truncated tokens spell %q", c.prompt, tail)
		}
	}
}

// TestPiecesOfASplitCharacterCarryItsBytes: a character that byte-level tokens split has
// pieces that decode alone as U+FFFD; their bytes are the tokens' own, so that the answer's
// bytes, listed token by token, put it back together, as OpenAI's `bytes` are for.
func TestPiecesOfASplitCharacterCarryItsBytes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "tokenizer", "testdata", "gpt2.json"))
	if err != nil {
		t.Fatal(err)
	}
	gpt2, err := tokenizer.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{" 😀 ok", " 🦀 and 𝔘"} { // two tokens a character, and three
		piecesMake(t, gpt2, answer)
	}
}

// piecesMake checks that the bytes of answer's pieces, token by token, make it.
func piecesMake(t *testing.T, gpt2 *tokenizer.Tokenizer, answer string) {
	t.Helper()
	s := &Stream{c: &chooser{tok: gpt2}, pieces: true}
	var all []byte
	split := false
	for i, id := range gpt2.Encode(answer, false).IDs {
		tok := s.event(scheduler.Event{Index: i + 1, Choice: scheduler.Choice{ID: id}}).Token
		if tok.Bytes == nil {
			all = append(all, tok.Piece...)
			continue
		}
		split = true
		all = append(all, tok.Bytes...)
	}
	if !split || string(all) != answer {
		t.Errorf("the pieces' bytes make %q (a character split: %v), want %q", all, split, answer)
	}
}
