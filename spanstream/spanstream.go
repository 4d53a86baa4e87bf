package spanstream

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/settings"
)

// Config sets the windows: larger ones cost fewer model calls per text and hold more in
// hand; a longer tail gives the spans near a window's end more context, at the price of
// computing it again.
type Config struct {
	// WindowChars is the most code points one window holds (at least MinWindowChars), but for
	// a window that one span fills up to its tail, which is read again twice as wide, as often
	// as it takes for the span to end before the tail (see Scanner.Next).
	WindowChars int
	// ContextChars and MaxEntityChars make the tail of a window: text that only gives context
	// to the spans before it, computed again by the next window (ContextChars >= 0,
	// MaxEntityChars >= 1). The tail is at most half the window, so that every window moves
	// on by at least half its width whatever the request asks.
	ContextChars, MaxEntityChars int
}

// MinWindowChars is the smallest window.
const MinWindowChars = 64

// Validate reports every field that is out of range.
func (c Config) Validate() error {
	check := settings.For("spanstream")
	if c.WindowChars < MinWindowChars {
		check.Addf("WindowChars", "must be at least %d, got %d", MinWindowChars, c.WindowChars)
	}
	if c.ContextChars < 0 {
		check.Addf("ContextChars", "must not be negative, got %d", c.ContextChars)
	}
	if c.MaxEntityChars < 1 {
		check.Addf("MaxEntityChars", "must be at least 1, got %d", c.MaxEntityChars)
	}
	return check.Err()
}

// tail is how many code points at the end of a window of width code points only give context.
func (c Config) tail(width int) int { return max(1, min(width/2, c.ContextChars+c.MaxEntityChars)) }

// Detector finds the spans of one window's text, in byte offsets into the window.
type Detector func(ctx context.Context, window string) ([]entities.Entity, error)

// Span is a span of the whole text: the PII span, at its bytes in the whole text, with the id
// the stream knows it by and its offsets in code points, which clients count in.
type Span struct {
	entities.Entity
	ID                 string
	CharStart, CharEnd int
}

// Reason is why a span was retracted.
type Reason uint8

const (
	// Removed: the later window no longer found it.
	Removed Reason = iota + 1
	// Updated: the later window found it changed (label or end); its new form follows.
	Updated
)

// Kind is what an Event says of its span.
type Kind uint8

const (
	// Emit: found, and may still change.
	Emit Kind = iota
	// Retract: an emitted span that a later window no longer found (Removed) or found
	// changed (Updated: its new form follows as an Emit).
	Retract
	// Commit: final. Every span is committed once; a committed span is never retracted.
	Commit
)

// Event is one thing a window says about one span.
type Event struct {
	Kind   Kind
	Span   Span
	Reason Reason // of a Retract
}

// Scanner walks one text window by window. It is not safe for concurrent use.
type Scanner struct {
	text   string
	cfg    Config
	detect Detector
	// The final part of the text ends at byte done, code point doneCP.
	done, doneCP int
	active       map[string]Span // emitted, not committed
	windows      int
	widest       int // the most code points a window held
}

// New validates cfg and returns a Scanner over text.
func New(text string, cfg Config, detect Detector) (*Scanner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Scanner{text: text, cfg: cfg, detect: detect, active: map[string]Span{}}, nil
}

// Done reports whether the whole text is final.
func (s *Scanner) Done() bool { return s.done >= len(s.text) }

// Final is the byte offset up to which the text is final: no span before it will change.
func (s *Scanner) Final() int { return s.done }

// Windows is how many windows have been computed.
func (s *Scanner) Windows() int { return s.windows }

// Widest is the most code points a window has held.
func (s *Scanner) Widest() int { return s.widest }

