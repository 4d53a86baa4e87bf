package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-serving/sluice/admission"
	"github.com/sluice-serving/sluice/kvcache"
	"github.com/sluice-serving/sluice/mtls/mtlstest"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":8080" || cfg.Extract.Batch.QueueSize != 256 || cfg.AnalyzeModel != "clinical-ner" || cfg.PIIModel != "pii" {
		t.Fatalf("unexpected defaults: %+v", cfg)
	}
	if cfg.ModelAliases["disease_detection_superclinical"] != "clinical-ner" {
		t.Fatalf("OpenMed default model alias missing: %v", cfg.ModelAliases)
	}
}

func TestConfigOpenMedAliasesApplyOnlyWhenOursIsUnset(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig([]string{"OPENMED_SERVICE_BATCH_MAX_SIZE=12", "OPENMED_SERVICE_BATCH_MAX_QUEUE_SIZE=99", "SLUICE_BATCH_MAX_QUEUE_SIZE=7"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Extract.Batch.MaxBatchSize != 12 {
		t.Fatalf("OpenMed alias ignored: BatchMaxSize = %d", cfg.Extract.Batch.MaxBatchSize)
	}
	if cfg.Extract.Batch.QueueSize != 7 {
		t.Fatalf("SLUICE_ value must win over the alias: %d", cfg.Extract.Batch.QueueSize)
	}
}

func TestConfigNamesEveryBadVariable(t *testing.T) {
	t.Parallel()
	_, err := LoadConfig([]string{"SLUICE_BATCH_MAX_SIZE=zero", "SLUICE_DEVICE=tpu", "SLUICE_BATCH_WORKERS=0", "SLUICE_LOG_LEVEL=loud",
		"SLUICE_RETRY_RESERVE=1.5", "SLUICE_GENERATE_STREAM_INTERVAL=0", "SLUICE_RATE_LIMIT_RPS=1", "SLUICE_RATE_LIMIT_BURST=0.5"})
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, name := range []string{"SLUICE_BATCH_MAX_SIZE", "SLUICE_DEVICE", "SLUICE_BATCH_WORKERS", "SLUICE_LOG_LEVEL", "SLUICE_RETRY_RESERVE",
		"SLUICE_GENERATE_STREAM_INTERVAL", "SLUICE_RATE_LIMIT_BURST"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
}

// TestEveryPackageSettingNamesItsVariable: with every setting a package checks out of range,
// each problem comes back once, named by the variable that sets it, never by a package's
// field name.
func TestEveryPackageSettingNamesItsVariable(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, s := &cfg.Extract.Batch, &cfg.Scheduler
	b.MaxBatchSize, b.MaxWait, b.MaxPaddedTokens, b.QueueSize = 0, -time.Millisecond, 0, 0
	b.Workers, b.MaxQueueWait, b.Weights = 0, -time.Millisecond, [admission.NumPriorities]int{-1, -1}
	s.Weights = b.Weights
	low := -1
	b.MaxBulkWorkers, cfg.BatchGate.LowWatermark, cfg.Admission.Policy, cfg.Admission.StaticRetryAfter = -1, &low, "router", 61*time.Second
	cfg.Admission.RetryReserve, cfg.Runtime.Device, cfg.Runtime.IntraOpThreads, cfg.Runtime.InterOpThreads = 2, "tpu", -1, -1
	cfg.MaxBodyBytes, cfg.MaxTextChars, cfg.MaxTextBytes, cfg.RequestTimeoutMS = 0, 0, 0, 0
	cfg.ShutdownTimeoutSec, cfg.LogLevel = 0, "loud"
	s.MaxRunning, s.MaxStepTokens, s.QueueSize, s.MaxQueueWait = 0, 0, 0, -time.Millisecond
	s.OutBuffer, s.StallTimeout, cfg.GenerateTimeoutMS, cfg.GenerateFirstTokenTimeoutMS = 0, 0, 0, -1
	cfg.KV.BlockTokens, cfg.KV.Blocks, cfg.GenerateGate.MemoryHighWatermark, cfg.GenerateGate.LowWatermark = -1, -1, 2, -1
	cfg.Runtime.CUDA.DeviceID, cfg.Runtime.CUDA.MemoryLimitBytes, cfg.Runtime.CUDA.ConvAlgoSearch = -1, -1, "fast"
	cfg.GPUBatch.MaxBatchSize, cfg.GPUBatch.MaxPaddedTokens = 0, 0
	seen := map[string]int{}
	for _, p := range cfg.check(testMachine) {
		seen[p.variable]++
	}
	want := []string{"BATCH_MAX_SIZE", "BATCH_MAX_WAIT_MS", "BATCH_MAX_PADDED_TOKENS", "BATCH_MAX_QUEUE_SIZE",
		"BATCH_WORKERS", "BATCH_MAX_QUEUE_WAIT_MS", "BATCH_INTERACTIVE_WEIGHT", "BATCH_BULK_WEIGHT",
		"BATCH_MAX_BULK_WORKERS", "BATCH_HIGH_WATERMARK", "BATCH_LOW_WATERMARK", "RETRY_AFTER_POLICY",
		"RETRY_AFTER_S", "RETRY_RESERVE", "DEVICE", "INTRA_OP_THREADS", "INTER_OP_THREADS", "MAX_BODY_BYTES",
		"MAX_TEXT_CHARS", "MAX_TEXT_BYTES", "REQUEST_TIMEOUT_MS", "SHUTDOWN_TIMEOUT_S", "LOG_LEVEL",
		"GENERATE_MAX_RUNNING", "GENERATE_MAX_STEP_TOKENS", "GENERATE_QUEUE_SIZE", "GENERATE_MAX_QUEUE_WAIT_MS",
		"GENERATE_STREAM_BUFFER", "GENERATE_STALL_TIMEOUT_MS", "GENERATE_TIMEOUT_MS", "GENERATE_FIRST_TOKEN_TIMEOUT_MS",
		"KV_BLOCK_TOKENS", "KV_BLOCKS", "KV_HIGH_WATERMARK", "GENERATE_HIGH_WATERMARK", "GENERATE_LOW_WATERMARK",
		"CUDA_DEVICE_ID", "CUDA_MEMORY_LIMIT_BYTES", "CUDA_CONV_ALGO_SEARCH", "GPU_BATCH_MAX_SIZE", "GPU_BATCH_MAX_PADDED_TOKENS"}
	for _, name := range want {
		if seen["SLUICE_"+name] == 0 {
			t.Errorf("SLUICE_%s not reported", name)
		}
		delete(seen, "SLUICE_"+name)
	}
	for name := range seen {
		t.Errorf("reported %q, which is not a variable this test set", name)
	}
	known := map[string]bool{}
	for _, v := range variables() {
		known[v.name] = true
	}
	for _, names := range []map[string]string{limitsVars, deidVars} {
		for field, name := range names {
			if !known[name] {
				t.Errorf("%s maps to %q, which no Config field reads", field, name)
			}
		}
	}
}

// testMachine is the machine the bounds tests size against: this project's CI machine.
var testMachine = machine{CPUs: 2, MemoryBytes: 24 << 30}

// TestEveryNumericSettingHasAnUpperBound: each numeric variable set to an absurd value that parses,
// alone, is a start-up error that names it.
func TestEveryNumericSettingHasAnUpperBound(t *testing.T) {
	t.Parallel()
	for _, v := range variables() {
		huge := ""
		typ := v.typ
		switch {
		case typ.Kind() == reflect.Int || v.unit != 0:
			huge = "2000000000" // parses (the library reads int, and a duration's count, as 32 bits) and is absurd for every setting
		case typ.Kind() == reflect.Int64:
			huge = "1000000000000000"
		case typ.Kind() == reflect.Float64:
			huge = "1e12"
		}
		if huge == "" {
			continue
		}
		name := v.name
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig([]string{name + "=" + huge}, testMachine)
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("%s=%s: %v", name, huge, err)
			}
		})
	}
}

