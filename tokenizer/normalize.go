package tokenizer

import (
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// nchar is one character of the normalized text together with the byte range of the
// original text it stands for. HF keeps such an alignment for every normalized byte; one
// per character carries the same information because all bytes of a character share it.
type nchar struct {
	r          rune
	start, end int32
}

// step is one normalization operation. The ops mirror HF's NormalizedString methods; each
// one rebuilds the buffer and assigns alignments exactly the way HF's transform does.
type step uint8

const (
	stepClean       step = iota + 1 // BertNormalizer clean_text
	stepChinese                     // BertNormalizer handle_chinese_chars
	stepNFD                         // canonical decomposition + canonical ordering
	stepMarks                       // drop marks (StripAccents normalizer)
	stepBertMarks                   // drop nonspacing marks (BertNormalizer strip_accents)
	stepLower                       // per-character lowercase
	stepNFC                         // canonical decomposition, then canonical composition
	stepNFKD                        // compatibility decomposition + canonical ordering
	stepNFKC                        // compatibility decomposition, then canonical composition
	stepPrecompiled                 // SentencePiece's charsmap (Precompiled normalizer)
	stepReplace                     // Replace normalizer
	stepStrip                       // Strip normalizer
	stepPrepend                     // Prepend normalizer
)

// normOp is one step with the data the parameterized steps need.
type normOp struct {
	step        step
	pre         *precompiled // stepPrecompiled
	rep         *replacer    // stepReplace
	left, right bool         // stepStrip
	prepend     []rune       // stepPrepend
}

// normalizer is the ordered list of steps of the tokenizer's normalizer (empty: none).
type normalizer []normOp

func ops(steps ...step) normalizer {
	n := make(normalizer, len(steps))
	for i, s := range steps {
		n[i] = normOp{step: s}
	}
	return n
}

// parseNormalizer reads the normalizer section, or one normalizer of a Sequence.
func parseNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	typ, err := componentType(raw, "normalizer")
	if err != nil {
		return nil, err
	}
	parse := normalizerParser(typ)
	if parse == nil {
		return nil, unsupported("normalizer", typ, supportedNormalizers)
	}
	return parse(raw)
}

// normalizerParser returns the parse of a normalizer type, or nil when it is not supported.
func normalizerParser(typ string) func(json.RawMessage) (normalizer, error) {
	switch typ {
	case "BertNormalizer":
		return parseBertNormalizer
	case "Sequence":
		return parseSequenceNormalizer
	case "NFD":
		return fixedNormalizer(stepNFD)
	case "NFC":
		return fixedNormalizer(stepNFC)
	case "NFKD":
		return fixedNormalizer(stepNFKD)
	case "NFKC":
		return fixedNormalizer(stepNFKC)
	case "Lowercase":
		return fixedNormalizer(stepLower)
	case "StripAccents":
		return fixedNormalizer(stepMarks)
	case "Precompiled":
		return parsePrecompiledNormalizer
	case "Replace":
		return parseReplaceNormalizer
	case "Strip":
		return parseStripNormalizer
	case "Prepend":
		return parsePrependNormalizer
	}
	return nil
}

// fixedNormalizer is the parse of a normalizer without settings: its fields are not read.
func fixedNormalizer(s step) func(json.RawMessage) (normalizer, error) {
	return func(json.RawMessage) (normalizer, error) { return ops(s), nil }
}

type bertNormalizerJSON struct {
	CleanText          *bool `json:"clean_text"`
	HandleChineseChars *bool `json:"handle_chinese_chars"`
	StripAccents       *bool `json:"strip_accents"`
	Lowercase          *bool `json:"lowercase"`
}

// parseBertNormalizer reads HF's BertNormalizer as the steps it runs.
func parseBertNormalizer(raw json.RawMessage) (normalizer, error) {
	var b bertNormalizerJSON
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid BertNormalizer: %w", err)
	}
	def := func(p *bool, d bool) bool {
		if p == nil {
			return d
		}
		return *p
	}
	lowercase := def(b.Lowercase, true)
	// HF: strip_accents unset (null) means "do whatever lowercase does".
	strip := def(b.StripAccents, lowercase)
	var n normalizer
	if def(b.CleanText, true) {
		n = append(n, normOp{step: stepClean})
	}
	if def(b.HandleChineseChars, true) {
		n = append(n, normOp{step: stepChinese})
	}
	if strip {
		n = append(n, ops(stepNFD, stepBertMarks)...)
	}
	if lowercase {
		n = append(n, normOp{step: stepLower})
	}
	return n, nil
}

