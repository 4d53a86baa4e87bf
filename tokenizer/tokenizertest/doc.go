// Package tokenizertest builds tokenizers for tests from shipped tokenizer.json files, such as
// one with a token added past its model's rows:
//
//	tok := tokenizertest.WithAddedToken(t, raw, 5000, "<extra>")
package tokenizertest
