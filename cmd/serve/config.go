package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/audit"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/fleetbudget"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/identity"
	"github.com/sluice-serving/sluice/jobs"
	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/mtls"
	"github.com/sluice-serving/sluice/natsbox"
	"github.com/sluice-serving/sluice/resilience"
	"github.com/sluice-serving/sluice/scheduler"
	"github.com/sluice-serving/sluice/settings"
	"github.com/sluice-serving/sluice/signing"
	"github.com/sluice-serving/sluice/tracing"
)

// Config is everything the server reads from its environment: one section per field, each
// read from SLUICE_ variables that the section's type declares in its tags (envvars.go says
// how). A package whose settings the server reads declares them next to its own Config, with
// their defaults, and checks them in its Validate; this command composes the sections and
// declares only what is its own (Own), or the wiring's (an endpoint's watermarks). OpenMed's
// service's variables are honoured where Sluice does the same thing (see openmedenv.go), so a
// deployment of that service can switch without renaming its settings.
type Config struct {
	Own
	// Runtime is ONNX Runtime's: the device, threads and the CUDA provider's options.
	Runtime engine.RuntimeOptions
	// Extract windows the entity routes' texts (WINDOW_STRIDE); Extract.Batch is their
	// batching, as set for the CPU.
	Extract extract.Config
	// GPUBatch replaces Extract.Batch's size limits when the runtime settles on CUDA; a CPU
	// limit set without its GPU counterpart holds there too (loadConfig).
	GPUBatch batcher.GPULimits
	// Admission is what every endpoint's gate shares: the Retry-After policy and the retry
	// reservations. Each endpoint's watermarks are BatchGate's and GenerateGate's.
	Admission    admission.Config
	BatchGate    batchGate
	GenerateGate generateGate
	// Deferred is deferred admission's, used when Own.DeferredAdmission switches it on; its
	// ConcurrencyWait holds either way.
	Deferred admission.BudgetsConfig
	// Fleet keeps the budgets in Redis, shared by every replica, when its URL is set.
	Fleet fleetbudget.Config
	// Scheduler and KV are generation's: its scheduler and its paged KV cache's size.
	Scheduler scheduler.Config
	KV        kvcache.Config
	// NATS is where durable state lives (the embedded server or an external cluster); Audit
	// is the audit kept there.
	NATS  natsbox.Config
	Audit audit.Config
	// Jobs is /jobs': corpus de-identification kept in the same JetStream.
	Jobs jobs.Config
	// Signing verifies OpenMed's HMAC request signatures when a secret is configured.
	Signing signing.Config
	// Tracing is OpenMed's REST tracing (OpenTelemetry, OTLP over HTTP).
	Tracing tracing.Config
	// MTLS requires verified client certificates; its CertFile and KeyFile make Sluice
	// terminate TLS.
	MTLS mtls.Config
	// Resilience retries a model call that failed in the model and breaks a failing model's
	// calls, as OpenMed's settings describe.
	Resilience resilience.Config
}

// batchGate is the entity endpoints' watermarks (fields named as admission.Config's), with
// OpenMed's meanings: a high watermark of 0 is the queue size; a low one unset is half the
// high one, and an explicit 0 sheds until nothing is outstanding.
type batchGate struct {
	HighWatermark int  `env:"BATCH_HIGH_WATERMARK" envDefault:"0"`
	LowWatermark  *int `env:"BATCH_LOW_WATERMARK"`
}

// generateGate is generation's watermarks (fields named as admission.Config's): of depth
// (sequences waiting and running; a high watermark of 0 is MaxRunning + QueueSize, a low one
// of 0 half the high one), and of the share of KV blocks in use at which it sheds with reason
// memory, until use drains to the low one (0: the high one - 0.1).
type generateGate struct {
	HighWatermark       int     `env:"GENERATE_HIGH_WATERMARK" envDefault:"0"`
	LowWatermark        int     `env:"GENERATE_LOW_WATERMARK" envDefault:"0"`
	MemoryHighWatermark float64 `env:"KV_HIGH_WATERMARK" envDefault:"0.95"`
	MemoryLowWatermark  float64 `env:"KV_LOW_WATERMARK" envDefault:"0"`
}

