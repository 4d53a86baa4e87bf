package generate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/grammar"
	"github.com/sluice-serving/sluice/scheduler"
	"github.com/sluice-serving/sluice/tokenizer"
)

// Config describes the model a Generator serves.
type Config struct {
	// EOS ends a generation when generated (-1: the model has none), and so does any of
	// MoreEOS (the rest of a list-valued eos_token_id), as a stop token does.
	EOS     int64
	MoreEOS []int64
	// MaxPositions bounds prompt and generated tokens together.
	MaxPositions int
	// DefaultMaxNewTokens is used when a request sets no limit (generation_config.json).
	DefaultMaxNewTokens int
	// FirstTokenTimeout ends a stream with no token this long after submission (0: none).
	FirstTokenTimeout time.Duration
}

// Generator generates text with one decoder model: it tokenizes prompts, submits them to the
// model's scheduler, and turns the scheduler's tokens into text, stopping on the
// end-of-sequence token, on stop sequences, or at the token limit.
type Generator struct {
	name  string
	sched *scheduler.Scheduler
	tok   *tokenizer.Tokenizer
	cfg   Config

	// grammars are the constraints compiled over the model's vocabulary, made on first use.
	grammarsOnce sync.Once
	grammars     *grammar.Cache
}

// grammarCacheSize is how many compiled constraints a model keeps (each with the masks of
// the states its answers have reached).
const grammarCacheSize = 16

// New builds a Generator over sched, which must be started separately.
func New(name string, sched *scheduler.Scheduler, tok *tokenizer.Tokenizer, cfg Config) (*Generator, error) {
	switch {
	case sched == nil || tok == nil:
		return nil, fmt.Errorf("generate: model %q: scheduler and tokenizer are required", name)
	case cfg.MaxPositions < 2:
		return nil, fmt.Errorf("generate: model %q: max positions %d leaves no room to generate", name, cfg.MaxPositions)
	case cfg.DefaultMaxNewTokens < 1:
		return nil, fmt.Errorf("generate: model %q: default max new tokens must be at least 1, got %d", name, cfg.DefaultMaxNewTokens)
	}
	return &Generator{name: name, sched: sched, tok: tok, cfg: cfg}, nil
}

// Name is the model's name.
func (g *Generator) Name() string { return g.name }

// MaxPositions is the model's longest sequence, prompt and generated tokens together.
func (g *Generator) MaxPositions() int { return g.cfg.MaxPositions }

// DefaultMaxNewTokens is how many tokens a request that sets no limit may generate, at most.
func (g *Generator) DefaultMaxNewTokens() int { return g.cfg.DefaultMaxNewTokens }

// Constraint is spec compiled over the model's vocabulary, for Params.Constraint; a
// constraint sent again is taken from a cache. Errors are grammar's *UnsupportedError and
// *InvalidError, the request's fault.
func (g *Generator) Constraint(spec grammar.Spec) (*grammar.Index, error) {
	g.grammarsOnce.Do(func() {
		toks := make([][]byte, g.sched.Vocab())
		for id := range toks {
			if b, ok := g.tok.TokenBytes(int64(id)); ok {
				toks[id] = b
			}
		}
		g.grammars = grammar.NewCache(grammar.NewVocab(toks, append([]int64{g.cfg.EOS}, g.cfg.MoreEOS...)...), grammarCacheSize)
	})
	return g.grammars.Get(spec)
}

// Queue is the model's scheduler, which the endpoint's admission gate guards.
func (g *Generator) Queue() admission.Queue { return g.sched }

