package signing

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/settings"
)

// Version opens OpenMed's canonical string.
const Version = "OPENMED-HMAC-SHA256-V1"

// The headers of a signed request.
const (
	HeaderTimestamp = "X-OpenMed-Timestamp"
	HeaderNonce     = "X-OpenMed-Nonce"
	HeaderSignature = "X-OpenMed-Signature"
)

// Canonical is OpenMed's version-1 canonical string of a request: the method, the exact path
// and query, the Unix timestamp, the nonce and the SHA-256 of the exact body, one a line.
func Canonical(method, target string, timestamp int64, nonce string, body []byte) string {
	h := sha256.Sum256(body)
	return Version + "\n" + method + "\n" + target + "\n" + strconv.FormatInt(timestamp, 10) + "\n" +
		nonce + "\nsha256:" + hex.EncodeToString(h[:])
}

// Sign is the X-OpenMed-Signature of a canonical string under secret.
func Sign(secret, canonical string) string {
	return "sha256=" + hex.EncodeToString(mac([]byte(secret), canonical))
}

func mac(secret []byte, canonical string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(canonical))
	return m.Sum(nil)
}

// Config is the verification's settings.
type Config struct {
	// SecretFile holds the shared secret (its bytes, a trailing newline dropped). Unset:
	// requests are not verified.
	SecretFile string `env:"SIGNING_SECRET_FILE"`
	// Window is how far a request's timestamp may be from now, either way.
	Window time.Duration `env:"SIGNING_WINDOW_S" envDefault:"300" unit:"s"`
	// MaxNonces bounds the nonces the store keeps at once, each about a window: the most
	// signed requests taken in one window (the default, 1,000 a second over 300 s). Past it,
	// signed requests fail closed until the oldest windows pass.
	MaxNonces int `env:"SIGNING_MAX_NONCES" envDefault:"300000"`
}

// Validate reports every field out of range.
func (c Config) Validate() error {
	check := settings.For("signing")
	if c.Window < time.Second || c.Window > time.Hour {
		check.Addf("Window", "must be between a second and an hour, got %s", c.Window)
	}
	if c.MaxNonces < 1 || c.MaxNonces > 10_000_000 {
		check.Addf("MaxNonces", "must be between 1 and 10000000, got %d", c.MaxNonces)
	}
	return check.Err()
}

// Why a signed request was refused: the reason of the error body.
const (
	ReasonMissing     = "missing_signature"       // a header is absent
	ReasonMalformed   = "malformed_signature"     // a header is not of its shape
	ReasonStale       = "stale_timestamp"         // the timestamp is outside the window
	ReasonMismatch    = "signature_mismatch"      // the HMAC does not match the request
	ReasonReplayed    = "replayed_nonce"          // the nonce was accepted before
	ReasonNoncesFull  = "nonce_store_full"        // no room for the nonce: retry later
	ReasonUnavailable = "nonce_store_unavailable" // the shared store does not answer
)

// Failure is a refused request: why, and for a full or unavailable store, when to retry.
type Failure struct {
	Reason     string
	RetryAfter time.Duration
}

func (f *Failure) Error() string { return "signing: request refused: " + f.Reason }

// Nonces keeps the nonces accepted within their windows. Consume records key (a hash of a
// nonce) until expires and returns nil, or ErrReplayed when it is recorded already, or a
// *Failure when there is no room, or another error.
type Nonces interface {
	Consume(ctx context.Context, key string, expires time.Time) error
}

// ErrReplayed is a nonce that was consumed before.
var ErrReplayed = errors.New("signing: the nonce was used before")

// Verifier checks signed requests. It is safe for concurrent use.
type Verifier struct {
	secret []byte
	window time.Duration
	clk    clock.Clock
	nonces Nonces
}

// maxNonceLen bounds a nonce: an opaque value, but not an unbounded one.
const maxNonceLen = 256

// NewVerifier checks cfg and builds a verifier with secret and nonces.
func NewVerifier(cfg Config, secret []byte, clk clock.Clock, nonces Nonces) (*Verifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(secret) == 0 || clk == nil || nonces == nil {
		return nil, errors.New("signing: a verifier needs a secret, a clock and a nonce store")
	}
	return &Verifier{secret: secret, window: cfg.Window, clk: clk, nonces: nonces}, nil
}

// Verify checks a request: method, its exact origin-form target (path and query), its exact
// body, and header reading its headers. It returns nil, a *Failure, or ctx's error.
func (v *Verifier) Verify(ctx context.Context, method, target string, body []byte, header func(string) string) error {
	tsText, nonce, sig := header(HeaderTimestamp), header(HeaderNonce), header(HeaderSignature)
	if tsText == "" || nonce == "" || sig == "" {
		return &Failure{Reason: ReasonMissing}
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	hexSig, ok := strings.CutPrefix(sig, "sha256=")
	if err != nil || !ok || len(hexSig) != 64 || len(nonce) > maxNonceLen {
		return &Failure{Reason: ReasonMalformed}
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return &Failure{Reason: ReasonMalformed}
	}
	now := v.clk.Now()
	at := time.Unix(ts, 0)
	if at.Before(now.Add(-v.window)) || at.After(now.Add(v.window)) {
		return &Failure{Reason: ReasonStale}
	}
	if !hmac.Equal(got, mac(v.secret, Canonical(method, target, ts, nonce, body))) {
		return &Failure{Reason: ReasonMismatch}
	}
	h := sha256.Sum256([]byte(nonce))
	switch err := v.nonces.Consume(ctx, hex.EncodeToString(h[:16]), at.Add(v.window)); {
	case err == nil:
		return nil
	case errors.Is(err, ErrReplayed):
		return &Failure{Reason: ReasonReplayed}
	case ctx.Err() != nil:
		return ctx.Err()
	default:
		var f *Failure
		if errors.As(err, &f) {
			return f
		}
		return &Failure{Reason: ReasonUnavailable, RetryAfter: time.Second}
	}
}

// ReadSecret reads the shared secret from path: its bytes, a trailing line end dropped.
func ReadSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing: the secret file: %w", err)
	}
	b = []byte(strings.TrimRight(string(b), "\r\n"))
	if len(b) == 0 {
		return nil, errors.New("signing: the secret file is empty")
	}
	return b, nil
}
