package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
	"github.com/sluice-serving/sluice/jobs"
	"github.com/sluice-serving/sluice/resilience"
)

// Jobs serves OpenMed's /jobs: corpus de-identification jobs kept by Manager, each document
// de-identified as /pii/deidentify does with PII's model and Redactor, in the bulk class.
type Jobs struct {
	Manager  *jobs.Manager
	PII      Endpoint
	Redactor *deid.Redactor
	// Yield, when set, paces the documents behind PII's interactive traffic.
	Yield *admission.Yield
}

// jobRoute is the route a /jobs path is authorized as: its id made "{id}", so that a
// client-chosen id never becomes a route of its own.
func jobRoute(path string) string {
	rest, ok := strings.CutPrefix(path, "/jobs/")
	if !ok || rest == "" {
		return path
	}
	if strings.HasSuffix(rest, "/results") && strings.Count(rest, "/") == 1 {
		return "/jobs/{id}/results"
	}
	if !strings.Contains(rest, "/") {
		return "/jobs/{id}"
	}
	return path
}

const codeNotFound = "not_found"

// Wire bounds of a job's request, beyond the Manager's.
const (
	maxDocumentID   = 256
	maxResultsLimit = 1000
)

func (s *server) installJobs(app *fiber.App, j *Jobs) error {
	app.Post("/jobs", s.jobCreate)
	app.Get("/jobs", s.jobList)
	app.Get("/jobs/:id", s.jobGet)
	app.Delete("/jobs/:id", s.jobCancel)
	app.Get("/jobs/:id/results", s.jobResults)
	s.known["/jobs"] = "/jobs"
	s.known["/jobs/{id}"], s.known["/jobs/{id}/results"] = "/jobs/{id}", "/jobs/{id}/results" // spans' route templates
	return j.Manager.Start(jobs.Work{Process: s.jobProcessor(j),
		Fingerprint: func(tenant, text string) string { return j.Redactor.Scoped(tenant).Fingerprint(text) }})
}

func tenantOf(c *fiber.Ctx) string {
	t, _ := c.Locals(localTenant).(string)
	return t
}

type jobDocJSON struct {
	ID        *string `json:"id"`
	Text      *string `json:"text"`
	SubjectID *string `json:"subject_id"`
}

type jobWebhookJSON struct {
	URL            *string  `json:"url"`
	Secret         *string  `json:"secret"`
	MaxAttempts    *int     `json:"max_attempts"`
	BackoffSeconds *float64 `json:"backoff_seconds"`
}

