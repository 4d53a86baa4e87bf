package deid

import (
	"testing"
	"time"
)

func TestDatesShiftInTheirOwnLayout(t *testing.T) {
	for _, c := range []struct {
		in, lang string
		days     int
		keepYear bool
		want     string
	}{
		{"2020-01-31", "en", 30, false, "2020-03-01"}, // across a leap February
		{"2021-01-31", "en", 30, false, "2021-03-02"},
		{"2020/02/28", "en", 1, false, "2020/02/29"},
		{"02/28/2021", "en", 1, false, "03/01/2021"},
		{"2/28/21", "en", 1, false, "3/1/21"}, // the layout kept: unpadded, a two-digit year
		{"12/18/23", "en", 34, false, "01/21/24"},
		{"02-Feb-2024", "en", 30, false, "03-Mar-2024"},
		{"7-Jan-23", "en", -7, false, "31-Dec-22"},
		{"4 Jan", "en", 10, false, "14 Jan"}, // no year written, none shown
		{"Jan 30", "en", 2, false, "Feb 1"},
		{"28/02/2021", "fr", 1, false, "01/03/2021"},
		{"28.02.2024", "en", 1, false, "29.02.2024"}, // dotted is day first in any language
		{"12-31-1999", "en", 1, false, "01-01-2000"},
		{"March 3, 2021", "en", -3, false, "February 28, 2021"},
		{"March 3 2021", "en", -3, false, "February 28 2021"},
		{"Mar. 3, 2021", "en", 365, false, "Mar. 3, 2022"},
		{"Sept 30, 2021", "en", 1, false, "Oct 1, 2021"},
		{"3 MARCH 2021", "en", 29, false, "1 APRIL 2021"},
		{"1st January 2000", "en", -1, false, "31st December 1999"},
		{"March 3rd, 2021", "en", -1, false, "March 2nd, 2021"},
		{"March 10th 2021", "en", 1, false, "March 11th 2021"},
		{"MAR. 3, 2021", "en", 1, false, "MAR. 4, 2021"},
		{"Sept. 30, 2021", "en", 1, false, "Oct. 1, 2021"},
		{"Sept 3, 2021", "en", 1, false, "Sept 4, 2021"},
		{"02/28/00", "en", 1, false, "02/29/00"},   // two-digit years: 00-49 are 20xx (2000 was leap)
		{"12/31/49", "en", 1, false, "01/01/2050"}, // 01/01/50 would read as 1950: four digits where two do not read back
		{"01/01/50", "en", -1, false, "12/31/1949"},
		{"12/15/2020", "en", 30, true, "01/14/2020"}, // the year put back
		{"2024-02-29", "en", 366, true, "2024-03-01"},
		{"2023-03-01", "en", 365, true, "2023-02-28"},
	} {
		tm, layout, ok := parseDate(c.in, c.lang)
		if !ok {
			t.Errorf("%q: not read", c.in)
			continue
		}
		if got := layout.format(shiftDate(tm, c.days, c.keepYear)); got != c.want {
			t.Errorf("%q %+d keepYear=%v: %q, want %q", c.in, c.days, c.keepYear, got, c.want)
		}
	}
}

func TestTwoDigitYearsTurnAtFifty(t *testing.T) {
	for in, want := range map[string]int{"01/02/49": 2049, "01/02/50": 1950, "3-Mar-07": 2007} {
		if tm, _, ok := parseDate(in, "en"); !ok || tm.Year() != want {
			t.Errorf("%q: year %d (%v), want %d", in, tm.Year(), ok, want)
		}
	}
}

func TestKeepYearOnTheTwentyNinth(t *testing.T) {
	// 2024-02-29 shifted a year back lands in 2023, whose year is replaced by 2024's: still a
	// valid date. And a date in a leap year shifted onto 29 February keeps it.
	got := shiftDate(time.Date(2023, 3, 1, 0, 0, 0, 0, time.UTC), -1, true)
	if got != time.Date(2023, 2, 28, 0, 0, 0, 0, time.UTC) {
		t.Fatal(got)
	}
	got = shiftDate(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), 365, true) // 2025-02-28
	if got != time.Date(2024, 2, 28, 0, 0, 0, 0, time.UTC) {
		t.Fatal(got)
	}
	got = shiftDate(time.Date(2021, 2, 28, 0, 0, 0, 0, time.UTC), 1096, true) // 2024-02-29 -> 2021
	if got != time.Date(2021, 2, 28, 0, 0, 0, 0, time.UTC) {
		t.Fatal(got)
	}
}

func TestDatesThatDoNotExistAreNotRead(t *testing.T) {
	for _, s := range []string{"2021-02-29", "04/31/2021", "31.04.2021", "13/13/2020", "yesterday",
		"Smarch 3, 2021", "2021-03/04", "03/04-2021", "00/10/2020", "2020-1-0"} {
		if _, _, ok := parseDate(s, "en"); ok {
			t.Errorf("%q was read as a date", s)
		}
	}
}

// TestEveryShiftStaysValid: every day of 2020-2021 shifted by every offset in [-365, 365]
// comes back as a date that parses, in its layout, exactly days away.
func TestEveryShiftStaysValid(t *testing.T) {
	layouts := []dateLayout{{order: ymd, sep: "-"}, {order: mdy, sep: "/"}, {order: dmy, sep: "."},
		{order: monthDay, comma: true}, {order: dayMonth, name: abbrev}}
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for day := 0; day < 731; day += 7 {
		tm := start.AddDate(0, 0, day)
		for days := -365; days <= 365; days += 11 {
			for _, l := range layouts {
				out := l.format(shiftDate(tm, days, false))
				back, _, ok := parseDate(out, "en")
				if !ok || back != tm.AddDate(0, 0, days) {
					t.Fatalf("%s %+d as %+v: %q read back %v %v", tm.Format(time.DateOnly), days, l, out, back, ok)
				}
			}
		}
	}
}

// A date without a year moves as a dated one does: read in a common year, 1 March less a day
// is 28 February, and Jan 15 plus 60 days is Mar 16; 29 February still reads.
func TestYearlessDatesMoveAsDatedOnes(t *testing.T) {
	for _, c := range []struct {
		in   string
		days int
		want string
	}{{"Mar 1", -1, "Feb 28"}, {"Jan 15", 60, "Mar 16"}, {"1 Mar", -365, "1 Mar"}, {"Feb 29", 1, "Mar 1"}} {
		tm, l, ok := parseDate(c.in, "en")
		if !ok {
			t.Fatalf("%q: not read", c.in)
		}
		if got := l.format(shiftDate(tm, c.days, false)); got != c.want {
			t.Errorf("%q %+d: %q, want %q", c.in, c.days, got, c.want)
		}
	}
}
