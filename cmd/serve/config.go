package main

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/caarlos0/env/v10"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/batcher"
	"github.com/sluice-serving/sluice/engine"
	"github.com/sluice-serving/sluice/extract"
	"github.com/sluice-serving/sluice/handlers"
)

// Config is everything the server reads from its environment. Every field has a SLUICE_
// variable; the batching ones also accept the OpenMed service's names (see openMedAliases) so
// a deployment of that service can switch without renaming its settings.
type Config struct {
	Addr         string `env:"ADDR" envDefault:":8080"`
	Device       string `env:"DEVICE" envDefault:"auto"`
	ORTLib       string `env:"ORT_LIB"`
	IntraThreads int    `env:"INTRA_OP_THREADS" envDefault:"0"`
	InterThreads int    `env:"INTER_OP_THREADS" envDefault:"1"`
	ORTSpinning  bool   `env:"ORT_SPINNING" envDefault:"false"`
	LogLevel     string `env:"LOG_LEVEL" envDefault:"info"`

	// ModelsDir, when set, is searched first for model directories; the embedded models fill
	// in whatever it does not hold.
	ModelsDir    string            `env:"MODELS_DIR"`
	AnalyzeModel string            `env:"ANALYZE_MODEL" envDefault:"clinical-ner"`
	PIIModel     string            `env:"PII_MODEL" envDefault:"pii"`
	ModelAliases map[string]string `env:"MODEL_ALIASES" envKeyValSeparator:"=" envDefault:"disease_detection_superclinical=clinical-ner,OpenMed/OpenMed-PII-SuperClinical-Small-44M-v1=pii"`

	BatchMaxSize      int `env:"BATCH_MAX_SIZE" envDefault:"32"`
	BatchMaxWaitMS    int `env:"BATCH_MAX_WAIT_MS" envDefault:"5"`
	BatchMaxQueueSize int `env:"BATCH_MAX_QUEUE_SIZE" envDefault:"256"`
	BatchMaxTokens    int `env:"BATCH_MAX_PADDED_TOKENS" envDefault:"4096"`
	BatchWorkers      int `env:"BATCH_WORKERS" envDefault:"1"`
	// BatchMaxQueueWaitMS bounds how long a request may wait for dispatch; past it, 503
	// max_wait. 0 means only requests that dispatch at once are served (OpenMed's meaning).
	BatchMaxQueueWaitMS int `env:"BATCH_MAX_QUEUE_WAIT_MS" envDefault:"1000"`
	// HighWatermark 0 means BATCH_MAX_QUEUE_SIZE; LowWatermark 0 means half the high one.
	HighWatermark     int    `env:"BATCH_HIGH_WATERMARK" envDefault:"0"`
	LowWatermark      int    `env:"BATCH_LOW_WATERMARK" envDefault:"0"`
	InteractiveWeight int    `env:"BATCH_INTERACTIVE_WEIGHT" envDefault:"4"`
	BulkWeight        int    `env:"BATCH_BULK_WEIGHT" envDefault:"1"`
	MaxBulkWorkers    int    `env:"BATCH_MAX_BULK_WORKERS" envDefault:"0"`
	RetryAfterPolicy  string `env:"RETRY_AFTER_POLICY" envDefault:"drain_rate"`
	RetryAfterS       int    `env:"RETRY_AFTER_S" envDefault:"1"`
	// RetryReserve is the share of the measured completion rate that refusals may book as
	// retry reservations each second; 0 turns retry tokens off.
	RetryReserve       float64 `env:"RETRY_RESERVE" envDefault:"0.5"`
	WindowStride       int     `env:"WINDOW_STRIDE" envDefault:"32"`
	MaxTextChars       int     `env:"MAX_TEXT_CHARS" envDefault:"100000"`
	MaxTextBytes       int     `env:"MAX_TEXT_BYTES" envDefault:"400000"`
	MaxBodyBytes       int     `env:"MAX_BODY_BYTES" envDefault:"1048576"`
	RequestTimeoutMS   int     `env:"REQUEST_TIMEOUT_MS" envDefault:"30000"`
	ShutdownTimeoutSec int     `env:"SHUTDOWN_TIMEOUT_S" envDefault:"30"`
}

// openMedAliases maps our variable names to the OpenMed service's. An alias applies only when
// our own name is unset, so an explicit SLUICE_ value always wins.
var openMedAliases = map[string]string{
	"SLUICE_BATCH_MAX_SIZE":          "OPENMED_SERVICE_BATCH_MAX_SIZE",
	"SLUICE_BATCH_MAX_WAIT_MS":       "OPENMED_SERVICE_BATCH_MAX_WAIT_MS",
	"SLUICE_BATCH_MAX_QUEUE_SIZE":    "OPENMED_SERVICE_BATCH_MAX_QUEUE_SIZE",
	"SLUICE_BATCH_MAX_QUEUE_WAIT_MS": "OPENMED_SERVICE_BATCH_MAX_QUEUE_WAIT_MS",
	"SLUICE_BATCH_HIGH_WATERMARK":    "OPENMED_SERVICE_BATCH_HIGH_WATERMARK",
	"SLUICE_BATCH_LOW_WATERMARK":     "OPENMED_SERVICE_BATCH_LOW_WATERMARK",
}

