package stepplan

import "time"

// Plan is one step: its rows, and the block copies to make before it.
type Plan struct {
	// Rows are the sequences the step computes, in the order the runner batches them.
	Rows []Row
	// Copies are blocks whose contents the runner copies, in order, before it reads or
	// writes any block of this step: copy on write, decided by the KV cache when a sequence
	// was about to write into a block it shares. Copies made since the previous step ride
	// on this one, whatever its rows.
	Copies []Copy
	// Pad is the token id a runner that pads rows to a common length feeds at the padded
	// positions (any valid id: the attention mask hides them).
	Pad int64

	// KVTime is set by the runner: the time it spent moving keys and values (block copies,
	// gathering the past into the model's inputs, writing the new positions back), what
	// paging costs beside the model's own pass.
	KVTime time.Duration
}

// Row is one sequence's part of a step.
type Row struct {
	// Seq names the sequence and keeps its value from step to step, so that a runner can
	// tell a batch that kept its rows (and what it left from the previous step still
	// applies) from a new one.
	Seq uint64
	// Past counts the sequence's tokens whose keys and values its blocks hold already. The
	// new tokens take positions Past, Past+1, ...
	Past int
	// Tokens are the ids of the new tokens: the runner computes their keys and values and
	// writes them into the blocks after the past.
	Tokens []int64
	// Blocks is the sequence's block table: position p lives in block Blocks[p/BlockTokens]
	// at offset p%BlockTokens. It covers at least Past+len(Tokens) positions.
	Blocks []int32
	// AllLogits asks for the scores after every new token (a prompt being scored);
	// otherwise only the scores after the last one are wanted.
	AllLogits bool

	// Logits is set by the runner on success: the scores after each new token, len(Tokens)
	// rows of the vocabulary's width when AllLogits, else one. The runner owns the memory;
	// it is valid until its next step.
	Logits []float32
}

// Copy is one block's contents copied into another before a step.
type Copy struct {
	From, To int32
}

// Seq is the most new tokens of any row: the step's new positions once its rows are padded
// to a common length.
func (p *Plan) Seq() int {
	n := 0
	for i := range p.Rows {
		n = max(n, len(p.Rows[i].Tokens))
	}
	return n
}

// Past is the longest past of any row.
func (p *Plan) Past() int {
	n := 0
	for i := range p.Rows {
		n = max(n, p.Rows[i].Past)
	}
	return n
}

// Reset empties p for the next step, keeping its slices' memory.
func (p *Plan) Reset() {
	clear(p.Rows) // drops the references to the previous step's tokens, blocks and scores
	p.Rows = p.Rows[:0]
	p.Copies = p.Copies[:0]
	p.KVTime = 0
}
