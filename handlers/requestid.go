package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/gofiber/fiber/v2"
)

type localKey int

const (
	localRequestID localKey = iota
	localOutcome
	localStats
	localTenant
	localTenantLabel // the tenant as metrics may name it (identity.Principal.Label)
	localDeferred
	localAllowance
	localCharge
	localGateway
	localConnPrincipal   // *identity.Principal of a verified client certificate (mTLS)
	localReadsAllTenants // bool, with a credential: it may read every tenant's audit
	// localUnparsed marks a request fasthttp could not parse: its path and method, as fiber
	// reads them, are not the request's ("/", GET).
	localUnparsed
)

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

// validRequestID accepts a client's X-Request-ID only in the shapes request-id generators
// make and that cannot carry a name: a UUID (8-4-4-4-12 hex digits) or 32 hex digits (ours,
// and a W3C trace id). Anything else ("jane-doe-12345") would reach the access log, the audit
// and error bodies as the client wrote it, so it is replaced by an id of our own.
func validRequestID(id string) bool {
	switch len(id) {
	case 32:
		return isHex(id)
	case 36:
		return id[8] == '-' && id[13] == '-' && id[18] == '-' && id[23] == '-' &&
			isHex(id[:8]) && isHex(id[9:13]) && isHex(id[14:18]) && isHex(id[19:23]) && isHex(id[24:])
	}
	return false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; !(b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux (Go >= 1.24 panics instead)
	return hex.EncodeToString(b[:])
}

// errorType names an error by its Go type only: error messages from libraries may quote input.
func errorType(err error) string { return fmt.Sprintf("%T", err) }
