package coalesce

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Group holds the calls in flight. The zero Group is ready to use; it is safe for concurrent
// use.
type Group[V any] struct {
	// Unheard, when set, is told of a panic in a call every caller had left, which no caller
	// is there to panic with (nil: it is dropped). It runs on the call's goroutine; the panic's
	// value may hold what the call read, so it is for its type, not to be logged whole.
	Unheard func(panicValue any)

	mu    sync.Mutex
	calls map[string]*call[V]
}

type call[V any] struct {
	done    chan struct{}
	val     V
	err     error
	waiters int
	cancel  context.CancelFunc
	// deadline is the first caller's, the call's own (zero: none).
	deadline time.Time
	// panicked says fn panicked, with panic: each caller panics with it in its own goroutine,
	// where the caller's recovery (an HTTP handler's) takes it as it would fn's own; on the
	// call's goroutine it would end the process.
	panicked bool
	panic    any
}

// Waiters counts the callers waiting on calls in flight, every key's: a test's way to know
// that every caller has joined before a call ends.
func (g *Group[V]) Waiters() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, c := range g.calls {
		n += c.waiters
	}
	return n
}

// Do returns fn's result for key: from a call already in flight for it (shared is true), or
// from one it starts. fn runs under a context that keeps ctx's values and deadline (the
// caller's that started it) and ends when every caller waiting for it has left; a caller that
// joined, with a later deadline than the call's, runs fn once on its own when the call runs
// out of time. If ctx ends first, Do returns ctx's error and the call goes on for the others.
func (g *Group[V]) Do(ctx context.Context, key string, fn func(ctx context.Context) (V, error)) (v V, shared bool, err error) {
	g.mu.Lock()
	if g.calls == nil {
		g.calls = map[string]*call[V]{}
	}
	c, shared := g.calls[key]
	if shared {
		c.waiters++
	} else {
		work, cancel := context.WithCancel(context.WithoutCancel(ctx))
		if d, ok := ctx.Deadline(); ok {
			// So that fn can tell work that cannot finish in time, as it could alone.
			cancel()
			work, cancel = context.WithDeadline(context.WithoutCancel(ctx), d)
		}
		c = &call[V]{done: make(chan struct{}), waiters: 1, cancel: cancel}
		c.deadline, _ = ctx.Deadline()
		g.calls[key] = c
		go func() {
			defer func() {
				r := recover()
				g.mu.Lock()
				if r != nil {
					c.panicked, c.panic = true, r
				}
				if g.calls[key] == c {
					delete(g.calls, key) // callers from now on start afresh
				}
				unheard := r != nil && c.waiters == 0 // else the last caller to leave tells it
				g.mu.Unlock()
				if unheard {
					g.unheard(r)
				}
				cancel()
				close(c.done)
			}()
			c.val, c.err = fn(work)
		}()
	}
	g.mu.Unlock()
	select {
	case <-c.done:
		if c.panicked {
			panic(c.panic)
		}
		if shared && errors.Is(c.err, context.DeadlineExceeded) && ctx.Err() == nil && !c.deadline.IsZero() {
			if mine, ok := ctx.Deadline(); !ok || mine.After(c.deadline) {
				// The call ran out of its first caller's time, and this caller has more: once, a
				// call under its own (not joined: that one might again end before it).
				v, err := fn(ctx)
				return v, false, err
			}
		}
		return c.val, shared, c.err
	case <-ctx.Done():
		g.mu.Lock()
		unheard := false
		if c.waiters--; c.waiters == 0 {
			c.cancel() // nobody waits any more: the work stops
			if g.calls[key] == c {
				delete(g.calls, key)
			}
			unheard = c.panicked // it panicked as this last caller left: nobody else will
		}
		p := c.panic
		g.mu.Unlock()
		if unheard {
			g.unheard(p)
		}
		var zero V
		return zero, shared, ctx.Err()
	}
}

func (g *Group[V]) unheard(p any) {
	if g.Unheard != nil {
		g.Unheard(p)
	}
}
