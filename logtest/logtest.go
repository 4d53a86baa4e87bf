package logtest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is an io.Writer safe for concurrent use whose contents a test reads as they grow.
// The zero Buffer is empty and ready.
type Buffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed by the next Write, when a WaitFor waits for it
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Count is how many times substr was written so far.
func (b *Buffer) Count(substr string) int {
	return strings.Count(b.String(), substr)
}

// WaitFor returns the first line that holds every one of parts, waiting for writes until one
// does; past guard (a hang guard only: what the test checks is the line) it fails t.
func (b *Buffer) WaitFor(t testing.TB, guard time.Duration, parts ...string) string {
	t.Helper()
	deadline := time.After(guard)
	for {
		b.mu.Lock()
		for line := range strings.SplitSeq(b.buf.String(), "\n") {
			if holdsAll(line, parts) {
				b.mu.Unlock()
				return line
			}
		}
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no line with %q after %v:\n%s", parts, guard, b.String())
		}
	}
}

func holdsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
