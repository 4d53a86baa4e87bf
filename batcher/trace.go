package batcher

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracerName is the instrumentation scope of the batcher's spans.
const tracerName = "github.com/sluice-serving/sluice/batcher"

// trace records, under each traced member's span, where its request spent its time: waiting
// in its queue (sluice.queue) and in its batch's engine pass (sluice.engine_pass), placed at
// the times they happened. A batch is shared, so each member sees the pass as its own child,
// with the batch's size. The tracer is the caller's span's own (OpenTelemetry's way for a
// library), so the batcher needs no tracing setup and costs nothing with tracing off.
func (b *Batcher[In, Out]) trace(bt *batch[In, Out], start, end time.Time, err error) {
	for _, r := range bt.members {
		if r.traced == nil {
			continue
		}
		tr := r.traced.TracerProvider().Tracer(tracerName)
		ctx := trace.ContextWithSpan(context.Background(), r.traced)
		_, q := tr.Start(ctx, "sluice.queue", trace.WithTimestamp(r.enqueued),
			trace.WithAttributes(attribute.String("sluice.queue", b.name), attribute.String("sluice.priority", r.prio.String())))
		q.End(trace.WithTimestamp(start))
		_, pass := tr.Start(ctx, "sluice.engine_pass", trace.WithTimestamp(start),
			trace.WithAttributes(attribute.Int("sluice.batch_requests", len(bt.members)), attribute.Int("sluice.batch_sequences", bt.seqs),
				attribute.Int("sluice.batch_padded_tokens", bt.padded)))
		if err != nil {
			pass.SetStatus(codes.Error, "the batch failed")
		}
		pass.End(trace.WithTimestamp(end))
	}
}
