package jobs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/sluice-serving/sluice/signing"
)

// Webhook bounds: attempts and the backoff's base, as a request may ask them.
const (
	DefaultAttempts = 3
	MaxAttempts     = 10
	DefaultBackoff  = 0.5
	MaxBackoff      = 60.0
)

// errPrivate is a webhook address that the server may not reach.
var errPrivate = errors.New("the webhook's address is loopback, link-local, private, unspecified or not routed on the internet (SLUICE_JOBS_WEBHOOK_ALLOW_PRIVATE)")

func forbidden(a netip.Addr) bool {
	a = a.Unmap()
	if v4, ok := embeddedIPv4(a); ok {
		return forbidden(v4)
	}
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range notGlobal {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// notGlobal are the special-purpose ranges (IANA's registries) that the public internet does
// not route, which networks reuse for their own hosts: a cloud's or a cluster's (198.18.0.0/15
// and 240.0.0.0/4 are handed out inside some) are as internal as 10.0.0.0/8.
var notGlobal = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // this network
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("100::/64"),        // discard
	netip.MustParsePrefix("100:0:0:1::/64"),  // dummy prefix
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments: Teredo, benchmarking, ORCHID among them
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("3fff::/20"),       // documentation
	netip.MustParsePrefix("5f00::/16"),       // segment routing (SRv6) identifiers, a network's own
	localNAT64,                               // a network's own translator, to addresses of its choosing
}

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	localNAT64 = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 is the IPv4 address an IPv6 one reaches through a translator (NAT64's
// well-known prefix) or a tunnel (6to4): 64:ff9b::a00:1 is 10.0.0.1 wherever NAT64 runs.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case !a.Is6():
		return netip.Addr{}, false
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// CheckWebhookURL refuses a webhook URL that is not http(s) with a host, or (unless
// Config.WebhookAllowPrivate) whose host resolves to an address the server may not reach. The
// check is made again when each attempt connects, so that a name resolved differently later
// cannot reach one either.
func (m *Manager) CheckWebhookURL(ctx context.Context, raw string) error {
	refuse := func(msg string) error {
		return &Bound{Status: http.StatusUnprocessableEntity, Field: "webhook.url", Message: msg}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return refuse("must be an http or https URL with a host and no credentials")
	}
	// url.Parse takes any digits for a port; one no connection can use would fail every attempt.
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return refuse("has a port outside 1-65535")
		}
	}
	if m.cfg.WebhookAllowPrivate {
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", u.Hostname())
	if err != nil {
		return refuse("its host does not resolve")
	}
	for _, a := range addrs {
		if forbidden(a) {
			return refuse(errPrivate.Error())
		}
	}
	return nil
}

// webhookClient dials only the addresses CheckWebhookURL allows, and follows no redirect (a
// redirect would be an unchecked second request).
func webhookClient(cfg Config) *http.Client {
	d := &net.Dialer{Timeout: cfg.WebhookTimeout}
	if !cfg.WebhookAllowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || forbidden(ap.Addr()) {
				return errPrivate
			}
			return nil
		}
	}
	return &http.Client{
		Timeout:       cfg.WebhookTimeout,
		Transport:     &http.Transport{DialContext: d.DialContext, Proxy: nil, MaxIdleConns: 16},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// payload is the webhook's body, OpenMed's fields: counts, hashes and offsets, no text.
func (m *Manager) payload(ctx context.Context, rec *Record) ([]byte, error) {
	spans, docs, err := m.Details(ctx, rec)
	if err != nil {
		return nil, err
	}
	var completed any
	if rec.CompletedAt != nil {
		completed = rec.CompletedAt.Format(time.RFC3339)
	}
	var why any
	if rec.Error != nil {
		why = *rec.Error
	}
	return json.Marshal(map[string]any{ // a map: its keys are written sorted, a canonical JSON
		"event": "job." + string(rec.Status), "job_id": rec.ID, "status": rec.Status,
		"progress_percent": rec.ProgressPercent(), "document_count": rec.DocumentCount,
		"processed_count": rec.ProcessedCount, "failed_count": rec.FailedCount,
		"label_histogram": rec.LabelHistogram, "spans": spans, "documents": docs,
		"error": why, "completed_at": completed,
	})
}

// claimWebhook takes the delivery of k's webhook for this process, for as long as its attempts
// may take: false when the job is not finished, its webhook is not pending, or another
// process holds it.
func (m *Manager) claimWebhook(ctx context.Context, k string) (*Record, bool) {
	claimed := false
	rec, _, err := m.change(ctx, k, func(r *Record) bool {
		now := m.clk.Now()
		if claimed = webhookDue(r, now); claimed {
			until := now.Add(deliveryTime(r.Webhook, m.cfg.WebhookTimeout)).UTC()
			r.WebhookClaim = &until
		}
		return claimed
	})
	return rec, err == nil && claimed
}

// webhookDue says whether r's webhook waits for a process to deliver it at now: the job
// finished, its delivery pending, and no claim on it that has not passed.
func webhookDue(r *Record, now time.Time) bool {
	return r.Webhook != nil && r.WebhookDelivery != nil && r.WebhookDelivery.Status == "pending" &&
		(r.Status == Done || r.Status == Failed) && (r.WebhookClaim == nil || !now.Before(*r.WebhookClaim))
}

// deliveryTime bounds how long delivering wh may take: every attempt's timeout and the
// longest wait before each, and a minute to spare.
func deliveryTime(wh *Webhook, timeout time.Duration) time.Duration {
	attempts := wh.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	d := time.Duration(attempts)*timeout + time.Minute
	for i := 1; i < attempts; i++ {
		d += backoffCeiling(wh, i)
	}
	return min(d, 24*time.Hour)
}

// backoffCeiling is the longest wait before attempt i (from 0) of wh: its base doubled for
// each attempt before.
func backoffCeiling(wh *Webhook, i int) time.Duration {
	return time.Duration(wh.BackoffSeconds * float64(int64(1)<<min(i-1, 20)) * float64(time.Second))
}

// deliver posts a finished job's webhook: attempts as asked, each signed with a fresh nonce
// and timestamp, the waits between them drawn at random up to the base doubled per attempt
// (full jitter), none after a 2xx. The outcome is kept in the record.
//
// rec is as claimWebhook returned it, with this process's claim; a delivery that stops
// before it has an outcome (the process closing, the payload not read) gives the claim back.
func (m *Manager) deliver(ctx context.Context, k string, rec *Record) {
	wh := rec.Webhook
	body, err := m.payload(ctx, rec)
	if errors.Is(err, ErrExpired) {
		m.keepDelivery(ctx, k, rec.ID, Delivery{Status: "failed"}) // pending past Retention: nothing whole is left to send
		return
	}
	if err != nil {
		m.unclaim(k, rec.WebhookClaim)
		return
	}
	u, err := url.Parse(wh.URL) // checked when the job was created
	if err != nil {
		m.unclaim(k, rec.WebhookClaim)
		return
	}
	// What the client writes on the request line: a URL that ends in '?' keeps it there.
	target := u.RequestURI()
	attempts := wh.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	state := Delivery{Status: "failed"}
	for i := range attempts {
		if i > 0 {
			n, _ := rand.Int(rand.Reader, big.NewInt(int64(backoffCeiling(wh, i))+1))
			t := m.clk.NewTimer(time.Duration(n.Int64()))
			select {
			case <-t.C():
			case <-ctx.Done():
				t.Stop()
				m.unclaim(k, rec.WebhookClaim) // shutting down: still "pending", for the next process at once
				return
			}
		}
		state.Attempts = i + 1
		code, err := m.post(ctx, wh, target, string(rec.Status), body)
		if ctx.Err() != nil {
			// Cut off by the shutdown, not refused by the receiver: not an attempt's outcome.
			m.unclaim(k, rec.WebhookClaim)
			return
		}
		state.LastStatusCode = code
		if err == nil && code >= 200 && code < 300 {
			now := m.clk.Now().UTC()
			state.Status, state.DeliveredAt = "delivered", &now
			break
		}
	}
	m.keepDelivery(ctx, k, rec.ID, state)
}

// keepDelivery stores the outcome of the delivery of k's webhook (job id).
func (m *Manager) keepDelivery(ctx context.Context, k, id string, state Delivery) {
	if _, _, err := m.change(context.WithoutCancel(ctx), k, func(r *Record) bool {
		r.WebhookDelivery = &state
		return true
	}); err != nil {
		m.log.Warn("jobs: the webhook's delivery state was not stored", slog.String("job_id", id))
	}
}

// unclaim gives k's webhook up, still pending, if the claim is still mine (another process
// may have taken it over once mine passed).
func (m *Manager) unclaim(k string, mine *time.Time) {
	if mine == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, _ = m.change(ctx, k, func(r *Record) bool {
		if r.WebhookClaim == nil || !r.WebhookClaim.Equal(*mine) {
			return false
		}
		r.WebhookClaim = nil
		return true
	})
}

func (m *Manager) post(ctx context.Context, wh *Webhook, target, status string, body []byte) (int, error) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	ts := m.clk.Now().Unix()
	n := hex.EncodeToString(nonce)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, wh.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenMed-Event", "job."+status)
	req.Header.Set(signing.HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(signing.HeaderNonce, n)
	req.Header.Set(signing.HeaderSignature, signing.Sign(wh.Secret, signing.Canonical(http.MethodPost, target, ts, n, body)))
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("jobs: webhook: %w", err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
