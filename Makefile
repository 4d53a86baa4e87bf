# Sluice: the two commands a user needs are `make serve` and `make test`.
SHELL := /bin/bash
ORT_LIB := third_party/onnxruntime/libonnxruntime.so.1
export SLUICE_ORT_LIB ?= $(CURDIR)/$(ORT_LIB)
GO ?= go

JS_CLIENTS := cmd/serve/testdata/js/node_modules/.package-lock.json

# The real redis-server the shared-budget tests run (scripts/fetch-redis.sh: PATH's, or
# Debian's package unpacked without root). Exported, so that a test that cannot run it fails.
REDIS_SERVER := third_party/redis/redis-server
export TEST_REDIS_SERVER ?= $(CURDIR)/$(REDIS_SERVER)

.PHONY: serve test build ort redis vet staticcheck unit fuzz models bench overload generate-bench hol-bench fleet-bench jobs-bench durability

# Fetched again when the script's pin changes (it keeps a copy that verifies).
$(ORT_LIB): scripts/fetch-onnxruntime.sh
	bash scripts/fetch-onnxruntime.sh
	touch -c $@

ort: $(ORT_LIB)

$(REDIS_SERVER): scripts/fetch-redis.sh
	bash scripts/fetch-redis.sh
	touch -ch $@

redis: $(REDIS_SERVER)

# The npm clients the compatibility tests run (openai, @huggingface/inference, gRPC's and Cohere's), as locked.
$(JS_CLIENTS): cmd/serve/testdata/js/package-lock.json
	npm ci --prefix cmd/serve/testdata/js --no-audit --no-fund

build: $(ORT_LIB)
	$(GO) build -o bin/sluice ./cmd/serve

## serve: fetch ONNX Runtime if missing, build, and serve the embedded models on :8080.
serve: build
	./bin/sluice

## test: vet, staticcheck, the race-enabled test suite (real ONNX Runtime, real HTTP, and
## the ecosystem's own JS clients against the generation routes) and every fuzz target briefly.
test: $(ORT_LIB) $(JS_CLIENTS) vet staticcheck unit
	$(MAKE) fuzz FUZZTIME=5000x

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) tool staticcheck ./...

unit: $(ORT_LIB) $(REDIS_SERVER)
	$(GO) test -race -count=1 -timeout 12m ./...

# Every fuzz target: package and name.
FUZZ_TARGETS := ./tokenizer:FuzzEncode ./tokenizer:FuzzLoad ./entities:FuzzExtract ./handlers:FuzzEntityRequests ./handlers:FuzzGenerationRequests ./entities:FuzzLists
FUZZTIME ?= 1m

## fuzz: run each fuzz target for FUZZTIME (default 1m; make test runs 5,000 inputs each: a count,
## not a duration, because Go 1.26's fuzzer can fail a target when a -fuzztime duration
## expires mid-run, golang/go#75804, fixed in Go 1.27).
fuzz: $(ORT_LIB)
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($${t%%:*}) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}"; \
	done

## models: retrain and re-export every shipped model (not run by CI).
models:
	bash models/train/run.sh

## bench: the Go benchmarks quoted in docs/BENCHMARKS.md.
bench: $(ORT_LIB) $(REDIS_SERVER)
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

## overload: capacity, 2x and 10x overload, bulk beside interactive, two tenants one flooding (not run by CI).
overload: $(ORT_LIB)
	bash scripts/overload.sh
	bash scripts/tenants.sh

## generate-bench: continuous batching against one sequence at a time, and clients that hang up (not run by CI).
generate-bench: $(ORT_LIB)
	bash scripts/generate-bench.sh

## fleet-bench: three replicas on one Redis, a tenant offered 4x its budget for 20 s (requests,
## tokens), the same without Redis, and Redis stopped for the middle third (not run by CI).
fleet-bench: $(ORT_LIB) $(REDIS_SERVER)
	SLUICE_FLEET_BENCH_S=$${SLUICE_FLEET_BENCH_S:-20} $(GO) test -run '^TestFleetBench$$' -count=1 -v -timeout 30m ./cmd/serve/

## hol-bench: short /analyze requests beside 100,000-character ones (not run by CI).
hol-bench: $(ORT_LIB)
	bash scripts/hol-bench.sh

## durability: the tests that prove durability across SIGKILL and take minutes each (a
## webhook taken over from a killed process once its claim passes); not run by CI.
durability: $(ORT_LIB)
	LONG_TESTS=1 $(GO) test -run '^TestAWebhookOutlivesSIGKILL$$' -count=1 -v -timeout 20m ./cmd/serve/

## jobs-bench: a job of JOBS_BENCH_DOCS notes (default 10,000) alone against /pii/deidentify's
## capacity, beside interactive load at half capacity, and across a SIGKILL (not run by CI).
## JOBS_BENCH_ROUNDS alternates (a) that many times (default 2). JOBS_BENCH_SERVER_CPUS=0 pins
## the server to CPU 0 and runs the test, its load generator, on CPU 1 (taskset); unset, both
## share every core.
jobs-bench: $(ORT_LIB)
	SLUICE_JOBS_BENCH_DOCS=$${JOBS_BENCH_DOCS:-10000} SLUICE_JOBS_BENCH_ROUNDS=$${JOBS_BENCH_ROUNDS:-2} \
		SLUICE_JOBS_BENCH_SERVER_CPUS=$${JOBS_BENCH_SERVER_CPUS:-} \
		$${JOBS_BENCH_SERVER_CPUS:+taskset -c 1} $(GO) test -run '^TestJobsBench$$' -count=1 -v -timeout 30m ./cmd/serve/