// Own is the settings this command declares itself: the server's (listening, logging,
// models, authentication, budgets, the gateway's upstream), the HTTP layer's (handlers) and
// de-identification's, whose mapping stays here.
type Own struct {
	Addr string `env:"ADDR" envDefault:":8080"`
	// GRPCAddr is where the gRPC services listen (grpcserve); empty: no gRPC listener.
	GRPCAddr string `env:"GRPC_ADDR"`
	// ORTSpinning is engine.RuntimeOptions.NoSpinning, negated.
	ORTSpinning bool   `env:"ORT_SPINNING" envDefault:"false"`
	LogLevel    string `env:"LOG_LEVEL" envDefault:"info"`
	// RefusalLogsPerSecond bounds the access-log lines of refusals per route and second.
	RefusalLogsPerSecond int `env:"LOG_REFUSALS_PER_S" envDefault:"10"`

	// ModelsDir, when set, holds every model served (one directory each); when unset, the
	// embedded models are served.
	ModelsDir    string            `env:"MODELS_DIR"`
	AnalyzeModel string            `env:"ANALYZE_MODEL" envDefault:"clinical-ner"`
	PIIModel     string            `env:"PII_MODEL" envDefault:"pii"`
	ModelAliases map[string]string `env:"MODEL_ALIASES" envKeyValSeparator:"=" envDefault:"disease_detection_superclinical=clinical-ner,OpenMed/OpenMed-PII-SuperClinical-Small-44M-v1=pii"`
	// modelAliasesText is SLUICE_MODEL_ALIASES as written ("" when unset), for check: the map
	// keeps the last model of an alias written twice, and so no longer shows the mistake.
	modelAliasesText string
	// Profile is OpenMed's settings profile (OPENMED_PROFILE), reported by /health.
	Profile string `env:"-"`
	// openMedNoEffect names OpenMed's variables that are set and have no effect here.
	openMedNoEffect []string
	// openMedAuth is OpenMed's OPENMED_SERVICE_AUTH_ENABLED=true: the start is refused unless
	// authentication is on.
	openMedAuth bool
	// Models on demand (SLUICE_MODELS_DIR set): a model_name no endpoint serves is loaded
	// from its directory there on first use. KeepAlive is how long an idle one stays (the
	// keep_alive grammar; "": for ever); MaxResidentModels and ModelMemoryBudget (bytes of
	// ONNX files) cap the resident models, configured ones included, 0: no cap.
	KeepAlive         string `env:"KEEP_ALIVE"`
	MaxResidentModels int    `env:"MAX_RESIDENT_MODELS" envDefault:"0"`
	ModelMemoryBudget int64  `env:"MODEL_MEMORY_BUDGET_BYTES" envDefault:"0"`
	// ModelLoadWaitMS is how long a request waits for its model's load before a 503 with the
	// expected rest of the load (unset: SLUICE_BATCH_MAX_QUEUE_WAIT_MS, the queue-wait bound).
	ModelLoadWaitMS *int `env:"MODEL_LOAD_WAIT_MS"`
	// PreloadModels are loaded on demand before the server is ready.
	PreloadModels []string `env:"PRELOAD_MODELS"`
	// Quantize rewrites models to int8 matrix products at load (CPU only): "int8" or "off"
	// for every model, or name=mode pairs ("pii=int8,tiny-lm=off"); a model not named follows
	// its config.json's sluice.quantize. QuantizeCacheDir keeps the rewritten graphs (unset:
	// the user's cache directory); QuantizeMinAgreement is the share of the float32 model's
	// entities the int8 one must find exactly on the built-in sample to be served.
	Quantize             string  `env:"QUANTIZE"`
	QuantizeCacheDir     string  `env:"QUANTIZE_CACHE_DIR"`
	QuantizeMinAgreement float64 `env:"QUANTIZE_MIN_AGREEMENT" envDefault:"0.99"`
	// Authentication (off unless keys or a JWKS are given): API keys from APIKeysFile (re-read
	// on SIGHUP) or APIKeys, in OpenMed's JSON; bearer JWTs checked against a JWKS (inline or
	// a file) with an issuer, audiences and leeway; route scopes overriding OpenMed's; AuthOpen
	// lets routes without scopes be called without a credential; failed attempts per peer
	// limited to AuthFailureRPS with a burst of AuthFailureBurst (either 0: no limit).
	APIKeysFile     string   `env:"API_KEYS_FILE"`
	APIKeys         string   `env:"API_KEYS"`
	AuthJWKS        string   `env:"AUTH_JWKS"`
	AuthJWKSFile    string   `env:"AUTH_JWKS_FILE"`
	AuthJWTIssuer   string   `env:"AUTH_JWT_ISSUER"`
	AuthJWTAudience []string `env:"AUTH_JWT_AUDIENCE"`
	AuthJWTLeewayS  float64  `env:"AUTH_JWT_LEEWAY_S" envDefault:"0"`
	// AuthJWTMaxLifetimeS, when set, refuses tokens without iat or living longer (exp - iat).
	AuthJWTMaxLifetimeS float64 `env:"AUTH_JWT_MAX_LIFETIME_S" envDefault:"0"`
	AuthRouteScopes     string  `env:"AUTH_ROUTE_SCOPES"`
	AuthOpen            bool    `env:"AUTH_OPEN" envDefault:"false"`
	AuthFailureRPS      float64 `env:"AUTH_FAILURE_RPS" envDefault:"5"`
	AuthFailureBurst    int     `env:"AUTH_FAILURE_BURST" envDefault:"10"`
	// The budget of a caller whose tenant has none of its own in the key file, or who has no
	// tenant (OpenMed's RATE_LIMIT_*): requests per second with a burst (0: one second's
	// worth), estimated tokens per minute with a burst (0: a minute's worth), requests at once;
	// each 0 limits nothing. Counted per peer address, per tenant where RateLimitKey is
	// "tenant", or in one bucket for the service where it is "global" (OpenMed's default).
	// Deferred admission holds a request its budget takes within Deferred.MaxWait
	// instead of refusing it, at most Deferred.MaxHeld at once.
	RateLimitRPS            float64 `env:"RATE_LIMIT_RPS" envDefault:"0"`
	RateLimitBurst          float64 `env:"RATE_LIMIT_BURST" envDefault:"0"`
	RateLimitTokensPerMin   float64 `env:"RATE_LIMIT_TOKENS_PER_MINUTE" envDefault:"0"`
	RateLimitTokenBurst     float64 `env:"RATE_LIMIT_TOKEN_BURST" envDefault:"0"`
	RateLimitMaxConcurrency int     `env:"RATE_LIMIT_MAX_CONCURRENCY" envDefault:"0"`
	RateLimitKey            string  `env:"RATE_LIMIT_KEY" envDefault:"peer"`
	DeferredAdmission       bool    `env:"DEFERRED_ADMISSION" envDefault:"false"`
	// Coalesce answers identical entity requests in flight at once (one caller's, same route
	// and body) from one model call.
	Coalesce bool `env:"COALESCE" envDefault:"false"`
	// The privacy gateway's external model, instead of the in-process one: an OpenAI-compatible
	// server's base URL (without /v1) with a bearer key read from a file and a model name, or
	// OpenMed's privacy-gateway endpoint (its URL as is).
	GatewayUpstreamURL     string `env:"GATEWAY_UPSTREAM_URL"`
	GatewayUpstreamKeyFile string `env:"GATEWAY_UPSTREAM_KEY_FILE"`
	GatewayUpstreamModel   string `env:"GATEWAY_UPSTREAM_MODEL"`
	GatewayOpenMedEndpoint string `env:"GATEWAY_OPENMED_ENDPOINT"`
	// TrustedHosts are the Host header values served (none: any); CORSOrigins the browser
	// origins allowed to call the API (none: no CORS).
	TrustedHosts []string `env:"TRUSTED_HOSTS"`
	// TrustedProxies are the reverse proxies (addresses or networks) whose X-Forwarded-For
	// names the client; none: the peer is the client, whatever the header says. The client's
	// address keys the failed-login limit and the budgets counted per address.
	TrustedProxies []string `env:"TRUSTED_PROXIES"`
	CORSOrigins    []string `env:"CORS_ORIGINS"`
	// MetricsCompat names another service whose metric families /metrics also exports, from
	// the same observations: "openmed", or "" for none.
	MetricsCompat string `env:"METRICS_COMPAT"`
	// DeidHashKey keys /pii/deidentify's hash method and a subject_id's pseudonyms (at least
	// 16 bytes); unset, each process draws its own, so replicas hash differently.
	DeidHashKey string `env:"DEID_HASH_KEY"`

	// The HTTP layer's limits (handlers.Limits).
	MaxTextChars     int `env:"MAX_TEXT_CHARS" envDefault:"100000"`
	MaxTextBytes     int `env:"MAX_TEXT_BYTES" envDefault:"400000"`
	MaxBodyBytes     int `env:"MAX_BODY_BYTES" envDefault:"1048576"`
	RequestTimeoutMS int `env:"REQUEST_TIMEOUT_MS" envDefault:"30000"`
	// HTTPWriteTimeoutMS bounds writing one answer; a stream's writes are each bounded by the
	// stall timeout instead, so a stream lives as long as its generation.
	HTTPWriteTimeoutMS int `env:"HTTP_WRITE_TIMEOUT_MS" envDefault:"30000"`
	ShutdownTimeoutSec int `env:"SHUTDOWN_TIMEOUT_S" envDefault:"30"`

	// EmbedModel is served on /v1/embeddings and /embed, RerankModel on /rerank and
	// /v1/rerank; "none" serves none.
	EmbedModel  string `env:"EMBED_MODEL" envDefault:"embed-mini"`
	RerankModel string `env:"RERANK_MODEL" envDefault:"rerank-mini"`

	// GenerateModel is served on the generation routes; "none" serves none.
	GenerateModel string `env:"GENERATE_MODEL" envDefault:"tiny-lm"`
	// GenerateInPlaceDecode decodes (and prefills first prompts) on the model's
	// decode_inplace.onnx when it has one and is not quantized, keys and values updated in
	// place; false keeps every step on model.onnx, to compare the two.
	GenerateInPlaceDecode bool `env:"GENERATE_INPLACE_DECODE" envDefault:"true"`
	// GenerateMaxModelLen is the longest sequence served (0: the model's, lowered to what the
	// KV pool holds).
	GenerateMaxModelLen int `env:"GENERATE_MAX_MODEL_LEN" envDefault:"0"`
	// Timeouts of a generation: to its first token and of the whole (the decoder's and a slow
	// reader's are Scheduler's); a stream with nothing to send for GenerateKeepAliveMS sends
	// a keep-alive.
	GenerateFirstTokenTimeoutMS int `env:"GENERATE_FIRST_TOKEN_TIMEOUT_MS" envDefault:"10000"`
	GenerateKeepAliveMS         int `env:"GENERATE_KEEPALIVE_MS" envDefault:"15000"`
	GenerateTimeoutMS           int `env:"GENERATE_TIMEOUT_MS" envDefault:"120000"`
	// GenerateStreamInterval is how many events a stream writes at a time after its first
	// (1: each token as it comes): fewer writes a token, at up to as many steps of delay.
	GenerateStreamInterval int `env:"GENERATE_STREAM_INTERVAL" envDefault:"1"`
	// BenchIgnoreDisconnects makes the server go on generating for clients that have left.
	// It exists only to measure what noticing them saves; never set it in production.
	BenchIgnoreDisconnects bool `env:"BENCH_IGNORE_DISCONNECTS" envDefault:"false"`
	// BenchStepDelayMS waits this long before every decoder step: the shipped tiny-lm plays a
	// slower model, for tests and demonstrations of what takes time. Never set it in
	// production.
	BenchStepDelayMS int `env:"BENCH_STEP_DELAY_MS" envDefault:"0"`
	// IgnoreVars names SLUICE_ variables that are in the environment on purpose and are not
	// settings (any other unknown one refuses the start, since it is most likely misspelt).
	IgnoreVars []string `env:"IGNORE_VARS"`
}

// LoadConfig parses environ (os.Environ() format) and checks every setting: the variables this
// command owns itself, and, through the packages' own Validate, the settings each package
// takes. The error names every bad variable, one per line, so an operator fixes them all in
// one go.
func LoadConfig(environ []string) (Config, error) { return loadConfig(environ, thisMachine()) }

// trimLists trims the blanks around each item of every list setting under v, as OpenMed's
// lists are read: "a.example, b.example" is two hosts, the second not " b.example". An empty
// item stays, for the setting's check to refuse: dropped, "," would be an empty list, which
// for trusted hosts means any host.
func trimLists(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				trimLists(v.Field(i))
			}
		}
	case reflect.Slice:
		if items, ok := v.Interface().([]string); ok {
			for i := range items {
				items[i] = strings.TrimSpace(items[i])
			}
		}
	}
}

