package engine

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluice-serving/sluice/settings"
)

// CUDAOptions configure the CUDA execution provider; they matter only when the runtime runs
// on CUDA. The zero value is ONNX Runtime's defaults on the first GPU, except the convolution
// algorithm search (see ConvAlgoSearch).
type CUDAOptions struct {
	// DeviceID is the GPU, as CUDA numbers the visible ones.
	DeviceID int `env:"CUDA_DEVICE_ID" envDefault:"0"`
	// MemoryLimitBytes caps the provider's memory arena on the GPU; 0: no cap. The arena
	// grows to the largest batch run, as the CPU one does; warm-up reaches that size first.
	MemoryLimitBytes int64 `env:"CUDA_MEMORY_LIMIT_BYTES" envDefault:"0"`
	// ConvAlgoSearch is cuDNN's convolution algorithm search: "exhaustive" (ONNX Runtime's
	// default: benchmarks every algorithm for each new input shape), "heuristic" or
	// "default". Empty means heuristic: batches come in many shapes, and an exhaustive
	// search on each new one stalls that batch.
	ConvAlgoSearch string `env:"CUDA_CONV_ALGO_SEARCH" envDefault:"heuristic"`
}

var convAlgoSearch = map[string]string{"exhaustive": "EXHAUSTIVE", "heuristic": "HEURISTIC", "default": "DEFAULT"}

func (o CUDAOptions) validate(check *settings.Check) {
	if o.DeviceID < 0 {
		check.Addf("CUDA.DeviceID", "must be at least 0, got %d", o.DeviceID)
	}
	if o.MemoryLimitBytes < 0 {
		check.Addf("CUDA.MemoryLimitBytes", "must be at least 0 (0: no cap), got %d", o.MemoryLimitBytes)
	}
	if _, ok := convAlgoSearch[strings.ToLower(o.ConvAlgoSearch)]; o.ConvAlgoSearch != "" && !ok {
		check.Addf("CUDA.ConvAlgoSearch", "must be exhaustive, heuristic or default, got %q", o.ConvAlgoSearch)
	}
}

// providerSettings are the CUDA provider's options as ONNX Runtime names them.
func (o CUDAOptions) providerSettings() map[string]string {
	search := "HEURISTIC"
	if s, ok := convAlgoSearch[strings.ToLower(o.ConvAlgoSearch)]; ok {
		search = s
	}
	m := map[string]string{
		"device_id":              strconv.Itoa(o.DeviceID),
		"cudnn_conv_algo_search": search,
		// Grow the arena by what a run asks for, not to the next power of two: with warm-up
		// at the largest batch, doubling would only reserve memory no batch uses.
		"arena_extend_strategy": "kSameAsRequested",
	}
	if o.MemoryLimitBytes > 0 {
		m["gpu_mem_limit"] = strconv.FormatInt(o.MemoryLimitBytes, 10)
	}
	return m
}

// The CUDA provider's own libraries, which must sit beside the main library.
const (
	providersShared = "libonnxruntime_providers_shared.so"
	providersCUDA   = "libonnxruntime_providers_cuda.so"
)

// cudaNeeds says what the CUDA provider needs and, when the file system can tell, the first
// thing missing: the provider libraries beside libPath (and how to get them), or a library the
// provider links to that the loader cannot find (CUDA 13, cuDNN 9, the NVIDIA driver).
// cudaInstalled says whether the CUDA provider's library lies beside the main library, where
// ONNX Runtime looks for it: without it, device auto means the CPU without trying.
func cudaInstalled(libPath string) bool {
	return isFile(filepath.Join(filepath.Dir(libPath), providersCUDA))
}

func cudaNeeds(libPath string) string {
	msg := "It needs " + providersShared + " and " + providersCUDA + " of the main library's own " +
		"release beside it (scripts/fetch-onnxruntime.sh --cuda puts a matching core and provider in " +
		"third_party/onnxruntime-cuda: point SLUICE_ORT_LIB at its libonnxruntime.so.1), the CUDA 13 " +
		"runtime, cuBLAS and cuDNN 9 libraries on the loader path, and a visible NVIDIA GPU; or choose " +
		"device cpu or auto."
	if !filepath.IsAbs(libPath) {
		return msg
	}
	dir := filepath.Dir(libPath)
	for _, name := range []string{providersShared, providersCUDA} {
		if !isFile(filepath.Join(dir, name)) {
			return msg + " Missing here: " + filepath.Join(dir, name) + "."
		}
	}
	if missing := unresolvedLibraries(filepath.Join(dir, providersCUDA), loaderDirs()); len(missing) > 0 {
		return msg + " Not found on the loader path: " + strings.Join(missing, ", ") + "."
	}
	return msg
}

// unresolvedLibraries lists the shared libraries the ELF file at path links to (DT_NEEDED)
// that are in none of dirs, plus cuDNN 9, which the CUDA provider opens at run time.
func unresolvedLibraries(path string, dirs []string) []string {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	needed, err := f.ImportedLibraries()
	if err != nil {
		return nil
	}
	var missing []string
	for _, lib := range append(needed, "libcudnn.so.9") {
		if strings.HasPrefix(lib, "libc.so") || strings.HasPrefix(lib, "libm.so") || strings.HasPrefix(lib, "libstdc++") ||
			strings.HasPrefix(lib, "libgcc_s") || strings.HasPrefix(lib, "libdl.so") || strings.HasPrefix(lib, "libpthread") ||
			strings.HasPrefix(lib, "librt.so") || strings.HasPrefix(lib, "ld-linux") || lib == providersShared {
			continue
		}
		found := false
		for _, d := range dirs {
			if isFile(filepath.Join(d, lib)) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, lib)
		}
	}
	return missing
}

// loaderDirs approximates where the dynamic loader looks: LD_LIBRARY_PATH, the directories
// /etc/ld.so.conf lists (one level of include), the usual system directories and CUDA's.
func loaderDirs() []string {
	dirs := filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))
	var readConf func(path string, depth int)
	readConf = func(path string, depth int) {
		data, err := os.ReadFile(path)
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			switch {
			case line == "" || strings.HasPrefix(line, "#"):
			case strings.HasPrefix(line, "include ") && depth == 0:
				matches, _ := filepath.Glob(strings.TrimSpace(strings.TrimPrefix(line, "include ")))
				for _, m := range matches {
					readConf(m, depth+1)
				}
			default:
				dirs = append(dirs, line)
			}
		}
	}
	readConf("/etc/ld.so.conf", 0)
	return append(dirs, "/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu",
		"/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64")
}
