package handlers

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

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
