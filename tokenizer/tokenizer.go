package tokenizer

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Tokenizer turns text into token ids with byte offsets, exactly as HuggingFace's
// tokenizers library does for the same tokenizer.json. It is immutable after Load and safe
// for concurrent use.
type Tokenizer struct {
	norm           normalizer
	model          wordPiece     // the WordPiece family; unused with the other models
	bpe            *bpeModel     // the byte-level BPE family
	byteLevel      *byteLevelPre // the ByteLevel pre-tokenizer; nil: BertPreTokenizer
	metaspace      *metaspacePre // the Metaspace pre-tokenizer (SentencePiece families)
	unigram        *unigramModel // the Unigram family
	wordModel      wordModel     // the model words go to after Metaspace
	noPreTokenizer bool          // pre_tokenizer null: each stretch of text is one word
	stages         []preStage    // a pre-tokenizer pipeline (Sequence, splitting pre-tokenizers)
	byteLevelLast  bool          // the pipeline ends in a ByteLevel that only spells bytes
	vocab          map[string]int64
	byID           map[int64]string
	addedByContent map[string]*addedToken
	addedByID      map[int64]*addedToken
	specials       map[string]bool // contents of special added tokens (skipped by Decode)
	rawMatcher     *matcher        // added tokens matched in the original text
	normMatcher    *matcher        // added tokens matched in the normalized text
	hasPost        bool
	prefix, suffix []int64       // template ids around $A
	pair           *PairTemplate // how two sequences are joined; nil: not known
	trimOffsets    *offsetTrim   // offset trimming of the post-processor, if it trims
	spaces         []uint32      // for trimming: leading<<16 | trailing spaces of each id
	spacesSparse   map[int64]uint32
	decoder        decoder
	padID          int64

	scratch sync.Pool // *scratch; per-call buffers, never shared between calls
}

// Encoding is the result of Encode. All slices have one entry per token.
type Encoding struct {
	IDs []int64
	// Offsets are byte offsets [start, end) into the original text; tokens added by the
	// template have [0, 0].
	Offsets [][2]int
	// Special marks tokens added by the template. Special tokens typed in the text keep
	// false, as in HF's special_tokens_mask.
	Special []bool
	// WordIDs is the index of the pre-tokenized word a token came from, -1 for template
	// tokens. An added token found in the text counts as a word of its own.
	WordIDs []int
}

// token is one entry of an encoding while it is being built in the scratch buffer.
type token struct {
	id         int64
	start, end int32
	word       int32
	special    bool
}

// tokens collects an encoding; Encode copies it into exactly sized result slices.
type tokens []token

func (ts *tokens) add(id int64, start, end int32, word int, special bool) {
	*ts = append(*ts, token{id: id, start: start, end: end, word: int32(word), special: special})
}

func (ts tokens) encoding() Encoding {
	e := Encoding{
		IDs:     make([]int64, len(ts)),
		Offsets: make([][2]int, len(ts)),
		Special: make([]bool, len(ts)),
		WordIDs: make([]int, len(ts)),
	}
	for i, t := range ts {
		e.IDs[i] = t.id
		e.Offsets[i] = [2]int{int(t.start), int(t.end)}
		e.Special[i] = t.special
		e.WordIDs[i] = int(t.word)
	}
	return e
}

// scratch holds the buffers one Encode call needs.
type scratch struct {
	norm   normBuf
	quoted [][2]int // EncodeQuoted's stretches, nil for Encode
	raw    []match  // raw added tokens in the whole text
	normed []match  // normalized added tokens in the current segment
	nbytes []byte   // normalized text of a segment, for normalized added tokens
	segAt  []int32  // byte index -> char index into the normalized segment
	word   []byte   // UTF-8 of the current word
	charAt []int32  // byte index -> char index into the current word
	pieces []piece  // WordPiece output of the current word
	out    tokens   // the encoding being built

	body       int             // where the text's tokens start in out, after the template's
	matched    []matchedSpaces // added tokens found in the text, for offset trimming
	prefixed   []nchar         // a stretch of text with the ByteLevel prefix space
	mappedAt   []int32         // BPE: byte of the word's stand-in spelling -> char index
	spelled    []byte          // BPE: the word's stand-in spelling (ignore_merges lookups)
	key        []byte          // BPE: one symbol's spelling with prefix or suffix
	syms       []bpeSym        // BPE: the symbols of the current word
	heap       []heapEntry     // BPE: merge candidates of a long word
	vScore     []float64       // Unigram: best path score ending at each byte
	vFrom      []int32         // Unigram: where that path's last piece starts, -1 unreached
	vID        []int32         // Unigram: that last piece's id
	stageA     []nchar         // pre-tokenizer pipeline: pieces of the current stage
	stageB     []nchar         // pre-tokenizer pipeline: pieces of the next stage
	spansA     []span
	spansB     []span
	groups     []span   // pre-tokenizer pipeline: merged pieces of one split
	pmatches   []pmatch // pre-tokenizer pipeline: matches of one split
	splitBytes []byte   // pre-tokenizer pipeline: UTF-8 of the piece a Split searches
	splitAt    []int32  // pre-tokenizer pipeline: byte index -> char index into that piece
}