// jobCreate is POST /jobs: documents, a webhook, and /pii/deidentify's options (but text and
// model_name) for every document; 202 with OpenMed's fields.
func (s *server) jobCreate(c *fiber.Ctx) error {
	j := s.opts.Jobs
	var fields map[string]json.RawMessage
	if aerr := decodeStrict(c.Body(), &fields); aerr != nil {
		return aerr
	}
	var errs fieldErrors
	var list []json.RawMessage
	if raw, ok := fields["documents"]; !ok || json.Unmarshal(raw, &list) != nil || list == nil {
		errs.add(&FieldError{Field: "body.documents", Type: "list_type", Message: "Input should be a valid list"})
	}
	if err := j.Manager.CheckCount(len(list)); err != nil {
		return jobError(err)
	}
	// Each document is read as strictly as the body: a misspelt subject_id would lose the
	// document's pseudonyms without a word.
	docs := make([]jobDocJSON, len(list))
	unread := make([]*FieldError, len(list)) // added below, beside the other documents' mistakes
	for i, raw := range list {
		if fe := readObject(raw, &docs[i], true); fe != nil {
			fe.Field = "body.documents." + strconv.Itoa(i) + strings.TrimPrefix(fe.Field, "body")
			unread[i] = fe
		}
	}
	var wh *jobs.Webhook
	if raw, ok := fields["webhook"]; ok && string(raw) != "null" {
		var w jobWebhookJSON
		if fe := readObject(raw, &w, true); fe != nil {
			fe.Field = "body.webhook" + strings.TrimPrefix(fe.Field, "body") // the object's, not the body's
			return validationError(*fe)
		}
		wh = &jobs.Webhook{MaxAttempts: jobs.DefaultAttempts, BackoffSeconds: jobs.DefaultBackoff}
		if w.URL == nil {
			errs.add(&FieldError{Field: "body.webhook.url", Type: "missing", Message: "Field required"})
		} else {
			wh.URL = *w.URL
		}
		if w.Secret != nil {
			wh.Secret = *w.Secret
		}
		if w.MaxAttempts != nil {
			if *w.MaxAttempts < 1 || *w.MaxAttempts > jobs.MaxAttempts {
				errs.add(&FieldError{Field: "body.webhook.max_attempts", Type: "value_error",
					Message: fmt.Sprintf("Value error, max_attempts must be between 1 and %d", jobs.MaxAttempts)})
			}
			wh.MaxAttempts = *w.MaxAttempts
		}
		if w.BackoffSeconds != nil {
			if *w.BackoffSeconds < 0 || *w.BackoffSeconds > jobs.MaxBackoff {
				errs.add(&FieldError{Field: "body.webhook.backoff_seconds", Type: "value_error",
					Message: fmt.Sprintf("Value error, backoff_seconds must be between 0 and %g", jobs.MaxBackoff)})
			}
			wh.BackoffSeconds = *w.BackoffSeconds
		}
	}
	delete(fields, "documents")
	delete(fields, "webhook")
	for _, k := range []string{"text", "model_name"} {
		if _, ok := fields[k]; ok {
			errs.add(&FieldError{Field: "body." + k, Type: "extra_forbidden", Message: "Extra inputs are not permitted"})
		}
	}
	options, _ := json.Marshal(fields)
	var req deidentifyRequest
	if aerr := decodeStrict(options, &req); aerr != nil {
		return aerr
	}
	probe := "x" // the options are checked once, on a stand-in text; each document's below
	req.Text = &probe
	plan, aerr := s.parseDeidentify(&req, &j.PII, errs)
	if aerr != nil {
		return aerr
	}
	if plan.model.ex == nil {
		// A job runs on the PII endpoint's own model: a language only a pooled model serves
		// is not served here.
		return validationError(*unservedLang(false))
	}
	out := make([]jobs.Document, len(docs))
	seen := make(map[string]bool, len(docs))
	for i, d := range docs {
		if unread[i] != nil {
			errs.add(unread[i])
			continue
		}
		at := "body.documents." + strconv.Itoa(i)
		switch {
		case d.ID == nil || *d.ID == "" || len(*d.ID) > maxDocumentID:
			errs.add(&FieldError{Field: at + ".id", Type: "value_error", Message: fmt.Sprintf("Value error, id must be 1 to %d bytes", maxDocumentID)})
		case seen[*d.ID]:
			errs.add(&FieldError{Field: at + ".id", Type: "value_error", Message: "Value error, ids must be unique within a job"})
		default:
			seen[*d.ID] = true
			out[i].ID = *d.ID
		}
		text, ferr := checkText(d.Text, s.opts.Limits)
		if ferr != nil {
			ferr.Field = at + ".text"
			errs.add(ferr)
		}
		out[i].Text = text
		if sub := parseSubject(d.SubjectID, at+".subject_id", &errs); sub != "" {
			out[i].SubjectID = sub
		}
	}
	if len(errs) > 0 {
		return validationError(errs...)
	}
	rec, err := j.Manager.Create(c.UserContext(), tenantOf(c), jobs.Spec{Documents: out, Options: options,
		Payer: s.jobPayerOf(c), Webhook: wh})
	if err != nil {
		return jobError(err)
	}
	c.Status(fiber.StatusAccepted)
	return c.JSON(fiber.Map{"id": rec.ID, "status": rec.Status, "progress_percent": rec.ProgressPercent(),
		"document_count": rec.DocumentCount, "status_url": "/jobs/" + rec.ID, "durable": rec.Durable})
}

