// Package tokenizer turns text into model token ids the way HuggingFace's tokenizers library does.
// It holds four families, WordPiece (BERT, DistilBERT, ELECTRA), byte-level BPE (GPT-2,
// RoBERTa, Longformer, ModernBERT), SentencePiece Unigram (DeBERTa-v3, XLM-RoBERTa, ALBERT,
// T5) and SentencePiece BPE (Llama, Mistral, Gemma): it loads a HuggingFace tokenizer.json
// and produces the same ids, byte offsets, word ids and special-token mask as HuggingFace's
// own (Rust) tokenizers library, including on non-ASCII text, emoji, CJK, control
// characters and special tokens typed in the input.
// Offsets are what entity extraction maps predictions back to text with, so they must
// point at the caller's original bytes, not at the normalized text.
//
// How it works. Encode follows HF's pipeline step by step:
//
//  1. Added tokens (tokenizer.json "added_tokens", e.g. [CLS]) that are not normalized are
//     found in the raw text, leftmost-longest, honouring single_word/lstrip/rstrip.
//  2. Each stretch between them is normalized (BertNormalizer: clean_text,
//     handle_chinese_chars, strip_accents, lowercase; or a Sequence of NFD, Lowercase,
//     StripAccents). Every normalized character carries the byte range of the original
//     text it came from, assigned exactly as HF's NormalizedString does, including for
//     decomposed, reordered, removed and multi-character-lowercased characters.
//  3. Normalized added tokens are found in the normalized text.
//  4. BertPreTokenizer splits on whitespace and isolates each punctuation character.
//  5. WordPiece encodes each word greedily, longest match first, continuation pieces
//     spelled with the prefix ("##"); words it cannot cover, or longer than
//     max_input_chars_per_word characters, become a single unknown token.
//  6. With special tokens requested, the post-processor's template (TemplateProcessing
//     single template, or BertProcessing) wraps the sequence; those tokens have offsets
//     [0, 0], word id -1 and Special set.
//
// HF takes its character classes from Rust crates pinned to several different Unicode
// versions, so Go's unicode package disagrees with it on hundreds of code points. The
// classes used here (tables.go) were measured from HF itself by testdata/gen_tables.js.
//
// Byte-level BPE replaces steps 4 and 5: the ByteLevel pre-tokenizer splits with GPT-2's
// regex (optionally after a prefix space) and spells each byte as a printable stand-in;
// BPE applies the merges by rank (a heap for long words), with continuing_subword_prefix,
// end_of_word_suffix, ignore_merges, unk_token and fuse_unk as the file sets them; the
// post-processor (RobertaProcessing or ByteLevel) trims spaces off offsets as HF does.
//
// SentencePiece Unigram replaces steps 2, 4 and 5. The Precompiled normalizer carries
// SentencePiece's compiled rules (precompiled_charsmap: a double-array trie over UTF-8 and
// the replacement strings) and is applied as HF applies it, which is not quite as
// SentencePiece does: the text is cut into grapheme clusters; a cluster under 6 bytes whose
// beginning has a rule is replaced whole by that rule's output (full-width "Ａ" plus a
// combining accent becomes "A"), other clusters go character by character; a character a
// rule deletes takes its removal from the previous output character, and at the very start
// the removal is lost, which shifts the offsets of what follows by one character, as in HF.
// Strip, Replace (a literal or a regex, usually " {2,}" to " ") and Prepend may surround it.
// Metaspace turns spaces into "▁", prepends one (prepend_scheme always, first: only to text
// that starts the input, never; legacy add_prefix_space), and with split starts a word at
// every "▁". Unigram then finds the segmentation with the highest total score (Viterbi over
// the vocab's pieces, ties to the earlier start), scores a character no piece covers at the
// lowest vocab score minus 10 as the unk token, fuses neighbouring unknowns into one token,
// and with byte_fallback spells an unknown piece as <0xXX> tokens that all carry its offsets.
// Scores are parsed as serde_json parses them (not always correctly rounded), because near
// ties between segmentations are decided by the last bit. The Metaspace decoder turns "▁"
// back into spaces and drops them from the first token when the pre-tokenizer prepends.
// RobertaProcessing trims offsets only around whitespace and 'Ġ', so with "▁" pieces it
// changes only added tokens that lstrip or rstrip took spaces into.
//
// SentencePiece BPE (Llama-style files) runs the BPE merges on characters instead of
// stand-in bytes: its normalizer prepends "▁" and turns spaces into "▁" (Prepend, Replace),
// there is no pre-tokenizer (each stretch of text between added tokens is one word) or a
// Metaspace one, and with byte_fallback a character missing from the vocab becomes its
// <0xXX> tokens, each spanning the whole character. Its decoder is a Sequence of Replace
// ("▁" to " "), ByteFallback (runs of byte tokens back to text, U+FFFD per byte when they
// are not UTF-8), Fuse and Strip (the leading space).
//
// A pre_tokenizer Sequence, and the splitting pre-tokenizers Whitespace, WhitespaceSplit,
// CharDelimiterSplit, Punctuation, Digits and Split, run as a pipeline: each stage splits
// every piece the one before left (matches removed, isolated, merged with the previous or
// next piece, or contiguous ones joined, as the behavior says; Split may invert its
// pattern), Metaspace may be a stage, and each final piece is a word for whichever model
// follows. Digits uses Rust's is_numeric and
// Whitespace the \w and \s of HF's regex engine, both measured from HF (tables_digits.go and
// tables_whitespace.go, by testdata/gen_digit_tables.js and gen_whitespace_tables.js);
// Split's and Replace's regexes run on Go's RE2 with \s, \p{L} and \p{N} (and their
// complements outside brackets) rewritten to the classes measured from HF (regex.go), and
// the one look-ahead tokenizers use, GPT-4's closing `\s+(?!\S)|\s+` (Llama-3, Qwen,
// DeepSeek), emulated (Llama-3's and Qwen's whole patterns are run by hand, gpt4SplitEnd); the look-ahead elsewhere, other look-arounds, and \w, \b and POSIX
// classes, whose Unicode meaning in HF's engine is not measured here, fail Load. \d and
// other Unicode properties (\p{Lu}, \p{M}, \p{P}, ...) are Go's Unicode 15 tables, so
// characters new in Unicode 16 can split differently than HF. A ByteLevel without its regex may end a
// Sequence, as in Llama-3's and Qwen's files: the byte-level BPE model spells the pieces.
//
// NFKD and NFKC work as NFD and NFC do, alignments included, with the compatibility
// decompositions measured from HF (tables_compat.go, by testdata/gen_compat_tables.js).
//
// Supported tokenizer.json: normalizer BertNormalizer, NFD, NFC, NFKD, NFKC, Lowercase,
// StripAccents, Precompiled, Replace, Strip, Prepend, a Sequence of those, or null; pre_tokenizer
// BertPreTokenizer, ByteLevel (alone, or last in a Sequence without its regex), Metaspace,
// Whitespace, WhitespaceSplit, CharDelimiterSplit, Punctuation, Digits, Split, a Sequence of
// them, or null (BPE and Unigram); model WordPiece (not after ByteLevel or a
// lone Metaspace), BPE (byte-level after ByteLevel; on characters otherwise, byte_fallback
// allowed) or Unigram (not after BertPreTokenizer or ByteLevel; unk_id set); post_processor
// TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, a Sequence of them or
// null; decoder
// WordPiece, ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, a Sequence of them,
// or null. Anything else fails Load with an error naming the unsupported type. Truncation is
// ignored (callers window long texts); the padding section only supplies PadID.
//
// Usage:
//
//	tok, err := tokenizer.Load(tokenizerJSON)
//	if err != nil { ... }
//	enc := tok.Encode(text, true) // enc.IDs, enc.Offsets (bytes into text), enc.WordIDs
//	prefix, suffix := tok.Template() // to wrap windows of a long text yourself
//	text := tok.Decode(ids, true)
//
// SubwordPrefix reports the model's continuing_subword_prefix ("##" for WordPiece, "" for
// Unigram and byte-level or SentencePiece BPE), which tells callers whether word boundaries
// can be read from the tokens themselves, as HF's token-classification pipeline decides.
//
// A Tokenizer is immutable after Load and safe for concurrent use; Encode keeps its
// working buffers in a sync.Pool, so steady-state encoding only allocates the result.
//
// Conformance: testdata/golden/*.jsonl.gz hold HF's output for 1,100 to 4,500 generated texts
// per tokenizer file (testdata/SOURCES.md says where each file comes from) and are checked
// by the tests; testdata/gen_golden.js regenerates them or adds one for a shipped
// tokenizer.json.
package tokenizer
