package entities

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPlanWindowsExamples(t *testing.T) {
	tests := []struct {
		n, size, stride int
		want            []Window
	}{
		{0, 4, 1, nil},
		{3, 4, 1, []Window{{0, 3}}},
		{4, 4, 1, []Window{{0, 4}}},
		{10, 4, 1, []Window{{0, 4}, {3, 7}, {6, 10}}},
		{10, 4, 2, []Window{{0, 4}, {2, 6}, {4, 8}, {6, 10}}},
		{10, 4, 0, []Window{{0, 4}, {4, 8}, {6, 10}}}, // the last window is widened back to 4
		{11, 6, 2, []Window{{0, 6}, {4, 10}, {5, 11}}},
	}
	for _, tc := range tests {
		got, err := PlanWindows(tc.n, tc.size, tc.stride)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("PlanWindows(%d, %d, %d) = %v, want %v", tc.n, tc.size, tc.stride, got, tc.want)
		}
	}
}

func TestPlanWindowsRejectsBadConfig(t *testing.T) {
	for _, c := range [][3]int{{10, 0, 0}, {10, 4, 4}, {10, 4, -1}, {-1, 4, 1}} {
		if _, err := PlanWindows(c[0], c[1], c[2]); err == nil {
			t.Errorf("PlanWindows%v: want an error", c)
		}
	}
	if _, err := ContentBudget(2, 1, 1); err == nil {
		t.Error("ContentBudget with no room: want an error")
	}
	if b, err := ContentBudget(128, 1, 1); err != nil || b != 126 {
		t.Errorf("ContentBudget(128,1,1) = %d, %v", b, err)
	}
}

func TestPlanWordWindowsAvoidsCuttingWords(t *testing.T) {
	// Words of 3 tokens each: a window of 8 would end inside a word.
	var ids []int
	for w := range 10 {
		ids = append(ids, w, w, w)
	}
	wins, err := PlanWordWindows(ids, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkWindows(t, len(ids), 8, wins)
	for i, w := range wins {
		if !isWordStart(ids, w.Start) {
			t.Errorf("window %d %v starts inside a word", i, w)
		}
		if w.End < len(ids) && !isWordStart(ids, w.End) {
			t.Errorf("window %d %v ends inside a word", i, w)
		}
	}
	// A word longer than the slack cannot be avoided; the cut then stays put.
	long := make([]int, 20) // one word of 20 tokens
	wins, err = PlanWordWindows(long, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkWindows(t, len(long), 8, wins)
}

// checkWindows asserts PlanWindows' guarantees.
func checkWindows(t *testing.T, n, size int, wins []Window) {
	t.Helper()
	if n == 0 {
		if len(wins) != 0 {
			t.Fatalf("no tokens but windows %v", wins)
		}
		return
	}
	covered := make([]bool, n)
	for i, w := range wins {
		if w.Start < 0 || w.End > n || w.Len() < 1 || w.Len() > size {
			t.Fatalf("window %d %v invalid for n=%d size=%d", i, w, n, size)
		}
		if i > 0 && (w.Start <= wins[i-1].Start || w.Start > wins[i-1].End) {
			t.Fatalf("window %d %v does not follow %v", i, w, wins[i-1])
		}
		for j := w.Start; j < w.End; j++ {
			covered[j] = true
		}
	}
	if wins[0].Start != 0 || wins[len(wins)-1].End != n {
		t.Fatalf("windows %v do not span [0,%d)", wins, n)
	}
	for j, c := range covered {
		if !c {
			t.Fatalf("token %d in no window: %v", j, wins)
		}
	}
	if n <= size && len(wins) != 1 {
		t.Fatalf("%d tokens fit one window of %d, got %v", n, size, wins)
	}
}

func TestPlanWindowsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := rng.IntN(300)
		size := 1 + rng.IntN(40)
		stride := rng.IntN(size)
		var ids []int
		w := 0
		for len(ids) < n {
			for k := 1 + rng.IntN(6); k > 0 && len(ids) < n; k-- {
				ids = append(ids, w)
			}
			w++
		}
		wins, err := PlanWordWindows(ids, size, stride)
		if err != nil {
			t.Fatal(err)
		}
		checkWindows(t, n, size, wins)
		plain, err := PlanWindows(n, size, stride)
		if err != nil {
			t.Fatal(err)
		}
		checkWindows(t, n, size, plain)
	}
}

