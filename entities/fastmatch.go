package entities

import (
	"regexp"
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// fastMatcher finds the matches of a pattern of the form \bX much faster than a full
// regexp scan. Go's regexp tries a match at every byte of the text; here a match is only
// tried where X can begin (a byte in first) and where \b holds, with X anchored there.
// For valid UTF-8 text the result is exactly FindAllStringIndex's: both report, left to
// right, the leftmost match with the same preference among alternatives, and X's own
// assertions see the same text around them.
type fastMatcher struct {
	source   *regexp.Regexp // the pattern this matcher was derived from
	anchored *regexp.Regexp // \A(?:X)
	first    [256]bool      // bytes a match of X can begin with
}

// newFastMatcher returns nil when the pattern does not have the \bX shape, or when X
// could match the empty string or test an assertion before its first character; those
// patterns use the plain scan.
func newFastMatcher(re *regexp.Regexp) *fastMatcher {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	for tree.Op == syntax.OpCapture {
		tree = tree.Sub[0]
	}
	if tree.Op != syntax.OpConcat || len(tree.Sub) < 2 || tree.Sub[0].Op != syntax.OpWordBoundary {
		return nil
	}
	rest := &syntax.Regexp{Op: syntax.OpConcat, Flags: tree.Flags, Sub: tree.Sub[1:]}
	m := &fastMatcher{source: re}
	nullable, ok := firstBytes(rest, &m.first)
	if !ok || nullable {
		return nil
	}
	anchored, err := regexp.Compile(`\A(?:` + rest.String() + `)`)
	if err != nil {
		return nil
	}
	m.anchored = anchored
	return m
}

// findAll is FindAllStringIndex(text, -1) for the source pattern; text must be valid
// UTF-8.
func (m *fastMatcher) findAll(text string) [][]int {
	var out [][]int
	for p := 0; p < len(text); p++ {
		if !m.first[text[p]] || !utf8.RuneStart(text[p]) || !wordBoundaryAt(text, p) {
			continue
		}
		loc := m.anchored.FindStringIndex(text[p:])
		if loc == nil {
			continue
		}
		out = append(out, []int{p, p + loc[1]})
		p += loc[1] - 1 // the match is not empty; the loop's p++ lands on its end
	}
	return out
}

// wordBoundaryAt is regexp's \b at byte p: ASCII word characters on one side only.
// Any byte of a multi-byte character is a non-word character, as the rune is.
func wordBoundaryAt(text string, p int) bool {
	before := p > 0 && isASCIIWord(text[p-1])
	after := p < len(text) && isASCIIWord(text[p])
	return before != after
}

func isASCIIWord(b byte) bool {
	return b < utf8.RuneSelf && syntax.IsWordChar(rune(b))
}

// firstBytes adds to set every byte a match of re can begin with, and reports whether
// re can match the empty string. ok is false when an assertion could be tested before
// the first character, where the anchored form would see different context.
func firstBytes(re *syntax.Regexp, set *[256]bool) (nullable, ok bool) {
	switch re.Op {
	case syntax.OpNoMatch:
		return false, true
	case syntax.OpEmptyMatch:
		return true, true
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true, true
		}
		addRune(set, re.Rune[0], re.Flags&syntax.FoldCase != 0)
		return false, true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			addRange(set, re.Rune[i], re.Rune[i+1])
		}
		return false, true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		addRange(set, 0, unicode.MaxRune)
		return false, true
	case syntax.OpCapture:
		return firstBytes(re.Sub[0], set)
	case syntax.OpStar, syntax.OpQuest:
		_, ok := firstBytes(re.Sub[0], set)
		return true, ok
	case syntax.OpPlus:
		return firstBytes(re.Sub[0], set)
	case syntax.OpRepeat:
		n, ok := firstBytes(re.Sub[0], set)
		return n || re.Min == 0, ok
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			n, ok := firstBytes(sub, set)
			if !ok {
				return false, false
			}
			if !n {
				return false, true
			}
		}
		return true, true
	case syntax.OpAlternate:
		nullable := false
		for _, sub := range re.Sub {
			n, ok := firstBytes(sub, set)
			if !ok {
				return false, false
			}
			nullable = nullable || n
		}
		return nullable, true
	default: // assertions: ^ $ \A \z \b \B
		return false, false
	}
}

func addRune(set *[256]bool, r rune, fold bool) {
	addRange(set, r, r)
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			addRange(set, f, f)
		}
	}
}

// addRange marks the first bytes of the runes in [lo, hi]; any non-ASCII rune marks
// every byte from 0x80 up, which over-approximates its UTF-8 lead byte.
func addRange(set *[256]bool, lo, hi rune) {
	for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
		set[r] = true
	}
	if hi >= utf8.RuneSelf {
		for b := utf8.RuneSelf; b < 256; b++ {
			set[b] = true
		}
	}
}
