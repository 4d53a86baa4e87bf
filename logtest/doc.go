// Package logtest is a log for tests: a buffer that the code under test writes from its own
// goroutines while the test reads it, and waits on, without sleeping.
//
//	var log logtest.Buffer
//	logger := slog.New(slog.NewTextHandler(&log, nil))
//	...
//	line := log.WaitFor(t, 30*time.Second, "level=WARN", "Redis is out of reach")
//	if n := log.Count("out of reach"); n != 1 { ... }
package logtest
