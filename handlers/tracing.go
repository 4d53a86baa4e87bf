package handlers

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/tracing"
)

// Traced is ex with each call a span (sluice.model_request) under the request's: the model's
// name, the windows and tokens it ran and the entities it found, never the text. A nil t
// leaves ex as it is.
func Traced(ex Extractor, t *tracing.Tracer) Extractor {
	if t == nil {
		return ex
	}
	return tracedExtractor{ex, t}
}

type tracedExtractor struct {
	Extractor
	t *tracing.Tracer
}

func (e tracedExtractor) Extract(ctx context.Context, p admission.Priority, text string, opts entities.Options) ([]entities.Entity, extract.Stats, error) {
	ctx, span := e.t.Start(ctx, "sluice.model_request", attribute.String("sluice.model", e.Name()),
		attribute.String("sluice.priority", p.String()), attribute.Int("sluice.text_bytes", len(text)))
	defer span.End()
	ents, st, err := e.Extractor.Extract(ctx, p, text, opts)
	span.SetAttributes(attribute.Int("sluice.windows", st.Windows), attribute.Int("sluice.tokens", st.Tokens),
		attribute.Int("sluice.entities", len(ents)))
	if err != nil {
		span.SetStatus(codes.Error, errorType(err))
	}
	return ents, st, err
}

// span starts a child of ctx's span when tracing is on; off, ctx and a span that records
// nothing, so a caller never asks which.
func (s *server) span(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if s.opts.Tracer == nil {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return s.opts.Tracer.Start(ctx, name, attrs...)
}

// admissionSpan is the span of a request's admission (its budget, then its queue's gate),
// ended by its outcome.
// The end is idempotent: handle defers one that says "failed", for a panic on the way.
func (s *server) admissionSpan(c *fiber.Ctx, r *Route) (end func(outcome string)) {
	if s.opts.Tracer == nil {
		return func(string) {}
	}
	_, span := s.span(c.UserContext(), "sluice.admission", attribute.String("sluice.queue", r.Gate.Queue()))
	ended := false
	return func(outcome string) {
		if ended {
			return
		}
		ended = true
		span.SetAttributes(attribute.String("sluice.admission", outcome))
		if outcome == "failed" {
			span.SetStatus(codes.Error, "")
		}
		span.End()
	}
}

// admissionOutcome names why admission answered err: the client that left, a request the
// server could not read, or what the step refuses for (refused_by_budget, shed).
func admissionOutcome(err error, refused string) string {
	var e *apiError
	if errors.As(err, &e) {
		switch {
		case e.Status == statusClientClosed:
			return "client_closed"
		case e.Status == fiber.StatusBadRequest || e.Status == fiber.StatusUnprocessableEntity:
			return "bad_request"
		}
	}
	return refused
}

// generationSpan is one generation call's span: its aggregates (tokens, sequences, the first
// token's wait) set when it ends, never a span per token.
func (s *server) generationSpan(ctx context.Context, g *genCall) (context.Context, func()) {
	if s.opts.Tracer == nil {
		return ctx, func() {}
	}
	ctx, span := s.span(ctx, "sluice.generation", attribute.String("sluice.model", g.model.Name()))
	return ctx, func() {
		st := g.stats()
		span.SetAttributes(attribute.Int("sluice.sequences", st.seqs), attribute.Float64("sluice.first_token_ms", float64(st.firstToken.Microseconds())/1000))
		if !st.uncounted {
			span.SetAttributes(attribute.Int("sluice.prompt_tokens", st.prompt), attribute.Int("sluice.generated_tokens", st.generated))
		}
		err := g.failed
		if err == nil {
			err = g.unfinished() // a choice that never ended: cut, or failed
		}
		if err != nil {
			if cause := context.Cause(g.ctx); cause != nil && !errors.Is(err, cause) {
				err = cause // a stalled reader's, a departed client's: why it was cut
			}
			span.SetStatus(codes.Error, errorType(err))
		}
		span.End()
	}
}
