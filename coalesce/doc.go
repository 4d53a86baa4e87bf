// Package coalesce runs one call for identical requests in flight at once: the first caller
// with a key starts the work, callers with the same key while it runs wait for its result,
// and each gets the same value or error.
//
// A caller that leaves (its context ends) leaves alone: the work goes on for the others, under
// a context of its own that ends only when every caller has left. So one client hanging up
// never cancels another's answer, and work nobody waits for any more stops. A call that
// panics panics in each caller waiting for it, on the caller's own goroutine; one that panics
// after every caller left is told to Group.Unheard.
//
//	var g coalesce.Group[result]
//	v, shared, err := g.Do(ctx, key, func(ctx context.Context) (result, error) { ... })
//
// The key must hold everything the result depends on (who asks, what, with which options): a
// collision gives one caller another's answer.
package coalesce
