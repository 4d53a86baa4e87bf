package entities

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PIIPattern finds one kind of PII "semantic unit" (a date, a phone number...) in text.
// Its score starts at BaseScore, gains ContextBoost (capped at 1) when one of
// ContextWords appears near the match, and is cut to 30% when Validate rejects the match.
type PIIPattern struct {
	Label        string
	Priority     int // higher patterns claim text first
	Regexp       *regexp.Regexp
	BaseScore    float64
	ContextBoost float64
	ContextWords []string // lower case
	Validate     func(match string) bool
	// Group, when above 0, is the capture group whose span is the match: the pattern may
	// need text around the identifier (a keyword such as "MRN:") that is not part of it.
	Group int

	fast *fastMatcher // set by NewPIIPattern; used only while Regexp is unchanged
}

// NewPIIPattern compiles expr (Go regexp syntax) into p.Regexp and prepares a faster
// matcher for it when it has the usual \b... shape. A PIIPattern built by hand with just
// Regexp works too, with a plain scan.
func NewPIIPattern(p PIIPattern, expr string) (PIIPattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return PIIPattern{}, err
	}
	p.Regexp = re
	p.fast = newFastMatcher(re)
	return p, nil
}

// findAll is where p matches text, through the fast matcher when it applies (matches).
// With a Group, each match is then narrowed to that group's span.
func (p *PIIPattern) findAll(text string, validUTF8 bool) [][]int {
	all := p.matches(text, validUTF8)
	if p.Group <= 0 {
		return all
	}
	kept := all[:0]
	for _, m := range all {
		sub := p.Regexp.FindStringSubmatchIndex(text[m[0]:m[1]])
		if g := 2 * p.Group; g+1 < len(sub) && sub[g] >= 0 {
			kept = append(kept, []int{m[0] + sub[g], m[0] + sub[g+1]})
		}
	}
	return kept
}

// matches is Regexp.FindAllStringIndex(text, -1), through the fast matcher when it applies.
func (p *PIIPattern) matches(text string, validUTF8 bool) [][]int {
	if p.fast != nil && p.fast.source == p.Regexp && validUTF8 {
		return p.fast.findAll(text)
	}
	return p.Regexp.FindAllStringIndex(text, -1)
}

// SmartMergeConfig configures SmartMerge. DefaultSmartMerge gives OpenMed's extract_pii
// settings for English.
type SmartMergeConfig struct {
	// Patterns are the semantic units; DefaultPIIPatterns is OpenMed's English set.
	Patterns []PIIPattern
	// PreferModelLabels keeps the model's dominant label when it names the same kind
	// of thing as the pattern or something more specific (date_of_birth over date).
	PreferModelLabels bool
	// AllowPatternOnly adds units that no model entity overlaps, with the pattern score,
	// when that score is at least UnitMinScore.
	AllowPatternOnly bool
	// UnitMinScore is the least score a unit needs to stand as an entity on its own, to give
	// its label to the model entities it covers, or to cut their spans to its own; below it, a
	// unit only joins those entities into one spanning them all and itself. OpenMed has no floor (0): every shape match counts, so on
	// real clinical notes any eight capital letters became a BIC and any five digits a
	// postcode. A pattern's base score says how far its shape alone identifies it; context
	// words lift it, and a failed validator cuts it to 30%, so a floor of 0.5 (the default)
	// keeps the shapes that identify themselves and the others only beside their context.
	UnitMinScore float64
	// AllowLabelExpansion lets a pattern's label replace the model's; when false the
	// dominant model label is always kept.
	AllowLabelExpansion bool
	// ContextWindow is how many code points on each side of a match are searched for
	// context words.
	ContextWindow int
}

// DefaultSmartMerge is what OpenMed's extract_pii passes for a standard (not
// privacy-filter) model: English patterns, model labels preferred, pattern-only matches
// and label expansion allowed, a 100-code-point context window; and, unlike OpenMed, a floor
// of 0.5 under the units that may stand alone or relabel (see UnitMinScore).
func DefaultSmartMerge() SmartMergeConfig {
	return SmartMergeConfig{
		Patterns:            DefaultPIIPatterns(),
		PreferModelLabels:   true,
		AllowPatternOnly:    true,
		AllowLabelExpansion: true,
		ContextWindow:       100,
		UnitMinScore:        0.5,
	}
}

