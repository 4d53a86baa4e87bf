package audit

import (
	"time"

	"github.com/sluice-serving/sluice/settings"
)

// Config is the audit's: whether requests are audited, how long and how much the stream keeps,
// and how long a request waits for its record to be stored.
type Config struct {
	// Enabled: every request to the privacy gateway and the de-identification routes leaves
	// a record, stored before it is answered. Off, nothing is recorded (NATS still runs for jobs).
	Enabled bool `env:"AUDIT" envDefault:"true"`
	// MaxAge and MaxBytes bound the stream (0: no bound): past either, the oldest records
	// are removed, whichever replica's they are.
	MaxAge   time.Duration `env:"AUDIT_MAX_AGE_S" envDefault:"0" unit:"s"`
	MaxBytes int64         `env:"AUDIT_MAX_BYTES" envDefault:"0"`
	// AckTimeout bounds the wait for a record's acknowledgement; past it the request is
	// answered 503 audit_unavailable.
	AckTimeout time.Duration `env:"AUDIT_ACK_TIMEOUT_MS" envDefault:"5000" unit:"ms"`
}

// Validate reports every field out of range: one *settings.Problem per field.
func (c Config) Validate() error {
	check := settings.For("audit")
	if c.MaxAge < 0 {
		check.Addf("MaxAge", "must not be negative (0: no bound), got %s", c.MaxAge)
	}
	if c.MaxAge > 0 && c.MaxAge < time.Minute {
		check.Addf("MaxAge", "must be at least a minute (0: no bound), got %s", c.MaxAge)
	}
	if c.MaxBytes < 0 {
		check.Addf("MaxBytes", "must not be negative (0: no bound), got %d", c.MaxBytes)
	}
	if c.MaxBytes > 0 && c.MaxBytes < 1<<20 {
		check.Addf("MaxBytes", "must be at least 1 MiB (0: no bound), got %d", c.MaxBytes)
	}
	if c.AckTimeout <= 0 {
		check.Addf("AckTimeout", "must be positive, got %s", c.AckTimeout)
	}
	return check.Err()
}
