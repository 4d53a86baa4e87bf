package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
)

// Status is a job's state: Queued, then Running, then one of the terminal ones.
type Status string

const (
	Queued    Status = "queued"
	Running   Status = "running"
	Done      Status = "done"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

// Terminal says whether no more work is done on a job in status s.
func (s Status) Terminal() bool { return s == Done || s == Failed || s == Cancelled }

// Document is one text of a job, as submitted.
type Document struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	SubjectID string `json:"subject_id,omitempty"`
}

// Webhook is where a finished job is announced, signed with Secret (OpenMed's names).
type Webhook struct {
	URL            string  `json:"url"`
	Secret         string  `json:"secret,omitempty"`
	MaxAttempts    int     `json:"max_attempts"`
	BackoffSeconds float64 `json:"backoff_seconds"`
}

// Spec is a job to create: its documents, the de-identification options every document is
// processed with (opaque here: the Processor reads them), and an optional webhook.
type Spec struct {
	Documents []Document
	Options   json.RawMessage
	// Payer is who the documents are charged to when they run (opaque here: the Processor
	// reads it); nil for nobody.
	Payer   json.RawMessage
	Webhook *Webhook
}

// Span is one redacted span, in code points of its document; TextHash is Hash of its text.
type Span struct {
	DocumentID string  `json:"document_id"`
	Start      int     `json:"start"`
	End        int     `json:"end"`
	Label      string  `json:"label"`
	TextHash   string  `json:"text_hash"`
	Confidence float64 `json:"confidence"`
}

// DocumentInfo describes a processed document without its text.
type DocumentInfo struct {
	ID       string `json:"id"`
	Length   int    `json:"length"`
	TextHash string `json:"text_hash"`
}

// Outcome is what a Processor makes of one document.
type Outcome struct {
	Text  string // the de-identified text
	Spans []Span // DocumentID is filled in by the Manager
	// Settle, when set, is called once by the Manager: true once this result is stored as the
	// document's, false when it is not (its write failed, or an earlier run's is kept).
	Settle func(kept bool)
}

// Work is what a Manager's workers do: Process de-identifies a document, and Fingerprint is
// the text_hash of a tenant's text (a document's; the Processor hashes its spans with the
// same): keyed, since a bare SHA-256 of a name or a short note is a dictionary lookup away
// from it, and results and webhooks leave the server. Nil is Hash, unkeyed, for tests.
type Work struct {
	Process     Processor
	Fingerprint func(tenant, text string) string
}

// Processor de-identifies one document of job (its Tenant, Options and Payer are what it
// reads). An error wrapped by Permanent is the document's own (it counts as failed at once);
// Later puts it back without counting an attempt; any other is retried, up to
// Config.MaxAttempts tries in one process.
type Processor func(ctx context.Context, job *Record, doc Document) (Outcome, error)

type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// Permanent marks err as one that another attempt would repeat.
func Permanent(err error) error { return permanent{err} }

// later is a document that cannot run yet and is no failure: it goes back to the queue for
// after, and the try does not count as an attempt.
type later struct{ after time.Duration }

func (l later) Error() string { return "jobs: the document waits " + l.after.String() }

// Later asks for the document to be tried again after d, without counting an attempt (its
// tenant's budget or the model cannot take it yet).
func Later(d time.Duration) error { return later{d} }

// Delivery is the webhook's delivery state (webhook_delivery).
type Delivery struct {
	Status         string     `json:"status"` // pending, delivered, failed; skipped for a cancelled job
	Attempts       int        `json:"attempts"`
	LastStatusCode int        `json:"last_status_code,omitempty"`
	DeliveredAt    *time.Time `json:"delivered_at,omitempty"`
}

// Record is a job as stored. Tenant, Options, Payer, Webhook, Counted and NoResult are the
// Manager's own; the API shows the rest.
type Record struct {
	ID              string         `json:"id"`
	Status          Status         `json:"status"`
	Durable         bool           `json:"durable"`
	DocumentCount   int            `json:"document_count"`
	ProcessedCount  int            `json:"processed_count"`
	FailedCount     int            `json:"failed_count"`
	LabelHistogram  map[string]int `json:"label_histogram"`
	CreatedAt       time.Time      `json:"created_at"`
	UpdatedAt       time.Time      `json:"updated_at"`
	CompletedAt     *time.Time     `json:"completed_at,omitempty"`
	Error           *string        `json:"error,omitempty"`
	WebhookDelivery *Delivery      `json:"webhook_delivery,omitempty"`

	Tenant  string          `json:"tenant"`
	Options json.RawMessage `json:"options,omitempty"`
	Payer   json.RawMessage `json:"payer,omitempty"`
	Webhook *Webhook        `json:"webhook,omitempty"`
	// Counted has bit i set once document i is counted, so that a document processed twice
	// is counted once.
	Counted []byte `json:"counted"`
	// NoResult has bit i set where document i was counted without a stored result (its tries
	// spent on a full store, which had no room for its failure either): keeping and reading
	// the job's results find none there by design. Nil until one is.
	NoResult []byte `json:"no_result,omitempty"`
	// WebhookClaim is until when one process delivers the webhook: another takes a pending
	// delivery over only once it has passed (the process died, or stopped mid-delivery).
	WebhookClaim *time.Time `json:"webhook_claim,omitempty"`
	// ResultsSince is no later than the last write of any stored result: the job's creation,
	// or when its results were last all written again. They expire Retention after it.
	ResultsSince time.Time `json:"results_since,omitzero"`
}

// resultsFrom is ResultsSince, or the creation of a job stored before it was kept.
func (r *Record) resultsFrom() time.Time {
	if r.ResultsSince.IsZero() {
		return r.CreatedAt
	}
	return r.ResultsSince
}

// ProgressPercent is the share of documents finished, processed or failed.
func (r *Record) ProgressPercent() float64 {
	if r.DocumentCount == 0 {
		return 100
	}
	return float64(r.ProcessedCount+r.FailedCount) * 100 / float64(r.DocumentCount)
}

func (r *Record) counted(i int) bool { return r.Counted[i/8]&(1<<(i%8)) != 0 }
func (r *Record) count(i int)        { r.Counted[i/8] |= 1 << (i % 8) }

func (r *Record) noResult(i int) bool {
	return i/8 < len(r.NoResult) && r.NoResult[i/8]&(1<<(i%8)) != 0
}

func (r *Record) countNoResult(i int) {
	if r.NoResult == nil {
		r.NoResult = make([]byte, len(r.Counted))
	}
	r.NoResult[i/8] |= 1 << (i % 8)
}

// Result is one document's outcome as stored and served by GET /jobs/{id}/results.
type Result struct {
	Index            int    `json:"index"`
	DocumentID       string `json:"document_id"`
	Length           int    `json:"length"`
	TextHash         string `json:"text_hash"`
	DeidentifiedText string `json:"deidentified_text"`
	Spans            []Span `json:"spans"`
	Error            string `json:"error,omitempty"`
}

// Hash is OpenMed's text hash: "sha256:" and the hexadecimal SHA-256 of s. Unkeyed: the
// server's results take Work.Fingerprint instead.
func Hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

// The errors Create, Get, Cancel and Results return, for the API to answer.
var (
	ErrNotFound = errors.New("jobs: no such job")
	// ErrNotFinished: a job's results are served once it is done or failed.
	ErrNotFinished = errors.New("jobs: the job has not finished")
	// ErrExpired: a finished job's results are past Config.Retention (some may be gone); the
	// API answers it as ErrNotFound.
	ErrExpired = errors.New("jobs: the job's results have expired")
)

// Bound is a job refused by one of Config's bounds: Status is the HTTP status it is answered
// with (413, 429 or 503), RetryAfter when to try again (0 for 413).
type Bound struct {
	Status     int
	RetryAfter time.Duration
	Message    string
	// Field is the request's field a 422 is about ("webhook.url"), "" for none.
	Field string
}

func (b *Bound) Error() string { return "jobs: " + b.Message }
