package tokenizer

import (
	"slices"
)

// composition is one canonical composition: a followed by b composes to c.
type composition struct{ a, b, c rune }

// composedChar is one output character of NFC with HF's change count: 0 replaces the next
// input character, 1 is inserted after the last one consumed, -k replaces the next one and
// swallows the k after it.
type composedChar struct {
	r     rune
	delta int32
	rank  uint8
}

// nfc is HF's NFC normalizer with its alignments. HF runs the decomposition of NFD and then
// recomposes, adding up the change counts of what it composes (a composed pair counts one
// less than its parts); those counts, not the characters, place every output character on
// the original text. A composed "e" + U+0301, for one, keeps only the span of the "e".
func nfc(buf *normBuf, in, out []nchar, base int32) []nchar {
	if nfcStable(in) {
		return append(out, in...)
	}
	return nfcFull(buf, in, out, base, false)
}

// nfcFull is nfc without the shortcut for text it leaves alone; with compat it is NFKC,
// which only decomposes differently.
func nfcFull(buf *normBuf, in, out []nchar, base int32, compat bool) []nchar {
	ch := decomposed(buf, in, compat)
	cc := buf.composed[:0]
	for _, c := range ch {
		d := int32(0)
		if c.insert {
			d = 1
		}
		cc = append(cc, composedChar{r: c.r, delta: d, rank: c.rank})
	}
	cc = recompose(cc)
	buf.composed = cc
	next := 0
	for _, c := range cc {
		n := nchar{r: c.r, start: base, end: base}
		switch {
		case c.delta <= 0 && next < len(in):
			n.start, n.end = in[next].start, in[next].end
			next += 1 - int(c.delta)
		case next > 0:
			last := min(next, len(in)) - 1
			n.start, n.end = in[last].start, in[last].end
		}
		out = append(out, n)
	}
	return out
}

// recompose is the canonical composition of HF's normalization crate, in place: each
// starter absorbs the following characters that compose with it and are not blocked (by a
// non-starter of the same or a higher class in between, or by a starter); the characters it
// passes over keep their order after it.
func recompose(cc []composedChar) []composedChar {
	out := cc[:0] // writes never overtake reads: each step emits at most what it read
	var held []composedChar
	var starter composedChar
	hasStarter := false
	lastRank := -1 // rank of the last character held back since the starter; -1: none
	var pending [64]composedChar
	held = pending[:0]
	for _, c := range cc {
		if !hasStarter {
			if c.rank != 0 {
				out = append(out, c)
				continue
			}
			starter, hasStarter = c, true
			continue
		}
		blocked := lastRank >= 0 && lastRank >= int(c.rank)
		if !blocked {
			if r, ok := compose(starter.r, c.r); ok {
				starter.r = r
				starter.delta += c.delta - 1
				continue
			}
		}
		if c.rank == 0 {
			out = append(out, starter)
			out = append(out, held...)
			held = held[:0]
			starter, lastRank = c, -1
			continue
		}
		held = append(held, c)
		lastRank = int(c.rank)
	}
	if hasStarter {
		out = append(out, starter)
	}
	return append(out, held...)
}

const (
	hangulVLast = hangulVBase + 20
	hangulTLast = hangulTBase + 27
	hangulLLast = hangulLBase + 18
)

// compose is the primary composite of a and b, if there is one.
func compose(a, b rune) (rune, bool) {
	if a >= hangulLBase && a <= hangulLLast && b >= hangulVBase && b <= hangulVLast {
		return hangulBase + ((a-hangulLBase)*21+(b-hangulVBase))*28, true
	}
	if a >= hangulBase && a <= hangulLast && (a-hangulBase)%28 == 0 && b > hangulTBase && b <= hangulTLast {
		return a + b - hangulTBase, true
	}
	i, ok := slices.BinarySearchFunc(compositionTable, [2]rune{a, b}, func(c composition, k [2]rune) int {
		if c.a != k[0] {
			return int(c.a - k[0])
		}
		return int(c.b - k[1])
	})
	if !ok {
		return 0, false
	}
	return compositionTable[i].c, true
}

// composesAfter holds every character that can be the second of a composition.
var composesAfter = func() []rune {
	var rs []rune
	for _, c := range compositionTable {
		rs = append(rs, c.b)
	}
	slices.Sort(rs)
	return slices.Compact(rs)
}()

// nfcStable reports whether NFC leaves in as it is, alignments included: no character
// decomposes (Hangul syllables recompose to themselves), reorders, or composes with the one
// before it. Below U+0300 nothing does, which settles most text at once.
func nfcStable(in []nchar) bool {
	for _, c := range in {
		r := c.r
		if r < 0x300 || (r >= hangulBase && r <= hangulLast) {
			continue
		}
		if (r >= hangulVBase && r <= hangulTLast) || combiningRank(r) != 0 {
			return false
		}
		if _, found := slices.BinarySearch(composesAfter, r); found {
			return false
		}
		if _, found := slices.BinarySearchFunc(decompTable, r, func(d decomposition, r rune) int { return int(d.r - r) }); found {
			return false
		}
	}
	return true
}

// compatEntry locates one compatibility decomposition in compatRunes.
type compatEntry struct {
	r   rune
	off uint32
	n   uint8
}

// decomposeCompat appends the full compatibility decomposition of r (r itself when it has
// none).
func decomposeCompat(dst []rune, r rune) []rune {
	if r < 0xA0 {
		return append(dst, r)
	}
	if r >= hangulBase && r <= hangulLast {
		return decompose(dst, r)
	}
	i, ok := slices.BinarySearchFunc(compatTable, r, func(e compatEntry, r rune) int { return int(e.r - r) })
	if !ok {
		return append(dst, r)
	}
	e := compatTable[i]
	return append(dst, compatRunes[e.off:e.off+uint32(e.n)]...)
}

// compatStable reports text NFKD and NFKC leave alone: below U+00A0 nothing decomposes,
// reorders or composes.
func compatStable(in []nchar) bool {
	for _, c := range in {
		if c.r >= 0xA0 {
			return false
		}
	}
	return true
}
