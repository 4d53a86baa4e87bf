package grpcserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/openmedpb"
)

// endlessStream is a REST stream that never ends by itself: chunk lines of 32 KiB, each
// opening with its number, until it is closed.
type endlessStream struct {
	mu      sync.Mutex
	pending []byte
	next    int
	closed  chan struct{}
}

func newEndlessStream() *endlessStream { return &endlessStream{closed: make(chan struct{})} }

func (e *endlessStream) Read(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.closed:
		return 0, errors.New("the stream was closed")
	default:
	}
	if len(e.pending) == 0 {
		e.pending = fmt.Appendf(nil, `{"type":"chunk","redacted_text":"%08d%s"}`+"\n", e.next, strings.Repeat("x", 32<<10))
		e.next++
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	return n, nil
}

func (e *endlessStream) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.closed:
	default:
		close(e.closed)
	}
	return nil
}

func streamingApp(body io.ReadCloser) *handlers.InProcess {
	app := fiber.New()
	app.Post(deidentifyStreamPath, func(c *fiber.Ctx) error {
		c.Context().SetBodyStream(body, -1)
		return nil
	})
	return handlers.NewInProcess(app)
}

// TestAStalledStreamEndsItsCall: a client that starts a StreamDeidentify and never reads has
// its call ended, DEADLINE_EXCEEDED, once a message waits the stall limit to be sent, and the
// route's stream closed; reading at last, it gets the messages sent before, in order and once
// each, then that status. The stall closed only the route's stream: Send stayed blocked in
// grpc-go's flow control for as long as the client kept its connection, and the handler with
// it, holding graceful shutdown for the whole grace.
func TestAStalledStreamEndsItsCall(t *testing.T) {
	route := newEndlessStream()
	ended := make(chan error, 1)
	srv := grpc.NewServer(grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		err := handler(srv, ss)
		ended <- err
		return err
	}))
	srv.RegisterService(&openmedpb.OpenMedService_ServiceDesc, &openMed{calls: streamingApp(route), stall: 50 * time.Millisecond})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	// Small windows, no dynamic ones: what the client does not read soon fills them.
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(65535), grpc.WithInitialConnWindowSize(65535))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := openmedpb.NewOpenMedServiceClient(conn).StreamDeidentify(ctx,
		&openmedpb.DeidentifyStreamRequest{Request: &openmedpb.DeidentifyRequest{Text: "Patient John Smith"}})
	if err != nil {
		t.Fatal(err)
	}

	select {
	case err := <-ended:
		if status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("the stalled call ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler of a call whose client does not read never returned")
	}
	select {
	case <-route.closed:
	default:
		t.Error("the route's stream is still open: its work goes on")
	}

	for seq := 0; ; seq++ {
		msg, err := st.Recv()
		if err != nil {
			if status.Code(err) != codes.DeadlineExceeded || seq == 0 {
				t.Fatalf("after %d messages: %v", seq, err)
			}
			break
		}
		if want := fmt.Sprintf("%08d", seq); !strings.HasPrefix(msg.RedactedText, want) {
			t.Fatalf("message %d opens with %.8s", seq, msg.RedactedText)
		}
	}
}

// blockedStream is a stream whose Send blocks, as grpc-go's does when the client's window is
// full, until the call's context ends.
type blockedStream struct {
	grpc.ServerStream
	ctx     context.Context
	sends   atomic.Int32
	through chan struct{} // a Send returned
}

func (b *blockedStream) Context() context.Context { return b.ctx }

func (b *blockedStream) Send(*openmedpb.DeidentifyStreamResponse) error {
	b.sends.Add(1)
	defer func() { b.through <- struct{}{} }()
	<-b.ctx.Done()
	return b.ctx.Err()
}

// TestAStalledSendEndsWithItsCall: the Send the stall gave up on is not left behind: it ends
// when the call's context does (grpc-go cancels it as the handler returns), and no message is
// sent again.
func TestAStalledSendEndsWithItsCall(t *testing.T) {
	ctx, cancel := context.WithCancel(metadata.NewIncomingContext(context.Background(), metadata.Pairs(":authority", "localhost")))
	defer cancel()
	route := newEndlessStream()
	o := &openMed{calls: streamingApp(route), stall: 10 * time.Millisecond}
	stream := &blockedStream{ctx: ctx, through: make(chan struct{}, 2)}
	ended := make(chan error, 1)
	go func() {
		ended <- o.StreamDeidentify(&openmedpb.DeidentifyStreamRequest{Request: &openmedpb.DeidentifyRequest{Text: "x"}}, stream)
	}()
	select {
	case err := <-ended:
		if status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("the stalled call ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler of a stalled call never returned")
	}
	if n := stream.sends.Load(); n != 1 {
		t.Fatalf("%d sends begun, want the one that stalled", n)
	}
	cancel() // what grpc-go does once the handler has returned
	select {
	case <-stream.through:
	case <-time.After(20 * time.Second):
		t.Fatal("the stalled Send never ended")
	}
	if n := stream.sends.Load(); n != 1 {
		t.Fatalf("%d sends, want the one", n)
	}
}
