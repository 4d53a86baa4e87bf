//go:build !linux

package connwatch

import (
	"context"
	"errors"
	"net"
	"testing"
)

func TestFallbackNeverCancelsOnDisconnect(t *testing.T) {
	w, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	a, b := net.Pipe()
	ctx, stop := w.Watch(context.Background(), b)
	_ = a.Close()
	if err := ctx.Err(); err != nil {
		t.Fatalf("fallback context cancelled: %v", err)
	}
	if got := w.Stats().Unwatchable; got != 1 {
		t.Fatalf("Unwatchable = %d, want 1", got)
	}
	stop()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after stop ctx.Err() = %v", ctx.Err())
	}
}
