package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The pre-tokenizers below run as a pipeline, as HF's Sequence runs them: each stage splits
// every piece the previous one produced (Metaspace also rewrites it), and each final piece
// is one word. Single BertPreTokenizer, ByteLevel and Metaspace pre-tokenizers keep their
// direct paths; the pipeline serves Sequences and the splitting pre-tokenizers.

type stageKind uint8

const (
	stageWhitespaceSplit stageKind = iota + 1 // split on whitespace, dropping it
	stagePunctuation                          // split around punctuation, per behavior
	stageDigits                               // split around digits, per behavior
	stageSplit                                // split around a literal or regex, per behavior
	stageMetaspace                            // Metaspace
	stageWhitespace                           // Whitespace: runs of \w, runs of [^\w\s]
	stageCharDelimiter                        // CharDelimiterSplit: split on one character, dropping it
	stageByteLevel                            // ByteLevel without its regex: only spells bytes (see byteLevelLast)
)

// splitBehavior is HF's SplitDelimiterBehavior: what becomes of the matches of a split.
type splitBehavior uint8

const (
	behaviorRemoved splitBehavior = iota
	behaviorIsolated
	behaviorMergedWithPrevious
	behaviorMergedWithNext
	behaviorContiguous
)

type preStage struct {
	kind     stageKind
	behavior splitBehavior
	literal  string
	re       *hfRegex
	gpt4     int // GPT-4's split pattern, run by gpt4SplitEnd: its \p{N} run limit (0: not it)
	invert   bool
	meta     *metaspacePre
	delim    rune
}

// span is a piece of a pipeline buffer: chars [lo, hi).
type span struct{ lo, hi int32 }

// pmatch is a stretch of one piece that a split pattern matched or did not.
type pmatch struct {
	lo, hi int32
	match  bool
}

// parseBehavior reads a split's behavior; def stands in for one the file leaves out.
func parseBehavior(s *string, def splitBehavior, what string) (splitBehavior, error) {
	if s == nil {
		return def, nil
	}
	switch *s {
	case "Removed":
		return behaviorRemoved, nil
	case "Isolated":
		return behaviorIsolated, nil
	case "MergedWithPrevious":
		return behaviorMergedWithPrevious, nil
	case "MergedWithNext":
		return behaviorMergedWithNext, nil
	case "Contiguous":
		return behaviorContiguous, nil
	}
	return 0, fmt.Errorf("tokenizer: %s behavior %q is not supported", what, *s)
}

// parsePreTokenizer reads the pre_tokenizer section. BertPreTokenizer, ByteLevel and
// Metaspace alone keep their direct paths; the other pre-tokenizers run as a pipeline.
func (t *Tokenizer) parsePreTokenizer(raw json.RawMessage) error {
	if isNull(raw) {
		// Only SentencePiece BPE (Llama) does without; parseModel refuses it for the rest.
		t.noPreTokenizer = true
		return nil
	}
	typ, err := componentType(raw, "pre_tokenizer")
	if err != nil {
		return err
	}
	switch {
	case typ == "BertPreTokenizer":
		return nil
	case typ == "Metaspace":
		return t.parseMetaspacePre(raw)
	case typ == "ByteLevel":
		return t.parseByteLevelPre(raw)
	case typ == "Sequence":
		return t.parseSequencePre(raw)
	case stageParser(typ) != nil:
		return t.parseStages(raw)
	}
	return unsupported("pre_tokenizer", typ, supportedPreTokenizers)
}

// parseSequencePre reads a pre_tokenizer Sequence. Converters wrap a single pre-tokenizer
// in one (DeBERTa-v3's Metaspace), which then keeps its direct path.
func (t *Tokenizer) parseSequencePre(raw json.RawMessage) error {
	var seq struct {
		PreTokenizers []json.RawMessage `json:"pretokenizers"`
	}
	if err := json.Unmarshal(raw, &seq); err != nil {
		return fmt.Errorf("tokenizer: invalid Sequence pre_tokenizer: %w", err)
	}
	if len(seq.PreTokenizers) == 1 {
		return t.parsePreTokenizer(seq.PreTokenizers[0])
	}
	return t.parseStages(raw)
}

