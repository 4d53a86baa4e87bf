package entities

import (
	"regexp"
	"slices"
	"strings"
	"time"
)

// A PII request's lang picks one of these pattern sets. English is DefaultPIIPatterns,
// unchanged. Each other language has its own dates (its month names, full and abbreviated,
// and numeric dates day first), phone numbers (national with or without the trunk 0, and
// international), national identifiers with their check digits, postcodes and streets (on one
// line: their words apart by spaces and tabs, never a line break), each
// with context words in that language; then the patterns no language owns (ISO dates,
// e-mail, web and IP addresses, MAC addresses, IBAN, BIC, payment cards), their context
// words widened with the language's. The US shapes (SSN, NPI, US phone numbers, ZIP codes,
// month-first dates) are left out: in a French note a ten-digit number is not an NPI.

// piiLanguage is what one language adds to the shared patterns.
type piiLanguage struct {
	own []patternSpec
	// words are the language's context words for the shared patterns, by label.
	words map[string][]string
}

// Context words of each language, lower case as hasContext compares them.
var (
	deDate  = []string{"geboren", "geb.", "geburtsdatum", "verstorben", "aufgenommen", "aufnahme", "entlassen", "entlassung", "datum"}
	dePhone = []string{"telefon", "tel.", "tel:", "tel ", "handy", "mobil", "fax", "rufnummer", "erreichbar", "anrufen", "kontakt"}
	deAddr  = []string{"adresse", "anschrift", "wohnhaft", "wohnt"}

	frDate  = []string{"né le", "née le", "naissance", "ddn", "décès", "décédé", "admis", "admission", "sorti", "hospitalisé"}
	frPhone = []string{"téléphone", "tél", "tel.", "tel:", "tel ", "portable", "mobile", "fax", "joindre", "numéro"}
	frAddr  = []string{"adresse", "domicile", "demeurant", "habite", "réside"}

	esDate  = []string{"nacido", "nacida", "nacimiento", "f. nac", "fallecido", "fallecida", "ingreso", "ingresado", "ingresada", "alta"}
	esPhone = []string{"teléfono", "telefono", "tel.", "tel:", "tel ", "tlf", "móvil", "movil", "celular", "fax", "llamar"}
	esAddr  = []string{"domicilio", "dirección", "direccion", "reside", "vive en"}

	itDate  = []string{"nato", "nata", "nascita", "deceduto", "deceduta", "ricoverato", "ricoverata", "ricovero", "dimesso", "dimessa", "dimissione"}
	itPhone = []string{"telefono", "tel.", "tel:", "tel ", "cellulare", "cell.", "fax", "recapito", "chiamare"}
	itAddr  = []string{"indirizzo", "residente", "abita", "domicilio"}

	ptDate  = []string{"nascido", "nascida", "nascimento", "falecido", "falecida", "óbito", "internado", "internada", "internamento", "alta", "admissão"}
	ptPhone = []string{"telefone", "telemóvel", "telemovel", "tel.", "tel:", "tel ", "tlm", "celular", "fax", "contacto", "contato", "ligar"}
	ptAddr  = []string{"morada", "residência", "residencia", "reside", "endereço", "endereco"}

	nlDate  = []string{"geboren", "geboortedatum", "overleden", "opgenomen", "opname", "ontslagen", "ontslag", "datum"}
	nlPhone = []string{"telefoon", "tel.", "tel:", "tel ", "mobiel", "gsm", "fax", "bellen", "bereikbaar"}
	nlAddr  = []string{"adres", "woonachtig", "woont", "wonend", "woonplaats"}
)

// dayFirstDate is every non-English language's numeric date: day, month, year, one
// separator throughout (validDayFirst checks that, and that the date exists).
const dayFirstDate = `\b\d{1,2}([./-])\d{1,2}[./-](?:\d{4}|\d{2})\b`

