package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-serving/sluice/inferencepb"
	"github.com/sluice-serving/sluice/logtest"
	"github.com/sluice-serving/sluice/mtls/mtlstest"
	"github.com/sluice-serving/sluice/openmedpb"
)

// grpcConn dials the server's gRPC listener, whose address the ready line names.
func grpcConn(t *testing.T, srv *testServer) *grpc.ClientConn {
	t.Helper()
	var ready struct{ GRPC string }
	if err := json.Unmarshal([]byte(srv.logs.WaitFor(t, 10*time.Second, `"msg":"ready"`)), &ready); err != nil || ready.GRPC == "" || ready.GRPC == "off" {
		t.Fatalf("ready line: %+v, %v", ready, err)
	}
	conn, err := grpc.NewClient(ready.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestGRPCServicesAnswerAsTheirRoutes: a client generated from OpenMed's contract and one from
// the Open Inference Protocol's get the answers the REST routes give, with the same credentials
// (an API key in the metadata) and the same refusals, worded as gRPC statuses.
func TestGRPCServicesAnswerAsTheirRoutes(t *testing.T) {
	t.Parallel()
	keys := "SLUICE_API_KEYS=[" + keyEntry("a-key", "a-tenant", "*") + "," + keyEntry("r-key", "r-tenant", "models:read") + "]"
	srv := startServer(t, keys, "SLUICE_GRPC_ADDR=127.0.0.1:0", "SLUICE_GENERATE_MODEL=none")
	conn := grpcConn(t, srv)
	om := openmedpb.NewOpenMedServiceClient(conn)
	keyed := func(key string) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		t.Cleanup(cancel)
		return metadata.AppendToOutgoingContext(ctx, "x-api-key", key)
	}
	const note = "Patient John Smith, phone 555-123-4567, seen today."

	if _, err := om.Extract(context.Background(), &openmedpb.ExtractRequest{Text: note}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without a key: %v", err)
	}
	if _, err := om.Extract(keyed("r-key"), &openmedpb.ExtractRequest{Text: note}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("without the scope: %v", err)
	}
	var header metadata.MD
	got, err := om.Extract(keyed("a-key"), &openmedpb.ExtractRequest{Text: note}, grpc.Header(&header))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.url+"/pii/extract", strings.NewReader(`{"text":"`+note+`"}`))
	req.Header.Set("X-API-Key", "a-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var rest struct{ Entities []any }
	derr := json.NewDecoder(resp.Body).Decode(&rest)
	resp.Body.Close()
	if resp.StatusCode != 200 || derr != nil || len(header.Get("x-request-id")) != 1 {
		t.Fatalf("REST %d, %v, header %v", resp.StatusCode, derr, header)
	}
	restEnts := rest.Entities
	if len(got.Entities) == 0 || len(got.Entities) != len(restEnts) || got.ModelName == "" {
		t.Fatalf("gRPC entities %v; REST %v", got.Entities, restEnts)
	}
	for i, e := range got.Entities {
		r := restEnts[i].(map[string]any)
		if e.Label != r["label"] || e.GetStart() != int64(r["start"].(float64)) || e.Text != r["text"] {
			t.Errorf("entity %d: %v; REST %v", i, e, r)
		}
	}

	if _, err := om.Extract(keyed("a-key"), &openmedpb.ExtractRequest{Text: "  "}); status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(status.Convert(err).Message(), "body.text") {
		t.Errorf("empty text: %v", err)
	}
	if _, err := om.Analyze(keyed("a-key"), &openmedpb.AnalyzeRequest{Text: "Started metformin 500 mg for diabetes."}); err != nil {
		t.Errorf("analyze: %v", err)
	}

	method := "mask"
	de, err := om.Deidentify(keyed("a-key"), &openmedpb.DeidentifyRequest{Text: note, Method: &method})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(de.DeidentifiedText, "555-123-4567") || de.NumEntitiesRedacted == 0 || len(de.PiiEntities) == 0 || de.Method != "mask" {
		t.Errorf("deidentify: %q, %d redacted, method %q", de.DeidentifiedText, de.NumEntitiesRedacted, de.Method)
	}

	st, err := om.StreamDeidentify(keyed("a-key"), &openmedpb.DeidentifyStreamRequest{
		Request: &openmedpb.DeidentifyRequest{Method: &method}, Chunks: []string{"Patient John Smith, ", "phone 555-123-4567, seen today."}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var final *openmedpb.DeidentifyStreamResponse
	for {
		msg, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if msg.Final {
			final = proto.Clone(msg).(*openmedpb.DeidentifyStreamResponse)
			continue
		}
		text.WriteString(msg.RedactedText)
	}
	if final == nil || len(final.Spans) == 0 || final.AuditRecord == nil || strings.Contains(text.String(), "555-123-4567") || text.Len() == 0 {
		t.Errorf("stream: %q, final %v", text.String(), final)
	}

	v2 := inferencepb.NewGRPCInferenceServiceClient(conn)
	if live, err := v2.ServerLive(context.Background(), &inferencepb.ServerLiveRequest{}); err != nil || !live.Live {
		t.Errorf("live: %v, %v", live, err)
	}
	md, err := v2.ModelMetadata(keyed("r-key"), &inferencepb.ModelMetadataRequest{Name: got.ModelName})
	if err != nil || md.Inputs[0].Datatype != "BYTES" {
		t.Fatalf("metadata: %v, %v", md, err)
	}
	inf, err := v2.ModelInfer(keyed("a-key"), &inferencepb.ModelInferRequest{ModelName: got.ModelName, Id: "q1",
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "text", Datatype: "BYTES", Shape: []int64{2},
			Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte(note), []byte("Nothing here.")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	out := inf.Outputs[0].GetContents().GetBytesContents()
	var first []map[string]any
	if inf.Id != "q1" || len(out) != 2 || json.Unmarshal(out[0], &first) != nil || len(first) != len(got.Entities) {
		t.Errorf("infer: %v (%s)", inf, out)
	}
	raw := []byte{byte(len(note)), 0, 0, 0}
	inf, err = v2.ModelInfer(keyed("a-key"), &inferencepb.ModelInferRequest{ModelName: got.ModelName,
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "text", Datatype: "BYTES", Shape: []int64{1}}},
		RawInputContents: [][]byte{append(raw, note...)}})
	if err != nil || len(inf.RawOutputContents) != 1 {
		t.Fatalf("raw infer: %v, %v", inf, err)
	}
	// A version is asked of the protocol's versioned routes, which say the server keeps none,
	// after the credentials, as over REST.
	versioned := &inferencepb.ModelInferRequest{ModelName: got.ModelName, ModelVersion: "1",
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "text", Datatype: "BYTES", Shape: []int64{1},
			Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte(note)}}}}}
	if _, err := v2.ModelInfer(keyed("a-key"), versioned); status.Code(err) != codes.NotFound {
		t.Errorf("infer of a version: %v", err)
	}
	if _, err := v2.ModelInfer(context.Background(), versioned); status.Code(err) != codes.Unauthenticated {
		t.Errorf("infer of a version without a key: %v", err)
	}
	if _, err := v2.ModelReady(keyed("r-key"), &inferencepb.ModelReadyRequest{Name: got.ModelName, Version: "1"}); status.Code(err) != codes.NotFound {
		t.Errorf("ready of a version: %v", err)
	}
	if _, err := v2.ModelMetadata(keyed("r-key"), &inferencepb.ModelMetadataRequest{Name: got.ModelName, Version: "1"}); status.Code(err) != codes.NotFound {
		t.Errorf("metadata of a version: %v", err)
	}
	if _, err := v2.ModelInfer(keyed("a-key"), &inferencepb.ModelInferRequest{ModelName: "no-such-model",
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "text", Datatype: "BYTES", Shape: []int64{1},
			Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte(note)}}}}}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown model: %v", err)
	}
	// Bytes that are not UTF-8 would reach the model as U+FFFD: refused, as HTTP refuses a
	// body that is not UTF-8; a request past the texts' bound is refused before its texts are
	// read.
	latin1 := &inferencepb.ModelInferRequest{ModelName: got.ModelName,
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "text", Datatype: "BYTES", Shape: []int64{1},
			Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte("Ren\xe9 Dupont")}}}}}
	if _, err := v2.ModelInfer(keyed("a-key"), latin1); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a Latin-1 text: %v", err)
	}
	// What the gRPC side finds wrong is answered after the route has heard the credentials, as
	// HTTP answers: a caller without them learns only that.
	if _, err := v2.ModelInfer(context.Background(), latin1); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a Latin-1 text without a key: %v", err)
	}
	if _, err := v2.ModelInfer(keyed("r-key"), latin1); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a Latin-1 text without the scope: %v", err)
	}
	negative := &openmedpb.DeidentifyStreamRequest{Request: &openmedpb.DeidentifyRequest{Text: note}, ChunkSize: -1}
	for key, want := range map[string]codes.Code{"": codes.Unauthenticated, "a-key": codes.InvalidArgument} {
		ctx := context.Background()
		if key != "" {
			ctx = keyed(key)
		}
		st, err := om.StreamDeidentify(ctx, negative)
		if err == nil {
			_, err = st.Recv()
		}
		if status.Code(err) != want {
			t.Errorf("a negative chunk_size, key %q: %v", key, err)
		}
	}
	many := &inferencepb.ModelInferRequest{ModelName: got.ModelName,
		Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "text", Datatype: "BYTES", Shape: []int64{100_000}}},
		RawInputContents: [][]byte{make([]byte, 4*100_000)}}
	if _, err := v2.ModelInfer(keyed("a-key"), many); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "at most 64") {
		t.Errorf("100,000 empty texts: %v", err)
	}
	// A string field that is not UTF-8 (written by hand: a generated client will not send it)
	// does not decode, and is the caller's fault, on a unary call and a stream; metadata past
	// its bound never reaches the route.
	latin1Text := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "Ren\xe9 Dupont")
	var reply []byte
	if err := conn.Invoke(keyed("a-key"), "/openmed.service.v1.OpenMedService/Deidentify", latin1Text, &reply, grpc.ForceCodecV2(rawCodec{})); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a Latin-1 string field: %v", err)
	}
	if err := conn.Invoke(context.Background(), "/openmed.service.v1.OpenMedService/Deidentify", latin1Text, &reply, grpc.ForceCodecV2(rawCodec{})); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a Latin-1 string field without a key: %v", err)
	}
	wrapped := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), latin1Text)
	cs, err := conn.NewStream(keyed("a-key"), &openmedpb.OpenMedService_ServiceDesc.Streams[0], "/openmed.service.v1.OpenMedService/StreamDeidentify", grpc.ForceCodecV2(rawCodec{}))
	if err == nil {
		if err = cs.SendMsg(wrapped); err == nil {
			_ = cs.CloseSend()
			err = cs.RecvMsg(&reply)
		}
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("a Latin-1 string field in a stream's request: %v", err)
	}
	if _, err := om.Extract(keyed(strings.Repeat("k", 64<<10)), &openmedpb.ExtractRequest{Text: note}); err == nil ||
		status.Code(err) == codes.Unauthenticated {
		t.Errorf("64 KiB of metadata: %v, want it refused before the route", err)
	}
	if strings.Contains(srv.logs.String(), "555-123-4567") {
		t.Error("the note's text is in the logs")
	}
}

