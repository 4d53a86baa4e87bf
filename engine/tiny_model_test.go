package engine

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The weights of the models in testdata, rebuilt from the same formulas gen_tiny.py uses, so
// that expected logits are computed here by hand rather than read back from ONNX Runtime.
const (
	tinyVocab  = 16
	tinyHidden = 4
	tinyLabels = 5
)

func tinyEmb(v, h int) float64     { return float64((v*7+h*3)%11-5) / 10 }
func tinyWeight(h, l int) float64  { return float64((h*5+l*2)%7-3) / 8 }
func tinyBias(l int) float64       { return float64(l-2) / 4 }
func tinyTypeEmb(k, h int) float64 { return float64(((k+1)*(h+1))%5-2) / 10 }
func tinyPosEmb(p, h int) float64  { return float64((p*3+h)%7-3) / 20 }

// tinyVariant says which of the optional inputs a tiny model adds to its embeddings: token
// type 0, and each position's embedding.
type tinyVariant struct{ types, positions bool }

// tinyVariantLogits computes a tiny model's logits for a batch: every position gets its
// embedding (plus the variant's) plus the masked mean of its row's, then W and bias.
func tinyVariantLogits(b EncoderBatch, v tinyVariant) []float64 {
	x := func(row, t, h int) float64 {
		e := tinyEmb(int(b.IDs[row*b.SeqLen+t]), h)
		if v.types {
			e += tinyTypeEmb(0, h)
		}
		if v.positions {
			e += tinyPosEmb(t, h)
		}
		return e
	}
	out := make([]float64, 0, b.Batch*b.SeqLen*tinyLabels)
	for row := 0; row < b.Batch; row++ {
		var ctx [tinyHidden]float64
		var real float64
		for t := 0; t < b.SeqLen; t++ {
			m := float64(b.Mask[row*b.SeqLen+t])
			real += m
			for h := range ctx {
				ctx[h] += m * x(row, t, h)
			}
		}
		for t := 0; t < b.SeqLen; t++ {
			for l := 0; l < tinyLabels; l++ {
				sum := tinyBias(l)
				for h := 0; h < tinyHidden; h++ {
					sum += (x(row, t, h) + ctx[h]/real) * tinyWeight(h, l)
				}
				out = append(out, sum)
			}
		}
	}
	return out
}

// assertLogits compares every position whose mask is 1; padded positions carry no meaning.
func assertLogits(t *testing.T, got Logits, b EncoderBatch, withTypes bool) {
	t.Helper()
	assertVariantLogits(t, got, b, tinyVariant{types: withTypes}, 1e-5)
}

func assertVariantLogits(t *testing.T, got Logits, b EncoderBatch, v tinyVariant, tol float64) {
	t.Helper()
	if got.Batch != b.Batch || got.SeqLen != b.SeqLen || got.Labels != tinyLabels {
		t.Fatalf("logits are %d x %d x %d, want %d x %d x %d", got.Batch, got.SeqLen, got.Labels, b.Batch, b.SeqLen, tinyLabels)
	}
	if len(got.Data) != b.Batch*b.SeqLen*tinyLabels {
		t.Fatalf("len(Data) = %d, want %d", len(got.Data), b.Batch*b.SeqLen*tinyLabels)
	}
	want := tinyVariantLogits(b, v)
	for row := 0; row < b.Batch; row++ {
		for pos := 0; pos < b.SeqLen; pos++ {
			if b.Mask[row*b.SeqLen+pos] == 0 {
				continue
			}
			for l, g := range got.Row(row, pos) {
				w := want[(row*b.SeqLen+pos)*tinyLabels+l]
				if math.Abs(float64(g)-w) > tol {
					t.Fatalf("logit [%d,%d,%d] = %v, want %v", row, pos, l, g, w)
				}
			}
		}
	}
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
