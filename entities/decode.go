package entities

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Entity is one span the model found. Start and End are BYTE offsets into the text, so
// text[Start:End] is the entity text; CodePointSpans converts them for clients that count
// code points.
type Entity struct {
	Label      string
	Start, End int
	Score      float64
}

// Strategy is HF TokenClassificationPipeline's aggregation_strategy.
type Strategy int

const (
	// StrategyNone returns one entity per token with its full label ("B-DRUG"), no grouping;
	// Extract then takes the B-/I- prefix off, as OpenMed does.
	StrategyNone Strategy = iota
	// StrategySimple groups tokens by B-/I- tags; pieces of one word may get different labels.
	StrategySimple
	// StrategyFirst gives each word the label of its first token.
	StrategyFirst
	// StrategyAverage gives each word the argmax of its tokens' averaged probabilities.
	StrategyAverage
	// StrategyMax gives each word the label of its single most confident token.
	StrategyMax
)

var strategyNames = [...]string{"none", "simple", "first", "average", "max"}

func (s Strategy) String() string {
	if s < 0 || int(s) >= len(strategyNames) {
		return fmt.Sprintf("Strategy(%d)", int(s))
	}
	return strategyNames[s]
}

// ParseStrategy reads an aggregation strategy name, case-insensitively as HF does.
func ParseStrategy(name string) (Strategy, error) {
	for i, n := range strategyNames {
		if strings.EqualFold(name, n) {
			return Strategy(i), nil
		}
	}
	return 0, fmt.Errorf("entities: unknown aggregation strategy (want one of %s)", strings.Join(strategyNames[:], ", "))
}

// DecoderConfig describes a model's label space.
type DecoderConfig struct {
	// ID2Label maps a logits column to its label, from the model's config.json.
	ID2Label []string
	// IgnoreLabels are dropped from the output; nil means {"O"}, as in HF. For grouped
	// strategies they are compared with the label after its B-/I- prefix is removed.
	IgnoreLabels []string
	// UnknownID is the tokenizer's [UNK] id; it only matters when Tokens.WordIDs is nil,
	// where HF never treats an unknown token as a word continuation. Use -1 for none.
	UnknownID int64
	// Transitions, when set, are the CRF the model was trained with: token labels are
	// then the best path under it instead of each token's argmax, and a token's score is
	// the probability the CRF gives its label there. Models without one leave it nil.
	Transitions *Transitions
}

// Decoder turns logits into entities with HF TokenClassificationPipeline's rules. It is
// immutable after NewDecoder and safe for concurrent use.
type Decoder struct {
	labels    []string
	tags      []string // label without its B-/I- prefix
	begins    []bool   // label has the B- prefix
	ignoreTag []bool   // tag is ignored (grouped strategies)
	ignoreRaw []bool   // full label is ignored (StrategyNone)
	unknownID int64
	crf       *crf // nil: argmax decoding
}

// NewDecoder checks the label list and precomputes each label's tag.
func NewDecoder(cfg DecoderConfig) (*Decoder, error) {
	if len(cfg.ID2Label) == 0 {
		return nil, fmt.Errorf("entities: the model has no labels")
	}
	ignore := cfg.IgnoreLabels
	if ignore == nil {
		ignore = []string{"O"}
	}
	ignored := make(map[string]bool, len(ignore))
	for _, l := range ignore {
		ignored[l] = true
	}
	d := &Decoder{unknownID: cfg.UnknownID}
	if cfg.Transitions != nil {
		c, err := newCRF(cfg.Transitions, len(cfg.ID2Label))
		if err != nil {
			return nil, err
		}
		d.crf = c
	}
	for _, label := range cfg.ID2Label {
		begin, tag := splitTag(label)
		d.labels = append(d.labels, label)
		d.tags = append(d.tags, tag)
		d.begins = append(d.begins, begin)
		d.ignoreTag = append(d.ignoreTag, ignored[tag])
		d.ignoreRaw = append(d.ignoreRaw, ignored[label])
	}
	return d, nil
}

// NumLabels is the width of one logits row.
func (d *Decoder) NumLabels() int { return len(d.labels) }

// splitTag follows HF's get_tag: "B-X" begins X, "I-X" continues X, and any other label
// is a continuation of itself.
func splitTag(label string) (begin bool, tag string) {
	switch {
	case strings.HasPrefix(label, "B-"):
		return true, label[2:]
	case strings.HasPrefix(label, "I-"):
		return false, label[2:]
	default:
		return false, label
	}
}

