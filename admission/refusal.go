package admission

import "time"

// Refusal is a gate's decision not to take a request, and what the answer needs: why, the
// queue's state, and when to retry. Every field is aggregate queue state or configuration;
// nothing in it comes from the request but its class. The HTTP layer words it (handlers: a
// 503 with a Retry-After when RetryAfter is not 0).
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
	// RetryAfter is the suggested wait, in whole seconds within [1, 60] (ServerRetryAfter or
	// DrainRetryAfter); 0 means send no Retry-After header (the policy had nothing to say).
	RetryAfter time.Duration
	// RetryAfterSource is the rung of the fallback ladder that produced RetryAfter:
	// SourceDrainRate, SourceStatic, or "" with no header.
	RetryAfterSource string
	// Token is the retry reservation booked for RetryAfter, if any: its value goes in the
	// RetryTokenHeader response header.
	Token RetryToken
}