// loadConfig is LoadConfig for a given machine.
func loadConfig(environ []string, m machine) (Config, error) {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	problems, origins, noEffect := openMedTranslation(vars) // variable -> the line that reports it; the OpenMed variable that set it
	cfg, inherited := readConfig(vars, noEffect, problems)
	// A value that did not parse is left at zero, and a setting that depends on it may look
	// wrong only because of that: the settings are checked with each such variable unset
	// instead (at its default, as once it is fixed), so that what is wrong besides it, an
	// mTLS without its CA bundle, is still said in the same go.
	checked := cfg
	if len(problems) > 0 {
		rest := maps.Clone(vars)
		for name := range problems {
			delete(rest, name)
		}
		checked, inherited = readConfig(rest, noEffect, map[string]string{})
	}
	for _, p := range checked.check(m) {
		if _, seen := problems[p.variable]; !seen && !inherited[p.variable] {
			problems[p.variable] = p.variable + " " + p.problem
		}
	}
	for ours, theirs := range origins {
		if line, ok := problems[ours]; ok {
			problems[ours] = theirs + " (as " + ours + "): " + line
		}
	}
	for name, line := range unknownVariables(vars) {
		problems[name] = line
	}
	if len(problems) > 0 {
		lines := make([]string, 0, len(problems))
		for _, line := range problems {
			lines = append(lines, line)
		}
		sort.Strings(lines)
		return cfg, fmt.Errorf("invalid configuration:\n  %s", strings.Join(lines, "\n  "))
	}
	return cfg, nil
}

// readConfig reads the configuration from vars (OpenMed's translated already), adding a line
// per variable that does not parse to problems; inherited are the GPU batch limits that took
// their CPU counterpart's value.
func readConfig(vars map[string]string, noEffect []string, problems map[string]string) (cfg Config, inherited map[string]bool) {
	cfg.openMedNoEffect = noEffect
	if v, set := vars["OPENMED_SERVICE_AUTH_ENABLED"]; set {
		cfg.openMedAuth, _ = openMedBool(v)
	}
	cfg.modelAliasesText = vars["SLUICE_MODEL_ALIASES"]
	if p, set := vars["OPENMED_PROFILE"]; set {
		cfg.Profile = strings.ToLower(strings.TrimSpace(p))
	}
	cfg.load(vars, problems)
	trimLists(reflect.ValueOf(&cfg).Elem())
	// SLUICE_JOBS_MAX_STORE_BYTES unset is a share of the embedded store; set, 0 included (no
	// bound of their own), it is the operator's. A share too small for the jobs stays unset,
	// and check says what to do.
	if cfg.Jobs.MaxStoreBytes == nil {
		if share, applies := cfg.jobsStoreShare(); !applies || share >= jobs.MinStoreBytes {
			cfg.Jobs.MaxStoreBytes = &share
		}
	}
	// A CPU batch limit set without its GPU counterpart holds on a GPU too: whoever asked for
	// batches of one (or switched OpenMed's batching off) gets them there as well. A bad CPU
	// value is reported once, under its own name.
	inherited = map[string]bool{}
	cpu, gpu := reflect.ValueOf(&cfg.Extract.Batch).Elem(), reflect.ValueOf(&cfg.GPUBatch).Elem()
	for _, g := range declared(gpu.Type()) {
		c, _ := byTags(cpu.Type())(g.field)
		_, cpuSet := vars[c]
		if _, gpuSet := vars[g.name]; cpuSet && !gpuSet {
			gpu.FieldByIndex(g.index).Set(cpu.FieldByName(g.field))
			inherited[g.name] = true
		}
	}
	return cfg, inherited
}

// nonceBytes is what the signed requests' nonce bucket reserves of the embedded NATS store: its
// bytes when requests are signed and the process keeps state in NATS, else none.
func (c Config) nonceBytes() int64 {
	if c.Signing.SecretFile != "" && (c.Audit.Enabled || c.Jobs.Enabled) {
		return c.Signing.BucketBytes()
	}
	return 0
}

// auditBytes is what the audit stream reserves of the embedded NATS store: its bound, when
// enabled and bounded (unbounded, it reserves nothing and takes what the others leave).
func (c Config) auditBytes() int64 {
	if c.Audit.Enabled {
		return c.Audit.MaxBytes
	}
	return 0
}

// jobsInStore says whether the jobs are kept in the embedded server's bounded file store (with
// a key), the audit's and the nonces' store, whose bytes they must share.
func (c Config) jobsInStore() bool {
	return c.Jobs.Enabled && c.NATS.Embedded() && c.Jobs.KeyFile != "" && c.NATS.MaxStoreBytes > 0
}

// jobsStoreShare is SLUICE_JOBS_MAX_STORE_BYTES unset, where a share applies (jobsInStore):
// what the nonces and the audit's bound leave of the store, and half of it when the audit is
// enabled and unbounded, the other half being the audit's room; a bounded audit has its room
// reserved, and no audit needs none. Elsewhere no bound of their own (jobs in memory share the
// memory store with nothing; an external cluster's or an unbounded store is the operator's to
// share). The share may be under jobs.MinStoreBytes, or none: the store is then too small for
// a default (check).
func (c Config) jobsStoreShare() (share int64, applies bool) {
	if !c.jobsInStore() {
		return 0, false
	}
	rest := c.NATS.MaxStoreBytes - c.nonceBytes() - c.auditBytes()
	if c.auditUnbounded() {
		rest /= 2
	}
	return rest, true
}

// auditUnbounded says whether the audit is kept without a bound: it then needs the store's
// unreserved room.
func (c Config) auditUnbounded() bool { return c.Audit.Enabled && c.Audit.MaxBytes == 0 }

// jobsStoreBytes is SLUICE_JOBS_MAX_STORE_BYTES as it applies, unset read as 0.
func (c Config) jobsStoreBytes() int64 {
	if c.Jobs.MaxStoreBytes == nil {
		return 0
	}
	return *c.Jobs.MaxStoreBytes
}

// unknownVariables reports each SLUICE_ variable that is not a setting and not named in
// SLUICE_IGNORE_VARS, with the setting it most likely meant: a misspelt name would otherwise
// leave its setting at the default without a word.
func unknownVariables(vars map[string]string) map[string]string {
	var known []string
	for _, v := range variables() {
		known = append(known, v.name)
	}
	var ignored []string
	for _, name := range strings.Split(vars["SLUICE_IGNORE_VARS"], ",") {
		ignored = append(ignored, strings.TrimSpace(name))
	}
	out := map[string]string{}
	for name := range vars {
		rest, ours := strings.CutPrefix(name, "SLUICE_")
		if !ours || slices.Contains(known, name) || slices.Contains(ignored, name) {
			continue
		}
		line := name + " is not a setting"
		switch {
		case rest == "PORT" || strings.HasPrefix(rest, "PORT_") || strings.HasPrefix(rest, "SERVICE_"):
			line += " (a Kubernetes service link of a Service named sluice: set enableServiceLinks: false)"
		case settings.Nearest(name, known) != "":
			line += "; did you mean " + settings.Nearest(name, known) + "?"
		}
		out[name] = line + " (list deliberate extras in SLUICE_IGNORE_VARS)"
	}
	return out
}

// problem is one bad setting, named by its environment variable.
type problem struct{ variable, problem string }