// rawCodec sends and receives a message's bytes as they are.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

// TestGRPCOverMutualTLS: the gRPC listener takes the HTTP listener's TLS and client
// certificate settings; a call's verified certificate is its principal, with that principal's
// scopes, and a call without one gets OpenMed's refusal as UNAUTHENTICATED.
func TestGRPCOverMutualTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := mtlstest.NewCA(t, "clinic CA")
	server := ca.Server(t)
	const workload = "spiffe://clinic.example/workload/grpc-client"
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_GRPC_ADDR=127.0.0.1:0",
		"SLUICE_MTLS=true", "SLUICE_MTLS_CA_BUNDLE="+writeFile(t, filepath.Join(dir, "ca.pem"), mtlstest.PEM(ca.Cert)),
		`SLUICE_MTLS_PRINCIPALS=[{"identities":["uri:`+workload+`"],"principal":"clinic-api","scopes":["pii:read"]}]`,
		"SLUICE_TLS_CERT_FILE="+writeFile(t, filepath.Join(dir, "server.pem"), mtlstest.PEM(server.Leaf)),
		"SLUICE_TLS_KEY_FILE="+writeFile(t, filepath.Join(dir, "server-key.pem"), mtlstest.KeyPEM(t, server)))
	var ready struct{ GRPC string }
	if err := json.Unmarshal([]byte(srv.logs.WaitFor(t, 10*time.Second, `"msg":"ready"`)), &ready); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	dial := func(certs ...tls.Certificate) openmedpb.OpenMedServiceClient {
		conn, err := grpc.NewClient(ready.GRPC, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: certs})))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return openmedpb.NewOpenMedServiceClient(conn)
	}
	good, none := dial(ca.Client(t, "client", workload)), dial()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const note = "Call Maria at (415) 555-0132."
	if got, err := good.Extract(ctx, &openmedpb.ExtractRequest{Text: note}); err != nil || len(got.Entities) == 0 {
		t.Fatalf("with its certificate: %v, %v", got, err)
	}
	if _, err := good.Deidentify(ctx, &openmedpb.DeidentifyRequest{Text: note}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a scope its principal lacks: %v", err)
	}
	if _, err := none.Extract(ctx, &openmedpb.ExtractRequest{Text: note}); status.Code(err) != codes.Unauthenticated ||
		!strings.Contains(status.Convert(err).Message(), "mtls_certificate_required") {
		t.Errorf("without a certificate: %v", err)
	}
}

