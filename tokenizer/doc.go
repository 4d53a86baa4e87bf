// Package tokenizer turns text into model token ids the way HuggingFace's tokenizers library does.
// It holds two families, WordPiece (BERT, DistilBERT, ELECTRA) and byte-level BPE (GPT-2,
// RoBERTa, Longformer, ModernBERT): it loads a HuggingFace tokenizer.json and produces the
// same ids, byte offsets, word ids and special-token mask as HuggingFace's own (Rust)
// tokenizers library, including on
// non-ASCII text, emoji, CJK, control characters and special tokens typed in the input.
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
// Supported tokenizer.json: normalizer BertNormalizer, Sequence of BertNormalizer, NFD,
// NFC, Lowercase and StripAccents, or null; pre_tokenizer BertPreTokenizer or ByteLevel;
// model WordPiece (with BertPreTokenizer) or BPE (with ByteLevel); post_processor
// TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel or null; decoder
// WordPiece, ByteLevel or null.
// Anything else fails Load with an error naming the unsupported type. Truncation is
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
// A Tokenizer is immutable after Load and safe for concurrent use; Encode keeps its
// working buffers in a sync.Pool, so steady-state encoding only allocates the result.
//
// Conformance: testdata/golden/*.jsonl hold HF's output for 1,100 to 2,500 generated texts
// per tokenizer file (testdata/SOURCES.md says where each file comes from) and are checked by the tests; testdata/gen_golden.js regenerates them or
// adds one for a shipped tokenizer.json.
package tokenizer
