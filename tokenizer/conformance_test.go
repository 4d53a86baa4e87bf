package tokenizer

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The golden files hold what HuggingFace's Rust tokenizer (npm tokenizers@0.23.2) gives
// for ~1,100 texts per tokenizer; testdata/gen_golden.js explains how to regenerate them
// or add one for a shipped model.

type goldenMeta struct {
	Tokenizer string `json:"tokenizer"`
	SHA256    string `json:"sha256"`
	Texts     int    `json:"texts"`
	VocabSize int    `json:"vocab_size"`
}

type goldenEncoding struct {
	IDs     []int64 `json:"ids"`
	Offsets []int   `json:"offsets"` // flattened [start, end) byte pairs
	Words   []int   `json:"words"`
	Special []int   `json:"special"`
}

type goldenRecord struct {
	Text       string         `json:"text"`
	Plain      goldenEncoding `json:"plain"`
	Full       goldenEncoding `json:"full"`
	Decode     string         `json:"decode"`
	DecodeSkip string         `json:"decode_skip"`
	Rand       *struct {
		IDs        []int64 `json:"ids"`
		Decode     string  `json:"decode"`
		DecodeSkip string  `json:"decode_skip"`
	} `json:"rand"`
}

func TestConformanceWithHuggingFace(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.jsonl.gz")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files found (err %v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { checkGoldenFile(t, file) })
	}
}

func checkGoldenFile(t *testing.T, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(gunzip(t, f))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	if !sc.Scan() {
		t.Fatalf("empty golden file")
	}
	var meta goldenMeta
	if err := json.Unmarshal(sc.Bytes(), &meta); err != nil {
		t.Fatalf("meta line: %v", err)
	}
	tokPath := filepath.Join(filepath.Dir(file), meta.Tokenizer)
	raw, err := os.ReadFile(tokPath)
	if err != nil {
		t.Fatalf("tokenizer named by the golden file: %v", err)
	}
	if strings.HasSuffix(tokPath, ".gz") {
		// A real vocabulary too large to keep uncompressed (Qwen3's); its sha256 is the
		// file's as HF read it.
		if raw, err = io.ReadAll(gunzip(t, bytes.NewReader(raw))); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256(raw)
	if hex.EncodeToString(sum[:]) != meta.SHA256 {
		t.Fatalf("%s changed since its golden file was generated; regenerate it (see testdata/gen_golden.js)", tokPath)
	}
	tok, err := Load(raw)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := tok.VocabSize(); got != meta.VocabSize {
		t.Errorf("VocabSize = %d, HF says %d", got, meta.VocabSize)
	}
	prefix, suffix := tok.Template()
	n, failed := 0, 0
	for sc.Scan() {
		var rec goldenRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		n++
		if msg := compareRecord(tok, &rec, prefix, suffix); msg != "" {
			failed++
			if failed <= 8 {
				t.Errorf("text %d %q:\n%s", n, rec.Text, msg)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != meta.Texts {
		t.Errorf("read %d texts, meta says %d", n, meta.Texts)
	}
	if failed > 0 {
		t.Errorf("%d of %d texts differ from HF", failed, n)
	}
	t.Logf("%d texts match HF (%s)", n-failed, meta.Tokenizer)
}

func compareRecord(tok *Tokenizer, rec *goldenRecord, prefix, suffix []int64) string {
	var out string
	plain := tok.Encode(rec.Text, false)
	if d := diffEncoding(plain, rec.Plain); d != "" {
		out += "plain: " + d + "\n"
	}
	full := tok.Encode(rec.Text, true)
	if !slices.Equal(full.IDs, rec.Full.IDs) {
		out += fmt.Sprintf("full ids: got %v want %v\n", full.IDs, rec.Full.IDs)
	}
	if !slices.Equal(boolsToInts(full.Special), rec.Full.Special) {
		out += fmt.Sprintf("full special: got %v want %v\n", full.Special, rec.Full.Special)
	}
	// HF puts template tokens at [0, 0] with no word around the unchanged plain encoding.
	if len(full.IDs) == len(prefix)+len(plain.IDs)+len(suffix) {
		for i := range full.IDs {
			j := i - len(prefix)
			if j >= 0 && j < len(plain.IDs) {
				if full.Offsets[i] != plain.Offsets[j] || full.WordIDs[i] != plain.WordIDs[j] || full.Special[i] {
					out += fmt.Sprintf("full token %d differs from plain token %d\n", i, j)
				}
			} else if full.Offsets[i] != [2]int{0, 0} || full.WordIDs[i] != -1 || !full.Special[i] {
				out += fmt.Sprintf("template token %d: offsets %v word %d special %v\n", i, full.Offsets[i], full.WordIDs[i], full.Special[i])
			}
		}
	} else {
		out += fmt.Sprintf("full has %d tokens, template+plain %d\n", len(full.IDs), len(prefix)+len(plain.IDs)+len(suffix))
	}
	if got := tok.Decode(full.IDs, false); got != rec.Decode {
		out += fmt.Sprintf("decode: got %q want %q\n", got, rec.Decode)
	}
	if got := tok.Decode(full.IDs, true); got != rec.DecodeSkip {
		out += fmt.Sprintf("decode skip: got %q want %q\n", got, rec.DecodeSkip)
	}
	if rec.Rand != nil {
		if got := tok.Decode(rec.Rand.IDs, false); got != rec.Rand.Decode {
			out += fmt.Sprintf("decode %v: got %q want %q\n", rec.Rand.IDs, got, rec.Rand.Decode)
		}
		if got := tok.Decode(rec.Rand.IDs, true); got != rec.Rand.DecodeSkip {
			out += fmt.Sprintf("decode skip %v: got %q want %q\n", rec.Rand.IDs, got, rec.Rand.DecodeSkip)
		}
	}
	return out
}

func diffEncoding(got Encoding, want goldenEncoding) string {
	flat := make([]int, 0, 2*len(got.Offsets))
	for _, o := range got.Offsets {
		flat = append(flat, o[0], o[1])
	}
	switch {
	case !slices.Equal(got.IDs, want.IDs):
		return fmt.Sprintf("ids: got %v want %v", got.IDs, want.IDs)
	case !slices.Equal(flat, want.Offsets):
		return fmt.Sprintf("offsets: got %v want %v", flat, want.Offsets)
	case !slices.Equal(got.WordIDs, want.Words):
		return fmt.Sprintf("words: got %v want %v", got.WordIDs, want.Words)
	case !slices.Equal(boolsToInts(got.Special), want.Special):
		return fmt.Sprintf("special: got %v want %v", got.Special, want.Special)
	}
	return ""
}

func boolsToInts(b []bool) []int {
	out := make([]int, len(b))
	for i, v := range b {
		if v {
			out[i] = 1
		}
	}
	return out
}

// gunzip reads a gzip stream; golden files are stored compressed (a sixth of their size).
func gunzip(tb testing.TB, r io.Reader) io.Reader {
	tb.Helper()
	zr, err := gzip.NewReader(r)
	if err != nil {
		tb.Fatal(err)
	}
	return zr
}
