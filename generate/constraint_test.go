package generate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/grammar"
)

// answer reads a stream to its end: the text and the last event.
func answer(t *testing.T, st *Stream) (string, Event) {
	t.Helper()
	var text strings.Builder
	for {
		ev, err := st.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ev.Text)
		if ev.Done {
			return text.String(), ev
		}
	}
}

// TestConstrainedAnswersValidate: tiny-lm, held to each clinical schema, writes JSON that
// validates against it, greedy and sampled; the answer ends itself once whole.
func TestConstrainedAnswersValidate(t *testing.T) {
	g, _ := newTinyLM(t)
	paths, err := filepath.Glob("../grammar/testdata/clinical/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("schemas: %v", err)
	}
	for _, p := range paths {
		schema, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := g.Constraint(grammar.Spec{Kind: grammar.JSONSchema, Schema: schema})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource("mem://s.json", doc); err != nil {
			t.Fatal(err)
		}
		val := c.MustCompile("mem://s.json")
		for _, sampling := range []Sampling{{NoLogprobs: true}, {DoSample: true, Temperature: 1.3, Seed: 4, TopP: 1}} {
			st, err := g.Generate(context.Background(), admission.Interactive, "Patient seen today for", Params{
				Sampling: sampling, MaxNewTokens: 230, Constraint: ix, SeedSet: true})
			if err != nil {
				t.Fatal(err)
			}
			text, last := answer(t, st)
			if last.Finish == FinishLength && sampling.DoSample {
				continue // sampled, the toy model may write past its budget; greedy must not
			}
			if last.Finish != FinishEOS {
				t.Fatalf("%s: ended %s (%v) after %q", filepath.Base(p), last.Finish, last.Err, text)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
			if err != nil {
				t.Fatalf("%s: %q does not parse: %v", filepath.Base(p), text, err)
			}
			if err := val.Validate(v); err != nil {
				t.Fatalf("%s: %q does not validate: %v", filepath.Base(p), text, err)
			}
		}
	}
}

func clinicalSchema(b testing.TB, name string) []byte {
	schema, err := os.ReadFile(filepath.Join("..", "grammar", "testdata", "clinical", name))
	if err != nil {
		b.Fatal(err)
	}
	return schema
}

// BenchmarkConstraintCompile: a realistic clinical schema (the discharge summary) compiled
// over tiny-lm's vocabulary with the mask of its first state, as a request with a new schema
// pays it.
func BenchmarkConstraintCompile(b *testing.B) {
	g, _ := newTinyLM(b)
	schema := clinicalSchema(b, "discharge.json")
	if _, err := g.Constraint(grammar.Spec{Kind: grammar.Regex, Pattern: "x"}); err != nil { // the vocabulary, once
		b.Fatal(err)
	}
	for b.Loop() {
		ix, err := grammar.Compile(g.grammars.Vocab(), grammar.Spec{Kind: grammar.JSONSchema, Schema: schema})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Start().Allowed(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConstrainedStreams: 16 greedy streams at once on tiny-lm, free and held to the
// vitals schema (its masks computed once, before the timing), in tokens a second; the
// difference is what the masks cost a step.
func BenchmarkConstrainedStreams(b *testing.B) {
	g, _ := newTinyLM(b)
	ix, err := g.Constraint(grammar.Spec{Kind: grammar.JSONSchema, Schema: clinicalSchema(b, "vitals.json")})
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, constraint *grammar.Index) int {
		streams := make([]*Stream, 16)
		for i := range streams {
			// Free streams run as long as the constrained answers (about 50 tokens).
			st, err := g.Generate(context.Background(), admission.Interactive, "Vitals today", Params{
				Sampling: Sampling{NoLogprobs: true}, MaxNewTokens: 50, Constraint: constraint, IgnoreEOS: constraint == nil})
			if err != nil {
				b.Fatal(err)
			}
			streams[i] = st
		}
		n := 0
		for _, st := range streams {
			for {
				ev, err := st.Next(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				n++
				if ev.Done {
					break
				}
			}
		}
		return n
	}
	run(b, ix) // every state the answers reach, with its mask
	for _, c := range []struct {
		name string
		ix   *grammar.Index
	}{{"free", nil}, {"schema", ix}} {
		b.Run(c.name, func(b *testing.B) {
			tokens := 0
			for b.Loop() {
				tokens += run(b, c.ix)
			}
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// TestAFailedConstraintEndsWithAnError: when the constraint cannot go on (here a vocabulary
// that cannot write what it needs), the stream ends with an error and no token, never with
// a token chosen without it.
func TestAFailedConstraintEndsWithAnError(t *testing.T) {
	g, _ := newTinyLM(t)
	toks := make([][]byte, g.sched.Vocab())
	toks[5] = []byte("a")
	ix, err := grammar.Compile(grammar.NewVocab(toks, -1), grammar.Spec{Kind: grammar.Regex, Pattern: "b"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.Generate(context.Background(), admission.Interactive, "Vitals", Params{MaxNewTokens: 5, Constraint: ix})
	if err != nil {
		t.Fatal(err)
	}
	text, last := answer(t, st)
	if text != "" || last.HasToken || last.Finish != FinishError || last.Err == nil {
		t.Fatalf("%q, last %+v", text, last)
	}
}

// TestTheConstraintWinsOverMinTokens: once the answer is whole it ends, min_tokens or not,
// even when the end of sequence min_tokens bans is all the constraint allows.
func TestTheConstraintWinsOverMinTokens(t *testing.T) {
	g, _ := newTinyLM(t)
	for pattern, want := range map[string][]string{"(yes|no)": {"yes", "no"}, "": {""}} {
		ix, err := g.Constraint(grammar.Spec{Kind: grammar.Regex, Pattern: pattern})
		if err != nil {
			t.Fatal(err)
		}
		st, err := g.Generate(context.Background(), admission.Interactive, "Is it", Params{MaxNewTokens: 10, MinTokens: 8, Constraint: ix})
		if err != nil {
			t.Fatal(err)
		}
		text, last := answer(t, st)
		if !slices.Contains(want, text) || last.Finish != FinishEOS {
			t.Fatalf("%q: %q, %s (%v)", pattern, text, last.Finish, last.Err)
		}
	}
}

// TestAMaskNotYetMadeIsPreparedOffTheLoop: a choice that leads a constrained answer to a
// state whose mask is not made yet hands the scheduler a Prepare that makes it, so that the
// next Choose finds it at once; a second answer along the same tokens, on the same Index,
// finds every mask made and hands none.
func TestAMaskNotYetMadeIsPreparedOffTheLoop(t *testing.T) {
	g, _ := newTinyLM(t)
	ix, err := g.Constraint(grammar.Spec{Kind: grammar.Regex, Pattern: "(yes|no|maybe), [a-z]+ [0-9]{2}"})
	if err != nil {
		t.Fatal(err)
	}
	logits := make([]float32, g.sched.Vocab())
	follow := func() (prepared int, ids []int64) {
		c := &chooser{sp: newSampler(Sampling{NoLogprobs: true}, nil), ds: g.tok.NewDecodeStream(nil), tok: g.tok,
			eos: g.cfg.EOS, maxNew: 12}
		c.m = ix.Start()
		if _, err := c.m.Allowed(); err != nil {
			t.Fatal(err)
		}
		for range c.maxNew {
			ch := c.Choose(logits)
			if c.err != nil {
				t.Fatalf("after %v: %v", ids, c.err)
			}
			ids = append(ids, ch.ID)
			if ch.Prepare != nil {
				prepared++
				if c.m.Ready() {
					t.Fatal("a Prepare for a mask already made")
				}
				ch.Prepare(func() bool { return true })
			}
			if !ch.Stop && !c.m.Ready() {
				t.Fatalf("after %v the next mask is neither made nor prepared", ids)
			}
			if ch.Stop {
				break
			}
		}
		return prepared, ids
	}
	first, ids := follow()
	if first == 0 {
		t.Fatalf("the first answer (%v) prepared no mask", ids)
	}
	if again, same := follow(); again != 0 || !slices.Equal(same, ids) {
		t.Fatalf("the second answer prepared %d masks, its tokens %v against %v", again, same, ids)
	}
}

// TestAStopOnTheTokenThatCompletesTheAnswerEndsIt: a stop sequence or a stop token that the
// answer's last token completes ends the answer as a stop (stop_sequence, and OpenAI's text
// leaves it out), not as the answer's own end.
func TestAStopOnTheTokenThatCompletesTheAnswerEndsIt(t *testing.T) {
	g, _ := newTinyLM(t)
	ix, err := g.Constraint(grammar.Spec{Kind: grammar.JSONSchema, Schema: []byte(
		`{"type":"object","properties":{"a":{"type":"integer","minimum":0,"maximum":9}},"required":["a"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	run := func(p Params) (text, trimmed string, last Event) {
		p.MaxNewTokens, p.Constraint = 30, ix
		st, err := g.Generate(context.Background(), admission.Interactive, "The patient", p)
		if err != nil {
			t.Fatal(err)
		}
		return readAllTrimmed(t, st)
	}
	free, _, end := run(Params{})
	if !strings.HasSuffix(free, "}") || end.Finish != FinishEOS || strings.Count(free, "}") != 1 {
		t.Fatalf("unstopped: %q, %s", free, end.Finish)
	}
	for name, p := range map[string]Params{"stop sequence": {Stop: []string{"}"}}, "stop token": {StopTokenIDs: []int64{end.ID}}} {
		text, trimmed, last := run(p)
		if text != free || last.Finish != FinishStopSequence || trimmed != strings.TrimSuffix(free, end.Text) {
			t.Errorf("%s: %q (trimmed %q), %s; want %q ended as a stop, its last token left out", name, text, trimmed, last.Finish, free)
		}
	}
}
