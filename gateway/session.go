package gateway

import (
	"maps"
	"slices"
	"strings"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
)

// Policy is what a request's text may hold and still go out. A span scored at or above Floor
// and below MinConfidence refuses the request (the model is unsure of an identifier it would
// have to redact: better kept in than half-hidden); a span of a Disallowed category (its
// canonical kind or its label, lower case) refuses it too. Every span is redacted whatever its
// score. Name is recorded, never a client's free text.
type Policy struct {
	Name          string
	MinConfidence float64
	Floor         float64
	Disallowed    []string
}

// Record is the policy as the external model is told it (the audit's record, as a map).
func (p Policy) Record() map[string]any {
	return map[string]any{"name": p.Name, "min_confidence": p.MinConfidence,
		"detector_confidence_floor": p.Floor, "disallowed_entity_categories": p.namedCategories()}
}

// audited is the policy as the audit records it.
func (p Policy) audited() *audit.Policy {
	return &audit.Policy{Name: p.Name, MinConfidence: p.MinConfidence, Floor: p.Floor, Disallowed: p.namedCategories()}
}

// namedCategories are the disallowed categories as the record and the external model see
// them: the labels and kinds Sluice knows by name, any other word as "custom" (a client's own
// word may be anything, a patient's name too), sorted, each once. The session still matches
// a model's labels against every category as written.
func (p Policy) namedCategories() []string {
	out := []string{}
	for _, c := range p.Disallowed {
		if !deid.Known(c) {
			c = "custom"
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Status is how a gateway request ended, as its audit record says.
type Status string

const (
	// Forwarded: the redacted text went out and the answer came back restored.
	Forwarded Status = "forwarded"
	// Blocked: the policy or the outbound tripwire kept the text in.
	Blocked Status = "blocked"
	// Rejected: refused as it is: the caller's own mistake (InvalidRequest), or an answer,
	// judged whole, that holds a placeholder the request did not send.
	Rejected Status = "rejected"
	// TransportError: the model did not answer.
	TransportError Status = "transport_error"
	// Failed: the request failed before anything went out (detection, or its own fault).
	Failed Status = "error"
	// Aborted: the client left (or stopped reading) before the answer's end.
	Aborted Status = "aborted"
)

// Reason says why a request was not forwarded, or how its completion failed.
type Reason string

const (
	BelowThreshold     Reason = "redaction_confidence_below_threshold"
	DisallowedCategory Reason = "disallowed_entity_category"
	Tripwire           Reason = "outbound_tripwire_detected"
	Ambiguous          Reason = "ambiguous_messages"
	UnknownPlaceholder Reason = "unknown_placeholder"
	TransportFailed    Reason = "transport_failed"
	CompletionRefused  Reason = "completion_refused"
	CompletionFailed   Reason = "completion_failed"
	DetectionFailed    Reason = "detection_failed"
	DetectionRefused   Reason = "detection_refused"
	InvalidRequest     Reason = "invalid_request"
	ClientClosed       Reason = "client_closed"
	ClientStalled      Reason = "client_stalled"
	NotConfigured      Reason = "gateway_not_configured" // no model to complete with
)

// Refusal is a request the gateway does not let go on; its record is already ended.
type Refusal struct {
	Status Status
	Reason Reason
	// Judged are the spans the policy refused the request for (their labels and scores,
	// never their text), for a refusal by confidence or category.
	Judged []Judged
}

// Judged is a span the policy judged: its label and the model's score.
type Judged struct {
	Label string  `json:"label"`
	Score float64 `json:"score"`
}

func (r *Refusal) Error() string { return "gateway: " + string(r.Status) + ": " + string(r.Reason) }

// Session is one request through the gateway, from the spans found in its text to its audit
// record: Screen judges the spans by the policy, Redact swaps them for placeholders, Send
// checks what is about to leave, Restore (an answer judged whole) or Piece (an answer streamed)
// turns the model's answer back, and Forward or End ends the record and forgets the originals.
// Every refusal ends its record itself. Storing the record (audit.Log.Append, with the
// request's id, route, tenant and HTTP status) is the caller's, before it answers. A Session
// is for one goroutine.
//
// One rule for placeholders the model invented (ones the request did not send), on every face:
// they are never restored to anyone's original. An answer judged whole before any of it leaves
// is rejected (UnknownPlaceholder); a streamed answer, whose earlier pieces have gone, has them
// masked as Masked, and its record counts them.
type Session struct {
	record   audit.Record
	policy   Policy
	m        *Map
	residual func(string) bool
	pieces   map[int]*Restorer        // per piece of text streamed (a choice's content, a call's arguments)
	returned map[int]*strings.Builder // per key: the answer as the model returned it
	hashes   []string                 // every placeholder's hash, once the request has ended
	// sent: the tripwire let the redacted text go out (Send), so that the record says what
	// placeholders it carried however the request ends.
	sent  bool
	ended bool
}

// Begin starts a request's session: completion (local, or the external model's kind) goes in
// its record; residual is the outbound tripwire's independent look for identifiers in a text
// (the pattern sweep), beside the map's own look for its originals.
func Begin(completion string, p Policy, residual func(text string) bool) *Session {
	return &Session{policy: p, m: NewMap(), residual: residual,
		record: audit.Record{Completion: completion, Policy: p.audited(), Entities: map[string]int{}}}
}

// Screen counts the spans found in a text by kind and judges them by the policy; a refusal
// names every span it was refused for.
func (s *Session) Screen(spans []entities.Entity) *Refusal {
	var low, disallowed []Judged
	for _, e := range spans {
		kind := deid.Canonical(e.Label)
		s.record.Entities[kind]++
		if e.Score >= s.policy.Floor && e.Score < s.policy.MinConfidence {
			low = append(low, Judged{Label: e.Label, Score: e.Score})
		}
		if s.disallows(kind, e.Label) {
			disallowed = append(disallowed, Judged{Label: e.Label, Score: e.Score})
		}
	}
	switch {
	case len(disallowed) > 0:
		ref := s.refuse(Blocked, DisallowedCategory)
		ref.Judged = disallowed
		return ref
	case len(low) > 0:
		ref := s.refuse(Blocked, BelowThreshold)
		ref.Judged = low
		return ref
	}
	return nil
}

// Also counts spans a second look found beside the model's and judges them by the policy's
// categories (not by confidence: a rule's score is not the model's).
func (s *Session) Also(spans []entities.Entity) *Refusal {
	var disallowed []Judged
	for _, e := range spans {
		kind := deid.Canonical(e.Label)
		s.record.Entities[kind]++
		if s.disallows(kind, e.Label) {
			disallowed = append(disallowed, Judged{Label: e.Label, Score: e.Score})
		}
	}
	if len(disallowed) > 0 {
		ref := s.refuse(Blocked, DisallowedCategory)
		ref.Judged = disallowed
		return ref
	}
	return nil
}

// disallows says whether the policy refuses a span of this kind or label.
func (s *Session) disallows(kind, label string) bool {
	return slices.Contains(s.policy.Disallowed, strings.ToLower(kind)) || slices.Contains(s.policy.Disallowed, strings.ToLower(label))
}

// Counts are the spans screened so far, by kind.
func (s *Session) Counts() map[string]int { return s.record.Entities }

// Reserve notes the placeholders the request's texts already hold (Map.Reserve), before any
// of them is redacted.
func (s *Session) Reserve(texts ...string) { s.m.Reserve(texts...) }

// Redact is text with its spans replaced by the session's placeholders.
func (s *Session) Redact(text string, spans []entities.Entity) string { return s.m.Redact(text, spans) }

// Send is the tripwire before payload leaves: none of texts (the redacted texts it carries)
// may still hold an identifier or an original the session replaced elsewhere. The payload's
// hash is recorded.
func (s *Session) Send(payload string, texts ...string) *Refusal {
	s.record.OutboundHash = audit.Hash(payload)
	for _, t := range texts {
		if (s.residual != nil && s.residual(t)) || s.m.Contains(t) {
			return s.refuse(Blocked, Tripwire)
		}
	}
	s.sent = true
	return nil
}

// Part is a text of an answer to restore: a choice's content, or a tool call's arguments.
// JSON marks a text that is JSON (an answer held to a schema, a call's arguments), where an
// original goes back escaped, so that the document stays valid.
type Part struct {
	Text string
	JSON bool
}

// Restore is an answer judged whole, each of its choices' text, with the originals back; an
// answer with an invented placeholder in any choice is rejected.
func (s *Session) Restore(choices ...string) ([]string, *Refusal) {
	parts := make([]Part, len(choices))
	for i, c := range choices {
		parts[i] = Part{Text: c}
	}
	return s.RestoreParts(parts...)
}

// RestoreParts is Restore over the texts of an answer, each as its part says.
func (s *Session) RestoreParts(parts ...Part) ([]string, *Refusal) {
	var all strings.Builder
	out := make([]string, len(parts))
	for i, p := range parts {
		all.WriteString(p.Text)
		r := s.m.restorer(p.JSON)
		out[i] = r.Write(p.Text) + r.Flush()
		s.record.Invented += r.invented
	}
	s.record.ReturnedHash = audit.Hash(all.String())
	if s.record.Invented > 0 {
		return nil, s.refuse(Rejected, UnknownPlaceholder)
	}
	return out, nil
}

// Piece is the next piece of a streamed answer's text key (a choice's content, or one of its
// calls' arguments: the caller numbers them) with the originals back, as much of it as is
// certain: a placeholder cut across pieces waits until it is whole; last releases the rest.
// json says the text is JSON (Part.JSON).
func (s *Session) Piece(key int, piece string, last, json bool) string {
	r, ok := s.pieces[key]
	if !ok {
		if s.pieces == nil {
			s.pieces, s.returned = map[int]*Restorer{}, map[int]*strings.Builder{}
		}
		r = s.m.restorer(json)
		s.pieces[key], s.returned[key] = r, &strings.Builder{}
	}
	s.returned[key].WriteString(piece)
	out := r.Write(piece)
	if last {
		out += r.Flush()
	}
	return out
}

// Forward ends a request whose answer goes out, and its record.
func (s *Session) Forward() audit.Record {
	if !s.ended {
		s.sent = true
	}
	return s.End(Forwarded, "")
}

// PlaceholderHashes are the SHA-256s of every placeholder an ended request sent, in their
// sorted order: its record holds the first audit.MaxPlaceholderHashes of them.
func (s *Session) PlaceholderHashes() []string { return s.hashes }

// End ends the request's record with status and reason and forgets the originals; it returns
// the record. Only the first call does anything. A request whose redacted text went out
// records its placeholders, whatever its end (an answer that failed, or that its client
// left, included): they are what outbound_hash's text carried.
func (s *Session) End(status Status, reason Reason) audit.Record {
	if s.ended {
		return s.record
	}
	s.ended = true
	if s.sent {
		for _, p := range s.m.Placeholders() {
			s.hashes = append(s.hashes, audit.Hash(p))
		}
		s.record.Placeholders = len(s.hashes)
		s.record.PlaceholderHashes = slices.Clip(s.hashes[:min(len(s.hashes), audit.MaxPlaceholderHashes)])
	}
	if len(s.returned) > 0 {
		var all strings.Builder
		// In the keys' order (choice, then call), not as they came: the hash of a streamed
		// answer of several choices does not depend on which choice wrote first.
		for _, key := range slices.Sorted(maps.Keys(s.returned)) {
			all.WriteString(s.returned[key].String())
		}
		s.record.ReturnedHash = audit.Hash(all.String())
		for _, p := range s.pieces {
			s.record.Invented += p.Invented()
		}
	}
	s.m.Wipe()
	s.record.Status, s.record.Reason = string(status), string(reason)
	return s.record
}

// Record is the request's record as it stands: ended (Ended), or still open.
func (s *Session) Record() audit.Record { return s.record }

// Ended says whether End (or Forward, or a refusal) has ended the session.
func (s *Session) Ended() bool { return s.ended }

func (s *Session) refuse(status Status, reason Reason) *Refusal {
	s.End(status, reason)
	return &Refusal{Status: status, Reason: reason}
}
