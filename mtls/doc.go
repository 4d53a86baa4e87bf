// Package mtls is OpenMed's mutual-TLS client authentication: a client certificate chain,
// from the TLS connection Sluice terminates or from a trusted proxy's header, verified against
// a CA bundle at the application boundary and mapped to a principal and scopes.
//
// # How to use it
//
//	v, err := mtls.New(cfg)                 // cfg: from the environment; reads the CA bundle once
//	id, err := v.Verify(chain)              // chain: leaf first, from tls.ConnectionState or ParseHeader
//	p := v.Principal(id)                    // the mapped principal, or mtls:<fingerprint> with no scopes
//
// A bundle with no certificate, or with a private key in it, refuses the start. A certificate
// is accepted when it chains to the bundle and may be used for client authentication; no
// online revocation check is made (OpenMed makes none), and a CA's own certificate is no
// client's. Identities are the subject (RFC 4514: its RDNs last first), the subject
// alternative names typed as OpenMed types them (dns:, uri:, ip:, email:) and the leaf's
// SHA-256 fingerprint. The subject and SANs are never logged; an unmapped certificate's
// principal, mtls:<fingerprint>, is its tenant, and labels its requests as a tenant does.
package mtls
