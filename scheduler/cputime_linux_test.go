package scheduler

import (
	"crypto/sha256"
	"testing"
)

// TestThreadTimeCountsOnlyWork: a piece that works is charged its processor time, and one
// that waits while another goroutine works is charged far less than that work took (the wall
// time of the wait is not its).
func TestThreadTimeCountsOnlyWork(t *testing.T) {
	work := func() {
		sum := sha256.Sum256(nil)
		for range 200_000 {
			sum = sha256.Sum256(sum[:])
		}
	}
	worked := make(chan func() int64) // the working goroutine's charge, once done
	go func() {
		end := threadTime()
		work()
		took := end()
		worked <- func() int64 { return int64(took) }
	}()
	end := threadTime()
	other := <-worked
	waited := end()
	if other() <= 0 {
		t.Fatalf("200,000 hashes were charged %d ns", other())
	}
	if int64(waited)*4 > other() {
		t.Fatalf("waiting for the work was charged %v, the work itself %d ns", waited, other())
	}
}
