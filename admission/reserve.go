package admission

import (
	"hash/maphash"
	"math"
	"sync/atomic"
	"time"
)

// RetryTokenHeader carries a retry reservation: the server sets it on a refusal that booked
// one, and a client sends it back, unchanged, on its retry.
const RetryTokenHeader = "X-Sluice-Retry-Token"

// TokenLen is the length of a retry token: 16 hex digits of payload, 16 of keyed hash.
const TokenLen = 32

// Reservation book limits.
const (
	// bookSlots is the ring of one-second slots; it must outlast the longest Retry-After plus
	// a token's validity, so that a slot is only reused once every token in it has expired.
	bookSlots = 128
	// maxPerSlot bounds the reservations of one second (and the size of each slot's bitmap).
	maxPerSlot = 4096
	// bookAhead is how many seconds past the Retry-After the policy chose a refusal may be
	// booked when that second is full. Further out, the refusal gets the policy's Retry-After
	// and no token: under a flood most refused clients never return, and booking them all
	// would push every Retry-After to the limit before the show rate is even measured.
	bookAhead = 4 * time.Second
	// tokenEarly is how long before its due time a token is already honoured (client clocks
	// and timers round).
	tokenEarly = 250 * time.Millisecond
	// tokenLate is how long after the end of its due second a token is still honoured, plus a
	// quarter of the Retry-After it came with (clients add jitter in proportion to the delay).
	tokenLate = 2 * time.Second
)

// TokenState says what a presented retry token was worth; it is the "outcome" label of
// sluice_admission_retry_tokens_total.
type TokenState int

const (
	// TokenNone: the request carried no token.
	TokenNone TokenState = iota
	// TokenHonoured: a valid token; the request was let past the watermarks.
	TokenHonoured
	// TokenInvalid: not a token this gate issued (wrong length, digits or hash).
	TokenInvalid
	// TokenEarly: a valid token sent before its due time.
	TokenEarly
	// TokenExpired: a valid token sent after its validity ended.
	TokenExpired
	// TokenUsed: a token that was already honoured once.
	TokenUsed
)

// tokenStates lists the presented-token outcomes, for label sets.
var tokenStates = [...]TokenState{TokenHonoured, TokenInvalid, TokenEarly, TokenExpired, TokenUsed}

func (s TokenState) String() string {
	switch s {
	case TokenHonoured:
		return "honoured"
	case TokenInvalid:
		return "invalid"
	case TokenEarly:
		return "early"
	case TokenExpired:
		return "expired"
	case TokenUsed:
		return "used"
	}
	return "none"
}

// RetryToken is a booked retry reservation as sent to the client; the zero value is "none".
type RetryToken struct {
	b  [TokenLen]byte
	ok bool
}

// Value is the header value and whether there is one.
func (t RetryToken) Value() ([]byte, bool) {
	if !t.ok {
		return nil, false
	}
	return t.b[:], true
}

// book is a gate's retry reservations. A refusal books a place at the second its Retry-After
// points to; at most Config.RetryReserve x the measured completion rate places per second,
// divided by the measured show rate, so what comes back stays a fraction of what the endpoint
// actually completes. A token names its place (second, index within it, delay) and carries a
// keyed hash of those, so the gate needs no table of issued tokens: each slot is one atomic
// word (second and count) and a bitmap of places used, which makes every token single-use.
//
// Everything is atomic and allocation-free: booking is a CAS on the slot word, honouring an
// atomic OR on the bitmap.
type book struct {
	origin time.Time // second 0 of the book
	seed   maphash.Seed
	slots  [bookSlots]bookSlot

	booked   atomic.Uint64 // places booked, ever
	honoured atomic.Uint64 // tokens honoured, ever
	show     showRate
}

// showRate is the measured share of booked places whose token comes back. Many refused
// clients never retry (they give up, or their retry budget is spent), and a place nobody
// claims costs nothing, so the book overbooks by 1/show, as an airline does: what it promises
// and what arrives then both stay near the configured share of the completion rate. It is a
// moving average of bookings and of honoured tokens per interval, folded like drainRate.
type showRate struct {
	fold         lazyFold
	lastBooked   uint64 // guarded by fold
	lastHonoured uint64 // guarded by fold
	avgBooked    ewma   // guarded by fold
	avgHonoured  ewma   // guarded by fold

	rate atomic.Uint64 // float64 bits; 0 means not measured yet (read as 1)
}

// Show-rate constants: the bookings an estimate needs, and the floor that bounds overbooking
// to 10x.
const (
	showMinBooks = 20
	minShow      = 0.1
)

