package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BinaryEnv names the redis-server a test runs. The Makefile sets it (make test provides the
// binary), so that a test that needs Redis fails there when it cannot run one. It is not a
// SLUICE_ name: the server refuses SLUICE_ variables that are not its settings, and servers
// that tests start as child processes inherit the environment.
const BinaryEnv = "TEST_REDIS_SERVER"

// Server is a redis-server child process of a test, on a free loopback port, in its own
// temporary directory, keeping nothing on disk.
type Server struct {
	// Addr is host:port; URL is redis://Addr/0.
	Addr, URL string

	t    testing.TB
	bin  string
	dir  string
	port int
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	out    *bytes.Buffer
}

// Binary is the redis-server to run: $TEST_REDIS_SERVER, else the one on PATH. With
// neither it skips t, saying how to run it; with the variable set to something that does not
// run it fails t.
func Binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(BinaryEnv); bin != "" {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s=%s: %v (make test provides redis-server under third_party/redis)", BinaryEnv, bin, err)
		}
		return bin
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skipf("this test needs a real redis-server: none on PATH and %s unset (a go test run by hand; make test provides one and fails instead of skipping)", BinaryEnv)
	}
	return bin
}

// Start runs a redis-server for t, stopped when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t)
}

// StartWith is Start with more of redis-server's options after its own ("--requirepass",
// "secret"): a later option overrides an earlier one.
func StartWith(t testing.TB, args ...string) *Server {
	t.Helper()
	s := &Server{t: t, bin: Binary(t), dir: t.TempDir(), args: args}
	var err error
	for range 5 { // a free port can be taken between finding it and binding it
		if s.port, err = freePort(); err != nil {
			continue
		}
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	s.URL = "redis://" + s.Addr + "/0"
	t.Cleanup(s.Stop)
	return s
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs the server on s.port and waits until it answers PING.
func (s *Server) start() error {
	out := &bytes.Buffer{}
	cmd := exec.Command(s.bin, append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", ""}, s.args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	deadline := time.Now().Add(10 * time.Second)
	for !ping(addr) {
		select {
		case <-exited:
			return fmt.Errorf("exited before answering: %s", lastLines(out))
		case <-time.After(10 * time.Millisecond): // the next attempt
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("no answer to PING within 10 s: %s", lastLines(out))
		}
	}
	s.mu.Lock()
	s.cmd, s.exited, s.out = cmd, exited, out
	s.mu.Unlock()
	return nil
}

// ping says whether a Redis answers PING at addr: PONG, or NOAUTH from one that asks for a
// password.
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && (line == "+PONG\r\n" || strings.HasPrefix(line, "-NOAUTH"))
}

// Stop ends the server (SIGKILL: it keeps nothing anyway) and waits for it; a stopped server
// stays stopped.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// Restart starts a stopped server again on its port, empty.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("redis-server restart on %s: %v", s.Addr, err)
	}
}

// Log is what the server wrote so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out == nil {
		return ""
	}
	return s.out.String()
}

// lastLines is the end of a server's output, for an error.
func lastLines(out *bytes.Buffer) string {
	b := out.Bytes()
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}
