package admission

import (
	"time"

	"github.com/sluice-serving/sluice/settings"
)

// Policy names how a refusal's Retry-After is chosen.
type Policy string

const (
	// PolicyStatic sends Config.StaticRetryAfter (no header when it is 0).
	PolicyStatic Policy = "static"
	// PolicyDrainRate estimates when the endpoint admits again from its measured drain rate,
	// falling back to the static value, then to no header, while the estimate is not warm.
	PolicyDrainRate Policy = "drain_rate"
)

// MaxRetryAfter is the longest Retry-After ever sent. Common client libraries ignore longer
// values and fall back to their own backoff, so a longer one would tell them nothing.
const MaxRetryAfter = 60 * time.Second

// Config sets one endpoint's admission. The per-class capacity, the max queue wait and the
// dispatch weights are the guarded Queue's (its Limits); the Gate reads them from the Queue so
// the two can never disagree. The tags are where the server's environment sets the fields
// every endpoint shares (SLUICE_ and the env tag); the watermarks are each endpoint's own, so
// the server declares their variables per endpoint.
type Config struct {
	// HighWatermark is the depth (waiting + running) at which the endpoint starts shedding.
	// OpenMed sets it to the max queue size.
	HighWatermark int
	// LowWatermark is the depth at or below which shedding stops. 0 means HighWatermark / 2,
	// unless ShedUntilEmpty. It must be below HighWatermark: the gap is what keeps the gate
	// from flapping.
	LowWatermark int
	// ShedUntilEmpty makes the low watermark 0: shedding stops only when nothing is
	// outstanding (OpenMed's reading of a low watermark of 0).
	ShedUntilEmpty bool
	// Policy chooses the Retry-After; "" means PolicyStatic.
	Policy Policy `env:"RETRY_AFTER_POLICY" envDefault:"drain_rate"`
	// StaticRetryAfter is the static policy's value and the drain_rate policy's fallback,
	// rounded up to whole seconds; 0 means no header from this rung.
	StaticRetryAfter time.Duration `env:"RETRY_AFTER_S" envDefault:"1" unit:"s"`
	// RetryReserve is the share of the measured completion rate that refusals may book, each
	// second, as retry reservations (see RetryTokenHeader); 0 books none.
	RetryReserve float64 `env:"RETRY_RESERVE" envDefault:"0.5"`
	// MemoryHighWatermark is the share of the Queue's memory (Limits.Memory: KV cache
	// blocks) in use at which the endpoint starts shedding, with reason memory, until use
	// drains to MemoryLowWatermark (0: MemoryHighWatermark - 0.1). 0 turns it off.
	MemoryHighWatermark float64
	MemoryLowWatermark  float64
}

// withDefaults fills the fields whose zero value means "default".
func (c Config) withDefaults() Config {
	if c.LowWatermark == 0 && !c.ShedUntilEmpty {
		c.LowWatermark = c.HighWatermark / 2
	}
	if c.Policy == "" {
		c.Policy = PolicyStatic
	}
	if c.MemoryHighWatermark > 0 && c.MemoryLowWatermark == 0 {
		c.MemoryLowWatermark = max(c.MemoryHighWatermark-0.1, 0)
	}
	return c
}

// Validate reports every field that is out of range, with defaults applied first: the result
// joins one *settings.Problem per bad field.
func (c Config) Validate() error {
	c = c.withDefaults()
	check := settings.For("admission")
	bad := check.Addf
	if c.HighWatermark < 1 {
		bad("HighWatermark", "must be at least 1, got %d", c.HighWatermark)
	}
	if c.ShedUntilEmpty && c.LowWatermark != 0 {
		bad("LowWatermark", "must be 0 with ShedUntilEmpty, got %d", c.LowWatermark)
	}
	if c.LowWatermark < 0 || c.LowWatermark >= c.HighWatermark {
		bad("LowWatermark", "must be at least 0 and below the high watermark %d, got %d", c.HighWatermark, c.LowWatermark)
	}
	if c.Policy != PolicyStatic && c.Policy != PolicyDrainRate {
		bad("Policy", "must be %q or %q, got %q", PolicyStatic, PolicyDrainRate, c.Policy)
	}
	if c.StaticRetryAfter < 0 || c.StaticRetryAfter > MaxRetryAfter {
		bad("StaticRetryAfter", "must be between 0 (no header) and %s, got %s", MaxRetryAfter, c.StaticRetryAfter)
	}
	if !(c.RetryReserve >= 0 && c.RetryReserve <= 1) {
		bad("RetryReserve", "must be between 0 (no reservations) and 1, got %v", c.RetryReserve)
	}
	if !(c.MemoryHighWatermark >= 0 && c.MemoryHighWatermark <= 1) {
		bad("MemoryHighWatermark", "must be between 0 (off) and 1, got %v", c.MemoryHighWatermark)
	} else if c.MemoryHighWatermark > 0 && !(c.MemoryLowWatermark >= 0 && c.MemoryLowWatermark < c.MemoryHighWatermark) {
		bad("MemoryLowWatermark", "must be at least 0 and below the high watermark %v, got %v", c.MemoryHighWatermark, c.MemoryLowWatermark)
	}
	return check.Err()
}
