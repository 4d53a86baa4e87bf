package deid

import "strings"

// Method is how a request asks for spans to be de-identified (OpenMed's "method").
type Method string

// The methods OpenMed's /pii/deidentify accepts.
const (
	Mask       Method = "mask"
	Remove     Method = "remove"
	Replace    Method = "replace"
	Hash       Method = "hash"
	ShiftDates Method = "shift_dates"
)

// Methods lists every method, in OpenMed's order.
var Methods = []Method{Mask, Remove, Replace, Hash, ShiftDates}

// Used names the methods reds applied, in Methods' order, joined by ","; fallback when none
// applied any (a policy that kept every span), so that a response says what was done.
func Used(reds []Redaction, fallback Method) string {
	var names []string
	for _, m := range Methods {
		for _, r := range reds {
			if r.Method == m {
				names = append(names, string(m))
				break
			}
		}
	}
	if len(names) == 0 {
		return string(fallback)
	}
	return strings.Join(names, ",")
}

// ParseMethod reads a method's wire name.
func ParseMethod(s string) (Method, bool) {
	for _, m := range Methods {
		if string(m) == s {
			return m, true
		}
	}
	return "", false
}

// Action is what a policy profile says to do with one kind of identifier.
type Action string

// A profile's actions. Redact means mask; Keep leaves the span as it is.
const (
	ActKeep    Action = "keep"
	ActRedact  Action = "redact"
	ActMask    Action = "mask"
	ActReplace Action = "replace"
	ActHash    Action = "hash"
)

// method is the method an action applies.
func (a Action) method() Method {
	switch a {
	case ActReplace:
		return Replace
	case ActHash:
		return Hash
	default:
		return Mask
	}
}
