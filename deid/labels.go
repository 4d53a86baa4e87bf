package deid

import "strings"

// Category is how identifying a kind of span is, the axis policy profiles act on.
type Category uint8

const (
	// Direct identifiers name or reach a person on their own: names, contact details,
	// identity and account numbers, a date of birth.
	Direct Category = iota
	// Quasi identifiers narrow a person down in combination: dates, ages, places,
	// organisations.
	Quasi
	// Sensitive attributes are special categories of data (ethnicity, ...).
	Sensitive
	// Clinical is clinical content a policy may keep. No label is clinical here: a label
	// Sluice does not know is treated as a direct identifier, so that a policy never keeps
	// what it cannot name.
	Clinical
)

// kind is a label's canonical name (OpenMed's taxonomy) and category.
type kind struct {
	canonical string
	category  Category
}

// kinds maps the labels Sluice's PII model and its patterns give (lower case, OpenMed's
// spelling) and the common alternatives to their canonical kind.
var kinds = map[string]kind{
	"first_name": {"FIRST_NAME", Direct}, "given_name": {"FIRST_NAME", Direct},
	"middle_name": {"MIDDLE_NAME", Direct},
	"last_name":   {"LAST_NAME", Direct}, "surname": {"LAST_NAME", Direct},
	"name": {"PERSON", Direct}, "person": {"PERSON", Direct}, "patient_name": {"PERSON", Direct},
	"email": {"EMAIL", Direct}, "phone_number": {"PHONE", Direct}, "phone": {"PHONE", Direct},
	"fax_number": {"PHONE", Direct}, "street_address": {"STREET_ADDRESS", Direct},
	"ssn": {"SSN", Direct}, "medical_record_number": {"ID_NUM", Direct}, "mrn": {"ID_NUM", Direct},
	"npi": {"ID_NUM", Direct}, "id_num": {"ID_NUM", Direct}, "account_number": {"ACCOUNT_NUMBER", Direct},
	"credit_debit_card": {"CREDIT_CARD", Direct}, "credit_card": {"CREDIT_CARD", Direct}, "national_id": {"ID_NUM", Direct},
	"iban": {"IBAN", Direct}, "bic": {"BIC", Direct}, "url": {"URL", Direct},
	"ipv4": {"IP_ADDRESS", Direct}, "ipv6": {"IP_ADDRESS", Direct}, "ip_address": {"IP_ADDRESS", Direct},
	"mac_address": {"MAC_ADDRESS", Direct}, "username": {"USERNAME", Direct},
	"date_of_birth": {"DATE_OF_BIRTH", Direct}, "dob": {"DATE_OF_BIRTH", Direct},
	"date": {"DATE", Quasi}, "time": {"TIME", Quasi}, "age": {"AGE", Quasi},
	"city": {"LOCATION", Quasi}, "state": {"LOCATION", Quasi}, "country": {"LOCATION", Quasi},
	"location": {"LOCATION", Quasi}, "postcode": {"ZIPCODE", Quasi}, "zipcode": {"ZIPCODE", Quasi},
	"company_name": {"ORGANIZATION", Quasi}, "organization": {"ORGANIZATION", Quasi},
	"occupation": {"OCCUPATION", Quasi}, "gender": {"GENDER", Quasi},
	"ethnicity": {"ETHNICITY", Sensitive},
	// A request's deny list (entities.DenyLabel): what the caller says identifies someone.
	"deny_list": {"DENY_LIST", Direct},
}

// Kinds lists every canonical kind Canonical can return, OTHER included.
func Kinds() []string {
	seen := map[string]bool{"OTHER": true}
	out := []string{"OTHER"}
	for _, k := range kinds {
		if !seen[k.canonical] {
			seen[k.canonical] = true
			out = append(out, k.canonical)
		}
	}
	return out
}

// Known says whether name is a label or a canonical kind Sluice knows, in any case
// ("first_name", "FIRST_NAME"; "other" too), as against a word a client made up.
func Known(name string) bool {
	l := strings.ToLower(strings.TrimSpace(name))
	if _, ok := kinds[l]; ok || l == "other" {
		return true
	}
	for _, k := range kinds {
		if strings.EqualFold(k.canonical, l) {
			return true
		}
	}
	return false
}

// Canonical is a label's canonical kind ("first_name" -> "FIRST_NAME"); OTHER, a direct
// identifier, when unknown.
// Case and a B-/I- prefix do not matter.
func Canonical(label string) string { return kindOf(label).canonical }

func kindOf(label string) kind {
	l := strings.ToLower(strings.TrimSpace(label))
	if len(l) > 2 && (l[:2] == "b-" || l[:2] == "i-") {
		l = l[2:]
	}
	if k, ok := kinds[l]; ok {
		return k
	}
	return kind{"OTHER", Direct}
}

func isDate(k kind) bool { return k.canonical == "DATE" || k.canonical == "DATE_OF_BIRTH" }
