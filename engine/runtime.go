package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/sluice-serving/sluice/settings"
)

// Device says where sessions run.
type Device string

const (
	// DeviceCPU runs every session on ONNX Runtime's CPU execution provider.
	DeviceCPU Device = "cpu"
	// DeviceCUDA runs sessions on the CUDA execution provider and fails start-up when it cannot.
	DeviceCUDA Device = "cuda"
	// DeviceAuto uses CUDA when it works on this machine and the CPU otherwise.
	DeviceAuto Device = "auto"
)

// ParseDevice reads a device name from configuration: "cpu", "cuda" or "auto", in any case.
func ParseDevice(s string) (Device, error) {
	switch d := Device(strings.ToLower(strings.TrimSpace(s))); d {
	case DeviceCPU, DeviceCUDA, DeviceAuto:
		return d, nil
	}
	return "", fmt.Errorf("engine: unknown device %q (want cpu, cuda or auto)", s)
}

// RuntimeOptions configures a Runtime. The zero value runs on the CPU with ONNX Runtime's
// default thread counts, loads the library from LibraryPath() and logs to slog.Default().
// The tags are where the server's environment sets each field (SLUICE_ and the env tag; see
// the package documentation).
type RuntimeOptions struct {
	// LibraryPath is the ONNX Runtime shared library; empty means LibraryPath().
	LibraryPath string `env:"ORT_LIB"`
	// Device is cpu, cuda or auto; empty means cpu.
	Device Device `env:"DEVICE" envDefault:"auto"`
	// IntraOpThreads bounds the threads one session uses inside an operator; 0 leaves ONNX
	// Runtime's default (one per physical core). Each session has its own pool of this size.
	IntraOpThreads int `env:"INTRA_OP_THREADS" envDefault:"0"`
	// InterOpThreads bounds the threads that run independent operators side by side; 0 leaves
	// the default. It only matters for graphs with parallel branches.
	InterOpThreads int `env:"INTER_OP_THREADS" envDefault:"1"`
	// NoSpinning stops ONNX Runtime's pool threads from busy-waiting for work between runs.
	// Spinning shaves a little latency off back-to-back runs of one session, but each session
	// has its own pool, and on a small machine spinning threads take the cores that the HTTP
	// server and the other sessions need. The server sets it from SLUICE_ORT_SPINNING, which
	// says the opposite, so it declares that variable itself.
	NoSpinning bool
	// CUDA configures the CUDA execution provider (device, memory cap, cuDNN search).
	CUDA CUDAOptions
	// Logger receives the few lines the engine writes (device choice); nil means slog.Default().
	Logger *slog.Logger

	// profilePrefix, when set, makes every session write ONNX Runtime's profile (one JSON
	// file per session, named from this prefix) when it is closed. The GPU check's profile
	// run sets it; a server never does.
	profilePrefix string
}

// Validate reports every option that is out of range: the result joins one *settings.Problem
// per bad field.
func (o RuntimeOptions) Validate() error {
	check := settings.For("engine")
	if o.Device != "" {
		if _, err := ParseDevice(string(o.Device)); err != nil {
			check.Addf("Device", "must be cpu, cuda or auto, got %q", o.Device)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"IntraOpThreads", o.IntraOpThreads}, {"InterOpThreads", o.InterOpThreads}} {
		if f.v < 0 {
			check.Addf(f.name, "must be at least 0 (0: ONNX Runtime's default), got %d", f.v)
		}
	}
	o.CUDA.validate(&check)
	return check.Err()
}

// Runtime owns the process's ONNX Runtime environment for its lifetime and creates sessions on
// the device it settled on. It is safe for concurrent use.
type Runtime struct {
	device  Device // cpu or cuda, never auto
	cuda    CUDAOptions
	intraOp int
	interOp int
	noSpin  bool
	profile string

	mu       sync.Mutex // guards closed and sessions; held while a session is being created
	closed   bool
	sessions map[*Session]struct{}
}

// ErrReleased is returned by calls on a Runtime or Session after Close: its ONNX Runtime
// memory is released. (Not admission.ErrClosed, a queue that takes no more work.)
var ErrReleased = errors.New("released")