func TestBuildRows(t *testing.T) {
	ids := []int64{11, 12, 13, 14, 15}
	wins := []Window{{0, 3}, {2, 5}, {4, 5}}
	r, err := BuildRows(ids, wins, []int64{101}, []int64{102}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Count != 3 || r.Width != 5 {
		t.Fatalf("shape %dx%d, want 3x5", r.Count, r.Width)
	}
	wantIDs := []int64{
		101, 11, 12, 13, 102,
		101, 13, 14, 15, 102,
		101, 15, 102, 0, 0,
	}
	wantMask := []int64{
		1, 1, 1, 1, 1,
		1, 1, 1, 1, 1,
		1, 1, 1, 0, 0,
	}
	if !slices.Equal(r.InputIDs, wantIDs) || !slices.Equal(r.AttentionMask, wantMask) {
		t.Fatalf("rows\n%v\n%v", r.InputIDs, r.AttentionMask)
	}
	if r, err = BuildRows(ids, wins, []int64{101}, []int64{102}, 0, 8); err != nil || r.Width != 8 {
		t.Fatalf("fixed width: %v %v", r.Width, err)
	}
	if _, err := BuildRows(ids, wins, []int64{101}, []int64{102}, 0, 4); err == nil {
		t.Fatal("too narrow a width accepted")
	}
	if _, err := BuildRows(ids, []Window{{3, 9}}, nil, nil, 0, 0); err == nil {
		t.Fatal("window past the tokens accepted")
	}
}

func TestMergeLogitsPicksCentreMostWindow(t *testing.T) {
	const n, width, prefix, nl = 10, 8, 1, 2
	wins := []Window{{0, 6}, {4, 10}}
	// Each window writes its index into label 0 and the token's index into label 1.
	logits := make([]float32, len(wins)*width*nl)
	for wi, w := range wins {
		for i := w.Start; i < w.End; i++ {
			at := (wi*width + prefix + i - w.Start) * nl
			logits[at], logits[at+1] = float32(wi), float32(i)
		}
	}
	merged, err := MergeLogits(wins, n, logits, width, prefix, nl)
	if err != nil {
		t.Fatal(err)
	}
	// Token 4: window 0 has 1 token of context to its right cut, window 1 none to its
	// left cut; token 5 is the other way round.
	wantWindow := []float32{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}
	for i := range n {
		if merged[i*nl] != wantWindow[i] || merged[i*nl+1] != float32(i) {
			t.Errorf("token %d read from window %v (token %v), want window %v", i, merged[i*nl], merged[i*nl+1], wantWindow[i])
		}
	}

	// Three windows over one token: the middle window has the most context for it.
	wins = []Window{{0, 5}, {2, 9}, {6, 10}}
	owner, err := windowOwners(wins, n, width, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if owner[6] != 1 || owner[4] != 1 || owner[3] != 0 /* tie: earlier */ || owner[8] != 2 || owner[1] != 0 {
		t.Errorf("owners %v", owner)
	}
}

// A text in one window is read in place, with the rows the general merge reads, and its
// result cannot grow into the logits after it.
func TestMergeLogitsOfOneWindowIsItsRows(t *testing.T) {
	const width, prefix, nl = 9, 1, 3
	for _, n := range []int{1, 4, 7} {
		logits := make([]float32, width*nl)
		for i := range logits {
			logits[i] = float32(i)
		}
		got, err := MergeLogits([]Window{{0, n}}, n, logits, width, prefix, nl)
		if err != nil || len(got) != n*nl || cap(got) != n*nl {
			t.Fatalf("%d tokens: len %d cap %d, %v", n, len(got), cap(got), err)
		}
		for i := range n * nl {
			if got[i] != float32(prefix*nl+i) {
				t.Fatalf("%d tokens: value %d is %v", n, i, got[i])
			}
		}
	}
	// The general merge of the same single window, as the earlier path computed it.
	owner, err := windowOwners([]Window{{0, 4}}, 4, width, prefix)
	if err != nil || !slices.Equal(owner, []int{0, 0, 0, 0}) {
		t.Fatalf("owners %v, %v", owner, err)
	}
}

func TestMergeLogitsErrors(t *testing.T) {
	wins := []Window{{0, 3}, {5, 6}} // token 3 and 4 in no window
	if _, err := MergeLogits(wins, 6, make([]float32, 2*5*2), 5, 1, 2); err == nil {
		t.Error("a token outside every window should be an error")
	}
	if _, err := MergeLogits([]Window{{0, 3}}, 3, make([]float32, 7), 5, 1, 2); err == nil {
		t.Error("wrong logits length accepted")
	}
	if _, err := MergeLogits([]Window{{0, 6}}, 6, make([]float32, 5*2), 5, 1, 2); err == nil {
		t.Error("a window wider than the row accepted")
	}
}

// An entity that straddles a window border comes out whole: the fake model below only
// labels a token right when it has at least k tokens of context on each cut side, which
// is how a real model degrades at a window edge.
func TestWindowedEntityAcrossBorderComesOutWhole(t *testing.T) {
	L := testLabels
	d := testDecoder(t, L)
	spec := "the patient Maria Anna Lopez de la Vega was seen by the team at Saint Mary General Hospital North today"
	text, toks := mk(spec)
	n := toks.Len()
	truth := make([]string, n)
	for i := range truth {
		truth[i] = "O"
	}
	for i := 2; i <= 7; i++ { // Maria ... Vega
		truth[i] = "I-PER"
	}
	truth[2] = "B-PER"
	for i := 14; i <= 18; i++ { // Saint ... North
		truth[i] = "I-ORG"
	}
	truth[14] = "B-ORG"

	const size, stride, k = 8, 5, 2
	wins, err := PlanWordWindows(toks.WordIDs, size, stride)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("windows %v over %d tokens", wins, n)
	prefix, suffix := []int64{101}, []int64{102}
	rowsIn, err := BuildRows(toks.IDs, wins, prefix, suffix, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	model := func(w Window, i int) string {
		left, right := i-w.Start, w.End-1-i
		if (w.Start > 0 && left < k) || (w.End < n && right < k) {
			return "O" // not enough context: the entity is missed here
		}
		return truth[i]
	}
	out := make([]float32, rowsIn.Count*rowsIn.Width*len(L))
	for wi, w := range wins {
		for i := w.Start; i < w.End; i++ {
			at := (wi*rowsIn.Width + len(prefix) + i - w.Start) * len(L)
			copy(out[at:], probs(L, model(w, i), .9))
		}
	}
	merged, err := MergeLogits(wins, n, out, rowsIn.Width, len(prefix), len(L))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := d.Decode(text, toks, merged, StrategySimple)
	if err != nil {
		t.Fatal(err)
	}
	want := []got{{"PER", "Maria Anna Lopez de la Vega", .9}, {"ORG", "Saint Mary General Hospital North", .9}}
	sameEntities(t, text, ents, want)

	// The same output read naively (each token from the first window that has it) loses
	// or splits the entities, so the test above depends on the merge rule.
	naive := make([]float32, n*len(L))
	for i := n - 1; i >= 0; i-- {
		for wi := len(wins) - 1; wi >= 0; wi-- {
			if w := wins[wi]; w.Start <= i && i < w.End {
				at := (wi*rowsIn.Width + len(prefix) + i - w.Start) * len(L)
				copy(naive[i*len(L):], out[at:at+len(L)])
			}
		}
	}
	bad, err := d.Decode(text, toks, naive, StrategySimple)
	if err != nil {
		t.Fatal(err)
	}
	if len(render(text, bad)) == len(want) && render(text, bad)[0] == want[0] && render(text, bad)[1] == want[1] {
		t.Fatalf("naive merge also got %v; the fake model does not exercise window edges (windows %v)", render(text, bad), wins)
	}
}
