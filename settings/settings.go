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
