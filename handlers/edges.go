package handlers

import (
	"bytes"
	"regexp"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// edges answers, in the JSON envelope with a request id, the requests fiber would otherwise
// answer in plain text or not at all: a method fiber does not know (FOO, an HTTP/2 preface),
// a request whose Content-Length headers disagree, and an HTTP/1.1 request without exactly one
// Host header, with one that is not a host and port, or whose absolute-form target names
// another host (RFC 9112 asks a server to refuse these: the message's length, or its target,
// is ambiguous, and a proxy in front may have read it otherwise). It wraps the fasthttp
// server's handler because fiber answers an unknown method before any middleware runs.
type edges struct {
	s   *server
	app *fiber.App
}

// install puts edges in front of app's fasthttp server.
func (e *edges) install() {
	srv := e.app.Server()
	inner := srv.Handler
	srv.HeaderReceived = e.headerReceived
	srv.Handler = func(ctx *fasthttp.RequestCtx) {
		// headerReceived zeroed the length of a conflicting request; scanning again only when
		// the length is 0 spares the common request that scan, and leaves no state behind for
		// a request that never reaches this handler. The Host lines are counted on every
		// request: a walk over a few hundred bytes.
		raw := ctx.Request.Header.RawHeaders()
		if ctx.Request.Header.ContentLength() == 0 && conflictingLengths(raw) {
			e.answer(ctx, fiber.StatusBadRequest, "Bad Request: conflicting Content-Length headers", routeUnrouted)
			return
		}
		if status, why := transferCoding(raw, ctx.Request.Header.IsHTTP11()); status != 0 {
			e.answer(ctx, status, why, routeUnrouted)
			return
		}
		hosts := headerCount(raw, fasthttp.HeaderHost)
		if hosts > 1 || (hosts == 0 && ctx.Request.Header.IsHTTP11()) {
			e.answer(ctx, fiber.StatusBadRequest, "Bad Request: a request needs exactly one Host header", routeUnrouted)
			return
		} else if hosts == 1 && !validHostHeader(string(ctx.Request.Header.Host())) {
			// fasthttp builds the request's URI from the Host header and the target: a Host
			// holding a path would move the path the router sees.
			e.answer(ctx, fiber.StatusBadRequest, "Bad Request: the Host header is not a host name", routeUnrouted)
			return
		}
		if !plainTarget(ctx.Request.Header.RequestURI()) {
			e.answer(ctx, fiber.StatusBadRequest, "Bad Request: the request target is neither a path nor an absolute URL", routeUnrouted)
			return
		}
		if scheme, authority, absolute := targetAuthority(ctx.Request.Header.RequestURI()); absolute && hosts == 1 &&
			!sameAuthority(scheme, string(authority), string(ctx.Request.Header.Host())) {
			// An absolute-form target names the host itself, over the Host header (RFC 9112
			// §3.2.2): the two must agree, or the trusted hosts would judge the wrong one.
			e.answer(ctx, fiber.StatusBadRequest, "Bad Request: the target's host and the Host header differ", routeUnrouted)
			return
		}
		if !knownMethod(ctx.Method()) {
			e.answer(ctx, fiber.StatusNotImplemented, "Not Implemented", "unmatched")
			return
		}
		inner(ctx)
	}
}

// absoluteTarget is an absolute-form target whose authority ends the target or is followed by
// its path: where fasthttp, the hosts check and the signature all read the same host and path.
// Its groups are the scheme, the authority and the path (with its query).
var absoluteTarget = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)(/.*)?$`)

// plainTarget reports whether a request target has one reading: a path ("/p?q", not "//h/p",
// which fasthttp reads as a host), "*", or an absolute URL whose path follows its authority.
// Another shape ("x//h/p?q=://h/q", "http://h?x=/p") was routed as one path and judged (the
// Host, the signature) as another.
func plainTarget(t []byte) bool {
	switch {
	case len(t) > 0 && t[0] == '/':
		return len(t) == 1 || t[1] != '/'
	case string(t) == "*":
		return true
	}
	return absoluteTarget.Match(t)
}

// headerReceived runs after a request's headers are parsed and before its body is read. Two
// Content-Length headers that disagree make the body's end unknowable (the classic request
// smuggling shape): its body is not read (length 0, so the server does not wait for bytes
// that may never come), and the handler refuses it and closes the connection.
func (e *edges) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if conflictingLengths(h.RawHeaders()) {
		h.SetContentLength(0)
	}
	return fasthttp.RequestConfig{}
}

// answer writes a request that never reaches the router: the envelope, a request id, the
// connection closed after it, the access line and the metrics under route.
func (e *edges) answer(ctx *fasthttp.RequestCtx, status int, message, route string) {
	start := e.s.opts.Clock.Now()
	c := e.app.AcquireCtx(ctx)
	defer e.app.ReleaseCtx(c)
	id := newRequestID()
	c.Locals(localRequestID, id)
	c.Set(fiber.HeaderXRequestID, id)
	ctx.SetConnectionClose()
	_ = e.s.writeError(c, &apiError{Status: status, Code: CodeBadRequest, Outcome: OutcomeFailed,
		Message: message, Details: map[string]string{"reason": message}})
	method := "OTHER" // a method from the request line is not a label or log value we choose
	if knownMethod(ctx.Method()) {
		method = c.Method()
	}
	e.s.log(c.UserContext(), accessEntry{id: id, method: method, route: route, status: status,
		outcome: OutcomeFailed, elapsed: e.s.opts.Clock.Now().Sub(start)})
}

// knownMethod reports whether fiber routes method (its list of HTTP methods).
func knownMethod(method []byte) bool {
	switch string(method) {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodDelete,
		fiber.MethodConnect, fiber.MethodOptions, fiber.MethodTrace, fiber.MethodPatch:
		return true
	}
	return false
}

// conflictingLengths reports whether raw header lines carry Content-Length more than once
// with different values.
func conflictingLengths(raw []byte) bool {
	var first []byte
	seen, conflict := false, false
	eachHeader(raw, fasthttp.HeaderContentLength, func(value []byte) {
		conflict = conflict || (seen && !bytes.Equal(value, first))
		first, seen = value, true
	})
	return conflict
}

// transferCoding is the refusal of a request whose Transfer-Encoding makes its body's end
// ambiguous (RFC 9112 §6.1), 0 for none: beside a Content-Length (the CL.TE smuggling shape: a
// proxy in front that framed the body by its length passes on, as a request of its own, what
// fasthttp read as the chunked body's rest), in an HTTP/1.0 request, or as a coding other than
// chunked alone, which fasthttp would read as chunked all the same (501: the coding is not one
// the server takes). The answer closes the connection, as the RFC asks.
func transferCoding(raw []byte, http11 bool) (int, string) {
	codings := 0
	var last []byte
	eachHeader(raw, fasthttp.HeaderTransferEncoding, func(value []byte) { codings, last = codings+1, value })
	switch {
	case codings == 0:
		return 0, ""
	case headerCount(raw, fasthttp.HeaderContentLength) > 0:
		return fiber.StatusBadRequest, "Bad Request: Transfer-Encoding and Content-Length together"
	case !http11:
		return fiber.StatusBadRequest, "Bad Request: Transfer-Encoding in an HTTP/1.0 request"
	case codings > 1 || !bytes.EqualFold(last, []byte("chunked")):
		return fiber.StatusNotImplemented, "Not Implemented: a transfer coding other than chunked"
	}
	return 0, ""
}

// headerCount is how many of raw's header lines are named name.
func headerCount(raw []byte, name string) int {
	n := 0
	eachHeader(raw, name, func([]byte) { n++ })
	return n
}

// eachHeader calls fn with the value, trimmed, of each of raw's header lines named name (in
// any case).
func eachHeader(raw []byte, name string, fn func(value []byte)) {
	for len(raw) > 0 {
		var line []byte
		line, raw, _ = bytes.Cut(raw, []byte("\n"))
		k, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(k), []byte(name)) {
			fn(bytes.TrimSpace(value))
		}
	}
}
