// Package embed serves the other encoders: sentence embedders (sentence-transformers' layout:
// modules.json, a Pooling module's config, an optional Normalize) and cross-encoders for
// reranking (a sequence classifier with one label), on the batcher, so that embeddings and
// scores share its admission, priorities, batching by length and metrics with the entity
// routes.
//
//	e, err := embed.NewEmbedder("embeddings", model, session, batchCfg, clock.Real(), batcherMetrics)
//	e.Start(ctx)
//	vecs, tokens, err := e.Embed(ctx, admission.Interactive, texts, truncate, e.Normalized())
//
//	r, err := embed.NewReranker("rerank", crossEncoder, session, batchCfg, clock.Real(), batcherMetrics)
//	scores, tokens, err := r.Score(ctx, admission.Interactive, query, passages, truncate)
//
// A text longer than the model takes is ErrTooLong unless the caller asks to truncate it. The
// pooling (mean, CLS, last token, max) runs here, over the model's last_hidden_state, as
// sentence-transformers pools; a cross-encoder's pair is [CLS] query [SEP] passage [SEP] (the
// tokenizer's single-text template around each part), without token type ids.
package embed
