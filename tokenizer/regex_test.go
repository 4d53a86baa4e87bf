package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRegexClassesAreHFs: RE2's \s and \d are ASCII, HF's are Unicode; rewritten, the
// patterns find what HF's find, and the classes whose Unicode meaning is not known here
// fail instead of matching differently.
func TestRegexClassesAreHFs(t *testing.T) {
	text := "café\u3000naïve\u00a0٣٤ \vx\u2003y"
	for _, tc := range []struct {
		pattern string
		want    []string
	}{
		{`\s+`, []string{"\u3000", "\u00a0", " \v", "\u2003"}},
		{`\S+`, []string{"café", "naïve", "٣٤", "x", "y"}},
		{`\d+`, []string{"٣٤"}},
		{`[^\s\d]+`, []string{"café", "naïve", "x", "y"}},
		{`[]\s]+`, []string{"\u3000", "\u00a0", " \v", "\u2003"}},
		{`\.`, nil},
	} {
		re, err := compileHFRegex(tc.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if got := re.re.FindAllString(text, -1); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.pattern, got, tc.want)
		}
	}
	for _, bad := range []string{`\w+`, `[^\w\s]+`, `\bx`, `[^\S]`, `[[:alpha:]]`, `x(?!y)`} {
		if _, err := compileHFRegex(bad); err == nil {
			t.Errorf("%s compiled; its classes or look-ahead would not be HF's", bad)
		}
	}
	split := strings.Replace(fuzzLoadSeeds[3], `"[0-9]+"`, `"\\s+"`, 1)
	if _, err := Load([]byte(split)); err != nil {
		t.Fatalf("a Split on \\s+ did not load: %v", err)
	}
	word := strings.Replace(fuzzLoadSeeds[3], `"[0-9]+"`, `"\\w+"`, 1)
	if _, err := Load([]byte(word)); err == nil || !strings.Contains(err.Error(), "Split") {
		t.Fatalf("a Split on \\w+ gave %v, want an error naming Split", err)
	}
}

// TestSpaceRunLookAhead: GPT-4's `\s+(?!\S)` leaves a run's last space to the word after it,
// as Oniguruma's backtracking does; at the end of the text the run is whole.
func TestSpaceRunLookAhead(t *testing.T) {
	h, err := compileHFRegex(`\S+|\s+(?!\S)|\s+`)
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string][]string{
		"a   b":         {"a", "  ", " ", "b"},
		"a b":           {"a", " ", "b"},
		"a  ":           {"a", "  "},
		"\u3000\u3000x": {"\u3000", "\u3000", "x"},
	} {
		var got []string
		for _, m := range h.allIndex([]byte(text)) {
			got = append(got, text[m[0]:m[1]])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

// TestLookAheadOnlyWhereEmulated: the look-ahead is emulated only as GPT-4's closing
// alternatives; elsewhere, or beside anchors that would match again where each search
// resumes, it fails Load rather than splitting differently from HF. A named group does not
// throw the emulation off, and \P{L} outside brackets is the measured letters' complement.
func TestLookAheadOnlyWhereEmulated(t *testing.T) {
	for _, bad := range []string{`\s+(?!\S)`, `x\s+(?!\S)|\s+`, `\s+(?!\S)|\s+x`, `^\s+y|\s+(?!\S)|\s+`,
		`\Ay|\s+(?!\S)|\s+`, `(?m)y|\s+(?!\S)|\s+`, `[^\P{L}]`} {
		if _, err := compileHFRegex(bad); err == nil {
			t.Errorf("%s compiled", bad)
		}
	}
	h, err := compileHFRegex(`(?<n>q)|[!^a]|\s+(?!\S)|\s+`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range h.allIndex([]byte("a   b")) {
		got = append(got, "a   b"[m[0]:m[1]])
	}
	if want := []string{"a", "  ", " "}; !slices.Equal(got, want) {
		t.Errorf("with a named group: %q, want %q", got, want)
	}
	nl, err := compileHFRegex(`\P{L}+`)
	if err != nil {
		t.Fatal(err)
	}
	if got := nl.re.FindAllString("a\u1c89 1 b", -1); !slices.Equal(got, []string{" 1 "}) {
		t.Errorf(`\P{L}+ found %q; U+1C89 is a letter to HF`, got)
	}
}

// TestGPT4SplitByHandMatchesTheRegex: the hand-run GPT-4 pattern cuts random texts where the
// emulated regex does (the goldens hold HF's answers for both on fewer shapes).
func TestGPT4SplitByHandMatchesTheRegex(t *testing.T) {
	alphabet := []rune("aZé中ſSs'tTrReEvVlLmMdD019٣ \t\r\n\u3000\u00a0\u2003!?.,-_(\u0301😀")
	rng := rand.New(rand.NewPCG(7, 8))
	for pattern, digits := range gpt4Patterns {
		h, err := compileHFRegex(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for range 3000 {
			rs := make([]rune, 1+rng.IntN(24))
			for k := range rs {
				rs[k] = alphabet[rng.IntN(len(alphabet))]
			}
			text := string(rs)
			var chars []nchar
			byteAt := map[int]int{}
			for _, r := range rs {
				chars = append(chars, nchar{r: r})
			}
			for k, off := 0, 0; k <= len(rs); k++ {
				byteAt[off] = k
				if k < len(rs) {
					off += utf8.RuneLen(rs[k])
				}
			}
			var want, got [][2]int
			for _, m := range h.allIndex([]byte(text)) {
				want = append(want, [2]int{byteAt[m[0]], byteAt[m[1]]})
			}
			for i := 0; i < len(chars); {
				j := gpt4SplitEnd(chars, i, digits)
				got = append(got, [2]int{i, j})
				i = j
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%q (digits %d): by hand %v, regex %v", text, digits, got, want)
			}
		}
	}
}
