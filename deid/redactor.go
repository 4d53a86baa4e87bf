package deid

import (
	"cmp"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	mrand "math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/settings"
)

// Config sets up a Redactor.
type Config struct {
	// HashKey keys the hash method and reversible ids: the same key gives the same hashes on
	// every replica. Nil draws a random key, so hashes agree only within one process. At
	// least 16 bytes when set.
	HashKey []byte
	// Entropy seeds each document's randomness (its date offset and surrogates); nil is
	// crypto/rand. Tests pass a fixed stream.
	Entropy io.Reader
}

// MinHashKey is the shortest HashKey accepted.
const MinHashKey = 16

// Redactor de-identifies documents. Create it with New; it is safe for concurrent use.
type Redactor struct {
	key   []byte
	keyed bool // key is Config.HashKey (or derived from it), not drawn for this process
	src   *entropy
}

// entropy is the Redactor's source of document randomness, shared by its Scoped views.
type entropy struct {
	mu sync.Mutex // guards r, which need not be safe for concurrent reads
	r  io.Reader
}

// Validate reports every field that is wrong: the result joins one *settings.Problem per bad
// field.
func (c Config) Validate() error {
	check := settings.For("deid")
	if c.HashKey != nil && len(c.HashKey) < MinHashKey {
		check.Addf("HashKey", "must be at least %d bytes, got %d", MinHashKey, len(c.HashKey))
	}
	return check.Err()
}

