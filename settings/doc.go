// Package settings is how every package of Sluice reports a configuration it cannot accept.
//
// A package's Validate (or constructor) checks every field at once and returns the problems
// joined (errors.Join), one *Problem per bad field, so that an operator fixes them all in one
// go. A Problem names the package, the field as the package spells it ("MaxBatchSize",
// "Weights[bulk]", "Limits.RequestTimeout") and what is wrong with which value, without the
// field's name, so that a caller that knows the field by another name (cmd/serve knows each by
// its environment variable) puts its own name in front of the same text.
//
//	func (c Config) Validate() error {
//		check := settings.For("batcher")
//		if c.Workers < 1 {
//			check.Addf("Workers", "must be at least 1, got %d", c.Workers)
//		}
//		return check.Err()
//	}
//
//	for _, p := range settings.Problems(err) { ... p.Field, p.Text ... }
//
// Nearest suggests the known name closest to a misspelt one, for the caller that refuses a
// name it does not know.
package settings
