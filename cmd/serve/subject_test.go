package main

import (
	"strings"
	"testing"
	"time"
)

// subjectRequest is /pii/deidentify's request with Sluice's fields beside OpenMed's.
type subjectRequest struct {
	omDeidentifyRequest
	SubjectID string   `json:"subject_id,omitempty"`
	AllowList []string `json:"allow_list,omitempty"`
	DenyList  []string `json:"deny_list,omitempty"`
}

// TestTwoNotesOfOneSubjectOnTwoReplicas: two notes of one patient, the second with other
// names before the shared one, sent to two replicas that share SLUICE_DEID_HASH_KEY, get the
// same stand-ins for the names the model finds in both and move every date by one shift;
// without subject_id they do not. The shipped PII model finds the identifiers.
func TestTwoNotesOfOneSubjectOnTwoReplicas(t *testing.T) {
	t.Parallel()
	key := "SLUICE_DEID_HASH_KEY=a key of sixteen bytes"
	a, b := startServer(t, "SLUICE_GENERATE_MODEL=none", key), startServer(t, "SLUICE_GENERATE_MODEL=none", key)
	one := "Patient Alan Brooks was seen on 03/14/2021. Follow-up with Dr. Smith on 04/02/2021."
	two := "Maria Lopez called about Alan Brooks on 05/20/2021; his wife drove him."
	type standIns struct {
		byOriginal map[string]string // label|original -> replacement
		shift      int               // the days every date moved
	}
	send := func(url, note, subject string) standIns {
		t.Helper()
		var res omDeidentifyResponse
		req := subjectRequest{omDeidentifyRequest: omDeidentifyRequest{Text: note, Method: "replace"}, SubjectID: subject}
		if apiErr := omDo(t, url, "/pii/deidentify", req, &res); apiErr != nil {
			t.Fatalf("%+v", apiErr)
		}
		out := standIns{byOriginal: map[string]string{}}
		for _, e := range res.PIIEntities {
			out.byOriginal[e.Label+"|"+e.Text] = *e.RedactedText
			if e.Label == "date" {
				from, err1 := time.Parse("01/02/2006", e.Text)
				to, err2 := time.Parse("01/02/2006", *e.RedactedText)
				if err1 != nil || err2 != nil {
					t.Fatalf("date %q became %q", e.Text, *e.RedactedText)
				}
				days := int(to.Sub(from).Hours() / 24)
				if out.shift != 0 && days != out.shift || days == 0 {
					t.Fatalf("the dates of one note moved %d and %d days", out.shift, days)
				}
				out.shift = days
			}
		}
		if subject != "" && res.Metadata["subject_scope"] != "hash_key" {
			t.Fatalf("metadata %v", res.Metadata)
		}
		return out
	}
	x, y := send(a.url, one, "mrn-0042"), send(b.url, two, "mrn-0042")
	shared := 0
	for k, v := range x.byOriginal {
		if w, ok := y.byOriginal[k]; ok && !strings.HasPrefix(k, "date|") {
			shared++
			if v != w {
				t.Errorf("%s: %q on one replica, %q on the other", k, v, w)
			}
		}
	}
	if shared < 2 || x.shift == 0 || x.shift != y.shift {
		t.Fatalf("the model found %d names in both notes; the dates moved %d and %d days", shared, x.shift, y.shift)
	}
	if p, q := send(a.url, one, ""), send(b.url, two, ""); p.byOriginal["first_name|Alan"] == q.byOriginal["first_name|Alan"] && p.shift == q.shift {
		t.Fatalf("without a subject the notes agree: %v %v", p, q)
	}
}
