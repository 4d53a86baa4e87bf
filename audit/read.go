package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-serving/sluice/natsbox"
)

// Stored is a record as the stream holds it: its stream sequence and when it was stored.
type Stored struct {
	Record
	StreamSeq uint64    `json:"stream_seq"`
	StoredAt  time.Time `json:"stored_at"`
}

// Query selects records. From and To bound when a record was stored (the stream's time, within
// milliseconds of the record's own timestamp): at or after From, before To; zero is no bound.
// The other fields, when not empty, must equal the record's. Cursor is the stream sequence to
// read from (a Page's Next; 0: the first record, or the first stored at From).
type Query struct {
	From, To                       time.Time
	Status, Tenant, Replica, Route string
	Cursor                         uint64
	// Limit is the most records a page holds (0: 100; at most MaxLimit).
	Limit int
}

// ValidReplica says whether name may name a replica, as a Query's Replica must.
func ValidReplica(name string) bool { return natsbox.ValidReplica(name) }

// MaxLimit is the most records one page may hold; MaxScan the most a page reads to find them.
const (
	MaxLimit = 1000
	MaxScan  = 20000
)

// Page is what a Query found: the records, every chain segment it read (the records the
// filters left out included) as verified, where any broke, and the cursor of the next page
// (0 when no record the query matches follows this one before To, however full the page; when
// the page's MaxScan runs out first, the cursor, though its page may be empty).
type Page struct {
	Records  []Stored
	Segments []Segment
	Breaks   []Break
	// Verified: every segment read verified, each linked to the record before it.
	Verified bool
	Scanned  int
	Next     uint64
}

// Read runs q against the stream. Each replica's first record in the page is checked against
// the replica's record before the page, so that a record removed or changed just before the
// cursor still shows as a break.
func Read(ctx context.Context, box *natsbox.Box, q Query) (Page, error) {
	if q.Limit <= 0 {
		q.Limit = 100
	}
	q.Limit = min(q.Limit, MaxLimit)
	filter := subjects
	if q.Replica != "" {
		filter = Subject(q.Replica)
	}
	c, err := newChecker(ctx, box)
	if err != nil {
		return Page{}, err
	}
	from := q.Cursor
	if from == 0 && !q.From.IsZero() {
		if from, err = box.SeqAt(ctx, Stream, filter, q.From); err != nil {
			return Page{}, err
		}
		if from == 0 {
			return Page{Verified: true}, nil // nothing stored since
		}
	}
	from = max(from, 1)
	before, err := box.LastBefore(ctx, Stream, filter, from)
	if err != nil {
		return Page{}, err
	}
	for _, m := range before {
		if r, err := Decode(m.Data); err == nil {
			c.Seed(r)
		}
	}
	page := Page{Records: []Stored{}}
	next := from
	for page.Scanned < MaxScan {
		msgs, after, more, err := box.DirectBatch(ctx, Stream, next, min(256, MaxScan-page.Scanned), filter)
		if err != nil {
			return Page{}, err
		}
		for i, m := range msgs {
			if !q.To.IsZero() && !m.Time.Before(q.To) {
				return page.finish(c, 0), nil
			}
			next = m.Sequence + 1
			page.Scanned++
			r, brk := c.Check(m.Sequence, m.Subject, m.Data)
			if brk != nil {
				page.Breaks = append(page.Breaks, *brk)
			}
			if brk == nil || brk.Reason != "not_a_record" {
				if q.matches(r, m.Time) {
					page.Records = append(page.Records, Stored{Record: r, StreamSeq: m.Sequence, StoredAt: m.Time})
				}
			}
			if len(page.Records) == q.Limit {
				next, err := q.following(ctx, box, filter, next, msgs[i+1:], more, MaxScan-page.Scanned)
				if err != nil {
					return Page{}, err
				}
				return page.finish(c, next), nil
			}
		}
		if !more || len(msgs) == 0 {
			return page.finish(c, 0), nil
		}
		next = after
	}
	// The scan ran out before the query's range did: whether a record of it follows is not
	// known, so the cursor is given (its page may be empty).
	return page.finish(c, next), nil
}

