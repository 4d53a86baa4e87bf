package generate

import "golang.org/x/sys/cpu"

// The greedy choice reads every score of every row at every step; on amd64 with AVX2 it takes
// eight at a time (argmax_amd64.s): the greatest first, then the first index holding it.
var haveAVX2 = cpu.X86.HasAVX2

//go:noescape
func max32AVX2(v []float32) float32

//go:noescape
func firstEq32AVX2(v []float32, m float32) int

// argmax32 is the index of the first greatest of v, as a scan that keeps the first greater
// one finds it (a NaN is never greater; v[0] NaN keeps 0).
func argmax32(v []float32) int {
	if !haveAVX2 || len(v) < 64 || v[0] != v[0] {
		return argmax32Lanes(v)
	}
	n := len(v) &^ 31
	m := max32AVX2(v[:n])
	for _, x := range v[n:] {
		if x > m {
			m = x
		}
	}
	// v[0] is a number, so m is one too, and a score equal to it exists: with every number
	// -Inf that is v[0], as the scan keeps.
	if i := firstEq32AVX2(v[:n], m); i >= 0 {
		return i
	}
	for i, x := range v[n:] {
		if x == m {
			return n + i
		}
	}
	return 0 // unreachable: m is one of v's scores
}
