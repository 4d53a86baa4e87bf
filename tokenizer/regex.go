package tokenizer

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// hfRegex is a tokenizer.json regex compiled for Go's RE2 (see compileHFRegex).
type hfRegex struct {
	re *regexp.Regexp
	// spaceRun is the capture group that stands for `\s+(?!\S)` (0: the pattern has none).
	// RE2 has no look-ahead; a run that group matches before a non-space gives back its
	// last character, which is what the look-ahead makes a backtracking engine do (and a
	// run of one, which the look-ahead fails, is what the `\s+` after it in every pattern
	// that uses it matches anyway).
	spaceRun int
}

// allIndex returns the [start, end) byte spans of the successive matches in b.
func (h *hfRegex) allIndex(b []byte) [][2]int {
	var out [][2]int
	if h.spaceRun == 0 {
		for _, m := range h.re.FindAllIndex(b, -1) {
			out = append(out, [2]int{m[0], m[1]})
		}
		return out
	}
	for pos := 0; pos < len(b); {
		m := h.re.FindSubmatchIndex(b[pos:])
		if m == nil {
			break
		}
		start, end := pos+m[0], pos+m[1]
		if g := m[2*h.spaceRun]; g >= 0 && end < len(b) {
			if _, last := utf8.DecodeLastRune(b[start:end]); end-last > start {
				end -= last
			}
		}
		if end == start {
			// An empty match: step over one character, as FindAll does.
			_, size := utf8.DecodeRune(b[start:])
			pos = start + max(size, 1)
			continue
		}
		out = append(out, [2]int{start, end})
		pos = end
	}
	return out
}

// compileHFRegex compiles a tokenizer.json regex (Split, Replace) for Go's RE2. HF runs these
// on Oniguruma, whose classes are Unicode where RE2's shorthands are ASCII: left alone, a
// pattern such as `\s+` would miss U+3000 and give ids HF never gives. \s (and \S outside
// brackets) becomes the class measured from HF (regexSpaceTable), \p{L} and \p{N} (and \P{L},
// \P{N} outside brackets) the letter and number tables measured from HF's engine, and \d
// (\D) Go's decimal digits, which lack the few Unicode 16 added. \w, \b, POSIX classes and
// negated classes inside brackets are refused: their Unicode meaning differs between
// engines and nothing here measured Oniguruma's. The one look-ahead tokenizers use,
// `\s+(?!\S)|\s+` at the end of a GPT-4-style pattern (Llama-3, Qwen, DeepSeek), becomes a
// named group that allIndex shortens; the look-ahead anywhere else, with anchors that would
// match again at each resumed search, and any other look-around fail.
func compileHFRegex(pattern string) (*hfRegex, error) {
	const lookahead = `\s+(?!\S)`
	var b strings.Builder
	h := &hfRegex{}
	found := false
	inClass := false
	classStart := -1 // byte offset just after '[' or '[^', where a ']' is a literal
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case !inClass && strings.HasPrefix(pattern[i:], lookahead):
			// Shortening the group's run by one character is the look-ahead only where it is a
			// whole alternative and the `\s+` after it takes what the look-ahead refuses.
			rest := pattern[i+len(lookahead):]
			starts := i == 0 || pattern[i-1] == '|' || pattern[i-1] == '('
			if found || !starts || !(rest == `|\s+` || strings.HasPrefix(rest, `|\s+)`) || strings.HasPrefix(rest, `|\s+|`)) {
				return nil, errors.New(`a look-ahead other than GPT-4's closing \s+(?!\S)|\s+`)
			}
			found = true
			b.WriteString("(?P<" + spaceRunGroup + ">[" + spaceClass + "]+)")
			i += len(lookahead) - 1
		case !inClass && (strings.HasPrefix(pattern[i:], `\p{L}`) || strings.HasPrefix(pattern[i:], `\p{N}`)):
			b.WriteString("[" + measuredClass(pattern[i+3]) + "]")
			i += len(`\p{L}`) - 1
		case !inClass && (strings.HasPrefix(pattern[i:], `\P{L}`) || strings.HasPrefix(pattern[i:], `\P{N}`)):
			b.WriteString("[^" + measuredClass(pattern[i+3]) + "]")
			i += len(`\P{L}`) - 1
		case inClass && (strings.HasPrefix(pattern[i:], `\p{L}`) || strings.HasPrefix(pattern[i:], `\p{N}`)):
			b.WriteString(measuredClass(pattern[i+3]))
			i += len(`\p{L}`) - 1
		case inClass && (strings.HasPrefix(pattern[i:], `\P{L}`) || strings.HasPrefix(pattern[i:], `\P{N}`)):
			return nil, fmt.Errorf(`\P{%c} inside brackets has no exact equivalent here`, pattern[i+3])
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
	if found && hasAnchor(pattern) {
		// allIndex resumes each search at the end of the last match, where an anchor would
		// match again.
		return nil, fmt.Errorf("anchors beside the look-ahead")
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	h.re = re
	if found {
		h.spaceRun = re.SubexpIndex(spaceRunGroup)
	}
	return h, nil
}

// spaceRunGroup names the group standing for the look-ahead; tokenizer patterns name none.
const spaceRunGroup = "sluiceSpaceRun"

// hasAnchor reports whether pattern has a ^ outside brackets, \A, or multi-line mode.
func hasAnchor(pattern string) bool {
	inClass := false
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			if i+1 < len(pattern) && pattern[i+1] == 'A' && !inClass {
				return true
			}
			i++
		case c == '[' && !inClass:
			inClass = true
			if i+1 < len(pattern) && pattern[i+1] == '^' {
				i++
			}
			if i+1 < len(pattern) && pattern[i+1] == ']' {
				i++ // a literal ] first in the brackets
			}
		case c == ']' && inClass:
			inClass = false
		case c == '^' && !inClass:
			return true
		}
	}
	return strings.Contains(pattern, "(?m")
}

// measuredClass is the inside of a bracket expression for \p{L} (letter) or \p{N}, from the
// tables measured from HF's regex engine.
func measuredClass(which byte) string {
	if which == 'L' {
		return letterClass()
	}
	return numberClass()
}

var (
	letterClass = sync.OnceValue(func() string { return rangeClass(regexLetterTable) })
	numberClass = sync.OnceValue(func() string { return rangeClass(regexNumberTable) })
)

// spaceClass is regexSpaceTable as the inside of a bracket expression.
var spaceClass = rangeClass(regexSpaceTable)

func rangeClass(table []runeRange) string {
	var b strings.Builder
	for _, r := range table {
		fmt.Fprintf(&b, `\x{%X}`, r.lo)
		if r.hi != r.lo {
			fmt.Fprintf(&b, `-\x{%X}`, r.hi)
		}
	}
	return b.String()
}
