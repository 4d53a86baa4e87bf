// Package natstest runs real NATS servers inside a test process: a JetStream cluster of
// several nodes, routed to each other over loopback, for tests of what an external,
// replicated JetStream does.
//
// # How to use it
//
//	urls := natstest.Cluster(t, 3, 7222)   // ports 7222.. for the routes; clients on any port
//	box, err := natsbox.Open(ctx, natsbox.Config{URL: urls, Replicas: 3}, logger)
//
// Each package's tests must use their own base port: packages' tests run at once, and the
// routes' ports are fixed (outside the range the kernel hands out to outgoing connections,
// so that no connection takes one first).
package natstest

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster starts n JetStream servers, their cluster routes on ports base to base+n-1, each
// with its store in a temporary directory, and returns once the JetStream cluster has a
// leader that sees every node; the servers stop when the test ends. It returns the nodes'
// client URLs, comma-separated, and the servers.
func Cluster(t testing.TB, n, base int) (string, []*server.Server) {
	t.Helper()
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", base+i))
	}
	var servers []*server.Server
	var urls []string
	for i := range n {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoSigs:     true,
			NoLog:      true,
			Cluster:    server.ClusterOpts{Name: "sluice-test", Host: "127.0.0.1", Port: base + i},
			Routes:     routesOf(t, routes),
		}
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatalf("natstest: node %d: %v", i+1, err)
		}
		go s.Start()
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatalf("natstest: node %d did not start", i+1)
		}
		servers = append(servers, s)
		urls = append(urls, s.ClientURL())
	}
	WaitFor(t, 40*time.Second, "a JetStream leader seeing every node", func() bool {
		for _, s := range servers {
			if s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == n {
				return true
			}
		}
		return false
	})
	return strings.Join(urls, ","), servers
}

func routesOf(t testing.TB, routes []string) []*url.URL {
	var out []*url.URL
	for _, r := range routes {
		u, err := url.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

// WaitFor checks cond every few milliseconds until it holds; past guard (a hang guard, not a
// timing the test depends on) the test fails, naming what it waited for.
func WaitFor(t testing.TB, guard time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(guard)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("natstest: waited %s for %s", guard, what)
		}
	}
}
