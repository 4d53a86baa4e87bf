// Package stepplan is the seam between a generation scheduler and the runner that executes its
// steps, as vLLM splits them: the scheduler decides which sequences step and how far, in
// terms of token ids and KV block ids (a Plan); the runner owns the model and the keys and
// values those blocks hold, lays the plan out as the model's tensors, runs it, writes the new
// keys and values into the blocks and hands back each row's scores in the plan.
//
// It is a package of its own, with no imports, so that both sides see the same types and
// neither imports the other: package scheduler plans and never touches a tensor, package
// engine runs and never decides. Block ids are plain int32 here (package kvcache numbers its
// blocks the same way); a plan's block table is what a device runner uploads as an int32
// tensor.
//
// A Plan is reused from step to step by whoever builds it, so nothing in it allocates once
// its slices have grown to the largest step.
package stepplan
