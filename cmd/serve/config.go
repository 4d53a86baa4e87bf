package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/caarlos0/env/v10"

	"github.com/sluice-serving/sluice/admission"
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

// LoadConfig parses environ (os.Environ() format). The error names every bad variable, one per
// line, so an operator fixes them all in one go.
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
	var problems []string
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: vars, Prefix: "SLUICE_"}); err != nil {
		var agg env.AggregateError
		if errors.As(err, &agg) {
			for _, e := range agg.Errors {
				problems = append(problems, e.Error())
			}
		} else {
			problems = append(problems, err.Error())
		}
	}
	problems = append(problems, cfg.validate()...)
	if len(problems) > 0 {
		sort.Strings(problems)
		return cfg, fmt.Errorf("invalid configuration:\n  %s", strings.Join(problems, "\n  "))
	}
	return cfg, nil
}

func (c Config) validate() []string {
	var p []string
	positive := func(name string, v int) {
		if v <= 0 {
			p = append(p, fmt.Sprintf("SLUICE_%s must be > 0 (got %d)", name, v))
		}
	}
	positive("BATCH_MAX_SIZE", c.BatchMaxSize)
	positive("BATCH_MAX_QUEUE_SIZE", c.BatchMaxQueueSize)
	positive("BATCH_MAX_PADDED_TOKENS", c.BatchMaxTokens)
	positive("BATCH_WORKERS", c.BatchWorkers)
	positive("MAX_TEXT_CHARS", c.MaxTextChars)
	positive("MAX_BODY_BYTES", c.MaxBodyBytes)
	positive("MAX_TEXT_BYTES", c.MaxTextBytes)
	positive("REQUEST_TIMEOUT_MS", c.RequestTimeoutMS)
	positive("SHUTDOWN_TIMEOUT_S", c.ShutdownTimeoutSec)
	if c.BatchMaxWaitMS < 0 {
		p = append(p, fmt.Sprintf("SLUICE_BATCH_MAX_WAIT_MS must be >= 0 (got %d)", c.BatchMaxWaitMS))
	}
	for name, v := range map[string]int{"BATCH_MAX_QUEUE_WAIT_MS": c.BatchMaxQueueWaitMS,
		"BATCH_HIGH_WATERMARK": c.HighWatermark, "BATCH_LOW_WATERMARK": c.LowWatermark,
		"BATCH_MAX_BULK_WORKERS": c.MaxBulkWorkers, "RETRY_AFTER_S": c.RetryAfterS} {
		if v < 0 {
			p = append(p, fmt.Sprintf("SLUICE_%s must be >= 0 (got %d)", name, v))
		}
	}
	positive("BATCH_INTERACTIVE_WEIGHT", c.InteractiveWeight)
	positive("BATCH_BULK_WEIGHT", c.BulkWeight)
	if high := c.highWatermark(); c.LowWatermark > 0 && c.LowWatermark >= high {
		p = append(p, fmt.Sprintf("SLUICE_BATCH_LOW_WATERMARK (%d) must be below the high watermark (%d)", c.LowWatermark, high))
	}
	if c.RetryAfterS > 60 {
		p = append(p, fmt.Sprintf("SLUICE_RETRY_AFTER_S must be at most 60 (got %d)", c.RetryAfterS))
	}
	if !(c.RetryReserve >= 0 && c.RetryReserve <= 1) {
		p = append(p, fmt.Sprintf("SLUICE_RETRY_RESERVE must be between 0 (off) and 1 (got %v)", c.RetryReserve))
	}
	if _, err := admission.ParsePolicy(c.RetryAfterPolicy); err != nil {
		p = append(p, fmt.Sprintf("SLUICE_RETRY_AFTER_POLICY must be static or drain_rate (got %q)", c.RetryAfterPolicy))
	}
	if c.WindowStride < 0 {
		p = append(p, fmt.Sprintf("SLUICE_WINDOW_STRIDE must be >= 0 (got %d)", c.WindowStride))
	}
	if c.IntraThreads < 0 || c.InterThreads < 0 {
		p = append(p, "SLUICE_INTRA_OP_THREADS and SLUICE_INTER_OP_THREADS must be >= 0 (0: ONNX Runtime's default)")
	}
	switch c.Device {
	case "cpu", "cuda", "auto":
	default:
		p = append(p, fmt.Sprintf("SLUICE_DEVICE must be cpu, cuda or auto (got %q)", c.Device))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		p = append(p, fmt.Sprintf("SLUICE_LOG_LEVEL must be debug, info, warn or error (got %q)", c.LogLevel))
	}
	return p
}

// highWatermark applies OpenMed's default: the max queue size.
func (c Config) highWatermark() int {
	if c.HighWatermark > 0 {
		return c.HighWatermark
	}
	return c.BatchMaxQueueSize
}

// maxQueueWait maps 0 to the shortest wait there is, OpenMed's "serve only what dispatches
// at once"; the batcher reads 0 as "no limit".
func (c Config) maxQueueWait() time.Duration {
	if c.BatchMaxQueueWaitMS == 0 {
		return time.Nanosecond
	}
	return time.Duration(c.BatchMaxQueueWaitMS) * time.Millisecond
}

func (c Config) batchMaxWait() time.Duration {
	return time.Duration(c.BatchMaxWaitMS) * time.Millisecond
}
func (c Config) requestTimeout() time.Duration {
	return time.Duration(c.RequestTimeoutMS) * time.Millisecond
}
