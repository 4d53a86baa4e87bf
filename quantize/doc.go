// Package quantize rewrites a float32 ONNX graph so that its weight-bearing matrix products
// run in int8 on the CPU, in Go and without Python: the graph is read and written as the
// official ONNX protobuf (package onnxpb), and the result is an ordinary model.onnx that ONNX
// Runtime loads.
//
// # The rewrite
//
// Int8 replaces each MatMul (and each Gemm that is a plain product plus a bias) whose second
// input is a constant with ONNX Runtime's com.microsoft DynamicQuantizeMatMul. The weight is
// stored as int8 with one symmetric scale per output column (the column's largest magnitude
// over 127); the activation is quantized to uint8 with one scale and zero point per run, so no
// calibration data is needed. A bias Add that only follows the product is folded into it.
// A constant is an initializer, or one widened by Cast to float32 and scaled by Mul, which is
// how models/train stores the shipped models' weights (float16, or int8 with per-column
// steps); the widening nodes go once nothing reads them.
//
// # What stays float32
//
// The rule, in the order it is applied (Report.Kept counts each):
//
//   - output_layer: the product nearest each graph output that carries scores (every output
//     but a decoder's key/value tensors, whose names start with "present"), found by walking
//     back from the output
//     to the first weight-bearing product on each path. The classifier or language-model
//     head's rounding lands in the logits with nothing after it to average it out, and it is
//     a small share of the work.
//   - external_data, not_float32, not_2d: weights stored outside the graph's bytes, of
//     another type (already quantized, fp16 kept as fp16) or not a matrix.
//   - gemm_form: a Gemm with alpha or beta other than 1, transA, or a bias that is not one
//     value per column.
//   - narrow: fewer than Options.MinColumns (32) output columns. Quantizing the activation
//     costs one pass over it whatever the width; a product with few columns does too little
//     arithmetic per activation for int8 to repay that.
//
// Weights come from constants only: an initializer that is also a graph input (a caller may
// feed another value) is left alone, as ONNX Runtime leaves it out of constant folding.
//
// The weights use the whole int8 range, except with Options.ReduceRange: on x86 CPUs without
// VNNI, ONNX Runtime's uint8 x int8 kernel adds pairs of products in 16 bits and full-range
// weights saturate them, so ForCPU stores them in seven bits there (the same kernel, as fast;
// each step twice as coarse). The agreement gate (quantize/gate) is what catches a model that
// still suffers, on the machine that measures it.
//
// Convolutions stay float32: ONNX Runtime's ConvInteger takes uint8 weights only and has no
// kernel faster than its float32 Conv on these CPUs.
//
// # The cache
//
// A Cache keeps rewritten graphs in a directory, named by the model and the options (its
// slot) and the source graph's SHA-256 and Version (its key), with a sidecar holding the
// entry's own SHA-256: the next start reads the entry instead of rewriting, and an entry that
// fails the check is rewritten, never served. A slot holds one entry: a new model file or
// rewrite replaces the old entry rather than leaving it to fill the disk. Writes go through a
// temporary file and a rename, readable by others unless the umask says otherwise.
package quantize
