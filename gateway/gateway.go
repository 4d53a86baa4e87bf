package gateway

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
)

// Map is one request's placeholders: which original each stands for. It is not safe for
// concurrent use; a request uses its own.
type Map struct {
	toPlaceholder map[string]string // kind + "\x00" + original -> placeholder
	toOriginal    map[string]string // placeholder -> original
	counts        map[string]int    // kind -> placeholders made
	// literal are the placeholders the request's own texts already held (an earlier
	// answer's "[PERSON_1]" pasted back): never made again for an original, and written
	// back as they are when the model repeats them.
	literal map[string]bool
}

// NewMap returns an empty map.
func NewMap() *Map {
	return &Map{toPlaceholder: map[string]string{}, toOriginal: map[string]string{}, counts: map[string]int{},
		literal: map[string]bool{}}
}

// Reserve notes the placeholders texts already hold as text of their own. Redact notes its
// own text's; a request of several texts reserves them all before redacting any, so that
// no text's literal can share a number with another's original.
func (m *Map) Reserve(texts ...string) {
	for _, text := range texts {
		pieces(text, func(piece string, placeholder bool) {
			if _, ours := m.toOriginal[piece]; placeholder && !ours {
				m.literal[piece] = true
			}
		})
	}
}

// pieces hands each the runs of a whole text in order: every complete placeholder, and the
// text between them.
func pieces(text string, each func(piece string, placeholder bool)) {
	for text != "" {
		i := strings.IndexByte(text, '[')
		if i < 0 {
			each(text, false)
			return
		}
		n, state := scan(text[i:])
		if state != complete {
			each(text[:i+1], false)
			text = text[i+1:]
			continue
		}
		if i > 0 {
			each(text[:i], false)
		}
		each(text[i:i+n], true)
		text = text[i+n:]
	}
}

// Placeholders lists the map's placeholders, sorted (never the originals).
func (m *Map) Placeholders() []string {
	out := make([]string, 0, len(m.toOriginal))
	for p := range m.toOriginal {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Len is how many placeholders the map holds.
func (m *Map) Len() int { return len(m.toOriginal) }

// Redact returns text with each span replaced by its placeholder. Overlapping spans are merged
// into the first's kind; spans out of range are ignored. The same original of the same kind
// gets the same placeholder in every text this map redacts.
func (m *Map) Redact(text string, spans []entities.Entity) string {
	m.Reserve(text)
	sorted := slices.Clone(spans)
	for i := range sorted {
		sorted[i].End = min(sorted[i].End, len(text)) // a span past the end still covers what is there
	}
	// By start, the longest first: its kind names a group of overlapping spans.
	slices.SortFunc(sorted, func(a, b entities.Entity) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	var b strings.Builder
	at := 0
	for i := 0; i < len(sorted); i++ {
		s := sorted[i]
		if s.Start < at || s.Start < 0 || s.Start >= s.End {
			continue // inside the span before (merged there), or not a span of this text
		}
		end := s.End
		for i+1 < len(sorted) && sorted[i+1].Start < end {
			end = max(end, sorted[i+1].End)
			i++
		}
		b.WriteString(text[at:s.Start])
		b.WriteString(m.placeholder(deid.Canonical(s.Label), text[s.Start:end]))
		at = end
	}
	b.WriteString(text[at:])
	return b.String()
}

func (m *Map) placeholder(kind, original string) string {
	key := kind + "\x00" + original
	if p, ok := m.toPlaceholder[key]; ok {
		return p
	}
	var p string
	for p == "" || m.literal[p] {
		m.counts[kind]++
		p = "[" + kind + "_" + strconv.Itoa(m.counts[kind]) + "]"
	}
	m.toPlaceholder[key] = p
	m.toOriginal[p] = original
	return p
}

// Contains says whether text, outside its placeholders, still holds an original the map
// replaced somewhere, as whole words, in any case: the check that nothing redacted in one place appears
// unredacted in another. Originals shorter than three bytes are not looked for (an age "4"
// would match every 4).
func (m *Map) Contains(text string) bool {
	var outside strings.Builder
	pieces(text, func(piece string, placeholder bool) {
		if placeholder {
			piece = " "
		}
		outside.WriteString(piece)
	})
	folded := strings.ToLower(outside.String())
	for _, o := range m.toOriginal {
		if len(o) >= 3 && containsWords(folded, strings.ToLower(o)) {
			return true
		}
	}
	return false
}

// containsWords says whether words stands in text as whole words: "ann" is not in "annual".
func containsWords(text, words string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], words)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(words)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if (start == 0 || !inWord(before)) && (end == len(text) || !inWord(after)) {
			return true
		}
		from = start + 1
	}
}

func inWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

// Wipe forgets every original. The strings themselves are immutable and left to the garbage
// collector; what Wipe guarantees is that nothing reachable from the map holds them.
func (m *Map) Wipe() {
	clear(m.toPlaceholder)
	clear(m.toOriginal)
	clear(m.counts)
	clear(m.literal)
}

// Restorer writes a model's output back with the originals, piece by piece.
type Restorer struct {
	m        *Map
	pending  string // text from a "[" that may still become a placeholder
	invented int
	// json writes each original as the inside of a JSON string: the output is JSON (an
	// answer held to a schema, a tool call's arguments), where a placeholder, being valid
	// only inside a string, is restored inside one.
	json bool
}

// Restorer returns a restorer over m's placeholders.
func (m *Map) Restorer() *Restorer { return &Restorer{m: m} }

func (m *Map) restorer(json bool) *Restorer { return &Restorer{m: m, json: json} }

// jsonEscaped is s as the inside of a JSON string.
func jsonEscaped(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// Restore is the whole of text restored: Write then Flush.
func (m *Map) Restore(text string) (string, int) {
	r := m.Restorer()
	out := r.Write(text) + r.Flush()
	return out, r.invented
}

// maxPlaceholder bounds how much a Restorer holds back: no placeholder is longer.
const maxPlaceholder = 64

// Masked replaces a placeholder the map does not hold.
const Masked = "[REDACTED]"

// Write takes the next piece of output and returns what can be emitted now: everything up to
// a "[" whose placeholder is not complete yet, with complete placeholders restored.
func (r *Restorer) Write(piece string) string {
	text := r.pending + piece
	r.pending = ""
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '[')
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		text = text[i:]
		n, state := scan(text)
		switch state {
		case partial:
			r.pending = text
			return b.String()
		case notPlaceholder:
			b.WriteByte('[')
			text = text[1:]
		case complete:
			token := text[:n]
			if original, ok := r.m.toOriginal[token]; ok {
				if r.json {
					original = jsonEscaped(original)
				}
				b.WriteString(original)
			} else if r.m.literal[token] {
				b.WriteString(token) // the request's own text, repeated
			} else {
				b.WriteString(Masked)
				r.invented++
			}
			text = text[n:]
		}
	}
}

// Flush ends the output. What was held back cannot be completed any more: a lone "[" is
// emitted, anything longer (the start of a placeholder, cut off) is masked, never written
// half.
func (r *Restorer) Flush() string {
	p := r.pending
	r.pending = ""
	if len(p) > 1 {
		return Masked
	}
	return p
}

// Invented counts the complete placeholders the map did not hold, which were masked.
func (r *Restorer) Invented() int { return r.invented }

// knownKinds are the kinds a placeholder can name: "[STEP_2]" in a model's answer is its
// own text, not a placeholder it invented.
var knownKinds = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range deid.Kinds() {
		m[k] = true
	}
	return m
}()

type scanState uint8

const (
	partial scanState = iota
	notPlaceholder
	complete
)

// scan reads a possible placeholder at the start of text (which starts with "["): complete
// with its length, partial when text ends before it could be decided, or not one.
func scan(text string) (int, scanState) {
	digits, underscore := 0, false
	for i := 1; i < len(text); i++ {
		c := text[i]
		switch {
		case c == ']':
			if i >= 2 && text[1] >= 'A' && text[1] <= 'Z' && underscore && digits > 0 && text[i-1] >= '0' && text[i-1] <= '9' &&
				knownKinds[text[1:i-digits-1]] {
				return i + 1, complete
			}
			return 0, notPlaceholder
		case c >= 'A' && c <= 'Z':
			if digits > 0 {
				digits = 0 // "_2A": the number was part of the kind
			}
		case c == '_':
			underscore, digits = true, 0
		case c >= '0' && c <= '9':
			if !underscore {
				return 0, notPlaceholder
			}
			digits++
		default:
			return 0, notPlaceholder
		}
		if i+1 >= maxPlaceholder {
			return 0, notPlaceholder
		}
	}
	if !couldBegin(text[1:]) {
		return 0, notPlaceholder // "[NOTE" at the end of a piece: the answer's own, no kind begins so
	}
	return 0, partial
}

// couldBegin says whether body, what follows a "[", can still become a placeholder: it begins
// a known kind and its underscore, or is one followed by digits.
func couldBegin(body string) bool {
	for k := range knownKinds {
		kind := k + "_"
		if strings.HasPrefix(kind, body) {
			return true
		}
		if rest, ok := strings.CutPrefix(body, kind); ok && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}
