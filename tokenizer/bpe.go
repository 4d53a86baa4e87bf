package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// bpeModel is HF's BPE model: a word starts as one symbol per byte (byte-level tokenizers,
// spelled with stand-in characters, see byteChar) or per character (SentencePiece BPE), and
// adjacent symbols are merged, lowest merge rank first and leftmost among equals, until no
// pair has a merge.
type bpeModel struct {
	vocab  map[string]int64
	merges map[uint64]bpeMerge // by pair of ids, left << 32 | right
	unkID  int64               // -1: characters missing from the vocab are dropped
	fuse   bool                // consecutive unknowns become one unk token
	prefix string              // continuing_subword_prefix, spelled before non-initial symbols
	suffix string              // end_of_word_suffix, spelled after a word's last symbol
	// ignoreMerges: a word that is itself in the vocab is one token, whatever the merges
	// would make of it.
	ignoreMerges bool
	// byteID is the id of each byte's stand-in alone, -1 when it is not in the vocab; it
	// spells a symbol whenever prefix and suffix are both empty, which is the usual case.
	byteID [256]int64
	plain  bool
	// byteLevel: words come spelled in ByteLevel's stand-in characters, one symbol per byte.
	// Otherwise (SentencePiece BPE) a symbol starts as one character of the normalized text,
	// and with byteFallback a character missing from the vocab becomes its <0xXX> byte tokens.
	byteLevel    bool
	byteFallback bool
	fallbackID   [256]int64 // ids of the <0xXX> tokens, -1 where missing
	asciiID      [128]int64 // ids of the ASCII characters alone, -1 where missing
}

type bpeMerge struct {
	rank uint32
	id   uint32
}

// bpeSym is one symbol of a word while merges run. start and end count bytes of the
// stand-in spelling of the word, the unit HF counts a word's offsets in.
type bpeSym struct {
	id         uint32
	start, end int32
	// The merge of this symbol with the next one, if any (rank noMerge when none).
	rank  uint32
	newID uint32
	// Neighbours and liveness, used only by the heap for long words.
	prev, next int32
}

const noMerge = math.MaxUint32

