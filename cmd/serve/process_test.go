package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// The promises a process keeps (resident memory, shutdown time, start-up errors) are tested on
// the server binary itself, built once per test run without the race detector, whose shadow
// memory would be most of what RSS measures.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain fails the package if a test leaves a goroutine running, and removes the built
// binary after the leak check.
//
// Each test runs in parallel with the others (two at a time, as -parallel defaults to the
// CPUs) unless its first line says why not: most wait on a server, a client process or a
// slowed model much of the time, and the package would otherwise take most of its timeout.
// The tests that are not parallel run first, alone.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// fasthttp's once-per-process Date header refresher: loops for the life of the process.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		// A stopped server's worker-pool cleaner sleeps out MaxIdleWorkerDuration (10 s) before it
		// sees the stop; a server left running still shows through its accept loop.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.Cleanup(func(code int) {
			if built.dir != "" {
				os.RemoveAll(built.dir)
			}
			os.Exit(code)
		}),
	)
}

// serverBinary builds cmd/serve, once.
func serverBinary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "sluice-test-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "sluice")
		out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// serverCommand is the server binary set up to run with env after the test defaults.
func serverCommand(t testing.TB, env ...string) *exec.Cmd {
	cmd := exec.Command(serverBinary(t))
	if serverCPUs != "" {
		cmd = exec.Command("taskset", "-c", serverCPUs, serverBinary(t))
	}
	cmd.Env = append(append(os.Environ(), "SLUICE_ADDR=127.0.0.1:0", "SLUICE_DEVICE=cpu",
		"SLUICE_INTRA_OP_THREADS=1", "SLUICE_LOG_LEVEL=info", "SLUICE_DATA_DIR="+t.TempDir()), env...)
	return cmd
}

// serverCPUs, when set, pins the server processes to these CPUs (taskset's list), away from
// a benchmark's load generator.
var serverCPUs string

// process is the server running as a child process.
type process struct {
	cmd     *exec.Cmd
	url     string
	exited  chan struct{} // closed when the process has exited
	waitErr error         // cmd.Wait's, once exited is closed
	// started is every line logged up to and including "ready".
	started []string
}

// startProcess runs the server binary and returns once it has logged that it is ready; the
// process is killed when the test ends if it has not exited by then.
func startProcess(t testing.TB, env ...string) *process {
	t.Helper()
	cmd := serverCommand(t, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	lines := bufio.NewScanner(out)
	var seen []string
	for lines.Scan() {
		var rec struct{ Msg, Addr string }
		seen = append(seen, lines.Text())
		if json.Unmarshal(lines.Bytes(), &rec) == nil && rec.Msg == "ready" {
			p.url = "http://" + rec.Addr
			break
		}
	}
	p.started = seen
	if p.url == "" {
		cmd.Wait()
		t.Fatalf("server process ended before it was ready:\n%s", strings.Join(seen, "\n"))
	}
	go func() {
		for lines.Scan() {
		}
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// rssBytes is the process's resident set size from /proc.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// TestTheStartUpLogSaysWhatIsServed: a first start on this CPU machine with the default device
// says, once ready, each model with its kind, precision, device and routes, whether callers
// authenticate and where state lives; durations carry their unit, and nothing warns about a
// CUDA provider nobody asked for.
func TestTheStartUpLogSaysWhatIsServed(t *testing.T) {
	t.Parallel()
	p := startProcess(t, "SLUICE_DEVICE=auto")
	serving := map[string]map[string]any{}
	var ready map[string]any
	for _, line := range p.started {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			t.Fatalf("not a JSON log line: %s", line)
		}
		switch {
		case rec["level"] == "WARN" || rec["level"] == "ERROR":
			t.Errorf("a first start warns: %s", line)
		case rec["msg"] == "serving":
			serving[rec["model"].(string)] = rec
		case rec["msg"] == "ready":
			ready = rec
		}
		for k := range rec {
			if k == "took" || k == "elapsed" || k == "duration" {
				t.Errorf("a duration without its unit (%s): %s", k, line)
			}
		}
	}
	for name, kind := range map[string]string{"clinical-ner": "token classification", "pii": "token classification", "tiny-lm": "text generation",
		"embed-mini": "sentence embedding", "rerank-mini": "reranking"} {
		m := serving[name]
		if m == nil || m["kind"] != kind || m["device"] != "cpu" || m["precision"] == nil || m["routes"] == "" {
			t.Errorf("%s: %v", name, m)
		}
	}
	if serving["embed-mini"]["routes"] != "/v1/embeddings /embed" || serving["rerank-mini"]["routes"] != "/rerank /v1/rerank" {
		t.Errorf("the encoders' routes: %v %v", serving["embed-mini"], serving["rerank-mini"])
	}
	if serving["pii"]["precision"] != "int8" || !strings.Contains(serving["tiny-lm"]["routes"].(string), "/v1/chat/completions") {
		t.Errorf("precision or routes: %v %v", serving["pii"], serving["tiny-lm"])
	}
	if ready == nil || ready["authentication"] != "off: every caller is served" || ready["state"] == nil {
		t.Errorf("ready: %v", ready)
	}
}

// TestAHangUpWhileStartingIsLost: SIGHUP, whose default ends a process, sent while the server
// starts (loading its models, before it watches its key files) is lost, and the server goes
// on to serve.
func TestAHangUpWhileStartingIsLost(t *testing.T) {
	t.Parallel()
	cmd := serverCommand(t, "SLUICE_GENERATE_MODEL=none", "OPENMED_SERVICE_NO_SUCH_SETTING=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	lines := bufio.NewScanner(out)
	var seen []string
	ready := false
	for !ready && lines.Scan() {
		seen = append(seen, lines.Text())
		if strings.Contains(lines.Text(), "OpenMed settings are set") { // logged before the models load
			for range 3 {
				_ = cmd.Process.Signal(syscall.SIGHUP)
			}
		}
		ready = strings.Contains(lines.Text(), `"msg":"ready"`)
	}
	go func() {
		for lines.Scan() {
		}
		waitErr = cmd.Wait()
		close(exited)
	}()
	if !ready {
		<-exited
		t.Fatalf("the server ended before it was ready: %v\n%s", waitErr, strings.Join(seen, "\n"))
	}
}
