package deid

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluice-serving/sluice/entities"
)

// MaxSubjectBytes is the longest subject id accepted.
const MaxSubjectBytes = 128

// CheckSubject says what is wrong with a subject id, if anything: it must be valid UTF-8,
// not empty, at most MaxSubjectBytes long and free of control characters. The error never
// quotes the id.
func CheckSubject(id string) error {
	switch {
	case id == "":
		return errors.New("must not be empty")
	case len(id) > MaxSubjectBytes:
		return fmt.Errorf("must be at most %d bytes, got %d", MaxSubjectBytes, len(id))
	case !utf8.ValidString(id):
		return errors.New("must be valid UTF-8")
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return errors.New("must not hold control characters")
	}
	return nil
}

// Keyed reports whether the Redactor's key was configured (Config.HashKey) rather than drawn
// for this process: only then do hashes, reversible ids and a subject's pseudonyms agree
// across processes and restarts.
func (r *Redactor) Keyed() bool { return r.keyed }

// subjectDomain separates the subject's derivations from the hash method's, which HMACs the
// bare original with the same key.
const subjectDomain = "sluice/deid/subject/v1"

// subjectMAC is HMAC-SHA256 under the Redactor's key of the domain, what, and parts, each
// length-prefixed so that no two lists of parts hash alike.
func (r *Redactor) subjectMAC(what string, parts ...string) [32]byte {
	h := hmac.New(sha256.New, r.key)
	var n [binary.MaxVarintLen64]byte
	for _, p := range append([]string{subjectDomain, what}, parts...) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// subjectDays is a subject's date shift: one of the 728 non-zero days in [-364, 364], as a
// document's drawn shift is, derived from the subject alone.
func (r *Redactor) subjectDays(subject string) int {
	sum := r.subjectMAC("date-shift", subject)
	n := int(binary.BigEndian.Uint64(sum[:8]) % 728)
	if n < 364 {
		return n - 364
	}
	return n - 363
}

// subjectSeed seeds the draw of a subject's surrogate for one original of one kind. The
// original is read as a reader would: in lower case, its spaces collapsed, so that "ALAN" and
// "Alan" get one stand-in (written in each one's case).
func (r *Redactor) subjectSeed(subject, canonical, original string) [32]byte {
	return r.subjectMAC("surrogate", subject, canonical, foldOriginal(original))
}

// foldOriginal is an original as a reader reads it: in its normal form (entities.NormalForm,
// the lists' too, so that a name written composed in one note and decomposed in another is
// one), in lower case, its spaces collapsed.
func foldOriginal(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(entities.NormalForm(s)), " "))
}