// check collects the problems of every setting: this command's own rules, the upper bounds
// (below), then each package's Validate over the configuration built from the environment,
// with the package's field names turned into the variables that set them. A variable is
// reported once, with its first problem.
func (c Config) check(m machine) []problem {
	var out []problem
	own := func(name, format string, args ...any) {
		out = append(out, problem{"SLUICE_" + name, fmt.Sprintf(format, args...)})
	}
	for _, b := range upperBounds(m) {
		if v, shown, _ := c.value("SLUICE_" + b.name); v > b.max {
			own(b.name, "must be at most %d, %s (got %s)", b.max, b.why, shown)
		}
	}
	// Both endpoints warm a full batch on every worker at start-up.
	batch := c.Extract.Batch
	if tokens := int64(batch.MaxPaddedTokens); m.MemoryBytes > 0 && batch.Workers > 0 &&
		tokens*int64(batch.Workers)*2*paddedTokenBytes > m.MemoryBytes/2 {
		own("BATCH_MAX_PADDED_TOKENS", "x SLUICE_BATCH_WORKERS x 2 endpoints x %d KiB per padded token must fit in half of the %d MiB this process may use (got %d tokens, %d workers)",
			paddedTokenBytes>>10, m.MemoryBytes>>20, tokens, batch.Workers)
	} else if tokens > 1<<24 {
		own("BATCH_MAX_PADDED_TOKENS", "must be at most %d (got %d)", 1<<24, tokens)
	}
	if _, err := parseQuantize(c.Quantize); err != nil {
		own("QUANTIZE", "%v", err)
	}
	if problems := c.aliasProblems(); len(problems) > 0 {
		own("MODEL_ALIASES", "%s", strings.Join(problems, "; "))
	}
	if a := c.QuantizeMinAgreement; !(a >= 0 && a <= 1) {
		own("QUANTIZE_MIN_AGREEMENT", "must be between 0 and 1 (got %v)", a)
	}
	if c.ModelsDir != "" {
		if st, err := os.Stat(c.ModelsDir); err != nil {
			own("MODELS_DIR", "cannot be read: %v", errors.Unwrap(err))
		} else if !st.IsDir() {
			own("MODELS_DIR", "is not a directory")
		}
	}
	if c.ShutdownTimeoutSec <= 0 {
		own("SHUTDOWN_TIMEOUT_S", "must be > 0 (got %d)", c.ShutdownTimeoutSec)
	}
	for _, v := range []struct {
		name    string
		value   float64
		burstOf string // a burst: the rate it belongs to, which must be set
		rate    float64
	}{{"RATE_LIMIT_RPS", c.RateLimitRPS, "", 0}, {"RATE_LIMIT_BURST", c.RateLimitBurst, "RATE_LIMIT_RPS", c.RateLimitRPS},
		{"RATE_LIMIT_TOKENS_PER_MINUTE", c.RateLimitTokensPerMin, "", 0},
		{"RATE_LIMIT_TOKEN_BURST", c.RateLimitTokenBurst, "RATE_LIMIT_TOKENS_PER_MINUTE", c.RateLimitTokensPerMin}} {
		switch {
		case !(v.value >= 0) || math.IsInf(v.value, 0):
			own(v.name, "must be a number at least 0 (0: no limit), got %v", v.value)
		case v.burstOf != "" && v.value > 0 && v.rate == 0:
			own(v.name, "is a burst of SLUICE_%s, which is not set: set both, or neither", v.burstOf)
		case v.burstOf != "" && v.value > 0 && v.value < 1:
			own(v.name, "must be 0 (one second's worth) or at least 1: a bucket that never holds one admits nothing, got %v", v.value)
		}
	}
	if c.RateLimitMaxConcurrency < 0 {
		own("RATE_LIMIT_MAX_CONCURRENCY", "must be at least 0 (0: no limit), got %d", c.RateLimitMaxConcurrency)
	}
	for name, v := range map[string]string{"GATEWAY_UPSTREAM_URL": c.GatewayUpstreamURL, "GATEWAY_OPENMED_ENDPOINT": c.GatewayOpenMedEndpoint} {
		if u, err := url.Parse(v); v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			own(name, "must be an http or https URL with a host")
		}
	}
	if c.GatewayUpstreamURL != "" && c.GatewayOpenMedEndpoint != "" {
		own("GATEWAY_OPENMED_ENDPOINT", "and SLUICE_GATEWAY_UPSTREAM_URL are two upstreams; set one")
	}
	if c.Fleet.URL == "" && c.Fleet.KeySecretFile != "" {
		own("REDIS_URL", "must be set with SLUICE_REDIS_KEY_SECRET_FILE (it keys the budgets' names in Redis)")
	}
	if c.GatewayUpstreamURL == "" && (c.GatewayUpstreamKeyFile != "" || c.GatewayUpstreamModel != "") {
		own("GATEWAY_UPSTREAM_URL", "must be set with SLUICE_GATEWAY_UPSTREAM_KEY_FILE and SLUICE_GATEWAY_UPSTREAM_MODEL (they configure it)")
	}
	if c.GatewayUpstreamURL != "" {
		if c.GatewayUpstreamModel == "" {
			own("GATEWAY_UPSTREAM_MODEL", "must name the model to ask the upstream for")
		}
		if strings.HasSuffix(strings.TrimRight(c.GatewayUpstreamURL, "/"), "/v1") {
			own("GATEWAY_UPSTREAM_URL", "is the server's base, without /v1 (Sluice adds /v1/chat/completions)")
		}
	}
	if c.GatewayUpstreamKeyFile != "" {
		if data, err := os.ReadFile(c.GatewayUpstreamKeyFile); err != nil {
			own("GATEWAY_UPSTREAM_KEY_FILE", "cannot be read: %v", errors.Unwrap(err))
		} else if strings.TrimSpace(string(data)) == "" {
			own("GATEWAY_UPSTREAM_KEY_FILE", "is empty")
		}
	}
	c.checkFiles(own)
	if c.GenerateMaxModelLen < 0 {
		own("GENERATE_MAX_MODEL_LEN", "must not be negative (0: the model's), got %d", c.GenerateMaxModelLen)
	}
	if c.RateLimitKey != "peer" && c.RateLimitKey != "tenant" && c.RateLimitKey != "global" {
		own("RATE_LIMIT_KEY", "must be peer, tenant or global (got %q)", c.RateLimitKey)
	}
	if c.DeferredAdmission && c.Deferred.MaxWait <= 0 {
		own("DEFERRED_MAX_WAIT_MS", "must be > 0 with SLUICE_DEFERRED_ADMISSION (got %d)", c.Deferred.MaxWait.Milliseconds())
	}
	if c.RefusalLogsPerSecond < 0 {
		own("LOG_REFUSALS_PER_S", "must be >= 0 (0: every refusal) (got %d)", c.RefusalLogsPerSecond)
	}
	if c.Scheduler.TokenStallTimeout < 0 {
		own("GENERATE_TOKEN_STALL_MS", "must be >= 0 (0: no limit) (got %d)", c.Scheduler.TokenStallTimeout.Milliseconds())
	}
	if c.GenerateKeepAliveMS <= 0 {
		own("GENERATE_KEEPALIVE_MS", "must be > 0 (got %d)", c.GenerateKeepAliveMS)
	}
	if c.GenerateTimeoutMS <= 0 {
		own("GENERATE_TIMEOUT_MS", "must be > 0 (got %d)", c.GenerateTimeoutMS)
	}
	if c.GenerateStreamInterval < 1 || c.GenerateStreamInterval > maxStreamInterval {
		own("GENERATE_STREAM_INTERVAL", "must be 1 to %d (1: every token as it comes) (got %d)", maxStreamInterval, c.GenerateStreamInterval)
	}
	if c.BenchStepDelayMS < 0 {
		own("BENCH_STEP_DELAY_MS", "must be >= 0 (0: none) (got %d)", c.BenchStepDelayMS)
	}
	// The nonce bucket reserves its bytes of the embedded server's store when it is made: past
	// the store, the start would fail there, less plainly.
	if c.Signing.SecretFile != "" && (c.Audit.Enabled || c.Jobs.Enabled) && c.NATS.Embedded() && c.NATS.MaxStoreBytes > 0 &&
		c.Signing.BucketBytes() > c.NATS.MaxStoreBytes {
		own("SIGNING_MAX_NONCES", "needs %d bytes of the embedded NATS store for the fleet's nonces (2 x %d x %d), more than SLUICE_NATS_MAX_STORE_BYTES (%d): lower it or raise the store",
			c.Signing.BucketBytes(), c.Signing.MaxNonces, c.Signing.BucketBytes()/2/int64(c.Signing.MaxNonces), c.NATS.MaxStoreBytes)
	}
	// The jobs' buckets and queue reserve their bytes too, as a bounded audit does, and what
	// they and the nonces leave is an unbounded audit's: reservations past the store would fail
	// the jobs' start (NATS's insufficient resources).
	if c.jobsInStore() {
		n, a := c.nonceBytes(), c.auditBytes()
		if c.Jobs.MaxStoreBytes == nil { // the default share is too small (loadConfig)
			least, of := int64(jobs.MinStoreBytes)+n+a, "what"
			if c.auditUnbounded() {
				least, of = 2*jobs.MinStoreBytes+n+a, "half of what"
			}
			share, _ := c.jobsStoreShare()
			own("NATS_MAX_STORE_BYTES", "(%d) leaves the jobs (SLUICE_JOBS_KEY_FILE) %d bytes of the embedded NATS store by default (%s the nonces' %d and SLUICE_AUDIT_MAX_BYTES's %d leave), under the %d they need: raise it to at least %d, or set SLUICE_JOBS_MAX_STORE_BYTES=0 to leave the jobs unbounded (they may then fill the store the audit shares)",
				c.NATS.MaxStoreBytes, max(share, 0), of, n, a, jobs.MinStoreBytes, least)
		} else if j := c.jobsStoreBytes(); j > 0 && (j+n+a > c.NATS.MaxStoreBytes || c.auditUnbounded() && j+n >= c.NATS.MaxStoreBytes) {
			own("JOBS_MAX_STORE_BYTES", "is %d bytes of the embedded NATS store, the nonces %d and SLUICE_AUDIT_MAX_BYTES %d: together they must fit SLUICE_NATS_MAX_STORE_BYTES (%d), leaving an unbounded audit room; lower it or SLUICE_AUDIT_MAX_BYTES, or raise the store",
				j, n, a, c.NATS.MaxStoreBytes)
		}
	}
	if c.Jobs.Enabled && c.NATS.Embedded() && c.Jobs.KeyFile == "" && c.NATS.MaxMemoryBytes > 0 && c.jobsStoreBytes() > c.NATS.MaxMemoryBytes {
		own("JOBS_MAX_STORE_BYTES", "is %d bytes of the embedded NATS memory store (jobs without SLUICE_JOBS_KEY_FILE), more than SLUICE_NATS_MAX_MEMORY_BYTES (%d)",
			c.jobsStoreBytes(), c.NATS.MaxMemoryBytes)
	}
	if c.Scheduler.PreemptLimit < 0 {
		own("GENERATE_PREEMPT_LIMIT", "must be >= 0 (0: never preempt for priority) (got %d)", c.Scheduler.PreemptLimit)
	}
	if c.GenerateFirstTokenTimeoutMS < 0 {
		own("GENERATE_FIRST_TOKEN_TIMEOUT_MS", "must be >= 0 (0: none) (got %d)", c.GenerateFirstTokenTimeoutMS)
	}
	if c.ModelLoadWaitMS != nil && *c.ModelLoadWaitMS < 0 {
		own("MODEL_LOAD_WAIT_MS", "must be >= 0 (got %d)", *c.ModelLoadWaitMS)
	}
	if c.MaxResidentModels < 0 {
		own("MAX_RESIDENT_MODELS", "must be >= 0 (0: no cap) (got %d)", c.MaxResidentModels)
	}
	if c.ModelMemoryBudget < 0 {
		own("MODEL_MEMORY_BUDGET_BYTES", "must be >= 0 (0: no budget) (got %d)", c.ModelMemoryBudget)
	}
	if c.KeepAlive != "" {
		if _, _, err := handlers.ParseKeepAlive(c.KeepAlive); err != nil {
			own("KEEP_ALIVE", "%v (got %q)", err, c.KeepAlive)
		}
	}
	if c.ModelsDir == "" {
		for name, set := range map[string]bool{"PRELOAD_MODELS": len(c.PreloadModels) > 0, "KEEP_ALIVE": c.KeepAlive != "",
			"MAX_RESIDENT_MODELS": c.MaxResidentModels != 0, "MODEL_MEMORY_BUDGET_BYTES": c.ModelMemoryBudget != 0,
			"MODEL_LOAD_WAIT_MS": c.ModelLoadWaitMS != nil} {
			if set {
				own(name, "needs SLUICE_MODELS_DIR: it sets the models loaded on demand from there")
			}
		}
	}
	if n := configuredModels(c); c.ModelsDir != "" && c.MaxResidentModels > 0 && c.MaxResidentModels <= n {
		own("MAX_RESIDENT_MODELS", "must be above the %d configured models, which stay resident, or no model could load on demand (got %d)", n, c.MaxResidentModels)
	}
	a, err := c.auth(clock.Real())
	// One line a variable (only a variable's first problem is reported), holding all of its
	// problems: two bad keys of one JWKS, two route scopes that name no route.
	var authVars []string
	authProblems := map[string][]string{}
	for _, e := range joined(err) {
		variable, text := "API_KEYS", e.Error()
		var ce *configError
		if errors.As(e, &ce) {
			variable, text = ce.variable, ce.problem
		}
		if authProblems[variable] == nil {
			authVars = append(authVars, variable)
		}
		authProblems[variable] = append(authProblems[variable], text)
	}
	for _, v := range authVars {
		own(v, "%s", strings.Join(authProblems[v], "; "))
	}
	if err == nil && a == nil && c.openMedAuth {
		out = append(out, problem{"OPENMED_SERVICE_AUTH_ENABLED", "is true but the API keys and JWKS given hold nothing to check; refusing to start open"})
	}
	if _, err := identity.ParseProxies(c.TrustedProxies); err != nil {
		own("TRUSTED_PROXIES", "%s", strings.TrimPrefix(err.Error(), "identity: "))
	}
	for _, h := range c.TrustedHosts {
		if h == "*" || h == "" {
			own("TRUSTED_HOSTS", "must list host names: a bare * or an empty name trusts any host")
			break
		}
		if !handlers.ValidTrustedHost(h) {
			own("TRUSTED_HOSTS", "must list host names, *.example.org or IP addresses ([::1] for IPv6), without a port, scheme or path: "+
				"the Host header is compared without its port, so %q would match no request", h)
			break
		}
	}
	if slices.Contains(c.AuthJWTAudience, "") {
		own("AUTH_JWT_AUDIENCE", "lists an empty audience: name each, or set none")
	}
	if slices.Contains(c.PreloadModels, "") {
		own("PRELOAD_MODELS", "lists an empty model name")
	}
	for _, o := range c.CORSOrigins {
		if !handlers.ValidOrigin(o) {
			own("CORS_ORIGINS", "must list exact origins, as https://app.example.org: a wildcard lets any page call the API, and an origin has no path")
			break
		}
	}
	if c.MetricsCompat != "" && c.MetricsCompat != "openmed" {
		own("METRICS_COMPAT", "must be openmed or empty (got %q)", c.MetricsCompat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		own("LOG_LEVEL", "must be debug, info, warn or error (got %q)", c.LogLevel)
	}
	for _, v := range []struct {
		err   error
		names func(field string) (string, bool)
	}{
		{c.extract().Validate(), byTags(reflect.TypeFor[extract.Config](), reflect.TypeFor[batcher.Config]())},
		{c.gate().Validate(), byTags(reflect.TypeFor[batchGate](), reflect.TypeFor[admission.Config]())},
		{c.runtime().Validate(), byTags(reflect.TypeFor[engine.RuntimeOptions]())},
		{c.limits().Validate(), byMap(limitsVars)},
		{c.scheduler(1, 0).Validate(), byTags(reflect.TypeFor[scheduler.Config]())},
		{c.kv(kvcache.Config{Layers: 1, Heads: 1, HeadDim: 1, MaxSeqLen: 1}).Validate(), byTags(reflect.TypeFor[kvcache.Config]())},
		{c.generateGate(c.Scheduler.MaxRunning).Validate(), byTags(reflect.TypeFor[generateGate](), reflect.TypeFor[admission.Config]())},
		{c.deid().Validate(), byMap(deidVars)},
		{c.budgets().Validate(), byTags(reflect.TypeFor[admission.BudgetsConfig]())},
		{c.NATS.Validate(), byTags(reflect.TypeFor[natsbox.Config]())},
		{c.Audit.Validate(), byTags(reflect.TypeFor[audit.Config]())},
		{c.Jobs.Validate(), byTags(reflect.TypeFor[jobs.Config]())},
		{c.Signing.Validate(), byTags(reflect.TypeFor[signing.Config]())},
		{c.MTLS.Validate(), byTags(reflect.TypeFor[mtls.Config]())},
		{c.Tracing.Validate(), byTags(reflect.TypeFor[tracing.Config]())},
		{c.Resilience.Validate(), byTags(reflect.TypeFor[resilience.Config]())},
	} {
		out = append(out, packageProblems(v.err, v.names)...)
	}
	if c.Fleet.URL != "" {
		out = append(out, packageProblems(c.Fleet.Validate(), byTags(reflect.TypeFor[fleetbudget.Config]()))...)
	}
	// On a GPU only the size limits differ; the other fields' problems are the CPU's, above.
	for _, p := range packageProblems(c.onGPU().batcher().Validate(), byTags(reflect.TypeFor[batcher.GPULimits]())) {
		if strings.HasPrefix(p.variable, "SLUICE_") {
			out = append(out, p)
		}
	}
	return out
}

