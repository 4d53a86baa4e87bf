package entities

import (
	"slices"
)

// PatternsVersion names the pattern set DefaultPIIPatterns gives, for results that say which
// patterns a sweep ran.
const PatternsVersion = "sluice-pii-patterns-v1"

// SafetySweep is OpenMed's safety sweep: after the model, the patterns of cfg run over the
// whole text again, and every match that identifies itself (its validator accepts it and its
// score, context included, reaches cfg.UnitMinScore) and overlaps no entity already found is
// added, whatever the confidence threshold. Then the names NameContext finds where people write
// them (the word after a first name, after a title or a relation, a name spelled out) are
// added too, and then every other place the text of anything found stands again as whole
// words (Recurrences). It returns all the entities, sorted by start, and the ones it added. A
// nil cfg adds nothing.
func SafetySweep(text string, ents []Entity, cfg *SmartMergeConfig) (all, added []Entity) {
	return (*Recall)(nil).SafetySweep(text, ents, cfg)
}

// SafetySweep is SafetySweep over one part of a document read in parts, whose recurrences
// include the texts r holds (Recall.Recurrences); r is not changed.
func (r *Recall) SafetySweep(text string, ents []Entity, cfg *SmartMergeConfig) (all, added []Entity) {
	sorted := slices.SortedStableFunc(slices.Values(ents), byStart)
	if cfg == nil {
		return sorted, nil
	}
	tk := newTaken(sorted)
	for _, u := range FindSemanticUnits(text, cfg.Patterns, cfg.ContextWindow) {
		if !u.Validated || u.Score < cfg.UnitMinScore {
			continue
		}
		if !tk.overlaps(u.Start, u.End) {
			added = append(added, Entity{Label: u.Label, Start: u.Start, End: u.End, Score: u.Score})
		}
	}
	added = append(added, NameContext(text, append(slices.Clip(sorted), added...))...)
	added = append(added, r.Recurrences(text, append(slices.Clip(sorted), added...))...)
	if len(added) == 0 {
		return sorted, nil
	}
	all = append(sorted, added...)
	slices.SortStableFunc(all, byStart)
	return all, added
}
