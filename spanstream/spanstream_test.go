package spanstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluice-serving/sluice/settings"

	"github.com/sluice-serving/sluice/entities"
)

var capitalised = regexp.MustCompile(`\p{Lu}\p{Ll}+`)

// names is a detector that labels every capitalised word a name, and checks that no window is
// wider than cfg allows or starts inside a word.
func names(t *testing.T, text string, cfg Config, windows *[]string) Detector {
	return func(_ context.Context, w string) ([]entities.Entity, error) {
		if n := utf8.RuneCountInString(w); n > cfg.WindowChars {
			t.Errorf("a window of %d code points", n)
		}
		at := strings.Index(text, w) // the texts here have no repeated windows
		if at > 0 {
			before, _ := utf8.DecodeLastRuneInString(text[:at])
			first, _ := utf8.DecodeRuneInString(w)
			if inWord(before) && inWord(first) {
				t.Errorf("a window starts inside a word at byte %d", at)
			}
		}
		*windows = append(*windows, w)
		var out []entities.Entity
		for _, m := range capitalised.FindAllStringIndex(w, -1) {
			out = append(out, entities.Entity{Label: "name", Start: m[0], End: m[1], Score: 0.9})
		}
		return out, nil
	}
}

func longText(words int) string {
	var b strings.Builder
	for i := range words {
		if i%7 == 3 {
			fmt.Fprintf(&b, "Zoë%s ", strings.Repeat("x", i%5)) // names with a two-byte letter
		} else {
			fmt.Fprintf(&b, "word%d ", i)
		}
	}
	return b.String()
}

// run drives a Scanner to its end and checks the event rules: each span committed once and
// emitted before, nothing committed retracted, final offsets in order.
func run(t *testing.T, text string, cfg Config, detect Detector) (commits []Span, all []Event) {
	t.Helper()
	sc, err := New(text, cfg, detect)
	if err != nil {
		t.Fatal(err)
	}
	emitted, committed := map[string]bool{}, map[string]bool{}
	last := 0
	for !sc.Done() {
		before := sc.Final()
		events, err := sc.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if sc.Final() <= before {
			t.Fatalf("no progress at byte %d", before)
		}
		for _, ev := range events {
			id := ev.Span.ID
			switch ev.Kind {
			case Emit:
				emitted[id] = true
			case Retract:
				if committed[id] || !emitted[id] {
					t.Fatalf("retracted %s: committed %v, emitted %v", id, committed[id], emitted[id])
				}
				delete(emitted, id)
			case Commit:
				if committed[id] || !emitted[id] || ev.Span.End > sc.Final() || ev.Span.CharStart < last {
					t.Fatalf("commit of %+v out of order", ev.Span)
				}
				committed[id] = true
				last = ev.Span.CharStart
				commits = append(commits, ev.Span)
			}
		}
		all = append(all, events...)
	}
	return commits, all
}

// TestWindowsFindWhatTheWholeTextHas: the committed spans of a long text, window by window,
// are exactly the spans of the text detected at once, with code point offsets that slice it.
func TestWindowsFindWhatTheWholeTextHas(t *testing.T) {
	text := longText(3000)
	cfg := Config{WindowChars: 300, ContextChars: 20, MaxEntityChars: 30}
	var windows []string
	commits, _ := run(t, text, cfg, names(t, text, cfg, &windows))
	want := capitalised.FindAllStringIndex(text, -1)
	if len(commits) != len(want) {
		t.Fatalf("%d spans committed, the whole text has %d", len(commits), len(want))
	}
	runes := []rune(text)
	for i, sp := range commits {
		if sp.Start != want[i][0] || sp.End != want[i][1] || string(runes[sp.CharStart:sp.CharEnd]) != text[sp.Start:sp.End] {
			t.Fatalf("span %d: %+v, want bytes %v", i, sp, want[i])
		}
		if sp.ID != ID("name", sp.CharStart) {
			t.Fatalf("id %s", sp.ID)
		}
	}
	if len(windows) < 2 || len(windows) > utf8.RuneCountInString(text)/(300-50)+2 {
		t.Fatalf("%d windows", len(windows))
	}
}

