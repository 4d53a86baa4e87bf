package jobs

import (
	"time"

	"github.com/sluice-serving/sluice/settings"
)

// Config is the jobs' settings: the key that makes them durable, their bounds, and workers.
type Config struct {
	// Enabled serves /jobs (and runs NATS for them).
	Enabled bool `env:"JOBS" envDefault:"true"`
	// KeyFile holds the 32-byte AES-256-GCM key job text is sealed with at rest (raw, or 64
	// hexadecimal characters). Unset: jobs live in memory only and do not survive a restart.
	KeyFile string `env:"JOBS_KEY_FILE"`
	// MaxDocuments and MaxBytes bound one job (its texts' bytes); past them, 413.
	MaxDocuments int   `env:"JOBS_MAX_DOCUMENTS" envDefault:"10000"`
	MaxBytes     int64 `env:"JOBS_MAX_BYTES" envDefault:"67108864"`
	// MaxPerTenant bounds a tenant's jobs not yet finished; past it, 429.
	MaxPerTenant int `env:"JOBS_MAX_PER_TENANT" envDefault:"8"`
	// MaxKeptPerTenant bounds a tenant's jobs kept, finished or not (each create reads them
	// all to count the unfinished); past it, 429 until the oldest expire with Retention.
	MaxKeptPerTenant int `env:"JOBS_MAX_KEPT_PER_TENANT" envDefault:"1000"`
	// MaxQueuedDocuments bounds the documents waiting in the work queue, every job's, fleet
	// wide; a job that would pass it is refused 503.
	MaxQueuedDocuments int `env:"JOBS_MAX_QUEUED_DOCUMENTS" envDefault:"200000"`
	// MaxStoreBytes bounds the bytes the work queue and the two buckets hold, together: the
	// queue and the results two fifths each, the records one (storeShares). Past it a create is
	// refused 503, and a result that does not fit fails its document, so that the jobs cannot
	// fill the store that the audit shares. 0: no bound of their own; nil (unset) is 0 here, and
	// cmd/serve makes it a share of the embedded store. Like AckWait, it is the queue's and the
	// buckets' on an external cluster only when this process creates them.
	MaxStoreBytes *int64 `env:"JOBS_MAX_STORE_BYTES"`
	// Workers is how many batches of documents this process works on at once, and Batch the
	// most documents in one: a worker's documents reach the batcher together, and their counts
	// reach their job's record in one write.
	Workers int `env:"JOBS_WORKERS" envDefault:"2"`
	Batch   int `env:"JOBS_BATCH" envDefault:"32"`
	// YieldDocuments is how many documents run at once, in this process, while interactive
	// requests are about (one came to the PII routes within YieldWindow); 0: no pacing.
	YieldDocuments int           `env:"JOBS_YIELD_DOCUMENTS" envDefault:"1"`
	YieldWindow    time.Duration `env:"JOBS_YIELD_WINDOW_MS" envDefault:"1000" unit:"ms"`
	// AckWait is how long a document's message waits, after its worker last said it is alive,
	// before it goes to another worker: the shared consumer's, when this process creates it
	// or runs the embedded server (on a cluster an existing consumer's applies, see Open).
	AckWait time.Duration `env:"JOBS_ACK_WAIT_MS" envDefault:"10000" unit:"ms"`
	// MaxAttempts is how many times one process tries a document whose processing failed, or
	// whose result the store refused as full, before it counts as failed (a wait for the tenant's budget
	// is no try).
	MaxAttempts int `env:"JOBS_MAX_ATTEMPTS" envDefault:"5"`
	// Retention is how long a job's record, documents and results are kept after their last
	// write; a finished job is served as gone once its oldest result may have expired. Like
	// AckWait, it is the buckets' and the queue's on a cluster only when this process creates
	// them.
	Retention time.Duration `env:"JOBS_RETENTION_S" envDefault:"86400" unit:"s"`
	// WebhookAllowPrivate lets a webhook reach loopback, link-local and private addresses
	// (tests, a receiver beside the server); off, they are refused.
	WebhookAllowPrivate bool `env:"JOBS_WEBHOOK_ALLOW_PRIVATE" envDefault:"false"`
	// WebhookTimeout bounds one delivery attempt.
	WebhookTimeout time.Duration `env:"JOBS_WEBHOOK_TIMEOUT_MS" envDefault:"10000" unit:"ms"`
}

