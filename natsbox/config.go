package natsbox

import (
	"net/url"
	"os"
	"regexp"
	"strings"

	"github.com/sluice-serving/sluice/settings"
)

// Config is where Sluice's JetStream lives.
type Config struct {
	// DataDir holds the embedded server's store (DataDir/jetstream) and its lock.
	DataDir string `env:"DATA_DIR" envDefault:"sluice-data"`
	// URL, when set, is an external NATS cluster (comma-separated nats:// URLs) used instead
	// of the embedded server.
	URL string `env:"NATS_URL"`
	// Replicas is how many copies an external cluster keeps of each stream (1 to 5); the
	// embedded server keeps one.
	Replicas int `env:"NATS_REPLICAS" envDefault:"3"`
	// SyncAlways has the embedded server sync every write to the disk before acknowledging
	// it, which survives a host crash as well as a killed process, at one sync per message.
	SyncAlways bool `env:"NATS_SYNC_ALWAYS" envDefault:"false"`
	// MaxMemoryBytes bounds the embedded server's memory store, where jobs live without a
	// key: past it JetStream refuses writes, answered 503, rather than the process growing
	// until it is killed. 0: NATS's own bound, three quarters of the host's memory.
	MaxMemoryBytes int64 `env:"NATS_MAX_MEMORY_BYTES" envDefault:"1073741824"`
	// MaxStoreBytes bounds the embedded server's file store (the audit, jobs with a key) below
	// the volume holding DataDir, so that a full store refuses writes before the volume's
	// own limit evicts the process. 0: NATS's own bound, from the disk's room.
	MaxStoreBytes int64 `env:"NATS_MAX_STORE_BYTES" envDefault:"0"`
	// Replica names this process in the fleet (its audit chain, the embedded server): letters,
	// digits, '-' and '_'; "" is the host name, other characters made '-'. Two processes
	// must never share one.
	Replica string `env:"REPLICA_ID"`
}

// replicaName is what a replica may be called: one token of a NATS subject.
var replicaName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidReplica says whether name may name a replica (letters, digits, '-' and '_', 1 to 64).
func ValidReplica(name string) bool { return replicaName.MatchString(name) }

// ReplicaID is Replica, or the host name made a valid one.
func (c Config) ReplicaID() string {
	if c.Replica != "" {
		return c.Replica
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "sluice"
	}
	id := []byte(host[:min(len(host), 64)])
	for i, ch := range id {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			id[i] = '-'
		}
	}
	return string(id)
}

// Embedded says whether the configuration runs the server in the process.
func (c Config) Embedded() bool { return c.URL == "" }

// Validate reports every field that is out of range: one *settings.Problem per bad field.
func (c Config) Validate() error {
	check := settings.For("natsbox")
	if c.Embedded() && c.DataDir == "" {
		check.Addf("DataDir", "must name a directory for the embedded server's store")
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		check.Addf("Replicas", "must be between 1 and 5, got %d", c.Replicas)
	}
	for _, u := range strings.Split(c.URL, ",") {
		if c.URL == "" {
			break
		}
		p, err := url.Parse(strings.TrimSpace(u))
		if err != nil || p.Host == "" || (p.Scheme != "nats" && p.Scheme != "tls") {
			check.Addf("URL", "must be nats:// or tls:// URLs with a host, separated by commas")
			break
		}
	}
	if c.Replica != "" && !replicaName.MatchString(c.Replica) {
		check.Addf("Replica", "must be 1 to 64 letters, digits, '-' or '_', got %q", c.Replica)
	}
	for _, b := range []struct {
		name string
		n    int64
		most int64
	}{{"MaxMemoryBytes", c.MaxMemoryBytes, 1 << 40}, {"MaxStoreBytes", c.MaxStoreBytes, 1 << 46}} {
		if b.n != 0 && (b.n < 1<<20 || b.n > b.most) {
			check.Addf(b.name, "must be 0 (NATS's own bound) or from 1 MiB to %d, got %d", b.most, b.n)
		}
	}
	if !c.Embedded() && c.SyncAlways {
		check.Addf("SyncAlways", "is the embedded server's; an external cluster's servers set their own sync_interval")
	}
	return check.Err()
}
