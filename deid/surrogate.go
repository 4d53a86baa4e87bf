package deid

import (
	_ "embed"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/brianvoe/gofakeit/v7"
)

// surrogates draws the replacements of one document: the same original of the same kind
// gets the same surrogate, and a surrogate is never its original.
type surrogates struct {
	doc   drawer // the document's one stream; unused under a subject
	lang  string
	drawn map[[2]string]string
	// sexOf is what a title says of the bearer of a name ('F' or 'M'), by the name as written.
	sexOf map[string]byte
	// seed, when set (a subject's document), seeds each original's own draw, so that its
	// surrogate depends on the original alone, not on what was drawn before it.
	seed func(canonical, original string) [32]byte
	// originals are the document's originals so far (originalKeys): a stand-in is never one of
	// them, so that no real name of the note appears in another's place. A stream's part
	// cannot know the originals of parts to come, and a subject's stand-ins depend on the
	// original alone, so they cannot look.
	originals map[[2]string]bool
}

// drawer is a source of draws: a generator and a faker over one stream.
type drawer struct {
	rng  *rand.Rand
	fake *gofakeit.Faker
}

func newDrawer(src *rand.ChaCha8) drawer {
	return drawer{rng: rand.New(src), fake: gofakeit.NewFaker(src, false)}
}

// newSurrogates draws from src; nil src is a subject's document, whose caller sets seed.
func newSurrogates(src *rand.ChaCha8, lang string) *surrogates {
	s := &surrogates{lang: lang, drawn: map[[2]string]string{}, sexOf: map[string]byte{}, originals: map[[2]string]bool{}}
	if src != nil {
		s.doc = newDrawer(src)
	}
	return s
}

// The given names a title asks for (see names/NOTICE.md).
var (
	//go:embed names/female.txt
	femaleList string
	//go:embed names/male.txt
	maleList string
)

var sexedNames = sync.OnceValue(func() map[byte][]string {
	return map[byte][]string{'F': strings.Fields(femaleList), 'M': strings.Fields(maleList)}
})

// titleSex is what the title just before a name says of its bearer: 'M' after "Mr" or
// "Mister", 'F' after "Mrs", "Ms" or "Miss", 0 after anything else.
func titleSex(before string) byte {
	before = strings.TrimRightFunc(before, unicode.IsSpace) // "Mr.\u00a0Alan" too
	before = strings.TrimSuffix(before, ".")
	word := before
	if i := strings.LastIndexFunc(before, func(r rune) bool { return !unicode.IsLetter(r) }); i >= 0 {
		_, size := utf8.DecodeRuneInString(before[i:]) // "\u2022Mrs": the bullet is three bytes
		word = before[i+size:]
	}
	switch strings.ToLower(word) {
	case "mr", "mister":
		return 'M'
	case "mrs", "ms", "miss":
		return 'F'
	}
	return 0
}

// listedSex is the sex whose given names hold name (any case): 'F', 'M', or 0 when both
// lists or neither hold it.
var listedSex = sync.OnceValue(func() map[string]byte {
	out := map[string]byte{}
	for sex, names := range sexedNames() {
		for _, n := range names {
			n = strings.ToLower(n)
			if other, seen := out[n]; seen && other != sex {
				out[n] = 0
			} else {
				out[n] = sex
			}
		}
	}
	return out
})

// sexFor is the sex a given name's stand-in is drawn for: in a subject's document the one
// whose list holds the name, and never a title's, so that "Mr. Zorblat" and "Zorblat" in two
// notes of one patient (or before and after a plain "Zorblat" in one stream) agree; otherwise
// the title's.
func (s *surrogates) sexFor(original string) byte {
	if s.seed != nil {
		return listedSex()[foldOriginal(original)]
	}
	return s.sexOf[original]
}

// firstName is a given name for the bearer of original: of the sex a title gave it, else any.
func (s *surrogates) firstName(dr drawer, original string) string {
	if names := sexedNames()[s.sexFor(original)]; len(names) > 0 {
		return names[dr.rng.IntN(len(names))]
	}
	return dr.fake.FirstName()
}

// saw notes an original of the document, before any stand-in of its part is drawn: a name's
// words each, whatever kind of name it was found as ("Alan Brooks" a person, "Brooks" a last
// name), so that no stand-in of any name is one of them.
func (s *surrogates) saw(k kind, original string) {
	for _, key := range originalKeys(k, original) {
		s.originals[key] = true
	}
}

// isOriginal says whether a stand-in v of kind k is, or for a name holds a word that is, an
// original the document has shown so far.
func (s *surrogates) isOriginal(k kind, v string) bool {
	for _, key := range originalKeys(k, v) {
		if s.originals[key] {
			return true
		}
	}
	return false
}

// originalKeys are the keys text is known by among the originals: a name's words under one
// kind for every name, anything else whole under its own.
func originalKeys(k kind, text string) [][2]string {
	switch k.canonical {
	case "PERSON", "FIRST_NAME", "MIDDLE_NAME", "LAST_NAME":
		var keys [][2]string
		for _, w := range strings.Fields(foldOriginal(text)) {
			keys = append(keys, [2]string{"NAME", w})
		}
		return keys
	}
	return [][2]string{{k.canonical, foldOriginal(text)}}
}

// sameOriginal says whether stand-in v would give original away: v is original however either
// is cased or written ("McClure" for "Mcclure"), or, for a name, shares a word with it. A
// subject's draws rest on this alone, since they cannot look at the document's originals.
func sameOriginal(k kind, original, v string) bool {
	keys := originalKeys(k, original)
	for _, key := range originalKeys(k, v) {
		if slices.Contains(keys, key) {
			return true
		}
	}
	return false
}

// get is original's surrogate for kind k: drawn once a document for each original however
// it is cased ("Alan", "ALAN"), and written in the case of each.
func (s *surrogates) get(label string, k kind, original string) string {
	if s.seed != nil && k.canonical == "PERSON" {
		// Derived from the subject and the name alone, word by word (each word's draw kept
		// below), in the case of this occurrence.
		return s.person(original)
	}
	key := [2]string{k.canonical, foldOriginal(original)}
	v, ok := s.drawn[key]
	if !ok {
		dr := s.doc
		if s.seed != nil {
			dr = newDrawer(rand.NewChaCha8(s.seed(k.canonical, original)))
		}
		for range 10 { // a draw that happens to be the original, or another, is drawn again
			v = s.draw(dr, label, k, original)
			if !sameOriginal(k, original, v) && (s.seed != nil || !s.isOriginal(k, v)) {
				break
			}
		}
		s.drawn[key] = v
	}
	return inCaseOf(original, v)
}

// person is a subject's stand-in for a whole name, word by word as the model labels them
// elsewhere: the first word as a given name and the last as a family name, so that "Alan
// Brooks" agrees with "Alan" and "Brooks" found apart in another note; one word is a family
// name, as "Dr. Brooks" is.
func (s *surrogates) person(original string) string {
	words := strings.Fields(original)
	if len(words) == 0 {
		return original
	}
	last := s.get("last_name", kinds["last_name"], words[len(words)-1])
	if len(words) == 1 {
		return last
	}
	return inCaseOf(original, s.get("first_name", kinds["first_name"], words[0])+" "+last)
}

// inCaseOf writes v in original's case when original is all lower case or all capitals
// ("jane doe", "DOE"), as the note wrote it; otherwise v as drawn.
func inCaseOf(original, v string) string {
	hasLetter := strings.IndexFunc(original, unicode.IsLetter) >= 0
	switch {
	case !hasLetter:
		return v
	case original == strings.ToLower(original):
		return strings.ToLower(v)
	case original == strings.ToUpper(original) && len([]rune(original)) > 1:
		return strings.ToUpper(v)
	}
	return v
}

func (s *surrogates) draw(dr drawer, label string, k kind, original string) string {
	f := dr.fake
	switch k.canonical {
	case "FIRST_NAME", "MIDDLE_NAME":
		return s.firstName(dr, original)
	case "LAST_NAME":
		return f.LastName()
	case "PERSON":
		// One word is most often the family name ("Dr. Smith", "Mr. Brooks"); more, a
		// whole name.
		if strings.Contains(strings.TrimSpace(original), " ") {
			return s.firstName(dr, original) + " " + f.LastName()
		}
		return f.LastName()
	case "LOCATION":
		if strings.EqualFold(label, "state") {
			if len(original) == 2 { // "MA": an abbreviation for an abbreviation
				return f.StateAbr()
			}
			return f.State()
		}
		return f.City()
	case "ORGANIZATION":
		return f.Company()
	case "STREET_ADDRESS":
		return f.Street()
	case "EMAIL":
		return strings.ToLower(f.FirstName()+"."+f.LastName()) + "@" + f.DomainName()
	case "URL":
		return f.URL()
	case "DATE", "DATE_OF_BIRTH":
		_, layout, ok := parseDate(original, s.lang)
		if !ok {
			layout = dateLayout{order: ymd, sep: "-"}
		}
		first := time.Date(1925, 1, 1, 0, 0, 0, 0, time.UTC)
		return layout.format(first.AddDate(0, 0, dr.rng.IntN(365*100)))
	}
	return shape(dr, original)
}

// shape keeps an identifier's form: each ASCII digit becomes a digit, each letter a letter of
// the same case, drawn from all of them, and everything else stays. A draw that left out the
// original's own character would tell it, position by position, to whoever sees enough
// surrogates of one identifier; the whole is drawn again where it comes out the original.
func shape(dr drawer, original string) string {
	var b strings.Builder
	b.Grow(len(original))
	for _, r := range original {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune('0' + rune(dr.rng.IntN(10)))
		case r >= 'a' && r <= 'z':
			b.WriteRune('a' + rune(dr.rng.IntN(26)))
		case r >= 'A' && r <= 'Z':
			b.WriteRune('A' + rune(dr.rng.IntN(26)))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune('x') // a letter or digit of another script: its form is not kept
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
