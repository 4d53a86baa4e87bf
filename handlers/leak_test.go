package handlers

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// fasthttp's once-per-process Date header refresher: loops for the life of the process.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		// A stopped server's worker-pool cleaner sleeps out MaxIdleWorkerDuration (10 s) before it
		// sees the stop; a server left running still shows through its accept loop.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
	)
}
