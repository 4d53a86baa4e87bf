// Package gateway keeps a request's PHI inside the process while a language model works on
// it: Redact swaps every span the PII model found for a placeholder, one map per request (the
// same original, in any of the request's texts, is the same placeholder), and a Restorer turns
// the model's output back, piece by piece as it streams.
//
// # How to use it
//
//	m := gateway.NewMap()
//	defer m.Wipe()                              // however the request ends
//	outbound := m.Redact(text, spans)           // spans: byte offsets and labels
//	r := m.Restorer()
//	for piece := range model { emit(r.Write(piece)) }
//	emit(r.Flush())
//	r.Invented()                                // placeholders the model made up, masked
//
// Placeholders are "[" + the label's canonical kind + "_" + a number + "]" ("[PERSON_1]"):
// capitals, digits and underscores between brackets, which a model copies whole. A Restorer
// holds back text from a "[" for as long as what follows could still become a placeholder, so a
// placeholder cut anywhere across pieces is never emitted half, and restores it once complete.
// A complete placeholder that the map does not hold (the model invented or mangled it into
// another number) is written as "[REDACTED]" and counted: it is never guessed at, and never
// restored to another span's original. Text in brackets that is not a placeholder passes as
// it is, and so does a placeholder the request's own texts already held (Reserve; Redact
// reserves its own text's): no original is given its number, so a pasted "[PERSON_1]" never
// comes back as this request's original.
//
// A Session (session.go) is one request through the gateway, its whole policy in one place:
// Begin opens it; Screen judges the spans found by the Policy (confidence, disallowed
// categories), Redact swaps them, Send is the outbound tripwire, Restore or Piece turns the
// answer back (one rule for invented placeholders: an answer judged whole is rejected, a
// streamed one has them masked), and Forward or End ends its audit record (package audit's,
// hashes and counts), with a typed Status and Reason, and wipes the map. The HTTP layer
// stores the record and words the outcome.
//
// The map lives in memory only: nothing in this package logs, counts by value or returns an
// error holding an original.
package gateway
