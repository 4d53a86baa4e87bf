package entities

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The kernels' loops of viterbi and marginals give what one label at a time gives, bit
// for bit, for every label count (multiples of four and the rest), gap mixes and peaked or
// flat scores: the goldens' entities and scores rest on it.
func TestCRFLoopsAreTheOneAtATimeLoopsExactly(t *testing.T) {
	for _, vector := range []bool{haveAVX2, false} {
		was := haveAVX2
		haveAVX2 = vector
		crfLoopsAreTheOneAtATimeLoops(t)
		haveAVX2 = was
	}
}

func crfLoopsAreTheOneAtATimeLoops(t *testing.T) {
	t.Helper()
	rng := rand.New(rand.NewPCG(4, 2))
	for _, labels := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13, 33, 37} {
		for trial := range 6 {
			spread := []float64{0.1, 1, 4, 12, 30, 60}[trial]
			mat := func() [][]float64 {
				m := make([][]float64, labels)
				for i := range m {
					m[i] = make([]float64, labels)
					for j := range m[i] {
						m[i][j] = rng.NormFloat64() * spread / 4
					}
				}
				return m
			}
			c, err := newCRF(&Transitions{Spaced: mat(), Touching: mat(), Break: mat()}, labels)
			if err != nil {
				t.Fatal(err)
			}
			n := 1 + rng.IntN(150)
			in := crfInput{}
			logits := make([]float32, (n+2)*labels)
			probs := make([]float64, n*labels)
			for p := range n {
				in.idx = append(in.idx, p+1) // a special token before and after
				in.gap = append(in.gap, uint8(rng.IntN(gapClasses)))
				for b := range labels {
					logits[(p+1)*labels+b] = float32(rng.NormFloat64() * spread)
				}
				if err := softmaxRow(probs[p*labels:(p+1)*labels], logits[(p+1)*labels:(p+2)*labels]); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := c.viterbi(in, logits, new(crfScratch)), c.viterbiOneAtATime(in, logits); !slices.Equal(got, want) {
				t.Fatalf("%d labels, spread %v: path %v, want %v", labels, spread, got, want)
			}
			got, gotOK := c.marginals(in, probs, new(crfScratch))
			want, wantOK := c.marginalsOneAtATime(in, probs)
			if gotOK != wantOK || len(got) != len(want) {
				t.Fatalf("%d labels, spread %v: ok %v, want %v", labels, spread, gotOK, wantOK)
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%d labels, spread %v: marginal %d is %v, want %v", labels, spread, i, got[i], want[i])
				}
			}
		}
	}
}

// viterbiOneAtATime and marginalsOneAtATime are the loops as they were before labels went
// several at a time: the reference the test holds the faster loops to.
func (c *crf) viterbiOneAtATime(in crfInput, logits []float32) []int {
	n, L, S := len(in.idx), c.n, c.stride // the matrices' rows are S long
	if n == 0 {
		return nil
	}
	path := make([]int, n)
	back := make([]int32, n*L) // back[i*L+b]: best label before b at position i
	score := make([]float64, L)
	next := make([]float64, L)
	row := func(p int) []float32 { return logits[in.idx[p]*L : (in.idx[p]+1)*L] }
	first := row(0)
	for b := range L {
		score[b] = c.score[0][b] + float64(first[b]) // from O
	}
	for p := 1; p < n; p++ {
		tr := c.score[in.gap[p]]
		em := row(p)
		for b := range L {
			best, arg := math.Inf(-1), 0
			for a, s := range score {
				if v := s + tr[a*S+b]; v > best {
					best, arg = v, a
				}
			}
			next[b] = best + float64(em[b])
			back[p*L+b] = int32(arg)
		}
		score, next = next, score
	}
	best, arg := math.Inf(-1), 0
	for a := range L {
		if v := score[a] + c.score[0][a*S]; v > best { // to O
			best, arg = v, a
		}
	}
	path[n-1] = arg
	for p := n - 1; p > 0; p-- {
		path[p-1] = int(back[p*L+path[p]])
	}
	return path
}