// Params are one request's generation parameters.
type Params struct {
	Sampling
	// MaxNewTokens bounds the generated tokens (0: the model's default).
	MaxNewTokens int
	// Stop ends the generation once the generated text contains one of these. Events carry
	// the text both with the stop sequence (Token.Text, as TGI answers) and without it
	// (Event.Trimmed, as OpenAI answers).
	Stop []string
	// SeedSet says Sampling.Seed was given; otherwise a sampled request gets a random one,
	// reported back so the output can be reproduced.
	SeedSet bool
	// Truncate keeps only the last Truncate prompt tokens (0: all).
	Truncate int
	// IgnoreEOS generates up to MaxNewTokens whatever the model says (benchmarks want
	// outputs of a known length).
	IgnoreEOS bool
	// Logprobs reports each token as its own piece beside its log probability (Token.Piece):
	// OpenAI's logprobs.
	Logprobs bool
	// PromptLogprobs scores the prompt too (Stream.PromptLogprobs): the model's log
	// probability of each prompt token after the first, with Sampling.TopLogprobs
	// alternatives. The prompt is then computed whole, never taken from the prefix cache.
	PromptLogprobs bool
	// MinTokens is how many tokens are generated before the end of sequence, a stop token or
	// a stop sequence may end the generation (vLLM's min_tokens; 0: none).
	MinTokens int
	// StopTokenIDs end the generation as the end of sequence does (vLLM's stop_token_ids);
	// a stop token that is not special stays in the text.
	StopTokenIDs []int64
	// Templated says the prompt was rendered by the model's chat template, which writes the
	// special tokens the model expects: it is encoded without adding any (as transformers'
	// apply_chat_template tokenizes).
	Templated bool
	// CacheScope is whose prefix cache the prompt shares (the caller's tenant; "" is the scope
	// of callers without one): a prompt reuses the keys and values computed for earlier
	// prompts of its own scope only, since a hit can be seen in the metrics and in the time to
	// the first token.
	CacheScope string
	// Quoted are the stretches of the prompt ([start, end) byte offsets, in order) the client
	// wrote inside a template's (chat.Prompt's): a special token spelt there is encoded as its
	// text (tokenizer.EncodeQuoted).
	Quoted [][2]int
	// Constraint, from Generator.Constraint, keeps the answer within a language: each step
	// chooses only among the tokens that continue it, and the generation ends (FinishEOS)
	// once the answer is whole and nothing may follow.
	Constraint *grammar.Index
}

// Errors of Generate that are the request's fault; they name sizes only.
var (
	ErrEmptyPrompt = errors.New("generate: the prompt has no tokens")
	// ErrTooLong: the prompt and max new tokens exceed the model's positions (a
	// *TooLongError says by how much).
	ErrTooLong = errors.New("generate: the prompt and max new tokens exceed the model's positions")
	// ErrUnknownToken: a prompt token, a logit bias or a stop token is an id past the model's
	// vocabulary.
	ErrUnknownToken = errors.New("generate: a token id is past the model's vocabulary")
)

// Errors a Stream can end with besides the request context's and admission's ErrExpired and
// ErrClosed. They are the scheduler's, named here so that callers need not import it.
var (
	ErrFirstTokenTimeout = scheduler.ErrFirstTokenTimeout // no token within the first-token timeout
	ErrClientStalled     = scheduler.ErrClientStalled     // the reader stopped reading
	ErrStalled           = scheduler.ErrStalled           // the decoder hung (the watchdog)
	ErrStarved           = scheduler.ErrStarved           // no token for the token stall timeout
	ErrShutdown          = scheduler.ErrShutdown          // the server shut down mid-stream
	ErrNoRoom            = scheduler.ErrNoRoom            // the sequence cannot fit in the KV cache
)

// TooLongError says by how much a request exceeds the model's positions.
type TooLongError struct{ Prompt, MaxNewTokens, MaxPositions int }

func (e *TooLongError) Error() string {
	return fmt.Sprintf("generate: %d prompt tokens + %d max new tokens must be <= %d", e.Prompt, e.MaxNewTokens, e.MaxPositions)
}

func (e *TooLongError) Is(target error) bool { return target == ErrTooLong }