// TestGRPCWithNodesClient: gRPC's own Node.js client (@grpc/grpc-js, the contracts loaded from
// this repository's .proto files by @grpc/proto-loader, another implementation of the wire
// than the Go stubs) gets OpenMed's answers and the Open Inference Protocol's.
func TestGRPCWithNodesClient(t *testing.T) {
	t.Parallel()
	node := jsClients(t)
	if _, err := os.Stat(filepath.Join("testdata", "js", "node_modules", "@grpc", "grpc-js")); err != nil {
		t.Skip("the gRPC client is not installed: run make test (or npm ci in cmd/serve/testdata/js)")
	}
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_GRPC_ADDR=127.0.0.1:0")
	var ready struct{ GRPC string }
	if err := json.Unmarshal([]byte(srv.logs.WaitFor(t, 10*time.Second, `"msg":"ready"`)), &ready); err != nil {
		t.Fatal(err)
	}
	const note = "Patient John Smith, phone 555-123-4567, seen today."
	cmd := exec.Command(node, "grpc.mjs", ready.GRPC, note)
	cmd.Dir = filepath.Join("testdata", "js")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr.String())
	}
	got := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[r["check"].(string)] = r
	}
	if ents, _ := got["extract"]["entities"].([]any); len(ents) == 0 || got["extract"]["error"] != nil {
		t.Errorf("extract: %v", got["extract"])
	}
	if text, _ := got["deidentify"]["text"].(string); text == "" || strings.Contains(text, "555-123-4567") {
		t.Errorf("deidentify: %v", got["deidentify"])
	}
	if code, _ := got["empty"]["code"].(float64); int(code) != int(codes.InvalidArgument) {
		t.Errorf("an empty text: %v", got["empty"])
	}
	if s := got["stream"]; s["error"] != nil || s["audit"] != true || strings.Contains(fmt.Sprint(s["text"]), "555-123-4567") {
		t.Errorf("stream: %v", s)
	}
	if outs, _ := got["infer"]["outputs"].([]any); len(outs) != 1 {
		t.Errorf("infer: %v", got["infer"])
	}
}