// TestAFractionPastTheIntegersIsRefusedByItsBound: a float setting too large for an int64,
// infinite or NaN is refused by its upper bound, with the value as the operator wrote it: read
// as an int64 it wrapped to the most negative one, under every bound.
func TestAFractionPastTheIntegersIsRefusedByItsBound(t *testing.T) {
	t.Parallel()
	for env, shown := range map[string]string{"SLUICE_RATE_LIMIT_RPS=1e19": "1e+19", "SLUICE_RATE_LIMIT_TOKENS_PER_MINUTE=1e300": "1e+300",
		"SLUICE_AUTH_FAILURE_RPS=1e30": "1e+30", "SLUICE_AUTH_JWT_LEEWAY_S=+Inf": "+Inf", "SLUICE_AUTH_JWT_MAX_LIFETIME_S=NaN": "NaN"} {
		name, _, _ := strings.Cut(env, "=")
		_, err := loadConfig([]string{env}, testMachine)
		if err == nil || !strings.Contains(err.Error(), name+" must be at most") || !strings.Contains(err.Error(), "(got "+shown+")") {
			t.Errorf("%s: %v", env, err)
		}
	}
	if _, err := loadConfig([]string{"SLUICE_RATE_LIMIT_RPS=1048576", "SLUICE_AUTH_JWT_LEEWAY_S=0.5"}, testMachine); err != nil {
		t.Errorf("rates at and under their bounds: %v", err)
	}
}

