// Package entities is the post-processing of token-classification models (clinical NER
// on /analyze, PII on /pii/extract): it cuts long texts into model-sized windows, merges
// the windows' logits back into one row per token, and turns logits into entities with
// HuggingFace TokenClassificationPipeline's rules plus OpenMed's REST options.
//
// # How to use it
//
//	dec, err := entities.NewDecoder(entities.DecoderConfig{ID2Label: labels, UnknownID: -1})
//	enc := tok.Encode(text, false)                       // content tokens, no specials
//	budget, _ := entities.ContentBudget(128, len(prefix), len(suffix))
//	wins, _ := entities.PlanWordWindows(enc.WordIDs, budget, 32)
//	rows, _ := entities.BuildRows(enc.IDs, wins, prefix, suffix, padID, 0)
//	// run the model on rows.InputIDs / rows.AttentionMask, shape [rows.Count, rows.Width]
//	logits, _ := entities.MergeLogits(wins, len(enc.IDs), out, rows.Width, len(prefix), dec.NumLabels())
//	toks := entities.Tokens(enc)                         // same fields as tokenizer.Encoding
//	ents, _ := dec.Extract(text, toks, logits, entities.AnalyzeOptions()) // or PIIOptions()
//	spans := entities.CodePointSpans(text, ents)          // start/end for Python clients
//
// Entity is the one PII (or clinical) span of the module: a label, byte offsets into a text,
// a score. Extraction returns it, and de-identification (deid), the privacy gateway and the
// window-by-window streams (spanstream) take it as it is.
//
// Everything is pure computation over its arguments: no state, no clock, no context
// needed. A Decoder is immutable and shared by all requests of a model.
//
// # Semantics chosen, and where they differ
//
// Sources read: transformers src/transformers/pipelines/token_classification.py
// (gather_pre_entities, aggregate, aggregate_word(s), group_entities, get_tag); OpenMed
// openmed/__init__.py (analyze_text), openmed/processing/outputs.py (OutputFormatter:
// threshold, span fix, _group_adjacent_entities), openmed/core/pii.py (extract_pii,
// _apply_pii_smart_merging), openmed/core/pii_entity_merger.py (patterns and
// merge_entities_with_semantic_units), openmed/core/anonymizer/providers/clinical_ids.py
// (validators), openmed/interop/tools.py (REST defaults).
//
// Matching HF: softmax with max subtraction; argmax takes the first of equal maxima;
// "none" keeps full labels and filters them against the ignore list; "simple" groups
// tokens; "first", "average" (mean of probability vectors, then argmax) and "max" (the
// token with the highest top probability) fuse subwords into words first; grouping starts
// a new entity on a B- label or a tag change; the entity score is the mean of its tokens'
// or words' scores; ignored labels ("O") are dropped after grouping.
//
// Decode's "none" keeps HF's full labels ("B-DRUG"). OpenMed's /analyze offers it as an
// aggregation_strategy of null, and its formatter then takes the B-/I- prefix off every label
// ("DRUG"), as Extract and PostProcess do with StrategyNone.
//
// Differences from HF, and why:
//   - Word boundaries come from the tokenizer's word ids: a token continues a word when it
//     has its predecessor's word id. HF decides the same thing for WordPiece by comparing
//     the token's length with its text's length, which agrees for ordinary text but
//     misfires when normalisation changes a word's length (decomposed accents). Without
//     word ids we fall back to HF's own heuristic for word-unaware tokenizers.
//   - A grouped label is the label minus its "B-"/"I-" prefix. HF takes the text after
//     the LAST hyphen, which turns "B-DATE-TIME" into "TIME"; we keep "DATE-TIME".
//   - Long texts: HF with stride decodes each chunk and keeps the longest of overlapping
//     entities; OpenMed groups sentences into chunks and lets the pipeline truncate
//     each chunk at the model's maximum length, losing what lies past it. We window
//     with overlap and take every token's logits from the window where it has
//     most context (the farthest from a window edge that cuts the text), then decode the
//     whole text once, so an entity across a window border comes out whole. A text is
//     first cut into documents at blank lines (Documents): no window holds two, and each
//     is decoded on its own, so a note gives the same spans alone as after other notes.
//   - Non-finite logits are an error instead of NaN scores.
//   - Offsets are bytes internally; CodePointSpans gives the code point offsets Python
//     clients expect.
//   - Spans are snapped to whole UTF-8 characters and trimmed of Unicode whitespace, and
//     an entity with an empty span is dropped (OpenMed trims too; HF does not need to).
//
// Models trained with a linear-chain CRF (the shipped ones; DecoderConfig.Transitions, read
// from config.json's sluice.crf_transitions) are decoded by the CRF instead of token by
// token: labels are the Viterbi path, with one transition matrix between tokens that
// touch, one across a line break or tab and one across any other gap, from O to O, and
// scores are the CRF's marginal probabilities (forward-backward). That is how the recipe
// measures them. It keeps the pieces of a phone number or an e-mail in one entity of one
// type where per-token argmax splits them, and two list items, one per line, apart. The
// strategies then work on those labels and probabilities. HF has no CRF; a model without
// transitions is decoded exactly as above.
//
// OpenMed options (Options, AnalyzeOptions, PIIOptions): the confidence threshold drops
// entities scoring below it before grouping; ExtendToWordEnd is OpenMed's span fix (an
// end inside a word runs on over letters, marks and digits, at most 10 code points),
// which OpenMed always applies; GroupEntities merges same-label neighbours at most two
// code points apart, with no line break between them, into one entity with the mean
// score, widened to whole words; smart merging (PII) re-cuts entities on regex "semantic
// units" (dates, SSNs, phone numbers, e-mails...) with a dominant label and a blended score,
// see SmartMerge. Differences: OpenMed groups only within one pySBD sentence and runs the
// model per sentence chunk; we do no sentence detection, so grouping may cross a sentence
// end that is at most two code points away on one line (never a line break: the items of a
// list stay apart). OpenMed's extract_pii strips the input text first and reports
// offsets into the stripped text; here offsets are always into the text passed in, and
// what text to pass is the caller's choice. OpenMed's later PII steps (clinical-term
// protection, safety sweep) are not part of this package. Go's regexp treats \d, \s and \b as ASCII where Python's are Unicode,
// so the PII patterns do not match non-ASCII digits or spaces, and a match glued to a
// non-ASCII letter is still found. The BIC country list is ISO 3166-1 plus XK. Besides
// OpenMed's English set, German, French, Spanish, Italian, Portuguese and Dutch have patterns
// of their own (LanguagePIIPatterns, PIIOptionsFor; langpatterns.go says what they hold).
//
// A request's allow and deny lists (Lists, NewLists) are applied after every detector:
// Apply drops the spans that stand wholly in allowed terms and adds a DenyLabel span where a
// deny term stands, matched as whole words in any case and any Unicode form (NormalForm).
package entities
