package scheduler

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadTime is the meter of processor time: the goroutine stays on its thread for the
// piece, whose clock counts only what ran on it, not the time the goroutine waited for a core
// (the loop's step on a core it shares) or for a lock. A clock that cannot be read charges
// the piece nothing.
func threadTime() func() time.Duration {
	runtime.LockOSThread()
	began, ok := threadClock()
	return func() time.Duration {
		end, read := threadClock()
		runtime.UnlockOSThread()
		if !ok || !read || end < began {
			return 0
		}
		return end - began
	}
}

func threadClock() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