// checkFiles reads the secret and certificate files the server reads at its start, with the
// readers it reads them with, and says under its variable each that is missing or that the
// reader refuses: found only after every model had loaded, they ended the start with exit 1
// and a line that named no variable (or several). Like the other files (API keys, JWKS), they
// are read again at the start; a file changed in between is that start's to refuse.
func (c Config) checkFiles(own func(name, format string, args ...any)) {
	if f := c.Signing.SecretFile; f != "" {
		if _, err := signing.ReadSecret(f); err != nil {
			own("SIGNING_SECRET_FILE", "%s", fileProblem(err, "SLUICE_SIGNING_SECRET_FILE"))
		}
	}
	if f := c.Jobs.KeyFile; f != "" && c.Jobs.Enabled {
		if _, err := jobs.ReadKey(f); err != nil {
			own("JOBS_KEY_FILE", "%s", fileProblem(err, "SLUICE_JOBS_KEY_FILE"))
		}
	}
	if f := c.MTLS.CABundle; f != "" && c.MTLS.Enabled {
		if _, err := mtls.ReadBundle(f); err != nil {
			own("MTLS_CA_BUNDLE", "%s", fileProblem(err, "SLUICE_MTLS_CA_BUNDLE"))
		}
	}
	if cert, key := c.MTLS.CertFile, c.MTLS.KeyFile; cert != "" && key != "" {
		if _, err := tls.LoadX509KeyPair(cert, key); err != nil {
			var pe *fs.PathError
			switch {
			case errors.As(err, &pe) && pe.Path == cert:
				own("TLS_CERT_FILE", "%s", fileProblem(err, ""))
			case errors.As(err, &pe):
				own("TLS_KEY_FILE", "%s", fileProblem(err, ""))
			default:
				own("TLS_CERT_FILE", "and SLUICE_TLS_KEY_FILE are not a certificate and its key: %v", err)
			}
		}
	}
}

