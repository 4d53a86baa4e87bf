package grammar

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestIntRangeIsTheRange holds the integer patterns to the ranges they stand for, by brute
// force around each bound.
func TestIntRangeIsTheRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return int64(rng.IntN(20)) - 10
		case 1:
			return int64(rng.IntN(2000)) - 1000
		}
		return int64(rng.IntN(200000))
	}
	for range 300 {
		lo, hi := pick(), pick()
		if lo > hi {
			lo, hi = hi, lo
		}
		switch rng.IntN(5) {
		case 0:
			lo = math.MinInt64
		case 1:
			hi = math.MaxInt64
		}
		pat, err := intRange(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`^(?:` + pat + `)$`)
		probe := func(n int64) {
			in := (lo == math.MinInt64 || n >= lo) && (hi == math.MaxInt64 || n <= hi)
			if got := re.MatchString(strconv.FormatInt(n, 10)); got != in {
				t.Fatalf("[%d, %d] as %s: %d matched %v", lo, hi, pat, n, got)
			}
		}
		for _, b := range []int64{lo, hi, 0, 1, -1, 9, 10, 99, 100, -10} {
			if b == math.MinInt64 || b == math.MaxInt64 {
				continue
			}
			for d := int64(-12); d <= 12; d++ {
				probe(b + d)
			}
		}
		for _, bad := range []string{"01", "-0", "00", "+1", ""} {
			if re.MatchString(bad) {
				t.Fatalf("[%d, %d] as %s matches %q", lo, hi, pat, bad)
			}
		}
	}
}