// TestDeadOrContradictoryModelSettingsAreRefused: an alias of a model the entity routes do
// not serve, an empty alias or model, an alias or a quantize mode given twice (the last won
// without a word) refuse the start, every problem of a variable on its one line; the default
// aliases do not stop a server that serves other models, and what is meant once starts.
func TestDeadOrContradictoryModelSettingsAreRefused(t *testing.T) {
	t.Parallel()
	for env, wants := range map[string][]string{
		"SLUICE_MODEL_ALIASES=foo=piii":                   {"foo to piii"},
		"SLUICE_MODEL_ALIASES=foo=pii,foo=clinical-ner":   {"foo more than once"},
		"SLUICE_MODEL_ALIASES==":                          {`empty alias or model ("=")`},
		"SLUICE_MODEL_ALIASES=a=piii,b=,a=pii,=pii,c=pii": {"a to piii", `("b=")`, "a more than once", `("=pii")`},
		"SLUICE_MODEL_ALIASES=foo=pii, foo=clinical-ner":  {"foo more than once"},
		"SLUICE_MODEL_ALIASES=pii=clinical-ner":           {"pii, a served model's own name"},
		"SLUICE_QUANTIZE=pii=int8,pii=off":                {"pii's mode more than once"},
		"SLUICE_QUANTIZE=int8,off":                        {"every model's mode more than once"},
		"SLUICE_QUANTIZE=int8,int4,pii=int8,pii=off,off":  {`"int4"`, "pii's mode", "every model's mode"},
	} {
		name, _, _ := strings.Cut(env, "=")
		_, err := loadConfig([]string{env}, testMachine)
		if err == nil || strings.Count(err.Error(), name+" ") != 1 {
			t.Errorf("%s: %v", env, err)
			continue
		}
		for _, want := range wants {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q not said: %v", env, want, err)
			}
		}
	}
	for _, env := range [][]string{{"SLUICE_MODEL_ALIASES=foo=pii, bar = clinical-ner"}, {"SLUICE_PII_MODEL=other"},
		{"SLUICE_PII_MODEL=other", "SLUICE_MODEL_ALIASES=foo=other"}, {"SLUICE_QUANTIZE=int8,pii=off,tiny-lm=off"}} {
		if _, err := loadConfig(env, testMachine); err != nil {
			t.Errorf("%q: %v", env, err)
		}
	}
}

// TestBoundsFollowTheMachine: thread and worker counts are bounded by the CPUs, the batch
// budget and the KV cache by the memory; the defaults fit a small machine.
func TestBoundsFollowTheMachine(t *testing.T) {
	t.Parallel()
	small := machine{CPUs: 1, MemoryBytes: 1 << 30}
	if _, err := loadConfig(nil, small); err != nil {
		t.Fatalf("defaults on one CPU and 1 GiB: %v", err)
	}
	for _, tc := range []struct {
		env  string
		m    machine
		fail bool
	}{
		{"SLUICE_INTRA_OP_THREADS=8", testMachine, false},
		{"SLUICE_INTRA_OP_THREADS=9", testMachine, true},
		{"SLUICE_BATCH_WORKERS=8", testMachine, false},
		{"SLUICE_BATCH_WORKERS=10000", testMachine, true},
		{"SLUICE_BATCH_WORKERS=4", small, false},
		{"SLUICE_BATCH_WORKERS=5", small, true},
		{"SLUICE_KV_MEMORY_BYTES=536870912", small, false},
		{"SLUICE_KV_MEMORY_BYTES=536870913", small, true},
		{"SLUICE_BATCH_MAX_PADDED_TOKENS=16384", small, false},
		{"SLUICE_BATCH_MAX_PADDED_TOKENS=16385", small, true},
	} {
		_, err := loadConfig([]string{tc.env}, tc.m)
		name, _, _ := strings.Cut(tc.env, "=")
		if failed := err != nil && strings.Contains(err.Error(), name); failed != tc.fail || (err != nil && !failed) {
			t.Errorf("%s on %+v: %v", tc.env, tc.m, err)
		}
	}
}

func TestModelsDirMustBeADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{filepath.Join(dir, "missing"), file} {
		if _, err := loadConfig([]string{"SLUICE_MODELS_DIR=" + bad}, testMachine); err == nil || !strings.Contains(err.Error(), "SLUICE_MODELS_DIR") {
			t.Errorf("SLUICE_MODELS_DIR=%s: %v", bad, err)
		}
	}
	if _, err := loadConfig([]string{"SLUICE_MODELS_DIR=" + dir}, testMachine); err != nil {
		t.Errorf("an existing directory: %v", err)
	}
}

func TestGPUBatchLimitsReplaceTheCPUOnes(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig([]string{"SLUICE_BATCH_MAX_SIZE=16", "SLUICE_GPU_BATCH_MAX_SIZE=256", "SLUICE_GPU_BATCH_MAX_PADDED_TOKENS=65536"}, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if b := cfg.batcher(); b.MaxBatchSize != 16 || b.MaxPaddedTokens != 4096 {
		t.Errorf("CPU batch limits %d, %d", b.MaxBatchSize, b.MaxPaddedTokens)
	}
	if b := cfg.onGPU().batcher(); b.MaxBatchSize != 256 || b.MaxPaddedTokens != 65536 {
		t.Errorf("GPU batch limits %d, %d", b.MaxBatchSize, b.MaxPaddedTokens)
	}
}

// The GPU check's served benchmark asked for batches of one and got the GPU's 128: a CPU
// limit set alone now holds on a GPU too, OpenMed's batching switch included.
func TestCPUBatchLimitSetAloneHoldsOnAGPU(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		environ      []string
		size, padded int
	}{
		{nil, 128, 32768},
		{[]string{"SLUICE_BATCH_MAX_SIZE=1"}, 1, 32768},
		{[]string{"OPENMED_SERVICE_BATCHING_ENABLED=false"}, 1, 32768},
		{[]string{"SLUICE_BATCH_MAX_PADDED_TOKENS=2048"}, 128, 2048},
		{[]string{"SLUICE_BATCH_MAX_SIZE=1", "SLUICE_GPU_BATCH_MAX_SIZE=64"}, 64, 32768},
	} {
		cfg, err := loadConfig(tc.environ, testMachine)
		if err != nil {
			t.Fatal(err)
		}
		if b := cfg.onGPU().batcher(); b.MaxBatchSize != tc.size || b.MaxPaddedTokens != tc.padded {
			t.Errorf("%v: on a GPU, batch limits %d, %d; want %d, %d", tc.environ, b.MaxBatchSize, b.MaxPaddedTokens, tc.size, tc.padded)
		}
	}
}

