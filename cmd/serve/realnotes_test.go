package main

import (
	"strings"
	"testing"
	"time"
)

// TestDeidentificationFindsWhatPeopleWrite: the issue 53 reproductions, on the shipped models
// through the real server. A lower-case surname after the first name the model found and a
// name in parentheses after a relation are masked; replace gives dates that keep their order,
// intervals and layout, an age over 89 as 90+, and the context word outside the account
// number; the privacy gateway forwards none of them.
func TestDeidentificationFindsWhatPeopleWrite(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none")
	status, out := srv.post(t, "/pii/deidentify", map[string]any{"method": "mask",
		"text": "pt jane doe, 45 y/o, presents with cough. Daughter (Linda) cell 937.555.0177"})
	text, _ := out["deidentified_text"].(string)
	for _, leak := range []string{"jane", "doe", "Linda", "0177"} {
		if status != 200 || strings.Contains(text, leak) {
			t.Errorf("mask: %q left in %q (%d)", leak, text, status)
		}
	}
	note := "Mr. Alan Brooks, DOB 03/14/1962, 62 y/o. Visit 7/8/22. Next visit 10/8/22. Admitted 12/18/2023, discharged 12/22/2023. acct #884-223-019. Age 92."
	status, out = srv.post(t, "/pii/deidentify", map[string]any{"method": "replace", "text": note})
	text, _ = out["deidentified_text"].(string)
	if status != 200 || !strings.Contains(text, "acct #") || !strings.Contains(text, "Age 90+") || strings.Contains(text, "Brooks") {
		t.Fatalf("replace: %d %q", status, text)
	}
	// Every date moves by the same number of days, so order and intervals stay.
	var shift time.Duration
	n := 0
	for _, e := range out["pii_entities"].([]any) {
		m := e.(map[string]any)
		if m["label"] != "date" && m["label"] != "date_of_birth" {
			continue
		}
		was, err1 := parseNoteDate(m["text"].(string))
		now, err2 := parseNoteDate(m["redacted_text"].(string))
		if err1 != nil || err2 != nil {
			t.Fatalf("replace: date %q became %q, not in its layout", m["text"], m["redacted_text"])
		}
		if n++; n == 1 {
			shift = now.Sub(was)
		} else if now.Sub(was) != shift {
			t.Errorf("replace: %q became %q, moved otherwise than the first date (%v): %q", m["text"], m["redacted_text"], shift, text)
		}
	}
	if n != 5 || shift == 0 {
		t.Errorf("replace: %d dates, moved by %v: %q", n, shift, text)
	}
}

// parseNoteDate reads the two layouts of the note's dates.
func parseNoteDate(s string) (time.Time, error) {
	if d, err := time.Parse("01/02/2006", s); err == nil {
		return d, nil
	}
	return time.Parse("1/2/06", s)
}
