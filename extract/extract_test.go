package extract

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/tokenizer"
	"github.com/sluice-serving/sluice/tokenizer/tokenizertest"
)

type golden struct {
	Text     string   `json:"text"`
	InputIDs []int64  `json:"input_ids"`
	Labels   []string `json:"labels"`
	// Path is the Viterbi path under the model's CRF, prefixes included.
	Path []string `json:"path"`
}

func readJSONL[T any](t *testing.T, name string) []T {
	t.Helper()
	return readJSONLPath[T](t, filepath.Join("..", "models", "testdata", "golden", name))
}

func readJSONLPath[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func newRuntime(t *testing.T) *engine.Runtime {
	t.Helper()
	rt, err := engine.NewRuntime(engine.RuntimeOptions{Device: engine.DeviceCPU, IntraOpThreads: 1, InterOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

func loadModel(t *testing.T, name string) *models.Model {
	t.Helper()
	m, err := models.Load(os.DirFS(filepath.Join("..", "models")), name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTokenizerAndEngineReproduceTorch checks the two halves of the ONNX path against the
// golden files the training recipe wrote from torch: our tokenizer gives torch's input ids,
// and ONNX Runtime's argmax gives torch's label for every position.
func TestTokenizerAndEngineReproduceTorch(t *testing.T) {
	rt := newRuntime(t)
	for _, name := range []string{"clinical-ner", "pii"} {
		t.Run(name, func(t *testing.T) {
			m := loadModel(t, name)
			sess, err := rt.NewSession(name, m.ONNX)
			if err != nil {
				t.Fatal(err)
			}
			for i, g := range readJSONL[golden](t, name+".jsonl") {
				enc := m.Tokenizer.Encode(g.Text, true)
				if !equalIDs(enc.IDs, g.InputIDs) {
					t.Fatalf("golden %d: tokenizer ids differ from the recipe's", i)
				}
				mask := make([]int64, len(g.InputIDs))
				for k := range mask {
					mask[k] = 1
				}
				out, err := sess.RunEncoder(context.Background(), engine.EncoderBatch{IDs: g.InputIDs, Mask: mask, Batch: 1, SeqLen: len(g.InputIDs)})
				if err != nil {
					t.Fatal(err)
				}
				for k, want := range g.Labels {
					if got := m.Config.Labels[argmax(out.Row(0, k))]; got != want {
						t.Fatalf("golden %d position %d: ORT says %s, torch %s", i, k, got, want)
					}
				}
				decodesAsTorch(t, i, m, g, enc, out)
			}
		})
	}
}

// decodesAsTorch checks the decoder's raw labels, B-/I- prefixes included, against torch's
// path under the CRF, for the text's own tokens (the template's are not decoded): the served
// wire takes the prefixes off, so only here is a wrong B- seen.
func decodesAsTorch(t *testing.T, i int, m *models.Model, g golden, enc tokenizer.Encoding, out engine.Logits) {
	t.Helper()
	if len(g.Path) != len(g.InputIDs) {
		t.Fatalf("golden %d: %d path labels for %d tokens", i, len(g.Path), len(g.InputIDs))
	}
	dec, err := entities.NewDecoder(decoderConfig(m))
	if err != nil {
		t.Fatal(err)
	}
	var toks entities.Tokens
	var logits []float32
	var at []int // each decoded token's position in the row
	for k := range enc.IDs {
		if enc.Special[k] {
			continue
		}
		toks.IDs, toks.Offsets = append(toks.IDs, enc.IDs[k]), append(toks.Offsets, enc.Offsets[k])
		logits = append(logits, out.Row(0, k)...)
		at = append(at, k)
	}
	ents, err := dec.Decode(g.Text, toks, logits, entities.StrategyNone)
	if err != nil {
		t.Fatal(err)
	}
	var want []entities.Entity
	for j, k := range at {
		if g.Path[k] != "O" {
			want = append(want, entities.Entity{Label: g.Path[k], Start: toks.Offsets[j][0], End: toks.Offsets[j][1]})
		}
	}
	if len(ents) != len(want) {
		t.Fatalf("golden %d: %d tokens decoded as entities, torch's path has %d", i, len(ents), len(want))
	}
	for j := range want {
		// A token's span is trimmed of white space at its ends (its start may move on).
		if ents[j].Label != want[j].Label || ents[j].Start < want[j].Start || ents[j].End > want[j].End {
			t.Fatalf("golden %d token entity %d: decoded %s [%d,%d), torch %s [%d,%d)", i, j,
				ents[j].Label, ents[j].Start, ents[j].End, want[j].Label, want[j].Start, want[j].End)
		}
	}
}

// TestClassifierWindowsLongTexts runs documents longer than the model through the real batcher
// and engine: every window is computed and every entity's span is valid text.
func TestClassifierWindowsLongTexts(t *testing.T) {
	cls, m, _ := startClassifier(t, "pii_extract", "pii", 8, 2048)
	ctx := t.Context()
	if err := cls.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	// The warm-up batch is the largest the batcher forms: min(8 rows, 2048 / 128) full rows.
	if w := cls.warmBatch(); w.Count != 8 || w.Width != m.Config.MaxLength ||
		len(w.InputIDs) != 8*w.Width || w.InputIDs[0] != cls.prefix[0] || w.InputIDs[w.Width-1] != cls.suffix[len(cls.suffix)-1] {
		t.Fatalf("warm-up batch %d x %d (%d ids), want 8 full rows with the template", w.Count, w.Width, len(w.InputIDs))
	}
	for i, doc := range readJSONL[struct{ Text string }](t, "long.jsonl") {
		ents, st, err := cls.Extract(ctx, admission.Interactive, doc.Text, entities.PIIOptions())
		if err != nil {
			t.Fatal(err)
		}
		if st.Windows < 2 {
			t.Fatalf("long document %d (%d tokens) used %d window(s)", i, st.Tokens, st.Windows)
		}
		lastStart := -1
		for _, e := range ents {
			if e.Start < 0 || e.End > len(doc.Text) || e.Start >= e.End || e.Start < lastStart {
				t.Fatalf("document %d: bad or unsorted span [%d,%d)", i, e.Start, e.End)
			}
			if span := doc.Text[e.Start:e.End]; strings.TrimSpace(span) != span {
				t.Fatalf("document %d: span has surrounding whitespace", i)
			}
			lastStart = e.Start
		}
	}
}

// TestBatchedWindowsEqualSingleRuns checks the batch assembly exactly: a long document's
// windows, submitted a chunk at a time (batches of 4 rows: chunks of 2) and padded into batches
// with the other documents' rows, all at once, must decode to the same entities as running
// every window alone, unpadded, and merging and decoding by hand, document by document.
func TestBatchedWindowsEqualSingleRuns(t *testing.T) {
	cls, m, sess := startClassifier(t, "analyze", "clinical-ner", 4, 64*128)
	ctx := t.Context()
	opts := entities.AnalyzeOptions()
	docs := readJSONL[struct{ Text string }](t, "long.jsonl")
	results := make([][]entities.Entity, len(docs))
	errs := make([]error, len(docs))
	var wg sync.WaitGroup
	for i, doc := range docs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, errs[i] = cls.Extract(ctx, admission.Interactive, doc.Text, opts)
		}()
	}
	wg.Wait()
	for i, doc := range docs {
		got, err := results[i], errs[i]
		if err != nil {
			t.Fatal(err)
		}
		enc := m.Tokenizer.Encode(doc.Text, false)
		prefix, suffix := m.Tokenizer.Template()
		budget, _ := entities.ContentBudget(m.Config.MaxLength, len(prefix), len(suffix))
		parts := entities.Documents(doc.Text, enc.Offsets)
		wins, _ := entities.PlanDocumentWindows(parts, enc.WordIDs, budget, 32)
		labels := len(m.Config.Labels)
		var perWindow []float32
		width := 0
		for _, w := range wins {
			width = max(width, w.Len()+len(prefix)+len(suffix))
		}
		for _, w := range wins {
			ids := append(append(append([]int64{}, prefix...), enc.IDs[w.Start:w.End]...), suffix...)
			mask := make([]int64, len(ids))
			for k := range mask {
				mask[k] = 1
			}
			out, err := sess.RunEncoder(ctx, engine.EncoderBatch{IDs: ids, Mask: mask, Batch: 1, SeqLen: len(ids)})
			if err != nil {
				t.Fatal(err)
			}
			row := make([]float32, width*labels)
			copy(row, out.Data)
			perWindow = append(perWindow, row...)
		}
		merged, err := entities.MergeLogits(wins, len(enc.IDs), perWindow, width, len(prefix), labels)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := entities.NewDecoder(decoderConfig(m))
		if err != nil {
			t.Fatal(err)
		}
		toks := entities.Tokens{IDs: enc.IDs, Offsets: enc.Offsets, WordIDs: enc.WordIDs}
		var want []entities.Entity
		for _, d := range parts {
			found, err := dec.Extract(doc.Text[d.Start:d.End], d.Tokens(toks), merged[d.First*labels:d.Last*labels], opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range found {
				e.Start, e.End = e.Start+d.Start, e.End+d.Start
				want = append(want, e)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("document %d: batched run found %d entities, single runs %d", i, len(got), len(want))
		}
		for k := range want {
			if got[k].Label != want[k].Label || got[k].Start != want[k].Start || got[k].End != want[k].End ||
				math.Abs(got[k].Score-want[k].Score) > 1e-4 {
				t.Fatalf("document %d entity %d: batched %+v, single runs %+v", i, k, got[k], want[k])
			}
		}
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func argmax(row []float32) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

// startClassifier runs the shipped model in a started Classifier (stride 32, one worker, the
// given batch limits) on a fresh runtime, stopped when the test ends.
func startClassifier(t *testing.T, queue, model string, maxBatch, maxPadded int) (*Classifier, *models.Model, *engine.Session) {
	t.Helper()
	m := loadModel(t, model)
	sess, err := newRuntime(t).NewSession(model, m.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	cls, err := New(queue, m, sess, Config{Stride: 32, Batch: batcher.Config{
		MaxBatchSize: maxBatch, MaxWait: time.Millisecond, MaxPaddedTokens: maxPadded, QueueSize: 16, Workers: 1,
	}}, clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cls.Start(ctx)
	t.Cleanup(func() {
		cancel()
		cls.Close(context.Background())
	})
	return cls, m, sess
}

// newChunkingClassifier is a clinical-NER classifier whose batches hold 4 full-width rows, so
// that a long text goes in 2 windows at a time.
func newChunkingClassifier(t *testing.T) *Classifier {
	cls, _, _ := startClassifier(t, "analyze", "clinical-ner", 4, 4*128)
	return cls
}

// TestShortTextIsNotStuckBehindALongOne: with one worker, a short text sent while a long text's
// hundreds of windows are being computed is answered before the long one is done, because the
// long text queues its windows a chunk at a time behind whatever arrived meanwhile.
func TestShortTextIsNotStuckBehindALongOne(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cls := newChunkingClassifier(t)
	longCtx, stopLong := context.WithCancel(ctx)
	longDone := make(chan error, 1)
	go func() {
		_, _, err := cls.Extract(longCtx, admission.Bulk, strings.Repeat("pt given aspirin. ", 3000), entities.AnalyzeOptions())
		longDone <- err
	}()
	for give := time.Now().Add(30 * time.Second); cls.Queue().Load().Work == 0; runtime.Gosched() {
		if time.Now().After(give) { // a hang guard; the condition is what the test waits for
			t.Fatal("the long text's windows never reached the queue")
		}
	}
	if _, _, err := cls.Extract(ctx, admission.Interactive, "Patient given aspirin.", entities.AnalyzeOptions()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-longDone:
		t.Fatalf("the long text finished (err %v) before the short one was answered", err)
	default:
	}
	stopLong()
	if err := <-longDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("long text after cancel: %v, want context.Canceled", err)
	}
	// The long text's last chunk may still be on the worker when its caller has gone; once
	// the worker finishes it, nothing may remain counted.
	for give := time.Now().Add(30 * time.Second); cls.Queue().Load().Work != 0; runtime.Gosched() {
		if time.Now().After(give) {
			t.Fatalf("%d windows still counted as waiting or running after both texts ended", cls.Queue().Load().Work)
		}
	}
}

// TestLongTextCutAtItsDeadline: a text whose windows cannot all be computed before its
// deadline, at the pace its first chunk took, stops with ErrDeadline instead of holding the
// worker until the deadline passes.
func TestLongTextCutAtItsDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cls := newChunkingClassifier(t)
	// Thousands of windows, about 15 s of work on the machine this was written on: the one
	// second deadline leaves a wide margin for a faster one. Tokenized before the deadline
	// starts, so that only the windows' pace is measured.
	text := strings.Repeat("pt given aspirin. ", 60000)
	enc := cls.tok.Encode(text, false)
	_, rows, err := cls.layout(entities.Documents(text, enc.Offsets), enc.IDs, enc.WordIDs)
	if err != nil {
		t.Fatal(err)
	}
	dctx, stop := context.WithTimeout(ctx, time.Second)
	defer stop()
	_, err = cls.infer(dctx, admission.Interactive, rows)
	if !errors.Is(err, ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want ErrDeadline (a DeadlineExceeded)", err)
	}
	if dctx.Err() != nil {
		t.Fatal("the text ran until its deadline instead of being cut when its pace showed it could not finish")
	}
}

// TestANoteGivesTheSameSpansAloneAndAfterOthers joins notes with blank lines, as a caller
// pasting a day's notes does, and holds each note's spans in the whole to be exactly those it
// has when sent alone: what the model finds in one note does not depend on the notes before it.
func TestANoteGivesTheSameSpansAloneAndAfterOthers(t *testing.T) {
	cls, _, _ := startClassifier(t, "pii_extract", "pii", 32, 4096)
	ctx := t.Context()
	notes := []string{
		"pt jane doe, 45 y/o, presents with cough. Daughter (Linda) cell 937.555.0177",
		"Carlos Mendez seen today for follow-up.",
		strings.Repeat("Patient Robert Smith called about his refill. ", 6),
		"Carlos Mendez seen today for follow-up of hypertension. BP 142/88.",
		"Mr. Alan Brooks, DOB 03/14/1962, 62 y/o. Visit 7/8/22. Next visit 10/8/22.",
		"Called Maria Gonzalez at (617) 555-0199 to confirm the appointment on March 3, 2024.",
		"Pt lives at 42 Elm Street, Springfield, IL 62704 with her husband Robert.",
		"No acute distress. Lungs clear. Heart regular rate and rhythm.",
	}
	// Real passages first, so that each invented note follows others.
	var real []string
	for _, p := range readJSONLPath[struct{ Text string }](t, filepath.Join("..", "entities", "testdata", "realtext", "dev.jsonl"))[:40] {
		real = append(real, p.Text)
	}
	notes = append(real, notes...)
	type span struct {
		label      string
		start, end int
	}
	alone := make([][]span, len(notes))
	for i, n := range notes {
		ents, _, err := cls.Extract(ctx, admission.Interactive, n, entities.PIIOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			alone[i] = append(alone[i], span{e.Label, e.Start, e.End})
		}
	}
	joined := strings.Join(notes, "\n\n")
	ents, _, err := cls.Extract(ctx, admission.Interactive, joined, entities.PIIOptions())
	if err != nil {
		t.Fatal(err)
	}
	together := make([][]span, len(notes))
	at := 0
	for i, n := range notes {
		for _, e := range ents {
			if e.Start >= at && e.End <= at+len(n) {
				together[i] = append(together[i], span{e.Label, e.Start - at, e.End - at})
			}
		}
		at += len(n) + 2
	}
	for i := range notes {
		if !reflect.DeepEqual(alone[i], together[i]) {
			t.Errorf("note %d: alone %v, after the others %v", i, alone[i], together[i])
		}
	}
}

// A model output that is not a number stays the model's failure (its breaker counts it); what
// else the decoding of a text fails on is ErrDecoding.
func TestOnlyTheTextsFailuresAreDecodingFailures(t *testing.T) {
	if err := decodingFailure(fmt.Errorf("entities: %w for token 3", entities.ErrNonFinite)); errors.Is(err, ErrDecoding) {
		t.Fatalf("non-finite scores: %v", err)
	}
	if _, err := entities.MergeLogits([]entities.Window{{Start: 0, End: 2}}, 2, make([]float32, 3), 4, 1, 2); errors.Is(decodingFailure(err), ErrDecoding) {
		t.Fatalf("an output of the wrong shape: %v", err)
	}
	if err := decodingFailure(errors.New("entities: token 0 has offsets outside a text of 19 bytes")); !errors.Is(err, ErrDecoding) {
		t.Fatalf("offsets outside the text: %v", err)
	}
}

// TestATokenPastTheGraphsRowsIsReadAsUnknown: a tokenizer that added a token the graph has no
// row for ("<extra>" at pii's 5,000) has it read as the unknown token once the warm-up has
// found the graph fails on it, where every text batched with one failed; a config.json that
// says fewer rows than the graph has changes nothing.
func TestATokenPastTheGraphsRowsIsReadAsUnknown(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "models", "pii", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t)
	serve := func(m *models.Model) *Classifier {
		sess, err := rt.NewSession("pii", m.ONNX)
		if err != nil {
			t.Fatal(err)
		}
		cls, err := New("pii", m, sess, Config{Stride: 32, Batch: batcher.Config{MaxBatchSize: 4, MaxWait: time.Millisecond,
			MaxPaddedTokens: 512, QueueSize: 4, Workers: 1}}, clock.Real(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := cls.Warm(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cls.Start(ctx)
		t.Cleanup(func() { cancel(); cls.Close(context.Background()) })
		return cls
	}
	m := loadModel(t, "pii")
	m.Tokenizer = tokenizertest.WithAddedToken(t, raw, 5000, "<extra>")
	if _, _, err := serve(m).Extract(context.Background(), admission.Interactive, "Call Maria <extra> at 555-123-4567.", entities.PIIOptions()); err != nil {
		t.Fatalf("a token past the graph's rows: %v", err)
	}
	// vocab_size 100 of a graph of 5,000 rows: every id passes, none is read as another.
	small := loadModel(t, "pii")
	small.Config.VocabSize = 100
	text := "Call Maria Garcia at 555-123-4567 on 03/04/2021."
	want, _, err := serve(loadModel(t, "pii")).Extract(context.Background(), admission.Interactive, text, entities.PIIOptions())
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := serve(small).Extract(context.Background(), admission.Interactive, text, entities.PIIOptions())
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("under a vocab_size smaller than the graph: %v %v, want %v", got, err, want)
	}
}

// TestPIIExtractGivesOneAccountNumberAndNoAddressAcrossALine runs two notes through the
// shipped pii model with /pii/extract's options. The postcode-shaped numbers inside the model's
// one account number each widened to it, so "48213 90412" came out twice; and the street
// pattern took a line break for a space, so a pulse and the next line's "Seen By Dr" were an
// address.
func TestPIIExtractGivesOneAccountNumberAndNoAddressAcrossALine(t *testing.T) {
	cls, _, _ := startClassifier(t, "pii_extract", "pii", 32, 4096)
	for text, want := range map[string][]string{
		"Policy number 48213 90412 on file.":                   {"account_number=48213 90412"},
		"Vitals: BP 128/82, Pulse 72\nSeen By Dr Jones today.": {"last_name=Jones"},
	} {
		ents, _, err := cls.Extract(t.Context(), admission.Interactive, text, entities.PIIOptions())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Label+"="+text[e.Start:e.End])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", text, got, want)
		}
	}
}