// TestGRPCCallsGetTheGrace: a gRPC call in flight when SIGTERM comes is answered, as an HTTP
// request would be: its calls run through the HTTP app in-process, whose own shutdown does
// not wait for them.
func TestGRPCCallsGetTheGrace(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready, done, logs := make(chan net.Addr, 1), make(chan int, 1), &logtest.Buffer{}
	env := []string{"SLUICE_ADDR=127.0.0.1:0", "SLUICE_DEVICE=cpu", "SLUICE_INTRA_OP_THREADS=1", "SLUICE_QUANTIZE=off",
		"SLUICE_DATA_DIR=" + t.TempDir(), "SLUICE_GRPC_ADDR=127.0.0.1:0", "SLUICE_GENERATE_MODEL=none", "SLUICE_SHUTDOWN_TIMEOUT_S=30"}
	go func() { done <- run(ctx, env, logs, logs, ready) }()
	addr := <-ready
	srv := &testServer{url: "http://" + addr.String(), logs: logs}
	om := openmedpb.NewOpenMedServiceClient(grpcConn(t, srv))
	long := strings.Repeat("Started metformin 500 mg for diabetes; seen by Dr. Smith at the clinic. ", 1000)
	answered := make(chan error, 1)
	go func() {
		_, err := om.Analyze(context.Background(), &openmedpb.AnalyzeRequest{Text: long})
		answered <- err
	}()
	// Its windows are being computed when SIGTERM comes (what cancel does in main).
	srv.waitForMetric(t, `sluice_batcher_running_requests{queue="analyze"} 1`)
	cancel()
	if err := <-answered; err != nil {
		t.Fatalf("the call in flight at SIGTERM: %v", err)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d:\n%s", code, logs.String())
	}
}
