package main

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/caarlos0/env/v10"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/clock"
	"github.com/sluice-serving/sluice/deid"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/handlers"
	"github.com/sluice-serving/sluice/identity"
	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/scheduler"
	"github.com/sluice-serving/sluice/settings"
)

// Config is everything the server reads from its environment. Every field has a SLUICE_
// variable; OpenMed's service's variables are honoured where Sluice does the same thing (see
// openmedenv.go), so a deployment of that service can switch without renaming its settings.
type Config struct {
	Addr         string `env:"ADDR" envDefault:":8080"`
	Device       string `env:"DEVICE" envDefault:"auto"`
	ORTLib       string `env:"ORT_LIB"`
	IntraThreads int    `env:"INTRA_OP_THREADS" envDefault:"0"`
	InterThreads int    `env:"INTER_OP_THREADS" envDefault:"1"`
	ORTSpinning  bool   `env:"ORT_SPINNING" envDefault:"false"`
	// The CUDA execution provider's GPU, memory cap (0: none) and cuDNN algorithm search.
	CUDADeviceID       int    `env:"CUDA_DEVICE_ID" envDefault:"0"`
	CUDAMemoryLimit    int64  `env:"CUDA_MEMORY_LIMIT_BYTES" envDefault:"0"`
	CUDAConvAlgoSearch string `env:"CUDA_CONV_ALGO_SEARCH" envDefault:"heuristic"`
	LogLevel           string `env:"LOG_LEVEL" envDefault:"info"`
	// RefusalLogsPerSecond bounds the access-log lines of refusals per route and second.
	RefusalLogsPerSecond int `env:"LOG_REFUSALS_PER_S" envDefault:"10"`

	// ModelsDir, when set, holds every model served (one directory each); when unset, the
	// embedded models are served.
	ModelsDir    string            `env:"MODELS_DIR"`
	AnalyzeModel string            `env:"ANALYZE_MODEL" envDefault:"clinical-ner"`
	PIIModel     string            `env:"PII_MODEL" envDefault:"pii"`
	ModelAliases map[string]string `env:"MODEL_ALIASES" envKeyValSeparator:"=" envDefault:"disease_detection_superclinical=clinical-ner,OpenMed/OpenMed-PII-SuperClinical-Small-44M-v1=pii"`
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
	// each 0 limits nothing. Counted per peer address, or per tenant where RateLimitKey is
	// "tenant". Deferred admission holds a request its budget takes within DeferredMaxWaitMS
	// instead of refusing it, at most DeferredMaxHeld at once.
	RateLimitRPS            float64 `env:"RATE_LIMIT_RPS" envDefault:"0"`
	RateLimitBurst          float64 `env:"RATE_LIMIT_BURST" envDefault:"0"`
	RateLimitTokensPerMin   float64 `env:"RATE_LIMIT_TOKENS_PER_MINUTE" envDefault:"0"`
	RateLimitTokenBurst     float64 `env:"RATE_LIMIT_TOKEN_BURST" envDefault:"0"`
	RateLimitMaxConcurrency int     `env:"RATE_LIMIT_MAX_CONCURRENCY" envDefault:"0"`
	RateLimitKey            string  `env:"RATE_LIMIT_KEY" envDefault:"peer"`
	DeferredAdmission       bool    `env:"DEFERRED_ADMISSION" envDefault:"false"`
	DeferredMaxWaitMS       int     `env:"DEFERRED_MAX_WAIT_MS" envDefault:"2000"`
	DeferredMaxHeld         int     `env:"DEFERRED_MAX_HELD" envDefault:"1000"`
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
	// DeidHashKey keys /pii/deidentify's hash method (at least 16 bytes); unset, each process
	// draws its own, so replicas hash differently.
	DeidHashKey string `env:"DEID_HASH_KEY"`

	BatchMaxSize      int `env:"BATCH_MAX_SIZE" envDefault:"32"`
	BatchMaxWaitMS    int `env:"BATCH_MAX_WAIT_MS" envDefault:"5"`
	BatchMaxQueueSize int `env:"BATCH_MAX_QUEUE_SIZE" envDefault:"256"`
	BatchMaxTokens    int `env:"BATCH_MAX_PADDED_TOKENS" envDefault:"4096"`
	BatchWorkers      int `env:"BATCH_WORKERS" envDefault:"1"`
	// On a GPU a batch costs little more than one sequence up to far larger sizes, so the
	// batch limits there are their own settings, used instead of the two above when the
	// runtime settles on CUDA.
	GPUBatchMaxSize   int `env:"GPU_BATCH_MAX_SIZE" envDefault:"128"`
	GPUBatchMaxTokens int `env:"GPU_BATCH_MAX_PADDED_TOKENS" envDefault:"32768"`
	// BatchMaxQueueWaitMS bounds how long a request may wait for dispatch; past it, 503
	// max_wait. 0 means only requests that dispatch at once are served (OpenMed's meaning).
	BatchMaxQueueWaitMS int `env:"BATCH_MAX_QUEUE_WAIT_MS" envDefault:"1000"`
	// HighWatermark 0 means BATCH_MAX_QUEUE_SIZE; LowWatermark 0 means half the high one.
	HighWatermark     int    `env:"BATCH_HIGH_WATERMARK" envDefault:"0"`
	LowWatermark      *int   `env:"BATCH_LOW_WATERMARK"`
	InteractiveWeight int    `env:"BATCH_INTERACTIVE_WEIGHT" envDefault:"4"`
	BulkWeight        int    `env:"BATCH_BULK_WEIGHT" envDefault:"1"`
	MaxBulkWorkers    int    `env:"BATCH_MAX_BULK_WORKERS" envDefault:"0"`
	RetryAfterPolicy  string `env:"RETRY_AFTER_POLICY" envDefault:"drain_rate"`
	RetryAfterS       int    `env:"RETRY_AFTER_S" envDefault:"1"`
	// RetryReserve is the share of the measured completion rate that refusals may book as
	// retry reservations each second; 0 turns retry tokens off.
	RetryReserve     float64 `env:"RETRY_RESERVE" envDefault:"0.5"`
	WindowStride     int     `env:"WINDOW_STRIDE" envDefault:"32"`
	MaxTextChars     int     `env:"MAX_TEXT_CHARS" envDefault:"100000"`
	MaxTextBytes     int     `env:"MAX_TEXT_BYTES" envDefault:"400000"`
	MaxBodyBytes     int     `env:"MAX_BODY_BYTES" envDefault:"1048576"`
	RequestTimeoutMS int     `env:"REQUEST_TIMEOUT_MS" envDefault:"30000"`
	// HTTPWriteTimeoutMS bounds writing one answer; a stream's writes are each bounded by the
	// stall timeout instead, so a stream lives as long as its generation.
	HTTPWriteTimeoutMS int `env:"HTTP_WRITE_TIMEOUT_MS" envDefault:"30000"`
	ShutdownTimeoutSec int `env:"SHUTDOWN_TIMEOUT_S" envDefault:"30"`

	// GenerateModel is served on the generation routes; "none" serves none.
	GenerateModel string `env:"GENERATE_MODEL" envDefault:"tiny-lm"`
	// The paged KV cache: block size, and the pool's size in blocks or, when that is 0, in
	// bytes.
	KVBlockTokens int   `env:"KV_BLOCK_TOKENS" envDefault:"16"`
	KVBlocks      int   `env:"KV_BLOCKS" envDefault:"0"`
	KVMemoryBytes int64 `env:"KV_MEMORY_BYTES" envDefault:"67108864"`
	// KVHighWatermark is the share of KV blocks in use at which generation sheds (reason
	// memory) until use drains to KVLowWatermark (0: the high one - 0.1).
	KVHighWatermark float64 `env:"KV_HIGH_WATERMARK" envDefault:"0.95"`
	KVLowWatermark  float64 `env:"KV_LOW_WATERMARK" envDefault:"0"`
	// Generation's own queue and watermarks (depth: sequences waiting and running); 0 for the
	// high watermark means MaxRunning + QueueSize.
	GenerateMaxRunning    int `env:"GENERATE_MAX_RUNNING" envDefault:"32"`
	GenerateMaxStepTokens int `env:"GENERATE_MAX_STEP_TOKENS" envDefault:"4096"`
	// GenerateMaxModelLen is the longest sequence served (0: the model's, lowered to what the
	// KV pool holds).
	GenerateMaxModelLen int `env:"GENERATE_MAX_MODEL_LEN" envDefault:"0"`
	// GeneratePreemptLimit is how often one sequence may give its place to a higher class.
	GeneratePreemptLimit   int `env:"GENERATE_PREEMPT_LIMIT" envDefault:"2"`
	GenerateQueueSize      int `env:"GENERATE_QUEUE_SIZE" envDefault:"64"`
	GenerateMaxQueueWaitMS int `env:"GENERATE_MAX_QUEUE_WAIT_MS" envDefault:"5000"`
	GenerateHighWatermark  int `env:"GENERATE_HIGH_WATERMARK" envDefault:"0"`
	GenerateLowWatermark   int `env:"GENERATE_LOW_WATERMARK" envDefault:"0"`
	// Timeouts of a generation: to its first token, of the decoder (and of a reader that
	// stopped reading) between tokens, and of the whole.
	GenerateFirstTokenTimeoutMS int `env:"GENERATE_FIRST_TOKEN_TIMEOUT_MS" envDefault:"10000"`
	GenerateStallTimeoutMS      int `env:"GENERATE_STALL_TIMEOUT_MS" envDefault:"10000"`
	GenerateKeepAliveMS         int `env:"GENERATE_KEEPALIVE_MS" envDefault:"15000"`
	GenerateTokenStallMS        int `env:"GENERATE_TOKEN_STALL_MS" envDefault:"60000"`
	GenerateTimeoutMS           int `env:"GENERATE_TIMEOUT_MS" envDefault:"120000"`
	// GenerateStreamBuffer is how many tokens a stream may leave unread before its sequence
	// pauses.
	GenerateStreamBuffer int `env:"GENERATE_STREAM_BUFFER" envDefault:"16"`
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

// loadConfig is LoadConfig for a given machine.
func loadConfig(environ []string, m machine) (Config, error) {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	problems, noEffect := openMedTranslation(vars) // variable -> the line that reports it
	var cfg Config
	cfg.openMedNoEffect = noEffect
	if v, set := vars["OPENMED_SERVICE_AUTH_ENABLED"]; set {
		cfg.openMedAuth, _ = openMedBool(v)
	}
	if p, set := vars["OPENMED_PROFILE"]; set {
		cfg.Profile = strings.ToLower(strings.TrimSpace(p))
	}
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: vars, Prefix: "SLUICE_"}); err != nil {
		var agg env.AggregateError
		errs := []error{err}
		if errors.As(err, &agg) {
			errs = agg.Errors
		}
		for _, e := range errs {
			name, line := e.Error(), e.Error()
			var pe env.ParseError
			if errors.As(e, &pe) {
				name = variableOf(pe.Name)
				line = fmt.Sprintf("%s is not a valid %s (%v)", name, pe.Type, pe.Err)
			}
			problems[name] = line
		}
	}
	// A CPU batch limit set without its GPU counterpart holds on a GPU too: whoever asked for
	// batches of one (or switched OpenMed's batching off) gets them there as well. A bad CPU
	// value is reported once, under its own name.
	inherited := map[string]bool{}
	for _, pair := range []struct {
		cpu, gpu string
		from     int
		to       *int
	}{
		{"SLUICE_BATCH_MAX_SIZE", "SLUICE_GPU_BATCH_MAX_SIZE", cfg.BatchMaxSize, &cfg.GPUBatchMaxSize},
		{"SLUICE_BATCH_MAX_PADDED_TOKENS", "SLUICE_GPU_BATCH_MAX_PADDED_TOKENS", cfg.BatchMaxTokens, &cfg.GPUBatchMaxTokens},
	} {
		_, cpuSet := vars[pair.cpu]
		if _, gpuSet := vars[pair.gpu]; cpuSet && !gpuSet {
			*pair.to, inherited[pair.gpu] = pair.from, true
		}
	}
	for _, p := range cfg.check(m) {
		if _, seen := problems[p.variable]; !seen && !inherited[p.variable] {
			problems[p.variable] = p.variable + " " + p.problem
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

// unknownVariables reports each SLUICE_ variable that is not a setting and not named in
// SLUICE_IGNORE_VARS, with the setting it most likely meant: a misspelt name would otherwise
// leave its setting at the default without a word.
func unknownVariables(vars map[string]string) map[string]string {
	var known []string
	for f := range reflect.TypeFor[Config]().Fields() {
		if tag := f.Tag.Get("env"); tag != "" && tag != "-" {
			known = append(known, "SLUICE_"+tag)
		}
	}
	ignored := strings.Split(vars["SLUICE_IGNORE_VARS"], ",")
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

// variableOf names the variable that sets the Config field called field.
func variableOf(field string) string {
	if f, ok := reflect.TypeFor[Config]().FieldByName(field); ok {
		if tag := f.Tag.Get("env"); tag != "" {
			return "SLUICE_" + tag
		}
	}
	return field
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
		if v := b.value(c); v > b.max {
			own(b.name, "must be at most %d, %s (got %d)", b.max, b.why, v)
		}
	}
	// Both endpoints warm a full batch on every worker at start-up.
	if tokens := int64(c.BatchMaxTokens); m.MemoryBytes > 0 && c.BatchWorkers > 0 &&
		tokens*int64(c.BatchWorkers)*2*paddedTokenBytes > m.MemoryBytes/2 {
		own("BATCH_MAX_PADDED_TOKENS", "x SLUICE_BATCH_WORKERS x 2 endpoints x %d KiB per padded token must fit in half of the %d MiB this process may use (got %d tokens, %d workers)",
			paddedTokenBytes>>10, m.MemoryBytes>>20, tokens, c.BatchWorkers)
	} else if tokens > 1<<24 {
		own("BATCH_MAX_PADDED_TOKENS", "must be at most %d (got %d)", 1<<24, tokens)
	}
	if _, err := parseQuantize(c.Quantize); err != nil {
		own("QUANTIZE", "%v", err)
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
	if c.RateLimitKey != "peer" && c.RateLimitKey != "tenant" {
		own("RATE_LIMIT_KEY", "must be peer or tenant (got %q)", c.RateLimitKey)
	}
	if c.DeferredAdmission && c.DeferredMaxWaitMS <= 0 {
		own("DEFERRED_MAX_WAIT_MS", "must be > 0 with SLUICE_DEFERRED_ADMISSION (got %d)", c.DeferredMaxWaitMS)
	}
	if c.RefusalLogsPerSecond < 0 {
		own("LOG_REFUSALS_PER_S", "must be >= 0 (0: every refusal) (got %d)", c.RefusalLogsPerSecond)
	}
	if c.GenerateTokenStallMS < 0 {
		own("GENERATE_TOKEN_STALL_MS", "must be >= 0 (0: no limit) (got %d)", c.GenerateTokenStallMS)
	}
	if c.GenerateKeepAliveMS <= 0 {
		own("GENERATE_KEEPALIVE_MS", "must be > 0 (got %d)", c.GenerateKeepAliveMS)
	}
	if c.GenerateTimeoutMS <= 0 {
		own("GENERATE_TIMEOUT_MS", "must be > 0 (got %d)", c.GenerateTimeoutMS)
	}
	if c.BenchStepDelayMS < 0 {
		own("BENCH_STEP_DELAY_MS", "must be >= 0 (0: none) (got %d)", c.BenchStepDelayMS)
	}
	if c.GeneratePreemptLimit < 0 {
		own("GENERATE_PREEMPT_LIMIT", "must be >= 0 (0: never preempt for priority) (got %d)", c.GeneratePreemptLimit)
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
	if a, err := c.auth(clock.Real()); err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			own(ce.variable, "%s", ce.problem)
		} else {
			own("API_KEYS", "%v", err)
		}
	} else if a == nil && c.openMedAuth {
		out = append(out, problem{"OPENMED_SERVICE_AUTH_ENABLED", "is true but the API keys and JWKS given hold nothing to check; refusing to start open"})
	}
	if _, err := identity.ParseProxies(c.TrustedProxies); err != nil {
		own("TRUSTED_PROXIES", "%s", strings.TrimPrefix(err.Error(), "identity: "))
	}
	for _, h := range c.TrustedHosts {
		if strings.TrimSpace(h) == "*" {
			own("TRUSTED_HOSTS", "must list host names: a bare * trusts any host")
			break
		}
	}
	for _, o := range c.CORSOrigins {
		if strings.Contains(o, "*") {
			own("CORS_ORIGINS", "must list exact origins: a wildcard lets any page call the API")
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
		names map[string]string
	}{
		{c.batcher().Validate(), batcherVars}, {c.gate().Validate(), gateVars},
		{c.runtime().Validate(), runtimeVars}, {c.limits().Validate(), limitsVars},
		{c.scheduler(1, 0).Validate(), schedulerVars}, {c.kv(kvcache.Config{Layers: 1, Heads: 1, HeadDim: 1, MaxSeqLen: 1}).Validate(), kvVars},
		{c.generateGate(c.GenerateMaxRunning).Validate(), generateGateVars},
		{c.deid().Validate(), deidVars},
		{c.budgets().Validate(), deferredVars},
	} {
		out = append(out, packageProblems(v.err, v.names)...)
	}
	for _, p := range packageProblems(c.onGPU().batcher().Validate(), gpuBatcherVars) {
		if strings.HasPrefix(p.variable, "SLUICE_") {
			out = append(out, p)
		}
	}
	return out
}

// upperBound is the largest value start-up accepts for one numeric setting, and why. The
// packages check what makes a setting meaningless (a size of 0, a low watermark above the high
// one); these check what the machine can hold and what is sane, so that a typo of a few zeros
// is a clear start-up error instead of a process the kernel kills or that never gets ready.
type upperBound struct {
	name  string // without SLUICE_
	value func(Config) int64
	max   int64
	why   string
}

// paddedTokenBytes is the memory one padded token of a batch may take while it runs, for the
// memory bound on SLUICE_BATCH_MAX_PADDED_TOKENS: the shipped models measured about 6 KiB each
// (RSS after warm-up at 4,096 and 32,768 padded tokens); a larger encoder takes more.
const paddedTokenBytes = 16 << 10

const hourMS = 3_600_000

func upperBounds(m machine) []upperBound {
	i := func(f func(Config) int) func(Config) int64 { return func(c Config) int64 { return int64(f(c)) } }
	cpus := int64(4 * m.CPUs)
	cpuWhy := fmt.Sprintf("4 x the %d CPUs this process may use", m.CPUs)
	ms := func(name string, f func(Config) int) upperBound {
		return upperBound{name, i(f), hourMS, "an hour"}
	}
	b := []upperBound{
		{"INTRA_OP_THREADS", i(func(c Config) int { return c.IntraThreads }), cpus, cpuWhy},
		{"INTER_OP_THREADS", i(func(c Config) int { return c.InterThreads }), cpus, cpuWhy},
		{"BATCH_WORKERS", i(func(c Config) int { return c.BatchWorkers }), cpus, cpuWhy},
		{"CUDA_DEVICE_ID", i(func(c Config) int { return c.CUDADeviceID }), 63, "a sane GPU number"},
		{"CUDA_MEMORY_LIMIT_BYTES", func(c Config) int64 { return c.CUDAMemoryLimit }, 1 << 40, "1 TiB"},
		{"BATCH_MAX_SIZE", i(func(c Config) int { return c.BatchMaxSize }), 4096, "a sane batch"},
		{"GPU_BATCH_MAX_SIZE", i(func(c Config) int { return c.GPUBatchMaxSize }), 4096, "a sane batch"},
		{"GPU_BATCH_MAX_PADDED_TOKENS", i(func(c Config) int { return c.GPUBatchMaxTokens }), 1 << 22, "a sane batch"},
		{"BATCH_MAX_QUEUE_SIZE", i(func(c Config) int { return c.BatchMaxQueueSize }), 65536, "a sane queue"},
		{"GENERATE_MAX_RUNNING", i(func(c Config) int { return c.GenerateMaxRunning }), 4096, "a sane batch"},
		{"GENERATE_MAX_STEP_TOKENS", i(func(c Config) int { return c.GenerateMaxStepTokens }), 1 << 20, "a sane step"},
		{"GENERATE_MAX_MODEL_LEN", i(func(c Config) int { return c.GenerateMaxModelLen }), 1 << 24, "a sane context"},
		{"GENERATE_PREEMPT_LIMIT", i(func(c Config) int { return c.GeneratePreemptLimit }), 1 << 10, "a sane count"},
		{"GENERATE_QUEUE_SIZE", i(func(c Config) int { return c.GenerateQueueSize }), 65536, "a sane queue"},
		{"GENERATE_STREAM_BUFFER", i(func(c Config) int { return c.GenerateStreamBuffer }), 65536, "a sane buffer"},
		{"KV_BLOCK_TOKENS", i(func(c Config) int { return c.KVBlockTokens }), 1024, "a sane block"},
		{"KV_BLOCKS", i(func(c Config) int { return c.KVBlocks }), 1 << 24, "a sane pool"},
		{"MAX_BODY_BYTES", i(func(c Config) int { return c.MaxBodyBytes }), 64 << 20, "64 MiB"},
		{"MAX_TEXT_CHARS", i(func(c Config) int { return c.MaxTextChars }), 64 << 20, "64 Mi characters"},
		{"MAX_TEXT_BYTES", i(func(c Config) int { return c.MaxTextBytes }), 64 << 20, "64 MiB"},
		{"BATCH_HIGH_WATERMARK", i(func(c Config) int { return c.HighWatermark }), 1 << 20, "a sane queue"},
		{"GENERATE_HIGH_WATERMARK", i(func(c Config) int { return c.GenerateHighWatermark }), 1 << 20, "a sane queue"},
		{"WINDOW_STRIDE", i(func(c Config) int { return c.WindowStride }), 1 << 16, "longer than any model's window"},
		{"LOG_REFUSALS_PER_S", i(func(c Config) int { return c.RefusalLogsPerSecond }), 1 << 20, "a sane log"},
		{"SHUTDOWN_TIMEOUT_S", i(func(c Config) int { return c.ShutdownTimeoutSec }), 3600, "an hour"},
		{"MAX_RESIDENT_MODELS", i(func(c Config) int { return c.MaxResidentModels }), 1024, "a sane count"},
		{"AUTH_FAILURE_BURST", i(func(c Config) int { return c.AuthFailureBurst }), 1 << 20, "a sane burst"},
		{"AUTH_FAILURE_RPS", func(c Config) int64 { return int64(math.Ceil(c.AuthFailureRPS)) }, 1 << 20, "a sane rate"},
		{"RATE_LIMIT_RPS", func(c Config) int64 { return int64(math.Ceil(c.RateLimitRPS)) }, 1 << 20, "a sane rate"},
		{"RATE_LIMIT_BURST", func(c Config) int64 { return int64(math.Ceil(c.RateLimitBurst)) }, 1 << 30, "a sane burst"},
		{"RATE_LIMIT_TOKENS_PER_MINUTE", func(c Config) int64 { return int64(math.Ceil(c.RateLimitTokensPerMin)) }, 1 << 36, "a sane rate"},
		{"RATE_LIMIT_TOKEN_BURST", func(c Config) int64 { return int64(math.Ceil(c.RateLimitTokenBurst)) }, 1 << 36, "a sane burst"},
		{"RATE_LIMIT_MAX_CONCURRENCY", i(func(c Config) int { return c.RateLimitMaxConcurrency }), 1 << 20, "a sane count"},
		{"DEFERRED_MAX_HELD", i(func(c Config) int { return c.DeferredMaxHeld }), 1 << 20, "a sane count"},
		ms("DEFERRED_MAX_WAIT_MS", func(c Config) int { return c.DeferredMaxWaitMS }),
		{"AUTH_JWT_LEEWAY_S", func(c Config) int64 { return int64(math.Ceil(c.AuthJWTLeewayS)) }, 3600, "an hour"},
		{"AUTH_JWT_MAX_LIFETIME_S", func(c Config) int64 { return int64(math.Ceil(c.AuthJWTMaxLifetimeS)) }, 366 * 86400, "a year"},
		{"MODEL_MEMORY_BUDGET_BYTES", func(c Config) int64 { return c.ModelMemoryBudget }, 1 << 44, "16 TiB"},
		ms("MODEL_LOAD_WAIT_MS", func(c Config) int {
			if c.ModelLoadWaitMS == nil {
				return 0
			}
			return *c.ModelLoadWaitMS
		}),
		ms("BATCH_MAX_WAIT_MS", func(c Config) int { return c.BatchMaxWaitMS }),
		ms("BATCH_MAX_QUEUE_WAIT_MS", func(c Config) int { return c.BatchMaxQueueWaitMS }),
		ms("REQUEST_TIMEOUT_MS", func(c Config) int { return c.RequestTimeoutMS }),
		ms("HTTP_WRITE_TIMEOUT_MS", func(c Config) int { return c.HTTPWriteTimeoutMS }),
		ms("BENCH_STEP_DELAY_MS", func(c Config) int { return c.BenchStepDelayMS }),
		ms("GENERATE_MAX_QUEUE_WAIT_MS", func(c Config) int { return c.GenerateMaxQueueWaitMS }),
		ms("GENERATE_FIRST_TOKEN_TIMEOUT_MS", func(c Config) int { return c.GenerateFirstTokenTimeoutMS }),
		ms("GENERATE_STALL_TIMEOUT_MS", func(c Config) int { return c.GenerateStallTimeoutMS }),
		ms("GENERATE_KEEPALIVE_MS", func(c Config) int { return c.GenerateKeepAliveMS }),
		ms("GENERATE_TOKEN_STALL_MS", func(c Config) int { return c.GenerateTokenStallMS }),
		ms("GENERATE_TIMEOUT_MS", func(c Config) int { return c.GenerateTimeoutMS }),
	}
	if m.MemoryBytes > 0 {
		b = append(b, upperBound{"KV_MEMORY_BYTES", func(c Config) int64 { return c.KVMemoryBytes }, m.MemoryBytes / 2,
			fmt.Sprintf("half of the %d MiB this process may use", m.MemoryBytes>>20)})
	}
	return b
}

// named turns a package's configuration error found while wiring (when a model's geometry is
// known) into one that names the variables; other errors pass unchanged.
func named(err error, names map[string]string) error {
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

// packageProblems turns the settings.Problems a package's Validate joined into problems named
// by the variables that set the fields (names maps field to variable). An error that is not a
// settings.Problem is reported under the variable "?".
func packageProblems(err error, names map[string]string) []problem {
	problems, other := settings.Problems(err)
	out := make([]problem, 0, len(problems)+len(other))
	for _, p := range problems {
		name, ok := names[p.Field]
		if !ok {
			name = p.Field // a field no variable sets: a wiring bug, still reported
		}
		out = append(out, problem{name, p.Text})
	}
	for _, e := range other {
		out = append(out, problem{"?", e.Error()})
	}
	return out
}

// Each package configuration's fields, and the variables that set them.
var (
	batcherVars = map[string]string{
		"MaxBatchSize": "SLUICE_BATCH_MAX_SIZE", "MaxWait": "SLUICE_BATCH_MAX_WAIT_MS",
		"MaxPaddedTokens": "SLUICE_BATCH_MAX_PADDED_TOKENS", "QueueSize": "SLUICE_BATCH_MAX_QUEUE_SIZE",
		"Workers": "SLUICE_BATCH_WORKERS", "MaxQueueWait": "SLUICE_BATCH_MAX_QUEUE_WAIT_MS",
		"Weights[interactive]": "SLUICE_BATCH_INTERACTIVE_WEIGHT", "Weights[bulk]": "SLUICE_BATCH_BULK_WEIGHT",
		"MaxBulkWorkers": "SLUICE_BATCH_MAX_BULK_WORKERS",
	}
	// gpuBatcherVars names the GPU's batch limits (Config.onGPU); problems of the other fields
	// are the CPU configuration's too, reported through batcherVars.
	gpuBatcherVars = map[string]string{
		"MaxBatchSize": "SLUICE_GPU_BATCH_MAX_SIZE", "MaxPaddedTokens": "SLUICE_GPU_BATCH_MAX_PADDED_TOKENS",
	}
	gateVars = map[string]string{
		"HighWatermark": "SLUICE_BATCH_HIGH_WATERMARK", "LowWatermark": "SLUICE_BATCH_LOW_WATERMARK",
		"Policy": "SLUICE_RETRY_AFTER_POLICY", "StaticRetryAfter": "SLUICE_RETRY_AFTER_S",
		"RetryReserve": "SLUICE_RETRY_RESERVE",
	}
	generateGateVars = map[string]string{
		"HighWatermark": "SLUICE_GENERATE_HIGH_WATERMARK", "LowWatermark": "SLUICE_GENERATE_LOW_WATERMARK",
		"Policy": "SLUICE_RETRY_AFTER_POLICY", "StaticRetryAfter": "SLUICE_RETRY_AFTER_S",
		"RetryReserve": "SLUICE_RETRY_RESERVE", "MemoryHighWatermark": "SLUICE_KV_HIGH_WATERMARK",
		"MemoryLowWatermark": "SLUICE_KV_LOW_WATERMARK",
	}
	runtimeVars = map[string]string{
		"Device": "SLUICE_DEVICE", "IntraOpThreads": "SLUICE_INTRA_OP_THREADS", "InterOpThreads": "SLUICE_INTER_OP_THREADS",
		"CUDA.DeviceID": "SLUICE_CUDA_DEVICE_ID", "CUDA.MemoryLimitBytes": "SLUICE_CUDA_MEMORY_LIMIT_BYTES",
		"CUDA.ConvAlgoSearch": "SLUICE_CUDA_CONV_ALGO_SEARCH",
	}
	deidVars     = map[string]string{"HashKey": "SLUICE_DEID_HASH_KEY"}
	deferredVars = map[string]string{"MaxWait": "SLUICE_DEFERRED_MAX_WAIT_MS", "MaxHeld": "SLUICE_DEFERRED_MAX_HELD"}
	limitsVars   = map[string]string{
		"Limits.MaxBodyBytes": "SLUICE_MAX_BODY_BYTES", "Limits.MaxTextChars": "SLUICE_MAX_TEXT_CHARS",
		"Limits.MaxTextBytes": "SLUICE_MAX_TEXT_BYTES", "Limits.RequestTimeout": "SLUICE_REQUEST_TIMEOUT_MS",
		"Limits.WriteTimeout": "SLUICE_HTTP_WRITE_TIMEOUT_MS",
		"RetryAfter":          "SLUICE_RETRY_AFTER_S",
	}
	schedulerVars = map[string]string{
		"MaxRunning": "SLUICE_GENERATE_MAX_RUNNING", "MaxStepTokens": "SLUICE_GENERATE_MAX_STEP_TOKENS",
		"QueueSize": "SLUICE_GENERATE_QUEUE_SIZE", "MaxQueueWait": "SLUICE_GENERATE_MAX_QUEUE_WAIT_MS",
		"Weights[interactive]": "SLUICE_BATCH_INTERACTIVE_WEIGHT", "Weights[bulk]": "SLUICE_BATCH_BULK_WEIGHT",
		"OutBuffer": "SLUICE_GENERATE_STREAM_BUFFER", "StallTimeout": "SLUICE_GENERATE_STALL_TIMEOUT_MS",
		"TokenStallTimeout": "SLUICE_GENERATE_TOKEN_STALL_MS", "PreemptLimit": "SLUICE_GENERATE_PREEMPT_LIMIT",
	}
	kvVars = map[string]string{
		"BlockTokens": "SLUICE_KV_BLOCK_TOKENS", "Blocks": "SLUICE_KV_BLOCKS", "MemoryBytes": "SLUICE_KV_MEMORY_BYTES",
	}
	strideVars = map[string]string{"Stride": "SLUICE_WINDOW_STRIDE"}
)

// onGPU is the configuration as it applies on a GPU: the GPU's batch limits in place of the
// CPU's.
func (c Config) onGPU() Config {
	c.BatchMaxSize, c.BatchMaxTokens = c.GPUBatchMaxSize, c.GPUBatchMaxTokens
	return c
}

// The configurations of the packages, built from the environment. These are mappings only,
// with the defaults that are this command's (OpenMed's meanings of 0); every range is
// checked by the package that owns the setting.

func (c Config) batcher() batcher.Config {
	return batcher.Config{
		MaxBatchSize: c.BatchMaxSize, MaxWait: ms(c.BatchMaxWaitMS), MaxPaddedTokens: c.BatchMaxTokens,
		QueueSize: c.BatchMaxQueueSize, Workers: c.BatchWorkers, MaxQueueWait: c.maxQueueWait(),
		Weights:        [admission.NumPriorities]int{admission.Interactive: c.InteractiveWeight, admission.Bulk: c.BulkWeight},
		MaxBulkWorkers: c.MaxBulkWorkers,
	}
}

func (c Config) gate() admission.Config {
	high := c.HighWatermark
	if high == 0 {
		high = c.BatchMaxQueueSize // OpenMed's default: the max queue size
	}
	low, untilEmpty := 0, false // unset: half the high one
	if c.LowWatermark != nil {
		low, untilEmpty = *c.LowWatermark, *c.LowWatermark == 0
	}
	return admission.Config{HighWatermark: high, LowWatermark: low, ShedUntilEmpty: untilEmpty,
		Policy: admission.Policy(c.RetryAfterPolicy), StaticRetryAfter: c.retryAfter(), RetryReserve: c.RetryReserve}
}

func (c Config) runtime() engine.RuntimeOptions {
	return engine.RuntimeOptions{LibraryPath: c.ORTLib, Device: engine.Device(c.Device),
		IntraOpThreads: c.IntraThreads, InterOpThreads: c.InterThreads, NoSpinning: !c.ORTSpinning,
		CUDA: engine.CUDAOptions{DeviceID: c.CUDADeviceID, MemoryLimitBytes: c.CUDAMemoryLimit, ConvAlgoSearch: c.CUDAConvAlgoSearch}}
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
		return admission.BudgetsConfig{}
	}
	wait := time.Duration(c.DeferredMaxWaitMS) * time.Millisecond
	if c.DeferredMaxWaitMS < 0 {
		wait = -1
	}
	return admission.BudgetsConfig{MaxWait: wait, MaxHeld: c.DeferredMaxHeld}
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

// auth builds the authenticator; nil when no keys and no JWKS are configured (off).
func (c Config) auth(clk clock.Clock) (*identity.Authenticator, error) {
	keys, err := c.apiKeys()
	if err != nil {
		return nil, err
	}
	verifier, err := c.jwtVerifier()
	if err != nil {
		return nil, err
	}
	if keys == nil && verifier == nil {
		return nil, nil
	}
	var routes map[string][]string
	if c.AuthRouteScopes != "" {
		if routes, err = identity.ParseRouteScopes([]byte(c.AuthRouteScopes)); err != nil {
			return nil, &configError{"AUTH_ROUTE_SCOPES", strings.TrimPrefix(err.Error(), "identity: ")}
		}
	}
	a, err := identity.New(identity.Config{Keys: keys, JWT: verifier, RouteScopes: routes, Open: c.AuthOpen,
		FailureRate: c.AuthFailureRPS, FailureBurst: c.AuthFailureBurst}, clk)
	if err != nil {
		variable := "AUTH_FAILURE_RPS"
		switch {
		case strings.Contains(err.Error(), "RouteScopes"):
			variable = "AUTH_ROUTE_SCOPES"
		case strings.Contains(err.Error(), "FailureBurst"):
			variable = "AUTH_FAILURE_BURST"
		case strings.Contains(err.Error(), "Keys"):
			variable = "API_KEYS"
		}
		return nil, &configError{variable, err.Error()}
	}
	return a, nil
}

// jwtVerifier builds the bearer-token verifier from the JWKS (inline or its file); nil when
// none is set.
func (c Config) jwtVerifier() (*identity.JWTVerifier, error) {
	if c.AuthJWKS == "" && c.AuthJWKSFile == "" {
		return nil, nil
	}
	jwks, variable := []byte(c.AuthJWKS), "AUTH_JWKS"
	if c.AuthJWKSFile != "" {
		var err error
		if jwks, err = os.ReadFile(c.AuthJWKSFile); err != nil {
			return nil, &configError{"AUTH_JWKS_FILE", fmt.Sprintf("cannot be read: %v", unwrapped(err))}
		}
		variable = "AUTH_JWKS_FILE"
	}
	v, err := identity.NewJWTVerifier(identity.JWTConfig{JWKS: jwks, Issuer: c.AuthJWTIssuer,
		Audience: c.AuthJWTAudience, Leeway: time.Duration(c.AuthJWTLeewayS * float64(time.Second)),
		MaxLifetime: time.Duration(c.AuthJWTMaxLifetimeS * float64(time.Second))})
	if err != nil {
		return nil, &configError{variable, err.Error()}
	}
	return v, nil
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
	return time.Duration(c.BatchMaxQueueWaitMS) * time.Millisecond
}

func (c Config) limits() handlers.Limits {
	return handlers.Limits{MaxBodyBytes: c.MaxBodyBytes, MaxTextChars: c.MaxTextChars,
		MaxTextBytes: c.MaxTextBytes, RequestTimeout: ms(c.RequestTimeoutMS), WriteTimeout: ms(c.HTTPWriteTimeoutMS)}
}

// scheduler is the generation scheduler's configuration for a model of maxPositions positions.
func (c Config) scheduler(maxPositions int, pad int64) scheduler.Config {
	return scheduler.Config{MaxRunning: c.GenerateMaxRunning, MaxStepTokens: c.GenerateMaxStepTokens,
		QueueSize: c.GenerateQueueSize, MaxQueueWait: ms(c.GenerateMaxQueueWaitMS),
		Weights:   [admission.NumPriorities]int{admission.Interactive: c.InteractiveWeight, admission.Bulk: c.BulkWeight},
		OutBuffer: c.GenerateStreamBuffer, StallTimeout: ms(c.GenerateStallTimeoutMS), MaxPositions: maxPositions, PadID: pad,
		PreemptLimit: c.GeneratePreemptLimit, TokenStallTimeout: ms(c.GenerateTokenStallMS)}
}

// servedLength is the longest sequence generation serves for a model of positions positions
// whose KV pool holds poolHolds tokens of one sequence: SLUICE_GENERATE_MAX_MODEL_LEN when
// set (an error when either cannot take it), else the model's, lowered to what the pool holds
// (lowered says so).
func (c Config) servedLength(positions, poolHolds int) (n int, lowered bool, err error) {
	const name = "SLUICE_GENERATE_MAX_MODEL_LEN"
	switch n = c.GenerateMaxModelLen; {
	case n < 0:
		return 0, false, fmt.Errorf("invalid configuration:\n  %s must not be negative (0: the model's), got %d", name, n)
	case n > positions:
		return 0, false, fmt.Errorf("invalid configuration:\n  %s must be at most the model's %d positions, got %d", name, positions, n)
	case n > poolHolds:
		return 0, false, fmt.Errorf("invalid configuration:\n  %s: the KV pool holds %d tokens of one sequence, got %d "+
			"(raise SLUICE_KV_MEMORY_BYTES or SLUICE_KV_BLOCKS, or lower %s)", name, poolHolds, n, name)
	case n > 0:
		return n, false, nil
	}
	return min(positions, poolHolds), poolHolds < positions, nil
}

// kv is the KV pool's configuration over a model's geometry.
func (c Config) kv(geometry kvcache.Config) kvcache.Config {
	geometry.BlockTokens, geometry.Blocks, geometry.MemoryBytes = c.KVBlockTokens, c.KVBlocks, c.KVMemoryBytes
	return geometry
}

// generateGate is generation's admission, for a scheduler that runs maxRunning sequences.
func (c Config) generateGate(maxRunning int) admission.Config {
	high := c.GenerateHighWatermark
	if high == 0 {
		high = maxRunning + c.GenerateQueueSize
	}
	return admission.Config{HighWatermark: high, LowWatermark: c.GenerateLowWatermark,
		Policy: admission.Policy(c.RetryAfterPolicy), StaticRetryAfter: c.retryAfter(), RetryReserve: c.RetryReserve,
		MemoryHighWatermark: c.KVHighWatermark, MemoryLowWatermark: c.KVLowWatermark}
}

func (c Config) extract() extract.Config {
	return extract.Config{Stride: c.WindowStride, Batch: c.batcher()}
}

// maxQueueWait maps 0 to the shortest wait there is, OpenMed's "serve only what dispatches
// at once"; the batcher reads 0 as "no limit".
func (c Config) maxQueueWait() time.Duration {
	if c.BatchMaxQueueWaitMS == 0 {
		return time.Nanosecond
	}
	return ms(c.BatchMaxQueueWaitMS)
}

func (c Config) retryAfter() time.Duration { return time.Duration(c.RetryAfterS) * time.Second }

func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }
