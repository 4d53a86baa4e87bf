package entities

import "math"

// The CRF's two passes are, position by position, one of two products of a label vector x
// with a matrix m of len(x) rows of L columns (row a, column b at m[a*L+b]): Viterbi's
// max-plus, the best of x[a]+m[a,b] over a for every b, and forward-backward's sum of
// x[a]*m[a,b] over a. Every column b is its own chain over a in ascending order, with each
// operation rounded on its own, so a column can be computed alone or beside others, in any
// register width, to the same bits: on amd64 with AVX2 sixteen or four columns at a time
// (crfkernels_amd64.s), here one. The CRF pads its matrices' rows to a multiple of four
// columns, so that no column is left to the one-at-a-time loop.

// maxPlus sets best[b] to the greatest x[a]+m[a*L+b] over a and arg[b] to the first a that
// gives it (0 when none is greater than -Inf, NaNs never being greater), for every b < L,
// where L is len(best).
func maxPlus(best []float64, arg []int64, x, m []float64) {
	L := len(best)
	from := maxPlusVector(best, arg, x, m)
	if from == L {
		return
	}
	for b := from; b < L; b++ {
		best[b], arg[b] = math.Inf(-1), 0
	}
	for a, xa := range x {
		row := m[a*L : (a+1)*L]
		for b := from; b < L; b++ {
			if v := xa + row[b]; v > best[b] {
				best[b], arg[b] = v, int64(a)
			}
		}
	}
}

// sumProduct adds x[a]*m[a*L+b] into acc[b] for every a, in a's order, for every b < L,
// where L is len(acc).
func sumProduct(acc, x, m []float64) {
	L := len(acc)
	from := sumProductVector(acc, x, m)
	if from == L {
		return
	}
	for a, xa := range x {
		row := m[a*L : (a+1)*L]
		for b := from; b < L; b++ {
			acc[b] += float64(xa * row[b]) // the conversion keeps the product rounded alone, never fused
		}
	}
}
