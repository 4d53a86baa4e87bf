package entities

import "golang.org/x/sys/cpu"

// haveAVX2 says the CRF kernels take columns in fours (crfkernels_amd64.s).
var haveAVX2 = cpu.X86.HasAVX2

//go:noescape
func maxPlusAVX2(best []float64, arg []int64, x, m []float64)

//go:noescape
func sumProductAVX2(acc, x, m []float64)

// maxPlusVector computes maxPlus's columns below len(best)&^3, in fours, and returns
// where the rest start.
func maxPlusVector(best []float64, arg []int64, x, m []float64) int {
	L := len(best)
	if !haveAVX2 || L < 4 || len(x) == 0 || len(arg) < L || len(m) < len(x)*L {
		return 0
	}
	maxPlusAVX2(best, arg, x, m)
	return L &^ 3
}

// sumProductVector is maxPlusVector's twin for sumProduct.
func sumProductVector(acc, x, m []float64) int {
	L := len(acc)
	if !haveAVX2 || L < 4 || len(x) == 0 || len(m) < len(x)*L {
		return 0
	}
	sumProductAVX2(acc, x, m)
	return L &^ 3
}
