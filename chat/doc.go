// Package chat turns a conversation into the prompt a chat model was trained on, with the
// model's own chat template: the Jinja template HuggingFace tokenizers carry in
// tokenizer_config.json (chat_template), rendered as transformers' apply_chat_template and
// @huggingface/jinja render it (github.com/ardanlabs/jinja does the Jinja), with the
// generation prompt added so the model answers as the assistant.
//
// A template can refuse a conversation (raise_exception: roles that do not alternate, a
// system message where none is allowed); Render says so with a *RefusedError, the client's
// fault, apart from a template that fails to render, the model's. The rendered prompt carries
// the model's special tokens as text, so it is encoded without adding them again; where the
// client spelt one of those tokens, the Prompt names the place (Quoted), to be encoded as the
// text it spells, so that a message cannot end its turn. The Jinja library bounds no
// recursion, so each macro's first act is to count itself against a bound a rendering.
//
// # Use
//
//	t, err := chat.Load(model.TokenizerConfig, model.Tokenizer.SpecialTokens()) // chat.ErrNoTemplate: none
//	p, err := t.Render([]chat.Message{{Role: "user", Content: "..."}}, nil)
//	enc := model.Tokenizer.EncodeQuoted(p.Text, false, p.Quoted)
package chat
