package logtest

import (
	"fmt"
	"testing"
	"time"
)

// TestWaitForFindsALineWrittenLater: a line written after the wait began, from another
// goroutine, ends it; every part must be on that one line.
func TestWaitForFindsALineWrittenLater(t *testing.T) {
	var b Buffer
	fmt.Fprintln(&b, "level=INFO msg=ready")
	go func() {
		fmt.Fprintln(&b, "level=WARN msg=other")
		fmt.Fprintln(&b, "level=WARN msg=lost replica=r0")
	}()
	if line := b.WaitFor(t, time.Minute, "level=WARN", "msg=lost"); line != "level=WARN msg=lost replica=r0" {
		t.Fatalf("%q", line)
	}
	if n := b.Count("level=WARN"); n != 2 {
		t.Fatalf("%d warnings", n)
	}
}
