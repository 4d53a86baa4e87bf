//go:build linux

package connwatch_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/handlers/connwatch"
)

const hangGuard = 10 * time.Second

// TestFiberHandlerSeesClientLeave runs a real fiber app on loopback. A handler that blocks
// on its watched context must see the client's departure, and requests whose client stays
// must finish untouched on the same keep-alive connection.
func TestFiberHandlerSeesClientLeave(t *testing.T) {
	w, err := connwatch.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()

	started := make(chan struct{}, 1)
	observed := make(chan error, 1)
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Post("/quick", func(c *fiber.Ctx) error {
		ctx, stop := w.Watch(c.UserContext(), c.Context().Conn())
		defer stop()
		if err := ctx.Err(); err != nil {
			return c.Status(fiber.StatusInternalServerError).SendString("cancelled")
		}
		return c.SendString("ok")
	})
	app.Post("/block", func(c *fiber.Ctx) error {
		ctx, stop := w.Watch(c.UserContext(), c.Context().Conn())
		defer stop()
		started <- struct{}{}
		select {
		case <-ctx.Done():
			observed <- context.Cause(ctx)
		case <-time.After(hangGuard):
			observed <- errors.New("handler hang guard: context never cancelled")
		}
		return c.SendStatus(fiber.StatusServiceUnavailable)
	})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	defer func() {
		if err := app.ShutdownWithTimeout(hangGuard); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Listener: %v", err)
		}
	}()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(hangGuard)); err != nil {
		t.Fatal(err)
	}
	post := func(path string) {
		t.Helper()
		req := "POST " + path + " HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
	}
	br := bufio.NewReader(conn)
	for range 2 {
		post("/quick")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("read response: %v", err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != fiber.StatusOK {
			t.Fatalf("quick request: status %d, want 200", resp.StatusCode)
		}
	}

	post("/block")
	select {
	case <-started:
	case <-time.After(hangGuard):
		t.Fatal("handler never started (hang guard)")
	}
	_ = conn.Close()

	select {
	case cause := <-observed:
		if !errors.Is(cause, connwatch.ErrClientGone) {
			t.Fatalf("handler saw cause %v, want ErrClientGone", cause)
		}
	case <-time.After(hangGuard):
		t.Fatal("no report from the handler (hang guard)")
	}
	st := w.Stats()
	if st.Disconnects != 1 || st.Unwatchable != 0 {
		t.Fatalf("Stats = %+v, want 1 disconnect and every request watched", st)
	}
}
