package admission

import (
	"errors"

	"github.com/sluice-serving/sluice/batcher"
)

// Priority is a request's class; it is the batcher's type, so a parsed header goes straight
// to batcher.WithPriority or SubmitWithPriority.
type Priority = batcher.Priority

// The two classes.
const (
	Interactive = batcher.Interactive
	Bulk        = batcher.Bulk
)

// PriorityHeader is the request header that carries the class, named as OpenMed names it.
const PriorityHeader = "x-openmed-priority"

// ErrInvalidPriority means the priority header held a value that is neither class nor an
// alias of one. It does not repeat the value: the HTTP layer answers 400 bad_request.
var ErrInvalidPriority = errors.New("admission: x-openmed-priority must be interactive or bulk (aliases: high, latency, realtime, real-time, foreground, normal / batch, background, low)")

// maxPriorityLen is the longest accepted value ("interactive", "background"), with room for
// surrounding spaces, which are trimmed. Longer values are refused without being copied.
const maxPriorityLen = 32

// ParsePriority reads the priority header the way OpenMed does: surrounding white space is
// ignored, case does not matter and "_" counts as "-". A missing or empty value means
// Interactive. It does not allocate.
func ParsePriority(header string) (Priority, error) {
	start, end := 0, len(header)
	for start < end && isSpace(header[start]) {
		start++
	}
	for end > start && isSpace(header[end-1]) {
		end--
	}
	if end-start > maxPriorityLen {
		return Interactive, ErrInvalidPriority
	}
	var buf [maxPriorityLen]byte
	n := 0
	for i := start; i < end; i++ {
		c := header[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == '_':
			c = '-'
		}
		buf[n] = c
		n++
	}
	switch string(buf[:n]) {
	case "", "interactive", "high", "latency", "realtime", "real-time", "foreground", "normal":
		return Interactive, nil
	case "bulk", "batch", "background", "low":
		return Bulk, nil
	}
	return Interactive, ErrInvalidPriority
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