// LoadConfig parses environ (os.Environ() format) and checks every setting: the variables this
// command owns itself, and, through the packages' own Validate, the settings each package
// takes. The error names every bad variable, one per line, so an operator fixes them all in
// one go.
func LoadConfig(environ []string) (Config, error) {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	for ours, theirs := range openMedAliases {
		if _, set := vars[ours]; set {
			continue
		}
		if v, set := vars[theirs]; set {
			vars[ours] = v
		}
	}
	var cfg Config
	problems := map[string]string{} // variable -> the line that reports it
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
	for _, p := range cfg.check() {
		if _, seen := problems[p.variable]; !seen {
			problems[p.variable] = p.variable + " " + p.problem
		}
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

// check collects the problems of every setting: this command's own rules, then each package's
// Validate over the configuration built from the environment, with the package's field names
// turned into the variables that set them. A variable is reported once, with its first
// problem.
func (c Config) check() []problem {
	var out []problem
	own := func(name, format string, args ...any) {
		out = append(out, problem{"SLUICE_" + name, fmt.Sprintf(format, args...)})
	}
	if c.ShutdownTimeoutSec <= 0 {
		own("SHUTDOWN_TIMEOUT_S", "must be > 0 (got %d)", c.ShutdownTimeoutSec)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		own("LOG_LEVEL", "must be debug, info, warn or error (got %q)", c.LogLevel)
	}
	for _, err := range []error{c.batcher().Validate(), c.gate().Validate(), c.runtime().Validate(), c.limits().Validate()} {
		out = append(out, packageProblems(err)...)
	}
	return out
}

// packageProblems turns the ConfigErrors a package's Validate joined into problems named by
// the variables that set the fields.
func packageProblems(err error) []problem {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	out := make([]problem, 0, len(errs))
	for _, e := range errs {
		pkg, field, text := fieldOf(e)
		name, ok := settingNames[pkg+"."+field]
		if !ok {
			name = pkg + "." + field // a field no variable sets: a wiring bug, still reported
		}
		out = append(out, problem{name, text})
	}
	return out
}

// fieldOf reads the package, field and problem of one package's ConfigError.
func fieldOf(err error) (pkg, field, text string) {
	var (
		b *batcher.ConfigError
		a *admission.ConfigError
		e *engine.ConfigError
		h *handlers.ConfigError
		x *extract.ConfigError
	)
	switch {
	case errors.As(err, &b):
		return "batcher", b.Field, b.Problem
	case errors.As(err, &a):
		return "admission", a.Field, a.Problem
	case errors.As(err, &e):
		return "engine", e.Field, e.Problem
	case errors.As(err, &h):
		return "handlers", h.Field, h.Problem
	case errors.As(err, &x):
		return "extract", x.Field, x.Problem
	}
	return "?", "?", err.Error()
}

// settingNames maps each package's configuration field to the variable that sets it.
var settingNames = map[string]string{
	"batcher.MaxBatchSize":           "SLUICE_BATCH_MAX_SIZE",
	"batcher.MaxWait":                "SLUICE_BATCH_MAX_WAIT_MS",
	"batcher.MaxPaddedTokens":        "SLUICE_BATCH_MAX_PADDED_TOKENS",
	"batcher.QueueSize":              "SLUICE_BATCH_MAX_QUEUE_SIZE",
	"batcher.Workers":                "SLUICE_BATCH_WORKERS",
	"batcher.MaxQueueWait":           "SLUICE_BATCH_MAX_QUEUE_WAIT_MS",
	"batcher.Weights[interactive]":   "SLUICE_BATCH_INTERACTIVE_WEIGHT",
	"batcher.Weights[bulk]":          "SLUICE_BATCH_BULK_WEIGHT",
	"batcher.MaxBulkWorkers":         "SLUICE_BATCH_MAX_BULK_WORKERS",
	"admission.HighWatermark":        "SLUICE_BATCH_HIGH_WATERMARK",
	"admission.LowWatermark":         "SLUICE_BATCH_LOW_WATERMARK",
	"admission.Policy":               "SLUICE_RETRY_AFTER_POLICY",
	"admission.StaticRetryAfter":     "SLUICE_RETRY_AFTER_S",
	"admission.RetryReserve":         "SLUICE_RETRY_RESERVE",
	"engine.Device":                  "SLUICE_DEVICE",
	"engine.IntraOpThreads":          "SLUICE_INTRA_OP_THREADS",
	"engine.InterOpThreads":          "SLUICE_INTER_OP_THREADS",
	"handlers.Limits.MaxBodyBytes":   "SLUICE_MAX_BODY_BYTES",
	"handlers.Limits.MaxTextChars":   "SLUICE_MAX_TEXT_CHARS",
	"handlers.Limits.MaxTextBytes":   "SLUICE_MAX_TEXT_BYTES",
	"handlers.Limits.RequestTimeout": "SLUICE_REQUEST_TIMEOUT_MS",
	"handlers.RetryAfter":            "SLUICE_RETRY_AFTER_S",
	"extract.Stride":                 "SLUICE_WINDOW_STRIDE",
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
	return admission.Config{HighWatermark: high, LowWatermark: c.LowWatermark,
		Policy: admission.Policy(c.RetryAfterPolicy), StaticRetryAfter: c.retryAfter(), RetryReserve: c.RetryReserve}
}

func (c Config) runtime() engine.RuntimeOptions {
	return engine.RuntimeOptions{LibraryPath: c.ORTLib, Device: engine.Device(c.Device),
		IntraOpThreads: c.IntraThreads, InterOpThreads: c.InterThreads, NoSpinning: !c.ORTSpinning}
}

func (c Config) limits() handlers.Limits {
	return handlers.Limits{MaxBodyBytes: c.MaxBodyBytes, MaxTextChars: c.MaxTextChars,
		MaxTextBytes: c.MaxTextBytes, RequestTimeout: ms(c.RequestTimeoutMS)}
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
