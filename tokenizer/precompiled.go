package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// precompiled is SentencePiece's normalization rules as tokenizer.json's Precompiled
// normalizer carries them (precompiled_charsmap): a little-endian u32 giving the size in
// bytes of a darts-clone double-array trie, the trie's u32 units, then a blob of
// NUL-terminated replacement strings that the trie's leaf values index into.
type precompiled struct {
	units []uint32
	blob  string
	ascii [128]asciiRule // the rule of each ASCII character alone, looked up once at load
}

type asciiRule struct {
	has bool
	to  string
}

// parsePrecompiledNormalizer reads HF's Precompiled normalizer, SentencePiece's rules.
func parsePrecompiledNormalizer(raw json.RawMessage) (normalizer, error) {
	var p struct {
		Charsmap *string `json:"precompiled_charsmap"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Charsmap == nil {
		return nil, errors.New("tokenizer: invalid Precompiled normalizer: precompiled_charsmap must be a string")
	}
	pre, err := parsePrecompiled(*p.Charsmap)
	if err != nil {
		return nil, err
	}
	return normalizer{{step: stepPrecompiled, pre: pre}}, nil
}

func parsePrecompiled(b64 string) (*precompiled, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, errors.New("tokenizer: Precompiled precompiled_charsmap is not base64")
	}
	if len(raw) < 4 {
		// HF cannot parse it either (an empty charsmap makes its loader panic).
		return nil, errors.New("tokenizer: Precompiled precompiled_charsmap is truncated")
	}
	size := int(binary.LittleEndian.Uint32(raw))
	if size%4 != 0 || size == 0 || 4+size > len(raw) {
		return nil, errors.New("tokenizer: Precompiled precompiled_charsmap has an invalid trie size")
	}
	p := &precompiled{units: make([]uint32, size/4)}
	for i := range p.units {
		p.units[i] = binary.LittleEndian.Uint32(raw[4+4*i:])
	}
	p.blob = string(raw[4+size:])
	if !utf8.ValidString(p.blob) {
		return nil, errors.New("tokenizer: Precompiled replacement strings are not valid UTF-8")
	}
	graphemeBMP() // built now rather than inside the first Encode
	for c := range 128 {
		to, ok := p.transform([]byte{byte(c)})
		p.ascii[c] = asciiRule{has: ok, to: to}
	}
	return p, nil
}

// transform is spm_precompiled's transform: the replacement of the SHORTEST prefix of key
// that has a rule, which HF then substitutes for all of key. A corrupt trie reads as having
// no rule rather than panicking.
func (p *precompiled) transform(key []byte) (string, bool) {
	u := p.units
	if len(u) == 0 {
		return "", false
	}
	pos := unitOffset(u[0])
	for _, c := range key {
		if c == 0 {
			break
		}
		pos ^= uint32(c)
		if int(pos) >= len(u) {
			return "", false
		}
		unit := u[pos]
		if unit&(1<<31|0xFF) != uint32(c) {
			return "", false
		}
		pos ^= unitOffset(unit)
		if unit>>8&1 == 1 {
			if int(pos) >= len(u) {
				return "", false
			}
			at := int(u[pos] & (1<<31 - 1))
			if at > len(p.blob) {
				return "", false
			}
			end := strings.IndexByte(p.blob[at:], 0)
			if end < 0 {
				return p.blob[at:], true
			}
			return p.blob[at : at+end], true
		}
	}
	return "", false
}

func unitOffset(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }

// pchange is one output character of the Precompiled step with HF's change count: 0
// replaces the next input character, 1 is inserted, -n replaces the next input character and
// removes the n after it.
type pchange struct {
	r rune
	n int
}

// precompiledStep runs the charsmap the way HF's Precompiled normalizer does, quirks
// included: text is cut into extended grapheme clusters; a cluster shorter than 6 bytes
// whose start has a rule is replaced whole by that rule's output (so "Ａ" plus an accent
// becomes just "A"), any other cluster is rewritten character by character. A character
// that a rule deletes takes its removal from the previous output character; with none
// before it the removal is lost and the alignments of the characters after it shift.
func (p *precompiled) apply(buf *normBuf, in, out []nchar, base int32) []nchar {
	ch := buf.pchanges[:0]
	modified := false
	var key [4 * maxCluster]byte
	for i := 0; i < len(in); {
		j := clusterEnd(in, i)
		size := 0
		for _, c := range in[i:j] {
			size += utf8.RuneLen(c.r)
		}
		if j-i == 1 && in[i].r < utf8.RuneSelf {
			if rule := p.ascii[in[i].r]; rule.has {
				modified = true
				ch = replaceChanges(ch, 1, rule.to)
			} else {
				ch = append(ch, pchange{r: in[i].r})
			}
			i = j
			continue
		}
		if size < 6 {
			k := key[:0]
			for _, c := range in[i:j] {
				k = utf8.AppendRune(k, c.r)
			}
			if to, ok := p.transform(k); ok {
				modified = true
				ch = replaceChanges(ch, j-i, to)
				i = j
				continue
			}
		}
		for _, c := range in[i:j] {
			k := utf8.AppendRune(key[:0], c.r)
			if to, ok := p.transform(k); ok {
				modified = true
				ch = replaceChanges(ch, 1, to)
			} else {
				ch = append(ch, pchange{r: c.r})
			}
		}
		i = j
	}
	buf.pchanges = ch
	if !modified {
		return append(out, in...)
	}
	next := 0
	for _, c := range ch {
		switch {
		case c.n > 0:
			n := nchar{r: c.r, start: base, end: base}
			if next > 0 {
				n.start, n.end = in[next-1].start, in[next-1].end
			}
			out = append(out, n)
		case next < len(in):
			out = append(out, nchar{r: c.r, start: in[next].start, end: in[next].end})
			next += 1 - c.n
		}
	}
	return out
}

// replaceChanges appends the changes of oldCount characters becoming to, as HF's
// Precompiled does: characters of to replace, the surplus ones are marked inserted, and a
// shortfall is charged to the last change appended so far.
func replaceChanges(ch []pchange, oldCount int, to string) []pchange {
	at := len(ch)
	for _, r := range to {
		ch = append(ch, pchange{r: r})
	}
	diff := len(ch) - at - oldCount
	switch {
	case diff > 0:
		for k := len(ch) - diff; k < len(ch); k++ {
			ch[k].n = 1
		}
	case diff < 0 && len(ch) > 0:
		ch[len(ch)-1].n += diff
	}
	return ch
}

// maxCluster bounds the clusters handed to transform; longer ones are at least 6 bytes and
// so never looked up whole.
const maxCluster = 6

// Grapheme cluster break classes (UAX #29). Only what decides whether a cluster shorter
// than 6 bytes forms matters to the Precompiled step; Hangul syllable sequences, emoji ZWJ
// sequences, regional indicator pairs and Indic conjuncts only ever join into clusters of
// 6 bytes or more, which are rewritten character by character either way, so the rules
// for them (GB6-GB8, GB9c, GB11-GB13) are left out.
const (
	gbOther = iota
	gbCR
	gbLF
	gbControl
	gbExtend // Extend, ZWJ and SpacingMark: all attach to what precedes them
	gbPrepend
)

func clusterEnd(in []nchar, i int) int {
	prev := graphemeClass(in[i].r)
	j := i + 1
	for ; j < len(in); j++ {
		next := graphemeClass(in[j].r)
		if graphemeBreak(prev, next) {
			break
		}
		prev = next
	}
	return j
}

func graphemeBreak(prev, next int) bool {
	switch {
	case prev == gbCR && next == gbLF:
		return false
	case prev == gbCR || prev == gbLF || prev == gbControl:
		return true
	case next == gbCR || next == gbLF || next == gbControl:
		return true
	case next == gbExtend, prev == gbPrepend:
		return false
	}
	return true
}

// graphemeBMP caches graphemeClassSlow for the Basic Multilingual Plane, built on first use
// by a Precompiled normalizer (the Unicode table lookups dominate normalizing CJK text).
var graphemeBMP = sync.OnceValue(func() *[0x10000]uint8 {
	var t [0x10000]uint8
	for r := range rune(0x10000) {
		t[r] = uint8(graphemeClassSlow(r))
	}
	return &t
})

func graphemeClass(r rune) int {
	if r < 0x10000 {
		return int(graphemeBMP()[r])
	}
	return graphemeClassSlow(r)
}

func graphemeClassSlow(r rune) int {
	switch {
	case r == '\r':
		return gbCR
	case r == '\n':
		return gbLF
	case r < 0x20 || r == 0x7F:
		return gbControl
	case r < 0x80:
		return gbOther
	case r < 0x300:
		// Latin-1 and the Latin extensions hold no marks: only the C1 controls and the soft
		// hyphen (a format character) are special.
		if r <= 0x9F || r == 0xAD {
			return gbControl
		}
		return gbOther
	case r == 0x200C || r == 0x200D || (r >= 0x1F3FB && r <= 0x1F3FF):
		return gbExtend
	case isPrepend(r):
		return gbPrepend
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Other_Grapheme_Extend):
		return gbExtend
	case unicode.Is(unicode.Mc, r):
		if isNotSpacingMark(r) {
			return gbOther
		}
		return gbExtend
	case r == 0x0E33 || r == 0x0EB3:
		return gbExtend
	case unicode.In(r, unicode.Cc, unicode.Zl, unicode.Zp, unicode.Cf):
		return gbControl
	case isUnassignedIgnorable(r):
		return gbControl
	}
	return gbOther
}

// isPrepend is Grapheme_Cluster_Break=Prepend: the prepended concatenation marks and the
// consonants written before a repha.
func isPrepend(r rune) bool {
	switch {
	case r >= 0x0600 && r <= 0x0605, r == 0x06DD, r == 0x070F, r == 0x0890, r == 0x0891, r == 0x08E2,
		r == 0x0D4E, r == 0x110BD, r == 0x110CD, r == 0x111C2, r == 0x111C3, r == 0x1193F, r == 0x11941,
		r == 0x11A3A, r >= 0x11A84 && r <= 0x11A89, r == 0x11D46, r == 0x11F02:
		return true
	}
	return false
}

// isNotSpacingMark lists the spacing combining marks UAX #29 keeps out of SpacingMark.
func isNotSpacingMark(r rune) bool {
	switch {
	case r == 0x102B, r == 0x102C, r == 0x1038, r >= 0x1062 && r <= 0x1064, r >= 0x1067 && r <= 0x106D,
		r == 0x1083, r >= 0x1087 && r <= 0x108C, r == 0x108F, r >= 0x109A && r <= 0x109C, r == 0x1A61,
		r == 0x1A63, r == 0x1A64, r == 0xAA7B, r == 0xAA7D, r == 0x11720, r == 0x11721:
		return true
	}
	return false
}

// isUnassignedIgnorable is the unassigned part of Default_Ignorable_Code_Point, which
// UAX #29 counts as Control.
func isUnassignedIgnorable(r rune) bool {
	switch {
	case r == 0x2065, r >= 0xFFF0 && r <= 0xFFF8, r >= 0xE0000 && r <= 0xE0FFF:
		return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
	}
	return false
}