// wordModel is a model that encodes one pre-tokenized word at a time.
type wordModel interface {
	encodeWord(enc *tokens, s *scratch, chars []nchar, word int)
}

// Encode tokenizes text. Offsets are byte offsets into text (not into the normalized
// text); with addSpecialTokens the post-processor's template tokens are added around the
// sequence. Invalid UTF-8 is read as U+FFFD, one byte at a time. Texts must be shorter than
// 2 GiB (offsets are tracked as int32 internally).
func (t *Tokenizer) Encode(text string, addSpecialTokens bool) Encoding {
	return t.EncodeQuoted(text, addSpecialTokens, nil)
}

// EncodeQuoted is Encode with stretches of text quoted: [start, end) byte offsets, in order
// and apart, where a special token's spelling is read as the text it spells rather than as the
// token (HF's split_special_tokens, for those stretches only). A chat prompt quotes what the
// client wrote, so that a message cannot end its turn or open another by spelling the
// template's tokens.
func (t *Tokenizer) EncodeQuoted(text string, addSpecialTokens bool, quoted [][2]int) Encoding {
	s, _ := t.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	s.quoted = quoted
	defer func() {
		s.quoted = nil
		// Buffers grown by one huge text would otherwise stay pinned in the pool.
		if len(text) <= maxPooledText {
			t.scratch.Put(s)
		}
	}()

	// The encoding is built in the pooled scratch: a local slice whose address the encoders
	// take would move to the heap on every call.
	enc := &s.out
	*enc = (*enc)[:0]
	wrap := addSpecialTokens && t.hasPost
	if wrap {
		for _, id := range t.prefix {
			enc.add(id, 0, 0, -1, true)
		}
	}
	body := len(*enc)
	s.body, s.matched = body, s.matched[:0]
	word := 0
	s.raw = t.rawMatcher.find(s.raw[:0], text)
	pos := 0
	for _, m := range s.raw {
		if m.tok.special && quotes(s.quoted, m.start, m.end) {
			continue
		}
		if pos < m.start {
			t.encodeSegment(enc, s, text[pos:m.start], pos, &word)
		}
		enc.add(m.tok.id, int32(m.start), int32(m.end), word, false)
		if t.trimOffsets != nil {
			s.matched = append(s.matched, matchedSpaces{idx: int32(len(*enc) - 1 - body), spaces: countSpaceRuns(text[m.start:m.end])})
		}
		word++
		pos = m.end
	}
	if pos < len(text) {
		t.encodeSegment(enc, s, text[pos:], pos, &word)
	}
	if t.trimOffsets != nil {
		t.trim((*enc)[body:], s.matched, text)
	}
	if wrap {
		for _, id := range t.suffix {
			enc.add(id, 0, 0, -1, true)
		}
	}
	return enc.encoding()
}

const maxPooledText = 1 << 20

// quotes says whether [start, end) reaches into one of the quoted stretches.
func quotes(quoted [][2]int, start, end int) bool {
	i := sort.Search(len(quoted), func(i int) bool { return quoted[i][1] > start })
	return i < len(quoted) && quoted[i][0] < end
}

// encodeSegment normalizes a stretch of text free of raw added tokens, extracts the
// normalized added tokens, and pre-tokenizes and encodes the rest with the model.
func (t *Tokenizer) encodeSegment(enc *tokens, s *scratch, seg string, base int, word *int) {
	chars := t.norm.run(&s.norm, seg, base)
	if len(chars) == 0 {
		return
	}
	if t.normMatcher == nil {
		t.words(enc, s, chars, word)
		return
	}
	s.nbytes, s.segAt = s.nbytes[:0], s.segAt[:0]
	for i, c := range chars {
		n := len(s.nbytes)
		s.nbytes = utf8.AppendRune(s.nbytes, c.r)
		for range len(s.nbytes) - n {
			s.segAt = append(s.segAt, int32(i))
		}
	}
	s.segAt = append(s.segAt, int32(len(chars)))
	s.normed = t.normMatcher.find(s.normed[:0], string(s.nbytes))
	pos := 0
	for _, m := range s.normed {
		a, b := int(s.segAt[m.start]), int(s.segAt[m.end])
		if m.tok.special && quotes(s.quoted, int(chars[a].start), int(chars[b-1].end)) {
			continue
		}
		if pos < a {
			t.words(enc, s, chars[pos:a], word)
		}
		enc.add(m.tok.id, chars[a].start, chars[b-1].end, *word, false)
		if t.trimOffsets != nil {
			spelled := string(s.nbytes[m.start:m.end])
			s.matched = append(s.matched, matchedSpaces{idx: int32(len(*enc) - 1 - s.body), spaces: countSpaceRuns(spelled)})
		}
		*word++
		pos = b
	}
	if pos < len(chars) {
		t.words(enc, s, chars[pos:], word)
	}
}

