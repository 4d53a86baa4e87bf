package deid

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// dateLayout is how a date was written, so that a shifted or surrogate date is written the
// same way.
type dateLayout struct {
	order    dateOrder
	sep      string // between numbers
	name     nameStyle
	comma    bool // "March 3, 2021"
	twoDigit bool // the year had two digits (read only; written with four, as OpenMed)
}

type dateOrder uint8

const (
	ymd      dateOrder = iota // 2021-03-04, 2021/03/04
	dmy                       // 04.03.2021, 04/03/2021 in a day-first language
	mdy                       // 03/04/2021 in English
	monthDay                  // March 4, 2021
	dayMonth                  // 4 March 2021
)

type nameStyle uint8

const (
	fullName   nameStyle = iota
	abbrev               // Mar
	abbrevDot            // Mar.
	upperFull            // MARCH
	upperShort           // MAR
)

var (
	yearFirst   = regexp.MustCompile(`^(\d{4})([-/.])(\d{1,2})([-/.])(\d{1,2})$`)
	numeric     = regexp.MustCompile(`^(\d{1,2})([-/.])(\d{1,2})([-/.])(\d{2}|\d{4})$`)
	monthFirstR = regexp.MustCompile(`^([A-Za-z]+)(\.?)\s+(\d{1,2})(?:st|nd|rd|th)?(,?)\s+(\d{4})$`)
	dayFirstR   = regexp.MustCompile(`^(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+)(\.?)(,?)\s+(\d{4})$`)
)

// dayFirstLangs are the languages whose numeric dates put the day first (OpenMed's list).
var dayFirstLangs = map[string]bool{"fr": true, "de": true, "it": true, "es": true, "nl": true,
	"hi": true, "te": true, "pt": true, "ar": true, "tr": true}

var monthNames = []string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// monthOf reads an English month name, full or abbreviated (three letters, or "Sept").
func monthOf(word string) (time.Month, nameStyle, bool) {
	w := strings.ToLower(word)
	upper := word == strings.ToUpper(word) && len(word) > 1
	for i, n := range monthNames {
		ln := strings.ToLower(n)
		switch {
		case w == ln:
			if upper {
				return time.Month(i + 1), upperFull, true
			}
			return time.Month(i + 1), fullName, true
		case w == ln[:3] || (i == 8 && w == "sept"):
			if upper {
				return time.Month(i + 1), upperShort, true
			}
			return time.Month(i + 1), abbrev, true
		}
	}
	return 0, 0, false
}

// parseDate reads a date span in one of the layouts Sluice writes back. ok is false for
// anything else, and for a date that does not exist (31 April).
func parseDate(s, lang string) (time.Time, dateLayout, bool) {
	s = strings.TrimSpace(s)
	var y, m, d int
	var l dateLayout
	switch {
	case yearFirst.MatchString(s):
		g := yearFirst.FindStringSubmatch(s)
		if g[2] != g[4] {
			return time.Time{}, l, false
		}
		y, m, d = atoi(g[1]), atoi(g[3]), atoi(g[5])
		l = dateLayout{order: ymd, sep: g[2]}
	case numeric.MatchString(s):
		g := numeric.FindStringSubmatch(s)
		if g[2] != g[4] {
			return time.Time{}, l, false
		}
		a, b := atoi(g[1]), atoi(g[3])
		y = atoi(g[5])
		l = dateLayout{sep: g[2], twoDigit: len(g[5]) == 2}
		if g[2] == "." || dayFirstLangs[lang] {
			l.order, d, m = dmy, a, b
		} else {
			l.order, m, d = mdy, a, b
		}
		if l.twoDigit {
			y += 1900
			if y < 1950 {
				y += 100
			}
		}
	case monthFirstR.MatchString(s):
		g := monthFirstR.FindStringSubmatch(s)
		mo, style, ok := monthOf(g[1])
		if !ok {
			return time.Time{}, l, false
		}
		if g[2] == "." && style == abbrev {
			style = abbrevDot
		}
		m, d, y = int(mo), atoi(g[3]), atoi(g[5])
		l = dateLayout{order: monthDay, name: style, comma: g[4] == ","}
	case dayFirstR.MatchString(s):
		g := dayFirstR.FindStringSubmatch(s)
		mo, style, ok := monthOf(g[2])
		if !ok {
			return time.Time{}, l, false
		}
		if g[3] == "." && style == abbrev {
			style = abbrevDot
		}
		d, m, y = atoi(g[1]), int(mo), atoi(g[5])
		l = dateLayout{order: dayMonth, name: style, comma: g[4] == ","}
	default:
		return time.Time{}, l, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if m < 1 || m > 12 || d < 1 || t.Day() != d || t.Month() != time.Month(m) {
		return time.Time{}, l, false
	}
	return t, l, true
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// format writes t in layout l.
func (l dateLayout) format(t time.Time) string {
	y, m, d := t.Date()
	switch l.order {
	case ymd:
		return fmt.Sprintf("%04d%s%02d%s%02d", y, l.sep, int(m), l.sep, d)
	case dmy:
		return fmt.Sprintf("%02d%s%02d%s%04d", d, l.sep, int(m), l.sep, y)
	case mdy:
		return fmt.Sprintf("%02d%s%02d%s%04d", int(m), l.sep, d, l.sep, y)
	}
	name := monthNames[m-1]
	switch l.name {
	case abbrev:
		name = name[:3]
	case abbrevDot:
		name = name[:3] + "."
	case upperFull:
		name = strings.ToUpper(name)
	case upperShort:
		name = strings.ToUpper(name[:3])
	}
	comma := ""
	if l.comma {
		comma = ","
	}
	if l.order == monthDay {
		return fmt.Sprintf("%s %d%s %04d", name, d, comma, y)
	}
	return fmt.Sprintf("%d %s%s %04d", d, name, comma, y)
}

// shiftDate moves t by days; with keepYear the result keeps t's year (29 February becomes
// the 28th in a year without one).
func shiftDate(t time.Time, days int, keepYear bool) time.Time {
	s := t.AddDate(0, 0, days)
	if !keepYear || s.Year() == t.Year() {
		return s
	}
	d := s.Day()
	if s.Month() == time.February && d == 29 && !isLeap(t.Year()) {
		d = 28
	}
	return time.Date(t.Year(), s.Month(), d, 0, 0, 0, 0, time.UTC)
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }
