package handlers

import (
	"testing"
	"time"

	"github.com/sluice-serving/sluice/jobs"
)

// TestPayersWhoseWaitIsOverAreForgotten: the waits of throttled jobs' payers are pruned once
// over, at most once a minute, so that each key a job ever had does not stay for ever.
func TestPayersWhoseWaitIsOverAreForgotten(t *testing.T) {
	var s server
	now := time.Unix(1_000_000, 0)
	for i, until := range []time.Time{now.Add(-time.Second), now, now.Add(time.Second)} {
		s.payersWaiting.Store(i, until)
	}
	s.prunePayers(now)
	count := func() (n int) {
		s.payersWaiting.Range(func(any, any) bool { n++; return true })
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("%d payers kept; want the one still waiting", n)
	}
	s.payersWaiting.Store(3, now)
	if s.prunePayers(now.Add(30 * time.Second)); count() != 2 {
		t.Fatal("pruned again within the minute")
	}
	if s.prunePayers(now.Add(time.Minute)); count() != 0 {
		t.Fatal("a minute later, the waits over are still kept")
	}
}

// TestAJobDocumentWaitsAtLeastASecond: a refusal that names no wait does not hand the
// document back at once.
func TestAJobDocumentWaitsAtLeastASecond(t *testing.T) {
	if got, want := jobWait(0).Error(), jobs.Later(time.Second).Error(); got != want {
		t.Fatalf("jobWait(0): %q; want %q", got, want)
	}
	if got, want := jobWait(3*time.Second).Error(), jobs.Later(3*time.Second).Error(); got != want {
		t.Fatalf("jobWait(3 s): %q; want %q", got, want)
	}
}
