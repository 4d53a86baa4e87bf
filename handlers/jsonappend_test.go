package handlers

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/sluice-serving/sluice/generate"
)

// awkwardTexts are strings every escaping rule of encoding/json touches.
var awkwardTexts = []string{
	"", "plain", "Patient is 45 y/o.", `say "no"`, `C:\path`, "line\nnext", "tab\tand\rreturn",
	"\b\f\x00\x01\x1f\x7f", "<b>&amp;</b>", "café ✓ 日本", "\u2028\u2029", "bad \xff\xfe utf8", "cut \xe2\x82",
	"emoji 🩺", "\xed\xa0\x80 surrogate",
}

func randomText(r *rand.Rand) string {
	alphabet := []string{"a", "Z", " ", "\"", "\\", "\n", "\t", "\x00", "\x1b", "\x7f", "é", "✓", "\u2028", "\u2029", "🩺", "\xff", "\xe2\x82", "<", "&", "/"}
	var b []byte
	for range r.IntN(24) {
		b = append(b, alphabet[r.IntN(len(alphabet))]...)
	}
	return string(b)
}

func TestAppendJSONStringIsEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := append([]string(nil), awkwardTexts...)
	for range 5000 {
		texts = append(texts, randomText(r))
	}
	for _, s := range texts {
		want, err := marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	}
}

// TestChunksAreEncodingJSONs holds the stream chunks written without reflection to the ones
// encoding/json writes for the same answer, usage or not, every finish and awkward texts.
func TestChunksAreEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	texts := append([]string(nil), awkwardTexts...)
	for range 300 {
		texts = append(texts, randomText(r))
	}
	finishes := []generate.Finish{"", generate.FinishEOS, generate.FinishLength, generate.FinishStopSequence}
	for _, usage := range []bool{false, true} {
		p := openAIParams{model: "tiny-lm", usage: usage}
		ch := chatCompletion{ID: "chatcmpl-a\"b", Object: "chat.completion", Created: 1765000000, Model: "tiny\u2028lm", SystemFingerprint: "sluice-dev"}
		co := completion{ID: "cmpl-a\"b", Object: "text_completion", Created: 1765000000, Model: "tiny-lm", SystemFingerprint: "sluice-dev"}
		type pair struct {
			name       string
			fast, slow answer
			taken      func() bool
		}
		fastChat := &chatAnswer{p: p, head: ch}
		fastCompl := &completionAnswer{p: completionParams{openAIParams: p}, head: co}
		answers := []pair{
			{"chat", fastChat, &chatAnswer{p: p, head: ch, chunks: lazyChunkHead{tried: true}}, func() bool { return fastChat.chunks.ok }},
			{"completions", fastCompl, &completionAnswer{p: completionParams{openAIParams: p}, head: co, chunks: lazyChunkHead{tried: true}},
				func() bool { return fastCompl.chunks.ok }},
		}
		for _, a := range answers {
			g := &genCall{choices: make([]genChoice, 3)}
			for k, text := range texts {
				i := k % 3
				g.choices[i].events = 1 + k%2 // a chat's first chunk of a choice says its role
				g.choices[i].tokens = make([]generate.Token, 1+k%2)
				f := finishes[k%len(finishes)]
				ev := generate.Event{HasToken: true, Trimmed: text, Done: f != "", Finish: f}
				want, got := a.slow.event(g, i, ev), a.fast.event(g, i, ev)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s, usage %v, %q: wrote\n%s\nencoding/json writes\n%s", a.name, usage, text, got, want)
				}
				if want != nil && !json.Valid(got) {
					t.Fatalf("%s: not JSON: %s", a.name, got)
				}
			}
			if !a.taken() {
				t.Fatalf("%s: the chunks were all written by reflection", a.name)
			}
		}
	}
}

// BenchmarkStreamChunk: one token's completions chunk, written without reflection and by
// encoding/json.
func BenchmarkStreamChunk(b *testing.B) {
	co := completion{ID: "cmpl-0123456789abcdef", Object: "text_completion", Created: 1765000000, Model: "tiny-lm", SystemFingerprint: "sluice-dev"}
	for _, tc := range []struct {
		name string
		a    *completionAnswer
	}{
		{"appended", &completionAnswer{head: co}},
		{"encoding-json", &completionAnswer{head: co, chunks: lazyChunkHead{tried: true}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g := &genCall{choices: make([]genChoice, 1)}
			g.choices[0].tokens = make([]generate.Token, 2)
			ev := generate.Event{HasToken: true, Trimmed: " the patient"}
			b.ReportAllocs()
			for b.Loop() {
				_ = tc.a.event(g, 0, ev)
			}
		})
	}
}
