package deid

import (
	_ "embed"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/brianvoe/gofakeit/v7"
)

// surrogates draws the replacements of one document: the same original of the same kind
// gets the same surrogate, and a surrogate is never its original.
type surrogates struct {
	rng   *rand.Rand
	fake  *gofakeit.Faker
	lang  string
	drawn map[[2]string]string
	// sexOf is what a title says of the bearer of a name ('F' or 'M'), by the name as written.
	sexOf map[string]byte
}

func newSurrogates(src *rand.ChaCha8, lang string) *surrogates {
	return &surrogates{rng: rand.New(src), fake: gofakeit.NewFaker(src, false), lang: lang, drawn: map[[2]string]string{},
		sexOf: map[string]byte{}}
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
	before = strings.TrimRight(before, " ")
	before = strings.TrimSuffix(before, ".")
	i := strings.LastIndexFunc(before, func(r rune) bool { return !unicode.IsLetter(r) })
	switch strings.ToLower(before[i+1:]) {
	case "mr", "mister":
		return 'M'
	case "mrs", "ms", "miss":
		return 'F'
	}
	return 0
}

// firstName is a given name for the bearer of original: of the sex a title gave it, else any.
func (s *surrogates) firstName(original string) string {
	if names := sexedNames()[s.sexOf[original]]; len(names) > 0 {
		return names[s.rng.IntN(len(names))]
	}
	return s.fake.FirstName()
}

func (s *surrogates) get(label string, k kind, original string) string {
	key := [2]string{k.canonical, original}
	if v, ok := s.drawn[key]; ok {
		return v
	}
	var v string
	for range 10 { // a draw that happens to equal the original is drawn again
		if v = inCaseOf(original, s.draw(label, k, original)); v != original {
			break
		}
	}
	s.drawn[key] = v
	return v
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

func (s *surrogates) draw(label string, k kind, original string) string {
	f := s.fake
	switch k.canonical {
	case "FIRST_NAME", "MIDDLE_NAME":
		return s.firstName(original)
	case "LAST_NAME":
		return f.LastName()
	case "PERSON":
		// One word is most often the family name ("Dr. Smith", "Mr. Brooks"); more, a
		// whole name.
		if strings.Contains(strings.TrimSpace(original), " ") {
			return s.firstName(original) + " " + f.LastName()
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
		return layout.format(first.AddDate(0, 0, s.rng.IntN(365*100)))
	}
	return s.shape(original)
}

// shape keeps an identifier's form: each ASCII digit becomes another digit, each letter
// another letter of the same case, and everything else stays.
func (s *surrogates) shape(original string) string {
	var b strings.Builder
	b.Grow(len(original))
	for _, r := range original {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune('0' + (r-'0'+1+rune(s.rng.IntN(9)))%10)
		case r >= 'a' && r <= 'z':
			b.WriteRune('a' + (r-'a'+1+rune(s.rng.IntN(25)))%26)
		case r >= 'A' && r <= 'Z':
			b.WriteRune('A' + (r-'A'+1+rune(s.rng.IntN(25)))%26)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune('x') // a letter or digit of another script: its form is not kept
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
