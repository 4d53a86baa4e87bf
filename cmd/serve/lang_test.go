package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestRebuiltOpenMedGoClientDeidentifiesInTheRequestsLanguage: OpenMed's Go client sends lang;
// a French note is served by the models directory's pii-fr, its French identifiers (a
// phone number, a NIR, a day-first date) are masked and its dates read day first, the answer
// says French; German, with no pii-de there, is served by the default model; a language
// nothing serves is OpenMed's 422 on body.lang.
func TestRebuiltOpenMedGoClientDeidentifiesInTheRequestsLanguage(t *testing.T) {
	t.Parallel()
	// pii-fr loads on the first French request, which waits for it: however long the load takes
	// beside the other tests (a 503 with a Retry-After otherwise, as TestAModelStillLoadingIsA503
	// shows).
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "SLUICE_MODELS_DIR="+modelsDir(t, "pii-fr"), "SLUICE_MODEL_LOAD_WAIT_MS=120000")
	note := "Patiente Claire Dubois, admise le 03/04/2024. Tél. 06 12 34 56 78. NIR 1 84 12 76 451 089 46."
	res, apiErr := omDeidentify(t, srv.url, omDeidentifyRequest{Text: note, Method: "mask", Lang: "fr"})
	if apiErr != nil {
		t.Fatalf("fr: %+v", apiErr)
	}
	checkEntities(t, res)
	for _, id := range []string{"03/04/2024", "06 12 34 56 78", "1 84 12 76 451 089 46"} {
		if strings.Contains(res.DeidentifiedText, id) {
			t.Errorf("fr: %q left in %q", id, res.DeidentifiedText)
		}
	}
	if res.Metadata["model_name"] != "pii-fr" {
		t.Errorf("fr: model_name %v", res.Metadata["model_name"])
	}
	for _, e := range res.PIIEntities {
		if e.Evidence["language"] != "fr" {
			t.Errorf("fr: evidence %v", e.Evidence)
		}
	}
	days := 1
	res, apiErr = omDeidentify(t, srv.url, omDeidentifyRequest{Text: note, Method: "shift_dates", DateShiftDays: &days, Lang: "fr"})
	if apiErr != nil || !strings.Contains(res.DeidentifiedText, "admise le 04/04/2024.") {
		t.Errorf("fr shift_dates: %+v %q", apiErr, res.DeidentifiedText)
	}

	res, apiErr = omDeidentify(t, srv.url, omDeidentifyRequest{Text: "Patient Hans Müller, Tel. 030 1234567.", Method: "mask", Lang: "de"})
	if apiErr != nil || res.Metadata["model_name"] != "pii" || strings.Contains(res.DeidentifiedText, "030 1234567") {
		t.Errorf("de: %+v %v %q", apiErr, res.Metadata["model_name"], res.DeidentifiedText)
	}

	_, apiErr = omDeidentify(t, srv.url, omDeidentifyRequest{Text: note, Lang: "xx"})
	if apiErr == nil || apiErr.StatusCode != 422 || !strings.Contains(fmt.Sprint(apiErr.Error.Details), "field:body.lang ") {
		t.Errorf("xx: %+v", apiErr)
	}
}
