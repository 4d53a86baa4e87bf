package admission

import (
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// Code is the error code of every refusal's body.
const Code = "backpressure"

// Refusal is how to answer a refused request: 503, code "backpressure", a Retry-After header
// when RetryAfter is not 0, and Details in the error body. Every field is aggregate queue
// state or configuration; nothing in it comes from the request but its class.
type Refusal struct {
	Reason   Reason
	Priority Priority
	Queue    string
	// Depth is the endpoint's depth (waiting in every class + running) when it refused.
	Depth int
	// Capacity is the bound that applies: the class's queue size for ReasonSaturated, the
	// high watermark otherwise.
	Capacity     int
	LowWatermark int
	// MaxWait is the Queue's max queue wait (0: no limit).
	MaxWait time.Duration
	// RetryAfter is the suggested wait, in whole seconds within [1, 60]; 0 means send no
	// Retry-After header (the policy had nothing to say).
	RetryAfter time.Duration
	// RetryAfterSource is the rung of the fallback ladder that produced RetryAfter:
	// SourceDrainRate, SourceStatic, or "" with no header.
	RetryAfterSource string
	// Token is the retry reservation booked for RetryAfter, if any: its value goes in the
	// RetryTokenHeader response header.
	Token RetryToken
}

// Status is the HTTP status of a refusal: the service is saturated, not the client at fault.
func (r Refusal) Status() int { return http.StatusServiceUnavailable }

// Message is the human-readable message of the error body, the same words as OpenMed's.
func (r Refusal) Message() string {
	if r.Priority == Bulk {
		return "bulk inference queue is saturated; retry later"
	}
	return "interactive inference queue is saturated; retry later"
}

// RetryAfterSeconds is RetryAfter in whole seconds; 0 means no header.
func (r Refusal) RetryAfterSeconds() int { return int(r.RetryAfter / time.Second) }

// RetryAfterHeader is the value of the Retry-After header (delta-seconds) and whether to send
// one. It does not allocate.
func (r Refusal) RetryAfterHeader() (string, bool) {
	s := r.RetryAfterSeconds()
	if s <= 0 {
		return "", false
	}
	return strconv.Itoa(s), true // values below 100 come from strconv's table
}

// Details is the error body's "details" object. retry_after_seconds is null when no header
// is sent.
func (r Refusal) Details() map[string]any {
	var retry any
	if s := r.RetryAfterSeconds(); s > 0 {
		retry = float64(s)
	}
	return map[string]any{
		"priority":            r.Priority.String(),
		"queue":               r.Queue,
		"queue_depth":         r.Depth,
		"queue_capacity":      r.Capacity,
		"retry_after_seconds": retry,
		"reason":              string(r.Reason),
		"low_watermark":       r.LowWatermark,
		"max_wait_ms":         r.MaxWait.Milliseconds(),
	}
}

// AppendJSON appends the whole error body of the refusal to dst and returns the extended
// slice: {"error": {"code", "message", "details", "request_id"}}, the same envelope and keys as
// the handlers' other errors. It does not allocate when dst has room, so the HTTP layer can
// answer a refusal without encoding/json.
func (r Refusal) AppendJSON(dst []byte, requestID string) []byte {
	dst = append(dst, `{"error":{"code":"`...)
	dst = append(dst, Code...)
	dst = append(dst, `","message":`...)
	dst = appendJSONString(dst, r.Message())
	dst = append(dst, `,"details":{"priority":`...)
	dst = appendJSONString(dst, r.Priority.String())
	dst = append(dst, `,"queue":`...)
	dst = appendJSONString(dst, r.Queue)
	dst = append(dst, `,"queue_depth":`...)
	dst = strconv.AppendInt(dst, int64(r.Depth), 10)
	dst = append(dst, `,"queue_capacity":`...)
	dst = strconv.AppendInt(dst, int64(r.Capacity), 10)
	dst = append(dst, `,"retry_after_seconds":`...)
	if s := r.RetryAfterSeconds(); s > 0 {
		dst = strconv.AppendInt(dst, int64(s), 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"reason":`...)
	dst = appendJSONString(dst, string(r.Reason))
	dst = append(dst, `,"low_watermark":`...)
	dst = strconv.AppendInt(dst, int64(r.LowWatermark), 10)
	dst = append(dst, `,"max_wait_ms":`...)
	dst = strconv.AppendInt(dst, r.MaxWait.Milliseconds(), 10)
	dst = append(dst, `},"request_id":`...)
	dst = appendJSONString(dst, requestID)
	return append(dst, "}}"...)
}

// appendJSONString appends s as a JSON string. Control characters, quotes and backslashes are
// escaped; bytes that are not valid UTF-8 become U+FFFD, as encoding/json does.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	if plainJSON(s) {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// plainJSON reports whether s is printable ASCII without quotes or backslashes, which is every
// string a refusal holds but an odd request id: those are copied as they are.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