func clinicalSchemas(t testing.TB) map[string][]byte {
	paths, err := filepath.Glob("testdata/clinical/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("clinical schemas: %v (%d)", err, len(paths))
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

func validator(t testing.TB, schema []byte) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// byteVocab is a vocabulary of every single byte: a DFA walk over it is the language's own.
func byteVocab() *Vocab {
	toks := make([][]byte, 256)
	for b := range 256 {
		toks[b] = []byte{byte(b)}
	}
	return NewVocab(toks, -1)
}

// walk writes one random word of ix's language: random allowed bytes for a while, then bytes
// that close what is open, where allowed.
func walk(t *testing.T, ix *Index, rng *rand.Rand, budget int) []byte {
	m := ix.Start()
	var out []byte
	for steps := 0; ; steps++ {
		if m.Complete() || (m.Accepting() && (steps > budget || rng.IntN(8) == 0)) {
			return out
		}
		mask, err := m.Allowed()
		if err != nil {
			t.Fatal(err)
		}
		var allowed []int
		for id := range 256 {
			if mask.Allows(id) {
				allowed = append(allowed, id)
			}
		}
		if len(allowed) == 0 {
			t.Fatalf("no byte continues %q", out)
		}
		b := allowed[rng.IntN(len(allowed))]
		if steps >= budget {
			b = closing(mask, allowed, rng)
		}
		m.Advance(int64(b))
		out = append(out, byte(b))
		if steps > budget+100000 {
			t.Fatalf("no end after %d bytes, ending %q", len(out), out[len(out)-200:])
		}
	}
}

// closing prefers the bytes that end strings, objects, arrays and numbers, then any ASCII.
func closing(mask *Mask, allowed []int, rng *rand.Rand) int {
	for _, b := range []byte(`"}],nta`) {
		if mask.Allows(int(b)) {
			return int(b)
		}
	}
	for range 64 {
		if b := allowed[rng.IntN(len(allowed))]; b < 0x80 {
			return b
		}
	}
	return allowed[0]
}

// TestEverySchemaWordValidates: random words of each clinical schema's language parse as JSON
// and validate against the schema, by another implementation of JSON Schema.
func TestEverySchemaWordValidates(t *testing.T) {
	v := byteVocab()
	rng := rand.New(rand.NewPCG(7, 7))
	for name, schema := range clinicalSchemas(t) {
		t.Run(name, func(t *testing.T) {
			ix, err := Compile(v, Spec{Kind: JSONSchema, Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			val := validator(t, schema)
			for i := range 200 {
				word := walk(t, ix, rng, 20+i)
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(word))
				if err != nil {
					t.Fatalf("%q does not parse: %v", word, err)
				}
				if err := val.Validate(doc); err != nil {
					t.Fatalf("%q does not validate: %v", word, err)
				}
			}
		})
	}
}

func TestJSONObjectWordsAreObjects(t *testing.T) {
	ix, err := Compile(byteVocab(), Spec{Kind: JSONObject})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 1))
	for i := range 300 {
		word := walk(t, ix, rng, 5+i/2)
		var obj map[string]any
		dec := json.NewDecoder(bytes.NewReader(word))
		dec.UseNumber()
		if err := dec.Decode(&obj); err != nil || dec.More() || !utf8.Valid(word) {
			t.Fatalf("%q is not a JSON object: %v", word, err)
		}
	}
}

// TestTokensAcrossCharacters: tokens that end inside a UTF-8 character are followed byte by
// byte, so "é" written as two tokens of one byte each is allowed, and half a character that
// cannot become an allowed one is not.
func TestTokensAcrossCharacters(t *testing.T) {
	toks := [][]byte{
		[]byte("ca"), []byte("f"), {0xC3}, {0xA9}, []byte("é"), {0xC3, 0xA8}, []byte("fé"), []byte("caf"), {0xE2}, nil,
	}
	v := NewVocab(toks, 9)
	ix, err := Compile(v, Spec{Kind: Regex, Pattern: `^café$`})
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(m *Matcher) (ids []int) {
		mask, err := m.Allowed()
		if err != nil {
			t.Fatal(err)
		}
		for id := range len(toks) {
			if mask.Allows(id) {
				ids = append(ids, id)
			}
		}
		return ids
	}
	m := ix.Start()
	if got := allowed(m); !equal(got, []int{0, 7}) {
		t.Fatalf("at the start %v, want ca and caf", got)
	}
	m.Advance(7) // caf
	if got := allowed(m); !equal(got, []int{2, 4}) {
		t.Fatalf("after caf %v, want the lead byte of é and é (not è, not a three-byte lead)", got)
	}
	m.Advance(2)
	if got := allowed(m); !equal(got, []int{3}) {
		t.Fatalf("after caf+0xC3 %v, want 0xA9", got)
	}
	m.Advance(3)
	if !m.Complete() || !m.Accepting() {
		t.Fatal("café is whole")
	}
	if got := allowed(m); !equal(got, []int{9}) {
		t.Fatalf("at the end %v, want the end of sequence alone", got)
	}
}

func equal(a, b []int) bool {
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

func TestUnsupportedIsNamed(t *testing.T) {
	for _, c := range []struct{ schema, feature string }{
		{`{"type":"object","patternProperties":{"a":{}}}`, "`patternProperties`"},
		{`{"type":"string","format":"hostname"}`, "`hostname`"},
		{`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, "recursive"},
		{`{"type":"number","minimum":0.5}`, "`minimum`"},
		{`{"type":"array","items":{"type":"string"},"maxItems":5000}`, "`maxItems`"},
		{`{"allOf":[{"type":"string"}]}`, "`allOf`"},
	} {
		_, err := SchemaRegex([]byte(c.schema))
		var u *UnsupportedError
		if !errors.As(err, &u) || !strings.Contains(u.Feature, c.feature) {
			t.Errorf("%s: %v, want unsupported naming %s", c.schema, err, c.feature)
		}
	}
	for _, bad := range []string{`{"type":`, `[1]`, `{"type":"object","required":"a"}`, `{"enum":[]}`} {
		_, err := SchemaRegex([]byte(bad))
		var inv *InvalidError
		if !errors.As(err, &inv) {
			t.Errorf("%s: %v, want invalid", bad, err)
		}
	}
	if _, err := Compile(byteVocab(), Spec{Kind: Regex, Pattern: `a\bb`}); err == nil {
		t.Error("a word boundary was taken")
	}
	if _, err := Compile(byteVocab(), Spec{Kind: Regex, Pattern: `(`}); err == nil {
		t.Error("a pattern that does not parse was taken")
	}
}

// TestPropertiesKeepTheirOrder: an object is written in the schema's order of properties.
func TestPropertiesKeepTheirOrder(t *testing.T) {
	re, err := SchemaRegex([]byte(`{"type":"object","properties":{"zeta":{"type":"null"},"alpha":{"type":"null"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^(?:` + re + `)$`).MatchString(`{"zeta":null,"alpha":null}`) {
		t.Fatalf("%s does not write zeta first", re)
	}
}

func TestCacheKeysByCompactSchema(t *testing.T) {
	c := NewCache(byteVocab(), 2)
	a, err := c.Get(Spec{Kind: JSONSchema, Schema: []byte(`{"type": "boolean"}`)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.Get(Spec{Kind: JSONSchema, Schema: []byte(`{"type":"boolean"}`)})
	if a != b {
		t.Fatal("the same schema, spaced differently, compiled twice")
	}
	_, _ = c.Get(Spec{Kind: Regex, Pattern: "a"})
	_, _ = c.Get(Spec{Kind: Regex, Pattern: "b"})
	if c.Len() != 2 {
		t.Fatalf("%d kept, want the bound of 2", c.Len())
	}
	if _, err := c.Get(Spec{Kind: JSONSchema, Schema: []byte(`{"type":"date"}`)}); err == nil || c.Len() != 2 {
		t.Fatal("a bad schema was cached or taken")
	}
}

// TestSchemasAreKeptOrRefused: schemas whose keywords interact (a keyword beside one that
// decides alone, no `type`, open additional properties, oneOf, bounds on either side of
// zero, long bounded lists) are either refused, or every word of their language validates.
func TestSchemasAreKeptOrRefused(t *testing.T) {
	refused := []string{
		`{"type":"object","properties":{"a":{"type":"string"}},"anyOf":[{"required":["a"]}]}`,
		`{"type":"string","anyOf":[{"format":"date"},{"maxLength":3}]}`,
		`{"oneOf":[{"type":"number"},{"type":"integer"}]}`,
		`{"oneOf":[{"type":"string"},{"maxLength":3}]}`,
		`{"type":"string","format":"date","maxLength":5}`,
		`{"$ref":"#/$defs/a","type":"string","$defs":{"a":{"type":"integer"}}}`,
		`{"minLength":1,"minimum":2}`,
	}
	for _, schema := range refused {
		if re, err := SchemaRegex([]byte(schema)); err == nil {
			t.Errorf("%s was taken as %.80s", schema, re)
		}
	}
	kept := []string{
		`{"type":"string","enum":["a",1]}`,
		`{"properties":{"x":{"properties":{"y":{"type":"integer"}},"required":["y"]}},"required":["x"]}`,
		`{"type":"object","additionalProperties":{"type":"integer"}}`,
		`{"oneOf":[{"type":"string"},{"type":"integer"},{"$ref":"#/$defs/n"}],"$defs":{"n":{"type":"null"}}}`,
		`{"type":"string","minLength":2,"maxLength":2}`,
		`{"type":"number","maximum":100}`,
		`{"type":"number","minimum":-5,"maximum":-2}`,
		`{"type":"number","minimum":-3}`,
		`{"type":"number","minimum":-3,"maximum":7}`,
		`{"type":"number","maximum":-4}`,
		`{"type":"integer","exclusiveMaximum":10,"exclusiveMinimum":-10}`,
		`{"type":"array","items":{"type":"number"},"maxItems":100}`,
		`{"type":"array","items":{"type":"string","maxLength":100},"maxItems":20,"minItems":2}`,
		`{"type":"array","maxItems":10,"items":{"type":"object","properties":{"name":{"type":"string","maxLength":200},"dose":{"type":"number","minimum":0}},"required":["name","dose"]}}`,
		`{"type":"object","properties":{"a":{"type":"string","pattern":"yes|no"}},"required":["a"]}`,
	}
	v := byteVocab()
	// A pattern's alternation stays between the quotes.
	yes, err := Compile(v, Spec{Kind: JSONSchema, Schema: []byte(`{"type":"string","pattern":"ab|cd"}`)})
	if err != nil || !accepts(t, yes, `"ab"`) || !accepts(t, yes, `"cd"`) || accepts(t, yes, `"ab`) {
		t.Errorf("a pattern of two branches: %v", err)
	}
	rng := rand.New(rand.NewPCG(11, 3))
	for _, schema := range kept {
		ix, err := Compile(v, Spec{Kind: JSONSchema, Schema: []byte(schema)})
		if err != nil {
			t.Errorf("%s: %v", schema, err)
			continue
		}
		val := validator(t, []byte(schema))
		for i := range 100 {
			word := walk(t, ix, rng, 5+i)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(word))
			if err != nil || val.Validate(doc) != nil {
				t.Fatalf("%s: %q does not validate (%v)", schema, word, err)
			}
		}
	}
}

// TestLargeConstraintsAreRefusedCheaply: a short schema or pattern that would write out a
// huge language is refused before it is built.
func TestLargeConstraintsAreRefusedCheaply(t *testing.T) {
	nested := `{"type":"integer"}`
	for range 30 {
		nested = `{"type":"array","items":` + nested + `}`
	}
	if _, err := SchemaRegex([]byte(nested)); !errors.As(err, new(*UnsupportedError)) {
		t.Errorf("arrays nested 30 deep: %v", err)
	}
	if _, err := Compile(byteVocab(), Spec{Kind: Regex, Pattern: strings.Repeat(`[a-z]{1000}`, 3000)}); !errors.As(err, new(*UnsupportedError)) {
		t.Errorf("3,000 counted classes: %v", err)
	}
}

// TestRefusalsQuoteNoRequestText: a refusal names a keyword or format of JSON Schema's own,
// never an unknown key or format the request wrote.
func TestRefusalsQuoteNoRequestText(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","PATIENT-CANARY":1}`,
		`{"type":"string","format":"PATIENT-CANARY"}`,
	} {
		_, err := SchemaRegex([]byte(schema))
		if err == nil || strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%s: %v", schema, err)
		}
	}
}

// TestAGrownIndexRetires: an Index past its bound of states is retired: answers under way
// keep it, the cache compiles the constraint anew for the next; past four times the bound an
// answer still on it fails.
func TestAGrownIndexRetires(t *testing.T) {
	c := NewCache(byteVocab(), 4)
	spec := Spec{Kind: Regex, Pattern: `[a-z]{0,50}`}
	ix, err := c.Get(spec)
	if err != nil {
		t.Fatal(err)
	}
	per := stateBytes + 8*int64((ix.v.size+63)/64) // a state and its mask, about
	ix.soft, ix.hard = 5*per, 20*per
	m := ix.Start()
	for range 10 {
		if _, err := m.Allowed(); err != nil {
			t.Fatal(err)
		}
		m.Advance('a')
	}
	if !ix.Retired() || m.err != nil {
		t.Fatalf("retired %v, the answer's error %v", ix.Retired(), m.err)
	}
	if again, _ := c.Get(spec); again == ix {
		t.Fatal("the cache handed out the retired Index")
	}
	for range 20 {
		m.Advance('a')
	}
	if _, err := m.Allowed(); !errors.Is(err, ErrTooManyStates) {
		t.Fatalf("past the hard bound: %v", err)
	}
}

// TestAStateOfTensOfThousandsOfAlternativesIsRefused: a short pattern of many optional parts
// keeps tens of thousands of instructions alive in each state, every state a new one (each
// half a megabyte, and as many instruction steps a byte of the vocabulary's trie): refused at
// compile where the start is that wide, and failing the answer where a later state is, rather
// than growing by gigabytes under the scheduler.
func TestAStateOfTensOfThousandsOfAlternativesIsRefused(t *testing.T) {
	wide := strings.Repeat(`(?:a?){1000}`, 60)
	var unsupported *UnsupportedError
	if _, err := Compile(byteVocab(), Spec{Kind: Regex, Pattern: wide}); !errors.As(err, &unsupported) {
		t.Fatalf("a start of 60,000 alternatives: %v", err)
	}
	ix, err := Compile(byteVocab(), Spec{Kind: Regex, Pattern: "b" + wide})
	if err != nil {
		t.Fatal(err)
	}
	m := ix.Start()
	if _, err := m.Allowed(); !errors.Is(err, ErrTooManyStates) {
		t.Fatalf("a state of 60,000 alternatives one byte in: %v", err)
	}
	if ix.d.bytes > 1<<20 || !ix.Retired() {
		t.Fatalf("the index holds %d bytes, retired %v", ix.d.bytes, ix.Retired())
	}
	// An enum of 10,000 values in no order compiles and runs: its values are sorted, so that
	// their shared prefixes merge and few are open at once.
	rng := rand.New(rand.NewPCG(7, 8))
	words := make([]string, 10000)
	for i := range words {
		w := make([]byte, 3+rng.IntN(8))
		for k := range w {
			w[k] = byte('a' + rng.IntN(26))
		}
		words[i] = `"` + string(w) + `"`
	}
	schema := `{"type":"object","properties":{"city":{"enum":[` + strings.Join(words, ",") + `]}},"required":["city"]}`
	ix, err = Compile(byteVocab(), Spec{Kind: JSONSchema, Schema: json.RawMessage(schema)})
	if err != nil {
		t.Fatal(err)
	}
	m = ix.Start()
	for _, b := range []byte(`{"city":` + words[0] + `}`) {
		if _, err := m.Allowed(); err != nil {
			t.Fatalf("an enum of 10,000 values: %v", err)
		}
		m.Advance(int64(b))
	}
	if !m.Accepting() {
		t.Fatal("an enum's value was not taken")
	}
	// The steps' work is counted, and bounds the Index as its bytes do: a pattern of states
	// 2,000 alternatives wide, each new one costing that much a byte, fails past the bound.
	ix, err = Compile(byteVocab(), Spec{Kind: Regex, Pattern: "b" + strings.Repeat(`(?:[a-z]?){1000}`, 2)})
	if err != nil {
		t.Fatal(err)
	}
	m = ix.Start()
	for _, b := range []byte("bab") {
		if _, err := m.Allowed(); err != nil {
			t.Fatal(err)
		}
		m.Advance(int64(b))
	}
	if ix.d.work < 2*26*1990 {
		t.Fatalf("two masks of 26 steps from states of about 2,000 alternatives counted %d", ix.d.work)
	}
	// One mask's work is bounded too: one step of the scheduler waits on it.
	ix.maskWork = 1000
	m.Advance('c')
	if _, err := m.Allowed(); !errors.Is(err, ErrTooManyStates) || !ix.Retired() {
		t.Fatalf("a mask past its work bound: %v, retired %v", err, ix.Retired())
	}
	m = ix.Start()
	m.Advance('b')
	ix.maskWork, ix.d.work = maskWork, workHard+1
	m.Advance('c')
	if _, err := m.Allowed(); !errors.Is(err, ErrTooManyStates) {
		t.Fatalf("past the work bound: %v", err)
	}
}

// TestSmallSchemasThatWouldBuildHugeOnesAreRefusedCheaply: each piece of a schema's regular
// expression is held to the size bound as it is joined, so a schema of a few kilobytes that
// would write an open value thousands of times is refused before it allocates the lot.
func TestSmallSchemasThatWouldBuildHugeOnesAreRefusedCheaply(t *testing.T) {
	props := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"p` + strconv.Itoa(i) + `":{}`)
		}
		return b.String()
	}
	for name, schema := range map[string]string{
		"anyOf of open values":   `{"anyOf":[` + strings.Repeat(`{},`, 20000) + `{}]}`,
		"type list of open ones": `{"anyOf":[` + strings.Repeat(`{"type":["object","array"]},`, 2000) + `true]}`,
		"object of open values":  `{"type":"object","properties":{` + props(20000) + `}}`,
		"a thousand items":       `{"type":"array","minItems":1000,"items":{"type":"object","properties":{` + props(10) + `}}}`,
		"enum of many values":    `{"enum":[` + strings.Repeat(`"a long enough value to count",`, 20000) + `"x"]}`,
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := SchemaRegex([]byte(schema))
			runtime.ReadMemStats(&after)
			var unsupported *UnsupportedError
			if !errors.As(err, &unsupported) || unsupported.Feature != "a schema this large" {
				t.Fatalf("got %v, want the schema refused as too large", err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
				t.Fatalf("refusing a %d-byte schema allocated %d MB", len(schema), got>>20)
			}
		})
	}
}

// TestLoopsThatReadNothingCompile: a repeat of something that may match nothing compiles to a
// loop of instructions that read no character, and a choice of empty paths repeated doubles
// them at each copy. Both are a few bytes a client may send; both must compile, once each
// instruction, and keep their meaning. The guard only ends a hang (which would otherwise
// grow until the process is killed); it measures nothing.
func TestLoopsThatReadNothingCompile(t *testing.T) {
	cases := []struct {
		pattern       string
		accept, never string
	}{
		{`(?:a?)*`, "aaa", "b"},
		{`(a*)*`, "aa", "b"},
		{`(a|b?)+`, "abba", "c"},
		{`^([a-z]*)*$`, "abc", "A"},
		{`(?:a?|b?){40}`, "ab", "c"},
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, c := range cases {
			ix, err := Compile(byteVocab(), Spec{Kind: Regex, Pattern: c.pattern})
			if err != nil {
				t.Errorf("%s: %v", c.pattern, err)
				continue
			}
			if !accepts(t, ix, c.accept) || accepts(t, ix, c.never) {
				t.Errorf("%s: accepts %q %v (want true), %q %v (want false)", c.pattern,
					c.accept, accepts(t, ix, c.accept), c.never, accepts(t, ix, c.never))
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		panic("grammar: compiling a loop that reads nothing did not return")
	}
}

// accepts says whether ix's answer may be exactly s, one byte token at a time.
func accepts(t *testing.T, ix *Index, s string) bool {
	m := ix.Start()
	for i := range len(s) {
		mask, err := m.Allowed()
		if err != nil {
			t.Error(err)
			return false
		}
		if !mask.Allows(int(s[i])) {
			return false
		}
		m.Advance(int64(s[i]))
	}
	return m.Accepting()
}

// TestEveryEndOfSequenceEndsAnAnswer: a model with several ends of sequence (Llama 3's) has
// each allowed where the answer may end, and none advances the matcher.
func TestEveryEndOfSequenceEndsAnAnswer(t *testing.T) {
	toks := [][]byte{[]byte("1"), []byte("2"), nil, nil}
	ix, err := Compile(NewVocab(toks, 2, 3), Spec{Kind: Regex, Pattern: `^[12]+$`})
	if err != nil {
		t.Fatal(err)
	}
	m := ix.Start()
	m.Advance(0)
	mask, err := m.Allowed()
	if err != nil || !mask.Allows(2) || !mask.Allows(3) || mask.Count() != 4 {
		t.Fatalf("after a digit: %v, %d allowed", err, mask.Count())
	}
	m.Advance(3)
	if mask, err := m.Allowed(); err != nil || mask.Count() != 4 {
		t.Fatalf("an end of sequence moved the matcher: %v", err)
	}
}

// TestAPreparedMaskPausesWithTheIndexFree: Prepare makes the mask Allowed answers with,
// calling pause between pieces of a long walk with the Index's lock free, so that another
// answer on it goes on meanwhile; when that answer makes the same mask during a pause, the
// walk stops and both hold the one mask, counted once.
func TestAPreparedMaskPausesWithTheIndexFree(t *testing.T) {
	var toks [][]byte
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			for c := 'a'; c <= 'z'; c++ {
				toks = append(toks, []byte{byte(a), byte(b), byte(c)})
			}
		}
	}
	spec := Spec{Kind: Regex, Pattern: `(?:[a-z]?){600}`}
	plain, err := Compile(NewVocab(toks, -1), spec)
	if err != nil {
		t.Fatal(err)
	}
	want, err := plain.Start().Allowed()
	if err != nil {
		t.Fatal(err)
	}

	ix, err := Compile(NewVocab(toks, -1), spec)
	if err != nil {
		t.Fatal(err)
	}
	m := ix.Start()
	pauses, heldLocked := 0, 0
	m.Prepare(func() bool {
		pauses++
		if !ix.mu.TryLock() {
			heldLocked++
			return true
		}
		ix.mu.Unlock()
		return true
	})
	if pauses < 2 || heldLocked > 0 {
		t.Fatalf("%d pauses, %d of them with the Index locked", pauses, heldLocked)
	}
	if !m.Ready() {
		t.Fatal("the prepared mask is not made")
	}
	got, err := m.Allowed()
	if err != nil || !slices.Equal(got.Words(), want.Words()) || got.Count() != want.Count() {
		t.Fatalf("the prepared mask differs from Allowed's: %v", err)
	}

	ix, err = Compile(NewVocab(toks, -1), spec)
	if err != nil {
		t.Fatal(err)
	}
	first, other := ix.Start(), ix.Start()
	var made *Mask
	first.Prepare(func() bool {
		if made == nil {
			made, err = other.Allowed()
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := first.Allowed(); got != made {
		t.Fatal("the walk interrupted by another answer's making the same mask kept its own")
	}
	if ix.maskBytes != 8*int64(len(made.Words())) {
		t.Fatalf("%d bytes of masks counted for one mask of %d words", ix.maskBytes, len(made.Words()))
	}

	// A walk over steps all made already (a plain pattern over many tokens) is paced too.
	var many [][]byte
	for _, tok := range toks {
		for _, d := range []byte("abcde") {
			many = append(many, append(slices.Clip(tok), d))
		}
	}
	plainIx, err := Compile(NewVocab(many, -1), Spec{Kind: Regex, Pattern: `[a-z]*`})
	if err != nil {
		t.Fatal(err)
	}
	pauses = 0
	plainIx.Start().Prepare(func() bool { pauses++; return true })
	if pauses < 2 {
		t.Fatalf("a walk of %d tokens' trie paused %d times", len(many), pauses)
	}

	// A pause that panics leaves the Index unlocked, as it found it.
	ix, err = Compile(NewVocab(toks, -1), spec)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() { _ = recover() }()
		ix.Start().Prepare(func() bool { panic("a pause's bug") })
	}()
	if !ix.mu.TryLock() {
		t.Fatal("the Index is locked after a pause panicked")
	}
	ix.mu.Unlock()

	// A pause that says to stop leaves the mask unmade and the answer sound.
	ix, err = Compile(NewVocab(toks, -1), spec)
	if err != nil {
		t.Fatal(err)
	}
	given := ix.Start()
	given.Prepare(func() bool { return false })
	if given.Ready() {
		t.Fatal("a walk given up made its mask")
	}
	if got, err := given.Allowed(); err != nil || got.Count() != want.Count() {
		t.Fatalf("after a walk given up: %v", err)
	}
}

// refChain is a schema of levels definitions, each an anyOf of four $refs to the next, the last
// null: a few hundred bytes whose every $ref, written where it stands, is written 4^levels
// times over (the copies are the same, so the regular expression stays small).
func refChain(levels int) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range levels {
		next := `{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}`
		b.WriteString(`"d` + strconv.Itoa(i) + `":{"anyOf":[` + strings.Repeat(next+`,`, 3) + next + `]},`)
	}
	b.WriteString(`"d` + strconv.Itoa(levels) + `":{"type":"null"}}}`)
	return b.String()
}

// typeChain is objects nested levels deep, each of the type list object four times: each type
// of the list is the whole schema again.
func typeChain(levels int) string {
	s := `{"type":"null"}`
	for range levels {
		s = `{"type":["object","object","object","object"],"properties":{"a":` + s + `},"required":["a"]}`
	}
	return s
}

// TestASchemaThatFansOutIsWrittenOnce: a definition reached by many $refs, and a type a list
// names many times, are written once, so a schema's walk is about its size: every schema it
// holds written at most once, none longer than the whole. Each was written again where it
// stood, four times more a level: 24 levels, 3 KB, held a core for good.
func TestASchemaThatFansOutIsWrittenOnce(t *testing.T) {
	for name, schema := range map[string]string{
		"anyOf of $refs": refChain(24),
		"type lists":     typeChain(24),
	} {
		t.Run(name, func(t *testing.T) {
			w := new(schemaWriter)
			re, err := w.regex([]byte(schema))
			if err != nil {
				t.Fatal(err)
			}
			if schemas := strings.Count(schema, "{"); w.work > schemas*(len(re)+nodeWork) {
				t.Errorf("the walk's work is %d, past %d schemas of at most %d bytes", w.work, schemas, len(re))
			}
			ix, err := Compile(byteVocab(), Spec{Kind: JSONSchema, Schema: []byte(schema)})
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Repeat(`{"a":`, 24) + `null` + strings.Repeat(`}`, 24)
			if name == "anyOf of $refs" {
				want = `null`
			}
			if !accepts(t, ix, want) || accepts(t, ix, want+" ") {
				t.Errorf("the schema does not take %s alone", want)
			}
		})
	}
}

// TestADefinitionWrittenOnceIsHeldToEachDepth: a definition written once is refused as too
// deep where it is reached deep enough, as it would be written there: first reached two levels
// down, then again under levels more.
func TestADefinitionWrittenOnceIsHeldToEachDepth(t *testing.T) {
	leaf := `{"type":"null"}` // ten objects deep
	for range 10 {
		leaf = `{"type":"object","properties":{"x":` + leaf + `}}`
	}
	for _, levels := range []int{50, 51, 52, 53} {
		deep := `{"$ref":"#/$defs/leaf"}`
		for range levels {
			deep = `{"type":"object","properties":{"x":` + deep + `}}`
		}
		schema := `{"type":"object","properties":{"a":{"$ref":"#/$defs/leaf"},"b":` + deep + `},"$defs":{"leaf":` + leaf + `}}`
		// The root is level 0, b 1, its $ref levels+1, the definition one more, and its last
		// object ten below that.
		tooDeep := levels+12 > maxSchemaDepth
		_, err := SchemaRegex([]byte(schema))
		if tooDeep && err != errTooDeep || !tooDeep && err != nil {
			t.Errorf("a definition reached under %d levels: %v, want too deep %v", levels, err, tooDeep)
		}
	}
}

// TestASchemaPastItsWorkIsRefused: a piece near the size bound, nested, is copied into each
// level that holds it; past maxSchemaWork the schema is refused as too complex, its own text
// unquoted.
func TestASchemaPastItsWorkIsRefused(t *testing.T) {
	n := strconv.Itoa(200_000 / len(formats["date-time"]))
	times := `{"type":"array","items":{"type":"string","format":"date-time"},"minItems":` + n + `,"maxItems":` + n + `}`
	nest := func(levels int) string {
		s := times
		for range levels {
			s = `{"type":"object","properties":{"PATIENT-CANARY":` + s + `}}`
		}
		return s
	}
	if re, err := SchemaRegex([]byte(nest(8))); err != nil || len(re) < 200_000 {
		t.Fatalf("eight levels over %s date-times: %d bytes, %v", n, len(re), err)
	}
	_, err := SchemaRegex([]byte(nest(30)))
	if err != errTooComplex || strings.Contains(err.Error(), "CANARY") {
		t.Errorf("thirty levels: %v, want the schema refused as too complex", err)
	}
}

// TestAnEnumReadsItsTypeOnce: an enum's values are held to its `type` read once, not once a
// value: a megabyte of both, a list of 80,000 types beside 100,000 values, was billions of
// steps. The guard only ends a hang; it measures nothing.
func TestAnEnumReadsItsTypeOnce(t *testing.T) {
	types := strings.Repeat(`"integer",`, 80_000) + `"null"`
	schema := `{"type":[` + types + `],"enum":[` + strings.Repeat(`0,`, 100_000) + `null]}`
	done := make(chan struct{})
	go func() {
		defer close(done)
		if re, err := SchemaRegex([]byte(schema)); err != nil || re != `(?:0|null)` {
			t.Errorf("got %.80s, %v", re, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		panic("grammar: an enum beside a long type list did not return")
	}
}

// BenchmarkSchemaThatFansOut: the walks of TestASchemaThatFansOutIsWrittenOnce's schemas, by
// their levels (4^levels writings where each was written again at each $ref or type).
func BenchmarkSchemaThatFansOut(b *testing.B) {
	for _, levels := range []int{8, 10, 24} {
		for _, c := range []struct{ name, schema string }{{"refs", refChain(levels)}, {"types", typeChain(levels)}} {
			schema := c.schema
			b.Run(c.name+"/"+strconv.Itoa(levels), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := SchemaRegex([]byte(schema)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestAnIntegerIsANumberWithNoFraction: JSON Schema counts 1.0, 1e2 and 2.50e1 as integers, so
// an integer schema's enum or const keeps them (written as the schema spells them); read as an
// int64, 1.0 was dropped from an enum and a const of 3.0 refused. An exponent of many digits is
// judged from its spelling, not expanded.
func TestAnIntegerIsANumberWithNoFraction(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"integer","enum":[1.0, 2, 2.5]}`:                        `(?:1\.0|2)`,
		`{"type":"integer","const":3.0}`:                                 `3\.0`,
		`{"type":"integer","enum":[1e2, 25e-1, 2.50e1, 100e-2, 0.0e-9]}`: `(?:0\.0e-9|100e-2|1e2|2\.50e1)`,
		`{"type":"integer","enum":[1e999999999999, 1e-999999999999, 7]}`: `(?:1e999999999999|7)`,
	} {
		re, err := SchemaRegex([]byte(schema))
		if err != nil || re != want {
			t.Errorf("%s: %q %v, want %q", schema, re, err, want)
		}
	}
}
