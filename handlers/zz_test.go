package handlers

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestZZEdges(t *testing.T) {
	f := newFixture(t)
	addr := strings.TrimPrefix(f.srv.URL, "http://")
	for _, raw := range []string{
		"FOO /analyze HTTP/1.1\r\nHost: x\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"POST /analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12\r\nContent-Length: 50\r\n\r\n{\"text\":\"a\"}",
	} {
		conn, _ := net.Dial("tcp", addr)
		conn.Write([]byte(raw))
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		b, err := io.ReadAll(bufio.NewReader(conn))
		t.Logf("%q -> %q %v", raw[:10], string(b), err)
		conn.Close()
	}
}
