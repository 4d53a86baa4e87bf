// Package deid de-identifies a text given the PII spans a model found in it: each span is
// masked, removed, replaced by a surrogate, hashed or, for dates, shifted, as OpenMed's
// /pii/deidentify does, optionally under a named policy profile that decides the action per
// kind of identifier.
//
// # How to use it
//
//	r, err := deid.New(deid.Config{HashKey: key})      // once; nil key: one per process
//	pol, err := deid.LookupPolicy("hipaa-safe-harbor") // optional; names and aliases as OpenMed's
//	res := r.Apply(text, spans, deid.Options{Method: deid.Mask, Policy: pol, KeepMapping: true})
//	// res.Text, res.Redactions (one per span kept, in text order), res.Mapping
//
// Spans are byte offsets into text; Apply resolves overlaps (the longer span, then the higher
// score, wins), so the replacements never touch. A Redactor is safe for concurrent use; the
// randomness of one document (the date offset, surrogates) is drawn fresh for each Apply.
//
// # One subject, one set of pseudonyms
//
// Options.Subject names the person a document is about (a patient id; CheckSubject says which
// are valid). Its date offset is then derived from an HMAC-SHA256 of the subject under the
// Redactor's key, and each surrogate from an HMAC of the subject, the original's kind and the
// original (in lower case, spaces collapsed, in entities.NormalForm), which seeds that surrogate's own draw: every
// document of the subject gets the same stand-in for the same original and the same offset,
// whatever else it holds and in whatever order, with nothing stored. The stand-in is never the
// original in any case ("McClure" for "Mcclure"), nor, for a name, shares a word with it; a
// whole name is drawn word by word, each word checked against its own original only, so its
// given-name stand-in may be its own family name ("Taylor" for "Morgan" in "Taylor Morgan",
// about one name in the list's length), the price of agreeing with the words found apart. A whole name is drawn word
// by word (its first word as a given name, its last as a family name), so that "Alan Brooks"
// agrees with "Alan" and "Brooks" found apart; a given name with no title before it takes the
// sex of the name list that holds it, so that "Mr. Alan" and "Alan" agree (a name both lists or
// neither hold may still differ between a note with a title and one without). The promise
// holds across processes only when they share Config.HashKey (Keyed); with a drawn key it
// holds within one process's life.
//
// # One tenant, one key
//
// Redactor.Scoped(tenant) is the Redactor for one caller's tenant: its key is an HMAC of the
// tenant under Config.HashKey, so every keyed result (a subject's offset and surrogates, hash,
// reversible ids, fingerprints) is the tenant's own. A caller cannot then send another
// tenant's subject id, or a guessed name, and read back what that tenant was given. The
// tenant "" (a server without identities) uses the key itself.
//
// # Semantics, and where they differ from OpenMed's
//
//   - mask writes "[label]" with the model's own label. With a mapping, every occurrence of a
//     label after the first is numbered in text order ("[first_name_2]"), so each placeholder
//     stands for one span; remove then writes "[label_REMOVED]" instead of nothing.
//   - replace draws surrogates from gofakeit by kind (names, cities, companies, streets,
//     e-mails, URLs; a given name after "Mr", "Mrs", "Ms" or "Miss" from the given names of
//     the sex the title says, names/), moves every date by the document's one offset in its
//     own layout (order, intervals and a stated age kept), keeps an age unless it is over 89
//     ("90+"), and writes identifiers of every other kind shape for shape (each digit another
//     digit, each letter another letter of the same case, the rest kept). The same original of
//     the same kind gets the same surrogate within a document. OpenMed keeps an e-mail's real
//     domain; Sluice does not.
//   - hash writes "label_" and 8 hex digits, as OpenMed's, but of a keyed HMAC-SHA256, not a
//     bare SHA-256: an unkeyed 32-bit prefix of a name or a date is a dictionary lookup away
//     from the original. Config.HashKey pins the key across replicas. reversible_id, when a
//     policy asks for it, is keyed the same way.
//   - shift_dates moves every date span by one offset per document (given, 0 leaving dates as
//     they are, or a random non-zero number of days in [-364, 364]), keeps its layout (ISO,
//     year-first with slashes, dotted day-first, slashed or dashed in the language's day/month
//     order, month names full or abbreviated, upper case, with a dot, an ordinal day or a
//     comma, day first or month first; one space between the parts), stays a valid date
//     across month ends and leap years, and with KeepYear puts the original year back (29
//     February becomes the 28th in a year without one). A date it cannot read, that would
//     leave years 1-9999, or that a non-zero shift would write as it was (a whole year kept
//     by KeepYear, a date without its year moved by whole years), becomes "[DATE_SHIFTED]";
//     other spans are masked. Numeric dates keep their own padding and a two-digit year stays
//     two digits (00-49 read as 20xx, 50-99 as 19xx) where two read back as the moved year
//     (else four), where OpenMed writes them zero-padded with four; an abbreviated month stays abbreviated (OpenMed writes those as ISO).
//   - A policy decides every span's action (keep leaves the span in the text and out of the
//     result; redact is mask); the request's method is not consulted for spans a policy
//     covers, and a policy covers every span here. A policy may ask for the mapping and for
//     reversible ids. A label this package does not know counts as a direct identifier, so
//     that no policy keeps what it cannot name (a model with other labels fails closed).
//   - The mapping is lossless: when one replacement stands for several different originals
//     (two dates that do not parse, two surrogates that happen to agree), the later ones are
//     keyed "replacement#2", "replacement#3"; OpenMed's keeps only the first.
package deid