// parseStages reads the pre_tokenizer section as a pipeline.
func (t *Tokenizer) parseStages(raw json.RawMessage) error {
	stages, err := parseStages(raw)
	if err != nil {
		return err
	}
	if n := len(stages); n > 0 && stages[n-1].kind == stageByteLevel {
		// Llama-3 and Qwen split with their own regex, then hand each piece to a ByteLevel
		// that only spells its bytes: the byte-level BPE model does that spelling.
		stages, t.byteLevelLast = stages[:n-1], true
		if len(stages) == 0 {
			t.byteLevel = &byteLevelPre{}
			return nil
		}
	}
	for _, st := range stages {
		if st.kind == stageByteLevel {
			return errors.New("tokenizer: pre_tokenizer ByteLevel in a Sequence is supported only as its last step")
		}
	}
	if len(stages) == 0 {
		// An empty Sequence leaves each stretch of text whole.
		t.noPreTokenizer = true
		return nil
	}
	t.stages = stages
	return nil
}

// stageJSON holds the fields of every pipeline pre-tokenizer. Each stage is read with all
// of them, so that a mistyped field fails any stage, as it always has. It aliases an
// unnamed struct because encoding/json would name a named one in its errors.
type stageJSON = struct {
	PreTokenizers    []json.RawMessage `json:"pretokenizers"`
	Behavior         *string           `json:"behavior"`
	IndividualDigits bool              `json:"individual_digits"`
	Invert           bool              `json:"invert"`
	Pattern          struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	} `json:"pattern"`
}

// parseStages reads a pre-tokenizer as pipeline stages.
func parseStages(raw json.RawMessage) ([]preStage, error) {
	typ, err := componentType(raw, "pre_tokenizer")
	if err != nil {
		return nil, err
	}
	var j stageJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid %s pre_tokenizer: %w", typ, err)
	}
	parse := stageParser(typ)
	if parse == nil {
		return nil, unsupported("pre_tokenizer", typ, supportedPreTokenizers)
	}
	return parse(raw, &j)
}

// stageParser returns the parse of a pre-tokenizer type as pipeline stages, or nil when it
// is not supported.
func stageParser(typ string) func(json.RawMessage, *stageJSON) ([]preStage, error) {
	switch typ {
	case "Sequence":
		return parseSequenceStages
	case "BertPreTokenizer":
		return fixedStages(preStage{kind: stageWhitespaceSplit},
			preStage{kind: stagePunctuation, behavior: behaviorIsolated})
	case "WhitespaceSplit":
		return fixedStages(preStage{kind: stageWhitespaceSplit})
	case "Punctuation":
		return parsePunctuationStage
	case "Digits":
		return parseDigitsStage
	case "Split":
		return parseSplitStage
	case "Whitespace":
		return fixedStages(preStage{kind: stageWhitespace})
	case "CharDelimiterSplit":
		return parseCharDelimiterStage
	case "Metaspace":
		return parseMetaspaceStage
	case "ByteLevel":
		return parseByteLevelStage
	}
	return nil
}

// fixedStages is the parse of a pre-tokenizer without settings of its own.
func fixedStages(stages ...preStage) func(json.RawMessage, *stageJSON) ([]preStage, error) {
	return func(json.RawMessage, *stageJSON) ([]preStage, error) { return stages, nil }
}

// parseSequenceStages reads HF's Sequence pre-tokenizer: its pre-tokenizers' stages in order.
func parseSequenceStages(_ json.RawMessage, j *stageJSON) ([]preStage, error) {
	var stages []preStage
	for _, sub := range j.PreTokenizers {
		part, err := parseStages(sub)
		if err != nil {
			return nil, err
		}
		stages = append(stages, part...)
	}
	return stages, nil
}

// parsePunctuationStage reads HF's Punctuation pre-tokenizer.
func parsePunctuationStage(_ json.RawMessage, j *stageJSON) ([]preStage, error) {
	b, err := parseBehavior(j.Behavior, behaviorIsolated, "Punctuation")
	if err != nil {
		return nil, err
	}
	return []preStage{{kind: stagePunctuation, behavior: b}}, nil
}

