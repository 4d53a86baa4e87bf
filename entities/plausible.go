package entities

import (
	"strconv"
	"strings"
	"unicode"
)

// Implausible reports whether an entity's text cannot be the identifier its label names,
// whatever the model's score: an email with no letter or digit, a number-like identifier (SSN, phone,
// postcode, record or account number, payment card) without a digit, a web address without
// a dot, a date that is only a year (years alone are not identifiers) or that is written in
// numbers no calendar reading fits (20/200, visual acuity). A model trained on synthetic
// text labels such shapes in real notes (underscore blanks as emails, XXXX as an SSN);
// labels of other kinds are never implausible.
func Implausible(label, text string) bool {
	digits := strings.ContainsAny(text, "0123456789")
	switch normalizePIILabel(label) {
	case "email":
		// Not "@": an address written out ("jo at example dot org") is still one; a blank
		// line of underscores is not.
		return !strings.ContainsFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
	case "ssn", "phone", "postcode", "medical_record", "account", "payment_card", "npi":
		return !digits
	case "url":
		return !strings.Contains(text, ".")
	case "date":
		// A year alone is not an identifier, but a birth year can be (an age over 89).
		return numericDateImpossible(strings.TrimSpace(text), strings.EqualFold(label, "date"))
	}
	return false
}

// numericDateImpossible: a bare year (when yearAlone says so), or digits and slashes that fit
// no month/day[/year], day/month[/year] or year/month/day reading. Dates with words or other
// separators are left to the model.
func numericDateImpossible(s string, yearAlone bool) bool {
	if yearAlone && len(s) == 4 && strings.Trim(s, "0123456789") == "" {
		return true
	}
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	n := make([]int, len(parts))
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || len(p) > 4 {
			return false // not purely numeric: not this rule's to judge
		}
		n[i] = v
	}
	month := func(v int) bool { return v >= 1 && v <= 12 }
	day := func(v int) bool { return v >= 1 && v <= 31 }
	year := func(i int) bool { return len(parts[i]) == 2 || len(parts[i]) == 4 }
	if len(n) == 2 {
		// m/d, d/m, m/yy, m/yyyy
		return !(month(n[0]) && (day(n[1]) || year(1)) || day(n[0]) && month(n[1]))
	}
	return !((month(n[0]) && day(n[1]) || day(n[0]) && month(n[1])) && year(2) ||
		len(parts[0]) == 4 && month(n[1]) && day(n[2]))
}
