package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
)

// unigramModel is HF's Unigram model (SentencePiece's unigram language model): each word is
// cut into the vocab pieces whose scores (log probabilities) sum highest, found by Viterbi
// over every vocab piece that starts at each character.
type unigramModel struct {
	vocab  map[string]int64 // HF's token_to_ids: a piece listed twice keeps its later id
	pieces []string         // by id (HF's id_to_token)
	scores []float64        // by id
	unkID  int64
	// unkScore is what a character no single-character piece covers costs: HF scores it
	// 10 below the lowest score in the vocab, so a path uses it only where nothing else fits.
	unkScore     float64
	byteFallback bool
	byteIDs      [256]int64 // ids of the <0xXX> pieces, -1 where missing
	trie         byteTrie
}

// byteTrie holds the vocab for the prefix walks of Viterbi. Nodes with many children (the
// root, the first bytes of pieces) index them through a 256-entry block, the rest list them
// sorted by byte in edges, a short scan.
type byteTrie struct {
	nodes []trieNode
	edges []trieEdge
	dense []int32 // 256-entry blocks of child nodes, -1 for none
}

type trieNode struct {
	id    int32 // the piece ending here, -1 for none
	dense int32 // block in dense, -1 when the children are in edges
	off   int32
	n     int32
}

type trieEdge struct {
	b     byte
	child int32
}

const denseFanout = 12

var noChildren = func() (b [256]int32) {
	for i := range b {
		b[i] = -1
	}
	return b
}()

func (t *byteTrie) child(node int32, b byte) int32 {
	nd := &t.nodes[node]
	if nd.dense >= 0 {
		return t.dense[int(nd.dense)<<8|int(b)]
	}
	for _, e := range t.edges[nd.off : nd.off+nd.n] {
		if e.b == b {
			return e.child
		}
		if e.b > b {
			break
		}
	}
	return -1
}

// buildTrie lays out the vocab's pieces, each with its id. Sorting the pieces first puts
// every node's children in byte order and in one contiguous run, with no map per node: a
// 250,000-piece vocab builds in well under a second.
func buildTrie(vocab map[string]int64) byteTrie {
	pieces := make([]string, 0, len(vocab))
	for p := range vocab {
		if p != "" {
			pieces = append(pieces, p)
		}
	}
	slices.Sort(pieces)
	size := 0
	for _, p := range pieces {
		size += len(p)
	}
	// Pieces share prefixes, so half their bytes is a fair guess at the node count.
	t := byteTrie{nodes: make([]trieNode, 0, size/2+1), edges: make([]trieEdge, 0, size/2)}
	var build func(lo, hi, depth int) int32
	build = func(lo, hi, depth int) int32 {
		node := int32(len(t.nodes))
		t.nodes = append(t.nodes, trieNode{id: -1, dense: -1})
		if lo < hi && len(pieces[lo]) == depth {
			// Sorted, so a piece ending here comes first in its range.
			t.nodes[node].id = int32(vocab[pieces[lo]])
			lo++
		}
		children := 0
		for i := lo; i < hi; {
			b := pieces[i][depth]
			for i < hi && pieces[i][depth] == b {
				i++
			}
			children++
		}
		// Reserve this node's slots before building below it, so they stay contiguous.
		dense, off := int32(-1), int32(len(t.edges))
		if children > denseFanout {
			dense = int32(len(t.dense) >> 8)
			t.dense = append(t.dense, noChildren[:]...)
		} else {
			for range children {
				t.edges = append(t.edges, trieEdge{})
			}
		}
		t.nodes[node].dense, t.nodes[node].off = dense, off
		if dense < 0 {
			t.nodes[node].n = int32(children)
		}
		k := int32(0)
		for i := lo; i < hi; {
			b := pieces[i][depth]
			j := i
			for j < hi && pieces[j][depth] == b {
				j++
			}
			child := build(i, j, depth+1)
			if dense >= 0 {
				t.dense[int(dense)<<8|int(b)] = child
			} else {
				t.edges[off+k] = trieEdge{b: b, child: child}
				k++
			}
			i = j
		}
		return node
	}
	build(0, len(pieces), 0)
	return t
}

type unigramJSON struct {
	UnkID        *int64 `json:"unk_id"`
	Vocab        []any  `json:"vocab"`
	ByteFallback bool   `json:"byte_fallback"`
}

// parseUnigramModel reads HF's Unigram model, which needs Metaspace, a pipeline or no
// pre-tokenizer.
func (t *Tokenizer) parseUnigramModel(raw json.RawMessage) error {
	if t.byteLevel != nil || t.byteLevelLast {
		return errors.New("tokenizer: model Unigram with pre_tokenizer ByteLevel is not supported")
	}
	if t.metaspace == nil && t.stages == nil && !t.noPreTokenizer {
		return errors.New("tokenizer: model Unigram with pre_tokenizer BertPreTokenizer is not supported")
	}
	u, err := parseUnigram(raw)
	if err != nil {
		return err
	}
	t.unigram, t.wordModel, t.vocab = u, u, u.vocab
	t.byID = make(map[int64]string, len(u.pieces))
	for id, tok := range u.pieces {
		t.byID[int64(id)] = tok
	}
	return nil
}

