package main

import (
	"errors"
	"net"
)

// sendBuffer bounds the kernel's send buffer of every connection. Left to autotuning, Linux
// lets it grow to megabytes, and a client that stops reading a stream would have that much
// generated for it before the server notices; bounded, its sequence pauses after a few tens of
// kilobytes and is ended at the stall timeout. Ordinary responses are not limited by it: a
// write just waits for the client to read.
const sendBuffer = 64 << 10

// boundedSendListener sets sendBuffer on each accepted TCP connection.
type boundedSendListener struct{ net.Listener }

func (l boundedSendListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(sendBuffer) // best effort: the default is only less strict
	}
	return c, nil
}

// Close closes the listener; one closed already (a listener that failed, whose socket went
// with it) is no error. The HTTP server's shutdown returns at once on a Close that fails,
// before the requests on the connections it took are answered.
func (l boundedSendListener) Close() error {
	if err := l.Listener.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}
