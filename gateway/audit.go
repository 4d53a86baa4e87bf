package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"
)

// Record is one gateway request's audit entry: what was decided and how much was redacted,
// with hashes of the texts, never the texts.
type Record struct {
	RequestID string         `json:"request_id"`
	Timestamp string         `json:"timestamp"`
	Status    string         `json:"status"`      // a Status
	Reason    string         `json:"reason_code"` // a Reason; "" when forwarded
	Policy    map[string]any `json:"policy"`
	Entities  map[string]int `json:"entity_counts"`
	// PlaceholderHashes are SHA-256s of the placeholders (never of the originals).
	PlaceholderHashes []string `json:"placeholder_hashes"`
	// OutboundHash and ReturnedHash are SHA-256s of the text sent to the model and of its
	// answer before restoration ("" when there was none).
	OutboundHash string `json:"outbound_hash"`
	ReturnedHash string `json:"returned_hash"`
	// Invented counts placeholders in the answer that the request's map did not hold.
	Invented     int    `json:"invented_placeholders"`
	Completion   string `json:"completion_source"` // local or upstream
	PreviousHash string `json:"previous_hash"`
	RecordHash   string `json:"record_hash"`
}

// Audit is an append-only, hash-chained list of records: each record's hash covers the one
// before it, so a record removed or changed breaks Verify. It keeps at most a bound of the
// latest records in memory, give or take a quarter (the chain still verifies from the first
// kept; what was trimmed from the front cannot be checked).
type Audit struct {
	mu      sync.Mutex
	records []Record
	limit   int
	last    string
	clock   func() time.Time
	// observe sees every record kept (the metrics); set once, before requests.
	observe func(Record)
}

// Observe has f see every record as it is kept, after the chain's lock is let go.
func (a *Audit) Observe(f func(Record)) { a.observe = f }

// NewAudit keeps up to limit records (0: 100,000). now stamps them.
func NewAudit(limit int, now func() time.Time) *Audit {
	if limit <= 0 {
		limit = 100_000
	}
	return &Audit{limit: limit, last: zeroHash, clock: now}
}

var zeroHash = hex.EncodeToString(make([]byte, sha256.Size))

// Hash is the hex SHA-256 of s, as records carry texts.
func Hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Append stamps r, chains it to the last record and keeps it; it returns the record as kept.
func (a *Audit) Append(r Record) Record {
	kept := a.append(r)
	if a.observe != nil {
		a.observe(kept)
	}
	return kept
}

func (a *Audit) append(r Record) Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	r.Timestamp = a.clock().UTC().Format(time.RFC3339Nano)
	r.PreviousHash, r.RecordHash = a.last, ""
	r.RecordHash = recordHash(r)
	a.last = r.RecordHash
	a.records = append(a.records, r)
	if len(a.records) >= a.limit+a.limit/4 {
		// Trimmed a quarter at a time, so that appending stays O(1) amortised.
		a.records = append(a.records[:0:0], a.records[len(a.records)-a.limit:]...)
	}
	return r
}

// Tail returns a copy of the latest n records (fewer when there are fewer), oldest first.
func (a *Audit) Tail(n int) []Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Record(nil), a.records[max(0, len(a.records)-n):]...)
}

// recordHash is the SHA-256 of the record's JSON without its own hash.
func recordHash(r Record) string {
	r.RecordHash = ""
	data, _ := json.Marshal(r) // a Record always encodes
	return Hash(string(data))
}

// Records returns a copy of the kept records (between the limit and a quarter more), oldest
// first.
func (a *Audit) Records() []Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Record(nil), a.records...)
}

// Verify checks records as a chain: each one's hash is its own, and names the one before.
func Verify(records []Record) bool {
	for i, r := range records {
		if recordHash(r) != r.RecordHash || (i > 0 && r.PreviousHash != records[i-1].RecordHash) {
			return false
		}
	}
	return true
}
