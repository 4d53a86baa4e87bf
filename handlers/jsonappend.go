package handlers

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// chunkHead is an OpenAI stream chunk's fields before its choices, encoded once per answer: a
// chunk per token per stream is the body Sluice writes most often, and reflecting over the
// same head for every token was a share of a decode step at 16 streams. The chunks it writes
// are byte for byte what encoding/json writes for the same values (TestChunksAreEncodingJSONs).
type chunkHead struct {
	prefix []byte // {"id":…,"system_fingerprint":…,"choices":
	usage  bool   // the chunk ends with "usage":null
}

// newChunkHead encodes head, a chunk whose Choices are nil and Usage absent; ok is false when
// its encoding does not end with the choices (a shape this writer does not know), and the
// caller encodes its chunks by reflection.
func newChunkHead(head any, usage bool) (chunkHead, bool) {
	data, err := marshal(head)
	const choices = `"choices":null}`
	if err != nil || !bytes.HasSuffix(data, []byte(choices)) {
		return chunkHead{}, false
	}
	return chunkHead{prefix: data[:len(data)-len("null}")], usage: usage}, true
}

// lazyChunkHead is an answer's chunkHead, encoded at its first chunk; nil from get means the
// answer's chunks are encoded by reflection.
type lazyChunkHead struct {
	head  chunkHead
	tried bool
	ok    bool
}

func (l *lazyChunkHead) get(head any, usage bool) *chunkHead {
	if !l.tried {
		l.tried = true
		l.head, l.ok = newChunkHead(head, usage)
	}
	if !l.ok {
		return nil
	}
	return &l.head
}

// open starts a chunk whose choices follow, with room for about extra more bytes.
func (h *chunkHead) open(extra int) []byte {
	b := make([]byte, 0, len(h.prefix)+extra+64)
	return append(b, h.prefix...)
}

// close ends a chunk after its choices.
func (h *chunkHead) close(b []byte) []byte {
	if h.usage {
		return append(b, `,"usage":null}`...)
	}
	return append(b, '}')
}

// appendFinish writes a choice's finish reason, null while it goes on.
func appendFinish(b []byte, finish *string) []byte {
	if finish == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *finish)
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

// appendJSONString writes s as a JSON string as encoding/json does without HTML escaping
// (AppendJSONEscaped, between quotes).
func appendJSONString(b []byte, s string) []byte {
	return append(AppendJSONEscaped(append(b, '"'), s), '"')
}

// AppendJSONEscaped writes s escaped as inside a JSON string, as encoding/json escapes it
// without HTML escaping: quotes, backslashes and control characters escaped (the short forms
// where JSON has them), invalid UTF-8 as U+FFFD, and U+2028 and U+2029 escaped for
// JavaScript's sake. A text cut at a character's start escapes piece by piece as it does whole.
func AppendJSONEscaped[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