// Next computes the next window and returns its events: retractions first, then new and
// changed spans, then the spans it makes final, each group in text order.
func (s *Scanner) Next(ctx context.Context) ([]Event, error) {
	if s.Done() {
		return nil, nil
	}
	start, startCP := s.done, s.doneCP
	var spans []Span
	var cut int
	for width := s.cfg.WindowChars; ; width *= 2 {
		if err := ctx.Err(); width > s.cfg.WindowChars && err != nil {
			return nil, err // before a wider read: a detector need not look at ctx
		}
		end, n := advance(s.text, start, width)
		window := s.text[start:end]
		found, err := s.detect(ctx, window)
		if err != nil {
			return nil, err
		}
		s.windows++
		s.widest = max(s.widest, n)
		spans = s.absolute(window, start, startCP, found)
		var ok bool
		if cut, ok = s.cut(spans, start, end, width); ok {
			break
		}
		// One span fills the window up to its tail (a long URL, text without spaces): the
		// window's end may cut it, and what lies past the end, read on its own, may no longer
		// be found, so neither it nor the tail may be made final. The window is read again
		// twice as wide until the span ends before the tail or the text ends.
	}
	return s.events(spans, cut, startCP+utf8.RuneCountInString(s.text[start:cut])), nil
}

// cut is where the final part of the window [start, end) of the given width ends: before the
// tail, or at the text's end; never inside a span or a word (the next window must read them
// whole), and never before the window's start. ok is false when one span fills the window up
// to its tail, which no cut before the window's end leaves whole.
func (s *Scanner) cut(spans []Span, start, end, width int) (cut int, ok bool) {
	if end == len(s.text) {
		return end, true
	}
	tailStart, _ := back(s.text, start, end, s.cfg.tail(width))
	bySpans := s.beforeSpans(spans, tailStart)
	cut = bySpans
	for moved := true; moved; {
		moved = false
		if w := wordStart(s.text, start, cut); w != cut {
			cut, moved = w, true
		}
		if c := s.beforeSpans(spans, cut); c != cut {
			cut, moved = c, true
		}
	}
	// A document (text after a blank line) that begins in the final part's second half
	// is left whole to the next window, which then starts at it: read from its start, it
	// gives the spans it gives alone (the classifier reads each document on its own).
	if d := lastDocumentStart(s.text, start+(cut-start)/2, cut); d > start {
		if c := s.beforeSpans(spans, d); c > start {
			cut = c
		}
	}
	switch {
	case cut > start:
		return cut, true
	case bySpans > start:
		// A word as wide as the window up to its tail (text without spaces): cut it
		// rather than never moving on; the spans still decide.
		return bySpans, true
	}
	return 0, false
}

// events are a window's events, its final part ending at byte cut, code point cutCP.
func (s *Scanner) events(spans []Span, cut, cutCP int) []Event {
	var events []Event
	byID := make(map[string]Span, len(spans))
	for _, sp := range spans {
		byID[sp.ID] = sp
	}
	for _, old := range sortedSpans(s.active) {
		now, ok := byID[old.ID]
		switch {
		case !ok:
			events = append(events, Event{Kind: Retract, Span: old, Reason: Removed})
			delete(s.active, old.ID)
		case now.Label != old.Label || now.CharEnd != old.CharEnd || now.End != old.End:
			events = append(events, Event{Kind: Retract, Span: old, Reason: Updated})
			delete(s.active, old.ID)
		}
	}
	var commits []Event
	for _, sp := range spans {
		if _, ok := s.active[sp.ID]; !ok {
			events = append(events, Event{Kind: Emit, Span: sp})
		}
		if sp.End <= cut {
			commits = append(commits, Event{Kind: Commit, Span: sp})
			delete(s.active, sp.ID)
		} else {
			s.active[sp.ID] = sp
		}
	}
	s.done, s.doneCP = cut, cutCP
	return append(events, commits...)
}

