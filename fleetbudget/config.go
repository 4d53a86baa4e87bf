package fleetbudget

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluice-serving/sluice/settings"
)

// FailureMode is what a replica does while Redis is out of reach.
type FailureMode string

const (
	// FailLocal enforces, on each replica, its share of every budget: the rates, bursts and
	// concurrency divided by Config.Replicas.
	FailLocal FailureMode = "local"
	// FailClosed refuses every budgeted request (429, reason unavailable) with a Retry-After
	// of Config.ProbeInterval.
	FailClosed FailureMode = "closed"
)

// Config is a fleet's shared budgets. The tags are where the server's environment sets each
// field (SLUICE_ and the env tag); with URL unset the server keeps budgets in its own memory
// and reads none of the rest.
type Config struct {
	// URL is Redis's, as go-redis parses it: redis://[user:password@]host:port[/db], or
	// rediss:// for TLS.
	URL     string      `env:"REDIS_URL"`
	Failure FailureMode `env:"REDIS_FAILURE" envDefault:"local"`
	// Replicas is how many replicas share the budgets, for FailLocal's share.
	Replicas int `env:"FLEET_REPLICAS" envDefault:"1"`
	// Timeout bounds each call to Redis, connecting included; past it the call counts as Redis
	// out of reach.
	Timeout time.Duration `env:"REDIS_TIMEOUT_MS" envDefault:"100" unit:"ms"`
	// LeaseTTL is how long a concurrency slot outlives the last renewal of the replica that
	// holds it (renewed every third of it while its request runs): how long a killed replica's
	// slots stay taken.
	LeaseTTL time.Duration `env:"REDIS_LEASE_MS" envDefault:"15000" unit:"ms"`
	// ProbeInterval is, while Redis is out of reach, how often one request tries it again
	// (the others do not wait on it); 0: 1 s.
	ProbeInterval time.Duration
	// KeySecretFile is a file whose bytes key an HMAC of each caller's key, the same file on
	// every replica: without it a key is a plain hash, which whoever reads Redis can reverse
	// for a caller whose key can be guessed (a client's address, a tenant's name).
	KeySecretFile string `env:"REDIS_KEY_SECRET_FILE"`
	// KeyPrefix starts every key the store writes; "": "sluice:budget:".
	KeyPrefix string
}

// minKeySecret is the shortest KeySecretFile taken: 128 bits.
const minKeySecret = 16

// readKeySecret is KeySecretFile's bytes, its trailing line end dropped; nil without one.
func (c Config) readKeySecret() ([]byte, error) {
	if c.KeySecretFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(c.KeySecretFile)
	if err != nil {
		return nil, fmt.Errorf("fleetbudget: KeySecretFile: %w", err)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) < minKeySecret {
		return nil, fmt.Errorf("fleetbudget: KeySecretFile: holds %d bytes; at least %d are needed", len(b), minKeySecret)
	}
	return b, nil
}

func (c Config) withDefaults() Config {
	if c.ProbeInterval == 0 {
		c.ProbeInterval = time.Second
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = "sluice:budget:"
	}
	return c
}

// Validate reports every field out of range, with defaults applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	check := settings.For("fleetbudget")
	if c.URL == "" {
		check.Addf("URL", "must be set for budgets shared through Redis")
	} else if _, err := redis.ParseURL(c.URL); err != nil {
		check.Addf("URL", "is not a Redis URL (redis://host:port/db): %s", redactedParseError(err))
	}
	if c.Failure != FailLocal && c.Failure != FailClosed {
		check.Addf("Failure", "must be %q or %q, got %q", FailLocal, FailClosed, c.Failure)
	}
	if c.Replicas < 1 {
		check.Addf("Replicas", "must be at least 1, got %d", c.Replicas)
	}
	if c.Timeout <= 0 || c.Timeout > 10*time.Second {
		check.Addf("Timeout", "must be above 0 and at most 10 s, got %s", c.Timeout)
	}
	if c.LeaseTTL < 3*c.Timeout || c.LeaseTTL < 100*time.Millisecond {
		check.Addf("LeaseTTL", "must be at least 100 ms and 3 x the timeout (%s), so that a renewal has time to land, got %s", c.Timeout, c.LeaseTTL)
	}
	if c.ProbeInterval < 0 {
		check.Addf("ProbeInterval", "must be at least 0 (0: 1 s), got %s", c.ProbeInterval)
	}
	if _, err := c.readKeySecret(); err != nil {
		check.Addf("KeySecretFile", "%s", strings.TrimPrefix(err.Error(), "fleetbudget: KeySecretFile: "))
	}
	return check.Err()
}

// redactedParseError is what go-redis says of a URL it refuses, without the URL, which may
// hold a password.
func redactedParseError(err error) string {
	if _, ok := err.(interface{ Unwrap() error }); ok {
		return "its form is not understood"
	}
	return err.Error()
}
