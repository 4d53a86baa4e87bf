package entities

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Options are the OpenMed REST request options applied on top of HF decoding.
type Options struct {
	// Strategy is the HF aggregation strategy; OpenMed's default is StrategySimple.
	Strategy Strategy
	// ConfidenceThreshold drops entities scoring below it, before any grouping, as
	// OpenMed's formatter does. 0 keeps everything.
	ConfidenceThreshold float64
	// ExtendToWordEnd is OpenMed's span fix: an entity whose end falls inside a word is
	// extended over the following letters, marks and digits, at most 10 code points.
	// OpenMed always does this; it makes "simple" entities cover whole words.
	ExtendToWordEnd bool
	// GroupEntities merges consecutive entities of the same label that are at most two
	// code points apart on one line (OpenMed's group_entities); see GroupAdjacent.
	GroupEntities bool
	// SmartMerge, when set, runs OpenMed's PII smart merging last; see SmartMerge.
	SmartMerge *SmartMergeConfig
	// DropImplausible removes, after smart merging, the identifier entities whose text
	// cannot be what their label says (see Implausible), and takes a possessive or a full
	// stop off a name. Not OpenMed's.
	DropImplausible bool
}

// AnalyzeOptions are the defaults of OpenMed's POST /analyze: simple aggregation, no
// threshold, no grouping.
func AnalyzeOptions() Options {
	return Options{Strategy: StrategySimple, ExtendToWordEnd: true}
}

// PIIOptions are the defaults of OpenMed's POST /pii/extract: simple aggregation,
// threshold 0.5, adjacent grouping and smart merging with the default English patterns.
// Building them copies the pattern list, so build them once and copy the Options value
// per request (Extract only reads the SmartMergeConfig it points to).
func PIIOptions() Options {
	sm := DefaultSmartMerge()
	return Options{
		Strategy:            StrategySimple,
		ConfidenceThreshold: 0.5,
		ExtendToWordEnd:     true,
		GroupEntities:       true,
		SmartMerge:          &sm,
		DropImplausible:     true,
	}
}

// Validate rejects options no request should carry.
func (o Options) Validate() error {
	if o.Strategy < StrategyNone || o.Strategy > StrategyMax {
		return fmt.Errorf("entities: unknown aggregation strategy %d", int(o.Strategy))
	}
	if math.IsNaN(o.ConfidenceThreshold) || o.ConfidenceThreshold < 0 || o.ConfidenceThreshold > 1 {
		return fmt.Errorf("entities: confidence threshold must be in [0, 1]")
	}
	return nil
}

// Extract is Decode followed by OpenMed's steps, in OpenMed's order: labels without their
// B-/I- prefix (StrategyNone), threshold, span fix, adjacent grouping, then smart merging.
// The result is sorted by start.
func (d *Decoder) Extract(text string, toks Tokens, logits []float32, opts Options) ([]Entity, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ents, err := d.Decode(text, toks, logits, opts.Strategy)
	if err != nil {
		return nil, err
	}
	return PostProcess(text, ents, opts), nil
}

// PostProcess applies the OpenMed steps of Extract to already decoded entities (in text
// order, with valid spans, as Decode returns them). It reuses the entities' storage.
//
// With StrategyNone the entities carry HF's full labels ("B-PER", "I-PER"); OpenMed's
// formatter takes the B-/I- prefix off each before anything else, so the tokens of one name
// are the same label and grouping can join them.
func PostProcess(text string, ents []Entity, opts Options) []Entity {
	if opts.Strategy == StrategyNone {
		for i := range ents {
			_, ents[i].Label = splitTag(ents[i].Label)
		}
	}
	ents = Threshold(ents, opts.ConfidenceThreshold)
	if opts.ExtendToWordEnd {
		ents = ExtendToWordEnd(text, ents)
	}
	if opts.GroupEntities {
		ents = GroupAdjacent(text, ents)
	}
	if opts.SmartMerge != nil {
		ents = SmartMerge(text, ents, *opts.SmartMerge)
	}
	if opts.DropImplausible {
		kept := ents[:0]
		for _, e := range ents {
			e.End = e.Start + len(trimName(e.Label, text[e.Start:e.End]))
			if e.End > e.Start && !Implausible(e.Label, text[e.Start:e.End]) {
				kept = append(kept, e)
			}
		}
		ents = kept
	}
	// Grouping widens a group to its word's start, which can put it before an entity that
	// begins inside that word and came first.
	slices.SortStableFunc(ents, byStart)
	return ents
}