// TestAnUnknownVariableRefusesTheStart: a misspelt SLUICE_ variable is an error naming it and
// the setting it most likely meant, one line each; SLUICE_IGNORE_VARS lets deliberate extras
// through, and a bad CPU batch size is reported once, not again under the GPU's name.
func TestAnUnknownVariableRefusesTheStart(t *testing.T) {
	t.Parallel()
	_, err := LoadConfig([]string{"SLUICE_DEID_HASHKEY=x", "SLUICE_PORT=tcp://10.0.0.1:80", "SLUICE_BATCH_MAX_SIZE=zero"})
	if err == nil {
		t.Fatal("a misspelt variable was accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	for _, want := range []string{"SLUICE_DEID_HASHKEY is not a setting; did you mean SLUICE_DEID_HASH_KEY?",
		"SLUICE_PORT is not a setting (a Kubernetes service link", "SLUICE_BATCH_MAX_SIZE is not a valid int"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if len(lines) != 4 || strings.Contains(err.Error(), "GPU_BATCH") {
		t.Errorf("want a heading and one line per bad variable:\n%v", err)
	}
	if _, err := LoadConfig([]string{"SLUICE_DEID_HASHKEY=x", "SLUICE_IGNORE_VARS=SLUICE_DEID_HASHKEY,SLUICE_OTHER"}); err != nil {
		t.Fatalf("an ignored extra refused: %v", err)
	}
}

// TestEveryUpperBoundReadsAVariable: each upper bound names a numeric variable some section
// declares, whose value it reads in the variable's unit.
func TestEveryUpperBoundReadsAVariable(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig([]string{"SLUICE_BATCH_MAX_WAIT_MS=7", "SLUICE_RETRY_AFTER_S=3"}, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range upperBounds(testMachine) {
		if _, _, ok := cfg.value("SLUICE_" + b.name); !ok {
			t.Errorf("the upper bound of %s reads no numeric variable", b.name)
		}
	}
	for name, want := range map[string]int64{"SLUICE_BATCH_MAX_WAIT_MS": 7, "SLUICE_RETRY_AFTER_S": 3, "SLUICE_BATCH_BULK_WEIGHT": 1} {
		if got, _, _ := cfg.value(name); got != want {
			t.Errorf("%s reads %d, want %d", name, got, want)
		}
	}
}

// A value that does not parse is reported alone: settings that would look wrong only because
// that value is left at zero (a watermark above a queue of none) are not. A problem with a
// value that OpenMed's variable set names that variable.
func TestConfigProblemsNameWhatTheOperatorWrote(t *testing.T) {
	t.Parallel()
	_, err := loadConfig([]string{"SLUICE_BATCH_MAX_QUEUE_SIZE=abc"}, testMachine)
	if err == nil || strings.Count(err.Error(), "\n") != 1 || !strings.Contains(err.Error(), "SLUICE_BATCH_MAX_QUEUE_SIZE") {
		t.Fatalf("a queue size that does not parse: %v", err)
	}
	for name, value := range map[string]string{"OPENMED_SERVICE_SHUTDOWN_DRAIN_SECONDS": "0", "OPENMED_SERVICE_MAX_REQUEST_BYTES": "10MB"} {
		if _, err := loadConfig([]string{name + "=" + value}, testMachine); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, value, err)
		}
	}
}

// TestAParseErrorDoesNotHideOtherProblems: a variable that did not parse dropped every other
// problem filed under a variable the operator did not write, though the variables that he did
// write caused them: mTLS on without its CA bundle, a Redis key secret without Redis, an
// upstream model without the upstream all started to be refused only once an unrelated typo
// (SLUICE_LOG_REFUSALS_PER_S=ten) was fixed.
func TestAParseErrorDoesNotHideOtherProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"SLUICE_MTLS=true", "SLUICE_MTLS_CLIENT_CERT_HEADER=X-Client-Cert", "SLUICE_MTLS_TRUSTED_PROXIES=10.0.0.1"}, "SLUICE_MTLS_CA_BUNDLE is required"},
		{[]string{"SLUICE_REDIS_KEY_SECRET_FILE=/etc/hostname"}, "SLUICE_REDIS_URL must be set"},
		{[]string{"SLUICE_GATEWAY_UPSTREAM_MODEL=gpt-x"}, "SLUICE_GATEWAY_UPSTREAM_URL must be set"},
	} {
		if _, err := loadConfig(tc.env, testMachine); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%v alone: %v", tc.env, err)
		}
		_, err := loadConfig(append(tc.env, "SLUICE_LOG_REFUSALS_PER_S=ten"), testMachine)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "SLUICE_LOG_REFUSALS_PER_S is not a valid int") {
			t.Errorf("%v with an unrelated typo: %q is no longer reported:\n%v", tc.env, tc.want, err)
		}
	}
}

