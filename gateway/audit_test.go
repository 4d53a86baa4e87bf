package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAuditChainShowsARemovedOrChangedRecord(t *testing.T) {
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	a := NewAudit(0, func() time.Time { return now })
	for i, status := range []string{"forwarded", "blocked", "forwarded"} {
		a.Append(Record{RequestID: string(rune('a' + i)), Status: status, Entities: map[string]int{"PERSON": 1},
			OutboundHash: Hash("[PERSON_1] called")})
	}
	recs := a.Records()
	if !Verify(recs) || recs[0].PreviousHash != zeroHash || recs[1].PreviousHash != recs[0].RecordHash {
		t.Fatalf("chain: %+v", recs)
	}
	if Verify(append(recs[:1:1], recs[2])) {
		t.Error("a removed record went unnoticed")
	}
	changed := a.Records()
	changed[1].Status = "forwarded"
	if Verify(changed) {
		t.Error("a changed record went unnoticed")
	}
	data, _ := json.Marshal(recs)
	if strings.Contains(string(data), "called") {
		t.Error("a text reached the audit")
	}
	kept := NewAudit(2, func() time.Time { return now })
	for range 5 {
		kept.Append(Record{Status: "forwarded"})
	}
	if r := kept.Records(); len(r) < 2 || len(r) > 3 || !Verify(r) || !Verify(kept.Tail(2)) || len(kept.Tail(9)) != len(r) {
		t.Errorf("bounded audit: %d records", len(r))
	}
}
