package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOpenMedSettingsAreHonouredRefusedOrNamed: each kind of OpenMed variable comes to what
// the OpenMed table of docs/CONFIGURATION.md says: translated (fractions rounded up, OpenMed's
// fallbacks kept, a Sluice variable winning), a start refused for security Sluice lacks, or
// named as without effect.
func TestOpenMedSettingsAreHonouredRefusedOrNamed(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig([]string{
		"OPENMED_PROFILE=test", "OPENMED_SERVICE_BATCH_MAX_WAIT_MS=7.5", "OPENMED_SERVICE_BATCH_LOW_WATERMARK=0",
		"OPENMED_SERVICE_LOG_LEVEL=WARNING", "OPENMED_SERVICE_BATCHING_ENABLED=false", "OPENMED_SERVICE_BATCH_MAX_SIZE=64",
		"OPENMED_SERVICE_SHUTDOWN_DRAIN_SECONDS=2.5", "OPENMED_SERVICE_MAX_TEXT_LENGTH=-5", "OPENMED_MAX_TEXT_BYTES=5000",
		"OPENMED_SERVICE_BATCH_MAX_QUEUE_WAIT_MS=75.5", "SLUICE_BATCH_MAX_QUEUE_WAIT_MS=40",
		"OPENMED_SERVICE_KEEP_ALIVE=5m", "OPENMED_SERVICE_MODEL_MEMORY_BUDGET_BYTES=1.5 GiB", "OPENMED_SERVICE_LOG_FORMAT=plain",
		"OPENMED_SERVICE_MAX_RESIDENT_MODELS=4", "OPENMED_SERVICE_COALESCING_ENABLED=true", "OPENMED_SERVICE_TRACING_ENABLED=true",
		"OPENMED_SERVICE_AUTH_ENABLED=false", "OPENMED_SERVICE_METRICS_ENABLED=true",
		"OPENMED_SERVICE_TRUSTED_HOSTS= api.example.org, ,*.example.org,api.example.org",
		"SLUICE_MODELS_DIR=" + t.TempDir(),
	}, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.gate()
	got := []any{cfg.RequestTimeoutMS, int(cfg.Extract.Batch.MaxWait.Milliseconds()), g.LowWatermark, g.ShedUntilEmpty, cfg.LogLevel, cfg.Extract.Batch.MaxBatchSize,
		cfg.ShutdownTimeoutSec, cfg.MaxTextChars, cfg.MaxTextBytes, int(cfg.Extract.Batch.MaxQueueWait.Milliseconds()), cfg.Profile,
		cfg.KeepAlive, cfg.ModelMemoryBudget, cfg.MaxResidentModels}
	want := []any{60_000, 8, 0, true, "warn", 1, 3, 100_000, 5000, 40, "test", "5m", int64(1_610_612_736), 4}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	if !slices.Equal(cfg.TrustedHosts, []string{"api.example.org", "*.example.org"}) {
		t.Fatalf("trusted hosts %q", cfg.TrustedHosts)
	}
	if !slices.Equal(cfg.openMedNoEffect, []string{"OPENMED_SERVICE_LOG_FORMAT"}) || !cfg.Coalesce || cfg.Tracing.Enabled == nil || !*cfg.Tracing.Enabled {
		t.Fatalf("no effect: %v; coalescing %v", cfg.openMedNoEffect, cfg.Coalesce)
	}
	// A security switch OpenMed's variable turns on is not turned off by Sluice's.
	if _, err := loadConfig([]string{"OPENMED_SERVICE_MTLS_ENABLED=true", "SLUICE_MTLS=false"}, testMachine); err == nil ||
		!strings.Contains(err.Error(), "OPENMED_SERVICE_MTLS_ENABLED") {
		t.Fatalf("mTLS on by OpenMed, off by Sluice: %v", err)
	}
	// So is one whose Sluice side is an opening (SLUICE_AUTH_OPEN): OpenMed's deny by default
	// is not opened by Sluice's open; either side's other values start.
	auth := []string{"OPENMED_SERVICE_AUTH_ENABLED=true", "OPENMED_SERVICE_AUTH_API_KEYS=[" + keyEntry("om-secret", "clinic-c", "analyze:write") + "]"}
	if _, err := loadConfig(append(auth, "OPENMED_SERVICE_AUTH_DENY_BY_DEFAULT=true", "SLUICE_AUTH_OPEN=true"), testMachine); err == nil ||
		!strings.Contains(err.Error(), "OPENMED_SERVICE_AUTH_DENY_BY_DEFAULT") {
		t.Fatalf("deny by default in OpenMed's, open in Sluice's: %v", err)
	}
	for _, pair := range [][2]string{{"true", "false"}, {"false", "true"}, {"false", "false"}} {
		if _, err := loadConfig(append(auth, "OPENMED_SERVICE_AUTH_DENY_BY_DEFAULT="+pair[0], "SLUICE_AUTH_OPEN="+pair[1]), testMachine); err != nil {
			t.Fatalf("deny by default %s, open %s: %v", pair[0], pair[1], err)
		}
	}
	// OpenMed's resilience, its seconds as Sluice's milliseconds.
	cfg, err = loadConfig([]string{"OPENMED_SERVICE_RESILIENCE_ENABLED=off", "OPENMED_SERVICE_RETRY_MAX_ATTEMPTS=5",
		"OPENMED_SERVICE_RETRY_BACKOFF_INITIAL_SECONDS=0.0251", "OPENMED_SERVICE_RETRY_BACKOFF_MULTIPLIER=1.5",
		"OPENMED_SERVICE_RETRY_BACKOFF_MAX_SECONDS=2", "OPENMED_SERVICE_RETRY_BACKOFF_JITTER_SECONDS=0",
		"OPENMED_SERVICE_CIRCUIT_BREAKER_FAILURE_THRESHOLD=7", "OPENMED_SERVICE_CIRCUIT_BREAKER_RECOVERY_TIMEOUT_SECONDS=12.5"}, testMachine)
	r := cfg.Resilience
	if err != nil || r.Enabled || r.MaxAttempts != 5 || r.BackoffInitial != 26*time.Millisecond || r.BackoffMultiplier != 1.5 ||
		r.BackoffMax != 2*time.Second || r.BackoffJitter != 0 || r.FailureThreshold != 7 || r.RecoveryTimeout != 13*time.Second {
		t.Fatalf("resilience %+v, %v", r, err)
	}
	cfg, err = loadConfig([]string{"OPENMED_SERVICE_JOBS_WORKERS=6", "OPENMED_SERVICE_JOBS_TTL_SECONDS=3600.5",
		"OPENMED_SERVICE_MODEL_ADMISSION_WAIT_SECONDS=2.5", "SLUICE_MODELS_DIR=" + t.TempDir()}, testMachine)
	if err != nil || cfg.Jobs.Workers != 6 || cfg.Jobs.Retention != 3601*time.Second || cfg.ModelLoadWaitMS == nil || *cfg.ModelLoadWaitMS != 2500 {
		t.Fatalf("jobs and model admission: %+v %v %v", cfg.Jobs, cfg.ModelLoadWaitMS, err)
	}
	// OpenMed's concurrency wait: its own, or its 50 ms default once its concurrency limit is set.
	for env, want := range map[string]time.Duration{"OPENMED_SERVICE_CONCURRENCY_WAIT_SECONDS=0.2501": 251 * time.Millisecond,
		"OPENMED_SERVICE_RATE_LIMIT_MAX_CONCURRENCY=2": 50 * time.Millisecond, "SLUICE_RATE_LIMIT_MAX_CONCURRENCY=2": 0} {
		if cfg, err := loadConfig([]string{env}, testMachine); err != nil || cfg.budgets().ConcurrencyWait != want {
			t.Errorf("%s: concurrency wait %v, %v", env, cfg.budgets().ConcurrencyWait, err)
		}
	}
	if cfg, _ := loadConfig([]string{"OPENMED_SERVICE_RESILIENCE_ENABLED="}, testMachine); !cfg.Resilience.Enabled {
		t.Fatal("OpenMed's resilience set empty is on")
	}
	// Without SLUICE_MODELS_DIR no model loads on demand: its settings have no effect.
	cfg, err = loadConfig([]string{"OPENMED_SERVICE_KEEP_ALIVE=5m", "OPENMED_SERVICE_PRELOAD_MODELS=a"}, testMachine)
	if err != nil || cfg.KeepAlive != "" || !slices.Equal(cfg.openMedNoEffect, []string{"OPENMED_SERVICE_KEEP_ALIVE", "OPENMED_SERVICE_PRELOAD_MODELS"}) {
		t.Fatalf("%v %q %v", err, cfg.KeepAlive, cfg.openMedNoEffect)
	}
	// Unset, a low watermark is half the high one.
	if cfg, _ := loadConfig(nil, testMachine); cfg.gate().ShedUntilEmpty || cfg.BatchGate.LowWatermark != nil {
		t.Fatal("the default low watermark is not half the high one")
	}
	// Enabled with keys that hold nothing: never silently open.
	if _, err := loadConfig([]string{"OPENMED_SERVICE_AUTH_ENABLED=true", "OPENMED_SERVICE_AUTH_API_KEYS= "}, testMachine); err == nil ||
		!strings.Contains(err.Error(), "OPENMED_SERVICE_AUTH_ENABLED") {
		t.Fatalf("auth enabled with blank keys: %v", err)
	}
	_, err = loadConfig([]string{"OPENMED_SERVICE_AUTH_ENABLED=true", "OPENMED_SERVICE_MTLS_CRL_FILE=/crl.pem", "OPENMED_PROFILE=turbo",
		"OPENMED_SERVICE_CORS_ORIGINS=*"}, testMachine)
	for _, name := range []string{"OPENMED_SERVICE_AUTH_ENABLED", "OPENMED_SERVICE_MTLS_CRL_FILE", "OPENMED_PROFILE", "SLUICE_CORS_ORIGINS"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestOpenMedNumbersOutOfRangeNameTheirValue: a fraction OpenMed's variable sets that is NaN
// or past the ints is refused under that variable with its value as written, not as the
// most negative int the conversion made of it.
func TestOpenMedNumbersOutOfRangeNameTheirValue(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"OPENMED_SERVICE_SHUTDOWN_DRAIN_SECONDS=NaN", "OPENMED_SERVICE_SHUTDOWN_DRAIN_SECONDS=1e30",
		"OPENMED_SERVICE_BATCH_MAX_WAIT_MS=1e30", "OPENMED_SERVICE_MODEL_MEMORY_BUDGET_BYTES=NaN", "OPENMED_SERVICE_MODEL_MEMORY_BUDGET_BYTES=1e30 GiB"} {
		name, value, _ := strings.Cut(env, "=")
		_, err := loadConfig([]string{env, "SLUICE_MODELS_DIR=" + t.TempDir()}, testMachine)
		if err == nil || !strings.Contains(err.Error(), name+" must be") || !strings.Contains(err.Error(), strconv.Quote(value)) ||
			strings.Contains(err.Error(), "9223372036854775808") {
			t.Errorf("%s: %v", env, err)
		}
	}
}

// TestOpenMedSettingsWithoutEffectAreNamedAtStartUp: the server says, in one warning line,
// which OpenMed variables it does not act on; those of no meaning here (another program's,
// MLX's) are not named.
func TestOpenMedSettingsWithoutEffectAreNamedAtStartUp(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "SLUICE_GENERATE_MODEL=none", "OPENMED_SERVICE_NO_SUCH_SETTING=1", "OPENMED_SERVICE_GRAPHQL_ENABLED=true",
		"OPENMED_SERVICE_MLX_PAGED_KV_CACHE_BUDGET=1", "OPENMED_MCP_AUTH_ENABLED=true") // the last three do not apply: no warning
	srv.logs.WaitFor(t, time.Minute, `"level":"WARN"`, "OpenMed settings are set that Sluice does not implement",
		`"variables":["OPENMED_SERVICE_NO_SUCH_SETTING"]`)
}

// TestDocsListOpenMedSettings: the OpenMed table of docs/CONFIGURATION.md names every OpenMed
// variable Sluice honours.
func TestDocsListOpenMedSettings(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/CONFIGURATION.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range openMedHonoured {
		if !strings.Contains(string(doc), "| `"+s.name+"` |") {
			t.Errorf("docs/CONFIGURATION.md's OpenMed settings table has no row for %s", s.name)
		}
	}
}