// TestFirstSpansAreFinalAfterTheFirstWindow: the first window already makes the spans before
// its tail final, long before the text's end.
func TestFirstSpansAreFinalAfterTheFirstWindow(t *testing.T) {
	text := longText(20000)
	var windows []string
	cfg := Config{WindowChars: 4096, ContextChars: 128, MaxEntityChars: 512}
	sc, _ := New(text, cfg, names(t, text, cfg, &windows))
	events, err := sc.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	commits := 0
	for _, ev := range events {
		if ev.Kind == Commit {
			commits++
		}
	}
	if commits == 0 || sc.Done() || sc.Final() > len(text)/10 || sc.Widest() > 4096 {
		t.Fatalf("%d commits, final at %d of %d", commits, sc.Final(), len(text))
	}
}

// TestASpanTheTailMisreadIsTakenBack: a detector that, without the words that follow, takes the
// last words of a window for a name; the next window reads them with what follows and finds
// nothing: the span is retracted, never committed.
func TestASpanTheTailMisreadIsTakenBack(t *testing.T) {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	cfg := Config{WindowChars: 200, ContextChars: 30, MaxEntityChars: 30}
	detect := func(_ context.Context, w string) ([]entities.Entity, error) {
		if len(w) < 20 || !strings.HasSuffix(text, w) && len(w) > 60 {
			i := strings.LastIndex(w[:len(w)-10], " ")
			return []entities.Entity{{Label: "guess", Start: i + 1, End: len(w) - 10}}, nil
		}
		return nil, nil
	}
	commits, events := run(t, text, cfg, detect)
	retracts := 0
	for _, ev := range events {
		if ev.Kind == Retract {
			retracts++
			if ev.Reason != Removed {
				t.Fatalf("reason %d", ev.Reason)
			}
		}
	}
	if retracts == 0 || len(commits) != 0 {
		t.Fatalf("%d retracts, %d commits", retracts, len(commits))
	}
}

// TestAChangedSpanIsRetractedThenEmitted: a name cut by a window's end is found shorter, then
// whole by the next window: retracted as updated, emitted again, committed whole.
func TestAChangedSpanIsRetractedThenEmitted(t *testing.T) {
	text := strings.Repeat("a ", 60) + "Bartholomew" + strings.Repeat(" b", 100)
	cfg := Config{WindowChars: 128, ContextChars: 0, MaxEntityChars: 10}
	detect := func(_ context.Context, w string) ([]entities.Entity, error) {
		if i := strings.Index(w, "Bart"); i >= 0 {
			end := i + len("Bartholomew")
			if end > len(w) {
				end = len(w)
			}
			return []entities.Entity{{Label: "name", Start: i, End: end}}, nil
		}
		return nil, nil
	}
	_, events := run(t, text, cfg, detect)
	var kinds []string
	for _, ev := range events {
		kinds = append(kinds, fmt.Sprintf("%d:%d:%d", ev.Kind, ev.Reason, ev.Span.CharEnd-ev.Span.CharStart))
	}
	if want := "[0:0:8 1:2:8 0:0:11 2:0:11]"; fmt.Sprint(kinds) != want {
		t.Fatalf("events %v, want %s", kinds, want)
	}
}

func TestConfigIsChecked(t *testing.T) {
	_, err := New("x", Config{WindowChars: 10, ContextChars: -1}, nil)
	var p *settings.Problem
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "MaxEntityChars") || !strings.Contains(err.Error(), "ContextChars") {
		t.Fatal(err)
	}
}

// literal finds every occurrence of word.
func literal(word string) Detector {
	return func(_ context.Context, w string) ([]entities.Entity, error) {
		var out []entities.Entity
		for i := 0; ; {
			j := strings.Index(w[i:], word)
			if j < 0 {
				return out, nil
			}
			out = append(out, entities.Entity{Label: "name", Start: i + j, End: i + j + len(word)})
			i += j + len(word)
		}
	}
}

