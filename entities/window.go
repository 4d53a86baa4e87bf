package entities

import (
	"errors"
	"fmt"
)

// Window is a half-open range [Start, End) of content-token indexes that is run through the
// model as one row, wrapped in the tokenizer's template ids.
type Window struct {
	Start, End int
}

// Len is the number of content tokens in the window.
func (w Window) Len() int { return w.End - w.Start }

// ContentBudget is how many content tokens fit in one row of maxLen ids once the template
// prefix and suffix (e.g. [CLS] and [SEP]) are added.
func ContentBudget(maxLen, prefixLen, suffixLen int) (int, error) {
	budget := maxLen - prefixLen - suffixLen
	if budget < 1 {
		return 0, fmt.Errorf("entities: max length %d leaves no room for content after %d template ids", maxLen, prefixLen+suffixLen)
	}
	return budget, nil
}

// PlanWindows splits numTokens content tokens into windows of at most maxContent tokens,
// consecutive windows sharing stride tokens. See PlanWordWindows.
func PlanWindows(numTokens, maxContent, stride int) ([]Window, error) {
	if numTokens < 0 {
		return nil, fmt.Errorf("entities: negative token count %d", numTokens)
	}
	return planWindows(numTokens, nil, maxContent, stride)
}

// PlanWordWindows is PlanWindows that also avoids cutting inside a word: a window end or
// start that would fall between two pieces of the same word is moved back to the start of
// that word when that costs at most half of a window's fresh tokens; otherwise the cut
// stays where it is. wordIDs has one entry per content token (see Tokens.WordIDs).
//
// Guarantees, whatever the input: every token is in at least one window; windows are in
// increasing Start order and each next window starts at or before the previous one ends;
// no window is longer than maxContent. The last window is widened backwards to a full
// maxContent when the text allows, so that the tail of a long text has as much context
// as its middle. A text of maxContent tokens or fewer gets exactly one window.
func PlanWordWindows(wordIDs []int, maxContent, stride int) ([]Window, error) {
	return planWindows(len(wordIDs), wordIDs, maxContent, stride)
}

func planWindows(n int, wordIDs []int, maxContent, stride int) ([]Window, error) {
	if maxContent < 1 {
		return nil, fmt.Errorf("entities: window size %d must be at least 1", maxContent)
	}
	if stride < 0 || stride >= maxContent {
		return nil, fmt.Errorf("entities: stride %d must be in [0, %d)", stride, maxContent)
	}
	if n == 0 {
		return nil, nil
	}
	fresh := maxContent - stride
	// Moving a cut by at most half of the fresh tokens keeps every step moving forward
	// (fresh - slack >= 1) while still catching the common case of a long word at the cut.
	slack := fresh / 2
	var out []Window
	start := 0
	for {
		end := start + maxContent
		if end >= n {
			last := max(n-maxContent, 0)
			if len(out) > 0 {
				last = max(last, out[len(out)-1].Start+1)
			}
			last = alignForward(wordIDs, last, start)
			return append(out, Window{Start: last, End: n}), nil
		}
		end = alignBack(wordIDs, end, end-slack)
		out = append(out, Window{Start: start, End: end})
		next := end - stride
		start = alignBack(wordIDs, next, max(start+1, next-slack))
	}
}

// isWordStart reports whether token p begins a word (or words are unknown).
func isWordStart(wordIDs []int, p int) bool {
	if wordIDs == nil || p <= 0 || p >= len(wordIDs) {
		return true
	}
	return wordIDs[p] < 0 || wordIDs[p] != wordIDs[p-1]
}

// alignBack returns the nearest word start in [floor, pos], or pos if there is none.
func alignBack(wordIDs []int, pos, floor int) int {
	for p := pos; p >= floor; p-- {
		if isWordStart(wordIDs, p) {
			return p
		}
	}
	return pos
}

// alignForward returns the nearest word start in [pos, ceil], or pos if there is none.
func alignForward(wordIDs []int, pos, ceil int) int {
	for p := pos; p <= ceil; p++ {
		if isWordStart(wordIDs, p) {
			return p
		}
	}
	return pos
}

// Rows is a padded batch of windows in the row-major layout ONNX Runtime takes:
// Count rows of Width ids each. token_type_ids, when a model wants them, are all zero
// and have the same shape.
type Rows struct {
	InputIDs      []int64 // Count*Width ids; row r holds prefix, window r's tokens, suffix, padding
	AttentionMask []int64 // Count*Width; 1 over real ids, 0 over padding
	Count, Width  int
}

// Slice is rows [from, to) of r, sharing its memory.
func (r Rows) Slice(from, to int) Rows {
	return Rows{InputIDs: r.InputIDs[from*r.Width : to*r.Width], AttentionMask: r.AttentionMask[from*r.Width : to*r.Width],
		Count: to - from, Width: r.Width}
}

