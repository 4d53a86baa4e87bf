// Command serve is the Sluice server: it reads its configuration from SLUICE_ environment
// variables, loads the models (the embedded ones, or a user's directory), starts ONNX
// Runtime, one batcher per entity endpoint and, for the generation model, its KV cache and
// scheduler, and serves HTTP until SIGTERM or SIGINT, when it stops accepting, lets in-flight
// batches and streams finish within the grace, and exits.
//
// `serve check-model DIR` loads a model as the server would, runs a sample and reports every
// problem instead of serving. `serve audit verify` checks every chain of the audit stream (a
// stopped server's data directory, or a NATS cluster) and exits 1 where one breaks.
//
// Its Config composes each package's Config, whose tags declare the variables, defaults and
// units of that package's settings (envvars.go reads them); it declares only its own.
//
// Run it with `make serve`, or build it and run the binary; docs/CONFIGURATION.md lists every variable.
package main
