package admission

import "errors"

// Priority is a request's class. Each class has its own queue and hard capacity in the Queue
// a Gate guards, and the Queue's dispatch weights decide how often each class is served, so
// interactive traffic overtakes bulk without ever starving it.
type Priority uint8

const (
	// Interactive is the default class: a person waits on the answer.
	Interactive Priority = iota
	// Bulk is for work nobody watches (backfills, batch jobs).
	Bulk
	// NumPriorities is how many classes exist; arrays indexed by Priority have this length.
	NumPriorities = 2
)

// Priorities lists every class in index order, for label sets and loops.
var Priorities = [NumPriorities]Priority{Interactive, Bulk}

// String returns the class's name as used in headers, error bodies and metric labels.
func (p Priority) String() string {
	switch p {
	case Interactive:
		return "interactive"
	case Bulk:
		return "bulk"
	}
	return "unknown"
}

// Valid reports whether p is one of the defined classes.
func (p Priority) Valid() bool { return p < NumPriorities }

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