// New checks cfg and returns a Redactor.
func New(cfg Config) (*Redactor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Redactor{key: slices.Clone(cfg.HashKey), keyed: cfg.HashKey != nil, src: &entropy{r: cfg.Entropy}}
	if r.src.r == nil {
		r.src.r = rand.Reader
	}
	if r.key == nil {
		r.key = make([]byte, 32)
		if _, err := io.ReadFull(r.src.r, r.key); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// tenantDomain separates the derivation of a tenant's key from every use of the key itself.
const tenantDomain = "sluice/deid/tenant/v1"

// Scoped is r for one tenant: every keyed result (hash, reversible id, fingerprint, a
// subject's date shift and surrogates) is derived under HMAC-SHA256(key, the tenant), so that
// no caller can use the service to recompute, and so confirm, what it gives another tenant
// for the same original or subject. The tenant "" (a server without identities) is r itself.
func (r *Redactor) Scoped(tenant string) *Redactor {
	if tenant == "" {
		return r
	}
	h := hmac.New(sha256.New, r.key)
	h.Write([]byte(tenantDomain))
	h.Write([]byte{0})
	h.Write([]byte(tenant))
	return &Redactor{key: h.Sum(nil), keyed: r.keyed, src: r.src}
}

// Options are one request's choices.
type Options struct {
	// Method applies to every span no policy decides (the zero value is Mask).
	Method Method
	// Policy, when not nil, decides every span's action.
	Policy *Policy
	// KeepYear keeps a shifted date's year.
	KeepYear bool
	// KeepMapping returns the mapping from replacements to originals.
	KeepMapping bool
	// ShiftDays is the shift_dates offset (0 leaves dates as they are, as OpenMed's); nil
	// draws one, non-zero, in [-364, 364].
	ShiftDays *int
	// Lang is the text's language, for the day/month order of numeric dates.
	Lang string
	// Subject, when not "", names the person the text is about (a patient id; CheckSubject
	// says which are valid): the date shift and every surrogate are then derived from a keyed
	// hash of it (and of each original), not drawn, so that every document of one subject
	// gets the same stand-in for the same original and the same shift, whatever else it holds
	// and in whatever order, on every process that shares the key (Keyed).
	Subject string
	// Lists are the request's allow and deny lists. Apply applies them to the spans it is
	// given (after every detector, the safety sweep included; Lists.Redacting); a Document's
	// parts do not, since a part may cut a term: a stream applies them where it finds its
	// spans.
	Lists *entities.Lists
}

// Redaction is what became of one span.
type Redaction struct {
	entities.Entity
	// Canonical is the span's kind in OpenMed's taxonomy (FIRST_NAME, DATE, OTHER, ...).
	Canonical string
	// Method is what was applied.
	Method Method
	// PolicyAction is the policy's action for the span; "" without a policy.
	PolicyAction Action
	// Replacement is the text that stands where the span was.
	Replacement string
	// ReversibleID is a keyed id of the span, when the policy asks for one.
	ReversibleID string
}

// Result is a de-identified document.
type Result struct {
	Text string
	// Redactions are the spans replaced, in text order; spans a policy keeps are not here.
	Redactions []Redaction
	// Mapping maps each replacement to its original, when the options or the policy ask for
	// it (nil otherwise). See the package documentation for its keys.
	Mapping map[string]string
}

// DateShifted stands for a date span that shift_dates could not read or move.
const DateShifted = "[DATE_SHIFTED]"

// Apply de-identifies text, whose identifiers are spans (in any order; overlaps are resolved)
// with the options' lists applied.
func (r *Redactor) Apply(text string, spans []entities.Entity, o Options) Result {
	d := r.Begin(o)
	out, reds := d.Redact(text, 0, o.Lists.Redacting(text, spans))
	return Result{Text: out, Redactions: reds, Mapping: d.Mapping()}
}

// Document de-identifies one text part by part, in order, as a stream does: one date offset,
// one set of surrogates, one numbering and one mapping for all its parts. It is not safe for
// concurrent use.
type Document struct {
	r           *Redactor
	o           Options
	keepMapping bool
	days        int
	subs        *surrogates
	numbered    map[string]int
	mapping     *mapper
	// before is the end of the parts redacted so far (a stream's earlier chunks), where the
	// title of a name that begins the next part stands.
	before string
}

// titleRoom is how much of the parts before is kept for a title ("Mister. " and more).
const titleRoom = 16

// Begin starts a document.
func (r *Redactor) Begin(o Options) *Document {
	if o.Method == "" {
		o.Method = Mask
	}
	d := &Document{r: r, o: o, keepMapping: o.KeepMapping || (o.Policy != nil && o.Policy.KeepMapping),
		numbered: map[string]int{}}
	switch {
	case o.Subject != "":
		d.subs = newSurrogates(nil, o.Lang)
		d.subs.seed = func(canonical, original string) [32]byte { return r.subjectSeed(o.Subject, canonical, original) }
		d.days = r.subjectDays(o.Subject)
	default:
		rnd := r.document()
		d.subs = newSurrogates(rnd.src, o.Lang)
		// Not a whole year either way: with keep_year, a year's shift would give the date back.
		for o.ShiftDays == nil && d.days == 0 {
			d.days = rnd.IntN(729) - 364
		}
	}
	if o.ShiftDays != nil {
		d.days = *o.ShiftDays
	}
	if d.keepMapping {
		d.mapping = newMapper()
	}
	return d
}

// Redact de-identifies part, the document's text from byte offset base on, whose spans are
// given in part's own offsets. The redactions it returns are in the whole text's offsets.
func (d *Document) Redact(part string, base int, spans []entities.Entity) (string, []Redaction) {
	var out []Redaction
	var b strings.Builder
	at := 0
	resolved := resolve(part, outsideContext(part, spans), d.keeps)
	for _, sp := range resolved {
		// "Mr. Alan Brooks": a man's name stands in for Alan wherever Alan is.
		before := part[:sp.Start]
		if strings.TrimSpace(before) == "" {
			before = d.before + before // a chunk that begins with the name: its title ended the last
		}
		if sex := titleSex(before); sex != 0 {
			d.subs.sexOf[part[sp.Start:sp.End]] = sex
		}
		d.subs.saw(kindOf(sp.Label), part[sp.Start:sp.End])
	}
	for _, sp := range resolved {
		original := part[sp.Start:sp.End]
		b.WriteString(part[at:sp.Start])
		at = sp.End
		red, ok := d.redact(entities.Entity{Start: base + sp.Start, End: base + sp.End, Label: sp.Label, Score: sp.Score}, original)
		if !ok {
			b.WriteString(original) // the policy keeps it
			continue
		}
		b.WriteString(red.Replacement)
		if d.mapping != nil {
			d.mapping.add(red.Replacement, original)
		}
		out = append(out, red)
	}
	b.WriteString(part[at:])
	if len(part) >= titleRoom {
		d.before = part[len(part)-titleRoom:]
	} else {
		d.before += part
		d.before = d.before[max(0, len(d.before)-titleRoom):]
	}
	return b.String(), out
}

// Mapping is the replacements of every part so far mapped to their originals, when the options
// or the policy ask for it (nil otherwise). See the package documentation for its keys.
func (d *Document) Mapping() map[string]string {
	if d.mapping == nil {
		return nil
	}
	return d.mapping.m
}

// keeps reports whether the document's policy keeps spans of label in clear.
func (d *Document) keeps(label string) bool {
	return d.o.Policy != nil && d.o.Policy.action(kindOf(label)) == ActKeep
}

// redact decides one span's replacement; ok is false when the policy keeps the span.
func (d *Document) redact(sp entities.Entity, original string) (red Redaction, ok bool) {
	o := &d.o
	k := kindOf(sp.Label)
	red = Redaction{Entity: sp, Canonical: k.canonical, Method: o.Method}
	if o.Policy != nil {
		a := o.Policy.action(k)
		if a == ActKeep {
			return red, false
		}
		red.PolicyAction, red.Method = a, a.method()
	}
	number := false
	switch red.Method {
	case Mask:
		red.Replacement, number = "["+sp.Label+"]", true
	case Remove:
		if d.keepMapping {
			red.Replacement, number = "["+sp.Label+"_REMOVED]", true
		}
	case Replace:
		red.Replacement = d.surrogate(sp.Label, k, original)
	case Hash:
		red.Replacement = sp.Label + "_" + d.r.mac(original)[:8]
	case ShiftDates:
		if !isDate(k) {
			red.Replacement, number = "["+sp.Label+"]", true
		} else if moved, ok := movedDate(original, o.Lang, d.days, o.KeepYear); ok {
			red.Replacement = moved
		} else {
			red.Replacement = DateShifted
		}
	}
	if number && d.keepMapping {
		d.numbered[sp.Label]++
		if n := d.numbered[sp.Label]; n > 1 {
			red.Replacement = strings.TrimSuffix(red.Replacement, "]") + "_" + strconv.Itoa(n) + "]"
		}
	}
	if o.Policy != nil && o.Policy.ReversibleID {
		red.ReversibleID = "rev_" + d.r.mac(strings.Join([]string{o.Policy.Name, sp.Label,
			strconv.Itoa(sp.Start), strconv.Itoa(sp.End), original}, "|"))[:24]
	}
	return red, true
}

// surrogate is replace's stand-in for original, one a reader believes within the document:
// every date moved by the document's one offset (their order and intervals kept, a date of
// birth still agreeing with a stated age), in its own layout, keep_year honoured; an age kept
// unless it is over 89, which HIPAA's Safe Harbor aggregates ("90+"); anything else drawn,
// in the original's case, a given name after "Mr" or "Mrs" of the sex the title says.
func (d *Document) surrogate(label string, k kind, original string) string {
	switch {
	case isDate(k):
		if moved, ok := movedDate(original, d.o.Lang, d.days, d.o.KeepYear); ok && d.days != 0 { // 0 is no stand-in
			return moved
		}
	case k.canonical == "AGE":
		if age, ok := aggregateAge(original); ok {
			return age
		}
	}
	return d.subs.get(label, k, original)
}

// aggregateAge is an age written in digits as Safe Harbor lets it be shown: as it is up to
// 89, "90+" above (in the original's words, "92 y/o" is "90+ y/o"); ok is false for an age
// not in digits ("ninety-two"), which is drawn instead.
func aggregateAge(original string) (string, bool) {
	i := strings.IndexFunc(original, func(r rune) bool { return r >= '0' && r <= '9' })
	if i < 0 {
		return "", false
	}
	j := i
	for j < len(original) && original[j] >= '0' && original[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(original[i:j])
	switch {
	case err != nil:
		return "", false
	case n <= 89:
		return original, true
	}
	return original[:i] + "90+" + original[j:], true
}

// Fingerprint is a keyed hash of s ("hmac-sha256:" and 64 hex digits), for audit records that
// must tell texts apart without holding them.
func (r *Redactor) Fingerprint(s string) string { return "hmac-sha256:" + r.mac(s) }

// Fingerprinter is Fingerprint of a text written piece by piece.
type Fingerprinter struct{ h hash.Hash }

// NewFingerprinter starts a Fingerprint.
func (r *Redactor) NewFingerprinter() *Fingerprinter {
	return &Fingerprinter{h: hmac.New(sha256.New, r.key)}
}

// WriteString adds s to the text.
func (f *Fingerprinter) WriteString(s string) { _, _ = io.WriteString(f.h, s) }

// String is the Fingerprint of everything written.
func (f *Fingerprinter) String() string { return "hmac-sha256:" + hex.EncodeToString(f.h.Sum(nil)) }

// document is one Document's randomness, seeded from the Redactor's entropy.
type document struct {
	*mrand.Rand
	src *mrand.ChaCha8
}

func (r *Redactor) document() document {
	var seed [32]byte
	r.src.mu.Lock()
	_, err := io.ReadFull(r.src.r, seed[:])
	r.src.mu.Unlock()
	if err != nil {
		// Only a broken entropy source fails; crypto/rand does not. Fall back to the
		// runtime's own randomness rather than a fixed seed.
		for i := range seed {
			seed[i] = byte(mrand.Uint32())
		}
	}
	src := mrand.NewChaCha8(seed)
	return document{Rand: mrand.New(src), src: src}
}

func (r *Redactor) mac(s string) string {
	h := hmac.New(sha256.New, r.key)
	h.Write([]byte(s))
	return hex.EncodeToString(h.Sum(nil))
}

// contextWord is a word that introduces a number ("acct #", "MRN:", "cell", "DOB"): a model
// or a pattern may take it into the span, but it identifies no one, and a reader needs it.
var contextWord = regexp.MustCompile(`(?i)^(?:acct|account|a/c|mrn|mr|med(?:ical)?\s*rec(?:ord)?|ssn|no|nr|num(?:ber)?|id|tel|phone|ph|cell|mobile|fax|pager|dob)\b\.?\s*(?:#|no\.?|num(?:ber)?)?\s*[:#]?\s*`)

// outsideContext moves the start of each number-like span past a context word it begins
// with, so that "acct #884-223-019" becomes "acct #" and a replaced number.
func outsideContext(text string, spans []entities.Entity) []entities.Entity {
	var out []entities.Entity
	for i, sp := range spans {
		if sp.Start < 0 || sp.End > len(text) || sp.Start >= sp.End || !numberKinds[kindOf(sp.Label).canonical] {
			continue
		}
		n := len(contextWord.FindString(text[sp.Start:sp.End]))
		if n == 0 || sp.Start+n >= sp.End || text[sp.Start+n] < '0' || text[sp.Start+n] > '9' {
			continue
		}
		if out == nil {
			out = slices.Clone(spans)
		}
		out[i].Start += n
	}
	if out == nil {
		return spans
	}
	return out
}

// numberKinds are the kinds whose spans are numbers a context word may introduce.
var numberKinds = map[string]bool{"ID_NUM": true, "ACCOUNT_NUMBER": true, "SSN": true, "PHONE": true,
	"CREDIT_CARD": true, "DATE_OF_BIRTH": true, "DATE": true, "OTHER": true}

// resolve returns the valid spans of text that do not overlap, in text order. Spans that
// overlap, directly or through others, become one span over all their text, so that no
// character any of them found stays in clear; it takes the label and score of the one ranked
// first (best) of those that keeps does not keep, where there is one: a name inside a city the
// policy keeps, or a deny term inside an organisation, is not kept with it. keeps may be nil.
func resolve(text string, spans []entities.Entity, keeps func(label string) bool) []entities.Entity {
	cands := make([]entities.Entity, 0, len(spans))
	for _, s := range spans {
		if s.Start >= 0 && s.Start < s.End && s.End <= len(text) && onRune(text, s.Start) && onRune(text, s.End) {
			cands = append(cands, s)
		}
	}
	slices.SortStableFunc(cands, func(a, b entities.Entity) int { return cmp.Compare(a.Start, b.Start) })
	out := cands[:0:0]
	for i := 0; i < len(cands); {
		j, end := i+1, cands[i].End
		for j < len(cands) && cands[j].Start < end {
			end = max(end, cands[j].End)
			j++
		}
		if j == i+1 {
			out = append(out, cands[i])
		} else {
			merged := best(cands[i:j])
			if keeps != nil && keeps(merged.Label) {
				redacted := slices.DeleteFunc(slices.Clone(cands[i:j]), func(e entities.Entity) bool { return keeps(e.Label) })
				if len(redacted) > 0 {
					merged = best(redacted)
				}
			}
			merged.Start, merged.End = cands[i].Start, end
			out = append(out, merged)
		}
		i = j
	}
	return out
}

// onRune reports whether byte offset i of text starts a character (or is its end).
func onRune(text string, i int) bool { return i == len(text) || utf8.RuneStart(text[i]) }

// best is the span of a cluster of overlapping spans that names it: the longest, then the
// highest score, then the earliest.
func best(cluster []entities.Entity) entities.Entity {
	return slices.MinFunc(cluster, func(a, b entities.Entity) int {
		if c := cmp.Compare(b.End-b.Start, a.End-a.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Start, b.Start)
	})
}

// mapper maps every replacement to its original; a replacement that stands for several
// different originals keys the later ones "replacement#n", numbered in text order.
type mapper struct {
	m     map[string]string
	keyOf map[[2]string]string // (replacement, original) -> its key
	next  map[string]int       // replacement -> originals seen behind it
}

func newMapper() *mapper {
	return &mapper{m: map[string]string{}, keyOf: map[[2]string]string{}, next: map[string]int{}}
}

func (p *mapper) add(replacement, original string) {
	pair := [2]string{replacement, original}
	if _, seen := p.keyOf[pair]; seen {
		return
	}
	key := replacement
	if n := p.next[replacement]; n > 0 {
		key += "#" + strconv.Itoa(n+1)
	}
	p.next[replacement]++
	p.keyOf[pair] = key
	p.m[key] = original
}
