package tokenizer

import (
	"os"
	"testing"
)

// loadTestdata loads testdata/<name>.json.
func loadTestdata(t testing.TB, name string) *Tokenizer {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Word-level aggregation decides from SubwordPrefix whether word ids are trustworthy, so
// each family must report its own.
func TestSubwordPrefixAndUnknownID(t *testing.T) {
	cases := []struct {
		file, prefix string
		unk          int64
		hasUnk       bool
	}{
		{"cased", "##", 1, true},
		{"gpt2", "", -1, false},
		{"edge-affix", "##", 0, true},
		{"deberta-v3", "", 3, true},
		{"xlm-roberta", "", 3, true},
		{"unigram-bytes", "", 3, true},
		{"llama-bpe", "", 0, true},
	}
	for _, c := range cases {
		tok := loadTestdata(t, c.file)
		if got := tok.SubwordPrefix(); got != c.prefix {
			t.Errorf("%s: SubwordPrefix = %q, want %q", c.file, got, c.prefix)
		}
		unk, ok := tok.UnknownID()
		if ok != c.hasUnk || (ok && c.file != "edge-affix" && unk != c.unk) {
			t.Errorf("%s: UnknownID = %d, %v; want %d, %v", c.file, unk, ok, c.unk, c.hasUnk)
		}
	}
}

// HF reads Unigram scores with serde_json's fast float parsing, which is not always
// correctly rounded; the goldens' near ties depend on it, this pins the parser itself.
func TestSerdeFloat(t *testing.T) {
	cases := map[string]float64{
		"0": 0, "-0.0": 0, "12": 12, "-3.5": -3.5, "1e3": 1000, "2.5E-1": 0.25, "-12.345678": -12.345678,
	}
	for in, want := range cases {
		got, err := serdeFloat(in)
		if err != nil || got != want {
			t.Errorf("serdeFloat(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-", "1.", ".5", "1e", "01x", "1.2.3"} {
		if _, err := serdeFloat(in); err == nil {
			t.Errorf("serdeFloat(%q) succeeded", in)
		}
	}
	// Digits past a u64 only scale the number.
	if got, _ := serdeFloat("123456789012345678901234"); got != float64(uint64(12345678901234567890))*1e4 {
		t.Errorf("serdeFloat long integer: got %v", got)
	}
	// 17 significant digits: serde rounds the significand to a float64 first, then divides.
	got, _ := serdeFloat("-9.8765432109876543")
	if want := -float64(98765432109876543) / 1e16; got != want {
		t.Errorf("serdeFloat two-step rounding: got %v want %v", got, want)
	}
}

// The goldens' random id sequences cover ordinary byte tokens; these are the spellings
// Rust's u8::from_str_radix accepts or refuses beyond them.
func TestFallbackByte(t *testing.T) {
	for tok, want := range map[string]int{"<0x41>": 0x41, "<0xe4>": 0xE4, "<0x+F>": 0x0F, "<0x4G>": -1, "<0x041>": -1,
		"<0X41>": -1, "<0x-1>": -1, "0x41>": -1} {
		b, ok := fallbackByte(tok)
		if (want < 0) == ok || (ok && int(b) != want) {
			t.Errorf("fallbackByte(%q) = %#x, %v; want %d", tok, b, ok, want)
		}
	}
	got := byteFallbackDecoder{}.chain([]string{"<0xE4>", "<0xB8>", "<0xAD>", "a", "<0xE4>", "<0xB8>", "b"})
	want := []string{"中", "a", "\uFFFD", "\uFFFD", "b"}
	if len(got) != len(want) {
		t.Fatalf("ByteFallback chain = %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("ByteFallback chain = %q, want %q", got, want)
		}
	}
	if got := (stripDecoder{content: ' ', start: 1, stop: 2}).chain([]string{"  a  ", " ", ""}); got[0] != " a" || got[1] != "" || got[2] != "" {
		t.Errorf("Strip chain = %q", got)
	}
}
