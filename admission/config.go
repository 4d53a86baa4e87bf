package admission

import (
	"errors"
	"fmt"
	"time"
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

// ParsePolicy accepts the names of the policies; "" means PolicyStatic.
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case "", PolicyStatic:
		return PolicyStatic, nil
	case PolicyDrainRate:
		return PolicyDrainRate, nil
	}
	return "", fmt.Errorf("admission: retry-after policy must be %q or %q, got %q", PolicyStatic, PolicyDrainRate, s)
}

// Defaults, as in the OpenMed service: the high watermark is the per-class queue size.
const (
	DefaultHighWatermark = 256
	DefaultMaxQueueWait  = time.Second
)

// MaxRetryAfter is the longest Retry-After ever sent. Common client libraries ignore longer
// values and fall back to their own backoff, so a longer one would tell them nothing.
const MaxRetryAfter = 60 * time.Second

// Config sets one endpoint's admission. The per-class capacity and the max queue wait are the
// batcher's (batcher.Config.QueueSize and MaxQueueWait); the Gate reads them from the batcher
// so the two can never disagree.
type Config struct {
	// HighWatermark is the depth (waiting + running) at which the endpoint starts shedding.
	// OpenMed's default is the max queue size, 256.
	HighWatermark int
	// LowWatermark is the depth at or below which shedding stops. 0 means HighWatermark / 2.
	// It must be below HighWatermark: the gap is what keeps the gate from flapping.
	LowWatermark int
	// Policy chooses the Retry-After; "" means PolicyStatic.
	Policy Policy
	// StaticRetryAfter is the static policy's value and the drain_rate policy's fallback,
	// rounded up to whole seconds; 0 means no header from this rung.
	StaticRetryAfter time.Duration
	// RetryReserve is the share of the measured completion rate that refusals may book, each
	// second, as retry reservations (see RetryTokenHeader); 0 books none.
	RetryReserve float64
}

// withDefaults fills the fields whose zero value means "default".
func (c Config) withDefaults() Config {
	if c.LowWatermark == 0 {
		c.LowWatermark = c.HighWatermark / 2
	}
	if c.Policy == "" {
		c.Policy = PolicyStatic
	}
	return c
}

// Validate reports every field that is out of range, with defaults applied first, naming the
// field and the value it got.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.HighWatermark < 1 {
		errs = append(errs, fmt.Errorf("admission: HighWatermark must be at least 1, got %d", c.HighWatermark))
	}
	if c.LowWatermark < 0 || c.LowWatermark >= c.HighWatermark {
		errs = append(errs, fmt.Errorf("admission: LowWatermark must be at least 0 and below HighWatermark %d, got %d", c.HighWatermark, c.LowWatermark))
	}
	if _, err := ParsePolicy(string(c.Policy)); err != nil {
		errs = append(errs, err)
	}
	if c.StaticRetryAfter < 0 || c.StaticRetryAfter > MaxRetryAfter {
		errs = append(errs, fmt.Errorf("admission: StaticRetryAfter must be between 0 (no header) and %s, got %s", MaxRetryAfter, c.StaticRetryAfter))
	}
	if !(c.RetryReserve >= 0 && c.RetryReserve <= 1) {
		errs = append(errs, fmt.Errorf("admission: RetryReserve must be between 0 (no reservations) and 1, got %v", c.RetryReserve))
	}
	return errors.Join(errs...)
}
