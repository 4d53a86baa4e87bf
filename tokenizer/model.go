package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// parseModel reads the model section, which must suit the pre-tokenizer read before it.
func (t *Tokenizer) parseModel(raw json.RawMessage) error {
	if isNull(raw) {
		return errors.New("tokenizer: model section is missing")
	}
	typ, err := componentType(raw, "model")
	if err != nil {
		return err
	}
	if t.noPreTokenizer && typ != "BPE" && typ != "Unigram" && t.stages == nil {
		return fmt.Errorf("tokenizer: pre_tokenizer is missing (supported: %s)", supportedPreTokenizers)
	}
	if typ == "Unigram" {
		return t.parseUnigramModel(raw)
	}
	// Every other model is first read with WordPiece's fields: they tell untyped files
	// apart, and a file whose fields do not read so has always failed here.
	var m wordPieceJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("tokenizer: invalid model section: %w", err)
	}
	if typ == "" {
		if typ, err = untypedModel(m); err != nil {
			return err
		}
	}
	switch typ {
	case "WordPiece":
		return t.parseWordPieceModel(m)
	case "BPE":
		return t.parseBPEModel(raw)
	}
	return unsupported("model", typ, supportedModels)
}

// untypedModel names the model of an old file that leaves the type out, telling models
// apart by their fields as HF does.
func untypedModel(m wordPieceJSON) (string, error) {
	switch {
	case !isNull(m.Merges):
		return "BPE", nil
	case m.ContinuingSubwordPrefix != nil:
		return "WordPiece", nil
	}
	return "", errors.New("tokenizer: model has no type and looks like neither WordPiece nor BPE (supported: " + supportedModels + ")")
}

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

type wordPieceJSON struct {
	Type                    string           `json:"type"`
	UnkToken                *string          `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    *int             `json:"max_input_chars_per_word"`
	Vocab                   map[string]int64 `json:"vocab"`
	Merges                  json.RawMessage  `json:"merges"`
}

// parseWordPieceModel reads HF's WordPiece model, which needs BertPreTokenizer or a
// pipeline.
func (t *Tokenizer) parseWordPieceModel(m wordPieceJSON) error {
	if t.byteLevel != nil || t.byteLevelLast {
		return errors.New("tokenizer: model WordPiece with pre_tokenizer ByteLevel is not supported (WordPiece needs BertPreTokenizer)")
	}
	if t.metaspace != nil {
		return errors.New("tokenizer: model WordPiece with pre_tokenizer Metaspace is not supported (WordPiece needs BertPreTokenizer)")
	}
	wp, err := newWordPiece(m)
	if err != nil {
		return err
	}
	t.model = wp
	t.wordModel = &t.model
	t.vocab, t.byID = wp.vocab, wp.byID
	return nil
}

// newWordPiece builds the WordPiece model with HF's defaults for the fields left out.
func newWordPiece(m wordPieceJSON) (wordPiece, error) {
	if len(m.Vocab) == 0 {
		return wordPiece{}, errors.New("tokenizer: WordPiece vocab is empty")
	}
	wp := wordPiece{unk: "[UNK]", prefix: "##", maxChars: 100}
	if m.UnkToken != nil {
		wp.unk = *m.UnkToken
	}
	if m.ContinuingSubwordPrefix != nil {
		wp.prefix = *m.ContinuingSubwordPrefix
	}
	if m.MaxInputCharsPerWord != nil {
		wp.maxChars = *m.MaxInputCharsPerWord
	}
	unk, ok := m.Vocab[wp.unk]
	if !ok {
		// HF would fail on the first unknown word instead; failing at load is clearer.
		return wordPiece{}, fmt.Errorf("tokenizer: unk_token (%d bytes) is not in the WordPiece vocab of %d entries", len(wp.unk), len(m.Vocab))
	}
	wp.unkID = unk
	wp.vocab = m.Vocab
	wp.cont = make(map[string]int64)
	wp.byID = make(map[int64]string, len(m.Vocab))
	for tok, id := range m.Vocab {
		if id < 0 {
			return wordPiece{}, fmt.Errorf("tokenizer: WordPiece vocab has a negative id (%d)", id)
		}
		if prev, dup := wp.byID[id]; !dup || tok < prev {
			wp.byID[id] = tok
		}
		wp.maxLen = max(wp.maxLen, len(tok))
		if rest, ok := strings.CutPrefix(tok, wp.prefix); ok {
			wp.cont[rest] = id
			wp.maxContLen = max(wp.maxContLen, len(rest))
		}
	}
	return wp, nil
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