// parseUnigram builds the Unigram model of a Unigram model section.
func parseUnigram(raw json.RawMessage) (*unigramModel, error) {
	var j unigramJSON
	// One decode for the whole vocab, scores kept as text for serdeFloat: decoding each
	// entry on its own made a 250,000-piece vocab take seconds.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("tokenizer: invalid Unigram model: %w", err)
	}
	if len(j.Vocab) == 0 {
		return nil, errors.New("tokenizer: Unigram vocab is empty")
	}
	if len(j.Vocab) > math.MaxInt32 {
		return nil, errors.New("tokenizer: Unigram vocab is too large")
	}
	if j.UnkID == nil {
		// HF fails the encode that first meets a character outside the vocab; a server
		// cannot, so such files are refused up front.
		return nil, errors.New("tokenizer: Unigram unk_id null is not supported")
	}
	if *j.UnkID < 0 || *j.UnkID >= int64(len(j.Vocab)) {
		return nil, fmt.Errorf("tokenizer: Unigram unk_id %d is outside the vocab of %d entries", *j.UnkID, len(j.Vocab))
	}
	m := &unigramModel{unkID: *j.UnkID, byteFallback: j.ByteFallback}
	if err := m.setVocab(j.Vocab); err != nil {
		return nil, err
	}
	m.trie = buildTrie(m.vocab)
	for b := range 256 {
		m.byteIDs[b] = -1
		if id, ok := m.vocab[fmt.Sprintf("<0x%02X>", b)]; ok {
			m.byteIDs[b] = id
		}
	}
	return m, nil
}

// setVocab reads the [piece, score] entries of the vocab, whose index is the piece's id.
func (m *unigramModel) setVocab(vocab []any) error {
	m.vocab = make(map[string]int64, len(vocab))
	m.pieces = make([]string, 0, len(vocab))
	m.scores = make([]float64, len(vocab))
	minScore := math.Inf(1)
	for id, entry := range vocab {
		var piece string
		var num json.Number
		pair, ok := entry.([]any)
		ok = ok && len(pair) == 2
		if ok {
			piece, ok = pair[0].(string)
		}
		if ok {
			num, ok = pair[1].(json.Number)
		}
		if !ok {
			return fmt.Errorf("tokenizer: Unigram vocab entry %d must be a [piece, score] pair", id)
		}
		score, err := serdeFloat(string(num))
		if err != nil {
			return fmt.Errorf("tokenizer: Unigram vocab entry %d has an invalid score: %w", id, err)
		}
		m.vocab[piece] = int64(id)
		m.pieces = append(m.pieces, piece)
		m.scores[id] = score
		minScore = min(minScore, score)
	}
	m.unkScore = minScore - 10
	return nil
}

// encodeWord appends the pieces of one pre-tokenized word, as HF's encode_optimized and
// tokenize do: best path by score (ties keep the earlier start), characters outside the
// vocab as unknown pieces, neighbouring unknown pieces fused into one, and a piece that is
// not a vocab entry spelled as <0xXX> byte pieces when byte_fallback is on (each with the
// whole piece's offsets), else the unk id.
func (m *unigramModel) encodeWord(enc *tokens, s *scratch, chars []nchar, word int) {
	w, charAt := spellUTF8(s.word[:0], s.charAt[:0], chars)
	s.word, s.charAt = w, charAt
	n := len(w)
	if n == 0 {
		return
	}
	score, from, ids := s.vScore[:0], s.vFrom[:0], s.vID[:0]
	for range n + 1 {
		score, from, ids = append(score, 0), append(from, -1), append(ids, 0)
	}
	s.vScore, s.vFrom, s.vID = score, from, ids
	for start := 0; start < n; {
		mblen := 1
		if w[start] >= utf8.RuneSelf {
			_, mblen = utf8.DecodeRune(w[start:])
		}
		base := score[start]
		single := false
		node := int32(0)
		for k := start; k < n; k++ {
			if node = m.trie.child(node, w[k]); node < 0 {
				break
			}
			id := m.trie.nodes[node].id
			if id < 0 {
				continue
			}
			end := k + 1
			if cand := base + m.scores[id]; from[end] < 0 || cand > score[end] {
				score[end], from[end], ids[end] = cand, int32(start), id
			}
			if end-start == mblen {
				single = true
			}
		}
		if !single {
			end := start + mblen
			if cand := base + m.unkScore; from[end] < 0 || cand > score[end] {
				score[end], from[end], ids[end] = cand, int32(start), int32(m.unkID)
			}
		}
		start += mblen
	}
	// Backtrack into s.pieces, last piece first; runs of unk-id nodes become one piece.
	pieces := s.pieces[:0]
	for end := n; end > 0; {
		start := int(from[end])
		if int64(ids[end]) == m.unkID && len(pieces) > 0 && pieces[len(pieces)-1].id == -1 {
			pieces[len(pieces)-1].start = start
		} else {
			id := int64(ids[end])
			if id == m.unkID {
				id = -1 // fusable; resolved below
			}
			pieces = append(pieces, piece{id: id, start: start, end: end})
		}
		end = start
	}
	s.pieces = pieces
	for i := len(pieces) - 1; i >= 0; i-- {
		p := pieces[i]
		a, b := chars[charAt[p.start]].start, chars[charAt[p.end-1]].end
		if p.id >= 0 {
			enc.add(p.id, a, b, word, false)
			continue
		}
		// HF looks the piece's text up again: an unknown piece (or a fused run) is not a vocab
		// entry unless it happens to spell one.
		if id, ok := m.vocab[string(w[p.start:p.end])]; ok {
			enc.add(id, a, b, word, false)
			continue
		}
		if m.byteFallback && m.bytesKnown(w[p.start:p.end]) {
			for _, c := range w[p.start:p.end] {
				enc.add(m.byteIDs[c], a, b, word, false)
			}
			continue
		}
		enc.add(m.unkID, a, b, word, false)
	}
}

func (m *unigramModel) bytesKnown(b []byte) bool {
	for _, c := range b {
		if m.byteIDs[c] < 0 {
			return false
		}
	}
	return true
}