func (c *crf) marginalsOneAtATime(in crfInput, probs []float64) (out []float64, ok bool) {
	n, L, S := len(in.idx), c.n, c.stride
	alpha := make([]float64, n*L)
	beta := make([]float64, n*L)
	w := make([]float64, L)
	step := func(p int) []float64 { return c.prob[in.gap[p]] }
	for b := range L {
		alpha[b] = c.prob[0][b] * probs[b]
	}
	if !normalize(alpha[:L]) {
		return nil, false
	}
	for p := 1; p < n; p++ {
		tr, prev, cur := step(p), alpha[(p-1)*L:p*L], alpha[p*L:(p+1)*L]
		for a, pa := range prev {
			if pa == 0 {
				continue
			}
			for b, t := range tr[a*S : a*S+L] {
				cur[b] += float64(pa * t) // a conversion rounds the product: never fused
			}
		}
		for b := range L {
			cur[b] *= probs[p*L+b]
		}
		if !normalize(cur) {
			return nil, false
		}
	}
	last := beta[(n-1)*L:]
	for a := range L {
		last[a] = c.prob[0][a*S]
	}
	if !normalize(last) {
		return nil, false
	}
	for p := n - 2; p >= 0; p-- {
		tr, nxt, cur := step(p+1), beta[(p+1)*L:(p+2)*L], beta[p*L:(p+1)*L]
		for b := range L {
			w[b] = probs[(p+1)*L+b] * nxt[b]
		}
		for a := range L {
			var s float64
			for b, t := range tr[a*S : a*S+L] {
				s += float64(t * w[b])
			}
			cur[a] = s
		}
		if !normalize(cur) {
			return nil, false
		}
	}
	for i := range alpha {
		alpha[i] *= beta[i]
	}
	for p := range n {
		if !normalize(alpha[p*L : (p+1)*L]) {
			return nil, false
		}
	}
	return alpha, true
}

// A scratch a long text grew is not kept for the next decoding; an ordinary one is.
func TestCRFScratchOfALongTextIsNotPooled(t *testing.T) {
	c, err := newCRF(&Transitions{Spaced: [][]float64{{0}}, Touching: [][]float64{{0}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	c.putScratch(&crfScratch{alpha: make([]float64, maxPooledCells+1)})
	if got := c.scratch.Get(); got != nil {
		t.Fatalf("an oversized scratch was pooled: %T", got)
	}
	// A score whose exponential overflows would turn the forward pass's exact zeros into NaN.
	if _, err := newCRF(&Transitions{Spaced: [][]float64{{710}}, Touching: [][]float64{{0}}}, 1); err == nil {
		t.Fatal("a transition score of 710 was taken")
	}
}

// The kernels alone, on small whole numbers (ties everywhere: the first row must win),
// infinities and NaNs, against the plain loops, vector columns and portable ones alike.
func TestCRFKernelsAreThePlainLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	pick := func() float64 {
		switch rng.IntN(12) {
		case 0:
			return math.Inf(-1)
		case 1:
			return math.NaN()
		default:
			return float64(rng.IntN(5))
		}
	}
	for L := 1; L <= 40; L++ {
		// Square, as the kernels were first used, and the CRF's padded rows: fewer rows than
		// columns (a row count of 0 included).
		rows := []int{L, L &^ 3, L - 1 - rng.IntN(L)}
		for _, R := range rows {
			kernelsAreThePlainLoops(t, pick, R, L)
		}
	}
}

// kernelsAreThePlainLoops checks both kernels on x of R values and m of R rows of L columns.
func kernelsAreThePlainLoops(t *testing.T, pick func() float64, R, L int) {
	t.Helper()
	x, m := make([]float64, R), make([]float64, R*L)
	for i := range x {
		x[i] = pick()
	}
	for i := range m {
		m[i] = pick()
	}
	wantBest, wantArg, wantSum := make([]float64, L), make([]int64, L), make([]float64, L)
	for b := range L {
		wantBest[b] = math.Inf(-1)
		wantSum[b] = float64(b) / 7
		for a := range R {
			if v := x[a] + m[a*L+b]; v > wantBest[b] {
				wantBest[b], wantArg[b] = v, int64(a)
			}
			wantSum[b] += float64(x[a] * m[a*L+b])
		}
	}
	for _, vector := range []bool{haveAVX2, false} {
		was := haveAVX2
		haveAVX2 = vector
		best, arg, sum := make([]float64, L), make([]int64, L), make([]float64, L)
		for b := range sum {
			sum[b] = float64(b) / 7
		}
		maxPlus(best, arg, x, m)
		sumProduct(sum, x, m)
		haveAVX2 = was
		for b := range L {
			if math.Float64bits(best[b]) != math.Float64bits(wantBest[b]) || arg[b] != wantArg[b] {
				t.Fatalf("%d x %d, vector %v, column %d: max-plus %v at %d, want %v at %d", R, L, vector, b, best[b], arg[b], wantBest[b], wantArg[b])
			}
			if !(math.IsNaN(sum[b]) && math.IsNaN(wantSum[b])) && math.Float64bits(sum[b]) != math.Float64bits(wantSum[b]) {
				t.Fatalf("%d x %d, vector %v, column %d: sum %v, want %v", R, L, vector, b, sum[b], wantSum[b])
			}
		}
	}
}
