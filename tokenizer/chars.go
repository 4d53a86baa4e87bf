package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// runeRange is an inclusive range of code points in a generated table.
type runeRange struct{ lo, hi rune }

// rankRange gives the canonical-ordering rank of the non-starters in [lo, hi].
type rankRange struct {
	lo, hi rune
	rank   uint8
}

// decomposition is a full canonical decomposition of one code point.
type decomposition struct {
	r     rune
	n     uint8
	runes [maxDecomposition]rune
}

// lowerMapping is the lowercase of one code point; a few lowercase to two code points.
type lowerMapping struct {
	r     rune
	n     uint8
	runes [maxLowercase]rune
}

func inTable(t []runeRange, r rune) bool {
	lo, hi := 0, len(t)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case r < t[m].lo:
			hi = m
		case r > t[m].hi:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// ASCII answers come from one table lookup; the generated tables are only searched for
// non-ASCII code points, which keeps the common case cheap.
const (
	asciiRemoved    = 1 << iota // clean_text drops it
	asciiCleanSpace             // clean_text turns it into ' '
	asciiPunct                  // BertPreTokenizer isolates it
	asciiSpace                  // BertPreTokenizer splits on it
)

var asciiClass = func() (c [128]uint8) {
	for r := rune(0); r < 128; r++ {
		if inTable(removedTable, r) {
			c[r] |= asciiRemoved
		}
		if inTable(cleanSpaceTable, r) || r == ' ' {
			c[r] |= asciiCleanSpace
		}
		if inTable(punctTable, r) {
			c[r] |= asciiPunct
		}
		if inTable(spaceTable, r) {
			c[r] |= asciiSpace
		}
	}
	return c
}()

func isRemoved(r rune) bool {
	if r < 128 {
		return asciiClass[r]&asciiRemoved != 0
	}
	return inTable(removedTable, r)
}

func isCleanSpace(r rune) bool {
	if r < 128 {
		return asciiClass[r]&asciiCleanSpace != 0
	}
	return inTable(cleanSpaceTable, r)
}

func isPunct(r rune) bool {
	if r < 128 {
		return asciiClass[r]&asciiPunct != 0
	}
	return inTable(punctTable, r)
}

// isSpace is Rust's char::is_whitespace (Unicode White_Space), which is also what the
// regex \s in added-token stripping means.
func isSpace(r rune) bool {
	if r < 128 {
		return asciiClass[r]&asciiSpace != 0
	}
	return inTable(spaceTable, r)
}

// HF's StripAccents normalizer and BertNormalizer's strip_accents test marks with
// different predicates, hence two tables.
func isMark(r rune) bool { return r >= 0x300 && inTable(markTable, r) }

func isBertMark(r rune) bool { return r >= 0x300 && inTable(bertMarkTable, r) }

func isChinese(r rune) bool { return r >= 0x3400 && inTable(chineseTable, r) }

func combiningRank(r rune) uint8 {
	if r < 0x300 {
		return 0
	}
	t := combiningTable
	lo, hi := 0, len(t)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case r < t[m].lo:
			hi = m
		case r > t[m].hi:
			lo = m + 1
		default:
			return t[m].rank
		}
	}
	return 0
}

const (
	hangulBase  = 0xAC00
	hangulLast  = 0xD7A3
	hangulLBase = 0x1100
	hangulVBase = 0x1161
	hangulTBase = 0x11A7
)

// decompose appends the canonical decomposition of r (r itself when it has none).
func decompose(dst []rune, r rune) []rune {
	if r < 0xC0 {
		return append(dst, r)
	}
	if r >= hangulBase && r <= hangulLast {
		s := r - hangulBase
		dst = append(dst, hangulLBase+s/588, hangulVBase+(s%588)/28)
		if t := s % 28; t != 0 {
			dst = append(dst, hangulTBase+t)
		}
		return dst
	}
	t := decompTable
	lo, hi := 0, len(t)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case r < t[m].r:
			hi = m
		case r > t[m].r:
			lo = m + 1
		default:
			return append(dst, t[m].runes[:t[m].n]...)
		}
	}
	return append(dst, r)
}

// lower appends Rust's char::to_lowercase of r.
func lower(dst []rune, r rune) []rune {
	if r < 128 {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(dst, r)
	}
	t := lowerTable
	lo, hi := 0, len(t)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case r < t[m].r:
			hi = m
		case r > t[m].r:
			lo = m + 1
		default:
			return append(dst, t[m].runes[:t[m].n]...)
		}
	}
	return append(dst, r)
}

// isWordChar is the regex \w that single_word added tokens test their neighbours with:
// Alphabetic, marks, decimal digits, connector punctuation and the join controls.
func isWordChar(r rune) bool {
	if r < 128 {
		return r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
	}
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.In(r, unicode.Nd, unicode.Nl, unicode.Pc, unicode.Other_Alphabetic) ||
		r == 0x200C || r == 0x200D
}

// spellUTF8 appends the UTF-8 of chars to b, and to at the index into chars of each byte it
// appends, so that a byte offset found in the spelling leads back to its character.
func spellUTF8(b []byte, at []int32, chars []nchar) ([]byte, []int32) {
	for i, c := range chars {
		n := len(b)
		if c.r < utf8.RuneSelf {
			b = append(b, byte(c.r))
		} else {
			b = utf8.AppendRune(b, c.r)
		}
		for range len(b) - n {
			at = append(at, int32(i))
		}
	}
	return b, at
}
