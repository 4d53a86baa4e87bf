package entities

import "slices"

// PatternsVersion names the pattern set DefaultPIIPatterns gives, for results that say which
// patterns a sweep ran.
const PatternsVersion = "sluice-pii-patterns-v1"

// SafetySweep is OpenMed's safety sweep: after the model, the patterns of cfg run over the
// whole text again, and every match that identifies itself (its validator accepts it and its
// score, context included, reaches cfg.UnitMinScore) and overlaps no entity already found is
// added, whatever the confidence threshold. It returns all the entities, sorted by start, and
// the ones it added. A nil cfg adds nothing.
func SafetySweep(text string, ents []Entity, cfg *SmartMergeConfig) (all, added []Entity) {
	if cfg == nil {
		return ents, nil
	}
	for _, u := range FindSemanticUnits(text, cfg.Patterns, cfg.ContextWindow) {
		if !u.Validated || u.Score < cfg.UnitMinScore {
			continue
		}
		overlaps := func(e Entity) bool { return u.Start < e.End && e.Start < u.End }
		if slices.ContainsFunc(ents, overlaps) || slices.ContainsFunc(added, overlaps) {
			continue
		}
		added = append(added, Entity{Label: u.Label, Start: u.Start, End: u.End, Score: u.Score})
	}
	if len(added) == 0 {
		return ents, nil
	}
	all = append(slices.Clone(ents), added...)
	slices.SortStableFunc(all, byStart)
	return all, added
}