// SmartMerge is OpenMed's PII smart merging (merge_entities_with_semantic_units): it fixes
// entities that the tokenizer split across a semantic unit, e.g. "01" [date] and
// "/15/1970" [date_of_birth] become one "01/15/1970" [date_of_birth].
//
//  1. Find units: patterns are tried from highest priority down (stable for equal
//     priorities); each match that does not overlap a unit already found becomes one,
//     scored as PIIPattern describes.
//  2. For each unit in text order, take every model entity overlapping it. If there are
//     any, they are replaced by one entity spanning exactly the unit (a unit under
//     UnitMinScore: the unit and the words of theirs that reach past it, and weak units
//     that overlap one model entity give one entity together). Its label is the
//     most frequent model label among them (ties: the higher mean score, then the first
//     seen), unless the pattern's label wins, which a unit scoring under UnitMinScore never
//     does: with PreferModelLabels the model label is kept when it normalises to the same
//     kind as the pattern's or is more specific; without it, when some model label
//     normalises to the pattern's kind, or the model label is more specific. Its score is 0.6 x the mean model score + 0.4 x the unit
//     score (0.9 and 0.1 when validation failed; of weak units together, the highest of
//     theirs). With no overlapping entity, the unit
//     itself is added when AllowPatternOnly is set and its score reaches UnitMinScore,
//     with the unit score.
//  3. Model entities that overlap no unit are kept as they are; the result is sorted by
//     start (stable).
//
// Pattern-only entities are added after the confidence threshold has been applied, so
// they can score below it; OpenMed does the same.
func SmartMerge(text string, ents []Entity, cfg SmartMergeConfig) []Entity {
	units := FindSemanticUnits(text, cfg.Patterns, cfg.ContextWindow)
	if len(units) == 0 {
		out := slices.Clone(ents)
		slices.SortStableFunc(out, byStart)
		return out
	}
	used := make([]bool, len(ents))
	out := make([]Entity, 0, len(ents)+len(units))
	tk := newTaken(ents)
	var overlapping []Entity
	var hit []int
	// Weak units that overlap one model entity widen to the same words, so they are one
	// entity: each gave its own copy before (two postcode-shaped numbers inside one account
	// number). The group open is emitted once no later weak unit shares an entity with it.
	var weak weakGroup
	for _, u := range units {
		// In the entities' own order, which the label's choice reads.
		overlapping, hit = overlapping[:0], tk.overlapping(u.Start, u.End, hit[:0])
		for _, i := range hit {
			overlapping = append(overlapping, ents[i])
		}
		if len(overlapping) == 0 {
			if cfg.AllowPatternOnly && u.Score >= cfg.UnitMinScore {
				out = appendClean(out, text, Entity{Label: u.Label, Start: u.Start, End: u.End, Score: u.Score})
			}
			continue
		}
		label, modelScore := dominantLabel(overlapping)
		score := blendScore(modelScore, u)
		if u.Score < cfg.UnitMinScore {
			if !weak.shares(hit) {
				out = weak.emit(out, text, ents)
				weak = weakGroup{start: u.Start, end: u.End, score: score}
			}
			weak.add(text, u, hit, ents, score)
			for _, i := range hit {
				used[i] = true
			}
			continue
		}
		for _, i := range hit {
			used[i] = true
		}
		// Patterns are caller-supplied; snap and trim their spans like any other.
		out = appendClean(out, text, Entity{
			Label: chooseLabel(label, u.Label, overlapping, cfg),
			Start: u.Start,
			End:   u.End,
			Score: score,
		})
	}
	out = weak.emit(out, text, ents)
	for i, e := range ents {
		if !used[i] {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, byStart)
	return out
}

// weakGroup is consecutive units under UnitMinScore that overlap the same model entities,
// growing into the one entity they give.
type weakGroup struct {
	start, end int
	score      float64 // the best of the units' blended scores
	hit        []int   // the model entities overlapped, by index
}

// shares is whether any of the entities hit belongs to the group.
func (g *weakGroup) shares(hit []int) bool {
	for _, i := range hit {
		if slices.Contains(g.hit, i) {
			return true
		}
	}
	return false
}

// add joins unit u and the entities it hit. A weak unit may join the model's pieces but not
// cut words off them: an address ending in a five-digit number keeps its street and town.
// Punctuation past the unit (a full stop after a date) is still cut.
func (g *weakGroup) add(text string, u SemanticUnit, hit []int, ents []Entity, score float64) {
	g.start, g.end = min(g.start, u.Start), max(g.end, u.End)
	g.score = max(g.score, score)
	for _, i := range hit {
		e := ents[i]
		if e.Start < g.start && hasWordChar(text[e.Start:g.start]) {
			g.start = e.Start
		}
		if e.End > g.end && hasWordChar(text[g.end:e.End]) {
			g.end = e.End
		}
		if !slices.Contains(g.hit, i) {
			g.hit = append(g.hit, i)
		}
	}
}

// emit appends the group's entity, if it has one: the model's dominant label over all the
// entities its units hit, which a weak unit never replaces.
func (g *weakGroup) emit(out []Entity, text string, ents []Entity) []Entity {
	if len(g.hit) == 0 {
		return out
	}
	slices.Sort(g.hit)
	hit := make([]Entity, len(g.hit))
	for k, i := range g.hit {
		hit[k] = ents[i]
	}
	label, _ := dominantLabel(hit)
	// Patterns are caller-supplied; snap and trim their spans like any other.
	return appendClean(out, text, Entity{Label: label, Start: g.start, End: g.end, Score: g.score})
}

func byStart(a, b Entity) int { return cmp.Compare(a.Start, b.Start) }

func hasWordChar(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

func chooseLabel(dominant, unitLabel string, overlapping []Entity, cfg SmartMergeConfig) string {
	switch {
	case !cfg.AllowLabelExpansion:
		return dominant
	case cfg.PreferModelLabels:
		if normalizePIILabel(dominant) == normalizePIILabel(unitLabel) || moreSpecific(dominant, unitLabel) {
			return dominant
		}
		return unitLabel
	default:
		for _, e := range overlapping {
			if normalizePIILabel(e.Label) == normalizePIILabel(unitLabel) {
				return dominant
			}
		}
		if moreSpecific(dominant, unitLabel) {
			return dominant
		}
		return unitLabel
	}
}

func blendScore(model float64, u SemanticUnit) float64 {
	if u.Validated {
		return 0.6*model + 0.4*u.Score
	}
	return 0.9*model + 0.1*u.Score
}

// dominantLabel returns the most frequent label (ties: higher mean score, then first
// seen) and the mean score over all entities.
func dominantLabel(ents []Entity) (string, float64) {
	type tally struct {
		label string
		count int
		sum   float64
	}
	var tallies []tally // first-seen order, as a Python dict keeps it
	var total float64
	for _, e := range ents {
		total += e.Score
		i := slices.IndexFunc(tallies, func(t tally) bool { return t.label == e.Label })
		if i < 0 {
			tallies = append(tallies, tally{label: e.Label})
			i = len(tallies) - 1
		}
		tallies[i].count++
		tallies[i].sum += e.Score
	}
	best := 0
	for i, t := range tallies[1:] {
		b := tallies[best]
		if t.count > b.count || (t.count == b.count && t.sum/float64(t.count) > b.sum/float64(b.count)) {
			best = i + 1
		}
	}
	return tallies[best].label, total / float64(len(ents))
}

// SemanticUnit is one pattern match found by FindSemanticUnits.
type SemanticUnit struct {
	Label      string
	Start, End int // byte offsets
	Score      float64
	Validated  bool // false when the pattern's validator rejected the match
}

// FindSemanticUnits runs the patterns over text, highest priority first, and returns the
// non-overlapping matches sorted by start. contextWindow is in code points.
func FindSemanticUnits(text string, patterns []PIIPattern, contextWindow int) []SemanticUnit {
	order := make([]int, len(patterns))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return patterns[b].Priority - patterns[a].Priority })
	valid := utf8.ValidString(text)
	var units []SemanticUnit
	var held [][2]int // the units so far, apart and by start: what a later match may not overlap
	for _, pi := range order {
		p := &patterns[pi]
		if p.Regexp == nil {
			continue
		}
		found := len(units)
		for _, m := range p.findAll(text, valid) {
			// Held spans are apart and sorted, so their ends rise too: only the last one that
			// starts before the match ends can reach into it.
			if i, _ := slices.BinarySearchFunc(held, m[1], func(h [2]int, end int) int { return h[0] - end }); i > 0 && held[i-1][1] > m[0] {
				continue
			}
			units = append(units, p.unitAt(text, m[0], m[1], contextWindow))
		}
		// One pattern's matches are apart from each other: held after the pattern is done.
		for _, u := range units[found:] {
			held = append(held, [2]int{u.Start, u.End})
		}
		slices.SortFunc(held, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
	}
	slices.SortStableFunc(units, func(a, b SemanticUnit) int { return a.Start - b.Start })
	return units
}

// unitAt is the pattern's match at [start, end) of text as a unit: scored up where a context
// word stands within contextWindow code points, down where its validator rejects it.
func (p *PIIPattern) unitAt(text string, start, end, contextWindow int) SemanticUnit {
	score := p.BaseScore
	if len(p.ContextWords) > 0 && hasContext(text, start, end, p.ContextWords, contextWindow) {
		score = min(1, score+p.ContextBoost)
	}
	validated := true
	if p.Validate != nil && !p.Validate(text[start:end]) {
		score *= 0.3
		validated = false
	}
	return SemanticUnit{Label: p.Label, Start: start, End: end, Score: score, Validated: validated}
}

// hasContext looks for any context word (lower case) as a substring of the lower-cased
// text from window code points before start to window code points after end, the match
// itself included, as OpenMed does.
func hasContext(text string, start, end int, words []string, window int) bool {
	from := start
	for n := 0; n < window && from > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(text[:from])
		from -= size
	}
	to := end
	for n := 0; n < window && to < len(text); n++ {
		_, size := utf8.DecodeRuneInString(text[to:])
		to += size
	}
	ctx := strings.ToLower(text[from:to])
	for _, w := range words {
		if strings.Contains(ctx, w) {
			return true
		}
	}
	return false
}

