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
	localDeferred
	localAllowance
	localCharge
	localGateway
)

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

// validRequestID accepts a client's X-Request-ID only when it is short and plain, so a client
// cannot put arbitrary text (or PHI) into our logs through it.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9', b == '-', b == '_', b == '.', b == ':':
		default:
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
