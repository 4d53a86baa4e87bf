package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
)

// ModelPool lends the models a server loads on demand: a model_name that no endpoint serves of
// its own is looked up there (cmd/serve's is a warmpool.Pool over SLUICE_MODELS_DIR).
type ModelPool interface {
	// Lend returns the model called name and the gate that admits its requests, loading it if
	// need be (waiting while ctx lives), and the function to call once the request is done.
	// Its errors are ErrModelUnknown, ErrModelBusy, *ModelTooLargeError and *ModelLoadingError,
	// and admission.ErrClosed once the server stops.
	Lend(ctx context.Context, name string, keep KeepAlive) (Extractor, *admission.Gate, func(), error)
	// Models is every model loaded or loading, by name.
	Models() []PooledModel
	// Unload unloads a model now, unless it is pinned, loading or in use; UnloadAll every one
	// that can be, saying how many, and the requests in flight of those that stay.
	Unload(name string) Unloaded
	UnloadAll() (unloaded int, busy map[string]int)
	// Settings are the pool's limits, for /models/loaded.
	Settings() PoolSettings
}

// KeepAlive is a request's keep_alive: unset (Set false) takes the pool's default.
type KeepAlive struct {
	Set, Forever bool
	For          time.Duration
}

// PooledModel is one model of the pool, as /models/loaded shows it.
type PooledModel struct {
	Name    string
	Loading bool
	// Pinned is a configured model, which its routes list and count: the pool holds it under
	// its configured name, which may not be the routes' (a path's base).
	Pinned bool
	Active int
	// Footprint is what it takes resident, or, while it loads, what it is expected to.
	Footprint int64
	// MaxLength is the loaded model's longest input in tokens (0 while it loads).
	MaxLength int
	// KeepAliveLeft is how long it stays idle before it is unloaded; nil: no deadline.
	KeepAliveLeft *time.Duration
}

// Unloaded is what Unload did (all false for a model not loaded).
type Unloaded struct {
	Unloaded, Loading bool
	Active            int
}

// PoolSettings are a pool's limits; 0 and nil mean none. What its models take is summed from
// Models, with the loading ones apart.
type PoolSettings struct {
	DefaultKeepAlive *time.Duration // nil: for ever
	MaxResident      int
	MemoryBudget     int64
}

var (
	// ErrModelUnknown: no model of that name to load.
	ErrModelUnknown = errors.New("handlers: no such model")
	// ErrModelBusy: no room to load it while the resident models are in use.
	ErrModelBusy = errors.New("handlers: no room for the model")
)

// ModelTooLargeError is a model that can never fit the memory budget: its footprint is more
// than the room the configured models leave, and no wait changes that (ErrModelBusy's can).
type ModelTooLargeError struct{ Footprint, Room int64 }

func (e *ModelTooLargeError) Error() string {
	return fmt.Sprintf("handlers: the model takes %d bytes, more than the memory budget's %d bytes of room", e.Footprint, e.Room)
}

// ModelLoadingError is a request whose model was still loading when its wait ended.
type ModelLoadingError struct{ Remaining time.Duration }

func (e *ModelLoadingError) Error() string { return "handlers: the model is still loading" }

// lend gives the request the model it named: ex when the endpoint serves it, else the pool's,
// loaded if need be within Options.ModelLoadWait and admitted by the model's own gate (x's gate
// from then on). A refusal is written as the answer. release must be called when the work is
// done.
func (s *server) lend(c *fiber.Ctx, x *exchange, ex Extractor, pooled string, keepAlive json.RawMessage) (Extractor, func(), error) {
	if pooled == "" {
		return ex, func() {}, nil
	}
	model, release, err := s.borrow(c, x, pooled, keepAlive)
	if errors.Is(err, ErrModelUnknown) {
		return nil, nil, validationError(FieldError{Field: "body.model_name", Type: "value_error",
			Message: "Value error, model_name is neither a loaded model nor a model directory the server can load"})
	}
	return model, release, err
}

// borrow is lend from the pool, with ErrModelUnknown returned as it is: whether an unknown
// model is the request's fault depends on who chose it.
func (s *server) borrow(c *fiber.Ctx, x *exchange, pooled string, keepAlive json.RawMessage) (Extractor, func(), error) {
	d, forever, _ := parseKeepAlive(keepAlive) // validated with the request
	keep := KeepAlive{Set: len(keepAlive) > 0 && string(keepAlive) != "null", Forever: forever, For: d}
	ctx, cancel := context.WithTimeout(c.UserContext(), min(s.opts.ModelLoadWait, x.timeout))
	defer cancel()
	model, gate, release, err := s.opts.Pool.Lend(ctx, pooled, keep)
	switch {
	case errors.Is(err, ErrModelUnknown):
		return nil, nil, err
	case err != nil:
		return nil, nil, s.loadFailure(c, x, err, "No room to load the model while the resident models are in use")
	}
	// The model's own gate admits the request, with its retry token: a refusal by this gate
	// booked it here.
	if ref, ok := gate.AdmitRetry(x.prio, c.Request().Header.Peek(admission.RetryTokenHeader)); !ok {
		release()
		return nil, nil, s.writeRefusal(c, ref)
	}
	x.gate = gate
	return model, release, nil
}

// loadFailure answers a request whose model, loaded on demand, could not be lent: busy is what
// a 503 service_busy says (no room while the resident models are in use).
func (s *server) loadFailure(c *fiber.Ctx, x *exchange, err error, busy string) error {
	var loading *ModelLoadingError
	var tooLarge *ModelTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		// Not a 503: a client retries those, and this answer would never change. Nor a 4xx: the
		// request is sound, the server's budget too small for the model.
		return &apiError{Status: fiber.StatusInsufficientStorage, Code: CodeModelTooLarge, Outcome: OutcomeFailed,
			Message: fmt.Sprintf("The model's file takes %d bytes; the memory budget has %d bytes for models loaded on demand, so it cannot be loaded",
				tooLarge.Footprint, tooLarge.Room),
			Details: map[string]int64{"footprint_bytes": tooLarge.Footprint, "room_bytes": tooLarge.Room}}
	case errors.Is(err, ErrModelBusy):
		e := s.notReady(busy, CodeServiceBusy)
		e.Code = CodeServiceBusy
		return e
	case errors.As(err, &loading):
		e := s.notReady("The model is loading; retry after the Retry-After", CodeModelLoading)
		e.Code = CodeModelLoading
		e.retryAfter = admission.ServerRetryAfter.Wait(loading.Remaining)
		return e
	default:
		return s.failure(x, c.UserContext(), err)
	}
}
