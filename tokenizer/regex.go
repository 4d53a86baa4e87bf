package tokenizer

import (
	"fmt"
	"regexp"
	"strings"
)

// compileHFRegex compiles a tokenizer.json regex (Split, Replace) for Go's RE2. HF runs these
// on Oniguruma, whose \s and \d are Unicode classes where RE2's are ASCII: left alone, a
// pattern such as `\s+` would miss U+3000 and give ids HF never gives. \s and \d (and \S and
// \D outside brackets) are rewritten to the classes HF uses (\s as measured from HF, see
// regexSpaceTable; \d as Unicode decimal digits). \w, \b, POSIX classes and negated
// shorthands inside brackets are refused: their Unicode meaning differs between engines and
// nothing here measured Oniguruma's. RE2 itself refuses look-arounds and backreferences.
func compileHFRegex(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	inClass := false
	classStart := -1 // byte offset just after '[' or '[^', where a ']' is a literal
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			i++
			switch e := pattern[i]; e {
			case 's':
				if inClass {
					b.WriteString(spaceClass)
				} else {
					b.WriteString("[" + spaceClass + "]")
				}
			case 'S':
				if inClass {
					return nil, fmt.Errorf(`\S inside brackets has no exact equivalent here`)
				}
				b.WriteString("[^" + spaceClass + "]")
			case 'd':
				b.WriteString(`\p{Nd}`)
			case 'D':
				b.WriteString(`\P{Nd}`)
			case 'w', 'W', 'b', 'B':
				return nil, fmt.Errorf(`\%c is Unicode-aware in HF's regex engine and its exact class is not known here`, e)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			if i+1 < len(pattern) && pattern[i+1] == '^' {
				i++
				b.WriteByte('^')
			}
			classStart = i + 1
		case c == '[' && inClass && strings.HasPrefix(pattern[i:], "[:"):
			return nil, fmt.Errorf("POSIX classes are Unicode-aware in HF's regex engine and ASCII here")
		case c == ']' && inClass && i != classStart:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return regexp.Compile(b.String())
}

// spaceClass is regexSpaceTable as the inside of a bracket expression.
var spaceClass = func() string {
	var b strings.Builder
	for _, r := range regexSpaceTable {
		fmt.Fprintf(&b, `\x{%X}`, r.lo)
		if r.hi != r.lo {
			fmt.Fprintf(&b, `-\x{%X}`, r.hi)
		}
	}
	return b.String()
}()