// TestSmallWindowsWithALongTailLoseNothing: a window narrower than the context asked for still
// moves on by half its width, and commits every name; so does text without spaces, where no
// word boundary can be found.
func TestSmallWindowsWithALongTailLoseNothing(t *testing.T) {
	cfg := Config{WindowChars: 64, ContextChars: 128, MaxEntityChars: 512}
	text := strings.Repeat("xx JohnSmith ", 200)
	commits, _ := run(t, text, cfg, literal("JohnSmith"))
	if len(commits) != 200 {
		t.Fatalf("%d of 200 names committed", len(commits))
	}
	sc, _ := New(text, Config{WindowChars: 641, ContextChars: 128, MaxEntityChars: 512}, literal("JohnSmith"))
	for !sc.Done() {
		if _, err := sc.Next(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if max := utf8.RuneCountInString(text)/320 + 2; sc.Windows() > max {
		t.Fatalf("%d windows for %d code points", sc.Windows(), len(text))
	}
	unbroken := strings.Repeat("患", 300) + "JohnSmith" + strings.Repeat("患", 300)
	if commits, _ := run(t, unbroken, Config{WindowChars: 200, ContextChars: 10, MaxEntityChars: 20}, literal("JohnSmith")); len(commits) != 1 {
		t.Fatalf("%d commits in text without spaces", len(commits))
	}
}

// TestADocumentIsReadFromItsStart joins short documents with blank lines and uses a detector
// that, like a model, finds differently in a document it reads from the middle: every span
// committed must come from a window that read its document from the start, as it is read alone.
func TestADocumentIsReadFromItsStart(t *testing.T) {
	var docs []string
	for i := range 40 {
		docs = append(docs, fmt.Sprintf("Note %d: Alma Quist seen today%s.", i, strings.Repeat(" and doing well", i%5)))
	}
	text := strings.Join(docs, "\n\n")
	cfg := Config{WindowChars: 400, ContextChars: 40, MaxEntityChars: 20}
	detect := func(_ context.Context, w string) ([]entities.Entity, error) {
		at := strings.Index(text, w)
		midDocument := at > 0 && !strings.HasSuffix(text[:at], "\n\n")
		var out []entities.Entity
		for _, m := range capitalised.FindAllStringIndex(w, -1) {
			label := "name"
			if midDocument && !strings.Contains(w[:m[0]], "\n\n") {
				label = "misread"
			}
			out = append(out, entities.Entity{Label: label, Start: m[0], End: m[1], Score: 0.9})
		}
		return out, nil
	}
	commits, _ := run(t, text, cfg, detect)
	if want := 40 * 3; len(commits) != want {
		t.Fatalf("%d spans committed, want %d", len(commits), want)
	}
	for _, c := range commits {
		if c.Label != "name" {
			t.Fatalf("span at byte %d committed from a window that began inside its document", c.Start)
		}
	}
}

// TestBeforeSpansIsTheFixedPoint: the one backward pass over spans in text order ends where
// moving back to any crossing span's start until none crosses ends, on random overlapping
// spans.
func TestBeforeSpansIsTheFixedPoint(t *testing.T) {
	fixedPoint := func(spans []Span, cut int) int {
		for moved := true; moved; {
			moved = false
			for _, sp := range spans {
				if sp.Start < cut && sp.End > cut {
					cut, moved = sp.Start, true
				}
			}
		}
		return cut
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var s Scanner
	for range 2000 {
		spans := make([]Span, rng.IntN(12))
		for i := range spans {
			start := rng.IntN(60)
			spans[i] = Span{Entity: entities.Entity{Start: start, End: start + 1 + rng.IntN(15)}}
		}
		slices.SortStableFunc(spans, func(a, b Span) int { return a.Start - b.Start })
		cut := rng.IntN(80)
		if got, want := s.beforeSpans(spans, cut), fixedPoint(spans, cut); got != want {
			t.Fatalf("cut %d over %v: %d, want %d", cut, spans, got, want)
		}
	}
}

// BenchmarkManySpansInOneWindow: a window of fifty thousand spans (a deny term that is every
// other word); quadratic in the spans before its look-ups were indexed.
func BenchmarkManySpansInOneWindow(b *testing.B) {
	text := strings.Repeat("a ", 50_000)
	cfg := Config{WindowChars: len(text), MaxEntityChars: 1}
	detect := func(_ context.Context, w string) ([]entities.Entity, error) {
		out := make([]entities.Entity, 0, len(w)/2)
		for i := 0; i+1 <= len(w); i += 2 {
			out = append(out, entities.Entity{Label: "deny", Start: i, End: i + 1, Score: 1})
		}
		return out, nil
	}
	for b.Loop() {
		sc, err := New(text, cfg, detect)
		if err != nil {
			b.Fatal(err)
		}
		for !sc.Done() {
			if _, err := sc.Next(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestASpanWiderThanTheWindowIsNeverCut: a span that fills a window up to its tail (a long URL
// with a name in its query) is committed whole, as the whole text has it, and so is a name the
// window's end cuts after it. Such a window was made final up to its end: the span was committed
// cut there, and the rest, which alone no longer reads as a URL, went out in clear (an
// auditor's find). The window is read again, wider, as often as it takes.
func TestASpanWiderThanTheWindowIsNeverCut(t *testing.T) {
	url := regexp.MustCompile(`https?://\S+|\p{Lu}\p{Ll}+`)
	detect := func(_ context.Context, w string) ([]entities.Entity, error) {
		var out []entities.Entity
		for _, m := range url.FindAllStringIndex(w, -1) {
			out = append(out, entities.Entity{Label: "url", Start: m[0], End: m[1], Score: 0.9})
		}
		return out, nil
	}
	cfg := Config{WindowChars: 4096, ContextChars: 128, MaxEntityChars: 512}
	for _, text := range []string{
		"Ref https://portal.example.org/r?t=" + strings.Repeat("a", 5000) + "&patient=Zorblat+Quexley ok.",
		"https://x.org/" + strings.Repeat("b", 20000) + " then Zorblat",
		// The span ends inside the tail, and the window's end cuts the name after it.
		"https://x.org/" + strings.Repeat("c", 3800) + " " + strings.Repeat("x ", 134) + "Zorblat Quexley" + strings.Repeat(" y", 3000),
	} {
		commits, _ := run(t, text, cfg, detect)
		var got []string
		for _, sp := range commits {
			got = append(got, text[sp.Start:sp.End])
		}
		want := url.FindAllString(text, -1)
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || got[i] != want[i] {
				t.Errorf("committed %d spans, the whole text has %d; span %d of each ends ...%q, ...%q",
					len(got), len(want), i, tailOf(got, i), tailOf(want, i))
				break
			}
		}
	}
}

// tailOf is the last 20 bytes of spans[i], "" past the end.
func tailOf(spans []string, i int) string {
	if i >= len(spans) {
		return ""
	}
	return spans[i][max(0, len(spans[i])-20):]
}

// TestReReadsStopWhenTheContextEnds: the wider reads of a window one span fills stop once the
// request's context ends, whether or not the detector looks at it (nine more reads went on).
func TestReReadsStopWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	reads := 0
	sc, err := New(strings.Repeat("a", 1<<20), Config{WindowChars: 4096, ContextChars: 128, MaxEntityChars: 512},
		func(_ context.Context, w string) ([]entities.Entity, error) {
			reads++
			cancel() // the caller leaves during the first read
			return []entities.Entity{{Label: "id", Start: 0, End: len(w), Score: 1}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Next(ctx); !errors.Is(err, context.Canceled) || reads != 1 {
		t.Fatalf("%d reads, %v", reads, err)
	}
}