// unit is a token or a word on its way to becoming part of an entity.
type unit struct {
	label      int
	score      float64
	start, end int
}

// Decode applies softmax to logits (numTokens x NumLabels, row-major, one row per entry of
// toks) and aggregates with strategy, as HF's pipeline does:
//
//   - none: each token's argmax label and probability; tokens whose label is ignored drop.
//   - simple: the same per-token labels, then grouped (see below).
//   - first/average/max: tokens are first fused into words (a token continues a word when
//     it has the same WordIDs entry as the token before it), the word's label and score
//     chosen from the first token, the averaged probability vectors, or the token with the
//     highest probability; then words are grouped.
//
// Grouping walks the units in order; a unit joins the current group when it has the same
// tag and its label does not start with "B-". The group's label is the tag, its score the
// mean of the unit scores, its span from the first unit's start to the last unit's end.
// Groups with an ignored tag are dropped.
//
// Spans never begin or end with whitespace and never split a UTF-8 sequence; an entity
// left empty by that is dropped.
//
// With a CRF (DecoderConfig.Transitions) every step reads the CRF's view instead of the
// softmax: a token's label is its label on the best path and its probability vector is
// its marginal under the CRF ("average" averages those, "max" compares the path labels'
// marginals).
func (d *Decoder) Decode(text string, toks Tokens, logits []float32, strategy Strategy) ([]Entity, error) {
	units, err := d.units(text, toks, logits, strategy)
	if err != nil {
		return nil, err
	}
	var out []Entity
	if strategy == StrategyNone {
		for _, u := range units {
			if d.ignoreRaw[u.label] {
				continue
			}
			out = appendClean(out, text, Entity{Label: d.labels[u.label], Start: u.start, End: u.end, Score: u.score})
		}
		return out, nil
	}
	return d.group(text, units, out), nil
}

// units computes the per-token (none, simple) or per-word units. It streams over the
// tokens with one probability row of scratch space: words are runs of consecutive
// tokens, so a word's unit is complete when the next word starts.
func (d *Decoder) units(text string, toks Tokens, logits []float32, strategy Strategy) ([]unit, error) {
	if strategy < StrategyNone || strategy > StrategyMax {
		return nil, fmt.Errorf("entities: unknown aggregation strategy %d", int(strategy))
	}
	if err := toks.validate(len(text)); err != nil {
		return nil, err
	}
	nl := len(d.labels)
	n := toks.Len()
	if len(logits) != n*nl {
		return nil, fmt.Errorf("entities: %d logits for %d tokens and %d labels", len(logits), n, nl)
	}
	var crfLabels []int
	var crfRows []float64
	if d.crf != nil {
		sc := d.crf.getScratch()
		defer d.crf.putScratch(sc) // its rows are read only below
		var err error
		if crfLabels, crfRows, err = d.crfView(text, toks, logits, sc); err != nil {
			return nil, err
		}
	}
	row := make([]float64, nl)
	var sum []float64 // StrategyAverage: the word's summed probability vectors
	if strategy == StrategyAverage {
		sum = make([]float64, nl)
	}
	perToken := strategy == StrategyNone || strategy == StrategySimple
	units := make([]unit, 0, n)
	var cur unit // the word being built
	words, prev, pos := 0, -1, 0
	finish := func() {
		if words == 0 {
			return
		}
		if sum != nil {
			for j := range sum {
				sum[j] /= float64(words)
			}
			cur.label = argmax(sum)
			cur.score = sum[cur.label]
			clear(sum)
		}
		units = append(units, cur)
		words = 0
	}
	for i := range n {
		if toks.special(i) {
			continue
		}
		var label int
		if d.crf != nil {
			label, row = crfLabels[pos], crfRows[pos*nl:(pos+1)*nl]
		} else {
			if err := softmaxRow(row, logits[i*nl:(i+1)*nl]); err != nil {
				return nil, fmt.Errorf("entities: %w for token %d", err, i)
			}
			label = argmax(row)
		}
		pos++
		off := toks.Offsets[i]
		if perToken {
			units = append(units, unit{label: label, score: row[label], start: off[0], end: off[1]})
			continue
		}
		if prev < 0 || !continuesWord(text, toks, d.unknownID, prev, i) {
			finish()
			cur = unit{label: label, score: row[label], start: off[0]}
		} else if strategy == StrategyMax && row[label] > cur.score {
			// HF: max(tokens, key=top probability); the first of equals wins.
			cur.label, cur.score = label, row[label]
		}
		cur.end = off[1]
		for j := range sum {
			sum[j] += row[j]
		}
		words++
		prev = i
	}
	finish()
	return units, nil
}

