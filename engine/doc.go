// Package engine runs ONNX models on ONNX Runtime for the rest of Sluice: the encoder forward
// pass behind /analyze and /pii/extract, and the decoder steps that package scheduler plans
// for token generation. It is sessions, tensors and the keys and values they read and write:
// what to run when is its callers' business.
//
// # How it works
//
// A Runtime loads the ONNX Runtime shared library (see LibraryPath) and settles the device
// once. With DeviceAuto it opens a session for a trivial built-in model on the CUDA execution
// provider; if that fails it logs one warning and uses the CPU. With DeviceCUDA the same failure
// is a start-up error naming the libraries CUDA needs. Each Session is one loaded model whose
// input and output names, element types and axes are read from the model itself.
//
// RunEncoder feeds input_ids and attention_mask (and token_type_ids, zeros but for a pair's
// second sequence where the batch says, and each row's
// positions as position_ids, when the model declares those inputs), in the integer type the
// model declares (int64 as optimum exports, or int32), for a padded batch and returns the
// logits [batch, sequence, labels] as float32, widened when the model gives float16. It
// checks the batch against the model's declared axes first, so a wrong shape is an
// ErrInvalidInput error, never a panic inside the library. Run does the same for any model with
// a map of named int64 and float32 tensors.
//
// Sessions are safe for concurrent use: ONNX Runtime allows parallel runs on one session, and
// a read-write lock makes Close wait for runs in flight instead of freeing memory under them.
// A context that ends during a run terminates it (ONNX Runtime's run options), so Close waits
// no longer than the library takes to notice.
//
// Memory: sessions run with ONNX Runtime's memory-pattern cache off. It plans allocations per
// input shape, and batches arrive in many shapes, so it grew the process without bound; the
// CPU arena, which keeps the buffers of the largest shapes run so far, stays on. Callers warm
// a session with their largest batch (extract.Classifier.Warm) so that memory is reached at
// start-up rather than under load.
//
// # Generation
//
// NewDecoder loads a decoder in HuggingFace optimum's decoder-with-past layout (input_ids,
// attention_mask, optionally position_ids, past_key_values.{i}.key/value in; logits and
// present.{i}.key/value out). RunStep runs one step (a Step: a left-padded batch with its past
// keys and values) into buffers the caller owns, and Terminate stops a step that hangs.
//
// A Runner (runner.go) executes a generation scheduler's step plans (package stepplan) on a
// Decoder, as vLLM's model runner does for its scheduler: the plan names, per row, the new
// token ids, how many positions are past and the KV blocks that hold them; the Runner makes
// the plan's copies on write, gathers each row's past from the blocks into a left-padded
// batch (or, when the batch is the previous step's rows each one token longer, takes that
// step's present as the past), runs the decoder, writes the new keys and values into the
// blocks (scatter) and hands back each row's scores. The blocks' keys and values live in its
// KVStore (kvstore.go): one float32 slab, allocated once to the block pool's size, with
// layout [block][layer][key|value][head][position][dim] so that one head's positions in a
// block are contiguous. Which block is whose is package kvcache's bookkeeping, and admission,
// batching and preemption are package scheduler's; neither is imported here, and the
// scheduler does not import engine.
//
// A decoder may also carry an in-place graph of the same network (AddInPlaceDecode,
// inplace.go; models/train/export_inplace.py writes tiny-lm's), with each layer's keys and
// values in one buffer of the served length that is both the past input and the present
// output, which ONNX Runtime's GroupQueryAttention extends in place, attending over each row's
// own length. The Runner runs there every step of one new token a row after a past and every
// step of first prompts (a prompt after a cached prefix, a later chunk of a long one, a mixed step
// or a row past the buffers stays on the decoder-with-past graph): it keeps the buffers
// between steps, so a batch of the previous step's rows gathers nothing, and no step copies
// its whole past or attends over padding. The graph is checked against the decoder on probes
// when it is added and refused if their scores or the keys and values they write differ.
//
// Errors carry names and sizes only. ONNX Runtime's own messages can quote tensor values such
// as token ids, so the engine masks every number in them and sets the library's stderr log to
// fatal-only; nothing in a request reaches a log line through this package.
//
// # Threads and devices
//
// Every session owns an intra-op thread pool of RuntimeOptions.IntraOpThreads threads (ONNX
// Runtime's default is one per physical core), so two models loaded side by side on a small
// machine can oversubscribe it; set the count to the cores the process should use.
//
// The CUDA path could not be exercised on the machines this was written on. Known from the
// binding's issue tracker: the CUDA provider may install signal handlers without SA_ONSTACK,
// after which Go can crash on SIGINT/SIGTERM; check graceful shutdown on a GPU host.
//
// Runs do not use I/O binding. The binding (onnxruntime_go 1.35) has one memory info, the
// CPU's, so a bound tensor is host memory either way and binding would copy exactly what Run
// copies: an encoder's inputs are ids and its logits are needed on the host to decode, and a
// decoder's KV blocks live in Go memory (the Runner's KVStore) by design. Keeping KV on the
// device would take ORT's BindOutputToDevice through cgo of our own and a device-resident
// store behind the same Runner (the scheduler's plans name blocks, not tensors, so it would
// not change), which should be measured on a GPU before it is built.
//
// # Process-wide state
//
// The binding keeps ONNX Runtime's environment in package variables, so there is one per
// process. The engine counts the Runtimes using it: the first loads the library, the last
// Close unloads it, and all of them must name the same library file.
//
// # Use
//
//	rt, err := engine.NewRuntime(engine.RuntimeOptions{Device: engine.DeviceAuto, IntraOpThreads: 2})
//	...
//	defer rt.Close()
//	pii, err := rt.NewSession("pii", onnxBytes)
//	...
//	logits, err := pii.RunEncoder(ctx, engine.EncoderBatch{IDs: ids, Mask: mask, Batch: 8, SeqLen: 64})
//	scores := logits.Row(0, 5) // label scores of token 5 of sequence 0
//
// Tests in any package of this module can call NewRuntime with RuntimeOptions{}: LibraryPath
// finds the library that scripts/fetch-onnxruntime.sh installs under third_party/.
//
// # Settings
//
// The server's environment sets RuntimeOptions (and its CUDA options) through their tags: env
// names the variable (with the prefix SLUICE_) and envDefault its default. cmd/serve reads
// them (its envvars.go) and names each Problem of Validate ("CUDA.DeviceID") by the variable
// its field's tag declares. NoSpinning has no tag: the server's SLUICE_ORT_SPINNING says the
// opposite.
package engine
