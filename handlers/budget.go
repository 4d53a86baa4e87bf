package handlers

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/identity"
)

// CallerBudgets are the per-caller budgets (Options.Budgets): a tenant's own, from its keys,
// or Anonymous for a caller with none.
type CallerBudgets struct {
	Budgets *admission.Budgets
	// Anonymous is the budget of a caller whose tenant states none, or who has no tenant
	// (OpenMed's RATE_LIMIT_* settings). Zero: such callers are not limited.
	Anonymous admission.Budget
	// AnonymousByTenant keys Anonymous by tenant where the caller has one; otherwise each
	// client address has its own, per tenant (Options.Proxies says what the address is).
	AnonymousByTenant bool
	// AnonymousGlobal counts every caller Anonymous applies to in one bucket for the whole
	// server (OpenMed's THROTTLE_KEY=global), whatever their address.
	AnonymousGlobal bool
}

// CodeRateLimited is the error code of a request its caller's budget refused.
const CodeRateLimited = "rate_limited"

// budgetOf is the budget a request is charged to and the tenant as its metrics name it;
// keyOf is the key its buckets live under.
func (s *server) budgetOf(c *fiber.Ctx) (label string, b admission.Budget, own bool) {
	label, _ = c.Locals(localTenantLabel).(string)
	if a, ok := c.Locals(localAllowance).(identity.Allowance); ok {
		if b := budgetFromAllowance(a); b.Limited() {
			return label, b, true
		}
	}
	return label, s.opts.Budgets.Anonymous, false
}

// A budget and what its refusals say belong to one tenant: keyed by address, a tenant's
// callers at one address share a bucket, never one with another tenant's.
func (s *server) keyOf(c *fiber.Ctx, own bool) string {
	tenant, _ := c.Locals(localTenant).(string)
	switch {
	case own || (s.opts.Budgets.AnonymousByTenant && tenant != ""):
		return "tenant:" + tenant
	case s.opts.Budgets.AnonymousGlobal:
		return "global"
	case tenant != "":
		return "tenant:" + tenant + "\x00peer:" + identity.PeerKey(s.clientAddress(c))
	}
	return "peer:" + identity.PeerKey(s.clientAddress(c))
}

// budgetFromAllowance turns a key file's per-minute allowance into the buckets' per-second
// rates; a burst left at 0 is a minute's worth.
func budgetFromAllowance(a identity.Allowance) admission.Budget {
	b := admission.Budget{RequestsPerSecond: a.RequestsPerMinute / 60, RequestBurst: a.RequestBurst,
		TokensPerSecond: a.TokensPerMinute / 60, TokenBurst: a.TokenBurst, MaxConcurrent: a.MaxConcurrency}
	if b.RequestBurst == 0 {
		b.RequestBurst = math.Max(1, a.RequestsPerMinute)
	}
	if b.TokenBurst == 0 {
		b.TokenBurst = math.Max(1, a.TokensPerMinute)
	}
	return b
}

// textCost is a request's tokens estimated from its body, before it is read: a token per four
// bytes, the size of clinical text in the shipped tokenizers. It is the cost of every route
// that reads text; generation adds what it generates (generationCost). Completion replaces
// the estimate with what was used.
func textCost(body []byte) float64 { return max(math.Ceil(float64(len(body))/4), 1) }

// generationCost is textCost for a generation's prompts plus, for each of its choices, the new
// tokens it asks for (newTokens; nil: defaultNew, the route's default). Neither counts past
// what the endpoint can serve (MaxChoices, the model's context): a request asking more is
// refused by its route as invalid, not by the budget as too large.
func (ep *GenerationEndpoint) generationCost(body []byte, choices int, newTokens *int, defaultNew int) float64 {
	n := defaultNew
	if newTokens != nil {
		n = *newTokens
	}
	n = min(max(n, 0), ep.Model.MaxPositions())
	return textCost(body) + float64(min(max(choices, 1), ep.MaxChoices))*float64(n)
}

// charge takes the request from its caller's budget before anything else is spent on it. On a
// refusal it answers 429 rate_limited; a caller that left while deferred admission held its
// request gets nothing (counted as aborted).
func (s *server) charge(c *fiber.Ctx, r *Route) (admission.Charge, error) {
	cb := s.opts.Budgets
	if cb == nil || cb.Budgets == nil {
		return admission.Charge{}, nil
	}
	label, budget, own := s.budgetOf(c)
	if !budget.Limited() {
		return admission.Charge{}, nil
	}
	var est float64
	if r.cost != nil {
		est = r.cost(s, c)
	} else {
		est = textCost(c.Body())
	}
	// A held request must see its client leave: fasthttp never tells a handler, the watcher does.
	ctx, stop := s.watched(c)
	ch, ref, err := cb.Budgets.Admit(ctx, s.keyOf(c, own), label, budget, est)
	stop()
	if errors.Is(err, admission.ErrBudgetWait) {
		s.countAborted(ctx, r, "cancelled")
		return ch, &apiError{Status: statusClientClosed, Code: "client_closed_request", Outcome: OutcomeAborted,
			Message: "Client closed the request while it waited for its budget"}
	}
	if ref == nil {
		return ch, nil
	}
	return ch, s.writeBudgetRefusal(c, ref)
}

// setRateLimitHeaders writes both dimensions' state in OpenAI's x-ratelimit-* names: limit and
// remaining as whole numbers, reset as a duration ("1.5s").
func setRateLimitHeaders(h *fasthttp.ResponseHeader, ref *admission.BudgetRefusal) {
	var num [32]byte
	for _, d := range [2]struct {
		limit, remaining, reset string
		st                      admission.BudgetState
	}{{"x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", ref.Requests},
		{"x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens", ref.Tokens}} {
		if !d.st.Limited {
			continue
		}
		h.SetBytesV(d.limit, strconv.AppendInt(num[:0], int64(d.st.Limit), 10))
		h.SetBytesV(d.remaining, strconv.AppendInt(num[:0], max(int64(math.Floor(d.st.Remaining)), 0), 10))
		h.Set(d.reset, d.st.Reset.Round(time.Millisecond).String())
	}
}

// tokensUsed is implemented by the access-log stats of routes that know what a request
// really used: its text's tokens, or its prompt's and generated ones.
type tokensUsed interface{ tokensUsed() int }

// spentInFailing is implemented by the access-log stats of routes whose request can fail after
// the engine has worked for it (a generation whose constraint dead-ends late, one that outlives
// its deadline): the tokens of that work, 0 when it never reached the engine, -1 when it did
// but the model does not count them (an external model's: the estimate stands).
type spentInFailing interface{ spentInFailing() int }

// settle ends a charge by the answer's status: a request refused as invalid (4xx) costs its
// request and the tokens the engine spent on it before it failed (none, when refused before any
// work); a request the server failed (5xx) costs nothing, unless it timed out after the engine
// worked for it, a generation that asked for more than its deadline allows; the rest cost the
// tokens the stats report, or the estimate where they report none.
func settle(ch admission.Charge, status int, stats logStats) {
	spent := 0
	if s, ok := stats.(spentInFailing); ok {
		spent = s.spentInFailing()
	}
	switch {
	case status == fiber.StatusGatewayTimeout && spent != 0:
		ch.Done(float64(spent))
		return
	case status >= 500:
		ch.Refund()
		return
	case status >= 400 && status != statusClientClosed:
		ch.Done(float64(spent))
		return
	}
	if u, ok := stats.(tokensUsed); ok {
		ch.Done(float64(u.tokensUsed()))
		return
	}
	ch.Done(-1)
}
