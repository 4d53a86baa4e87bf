package chat

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Prompt is a rendered conversation: its text, and the stretches of it ([start, end) byte
// offsets, in order) where the client spelt one of the model's special tokens, which are to be
// encoded as the text they spell (tokenizer.EncodeQuoted), never as the token: a message that
// writes "<|im_end|>" does not end its turn, and cannot open one for another role.
type Prompt struct {
	Text   string
	Quoted [][2]int
}

// ErrSpecialText: a message spells one of the model's special tokens where the chat template
// changes what it writes (a filter over the message), so the spelling cannot be found in the
// prompt to be quoted. The client's to fix; nothing of the message is told.
var ErrSpecialText = errors.New("chat: a message spells one of the model's special tokens, which its chat template does not write as given")

// spellings finds the model's special tokens in a client's text: a trie of their bytes, so
// that a text of many "<" costs a step or two at each, not a look at every token beginning
// with one (Llama 3 has 256).
type spellings struct {
	root    trieNode
	longest int
}

type trieNode struct {
	next map[byte]*trieNode
	end  bool // a spelling ends here
}

func newSpellings(specials []string) *spellings {
	sp := &spellings{}
	for _, s := range specials {
		if s == "" {
			continue
		}
		n := &sp.root
		for k := 0; k < len(s); k++ {
			if n.next == nil {
				n.next = map[byte]*trieNode{}
			}
			c := n.next[s[k]]
			if c == nil {
				c = &trieNode{}
				n.next[s[k]] = c
			}
			n = c
		}
		n.end = true
		sp.longest = max(sp.longest, len(s))
	}
	if sp.root.next == nil {
		return nil
	}
	return sp
}

// longestAt is the length of the longest spelling s begins with, 0 for none (the tokenizer
// takes the longest, leftmost first).
func (sp *spellings) longestAt(s string) int {
	n, best := &sp.root, 0
	for k := 0; k < len(s); k++ {
		if n = n.next[s[k]]; n == nil {
			break
		}
		if n.end {
			best = k + 1
		}
	}
	return best
}

// starts says whether s is the start of a spelling, and not the whole of one.
func (sp *spellings) starts(s string) bool {
	n := &sp.root
	for k := 0; k < len(s); k++ {
		if n = n.next[s[k]]; n == nil {
			return false
		}
	}
	return len(n.next) > 0
}

// find returns what of s is to be quoted: each special token spelt in it, and the start of
// one at its end (before trailing whitespace), which the next client text the template
// writes after it could complete.
func (sp *spellings) find(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); i++ {
		if n := sp.longestAt(s[i:]); n > 0 {
			out = append(out, [2]int{i, i + n})
			i += n - 1
		}
	}
	end := len(strings.TrimRightFunc(s, unicode.IsSpace))
	from := max(end-sp.longest+1, 0)
	if len(out) > 0 {
		from = max(from, out[len(out)-1][1])
	}
	for i := from; i < end; i++ {
		if sp.starts(s[i:end]) {
			return append(out, [2]int{i, end})
		}
	}
	return out
}

// quoter stands a marker in for each stretch to quote in the client's strings, and finds the
// markers in the rendered text again. A marker is private-use characters around its number:
// nothing a template's filters change.
type quoter struct {
	spelt *spellings
	stood []string // marker k stands for stood[k]
}

const markOpen, markClose = '\uE000', '\uE001'

func (q *quoter) quote(s string) string {
	if q.spelt == nil {
		return s
	}
	spans := q.spelt.find(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	pos := 0
	for _, sp := range spans {
		b.WriteString(s[pos:sp[0]])
		b.WriteRune(markOpen)
		b.WriteString(strconv.Itoa(len(q.stood)))
		b.WriteRune(markClose)
		q.stood = append(q.stood, s[sp[0]:sp[1]])
		pos = sp[1]
	}
	b.WriteString(s[pos:])
	return b.String()
}

// restore puts each marker's text back in out and notes where it stands; false when out holds
// something shaped like a marker that none of this quoter's is.
func (q *quoter) restore(out string) (Prompt, bool) {
	var p Prompt
	var b strings.Builder
	for {
		i := strings.IndexRune(out, markOpen)
		if i < 0 {
			b.WriteString(out)
			p.Text = b.String()
			return p, true
		}
		b.WriteString(out[:i])
		rest := out[i+utf8.RuneLen(markOpen):]
		j := strings.IndexRune(rest, markClose)
		if j < 0 {
			return Prompt{}, false
		}
		k, err := strconv.Atoi(rest[:j])
		if err != nil || k < 0 || k >= len(q.stood) {
			return Prompt{}, false
		}
		p.Quoted = append(p.Quoted, [2]int{b.Len(), b.Len() + len(q.stood[k])})
		b.WriteString(q.stood[k])
		out = rest[j+utf8.RuneLen(markClose):]
	}
}