// parseDigitsStage reads HF's Digits pre-tokenizer.
func parseDigitsStage(_ json.RawMessage, j *stageJSON) ([]preStage, error) {
	b := behaviorContiguous
	if j.IndividualDigits {
		b = behaviorIsolated
	}
	return []preStage{{kind: stageDigits, behavior: b}}, nil
}

// parseSplitStage reads HF's Split pre-tokenizer. GPT-4's split patterns run by hand
// (gpt4SplitEnd), other regexes on Go's RE2 after compileHFRegex.
func parseSplitStage(_ json.RawMessage, j *stageJSON) ([]preStage, error) {
	b, err := parseBehavior(j.Behavior, behaviorRemoved, "Split")
	if err != nil {
		return nil, err
	}
	st := preStage{kind: stageSplit, behavior: b, invert: j.Invert}
	switch {
	case j.Pattern.String != nil:
		st.literal = *j.Pattern.String
	case j.Pattern.Regex != nil && gpt4Patterns[*j.Pattern.Regex] > 0:
		st.gpt4 = gpt4Patterns[*j.Pattern.Regex]
	case j.Pattern.Regex != nil:
		re, err := compileHFRegex(*j.Pattern.Regex)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: Split pre_tokenizer regex is not supported: %w", err)
		}
		st.re = re
	default:
		return nil, fmt.Errorf("tokenizer: Split pre_tokenizer pattern must be String or Regex")
	}
	return []preStage{st}, nil
}

