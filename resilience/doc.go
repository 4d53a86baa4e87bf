// Package resilience is OpenMed's resilience for model calls: a bounded retry of a call that
// failed in the model (not one refused for load, cancelled or invalid), with exponential
// backoff and jitter, and a circuit breaker per model that, after FailureThreshold failed
// calls in a row, fails calls fast for RecoveryTimeout, then lets one probe through (half
// open): its success closes the breaker, its failure opens it again.
//
// # How to use it
//
//	g, err := resilience.New(cfg, clk, rand.Float64, resilience.NewMetrics(reg)) // cfg: from the environment
//	err = g.Do(ctx, model, func(ctx context.Context) error { ... one model call ... })
//	var open *resilience.OpenError // the breaker is open: answer 503 with its RetryAfter
//
// Which errors are the model's is the caller's to say (Config.Retryable, given at New): a
// refusal for load must neither be retried (its Retry-After says when) nor open a breaker.
package resilience
