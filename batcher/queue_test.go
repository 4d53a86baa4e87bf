package batcher

import (
	"slices"
	"testing"
)

func newQueued(id, seqs, maxLen int) *request[int, int] {
	return &request[int, int]{in: id, cost: Cost{Sequences: seqs, MaxLen: maxLen}}
}

func ids(rs []*request[int, int]) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = r.in
	}
	return out
}

func arrivalOrder(q *queue[int, int]) []int {
	var out []int
	for r := q.arrival.head; r != nil; r = r.links[arrivalLink].next {
		out = append(out, r.in)
	}
	return out
}

func TestBucketOfPowersOfTwo(t *testing.T) {
	for _, c := range []struct{ maxLen, want int }{
		{1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {8, 3}, {9, 4}, {16, 4}, {17, 5}, {512, 9}, {513, 10},
		{1 << 40, numBuckets - 1},
	} {
		if got := bucketOf(c.maxLen); got != c.want {
			t.Errorf("bucketOf(%d) = %d, want %d", c.maxLen, got, c.want)
		}
	}
}

func TestQueueRemoveKeepsBothListsLinked(t *testing.T) {
	var q queue[int, int]
	rs := []*request[int, int]{newQueued(1, 1, 8), newQueued(2, 1, 8), newQueued(3, 1, 100), newQueued(4, 1, 8), newQueued(5, 1, 8)}
	for _, r := range rs {
		q.push(r)
	}
	q.remove(rs[1]) // middle of arrival and of its bucket
	q.remove(rs[0]) // head of both
	q.remove(rs[4]) // tail of both
	if got := arrivalOrder(&q); !slices.Equal(got, []int{3, 4}) {
		t.Fatalf("arrival order = %v, want [3 4]", got)
	}
	if q.len() != 2 || q.oldest() != rs[2] {
		t.Fatalf("len = %d, oldest = %v; want 2, request 3", q.len(), q.oldest().in)
	}
	b := bucketOf(8)
	if l := q.buckets[b]; l.n != 1 || l.head != rs[3] || l.tail != rs[3] {
		t.Fatalf("bucket of 8 holds %d requests, want only request 4", l.n)
	}
	q.remove(rs[3])
	q.remove(rs[2])
	if q.len() != 0 || q.oldest() != nil || q.buckets[b].head != nil || q.buckets[b].tail != nil {
		t.Fatal("queue not empty after removing everything")
	}
}

func TestDraftGroupsByLengthAndKeepsOldestFirst(t *testing.T) {
	var q queue[int, int]
	// 1 is oldest and short; long ones interleave; 6 is a neighbour bucket (16 vs 8).
	for _, r := range []*request[int, int]{
		newQueued(1, 1, 8), newQueued(2, 1, 500), newQueued(3, 1, 7), newQueued(4, 1, 480),
		newQueued(5, 1, 3), newQueued(6, 1, 16), newQueued(7, 1, 8),
	} {
		q.push(r)
	}
	lim := limits{maxSeqs: 4, maxPadded: 4096, maxExamined: 100}
	d := q.draft(lim, nil)
	// Own bucket (5..8) first in arrival order: 1, 3, 7; then the shorter neighbour (3..4): 5.
	if got := ids(d.members); !slices.Equal(got, []int{1, 3, 7, 5}) || !d.full {
		t.Fatalf("draft = %v full=%v, want [1 3 7 5] full", got, d.full)
	}
	if d.seqs != 4 || d.maxLen != 8 {
		t.Fatalf("draft seqs=%d maxLen=%d, want 4 and 8", d.seqs, d.maxLen)
	}
}

func TestDraftTakesLongerNeighbourButNotFarBuckets(t *testing.T) {
	var q queue[int, int]
	for _, r := range []*request[int, int]{newQueued(1, 1, 60), newQueued(2, 1, 70), newQueued(3, 1, 500), newQueued(4, 1, 10)} {
		q.push(r)
	}
	d := q.draft(limits{maxSeqs: 8, maxPadded: 1 << 20, maxExamined: 100}, nil)
	// 70 is in the next bucket up and joins; 500 and 10 are two or more buckets away and do not.
	if got := ids(d.members); !slices.Equal(got, []int{1, 2}) || d.full {
		t.Fatalf("draft = %v full=%v, want [1 2] not full", got, d.full)
	}
}

func TestDraftRespectsPaddedBudgetAndSequenceCount(t *testing.T) {
	var q queue[int, int]
	// Budget 100 padded tokens, at most 6 sequences.
	for _, r := range []*request[int, int]{
		newQueued(1, 2, 10), // 2 x 10 = 20
		newQueued(2, 3, 16), // 5 x 16 = 80
		newQueued(3, 2, 16), // 7 sequences: over the count, skipped
		newQueued(4, 1, 12), // 6 x 16 = 96
		newQueued(5, 1, 9),  // 7 sequences: skipped
	} {
		q.push(r)
	}
	d := q.draft(limits{maxSeqs: 6, maxPadded: 100, maxExamined: 100}, nil)
	if got := ids(d.members); !slices.Equal(got, []int{1, 2, 4}) || !d.full {
		t.Fatalf("draft = %v full=%v, want [1 2 4] full", got, d.full)
	}
	if d.seqs*d.maxLen > 100 {
		t.Fatalf("padded tokens %d over budget 100", d.seqs*d.maxLen)
	}
}

func TestDraftFullWhenBudgetLeavesNoRoom(t *testing.T) {
	var q queue[int, int]
	q.push(newQueued(1, 3, 30))
	// 3 x 30 = 90; one more sequence of 30 would make 120 > 100.
	d := q.draft(limits{maxSeqs: 32, maxPadded: 100, maxExamined: 100}, nil)
	if !d.full {
		t.Fatal("a batch with no room for another sequence should be full")
	}
	q.push(newQueued(2, 1, 5))
	q.remove(q.oldest())
	d = q.draft(limits{maxSeqs: 32, maxPadded: 100, maxExamined: 100}, nil)
	if d.full {
		t.Fatal("one 5-token sequence in a 100-token budget should not be full")
	}
}

func TestDraftOversizeLeadGoesAlone(t *testing.T) {
	var q queue[int, int]
	q.push(newQueued(1, 4, 300)) // 1200 padded tokens, budget 1000
	q.push(newQueued(2, 1, 300))
	d := q.draft(limits{maxSeqs: 32, maxPadded: 1000, maxExamined: 100}, nil)
	if got := ids(d.members); !slices.Equal(got, []int{1}) || !d.full {
		t.Fatalf("draft = %v full=%v, want [1] full", got, d.full)
	}
	q.push(newQueued(3, 40, 4)) // more sequences than MaxBatchSize
	q.remove(q.oldest())
	q.remove(q.oldest())
	d = q.draft(limits{maxSeqs: 32, maxPadded: 1000, maxExamined: 100}, nil)
	if got := ids(d.members); !slices.Equal(got, []int{3}) || !d.full {
		t.Fatalf("draft = %v full=%v, want [3] full", got, d.full)
	}
}

func TestDraftExaminesBoundedCandidates(t *testing.T) {
	var q queue[int, int]
	q.push(newQueued(0, 1, 8))
	for i := 1; i <= 50; i++ {
		q.push(newQueued(i, 8, 8)) // never fits next to request 0 (max 8 sequences)
	}
	q.push(newQueued(99, 1, 8)) // would fit, but sits behind 50 misfits
	d := q.draft(limits{maxSeqs: 8, maxPadded: 1 << 20, maxExamined: 10}, nil)
	if got := ids(d.members); !slices.Equal(got, []int{0}) {
		t.Fatalf("draft = %v, want [0]: scanning should stop after 10 candidates", got)
	}
	d = q.draft(limits{maxSeqs: 8, maxPadded: 1 << 20, maxExamined: 100}, nil)
	if got := ids(d.members); !slices.Equal(got, []int{0, 99}) {
		t.Fatalf("draft = %v, want [0 99] with a larger scan bound", got)
	}
}

func TestDraftSkipsCandidatesThatWouldBreakTheBudget(t *testing.T) {
	var q queue[int, int]
	for _, r := range []*request[int, int]{
		newQueued(1, 2, 20), // 40 padded tokens
		newQueued(2, 1, 40), // longer neighbour: 3 x 40 = 120 > 100, skipped
		newQueued(3, 4, 20), // 6 x 20 = 120 > 100, skipped
		newQueued(4, 3, 20), // 5 x 20 = 100, fits exactly
	} {
		q.push(r)
	}
	d := q.draft(limits{maxSeqs: 32, maxPadded: 100, maxExamined: 100}, nil)
	if got := ids(d.members); !slices.Equal(got, []int{1, 4}) || !d.full {
		t.Fatalf("draft = %v full=%v, want [1 4] full", got, d.full)
	}
}
