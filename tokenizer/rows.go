package tokenizer

import (
	"slices"
	"sync/atomic"
)

// GraphRows reads a tokenizer's ids as a graph with fewer rows than the tokenizer has ids can
// take them (a tokenizer that added tokens past config.json's vocab_size): an id past the
// graph's rows is read as the unknown token, else padding, where it would fail the pass, and
// every text batched beside it. The zero value reads every id as itself until Probe finds
// otherwise; it is safe for concurrent use (requests may come while a model warms).
type GraphRows struct {
	past    atomic.Int64 // the first id the graph has no row for; 0: none known
	standIn atomic.Int64
}

// Probe learns whether t's ids fit a graph of config.json's vocab rows by running ids
// through it (run: a pass over the model's template around one id): where t's highest id
// fails and vocab's last passes, ids from vocab on are read as the stand-in. Where the highest
// passes, nothing changes: vocab_size alone is not the graph's rows, a config may say less
// than the graph holds.
func (g *GraphRows) Probe(t *Tokenizer, vocab int64, run func(id int64) error) {
	standIn := t.PadID()
	if unk, ok := t.UnknownID(); ok && unk >= 0 {
		standIn = unk
	}
	if vocab <= 0 || t.MaxID() < vocab || standIn >= vocab || run(t.MaxID()) == nil || run(vocab-1) != nil {
		return
	}
	g.standIn.Store(standIn)
	g.past.Store(vocab)
}

// Read is ids as the graph reads them: ids itself where every id has its row, else a copy.
func (g *GraphRows) Read(ids []int64) []int64 {
	past := g.past.Load()
	if past <= 0 || !slices.ContainsFunc(ids, func(id int64) bool { return id >= past }) {
		return ids
	}
	standIn := g.standIn.Load()
	out := slices.Clone(ids)
	for i, id := range out {
		if id >= past {
			out[i] = standIn
		}
	}
	return out
}