// update folds the show rate from the book's counters once per interval.
func (s *showRate) update(now time.Time, booked, honoured uint64) {
	span, ok := s.fold.begin(now)
	if !ok {
		return
	}
	defer s.fold.end()
	db, dh := float64(booked-s.lastBooked), float64(honoured-s.lastHonoured)
	s.lastBooked, s.lastHonoured = booked, honoured
	if span == 0 {
		return // the baseline
	}
	avgBooked := s.avgBooked.fold(db, 1)
	avgHonoured := s.avgHonoured.fold(dh, 1)
	if avgBooked*(1/foldAlpha) < showMinBooks {
		return // too few bookings to say anything; keep the last estimate
	}
	s.rate.Store(math.Float64bits(min(max(avgHonoured/avgBooked, minShow), 1)))
}

// get is the show rate to plan with: 1 (no overbooking) until measured.
func (s *showRate) get() float64 {
	if r := math.Float64frombits(s.rate.Load()); r > 0 {
		return r
	}
	return 1
}

type bookSlot struct {
	// word is second<<16 | booked; the second is relative to origin.
	word atomic.Uint64
	used [maxPerSlot / 64]atomic.Uint64
}

const countBits = 16

func newBook(origin time.Time) *book {
	return &book{origin: origin, seed: maphash.MakeSeed()}
}

// reserve books one place due at now+delay, or in one of the bookAhead seconds after it while
// that one is full, never past MaxRetryAfter. perSecond is how many returning retries a second
// may plan for (0: none); divided by the show rate, and at least 1, it is the most places a
// second holds. It returns the delay actually booked and the token; ok is false when every
// second it may use is full.
func (bk *book) reserve(now time.Time, delay time.Duration, perSecond float64) (time.Duration, RetryToken, bool) {
	if !(perSecond > 0) || delay <= 0 {
		return 0, RetryToken{}, false
	}
	bk.show.update(now, bk.booked.Load(), bk.honoured.Load())
	limit := int(min(max(perSecond/bk.show.get(), 1), maxPerSlot))
	for last := min(delay+bookAhead, MaxRetryAfter); delay <= last; delay += time.Second {
		sec := uint64(now.Add(delay).Sub(bk.origin) / time.Second)
		s := &bk.slots[sec%bookSlots]
		for {
			w := s.word.Load()
			wsec, n := w>>countBits, int(w&(1<<countBits-1))
			if wsec != sec {
				if wsec > sec {
					break // the ring moved past this second: treat as full
				}
				n = 0
			}
			if n >= limit {
				break
			}
			if !s.word.CompareAndSwap(w, sec<<countBits|uint64(n+1)) {
				continue
			}
			if n == 0 && wsec != sec {
				// First place of a fresh second: forget the places used bookSlots seconds ago.
				// Their tokens expired long before this second can be presented.
				for i := range s.used {
					s.used[i].Store(0)
				}
			}
			bk.booked.Add(1)
			return delay, bk.token(sec, n, delay), true
		}
	}
	return 0, RetryToken{}, false
}

// token encodes a place: second (32 bits), index (16 bits), delay in seconds (16 bits).
func (bk *book) token(sec uint64, n int, delay time.Duration) RetryToken {
	payload := sec<<32 | uint64(n)<<16 | uint64(delay/time.Second)
	var t RetryToken
	putHex(t.b[:16], payload)
	putHex(t.b[16:], bk.mac(payload))
	t.ok = true
	return t
}

func (bk *book) mac(payload uint64) uint64 {
	return maphash.Comparable(bk.seed, payload)
}

// redeem checks a presented token at now and marks its place used.
func (bk *book) redeem(now time.Time, tok []byte) TokenState {
	if len(tok) != TokenLen {
		return TokenInvalid
	}
	payload, ok1 := parseHex(tok[:16])
	mac, ok2 := parseHex(tok[16:])
	if !ok1 || !ok2 || bk.mac(payload) != mac {
		return TokenInvalid
	}
	sec := payload >> 32
	n := int(payload >> 16 & (1<<16 - 1))
	delay := time.Duration(payload&(1<<16-1)) * time.Second
	due := bk.origin.Add(time.Duration(sec) * time.Second)
	switch {
	case now.Before(due.Add(-tokenEarly)):
		return TokenEarly
	case now.After(due.Add(time.Second + tokenLate + delay/4)):
		return TokenExpired
	}
	s := &bk.slots[sec%bookSlots]
	if s.word.Load()>>countBits != sec || n >= maxPerSlot {
		return TokenExpired
	}
	bit := uint64(1) << (n % 64)
	if s.used[n/64].Or(bit)&bit != 0 {
		return TokenUsed
	}
	bk.honoured.Add(1)
	return TokenHonoured
}

// reservePerSecond is how many returning retries a second may plan for at completion rate
// rate; 0 when there is no usable rate.
func reservePerSecond(share, rate float64) float64 {
	if share <= 0 || rate <= 0 || math.IsInf(rate, 0) || math.IsNaN(rate) {
		return 0
	}
	return share * rate
}

func putHex(dst []byte, v uint64) {
	for i := 15; i >= 0; i-- {
		dst[i] = hexDigits[v&0xf]
		v >>= 4
	}
}

const hexDigits = "0123456789abcdef"

func parseHex(b []byte) (uint64, bool) {
	var v uint64
	for _, c := range b {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}
