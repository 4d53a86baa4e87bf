package scheduler

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/sluice-serving/sluice/kvcache"
)

type seqState uint8

const (
	seqWaiting seqState = iota // in a waiting list (new, or preempted)
	seqRunning                 // in the running set, holding blocks
)

// sequence is one generation inside the scheduler. The loop owns every field except those
// marked otherwise.
type sequence struct {
	id        uint64 // the runner's name for it (stepplan.Row.Seq)
	ctx       context.Context
	req       Request
	promptLen int
	tokens    []int64 // prompt, then generated tokens
	generated int
	table     *kvcache.Table // nil while waiting
	state     seqState       // changes under Scheduler.mu
	preempted bool           // has run before: max queue wait no longer applies
	enqueued  time.Time
	admitted  time.Time
	lastToken time.Time
	// take is how many of its uncached tokens the step in the making computes: all of them,
	// or a chunk of a prompt longer than the step's budget.
	take int
	// bumped counts the times it was preempted for a higher class (Config.PreemptLimit).
	bumped int
	// scorer is the Chooser when it scores the prompt too (then nothing comes from the
	// prefix cache).
	scorer PromptScorer
	// scope is req.CacheScope's prefix cache.
	scope kvcache.Scope

	events     chan Event
	pending    Event // a token event the reader had no room for
	hasPending bool
	pausedAt   time.Time
	paused     atomic.Bool // read by the reader, who pokes the loop when it makes room
	wake       func()      // pokes the loop

	// preparing is set while a Prepare runs (the sequence takes no step), preparedAt is
	// when the last one returned (UnixNano), and prepPanic is set when one panicked, to its
	// value's type: the loop ends it. prepStarted: its request's Prepare has been started
	// (owned by the loop).
	preparing   atomic.Bool
	preparedAt  atomic.Int64
	prepPanic   atomic.Pointer[string]
	prepStarted bool

	// count is generated, readable from any goroutine (the final event's Index).
	count atomic.Int64
	// workLeft is the sequence's share of Scheduler.work: its prompt until first admitted,
	// and its new tokens still to come.
	workLeft atomic.Int64

	ended atomic.Bool   // set once, by whoever ends the sequence
	done  chan struct{} // closed after final is set
	final Event

	abortedAt atomic.Int64  // UnixNano when its context ended; 0 before
	abortStep atomic.Uint64 // the step count then
	// afterAbort counts tokens generated after abortedAt was set.
	afterAbort int
	stopWatch  func() bool

	prev, next *sequence // waiting list links, guarded by Scheduler.mu
}

func newSequence(ctx context.Context, req Request, buffer int, now time.Time, wake func()) *sequence {
	tokens := make([]int64, len(req.Prompt), len(req.Prompt)+req.MaxNewTokens)
	copy(tokens, req.Prompt)
	scorer, _ := req.Chooser.(PromptScorer)
	return &sequence{ctx: ctx, req: req, promptLen: len(req.Prompt), tokens: tokens, enqueued: now,
		events: make(chan Event, buffer), done: make(chan struct{}), wake: wake, scorer: scorer, scope: cacheScope(req.CacheScope)}
}

// read is the reader's side of flow control: a paused sequence may go on now.
func (q *sequence) read() {
	if q.paused.Load() {
		q.wake()
	}
}

// seqList is an intrusive FIFO of waiting sequences. Its owner's lock guards it.
type seqList struct {
	head, tail *sequence
	n          int
}

func (l *seqList) pushBack(q *sequence) {
	q.prev, q.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = q
	} else {
		l.head = q
	}
	l.tail = q
	l.n++
}

func (l *seqList) pushFront(q *sequence) {
	q.prev, q.next = nil, l.head
	if l.head != nil {
		l.head.prev = q
	} else {
		l.tail = q
	}
	l.head = q
	l.n++
}

func (l *seqList) remove(q *sequence) {
	if q.prev != nil {
		q.prev.next = q.next
	} else {
		l.head = q.next
	}
	if q.next != nil {
		q.next.prev = q.prev
	} else {
		l.tail = q.prev
	}
	q.prev, q.next = nil, nil
	l.n--
}

// first is the first sequence in the list for which ok holds, or nil.
func (l *seqList) first(ok func(*sequence) bool) *sequence {
	for q := l.head; q != nil; q = q.next {
		if ok(q) {
			return q
		}
	}
	return nil
}

// holds reports whether q is in the list.
func (l *seqList) holds(q *sequence) bool { return q.prev != nil || l.head == q }

// uncached counts the tokens whose keys and values are not in the sequence's blocks yet.
func (q *sequence) uncached() int { return len(q.tokens) - q.table.Len() }