type sequenceNormalizerJSON struct {
	Normalizers []json.RawMessage `json:"normalizers"`
}

// parseSequenceNormalizer reads HF's Sequence normalizer: its normalizers' steps in order,
// null ones skipped.
func parseSequenceNormalizer(raw json.RawMessage) (normalizer, error) {
	var s sequenceNormalizerJSON
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid Sequence normalizer: %w", err)
	}
	var n normalizer
	for _, sub := range s.Normalizers {
		if isNull(sub) {
			continue
		}
		part, err := parseNormalizer(sub)
		if err != nil {
			return nil, err
		}
		n = append(n, part...)
	}
	return n, nil
}

// asciiSafe reports whether runASCII may replace run: the SentencePiece steps rewrite ASCII
// too (controls, runs of spaces, the prepended marker).
func (n normalizer) asciiSafe() bool {
	for _, o := range n {
		if o.step >= stepPrecompiled {
			return false
		}
	}
	return true
}

// normBuf holds the two buffers a normalization ping-pongs between and the scratch the
// NFD step needs; it lives in the per-call scratch so normalizing allocates nothing once
// warmed up.
type normBuf struct {
	a, b     []nchar
	changes  []change
	runes    []rune
	composed []composedChar // NFC only
	pchanges []pchange      // Precompiled only
	bytes    []byte         // Replace only: the text being searched
	at       []int32        // Replace only: byte index -> char index
}

// change is one output character of a transform: how it relates to the input decides
// which original range it gets (see apply).
type change struct {
	r      rune
	insert bool  // a new character, not replacing one of the input
	rank   uint8 // canonical ordering rank, NFD only
}

