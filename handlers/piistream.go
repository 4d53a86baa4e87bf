package handlers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/spanstream"
)

// PIIExtractStream is POST /pii/extract/stream and PIIDeidentifyStream POST
// /pii/deidentify/stream: the PII routes for long texts, as OpenMed's NDJSON streams. The text
// is read window by window (spanstream): extraction streams each span as it is found, taken
// back or made final; de-identification streams the de-identified text of each final part,
// with one date offset, one surrogate per original and one mapping for the whole text. The
// first line leaves after the first window, the work in hand is one window (wider where one
// span fills it, so that no span is cut), a failure after the first line is an error line, and
// a client that leaves stops the work. r keys the audit records' text hashes.
func PIIExtractStream(ep Endpoint, r *deid.Redactor) Route {
	return Route{Path: "/pii/extract/stream", Gate: ep.Gate, Models: ep.models(),
		serve: func(s *server, c *fiber.Ctx, x *exchange) error {
			return s.serveExtractStream(c, x, &ep, r.Scoped(tenantOf(c)))
		}}
}

// PIIDeidentifyStream is POST /pii/deidentify/stream; see PIIExtractStream.
func PIIDeidentifyStream(ep Endpoint, r *deid.Redactor) Route {
	return Route{Path: "/pii/deidentify/stream", Gate: ep.Gate, Models: ep.models(),
		serve: func(s *server, c *fiber.Ctx, x *exchange) error {
			return s.serveDeidentifyStream(c, x, &ep, r.Scoped(tenantOf(c)))
		}}
}

// ndjsonType is the content type of both streams, the one OpenMed's clients require.
const ndjsonType = "application/x-ndjson"

// deidentifyWindow is the de-identification stream's windows: OpenMed's 4,096-character
// buffer, with its extraction stream's default context.
var deidentifyWindow = spanstream.Config{WindowChars: 4096, ContextChars: 128, MaxEntityChars: 512}

type extractStreamRequest struct {
	Text                  *string         `json:"text"`
	ModelName             *string         `json:"model_name"`
	ConfidenceThreshold   json.RawMessage `json:"confidence_threshold"`
	UseSmartMerging       *bool           `json:"use_smart_merging"`
	Lang                  *string         `json:"lang"`
	NormalizeAccents      *bool           `json:"normalize_accents"`
	KeepAlive             json.RawMessage `json:"keep_alive"`
	ChunkSize             json.RawMessage `json:"chunk_size"`
	WindowChars           json.RawMessage `json:"window_chars"`
	TokenizerContextChars json.RawMessage `json:"tokenizer_context_chars"`
	MaxEntityChars        json.RawMessage `json:"max_entity_chars"`
	IncludeText           *bool           `json:"include_text"`
	AllowList             json.RawMessage `json:"allow_list"`
	DenyList              json.RawMessage `json:"deny_list"`
}

type deidentifyStreamRequest struct {
	deidentifyRequest
	ChunkSize json.RawMessage `json:"chunk_size"`
}

// intField reads an optional integer field within [lo, hi]; def when absent.
func intField(raw json.RawMessage, name string, def, lo, hi int, errs *fieldErrors) int {
	v := bytes.TrimSpace(raw)
	if len(v) == 0 {
		return def
	}
	field := "body." + name
	var f float64
	if string(v) == "null" || json.Unmarshal(v, &f) != nil {
		errs.add(&FieldError{Field: field, Message: "Input should be a valid integer", Type: "int_type"})
		return def
	}
	switch {
	case f < float64(lo):
		errs.add(&FieldError{Field: field, Message: fmt.Sprintf("Input should be greater than or equal to %d", lo), Type: "greater_than_equal"})
	case f > float64(hi):
		errs.add(&FieldError{Field: field, Message: fmt.Sprintf("Input should be less than or equal to %d", hi), Type: "less_than_equal"})
	case f != float64(int64(f)):
		errs.add(&FieldError{Field: field, Message: "Input should be a valid integer, got a number with a fractional part", Type: "int_from_float"})
	default:
		return int(f)
	}
	return def
}

// maxChunkSize is OpenMed's bound on chunk_size. On the extraction stream it only has to be
// valid (spans come as their windows find them); the de-identification stream's chunks are
// chunk_size characters of the text each.
const maxChunkSize = 32768

// maxWindowChars bounds window_chars (OpenMed has no bound; a window is one request's work).
const maxWindowChars = 1 << 20