// BuildRows lays out one row per window: prefix ids, the window's content ids, suffix ids,
// then padID up to width. width 0 means the tightest width that fits the longest window;
// a positive width smaller than that is an error. Content token j of window r sits at
// column len(prefix)+j-window.Start, which is what MergeLogits expects.
func BuildRows(ids []int64, windows []Window, prefix, suffix []int64, padID int64, width int) (Rows, error) {
	need := 0
	for i, w := range windows {
		if w.Start < 0 || w.End < w.Start || w.End > len(ids) {
			return Rows{}, fmt.Errorf("entities: window %d lies outside %d tokens", i, len(ids))
		}
		need = max(need, w.Len()+len(prefix)+len(suffix))
	}
	if width == 0 {
		width = need
	}
	if width < need {
		return Rows{}, fmt.Errorf("entities: row width %d is less than the %d ids the longest window needs", width, need)
	}
	rows := Rows{
		InputIDs:      make([]int64, len(windows)*width),
		AttentionMask: make([]int64, len(windows)*width),
		Count:         len(windows),
		Width:         width,
	}
	for r, w := range windows {
		row := rows.InputIDs[r*width : (r+1)*width]
		mask := rows.AttentionMask[r*width : (r+1)*width]
		n := copy(row, prefix)
		n += copy(row[n:], ids[w.Start:w.End])
		n += copy(row[n:], suffix)
		for i := range n {
			mask[i] = 1
		}
		for i := n; i < width; i++ {
			row[i] = padID
		}
	}
	return rows, nil
}

// MergeLogits turns per-window model output back into one logits row per content token.
//
// ErrOutputShape is a model output of another size than the rows asked for: the model's
// failure, not the text's.
var ErrOutputShape = errors.New("entities: the model's output is not the shape of its input")

// logits is the model output for the rows of BuildRows: len(windows) x width x numLabels,
// row-major. A token seen by several windows takes its row from the window where it has
// the most context: the largest distance to a window edge that cuts the text (a window
// edge at the very start or end of the text is not a cut). Ties go to the earlier window.
// The result is numTokens x numLabels, row-major. A text in one window (most notes) is read
// in place: the result is then a part of logits, which the caller must not change while it
// uses the result.
func MergeLogits(windows []Window, numTokens int, logits []float32, width, prefixLen, numLabels int) ([]float32, error) {
	if numLabels < 1 {
		return nil, fmt.Errorf("entities: %d labels", numLabels)
	}
	if len(logits) != len(windows)*width*numLabels {
		return nil, fmt.Errorf("%w: %d logits for %d windows of width %d and %d labels", ErrOutputShape, len(logits), len(windows), width, numLabels)
	}
	if len(windows) == 1 && windows[0].Start == 0 && windows[0].End == numTokens && prefixLen >= 0 && prefixLen+numTokens <= width {
		return logits[prefixLen*numLabels : (prefixLen+numTokens)*numLabels : (prefixLen+numTokens)*numLabels], nil
	}
	owner, err := windowOwners(windows, numTokens, width, prefixLen)
	if err != nil {
		return nil, err
	}
	out := make([]float32, numTokens*numLabels)
	for i, w := range owner {
		col := prefixLen + i - windows[w].Start
		src := (w*width + col) * numLabels
		copy(out[i*numLabels:(i+1)*numLabels], logits[src:src+numLabels])
	}
	return out, nil
}

// windowOwners picks, for every token, the index of the window it is read from.
func windowOwners(windows []Window, numTokens, width, prefixLen int) ([]int, error) {
	const unset = -1
	owner := make([]int, numTokens)
	best := make([]int, numTokens)
	for i := range owner {
		owner[i] = unset
	}
	for wi, w := range windows {
		if w.Start < 0 || w.End < w.Start || w.End > numTokens {
			return nil, fmt.Errorf("entities: window %d lies outside %d tokens", wi, numTokens)
		}
		if prefixLen < 0 || prefixLen+w.Len() > width {
			return nil, fmt.Errorf("entities: window %d does not fit a row of width %d", wi, width)
		}
		for i := w.Start; i < w.End; i++ {
			ctx := numTokens // no cut on either side: as much context as the text has
			if w.Start > 0 {
				ctx = min(ctx, i-w.Start)
			}
			if w.End < numTokens {
				ctx = min(ctx, w.End-1-i)
			}
			if owner[i] == unset || ctx > best[i] {
				owner[i], best[i] = wi, ctx
			}
		}
	}
	for i, w := range owner {
		if w == unset {
			return nil, fmt.Errorf("entities: token %d is in no window", i)
		}
	}
	return owner, nil
}