// jobError is the answer to a Manager's error.
func jobError(err error) error {
	var b *jobs.Bound
	switch {
	case errors.As(err, &b) && b.Status == fiber.StatusUnprocessableEntity && b.Field != "":
		// In the usual envelope, its field named as the body's others are.
		return validationError(FieldError{Field: "body." + b.Field, Type: "value_error", Message: "Value error, " + b.Message})
	case errors.As(err, &b):
		code := CodeTooLarge
		switch b.Status {
		case fiber.StatusTooManyRequests:
			code = CodeRateLimited
		case fiber.StatusServiceUnavailable:
			code = CodeServiceBusy
		case fiber.StatusUnprocessableEntity:
			code = CodeValidation
		}
		return &apiError{Status: b.Status, Code: code, Outcome: OutcomeFailed, Message: b.Message, retryAfter: b.RetryAfter}
	case errors.Is(err, jobs.ErrNotFound), errors.Is(err, jobs.ErrExpired):
		return &apiError{Status: fiber.StatusNotFound, Code: codeNotFound, Outcome: OutcomeFailed, Message: "No such job"}
	case errors.Is(err, jobs.ErrNotFinished):
		return &apiError{Status: fiber.StatusConflict, Code: CodeBadRequest, Outcome: OutcomeFailed,
			Message: "The job's results are served once it is done or failed"}
	}
	return &apiError{Status: fiber.StatusServiceUnavailable, Code: CodeServiceBusy, Outcome: OutcomeFailed,
		Message: "The job store did not answer; retry later", retryAfter: time.Second}
}

// jobJSON is a job as GET /jobs/{id} answers it: OpenMed's record, and spans and documents
// once it has finished.
func (s *server) jobJSON(ctx context.Context, rec *jobs.Record, details bool) (fiber.Map, error) {
	out := fiber.Map{"id": rec.ID, "status": rec.Status, "progress_percent": rec.ProgressPercent(),
		"document_count": rec.DocumentCount, "processed_count": rec.ProcessedCount, "failed_count": rec.FailedCount,
		"label_histogram": rec.LabelHistogram, "created_at": rec.CreatedAt, "updated_at": rec.UpdatedAt,
		"completed_at": rec.CompletedAt, "error": rec.Error, "webhook_delivery": rec.WebhookDelivery,
		"durable": rec.Durable, "status_url": "/jobs/" + rec.ID, "results_url": "/jobs/" + rec.ID + "/results"}
	if details {
		spans, docs := []jobs.Span{}, []jobs.DocumentInfo{}
		if rec.Status == jobs.Done || rec.Status == jobs.Failed {
			var err error
			if spans, docs, err = s.opts.Jobs.Manager.Details(ctx, rec); err != nil {
				return nil, err
			}
		}
		out["spans"], out["documents"] = spans, docs
	}
	return out, nil
}

func (s *server) jobGet(c *fiber.Ctx) error {
	rec, err := s.opts.Jobs.Manager.Get(c.UserContext(), tenantOf(c), c.Params("id"))
	if err != nil {
		return jobError(err)
	}
	out, err := s.jobJSON(c.UserContext(), rec, true)
	if err != nil {
		return jobError(err)
	}
	return c.JSON(out)
}

func (s *server) jobCancel(c *fiber.Ctx) error {
	rec, err := s.opts.Jobs.Manager.Cancel(c.UserContext(), tenantOf(c), c.Params("id"))
	if err != nil {
		return jobError(err)
	}
	out, _ := s.jobJSON(c.UserContext(), rec, false)
	return c.JSON(out)
}

// jobList is GET /jobs: the caller's own jobs, newest first, without spans.
func (s *server) jobList(c *fiber.Ctx) error {
	recs, err := s.opts.Jobs.Manager.List(c.UserContext(), tenantOf(c))
	if err != nil {
		return jobError(err)
	}
	slices.SortFunc(recs, func(a, b *jobs.Record) int { return b.CreatedAt.Compare(a.CreatedAt) })
	out := make([]fiber.Map, len(recs))
	for i, r := range recs {
		out[i], _ = s.jobJSON(c.UserContext(), r, false)
	}
	return c.JSON(fiber.Map{"jobs": out})
}

