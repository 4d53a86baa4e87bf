package entities

import (
	"regexp"
	"slices"
	"strings"
)

// Context words shared by several patterns.
var (
	dateContext  = []string{"dob", "birth", "born", "date of birth", "birthdate", "deceased", "died", "admitted", "discharged"}
	ssnContext   = []string{"ssn", "social security", "social security number", "ss#", "ss number"}
	phoneContext = []string{"phone", "tel", "telephone", "cell", "mobile", "fax", "call", "contact"}
)

// defaultPIIPatterns is OpenMed's English PII pattern set (pii_entity_merger.PII_PATTERNS),
// in its order. It is never modified; DefaultPIIPatterns hands out copies. Python's
// patterns match case-insensitively unless noted, hence the (?i) prefixes.
var defaultPIIPatterns = mustPatterns([]patternSpec{
	{expr: `(?i)\b\d{4}-\d{2}-\d{2}\b`, PIIPattern: PIIPattern{Label: "date", Priority: 10, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: dateContext}},
	{expr: `(?i)\b\d{1,2}/\d{1,2}/\d{2,4}\b`, PIIPattern: PIIPattern{Label: "date", Priority: 9, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: dateContext}},
	{expr: `(?i)\b\d{1,2}-\d{1,2}-\d{2,4}\b`, PIIPattern: PIIPattern{Label: "date", Priority: 9, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: dateContext}},
	// Not OpenMed's: month/day and month/two-digit-year, as clinical notes write them (9/28,
	// 3/80), told from fractions, strengths and scales (1/2, 5/5, 7/10) by ValidShortDate.
	{expr: `\b\d{1,2}/\d{2}\b`, PIIPattern: PIIPattern{Label: "date", Priority: 7, BaseScore: 0.55, ContextBoost: 0.3, ContextWords: dateContext, Validate: ValidShortDate}},
	{expr: `(?i)\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{1,2},? \d{4}\b`, PIIPattern: PIIPattern{Label: "date", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: dateContext}},
	{expr: `(?i)\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b`, PIIPattern: PIIPattern{Label: "date", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: dateContext}},
	{expr: `(?i)\b\d{3}-\d{2}-\d{4}\b`, PIIPattern: PIIPattern{Label: "ssn", Priority: 10, BaseScore: 0.3, ContextBoost: 0.55, ContextWords: ssnContext, Validate: ValidSSN}},
	{expr: `(?i)\b\d{3}\s\d{2}\s\d{4}\b`, PIIPattern: PIIPattern{Label: "ssn", Priority: 9, BaseScore: 0.3, ContextBoost: 0.55, ContextWords: ssnContext, Validate: ValidSSN}},
	{expr: `(?i)\b\(\d{3}\)\s*\d{3}[-.\s]?\d{4}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 9, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: phoneContext, Validate: ValidUSPhone}},
	{expr: `(?i)\b\d{3}[-.\s]\d{3}[-.\s]\d{4}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.5, ContextBoost: 0.35, ContextWords: phoneContext, Validate: ValidUSPhone}},
	{expr: `(?i)\b\d{10}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 5, BaseScore: 0.2, ContextBoost: 0.5, ContextWords: phoneContext, Validate: ValidUSPhone}},
	{expr: `(?i)\b\d{10}\b`, PIIPattern: PIIPattern{Label: "npi", Priority: 6, BaseScore: 0.15, ContextBoost: 0.65,
		ContextWords: []string{"npi", "national provider", "provider number", "provider id", "provider identifier"}, Validate: ValidNPI}},
	{expr: `(?i)\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Z|a-z]{2,}\b`, PIIPattern: PIIPattern{Label: "email", Priority: 10, BaseScore: 0.9, ContextBoost: 0.1,
		ContextWords: []string{"email", "e-mail", "contact", "mail"}}},
	{expr: `(?i)\b\d{5}(?:-\d{4})?\b`, PIIPattern: PIIPattern{Label: "postcode", Priority: 7, BaseScore: 0.4, ContextBoost: 0.45,
		ContextWords: []string{"zip", "zipcode", "zip code", "postal", "postal code"}}},
	{expr: `(?i)\b\d{4}[-\s]?\d{4}[-\s]?\d{4}[-\s]?\d{4}\b`, PIIPattern: PIIPattern{Label: "credit_debit_card", Priority: 8, BaseScore: 0.4, ContextBoost: 0.4,
		ContextWords: []string{"card", "credit", "debit", "visa", "mastercard", "amex", "discover", "payment"}, Validate: ValidLuhn}},
	{expr: `\b[A-Z]{2}\d{2}(?:[\s-]?[A-Z0-9]){11,30}\b`, PIIPattern: PIIPattern{Label: "iban", Priority: 9, BaseScore: 0.85, ContextBoost: 0.1,
		ContextWords: []string{"iban", "bank account", "account", "routing", "wire"}, Validate: ValidIBAN}},
	{expr: `\b[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?\b`, PIIPattern: PIIPattern{Label: "bic", Priority: 8, BaseScore: 0.25, ContextBoost: 0.65,
		ContextWords: []string{"bic", "swift", "swift/bic", "swift code", "bank identifier", "wire", "wire transfer"}, Validate: ValidBIC}},
	{expr: `(?i)\b(?:account number|account #|acct\.|acct|account)[:\s#-]*[A-Z0-9][A-Z0-9-]{5,23}\b`, PIIPattern: PIIPattern{Label: "account_number", Priority: 8, BaseScore: 0.75, ContextBoost: 0.15,
		ContextWords: []string{"account", "acct", "account number", "bank", "billing"}}},
	{expr: `(?i)\bMRN[:\s#]*(\d{6,10})\b`, PIIPattern: PIIPattern{Label: "medical_record_number", Priority: 9, BaseScore: 0.8, ContextBoost: 0.15,
		ContextWords: []string{"medical record", "patient id", "patient number", "record number"}, Group: 1}},
	{expr: `(?i)\b[A-Z]{2,3}\d{6,9}\b`, PIIPattern: PIIPattern{Label: "medical_record_number", Priority: 5, BaseScore: 0.3, ContextBoost: 0.5,
		ContextWords: []string{"mrn", "medical record", "patient id", "patient number", "record number"}}},
	// Capitalised street names, as OpenMed means; its pattern's (?i) made any words match
	// ("2000 and her cardiologist is Dr"), so only the street type is case-blind here. Its
	// words are apart by spaces and tabs, not \s: across a line break a pulse and the next
	// line's "Seen By Dr" were an address. Every language's street pattern does the same.
	{expr: `\b\d{1,5}[ \t]+[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)*[ \t]+(?i:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way)\b`, PIIPattern: PIIPattern{Label: "street_address", Priority: 7, BaseScore: 0.7, ContextBoost: 0.2,
		ContextWords: []string{"address", "street", "resides", "residence", "lives at", "located at"}}},
	// Unlike OpenMed's: hosts of several labels (a.b.example.org), a port, and a path that
	// stops at brackets and quotes (a Markdown link) and does not end on punctuation.
	{expr: `(?i)\b(?:https?://)?(?:www\.)?(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d{2,5})?(?:/(?:[^\s()\[\]<>"']*[^\s()\[\]<>"'.,;:!?])?)?`, PIIPattern: PIIPattern{Label: "url", Priority: 8, BaseScore: 0.8, ContextBoost: 0.15,
		ContextWords: []string{"url", "website", "link", "webpage"}, Validate: ValidURL}},
	{expr: `(?i)\b(?:\d{1,3}\.){3}\d{1,3}\b`, PIIPattern: PIIPattern{Label: "ipv4", Priority: 7, BaseScore: 0.6, ContextBoost: 0.3,
		ContextWords: []string{"ip", "ip address", "address", "server", "host"}}},
	{expr: `(?i)\b(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}\b`, PIIPattern: PIIPattern{Label: "ipv6", Priority: 8, BaseScore: 0.85, ContextBoost: 0.15,
		ContextWords: []string{"ip", "ipv6", "ip address", "address", "server", "host"}}},
	{expr: `(?i)\b(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}\b`, PIIPattern: PIIPattern{Label: "mac_address", Priority: 8, BaseScore: 0.75, ContextBoost: 0.2,
		ContextWords: []string{"mac", "mac address", "hardware address"}}},
})

type patternSpec struct {
	PIIPattern
	expr string
}

func mustPatterns(specs []patternSpec) []PIIPattern {
	out := make([]PIIPattern, len(specs))
	for i, s := range specs {
		p, err := NewPIIPattern(s.PIIPattern, s.expr)
		if err != nil {
			panic("entities: built-in PII pattern does not compile: " + err.Error())
		}
		out[i] = p
	}
	return out
}

// DefaultPIIPatterns returns a copy of OpenMed's English PII patterns. Compiled regexps
// are shared (they are safe for concurrent use); everything else is copied, so callers may
// edit the result.
func DefaultPIIPatterns() []PIIPattern {
	out := slices.Clone(defaultPIIPatterns)
	for i := range out {
		out[i].ContextWords = slices.Clone(out[i].ContextWords)
	}
	return out
}

// asciiDigits keeps the ASCII digits of s, as OpenMed's validators do.
func asciiDigits(s string) []byte {
	d := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			d = append(d, s[i]-'0')
		}
	}
	return d
}

// ValidSSN applies the SSA rules OpenMed checks: nine digits, area not 000, 666 or 9xx,
// group not 00, serial not 0000.
func ValidSSN(s string) bool {
	d := asciiDigits(s)
	if len(d) != 9 {
		return false
	}
	switch {
	case d[0] == 0 && d[1] == 0 && d[2] == 0, d[0] == 6 && d[1] == 6 && d[2] == 6, d[0] == 9:
		return false
	case d[3] == 0 && d[4] == 0:
		return false
	case d[5] == 0 && d[6] == 0 && d[7] == 0 && d[8] == 0:
		return false
	}
	return true
}

// ValidUSPhone accepts ten digits (after dropping a leading country code 1) whose area
// code does not start with 0 or 1 and whose exchange does not start with 0.
func ValidUSPhone(s string) bool {
	d := asciiDigits(s)
	if len(d) == 11 && d[0] == 1 {
		d = d[1:]
	}
	return len(d) == 10 && d[0] > 1 && d[3] != 0
}

// luhnCheckDigit is the Luhn check digit for body (without the check digit).
func luhnCheckDigit(body []byte) byte {
	total := 0
	for i := range body {
		d := int(body[len(body)-1-i])
		if i%2 == 0 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		total += d
	}
	return byte((10 - total%10) % 10)
}

// ValidLuhn accepts 13 or more digits whose last is their Luhn check digit.
func ValidLuhn(s string) bool {
	d := asciiDigits(s)
	return len(d) >= 13 && luhnCheckDigit(d[:len(d)-1]) == d[len(d)-1]
}

// ValidNPI accepts a US National Provider Identifier: ten digits, Luhn over the first
// nine prefixed with 80840.
func ValidNPI(s string) bool {
	d := asciiDigits(s)
	if len(d) != 10 {
		return false
	}
	body := append([]byte{8, 0, 8, 4, 0}, d[:9]...)
	return luhnCheckDigit(body) == d[9]
}

var ibanShape = regexp.MustCompile(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$`)

// ibanLengths is the IBAN length per country that OpenMed checks.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29,
	"BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29,
	"ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28,
	"HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
	"LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27,
	"MT": 31, "MU": 30, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24,
	"RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TN": 24, "TR": 26, "UA": 29,
	"VA": 22, "VG": 24, "XK": 20,
}

// ValidIBAN checks an IBAN's shape, its country's length and the ISO 13616 mod-97 sum.
// Spaces and hyphens are ignored.
func ValidIBAN(s string) bool {
	s = strings.ToUpper(stripChars(s, " \t\n\r\f\v-"))
	if !ibanShape.MatchString(s) {
		return false
	}
	if want, ok := ibanLengths[s[:2]]; ok {
		if len(s) != want {
			return false
		}
	} else if len(s) < 15 || len(s) > 34 {
		return false
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		if c >= '0' && c <= '9' {
			rem = (rem*10 + int(c-'0')) % 97
			continue
		}
		v := int(c - 'A' + 10) // two digits, 10..35
		rem = (rem*100 + v) % 97
	}
	return rem == 1
}

var bicShape = regexp.MustCompile(`^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}(?:[A-Z0-9]{3})?$`)

// bicCountries holds ISO 3166-1 alpha-2 codes plus XK, the country part of a BIC.
var bicCountries = func() map[string]bool {
	const codes = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
		"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
		"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
		"KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT " +
		"MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
		"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG " +
		"UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW XK"
	m := make(map[string]bool)
	for _, c := range strings.Fields(codes) {
		m[c] = true
	}
	return m
}()

// ValidBIC checks a SWIFT/BIC code: 8 or 11 characters of the right classes and a known
// country code. Whitespace is ignored.
func ValidBIC(s string) bool {
	s = strings.ToUpper(stripChars(s, " \t\n\r\f\v"))
	return bicShape.MatchString(s) && bicCountries[s[4:6]]
}

// ValidShortDate accepts m/dd and m/yy (as matched by the short date pattern): a month of 1
// to 12, then a zero-padded day (09/05), a day of 11 to 31, or a two-digit year of 32 or
// more (3/80). A second part of 10 is taken for a score out of ten (pain 7/10), and a single
// digit for a fraction or a grade (1/2, strength 5/5, murmur 2/6): the pattern does not
// match those at all.
func ValidShortDate(s string) bool {
	m, d, ok := strings.Cut(s, "/")
	if !ok || len(m) < 1 || len(m) > 2 || len(d) != 2 {
		return false
	}
	month := 0
	for i := 0; i < len(m); i++ {
		month = month*10 + int(m[i]-'0')
	}
	if month < 1 || month > 12 {
		return false
	}
	second := int(d[0]-'0')*10 + int(d[1]-'0')
	switch {
	case d[0] == '0':
		return second >= 1
	case second == 10:
		return false
	default:
		return second >= 11
	}
}

// urlTLDs are the top-level domains ValidURL accepts without a scheme or "www.": the generic
// ones and the country codes most seen in English-language clinical writing. A bare
// "word.xx" is otherwise far more often a missing space after a full stop (pt.he,
// ectopy.bp) than an address.
var urlTLDs = map[string]bool{
	"com": true, "org": true, "net": true, "edu": true, "gov": true, "mil": true, "int": true, "info": true,
	"io": true, "biz": true, "health": true, "us": true, "uk": true, "ca": true, "au": true, "nz": true,
	"ie": true, "de": true, "fr": true, "nl": true, "eu": true, "in": true,
}

// ValidURL accepts a match that has a scheme (http://, https://), starts with "www.", or
// ends its host in one of urlTLDs.
func ValidURL(s string) bool {
	l := strings.ToLower(s)
	if strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "www.") {
		return true
	}
	host, _, _ := strings.Cut(l, "/")
	host, _, _ = strings.Cut(host, ":")
	i := strings.LastIndexByte(host, '.')
	return i > 0 && urlTLDs[host[i+1:]]
}

func stripChars(s, cut string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(cut, r) {
			return -1
		}
		return r
	}, s)
}
