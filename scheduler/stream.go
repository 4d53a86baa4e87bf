package scheduler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sluice-serving/sluice/admission"
)

// Choice is what a Chooser decides for one step of one sequence.
type Choice struct {
	// ID is the chosen token.
	ID int64
	// Logprob is the token's log probability under the distribution it was drawn from.
	Logprob float32
	// Text is the text this token completes, as the caller's detokenizer decided (possibly
	// empty, when the token ends inside a character or a word piece).
	Text string
	// Special marks a token the tokenizer calls special (an end of sequence, for example).
	Special bool
	// Stop ends the generation with this token (an end-of-sequence token, a stop sequence).
	Stop bool
	// Top are the most likely tokens at this position with their log probabilities, best
	// first, when the caller asked for them (OpenAI's top_logprobs).
	Top []Alternative
	// Prepare, when set, is work the sequence's next Choose needs and may take long over (a
	// constraint's mask at the state this token led to, made once and kept). The scheduler
	// runs it off the loop and leaves the sequence out of its steps until it returns, so that
	// the other streams' steps never wait on it. Prepare calls pause, on its own goroutine,
	// between small pieces of its work (a tenth of a millisecond or so): while the loop has
	// rows to run, pause holds the work to the processor time a stream gets; it returns false
	// when the sequence has ended, and Prepare then stops. Its work must be bounded (a mask's
	// walk is): Close waits for it. It must not touch what the next Choose does not own.
	Prepare func(pause func() bool)
}

// PromptScorer is a Chooser that also scores its prompt: for each prompt token after the
// first, ScorePrompt gets the scores that predicted it (pos is the token's index in the
// prompt), which prefill computes anyway. Positions come in order, and again from the start
// after a preemption. A sequence whose Chooser is one computes its whole prompt: the prefix
// cache's positions come without scores.
type PromptScorer interface {
	ScorePrompt(pos int, logits []float32)
}

// Alternative is a token that could have been chosen, with its log probability.
type Alternative struct {
	ID      int64
	Logprob float32
}

// Chooser picks each next token of one sequence: sampling, detokenizing and stop conditions
// belong to it, not to the scheduler. The scheduler calls Choose on its own goroutine, once
// per generated token, with the scores of the sequence's last position; logits is only valid
// during the call.
type Chooser interface {
	Choose(logits []float32) Choice
}

// Finish says why a stream ended.
type Finish uint8

const (
	// FinishLength: the request's token limit, or the model's positions, ran out.
	FinishLength Finish = iota + 1
	// FinishStop: the Chooser stopped on a token (end of sequence, stop sequence).
	FinishStop
	// FinishError: the stream was ended by something else; Event.Err says what.
	FinishError
)

func (f Finish) String() string {
	switch f {
	case FinishLength:
		return "length"
	case FinishStop:
		return "stop"
	case FinishError:
		return "error"
	}
	return "none"
}

// Errors a Submit or a stream's last event (Event.Err) can carry besides the request
// context's. The first three wrap the admission package's, which is how the HTTP layer tells a
// refusal from a failure.
var (
	// ErrQueueFull: the request's class already holds QueueSize waiting sequences; nothing
	// was queued.
	ErrQueueFull = fmt.Errorf("scheduler: %w", admission.ErrQueueFull)
	// ErrExpired: the sequence waited MaxQueueWait for its first admission and was never
	// computed.
	ErrExpired = fmt.Errorf("scheduler: %w", admission.ErrExpired)
	// ErrClosed: the scheduler takes no more work, or ended a sequence that had not started
	// when it shut down.
	ErrClosed = fmt.Errorf("scheduler: %w", admission.ErrClosed)
	// ErrFirstTokenTimeout: no token within the request's first-token timeout.
	ErrFirstTokenTimeout = errors.New("scheduler: no first token within the time-to-first-token timeout")
	// ErrClientStalled: the reader took no event for the stall timeout while its buffer was
	// full, so the sequence was aborted rather than buffered without bound.
	ErrClientStalled = errors.New("scheduler: the reader stopped reading")
	// ErrStalled: no step finished within the stall timeout; every stream in flight is ended
	// (the watchdog).
	ErrStalled = errors.New("scheduler: the decoder stalled")
	// ErrStarved: a sequence that had streamed tokens got none for Config.TokenStallTimeout
	// (it waited, preempted, while the server was busy).
	ErrStarved = errors.New("scheduler: no token within the token stall timeout")
	// ErrShutdown: the scheduler shut down before the stream finished.
	ErrShutdown = errors.New("scheduler: shut down mid-stream")
	// ErrNoRoom: the sequence cannot fit in the KV cache even alone.
	ErrNoRoom = errors.New("scheduler: the sequence does not fit in the KV cache")
	// ErrStepFailed: the model failed on a step, or the Runner panicked in it (the error
	// names the panic value's type only).
	ErrStepFailed = errors.New("scheduler: the decoder step failed")
	// ErrInvalidRequest marks a Request the scheduler cannot run (no prompt, a prompt at the
	// model's positions, no token to generate, no Chooser, an unknown class).
	ErrInvalidRequest = errors.New("scheduler: invalid generation request")
)

// Event is one thing a stream tells its reader: a generated token, and, on the last event,
// why the stream ended.
type Event struct {
	// Choice is the generated token; zero on an event that only ends the stream with an error.
	Choice
	// Index counts the generated tokens, this one included (1 for the first).
	Index int
	// Done marks the last event.
	Done bool
	// Finish, on the last event, says why the stream ended; Err says what went wrong when it
	// is FinishError.
	Finish Finish
	Err    error
}

// HasToken reports whether the event carries a generated token.
func (e Event) HasToken() bool { return e.Index > 0 && e.Err == nil }

// Stream is one submitted generation. Read it with Next until Done; the scheduler never
// blocks on it: when a reader falls behind by the stream's buffer, its sequence pauses (its
// blocks kept), and one that stays behind for the stall timeout is ended with
// ErrClientStalled.
type Stream struct {
	seq  *sequence
	last bool
}

// Next returns the next event, waiting for it until ctx ends. After the last event (Done) it
// returns io.EOF.
func (s *Stream) Next(ctx context.Context) (Event, error) {
	ev, _, err := s.NextOrWake(ctx, nil)
	return ev, err
}

// NextOrWake is Next that also stops waiting when wake fires first, and says so (woke, with
// no event): a reader that has something else to do after a quiet while (an HTTP stream's
// keep-alive) waits for both without a goroutine of its own between it and the stream. A nil
// wake never fires.
func (s *Stream) NextOrWake(ctx context.Context, wake <-chan time.Time) (ev Event, woke bool, err error) {
	if s.last {
		return Event{}, false, io.EOF
	}
	q := s.seq
	select {
	case ev := <-q.events:
		q.read()
		return ev, false, nil
	default:
	}
	select {
	case ev := <-q.events:
		q.read()
		return ev, false, nil
	case <-q.done:
		select {
		case ev := <-q.events: // token events come before the last one
			q.read()
			return ev, false, nil
		default:
		}
		s.last = true
		return q.final, false, nil
	case <-wake:
		return Event{}, true, nil
	case <-ctx.Done():
		return Event{}, false, ctx.Err()
	}
}

// PromptTokens is the number of prompt tokens the stream was submitted with.
func (s *Stream) PromptTokens() int { return s.seq.promptLen }
