package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Record is one request's audit entry: who asked which route, how it ended, and what was done
// to its text, in hashes and counts, never the text itself. Replica, Seq, Timestamp and
// PreviousHash are the chain's, filled by Append.
type Record struct {
	// Replica is the process whose chain holds the record; Seq its place there, from 1.
	Replica   string `json:"replica"`
	Seq       uint64 `json:"seq"`
	Timestamp string `json:"timestamp"` // RFC 3339, UTC, by the replica's clock
	RequestID string `json:"request_id"`
	// Tenant is the caller's tenant as authentication named it ("" without one); never a key.
	Tenant     string `json:"tenant,omitempty"`
	Route      string `json:"route"`
	HTTPStatus int    `json:"http_status"`
	// Status is how the request ended: the privacy gateway's own words (forwarded, blocked,
	// rejected, transport_error, error, aborted), or the request's outcome on the other routes
	// (served, failed, aborted, timed_out). Reason says why, where there is a reason.
	Status string `json:"status"`
	Reason string `json:"reason_code,omitempty"`
	// Entities counts the spans found, by canonical kind.
	Entities map[string]int `json:"entity_counts,omitempty"`

	// The privacy gateway's: its policy, SHA-256s of the placeholders (never of the
	// originals: the first MaxPlaceholderHashes of them in their sorted order, and how many
	// the request sent), of the text sent to the model and of its answer before restoration,
	// placeholders in the answer that the request did not send, and what answered (local, or
	// the external model's kind).
	Policy            *Policy  `json:"policy,omitempty"`
	PlaceholderHashes []string `json:"placeholder_hashes,omitempty"`
	Placeholders      int      `json:"placeholder_count,omitempty"`
	OutboundHash      string   `json:"outbound_hash,omitempty"`
	ReturnedHash      string   `json:"returned_hash,omitempty"`
	Invented          int      `json:"invented_placeholders,omitempty"`
	Completion        string   `json:"completion_source,omitempty"`

	// De-identification's: the model, the method used, and keyed hashes (HMAC-SHA-256 under
	// the de-identification key) of the text and of the de-identified text. A plain hash
	// would let anyone holding a guess (a name, a number) confirm it.
	Model      string `json:"model,omitempty"`
	Method     string `json:"method,omitempty"`
	InputHash  string `json:"input_hash,omitempty"`
	OutputHash string `json:"output_hash,omitempty"`

	// PreviousHash is the hash of the record before this one in its replica's chain
	// (ZeroHash for the first). RecordHash is this record's own: the SHA-256 of its stored
	// form, which does not hold it.
	PreviousHash string `json:"previous_hash"`
	RecordHash   string `json:"record_hash,omitempty"`
}

// Policy is the privacy gateway's policy as a record keeps it.
type Policy struct {
	Name          string   `json:"name"`
	MinConfidence float64  `json:"min_confidence"`
	Floor         float64  `json:"detector_confidence_floor"`
	Disallowed    []string `json:"disallowed_entity_categories"`
}

// MaxPlaceholderHashes bounds a record's PlaceholderHashes, so that a request of many
// identifiers (25,000 names fit a 100,000-character text) still has a record a stream's
// message holds (1 MiB by default: 25,000 hashes are 1.7 MB). The rest are still bound to the
// record: the placeholders are in the text that went out, whose hash (OutboundHash) it holds.
const MaxPlaceholderHashes = 100

// ZeroHash is the PreviousHash of a chain's first record.
var ZeroHash = hex.EncodeToString(make([]byte, sha256.Size))

// Hash is the hex SHA-256 of s, as records carry hashes of texts.
func Hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// hashBytes is Hash of data.
func hashBytes(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// Encode is r's stored form (its JSON without RecordHash) and the hash of that form. The hash
// is of the bytes stored, not of a re-encoding, so that a reader of another version, which
// may know other fields, computes the same hash.
func Encode(r Record) (data []byte, hash string) {
	r.RecordHash = ""
	data, _ = json.Marshal(r) // a Record always encodes
	return data, hashBytes(data)
}

// Decode reads a stored record and sets its RecordHash to the hash of data.
func Decode(data []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, fmt.Errorf("audit: not a record: %w", err)
	}
	r.RecordHash = hashBytes(data)
	return r, nil
}