type bpeJSON struct {
	Dropout                 *float64         `json:"dropout"`
	UnkToken                *string          `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string          `json:"end_of_word_suffix"`
	FuseUnk                 bool             `json:"fuse_unk"`
	ByteFallback            bool             `json:"byte_fallback"`
	IgnoreMerges            bool             `json:"ignore_merges"`
	Vocab                   map[string]int64 `json:"vocab"`
	Merges                  json.RawMessage  `json:"merges"`
}

// parseBPEModel reads HF's BPE model, which needs ByteLevel, Metaspace, a pipeline or no
// pre-tokenizer; after ByteLevel it spells bytes as GPT-2 does.
func (t *Tokenizer) parseBPEModel(raw json.RawMessage) error {
	if t.byteLevel == nil && t.metaspace == nil && !t.noPreTokenizer && t.stages == nil {
		return errors.New("tokenizer: model BPE with pre_tokenizer BertPreTokenizer is not supported (BPE needs ByteLevel, Metaspace or none)")
	}
	bpe, err := parseBPE(raw)
	if err != nil {
		return err
	}
	bpe.byteLevel = t.byteLevel != nil || t.byteLevelLast
	if bpe.byteLevel && bpe.byteFallback {
		return errors.New("tokenizer: BPE byte_fallback with pre_tokenizer ByteLevel is not supported")
	}
	t.bpe, t.wordModel, t.vocab = bpe, bpe, bpe.vocab
	t.byID = make(map[int64]string, len(bpe.vocab))
	for tok, id := range bpe.vocab {
		if prev, dup := t.byID[id]; !dup || tok < prev {
			t.byID[id] = tok
		}
	}
	return nil
}

// parseBPE builds the BPE model of a BPE model section.
func parseBPE(raw json.RawMessage) (*bpeModel, error) {
	var j bpeJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid BPE model: %w", err)
	}
	if j.Dropout != nil && *j.Dropout != 0 {
		// Dropout skips merges at random, for training; serving needs one answer per text.
		return nil, errors.New("tokenizer: BPE dropout must be null for inference")
	}
	if len(j.Vocab) == 0 {
		return nil, errors.New("tokenizer: BPE vocab is empty")
	}
	m := &bpeModel{vocab: j.Vocab, unkID: -1, fuse: j.FuseUnk, ignoreMerges: j.IgnoreMerges, byteFallback: j.ByteFallback}
	for _, id := range j.Vocab {
		if id < 0 || id > math.MaxUint32 {
			return nil, fmt.Errorf("tokenizer: BPE vocab id %d is outside 0..2^32-1", id)
		}
	}
	if j.ContinuingSubwordPrefix != nil {
		m.prefix = *j.ContinuingSubwordPrefix
	}
	if j.EndOfWordSuffix != nil {
		m.suffix = *j.EndOfWordSuffix
	}
	if j.UnkToken != nil {
		id, ok := j.Vocab[*j.UnkToken]
		if !ok {
			// HF fails on the first unknown character instead; failing at load is clearer.
			return nil, fmt.Errorf("tokenizer: unk_token (%d bytes) is not in the BPE vocab of %d entries", len(*j.UnkToken), len(j.Vocab))
		}
		m.unkID = id
	}
	if err := m.setMerges(j.Merges); err != nil {
		return nil, err
	}
	m.plain = m.prefix == "" && m.suffix == ""
	m.setByteIDs()
	return m, nil
}

// setMerges reads the merges into the merge table, keyed by the pair's ids.
func (m *bpeModel) setMerges(raw json.RawMessage) error {
	pairs, err := parseMerges(raw)
	if err != nil {
		return err
	}
	m.merges = make(map[uint64]bpeMerge, len(pairs))
	for rank, p := range pairs {
		a, okA := m.vocab[p[0]]
		b, okB := m.vocab[p[1]]
		// The merged token drops the right part's prefix by length, without checking that it
		// is there, as HF does.
		merged, okM := int64(0), false
		if len(m.prefix) <= len(p[1]) {
			merged, okM = m.vocab[p[0]+p[1][len(m.prefix):]]
		}
		if !okA || !okB || !okM {
			return fmt.Errorf("tokenizer: BPE merge %d names a token missing from the vocab", rank+1)
		}
		// A pair listed twice keeps its later rank, as HF's map does.
		m.merges[uint64(a)<<32|uint64(b)] = bpeMerge{rank: uint32(rank), id: uint32(merged)}
	}
	return nil
}

// setByteIDs looks up once the ids the encoder needs per byte: its byte-level spelling, the
// ASCII character itself and its <0xXX> fallback token (-1 where the vocab lacks one).
func (m *bpeModel) setByteIDs() {
	for b := range 256 {
		m.byteID[b] = -1
		if id, ok := m.vocab[string(byteChar[b])]; ok {
			m.byteID[b] = id
		}
		if b < 128 {
			m.asciiID[b] = -1
			if id, ok := m.vocab[string(rune(b))]; ok {
				m.asciiID[b] = id
			}
		}
		m.fallbackID[b] = -1
		if id, ok := m.vocab[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.fallbackID[b] = id
		}
	}
}

// parseMerges reads merges in either form HF writes: "a b" strings (older files) or [a, b]
// pairs.
func parseMerges(raw json.RawMessage) ([][2]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var pairs [][2]string
	if err := json.Unmarshal(raw, &pairs); err == nil {
		return pairs, nil
	}
	pairs = nil // a failed Unmarshal leaves what it could not read as empty pairs
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, errors.New("tokenizer: BPE merges must be \"a b\" strings or [a, b] pairs")
	}
	for _, line := range lines {
		if strings.HasPrefix(line, "#version") {
			continue
		}
		a, b, ok := strings.Cut(line, " ")
		if !ok || strings.Contains(b, " ") {
			return nil, fmt.Errorf("tokenizer: BPE merge %d is not two tokens separated by one space", len(pairs)+1)
		}
		pairs = append(pairs, [2]string{a, b})
	}
	return pairs, nil
}

// longWord is the symbol count from which merges run on a heap: below it a scan for the
// best pair is cheaper; above it the scan's quadratic cost would let one long word without
// spaces stall an encode.
const longWord = 48

// encodeWord appends the BPE tokens of one pre-tokenized word. Offsets follow HF exactly,
// including its quirk with unk_token null: a dropped character's bytes are not counted, so
// the offsets of later tokens in the word fall short by that much.
func (m *bpeModel) encodeWord(enc *tokens, s *scratch, chars []nchar, word int) {
	if len(chars) == 0 {
		return
	}
	if !m.byteLevel {
		m.encodeChars(enc, s, chars, word)
		return
	}
	w, at := s.word[:0], s.mappedAt[:0]
	for i, c := range chars {
		n := len(w)
		if c.r < utf8.RuneSelf {
			w = append(w, byte(c.r))
		} else {
			w = utf8.AppendRune(w, c.r)
		}
		for _, b := range w[n:] {
			at = append(at, int32(i))
			if mappedLen(b) == 2 {
				at = append(at, int32(i))
			}
		}
	}
	s.word, s.mappedAt = w, at

	if m.ignoreMerges {
		sp := s.spelled[:0]
		for _, b := range w {
			sp = utf8.AppendRune(sp, byteChar[b])
		}
		s.spelled = sp
		if id, ok := m.vocab[string(sp)]; ok {
			enc.add(id, chars[0].start, chars[len(chars)-1].end, word, false)
			return
		}
	}

	m.mergeAndEmit(enc, s, m.initialSymbols(s, w), chars, at, word)
}

// mergeAndEmit applies the merges to a word's initial symbols and appends the tokens; at
// maps each byte position the symbols count in to the index of its character in chars.
func (m *bpeModel) mergeAndEmit(enc *tokens, s *scratch, syms []bpeSym, chars []nchar, at []int32, word int) {
	if len(syms) > longWord {
		syms = m.mergeHeap(s, syms)
	} else {
		syms = m.mergeScan(syms)
	}
	s.syms = syms
	for _, sym := range syms {
		if sym.end <= sym.start {
			continue // removed by the heap
		}
		enc.add(int64(sym.id), chars[at[sym.start]].start, chars[at[sym.end-1]].end, word, false)
	}
}

// encodeChars is encodeWord for BPE without ByteLevel: the word is its normalized UTF-8 and
// a symbol starts as one character. A character missing from the vocab becomes, with
// byte_fallback, one <0xXX> token per byte (each spanning the character), else an unk
// symbol as in initialSymbols. HF leaves an unk pending across byte-fallback characters
// and adds it after them; that order is kept.
func (m *bpeModel) encodeChars(enc *tokens, s *scratch, chars []nchar, word int) {
	w, at := spellUTF8(s.word[:0], s.mappedAt[:0], chars)
	s.word, s.mappedAt = w, at
	if m.ignoreMerges {
		if id, ok := m.vocab[string(w)]; ok {
			enc.add(id, chars[0].start, chars[len(chars)-1].end, word, false)
			return
		}
	}
	syms := s.syms[:0]
	unk, unkStart, unkEnd := false, int32(0), int32(0)
	// HF places each symbol right after the previous one (Word::add), so a character
	// dropped for want of an unk token shifts every later symbol left by its bytes; drop
	// keeps that shift, which the mapping back to characters then reads as HF does.
	drop := int32(0)
	for pos := 0; pos < len(w); {
		_, size := utf8.DecodeRune(w[pos:])
		end := pos + size
		if m.plain && size == 1 && m.asciiID[w[pos]] >= 0 {
			// The common case without a map lookup; anything else takes the path below.
			if unk {
				syms = append(syms, bpeSym{id: uint32(m.unkID), start: unkStart, end: unkEnd})
				unk = false
			}
			syms = append(syms, bpeSym{id: uint32(m.asciiID[w[pos]]), start: int32(pos) - drop, end: int32(end) - drop})
			pos = end
			continue
		}
		key := s.key[:0]
		if pos > 0 {
			key = append(key, m.prefix...)
		}
		key = append(key, w[pos:end]...)
		if end == len(w) {
			key = append(key, m.suffix...)
		}
		s.key = key
		if id, ok := m.vocab[string(key)]; ok {
			if unk {
				syms = append(syms, bpeSym{id: uint32(m.unkID), start: unkStart, end: unkEnd})
				unk = false
			}
			syms = append(syms, bpeSym{id: uint32(id), start: int32(pos) - drop, end: int32(end) - drop})
			pos = end
			continue
		}
		if m.byteFallback && m.fallbackKnown(key) {
			for k, b := range key {
				// HF gives each byte token one byte of the word; all of them lie inside the
				// character, so each maps back to its whole span.
				p := min(int32(pos+k), int32(end-1)) - drop
				syms = append(syms, bpeSym{id: uint32(m.fallbackID[b]), start: p, end: p + 1})
			}
			pos = end
			continue
		}
		if m.unkID >= 0 {
			switch {
			case unk && m.fuse:
				unkEnd = int32(end) - drop
			case unk:
				syms = append(syms, bpeSym{id: uint32(m.unkID), start: unkStart, end: unkEnd})
				unkStart, unkEnd = int32(pos)-drop, int32(end)-drop
			default:
				unk, unkStart, unkEnd = true, int32(pos)-drop, int32(end)-drop
			}
		} else {
			drop += int32(size)
		}
		pos = end
	}
	if unk {
		syms = append(syms, bpeSym{id: uint32(m.unkID), start: unkStart, end: unkEnd})
	}
	m.mergeAndEmit(enc, s, syms, chars, at, word)
}

func (m *bpeModel) fallbackKnown(b []byte) bool {
	for _, c := range b {
		if m.fallbackID[c] < 0 {
			return false
		}
	}
	return true
}

// initialSymbols spells each byte as a symbol, handling bytes missing from the vocab the way
// HF's merge_word does: an unk symbol each (or one for a run, when fused), or nothing.
func (m *bpeModel) initialSymbols(s *scratch, w []byte) []bpeSym {
	syms := s.syms[:0]
	pos := int32(0)
	unk, unkStart := false, int32(0)
	for i, b := range w {
		id := int64(-1)
		if m.plain {
			id = m.byteID[b]
		} else {
			key := s.key[:0]
			if i > 0 {
				key = append(key, m.prefix...)
			}
			key = utf8.AppendRune(key, byteChar[b])
			if i == len(w)-1 {
				key = append(key, m.suffix...)
			}
			s.key = key
			if v, ok := m.vocab[string(key)]; ok {
				id = v
			}
		}
		l := mappedLen(b)
		switch {
		case id >= 0:
			if unk {
				syms = append(syms, bpeSym{id: uint32(m.unkID), start: unkStart, end: pos})
				unk = false
			}
			syms = append(syms, bpeSym{id: uint32(id), start: pos, end: pos + l})
			pos += l
		case m.unkID >= 0:
			if unk && !m.fuse {
				syms = append(syms, bpeSym{id: uint32(m.unkID), start: unkStart, end: pos})
				unk = false
			}
			if !unk {
				unk, unkStart = true, pos
			}
			pos += l
		}
	}
	if unk {
		syms = append(syms, bpeSym{id: uint32(m.unkID), start: unkStart, end: pos})
	}
	return syms
}

func (m *bpeModel) pairMerge(left, right uint32) (uint32, uint32) {
	if mg, ok := m.merges[uint64(left)<<32|uint64(right)]; ok {
		return mg.rank, mg.id
	}
	return noMerge, 0
}

// mergeScan merges a short word: each round finds the best pair by a scan. The merge each
// symbol would make with its right neighbour is kept on the symbol, so a round costs one
// pass over the ranks and two map lookups.
func (m *bpeModel) mergeScan(syms []bpeSym) []bpeSym {
	for i := range syms {
		syms[i].rank = noMerge
		if i+1 < len(syms) {
			syms[i].rank, syms[i].newID = m.pairMerge(syms[i].id, syms[i+1].id)
		}
	}
	for {
		best, bestRank := -1, uint32(noMerge)
		for i := 0; i+1 < len(syms); i++ {
			if syms[i].rank < bestRank {
				best, bestRank = i, syms[i].rank
			}
		}
		if best < 0 {
			return syms
		}
		syms[best].id = syms[best].newID
		syms[best].end = syms[best+1].end
		syms = append(syms[:best+1], syms[best+2:]...)
		syms[best].rank = noMerge
		if best+1 < len(syms) {
			syms[best].rank, syms[best].newID = m.pairMerge(syms[best].id, syms[best+1].id)
		}
		if best > 0 {
			syms[best-1].rank, syms[best-1].newID = m.pairMerge(syms[best-1].id, syms[best].id)
		}
	}
}

// heapEntry is a candidate merge of the symbol at pos with its right neighbour.
type heapEntry struct {
	rank uint32
	pos  int32
	id   uint32
}

func (a heapEntry) less(b heapEntry) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos)
}

// mergeHeap merges a long word the way HF's Word::merge_all does: candidates in a min-heap
// by (rank, position), symbols in a linked list, stale candidates skipped when popped. The
// result is the same as mergeScan's; merged-away symbols are left with end <= start.
func (m *bpeModel) mergeHeap(s *scratch, syms []bpeSym) []bpeSym {
	h := s.heap[:0]
	for i := range syms {
		syms[i].prev, syms[i].next = int32(i-1), int32(i+1)
		if i+1 < len(syms) {
			if rank, id := m.pairMerge(syms[i].id, syms[i+1].id); rank != noMerge {
				h = heapPush(h, heapEntry{rank: rank, pos: int32(i), id: id})
			}
		}
	}
	syms[len(syms)-1].next = -1
	for len(h) > 0 {
		var top heapEntry
		top, h = heapPop(h)
		cur := &syms[top.pos]
		if cur.end <= cur.start || cur.next < 0 {
			continue
		}
		right := syms[cur.next]
		// A candidate is stale when either symbol has changed since it was pushed; the pair
		// it names then no longer merges into the same token.
		if rank, id := m.pairMerge(cur.id, right.id); rank == noMerge || id != top.id {
			continue
		}
		syms[cur.next].end = syms[cur.next].start // removed
		cur.id, cur.end, cur.next = top.id, right.end, right.next
		if right.next >= 0 {
			syms[right.next].prev = top.pos
		}
		if cur.prev >= 0 {
			if rank, id := m.pairMerge(syms[cur.prev].id, cur.id); rank != noMerge {
				h = heapPush(h, heapEntry{rank: rank, pos: cur.prev, id: id})
			}
		}
		if cur.next >= 0 {
			if rank, id := m.pairMerge(cur.id, syms[cur.next].id); rank != noMerge {
				h = heapPush(h, heapEntry{rank: rank, pos: top.pos, id: id})
			}
		}
	}
	s.heap = h
	return syms
}

func heapPush(h []heapEntry, e heapEntry) []heapEntry {
	h = append(h, e)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func heapPop(h []heapEntry) (heapEntry, []heapEntry) {
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, small := 2*i+1, 2*i+2, i
		if l < len(h) && h[l].less(h[small]) {
			small = l
		}
		if r < len(h) && h[r].less(h[small]) {
			small = r
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	return top, h
}
