package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/sluice-serving/sluice/models"
)

// layoutFamilies are the encoder layouts of models/testdata/layouts (gen_layouts.py): one
// small model directory per architecture, with the inputs optimum exports for it and a
// tokenizer of its family.
var layoutFamilies = []string{"bert", "distilbert", "roberta", "xlm-roberta", "deberta-v2", "modernbert"}

// TestEveryEncoderLayoutServes loads each layout directory as a user's own model
// (SLUICE_MODELS_DIR) and serves it through ONNX Runtime and HTTP. The layouts' graphs label
// known token ids, so the answer is exact: Jonathan's pieces are first_name, and Smithers's
// pieces are B-last_name, O, I-last_name..., which word-level aggregation must fuse into one
// word the way HF's pipeline does for that tokenizer family.
func TestEveryEncoderLayoutServes(t *testing.T) {
	t.Parallel()
	const text = "Patient Jonathan Smithers was admitted for review."
	want := []servedEntity{
		{Text: "Jonathan", Label: "first_name", Start: 8, End: 16},
		{Text: "Smithers", Label: "last_name", Start: 17, End: 25},
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "models", "testdata", "layouts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range layoutFamilies {
		t.Run(family, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, family, "model.onnx")); err != nil {
				t.Fatal(err)
			}
			srv := startServer(t, "SLUICE_MODELS_DIR="+dir, "SLUICE_PII_MODEL="+family,
				"SLUICE_ANALYZE_MODEL="+family, "SLUICE_GENERATE_MODEL=none")
			status, body := srv.post(t, "/pii/extract", map[string]any{"text": text})
			if status != 200 {
				t.Fatalf("/pii/extract status %d: %v", status, body)
			}
			if got := entitiesOf(t, body); !reflect.DeepEqual(got, want) {
				t.Errorf("/pii/extract: %+v, want %+v", got, want)
			}
			status, body = srv.post(t, "/analyze", map[string]any{"text": text, "aggregation_strategy": "first"})
			if status != 200 {
				t.Fatalf("/analyze status %d: %v", status, body)
			}
			if got := entitiesOf(t, body); !reflect.DeepEqual(got, want) {
				t.Errorf("/analyze, first: %+v, want %+v", got, want)
			}
			// Notes pasted one after another, each read on its own: tokenizers that keep
			// whitespace give tokens inside the blank lines between them.
			notes := text + "\n\n" + text + "\r\n \r\n" + text
			status, body = srv.post(t, "/pii/extract", map[string]any{"text": notes})
			if status != 200 {
				t.Fatalf("/pii/extract of three notes: status %d: %v", status, body)
			}
			got := entitiesOf(t, body)
			if len(got) != 6 {
				t.Fatalf("/pii/extract of three notes: %+v", got)
			}
			for i, at := range []int{0, 0, len(text) + 2, len(text) + 2, 2*len(text) + 7, 2*len(text) + 7} {
				w := want[i%2]
				w.Start, w.End = w.Start+at, w.End+at
				if got[i] != w {
					t.Fatalf("/pii/extract of three notes: entity %d is %+v, want %+v", i, got[i], w)
				}
			}
			// Past the model's length the text is windowed on the family's word boundaries;
			// every copy's names come back where they are.
			const copies = 600 // about 10,000 tokens: past ModernBERT's 8,192 too
			long := strings.TrimSpace(strings.Repeat(text+" ", copies))
			status, body = srv.post(t, "/analyze", map[string]any{"text": long, "aggregation_strategy": "first"})
			if status != 200 {
				t.Fatalf("/analyze of %d copies: status %d: %v", copies, status, body)
			}
			got = entitiesOf(t, body)
			if len(got) != 2*copies {
				t.Fatalf("/analyze of %d copies: %d entities, want %d", copies, len(got), 2*copies)
			}
			for i, e := range got {
				w := want[i%2]
				w.Start += (i / 2) * (len(text) + 1)
				w.End += (i / 2) * (len(text) + 1)
				if e != w {
					t.Fatalf("/analyze of %d copies: entity %d is %+v, want %+v", copies, i, e, w)
				}
			}
			if meta := body["metadata"].(map[string]any); meta["windows"].(float64) < 2 {
				t.Fatalf("the long text took %v windows; the test needs it windowed", meta["windows"])
			}
		})
	}
}