// TestListSettingsAreReadAsOpenMedReadsThem: a list's items lose the blanks around them and
// empty ones go (a space after the comma, a trailing comma), and an origin that is not a
// scheme and a host is refused at start, naming its variable, not a panic in the web
// framework's CORS set-up after the models have loaded.
func TestListSettingsAreReadAsOpenMedReadsThem(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig([]string{"SLUICE_TRUSTED_HOSTS=a.example, b.example", "SLUICE_CORS_ORIGINS= https://app.example.org ,https://b.example:8443/",
		"SLUICE_AUTH_JWT_AUDIENCE=api-a, api-b"}, testMachine)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.TrustedHosts, []string{"a.example", "b.example"}) || !slices.Equal(cfg.AuthJWTAudience, []string{"api-a", "api-b"}) ||
		!slices.Equal(cfg.CORSOrigins, []string{"https://app.example.org", "https://b.example:8443/"}) {
		t.Fatalf("hosts %q, audiences %q, origins %q", cfg.TrustedHosts, cfg.AuthJWTAudience, cfg.CORSOrigins)
	}
	for _, origin := range []string{"app.example.org", "null", "https://a.org/app", "https://*.a.org", "ftp://a.org"} {
		if _, err := loadConfig([]string{"SLUICE_CORS_ORIGINS=" + origin}, testMachine); err == nil || !strings.Contains(err.Error(), "SLUICE_CORS_ORIGINS") {
			t.Errorf("%s: %v", origin, err)
		}
	}
	// An empty item is refused, not dropped: an empty list of hosts would trust any.
	for _, env := range []string{"SLUICE_TRUSTED_HOSTS=,", "SLUICE_TRUSTED_HOSTS= ", "SLUICE_TRUSTED_HOSTS=a.example,", "SLUICE_AUTH_JWT_AUDIENCE=api-a, ",
		"SLUICE_PRELOAD_MODELS=pii,"} {
		name, _, _ := strings.Cut(env, "=")
		if _, err := loadConfig([]string{env}, testMachine); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", env, err)
		}
	}
	if _, err := loadConfig([]string{"SLUICE_MTLS=true", "SLUICE_MTLS_CLIENT_CERT_HEADER=X-Client-Cert", "SLUICE_MTLS_TRUSTED_PROXIES=10.0.0.1, "},
		testMachine); err == nil || !strings.Contains(err.Error(), "SLUICE_MTLS_TRUSTED_PROXIES lists an empty address") {
		t.Errorf("an empty trusted proxy: %v", err)
	}
}

// TestATrustedHostThatNoHostHeaderMatchesIsRefused: a trusted host written with a port or a
// scheme passed the check, but the Host header is compared without its port, so every request
// but the probes got 400 while the probes kept the pod ready. Names, *.suffix patterns and IP
// addresses (IPv6 in brackets) still pass, OpenMed's variable too.
func TestATrustedHostThatNoHostHeaderMatchesIsRefused(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"SLUICE_TRUSTED_HOSTS=api.example.org:8443", "SLUICE_TRUSTED_HOSTS=https://api.example.org",
		"SLUICE_TRUSTED_HOSTS=api.example.org/v1", "SLUICE_TRUSTED_HOSTS=[::1]:8080", "SLUICE_TRUSTED_HOSTS=::1",
		"OPENMED_SERVICE_TRUSTED_HOSTS=a.example,api.example.org:443"} {
		if _, err := loadConfig([]string{env}, testMachine); err == nil || !strings.Contains(err.Error(), "SLUICE_TRUSTED_HOSTS must list host names") {
			t.Errorf("%s accepted, though no Host header can match it: %v", env, err)
		}
	}
	if _, err := loadConfig([]string{"SLUICE_TRUSTED_HOSTS=api.example.org,*.Internal.example,10.0.0.7,[::1],sluice-0.sluice_svc"}, testMachine); err != nil {
		t.Fatalf("host names, patterns and addresses refused: %v", err)
	}
}

