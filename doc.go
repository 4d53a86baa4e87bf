// Package sluice is the root of the Sluice module, an in-process model-serving runtime for
// clinical NLP. It holds no code: the server is cmd/serve, and docs/ARCHITECTURE.md says how
// the packages fit. Its one test keeps the packages' imports to the directions that document
// lists.
package sluice