// jobResults is GET /jobs/{id}/results?offset=&limit=: one NDJSON line per document, in
// submission order; X-Next-Offset names the next page's offset while there is one.
func (s *server) jobResults(c *fiber.Ctx) error {
	from, err1 := strconv.Atoi(c.Query("offset", "0"))
	limit, err2 := strconv.Atoi(c.Query("limit", "100"))
	if err1 != nil || err2 != nil || from < 0 || limit < 1 || limit > maxResultsLimit {
		return validationError(FieldError{Field: "query", Type: "value_error",
			Message: fmt.Sprintf("Value error, offset must be a whole number from 0 and limit from 1 to %d", maxResultsLimit)})
	}
	page, next, err := s.opts.Jobs.Manager.Results(c.UserContext(), tenantOf(c), c.Params("id"), from, limit)
	if err != nil {
		return jobError(err)
	}
	if next >= 0 {
		c.Set("X-Next-Offset", strconv.Itoa(next))
	}
	c.Set(fiber.HeaderContentType, "application/x-ndjson")
	w := bufio.NewWriter(c.Response().BodyWriter())
	enc := json.NewEncoder(w)
	for i := range page {
		if err := enc.Encode(&page[i]); err != nil {
			return err
		}
	}
	return w.Flush()
}

// jobProcessor de-identifies one job document as /pii/deidentify would, admitted by the PII
// endpoint's gate in the bulk class and batched in it: refused or failed model work is
// retried later by the queue; a document the options reject fails at once.
func (s *server) jobProcessor(j *Jobs) jobs.Processor {
	return func(ctx context.Context, job *jobs.Record, doc jobs.Document) (jobs.Outcome, error) {
		var req deidentifyRequest
		if err := json.Unmarshal(job.Options, &req); err != nil {
			return jobs.Outcome{}, jobs.Permanent(err)
		}
		req.Text = &doc.Text
		if doc.SubjectID != "" {
			req.SubjectID = &doc.SubjectID
		}
		plan, aerr := s.parseDeidentify(&req, &j.PII, nil)
		if aerr == nil && plan.model.ex == nil { // a replica configured otherwise may have taken the job
			aerr = validationError(*unservedLang(false))
		}
		if aerr != nil {
			return jobs.Outcome{}, jobs.Permanent(aerr)
		}
		if j.Yield != nil {
			end, err := j.Yield.Acquire(ctx)
			if err != nil {
				return jobs.Outcome{}, err
			}
			defer end()
		}
		tokens := textCost([]byte(doc.Text))
		charge, err := s.payFor(ctx, job.Payer, tokens)
		if err != nil {
			return jobs.Outcome{}, err
		}
		// The charge is settled by the job once the result is stored: a run whose result is
		// not kept (a failure here, a failed write, an earlier run's result) is refunded.
		var once sync.Once
		settle := func(kept bool) {
			once.Do(func() {
				if kept {
					charge.Done(tokens)
				} else {
					charge.Refund()
				}
			})
		}
		// A panic below (a bug this document meets) fails the document (jobs.Manager.run);
		// its charge goes back first, as a failure's does, or the tenant's place stays taken.
		defer func() {
			if p := recover(); p != nil {
				settle(false)
				panic(p)
			}
		}()
		if ref, ok := j.PII.Gate.AdmitUnbooked(admission.Bulk); !ok {
			settle(false)
			return jobs.Outcome{}, jobWait(ref.RetryAfter) // load, not a failure: no try spent, no place booked
		}
		ents, _, err := plan.model.ex.Extract(ctx, admission.Bulk, plan.text, plan.opts)
		if err != nil {
			settle(false)
			if ref, ok := j.PII.Gate.RefuseUnbooked(admission.Bulk, err); ok {
				return jobs.Outcome{}, jobWait(ref.RetryAfter)
			}
			var open *resilience.OpenError
			if errors.As(err, &open) { // the model's breaker: its documents wait it out
				return jobs.Outcome{}, jobWait(open.RetryAfter + time.Duration(rand.Float64()*float64(open.RetryAfter)/2))
			}
			return jobs.Outcome{}, err
		}
		if plan.sweep {
			ents, _ = entities.SafetySweep(plan.text, ents, s.sweepFor(plan.lang))
		}
		redactor := j.Redactor.Scoped(job.Tenant)
		res := redactor.Apply(plan.text, ents, plan.deid)
		kept := make([]entities.Entity, len(res.Redactions))
		for i, red := range res.Redactions {
			kept[i] = entities.Entity{Label: red.Label, Start: red.Start, End: red.End, Score: red.Score}
		}
		points := entities.CodePointSpans(plan.text, kept)
		spans := make([]jobs.Span, len(res.Redactions))
		for i, red := range res.Redactions {
			spans[i] = jobs.Span{Start: points[i].Start, End: points[i].End, Label: red.Label,
				TextHash: redactor.Fingerprint(plan.text[red.Start:red.End]), Confidence: red.Score}
		}
		return jobs.Outcome{Text: res.Text, Spans: spans, Settle: settle}, nil
	}
}

