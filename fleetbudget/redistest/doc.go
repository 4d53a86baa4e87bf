// Package redistest runs a real redis-server for a test: on a free loopback port, in the
// test's temporary directory, persisting nothing, stopped when the test ends. Tests of shared
// budgets use it instead of any stand-in for Redis.
//
//	srv := redistest.Start(t) // skips when run by hand without a redis-server
//	store, err := fleetbudget.New(fleetbudget.Config{URL: srv.URL, ...}, ...)
//	srv.Stop()    // Redis gone mid-run
//	srv.Restart() // back, empty, on the same port
//	srv = redistest.StartWith(t, "--requirepass", pw) // more options, after its own
//
// The binary is $TEST_REDIS_SERVER (which the Makefile sets to the one it provides) or
// redis-server on PATH. Under make test a missing or broken binary fails the test; a go test
// run by hand without either skips it and says why.
package redistest
