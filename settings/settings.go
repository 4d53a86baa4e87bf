package settings

import (
	"errors"
	"fmt"
)

// Problem is one field of a package's configuration that is missing or out of range.
type Problem struct {
	// Package is the package whose configuration it is ("batcher").
	Package string
	// Field is the field as the package names it.
	Field string
	// Text says what is wrong and with which value, without the field's name.
	Text string
}

func (p *Problem) Error() string { return p.Package + ": " + p.Field + " " + p.Text }

// Check collects the problems of one configuration. The zero Check is not usable: make one
// with For.
type Check struct {
	pkg  string
	errs []error
}

// For starts the check of a configuration of package pkg.
func For(pkg string) Check { return Check{pkg: pkg} }

// Addf records that field is wrong; format and args say how, as fmt.Sprintf does.
func (c *Check) Addf(field, format string, args ...any) {
	c.errs = append(c.errs, &Problem{Package: c.pkg, Field: field, Text: fmt.Sprintf(format, args...)})
}

// Include adds the problems of a part's own check (a configuration inside this one), as they
// are.
func (c *Check) Include(err error) {
	c.errs = append(c.errs, flatten(err)...)
}

// Err joins every problem recorded; nil when there are none.
func (c *Check) Err() error { return errors.Join(c.errs...) }

// Problems lists the Problems err holds, taking joined errors apart. An error in it that is
// not a Problem is returned in other, so that a caller can report it as it is.
func Problems(err error) (problems []*Problem, other []error) {
	for _, e := range flatten(err) {
		var p *Problem
		if errors.As(e, &p) {
			problems = append(problems, p)
		} else {
			other = append(other, e)
		}
	}
	return problems, other
}

// flatten takes errors.Join apart, joins within joins included; wrapped errors stay whole.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// Nearest is the name in known closest to name by edit distance (insertions, deletions and
// substitutions of bytes), for an error that says "did you mean"; "" when known is empty or
// nothing is within a third of name's length, where a suggestion would be a guess.
func Nearest(name string, known []string) string {
	best, bestD := "", len(name)/3+1
	for _, k := range known {
		if d := editDistance(name, k); d < bestD || d == bestD && best != "" && k < best {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