// run normalizes text (which starts at byte base of the original input) and returns the
// resulting characters; the slice is owned by buf.
func (n normalizer) run(buf *normBuf, text string, base int) []nchar {
	if isASCII(text) && n.asciiSafe() {
		buf.a = n.runASCII(buf.a[:0], text, base)
		return buf.a
	}
	cur := buf.a[:0]
	for i, r := range text {
		size := utf8.RuneLen(r)
		if r == utf8.RuneError {
			// Invalid UTF-8 reads as U+FFFD one byte at a time (HF never sees invalid text).
			_, size = utf8.DecodeRuneInString(text[i:])
		}
		cur = append(cur, nchar{r: r, start: int32(base + i), end: int32(base + i + size)})
	}
	buf.a = cur
	other := buf.b[:0]
	for _, o := range n {
		other = o.apply(buf, cur, other[:0], int32(base))
		cur, other = other, cur
	}
	buf.a, buf.b = cur, other
	return cur
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// runASCII is run for pure-ASCII text in one pass: on ASCII only clean_text and lowercase
// change anything (no ASCII character is CJK, decomposes or is a mark), and the two
// commute, so the order of the steps does not matter.
func (n normalizer) runASCII(out []nchar, text string, base int) []nchar {
	var clean, lowercase bool
	for _, o := range n {
		clean = clean || o.step == stepClean
		lowercase = lowercase || o.step == stepLower
	}
	for i := 0; i < len(text); i++ {
		r := rune(text[i])
		if clean {
			if asciiClass[r]&asciiRemoved != 0 {
				continue
			}
			if asciiClass[r]&asciiCleanSpace != 0 {
				r = ' '
			}
		}
		if lowercase && 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		out = append(out, nchar{r: r, start: int32(base + i), end: int32(base + i + 1)})
	}
	return out
}

// apply runs one step from in to out. base is where the normalized piece starts in the
// original text: HF aligns a character inserted before anything else to (0, 0) of the
// piece, i.e. to an empty range at its start.
func (s step) apply(buf *normBuf, in, out []nchar, base int32) []nchar {
	switch s {
	case stepClean:
		for _, c := range in {
			if isRemoved(c.r) {
				continue
			}
			if isCleanSpace(c.r) {
				c.r = ' '
			}
			out = append(out, c)
		}
	case stepChinese:
		for i, c := range in {
			if !isChinese(c.r) {
				out = append(out, c)
				continue
			}
			before := nchar{r: ' ', start: base, end: base}
			if i > 0 {
				before.start, before.end = in[i-1].start, in[i-1].end
			}
			out = append(out, before, c, nchar{r: ' ', start: c.start, end: c.end})
		}
	case stepMarks:
		for _, c := range in {
			if !isMark(c.r) {
				out = append(out, c)
			}
		}
	case stepBertMarks:
		for _, c := range in {
			if !isBertMark(c.r) {
				out = append(out, c)
			}
		}
	case stepLower:
		for _, c := range in {
			if c.r < 128 {
				if 'A' <= c.r && c.r <= 'Z' {
					c.r += 'a' - 'A'
				}
				out = append(out, c)
				continue
			}
			buf.runes = lower(buf.runes[:0], c.r)
			for _, r := range buf.runes {
				// Extra characters of a multi-character lowercase are inserted after the
				// first, so they share the alignment of the character they came from.
				out = append(out, nchar{r: r, start: c.start, end: c.end})
			}
		}
	case stepNFD:
		out = nfd(buf, in, out, base)
	case stepNFC:
		out = nfc(buf, in, out, base)
	case stepNFKD:
		if compatStable(in) {
			return append(out, in...)
		}
		out = apply(decomposed(buf, in, true), in, out, base)
	case stepNFKC:
		if compatStable(in) {
			return append(out, in...)
		}
		out = nfcFull(buf, in, out, base, true)
	}
	return out
}

// nfd decomposes and canonically orders in. HF's decomposition iterator tags the first
// character of each decomposition as replacing its source and the rest as inserted, then
// stable-sorts each run of non-starters by combining class, tags and all; the tags, not
// the characters, decide the alignments afterwards. Reproducing that order matters for
// offsets when marks are reordered.
func nfd(buf *normBuf, in, out []nchar, base int32) []nchar {
	simple := true
	for _, c := range in {
		if c.r >= 0xC0 {
			simple = false
			break
		}
	}
	if simple {
		return append(out, in...)
	}
	return apply(decomposed(buf, in, false), in, out, base)
}

// decomposed is the change list of NFD (NFKD with compat) on in: each character's full
// decomposition, its first character tagged as replacing it, then every run of non-starters
// stably sorted by combining class.
func decomposed(buf *normBuf, in []nchar, compat bool) []change {
	ch := buf.changes[:0]
	for _, c := range in {
		if compat {
			buf.runes = decomposeCompat(buf.runes[:0], c.r)
		} else {
			buf.runes = decompose(buf.runes[:0], c.r)
		}
		for k, r := range buf.runes {
			ch = append(ch, change{r: r, insert: k > 0, rank: combiningRank(r)})
		}
	}
	for i := 0; i < len(ch); {
		if ch[i].rank == 0 {
			i++
			continue
		}
		j := i
		for j < len(ch) && ch[j].rank != 0 {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(ch[i:j], func(x, y change) int { return int(x.rank) - int(y.rank) })
		}
		i = j
	}
	buf.changes = ch
	return ch
}

// apply turns a transform's output characters into nchars the way HF's transform_range
// does: a replacing character takes the range of the next input character; an inserted
// one takes the range of the last input character consumed so far (an empty range at the
// start of the piece when none was).
func apply(ch []change, in, out []nchar, base int32) []nchar {
	next := 0
	for _, c := range ch {
		var n nchar
		switch {
		case !c.insert && next < len(in):
			n = nchar{r: c.r, start: in[next].start, end: in[next].end}
			next++
		case next > 0:
			n = nchar{r: c.r, start: in[next-1].start, end: in[next-1].end}
		default:
			n = nchar{r: c.r, start: base, end: base}
		}
		out = append(out, n)
	}
	return out
}

// normalizeString applies the steps to s without tracking alignments; it gives the form
// that normalized added tokens are matched and decoded with.
func (n normalizer) normalizeString(s string) string {
	var buf normBuf
	cs := n.run(&buf, s, 0)
	b := make([]byte, 0, len(s))
	for _, c := range cs {
		b = utf8.AppendRune(b, c.r)
	}
	return string(b)
}
