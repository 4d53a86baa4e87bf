// Package generate is text generation over a decoder model: what /generate, TGI's routes and
// /v1/completions submit. A Generator tokenizes a prompt, checks it against the model's
// positions, and submits it to the model's scheduler.Scheduler with a per-request Chooser that
// samples (greedy, or temperature, top-k, top-p and a repetition penalty from a seeded
// source, so one seed gives one output), detokenizes incrementally (tokenizer.DecodeStream:
// text only once later tokens cannot change it, never half a character), and stops on the
// end-of-sequence token or a stop sequence. The scheduler stops at the token limit.
//
// Streams carry one Event per token, and the last event says why generation ended in the
// terms HuggingFace's server uses (length, eos_token, stop_sequence) or, for a stream ended
// early, the error (the client's context, max queue wait, shutdown, stalls). Stop sequences
// are searched once, by the Chooser; each event carries its token's text (stop sequence
// included, as TGI answers) and Trimmed, the text released without it (as OpenAI answers):
// held back while it may begin a stop sequence, cut where the stop sequence began.
//
//	g, err := generate.New("tiny-lm", sched, tok, generate.Config{EOS: 3, MaxPositions: 256, DefaultMaxNewTokens: 64})
//	s, err := g.Generate(ctx, admission.Interactive, "The patient was started on",
//		generate.Params{MaxNewTokens: 16, Sampling: generate.Sampling{DoSample: true, Temperature: 0.7, Seed: 1}, SeedSet: true})
//	for {
//		ev, err := s.Next(ctx)
//		... ev.Text, ev.Trimmed ... if ev.Done { ev.Finish, ev.Err }
//	}
package generate
