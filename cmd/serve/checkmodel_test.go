package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyModel copies a shipped model directory into a temporary one, passing each file through
// edit (nil keeps it), and returns the copy's path.
func copyModel(t *testing.T, name string, edit func(file string, data []byte) []byte) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	copyDir(t, filepath.Join("..", "..", "models", name), dst, edit)
	return dst
}

// copyDir copies the files of directory src into dst (created), passing each through edit
// (nil keeps it).
func copyDir(t *testing.T, src, dst string, edit func(file string, data []byte) []byte) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			data = edit(e.Name(), data)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// editJSON changes one top-level field of a JSON file.
func editJSON(t *testing.T, data []byte, field string, value any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m[field] = value
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCheckModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		code int
		want []string
	}{
		{"token classifier", func(t *testing.T) string { return filepath.Join("..", "..", "models", "pii") }, 0,
			[]string{"kind: token classification, 33 labels", "inputs: input_ids", "sample result:", "result: ok"}},
		{"generator", func(t *testing.T) string { return filepath.Join("..", "..", "models", "tiny-lm") }, 0,
			[]string{"kind: text generation", "result: ok"}},
		{"unsupported tokenizer part", func(t *testing.T) string {
			return copyModel(t, "pii", func(file string, data []byte) []byte {
				if file == "tokenizer.json" {
					return editJSON(t, data, "pre_tokenizer", map[string]any{"type": "UnicodeScripts"})
				}
				return data
			})
		}, 1, []string{"PROBLEM:", "UnicodeScripts", "would not serve"}},
		{"vocabulary larger than the graph's", func(t *testing.T) string {
			return copyModel(t, "pii", func(file string, data []byte) []byte {
				if file == "config.json" {
					return editJSON(t, data, "vocab_size", 100)
				}
				return data
			})
		}, 0, []string{"note: tokenizer.json gives ids up to 4999 but config.json's vocab_size is 100"}},
		{"missing graph", func(t *testing.T) string {
			dir := copyModel(t, "pii", nil)
			if err := os.Remove(filepath.Join(dir, "model.onnx")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, 1, []string{"PROBLEM:", "model.onnx"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := checkModel([]string{tc.dir(t)}, os.Environ(), &out, &errOut)
			if code != tc.code || !containsAll(out.String(), tc.want) {
				t.Fatalf("exit %d (want %d), output:\n%s%s", code, tc.code, out.String(), errOut.String())
			}
		})
	}
	for _, family := range layoutFamilies {
		var out, errOut bytes.Buffer
		dir := filepath.Join("..", "..", "models", "testdata", "layouts", family)
		if code := checkModel([]string{dir}, os.Environ(), &out, &errOut); code != 0 || !containsAll(out.String(), []string{"kind: token classification, 5 labels", "result: ok"}) {
			t.Errorf("layout %s: exit %d, output:\n%s%s", family, code, out.String(), errOut.String())
		}
	}
	for _, decoder := range []string{"lm-bytelevel", "lm-llama", "lm-gqa"} {
		var out, errOut bytes.Buffer
		dir := filepath.Join("..", "..", "models", "testdata", "layouts", decoder)
		if code := checkModel([]string{dir}, os.Environ(), &out, &errOut); code != 0 || !containsAll(out.String(), []string{"kind: text generation", "result: ok"}) {
			t.Errorf("layout %s: exit %d, output:\n%s%s", decoder, code, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := checkModel(nil, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "usage: sluice check-model [-quantize int8 [-sample FILE]] DIR") {
		t.Fatalf("no directory: exit %d, %s", code, errOut.String())
	}
}