// parseCharDelimiterStage reads HF's CharDelimiterSplit pre-tokenizer.
func parseCharDelimiterStage(raw json.RawMessage, _ *stageJSON) ([]preStage, error) {
	var d struct {
		Delimiter string `json:"delimiter"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid CharDelimiterSplit pre_tokenizer: %w", err)
	}
	r, size := utf8.DecodeRuneInString(d.Delimiter)
	if size == 0 || size != len(d.Delimiter) {
		return nil, fmt.Errorf("tokenizer: CharDelimiterSplit delimiter must be one character")
	}
	return []preStage{{kind: stageCharDelimiter, delim: r}}, nil
}

const (
	wsOther = iota
	wsWord
	wsSpace
)

// wsClass is the class of r in the Whitespace pre-tokenizer's regex, as measured from HF
// (tables_whitespace.go).
func wsClass(r rune) int {
	if r < 128 {
		switch {
		case r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'):
			return wsWord
		case r == ' ' || ('\t' <= r && r <= '\r'):
			return wsSpace
		}
		return wsOther
	}
	switch {
	case inTable(wsWordTable, r):
		return wsWord
	case inTable(wsSpaceTable, r):
		return wsSpace
	}
	return wsOther
}

// isDigit is Rust's char::is_numeric, which HF's Digits pre-tokenizer splits on, as
// measured from HF (tables_digits.go).
func isDigit(r rune) bool {
	if r < 128 {
		return '0' <= r && r <= '9'
	}
	return inTable(numericTable, r)
}

// stagedWords runs the pipeline on one stretch of normalized text and encodes each final
// piece as a word.
func (t *Tokenizer) stagedWords(enc *tokens, s *scratch, chars []nchar, word *int) {
	cur := append(s.stageA[:0], chars...)
	spans := append(s.spansA[:0], span{0, int32(len(chars))})
	next, nextSpans := s.stageB[:0], s.spansB[:0]
	for i := range t.stages {
		st := &t.stages[i]
		next, nextSpans = next[:0], nextSpans[:0]
		for _, sp := range spans {
			next, nextSpans = st.run(s, next, nextSpans, cur[sp.lo:sp.hi])
		}
		cur, next = next, cur
		spans, nextSpans = nextSpans, spans
	}
	s.stageA, s.stageB, s.spansA, s.spansB = cur, next, spans, nextSpans
	for _, sp := range spans {
		if sp.hi > sp.lo {
			t.wordModel.encodeWord(enc, s, cur[sp.lo:sp.hi], *word)
			*word++
		}
	}
}

// run splits one piece, appending the resulting pieces' characters to out.
func (st *preStage) run(s *scratch, out []nchar, spans []span, piece []nchar) ([]nchar, []span) {
	if len(piece) == 0 {
		return out, spans
	}
	if st.kind == stageMetaspace {
		return st.metaspace(out, spans, piece)
	}
	ms := st.matches(s, piece)
	s.pmatches = ms
	emit := func(lo, hi int32) {
		if hi > lo {
			n := int32(len(out))
			out = append(out, piece[lo:hi]...)
			spans = append(spans, span{n, n + hi - lo})
		}
	}
	switch st.behavior {
	case behaviorRemoved:
		for _, m := range ms {
			if !m.match {
				emit(m.lo, m.hi)
			}
		}
	case behaviorIsolated:
		for _, m := range ms {
			emit(m.lo, m.hi)
		}
	case behaviorMergedWithPrevious, behaviorContiguous:
		// Pieces are collected as ranges first: a later match may extend the last one.
		groups := s.groups[:0]
		prev := false
		for _, m := range ms {
			var join bool
			if st.behavior == behaviorContiguous {
				join = m.match == prev
			} else {
				join = m.match && !prev
			}
			if join && len(groups) > 0 {
				groups[len(groups)-1].hi = m.hi
			} else {
				groups = append(groups, span{m.lo, m.hi})
			}
			prev = m.match
		}
		s.groups = groups
		for _, g := range groups {
			emit(g.lo, g.hi)
		}
	case behaviorMergedWithNext:
		groups := s.groups[:0]
		prev := false
		for k := len(ms) - 1; k >= 0; k-- {
			m := ms[k]
			if m.match && !prev && len(groups) > 0 {
				groups[len(groups)-1].lo = m.lo
			} else {
				groups = append(groups, span{m.lo, m.hi})
			}
			prev = m.match
		}
		s.groups = groups
		for k := len(groups) - 1; k >= 0; k-- {
			emit(groups[k].lo, groups[k].hi)
		}
	}
	return out, spans
}

// matches cuts piece into matched and unmatched stretches. Character predicates match
// each character on its own, as HF's char patterns do; unmatched runs stay whole.
func (st *preStage) matches(s *scratch, piece []nchar) (ms []pmatch) {
	ms = s.pmatches[:0]
	add := func(lo, hi int32, match bool) {
		if !match && len(ms) > 0 && !ms[len(ms)-1].match {
			ms[len(ms)-1].hi = hi
			return
		}
		ms = append(ms, pmatch{lo, hi, match})
	}
	// Split's invert flips the pattern's answers after it has cut the piece.
	defer func() {
		if st.invert {
			for k := range ms {
				ms[k].match = !ms[k].match
			}
		}
	}()
	if st.gpt4 > 0 {
		// The pattern's alternatives cover every character, so its matches tile the piece.
		for i := 0; i < len(piece); {
			j := gpt4SplitEnd(piece, i, st.gpt4)
			add(int32(i), int32(j), true)
			i = j
		}
		return ms
	}
	if st.kind == stageWhitespace {
		// \w+|[^\w\s]+ kept, whitespace between removed: HF splits on the inverted regex,
		// so each run of one class is a stretch of its own, and only whitespace "matches".
		for i := 0; i < len(piece); {
			class := wsClass(piece[i].r)
			j := i + 1
			for j < len(piece) && wsClass(piece[j].r) == class {
				j++
			}
			ms = append(ms, pmatch{int32(i), int32(j), class == wsSpace})
			i = j
		}
		return ms
	}
	var pred func(rune) bool
	switch st.kind {
	case stageCharDelimiter:
		pred = func(r rune) bool { return r == st.delim }
	case stageWhitespaceSplit:
		pred = isSpace
	case stagePunctuation:
		pred = isPunct
	case stageDigits:
		pred = isDigit
	}
	if pred != nil {
		for i, c := range piece {
			add(int32(i), int32(i+1), pred(c.r))
		}
		return ms
	}
	// Not s.nbytes and s.segAt: encodeSegment still reads those while words run.
	b, at := spellUTF8(s.splitBytes[:0], s.splitAt[:0], piece)
	at = append(at, int32(len(piece)))
	s.splitBytes, s.splitAt = b, at
	last := int32(0)
	found := func(x, y int) {
		lo, hi := at[x], at[y]
		if lo > last {
			add(last, lo, false)
		}
		add(lo, hi, true)
		last = hi
	}
	if st.re != nil {
		for _, m := range st.re.allIndex(b) {
			if m[1] > m[0] {
				found(m[0], m[1])
			}
		}
	} else if st.literal != "" {
		for pos := 0; pos < len(b); {
			k := indexBytes(b[pos:], st.literal)
			if k < 0 {
				break
			}
			found(pos+k, pos+k+len(st.literal))
			pos += k + len(st.literal)
		}
	}
	if last < int32(len(piece)) {
		add(last, int32(len(piece)), false)
	}
	return ms
}

func indexBytes(b []byte, sub string) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == sub {
			return i
		}
	}
	return -1
}

// metaspace is the Metaspace stage: metaspaceWords' rewriting, with the resulting words
// left as pieces for the stages after it.
func (st *preStage) metaspace(out []nchar, spans []span, piece []nchar) ([]nchar, []span) {
	ms := st.meta
	rep := ms.replacement
	start := int32(len(out))
	first := piece[0].r
	if first == ' ' {
		first = rep
	}
	if first != rep && (ms.scheme == prependAlways || (ms.scheme == prependFirst && piece[0].start == 0)) {
		out = append(out, nchar{r: rep, start: piece[0].start, end: piece[0].end})
	}
	for _, c := range piece {
		if c.r == ' ' {
			c.r = rep
		}
		out = append(out, c)
	}
	end := int32(len(out))
	if !ms.split {
		return out, append(spans, span{start, end})
	}
	lo := start
	for i := start + 1; i <= end; i++ {
		if i == end || out[i].r == rep {
			spans = append(spans, span{lo, i})
			lo = i
		}
	}
	return out, spans
}

// gpt4Patterns are the split regexes of GPT-4's family that gpt4SplitEnd runs by hand, with
// the longest run of \p{N} each takes: Llama-3's (and cl100k's) and Qwen's. Go's regexp runs
// them, but several times slower than this and with an allocation per match.
var gpt4Patterns = map[string]int{
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`: 3,
	`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`:      1,
}

// gpt4SplitEnd returns where the match of GPT-4's split pattern that starts at chars[i] ends,
// trying the alternatives in order as HF's backtracking engine does, with \p{L}, \p{N} and
// \s as measured from HF (regexClass) and runs of \p{N} no longer than digits.
func gpt4SplitEnd(chars []nchar, i, digits int) int {
	n := len(chars)
	c := chars[i].r
	class := func(k int) uint8 { return regexClass(chars[k].r) }
	run := func(j int, cl uint8) int {
		for j < n && class(j) == cl {
			j++
		}
		return j
	}
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if j := contractionEnd(chars, i, foldContraction); j > i {
		return j
	}
	cl := class(i)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if cl == classLetter {
		return run(i+1, classLetter)
	}
	if c != '\r' && c != '\n' && cl != classNumber && i+1 < n && class(i+1) == classLetter {
		return run(i+2, classLetter)
	}
	// \p{N}{1,digits}
	if cl == classNumber {
		j := i + 1
		for j < n && j-i < digits && class(j) == classNumber {
			j++
		}
		return j
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	start := i
	if c == ' ' && i+1 < n && class(i+1) == classOther {
		start = i + 1
	}
	if class(start) == classOther {
		j := run(start+1, classOther)
		for j < n && (chars[j].r == '\r' || chars[j].r == '\n') {
			j++
		}
		return j
	}
	// \s*[\r\n]+ : the whitespace run up to its last line break
	j, last := i, -1
	for j < n && class(j) == classSpace {
		if chars[j].r == '\r' || chars[j].r == '\n' {
			last = j
		}
		j++
	}
	if last >= 0 {
		return last + 1
	}
	// \s+(?!\S)|\s+ : a run before a non-space leaves it its last space
	if j < n && j-i > 1 {
		return j - 1
	}
	return j
}

// foldContraction lower-cases what (?i) matches against the contractions' letters: ASCII,
// and the long s, which folds to s.
func foldContraction(r rune) rune {
	switch {
	case 'A' <= r && r <= 'Z':
		return r + 'a' - 'A'
	case r == 'ſ':
		return 's'
	}
	return r
}
