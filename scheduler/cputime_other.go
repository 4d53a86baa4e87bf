//go:build !linux

package scheduler

import "time"

// threadTime is the meter where no thread's clock is read: the piece's time on the wall,
// which also counts what it waited for a core.
func threadTime() func() time.Duration {
	began := time.Now()
	return func() time.Duration { return time.Since(began) }
}