// fileProblem is a file reader's error as the problem of the variable that names the file: one
// that cannot be read is said as the other files are (the path is the variable's value), any
// other in the reader's words, less its package's name; a sentence of the reader's about the
// variable goes on from its name.
func fileProblem(err error, variable string) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return "cannot be read: " + pe.Err.Error()
	}
	text := err.Error()
	if pkg, rest, ok := strings.Cut(text, ": "); ok && !strings.Contains(pkg, " ") {
		text = rest
	}
	if rest, ok := strings.CutPrefix(text, variable+" "); ok && variable != "" {
		return rest
	}
	return "is refused: " + text
}

// aliasProblems are what is wrong with SLUICE_MODEL_ALIASES as written: an empty alias or
// model, an alias given twice (the last would win without a word), a model the entity routes
// do not serve. Those routes are where aliases are resolved: a model on demand is loaded by the
// name the request gives, so an alias of one would never reach it. The defaults (unset) are
// OpenMed's names of the shipped models, of no use to a server that serves others, and not
// checked.
func (c Config) aliasProblems() []string {
	if c.modelAliasesText == "" {
		return nil
	}
	served := c.AnalyzeModel + " and " + c.PIIModel
	if c.AnalyzeModel == c.PIIModel {
		served = c.AnalyzeModel
	}
	var out []string
	seen := map[string]int{}
	for _, part := range strings.Split(c.modelAliasesText, ",") {
		alias, model, ok := strings.Cut(part, "=")
		if !ok || strings.Contains(model, "=") {
			continue // does not parse, and is reported as such
		}
		// A request's model_name is read trimmed, and so is an alias ("a=pii, b=pii").
		alias, model = strings.TrimSpace(alias), strings.TrimSpace(model)
		switch {
		case alias == "" || model == "":
			out = append(out, fmt.Sprintf("has an empty alias or model (%q)", part))
		case model != c.AnalyzeModel && model != c.PIIModel:
			out = append(out, fmt.Sprintf("maps %s to %s, which no entity route serves (they serve %s)", alias, model, served))
		case alias != model && (alias == c.AnalyzeModel || alias == c.PIIModel):
			out = append(out, fmt.Sprintf("makes %s, a served model's own name, an alias of %s: one name, two models", alias, model))
		}
		if seen[alias]++; seen[alias] == 2 && alias != "" {
			out = append(out, fmt.Sprintf("gives the alias %s more than once", alias))
		}
	}
	return out
}

// upperBound is the largest value start-up accepts for one numeric setting, and why. The
// packages check what makes a setting meaningless (a size of 0, a low watermark above the high
// one); these check what the machine can hold and what is sane, so that a typo of a few zeros
// is a clear start-up error instead of a process the kernel kills or that never gets ready.
type upperBound struct {
	name string // without SLUICE_; its value is read as the variable counts (Config.value)
	max  int64
	why  string
}

// paddedTokenBytes is the memory one padded token of a batch may take while it runs, for the
// memory bound on SLUICE_BATCH_MAX_PADDED_TOKENS: the shipped models measured about 6 KiB each
// (RSS after warm-up at 4,096 and 32,768 padded tokens); a larger encoder takes more.
const paddedTokenBytes = 16 << 10

const hourMS = 3_600_000

// maxStreamInterval bounds SLUICE_GENERATE_STREAM_INTERVAL: more would hold most answers whole,
// which a stream is asked for not to do.
const maxStreamInterval = 256

func upperBounds(m machine) []upperBound {
	cpus := int64(4 * m.CPUs)
	cpuWhy := fmt.Sprintf("4 x the %d CPUs this process may use", m.CPUs)
	b := []upperBound{
		{"INTRA_OP_THREADS", cpus, cpuWhy},
		{"INTER_OP_THREADS", cpus, cpuWhy},
		{"BATCH_WORKERS", cpus, cpuWhy},
		{"CUDA_DEVICE_ID", 63, "a sane GPU number"},
		{"CUDA_MEMORY_LIMIT_BYTES", 1 << 40, "1 TiB"},
		{"BATCH_MAX_SIZE", 4096, "a sane batch"},
		{"GPU_BATCH_MAX_SIZE", 4096, "a sane batch"},
		{"GPU_BATCH_MAX_PADDED_TOKENS", 1 << 22, "a sane batch"},
		{"BATCH_MAX_QUEUE_SIZE", 65536, "a sane queue"},
		{"GENERATE_MAX_RUNNING", 4096, "a sane batch"},
		{"GENERATE_MAX_STEP_TOKENS", 1 << 20, "a sane step"},
		{"GENERATE_MAX_MODEL_LEN", 1 << 24, "a sane context"},
		{"GENERATE_PREEMPT_LIMIT", 1 << 10, "a sane count"},
		{"GENERATE_QUEUE_SIZE", 65536, "a sane queue"},
		{"GENERATE_STREAM_BUFFER", 65536, "a sane buffer"},
		{"KV_BLOCK_TOKENS", 1024, "a sane block"},
		{"KV_BLOCKS", 1 << 24, "a sane pool"},
		{"MAX_BODY_BYTES", 64 << 20, "64 MiB"},
		{"MAX_TEXT_CHARS", 64 << 20, "64 Mi characters"},
		{"MAX_TEXT_BYTES", 64 << 20, "64 MiB"},
		{"BATCH_HIGH_WATERMARK", 1 << 20, "a sane queue"},
		{"GENERATE_HIGH_WATERMARK", 1 << 20, "a sane queue"},
		{"WINDOW_STRIDE", 1 << 16, "longer than any model's window"},
		{"LOG_REFUSALS_PER_S", 1 << 20, "a sane log"},
		{"SHUTDOWN_TIMEOUT_S", 3600, "an hour"},
		{"MAX_RESIDENT_MODELS", 1024, "a sane count"},
		{"AUTH_FAILURE_BURST", 1 << 20, "a sane burst"},
		{"AUTH_FAILURE_RPS", 1 << 20, "a sane rate"},
		{"RATE_LIMIT_RPS", 1 << 20, "a sane rate"},
		{"RATE_LIMIT_BURST", 1 << 30, "a sane burst"},
		{"RATE_LIMIT_TOKENS_PER_MINUTE", 1 << 36, "a sane rate"},
		{"RATE_LIMIT_TOKEN_BURST", 1 << 36, "a sane burst"},
		{"RATE_LIMIT_MAX_CONCURRENCY", 1 << 20, "a sane count"},
		{"DEFERRED_MAX_HELD", 1 << 20, "a sane count"},
		{"DEFERRED_MAX_WAIT_MS", hourMS, "an hour"},
		{"RATE_LIMIT_CONCURRENCY_WAIT_MS", hourMS, "an hour"},
		{"FLEET_REPLICAS", 1 << 16, "a sane fleet"},
		{"REDIS_LEASE_MS", hourMS, "an hour"},
		{"REDIS_TIMEOUT_MS", 10_000, "10 s"},
		{"AUTH_JWT_LEEWAY_S", 3600, "an hour"},
		{"AUTH_JWT_MAX_LIFETIME_S", 366 * 86400, "a year"},
		{"MODEL_MEMORY_BUDGET_BYTES", 1 << 44, "16 TiB"},
		{"MODEL_LOAD_WAIT_MS", hourMS, "an hour"},
		{"BATCH_MAX_WAIT_MS", hourMS, "an hour"},
		{"BATCH_MAX_QUEUE_WAIT_MS", hourMS, "an hour"},
		{"REQUEST_TIMEOUT_MS", hourMS, "an hour"},
		{"HTTP_WRITE_TIMEOUT_MS", hourMS, "an hour"},
		{"BENCH_STEP_DELAY_MS", hourMS, "an hour"},
		{"GENERATE_MAX_QUEUE_WAIT_MS", hourMS, "an hour"},
		{"GENERATE_FIRST_TOKEN_TIMEOUT_MS", hourMS, "an hour"},
		{"GENERATE_STALL_TIMEOUT_MS", hourMS, "an hour"},
		{"GENERATE_KEEPALIVE_MS", hourMS, "an hour"},
		{"GENERATE_TOKEN_STALL_MS", hourMS, "an hour"},
		{"GENERATE_TIMEOUT_MS", hourMS, "an hour"},
		{"AUDIT_ACK_TIMEOUT_MS", hourMS, "an hour"},
		{"AUDIT_MAX_AGE_S", 50 * 366 * 86400, "fifty years"},
		{"AUDIT_MAX_BYTES", 1 << 46, "64 TiB"},
	}
	if m.MemoryBytes > 0 {
		b = append(b, upperBound{"KV_MEMORY_BYTES", m.MemoryBytes / 2,
			fmt.Sprintf("half of the %d MiB this process may use", m.MemoryBytes>>20)})
	}
	return b
}