// TestStreamedTextOfEveryDecoderFamily samples from the untrained decoders of
// models/testdata/layouts (gen_decoders.py), whose draws cover the whole vocabulary: byte
// pieces that complete a character only together (byte-level BPE, SentencePiece byte
// fallback), special tokens, and Llama's "▁" that decoding strips at the start. Every
// streamed token's text is whole UTF-8, and generated_text (the stream's texts joined, as the
// handler builds it) is the text the tokenizer decodes for the generated ids after the
// prompt's. With byte
// fallback that holds only where the decoding has no U+FFFD: there, a byte that breaks
// UTF-8 turns its whole run of byte tokens into U+FFFD, rewriting characters already
// streamed, which a stream cannot take back.
func TestStreamedTextOfEveryDecoderFamily(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "..", "models", "testdata", "layouts"))
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "Patient café 中文 seen"
	for family, byteFallback := range map[string]bool{"lm-bytelevel": false, "lm-llama": true} {
		t.Run(family, func(t *testing.T) {
			m, err := models.Load(os.DirFS(dir), family)
			if err != nil {
				t.Fatal(err)
			}
			promptIDs := m.Tokenizer.Encode(prompt, true).IDs
			srv := startServer(t, "SLUICE_MODELS_DIR="+dir, "SLUICE_GENERATE_MODEL="+family,
				"SLUICE_PII_MODEL=bert", "SLUICE_ANALYZE_MODEL=bert")
			clean := 0
			for seed := 1; seed <= 48; seed++ {
				body, _ := json.Marshal(map[string]any{"inputs": prompt, "parameters": map[string]any{
					"max_new_tokens": 12, "do_sample": true, "seed": seed, "details": true}})
				resp, err := http.Post(srv.url+"/generate_stream", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				ids, texts, final := streamTexts(t, resp.Body)
				resp.Body.Close()
				for _, s := range texts {
					if !utf8.ValidString(s) {
						t.Fatalf("seed %d: a token's text is not whole UTF-8", seed)
					}
				}
				all := append(slices.Clone(promptIDs), ids...)
				before := m.Tokenizer.Decode(promptIDs, true)
				after := m.Tokenizer.Decode(all, true)
				if byteFallback && strings.ContainsRune(after, utf8.RuneError) {
					continue
				}
				clean++
				if want, ok := strings.CutPrefix(after, before); !ok || want != final {
					t.Fatalf("seed %d: generated_text %q; the tokenizer decodes %q after %q", seed, final, after, before)
				}
			}
			if clean < 8 && byteFallback {
				t.Fatalf("only %d of 48 generations decode without U+FFFD; the check needs more", clean)
			}
		})
	}
}

// streamTexts reads a TGI event stream to its end: each token's id and text, and the final
// event's generated_text.
func streamTexts(t *testing.T, body io.Reader) (ids []int64, texts []string, final string) {
	t.Helper()
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var ev struct {
			Token struct {
				ID   int64  `json:"id"`
				Text string `json:"text"`
			} `json:"token"`
			GeneratedText *string `json:"generated_text"`
			Error         string  `json:"error"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &ev); err != nil || ev.Error != "" {
			t.Fatalf("event %q: %v", line, err)
		}
		ids = append(ids, ev.Token.ID)
		texts = append(texts, ev.Token.Text)
		if ev.GeneratedText != nil {
			final = *ev.GeneratedText
		}
	}
	return ids, texts, final
}

// TestGroupedQueryDecoderMatchesTorch serves lm-gqa (gen_decoders.py): a Llama-shaped
// decoder whose 4 query heads share 2 key/value heads, with a position_ids input and a
// tokenizer that puts <s> first. config.json's num_key_value_heads sizes the KV cache; every
// prompt, sent twice at once so that prompts share decode steps, gets torch's greedy ids.
func TestGroupedQueryDecoderMatchesTorch(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "..", "models", "testdata", "layouts"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "lm-gqa", "greedy.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := models.Load(os.DirFS(dir), "lm-gqa")
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.NumKVHeads != 2 || m.Config.NumHeads != 4 {
		t.Fatalf("config read as %d heads, %d key/value heads", m.Config.NumHeads, m.Config.NumKVHeads)
	}
	srv := startServer(t, "SLUICE_MODELS_DIR="+dir, "SLUICE_GENERATE_MODEL=lm-gqa",
		"SLUICE_PII_MODEL=bert", "SLUICE_ANALYZE_MODEL=bert")
	var wg sync.WaitGroup
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var g lmGolden
		if err := json.Unmarshal(line, &g); err != nil {
			t.Fatal(err)
		}
		if got := m.Tokenizer.Encode(g.Prompt, true).IDs; !slices.Equal(got, g.PromptIDs) {
			t.Fatalf("%q encodes as %v here, %v in HF", g.Prompt, got, g.PromptIDs)
		}
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, ok := greedyIDs(t, srv.url+"/generate", g.Prompt, len(g.Greedy))
				if ok && !slices.Equal(got, g.Greedy) {
					t.Errorf("%q: %v, torch %v", g.Prompt, got, g.Greedy)
				}
			}()
		}
	}
	wg.Wait()
}
