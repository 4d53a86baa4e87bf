package handlers

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/identity"
)

// AuditTrail is where the requests of the privacy gateway and the de-identification routes
// leave their records, and where GET /privacy-gateway/audit reads them (package audit's Log).
type AuditTrail interface {
	// Append returns once the record is stored, or within its own bound (the audit's
	// acknowledgement timeout) with an error: the record may not be stored.
	Append(ctx context.Context, r audit.Record) (audit.Record, error)
	Read(ctx context.Context, q audit.Query) (audit.Page, error)
}

// CodeAuditUnavailable answers a request whose audit record could not be stored: its work may
// be done, but it is not answered as if it were recorded.
const CodeAuditUnavailable = "audit_unavailable"

// keepRecord stores rec as the record of request x, with its id, route, tenant and HTTP status,
// before the request is answered (once: a request has one record). It returns the record as
// stored, or the 503 to answer instead when the record could not be stored.
func (s *server) keepRecord(x *exchange, rec audit.Record, status int) (audit.Record, *apiError) {
	if s.opts.Audit == nil || x.kept {
		return rec, nil
	}
	x.kept = true
	rec.RequestID, rec.Route, rec.Tenant, rec.HTTPStatus = x.id, x.route.Path, x.tenant, status
	// Not the request's context: a client that leaves does not take its record with it. The
	// wait is bounded by Append itself (the audit's acknowledgement timeout).
	kept, err := s.opts.Audit.Append(context.Background(), rec)
	if err != nil {
		if skipped, ok := s.auditFailures.admit(s.opts.Clock.Now()); ok {
			s.opts.Logger.Error("audit: the request's record was not stored; it is answered 503", slog.String("request_id", x.id),
				slog.String("route", x.route.Path), slog.String("error_type", errorType(err)), slog.Uint64("failures_not_logged", skipped))
		}
		return rec, &apiError{Status: fiber.StatusServiceUnavailable, Code: CodeAuditUnavailable, Outcome: OutcomeFailed,
			Message: "The request's audit record could not be stored; retry later", retryAfter: time.Second}
	}
	if x.gateway {
		s.opts.Metrics.audited(kept)
	}
	return kept, nil
}

// auditAtExit is deferred, itself, by an audited route: it keeps the record that record makes
// of the answer (*err) unless a stream has begun, and turns *err into the 503 when it cannot
// be stored. A panic unwinding through it is recorded as the 500 the chain will answer (the
// response still says 200 meanwhile), then goes on.
func (s *server) auditAtExit(c *fiber.Ctx, x *exchange, record func(error) audit.Record, err *error) {
	if p := recover(); p != nil {
		_ = s.audited(c, x, record(errPanicked), errPanicked)
		panic(p)
	}
	if !streaming(c, *err) {
		*err = s.audited(c, x, record(*err), *err)
	}
}

// errPanicked stands for a handler's panic where an answer's error is read: a 500.
var errPanicked = errors.New("handlers: the handler panicked")

// audited keeps the record of a request answered with err (nil: the response already set on
// c), its status word the answer's outcome unless rec has one, and returns the answer to give:
// err, or the 503 when the record could not be stored. A record kept already is not kept again,
// and a stream that has begun keeps its own when it ends.
func (s *server) audited(c *fiber.Ctx, x *exchange, rec audit.Record, err error) error {
	if s.opts.Audit == nil || streaming(c, err) || x.kept {
		return err
	}
	status, outcome := answerOf(c, err)
	if rec.Status == "" {
		rec.Status = outcome
	}
	if _, aerr := s.keepRecord(x, rec, status); aerr != nil {
		return aerr
	}
	return err
}

// streaming says whether the handler answered by starting a stream, whose body is written
// after it returns.
func streaming(c *fiber.Ctx, err error) bool {
	_, ok := c.Locals(localDeferred).(*deferredRecord)
	return ok && err == nil && c.Response().StatusCode() == fiber.StatusOK
}

// answerOf is the status and outcome a request answered with err (nil or a refusal: what c's
// response holds already) will have.
func answerOf(c *fiber.Ctx, err error) (int, string) {
	var e *apiError
	switch {
	case errors.As(err, &e):
		return e.Status, e.Outcome
	case err != nil && !errors.Is(err, errRefused):
		return fiber.StatusInternalServerError, OutcomeFailed
	}
	status := c.Response().StatusCode()
	outcome, _ := c.Locals(localOutcome).(string)
	if outcome == "" {
		outcome = outcomeForStatus(status)
	}
	return status, outcome
}