// named turns a package's configuration error found while wiring (when a model's geometry is
// known) into one that names the variables; other errors pass unchanged.
func named(err error, names func(field string) (string, bool)) error {
	var lines []string
	for _, p := range packageProblems(err, names) {
		if p.variable == "?" {
			return err
		}
		lines = append(lines, p.variable+" "+p.problem)
	}
	if len(lines) == 0 {
		return err
	}
	return fmt.Errorf("invalid configuration:\n  %s", strings.Join(lines, "\n  "))
}

// The fields of handlers' and deid's configurations, and the variables that set them: this
// command declares those variables itself (Own), so it maps them here.
var (
	deidVars   = map[string]string{"HashKey": "SLUICE_DEID_HASH_KEY"}
	limitsVars = map[string]string{
		"Limits.MaxBodyBytes": "SLUICE_MAX_BODY_BYTES", "Limits.MaxTextChars": "SLUICE_MAX_TEXT_CHARS",
		"Limits.MaxTextBytes": "SLUICE_MAX_TEXT_BYTES", "Limits.RequestTimeout": "SLUICE_REQUEST_TIMEOUT_MS",
		"Limits.WriteTimeout": "SLUICE_HTTP_WRITE_TIMEOUT_MS",
		"RetryAfter":          "SLUICE_RETRY_AFTER_S",
	}
)

// onGPU is the configuration as it applies on a GPU: the GPU's batch limits in place of the
// CPU's.
func (c Config) onGPU() Config {
	c.Extract.Batch = c.Extract.Batch.OnGPU(c.GPUBatch)
	return c
}

// The configurations of the packages, as the wiring hands them over: each section as read,
// with what only the wiring knows (a model's geometry) and the meanings of 0 that are this
// command's (OpenMed's). Every range is checked by the package that owns the setting.

func (c Config) batcher() batcher.Config {
	b := c.Extract.Batch
	b.MaxQueueWait = c.maxQueueWait()
	return b
}

func (c Config) gate() admission.Config {
	g := c.Admission
	g.HighWatermark = c.BatchGate.HighWatermark
	if g.HighWatermark == 0 {
		g.HighWatermark = c.Extract.Batch.QueueSize // OpenMed's default: the max queue size
	}
	if low := c.BatchGate.LowWatermark; low != nil { // unset: half the high one
		g.LowWatermark, g.ShedUntilEmpty = *low, *low == 0
	}
	return g
}

func (c Config) runtime() engine.RuntimeOptions {
	r := c.Runtime
	r.NoSpinning = !c.ORTSpinning
	return r
}

// anonymousBudget is the budget of callers without their own.
func (c Config) anonymousBudget() admission.Budget {
	b := admission.Budget{RequestsPerSecond: c.RateLimitRPS, RequestBurst: c.RateLimitBurst,
		TokensPerSecond: c.RateLimitTokensPerMin / 60, TokenBurst: c.RateLimitTokenBurst, MaxConcurrent: c.RateLimitMaxConcurrency}
	if b.TokenBurst == 0 && c.RateLimitTokensPerMin > 0 {
		b.TokenBurst = max(1, c.RateLimitTokensPerMin)
	}
	return b
}

// budgets is deferred admission's configuration: off (MaxWait 0) unless switched on.
func (c Config) budgets() admission.BudgetsConfig {
	if !c.DeferredAdmission {
		return admission.BudgetsConfig{MaxHeld: c.Deferred.MaxHeld, ConcurrencyWait: c.Deferred.ConcurrencyWait}
	}
	b := c.Deferred
	if b.MaxWait < 0 {
		b.MaxWait = -1 // refused by its own check first
	}
	return b
}

func (c Config) deid() deid.Config {
	var key []byte
	if c.DeidHashKey != "" {
		key = []byte(c.DeidHashKey)
	}
	return deid.Config{HashKey: key}
}

// configError is a problem with one variable, found while building a package's config.
type configError struct{ variable, problem string }

func (e *configError) Error() string { return "SLUICE_" + e.variable + " " + e.problem }

// apiKeys reads the API keys: the file's, or the variable's; nil when neither is set.
func (c Config) apiKeys() (*identity.Keys, error) {
	data, variable := []byte(c.APIKeys), "API_KEYS"
	if c.APIKeysFile != "" {
		if c.APIKeys != "" {
			return nil, &configError{"API_KEYS", "and SLUICE_API_KEYS_FILE are both set: keep one"}
		}
		var err error
		if data, err = os.ReadFile(c.APIKeysFile); err != nil {
			return nil, &configError{"API_KEYS_FILE", fmt.Sprintf("cannot be read: %v", unwrapped(err))}
		}
		variable = "API_KEYS_FILE"
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		if c.APIKeysFile != "" {
			return nil, &configError{variable, "holds no keys"}
		}
		return nil, nil
	}
	keys, err := identity.ParseKeys(data)
	if err != nil {
		return nil, &configError{variable, strings.TrimPrefix(err.Error(), "identity: ")}
	}
	return keys, nil
}

