package natsbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Box is the process's NATS connection and JetStream, with the embedded server when there is
// one. Its methods are safe for concurrent use.
type Box struct {
	cfg     Config
	replica string
	ns      *server.Server // nil when external
	lock    *os.File       // the data directory's lock, held while ns runs
	nc      *nats.Conn
	js      jetstream.JetStream
	// The replica name's claim on an external cluster (claim.go).
	claimed              *claimed
	stopClaim, claimDone chan struct{}
}

// startTimeout bounds how long the embedded server may take to accept connections.
const startTimeout = 30 * time.Second

// Open starts the embedded server (or connects to the external cluster) and returns once
// JetStream answers. On an external cluster it claims the replica's name for as long as it
// runs (ErrReplicaTaken: another running process has it). The caller must Close the Box.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (*Box, error) {
	return openBox(ctx, cfg, logger, true)
}

// OpenReader is Open for a process that writes nothing under the replica's name (`sluice
// audit verify`): it claims no name, so that it runs beside the replica whose host it shares.
func OpenReader(ctx context.Context, cfg Config, logger *slog.Logger) (*Box, error) {
	return openBox(ctx, cfg, logger, false)
}

func openBox(ctx context.Context, cfg Config, logger *slog.Logger, claim bool) (_ *Box, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &Box{cfg: cfg, replica: cfg.ReplicaID()}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	if cfg.Embedded() {
		if err := b.startEmbedded(logger); err != nil {
			return nil, err
		}
		if b.nc, err = nats.Connect(b.ns.ClientURL(), nats.InProcessServer(b.ns), nats.Name("sluice"),
			nats.MaxReconnects(-1)); err != nil {
			return nil, fmt.Errorf("natsbox: connecting to the embedded server: %w", err)
		}
	} else {
		if b.nc, err = nats.Connect(cfg.URL, nats.Name("sluice"), nats.MaxReconnects(-1),
			nats.RetryOnFailedConnect(false), nats.Timeout(10*time.Second)); err != nil {
			return nil, fmt.Errorf("natsbox: connecting to SLUICE_NATS_URL: %w", err)
		}
	}
	if b.js, err = jetstream.New(b.nc); err != nil {
		return nil, fmt.Errorf("natsbox: %w", err)
	}
	if _, err := b.js.AccountInfo(ctx); err != nil {
		return nil, fmt.Errorf("natsbox: JetStream does not answer: %w", err)
	}
	if claim && !cfg.Embedded() {
		if err := b.claim(ctx, logger); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// startEmbedded locks the data directory and runs the server on it.
func (b *Box) startEmbedded(logger *slog.Logger) error {
	dir, err := filepath.Abs(b.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("natsbox: data directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("natsbox: data directory: %w", err)
	}
	if b.lock, err = lockDir(dir); err != nil {
		return err
	}
	opts := &server.Options{
		ServerName: b.replica,
		JetStream:  true,
		StoreDir:   dir,
		SyncAlways: b.cfg.SyncAlways,
		// The process talks to it over an in-process pipe: no port, and no signal handlers
		// (the server's own would end the process on SIGTERM, before Sluice drains).
		DontListen: true,
		NoSigs:     true,
		// 0 leaves NATS's own bounds.
		JetStreamMaxMemory: b.cfg.MaxMemoryBytes,
		JetStreamMaxStore:  b.cfg.MaxStoreBytes,
	}
	if b.ns, err = server.NewServer(opts); err != nil {
		return fmt.Errorf("natsbox: embedded server: %w", err)
	}
	// Its log goes to Sluice's, warnings and worse only; a logger of our own also keeps a
	// fatal message from ending the process.
	b.ns.SetLoggerV2(serverLog{logger}, false, false, false)
	go b.ns.Start()
	if !b.ns.ReadyForConnections(startTimeout) {
		return fmt.Errorf("natsbox: the embedded server did not start within %s", startTimeout)
	}
	if !b.ns.JetStreamEnabled() {
		return fmt.Errorf("natsbox: the embedded server started without JetStream (is %s writable, with room?)", dir)
	}
	return nil
}

// lockDir takes an exclusive lock on dir/LOCK, so that two processes never run a store on one
// directory.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("natsbox: data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("natsbox: data directory %s is in use by another process", dir)
		}
		return nil, fmt.Errorf("natsbox: locking the data directory: %w", err)
	}
	return f, nil
}

