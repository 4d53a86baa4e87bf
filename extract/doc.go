// Package extract runs entity extraction for one token-classification model: it tokenizes a
// text, cuts it into model-sized windows, sends the windows through the model's batcher to
// ONNX Runtime, merges the windows' logits and decodes them into entities.
//
// It is the glue between the pieces that each know one thing: tokenizer (text to tokens),
// entities (windows and decoding), batcher (queueing and batch formation) and
// engine (the forward pass). The HTTP layer sees only Classifier.Extract.
//
// A long text does not go to the batcher whole: its windows go in chunks of half a full batch,
// each queued behind what arrived meanwhile (one batcher.Series), so short requests are served
// between them, no batch outgrows the budget warm-up ran, and a text whose remaining windows
// cannot finish by its deadline at the pace of its first ones stops with ErrDeadline. The
// admission gate sees the chunks not yet submitted as queued work (Queue).
//
// Use New with a loaded model and an engine session, Start it, then call Extract from any
// number of goroutines; Close drains it.
//
// # Settings
//
// The server's environment sets Config.Stride through its tag (env names the variable, with
// the prefix SLUICE_; envDefault its default) and Config.Batch through batcher's. cmd/serve
// reads them (its envvars.go) and names each Problem by the variable its field's tag declares.
package extract
