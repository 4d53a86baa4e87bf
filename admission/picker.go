package admission

import "github.com/sluice-serving/sluice/settings"

// DefaultWeights are the classes' shares of the turns where a configuration leaves a weight
// 0: four interactive turns to one bulk, so bulk never starves.
var DefaultWeights = [NumPriorities]int{Interactive: 4, Bulk: 1}

// MaxWeight keeps the picker's credit arithmetic far from overflow.
const MaxWeight = 1 << 20

// WithDefaults is weights with DefaultWeights in place of every 0.
func WithDefaults(weights [NumPriorities]int) [NumPriorities]int {
	for p := range weights {
		if weights[p] == 0 {
			weights[p] = DefaultWeights[p]
		}
	}
	return weights
}

// CheckWeights records a problem for every weight out of [0, MaxWeight], under the field
// "Weights[class]".
func CheckWeights(check *settings.Check, weights [NumPriorities]int) {
	for _, p := range Priorities {
		if w := weights[p]; w < 0 || w > MaxWeight {
			check.Addf("Weights["+p.String()+"]", "must be between 0 (default %d) and %d, got %d", DefaultWeights[p], MaxWeight, w)
		}
	}
}

// Picker chooses which class goes next when several have work ready: the batcher's next batch,
// the generation scheduler's next sequence to admit. It is a smooth weighted round robin: each
// turn every ready class earns its weight in credit, the richest leads, and it pays back the
// sum of the ready classes' weights. With weights 4 and 1 and both classes always ready the
// order is I I B I I, repeating: the share is exact and the minority class is spread out, not
// bunched. A class alone ready earns and pays the same amount, so turns without competition
// leave no debt behind.
//
// Make one with its weights (WithDefaults fills in the defaults). A Picker is not safe for
// concurrent use: it belongs to the loop that dispatches.
type Picker struct {
	// Weights is each class's share of the turns while several are ready.
	Weights [NumPriorities]int
	credit  [NumPriorities]int
}

// Next picks one of the ready classes; at least one must be ready.
func (pk *Picker) Next(ready [NumPriorities]bool) Priority {
	best, total := -1, 0
	for p := range ready {
		if !ready[p] {
			continue
		}
		pk.credit[p] += pk.Weights[p]
		total += pk.Weights[p]
		if best < 0 || pk.credit[p] > pk.credit[best] {
			best = p
		}
	}
	pk.credit[best] -= total
	return Priority(best)
}
