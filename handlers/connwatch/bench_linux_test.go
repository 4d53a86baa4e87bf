//go:build linux

package connwatch

import (
	"context"
	"net"
	"testing"
)

// benchPairs returns n connected loopback pairs' server ends.
func benchPairs(b *testing.B, n int) []*net.TCPConn {
	b.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ln.Close() })
	servers := make([]*net.TCPConn, n)
	for i := range servers {
		c, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
		if err != nil {
			b.Fatal(err)
		}
		s, err := ln.AcceptTCP()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close(); _ = s.Close() })
		servers[i] = s
	}
	return servers
}

func benchWatcher(b *testing.B) *Watcher {
	b.Helper()
	w, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = w.Close() })
	return w
}

// BenchmarkWatchStop is the cost every request pays: Watch and stop on a live connection.
func BenchmarkWatchStop(b *testing.B) {
	w := benchWatcher(b)
	s := benchPairs(b, 1)[0]
	parent := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ctx, stop := w.Watch(parent, s)
		stop()
		if ctx.Err() == nil {
			b.Fatal("stop did not cancel")
		}
	}
	if st := w.Stats(); st.Unwatchable != 0 || st.Watching != 0 {
		b.Fatalf("Stats = %+v", st)
	}
}

// BenchmarkWatchStopParallel runs Watch and stop from all Ps at once, one connection each.
func BenchmarkWatchStopParallel(b *testing.B) {
	w := benchWatcher(b)
	servers := make(chan *net.TCPConn, 64)
	for _, s := range benchPairs(b, 64) {
		servers <- s
	}
	parent := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := <-servers
		for pb.Next() {
			_, stop := w.Watch(parent, s)
			stop()
		}
	})
	if st := w.Stats(); st.Unwatchable != 0 || st.Watching != 0 {
		b.Fatalf("Stats = %+v", st)
	}
}

// BenchmarkBaselineWithCancelCause is the part of Watch that a plain derived context costs
// anyway, for comparison.
func BenchmarkBaselineWithCancelCause(b *testing.B) {
	parent := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, cancel := context.WithCancelCause(parent)
		cancel(nil)
	}
}
