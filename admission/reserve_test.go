package admission

import (
	"strconv"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/clock"
)

// shedWithTokens returns a gate with retry reservations (share 0.5), warm at 20 completions
// a second, that is shedding: depth 270 (230 waiting, 40 running) against watermarks 256/128.
func shedWithTokens(t *testing.T, policy Policy) (*Gate, *clock.Fake, *fakeSource) {
	t.Helper()
	src := newFakeSource()
	src.setDepth(10)
	g, fake := newTestGate(t, Config{HighWatermark: 256, Policy: policy, StaticRetryAfter: 2 * time.Second,
		RetryReserve: 0.5}, src, fixedRand(0.5))
	warmUp(t, g, fake, src, 20)
	src.set(func(l *Load) { l.Waiting[Interactive], l.Running = 230, 40 })
	if _, ok := g.Admit(Interactive); ok {
		t.Fatal("admitted at depth 270")
	}
	return g, fake, src
}

func token(t *testing.T, r Refusal) []byte {
	t.Helper()
	v, ok := r.Token.Value()
	if !ok {
		t.Fatalf("refusal %+v carries no token", r)
	}
	return append([]byte(nil), v...)
}

// TestTokenLetsTheRetryInOnce: the token of a refusal, sent back at the Retry-After, is let
// past the watermarks while fresh requests are still refused; a second use is not.
func TestTokenLetsTheRetryInOnce(t *testing.T) {
	for _, policy := range []Policy{PolicyStatic, PolicyDrainRate} {
		t.Run(string(policy), func(t *testing.T) {
			g, fake, _ := shedWithTokens(t, policy)
			r, ok := g.Admit(Interactive)
			if ok {
				t.Fatal("admitted while shedding")
			}
			tok := token(t, r)
			if r.RetryAfter < time.Second {
				t.Fatalf("token with Retry-After %v", r.RetryAfter)
			}
			fake.Advance(r.RetryAfter)
			if _, ok := g.Admit(Interactive); ok {
				t.Fatal("a fresh request was admitted while shedding")
			}
			if _, ok := g.AdmitRetry(Interactive, tok); !ok {
				t.Fatal("the retry with its token was refused at its Retry-After")
			}
			r2, ok := g.AdmitRetry(Interactive, tok)
			if ok {
				t.Fatal("a used token was honoured twice")
			}
			if r2.Reason != ReasonHighWatermark {
				t.Fatalf("replayed token: reason %s, want high_watermark (judged as fresh)", r2.Reason)
			}
		})
	}
}

func TestTokenTimeWindow(t *testing.T) {
	g, fake, _ := shedWithTokens(t, PolicyStatic) // Retry-After 2 s
	r, _ := g.Admit(Interactive)
	tok := token(t, r)
	due := fake.Now().Add(r.RetryAfter)
	if st := g.book.redeem(due.Add(-tokenEarly-time.Millisecond), tok); st != TokenEarly {
		t.Fatalf("before the due time: %v, want early", st)
	}
	last := due.Truncate(time.Second).Add(time.Second + tokenLate + r.RetryAfter/4)
	if st := g.book.redeem(last.Add(time.Nanosecond), tok); st != TokenExpired {
		t.Fatalf("after the window: %v, want expired", st)
	}
	if st := g.book.redeem(last, tok); st != TokenHonoured {
		t.Fatalf("at the window's end: %v, want honoured", st)
	}
}

