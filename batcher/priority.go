package batcher

import "context"

// Priority is a request's class. Each class waits in its own queue with its own hard capacity
// (Config.QueueSize), and the formation loop picks which class leads the next batch by weight,
// so interactive traffic overtakes bulk without ever starving it.
type Priority uint8

const (
	// Interactive is the default class: a person waits on the answer.
	Interactive Priority = iota
	// Bulk is for work nobody watches (backfills, batch jobs); it yields to Interactive by
	// the dispatch weights but always gets its share.
	Bulk
	// NumPriorities is how many classes exist; arrays indexed by Priority have this length.
	NumPriorities = 2
)

// Priorities lists every class in index order, for label sets and loops.
var Priorities = [NumPriorities]Priority{Interactive, Bulk}

// String returns the class's name as used in headers and metric labels.
func (p Priority) String() string {
	switch p {
	case Interactive:
		return "interactive"
	case Bulk:
		return "bulk"
	default:
		return "unknown"
	}
}

// Valid reports whether p is one of the defined classes.
func (p Priority) Valid() bool { return p < NumPriorities }

type priorityKey struct{}

// WithPriority returns a context that makes Submit queue its request in class p. It lets the
// HTTP layer choose the class without every layer between it and the batcher passing it along.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityFrom returns the class set by WithPriority, or Interactive when none (or an invalid
// one) was set.
func PriorityFrom(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok && p.Valid() {
		return p
	}
	return Interactive
}