// Generate starts generating after prompt in priority class p and returns the stream at once.
// Errors: ErrEmptyPrompt, *TooLongError, and the scheduler's (admission.ErrQueueFull,
// admission.ErrClosed). ctx is the request's: when it ends, the generation stops within one
// step and its KV blocks are freed.
func (g *Generator) Generate(ctx context.Context, p admission.Priority, prompt string, params Params) (*Stream, error) {
	// With the tokenizer's special tokens, as HF's servers encode a prompt: a Llama-style
	// template puts <s> first; GPT-2's and tiny-lm's files add nothing.
	enc := g.tok.EncodeQuoted(prompt, !params.Templated, params.Quoted)
	if !slices.Contains(enc.Special, false) {
		return nil, ErrEmptyPrompt
	}
	ids := enc.IDs
	if params.Truncate > 0 && len(ids) > params.Truncate {
		ids = ids[len(ids)-params.Truncate:]
	}
	if params.MaxNewTokens == 0 {
		// The default shrinks to the room the prompt leaves; a prompt that leaves none is
		// reported with the default, not a count below one.
		params.MaxNewTokens = g.cfg.DefaultMaxNewTokens
		if room := g.cfg.MaxPositions - len(ids); room >= 1 {
			params.MaxNewTokens = min(params.MaxNewTokens, room)
		}
	}
	// The room left, not the sum: a client's max_tokens near the largest int would wrap it.
	if params.MaxNewTokens < 1 || params.MaxNewTokens > g.cfg.MaxPositions-len(ids) {
		return nil, &TooLongError{Prompt: len(ids), MaxNewTokens: params.MaxNewTokens, MaxPositions: g.cfg.MaxPositions}
	}
	vocab := int64(g.sched.Vocab())
	past := func(id int64) bool { return id >= vocab }
	// A prompt token past the model's rows (a tokenizer that added one the model was not
	// resized for, "<pad>" at 32000 of 32000) would fail the step, and every stream in it.
	if slices.ContainsFunc(ids, past) || slices.ContainsFunc(params.StopTokenIDs, past) {
		return nil, ErrUnknownToken
	}
	for id := range params.LogitBias {
		if id >= vocab {
			return nil, ErrUnknownToken
		}
	}
	if params.DoSample && !params.SeedSet {
		params.Seed = rand.Uint64()
	}
	c := &chooser{sp: newSampler(params.Sampling, ids), ds: g.tok.NewDecodeStream(ids), tok: g.tok,
		eos: g.cfg.EOS, moreEOS: g.cfg.MoreEOS, stops: params.Stop, maxNew: params.MaxNewTokens, minNew: params.MinTokens,
		stopIDs: params.StopTokenIDs}
	if params.IgnoreEOS {
		c.eos, c.moreEOS = -1, nil
	}
	var prepare func(pause func() bool)
	if params.Constraint != nil {
		// A mask no answer has made yet is made off the scheduler's loop (Request.Prepare
		// for the first, Choice.Prepare for the others): a constraint whose masks are dear
		// costs its own answer's time, not the other streams' steps. A failure is the next
		// Choose's to report.
		c.m = params.Constraint.Start()
		if !c.m.Ready() {
			prepare = c.m.Prepare
		}
	}
	c.sp.full = params.Logprobs
	if c.minNew > 0 {
		c.sp.banned = append(append(slices.Clip(params.StopTokenIDs), c.eos), c.moreEOS...)
		c.sp.banning = true
	}
	for _, s := range params.Stop {
		c.maxStop = max(c.maxStop, len(s))
	}
	var chooser scheduler.Chooser = c
	if params.PromptLogprobs {
		c.prompt, c.promptScores = ids, make([]Token, 1, len(ids))
		c.promptTexts = promptTexts(prompt, enc, len(enc.IDs)-len(ids))
		c.promptScores[0] = Token{ID: ids[0], Text: c.promptTexts[0], Piece: g.tok.Decode(ids[:1], false)}
		chooser = promptScorer{c}
	}
	es, err := g.sched.Submit(ctx, scheduler.Request{Prompt: ids, MaxNewTokens: params.MaxNewTokens, Priority: p,
		Chooser: chooser, FirstTokenTimeout: g.cfg.FirstTokenTimeout, Prepare: prepare, CacheScope: params.CacheScope})
	if err != nil {
		return nil, err
	}
	st := &Stream{es: es, c: c, prompt: len(ids), seed: params.Seed, sampled: params.DoSample, pieces: params.Logprobs}
	if params.Logprobs {
		st.context = slices.Clone(ids[max(len(ids)-pieceContext, 0):])
	}
	return st, nil
}

// promptTexts is what each token of enc from its token from on adds to prompt, as written:
// from the end of the token before to its own end by the tokenizer's offsets (the last to the
// prompt's end), so that they spell the prompt an answer echoes. Decoded, they would spell what
// the normalizer and the decoder make of it: WordPiece drops the spaces between words. A token
// the template added spells nothing.
func promptTexts(prompt string, enc tokenizer.Encoding, from int) []string {
	texts := make([]string, len(enc.IDs)-from)
	at, written := 0, -1
	for i, off := range enc.Offsets {
		if enc.Special[i] {
			continue
		}
		end := min(max(off[1], at), len(prompt))
		for end < len(prompt) && !utf8.RuneStart(prompt[end]) {
			end++
		}
		if i >= from {
			texts[i-from], written = prompt[at:end], i-from
		}
		at = end
	}
	if written >= 0 {
		texts[written] += prompt[at:]
	}
	return texts
}

// pieceContext is how many tokens before one are decoded with it to find the text it adds:
// enough for a word piece to know it continues a word, or a SentencePiece token whether its
// space shows.
const pieceContext = 4

// Finish says why a generation ended, in the terms HuggingFace's server reports.
type Finish string

const (
	FinishLength       Finish = "length"
	FinishEOS          Finish = "eos_token"
	FinishStopSequence Finish = "stop_sequence"
	FinishError        Finish = "error"
)

// Token is one generated token.
type Token struct {
	ID int64
	// Text is what the token adds to the generated text: nothing for a special token. A
	// prompt token's (Stream.PromptLogprobs) is what it adds to the prompt as written.
	Text    string
	Logprob float32
	Special bool
	// SpecialText is a special token's own spelling ("</s>"), which TGI shows as its text.
	SpecialText string
	// Top are the most likely tokens at its position, best first, when Sampling.TopLogprobs
	// asked for them.
	Top []Alternative
	// Piece is the token alone, decoded with special tokens spelled out, when Params.Logprobs
	// asked for it (how OpenAI lists the tokens beside their log probabilities).
	Piece string
	// Bytes are the bytes the piece stands for where it holds part of a character (a
	// byte-level token's, which decoded alone is U+FFFD): what a client puts back together.
	// Nil where they are the piece's own UTF-8.
	Bytes []byte
}

// Alternative is a token that could have stood at a position, with its log probability.
type Alternative struct {
	ID      int64
	Text    string // the token alone, decoded with special tokens spelled out
	Logprob float32
	Special bool
	Bytes   []byte // as Token's
}

// Event is one step of a Stream: a token, and on the last event why the stream ended.
type Event struct {
	Token
	// Index counts the generated tokens, this one included.
	Index int
	// HasToken is false on a last event that only carries an error.
	HasToken bool
	Done     bool
	Finish   Finish
	// Err says why a stream ended early (FinishError): the request context's error, the
	// admission package's ErrExpired or ErrClosed, or the scheduler's stream errors.
	Err error
	// Trimmed is what this event adds to the generated text when stop sequences are left out
	// of it: text that may be the start of a stop sequence is held back until it cannot be,
	// and the last event releases what comes before the stop sequence, or everything held.
	// Without stop sequences it is Token.Text.
	Trimmed string
}

// Stream is one generation's tokens as they come. One goroutine reads it.
type Stream struct {
	es      *scheduler.Stream
	c       *chooser
	prompt  int
	seed    uint64
	sampled bool
	pieces  bool // Params.Logprobs
	// context is the last tokens before the next one (pieceContext of them), when pieces.
	context []int64
	// held is generated text not yet released as Trimmed; released counts the bytes that
	// were.
	held     string
	released int
}

// piece is the text token id adds after context, the tokens before it (decoded together,
// minus the context alone), as OpenAI lists tokens beside their log probabilities: so that the
// pieces of an answer spell its text, spaces and word pieces joined as the text joins them,
// and a special token (the end of sequence) adds nothing.
func piece(tok *tokenizer.Tokenizer, context []int64, id int64) string {
	if tok.IsSpecial(id) {
		return ""
	}
	base := tok.Decode(context, true)
	full := tok.Decode(append(slices.Clip(context), id), true)
	if rest, ok := strings.CutPrefix(full, base); ok {
		return rest
	}
	return tok.Decode([]int64{id}, true)
}

// pieceBytes is Token.Bytes of piece, token id's: its own bytes where they are part of a
// character (the middle one of three, whose piece in context is empty, too) or the piece
// holds U+FFFD for them.
func pieceBytes(tok *tokenizer.Tokenizer, piece string, id int64) []byte {
	b, ok := tok.TokenBytes(id)
	if !ok || utf8.Valid(b) && !strings.ContainsRune(piece, utf8.RuneError) {
		return nil
	}
	return b
}

// PromptLogprobs is the prompt's tokens with their log probabilities and alternatives when
// Params.PromptLogprobs asked for them (the first token has none), else nil. Valid once Next
// has returned the first event.
func (s *Stream) PromptLogprobs() []Token {
	if s.c.prompt == nil {
		return nil
	}
	return s.c.promptScores
}

// PromptTokens is the length of the tokenized prompt.
func (s *Stream) PromptTokens() int { return s.prompt }

// Seed is the seed sampling used; sampled is false for greedy decoding (and seed 0).
func (s *Stream) Seed() (seed uint64, sampled bool) { return s.seed, s.sampled }

// Next returns the next event, waiting until ctx ends; io.EOF after the last one.
func (s *Stream) Next(ctx context.Context) (Event, error) {
	ev, err := s.es.Next(ctx)
	if err != nil {
		return Event{}, err
	}
	return s.event(ev), nil
}

// NextOrWake is Next that also stops waiting when wake fires first, and then says so (woke,
// with no event); a nil wake never fires. An HTTP stream's body waits for its next token and
// its keep-alive with it, from the connection's own goroutine.
func (s *Stream) NextOrWake(ctx context.Context, wake <-chan time.Time) (ev Event, woke bool, err error) {
	sev, woke, err := s.es.NextOrWake(ctx, wake)
	if err != nil || woke {
		return Event{}, woke, err
	}
	return s.event(sev), false, nil
}

// event is the scheduler's event as the stream's reader gets it: detokenized, its finish
// named, its text trimmed of what a stop sequence may still claim.
func (s *Stream) event(ev scheduler.Event) Event {
	out := Event{Index: ev.Index, HasToken: ev.HasToken(), Done: ev.Done, Err: ev.Err,
		Token: Token{ID: ev.ID, Text: ev.Text, Logprob: ev.Logprob, Special: ev.Special}}
	if ev.Special && out.HasToken {
		out.SpecialText = s.c.tok.Decode([]int64{ev.ID}, false)
	}
	if s.pieces && out.HasToken {
		out.Piece = piece(s.c.tok, s.context, ev.ID)
		out.Bytes = pieceBytes(s.c.tok, out.Piece, ev.ID)
	}
	if len(ev.Top) > 0 {
		out.Top = make([]Alternative, len(ev.Top))
		for i, a := range ev.Top {
			text := s.c.tok.Decode([]int64{a.ID}, false)
			if s.pieces {
				text = piece(s.c.tok, s.context, a.ID)
			}
			out.Top[i] = Alternative{ID: a.ID, Text: text, Logprob: a.Logprob, Special: s.c.tok.IsSpecial(a.ID),
				Bytes: pieceBytes(s.c.tok, text, a.ID)}
		}
	}
	if s.pieces && out.HasToken {
		s.context = append(s.context[min(1, max(len(s.context)-pieceContext+1, 0)):], ev.ID)
	}
	if ev.Done {
		switch ev.Finish {
		case scheduler.FinishLength:
			out.Finish = FinishLength
		case scheduler.FinishStop:
			out.Finish = s.c.reason
			if out.Finish == FinishError {
				// The constraint failed: the token chosen without it is not the answer's,
				// and the stream ends with the error instead.
				out.Err, out.HasToken, out.Token = s.c.err, false, Token{}
				return out
			}
		default:
			out.Finish = FinishError
		}
	}
	if out.HasToken {
		out.Trimmed = s.trim(ev.Text, out.Finish)
	}
	return out
}

// trim adds a token's text to what is held and returns what can be released: everything but
// the last maxStop-1 bytes (whole characters) while the generation goes on, and at its end
// what lies before the stop sequence the chooser found, or all of it. The stop sequence was
// seen as soon as it was complete, so it never begins in text already released.
func (s *Stream) trim(text string, finish Finish) string {
	s.held += text
	keep := 0
	switch {
	case finish == FinishStopSequence:
		cut := min(max(s.c.stopAt-s.released, 0), len(s.held))
		out := s.held[:cut]
		s.released += len(s.held)
		s.held = ""
		return out
	case finish == "" && s.c.maxStop > 1:
		keep = min(len(s.held), s.c.maxStop-1)
		for keep < len(s.held) && !utf8.RuneStart(s.held[len(s.held)-keep]) {
			keep++ // never split a character
		}
	}
	out := s.held[:len(s.held)-keep]
	s.held = s.held[len(s.held)-keep:]
	s.released += len(out)
	return out
}

// chooser is a request's scheduler.Chooser: it samples, detokenizes and watches for the end
// of sequence and the stop sequences. It runs on the scheduler's goroutine; what it sets before
// the last event (reason, stopAt) the stream's reader reads after it.
type chooser struct {
	sp      *sampler
	ds      *tokenizer.DecodeStream
	tok     *tokenizer.Tokenizer
	eos     int64   // -1: none, or ignored
	moreEOS []int64 // the model's other ends of sequence (nil when ignored)
	stops   []string
	maxStop int
	text    strings.Builder // the generated text so far
	reason  Finish          // why Stop was set
	// stopAt is where, in the generated text, the stop sequence that ended it begins.
	stopAt int
	// maxNew is the request's token limit, at which the runner ends the generation; chosen
	// counts the tokens so far. Before minNew nothing but the limit ends it.
	maxNew, chosen, minNew int
	stopIDs                []int64
	// produced is the length of the generated text so far.
	produced int
	// prompt and promptScores, when the prompt is scored: promptScores[i] is prompt token i
	// with its log probability and alternatives (the first has none); promptTexts[i] is its
	// Text.
	prompt       []int64
	promptScores []Token
	promptTexts  []string
	// m follows the answer through Params.Constraint; err is why it could not (the stream
	// then ends with FinishError).
	m   *grammar.Matcher
	err error
}

// onlyBanned reports whether every token mask allows is banned.
func onlyBanned(mask *grammar.Mask, banned []int64) bool {
	n := mask.Count()
	for i, id := range banned {
		if mask.Allows(int(id)) && !slices.Contains(banned[:i], id) {
			n--
		}
	}
	return n <= 0
}

// ErrConstraint ends a constrained generation the model cannot go on with: no token of its
// vocabulary continues the answer the constraint allows, or the constraint's automaton grew
// past its bound (grammar.ErrTooManyStates). The request's constraint is at fault, not the
// server.
var ErrConstraint = errors.New("generate: the constrained answer cannot be continued")

// errNothingAllowed: the vocabulary cannot write what must come next.
var errNothingAllowed = fmt.Errorf("%w: no token of the vocabulary continues it", ErrConstraint)

// promptScorer is a chooser that scores its prompt (Params.PromptLogprobs).
type promptScorer struct{ *chooser }

// ScorePrompt scores prompt token pos with the scores that predicted it: the model's own
// distribution, without the request's penalties or temperature. A position seen already (the
// sequence was preempted and is computed again) is not scored twice.
func (p promptScorer) ScorePrompt(pos int, logits []float32) {
	c := p.chooser
	if pos != len(c.promptScores) {
		return
	}
	sp := c.sp
	sp.probs = grow(sp.probs, len(logits))
	for i, v := range logits {
		sp.probs[i] = float64(v)
	}
	id := c.prompt[pos]
	lp := sp.alternatives(int(id))
	t := Token{ID: id, Text: c.promptTexts[pos], Logprob: lp, Piece: c.tok.Decode([]int64{id}, false)}
	t.Bytes = pieceBytes(c.tok, t.Piece, id)
	// The alternatives as the text they would add there, as a generated token's are.
	context := c.prompt[max(pos-pieceContext, 0):pos]
	for _, a := range sp.top {
		text := piece(c.tok, context, a.ID)
		t.Top = append(t.Top, Alternative{ID: a.ID, Text: text, Logprob: a.Logprob, Special: c.tok.IsSpecial(a.ID),
			Bytes: pieceBytes(c.tok, text, a.ID)})
	}
	sp.top = nil
	c.promptScores = append(c.promptScores, t)
}

// isEOS says whether id ends the generation as the end of sequence.
func (c *chooser) isEOS(id int64) bool {
	return id >= 0 && (id == c.eos || slices.Contains(c.moreEOS, id))
}

func (c *chooser) Choose(logits []float32) scheduler.Choice {
	if c.m != nil {
		c.sp.mask = nil
		mask, err := c.m.Allowed()
		switch {
		case errors.Is(err, grammar.ErrTooManyStates):
			c.err = fmt.Errorf("%w: %w", ErrConstraint, err)
		case err != nil:
			c.err = err // the matcher's own failure: the server's
		case mask.Count() == 0:
			c.err = errNothingAllowed
		default:
			c.sp.mask = mask
			// The constraint wins over min_tokens' ban: where it allows only banned tokens
			// (the end of sequence, once the answer is whole), they are allowed.
			c.sp.banning = c.chosen < c.minNew && !onlyBanned(mask, c.sp.banned)
		}
	}
	id, logp := c.sp.pick(logits)
	c.chosen++
	c.sp.banning = c.chosen < c.minNew
	ch := scheduler.Choice{ID: id, Logprob: logp, Special: c.tok.IsSpecial(id), Text: c.ds.Next(id), Top: c.sp.top}
	c.sp.top = nil
	early := c.chosen < c.minNew
	if c.m != nil && c.err == nil {
		c.m.Advance(id)
	}
	// The answer is whole: nothing but the end of sequence may follow, so it ends here,
	// before min_tokens if need be; a stop token or sequence it ends on ends it as that.
	whole := c.m != nil && !c.isEOS(id) && c.m.Complete()
	switch {
	case c.err != nil:
		ch.Stop, c.reason = true, FinishError
	case early && whole:
		ch.Stop, c.reason = true, FinishEOS
	case early:
		if ch.Text != "" && len(c.stops) > 0 {
			c.text.WriteString(ch.Text) // seen by a stop sequence that ends after the minimum
		}
	case c.isEOS(id):
		ch.Stop, c.reason = true, FinishEOS
	case slices.Contains(c.stopIDs, id):
		// As vLLM: the stop token's text is left out of the trimmed text, like a stop
		// sequence that begins where it does.
		ch.Stop, c.reason, c.stopAt = true, FinishStopSequence, c.produced
	case ch.Text != "" && len(c.stops) > 0 && c.stopped(ch.Text):
		ch.Stop = true
	case whole:
		ch.Stop, c.reason = true, FinishEOS
	}
	if ch.Stop || c.chosen >= c.maxNew {
		// The last token: bytes of a character that will never complete are still text
		// (U+FFFD), as decoding the generated ids spells them.
		ch.Text += c.ds.Flush()
	}
	c.produced += len(ch.Text)
	if c.m != nil && c.err == nil && !ch.Stop && c.chosen < c.maxNew && !c.m.Ready() {
		ch.Prepare = c.m.Prepare
	}
	return ch
}

// stopped adds text to the generated text and reports whether a stop sequence now ends it,
// recording where the earliest one begins.
func (c *chooser) stopped(text string) bool {
	c.text.WriteString(text)
	// A stop sequence can only end within the new text, or start at most maxStop-1 bytes
	// before it.
	all := c.text.String()
	from := max(0, len(all)-len(text)-c.maxStop+1)
	tail := all[from:]
	// Only a match that ends in the new text is new: text before it was checked already, or
	// came before min_tokens, when no stop sequence may end the answer.
	fresh := len(tail) - len(text)
	at := -1
	for _, s := range c.stops {
		from := max(0, fresh-len(s)+1)
		if i := strings.Index(tail[from:], s); s != "" && i >= 0 && (at < 0 || from+i < at) {
			at = from + i
		}
	}
	if at < 0 {
		return false
	}
	c.reason, c.stopAt = FinishStopSequence, from+at
	return true
}
