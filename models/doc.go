// Package models turns a model directory into the parts the server runs: the parsed
// config.json (labels, limits), the tokenizer from tokenizer.json and the ONNX graph bytes.
//
// A model directory has the layout of a HuggingFace / optimum ONNX export, so a user's own
// export loads exactly like the small models Sluice ships. The shipped ones (clinical-ner,
// pii, tiny-lm; trained by the recipe in models/train) are embedded in the binary and
// reached through Embedded(), so a fresh machine serves real answers with no download.
//
// Use Load with any fs.FS: Embedded() for the shipped models, os.DirFS(path) for a directory
// on disk. The tokenizer lives in package tokenizer, the entity post-processing in package
// entities, and the recipe that trains the shipped models in models/train.
package models
