package grpcserve

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/inferencepb"
	"github.com/sluice-serving/sluice/openmedpb"
)

// Config sets the listener up.
type Config struct {
	// Calls is the HTTP server every call runs through.
	Calls *handlers.InProcess
	// TLS, when not nil, is the listener's (the HTTP listener's, with its client certificate
	// settings); nil: plaintext.
	TLS *tls.Config
	// MaxMessageBytes bounds a request message, as the HTTP body limit bounds a body.
	MaxMessageBytes int
	// Stall bounds the sending of each message of a stream, as the HTTP listener's write
	// timeout bounds each write: a client that stops reading gives its stream's work up, and
	// its call ends DEADLINE_EXCEEDED.
	Stall time.Duration
}

// maxStreams bounds the calls one connection has open at once (grpc-go's default is no bound):
// each holds a message of up to MaxMessageBytes before admission weighs it, and an HTTP/1.1
// connection carries one request at a time.
const maxStreams = 100

// maxMetadataBytes bounds a call's metadata (grpc-go's default is 16 MiB), as the HTTP
// listener's header buffer bounds a request's headers: room for gRPC's own headers and a
// bearer token of several kilobytes.
const maxMetadataBytes = 16 << 10

// keepalive: a peer that vanished without closing is found within a minute, a connection with
// no call for five minutes is closed (as the HTTP listener's idle one), and a client may ping
// no more often than every ten seconds.
var (
	serverKeepalive = keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 20 * time.Second, MaxConnectionIdle: 5 * time.Minute}
	clientPings     = keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}
)

// New builds the gRPC server with both services registered; Serve it on a listener.
func New(cfg Config) (*grpc.Server, error) {
	var problems []string
	if cfg.Calls == nil {
		problems = append(problems, "Calls is required")
	}
	if cfg.MaxMessageBytes <= 0 {
		problems = append(problems, "MaxMessageBytes must be positive")
	}
	if cfg.Stall <= 0 {
		problems = append(problems, "Stall must be positive")
	}
	if len(problems) > 0 {
		return nil, errors.New("grpcserve: " + strings.Join(problems, "; "))
	}
	dec := newDecoder(cfg.Calls)
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(cfg.MaxMessageBytes), grpc.MaxConcurrentStreams(maxStreams),
		grpc.MaxHeaderListSize(maxMetadataBytes), grpc.ForceServerCodecV2(dec),
		grpc.KeepaliveParams(serverKeepalive), grpc.KeepaliveEnforcementPolicy(clientPings)}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	srv := grpc.NewServer(opts...)
	srv.RegisterService(dec.methods(&openmedpb.OpenMedService_ServiceDesc), &openMed{calls: cfg.Calls, stall: cfg.Stall})
	srv.RegisterService(dec.methods(&inferencepb.GRPCInferenceService_ServiceDesc), &inference{calls: cfg.Calls, maxBody: cfg.MaxMessageBytes})
	return srv, nil
}

// retryToken is the retry reservation's header (admission's) as a metadata key: a refusal's
// trailer carries it, and a retry's metadata brings it back.
var retryToken = strings.ToLower(admission.RetryTokenHeader)

// forwarded are the metadata keys that travel as the HTTP request's headers.
var forwarded = []string{"authorization", "x-api-key", "traceparent", "x-request-id", retryToken}

// call runs the HTTP request a gRPC call stands for, with the call's metadata and connection.
func call(ctx context.Context, calls *handlers.InProcess, method, path string, body []byte) *handlers.Reply {
	c := handlers.Call{Method: method, Path: path, Body: body, Header: map[string]string{}}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for _, k := range forwarded {
			if v := md.Get(k); len(v) == 1 {
				c.Header[k] = v[0]
			}
		}
		if v := md.Get(":authority"); len(v) == 1 {
			c.Host = v[0]
		}
	}
	if p, ok := peer.FromContext(ctx); ok {
		c.Peer = p.Addr
		if info, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			c.TLS = &info.State
		}
	}
	r := calls.Do(ctx, c)
	if id := r.Header["x-request-id"]; id != "" {
		_ = grpc.SetHeader(ctx, metadata.Pairs("x-request-id", id))
	}
	return r
}

// invalid is INVALID_ARGUMENT for msg, a fault the gRPC side finds before the route reads the
// request, answered only once the route has heard the call's credentials: the route is called
// with a body that is not UTF-8, which it refuses unread after the hosts check, credentials,
// scopes, admission and budget every call meets. A caller the route refuses gets that refusal,
// as over HTTP, and learns nothing of its request's shape.
func invalid(ctx context.Context, calls *handlers.InProcess, path, msg string) error {
	r := call(ctx, calls, http.MethodPost, path, []byte{0xff})
	if r.Stream != nil {
		r.Stream.Close()
		return status.Error(codes.Internal, "the route answered a body that is not UTF-8 with a stream")
	}
	if r.Status == http.StatusUnprocessableEntity { // the body's refusal: every check before it passed
		return status.Error(codes.InvalidArgument, msg)
	}
	return failure(ctx, r) // a 400 is the hosts check's, before the credentials
}

// codeOf is the gRPC status of an HTTP one.
func codeOf(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusUnsupportedMediaType:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case 499:
		return codes.Canceled
	case http.StatusNotImplemented:
		return codes.Unimplemented
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusInsufficientStorage: // a model that can never fit: not to be retried as it is
		return codes.FailedPrecondition
	case http.StatusGatewayTimeout, http.StatusRequestTimeout:
		return codes.DeadlineExceeded
	}
	return codes.Internal
}

// failure is a non-200 reply as a gRPC status: the HTTP error's code and message (content-free
// by the handlers' rule), the fields a validation failure names, and Retry-After and the retry
// token in the trailer (a reservation booked for a caller who never sees its token is a place
// held for nobody).
func failure(ctx context.Context, r *handlers.Reply) error {
	for _, k := range []string{"retry-after", retryToken} {
		if v := r.Header[k]; v != "" {
			_ = grpc.SetTrailer(ctx, metadata.Pairs(k, v))
		}
	}
	return status.Error(codeOf(r.Status), errorMessage(r.Body, r.Status))
}

// errorMessage words an HTTP error body: the envelope's {"error": {code, message, details}},
// or the Open Inference Protocol's {"error": message}.
func errorMessage(body []byte, httpStatus int) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || len(env.Error) == 0 {
		return http.StatusText(httpStatus)
	}
	var flat string
	if json.Unmarshal(env.Error, &flat) == nil {
		return flat
	}
	var e struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	}
	if json.Unmarshal(env.Error, &e) != nil {
		return http.StatusText(httpStatus)
	}
	msg := e.Message
	if e.Code != "" {
		msg = e.Code + ": " + msg
	}
	var fields []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Details, &fields) == nil {
		for _, f := range fields {
			msg += "; " + f.Field + ": " + f.Message
		}
	}
	return msg
}