// jobPayer is who a job's documents are charged to: the budget its submitting request was
// charged to, under the same key, so that a tenant's job and its interactive requests draw on
// one budget.
type jobPayer struct {
	Key string `json:"key"`
	// Tenant is the tenant as the budget's metrics name it (identity.Principal.Label).
	Tenant string           `json:"tenant"`
	Budget admission.Budget `json:"budget"`
}

// jobPayerOf is the payer of a job c submits; nil when its caller's budget is unlimited.
func (s *server) jobPayerOf(c *fiber.Ctx) json.RawMessage {
	if cb := s.opts.Budgets; cb == nil || cb.Budgets == nil {
		return nil
	}
	label, budget, own := s.budgetOf(c)
	if !budget.Limited() {
		return nil
	}
	raw, _ := json.Marshal(jobPayer{Key: s.keyOf(c, own), Tenant: label, Budget: budget})
	return raw
}

// payFor charges a job document of tokens to its payer. A budget that cannot take it now puts
// it back in the queue for as long as the budget says (jobs.Later: a job has no client to
// answer 429, and a document never holds its batch while it waits), with a random share more
// so that a throttled job's documents do not all come back at once; until then the payer's
// other documents go back without asking the budget. One larger than the whole budget fails.
func (s *server) payFor(ctx context.Context, payer json.RawMessage, tokens float64) (admission.Charge, error) {
	cb := s.opts.Budgets
	if len(payer) == 0 || cb == nil || cb.Budgets == nil {
		return admission.Charge{}, nil
	}
	var p jobPayer
	if err := json.Unmarshal(payer, &p); err != nil {
		return admission.Charge{}, jobs.Permanent(err)
	}
	now := s.opts.Clock.Now()
	later := func(d time.Duration) error { return jobWait(d + time.Duration(rand.Float64()*float64(d)/2)) }
	if until, ok := s.payersWaiting.Load(p.Key); ok && now.Before(until.(time.Time)) {
		return admission.Charge{}, later(until.(time.Time).Sub(now))
	}
	ch, ref, err := cb.Budgets.Try(ctx, p.Key, p.Tenant, p.Budget, tokens)
	switch {
	case err != nil:
		return ch, err
	case ref == nil:
		return ch, nil
	case ref.Reason == admission.BudgetTooLarge:
		return ch, jobs.Permanent(errors.New("handlers: the document is larger than its tenant's token budget holds"))
	}
	wait := max(ref.RetryAfter, 100*time.Millisecond)
	s.payersWaiting.Store(p.Key, now.Add(wait))
	s.prunePayers(now)
	return ch, later(wait)
}

// jobWait hands a job's document back to the queue for d, and at least jobWaitFloor: a
// refusal that names no wait (a Retry-After of 0) would otherwise have it back at once,
// decrypted, charged and refused again in a loop while the model sheds load.
func jobWait(d time.Duration) error { return jobs.Later(max(d, jobWaitFloor)) }

const jobWaitFloor = time.Second

// prunePayers forgets, at most once a minute, the payers whose wait is over: each key a
// throttled job ever had would otherwise stay for the life of the process.
func (s *server) prunePayers(now time.Time) {
	last := s.payersPruned.Load()
	if now.UnixNano()-last < int64(time.Minute) || !s.payersPruned.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	s.payersWaiting.Range(func(k, until any) bool {
		if !now.Before(until.(time.Time)) {
			s.payersWaiting.CompareAndDelete(k, until)
		}
		return true
	})
}
