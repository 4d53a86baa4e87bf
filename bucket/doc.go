// Package bucket is the token bucket, the one every limit of Sluice counts with: a caller's
// requests and tokens (admission's budgets), a client's failed logins (identity) and the
// refusal lines the access log lets through (handlers).
//
// A Bucket is only state, what it held at an instant; its Limit (the refill rate and the
// size) is passed to every call, so a limit changed by a reload applies from the next call
// on, and time is passed in, so a fake clock drives it in tests. It takes no lock: the owner
// of the bucket holds its own, since a decision often spans several buckets (a request passes
// only when its requests and its tokens buckets both hold enough). A Limit answers the same
// questions of a level read elsewhere (a bucket a fleet keeps in Redis): Limit.Wait and
// Limit.Refill are the one arithmetic of both.
//
//	lim := bucket.Limit{PerSecond: 5, Burst: 10}
//	b := bucket.Full(lim, now)
//	if wait := b.Wait(lim, now, 1); wait > 0 {
//		return refuse(wait)
//	}
//	b.Take(1)
package bucket
