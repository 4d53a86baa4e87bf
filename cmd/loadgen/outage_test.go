package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// The exercise through the Go client: retries without a budget multiply the backend's load
// (about 1/(1 - share) at 30% failing), within the budget they stay near 1.1x plus the floor;
// without jitter every first retry waits the same 100 ms.
func TestOutageExercise(t *testing.T) {
	rows, err := RunOutage(context.Background(), OutageConfig{Rate: 300, Duration: time.Second, FailShare: 0.3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]OutageRow{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	none, free, budget, sync := byName["no retries"], byName["retries, no budget"], byName["retries, budget 10%"], byName["retries, no budget, no jitter"]
	if none.LoadRatio() != 1 || free.LoadRatio() < 1.25 || budget.LoadRatio() > 1.2 || budget.LoadRatio() >= free.LoadRatio() {
		t.Errorf("load ratios: none %.2f, no budget %.2f, budget %.2f", none.LoadRatio(), free.LoadRatio(), budget.LoadRatio())
	}
	var first int64
	for i, n := range sync.Waits {
		if i != 4 && i != 8 && i != 16 && n != 0 {
			t.Errorf("without jitter, %d retries waited in bin %d (want only 100, 200, 400 ms)", n, i)
		}
		if i == 4 {
			first = n
		}
	}
	if first == 0 {
		t.Error("no retry waited 100 ms without jitter")
	}
	var out bytes.Buffer
	WriteOutage(&out, rows)
	if !strings.Contains(out.String(), "retry waits, retries, no budget, no jitter") {
		t.Errorf("report:\n%s", out.String())
	}
}
