package handlers

import (
	"context"
	"errors"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/resilience"
)

// Guarded is ex with its calls through g: retried when they fail in the model, refused fast
// (an *resilience.OpenError, answered 503 circuit_breaker_open) while the model's breaker is
// open. A nil g leaves ex as it is.
func Guarded(ex Extractor, g *resilience.Guard) Extractor {
	if g == nil {
		return ex
	}
	return guardedExtractor{ex, g}
}

type guardedExtractor struct {
	Extractor
	g *resilience.Guard
}

func (e guardedExtractor) Extract(ctx context.Context, p admission.Priority, text string, opts entities.Options) (ents []entities.Entity, st extract.Stats, err error) {
	err = e.g.Do(ctx, e.Name(), func(ctx context.Context) error {
		ents, st, err = e.Extractor.Extract(ctx, p, text, opts)
		return err
	})
	return ents, st, err
}

// ModelFailure says whether an extraction's error is the model's, for resilience.New: not a
// refusal for load (its Retry-After says when), not the caller leaving or its deadline, not a
// shutdown, not a text that Sluice's own decoding fails on (extract.ErrDecoding: one text
// would otherwise open the breaker for every caller).
func ModelFailure(err error) bool {
	return !errors.Is(err, extract.ErrDecoding) && !errors.Is(err, admission.ErrQueueFull) && !errors.Is(err, admission.ErrExpired) &&
		!errors.Is(err, admission.ErrClosed) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}
