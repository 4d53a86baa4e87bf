package kvcache

import "fmt"

// Tensor is one layer's keys or values for a batch, as a decoder takes and returns them:
// float32, row-major [Batch, heads, Positions, head dim], with the pool's heads and head dim.
type Tensor struct {
	Data      []float32
	Batch     int
	Positions int
}

func (p *Pool) checkTensor(t Tensor, layer int) {
	if layer < 0 || layer >= p.layers {
		panic(fmt.Sprintf("kvcache: layer %d of %d", layer, p.layers))
	}
	if len(t.Data) != t.Batch*p.heads*t.Positions*p.dim {
		panic(fmt.Sprintf("kvcache: tensor of %d values for %d x %d x %d x %d", len(t.Data), t.Batch, p.heads, t.Positions, p.dim))
	}
}

// Gather writes the layer's keys or values of every table into dst, one row per table, left
// padded: row i ends with the Len() tokens of tables[i] and starts with zeros, which the
// attention mask must exclude. dst.Positions must be at least the longest table.
func (p *Pool) Gather(tables []*Table, layer int, kind Kind, dst Tensor) {
	p.checkTensor(dst, layer)
	if dst.Batch != len(tables) {
		panic(fmt.Sprintf("kvcache: gather of %d tables into a batch of %d", len(tables), dst.Batch))
	}
	rowFloats := p.heads * dst.Positions * p.dim
	for i, t := range tables {
		if t.n > dst.Positions {
			panic(fmt.Sprintf("kvcache: table of %d tokens into %d positions", t.n, dst.Positions))
		}
		row := dst.Data[i*rowFloats : (i+1)*rowFloats]
		pad := dst.Positions - t.n
		for h := 0; h < p.heads; h++ {
			head := row[h*dst.Positions*p.dim : (h+1)*dst.Positions*p.dim]
			clear(head[:pad*p.dim])
			at := pad * p.dim
			for bi := 0; bi*p.bt < t.n; bi++ {
				n := min(p.bt, t.n-bi*p.bt)
				src := p.head(t.blocks[bi], layer, kind, h)
				at += copy(head[at:at+n*p.dim], src[:n*p.dim])
			}
		}
	}
}

// Scatter writes n positions of row `row` of src, starting at position `from`, as the keys or
// values of the layer for t's next n tokens (t.Len() onward), into room Reserve made. The
// caller then Appends the tokens' ids.
func (p *Pool) Scatter(t *Table, row, from, n, layer int, kind Kind, src Tensor) {
	p.checkTensor(src, layer)
	if row < 0 || row >= src.Batch || from < 0 || from+n > src.Positions {
		panic(fmt.Sprintf("kvcache: scatter of row %d positions [%d, %d) from %d x %d", row, from, from+n, src.Batch, src.Positions))
	}
	if t.n+n > len(t.blocks)*p.bt {
		panic("kvcache: Scatter past the reserved room")
	}
	rowFloats := p.heads * src.Positions * p.dim
	srcRow := src.Data[row*rowFloats : (row+1)*rowFloats]
	for h := 0; h < p.heads; h++ {
		head := srcRow[h*src.Positions*p.dim : (h+1)*src.Positions*p.dim]
		for j := 0; j < n; {
			pos := t.n + j
			b, off := t.blocks[pos/p.bt], pos%p.bt
			k := min(n-j, p.bt-off)
			dst := p.head(b, layer, kind, h)
			copy(dst[off*p.dim:(off+k)*p.dim], head[(from+j)*p.dim:(from+j+k)*p.dim])
			j += k
		}
	}
}

// head is the bt x dim values of one head of one layer's keys or values in block b.
func (p *Pool) head(b BlockID, layer int, kind Kind, h int) []float32 {
	at := int(b)*p.blockFloats + ((layer*2+int(kind))*p.heads+h)*p.headFloats
	return p.data[at : at+p.headFloats]
}