// MinStoreBytes is the least MaxStoreBytes: the records' fifth still holds a record of the
// largest a message may be (1 MiB).
const MinStoreBytes = 8 << 20

// storeShares is the queue's, the results' and the records' part of MaxStoreBytes, in fifths:
// a document's text and its result are about as large, a job's record small.
func (c Config) storeShares() (queue, results, records int64) {
	if c.storeBytes() == 0 {
		return -1, -1, -1 // JetStream's "no bound"
	}
	fifth := c.storeBytes() / 5
	return 2 * fifth, 2 * fifth, fifth
}

// storeBytes is MaxStoreBytes, unset read as 0.
func (c Config) storeBytes() int64 {
	if c.MaxStoreBytes == nil {
		return 0
	}
	return *c.MaxStoreBytes
}

// maxInFlight bounds the documents one process holds at once (Workers x Batch): their results
// are written as asynchronous publishes, which share a bound of 4,096 pending with a job's
// submission.
const maxInFlight = 2048

// Validate reports every field out of range: one *settings.Problem per field.
func (c Config) Validate() error {
	check := settings.For("jobs")
	if c.MaxDocuments < 1 || c.MaxDocuments > 1_000_000 {
		check.Addf("MaxDocuments", "must be between 1 and 1000000, got %d", c.MaxDocuments)
	}
	if c.MaxBytes < 1 || c.MaxBytes > 1<<34 {
		check.Addf("MaxBytes", "must be between 1 and 16 GiB, got %d", c.MaxBytes)
	}
	if c.MaxPerTenant < 1 || c.MaxPerTenant > 10_000 {
		check.Addf("MaxPerTenant", "must be between 1 and 10000, got %d", c.MaxPerTenant)
	}
	if c.MaxKeptPerTenant < c.MaxPerTenant || c.MaxKeptPerTenant > 100_000 {
		check.Addf("MaxKeptPerTenant", "must be between MaxPerTenant (%d) and 100000, got %d", c.MaxPerTenant, c.MaxKeptPerTenant)
	}
	if c.MaxQueuedDocuments < c.MaxDocuments || c.MaxQueuedDocuments > 100_000_000 {
		check.Addf("MaxQueuedDocuments", "must be between MaxDocuments (%d) and 100000000, got %d", c.MaxDocuments, c.MaxQueuedDocuments)
	}
	if n := c.storeBytes(); n != 0 && (n < MinStoreBytes || n > 1<<46) {
		check.Addf("MaxStoreBytes", "must be 0 (no bound of their own) or from %d (8 MiB) to 64 TiB, got %d", MinStoreBytes, n)
	}
	if c.Workers < 1 || c.Workers > 256 {
		check.Addf("Workers", "must be between 1 and 256, got %d", c.Workers)
	}
	if c.Batch < 1 || c.Batch > 1024 {
		check.Addf("Batch", "must be between 1 and 1024, got %d", c.Batch)
	} else if c.Workers >= 1 && c.Workers*c.Batch > maxInFlight {
		check.Addf("Batch", "times Workers (%d) must be at most %d documents in flight, got %d", c.Workers, maxInFlight, c.Workers*c.Batch)
	}
	if c.YieldDocuments < 0 || c.YieldDocuments > 1024 {
		check.Addf("YieldDocuments", "must be between 0 (no pacing) and 1024, got %d", c.YieldDocuments)
	}
	if c.YieldWindow < 0 || c.YieldWindow > time.Hour {
		check.Addf("YieldWindow", "must be between 0 and an hour, got %s", c.YieldWindow)
	}
	if c.AckWait < time.Second || c.AckWait > time.Hour {
		check.Addf("AckWait", "must be between a second and an hour, got %s", c.AckWait)
	}
	if c.MaxAttempts < 1 || c.MaxAttempts > 100 {
		check.Addf("MaxAttempts", "must be between 1 and 100, got %d", c.MaxAttempts)
	}
	if c.Retention < time.Minute || c.Retention > 365*24*time.Hour {
		check.Addf("Retention", "must be between a minute and a year, got %s", c.Retention)
	}
	if c.WebhookTimeout <= 0 || c.WebhookTimeout > 5*time.Minute {
		check.Addf("WebhookTimeout", "must be positive and at most 5 minutes, got %s", c.WebhookTimeout)
	}
	return check.Err()
}
