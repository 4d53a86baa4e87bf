package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/entities"
)

// The fields Sluice adds to the PII routes (and a job's documents): a subject whose notes
// share their pseudonyms, and the allow and deny lists. Their readers are here, once, for
// every route that takes them; none quotes a value in an error.

// parseSubject reads subject_id, at field: absent or null is none; otherwise deid.CheckSubject's rules.
func parseSubject(id *string, field string, errs *fieldErrors) string {
	if id == nil {
		return ""
	}
	if err := deid.CheckSubject(*id); err != nil {
		errs.add(&FieldError{Field: field, Type: "value_error", Message: "Value error, subject_id " + err.Error()})
		return ""
	}
	return *id
}

// parseLists reads allow_list and deny_list: each absent, null or a list of strings within
// entities' bounds. Both empty is nil.
func parseLists(allow, deny json.RawMessage, errs *fieldErrors) *entities.Lists {
	a, okA := stringList(allow, "allow_list", errs)
	d, okD := stringList(deny, "deny_list", errs)
	if !okA || !okD {
		return nil
	}
	lists, terms := entities.NewLists(a, d)
	for _, e := range terms {
		field := "body.allow_list"
		if e.Deny {
			field = "body.deny_list"
		}
		if e.Index >= 0 {
			field += "." + strconv.Itoa(e.Index)
		}
		errs.add(&FieldError{Field: field, Type: "value_error", Message: "Value error, " + e.Error()})
	}
	return lists
}

// stringList reads a list of strings; ok is false (and the problem added to errs) when raw is
// not one.
func stringList(raw json.RawMessage, name string, errs *fieldErrors) (list []string, ok bool) {
	v := bytes.TrimSpace(raw)
	if len(v) == 0 || string(v) == "null" {
		return nil, true
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		errs.add(&FieldError{Field: "body." + name, Type: "list_type", Message: "Input should be a valid list"})
		return nil, false
	}
	if len(items) > entities.MaxListTerms { // said once, before any item is read
		errs.add(&FieldError{Field: "body." + name, Type: "too_long", Message: fmt.Sprintf(
			"List should have at most %d items after validation, not %d", entities.MaxListTerms, len(items))})
		return nil, false
	}
	list = make([]string, len(items))
	ok = true
	for i, it := range items {
		if json.Unmarshal(it, &list[i]) != nil || bytes.HasPrefix(bytes.TrimSpace(it), []byte("null")) {
			errs.add(&FieldError{Field: "body." + name + "." + strconv.Itoa(i), Type: "string_type", Message: "Input should be a valid string"})
			ok = false
		}
	}
	return list, ok
}

// subjectScope is how far a subject's pseudonyms hold, for the response to say: "hash_key"
// on every process that shares SLUICE_DEID_HASH_KEY, "process" in this process only, until
// it restarts (no key is configured: each process draws its own).
func subjectScope(r *deid.Redactor) string {
	if r.Keyed() {
		return "hash_key"
	}
	return "process"
}
