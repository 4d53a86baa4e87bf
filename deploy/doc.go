// Package deploy is how Sluice runs in production on a GPU: the Kubernetes manifests in this
// directory (Deployment, Service, PodDisruptionBudget, HorizontalPodAutoscaler), the inference
// gateway's pool, its endpoint picker's configuration and a KEDA scaler in routing/, the NATS
// and Redis a fleet shares in state/, the Grafana dashboard in grafana/, and the image they
// run, built by ../Dockerfile.gpu.
//
// The package has no code. Its tests are the checks a Docker engine, a cluster and a Grafana
// server would otherwise be needed for, done by parsing: the Dockerfile with BuildKit's own
// parser, held to linter-like rules (pinned base images, a non-root numeric user, one
// exec-form entrypoint, a health check on /readyz, the ONNX Runtime release of
// scripts/fetch-onnxruntime.sh's CUDA stack); the manifests strictly decoded into the Kubernetes API's
// types, so that a misspelt field fails, and checked against each other, the image and the
// server (probe paths and port, a termination grace longer than the server's shutdown grace,
// the image's UID, every SLUICE_ variable a setting of docs/CONFIGURATION.md); the picker's
// configuration against the pods' labels and the gauges the server exports; the NATS cluster's
// config file against its StatefulSet and Service, and the fleet's addresses against the
// Services they name; and every query of the dashboard, whose metric names must be ones the
// server exports, as listed in docs/METRICS.md's table, each of which must be on a panel.
//
// When the server's routes, settings or metrics change, `go test ./deploy/` says which of
// these files must follow.
package deploy
