package tokenizer

// SubwordPrefix is the spelling that marks a token continuing a word ("##" in WordPiece
// vocabularies), or "" when the model has none: byte-level BPE, which marks word starts
// instead, and SentencePiece models. HF's token-classification pipeline trusts a tokenizer's
// word boundaries only when it has such a prefix and otherwise guesses them from spaces;
// callers that must agree with it read this.
func (t *Tokenizer) SubwordPrefix() string {
	switch {
	case t.bpe != nil:
		return t.bpe.prefix
	case t.unigram != nil:
		return ""
	}
	return t.model.prefix
}

// UnknownID is the id of the model's unknown token, and false when it has none (byte-level
// BPE usually does not: every byte is in its vocabulary).
func (t *Tokenizer) UnknownID() (int64, bool) {
	switch {
	case t.bpe != nil:
		return t.bpe.unkID, t.bpe.unkID >= 0
	case t.unigram != nil:
		return t.unigram.unkID, true
	}
	return t.model.unkID, true
}