// TestTwoJWKSAreRefused: an inline JWKS beside a JWKS file is refused at start, naming it,
// as two API key settings are: one of them would be dropped without a word.
func TestTwoJWKSAreRefused(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(file, []byte(`{"keys":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig([]string{"SLUICE_AUTH_JWKS={\"keys\":[]}", "SLUICE_AUTH_JWKS_FILE=" + file}, testMachine)
	if err == nil {
		_, err = cfg.jwtVerifier()
	}
	if err == nil || !strings.Contains(err.Error(), "SLUICE_AUTH_JWKS and SLUICE_AUTH_JWKS_FILE are both set") {
		t.Fatalf("%v", err)
	}
}

// testJWKS is a valid inline JWKS: one HS256 key of 36 bytes.
const testJWKS = `SLUICE_AUTH_JWKS={"keys":[{"kty":"oct","kid":"k","alg":"HS256","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}]}`

// TestAuthProblemsAreAllListedEachUnderItsVariable: the auth settings were checked one after
// the other, stopping at the first problem, so a key file that could not be read hid bad route
// scopes, a negative failure burst and two JWKS; and every problem of the token verifier was
// filed under the JWKS's variable, a negative leeway included (OpenMed's alias too).
func TestAuthProblemsAreAllListedEachUnderItsVariable(t *testing.T) {
	t.Parallel()
	for env, want := range map[string]string{
		"SLUICE_AUTH_JWT_LEEWAY_S=-5":                "SLUICE_AUTH_JWT_LEEWAY_S must be between 0 and an hour",
		"SLUICE_AUTH_JWT_MAX_LIFETIME_S=-5":          "SLUICE_AUTH_JWT_MAX_LIFETIME_S must not be negative",
		"OPENMED_SERVICE_AUTH_JWT_LEEWAY_SECONDS=-5": "OPENMED_SERVICE_AUTH_JWT_LEEWAY_SECONDS (as SLUICE_AUTH_JWT_LEEWAY_S): SLUICE_AUTH_JWT_LEEWAY_S must be",
	} {
		environ := []string{testJWKS, env}
		if strings.HasPrefix(env, "OPENMED_") {
			environ = []string{"OPENMED_SERVICE_AUTH_ENABLED=true", "OPENMED_SERVICE_AUTH_JWKS" + strings.TrimPrefix(testJWKS, "SLUICE_AUTH_JWKS"), env}
		}
		_, err := loadConfig(environ, testMachine)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "SLUICE_AUTH_JWKS ") {
			t.Errorf("%s: want %q, not under SLUICE_AUTH_JWKS:\n%v", env, want, err)
		}
	}
	_, err := loadConfig([]string{"SLUICE_API_KEYS_FILE=/nonexistent/keys.json", "SLUICE_AUTH_ROUTE_SCOPES={not json",
		"SLUICE_AUTH_FAILURE_BURST=-1", testJWKS, "SLUICE_AUTH_JWKS_FILE=/nonexistent/jwks.json"}, testMachine)
	for _, want := range []string{"SLUICE_API_KEYS_FILE cannot be read", "SLUICE_AUTH_ROUTE_SCOPES", "SLUICE_AUTH_FAILURE_BURST must be >= 0",
		"SLUICE_AUTH_JWKS and SLUICE_AUTH_JWKS_FILE are both set"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q not reported:\n%v", want, err)
		}
	}
	// A credential that failed is not also said to be missing.
	if err != nil && strings.Contains(err.Error(), "needs API keys or a JWT verifier") {
		t.Errorf("a credential that failed to load is also reported as none given:\n%v", err)
	}
	// Two problems under one variable are both said (a variable's first line alone is kept).
	_, err = loadConfig([]string{"SLUICE_API_KEYS=[" + keyEntry("abcdefghijklmnopqrstuvwxyz012345", "t", "pii") + "]",
		`SLUICE_AUTH_ROUTE_SCOPES={"POST /analyse":["a"],"POST /deidentfy":["b"]}`}, testMachine)
	if err == nil || !strings.Contains(err.Error(), "/analyse") || !strings.Contains(err.Error(), "/deidentfy") {
		t.Errorf("two route scopes that name no route:\n%v", err)
	}
	_, err = loadConfig([]string{`SLUICE_AUTH_JWKS={"keys":[{"kty":"oct","kid":"a","k":"c2hvcnQ"},` +
		`{"kty":"oct","kid":"b","use":"enc","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}]}`}, testMachine)
	if err == nil || !strings.Contains(err.Error(), "key 1") || !strings.Contains(err.Error(), "key 2") {
		t.Errorf("a JWKS of two bad keys:\n%v", err)
	}
}

// TestAModelOfManyPositionsIsServedWhatThePoolHolds: a model of 128k positions makes a KV
// pool of the pool's longest sequence, or the operator's shorter one, where the pool refused
// it and the server did not start; servedLength then serves what the pool holds.
func TestAModelOfManyPositionsIsServedWhatThePoolHolds(t *testing.T) {
	t.Parallel()
	c := Config{}
	if got := c.kvSeqLen(131072); got != kvcache.MaxSeqLen {
		t.Fatalf("128k positions: tables of %d", got)
	}
	if err := (kvcache.Config{Layers: 1, Heads: 1, HeadDim: 1, MaxSeqLen: c.kvSeqLen(131072), Blocks: 1}).Validate(); err != nil {
		t.Fatal(err)
	}
	c.GenerateMaxModelLen = 8192
	if got := c.kvSeqLen(131072); got != 8192 {
		t.Fatalf("SLUICE_GENERATE_MAX_MODEL_LEN=8192: tables of %d", got)
	}
	if got := (Config{}).kvSeqLen(256); got != 256 {
		t.Fatalf("256 positions: tables of %d", got)
	}
	if n, lowered, err := (Config{}).servedLength(131072, kvcache.MaxSeqLen); err != nil || n != kvcache.MaxSeqLen || !lowered {
		t.Fatalf("served %d (lowered %v): %v", n, lowered, err)
	}
	c.GenerateMaxModelLen = 100000
	if _, _, err := c.servedLength(131072, kvcache.MaxSeqLen); err == nil || !strings.Contains(err.Error(), "at most 65536, the longest sequence the KV cache holds") {
		t.Fatalf("SLUICE_GENERATE_MAX_MODEL_LEN=100000: %v", err)
	}
}

// TestTheJobsShareOfTheStore: jobs with a key on a bounded embedded store get, unless set, half
// of what the nonces leave, or, beside a bounded audit, what the nonces and the audit's bound
// leave; an explicit 0 is no bound of their own (it was replaced by the share); a share that
// with the nonces and the audit's bound passes the store is refused, naming the settings (the
// audit's bound was left out, and the jobs then failed to start, NATS's insufficient
// resources); an unbounded store leaves the jobs unbounded.
func TestTheJobsShareOfTheStore(t *testing.T) {
	t.Parallel()
	key := jobKey(t)
	share := func(env ...string) int64 {
		t.Helper()
		cfg, err := LoadConfig(append([]string{"SLUICE_JOBS_KEY_FILE=" + key}, env...))
		if err != nil || cfg.Jobs.MaxStoreBytes == nil {
			t.Fatalf("%v: the jobs' share %v, %v", env, cfg.Jobs.MaxStoreBytes, err)
		}
		return *cfg.Jobs.MaxStoreBytes
	}
	if got := share("SLUICE_NATS_MAX_STORE_BYTES=67108864"); got != 32<<20 {
		t.Errorf("a 64 MiB store: the jobs' share %d", got)
	}
	if got := share("SLUICE_NATS_MAX_STORE_BYTES=67108864", "SLUICE_AUDIT_MAX_BYTES=41943040"); got != 24<<20 {
		t.Errorf("a 64 MiB store, the audit's 40 MiB: the jobs' share %d", got)
	}
	if got := share("SLUICE_NATS_MAX_STORE_BYTES=67108864", "SLUICE_JOBS_MAX_STORE_BYTES=0"); got != 0 {
		t.Errorf("a 64 MiB store, SLUICE_JOBS_MAX_STORE_BYTES=0: the jobs' share %d", got)
	}
	if got := share(); got != 0 {
		t.Errorf("an unbounded store: the jobs' share %d", got)
	}
	for _, env := range [][]string{
		{"SLUICE_NATS_MAX_STORE_BYTES=67108864", "SLUICE_JOBS_MAX_STORE_BYTES=67108864"},
		{"SLUICE_NATS_MAX_STORE_BYTES=67108864", "SLUICE_JOBS_MAX_STORE_BYTES=33554432", "SLUICE_AUDIT_MAX_BYTES=41943040"},
	} {
		_, err := LoadConfig(append([]string{"SLUICE_JOBS_KEY_FILE=" + key}, env...))
		if err == nil || !strings.Contains(err.Error(), "SLUICE_JOBS_MAX_STORE_BYTES is") || !strings.Contains(err.Error(), "SLUICE_NATS_MAX_STORE_BYTES") {
			t.Errorf("%v: %v", env, err)
		}
	}
	if _, err := LoadConfig([]string{"SLUICE_JOBS_MAX_STORE_BYTES=1024"}); err == nil || !strings.Contains(err.Error(), "SLUICE_JOBS_MAX_STORE_BYTES") {
		t.Fatalf("a 1 KiB share: %v", err)
	}
}

// TestAStoreTooSmallForTheJobsDefaultShare: a bounded store whose default share for the jobs
// is under the 8 MiB they need is refused saying what to do (raise the store, or leave the
// jobs unbounded), and starts with SLUICE_JOBS_MAX_STORE_BYTES=0. It was refused naming
// SLUICE_JOBS_MAX_STORE_BYTES, unset, and telling the operator to lower it, which no value did.
func TestAStoreTooSmallForTheJobsDefaultShare(t *testing.T) {
	t.Parallel()
	key := jobKey(t)
	_, err := LoadConfig([]string{"SLUICE_JOBS_KEY_FILE=" + key, "SLUICE_NATS_MAX_STORE_BYTES=8388608"})
	if err == nil || strings.Contains(err.Error(), "SLUICE_JOBS_MAX_STORE_BYTES is") ||
		!strings.Contains(err.Error(), "raise it to at least 16777216, or set SLUICE_JOBS_MAX_STORE_BYTES=0") {
		t.Errorf("an 8 MiB store: %v", err)
	}
	cfg, err := LoadConfig([]string{"SLUICE_JOBS_KEY_FILE=" + key, "SLUICE_NATS_MAX_STORE_BYTES=8388608", "SLUICE_JOBS_MAX_STORE_BYTES=0"})
	if err != nil || cfg.Jobs.MaxStoreBytes == nil || *cfg.Jobs.MaxStoreBytes != 0 {
		t.Errorf("an 8 MiB store, the jobs unbounded: %v, %v", cfg.Jobs.MaxStoreBytes, err)
	}
}

// TestSecretAndCertificateFilesAreCheckedWithTheConfig: the signing secret, the jobs' key, the
// server's certificate and key and the CA bundle were first read after every model had loaded,
// and a file missing or malformed ended the start with exit 1 and a line that named no
// variable. They are read with the configuration, each problem under its variable; files
// with valid content pass.
func TestSecretAndCertificateFilesAreCheckedWithTheConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing, empty := filepath.Join(dir, "missing"), writeFile(t, filepath.Join(dir, "empty"), nil)
	_, err := loadConfig([]string{"SLUICE_SIGNING_SECRET_FILE=" + empty, "SLUICE_JOBS_KEY_FILE=" + missing,
		"SLUICE_TLS_CERT_FILE=" + missing, "SLUICE_TLS_KEY_FILE=" + missing, "SLUICE_MTLS=true", "SLUICE_MTLS_CA_BUNDLE=" + missing}, testMachine)
	for _, want := range []string{"SLUICE_SIGNING_SECRET_FILE is refused: the secret file is empty", "SLUICE_JOBS_KEY_FILE cannot be read",
		"SLUICE_TLS_CERT_FILE cannot be read", "SLUICE_MTLS_CA_BUNDLE cannot be read"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q not reported by LoadConfig:\n%v", want, err)
		}
	}

	ca := mtlstest.NewCA(t, "clinic CA")
	server := ca.Server(t)
	bundle, cert := writeFile(t, filepath.Join(dir, "ca.pem"), mtlstest.PEM(ca.Cert)), writeFile(t, filepath.Join(dir, "server.pem"), mtlstest.PEM(server.Leaf))
	key := writeFile(t, filepath.Join(dir, "server-key.pem"), mtlstest.KeyPEM(t, server))
	secret := writeFile(t, filepath.Join(dir, "secret"), []byte(strings.Repeat("s", 32)))
	valid := []string{"SLUICE_SIGNING_SECRET_FILE=" + secret, "SLUICE_JOBS_KEY_FILE=" + jobKey(t),
		"SLUICE_TLS_CERT_FILE=" + cert, "SLUICE_TLS_KEY_FILE=" + key, "SLUICE_MTLS=true", "SLUICE_MTLS_CA_BUNDLE=" + bundle}
	if _, err := loadConfig(valid, testMachine); err != nil {
		t.Fatalf("valid files refused: %v", err)
	}
	// Each reader's own refusals, named: a key of the wrong length, a bundle of no
	// certificate, a key file missing beside its certificate, a key that is not the
	// certificate's.
	other := ca.Server(t)
	for _, tc := range []struct{ env, want string }{
		{"SLUICE_JOBS_KEY_FILE=" + cert, "SLUICE_JOBS_KEY_FILE must hold 32 bytes"},
		{"SLUICE_MTLS_CA_BUNDLE=" + secret, "SLUICE_MTLS_CA_BUNDLE is refused: the CA bundle"},
		{"SLUICE_TLS_KEY_FILE=" + missing, "SLUICE_TLS_KEY_FILE cannot be read"},
		{"SLUICE_TLS_KEY_FILE=" + writeFile(t, filepath.Join(dir, "other-key.pem"), mtlstest.KeyPEM(t, other)), "SLUICE_TLS_CERT_FILE and SLUICE_TLS_KEY_FILE are not a certificate and its key"},
	} {
		name, _, _ := strings.Cut(tc.env, "=")
		env := slices.DeleteFunc(slices.Clone(valid), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		if _, err := loadConfig(append(env, tc.env), testMachine); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q:\n%v", tc.env, tc.want, err)
		}
	}
}

// TestNegativeStrideAndModelLenAreRefusedByLoadConfig: a negative SLUICE_WINDOW_STRIDE was
// refused only when the entity models were wired, a negative SLUICE_GENERATE_MAX_MODEL_LEN
// when generation's was, both after loading, exit 1.
func TestNegativeStrideAndModelLenAreRefusedByLoadConfig(t *testing.T) {
	t.Parallel()
	for env, want := range map[string]string{"SLUICE_WINDOW_STRIDE=-1": "SLUICE_WINDOW_STRIDE must not be negative",
		"SLUICE_GENERATE_MAX_MODEL_LEN=-1": "SLUICE_GENERATE_MAX_MODEL_LEN must not be negative"} {
		if _, err := loadConfig([]string{env}, testMachine); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q: %v", env, want, err)
		}
	}
}

// TestTheNonceBucketMustFitTheStore: signed requests on the embedded NATS reserve the nonce
// bucket's bytes of its store; a store smaller than that is refused at the configuration,
// naming both settings, rather than failing the start when the bucket is made.
func TestTheNonceBucketMustFitTheStore(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("shared"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig([]string{"SLUICE_SIGNING_SECRET_FILE=" + secret, "SLUICE_NATS_MAX_STORE_BYTES=67108864"})
	if err == nil || !strings.Contains(err.Error(), "SLUICE_SIGNING_MAX_NONCES") || !strings.Contains(err.Error(), "SLUICE_NATS_MAX_STORE_BYTES") {
		t.Fatalf("a 64 MiB store beside the default nonces: %v", err)
	}
	if _, err := LoadConfig([]string{"SLUICE_SIGNING_SECRET_FILE=" + secret, "SLUICE_NATS_MAX_STORE_BYTES=67108864", "SLUICE_SIGNING_MAX_NONCES=100000"}); err != nil {
		t.Fatalf("100,000 nonces in a 64 MiB store: %v", err)
	}
}
