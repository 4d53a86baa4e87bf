// Package upstream is the privacy gateway's external language model: where a redacted prompt
// goes when the answer is not the in-process model's. Two kinds of server are spoken to, both
// through the Go client (client/), so their calls have its retry discipline (Retry-After,
// jittered backoff, a retry budget, never a timeout or a 500 retried) bounded by the request's
// deadline:
//
//   - an OpenAI-compatible API (POST {base}/v1/chat/completions, the prompt as the user's
//     message, a bearer key from a file), Sluice's own setting;
//   - OpenMed's privacy-gateway endpoint (POST to the URL as it is, {"prompt", "request_id",
//     "metadata"}; the answer's text from "text", "response", "content", "completion",
//     "output", or an OpenAI-shaped "choices"), OpenMed's setting.
//
// How to use it:
//
//	u, err := upstream.NewOpenAI(upstream.Config{URL: base, Key: key, Model: "gpt-x"})
//	text, err := u.Complete(ctx, requestID, redactedPrompt, metadata)
//
// Errors never quote the prompt or the answer.
package upstream
