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
	dot      bool   // "Mar. 3"
	sept     bool   // September abbreviated "Sept"
	ordinal  bool   // "3rd March"
	comma    bool   // "March 3, 2021"
	twoDigit bool   // the year had two digits, and is written with two
	unpadded bool   // "7/8/22": a day or month under ten has no leading zero
	nameSep  string // between the parts of a date with a month name: " ", or "-" in 02-Feb-2024
	noYear   bool   // "4 Jan", "Jan 4": no year written
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
	upperFull            // MARCH
	upperShort           // MAR
)

var (
	yearFirst = regexp.MustCompile(`^(\d{4})([-/.])(\d{1,2})([-/.])(\d{1,2})$`)
	numeric   = regexp.MustCompile(`^(\d{1,2})([-/.])(\d{1,2})([-/.])(\d{2}|\d{4})$`)
	// A date with a month's name may leave its year out ("4 Jan", "Jan 4").
	monthFirstR = regexp.MustCompile(`^([A-Za-z]+)(\.?)\s+(\d{1,2})((?i:st|nd|rd|th)?)(?:(,?)\s+(\d{4}))?$`)
	dayFirstR   = regexp.MustCompile(`^(\d{1,2})((?i:st|nd|rd|th)?)\s+([A-Za-z]+)(\.?)(?:(,?)\s+(\d{4}))?$`)
	dashedR     = regexp.MustCompile(`^(\d{1,2})-([A-Za-z]{3,9})-(\d{2}|\d{4})$`) // 02-Feb-2024
)

// noYearRef is the year a date written without one is read in: a common year, as most are,
// so that a shift moves it as it moves the dated ones; 29 February alone is read in
// noYearLeap.
const (
	noYearRef  = 2001
	noYearLeap = 2000
)

var ()

// dayFirstLangs are the languages whose numeric dates put the day first (OpenMed's list).
var dayFirstLangs = map[string]bool{"fr": true, "de": true, "it": true, "es": true, "nl": true,
	"hi": true, "te": true, "pt": true, "ar": true, "tr": true}

var monthNames = []string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// monthOf reads an English month name, full or abbreviated (three letters, or "Sept").
func monthOf(word string) (m time.Month, style nameStyle, sept, ok bool) {
	w := strings.ToLower(word)
	upper := word == strings.ToUpper(word) && len(word) > 1
	for i, n := range monthNames {
		ln := strings.ToLower(n)
		switch {
		case w == ln:
			if upper {
				return time.Month(i + 1), upperFull, false, true
			}
			return time.Month(i + 1), fullName, false, true
		case w == ln[:3] || (i == 8 && w == "sept"):
			if upper {
				return time.Month(i + 1), upperShort, w == "sept", true
			}
			return time.Month(i + 1), abbrev, w == "sept", true
		}
	}
	return 0, 0, false, false
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
		l = dateLayout{sep: g[2], twoDigit: len(g[5]) == 2, unpadded: len(g[1]) == 1 || len(g[3]) == 1}
		if g[2] == "." || dayFirstLangs[lang] {
			l.order, d, m = dmy, a, b
		} else {
			l.order, m, d = mdy, a, b
		}
		if l.twoDigit {
			y = century(y)
		}
	case monthFirstR.MatchString(s):
		g := monthFirstR.FindStringSubmatch(s)
		mo, style, sept, ok := monthOf(g[1])
		if !ok {
			return time.Time{}, l, false
		}
		m, d, y = int(mo), atoi(g[3]), atoi(g[6])
		l = dateLayout{order: monthDay, name: style, sept: sept, dot: g[2] == ".", ordinal: g[4] != "", comma: g[5] == ",", noYear: g[6] == ""}
	case dayFirstR.MatchString(s):
		g := dayFirstR.FindStringSubmatch(s)
		mo, style, sept, ok := monthOf(g[3])
		if !ok {
			return time.Time{}, l, false
		}
		d, m, y = atoi(g[1]), int(mo), atoi(g[6])
		l = dateLayout{order: dayMonth, name: style, sept: sept, dot: g[4] == ".", ordinal: g[2] != "", comma: g[5] == ",", noYear: g[6] == ""}
	case dashedR.MatchString(s):
		g := dashedR.FindStringSubmatch(s)
		mo, style, sept, ok := monthOf(g[2])
		if !ok {
			return time.Time{}, l, false
		}
		d, m, y = atoi(g[1]), int(mo), atoi(g[3])
		l = dateLayout{order: dayMonth, name: style, sept: sept, nameSep: "-", twoDigit: len(g[3]) == 2, unpadded: len(g[1]) == 1}
		if l.twoDigit {
			y = century(y)
		}
	default:
		return time.Time{}, l, false
	}
	if l.noYear {
		y = yearless(m, d)
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if !inRange(t) || m < 1 || m > 12 || d < 1 || t.Day() != d || t.Month() != time.Month(m) {
		return time.Time{}, l, false
	}
	return t, l, true
}

