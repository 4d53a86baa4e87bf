package handlers

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/embed"
)

// The embedding and reranking routes, their wire shapes in one home: OpenAI's
// POST /v1/embeddings, text-embeddings-inference's POST /embed and POST /rerank, and the
// Cohere/Jina-shaped POST /v1/rerank (as vLLM serves it).

// Embedder is what the embedding routes run (*embed.Embedder).
type Embedder interface {
	Name() string
	MaxLength() int
	Dimensions() int
	Normalized() bool
	Embed(ctx context.Context, p admission.Priority, texts []string, truncate, normalize bool) ([][]float32, int, error)
}

// Reranker is what the rerank routes run (*embed.Reranker).
type Reranker interface {
	Name() string
	MaxLength() int
	Score(ctx context.Context, p admission.Priority, query string, passages []string, truncate bool) ([]float32, int, error)
}

// EmbedEndpoint is an embedding model and its admission gate. Load, when set, is another
// embedding model named by a request (OpenAI's `model`), loaded on demand with its own gate,
// waiting for the load while ctx lives; its errors are ErrModelUnknown, ErrModelBusy and
// *ModelLoadingError, or the load's own failure.
type EmbedEndpoint struct {
	Model Embedder
	Gate  *admission.Gate
	Load  func(ctx context.Context, name string) (Embedder, *admission.Gate, error)
}

// RerankEndpoint is a cross-encoder and its admission gate; Load as EmbedEndpoint's.
type RerankEndpoint struct {
	Model Reranker
	Gate  *admission.Gate
	Load  func(ctx context.Context, name string) (Reranker, *admission.Gate, error)
}

// pickEncoder is the model a request names: the endpoint's, or one loaded on demand within
// Options.ModelLoadWait and admitted by its own gate (a refusal by it is written here). A name
// nobody serves is OpenAI's 404 model_not_found.
func pickEncoder[M interface{ Name() string }](s *server, c *fiber.Ctx, x *exchange, name string, served M,
	load func(context.Context, string) (M, *admission.Gate, error)) (M, error) {
	var none M
	if name == served.Name() {
		return served, nil
	}
	if load == nil {
		return none, openAIInvalid("model", msgModelNotFound)
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), min(s.opts.ModelLoadWait, x.timeout))
	defer cancel()
	model, gate, err := load(ctx, name)
	switch {
	case errors.Is(err, ErrModelUnknown):
		return none, openAIInvalid("model", msgModelNotFound)
	case err != nil:
		return none, s.loadFailure(c, x, err, "No room to load another encoder while the loaded ones stay")
	}
	if ref, ok := gate.AdmitRetry(x.prio, c.Request().Header.Peek(admission.RetryTokenHeader)); !ok {
		return none, s.writeRefusal(c, ref)
	}
	x.gate = gate
	return model, nil
}

// maxBatchInputs bounds the texts of one request (OpenAI's own bound on input lists).
const maxBatchInputs = 2048

// The encoder routes list no models on /models/loaded, which is OpenMed's and lists its
// entity models.

// OpenAIEmbeddings is POST /v1/embeddings.
func OpenAIEmbeddings(ep EmbedEndpoint) Route {
	return Route{Path: "/v1/embeddings", Gate: ep.Gate, wire: completions{},
		serve: func(s *server, c *fiber.Ctx, x *exchange) error { return s.serveOpenAIEmbeddings(c, x, &ep) }}
}

// TEIEmbed is text-embeddings-inference's POST /embed.
func TEIEmbed(ep EmbedEndpoint) Route {
	return Route{Path: "/embed", Gate: ep.Gate, wire: tgi{},
		serve: func(s *server, c *fiber.Ctx, x *exchange) error { return s.serveTEIEmbed(c, x, &ep) }}
}

// TEIRerank is text-embeddings-inference's POST /rerank.
func TEIRerank(ep RerankEndpoint) Route {
	return Route{Path: "/rerank", Gate: ep.Gate, wire: tgi{}, cost: ep.cost,
		serve: func(s *server, c *fiber.Ctx, x *exchange) error { return s.serveTEIRerank(c, x, &ep) }}
}

// CohereRerank is POST /v1/rerank in Cohere's and Jina's shape.
func CohereRerank(ep RerankEndpoint) Route {
	return Route{Path: "/v1/rerank", Gate: ep.Gate, wire: completions{}, cost: ep.cost,
		serve: func(s *server, c *fiber.Ctx, x *exchange) error { return s.serveCohereRerank(c, x, &ep) }}
}

// invalid is a validation failure about param on a route of TEI's wire (and the privacy
// gateway's): 422. OpenAI's routes answer openAIInvalid's 400.
func invalid(param, msg string) *apiError {
	return &apiError{Status: fiber.StatusUnprocessableEntity, Code: CodeValidation, Message: msg, Outcome: OutcomeFailed, param: param}
}

// encoderStats is what an embedding or rerank request did, for the access log and the
// budget's settlement (the tokens the model read).
type encoderStats struct {
	model          string
	tokens, inputs int
}

func (s *encoderStats) tokensUsed() int { return s.tokens }

func (s *encoderStats) attrs() []slog.Attr {
	return []slog.Attr{slog.String("model", s.model), slog.Int("tokens", s.tokens), slog.Int("inputs", s.inputs)}
}

// cost estimates a rerank request's tokens before it is read: the model reads the query with
// each passage, a pair its max length at most (a longer one is cut, or refused), so a long
// query beside many short passages is not charged for text the model never reads.
func (ep RerankEndpoint) cost(_ *server, c *fiber.Ctx) float64 {
	var req struct {
		Query     string            `json:"query"`
		Texts     []json.RawMessage `json:"texts"`
		Documents []json.RawMessage `json:"documents"`
	}
	if json.Unmarshal(c.Body(), &req) != nil {
		return textCost(c.Body())
	}
	const specials = 3 // [CLS] query [SEP] passage [SEP]
	limit := float64(ep.Model.MaxLength())
	total := 0.0
	for _, doc := range append(req.Texts, req.Documents...) {
		total += min(math.Ceil(float64(len(req.Query)+len(doc))/4)+specials, limit)
	}
	return max(total, 1)
}

// textList reads a string or a list of strings: each non-empty and, together, within the
// text limits. A non-empty msg is the validation error; it quotes none of them.
func textList(raw json.RawMessage, lim Limits, what string) ([]string, string) {
	notTexts := "`" + what + "` must be a string or a list of strings (token ids are not taken)"
	if !present(raw) { // asked before the string's reading, which takes null for ""
		return nil, notTexts
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		raw, _ = json.Marshal([]string{one})
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		return nil, notTexts
	}
	return list, checkTexts(list, lim, what)
}

// checkTexts checks a request's texts: 1 to maxBatchInputs, none empty, and, with the texts
// that go `with` them (a rerank's query), within the text limits.
func checkTexts(list []string, lim Limits, what string, with ...string) string {
	if len(list) == 0 || len(list) > maxBatchInputs {
		return "`" + what + "` must hold 1 to " + strconv.Itoa(maxBatchInputs) + " texts"
	}
	chars, size := 0, 0
	for _, t := range list {
		if t == "" {
			return "`" + what + "` may not hold an empty text"
		}
	}
	for _, t := range append(slices.Clip(list), with...) {
		chars += utf8.RuneCountInString(t)
		size += len(t)
	}
	if chars > lim.MaxTextChars || size > lim.MaxTextBytes {
		return "`" + what + "` exceeds the limit of " + strconv.Itoa(lim.MaxTextChars) + " characters (" + strconv.Itoa(lim.MaxTextBytes) + " bytes) a request"
	}
	return ""
}

// rightOnly reports whether a truncation_direction is TEI's only one served, Right (or unset).
func rightOnly(dir *string) bool { return dir == nil || *dir == "Right" || *dir == "right" }

// embedError is a failure of the model's work: a text too long is the request's fault, which
// bad words in the route's wire.
func (s *server) embedError(c *fiber.Ctx, x *exchange, ctx context.Context, err error, bad func(param, msg string) *apiError, param string, maxLen int) error {
	switch {
	case errors.Is(err, embed.ErrTooLong):
		cut := "`truncate`: true" // TEI's
		if param == "input" {
			cut = "`truncate_prompt_tokens`: -1" // vLLM's, on OpenAI's route
		}
		return bad(param, "a text is longer than the model's "+strconv.Itoa(maxLen)+" tokens; send "+cut+" to cut it")
	case errors.Is(err, embed.ErrNoTokens):
		return bad(param, "a text has no tokens")
	}
	return s.workError(c, x, ctx, err)
}

type openAIEmbeddingsRequest struct {
	Input          json.RawMessage `json:"input"`
	Model          *string         `json:"model"`
	EncodingFormat *string         `json:"encoding_format"`
	Dimensions     *int            `json:"dimensions"`
	User           *string         `json:"user"`
	// Truncate is vLLM's truncate_prompt_tokens: -1 (or the model's length, or more) cuts
	// what is too long to the model's length; a shorter length is refused, not ignored.
	Truncate *int `json:"truncate_prompt_tokens"`
}

type openAIEmbedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"` // []float32, or the base64 of their little-endian bytes
}

func (s *server) serveOpenAIEmbeddings(c *fiber.Ctx, x *exchange, ep *EmbedEndpoint) error {
	var req openAIEmbeddingsRequest
	if param, msg := decodeObject(c.Body(), &req); msg != "" {
		return openAIInvalid(param, msg)
	}
	texts, msg := textList(req.Input, s.opts.Limits, "input")
	switch {
	case msg != "":
		return openAIInvalid("input", msg)
	case req.Model == nil:
		return openAIInvalid("model", "You must provide a model parameter")
	case req.EncodingFormat != nil && *req.EncodingFormat != "float" && *req.EncodingFormat != "base64":
		return openAIInvalid("encoding_format", "`encoding_format` must be float or base64")
	}
	model, err := pickEncoder(s, c, x, *req.Model, ep.Model, ep.Load)
	if err != nil {
		return err
	}
	switch {
	case req.Truncate != nil && *req.Truncate != -1 && *req.Truncate < model.MaxLength():
		return openAIInvalid("truncate_prompt_tokens", "`truncate_prompt_tokens` must be -1 (cut to the model's "+strconv.Itoa(model.MaxLength())+
			" tokens) or at least that: a shorter cut is not served")
	case req.Dimensions != nil && (*req.Dimensions < 1 || *req.Dimensions > model.Dimensions()):
		return openAIInvalid("dimensions", "`dimensions` must be between 1 and the model's "+strconv.Itoa(model.Dimensions()))
	case req.Dimensions != nil && *req.Dimensions != model.Dimensions() && !model.Normalized():
		return openAIInvalid("dimensions", "this model's vectors are not normalised, so they cannot be shortened")
	}
	ctx, done := s.workContext(c, x)
	defer done()
	vecs, tokens, err := model.Embed(ctx, x.prio, texts, req.Truncate != nil, model.Normalized())
	if err != nil {
		return s.embedError(c, x, ctx, err, openAIInvalid, "input", model.MaxLength())
	}
	c.Locals(localStats, &encoderStats{model: model.Name(), tokens: tokens, inputs: len(texts)})
	data := make([]openAIEmbedding, len(vecs))
	for i, v := range vecs {
		if req.Dimensions != nil && *req.Dimensions < len(v) {
			// Shortened as OpenAI shortens: the first dimensions, made unit length again.
			v = v[:*req.Dimensions]
			embed.Normalize(v)
		}
		data[i] = openAIEmbedding{Object: "embedding", Index: i, Embedding: v}
		if req.EncodingFormat != nil && *req.EncodingFormat == "base64" {
			data[i].Embedding = vectorBase64(v)
		}
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(fiber.Map{"object": "list", "data": data, "model": model.Name(),
		"usage": fiber.Map{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// vectorBase64 is v's float32s, little-endian, in base64: OpenAI's encoding_format base64.
func vectorBase64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

type teiEmbedRequest struct {
	Inputs              json.RawMessage `json:"inputs"`
	Normalize           *bool           `json:"normalize"`
	Truncate            *bool           `json:"truncate"`
	TruncationDirection *string         `json:"truncation_direction"`
	PromptName          *string         `json:"prompt_name"`
	Dimensions          *int            `json:"dimensions"`
}

func (s *server) serveTEIEmbed(c *fiber.Ctx, x *exchange, ep *EmbedEndpoint) error {
	var req teiEmbedRequest
	if param, msg := decodeObject(c.Body(), &req); msg != "" {
		return invalid(param, msg)
	}
	texts, msg := textList(req.Inputs, s.opts.Limits, "inputs")
	switch {
	case msg != "":
		return invalid("inputs", msg)
	case !rightOnly(req.TruncationDirection):
		return invalid("truncation_direction", "`truncation_direction` must be Right")
	case req.PromptName != nil:
		return invalid("prompt_name", "this model has no prompts")
	case req.Dimensions != nil && (*req.Dimensions < 1 || *req.Dimensions > ep.Model.Dimensions()):
		return invalid("dimensions", "`dimensions` must be between 1 and the model's "+strconv.Itoa(ep.Model.Dimensions()))
	}
	normalize := req.Normalize == nil || *req.Normalize
	ctx, done := s.workContext(c, x)
	defer done()
	vecs, tokens, err := ep.Model.Embed(ctx, x.prio, texts, req.Truncate != nil && *req.Truncate, normalize)
	if err != nil {
		return s.embedError(c, x, ctx, err, invalid, "inputs", ep.Model.MaxLength())
	}
	c.Locals(localStats, &encoderStats{model: ep.Model.Name(), tokens: tokens, inputs: len(texts)})
	if req.Dimensions != nil {
		for i := range vecs {
			vecs[i] = vecs[i][:*req.Dimensions]
			if normalize {
				embed.Normalize(vecs[i])
			}
		}
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(vecs)
}

type teiRerankRequest struct {
	Query               *string  `json:"query"`
	Texts               []string `json:"texts"`
	Truncate            *bool    `json:"truncate"`
	TruncationDirection *string  `json:"truncation_direction"`
	RawScores           *bool    `json:"raw_scores"`
	ReturnText          *bool    `json:"return_text"`
}

type teiRank struct {
	Index int     `json:"index"`
	Text  *string `json:"text,omitempty"`
	Score float32 `json:"score"`
}

// rank scores passages against query, best first (ties by index); scores are logits made
// probabilities unless raw.
// A failure that is the request's is bad's answer about param.
func (s *server) rank(c *fiber.Ctx, x *exchange, model Reranker, query string, passages []string, truncate, raw bool,
	bad func(param, msg string) *apiError, param string) ([]int, []float32, int, error) {
	ctx, done := s.workContext(c, x)
	defer done()
	scores, tokens, err := model.Score(ctx, x.prio, query, passages, truncate)
	if err != nil {
		return nil, nil, 0, s.embedError(c, x, ctx, err, bad, param, model.MaxLength())
	}
	c.Locals(localStats, &encoderStats{model: model.Name(), tokens: tokens, inputs: len(passages)})
	// Ranked by the logits, which the sigmoid keeps in order until float32 rounds it: above
	// about 17 every logit is 1, and the more relevant of two such passages would rank by index.
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	if !raw {
		for i, v := range scores {
			scores[i] = float32(1 / (1 + math.Exp(-float64(v))))
		}
	}
	return order, scores, tokens, nil
}

func (s *server) serveTEIRerank(c *fiber.Ctx, x *exchange, ep *RerankEndpoint) error {
	var req teiRerankRequest
	if param, msg := decodeObject(c.Body(), &req); msg != "" {
		return invalid(param, msg)
	}
	switch {
	case req.Query == nil || *req.Query == "":
		return invalid("query", "`query` must be a non-empty string")
	case !rightOnly(req.TruncationDirection):
		return invalid("truncation_direction", "`truncation_direction` must be Right")
	}
	if msg := checkTexts(req.Texts, s.opts.Limits, "texts", *req.Query); msg != "" {
		return invalid("texts", msg)
	}
	order, scores, _, err := s.rank(c, x, ep.Model, *req.Query, req.Texts, req.Truncate != nil && *req.Truncate, req.RawScores != nil && *req.RawScores,
		invalid, "texts")
	if err != nil {
		return err
	}
	out := make([]teiRank, len(order))
	for k, i := range order {
		out[k] = teiRank{Index: i, Score: scores[i]}
		if req.ReturnText != nil && *req.ReturnText {
			out[k].Text = &req.Texts[i]
		}
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(out)
}

type cohereRerankRequest struct {
	Model           *string           `json:"model"`
	Query           *string           `json:"query"`
	Documents       []json.RawMessage `json:"documents"`
	TopN            *int              `json:"top_n"`
	ReturnDocuments *bool             `json:"return_documents"`
	// Cohere's max_tokens_per_doc and rank_fields are not taken.
}

type cohereResult struct {
	Index          int               `json:"index"`
	RelevanceScore float32           `json:"relevance_score"`
	Document       *cohereResultText `json:"document,omitempty"`
}

type cohereResultText struct {
	Text string `json:"text"`
}

func (s *server) serveCohereRerank(c *fiber.Ctx, x *exchange, ep *RerankEndpoint) error {
	var req cohereRerankRequest
	if param, msg := decodeObject(c.Body(), &req); msg != "" {
		return openAIInvalid(param, msg)
	}
	docs := make([]string, len(req.Documents))
	for i, raw := range req.Documents {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			var obj struct {
				Text *string `json:"text"`
			}
			if json.Unmarshal(raw, &obj) != nil || obj.Text == nil {
				return openAIInvalid("documents", "each document must be a string or {\"text\": string}")
			}
			text = *obj.Text
		}
		docs[i] = text
	}
	switch {
	case req.Query == nil || *req.Query == "":
		return openAIInvalid("query", "`query` must be a non-empty string")
	case req.TopN != nil && *req.TopN < 1:
		return openAIInvalid("top_n", "`top_n` must be at least 1")
	}
	if msg := checkTexts(docs, s.opts.Limits, "documents", *req.Query); msg != "" {
		return openAIInvalid("documents", msg)
	}
	model := ep.Model
	if req.Model != nil {
		picked, err := pickEncoder(s, c, x, *req.Model, ep.Model, ep.Load)
		if err != nil {
			return err
		}
		model = picked
	}
	order, scores, tokens, err := s.rank(c, x, model, *req.Query, docs, true, false, openAIInvalid, "documents")
	if err != nil {
		return err
	}
	if req.TopN != nil && *req.TopN < len(order) {
		order = order[:*req.TopN]
	}
	results := make([]cohereResult, len(order))
	for k, i := range order {
		results[k] = cohereResult{Index: i, RelevanceScore: scores[i]}
		if req.ReturnDocuments == nil || *req.ReturnDocuments {
			results[k].Document = &cohereResultText{Text: docs[i]}
		}
	}
	c.Locals(localOutcome, OutcomeServed)
	return c.JSON(fiber.Map{"id": "rerank-" + x.id, "model": model.Name(), "results": results,
		"usage": fiber.Map{"total_tokens": tokens}})
}