// trimName is a person's name without the possessive or the full stop a model took with it
// ("Abc's", "Carlos'", "X."): the name is the words, and a surrogate for "Abc's" would
// otherwise lose the "'s" the sentence needs. Other labels are left as they are.
func trimName(label, text string) string {
	switch strings.ToLower(label) {
	case "first_name", "last_name", "name", "person", "given_name", "surname", "firstname", "lastname":
	default:
		return text
	}
	for _, suffix := range []string{"'s", "'S", "\u2019s", "'", "\u2019", "."} {
		if t, ok := strings.CutSuffix(text, suffix); ok {
			return strings.TrimRight(t, " ")
		}
	}
	return text
}

// Threshold keeps the entities whose score is at least minScore, in place.
func Threshold(ents []Entity, minScore float64) []Entity {
	kept := ents[:0]
	for _, e := range ents {
		if e.Score >= minScore {
			kept = append(kept, e)
		}
	}
	return kept
}

// maxWordExtension is how far OpenMed lets a span's end run on into a word.
const maxWordExtension = 10

// ExtendToWordEnd moves each entity's end forward over letters, combining marks and
// digits (Unicode categories L, M, N), at most 10 code points, then trims whitespace. This
// is OpenMed's fix for ends that stop inside a word. Entities may overlap afterwards, as
// they do in OpenMed.
func ExtendToWordEnd(text string, ents []Entity) []Entity {
	for i := range ents {
		e := &ents[i]
		for n := 0; n < maxWordExtension && e.End < len(text); n++ {
			r, size := utf8.DecodeRuneInString(text[e.End:])
			if !isWordRune(r) {
				break
			}
			e.End += size
		}
	}
	return ents
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r)
}

// isAlnum is Python's str.isalnum for one code point: letters and numbers, not marks.
func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// maxGroupGap is OpenMed's "allow small gaps" between grouped entities, in code points.
const maxGroupGap = 2

// GroupAdjacent is OpenMed's group_entities. Walking entities in order, an entity joins
// the current group when it has the same label as the group's last member and starts at
// most two code points after that member's end (or overlaps it), and no line break stands
// between them. A group of two or more becomes one entity: the first member's label, the mean score, and a span from the first
// member's start to the last member's end, widened on both sides over adjoining letters
// and digits so that it never stops inside a word.
func GroupAdjacent(text string, ents []Entity) []Entity {
	if len(ents) == 0 {
		return ents
	}
	out := ents[:0]
	i := 0
	for i < len(ents) {
		j := i + 1
		sum := ents[i].Score
		for j < len(ents) && ents[j].Label == ents[i].Label && closeAfter(text, ents[j-1], ents[j]) {
			sum += ents[j].Score
			j++
		}
		if j-i == 1 {
			out = append(out, ents[i])
			i = j
			continue
		}
		g := Entity{Label: ents[i].Label, Start: ents[i].Start, End: ents[j-1].End, Score: sum / float64(j-i)}
		for g.Start > 0 {
			r, size := utf8.DecodeLastRuneInString(text[:g.Start])
			if !isAlnum(r) {
				break
			}
			g.Start -= size
		}
		for g.End < len(text) {
			r, size := utf8.DecodeRuneInString(text[g.End:])
			if !isAlnum(r) {
				break
			}
			g.End += size
		}
		if g.End < g.Start {
			// The last member ended before the group began; OpenMed would keep an empty
			// span here, which no client can use.
			g.End = g.Start
		}
		out = appendClean(out, text, g)
		i = j
	}
	return out
}

// closeAfter reports whether next starts no more than maxGroupGap code points after last
// ends, with no line break between them. OpenMed groups only within one sentence, and refuses
// a gap holding a line break (not a tab: a table row's cells may group); a line break is where
// the CRF keeps two list items apart ("John" and "Mary" on lines of their own), and grouping
// joined them again.
func closeAfter(text string, last, next Entity) bool {
	if next.Start <= last.End {
		return true
	}
	if next.Start-last.End > maxGroupGap*utf8.UTFMax {
		return false
	}
	gap := text[last.End:next.Start]
	return utf8.RuneCountInString(gap) <= maxGroupGap && !strings.ContainsAny(gap, lineBreaks)
}

// lineBreaks are the line breaks a group does not cross, as OpenMed's: the CRF's breakChars
// but the tab.
const lineBreaks = "\n\r\v\f\u0085\u2028\u2029"
