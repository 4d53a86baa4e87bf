package handlers

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// InProcess calls the server's routes from inside the process. The gRPC faces (grpcserve)
// answer through it, so that a call over gRPC meets the same hosts check, credentials,
// signature check, admission, budgets, metrics and access log as the same request over HTTP:
// each concept keeps its one home here, and a gRPC service is only a change of shapes.
type InProcess struct {
	handler fasthttp.RequestHandler
}

// NewInProcess calls app, which New built.
func NewInProcess(app *fiber.App) *InProcess {
	return &InProcess{handler: app.Handler()}
}

// Call is one request made in the process.
type Call struct {
	Method, Path string
	// Host is what the caller addressed (gRPC's :authority), judged as a Host header is.
	Host string
	// Header holds the request's headers: credentials, traceparent, a request id.
	Header map[string]string
	Body   []byte
	// Peer is the caller's address, for the throttle key and a proxy's trust.
	Peer net.Addr
	// TLS is the caller's connection state when it came over TLS (its verified client chain
	// for mTLS); nil without.
	TLS *tls.ConnectionState
}

// Reply is a Call's answer. A streamed answer comes in Stream, which the caller must close
// (closing it early stops the stream as a departing client does); otherwise Body holds it.
type Reply struct {
	Status int
	// Header holds the answer's headers, by lower-case name.
	Header map[string]string
	Body   []byte
	Stream io.ReadCloser
}

// inProcessKey marks a request made by InProcess: its value is the caller's context, whose end
// ends the request's work as a departed HTTP client's would.
type inProcessKey struct{}

// Do runs call and returns its answer. ctx bounds the work, as the route's timeout does.
func (p *InProcess) Do(ctx context.Context, call Call) *Reply {
	if !validHostHeader(call.Host) {
		// As the HTTP listener's edge refuses a Host that is not a host name: the trusted
		// hosts' suffix match must never judge "evil.example/.example.org".
		return &Reply{Status: fiber.StatusBadRequest, Header: map[string]string{},
			Body: []byte(`{"error":{"code":"bad_request","message":"Bad Request: the authority is not a host name"}}`)}
	}
	var fctx fasthttp.RequestCtx
	var conn net.Conn = &callConn{peer: call.Peer, tls: call.TLS}
	if call.TLS != nil {
		conn = callConnTLS{conn.(*callConn)}
	}
	fctx.Init2(conn, nil, false)
	req := &fctx.Request
	req.Header.SetMethod(call.Method)
	req.SetRequestURI(call.Path)
	req.Header.SetHost(call.Host)
	req.Header.SetContentType(fiber.MIMEApplicationJSON)
	for k, v := range call.Header {
		req.Header.Set(k, v)
	}
	req.SetBody(call.Body)
	fctx.SetUserValue(inProcessKey{}, ctx)
	p.handler(&fctx)

	resp := &fctx.Response
	r := &Reply{Status: resp.StatusCode(), Header: map[string]string{}}
	resp.Header.VisitAll(func(k, v []byte) { r.Header[strings.ToLower(string(k))] = string(v) })
	if resp.IsBodyStream() {
		r.Stream = streamOf(resp.BodyStream())
		return r
	}
	r.Body = append([]byte(nil), resp.Body()...)
	return r
}

// callerContext is the context of an in-process request's caller, if c is one.
func callerContext(c *fiber.Ctx) (context.Context, bool) {
	ctx, ok := c.Context().UserValue(inProcessKey{}).(context.Context)
	return ctx, ok
}

func streamOf(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

// callConn is the connection an in-process request reports: the caller's address and TLS
// state, and nothing to read or write.
type callConn struct {
	peer net.Addr
	tls  *tls.ConnectionState
}

// callConnTLS adds the TLS state fasthttp looks for.
type callConnTLS struct{ *callConn }

func (c *callConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (c *callConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c *callConn) Close() error                     { return nil }
func (c *callConn) LocalAddr() net.Addr              { return inProcessAddr }
func (c *callConn) SetDeadline(time.Time) error      { return nil }
func (c *callConn) SetReadDeadline(time.Time) error  { return nil }
func (c *callConn) SetWriteDeadline(time.Time) error { return nil }
func (c *callConn) RemoteAddr() net.Addr {
	if c.peer == nil {
		return inProcessAddr
	}
	return c.peer
}

func (c callConnTLS) Handshake() error                     { return nil }
func (c callConnTLS) ConnectionState() tls.ConnectionState { return *c.tls }

var inProcessAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