// NewRuntime loads ONNX Runtime and settles the device. With DeviceAuto it tries the CUDA
// execution provider once and, if that cannot start, logs one warning and uses the CPU; with
// DeviceCUDA that failure is an error that says what CUDA needs.
func NewRuntime(opts RuntimeOptions) (*Runtime, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	device := DeviceCPU
	if opts.Device != "" {
		device, _ = ParseDevice(string(opts.Device))
	}
	libPath := opts.LibraryPath
	if libPath == "" {
		libPath = LibraryPath()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if err := environment.acquire(libPath); err != nil {
		return nil, err
	}
	r := &Runtime{
		device:   DeviceCPU,
		cuda:     opts.CUDA,
		intraOp:  opts.IntraOpThreads,
		interOp:  opts.InterOpThreads,
		noSpin:   opts.NoSpinning,
		profile:  opts.profilePrefix,
		sessions: make(map[*Session]struct{}),
	}
	if device == DeviceCPU {
		return r, nil
	}
	if device == DeviceAuto && !cudaInstalled(libPath) {
		return r, nil // a CPU machine: no CUDA provider to try, and nothing to warn about
	}
	r.device = DeviceCUDA
	probeErr := r.probe()
	switch {
	case probeErr == nil:
		logger.Info("engine: running on CUDA", "requested", string(device))
	case device == DeviceAuto:
		r.device = DeviceCPU
		logger.Warn("engine: CUDA unavailable, running on CPU", "reason", probeErr.Error())
	default:
		_ = environment.release()
		return nil, fmt.Errorf("engine: device cuda requested but the CUDA execution provider "+
			"could not start: %w. %s", probeErr, cudaNeeds(libPath))
	}
	return r, nil
}

// probe creates one session for a trivial model on the runtime's device. Loading the provider
// libraries alone would miss a machine that has them but no usable GPU; creating a session
// makes the provider open the device too.
func (r *Runtime) probe() error {
	so, err := r.sessionOptions()
	if err != nil {
		return err
	}
	defer so.Destroy()
	if r.profile != "" {
		if err := so.DisableProfiling(); err != nil {
			return err
		}
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(probeModel(), []string{probeInput},
		[]string{probeOutput}, so)
	if err != nil {
		return err
	}
	return s.Destroy()
}

// Device reports where this runtime's sessions run: DeviceCPU or DeviceCUDA, never DeviceAuto.
func (r *Runtime) Device() Device { return r.device }

// Version is the loaded ONNX Runtime library's version ("1.30.0"): its kernels decide what a
// rewritten graph computes, so a measurement of one stands for that version only.
func (r *Runtime) Version() string { return ort.GetVersion() }

// sessionOptions builds the options every session of this runtime is created with. The caller
// destroys them.
func (r *Runtime) sessionOptions() (*ort.SessionOptions, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("engine: session options: %w", err)
	}
	if err := r.configure(so); err != nil {
		so.Destroy()
		return nil, err
	}
	return so, nil
}

func (r *Runtime) configure(so *ort.SessionOptions) error {
	if r.intraOp > 0 {
		if err := so.SetIntraOpNumThreads(r.intraOp); err != nil {
			return fmt.Errorf("engine: intra-op threads %d: %w", r.intraOp, err)
		}
	}
	if r.interOp > 0 {
		if err := so.SetInterOpNumThreads(r.interOp); err != nil {
			return fmt.Errorf("engine: inter-op threads %d: %w", r.interOp, err)
		}
	}
	// ORT's memory-pattern optimisation caches an allocation plan per input shape. Batches
	// here come in many (batch, length) shapes, so the cache only grows: 1,500 requests of
	// mixed lengths grew the warmed server's RSS by 140 MB with it and by 10 MB without it
	// (docs/BENCHMARKS.md). The arena still recycles the buffers.
	if err := so.SetMemPattern(false); err != nil {
		return fmt.Errorf("engine: memory pattern: %w", err)
	}
	if r.noSpin {
		for _, key := range []string{"session.intra_op.allow_spinning", "session.inter_op.allow_spinning"} {
			if err := so.AddSessionConfigEntry(key, "0"); err != nil {
				return fmt.Errorf("engine: %s: %w", key, err)
			}
		}
	}
	if r.profile != "" {
		if err := so.EnableProfiling(r.profile); err != nil {
			return fmt.Errorf("engine: profiling: %w", err)
		}
	}
	if r.device != DeviceCUDA {
		return nil
	}
	cuda, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return fmt.Errorf("engine: CUDA provider options: %w", err)
	}
	defer cuda.Destroy()
	if err := cuda.Update(r.cuda.providerSettings()); err != nil {
		return fmt.Errorf("engine: CUDA provider options: %w", err)
	}
	return so.AppendExecutionProviderCUDA(cuda)
}

// Close closes every session still open, waiting for their running calls, and releases ONNX
// Runtime. Calling it again does nothing.
func (r *Runtime) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	open := make([]*Session, 0, len(r.sessions))
	for s := range r.sessions {
		open = append(open, s)
	}
	r.sessions = nil
	r.mu.Unlock()

	var errs []error
	for _, s := range open {
		errs = append(errs, s.destroy())
	}
	errs = append(errs, environment.release())
	return errors.Join(errs...)
}

// OpenSessions counts the sessions created and not yet closed.
func (r *Runtime) OpenSessions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions)
}

// forget drops a closed session from the set Close would otherwise close again.
func (r *Runtime) forget(s *Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.sessions, s)
}
