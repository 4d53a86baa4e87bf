package scheduler

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadTime is the meter of processor time: the goroutine stays on its thread for the
// piece, whose clock counts only what ran on it, not the time the goroutine waited for a core
// (the loop's step on a core it shares) or for a lock.
func threadTime() func() time.Duration {
	runtime.LockOSThread()
	began := threadClock()
	return func() time.Duration {
		took := threadClock() - began
		runtime.UnlockOSThread()
		return took
	}
}

func threadClock() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0 // a piece then costs nothing, and the steps' share is unenforced
	}
	return time.Duration(ts.Nano())
}