// crfView returns, for the non-special tokens in order, their labels on the CRF's best
// path and their marginal probability rows. If the marginals underflow (no sane model
// makes them), each token's softmax row stands in.
func (d *Decoder) crfView(text string, toks Tokens, logits []float32, sc *crfScratch) ([]int, []float64, error) {
	nl := len(d.labels)
	sc.in = crfPositions(text, toks, &sc.in)
	in := sc.in
	if len(in.idx) == 0 {
		return nil, nil, nil // no token of the text: no path (the marginals' pass needs one)
	}
	sc.probs = sized(sc.probs, len(in.idx)*nl)
	probs := sc.probs
	for p, i := range in.idx {
		if err := softmaxRow(probs[p*nl:(p+1)*nl], logits[i*nl:(i+1)*nl]); err != nil {
			return nil, nil, fmt.Errorf("entities: %w for token %d", err, i)
		}
	}
	path := d.crf.viterbi(in, logits, sc)
	if marg, ok := d.crf.marginals(in, probs, sc); ok {
		return path, marg, nil
	}
	return path, probs, nil
}

// continuesWord decides HF's is_subword for token i, whose preceding non-special token
// is prev. With word ids it is exact. Without, it is HF's fallback heuristic for
// tokenizers with no word information: no ASCII space just before or at the token start,
// and never for the unknown token.
func continuesWord(text string, toks Tokens, unknownID int64, prev, i int) bool {
	if toks.WordIDs != nil {
		w := toks.WordIDs[i]
		return w >= 0 && w == toks.WordIDs[prev]
	}
	if toks.IDs != nil && toks.IDs[i] == unknownID {
		return false
	}
	start := toks.Offsets[i][0]
	if start == 0 {
		return false
	}
	if text[start-1] == ' ' {
		return false
	}
	return start >= len(text) || text[start] != ' '
}

// group applies HF's group_entities to units and appends the kept groups to out.
func (d *Decoder) group(text string, units []unit, out []Entity) []Entity {
	for i := 0; i < len(units); {
		first := units[i]
		sum := first.score
		j := i + 1
		for j < len(units) && d.tags[units[j].label] == d.tags[first.label] && !d.begins[units[j].label] {
			sum += units[j].score
			j++
		}
		if !d.ignoreTag[first.label] {
			out = appendClean(out, text, Entity{
				Label: d.tags[first.label],
				Start: first.start,
				End:   units[j-1].end,
				Score: sum / float64(j-i),
			})
		}
		i = j
	}
	return out
}

// softmaxRow writes the softmax of src into dst, subtracting the maximum first as HF
// does. Non-finite logits are an error: they come from a broken model or export, and any
// label read from them would be arbitrary.
func softmaxRow(dst []float64, src []float32) error {
	m := math.Inf(-1)
	for _, v := range src {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return ErrNonFinite
		}
		m = max(m, f)
	}
	var sum float64
	for j, v := range src {
		e := math.Exp(float64(v) - m)
		dst[j] = e
		sum += e
	}
	for j := range dst {
		dst[j] /= sum
	}
	return nil
}

// ErrNonFinite is a model output that is not a number (NaN or an infinity): the model's
// failure, not the text's.
var ErrNonFinite = errors.New("non-finite logit")

// argmax returns the index of the first largest value, as numpy's argmax does.
func argmax(xs []float64) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// appendClean appends e after snapping its span to UTF-8 boundaries and trimming
// whitespace; an entity with nothing left is dropped.
func appendClean(out []Entity, text string, e Entity) []Entity {
	var ok bool
	e.Start, e.End, ok = cleanSpan(text, e.Start, e.End)
	if !ok {
		return out
	}
	return append(out, e)
}

// cleanSpan clamps [start, end) into text, widens it to whole UTF-8 sequences (a cut
// character is included, not lost) and trims Unicode whitespace from both ends.
func cleanSpan(text string, start, end int) (int, int, bool) {
	start = min(max(start, 0), len(text))
	end = min(max(end, start), len(text))
	for start > 0 && start < len(text) && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && end > 0 && !utf8.RuneStart(text[end]) {
		end++
	}
	for start < end {
		r, size := utf8.DecodeRuneInString(text[start:end])
		if !unicode.IsSpace(r) {
			break
		}
		start += size
	}
	for end > start {
		r, size := utf8.DecodeLastRuneInString(text[start:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= size
	}
	return start, end, start < end
}