// Conn is the NATS connection.
func (b *Box) Conn() *nats.Conn { return b.nc }

// JetStream is the JetStream context over the connection.
func (b *Box) JetStream() jetstream.JetStream { return b.js }

// Replica is this process's name in the fleet (Config.ReplicaID).
func (b *Box) Replica() string { return b.replica }

// Embedded says whether the server runs in this process.
func (b *Box) Embedded() bool { return b.ns != nil }

// Replicas is how many copies EnsureStream gives a stream.
func (b *Box) Replicas() int {
	if b.ns != nil {
		return 1
	}
	return b.cfg.Replicas
}

// EnsureStream creates the stream cfg describes when there is none, and otherwise returns the
// stream as it is: its settings (its retention limits above all) are the fleet's, set by the
// replica that created it or by an operator since, and one replica started with other ones
// must not impose them on every other's data. Storage is always the file store, and Replicas
// is the Box's. The caller compares the stream's CachedInfo().Config with what it wanted.
func (b *Box) EnsureStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	cfg.Storage = jetstream.FileStorage
	cfg.Replicas = b.Replicas()
	st, err := b.js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) { // it exists with other settings
		st, err = b.js.Stream(ctx, cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("natsbox: stream %q: %w", cfg.Name, err)
	}
	if err := AwaitLeader(ctx, st); err != nil {
		return nil, fmt.Errorf("natsbox: stream %q: %w", cfg.Name, err)
	}
	return st, nil
}

// AwaitLeader returns once a replicated stream has elected its leader; for a stream of one
// copy it returns at once. A stream just created on a cluster exists before any node serves
// it, and a publish in that gap finds no responder, so a fresh fleet's first writes would fail.
func AwaitLeader(ctx context.Context, st jetstream.Stream) error {
	if st.CachedInfo().Config.Replicas <= 1 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := st.Info(ctx)
		if err == nil && info.Cluster != nil && info.Cluster.Leader != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = errors.New("no leader elected")
			}
			return fmt.Errorf("waiting for a leader: %w", err)
		case <-tick.C:
		}
	}
}

// Close drains the connection (publishes in flight are sent and their acknowledgements
// awaited) and stops the embedded server. It is safe to call more than once.
func (b *Box) Close() {
	b.release()
	if b.nc != nil && !b.nc.IsClosed() {
		closed := make(chan struct{})
		b.nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
		if err := b.nc.Drain(); err == nil {
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
			}
		}
		b.nc.Close()
	}
	if b.ns != nil {
		b.ns.Shutdown()
		b.ns.WaitForShutdown()
		b.ns = nil
	}
	if b.lock != nil {
		b.lock.Close() // closing the descriptor lets the lock go
		b.lock = nil
	}
}

// serverLog is the embedded server's log as Sluice's: warnings, errors and fatal messages.
type serverLog struct{ l *slog.Logger }

func (s serverLog) Noticef(string, ...any) {}
func (s serverLog) Debugf(string, ...any)  {}
func (s serverLog) Tracef(string, ...any)  {}
func (s serverLog) Warnf(format string, v ...any) {
	s.l.Warn("nats: " + fmt.Sprintf(format, v...))
}
func (s serverLog) Errorf(format string, v ...any) {
	s.l.Error("nats: " + fmt.Sprintf(format, v...))
}
func (s serverLog) Fatalf(format string, v ...any) {
	s.l.Error("nats: fatal: " + fmt.Sprintf(format, v...))
}