// normalizePIILabel maps label variants to one kind, as OpenMed's normalize_label does.
func normalizePIILabel(label string) string {
	l := strings.ToLower(label)
	switch {
	case strings.Contains(l, "date"):
		return "date"
	case strings.Contains(l, "phone") || strings.Contains(l, "fax"):
		return "phone"
	case strings.Contains(l, "address"):
		return "address"
	}
	switch l {
	case "ssn", "social_security", "social_security_number":
		return "ssn"
	case "national_id", "nir", "insee", "steuer_id", "steuernummer", "codice_fiscale", "bsn", "dni", "nie",
		"aadhaar", "cpf", "cnpj", "teudat_zehut", "teudatzehut", "tz":
		return "national_id"
	case "postcode", "zipcode", "zip", "postal_code":
		return "postcode"
	case "medical_record_number", "mrn", "medical_record":
		return "medical_record"
	case "account_number", "account":
		return "account"
	case "credit_debit_card", "credit_card", "debit_card", "payment_card":
		return "payment_card"
	}
	return l
}

// specificLabels lists, for a general kind, the labels OpenMed counts as more specific.
var specificLabels = map[string][]string{
	"date":        {"date_of_birth", "date_time"},
	"name":        {"first_name", "last_name", "full_name"},
	"phone":       {"phone_number", "fax_number", "mobile_number"},
	"address":     {"street_address", "home_address", "billing_address"},
	"id":          {"ssn", "medical_record_number", "account_number", "employee_id"},
	"national_id": {"nir", "insee", "steuer_id", "steuernummer", "codice_fiscale", "cpf", "cnpj", "teudat_zehut"},
}

// moreSpecific reports whether a is a more specific label than b (OpenMed's
// is_more_specific): b is a proper substring of a, or a is listed under b's kind.
func moreSpecific(a, b string) bool {
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la != lb && strings.Contains(la, lb) {
		return true
	}
	return slices.Contains(specificLabels[normalizePIILabel(b)], la)
}
