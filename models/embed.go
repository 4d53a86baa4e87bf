package models

import (
	"embed"
	"io/fs"
)

// shipped holds the default models. It is read-only by construction (embed.FS), so sharing it
// is not shared mutable state.
//
//go:embed clinical-ner/config.json clinical-ner/tokenizer.json clinical-ner/model.onnx
//go:embed pii/config.json pii/tokenizer.json pii/model.onnx
//go:embed tiny-lm/config.json tiny-lm/tokenizer.json tiny-lm/model.onnx tiny-lm/decode_inplace.onnx tiny-lm/generation_config.json tiny-lm/tokenizer_config.json
//go:embed embed-mini/config.json embed-mini/tokenizer.json embed-mini/model.onnx embed-mini/modules.json embed-mini/1_Pooling/config.json
//go:embed rerank-mini/config.json rerank-mini/tokenizer.json rerank-mini/model.onnx
var shipped embed.FS

// Embedded returns the models shipped inside the binary, one directory per model.
func Embedded() fs.FS { return shipped }

// EmbeddedNames lists the shipped models' directory names.
func EmbeddedNames() []string {
	return []string{"clinical-ner", "pii", "tiny-lm", "embed-mini", "rerank-mini"}
}
