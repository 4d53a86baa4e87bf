package audit

import (
	"fmt"
	"strings"
)

// Break is a place where a chain does not verify: the record at StreamSeq (its replica's
// record Seq, as it claims) does not follow the one before it, or is not a record at all.
type Break struct {
	Replica   string `json:"replica"`
	StreamSeq uint64 `json:"stream_seq"`
	Seq       uint64 `json:"seq"`
	// Reason is one of: not_a_record, wrong_replica, previous_hash (it does not name the hash
	// of the record before it), sequence (a record is missing or repeated before it),
	// missing_start (its chain starts after record 1 while the stream has lost nothing to its
	// retention limits).
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Segment is one replica's records in a verified range: how many, its first and last record
// Seq, and where it broke first (nil when it verified).
type Segment struct {
	Replica  string `json:"replica"`
	Records  int    `json:"records"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	// Trimmed: the segment starts after records that the stream's retention removed, so its
	// first link could not be checked.
	Trimmed  bool   `json:"trimmed,omitempty"`
	Verified bool   `json:"verified"`
	Break    *Break `json:"break,omitempty"`
}

// head is where a replica's chain stands in a Checker.
type head struct {
	seq  uint64
	hash string
}

// Checker follows every replica's chain through stored records read in stream order (each
// replica publishes its records in chain order over one connection, so the stream holds them
// in that order). It is not safe for concurrent use.
type Checker struct {
	// Subject maps a replica to its subject, to check that a record lies where its replica
	// writes.
	Subject func(replica string) string
	// Trimmed says the stream has lost records to its retention limits, so a chain may start
	// past its first record without a break.
	Trimmed bool

	heads    map[string]head
	segments map[string]*Segment
	order    []string
}

// Seed makes r (a record before the range about to be checked) the head of its chain: the
// range's first record of that replica must follow it.
func (c *Checker) Seed(r Record) {
	c.init()
	c.heads[r.Replica] = head{r.Seq, r.RecordHash}
}

func (c *Checker) init() {
	if c.heads == nil {
		c.heads, c.segments = map[string]head{}, map[string]*Segment{}
	}
}

// Check reads the stored record data found at streamSeq on subject and checks it against its
// chain; it returns the record (its RecordHash computed) and its break, if it has one.
func (c *Checker) Check(streamSeq uint64, subject string, data []byte) (Record, *Break) {
	c.init()
	r, err := Decode(data)
	replica := r.Replica
	if err != nil || replica == "" {
		replica = subjectReplica(subject)
	}
	seg := c.segment(replica)
	seg.Records++
	brk := func(reason, detail string) (Record, *Break) {
		b := &Break{Replica: replica, StreamSeq: streamSeq, Seq: r.Seq, Reason: reason, Detail: detail}
		if seg.Break == nil {
			seg.Break = b
		}
		seg.Verified = false
		if err == nil {
			// The chain goes on from what this record says it is: one bad record is one break,
			// not a break at every record after it.
			c.heads[replica] = head{r.Seq, r.RecordHash}
		}
		return r, b
	}
	if err != nil {
		return brk("not_a_record", "the message does not decode as a record")
	}
	if seg.Records == 1 {
		seg.FirstSeq = r.Seq
	}
	seg.LastSeq = max(seg.LastSeq, r.Seq)
	if c.Subject != nil && c.Subject(r.Replica) != subject {
		return brk("wrong_replica", fmt.Sprintf("a record of replica %q on subject %s", r.Replica, subject))
	}
	h, seen := c.heads[replica]
	switch {
	case !seen && r.Seq == 1 && r.PreviousHash == ZeroHash:
	case !seen && r.Seq == 1:
		return brk("previous_hash", "the chain's first record names a record before it")
	case !seen && c.Trimmed:
		seg.Trimmed = true // its predecessors aged out: its first link cannot be checked
	case !seen:
		return brk("missing_start", fmt.Sprintf("the chain starts at record %d, and the stream has lost nothing to retention", r.Seq))
	case r.Seq != h.seq+1:
		return brk("sequence", fmt.Sprintf("record %d follows record %d", r.Seq, h.seq))
	case r.PreviousHash != h.hash:
		return brk("previous_hash", fmt.Sprintf("record %d does not name the hash of record %d before it", r.Seq, h.seq))
	}
	c.heads[replica] = head{r.Seq, r.RecordHash}
	return r, nil
}

func (c *Checker) segment(replica string) *Segment {
	seg, ok := c.segments[replica]
	if !ok {
		seg = &Segment{Replica: replica, Verified: true}
		c.segments[replica] = seg
		c.order = append(c.order, replica)
	}
	return seg
}

// Segments are the replicas seen, in the order first seen.
func (c *Checker) Segments() []Segment {
	out := make([]Segment, 0, len(c.order))
	for _, r := range c.order {
		out = append(out, *c.segments[r])
	}
	return out
}

// subjectReplica is the replica a subject names (its last token).
func subjectReplica(subject string) string {
	return subject[strings.LastIndexByte(subject, '.')+1:]
}
