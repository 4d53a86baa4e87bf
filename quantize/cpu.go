package quantize

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// ForCPU is the Options for the CPU this process runs on: ReduceRange on x86 without VNNI,
// where ONNX Runtime's uint8 x int8 kernel adds pairs of products in 16 bits (vpmaddubsw)
// and full-range weights saturate them (on such a CPU clinical-ner's entity agreement falls
// from above 0.99 to 0.95, under the gate). With VNNI (vpdpbusd) and on ARM the sums are 32
// bits and the weights keep their eighth bit.
func ForCPU() Options {
	return Options{ReduceRange: runtime.GOARCH == "amd64" && !cpu.X86.HasAVX512VNNI && !cpu.X86.HasAVXVNNI}
}