// auditPage is GET /privacy-gateway/audit's answer: the records found (hashes and counts,
// never text), oldest first, whether every chain segment read verified, each segment, where
// any broke, and the cursor of the next page (null: none).
type auditPage struct {
	Records    []audit.Stored  `json:"records"`
	Count      int             `json:"count"`
	Verified   bool            `json:"verified"`
	Chains     []audit.Segment `json:"chains"`
	Breaks     []audit.Break   `json:"breaks"`
	Scanned    int             `json:"scanned"`
	NextCursor *uint64         `json:"next_cursor"`
}

// auditRead is GET /privacy-gateway/audit: records by time stored (from, to: RFC 3339),
// status, tenant, replica and route, limit of them a page (1 to 1000, default 100), from
// cursor (the next_cursor of the page before).
func (s *server) auditRead(c *fiber.Ctx) error {
	var q audit.Query
	var errs fieldErrors
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		if v := c.Query(t.name); v != "" {
			at, err := time.Parse(time.RFC3339Nano, v)
			// An offset may move a year 9999 or 0000 out of the years the stream's reads take
			// (1 to 9999, in UTC); the first instant of year 1 is the zero time, which a Query
			// reads as no bound: right for from, all but nothing for to.
			if y := at.UTC().Year(); err != nil || y < 1 || y > 9999 || t.name == "to" && at.IsZero() {
				errs.add(&FieldError{Field: "query." + t.name, Type: "datetime_parsing", Message: "Input should be an RFC 3339 time"})
			}
			*t.dst = at
		}
	}
	for _, n := range []struct {
		name     string
		dst      *int
		min, max uint64
		cursor   *uint64
	}{{name: "limit", dst: &q.Limit, min: 1, max: audit.MaxLimit}, {name: "cursor", min: 1, max: 1 << 62, cursor: &q.Cursor}} {
		v := c.Query(n.name)
		if v == "" {
			continue
		}
		u, err := strconv.ParseUint(v, 10, 64)
		if err != nil || u < n.min || u > n.max {
			errs.add(&FieldError{Field: "query." + n.name, Type: "value_error",
				Message: "Value error, must be a whole number from " + strconv.FormatUint(n.min, 10) + " to " + strconv.FormatUint(n.max, 10)})
			continue
		}
		if n.dst != nil {
			*n.dst = int(u)
		} else {
			*n.cursor = u
		}
	}
	if r := c.Query("replica"); r != "" && !audit.ValidReplica(r) {
		errs.add(&FieldError{Field: "query.replica", Type: "value_error",
			Message: "Value error, a replica is named by 1 to 64 letters, digits, '-' and '_'"})
	}
	if len(errs) > 0 {
		return validationError(errs...)
	}
	q.Status, q.Tenant, q.Replica, q.Route = c.Query("status"), c.Query("tenant"), c.Query("replica"), c.Query("route")
	all, credited := c.Locals(localReadsAllTenants).(bool)
	ownOnly := credited && !all
	if ownOnly {
		// A tenant's audit:read reads its own records: another tenant's routes, statuses and
		// times are not its to see. A caller of no tenant has no records of its own.
		own, _ := c.Locals(localTenant).(string)
		if own == "" || q.Tenant != "" && q.Tenant != own {
			return authRefusal(&identity.Refusal{Reason: identity.Forbidden, RequiredScopes: []string{identity.AuditAllTenants}})
		}
		q.Tenant = own
	}
	page, err := s.opts.Audit.Read(c.UserContext(), q)
	if err != nil {
		s.opts.Logger.Error("audit: reading the stream failed", slog.String("request_id", requestID(c)),
			slog.String("error_type", errorType(err)))
		return &apiError{Status: fiber.StatusServiceUnavailable, Code: CodeAuditUnavailable, Outcome: OutcomeFailed,
			Message: "The audit could not be read; retry later", retryAfter: time.Second}
	}
	out := auditPage{Records: page.Records, Count: len(page.Records), Verified: page.Verified, Chains: page.Segments,
		Breaks: page.Breaks, Scanned: page.Scanned}
	if ownOnly {
		// The chains, their breaks and the records scanned count every tenant's records: how
		// many requests the others made in a window is not this tenant's to see.
		out.Chains, out.Breaks, out.Scanned = nil, nil, len(page.Records)
	}
	if out.Records == nil {
		out.Records = []audit.Stored{}
	}
	if out.Chains == nil {
		out.Chains = []audit.Segment{}
	}
	if out.Breaks == nil {
		out.Breaks = []audit.Break{}
	}
	if page.Next != 0 {
		out.NextCursor = &page.Next
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(out)
}
