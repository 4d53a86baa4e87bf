package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// addedToken is an entry of tokenizer.json's added_tokens: matched in the text before the
// WordPiece model runs, so that e.g. a literal "[CLS]" in the input becomes the [CLS] id.
type addedToken struct {
	id         int64
	content    string
	pattern    string // what is searched for: content, or normalized content
	decoded    string // what Token and Decode give back (HF: the normalized form)
	singleWord bool
	lstrip     bool
	rstrip     bool
	normalized bool
	special    bool
}

type addedTokenJSON struct {
	ID         int64  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

// parseAddedTokens reads added_tokens into the lookups and the two matchers; it runs after
// the normalizer is read, which normalized added tokens go through.
func (t *Tokenizer) parseAddedTokens(list []addedTokenJSON) error {
	t.addedByContent = make(map[string]*addedToken, len(list))
	t.addedByID = make(map[int64]*addedToken, len(list))
	t.specials = make(map[string]bool)
	var raw, norm []*addedToken
	for _, a := range list {
		if a.Content == "" {
			continue
		}
		if a.ID < 0 {
			return fmt.Errorf("tokenizer: added token has a negative id (%d)", a.ID)
		}
		tok := t.newAddedToken(a)
		t.addedByContent[a.Content] = tok
		t.addedByID[a.ID] = tok
		if a.Special {
			t.specials[a.Content] = true
		}
		if tok.pattern == "" {
			continue
		}
		if tok.normalized {
			norm = append(norm, tok)
		} else {
			raw = append(raw, tok)
		}
	}
	t.rawMatcher = newMatcher(raw)
	t.normMatcher = newMatcher(norm)
	return nil
}

// newAddedToken makes an added token of its entry; special tokens default to unnormalized.
func (t *Tokenizer) newAddedToken(a addedTokenJSON) *addedToken {
	normalized := !a.Special
	if a.Normalized != nil {
		normalized = *a.Normalized
	}
	tok := &addedToken{
		id: a.ID, content: a.Content, decoded: a.Content, pattern: a.Content,
		singleWord: a.SingleWord, lstrip: a.LStrip, rstrip: a.RStrip,
		normalized: normalized, special: a.Special,
	}
	if normalized && len(t.norm) > 0 {
		// HF matches normalized added tokens against normalized text and decodes them
		// to their normalized form.
		tok.pattern = t.norm.normalizeString(a.Content)
		tok.decoded = tok.pattern
	}
	return tok
}

// matcher finds added tokens the way HF's Aho-Corasick automaton does with
// MatchKind::LeftmostLongest: scanning left to right, at the first position where any
// pattern matches take the longest one, then continue after it. Tokenizers carry a
// handful of added tokens, so indexing candidates by first byte is all the speed needed.
type matcher struct {
	tokens  []*addedToken
	byFirst [256][]int // token indexes by the first byte of their pattern, longest first
}

func newMatcher(tokens []*addedToken) *matcher {
	if len(tokens) == 0 {
		return nil
	}
	m := &matcher{tokens: tokens}
	for i, tok := range tokens {
		b := tok.pattern[0]
		list := m.byFirst[b]
		at := len(list)
		for k, j := range list {
			if len(tokens[j].pattern) < len(tok.pattern) {
				at = k
				break
			}
		}
		list = append(list, 0)
		copy(list[at+1:], list[at:])
		list[at] = i
		m.byFirst[b] = list
	}
	return m
}

// match is one added token found in a piece of text, as byte offsets into it.
type match struct {
	tok        *addedToken
	start, end int
}

// find returns the added-token splits of s following HF's find_matches: matches that fail
// their single_word condition are dropped (their span is not searched again), lstrip and
// rstrip widen a match over neighbouring whitespace.
func (m *matcher) find(dst []match, s string) []match {
	if m == nil {
		return dst
	}
	last := 0 // end of the previous accepted split (HF's start_offset)
	for i := 0; i < len(s); {
		tok := m.longestAt(s, i)
		if tok == nil {
			i++
			continue
		}
		start, end := i, i+len(tok.pattern)
		i = end
		if tok.singleWord {
			startOK := start == 0 || !endsWithWord(s[:start])
			endOK := end == len(s) || !startsWithWord(s[end:])
			if !startOK || !endOK {
				continue
			}
		}
		if tok.lstrip {
			start = max(trailingSpaceStart(s[:start]), last)
		}
		if tok.rstrip {
			end += leadingSpaceLen(s[end:])
		}
		dst = append(dst, match{tok: tok, start: start, end: end})
		last = end
	}
	return dst
}

func (m *matcher) longestAt(s string, i int) *addedToken {
	for _, j := range m.byFirst[s[i]] {
		tok := m.tokens[j]
		if len(s)-i >= len(tok.pattern) && s[i:i+len(tok.pattern)] == tok.pattern {
			return tok
		}
	}
	return nil
}

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return len(s) > 0 && isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return len(s) > 0 && isWordChar(r)
}

// trailingSpaceStart is where the whitespace at the end of s begins.
func trailingSpaceStart(s string) int {
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if !isSpace(r) {
			break
		}
		s = s[:len(s)-size]
	}
	return len(s)
}

// leadingSpaceLen is the byte length of the whitespace at the start of s.
func leadingSpaceLen(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !isSpace(r) {
			break
		}
		n += size
	}
	return n
}
