package handlers

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/entities"
)

// A PII request's lang (OpenMed's field: a language code, read trimmed and in lower case,
// "en" when absent) chooses the identifier patterns the model's spans are merged with and the
// safety sweep runs, the day/month order de-identification reads numeric dates in, and the
// language the answer reports. It may also choose the model: a request that names no model
// and whose lang is not "en" is served by the language's own model, langModelPrefix + lang
// ("pii-fr"), when the PII endpoint serves one of that name or the models directory
// (SLUICE_MODELS_DIR) holds one; otherwise by the endpoint's default model with the language's
// patterns. A language Sluice has no patterns for (entities.PIILanguages) is served only by
// its own model, chosen so or named (model_name "pii-ja"), with the patterns every language
// shares: another model would miss its identifiers in silence. Otherwise the request is a 422
// on body.lang naming the languages served.

// langModelPrefix begins the name of a language's own PII model: "pii-" + its code.
const langModelPrefix = "pii-"

// langCodeShape is what a language code must look like to name a model directory: ISO 639,
// two or three letters.
var langCodeShape = regexp.MustCompile(`^[a-z]{2,3}$`)

// langCode is a request's lang as OpenMed reads it.
func langCode(lang *string) string {
	if lang == nil {
		return "en"
	}
	return strings.ToLower(strings.TrimSpace(*lang))
}

// otherLanguages are the PII options of each language with patterns of its own but English
// (the server's piiDefaults), and, under "", of a language without: built once, shared
// read-only by every request as piiDefaults is.
var otherLanguages = func() map[string]entities.Options {
	m := map[string]entities.Options{}
	for _, code := range append(entities.PIILanguages(), "") {
		if code != "en" {
			m[code], _ = entities.PIIOptionsFor(code)
		}
	}
	return m
}()

// langOptions are the PII defaults for a language code, and whether Sluice has patterns for
// it (without, only the patterns every language shares).
func (s *server) langOptions(code string) (entities.Options, bool) {
	if code == "en" {
		return s.piiDefaults, true
	}
	if opts, ok := otherLanguages[code]; ok && code != "" {
		return opts, true
	}
	return otherLanguages[""], false
}

// sweepFor is the patterns the safety sweep runs for a language: its own, whatever the
// request said about smart merging.
func (s *server) sweepFor(code string) *entities.SmartMergeConfig {
	opts, _ := s.langOptions(code)
	return opts.SmartMerge
}

// unservedLang is the 422 of a language nothing serves. The code is not repeated: the list of
// what is served says enough.
func unservedLang(pool bool) *FieldError {
	msg := "Value error, unsupported language code; served: " + strings.Join(entities.PIILanguages(), ", ")
	if pool {
		msg += ", and any other whose own model, " + langModelPrefix + "<code>, is in the models directory"
	}
	return &FieldError{Field: "body.lang", Type: "value_error", Message: msg}
}

// modelChoice is the model a PII request gets, once its model_name and lang are read.
type modelChoice struct {
	ex       Extractor // the endpoint's model; nil when only a pool's serves the request
	reported string    // the model_name answered
	pooled   string    // the pool's model to lend, tried before ex
	// byLang: pooled is the language's own model, chosen by lang and not named. When the pool
	// has none, ex serves the request as reported; without ex the language is not served.
	byLang bool
}

// resolveLang is resolve with the language's own model chosen for a request that names none
// (lang "", as /analyze has, or "en": never). A language without Sluice's patterns is served
// only by its own model, chosen or named.
func (e *Endpoint) resolveLang(name *string, lang string, pool bool) (modelChoice, *FieldError) {
	own := langModelPrefix + lang
	byLang := lang != "" && lang != "en" && langCodeShape.MatchString(lang)
	patterns := !byLang || slices.Contains(entities.PIILanguages(), lang)
	if name != nil || !byLang {
		ex, reported, pooled, ferr := e.resolve(name, pool)
		if ferr == nil && !patterns && strings.TrimSpace(*name) != own {
			ferr = unservedLang(pool)
		}
		return modelChoice{ex: ex, reported: reported, pooled: pooled}, ferr
	}
	if ex, ok := e.Models[own]; ok {
		return modelChoice{ex: ex, reported: own}, nil
	}
	ch := modelChoice{reported: e.Default}
	if patterns {
		ch.ex = e.Models[e.Default]
	}
	if pool {
		ch.pooled, ch.byLang = own, true
		return ch, nil
	}
	if ch.ex == nil {
		return ch, unservedLang(false)
	}
	return ch, nil
}

// lendChoice is lend for a modelChoice; it sets ch.reported to the model that serves.
func (s *server) lendChoice(c *fiber.Ctx, x *exchange, ch *modelChoice, keepAlive json.RawMessage) (Extractor, func(), error) {
	if !ch.byLang {
		return s.lend(c, x, ch.ex, ch.pooled, keepAlive)
	}
	model, release, err := s.borrow(c, x, ch.pooled, keepAlive)
	switch {
	case err == nil:
		ch.reported = ch.pooled
		return model, release, nil
	case !errors.Is(err, ErrModelUnknown):
		return nil, nil, err
	case ch.ex != nil:
		return ch.ex, func() {}, nil
	default:
		return nil, nil, validationError(*unservedLang(true))
	}
}