func TestTokenTampered(t *testing.T) {
	g, fake, _ := shedWithTokens(t, PolicyStatic)
	r, _ := g.Admit(Interactive)
	tok := token(t, r)
	fake.Advance(r.RetryAfter)
	for i, bad := range [][]byte{
		[]byte("short"), []byte(string(tok) + "0"),
		append([]byte("X"), tok[1:]...), flip(tok, 3), flip(tok, 20),
	} {
		if st := g.book.redeem(fake.Now(), bad); st != TokenInvalid {
			t.Errorf("case %d: %v, want invalid", i, st)
		}
	}
	// Another gate's token is not this gate's.
	other, _, _ := shedWithTokens(t, PolicyStatic)
	if st := other.book.redeem(fake.Now(), tok); st != TokenInvalid {
		t.Errorf("another gate's token: %v, want invalid", st)
	}
	if st := g.book.redeem(fake.Now(), tok); st != TokenHonoured {
		t.Errorf("the untouched token: %v, want honoured", st)
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	if c[i] == '0' {
		c[i] = '1'
	} else {
		c[i] = '0'
	}
	return c
}

// TestBookingsPerSecondBounded: a second holds at most share x rate places (here 0.5 x 20);
// the next refusal is booked a second later and its Retry-After says so.
func TestBookingsPerSecondBounded(t *testing.T) {
	g, _, _ := shedWithTokens(t, PolicyStatic) // its first refusal booked place 1 of second +2
	perSecond := 10
	for i := 1; i < perSecond; i++ {
		r, _ := g.Admit(Interactive)
		if r.RetryAfter != 2*time.Second {
			t.Fatalf("booking %d: Retry-After %v, want 2s", i+1, r.RetryAfter)
		}
	}
	r, _ := g.Admit(Interactive)
	if r.RetryAfter != 3*time.Second {
		t.Fatalf("booking %d: Retry-After %v, want 3s (second +2 is full)", perSecond+1, r.RetryAfter)
	}
	token(t, r)
}

// TestBookAheadIsBounded: a full second pushes a booking at most bookAhead later, and never
// past MaxRetryAfter.
func TestBookAheadIsBounded(t *testing.T) {
	bk := newBook(epoch)
	for d := time.Second; d <= time.Second+bookAhead; d += time.Second {
		if got, _, ok := bk.reserve(epoch, time.Second, 1); !ok || got != d {
			t.Fatalf("booking for %v: got %v ok %v", d, got, ok)
		}
	}
	if _, tok, ok := bk.reserve(epoch, time.Second, 1); ok || tok.ok {
		t.Fatal("booked further than bookAhead past the Retry-After")
	}
	for range 10 {
		if d, _, ok := bk.reserve(epoch, MaxRetryAfter-time.Second, 1); ok && d > MaxRetryAfter {
			t.Fatalf("booked at %v, past MaxRetryAfter", d)
		}
	}
	if _, _, ok := bk.reserve(epoch, time.Second, 0); ok {
		t.Fatal("booked with no places per second")
	}
}

func TestNoTokenUntilWarmOrWhenOff(t *testing.T) {
	src := newFakeSource()
	src.setDepth(300)
	g, _ := newTestGate(t, Config{HighWatermark: 256, Policy: PolicyStatic, StaticRetryAfter: time.Second,
		RetryReserve: 0.5}, src)
	if r, _ := g.Admit(Interactive); r.Token.ok {
		t.Fatal("token booked before the completion rate is measured")
	}
	src.setDepth(10)
	off, fake := newTestGate(t, Config{HighWatermark: 256, Policy: PolicyStatic, StaticRetryAfter: time.Second}, src)
	warmUp(t, off, fake, src, 20)
	src.setDepth(300)
	r, _ := off.Admit(Interactive)
	if r.Token.ok || off.book != nil {
		t.Fatal("token booked with RetryReserve 0")
	}
	if _, ok := off.AdmitRetry(Interactive, []byte("0123456789abcdef0123456789abcdef")); ok {
		t.Fatal("a token was honoured by a gate without reservations")
	}
}

// TestTokenStillBoundByClassCapacity: a token passes the watermarks, not the class's hard
// capacity.
func TestTokenStillBoundByClassCapacity(t *testing.T) {
	g, fake, src := shedWithTokens(t, PolicyStatic)
	r, _ := g.Admit(Interactive)
	tok := token(t, r)
	fake.Advance(r.RetryAfter)
	src.set(func(l *Load) { l.Waiting[Interactive] = src.lim.QueueSize })
	r2, ok := g.AdmitRetry(Interactive, tok)
	if ok || r2.Reason != ReasonSaturated {
		t.Fatalf("token into a full class: ok %v reason %s, want saturated", ok, r2.Reason)
	}
}

func TestTokenAdmitDoesNotAllocate(t *testing.T) {
	g, fake, _ := shedWithTokens(t, PolicyStatic) // places at 2 to 6 s
	toks := make([][]byte, 0, 40)
	for range 40 {
		r, _ := g.Admit(Interactive)
		toks = append(toks, token(t, r))
	}
	fake.Advance(3 * time.Second) // some honoured, some early, then used
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		g.AdmitRetry(Interactive, toks[i%len(toks)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("AdmitRetry allocates %v times per call", allocs)
	}
}

func TestTokenStateNames(t *testing.T) {
	seen := map[string]bool{}
	for _, st := range tokenStates {
		n := st.String()
		if n == "none" || seen[n] {
			t.Fatalf("state %d has name %q", st, n)
		}
		seen[n] = true
	}
	if TokenNone.String() != "none" {
		t.Fatal(strconv.Quote(TokenNone.String()))
	}
}

// TestOverbookingFollowsShowRate: when 3 tokens in 10 come back, a second holds about 10/3
// times the planned places; when all come back, no more than planned.
func TestOverbookingFollowsShowRate(t *testing.T) {
	for _, tc := range []struct {
		every  int // honour tokens 0, every, 2 x every... of each second's 10
		lo, hi int // places one second then holds
	}{{every: 4, lo: 31, hi: 34}, {every: 1, lo: 10, hi: 10}} {
		bk := newBook(epoch)
		var due [][]byte
		for sec := range 12 {
			now := epoch.Add(time.Duration(sec) * time.Second)
			for i, tok := range due {
				if i%tc.every == 0 {
					if st := bk.redeem(now, tok); st != TokenHonoured {
						t.Fatalf("token at its time: %v", st)
					}
				}
			}
			due = due[:0]
			for range 10 {
				_, tok, ok := bk.reserve(now, time.Second, 10)
				if !ok {
					t.Fatal("no place")
				}
				v, _ := tok.Value()
				due = append(due, append([]byte(nil), v...))
			}
		}
		now := epoch.Add(12 * time.Second)
		for i, tok := range due {
			if i%tc.every == 0 {
				bk.redeem(now, tok)
			}
		}
		n := 0
		for range 60 {
			if d, _, _ := bk.reserve(now, time.Second, 10); d == time.Second {
				n++
			}
		}
		if n < tc.lo || n > tc.hi {
			t.Errorf("honouring 1 in %d: one second holds %d places, want %d..%d (show rate %.3f)",
				tc.every, n, tc.lo, tc.hi, bk.show.get())
		}
	}
}

// TestBookingsCountRequestsWhenTheQueueMeasuresWork: a Queue whose drain rate is in work
// (tokens) books places by the requests that rate completes, not by its tokens: 1,000 tokens
// a second at 200 a request is 5 requests, so a share of 0.5 books 2 a second over the
// Retry-After's second and the bookAhead seconds after it, not every refusal.
func TestBookingsCountRequestsWhenTheQueueMeasuresWork(t *testing.T) {
	src := newFakeSource()
	src.setLimits(func(lim *Limits) { lim.WorkUnits = true })
	g, fake := newTestGate(t, Config{HighWatermark: 256, Policy: PolicyStatic, StaticRetryAfter: 2 * time.Second,
		RetryReserve: 0.5}, src, fixedRand(0.5))
	src.set(func(l *Load) { l.Waiting[Interactive], l.Work = 10, 2000 })
	g.Admit(Interactive)
	for range warmIntervals {
		fake.Advance(foldInterval)
		src.set(func(l *Load) { l.WorkDone += 1000; l.Completed += 5 })
		g.Admit(Interactive)
	}
	if rate, warm := g.drain.get(); !warm || rate != 1000 {
		t.Fatalf("after warm-up: %v a second, warm %v", rate, warm)
	}
	src.set(func(l *Load) { l.Waiting[Interactive], l.Running, l.Work = 230, 40, 270*200 })
	tokens := 0
	for range 50 {
		if r, ok := g.Admit(Interactive); !ok && r.Token.ok {
			tokens++
		}
	}
	if want := 2 * int(1+bookAhead/time.Second); tokens != want {
		t.Fatalf("%d of 50 refusals booked a place, want %d", tokens, want)
	}
}

// TestUnbookedRefusalsLeaveThePlaces: refusals of work no client brings back (a job's
// documents, a second gate) book nothing, so they neither take the places of a second nor
// lower the show rate that sizes the others: a client's refusal after 200 of them still gets
// the place its Retry-After points to.
func TestUnbookedRefusalsLeaveThePlaces(t *testing.T) {
	g, _, _ := shedWithTokens(t, PolicyStatic)
	for range 200 {
		r, ok := g.AdmitUnbooked(Bulk)
		if ok || r.Token.ok {
			t.Fatalf("an unbooked refusal: admitted %v, token %v", ok, r.Token.ok)
		}
		if r, ok := g.RefuseUnbooked(Bulk, ErrQueueFull); !ok || r.Token.ok {
			t.Fatalf("an unbooked queue refusal: %v, token %v", ok, r.Token.ok)
		}
	}
	if got := g.book.booked.Load(); got != 1 {
		t.Fatalf("%d places booked, want the first client refusal's only", got)
	}
	r, _ := g.Admit(Interactive)
	if r.RetryAfter != 2*time.Second {
		t.Fatalf("a client's refusal after them: Retry-After %v, want 2s", r.RetryAfter)
	}
	token(t, r)
}