// words pre-tokenizes a stretch of normalized text free of added tokens and encodes its
// words with the model.
func (t *Tokenizer) words(enc *tokens, s *scratch, chars []nchar, word *int) {
	if t.byteLevel != nil {
		t.byteLevelWords(enc, s, chars, word)
		return
	}
	if t.metaspace != nil {
		t.metaspaceWords(enc, s, chars, word)
		return
	}
	if t.stages != nil {
		t.stagedWords(enc, s, chars, word)
		return
	}
	if t.noPreTokenizer {
		t.wordModel.encodeWord(enc, s, chars, *word)
		*word++
		return
	}
	t.preTokenize(enc, s, chars, word)
}

// preTokenize is BertPreTokenizer: whitespace separates words and is dropped, each
// punctuation character is a word of its own.
func (t *Tokenizer) preTokenize(enc *tokens, s *scratch, chars []nchar, word *int) {
	start := -1
	for i, c := range chars {
		space, punct := isSpace(c.r), false
		if !space {
			punct = isPunct(c.r)
		}
		if !space && !punct {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			t.model.encodeWord(enc, s, chars[start:i], *word)
			*word++
			start = -1
		}
		if punct {
			t.model.encodeWord(enc, s, chars[i:i+1], *word)
			*word++
		}
	}
	if start >= 0 {
		t.model.encodeWord(enc, s, chars[start:], *word)
		*word++
	}
}

// Template returns the ids the single-sequence template puts before and after $A, both
// nil when there is no post-processor. The slices are copies.
func (t *Tokenizer) Template() (prefix, suffix []int64) {
	if !t.hasPost {
		return nil, nil
	}
	return append([]int64{}, t.prefix...), append([]int64{}, t.suffix...)
}

// PadID is the padding section's pad id, else the id of its pad token, else of "[PAD]",
// else of "<pad>", else 0.
func (t *Tokenizer) PadID() int64 { return t.padID }

// TokenID looks token up among the added tokens first, then in the model's vocab, like
// HF's token_to_id.
func (t *Tokenizer) TokenID(token string) (int64, bool) {
	if a, ok := t.addedByContent[token]; ok {
		return a.id, true
	}
	id, ok := t.vocab[token]
	return id, ok
}

// SpecialTokens are the spellings of the special added tokens, sorted: what EncodeQuoted
// reads as text inside a quoted stretch.
func (t *Tokenizer) SpecialTokens() []string {
	return slices.Sorted(maps.Keys(t.specials))
}

// Token is the inverse of TokenID, like HF's id_to_token: added tokens first (normalized
// ones in their normalized form), then the model's vocab. Byte-level BPE tokens come back
// in their stand-in spelling ("Ġworld").
func (t *Tokenizer) Token(id int64) (string, bool) {
	if a, ok := t.addedByID[id]; ok {
		return a.decoded, true
	}
	tok, ok := t.byID[id]
	return tok, ok
}

// VocabSize is HF's get_vocab_size(with_added_tokens=true): the number of distinct token
// strings in the model's vocab and the added tokens together.
func (t *Tokenizer) VocabSize() int {
	n := len(t.vocab)
	for content := range t.addedByContent {
		if _, ok := t.vocab[content]; !ok {
			n++
		}
	}
	return n
}

// MaxID is the highest id the tokenizer gives, of its vocab and its added tokens (-1 for
// none): a model needs that many rows plus one, which VocabSize, a count, does not say when
// ids are sparse.
func (t *Tokenizer) MaxID() int64 {
	top := int64(-1)
	for id := range t.byID {
		top = max(top, id)
	}
	for id := range t.addedByID {
		top = max(top, id)
	}
	return top
}

// decoder turns token strings back into text (HF's Decoder).
type decoder interface {
	decode(tokens []string) string
}

// Decode turns ids back into text with HF's semantics: unknown ids are dropped, special
// added tokens are dropped when skipSpecialTokens is set, and the decoder joins the rest
// (WordPiece: continuation pieces attach to the previous token; ByteLevel: the bytes the
// tokens spell, read as UTF-8 with U+FFFD for broken sequences). Without a decoder the
// tokens are joined by spaces.
func (t *Tokenizer) Decode(ids []int64, skipSpecialTokens bool) string {
	tokens := make([]string, 0, len(ids))
	for _, id := range ids {
		tok, ok := t.Token(id)
		if !ok || (skipSpecialTokens && t.specials[tok]) {
			continue
		}
		tokens = append(tokens, tok)
	}
	if t.decoder == nil {
		return strings.Join(tokens, " ")
	}
	return t.decoder.decode(tokens)
}
