package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// LibraryEnv names the environment variable that overrides where the ONNX Runtime shared
// library is loaded from.
const LibraryEnv = "SLUICE_ORT_LIB"

// librarySoname is what the dynamic loader is asked for when no better path is known.
const librarySoname = "libonnxruntime.so.1"

// LibraryPath says where the ONNX Runtime shared library should be loaded from: $SLUICE_ORT_LIB
// when set; else third_party/onnxruntime/libonnxruntime.so.1 under the nearest directory above
// the working directory that holds a go.mod, when that file exists; else the plain soname, left
// to the dynamic loader's search path. It exists so that tests in any package of this module
// find the library that scripts/fetch-onnxruntime.sh put in place.
func LibraryPath() string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return librarySoname
	}
	for {
		if isFile(filepath.Join(dir, "go.mod")) {
			p := filepath.Join(dir, "third_party", "onnxruntime", librarySoname)
			if isFile(p) {
				return p
			}
			return librarySoname
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return librarySoname
		}
		dir = parent
	}
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// sharedEnv counts the Runtimes that use ONNX Runtime's environment.
//
// This is the package's one piece of mutable state, and it cannot be avoided: the binding keeps
// the loaded library and the OrtEnv in its own package variables, so there is exactly one per
// process whatever we do. Counting users lets several Runtimes (for example one per test) share
// it, and lets the last Close unload it, without two of them racing to initialise or destroy it.
type sharedEnv struct {
	mu      sync.Mutex
	users   int
	libPath string // the library loaded; fixed while users > 0
}

var environment sharedEnv

func (e *sharedEnv) acquire(libPath string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.users > 0 {
		if libPath != e.libPath {
			return fmt.Errorf("engine: ONNX Runtime is already loaded from %q in this process; "+
				"cannot also load %q", e.libPath, libPath)
		}
		e.users++
		return nil
	}
	ort.SetSharedLibraryPath(libPath)
	// Fatal only: ORT writes its log to stderr, outside our slog handler, and its message for a
	// failing kernel can quote tensor values such as token ids. Errors still reach the caller.
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		return fmt.Errorf("engine: cannot start ONNX Runtime %s from %q (set %s to the library, or "+
			"run scripts/fetch-onnxruntime.sh): %w", ortVersion, libPath, LibraryEnv, err)
	}
	e.users = 1
	e.libPath = libPath
	return nil
}

func (e *sharedEnv) release() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.users == 0 {
		return errors.New("engine: ONNX Runtime environment released more often than acquired")
	}
	e.users--
	if e.users > 0 {
		return nil
	}
	e.libPath = ""
	if err := ort.DestroyEnvironment(); err != nil {
		return fmt.Errorf("engine: closing ONNX Runtime: %w", err)
	}
	return nil
}

// ortVersion is the ONNX Runtime release whose C API the pinned binding was built on; an older
// library fails to start.
const ortVersion = "1.29"