// following is the cursor of the page after a full one that stopped before next: next, unless
// no record the query matches follows it (0), so that a page that fills exactly to its limit
// with the query's last record says there is nothing more to read. Only records the query
// matches count: a tenant reading its own records must not learn from the cursor whether
// another tenant stored one after them. rest are the records read already past the page; more
// says whether the stream holds any beyond them; budget is what is left of the page's MaxScan
// for looking ahead, past which the cursor is given unasked (its page may be empty). These
// records are not part of the page: its checks and counts leave them to the next page.
func (q Query) following(ctx context.Context, box *natsbox.Box, filter string, next uint64, rest []*jetstream.RawStreamMsg, more bool, budget int) (uint64, error) {
	at := next
	for {
		for _, m := range rest {
			if budget == 0 {
				return next, nil
			}
			budget--
			if !q.To.IsZero() && !m.Time.Before(q.To) {
				return 0, nil
			}
			if r, err := Decode(m.Data); err == nil && q.matches(r, m.Time) {
				return next, nil
			}
			at = m.Sequence + 1
		}
		switch {
		case !more:
			return 0, nil
		case budget == 0:
			return next, nil
		}
		var err error
		if rest, at, more, err = box.DirectBatch(ctx, Stream, at, min(256, budget), filter); err != nil {
			return 0, err
		}
		if len(rest) == 0 {
			return 0, nil
		}
	}
}

func (p Page) finish(c *Checker, next uint64) Page {
	p.Segments, p.Next, p.Verified = c.Segments(), next, len(p.Breaks) == 0
	return p
}

func (q Query) matches(r Record, stored time.Time) bool {
	return (q.From.IsZero() || !stored.Before(q.From)) && (q.Status == "" || r.Status == q.Status) &&
		(q.Tenant == "" || r.Tenant == q.Tenant) && (q.Route == "" || r.Route == q.Route)
}

// newChecker is a Checker for the stream as it is now: trimmed when it has lost records to
// its retention limits.
func newChecker(ctx context.Context, box *natsbox.Box) (*Checker, error) {
	st, err := box.JetStream().Stream(ctx, Stream)
	if err != nil {
		return nil, fmt.Errorf("audit: stream %s: %w", Stream, err)
	}
	info := st.CachedInfo()
	// With deletes denied, a first sequence past 1 means the limits removed the oldest.
	return &Checker{Subject: Subject, Trimmed: info.State.FirstSeq > 1}, nil
}

// Report is a whole stream verified: how many records, each replica's chain, and every break
// (the first MaxBreaks of them).
type Report struct {
	Records  int
	FirstSeq uint64
	LastSeq  uint64
	Trimmed  bool
	Chains   []Segment
	Breaks   []Break
}

// MaxBreaks bounds the breaks a Report lists.
const MaxBreaks = 1000

// Verify reads the whole stream and checks every replica's chain.
func Verify(ctx context.Context, box *natsbox.Box) (Report, error) {
	c, err := newChecker(ctx, box)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Trimmed: c.Trimmed}
	next := uint64(1)
	for {
		msgs, after, more, err := box.DirectBatch(ctx, Stream, next, 1024, subjects)
		if err != nil {
			return Report{}, err
		}
		for _, m := range msgs {
			if rep.FirstSeq == 0 {
				rep.FirstSeq = m.Sequence
			}
			rep.LastSeq = m.Sequence
			rep.Records++
			if _, brk := c.Check(m.Sequence, m.Subject, m.Data); brk != nil && len(rep.Breaks) < MaxBreaks {
				rep.Breaks = append(rep.Breaks, *brk)
			}
		}
		if !more || len(msgs) == 0 {
			break
		}
		next = after
	}
	rep.Chains = c.Segments()
	return rep, nil
}

// Read runs q against the stream the Log appends to (Read).
func (l *Log) Read(ctx context.Context, q Query) (Page, error) { return Read(ctx, l.box, q) }