// streamSpan is a span on the extraction stream; TextHash replaces Text in audit records.
type streamSpan struct {
	ID        string  `json:"id"`
	Label     string  `json:"label"`
	Start     int     `json:"start"`
	End       int     `json:"end"`
	ByteStart int     `json:"byte_start"`
	ByteEnd   int     `json:"byte_end"`
	Score     float64 `json:"score"`
	Text      *string `json:"text,omitempty"`
	TextHash  string  `json:"text_hash,omitempty"`
}

// finalEvent is an extraction stream's last line: its spans always, [] when none.
type finalEvent struct {
	Type        string       `json:"type"`
	FinalSpans  []streamSpan `json:"final_spans"`
	LatencyMS   float64      `json:"latency_ms"`
	WindowChars int          `json:"window_chars"`
	Audit       *finalEvent  `json:"audit,omitempty"`
}

// orNone is spans, or an empty list for none: a list on the wire either way.
func orNone[T any](spans []T) []T {
	if spans == nil {
		return []T{}
	}
	return spans
}

type extractEvent struct {
	Type     string        `json:"type"`
	EntityID string        `json:"entity_id,omitempty"`
	Span     *streamSpan   `json:"span,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Audit    *extractEvent `json:"audit,omitempty"`
}

// errorLine is a stream's last line when it fails after its first: the error envelope's body.
type errorLine struct {
	Type  string       `json:"type"`
	Error errorPayload `json:"error"`
}

// windowRun is the part of a stream that runs the model, window after window: the detector
// spanstream calls, with the sweep, the sources of the spans and the measurements.
type windowRun struct {
	ctx   context.Context
	x     *exchange
	ex    Extractor
	opts  entities.Options
	sweep *entities.SmartMergeConfig // nil: no sweep
	lists *entities.Lists            // the request's allow and deny lists, after the sweep
	// redacting applies the lists for a de-identification (entities.Lists.Redacting).
	redacting bool
	sc        *spanstream.Scanner
	swept     map[int]bool    // byte starts of the spans the sweep added
	recall    entities.Recall // the texts of the spans made final, looked for in later windows
	text      string          // the whole text, which the final spans' offsets are into
	latency   []time.Duration
	stats     entityStats
	clock     func() time.Time
}

func (w *windowRun) detect(ctx context.Context, window string) ([]entities.Entity, error) {
	base := w.sc.Final() // the window starts where the final text ends
	t0 := w.clock()
	ents, st, err := w.ex.Extract(ctx, w.x.prio, window, w.opts)
	w.latency = append(w.latency, w.clock().Sub(t0))
	w.stats.stats.Tokens += st.Tokens
	w.stats.stats.Windows += st.Windows
	w.stats.stats.Inference += st.Inference
	if err != nil {
		return nil, err
	}
	for at := range w.swept {
		if at >= base {
			delete(w.swept, at) // a mark of a span an earlier window's tail had: this one decides
		}
	}
	if w.sweep != nil {
		var added []entities.Entity
		ents, added = w.recall.SafetySweep(window, ents, w.sweep)
		for _, e := range added {
			w.swept[base+e.Start] = true
		}
	}
	// A deny term is a span here, so the cut between one window's final part and the next
	// window never falls inside it; an allowed term of several words that the cut splits is
	// judged by its part in each window, which can only redact more.
	if w.redacting {
		return w.lists.Redacting(window, ents), nil
	}
	return w.lists.Apply(window, ents), nil
}

// next computes the next window and holds the texts of the spans it makes final, to be
// looked for in the windows after: only final ones, as a span of a window's tail may be taken
// back by the next window's fuller reading.
func (w *windowRun) next(ctx context.Context) ([]spanstream.Event, error) {
	events, err := w.sc.Next(ctx)
	for _, ev := range events {
		if ev.Kind == spanstream.Commit {
			w.recall.Hold(w.text, []entities.Entity{ev.Span.Entity})
		}
	}
	return events, err
}

// p99 is the 99th percentile of the windows' model calls, in milliseconds.
func (w *windowRun) p99() float64 {
	if len(w.latency) == 0 {
		return 0
	}
	l := slices.Clone(w.latency)
	slices.Sort(l)
	return float64(l[(len(l)*99+99)/100-1].Microseconds()) / 1000
}

// startStream computes the first window before anything is sent, so that a refusal or a
// failure there is an ordinary error answer; then it commits a 200 NDJSON response whose body
// body writes, and logs the request when the body ends.
func (s *server) startStream(c *fiber.Ctx, x *exchange, w *windowRun, done func(), body func(first []spanstream.Event, out *lineWriter) string) error {
	first, err := w.next(w.ctx)
	if err != nil {
		defer done()
		c.Locals(localStats, &w.stats)
		return s.workError(c, x, w.ctx, err)
	}
	d := s.openStream(c, ndjsonType)
	conn := c.Context().Conn()
	c.Context().SetBodyStreamWriter(func(bw *bufio.Writer) {
		defer done()
		out := &lineWriter{w: bw, conn: conn, stall: s.opts.Limits.WriteTimeout}
		if end, ok := w.ctx.Deadline(); ok {
			// The work's last window may end just inside the deadline, its lines still to write
			// to a reader that reads them promptly: the stall limit past it.
			out.end = end.Add(out.stall)
		}
		outcome := s.guarded(x, out, func() string { return body(first, out) })
		s.closeStream(d, outcome, &w.stats)
	})
	return nil
}

// guarded runs a stream's body, which runs outside the handler and its recovery: a panic there
// (a bug) ends the stream with an error line instead of the process. Only the panic's type is
// logged; its value may hold request content.
func (s *server) guarded(x *exchange, out *lineWriter, body func() string) (outcome string) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("stream panicked", slog.String("request_id", x.id),
				slog.String("route", x.route.Path), slog.String("panic_type", fmt.Sprintf("%T", p)))
			if data, err := json.Marshal(errorLine{Type: "error", Error: errorPayload{Code: CodeInternal,
				Message: "Internal server error", RequestID: x.id}}); err == nil {
				_ = out.line(data)
			}
			outcome = OutcomeFailed
		}
	}()
	return body()
}

// streamFailed ends a stream whose work failed after its first line: an error line, unless
// the client is the one that went away. before, when not nil, sees the outcome first (an
// audited stream stores its record).
func (s *server) streamFailed(x *exchange, ctx context.Context, out *lineWriter, err error, before func(outcome string)) string {
	var e *apiError
	if ref, ok := refuseUnbooked(x, err); ok {
		// A later window the queue had no room or time for: refused, as the first would have
		// been (counted so, and not logged as a failure), with no reservation, since no
		// client can bring one back to a stream under way.
		e = queueRefusal(ref)
	} else {
		e = s.failure(x, ctx, err)
	}
	if before != nil {
		before(e.Outcome)
	}
	if e.Outcome == OutcomeAborted {
		return e.Outcome
	}
	return streamError(x, out, e)
}

func refuseUnbooked(x *exchange, err error) (admission.Refusal, bool) {
	if x.gate == nil {
		return admission.Refusal{}, false
	}
	return x.gate.RefuseUnbooked(x.prio, err)
}

// streamError ends a stream with e's error line, which has the stall limit to be read even
// past the request's deadline: it is the last, and may say that the deadline passed.
func streamError(x *exchange, out *lineWriter, e *apiError) string {
	out.end = time.Time{}
	if data, merr := json.Marshal(errorLine{Type: "error", Error: errorPayload{Code: e.Code, Message: e.Message, Details: e.Details, RequestID: x.id}}); merr == nil {
		_ = out.line(data)
	}
	return e.Outcome
}

// streamGone counts a client the stream could not reach and ends its work.
func (s *server) streamGone(x *exchange, ctx context.Context, err error) string {
	reason := "client_closed"
	if errors.Is(err, errReaderStalled) {
		reason = "client_stalled"
	}
	s.countAborted(ctx, x.route, reason)
	return OutcomeAborted
}

func (s *server) serveExtractStream(c *fiber.Ctx, x *exchange, ep *Endpoint, r *deid.Redactor) error {
	var req extractStreamRequest
	if aerr := decodeStrict(c.Body(), &req); aerr != nil {
		return aerr
	}
	var errs fieldErrors
	lang := langCode(req.Lang)
	opts := s.piiLangOptions(req.ConfidenceThreshold, req.UseSmartMerging, lang, req.KeepAlive, &errs)
	intField(req.ChunkSize, "chunk_size", 1024, 1, maxChunkSize, &errs)
	cfg := spanstream.Config{
		WindowChars:    intField(req.WindowChars, "window_chars", 4096, spanstream.MinWindowChars, maxWindowChars, &errs),
		ContextChars:   intField(req.TokenizerContextChars, "tokenizer_context_chars", 128, 0, maxWindowChars, &errs),
		MaxEntityChars: intField(req.MaxEntityChars, "max_entity_chars", 512, 1, maxWindowChars, &errs),
	}
	includeText := req.IncludeText == nil || *req.IncludeText
	lists := parseLists(req.AllowList, req.DenyList, &errs)
	if n := lists.LongestDeny(); n > 0 {
		// A deny term the window's end cuts is found whole in the next window only if the
		// window's tail holds it.
		cfg.MaxEntityChars = max(cfg.MaxEntityChars, n)
		if cfg.WindowChars/2 < n {
			errs.add(&FieldError{Field: "body.window_chars", Type: "greater_than_equal",
				Message: fmt.Sprintf("Input should be at least twice the longest deny_list term (%d characters)", n)})
		}
	}
	text, ferr := checkText(req.Text, s.opts.Limits)
	errs.add(ferr)
	model, ferr := ep.resolveLang(req.ModelName, lang, s.opts.Pool != nil)
	errs.add(ferr)
	if len(errs) > 0 {
		return validationError(errs...)
	}
	ex, release, err := s.lendChoice(c, x, &model, req.KeepAlive)
	if err != nil {
		return err
	}
	ctx, stop := s.workContext(c, x)
	done := func() { stop(); release() } // the model is lent until the stream ends
	w := &windowRun{ctx: ctx, x: x, ex: ex, opts: opts, lists: lists, text: text, swept: map[int]bool{}, clock: s.opts.Clock.Now,
		stats: entityStats{model: ex.Name()}}
	sc, err := spanstream.New(text, cfg, w.detect)
	if err != nil {
		done() // the fields were checked above: only a bound that drifted gets here
		return validationError(FieldError{Field: "body.window_chars", Message: "Value error, the window settings do not fit together", Type: "value_error"})
	}
	w.sc = sc
	span := func(sp spanstream.Span, audit bool) *streamSpan {
		out := &streamSpan{ID: sp.ID, Label: sp.Label, Start: sp.CharStart, End: sp.CharEnd, ByteStart: sp.Start, ByteEnd: sp.End, Score: sp.Score}
		t := text[sp.Start:sp.End]
		if audit {
			out.TextHash = r.Fingerprint(t)
		} else if includeText {
			out.Text = &t
		}
		return out
	}
	return s.startStream(c, x, w, done, func(first []spanstream.Event, out *lineWriter) string {
		var final, finalAudit []streamSpan
		events := first
		for {
			for _, ev := range events {
				if ev.Kind == spanstream.Commit {
					final = append(final, *span(ev.Span, false))
					finalAudit = append(finalAudit, *span(ev.Span, true))
					w.stats.results++
					continue
				}
				kind, reason := "emit", ""
				if ev.Kind == spanstream.Retract {
					kind, reason = "retract", "span_removed"
					if ev.Reason == spanstream.Updated {
						reason = "span_updated"
					}
				}
				line := extractEvent{Type: kind, EntityID: ev.Span.ID, Span: span(ev.Span, false), Reason: reason,
					Audit: &extractEvent{Type: kind, EntityID: ev.Span.ID, Span: span(ev.Span, true), Reason: reason}}
				data, _ := json.Marshal(line)
				if err := out.line(data); err != nil {
					return s.streamGone(x, ctx, err)
				}
			}
			if sc.Done() {
				break
			}
			var err error
			if events, err = w.next(ctx); err != nil {
				return s.streamFailed(x, ctx, out, err, nil)
			}
		}
		latency, widest := w.p99(), sc.Widest()
		data, _ := json.Marshal(finalEvent{Type: "final", FinalSpans: orNone(final), LatencyMS: latency, WindowChars: widest,
			Audit: &finalEvent{Type: "final", FinalSpans: orNone(finalAudit), LatencyMS: latency, WindowChars: widest}})
		if err := out.line(data); err != nil {
			return s.streamGone(x, ctx, err)
		}
		return OutcomeServed
	})
}

// deidChunk and deidFinal are the de-identification stream's lines.
type deidChunk struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	RedactedText string `json:"redacted_text"`
}

type deidSpan struct {
	Start          int            `json:"start"`
	End            int            `json:"end"`
	EntityType     string         `json:"entity_type"`
	CanonicalLabel string         `json:"canonical_label"`
	Score          float64        `json:"score"`
	Detector       string         `json:"detector"`
	Action         string         `json:"action"`
	Replacement    string         `json:"replacement"`
	ReversibleID   string         `json:"reversible_id,omitempty"`
	TextHash       string         `json:"text_hash"`
	Metadata       map[string]any `json:"metadata"`
}

type deidFinal struct {
	Type    string            `json:"type"`
	Spans   []deidSpan        `json:"spans"`
	Audit   map[string]any    `json:"audit"`
	Mapping map[string]string `json:"mapping,omitempty"`
}

func (s *server) serveDeidentifyStream(c *fiber.Ctx, x *exchange, ep *Endpoint, r *deid.Redactor) (err error) {
	var rec audit.Record
	defer s.auditAtExit(c, x, func(error) audit.Record { return rec }, &err)
	var req deidentifyStreamRequest
	if aerr := decodeStrict(c.Body(), &req); aerr != nil {
		return aerr
	}
	var errs fieldErrors
	chunkChars := intField(req.ChunkSize, "chunk_size", 1024, 1, maxChunkSize, &errs)
	plan, aerr := s.parseDeidentify(&req.deidentifyRequest, ep, errs)
	if aerr != nil {
		return aerr
	}
	rec.InputHash = r.Fingerprint(plan.text)
	ex, release, err := s.lendChoice(c, x, &plan.model, req.KeepAlive)
	if err != nil {
		return err
	}
	rec.Model = ex.Name()
	ctx, stop := s.workContext(c, x)
	done := func() { stop(); release() } // the model is lent until the stream ends
	w := &windowRun{ctx: ctx, x: x, ex: ex, opts: plan.opts, lists: plan.deid.Lists, redacting: true, text: plan.text, swept: map[int]bool{}, clock: s.opts.Clock.Now,
		stats: entityStats{model: ex.Name()}}
	if plan.sweep {
		w.sweep = s.sweepFor(plan.lang)
	}
	sc, err := spanstream.New(plan.text, deidentifyWindow, w.detect)
	if err != nil {
		done()
		return err // a constant that New accepts: a wiring bug, answered 500
	}
	w.sc = sc
	doc := r.Begin(plan.deid)
	text := plan.text
	return s.startStream(c, x, w, done, func(first []spanstream.Event, out *lineWriter) string {
		rec := rec // the handler has returned; the stream keeps its record when it ends
		ended := func(outcome string) {
			rec.Status = outcome
			_, _ = s.keepRecord(x, rec, fiber.StatusOK) // the stream ends failed either way
		}
		defer func() {
			if p := recover(); p != nil {
				ended(OutcomeFailed) // the record of the error line the stream ends with
				panic(p)
			}
		}()
		var spans []deidSpan
		redacted := r.NewFingerprinter()
		from, index, events := 0, 0, first
		at, atCP := 0, 0 // a running count of code points, for the spans' offsets
		points := func(b int) int {
			atCP += utf8.RuneCountInString(text[at:b])
			at = b
			return atCP
		}
		var pending []entities.Entity // final spans not yet in a chunk, at their bytes in text
		var applied []deid.Redaction  // every chunk's, for the methods the audit names
		// emit de-identifies text[from:cut] with its final spans as the next chunk.
		emit := func(cut int) error {
			var part []entities.Entity
			kept := pending[:0]
			for _, sp := range pending {
				if sp.End <= cut {
					part = append(part, entities.Entity{Start: sp.Start - from, End: sp.End - from, Label: sp.Label, Score: sp.Score})
				} else {
					kept = append(kept, sp)
				}
			}
			pending = kept
			piece, reds := doc.Redact(text[from:cut], from, part)
			applied = append(applied, reds...)
			from = cut
			for _, red := range reds {
				start := points(red.Start)
				end := start + utf8.RuneCountInString(text[red.Start:red.End])
				detector := "ml"
				switch {
				case red.Label == entities.DenyLabel:
					detector = "deny_list"
				case w.swept[red.Start]:
					detector = "safety_sweep"
				}
				ds := deidSpan{Start: start, End: end, EntityType: red.Label, CanonicalLabel: red.Canonical,
					Score: red.Score, Detector: detector, Action: string(red.Method), Replacement: red.Replacement,
					ReversibleID: red.ReversibleID, TextHash: r.Fingerprint(text[red.Start:red.End]), Metadata: map[string]any{}}
				if red.PolicyAction != "" {
					ds.Metadata["policy_action"] = map[string]any{"policy": plan.policy.Name,
						"schema_version": deid.PolicySchemaVersion, "action": string(red.PolicyAction), "source": "policy_profile"}
				}
				spans = append(spans, ds)
				w.stats.results++
			}
			if piece == "" {
				return nil
			}
			redacted.WriteString(piece)
			data, _ := json.Marshal(deidChunk{Type: "chunk", Index: index, RedactedText: piece})
			index++
			return out.line(data)
		}
		for {
			// The text final so far goes out in chunks of chunk_size characters, each
			// de-identified with its final spans; the rest waits for more of the text.
			to := sc.Final()
			for _, ev := range events {
				if ev.Kind == spanstream.Commit {
					pending = append(pending, ev.Span.Entity)
				}
			}
			for from < to {
				cut, whole := chunkEnd(text, from, to, chunkChars, pending)
				if !whole && !sc.Done() {
					break
				}
				if err := emit(cut); err != nil {
					ended(OutcomeAborted)
					return s.streamGone(x, ctx, err)
				}
			}
			if sc.Done() {
				break
			}
			var err error
			if events, err = w.next(ctx); err != nil {
				return s.streamFailed(x, ctx, out, err, ended)
			}
		}
		inputHash := r.Fingerprint(text)
		audit := map[string]any{
			"doc_id": inputHash, "input_text_hash": inputHash, "redacted_text_hash": redacted.String(),
			"model_name": plan.model.reported, "language": plan.lang, "method": deid.Used(applied, plan.deid.Method), "span_count": len(spans),
			"stream": map[string]any{"chunks": index, "windows": sc.Windows(), "window_chars": sc.Widest()},
		}
		if p := plan.policy; p != nil {
			audit["policy"] = p.Name
		}
		if plan.deid.Subject != "" {
			audit["subject_scope"] = subjectScope(r)
		}
		rec.Method, rec.OutputHash, rec.Entities = deid.Used(applied, plan.deid.Method), redacted.String(), redactedKinds(applied)
		rec.Status = OutcomeServed
		if _, e := s.keepRecord(x, rec, fiber.StatusOK); e != nil {
			return streamError(x, out, e)
		}
		data, _ := json.Marshal(deidFinal{Type: "final", Spans: orNone(spans), Audit: audit, Mapping: doc.Mapping()})
		if err := out.line(data); err != nil {
			return s.streamGone(x, ctx, err)
		}
		return OutcomeServed
	})
}

// chunkEnd is where the chunk of text starting at from ends: chars characters on, moved past
// the end of a span it would cut, so that no replacement is split between chunks. whole is
// false when text[:to] holds less than a whole chunk; the end is then to.
func chunkEnd(text string, from, to, chars int, spans []entities.Entity) (end int, whole bool) {
	end = from
	for n := 0; n < chars; n++ {
		if end >= to {
			return to, false
		}
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
	}
	for moved := true; moved; {
		moved = false
		for _, sp := range spans {
			if sp.Start < end && end < sp.End {
				end, moved = sp.End, true
			}
		}
	}
	return min(end, to), end <= to
}

// lineWriter writes an NDJSON stream's lines, each flushed as it is written. Each write has the
// stall limit to reach the socket: the HTTP server's write timeout, one deadline for a whole
// answer, would cut a long stream its reader is still reading, and a reader that takes
// nothing must still let go of the connection. The stream as a whole ends by end (zero: none),
// its request's deadline, which its work has, and the stall limit after it: a reader that
// takes each line just inside the stall limit, one character's chunk at a time, held the
// stream's model and places for hours.
type lineWriter struct {
	w     *bufio.Writer
	conn  net.Conn
	stall time.Duration
	end   time.Time
}

// line writes one NDJSON line and flushes it; an error means the client has gone, or stopped
// reading (errReaderStalled), or read too slowly for the request's deadline (the same).
func (s *lineWriter) line(data []byte) error {
	deadline := time.Now().Add(s.stall)
	if !s.end.IsZero() && s.end.Before(deadline) {
		deadline = s.end
		if !time.Now().Before(deadline) {
			return errReaderStalled
		}
	}
	if s.conn != nil {
		_ = s.conn.SetWriteDeadline(deadline)
	}
	_, _ = s.w.Write(data)
	_ = s.w.WriteByte('\n')
	err := s.w.Flush()
	if err != nil && !time.Now().Before(deadline) {
		// fasthttp copies the stream to the socket from a pipe, so the socket's deadline
		// error reaches this writer as a closed pipe: the time tells them apart.
		return errReaderStalled
	}
	return err
}

// errReaderStalled is a stream write that the socket did not take within the stall limit.
var errReaderStalled = errors.New("handlers: the stream's reader took nothing for the stall limit")
