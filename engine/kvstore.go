package engine

import (
	"fmt"

	"github.com/sluice-serving/sluice/stepplan"
)

// KVKind says which of a layer's two caches a tensor holds.
type KVKind int

const (
	// Key is the attention keys.
	Key KVKind = iota
	// Value is the attention values.
	Value
)

// KVTensor is one layer's keys or values for a batch, as a decoder takes and returns them:
// float32, row-major [Batch, heads, Positions, head dim], with the store's heads and head dim.
type KVTensor struct {
	Data      []float32
	Batch     int
	Positions int
}

// maxKVBlocks is kvcache's bound on a pool's blocks: block ids stay int32.
const maxKVBlocks = 1 << 24

// KVStore holds the keys and values of a decoder's paged KV cache: one slab of float32,
// Blocks blocks of BlockTokens positions, each holding, for every layer, the key and the value
// of every head (layout [layer][key|value][head][position][dim] within a block, so that one
// head's positions are contiguous). Which block belongs to which sequence is the caller's
// (package kvcache decides it; a step plan carries it); the store only moves numbers between
// blocks and a step's tensors. It is allocated once and used from one goroutine.
type KVStore struct {
	bt, layers, heads, dim int
	blockFloats            int // floats per block
	headFloats             int // floats per head within a layer's key or value: bt x dim
	data                   []float32
}

// NewKVStore allocates the store of blocks blocks of blockTokens positions for a decoder of
// this shape.
func NewKVStore(shape DecoderShape, blocks, blockTokens int) (*KVStore, error) {
	switch {
	case blocks < 1 || blocks > maxKVBlocks:
		return nil, fmt.Errorf("engine: KV store of %d blocks: want 1 to %d", blocks, maxKVBlocks)
	case blockTokens < 1 || blockTokens > 1024:
		return nil, fmt.Errorf("engine: KV blocks of %d positions: want 1 to 1024", blockTokens)
	case shape.Layers < 1 || shape.Heads < 1 || shape.HeadDim < 1 || shape.Layers > 1<<16 || shape.Heads > 1<<16 || shape.HeadDim > 1<<16:
		return nil, fmt.Errorf("engine: KV store for %d layers of %d heads of %d: each must be 1 to 65536", shape.Layers, shape.Heads, shape.HeadDim)
	}
	s := &KVStore{bt: blockTokens, layers: shape.Layers, heads: shape.Heads, dim: shape.HeadDim, headFloats: blockTokens * shape.HeadDim}
	s.blockFloats = shape.Layers * 2 * shape.Heads * s.headFloats
	s.data = make([]float32, blocks*s.blockFloats)
	return s, nil
}

// Blocks is the store's size in blocks.
func (s *KVStore) Blocks() int { return len(s.data) / s.blockFloats }

// BlockTokens is how many positions a block holds.
func (s *KVStore) BlockTokens() int { return s.bt }

func (s *KVStore) checkTensor(t KVTensor, layer int) {
	if layer < 0 || layer >= s.layers {
		panic(fmt.Sprintf("engine: KV layer %d of %d", layer, s.layers))
	}
	if len(t.Data) != t.Batch*s.heads*t.Positions*s.dim {
		panic(fmt.Sprintf("engine: KV tensor of %d values for %d x %d x %d x %d", len(t.Data), t.Batch, s.heads, t.Positions, s.dim))
	}
}

// Align says where in a row of a step's tensor Gather puts the row's past.
type Align int

const (
	// AlignEnd left pads: the past ends the row and zeros start it, which the attention mask
	// must exclude (the decoder-with-past layout, RunStep).
	AlignEnd Align = iota
	// AlignStart puts the past at the front and leaves the rest of the row as it was, for
	// the graph to write or to leave unread by the row's length (the in-place layout,
	// RunDecode).
	AlignStart
)

// Gather writes the layer's keys or values of the past of every row into dst, one row per
// plan row, each the rows[i].Past positions held in rows[i].Blocks, where align says.
// dst.Positions must be at least the longest past.
func (s *KVStore) Gather(rows []stepplan.Row, layer int, kind KVKind, dst KVTensor, align Align) {
	s.checkTensor(dst, layer)
	if dst.Batch != len(rows) {
		panic(fmt.Sprintf("engine: gather of %d rows into a batch of %d", len(rows), dst.Batch))
	}
	rowFloats := s.heads * dst.Positions * s.dim
	for i := range rows {
		n, blocks := rows[i].Past, rows[i].Blocks
		if n > dst.Positions {
			panic(fmt.Sprintf("engine: a past of %d positions into %d", n, dst.Positions))
		}
		row := dst.Data[i*rowFloats : (i+1)*rowFloats]
		pad := 0
		if align == AlignEnd {
			pad = dst.Positions - n
		}
		for h := 0; h < s.heads; h++ {
			head := row[h*dst.Positions*s.dim : (h+1)*dst.Positions*s.dim]
			clear(head[:pad*s.dim])
			at := pad * s.dim
			for bi := 0; bi*s.bt < n; bi++ {
				k := min(s.bt, n-bi*s.bt)
				src := s.head(blocks[bi], layer, kind, h)
				at += copy(head[at:at+k*s.dim], src[:k*s.dim])
			}
		}
	}
}

// Scatter writes n positions of row `row` of src, starting at position `from`, as the layer's
// keys or values of sequence positions at, at+1, ... into the blocks of the table blocks.
func (s *KVStore) Scatter(blocks []int32, at int, row, from, n, layer int, kind KVKind, src KVTensor) {
	s.checkTensor(src, layer)
	if row < 0 || row >= src.Batch || from < 0 || from+n > src.Positions {
		panic(fmt.Sprintf("engine: scatter of row %d positions [%d, %d) from %d x %d", row, from, from+n, src.Batch, src.Positions))
	}
	if at < 0 || at+n > len(blocks)*s.bt {
		panic("engine: KV scatter past the block table")
	}
	rowFloats := s.heads * src.Positions * s.dim
	srcRow := src.Data[row*rowFloats : (row+1)*rowFloats]
	for h := 0; h < s.heads; h++ {
		head := srcRow[h*src.Positions*s.dim : (h+1)*src.Positions*s.dim]
		for j := 0; j < n; {
			pos := at + j
			b, off := blocks[pos/s.bt], pos%s.bt
			k := min(n-j, s.bt-off)
			dst := s.head(b, layer, kind, h)
			copy(dst[off*s.dim:(off+k)*s.dim], head[(from+j)*s.dim:(from+j+k)*s.dim])
			j += k
		}
	}
}

// Copy makes block to hold what block from holds (copy on write).
func (s *KVStore) Copy(from, to int32) {
	copy(s.block(to), s.block(from))
}

// head is the bt x dim values of one head of one layer's keys or values in block b.
func (s *KVStore) head(b int32, layer int, kind KVKind, h int) []float32 {
	at := int(b)*s.blockFloats + ((layer*2+int(kind))*s.heads+h)*s.headFloats
	return s.data[at : at+s.headFloats]
}

func (s *KVStore) block(b int32) []float32 {
	return s.data[int(b)*s.blockFloats : (int(b)+1)*s.blockFloats]
}
