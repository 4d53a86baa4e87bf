// Package spanstream finds the entities of a long text window by window and says, as it goes,
// which spans it has found, which it takes back and which are final, so that a client sees the
// first spans of a 100,000-character document long before the last window is computed and the
// work in hand stays one window in size (wider only where one span fills a window: see below).
//
// # How to use it
//
//	sc, err := spanstream.New(text, spanstream.Config{WindowChars: 4096, ContextChars: 128, MaxEntityChars: 512}, detect)
//	for !sc.Done() {
//		events, err := sc.Next(ctx) // one window: Emit, Retract and Commit events
//		...
//	}
//
// detect finds the spans of one window's text (entities.Entity, byte offsets into it); the
// stream's Span is that entity at its bytes in the whole text, with an id and its offsets in
// code points. A window is at most
// WindowChars code points, but for one that a span fills up to its tail (a URL longer than the
// window, text without spaces): the window's end may cut that span, and what lies past it,
// read alone, may no longer be found, so the window is read again twice as wide, as often as
// it takes for the span to end before the tail or the text to end (at worst about twice the
// work of reading the rest of the text at once). No span is ever made final cut at a window's
// end. Of each window, the last ContextChars + MaxEntityChars code points
// (the tail, at most half the window) are only context. Every span a window finds for the
// first time, or finds changed, is emitted (Emit); one that ends before the tail is then final
// (Commit); one that reaches into it stays provisional, and the next window, which starts
// where this one's final part ends, computes it again with the text that follows. A span the
// next window no longer finds, or finds changed, is taken back (Retract) first. The cut
// between the final part and the tail never falls inside a span, and not inside a word either,
// unless one word is as wide as the window's final part (text without spaces): it moves back
// to the span's or the word's start, so the next window reads that word whole.
//
// Offsets are reported in bytes and in code points (Python's offsets, which OpenMed's clients
// expect), both from the start of the whole text. A span's ID is "ent_" and 16 hex digits of
// SHA-256 over its label and start: stable across windows and free of the text's content.
package spanstream
