// Package grpcserve is Sluice's gRPC listener: OpenMed's OpenMedService (openmedpb) and the
// Open Inference Protocol's GRPCInferenceService (inferencepb), for the clients that speak
// them (OpenMed's generated stubs; KServe, Triton and Seldon clients).
//
// Neither service does any work of its own. Each call becomes the HTTP request it stands for
// (Analyze is POST /analyze, ModelInfer is POST /v2/models/{name}/infer, and so on) and runs
// through the server in the process (handlers.InProcess), so that credentials, scopes, the
// trusted hosts, mTLS, admission, budgets, metrics, the audit and the access log are the HTTP
// route's own, by construction. Request metadata carries what the HTTP headers would:
// authorization, x-api-key, traceparent, x-request-id, x-sluice-retry-token; the caller's
// address and verified TLS state are the connection's. An HTTP failure becomes the gRPC status
// of the same meaning (422 INVALID_ARGUMENT, 401 UNAUTHENTICATED, 429 RESOURCE_EXHAUSTED,
// 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED), worded from the error's code and message, never
// from the request, with a refusal's retry-after and x-sluice-retry-token in the trailer.
// A stream whose client takes nothing for Config.Stall ends DEADLINE_EXCEEDED, its work
// stopped, as the HTTP listener cuts a stream whose write times out. A request message that
// does not decode is INVALID_ARGUMENT, the caller's fault (see decoder), and a call's metadata
// is bounded as HTTP headers are.
//
// # How to use it
//
//	srv, err := grpcserve.New(grpcserve.Config{Calls: handlers.NewInProcess(app), TLS: tlsConfig,
//		MaxMessageBytes: limits.MaxBodyBytes, Stall: writeTimeout})
//	go srv.Serve(listener)
//	defer srv.GracefulStop()
//
// With request signing required, gRPC calls are refused: the signature covers an HTTP request
// that a gRPC client never makes. mTLS is how a gRPC client proves itself in that setting.
package grpcserve
