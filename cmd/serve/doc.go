// Command serve is the Sluice server: it reads its configuration from SLUICE_ environment
// variables, loads the models (the embedded ones, or a user's directory), starts ONNX
// Runtime and one batcher per endpoint, and serves HTTP until SIGTERM or SIGINT, when it stops
// accepting, finishes in-flight batches and exits.
//
// Run it with `make serve`, or build it and run the binary; README.md lists every variable.
package main