// beforeSpans moves cut back to the start of any span that crosses it, until none does.
// spans are in text order, so one pass from the last does it: a span after the one cut moves
// to starts at or after the new cut, and cannot cross it.
func (s *Scanner) beforeSpans(spans []Span, cut int) int {
	for i := len(spans) - 1; i >= 0; i-- {
		if sp := spans[i]; sp.Start < cut && sp.End > cut {
			cut = sp.Start
		}
	}
	return cut
}

// absolute turns a window's spans into spans of the whole text, in text order, one per id:
// valid, not overlapping a final part already passed.
func (s *Scanner) absolute(window string, start, startCP int, found []entities.Entity) []Span {
	found = slices.Clone(found)
	slices.SortStableFunc(found, func(a, b entities.Entity) int { return cmp.Compare(a.Start, b.Start) })
	out := make([]Span, 0, len(found))
	index := make(map[string]int, len(found)) // out's place of each id
	at, atCP := 0, 0                          // a running count of the window's code points
	cp := func(b int) int {
		atCP += utf8.RuneCountInString(window[at:b])
		at = b
		return atCP
	}
	for _, f := range found {
		if f.Start < 0 || f.End > len(window) || f.Start >= f.End || !onRune(window, f.Start) || !onRune(window, f.End) {
			continue // not a span of this text: cutting a character in two can be no one's
		}
		sCP := cp(f.Start)
		eCP := sCP + utf8.RuneCountInString(window[f.Start:f.End])
		sp := Span{Entity: entities.Entity{Label: f.Label, Start: start + f.Start, End: start + f.End, Score: f.Score},
			CharStart: startCP + sCP, CharEnd: startCP + eCP}
		sp.ID = ID(sp.Label, sp.CharStart)
		if i, ok := index[sp.ID]; ok {
			out[i] = sp // one label at one start: the last found stands, as OpenMed's
			continue
		}
		index[sp.ID] = len(out)
		out = append(out, sp)
	}
	return out
}

func onRune(text string, i int) bool { return i == len(text) || utf8.RuneStart(text[i]) }

// ID is a span's id: its label and start, hashed.
func ID(label string, start int) string {
	h := sha256.Sum256([]byte(label + "\x00" + strconv.Itoa(start)))
	return "ent_" + hex.EncodeToString(h[:8])
}

// advance returns the byte offset n code points after from (or the text's end) and how many
// code points that is.
func advance(text string, from, n int) (int, int) {
	i, k := from, 0
	for i < len(text) && k < n {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		k++
	}
	return i, k
}

// back returns the byte offset n code points before end, not before start.
func back(text string, start, end, n int) (int, int) {
	i, k := end, 0
	for i > start && k < n {
		_, size := utf8.DecodeLastRuneInString(text[start:i])
		i -= size
		k++
	}
	return i, k
}

// wordStart moves cut back to the start of the word it falls in (a run of letters, digits and
// marks), not before start.
func wordStart(text string, start, cut int) int {
	if cut >= len(text) {
		return cut
	}
	if r, _ := utf8.DecodeRuneInString(text[cut:]); !inWord(r) {
		return cut
	}
	for cut > start {
		r, size := utf8.DecodeLastRuneInString(text[start:cut])
		if !inWord(r) {
			break
		}
		cut -= size
	}
	return cut
}

// lastDocumentStart is the last offset in (lo, hi] where a document begins after a blank
// line (a line break, blanks, another line break, then anything but blanks), or -1.
func lastDocumentStart(text string, lo, hi int) int {
	found := -1
	for i := max(lo, 0); i < hi; i++ {
		end, ok := entities.BlankLine(text[:hi], i)
		if !ok {
			continue
		}
		if end > lo && (end == len(text) || !isBlank(text[end])) {
			found = end
		}
		i = end - 1
	}
	return found
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

func inWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

func sortedSpans(m map[string]Span) []Span {
	out := make([]Span, 0, len(m))
	for _, sp := range m {
		out = append(out, sp)
	}
	slices.SortFunc(out, func(a, b Span) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}
