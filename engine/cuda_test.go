package engine

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-serving/sluice/settings"
)

func TestCUDAOptionsBecomeProviderSettings(t *testing.T) {
	got := CUDAOptions{DeviceID: 1, MemoryLimitBytes: 8 << 30, ConvAlgoSearch: "Exhaustive"}.providerSettings()
	want := map[string]string{"device_id": "1", "gpu_mem_limit": "8589934592", "cudnn_conv_algo_search": "EXHAUSTIVE",
		"arena_extend_strategy": "kSameAsRequested"}
	if len(got) != len(want) {
		t.Fatalf("settings %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if d := (CUDAOptions{}).providerSettings(); d["cudnn_conv_algo_search"] != "HEURISTIC" || d["device_id"] != "0" || d["gpu_mem_limit"] != "" {
		t.Errorf("defaults %v", d)
	}
}

func TestCUDAOptionsValidate(t *testing.T) {
	err := RuntimeOptions{CUDA: CUDAOptions{DeviceID: -1, MemoryLimitBytes: -1, ConvAlgoSearch: "fast"}}.Validate()
	for _, field := range []string{"CUDA.DeviceID", "CUDA.MemoryLimitBytes", "CUDA.ConvAlgoSearch"} {
		found := false
		problems, _ := settings.Problems(err)
		for _, p := range problems {
			if p.Field == field {
				found = true
			}
		}
		if !found {
			t.Errorf("%s not reported in %v", field, err)
		}
	}
}

// libraryDir puts a link to the ONNX Runtime library in a fresh directory, as a deployment's
// library folder, and returns the link's path.
func libraryDir(t *testing.T) string {
	t.Helper()
	requireLibrary(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "libonnxruntime.so.1")
	if err := os.Symlink(LibraryPath(), link); err != nil {
		t.Fatal(err)
	}
	return link
}

// TestDeviceCUDANamesTheMissingProvider: without the provider libraries beside the main one,
// device cuda fails at start naming the missing file and the script that fetches it, and auto
// falls back to the CPU.
func TestDeviceCUDANamesTheMissingProvider(t *testing.T) {
	lib := libraryDir(t)
	_, err := NewRuntime(RuntimeOptions{LibraryPath: lib, Device: DeviceCUDA, Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		t.Skip("CUDA works on this machine")
	}
	for _, want := range []string{"Missing here: " + filepath.Join(filepath.Dir(lib), providersShared), "fetch-onnxruntime.sh --cuda"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	r := newTestRuntime(t, RuntimeOptions{LibraryPath: lib, Device: DeviceAuto})
	if r.Device() != DeviceCPU {
		t.Fatalf("auto without the provider: %s", r.Device())
	}
}

// TestDeviceCUDANamesALibraryTheProviderCannotFind: with the provider libraries in place but
// one they link to nowhere on the loader path (here a stand-in provider built to need
// libsluice_absent.so.13), device cuda fails naming that library, and auto falls back.
func TestDeviceCUDANamesALibraryTheProviderCannotFind(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc to build a stand-in provider")
	}
	lib := libraryDir(t)
	dir := filepath.Dir(lib)
	absent := t.TempDir() // holds the needed library, and is never on the loader path
	src := filepath.Join(absent, "x.c")
	if err := os.WriteFile(src, []byte("int sluice_x(void) { return 1; }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	build := func(args ...string) {
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	build("-shared", "-fPIC", "-o", filepath.Join(absent, "libsluice_absent.so.13"), "-Wl,-soname,libsluice_absent.so.13", src)
	build("-shared", "-fPIC", "-o", filepath.Join(dir, providersCUDA), src, "-Wl,--no-as-needed", "-L"+absent, "-l:libsluice_absent.so.13")
	build("-shared", "-fPIC", "-o", filepath.Join(dir, providersShared), src)

	_, err := NewRuntime(RuntimeOptions{LibraryPath: lib, Device: DeviceCUDA, Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		t.Skip("CUDA works on this machine")
	}
	if !strings.Contains(err.Error(), "Not found on the loader path: libsluice_absent.so.13") {
		t.Errorf("error %q does not name the missing library", err)
	}
	if r := newTestRuntime(t, RuntimeOptions{LibraryPath: lib, Device: DeviceAuto}); r.Device() != DeviceCPU {
		t.Fatalf("auto with an unusable provider: %s", r.Device())
	}
}
