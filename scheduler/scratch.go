package scheduler

import (
	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/stepplan"
)

// stepScratch holds the loop's reusable buffers: the slices of sequences it sorts each
// iteration and the plan of a step, grown to the largest step seen and reused after.
type stepScratch struct {
	rows, decode, prefill, group, gone, victims []*sequence

	plan   stepplan.Plan
	blocks []int32 // every row's block table, end to end
}

// plan lays out one step over rows: each row's cached positions (its table) as its past, the
// next take of its tokens not yet cached as its new tokens, its table's blocks, and the
// copies on write the pool has decided since the last step.
func (sc *stepScratch) build(rows []*sequence, pool *kvcache.Pool, pad int64) *stepplan.Plan {
	p := &sc.plan
	p.Reset()
	p.Pad = pad
	for _, c := range pool.TakeCopies() {
		p.Copies = append(p.Copies, stepplan.Copy{From: int32(c.From), To: int32(c.To)})
	}
	sc.blocks = sc.blocks[:0]
	for _, q := range rows {
		sc.blocks = appendIDs(sc.blocks, q.table.IDs())
	}
	at := 0
	for _, q := range rows {
		cached, n := q.table.Len(), q.table.Blocks()
		p.Rows = append(p.Rows, stepplan.Row{Seq: q.id, Past: cached, Tokens: q.tokens[cached : cached+q.take],
			Blocks: sc.blocks[at : at+n : at+n], AllLogits: q.scorer != nil})
		at += n
	}
	return p
}

func appendIDs(dst []int32, ids []kvcache.BlockID) []int32 {
	for _, b := range ids {
		dst = append(dst, int32(b))
	}
	return dst
}