// monthDate is a date written day, month's name, year, as all six languages write it: before
// is what may stand between the day and the month (German's ".", French "er", "de"), after
// what may stand between the month and the year, months the names and abbreviations.
func monthDate(before, months, after string) string {
	return `(?i)\b\d{1,2}` + before + `(?:` + months + `)` + after + `\d{4}\b`
}

// The languages and their patterns. Scores follow the English set's reasoning: a shape that
// identifies itself (a check digit passed, an international prefix, a month's name) stands
// alone at 0.5 or more; a generic run of digits needs its context word (or the model).
var piiLanguages = map[string]piiLanguage{
	"de": {
		own: []patternSpec{
			{expr: dayFirstDate, PIIPattern: PIIPattern{Label: "date", Priority: 9, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: deDate, Validate: validDayFirst}},
			{expr: monthDate(`(?:\.\s*|\s+)`, `januar|jänner|februar|märz|maerz|april|mai|juni|juli|august|september|oktober|november|dezember|jan|jän|feb|mär|mrz|apr|jun|jul|aug|sept|sep|okt|nov|dez`, `(?:\.\s*|\s+)`),
				PIIPattern: PIIPattern{Label: "date", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: deDate}},
			{expr: `\+49[ -]?(?:\(0\)[ -]?)?[1-9]\d{1,4}(?:[ /-]?\d){3,9}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: dePhone,
				Validate: phoneNumber("49", true, `^[1-9]\d{5,10}$`)}},
			{expr: `\b0[1-9]\d{1,4}(?:[ /-]?\d){3,9}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.5, ContextBoost: 0.35, ContextWords: dePhone,
				Validate: phoneNumber("49", true, `^[1-9]\d{5,10}$`)}},
			{expr: `\b[1-9]\d(?: ?\d{3}){3}\b`, PIIPattern: PIIPattern{Label: "national_id", Priority: 10, BaseScore: 0.45, ContextBoost: 0.5,
				ContextWords: []string{"steuer-id", "steuerid", "steueridentifikationsnummer", "steuer-identifikationsnummer", "identifikationsnummer", "idnr", "steuernummer"}, Validate: ValidSteuerID}},
			{expr: `\b(?:0[1-9]|[1-9]\d)\d{3}\b`, PIIPattern: PIIPattern{Label: "postcode", Priority: 6, BaseScore: 0.3, ContextBoost: 0.45, ContextWords: []string{"plz", "postleitzahl"}}},
			// Capitalised as German writes street names; one word ("Lindenstraße") or two
			// ("Berliner Straße"). No \b first: it would refuse a name beginning with an umlaut.
			// Ring, Damm and Ufer only as words of their own: as endings they make nouns
			// ("Monitoring 24h", "Daumenring 2").
			{expr: `[A-ZÄÖÜ][a-zäöüß]+(?:-[A-ZÄÖÜ][a-zäöüß]+)*(?:straße|strasse|str\.|weg|platz|allee|gasse|[ \t](?:Straße|Strasse|Str\.|Weg|Platz|Allee|Gasse|Ring|Damm|Ufer))[ \t]?\d{1,4}[a-z]?\b`,
				PIIPattern: PIIPattern{Label: "street_address", Priority: 7, BaseScore: 0.7, ContextBoost: 0.2, ContextWords: deAddr}},
		},
		words: map[string][]string{"date": deDate, "credit_debit_card": {"karte", "kreditkarte", "zahlung"}, "iban": {"konto", "bankverbindung"}},
	},
	"fr": {
		own: []patternSpec{
			{expr: dayFirstDate, PIIPattern: PIIPattern{Label: "date", Priority: 9, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: frDate, Validate: validDayFirst}},
			{expr: monthDate(`(?:er)?\s+`, `janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|janv|févr|fevr|fév|fev|avr|juil|sept|oct|nov|déc|dec`, `\.?\s+`),
				PIIPattern: PIIPattern{Label: "date", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: frDate}},
			// French numbers are written in pairs, often with dots or hyphens: "06.12.34.56.78"
			// begins like a date, so they come before the dates, and one separator throughout
			// keeps a date and a time ("01.02.2024 12") from reading as one.
			{expr: `\+33 ?(?:\(0\) ?)?[1-9]` + frPairs, PIIPattern: PIIPattern{Label: "phone_number", Priority: 10, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: frPhone,
				Validate: phoneNumber("33", true, `^[1-9]\d{8}$`)}},
			{expr: `\b0[1-9]` + frPairs, PIIPattern: PIIPattern{Label: "phone_number", Priority: 10, BaseScore: 0.5, ContextBoost: 0.35, ContextWords: frPhone,
				Validate: phoneNumber("33", true, `^[1-9]\d{8}$`)}},
			{expr: `\b[1278] ?\d{2} ?\d{2} ?(?:\d{2}|2[ABab]) ?\d{3} ?\d{3} ?\d{2}\b`, PIIPattern: PIIPattern{Label: "national_id", Priority: 10, BaseScore: 0.6, ContextBoost: 0.35,
				ContextWords: []string{"nir", "insee", "sécurité sociale", "securite sociale", "sécu", "carte vitale"}, Validate: ValidNIR}},
			{expr: `\b(?:0[1-9]|[1-8]\d|9[0-8])\d{3}\b`, PIIPattern: PIIPattern{Label: "postcode", Priority: 6, BaseScore: 0.3, ContextBoost: 0.45, ContextWords: []string{"code postal", "cedex", "c.p."}}},
			{expr: `\b\d{1,4}(?: ?(?:bis|ter))?,? (?i:rue|avenue|av\.|boulevard|bd|place|impasse|allée|chemin|quai|route)[ \t]+(?:(?:de la|de l'|du|des|de|d')[ \t]?)?\p{Lu}[\p{L}'-]*(?:[ \t]\p{Lu}[\p{L}'-]*)*`,
				PIIPattern: PIIPattern{Label: "street_address", Priority: 7, BaseScore: 0.7, ContextBoost: 0.2, ContextWords: frAddr}},
		},
		words: map[string][]string{"date": frDate, "credit_debit_card": {"carte", "paiement"}, "iban": {"compte", "rib"}, "email": {"courriel"}},
	},
	"es": {
		own: []patternSpec{
			{expr: dayFirstDate, PIIPattern: PIIPattern{Label: "date", Priority: 9, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: esDate, Validate: validDayFirst}},
			{expr: monthDate(`\s+(?:de\s+)?`, `enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|ene|feb|mar|abr|may|jun|jul|ago|sept|sep|set|oct|nov|dic`, `\.?\s+(?:de\s+|del\s+)?`),
				PIIPattern: PIIPattern{Label: "date", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: esDate}},
			{expr: `\+34[ .-]?[6-9](?:[ .-]?\d){8}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: esPhone,
				Validate: phoneNumber("34", false, `^[6-9]\d{8}$`)}},
			// Spain has no trunk prefix: nine digits alone are as likely a reference number.
			{expr: `\b[6-9](?:[ .-]?\d){8}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.45, ContextBoost: 0.35, ContextWords: esPhone,
				Validate: phoneNumber("34", false, `^[6-9]\d{8}$`)}},
			{expr: `\b\d{8}[ -]?[A-Za-z]\b`, PIIPattern: PIIPattern{Label: "national_id", Priority: 10, BaseScore: 0.55, ContextBoost: 0.4,
				ContextWords: esIDWords, Validate: ValidSpanishID}},
			{expr: `\b[XYZxyz][ -]?\d{7}[ -]?[A-Za-z]\b`, PIIPattern: PIIPattern{Label: "national_id", Priority: 10, BaseScore: 0.55, ContextBoost: 0.4,
				ContextWords: esIDWords, Validate: ValidSpanishID}},
			{expr: `\b(?:0[1-9]|[1-4]\d|5[0-2])\d{3}\b`, PIIPattern: PIIPattern{Label: "postcode", Priority: 6, BaseScore: 0.3, ContextBoost: 0.45, ContextWords: []string{"código postal", "codigo postal", "c.p."}}},
			{expr: `\b(?i:calle|c/|avenida|avda\.|av\.|paseo|plaza|pza\.|camino|carretera|ronda|travesía)[ \t]?(?:(?:de la|de los|de las|del|de)[ \t])?\p{Lu}[\p{L}-]*(?:[ \t]\p{Lu}[\p{L}-]*)*,?[ \t](?:n\.?º[ \t]?)?\d{1,4}\b`,
				PIIPattern: PIIPattern{Label: "street_address", Priority: 7, BaseScore: 0.7, ContextBoost: 0.2, ContextWords: esAddr}},
		},
		words: map[string][]string{"date": esDate, "credit_debit_card": {"tarjeta", "pago"}, "iban": {"cuenta"}, "email": {"correo"}},
	},
	"it": {
		own: []patternSpec{
			{expr: dayFirstDate, PIIPattern: PIIPattern{Label: "date", Priority: 9, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: itDate, Validate: validDayFirst}},
			{expr: monthDate(`[°º]?\s+`, `gennaio|febbraio|marzo|aprile|maggio|giugno|luglio|agosto|settembre|ottobre|novembre|dicembre|gen|feb|mar|apr|mag|giu|lug|ago|sett|set|ott|nov|dic`, `\.?\s+`),
				PIIPattern: PIIPattern{Label: "date", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: itDate}},
			// Italy keeps a landline's 0 after +39 too: there is no trunk prefix to drop.
			{expr: `\+39[ .-]?(?:3\d{2}|0\d{1,3})(?:[ .-]?\d){4,8}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: itPhone,
				Validate: phoneNumber("39", false, `^(?:0\d{5,10}|3\d{8,9})$`)}},
			// Dotted, a number reads like the times of a dosing schedule ("ore 08.00 12.00"):
			// found alone only when spaced or hyphenated, dotted only beside a context word.
			{expr: `\b0\d{1,3}(?:[ -]?\d){4,8}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.5, ContextBoost: 0.35, ContextWords: itPhone,
				Validate: phoneNumber("39", false, `^0\d{5,10}$`)}},
			{expr: `\b0\d{1,3}(?:\.?\d){4,8}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.4, ContextBoost: 0.4, ContextWords: itPhone,
				Validate: phoneNumber("39", false, `^0\d{5,10}$`)}},
			{expr: `\b3\d{2}(?:[ .-]?\d){6,7}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.45, ContextBoost: 0.35, ContextWords: itPhone,
				Validate: phoneNumber("39", false, `^3\d{8,9}$`)}},
			{expr: `(?i)\b[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]\b`, PIIPattern: PIIPattern{Label: "national_id", Priority: 10, BaseScore: 0.7, ContextBoost: 0.25,
				ContextWords: []string{"codice fiscale", "cod. fiscale", "c.f.", "tessera sanitaria"}, Validate: ValidCodiceFiscale}},
			// "cap" alone is the start of too many words (capacità, capsula).
			{expr: `\b\d{5}\b`, PIIPattern: PIIPattern{Label: "postcode", Priority: 6, BaseScore: 0.3, ContextBoost: 0.45, ContextWords: []string{"c.a.p", "cap ", "cap:", "cap.", "codice postale"}}},
			{expr: `\b(?i:via|viale|piazza|piazzale|corso|vicolo|largo|lungomare|strada)[ \t](?:(?:dei|degli|delle|della|del|di)[ \t])?\p{Lu}[\p{L}'-]*(?:[ \t]\p{Lu}[\p{L}'-]*)*,?[ \t](?:n\.[ \t]?)?\d{1,4}\b`,
				PIIPattern: PIIPattern{Label: "street_address", Priority: 7, BaseScore: 0.7, ContextBoost: 0.2, ContextWords: itAddr}},
		},
		words: map[string][]string{"date": itDate, "credit_debit_card": {"carta", "pagamento"}, "iban": {"conto"}, "email": {"posta"}},
	},
	"pt": {
		own: []patternSpec{
			{expr: dayFirstDate, PIIPattern: PIIPattern{Label: "date", Priority: 9, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: ptDate, Validate: validDayFirst}},
			{expr: monthDate(`[°º]?\s+(?:de\s+)?`, `janeiro|fevereiro|março|marco|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro|jan|fev|mar|abr|mai|jun|jul|ago|set|out|nov|dez`, `\.?\s+(?:de\s+)?`),
				PIIPattern: PIIPattern{Label: "date", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: ptDate}},
			{expr: `\+351[ .-]?[29](?:[ .-]?\d){8}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: ptPhone,
				Validate: phoneNumber("351", false, `^(?:2\d{8}|9[1236]\d{7})$`)}},
			{expr: `\b[29](?:[ .-]?\d){8}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.45, ContextBoost: 0.35, ContextWords: ptPhone,
				Validate: phoneNumber("351", false, `^(?:2\d{8}|9[1236]\d{7})$`)}},
			// Nine digits are a phone number as often as a NIF: the NIF is taken only after
			// its name, so that it does not claim the phone numbers first.
			{expr: `(?i)\b(?:nif|nipc|contribuinte)(?: n\.?\s?º)?[\s:.#º-]*(\d{3} ?\d{3} ?\d{3})\b`, PIIPattern: PIIPattern{Label: "national_id", Priority: 10, BaseScore: 0.55, ContextBoost: 0.35,
				ContextWords: []string{"nif", "nipc", "contribuinte"}, Validate: ValidPortugueseNIF, Group: 1}},
			{expr: `\b\d{4}-\d{3}\b`, PIIPattern: PIIPattern{Label: "postcode", Priority: 6, BaseScore: 0.45, ContextBoost: 0.4, ContextWords: append([]string{"código postal", "codigo postal"}, ptAddr...)}},
			{expr: `\b(?i:rua|avenida|av\.|travessa|praça|largo|alameda|estrada)[ \t](?:(?:da|de|do|das|dos)[ \t])?\p{Lu}[\p{L}-]*(?:[ \t](?:(?:da|de|do|das|dos)[ \t])?\p{Lu}[\p{L}-]*)*,?[ \t](?:n\.?º[ \t]?)?\d{1,4}[A-Za-z]?\b`,
				PIIPattern: PIIPattern{Label: "street_address", Priority: 7, BaseScore: 0.7, ContextBoost: 0.2, ContextWords: ptAddr}},
		},
		words: map[string][]string{"date": ptDate, "credit_debit_card": {"cartão", "cartao", "pagamento"}, "iban": {"conta"}, "email": {"correio"}},
	},
	"nl": {
		own: []patternSpec{
			{expr: dayFirstDate, PIIPattern: PIIPattern{Label: "date", Priority: 9, BaseScore: 0.6, ContextBoost: 0.3, ContextWords: nlDate, Validate: validDayFirst}},
			{expr: monthDate(`\s+`, `januari|februari|maart|april|mei|juni|juli|augustus|september|oktober|november|december|jan|feb|mrt|apr|jun|jul|aug|sept|sep|okt|nov|dec`, `\.?\s+`),
				PIIPattern: PIIPattern{Label: "date", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: nlDate}},
			{expr: `\+31[ .-]?(?:\(0\)[ .-]?)?[1-9](?:[ .-]?\d){8}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.7, ContextBoost: 0.25, ContextWords: nlPhone,
				Validate: phoneNumber("31", true, `^[1-9]\d{8}$`)}},
			{expr: `\b0[1-9](?:[ .-]?\d){8}\b`, PIIPattern: PIIPattern{Label: "phone_number", Priority: 8, BaseScore: 0.5, ContextBoost: 0.35, ContextWords: nlPhone,
				Validate: phoneNumber("31", true, `^[1-9]\d{8}$`)}},
			{expr: `\b\d{4}(?:\.\d{2}\.|\d{2})\d{3}\b`, PIIPattern: PIIPattern{Label: "national_id", Priority: 10, BaseScore: 0.4, ContextBoost: 0.5,
				ContextWords: []string{"bsn", "burgerservicenummer", "sofinummer", "sofi-nummer"}, Validate: ValidBSN}},
			{expr: `\b[1-9]\d{3} ?[A-Z]{2}\b`, PIIPattern: PIIPattern{Label: "postcode", Priority: 6, BaseScore: 0.45, ContextBoost: 0.4, ContextWords: append([]string{"postcode"}, nlAddr...), Validate: validDutchPostcode}},
			{expr: `\b(?:[A-Z][a-z]+[ \t])?[A-Z][a-zé]+(?:straat|laan|weg|plein|gracht|kade|singel|dijk|steeg|markt)[ \t]\d{1,4}[a-z]?\b`,
				PIIPattern: PIIPattern{Label: "street_address", Priority: 7, BaseScore: 0.7, ContextBoost: 0.2, ContextWords: nlAddr}},
		},
		words: map[string][]string{"date": nlDate, "credit_debit_card": {"kaart", "betaling"}, "iban": {"rekening"}},
	},
}

// frPairs are a French number's last eight digits, in pairs with one separator or none.
const frPairs = `(?:(?: \d{2}){4}|(?:\.\d{2}){4}|(?:-\d{2}){4}|\d{8})\b`

var esIDWords = []string{"dni", "nie", "nif", "documento nacional", "identidad", "extranjero"}

// sharedLabels are the English patterns no language owns, by label (each label is one
// pattern there).
var sharedLabels = []string{"email", "url", "ipv4", "ipv6", "mac_address", "iban", "bic", "credit_debit_card"}

// isoDate is the one English date pattern every language shares.
const isoDate = `\b\d{4}-\d{2}-\d{2}\b`

// sharedPatterns are the patterns every language takes after its own: an ISO date with the
// language's date words, and the shared English patterns with the language's words added.
func sharedPatterns(words map[string][]string) []PIIPattern {
	iso := mustPatterns([]patternSpec{{expr: isoDate, PIIPattern: PIIPattern{Label: "date", Priority: 10, BaseScore: 0.6, ContextBoost: 0.3,
		ContextWords: slices.Concat(dateContext, words["date"])}}})
	out := iso
	for _, label := range sharedLabels {
		i := slices.IndexFunc(defaultPIIPatterns, func(p PIIPattern) bool { return p.Label == label })
		p := defaultPIIPatterns[i]
		p.ContextWords = slices.Concat(p.ContextWords, words[label])
		if label == "ipv4" {
			// Above the day-first dates, which would take "10.10.10" out of 10.10.10.10.
			p.Priority = 10
		}
		out = append(out, p)
	}
	return out
}

// languagePatterns holds each language's full list, built once; English's is
// defaultPIIPatterns, and "" the shared patterns alone, for a language Sluice has none for.
var languagePatterns = func() map[string][]PIIPattern {
	m := map[string][]PIIPattern{"en": defaultPIIPatterns, "": sharedPatterns(nil)}
	for code, l := range piiLanguages {
		m[code] = append(mustPatterns(l.own), sharedPatterns(l.words)...)
	}
	return m
}()

// PIILanguages lists, sorted, the languages this package has identifier patterns for: the
// codes (ISO 639-1, lower case) LanguagePIIPatterns knows.
func PIILanguages() []string {
	out := make([]string, 0, len(piiLanguages)+1)
	out = append(out, "en")
	for code := range piiLanguages {
		out = append(out, code)
	}
	slices.Sort(out)
	return out
}

// LanguagePIIPatterns returns a copy of lang's patterns (lang lower case, as PIILanguages
// writes it); "en" gives DefaultPIIPatterns. For a language without patterns of its own ok
// is false, and the patterns are the ones every language shares, with their English context
// words.
func LanguagePIIPatterns(lang string) (patterns []PIIPattern, ok bool) {
	src, ok := languagePatterns[lang]
	if !ok || lang == "" {
		src, ok = languagePatterns[""], false
	}
	out := slices.Clone(src)
	for i := range out {
		out[i].ContextWords = slices.Clone(out[i].ContextWords)
	}
	return out, ok
}

// PIIOptionsFor is PIIOptions with lang's patterns (see LanguagePIIPatterns, whose ok it
// returns). PIIOptionsFor("en") is PIIOptions().
func PIIOptionsFor(lang string) (Options, bool) {
	opts := PIIOptions()
	patterns, ok := LanguagePIIPatterns(lang)
	opts.SmartMerge.Patterns = patterns
	return opts, ok
}

// LanguagePatternsVersion names the patterns LanguagePIIPatterns(lang) gives, for results
// that say which patterns a sweep ran: PatternsVersion for English.
func LanguagePatternsVersion(lang string) string {
	if lang == "en" {
		return PatternsVersion
	}
	return PatternsVersion + "+" + lang
}

// validDayFirst accepts a numeric day-first date (as dayFirstDate matches it) whose two
// separators agree and whose day exists in its month; a two-digit year is read as 19xx or
// 20xx, whichever, so only 29 February asks for a leap year.
func validDayFirst(s string) bool {
	i := strings.IndexAny(s, "./-")
	j := strings.LastIndexAny(s, "./-")
	if i <= 0 || j <= i || s[i] != s[j] {
		return false
	}
	day, month, year := atoiASCII(s[:i]), atoiASCII(s[i+1:j]), atoiASCII(s[j+1:])
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	if len(s)-j-1 == 2 {
		year += 2000 // 2000 is a leap year, so 29/02/00 passes with either century
	}
	return day <= time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func atoiASCII(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// phoneNumber returns a validator for one country's phone numbers: the national number
// (after +cc, a written "(0)", or, where trunk is set, the national form's leading 0) must
// match nsn.
func phoneNumber(cc string, trunk bool, nsn string) func(string) bool {
	re := regexp.MustCompile(nsn)
	return func(s string) bool {
		d := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, s)
		switch {
		case strings.HasPrefix(s, "+"):
			d = strings.TrimPrefix(d, cc)
			if strings.Contains(s, "(0)") {
				d = strings.TrimPrefix(d, "0")
			}
		case trunk:
			d = strings.TrimPrefix(d, "0")
		}
		return re.MatchString(d)
	}
}

// ValidSteuerID checks a German tax identification number: eleven digits, the first not 0;
// in the first ten one digit appears twice or three times (three not in a row) and every
// other at most once; the last is the ISO 7064 MOD 11,10 check digit of the first ten.
func ValidSteuerID(s string) bool {
	d := asciiDigits(s)
	if len(d) != 11 || d[0] == 0 {
		return false
	}
	var count [10]int
	for _, v := range d[:10] {
		count[v]++
	}
	repeated := 0
	for v, c := range count {
		switch {
		case c > 3:
			return false
		case c == 3:
			for i := 0; i+2 < 10; i++ {
				if d[i] == byte(v) && d[i+1] == byte(v) && d[i+2] == byte(v) {
					return false
				}
			}
			repeated++
		case c == 2:
			repeated++
		}
	}
	if repeated != 1 {
		return false
	}
	product := 10
	for _, v := range d[:10] {
		sum := (int(v) + product) % 10
		if sum == 0 {
			sum = 10
		}
		product = sum * 2 % 11
	}
	check := 11 - product
	if check == 10 {
		check = 0
	}
	return int(d[10]) == check
}

// ValidNIR checks a French social security number (NIR, INSEE number): sex 1 or 2 (7 or 8
// for a provisional number), then twelve digits of which the department may be Corsica's 2A
// or 2B, and the key, 97 minus the first thirteen (2A read as 19, 2B as 18) modulo 97.
// Spaces are ignored.
func ValidNIR(s string) bool {
	s = strings.ToUpper(stripChars(s, " "))
	if len(s) != 15 || !strings.ContainsRune("1278", rune(s[0])) {
		return false
	}
	body := s[:13]
	switch body[5:7] {
	case "2A":
		body = body[:5] + "19" + body[7:]
	case "2B":
		body = body[:5] + "18" + body[7:]
	}
	rem, key := 0, atoiASCII(s[13:])
	for i := 0; i < len(body); i++ {
		if body[i] < '0' || body[i] > '9' {
			return false
		}
		rem = (rem*10 + int(body[i]-'0')) % 97
	}
	return key == 97-rem
}

// dniLetters are the Spanish DNI's check letters, by the number modulo 23.
const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

// ValidSpanishID checks a Spanish DNI (eight digits and a letter) or NIE (X, Y or Z, seven
// digits and a letter): the letter is the number's modulo 23 in dniLetters, an NIE's first
// letter read as the digit 0, 1 or 2. Spaces and hyphens are ignored.
func ValidSpanishID(s string) bool {
	s = strings.ToUpper(stripChars(s, " -"))
	if len(s) != 9 {
		return false
	}
	if i := strings.IndexByte("XYZ", s[0]); i >= 0 {
		s = string(rune('0'+i)) + s[1:]
	}
	n := atoiASCII(s[:8])
	return n >= 0 && s[8] == dniLetters[n%23]
}

// cfOdd is the value of a codice fiscale's character in an odd position (the first, third,
// ...), for the digits 0-9 and then the letters A-Z; in an even position a digit counts its
// value and a letter its place in the alphabet from 0.
var cfOdd = [36]int{1, 0, 5, 7, 9, 13, 15, 17, 19, 21,
	1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23}

// ValidCodiceFiscale checks an Italian codice fiscale's last letter, the check character of
// the first fifteen (their values summed, modulo 26, as a letter). Its shape (letters and
// digits where the pattern wants them) is the pattern's to check.
func ValidCodiceFiscale(s string) bool {
	s = strings.ToUpper(s)
	if len(s) != 16 {
		return false
	}
	sum := 0
	for i := 0; i < 15; i++ {
		c := s[i]
		var idx int
		switch {
		case c >= '0' && c <= '9':
			idx = int(c - '0')
		case c >= 'A' && c <= 'Z':
			idx = int(c-'A') + 10
		default:
			return false
		}
		if i%2 == 0 {
			sum += cfOdd[idx]
		} else if idx >= 10 {
			sum += idx - 10
		} else {
			sum += idx
		}
	}
	return s[15] == byte('A'+sum%26)
}

// ValidPortugueseNIF checks a Portuguese tax number (NIF, NIPC): nine digits, a first digit
// (or two) of those issued, and the last the mod-11 check digit of the first eight weighted
// 9 down to 2 (10 and 11 written 0).
func ValidPortugueseNIF(s string) bool {
	d := asciiDigits(s)
	if len(d) != 9 {
		return false
	}
	switch d[0] {
	case 1, 2, 3, 5, 6, 8:
	case 4:
		if d[1] != 5 {
			return false
		}
	case 7:
		if d[1] == 3 || d[1] == 6 || d[1] == 8 {
			return false
		}
	case 9:
		if d[1] != 0 && d[1] != 1 && d[1] != 8 && d[1] != 9 {
			return false
		}
	default:
		return false
	}
	sum := 0
	for i, v := range d[:8] {
		sum += int(v) * (9 - i)
	}
	check := 11 - sum%11
	if check >= 10 {
		check = 0
	}
	return int(d[8]) == check
}

// ValidBSN checks a Dutch citizen service number (BSN) by the eleven test: nine digits
// weighted 9 down to 2, the last -1, sum to a multiple of 11 (and not all zeros).
func ValidBSN(s string) bool {
	d := asciiDigits(s)
	if len(d) != 9 {
		return false
	}
	sum := -int(d[8])
	for i, v := range d[:8] {
		sum += int(v) * (9 - i)
	}
	return sum%11 == 0 && slices.ContainsFunc(d, func(v byte) bool { return v != 0 })
}

// validDutchPostcode refuses the letter pairs Dutch postcodes never use (SA, SD, SS).
func validDutchPostcode(s string) bool {
	letters := s[len(s)-2:]
	return letters != "SA" && letters != "SD" && letters != "SS"
}
