package embed

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/models"
	"github.com/sluice-serving/sluice/tokenizer"
	"github.com/sluice-serving/sluice/tokenizer/tokenizertest"
)

func newRuntime(t *testing.T) *engine.Runtime {
	t.Helper()
	rt, err := engine.NewRuntime(engine.RuntimeOptions{IntraOpThreads: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Skipf("ONNX Runtime: %v", err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

func serving(t *testing.T, name string) (*models.Model, *engine.Session) {
	t.Helper()
	m, err := models.Load(models.Embedded(), name)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := newRuntime(t).NewSession(m.Name, m.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	return m, sess
}

func batchConfig() batcher.Config {
	return batcher.Config{MaxBatchSize: 32, MaxPaddedTokens: 4096, MaxWait: 0, QueueSize: 64, Workers: 1, MaxQueueWait: time.Minute}
}

func started[T interface {
	Start(context.Context)
	Close(context.Context) error
}](t *testing.T, x T) T {
	ctx, cancel := context.WithCancel(context.Background())
	x.Start(ctx)
	t.Cleanup(func() { _ = x.Close(context.Background()); cancel() })
	return x
}

// TestAVectorIsItsOwnInAnyBatch: a text's vector is the same alone and batched beside longer
// texts (padding and the mask never reach it), unit length, and texts too long are cut only
// when asked.
func TestAVectorIsItsOwnInAnyBatch(t *testing.T) {
	m, sess := serving(t, "embed-mini")
	e, err := NewEmbedder("test", m, sess, batchConfig(), clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e = started(t, e)
	short := "Allergy: penicillin - rash"
	alone, _, err := e.Embed(context.Background(), admission.Interactive, []string{short}, false, true)
	if err != nil {
		t.Fatal(err)
	}
	batch, tokens, err := e.Embed(context.Background(), admission.Interactive,
		[]string{"Follow up with Dr. Alvarez in 2 weeks after the next set of labs is back.", short}, false, true)
	if err != nil || tokens == 0 {
		t.Fatal(err)
	}
	var norm float64
	for k, v := range alone[0] {
		if math.Abs(float64(v-batch[1][k])) > 1e-5 {
			t.Fatalf("dimension %d: %v alone, %v in a batch", k, v, batch[1][k])
		}
		norm += float64(v) * float64(v)
	}
	if len(alone[0]) != e.Dimensions() || math.Abs(norm-1) > 1e-4 {
		t.Fatalf("%d dimensions, squared length %v", len(alone[0]), norm)
	}
	long := strings.Repeat("Potassium 4.1 mmol/L. ", 200)
	if _, _, err := e.Embed(context.Background(), admission.Interactive, []string{long}, false, true); !errors.Is(err, ErrTooLong) {
		t.Fatalf("a long text without truncate: %v", err)
	}
	if v, _, err := e.Embed(context.Background(), admission.Interactive, []string{long}, true, false); err != nil || len(v[0]) != e.Dimensions() {
		t.Fatalf("a long text truncated: %v", err)
	}
}

func TestPooling(t *testing.T) {
	states := []float32{1, 2, 3, 4, 5, 6, 99, 99} // three tokens of two values, then padding
	for mode, want := range map[string][]float32{"mean": {3, 4}, "cls": {1, 2}, "lasttoken": {5, 6}, "max": {5, 6}} {
		if got := Pool(mode, states, 3, 2); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", mode, got, want)
		}
	}
}

// TestNormalizeTakesAnyFiniteVector: a vector too short for float32 to hold the inverse of
// its length still comes out of unit length, not NaN.
func TestNormalizeTakesAnyFiniteVector(t *testing.T) {
	for _, v := range [][]float32{{1e-40, 0}, {3e-39, 4e-39}, {3e38, 3e38}, {0, 0}} {
		in := slices.Clone(v)
		Normalize(v)
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if !finite(v) || (in[0] != 0 || in[1] != 0) && math.Abs(sum-1) > 1e-6 {
			t.Errorf("%v normalized to %v", in, v)
		}
	}
	if finite([]float32{1, float32(math.NaN())}) || finite([]float32{float32(math.Inf(-1))}) {
		t.Error("a NaN or an infinity taken for finite")
	}
}

// TestTheQuerysKindRanksFirst: the shipped cross-encoder scores a passage written from the
// query's kind of line above others, alone or batched.
func TestTheQuerysKindRanksFirst(t *testing.T) {
	m, sess := serving(t, "rerank-mini")
	r, err := NewReranker("test", m, sess, batchConfig(), clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r = started(t, r)
	passages := []string{"Follow up with Dr. Chen in 6 weeks.", "Allergy: sulfa drugs - hives", "Hemoglobin 13.2 g/dL"}
	scores, _, err := r.Score(context.Background(), admission.Interactive, "Allergy: latex - swelling", passages, false)
	if err != nil {
		t.Fatal(err)
	}
	if scores[1] <= scores[0] || scores[1] <= scores[2] {
		t.Fatalf("scores %v: the allergy line should lead", scores)
	}
	one, _, err := r.Score(context.Background(), admission.Interactive, "Allergy: latex - swelling", passages[1:2], false)
	if err != nil || math.Abs(float64(one[0]-scores[1])) > 1e-4 {
		t.Fatalf("alone %v, batched %v (%v)", one, scores[1], err)
	}
}

// TestALargeRequestGoesInChunks: more texts than one batch holds are embedded a batch at a
// time, each vector the one it has alone.
func TestALargeRequestGoesInChunks(t *testing.T) {
	m, sess := serving(t, "embed-mini")
	cfg := batchConfig()
	cfg.MaxBatchSize = 4
	e, err := NewEmbedder("test", m, sess, cfg, clock.Real(), nil)
	if err != nil {
		t.Fatal(err)
	}
	e = started(t, e)
	// Lengths out of order: the chunks are of like lengths, and each vector goes back to its
	// text's place.
	texts := make([]string, 11)
	for i := range texts {
		texts[i] = strings.Repeat("Potassium 4.1 mmol/L ", (i*7)%11+1)
	}
	all, _, err := e.Embed(context.Background(), admission.Interactive, texts, false, true)
	if err != nil || len(all) != len(texts) {
		t.Fatalf("%d vectors, %v", len(all), err)
	}
	for i := range texts {
		alone, _, err := e.Embed(context.Background(), admission.Interactive, texts[i:i+1], false, true)
		if err != nil {
			t.Fatal(err)
		}
		for k := range alone[0] {
			if math.Abs(float64(alone[0][k]-all[i][k])) > 1e-5 {
				t.Fatalf("text %d's vector differs in its chunk", i)
			}
		}
	}
}

// TestATokenPastTheGraphsRowsIsReadAsUnknown: a tokenizer that adds a token past the graph's
// rows (config.json's vocab_size) has it read as the unknown token, where it failed the batch
// of every text beside it; a vocab_size below the graph's rows changes nothing.
func TestATokenPastTheGraphsRowsIsReadAsUnknown(t *testing.T) {
	for _, name := range []string{"embed-mini", "rerank-mini"} {
		t.Run(name, func(t *testing.T) {
			m, sess := serving(t, name)
			raw, err := fs.ReadFile(models.Embedded(), name+"/tokenizer.json")
			if err != nil {
				t.Fatal(err)
			}
			withExtra := *m
			withExtra.Tokenizer = tokenizertest.WithAddedToken(t, raw, 5000, "<extra>")
			small := *m
			small.Config.VocabSize = 100
			texts := []string{"Allergy: sulfa drugs - hives", "Call Maria <extra> at noon."}
			run := func(m *models.Model) ([]float32, error) {
				if m.Sentence != nil {
					e, err := NewEmbedder("test", m, sess, batchConfig(), clock.Real(), nil)
					if err != nil {
						t.Fatal(err)
					}
					if err := e.Warm(context.Background()); err != nil {
						t.Fatal(err)
					}
					vecs, _, err := started(t, e).Embed(context.Background(), admission.Interactive, texts, false, true)
					if err != nil {
						return nil, err
					}
					return slices.Concat(vecs...), nil
				}
				r, err := NewReranker("test", m, sess, batchConfig(), clock.Real(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.Warm(context.Background()); err != nil {
					t.Fatal(err)
				}
				scores, _, err := started(t, r).Score(context.Background(), admission.Interactive, "Maria <extra>", texts, false)
				return scores, err
			}
			if _, err := run(&withExtra); err != nil {
				t.Fatalf("a token past the graph's rows: %v", err)
			}
			want, err := run(m)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := run(&small); err != nil || !slices.Equal(got, want) {
				t.Fatalf("under a vocab_size smaller than the graph: %v %v, want %v", got, err, want)
			}
		})
	}
}

// TestAPairIsCutAsLongestFirst: a query and passage over the room are cut as HF tokenizers'
// longest_first cuts them (TEI and sentence-transformers' CrossEncoder read pairs so): the
// longer down to what the shorter leaves, or both to half, the odd token to the passage when
// they tie. Cutting a token at a time from the longer gave the query the odd one on a tie.
func TestAPairIsCutAsLongestFirst(t *testing.T) {
	ids := func(n int, base int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = base + int64(i)
		}
		return out
	}
	for _, c := range []struct{ q, d, room, wantQ, wantD int }{
		{3, 40, 15, 3, 12},    // the shorter fits in half: kept whole
		{10, 10, 15, 7, 8},    // a tie: the odd token to the passage
		{10, 20, 15, 7, 8},    // both over half, the passage longer
		{20, 10, 15, 8, 7},    // both over half, the query longer
		{30, 30, 16, 8, 8},    // an even room
		{100, 2, 125, 100, 2}, // within the room: nothing cut
	} {
		// BERT's pair template: [CLS] q [SEP] d [SEP], the room three less than the row.
		r := &Reranker{encoder: &encoder{maxLen: c.room + 3}, pair: tokenizer.PairTemplate{
			Before: []int64{101}, Between: []int64{102}, After: []int64{102}, TypeB: 1,
			BeforeTypes: []int64{0}, BetweenTypes: []int64{0}, AfterTypes: []int64{1}}}
		_, types, err := r.pairRow(ids(c.q, 1000), ids(c.d, 2000), true)
		if err != nil {
			t.Fatal(err)
		}
		d := 0
		for _, ty := range types[:len(types)-1] { // the last [SEP] is typed with the passage
			d += int(ty)
		}
		if q := len(types) - 3 - d; q != c.wantQ || d != c.wantD {
			t.Errorf("query %d and passage %d in %d: kept %d + %d, want %d + %d", c.q, c.d, c.room, q, d, c.wantQ, c.wantD)
		}
	}
}