// auth builds the authenticator; nil when no keys, no JWKS and no client certificates are
// configured (off). Each part is checked on its own and every problem is kept, under the
// variable that sets it (the error joins configErrors): a key file that cannot be read must
// not hide bad route scopes, which the operator would find only on the next start.
func (c Config) auth(clk clock.Clock) (*identity.Authenticator, error) {
	keys, keysErr := c.apiKeys()
	verifier, jwtErr := c.jwtVerifier()
	failed := keysErr != nil || jwtErr != nil
	if keys == nil && verifier == nil && !c.MTLS.Enabled && !failed {
		return nil, nil
	}
	errs := []error{keysErr, jwtErr}
	var routes map[string][]string
	if c.AuthRouteScopes != "" {
		var err error
		if routes, err = identity.ParseRouteScopes([]byte(c.AuthRouteScopes)); err != nil {
			errs = append(errs, &configError{"AUTH_ROUTE_SCOPES", strings.TrimPrefix(err.Error(), "identity: ")})
		}
	}
	a, err := identity.New(identity.Config{Keys: keys, JWT: verifier, RouteScopes: routes, Open: c.AuthOpen,
		FailureRate: c.AuthFailureRPS, FailureBurst: c.AuthFailureBurst, Certificates: c.MTLS.Enabled}, clk)
	for _, e := range fieldErrors(err, byMap(authVars)) {
		var ce *configError
		if failed && errors.As(e, &ce) && ce.variable == "API_KEYS" {
			continue // "needs keys or a verifier": those that failed to load are reported already
		}
		errs = append(errs, e)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return a, nil
}

// authVars and jwtVars name identity's fields by the variables that set them; the JWKS is
// named by the variable it was read from (jwtVerifier).
var (
	authVars = map[string]string{"Keys": "SLUICE_API_KEYS", "FailureRate": "SLUICE_AUTH_FAILURE_RPS",
		"FailureBurst": "SLUICE_AUTH_FAILURE_BURST", "RouteScopes": "SLUICE_AUTH_ROUTE_SCOPES"}
	jwtVars = map[string]string{"Leeway": "SLUICE_AUTH_JWT_LEEWAY_S", "MaxLifetime": "SLUICE_AUTH_JWT_MAX_LIFETIME_S"}
)

// jwtVerifier builds the bearer-token verifier from the JWKS (inline or its file); nil when
// none is set. The error joins a configError per problem, each under its variable.
func (c Config) jwtVerifier() (*identity.JWTVerifier, error) {
	if c.AuthJWKS == "" && c.AuthJWKSFile == "" {
		return nil, nil
	}
	var errs []error
	jwks, variable := []byte(c.AuthJWKS), "SLUICE_AUTH_JWKS"
	switch {
	case c.AuthJWKSFile != "" && c.AuthJWKS != "":
		// One would be dropped without a word: tokens it signs, refused. The inline one is
		// still checked, with the other settings, so that their problems come out together.
		errs = append(errs, &configError{"AUTH_JWKS", "and SLUICE_AUTH_JWKS_FILE are both set: keep one"})
	case c.AuthJWKSFile != "":
		var err error
		if jwks, err = os.ReadFile(c.AuthJWKSFile); err != nil {
			errs = append(errs, &configError{"AUTH_JWKS_FILE", fmt.Sprintf("cannot be read: %v", unwrapped(err))})
		}
		variable = "SLUICE_AUTH_JWKS_FILE"
	}
	v, err := identity.NewJWTVerifier(identity.JWTConfig{JWKS: jwks, Issuer: c.AuthJWTIssuer,
		Audience: c.AuthJWTAudience, Leeway: time.Duration(c.AuthJWTLeewayS * float64(time.Second)),
		MaxLifetime: time.Duration(c.AuthJWTMaxLifetimeS * float64(time.Second))})
	said := len(errs) > 0 // the JWKS could not be read, or was given twice
	for _, e := range fieldErrors(err, func(field string) (string, bool) {
		if field == "JWKS" {
			return variable, true
		}
		return byMap(jwtVars)(field)
	}) {
		var ce *configError
		if said && errors.As(e, &ce) && "SLUICE_"+ce.variable == variable {
			continue // said once, as that
		}
		errs = append(errs, e)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return v, nil
}

// fieldErrors are the problems a package's Validate joined (settings.Problem), each a
// configError under the variable names gives its field; another error stays as it is.
func fieldErrors(err error, names func(field string) (string, bool)) []error {
	problems, other := settings.Problems(err)
	out := other
	for _, p := range problems {
		name, ok := names(p.Field)
		if !ok {
			name = p.Field // a field no variable sets: a wiring bug, still reported
		}
		out = append(out, &configError{strings.TrimPrefix(name, "SLUICE_"), p.Text})
	}
	return out
}

// joined are the errors err joins (errors.Join), at any depth; err itself when it joins none.
func joined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, joined(e)...)
		}
		return out
	}
	return []error{err}
}

// unwrapped is a file error's cause (its path is the variable's value, named already).
func unwrapped(err error) error {
	if inner := errors.Unwrap(err); inner != nil {
		return inner
	}
	return err
}

// configuredModels counts the distinct entity models the endpoints serve (pinned in the pool).
func configuredModels(c Config) int {
	if c.AnalyzeModel == c.PIIModel {
		return 1
	}
	return 2
}

// modelLoadWait is how long a request waits for its model's load.
func (c Config) modelLoadWait() time.Duration {
	if c.ModelLoadWaitMS != nil {
		return time.Duration(*c.ModelLoadWaitMS) * time.Millisecond
	}
	return c.Extract.Batch.MaxQueueWait
}

func (c Config) limits() handlers.Limits {
	return handlers.Limits{MaxBodyBytes: c.MaxBodyBytes, MaxTextChars: c.MaxTextChars,
		MaxTextBytes: c.MaxTextBytes, RequestTimeout: ms(c.RequestTimeoutMS), WriteTimeout: ms(c.HTTPWriteTimeoutMS)}
}

// scheduler is the generation scheduler's configuration for a model of maxPositions positions.
func (c Config) scheduler(maxPositions int, pad int64) scheduler.Config {
	s := c.Scheduler
	s.MaxPositions, s.PadID = maxPositions, pad
	return s
}

// servedLength is the longest sequence generation serves for a model of positions positions
// whose KV pool holds poolHolds tokens of one sequence: SLUICE_GENERATE_MAX_MODEL_LEN when
// set (an error when either cannot take it; a negative one is check's to refuse), else the
// model's, lowered to what the pool holds (lowered says so).
func (c Config) servedLength(positions, poolHolds int) (n int, lowered bool, err error) {
	const name = "SLUICE_GENERATE_MAX_MODEL_LEN"
	switch n = c.GenerateMaxModelLen; {
	case n > positions:
		return 0, false, fmt.Errorf("invalid configuration:\n  %s must be at most the model's %d positions, got %d", name, positions, n)
	case n > kvcache.MaxSeqLen:
		return 0, false, fmt.Errorf("invalid configuration:\n  %s must be at most %d, the longest sequence the KV cache holds, got %d", name, kvcache.MaxSeqLen, n)
	case n > poolHolds:
		return 0, false, fmt.Errorf("invalid configuration:\n  %s: the KV pool holds %d tokens of one sequence, got %d "+
			"(raise SLUICE_KV_MEMORY_BYTES or SLUICE_KV_BLOCKS, or lower %s)", name, poolHolds, n, name)
	case n > 0:
		return n, false, nil
	}
	return min(positions, poolHolds), poolHolds < positions, nil
}

// kvSeqLen is the longest sequence the KV pool's tables are made for, of a model of positions:
// those, or fewer where SLUICE_GENERATE_MAX_MODEL_LEN or the pool's own bound asks (a model of
// 128k positions is served 64k at most, which servedLength then says).
func (c Config) kvSeqLen(positions int) int {
	if n := c.GenerateMaxModelLen; n > 0 && n < positions {
		positions = n
	}
	return min(positions, kvcache.MaxSeqLen)
}

// kv is the KV pool's configuration over a model's geometry.
func (c Config) kv(geometry kvcache.Config) kvcache.Config {
	geometry.BlockTokens, geometry.Blocks, geometry.MemoryBytes = c.KV.BlockTokens, c.KV.Blocks, c.KV.MemoryBytes
	return geometry
}

// generateGate is generation's admission, for a scheduler that runs maxRunning sequences.
func (c Config) generateGate(maxRunning int) admission.Config {
	g, w := c.Admission, c.GenerateGate
	g.HighWatermark, g.LowWatermark = w.HighWatermark, w.LowWatermark
	if g.HighWatermark == 0 {
		g.HighWatermark = maxRunning + c.Scheduler.QueueSize
	}
	g.MemoryHighWatermark, g.MemoryLowWatermark = w.MemoryHighWatermark, w.MemoryLowWatermark
	return g
}

func (c Config) extract() extract.Config {
	return extract.Config{Stride: c.Extract.Stride, Batch: c.batcher()}
}

// maxQueueWait maps 0 to the shortest wait there is, OpenMed's "serve only what dispatches
// at once"; the batcher reads 0 as "no limit".
func (c Config) maxQueueWait() time.Duration {
	if c.Extract.Batch.MaxQueueWait == 0 {
		return time.Nanosecond
	}
	return c.Extract.Batch.MaxQueueWait
}

func (c Config) retryAfter() time.Duration { return c.Admission.StaticRetryAfter }

func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }
