package chat

import "encoding/json"

// Options are what a request asks of an external model's answer besides its messages, passed
// on as the caller wrote them: an OpenAI-compatible server reads them itself.
type Options struct {
	MaxTokens                         int
	ResponseFormat, Tools, ToolChoice json.RawMessage
	ParallelToolCalls                 *bool
	// Temperature (0: the best token each step), TopP (0 or 1: all) and the penalties are
	// OpenAI's sampling; Seed, when set, makes it repeatable.
	Temperature, TopP, PresencePenalty, FrequencyPenalty float64
	Seed                                                 *int64
}

// Delta is one piece of a streamed answer: text, or a piece of one of its tool calls.
type Delta struct {
	Content string
	Call    *CallDelta
}

// CallDelta is a piece of the answer's tool call Index: its id and name come on its first
// piece, its arguments' JSON text over all of them.
type CallDelta struct {
	Index               int
	ID, Name, Arguments string
}