// yearless is the year a date written without one is read in.
func yearless(m, d int) int {
	if m == 2 && d == 29 {
		return noYearLeap
	}
	return noYearRef
}

// century reads a two-digit year: 00-49 are 2000-2049, 50-99 are 1950-1999.
func century(y int) int {
	if y < 50 {
		return 2000 + y
	}
	return 1900 + y
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// format writes t in layout l.
func (l dateLayout) format(t time.Time) string {
	y, m, d := t.Date()
	year := fmt.Sprintf("%04d", y)
	if l.twoDigit && century(y%100) == y {
		// Two digits only where they read back as this year: 12/31/49 a day on is 01/01/2050,
		// which 01/01/50 would say is 1950.
		year = fmt.Sprintf("%02d", y%100)
	}
	num := func(n int) string {
		if l.unpadded {
			return strconv.Itoa(n)
		}
		return fmt.Sprintf("%02d", n)
	}
	switch l.order {
	case ymd:
		return fmt.Sprintf("%04d%s%02d%s%02d", y, l.sep, int(m), l.sep, d)
	case dmy:
		return num(d) + l.sep + num(int(m)) + l.sep + year
	case mdy:
		return num(int(m)) + l.sep + num(d) + l.sep + year
	}
	name := monthNames[m-1]
	switch l.name {
	case abbrev, upperShort:
		if l.sept && m == time.September {
			name = name[:4]
		} else {
			name = name[:3]
		}
	}
	if l.name == upperFull || l.name == upperShort {
		name = strings.ToUpper(name)
	}
	if l.dot && (l.name == abbrev || l.name == upperShort) {
		name += "."
	}
	day := strconv.Itoa(d)
	if l.ordinal {
		day += ordinal(d)
	}
	if l.nameSep == "-" { // 02-Feb-2024
		return num(d) + "-" + name + "-" + year
	}
	comma := ""
	if l.comma {
		comma = ","
	}
	tail := comma + " " + year
	if l.noYear {
		tail = ""
	}
	if l.order == monthDay {
		return name + " " + day + tail
	}
	return day + " " + name + tail
}

// ordinal is the English suffix of day d.
func ordinal(d int) string {
	switch {
	case d%100/10 == 1:
		return "th"
	case d%10 == 1:
		return "st"
	case d%10 == 2:
		return "nd"
	case d%10 == 3:
		return "rd"
	}
	return "th"
}

// inRange reports whether t's year has four digits, the most a layout writes.
func inRange(t time.Time) bool { return t.Year() >= 1 && t.Year() <= 9999 }

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

// movedDate is original, a date in lang, written moved by days (keep_year honoured) in its
// own layout; false where it cannot be read or moved, or where a move of days that are not 0
// (0 asks for the dates as they are) would leave its text as it was (a whole year's shift with
// keep_year, a date written without its year): the original date would be in the answer.
func movedDate(original, lang string, days int, keepYear bool) (string, bool) {
	t, layout, ok := parseDate(original, lang)
	if !ok {
		return "", false
	}
	s := shiftDate(t, days, keepYear)
	if !inRange(s) {
		return "", false
	}
	// Against the original as the layout writes it, not as the text spells it ("2023-1-5" is
	// written "2023-01-05", "march 4" "March 4"): a respelling is no move.
	out := layout.format(s)
	return out, days == 0 || out != layout.format(t)
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }
