package entities

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// patternOnly is what a language's patterns report alone (no model entity): label=text, in
// text order, as PIIOptionsFor configures them.
func patternOnly(t *testing.T, lang, text string) []string {
	t.Helper()
	opts, ok := PIIOptionsFor(lang)
	if !ok {
		t.Fatalf("%s: no patterns", lang)
	}
	var got []string
	for _, e := range SmartMerge(text, nil, *opts.SmartMerge) {
		got = append(got, e.Label+"="+text[e.Start:e.End])
	}
	return got
}

func TestPIILanguages(t *testing.T) {
	if got := PIILanguages(); !slices.Equal(got, []string{"de", "en", "es", "fr", "it", "nl", "pt"}) {
		t.Fatalf("PIILanguages() = %v", got)
	}
	for _, lang := range PIILanguages() {
		if _, ok := LanguagePIIPatterns(lang); !ok {
			t.Errorf("%s is listed but has no patterns", lang)
		}
	}
}

// TestEnglishPatternsAreTheDefaults: lang "en" changes nothing: the same patterns, in the
// same order, with the same regexps, scores and words, and the same version.
func TestEnglishPatternsAreTheDefaults(t *testing.T) {
	got, ok := LanguagePIIPatterns("en")
	opts, optsOK := PIIOptionsFor("en")
	want := DefaultPIIPatterns()
	if !ok || !optsOK || len(got) != len(want) || len(opts.SmartMerge.Patterns) != len(want) {
		t.Fatalf("en: %d patterns (%v), options %d, want %d", len(got), ok, len(opts.SmartMerge.Patterns), len(want))
	}
	for i := range want {
		for _, p := range []PIIPattern{got[i], opts.SmartMerge.Patterns[i]} {
			if p.Regexp != want[i].Regexp || p.Label != want[i].Label || p.Priority != want[i].Priority ||
				p.BaseScore != want[i].BaseScore || p.ContextBoost != want[i].ContextBoost || p.Group != want[i].Group ||
				!slices.Equal(p.ContextWords, want[i].ContextWords) || (p.Validate == nil) != (want[i].Validate == nil) {
				t.Errorf("pattern %d (%s) differs from the default", i, want[i].Label)
			}
		}
	}
	def := PIIOptions()
	opts.SmartMerge, def.SmartMerge = nil, nil
	if opts != def {
		t.Errorf("PIIOptionsFor(en) = %+v, want %+v", opts, def)
	}
	if LanguagePatternsVersion("en") != PatternsVersion || LanguagePatternsVersion("fr") == PatternsVersion {
		t.Errorf("versions: en %q, fr %q", LanguagePatternsVersion("en"), LanguagePatternsVersion("fr"))
	}
	// English text keeps its answers (TestPatternsOnClinicalWriting has more); a German date
	// is not English's to find.
	if got := patternOnly(t, "en", "DOB 01/15/1970, geboren am 3. März 1961"); !slices.Equal(got, []string{"date=01/15/1970"}) {
		t.Errorf("en: %q", got)
	}
}

// TestLanguageNotes: a short note in each language; its patterns find its dates (month names
// and day-first numbers), phone numbers (national and international), national identifier,
// street and postcode, and the shared shapes (ISO date, e-mail).
func TestLanguageNotes(t *testing.T) {
	for _, tc := range []struct {
		lang, text string
		want       []string
	}{
		{"de", "Patient Hans Müller, geboren am 3. März 1961, aufgenommen am 12.04.2024. Tel. 030 1234567, " +
			"mobil +49 171 2345678. Steuer-ID 86 095 742 719. Anschrift: Lindenstraße 12a, PLZ 10115 Berlin. " +
			"Kontrolle am 2024-05-02, Rückfragen an h.mueller@example.de.",
			[]string{"date=3. März 1961", "date=12.04.2024", "phone_number=030 1234567", "phone_number=+49 171 2345678",
				"national_id=86 095 742 719", "street_address=Lindenstraße 12a", "postcode=10115", "date=2024-05-02",
				"email=h.mueller@example.de"}},
		{"fr", "Mme Claire Dubois, née le 12 janvier 1958, admise le 03/04/2024. Tél. 06 12 34 56 78 ou " +
			"+33 1 42 68 53 00. NIR 1 84 12 76 451 089 46. Domicile : 12 rue de la Paix, code postal 75002 Paris.",
			[]string{"date=12 janvier 1958", "date=03/04/2024", "phone_number=06 12 34 56 78", "phone_number=+33 1 42 68 53 00",
				"national_id=1 84 12 76 451 089 46", "street_address=12 rue de la Paix", "postcode=75002"}},
		{"es", "Paciente Lucía Fernández, nacida el 5 de mayo de 1970, ingreso el 14-02-2024. Teléfono 612 345 678 " +
			"o +34 912 345 678. DNI 12345678Z. Domicilio: Calle Mayor 5, código postal 28013 Madrid.",
			[]string{"date=5 de mayo de 1970", "date=14-02-2024", "phone_number=612 345 678", "phone_number=+34 912 345 678",
				"national_id=12345678Z", "street_address=Calle Mayor 5", "postcode=28013"}},
		{"es", "Paciente extranjero con NIE X1234567L.", []string{"national_id=X1234567L"}},
		{"it", "Paziente Marco Rossi, nato il 14 aprile 1975, ricoverato il 02/03/2024. Cellulare 333 1234567, " +
			"tel. 06 1234567 o +39 02 12345678. Codice fiscale RSSMRA85T10A562S. Residente in Via Roma 10, CAP 00185 Roma.",
			[]string{"date=14 aprile 1975", "date=02/03/2024", "phone_number=333 1234567", "phone_number=06 1234567",
				"phone_number=+39 02 12345678", "national_id=RSSMRA85T10A562S", "street_address=Via Roma 10", "postcode=00185"}},
		{"pt", "Doente Ana Sousa, nascida a 7 de março de 1980, internada em 01-02-2024. Telemóvel 912 345 678, " +
			"fixo +351 21 123 4567. NIF 123 456 789. Morada: Rua Augusta, 120, 1100-048 Lisboa.",
			[]string{"date=7 de março de 1980", "date=01-02-2024", "phone_number=912 345 678", "phone_number=+351 21 123 4567",
				"national_id=123 456 789", "street_address=Rua Augusta, 120", "postcode=1100-048"}},
		{"nl", "Patiënt Jan de Vries, geboren op 2 februari 1964, opgenomen 15-03-2024. Telefoon 06-12345678, " +
			"+31 20 123 4567. BSN 111222333. Adres: Kerkstraat 12, 1017 GC Amsterdam.",
			[]string{"date=2 februari 1964", "date=15-03-2024", "phone_number=06-12345678", "phone_number=+31 20 123 4567",
				"national_id=111222333", "street_address=Kerkstraat 12", "postcode=1017 GC"}},
	} {
		if got := patternOnly(t, tc.lang, tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q\nwant %q", tc.lang, got, tc.want)
		}
	}
}

// TestMonthNamesFullAndAbbreviated: each language's dates with month names, as they are
// written there.
func TestMonthNamesFullAndAbbreviated(t *testing.T) {
	for lang, dates := range map[string][]string{
		"de": {"3. März 2024", "3 März 2024", "03. Mär. 2024", "1. Jan 2020", "15. Dezember 1999", "7. Okt. 2023", "2. MAI 2010"},
		"fr": {"12 janvier 2023", "1er mars 2020", "12 janv. 2023", "3 août 2021", "25 déc. 2019", "9 Février 1990"},
		"es": {"5 de mayo de 2021", "5 mayo 2021", "14 sept. 2020", "1 de enero del 2000", "30 de Diciembre de 1999"},
		"it": {"14 aprile 2022", "1° maggio 2020", "3 ott. 2019", "21 Gennaio 2001", "9 set 2018"},
		"pt": {"7 de março de 2020", "7 março 2020", "12 de dez. de 2019", "1º de janeiro de 2000", "30 de Outubro de 1985"},
		"nl": {"2 februari 2024", "2 feb. 2024", "14 mrt 2023", "30 mei 2020", "1 Oktober 1999"},
	} {
		for _, d := range dates {
			text := "Consult " + d + "."
			if got := patternOnly(t, lang, text); !slices.Equal(got, []string{"date=" + d}) {
				t.Errorf("%s %q: got %q", lang, d, got)
			}
		}
	}
}

// TestDayFirstDates: numeric dates are read day first, with one separator, and must exist.
func TestDayFirstDates(t *testing.T) {
	for in, want := range map[string]bool{
		"3.4.1961": true, "03/04/2024": true, "31-12-99": true, "29.02.2024": true, "29/02/00": true,
		"13/12/2024": true, "12/13/2024": false, "31.04.2024": false, "29.02.2023": false, "00/01/2024": false,
		"03/04-2024": false, "3.4/24": false,
	} {
		if got := validDayFirst(in); got != want {
			t.Errorf("validDayFirst(%q) = %v, want %v", in, got, want)
		}
	}
	// A US date is no date in French; nor is a version or an IP address taken for one.
	for _, text := range []string{"le 12/13/2024", "serveur 10.10.10.10", "tél. 06.12.34.56.78"} {
		got := patternOnly(t, "fr", text)
		if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "date=") }) {
			t.Errorf("fr %q: %q", text, got)
		}
	}
}

// TestCheckDigitsRejectNearMisses: each identifier's check passes the real one and fails it
// with one character changed; in a note, the near miss is not reported.
func TestCheckDigitsRejectNearMisses(t *testing.T) {
	for _, tc := range []struct {
		name        string
		valid       func(string) bool
		good, bad   []string
		lang, note  string // the note holds %s for the identifier
		label, want string
	}{
		{"Steuer-ID", ValidSteuerID, []string{"86095742719", "65929970489", "86 095 742 719"},
			[]string{"86095742718", "06095742719", "11111111111", "12345678901", "8609574271"},
			"de", "Steuer-ID %s.", "national_id", "86 095 742 719"},
		{"NIR", ValidNIR, []string{"184127645108946", "1 84 12 76 451 089 46", "2 69 05 2A 004 001 39"},
			[]string{"184127645108947", "184127645108846", "384127645108946", "1841276451089"},
			"fr", "NIR %s.", "national_id", "1 84 12 76 451 089 46"},
		{"DNI", ValidSpanishID, []string{"12345678Z", "12345678-z", "X1234567L", "Y1234567X"},
			[]string{"12345678A", "12345679Z", "X1234567A", "W1234567L"},
			"es", "DNI %s.", "national_id", "12345678Z"},
		{"codice fiscale", ValidCodiceFiscale, []string{"RSSMRA85T10A562S", "rssmra85t10a562s"},
			[]string{"RSSMRA85T10A562T", "RSSMRA85T10A563S", "RSSMRA85T10A56"},
			"it", "Codice fiscale %s.", "national_id", "RSSMRA85T10A562S"},
		{"NIF", ValidPortugueseNIF, []string{"123456789", "123 456 789", "501964843"},
			[]string{"123456780", "423456789", "123456798"},
			"pt", "Contribuinte NIF %s.", "national_id", "123 456 789"},
		{"BSN", ValidBSN, []string{"111222333", "123456782", "1234.56.782"},
			[]string{"111222334", "123456781", "000000000"},
			"nl", "BSN %s.", "national_id", "111222333"},
	} {
		for _, s := range tc.good {
			if !tc.valid(s) {
				t.Errorf("%s: %q refused", tc.name, s)
			}
		}
		for _, s := range tc.bad {
			if tc.valid(s) {
				t.Errorf("%s: %q accepted", tc.name, s)
			}
		}
		good := strings.Replace(tc.note, "%s", tc.want, 1)
		if got := patternOnly(t, tc.lang, good); !slices.Equal(got, []string{tc.label + "=" + tc.want}) {
			t.Errorf("%s: %q found %q", tc.name, good, got)
		}
		near := []byte(tc.want)
		last := len(near) - 1
		if near[last] >= '0' && near[last] <= '8' || near[last] >= 'A' && near[last] <= 'Y' {
			near[last]++
		} else {
			near[last]--
		}
		bad := strings.Replace(tc.note, "%s", string(near), 1)
		if got := patternOnly(t, tc.lang, bad); slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, tc.label) }) {
			t.Errorf("%s: near miss %q found %q", tc.name, bad, got)
		}
	}
}

// TestPhoneShapes: national and international numbers of each language, and what is not one.
func TestPhoneShapes(t *testing.T) {
	for _, tc := range []struct {
		lang   string
		phones []string
		not    []string
	}{
		{"de", []string{"030 1234567", "030/1234567", "0171-2345678", "089 12345678", "+49 30 1234567", "+49 (0)30 1234567", "+4917123456789"},
			[]string{"030 12", "+49 0"}},
		{"fr", []string{"06 12 34 56 78", "01.42.68.53.00", "06.12.34.56.78", "06-12-34-56-78", "0612345678", "+33 6 12 34 56 78", "+33 (0)1 42 68 53 00"},
			[]string{"06 12 34 56", "00 12 34 56 78", "01.02.2024 12", "06.12 34.56 78"}},
		{"es", []string{"612 345 678", "91 123 45 67", "+34 612 345 678", "+34612345678"},
			[]string{"512 345 678", "612 345 67"}},
		{"it", []string{"333 1234567", "06 1234567", "02 12345678", "+39 333 1234567", "+39 06 1234567"},
			[]string{"333 12", "+39 1234567"}},
		{"pt", []string{"912 345 678", "21 123 4567", "+351 912 345 678"},
			[]string{"941 234 567", "812 345 678"}},
		{"nl", []string{"06-12345678", "020 123 4567", "+31 6 12345678", "+31 (0)20 123 4567"},
			[]string{"06-1234567", "6-12345678"}},
	} {
		for _, p := range tc.phones {
			text := "tel: " + p + "."
			if got := patternOnly(t, tc.lang, text); !slices.Equal(got, []string{"phone_number=" + p}) {
				t.Errorf("%s %q: got %q", tc.lang, p, got)
			}
		}
		for _, p := range tc.not {
			text := "tel: " + p + "."
			if got := patternOnly(t, tc.lang, text); slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "phone_number=") }) {
				t.Errorf("%s %q: taken for a phone number: %q", tc.lang, p, got)
			}
		}
	}
}

// TestLanguagesLeaveClinicalValuesAlone: doses, vitals, lab values and schedules as notes in
// each language write them are not identifiers.
func TestLanguagesLeaveClinicalValuesAlone(t *testing.T) {
	for lang, text := range map[string]string{
		"de": "Ramipril 2,5 mg 1-0-1, RR 120/80 mmHg, Hb 13,2 g/dl, Kalium 4.5 mmol/l, Schmerz 7/10, Kontrolle in 3 Wochen. EKG-Monitoring 24h, Daumenring 2 entfernt.",
		"fr": "Paracétamol 1 g x 3/j, TA 12/8, Hb 13,2 g/dl, EVA 4/10, créatinine 85 µmol/l, revoir dans 2 semaines, après 6 cours de FOLFOX.",
		"es": "Metformina 850 mg cada 12 h, TA 130/85, glucemia 110 mg/dl, dolor 6/10, control en 15 días.",
		"it": "Amoxicillina 1 g ogni 8 ore, PA 130/80, emoglobina 12,9 g/dl, dolore 5/10, controllo tra 10 giorni. Insulina ore 08.00 12.00 20.00.",
		"pt": "Ibuprofeno 400 mg de 8/8 h, TA 125/80, glicemia 98 mg/dl, dor 3/10, reavaliar em 7 dias.",
		"nl": "Metoprolol 50 mg 2 dd, RR 135/85, Hb 8,1 mmol/l, pijn 6/10, controle over 4 weken.",
	} {
		if got := patternOnly(t, lang, text); len(got) != 0 {
			t.Errorf("%s: %q", lang, got)
		}
	}
}

// TestALanguageWithoutPatterns gets only the shapes no language owns, with English's words.
func TestALanguageWithoutPatterns(t *testing.T) {
	for _, lang := range []string{"ja", "", "EN", "fr-FR"} {
		ps, ok := LanguagePIIPatterns(lang)
		if ok {
			t.Errorf("%q: reported as having patterns", lang)
		}
		var labels []string
		for _, p := range ps {
			labels = append(labels, p.Label)
		}
		if want := append([]string{"date"}, sharedLabels...); !slices.Equal(labels, want) {
			t.Errorf("%q: labels %v, want %v", lang, labels, want)
		}
	}
	opts, ok := PIIOptionsFor("ja")
	text := "連絡先 taro@example.jp, SSN 123-45-6789, 2024-03-01"
	var got []string
	for _, e := range SmartMerge(text, nil, *opts.SmartMerge) {
		got = append(got, e.Label+"="+text[e.Start:e.End])
	}
	if ok || !slices.Equal(got, []string{"email=taro@example.jp", "date=2024-03-01"}) {
		t.Errorf("ja (%v): %q", ok, got)
	}
}

func TestLanguagePatternsAreCopies(t *testing.T) {
	a, _ := LanguagePIIPatterns("de")
	a[0].Label, a[0].ContextWords[0] = "changed", "changed"
	b, _ := LanguagePIIPatterns("de")
	if b[0].Label == "changed" || b[0].ContextWords[0] == "changed" || deDate[0] == "changed" {
		t.Fatal("LanguagePIIPatterns shares mutable state")
	}
}

// TestFastMatcherEqualsRegexpForLanguages: where a language's pattern has the \b... shape the
// fast matcher finds exactly what its regexp does, on notes and on random text made of the
// languages' pieces.
func TestFastMatcherEqualsRegexpForLanguages(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"1", "2", "0", "9", "-", "/", ".", " ", "(", ")", ":", "+", "º", "°", "é", "ä", "ß",
		"A", "Z", "x", "März", "mai", "de", "rue", "Via", "straße", "er", "49", "33", "2A"}
	texts := slices.Clone(matcherTexts)
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	fast := 0
	for _, lang := range PIILanguages() {
		ps, _ := LanguagePIIPatterns(lang)
		for _, p := range ps {
			if p.fast != nil {
				fast++
			}
			for _, text := range texts {
				compareMatchers(t, &p, text)
			}
		}
	}
	if fast == 0 {
		t.Fatal("no language pattern has a fast matcher")
	}
}

// TestAStreetAddressStaysOnOneLine: the street patterns joined their words with \s, which
// takes a line break, so a number ending one line and words starting the next made an
// address ("72\nSeen By Dr" from a pulse and the next line), which de-identification
// redacted; each language's street is now found on one line only.
func TestAStreetAddressStaysOnOneLine(t *testing.T) {
	for _, tc := range []struct {
		lang, text string
		want       []string
	}{
		{"en", "Vitals: BP 128/82, Pulse 72\nSeen By Dr Jones today.", nil},
		{"en", "Pulse 72\r\nSeen By Dr Jones.", nil},
		{"en", "lives at 42 Main\tStreet", []string{"street_address=42 Main\tStreet"}},
		{"de", "Lindenstraße\n12 Tage", nil},
		{"de", "Berliner\nStraße 12", nil},
		{"fr", "Domicile : 12 rue de la Paix\nMarseille", []string{"street_address=12 rue de la Paix"}},
		{"es", "Calle Mayor\n5 pacientes", nil},
		{"it", "Via Roma\n10 compresse", nil},
		{"pt", "Rua Augusta,\n120 doentes", nil},
		{"nl", "Kerkstraat\n12 patiënten", nil},
	} {
		if got := patternOnly(t, tc.lang, tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%s %q: got %q, want %q", tc.lang, tc.text, got, tc.want)
		}
	}
}
