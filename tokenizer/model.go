package tokenizer

import "unicode/utf8"

// wordPiece is the WordPiece model: greedy longest-match-first over the vocab, with
// continuation pieces spelled with a prefix ("##").
type wordPiece struct {
	vocab      map[string]int64 // every entry, as spelled
	cont       map[string]int64 // entries that start with prefix, keyed without it
	byID       map[int64]string
	unk        string
	unkID      int64
	prefix     string
	maxChars   int // longer words become a single unk token
	maxLen     int // longest vocab entry in bytes
	maxContLen int // longest continuation entry in bytes, without prefix
}

// piece is one WordPiece token of a word, as byte offsets into the word's UTF-8.
type piece struct {
	id         int64
	start, end int
}

// encodeWord appends the tokens of one pre-tokenized word. Like HF, a word that cannot be
// covered by vocab pieces, or that has more than maxChars characters, becomes one unk
// token spanning the whole word.
func (m *wordPiece) encodeWord(enc *tokens, s *scratch, chars []nchar, word int) {
	first, last := chars[0].start, chars[len(chars)-1].end
	if len(chars) > m.maxChars {
		enc.add(m.unkID, first, last, word, false)
		return
	}
	w, charAt := s.word[:0], s.charAt[:0]
	for i, c := range chars {
		if c.r < utf8.RuneSelf {
			w = append(w, byte(c.r))
			charAt = append(charAt, int32(i))
			continue
		}
		n := len(w)
		w = utf8.AppendRune(w, c.r)
		for range len(w) - n {
			charAt = append(charAt, int32(i))
		}
	}
	s.word, s.charAt = w, charAt

	pieces := s.pieces[:0]
	for start := 0; start < len(w); {
		dict, limit := m.cont, m.maxContLen
		if start == 0 {
			dict, limit = m.vocab, m.maxLen
		}
		end := len(w)
		if end-start > limit {
			// No entry is longer than limit: start the search at the first char boundary
			// at or below it instead of trimming one char at a time from the full word.
			end = start + limit
			for end > start && !utf8.RuneStart(w[end]) {
				end--
			}
		}
		found := false
		for end > start {
			if id, ok := dict[string(w[start:end])]; ok {
				pieces = append(pieces, piece{id: id, start: start, end: end})
				found = true
				break
			}
			end--
			for end > start && !utf8.RuneStart(w[end]) {
				end--
			}
		}
		if !found {
			s.pieces = pieces
			enc.add(m.unkID, first, last, word, false)
			return
		}
		start = end
	}
	s.pieces = pieces
	for _, p := range pieces {
		enc.add(p.id, chars[charAt[p.start]].start, chars[charAt[p.end-1]].end, word, false)
	}
}
