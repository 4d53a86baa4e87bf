package batcher

import (
	"context"
	"math/bits"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-serving/sluice/admission"
)

// A request sits in two intrusive lists at once: the arrival-order list, which gives the oldest
// request in O(1), and its length bucket's list, which gives companions of similar length.
// Intrusive links make removal O(1) without a map or an allocation per list entry, which is
// what lets a cancelled request leave the queue the moment its context ends.
const (
	arrivalLink = 0
	bucketLink  = 1
)

// numBuckets covers MaxLen up to 2^(numBuckets-1); longer lengths share the last bucket.
const numBuckets = 33

type reqState uint8

const (
	stateQueued  reqState = iota // in the queue; only Batcher.mu holders touch it
	stateRunning                 // in a batch handed to a worker
	stateDone                    // answered without running (closed, expired or cancelled)
)

type link[In, Out any] struct{ prev, next *request[In, Out] }

type result[Out any] struct {
	out Out
	err error
}

type request[In, Out any] struct {
	in       In
	cost     Cost
	prio     admission.Priority
	bucket   int
	enqueued time.Time
	// traced is the caller's span when it records (tracing on): the request's time in the
	// queue and in its batch become its children (trace.go).
	traced trace.Span
	// series marks a part of a Series (no batch window); lasting, a part after its first
	// (no QueueSize, no expiry).
	series, lasting bool
	links           [2]link[In, Out]
	state           reqState        // guarded by Batcher.mu
	batch           *batch[In, Out] // set with stateRunning; guarded by Batcher.mu
	// claimed decides, once a batch runs, whether the worker (answer) or the caller (gone)
	// owns the request's outcome.
	claimed atomic.Bool
	// done receives exactly one result; its buffer of one means the sender never waits for a
	// caller who has already gone.
	done chan result[Out]
}

// batch is one dispatched group of requests. live counts members whose callers still wait;
// when the last one leaves, the batch context is cancelled so the runner can stop early.
type batch[In, Out any] struct {
	prio    admission.Priority
	members []*request[In, Out]
	ctx     context.Context
	cancel  context.CancelFunc
	live    atomic.Int32
	seqs    int
	padded  int
	real    int // sum of each member's sequences x its own MaxLen: an upper bound on real tokens
	reason  dispatchReason
}

func (bt *batch[In, Out]) leave() {
	if bt.live.Add(-1) == 0 {
		bt.cancel()
	}
}

type reqList[In, Out any] struct {
	head, tail *request[In, Out]
	n          int
}

func (l *reqList[In, Out]) pushBack(r *request[In, Out], k int) {
	r.links[k] = link[In, Out]{prev: l.tail}
	if l.tail != nil {
		l.tail.links[k].next = r
	} else {
		l.head = r
	}
	l.tail = r
	l.n++
}

func (l *reqList[In, Out]) remove(r *request[In, Out], k int) {
	lk := r.links[k]
	if lk.prev != nil {
		lk.prev.links[k].next = lk.next
	} else {
		l.head = lk.next
	}
	if lk.next != nil {
		lk.next.links[k].prev = lk.prev
	} else {
		l.tail = lk.prev
	}
	r.links[k] = link[In, Out]{}
	l.n--
}

func bucketOf(maxLen int) int {
	b := bits.Len(uint(maxLen - 1))
	if b >= numBuckets {
		b = numBuckets - 1
	}
	return b
}

// limits is what a draft batch may hold.
type limits struct {
	maxSeqs   int
	maxPadded int
	// maxExamined bounds how many candidates one draft looks at, so that a queue full of
	// requests that do not fit costs the loop a constant amount of work per wake-up.
	maxExamined int
}

func newLimits(c Config) limits {
	return limits{maxSeqs: c.MaxBatchSize, maxPadded: c.MaxPaddedTokens, maxExamined: 4*c.MaxBatchSize + 16}
}

// yielding is l for a bulk batch while interactive requests are about: at most seqs sequences,
// and the padded tokens in proportion.
func (l limits) yielding(seqs int) limits {
	if seqs <= 0 || seqs >= l.maxSeqs {
		return l
	}
	l.maxPadded = max(1, l.maxPadded*seqs/l.maxSeqs)
	l.maxSeqs = seqs
	return l
}

// draft is a batch the queue proposes but has not yet given up.
type draft[In, Out any] struct {
	members []*request[In, Out]
	seqs    int
	maxLen  int
	full    bool
}

// roomless reports whether not even one more single-sequence request as long as the current
// longest could join: the batch is as full as the limits allow.
func (d *draft[In, Out]) roomless(lim limits) bool {
	return d.seqs >= lim.maxSeqs || (d.seqs+1)*d.maxLen > lim.maxPadded
}

// queue holds the waiting requests of one priority class of a Batcher. The formation loop only
// pushes, removes, asks for the oldest request and asks for a draft; it keeps one queue per
// class and picks among their drafts by weight. Callers hold Batcher.mu.
type queue[In, Out any] struct {
	arrival reqList[In, Out]
	buckets [numBuckets]reqList[In, Out]
}

func (q *queue[In, Out]) len() int { return q.arrival.n }

func (q *queue[In, Out]) oldest() *request[In, Out] { return q.arrival.head }

// oldestExpiring is the oldest request that MaxQueueWait applies to (see Series.Submit).
func (q *queue[In, Out]) oldestExpiring() *request[In, Out] {
	r := q.arrival.head
	for r != nil && r.lasting {
		r = r.links[arrivalLink].next
	}
	return r
}

func (q *queue[In, Out]) push(r *request[In, Out]) {
	r.bucket = bucketOf(r.cost.MaxLen)
	q.arrival.pushBack(r, arrivalLink)
	q.buckets[r.bucket].pushBack(r, bucketLink)
}

func (q *queue[In, Out]) remove(r *request[In, Out]) {
	q.arrival.remove(r, arrivalLink)
	q.buckets[r.bucket].remove(r, bucketLink)
}

// draft proposes the next batch without removing anything. The oldest request always leads it,
// so no request can starve; companions come from its own power-of-two length bucket first,
// oldest first, then from the shorter neighbour bucket (whose members add no padding to the
// others), then the longer one, while the sequence count and padded-token budget hold. One
// bucket each way keeps the longest sequence within 4x of the shortest, yet lets lengths that
// straddle a power of two (60 and 70, say) share a batch. A lead request that alone exceeds the
// budget makes a full batch by itself. buf is reused to avoid an allocation per wake-up.
func (q *queue[In, Out]) draft(lim limits, buf []*request[In, Out]) draft[In, Out] {
	o := q.arrival.head
	if o == nil {
		return draft[In, Out]{members: buf[:0]}
	}
	d := draft[In, Out]{members: append(buf[:0], o), seqs: o.cost.Sequences, maxLen: o.cost.MaxLen}
	if d.roomless(lim) {
		d.full = true
		return d
	}
	examined := 0
	for _, off := range [...]int{0, -1, 1} {
		bi := o.bucket + off
		if bi < 0 || bi >= numBuckets {
			continue
		}
		for r := q.buckets[bi].head; r != nil; r = r.links[bucketLink].next {
			if r == o {
				continue
			}
			if examined++; examined > lim.maxExamined {
				return d
			}
			seqs := d.seqs + r.cost.Sequences
			maxLen := max(d.maxLen, r.cost.MaxLen)
			if seqs > lim.maxSeqs || seqs*maxLen > lim.maxPadded {
				continue
			}
			d.members = append(d.members, r)
			d.seqs, d.maxLen = seqs, maxLen
			if d.roomless(lim) {
				d.full = true
				return d
			}
		}
	}
	return d
}
