package tokenizer

import (
	"errors"
	"strconv"
	"sync"
)

// serdeFloat parses a JSON number the way serde_json does without its float_roundtrip
// feature, which is how HF reads Unigram scores: the decimal digits are gathered into a u64
// (digits past its range are dropped), converted to a float64, then multiplied or divided
// by a power of ten. The two roundings can land one unit in the last place away from the
// correctly rounded value Go's strconv gives, and Viterbi compares sums of scores exactly,
// so a near tie between two segmentations is decided by that last bit.
func serdeFloat(s string) (float64, error) {
	bad := errors.New("invalid number")
	i := 0
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return 0, bad
	}
	var sig uint64
	exp := 0
	overflow := false
	const maxU = ^uint64(0)
	digit := func(d uint64) bool {
		return sig >= maxU/10 && (sig > maxU/10 || d > maxU%10)
	}
	if s[i] == '0' {
		i++
	} else {
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			d := uint64(s[i] - '0')
			if overflow || digit(d) {
				overflow = true
				exp++
				continue
			}
			sig = sig*10 + d
		}
	}
	isFloat := false
	if i < len(s) && s[i] == '.' {
		isFloat = true
		i++
		start := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			d := uint64(s[i] - '0')
			if overflow || digit(d) {
				overflow = true
				continue
			}
			sig = sig*10 + d
			exp--
		}
		if i == start {
			return 0, bad
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		isFloat = true
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		start := i
		e := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if e < 1<<20 {
				e = e*10 + int(s[i]-'0')
			}
		}
		if i == start {
			return 0, bad
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(s) {
		return 0, bad
	}
	if !isFloat && !overflow {
		if neg {
			return -float64(sig), nil
		}
		return float64(sig), nil
	}
	f := float64(sig)
	pow := pow10Table()
	for {
		a := exp
		if a < 0 {
			a = -a
		}
		if a < len(pow) {
			if exp >= 0 {
				f *= pow[a]
			} else {
				f /= pow[a]
			}
			break
		}
		if f == 0 {
			break
		}
		if exp >= 0 {
			return 0, errors.New("number out of range")
		}
		f /= 1e308
		exp += 308
	}
	if neg {
		f = -f
	}
	return f, nil
}

// pow10Table holds 1e0 to 1e308, each correctly rounded as Rust's literals are.
var pow10Table = sync.OnceValue(func() []float64 {
	t := make([]float64, 309)
	for i := range t {
		t[i], _ = strconv.ParseFloat("1e"+strconv.Itoa(i), 64)
	}
	return t
})
