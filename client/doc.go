// Package client is a Go client for Sluice's routes, for the services that call Sluice: the
// entity routes (/analyze, /pii/extract), de-identification (/pii/deidentify) and generation
// (/v1/completions, streamed or not). Its point is retry discipline, so that a fleet of callers
// backs off instead of turning an overload into an outage:
//
//   - it retries only what cannot have run: a refused connection, a 429 and a 503; never a
//     timeout, a 500, a 503 audit_unavailable (sent after the work) or any other answer, and
//     never a stream once its first byte arrived;
//   - it waits what the server said (Retry-After on a 429 or 503: seconds, or an HTTP date
//     on the client's clock; read as a day at most) and sends back the retry
//     reservation the refusal carried (X-Sluice-Retry-Token); without a Retry-After it backs
//     off exponentially with full jitter (a uniform draw up to min(Max, Initial x
//     Multiplier^n); Backoff.Floor narrows it), so refused clients do not return in step;
//   - its retries are budgeted: at most Budget.Ratio of the requests it started in the last
//     Budget.Window (plus Budget.MinPerSecond), so a partial outage is not multiplied by the
//     retries; the check allocates nothing;
//   - every wait ends with the request's context.
//
// How to use it:
//
//	c, err := client.New(client.Config{BaseURL: "http://sluice:8080", APIKey: key})
//	res, err := c.ExtractPII(ctx, client.EntityRequest{Text: note})
//	stream, err := c.CompleteStream(ctx, client.CompletionRequest{Prompt: p, MaxTokens: 64})
//	for stream.Next() { fmt.Print(stream.Text()) }
//	err = stream.Err()
//
// A refusal that is not retried (the attempts or the budget are spent, or the wait would
// outlast MaxRetryAfter) comes back as a *StatusError with its status, code and Retry-After.
//
// A redirect is not followed, whichever http.Client sends the requests (Config.HTTPClient is
// copied), unless that client's own CheckRedirect says otherwise: following one would send the
// key, and on a 307 or 308 the text, wherever its Location points. The 3xx comes back as a
// *StatusError and is not retried.
package client
