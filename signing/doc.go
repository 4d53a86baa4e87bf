// Package signing is OpenMed's HMAC request signing: the version-1 canonical string, the
// X-OpenMed-Signature of a request, and the verification of a signed request with a freshness
// window and a nonce that is accepted once.
//
// # How to use it
//
//	h := signing.Sign(secret, signing.Canonical("POST", "/jobs", ts, nonce, body)) // to send
//
//	v, err := signing.NewVerifier(cfg, secret, clk, nonces) // nonces: NewMemoryNonces or NewJetStreamNonces
//	if err := v.Verify(ctx, method, target, body, header); err != nil {
//		var f *signing.Failure // Reason says why, RetryAfter when the nonce store was full
//	}
//
// Verify checks the headers' shape, the timestamp's freshness and the HMAC before it spends
// the nonce, so that a forged or stale request takes no room in the store. The store keeps a
// nonce until its request's acceptance window has passed and never evicts one still active
// to make room: when full, requests fail closed (ReasonNoncesFull) until room frees. The
// memory store is the process's; the JetStream store (a key-value bucket whose entries outlive
// the window) is shared by every replica of a fleet, so a request replayed at another replica
// is refused too.
//
// The canonical string holds the body's hash, never the body, and no store keeps more than a
// hash of the nonce.
package signing
