package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// OpenMed's service reads its own environment variables. A team that switches brings them
// along, so each one that is set is either honoured with the same meaning (translated into
// the Sluice variable that does it, unless that one is set too: an explicit SLUICE_ value
// always wins), refused at start-up when it asks for security Sluice does not give yet (fail
// closed: never silently open), or named in one start-up warning line as set but without
// effect. docs/CONFIGURATION.md's "OpenMed's settings" table says which is which; a test keeps the two equal.

// openMedSetting is one of OpenMed's variables that Sluice honours.
type openMedSetting struct {
	name string
	// ours is the Sluice variable it sets.
	ours string
	// convert turns OpenMed's value into ours; nil takes it as it is. skip: OpenMed falls
	// back to its default for this value, and so does Sluice.
	convert func(v string) (ours string, skip bool, err error)
	// pool marks a setting of the models loaded on demand: without SLUICE_MODELS_DIR there
	// are none, and it has no effect.
	pool bool
	// security marks a switch of security: OpenMed's on never yields to Sluice's off.
	security bool
	// opens marks a Sluice switch whose true is the open side (SLUICE_AUTH_OPEN): its secure
	// value is false.
	opens bool
}

// openMedHonoured are the variables Sluice gives OpenMed's meaning, in that table's order.
var openMedHonoured = []openMedSetting{
	{name: "OPENMED_PROFILE", ours: "SLUICE_REQUEST_TIMEOUT_MS", convert: profileTimeout},
	{name: "OPENMED_SERVICE_MAX_TEXT_LENGTH", ours: "SLUICE_MAX_TEXT_CHARS", convert: positiveOrDefault},
	{name: "OPENMED_MAX_TEXT_BYTES", ours: "SLUICE_MAX_TEXT_BYTES", convert: positiveOrDefault},
	{name: "OPENMED_SERVICE_MAX_TEXT_BYTES", ours: "SLUICE_MAX_TEXT_BYTES", convert: positiveOrDefault},
	{name: "OPENMED_SERVICE_MAX_REQUEST_BYTES", ours: "SLUICE_MAX_BODY_BYTES"},
	{name: "OPENMED_SERVICE_SHUTDOWN_DRAIN_SECONDS", ours: "SLUICE_SHUTDOWN_TIMEOUT_S", convert: wholeSeconds},
	{name: "OPENMED_SERVICE_LOG_LEVEL", ours: "SLUICE_LOG_LEVEL", convert: logLevelOf},
	{name: "OPENMED_SERVICE_BATCHING_ENABLED", ours: "SLUICE_BATCH_MAX_SIZE", convert: batchingSize},
	{name: "OPENMED_SERVICE_BATCH_MAX_SIZE", ours: "SLUICE_BATCH_MAX_SIZE"},
	{name: "OPENMED_SERVICE_BATCH_MAX_WAIT_MS", ours: "SLUICE_BATCH_MAX_WAIT_MS", convert: wholeMillis},
	{name: "OPENMED_SERVICE_BATCH_MAX_QUEUE_SIZE", ours: "SLUICE_BATCH_MAX_QUEUE_SIZE"},
	{name: "OPENMED_SERVICE_BATCH_MAX_QUEUE_WAIT_MS", ours: "SLUICE_BATCH_MAX_QUEUE_WAIT_MS", convert: wholeMillis},
	{name: "OPENMED_SERVICE_BATCH_HIGH_WATERMARK", ours: "SLUICE_BATCH_HIGH_WATERMARK"},
	{name: "OPENMED_SERVICE_BATCH_LOW_WATERMARK", ours: "SLUICE_BATCH_LOW_WATERMARK"},
	{name: "OPENMED_SERVICE_TRUSTED_HOSTS", ours: "SLUICE_TRUSTED_HOSTS", convert: list},
	{name: "OPENMED_SERVICE_PRIVACY_GATEWAY_ENDPOINT", ours: "SLUICE_GATEWAY_OPENMED_ENDPOINT"},
	{name: "OPENMED_SERVICE_RATE_LIMIT_RPS", ours: "SLUICE_RATE_LIMIT_RPS"},
	{name: "OPENMED_SERVICE_RATE_LIMIT_BURST", ours: "SLUICE_RATE_LIMIT_BURST"},
	{name: "OPENMED_SERVICE_RATE_LIMIT_MAX_CONCURRENCY", ours: "SLUICE_RATE_LIMIT_MAX_CONCURRENCY"},
	{name: "OPENMED_SERVICE_CONCURRENCY_WAIT_SECONDS", ours: "SLUICE_RATE_LIMIT_CONCURRENCY_WAIT_MS", convert: secondsAsMillis},
	{name: "OPENMED_SERVICE_THROTTLE_KEY", ours: "SLUICE_RATE_LIMIT_KEY", convert: throttleKey},
	{name: "OPENMED_SERVICE_COALESCING_ENABLED", ours: "SLUICE_COALESCE", convert: boolSetting},
	{name: "OPENMED_SERVICE_RESILIENCE_ENABLED", ours: "SLUICE_RESILIENCE", convert: onUnlessOff},
	{name: "OPENMED_SERVICE_RETRY_MAX_ATTEMPTS", ours: "SLUICE_RETRY_MAX_ATTEMPTS"},
	{name: "OPENMED_SERVICE_RETRY_BACKOFF_INITIAL_SECONDS", ours: "SLUICE_RETRY_BACKOFF_INITIAL_MS", convert: secondsAsMillis},
	{name: "OPENMED_SERVICE_RETRY_BACKOFF_MULTIPLIER", ours: "SLUICE_RETRY_BACKOFF_MULTIPLIER"},
	{name: "OPENMED_SERVICE_RETRY_BACKOFF_MAX_SECONDS", ours: "SLUICE_RETRY_BACKOFF_MAX_MS", convert: secondsAsMillis},
	{name: "OPENMED_SERVICE_RETRY_BACKOFF_JITTER_SECONDS", ours: "SLUICE_RETRY_BACKOFF_JITTER_MS", convert: secondsAsMillis},
	{name: "OPENMED_SERVICE_CIRCUIT_BREAKER_FAILURE_THRESHOLD", ours: "SLUICE_CIRCUIT_BREAKER_FAILURE_THRESHOLD"},
	{name: "OPENMED_SERVICE_CIRCUIT_BREAKER_RECOVERY_TIMEOUT_SECONDS", ours: "SLUICE_CIRCUIT_BREAKER_RECOVERY_TIMEOUT_S", convert: wholeSeconds},
	{name: "OPENMED_SERVICE_CORS_ORIGINS", ours: "SLUICE_CORS_ORIGINS", convert: list},
	{name: "OPENMED_SERVICE_KEEP_ALIVE", ours: "SLUICE_KEEP_ALIVE", pool: true},
	{name: "OPENMED_SERVICE_PRELOAD_MODELS", ours: "SLUICE_PRELOAD_MODELS", convert: list, pool: true},
	{name: "OPENMED_SERVICE_MAX_RESIDENT_MODELS", ours: "SLUICE_MAX_RESIDENT_MODELS", convert: positiveOrDefault, pool: true},
	{name: "OPENMED_SERVICE_MODEL_MEMORY_BUDGET_BYTES", ours: "SLUICE_MODEL_MEMORY_BUDGET_BYTES", convert: byteSize, pool: true},
	{name: "OPENMED_SERVICE_MTLS_ENABLED", ours: "SLUICE_MTLS", convert: boolSetting, security: true},
	{name: "OPENMED_SERVICE_MTLS_CA_BUNDLE", ours: "SLUICE_MTLS_CA_BUNDLE"},
	{name: "OPENMED_SERVICE_MTLS_CLIENT_CERT_HEADER", ours: "SLUICE_MTLS_CLIENT_CERT_HEADER"},
	{name: "OPENMED_SERVICE_MTLS_TRUSTED_PROXIES", ours: "SLUICE_MTLS_TRUSTED_PROXIES", convert: list},
	{name: "OPENMED_SERVICE_MTLS_PRINCIPALS", ours: "SLUICE_MTLS_PRINCIPALS"},
	{name: "OPENMED_SERVICE_MODEL_ADMISSION_WAIT_SECONDS", ours: "SLUICE_MODEL_LOAD_WAIT_MS", convert: secondsAsMillis, pool: true},
	{name: "OPENMED_SERVICE_JOBS_WORKERS", ours: "SLUICE_JOBS_WORKERS"},
	{name: "OPENMED_SERVICE_JOBS_TTL_SECONDS", ours: "SLUICE_JOBS_RETENTION_S", convert: wholeSeconds},
	{name: "OPENMED_SERVICE_TRACING_ENABLED", ours: "SLUICE_TRACING", convert: onUnlessOff},
	{name: "OPENMED_SERVICE_OTLP_ENDPOINT", ours: "SLUICE_OTLP_ENDPOINT"},
	{name: "OPENMED_SERVICE_OTLP_HEADERS", ours: "SLUICE_OTLP_HEADERS"},
	{name: "OPENMED_SERVICE_OTLP_TIMEOUT_SECONDS", ours: "SLUICE_OTLP_TIMEOUT_S", convert: wholeSeconds},
	{name: "OPENMED_SERVICE_LOG_FORMAT", ours: "", convert: onlyJSON},
	{name: "OPENMED_SERVICE_METRICS_ENABLED", ours: "", convert: onlyEnabled},
}

// openMedNotApplying are OpenMed's settings (by prefix) that have no counterpart in a server
// like this one, and why: accepted without a warning, since nothing is lost.
var openMedNotApplying = []struct{ prefix, why string }{
	{"OPENMED_SERVICE_MLX_", "MLX is Apple silicon's runtime; Sluice runs ONNX Runtime"},
	{"OPENMED_SERVICE_DEFAULT_MODEL_FOOTPRINT_BYTES", "Sluice knows a model's footprint from its ONNX file before it loads it"},
	{"OPENMED_SERVICE_JOBS_STORE_PATH", "jobs live in JetStream (SLUICE_DATA_DIR, or the cluster of SLUICE_NATS_URL)"},
	{"OPENMED_MCP_", "settings of OpenMed's MCP server, another program"},
	{"OPENMED_OPENHIM_", "settings of OpenMed's OpenHIM mediator, another program"},
	{"OPENMED_SIDECAR_", "settings of OpenMed's sidecar, another program"},
	{"OPENMED_GROUNDING_", "settings of OpenMed's grounding tools, not its service"},
	{"OPENMED_RESOLVER_", "settings of OpenMed's resolver, not its service"},
	{"OPENMED_SERVICE_GRAPHQL_", "OpenMed's GraphQL view repeats its REST routes; Sluice serves those routes over REST and gRPC (SLUICE_GRPC_ADDR), not GraphQL"},
}

// openMedSecurity are the prefixes of OpenMed's security settings: one of them that Sluice
// does not know, set to anything but off, refuses the start.
var openMedSecurity = []string{"OPENMED_SERVICE_MTLS_"}

// openMedAuth maps OpenMed's authentication settings, read when OPENMED_SERVICE_AUTH_ENABLED
// is true (as OpenMed reads them), to Sluice's; an empty target has no effect here.
var openMedAuth = map[string]openMedSetting{
	"OPENMED_SERVICE_AUTH_API_KEYS":                 {ours: "SLUICE_API_KEYS"},
	"OPENMED_SERVICE_AUTH_JWKS":                     {ours: "SLUICE_AUTH_JWKS"},
	"OPENMED_SERVICE_AUTH_JWKS_FILE":                {ours: "SLUICE_AUTH_JWKS_FILE"},
	"OPENMED_SERVICE_AUTH_JWT_ISSUER":               {ours: "SLUICE_AUTH_JWT_ISSUER"},
	"OPENMED_SERVICE_AUTH_JWT_AUDIENCE":             {ours: "SLUICE_AUTH_JWT_AUDIENCE", convert: audiences},
	"OPENMED_SERVICE_AUTH_JWT_LEEWAY_SECONDS":       {ours: "SLUICE_AUTH_JWT_LEEWAY_S"},
	"OPENMED_SERVICE_AUTH_ROUTE_SCOPES":             {ours: "SLUICE_AUTH_ROUTE_SCOPES"},
	"OPENMED_SERVICE_AUTH_DENY_BY_DEFAULT":          {ours: "SLUICE_AUTH_OPEN", convert: negated, security: true, opens: true},
	"OPENMED_SERVICE_AUTH_FAILURE_RATE_LIMIT_RPS":   {ours: "SLUICE_AUTH_FAILURE_RPS"},
	"OPENMED_SERVICE_AUTH_FAILURE_RATE_LIMIT_BURST": {ours: "SLUICE_AUTH_FAILURE_BURST"},
	"OPENMED_SERVICE_AUTH_FAILURE_RATE_LIMIT_KEY":   {convert: peerKeyOnly},
	"OPENMED_SERVICE_AUTH_JWT_MAX_LIFETIME_SECONDS": {ours: "SLUICE_AUTH_JWT_MAX_LIFETIME_S"},
}

// audiences is a list separated by commas or spaces, as Sluice's comma list.
func audiences(v string) (string, bool, error) {
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
	return strings.Join(parts, ","), len(parts) == 0, nil
}

func negated(v string) (string, bool, error) {
	on, err := openMedBool(v)
	return strconv.FormatBool(!on), false, err
}

// peerKeyOnly: Sluice limits failed attempts per peer, OpenMed's default; another key has no
// effect.
func peerKeyOnly(v string) (string, bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "peer", "client", "remote":
		return "", true, nil
	}
	return "", false, errNoEffect
}

// openMedProfiles are OpenMed's settings profiles and their request timeouts.
var openMedProfiles = map[string]int{"dev": 600_000, "prod": 300_000, "test": 60_000, "fast": 120_000}

func profileTimeout(v string) (string, bool, error) {
	ms, ok := openMedProfiles[strings.ToLower(strings.TrimSpace(v))]
	if !ok {
		return "", false, fmt.Errorf("must be dev, prod, test or fast (custom profile files are not read)")
	}
	return strconv.Itoa(ms), false, nil
}

func positiveOrDefault(v string) (string, bool, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return "", true, nil
	}
	return strconv.Itoa(n), false, nil
}

// list trims a comma list's items and drops the empty ones and repeats, as OpenMed does.
func list(v string) (string, bool, error) {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" && !slices.Contains(out, item) {
			out = append(out, item)
		}
	}
	return strings.Join(out, ","), len(out) == 0, nil
}

// byteSize reads OpenMed's byte sizes: a number, or one with b, kb, mb, gb (powers of 1000)
// or kib, mib, gib (of 1024), in any case.
func byteSize(v string) (string, bool, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	units := []struct {
		suffix string
		mult   float64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"b", 1}}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	// Negated, so that NaN, which compares false with everything, is refused too.
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || !(f > 0 && f*mult <= math.MaxInt64/2) {
		return "", false, fmt.Errorf("must be a size in bytes > 0 and under 4 EiB (a number, or with b, kb, mb, gb, kib, mib, gib), got %q", v)
	}
	return strconv.FormatInt(int64(math.Ceil(f*mult)), 10), false, nil
}

// wholeSeconds and wholeMillis round OpenMed's fractional values up to Sluice's units.
func wholeSeconds(v string) (string, bool, error) { return roundUp(v) }
func wholeMillis(v string) (string, bool, error)  { return roundUp(v) }

func roundUp(v string) (string, bool, error) {
	// Negated, so that NaN is refused too; past MaxInt, int() made the most negative int of it.
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(f >= 0 && f < math.MaxInt) {
		return "", false, fmt.Errorf("must be a number from 0 to %d, got %q", math.MaxInt, v)
	}
	return strconv.Itoa(int(math.Ceil(f))), false, nil
}

// logLevelOf maps OpenMed's level names and numbers to Sluice's; off turns the access log off,
// which at Sluice's error level it is (access lines are info). Anything else is info, as
// OpenMed falls back to.
func logLevelOf(v string) (string, bool, error) {
	u := strings.ToUpper(strings.TrimSpace(v))
	if n, err := strconv.Atoi(u); err == nil && n >= 0 {
		switch {
		case n < 20:
			return "debug", false, nil
		case n < 30:
			return "info", false, nil
		case n < 40:
			return "warn", false, nil
		}
		return "error", false, nil
	}
	switch u {
	case "DEBUG", "NOTSET":
		return "debug", false, nil
	case "WARNING", "WARN":
		return "warn", false, nil
	case "ERROR", "CRITICAL", "FATAL", "OFF", "NONE", "DISABLED":
		return "error", false, nil
	}
	return "info", false, nil
}

// batchingSize: OpenMed without batching runs one request at a time, Sluice's batch of one.
func batchingSize(v string) (string, bool, error) {
	on, err := openMedBool(v)
	if err != nil {
		return "", false, err
	}
	if on {
		return "", true, nil // Sluice always batches
	}
	return "1", false, nil
}

// throttleKey: OpenMed counts the callers of its rate limit in one bucket for the service
// (global, its default), or by address: the peer's, or X-Forwarded-For's, which Sluice reads
// from its trusted proxies only (SLUICE_TRUSTED_PROXIES), so both are Sluice's peer.
func throttleKey(v string) (string, bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "global":
		return "global", false, nil
	case "peer", "x-forwarded-for":
		return "peer", false, nil
	}
	return "", false, fmt.Errorf("must be global, x-forwarded-for or peer")
}

// onlyJSON and onlyEnabled accept what Sluice does anyway; another value is named in the
// warning line (errNoEffect).
func onlyJSON(v string) (string, bool, error) {
	if f := strings.ToLower(strings.TrimSpace(v)); f == "" || f == "json" {
		return "", true, nil
	}
	return "", false, errNoEffect
}

func onlyEnabled(v string) (string, bool, error) {
	on, err := openMedBool(v)
	if err != nil {
		return "", false, err
	}
	if on {
		return "", true, nil
	}
	return "", false, errNoEffect
}

var errNoEffect = fmt.Errorf("no effect")

// boolSetting reads OpenMed's boolean as Sluice's ("true" or "false").
// secondsAsMillis is a number of seconds (at most an hour) as whole milliseconds, rounded up.
func secondsAsMillis(v string) (string, bool, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(f >= 0 && f <= 3600) {
		return "", false, fmt.Errorf("must be a number of seconds from 0 to 3600")
	}
	return strconv.Itoa(int(math.Ceil(f * 1000))), false, nil
}

// onUnlessOff is a switch whose empty value OpenMed reads as its default: left unset here.
func onUnlessOff(v string) (string, bool, error) {
	if strings.TrimSpace(v) == "" {
		return "", true, nil
	}
	return boolSetting(v)
}

// boolSetting is a switch as OpenMed reads it, as Sluice's true or false.
func boolSetting(v string) (string, bool, error) {
	on, err := openMedBool(v)
	return strconv.FormatBool(on), false, err
}

// openMedBool reads a boolean as OpenMed does.
func openMedBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on", "enabled":
		return true, nil
	case "0", "false", "no", "off", "disabled", "":
		return false, nil
	}
	return false, fmt.Errorf("must be true or false")
}

// apply gives OpenMed's variable name, set to v, its meaning: the Sluice variable it sets
// (unless that one is set: an explicit value wins), a problem, or a name without effect.
func (s openMedSetting) apply(name, v string, vars, problems, origins map[string]string, noEffect *[]string) {
	out, skip := v, false
	var err error
	if s.convert != nil {
		out, skip, err = s.convert(v)
	}
	switch {
	case err == errNoEffect:
		*noEffect = append(*noEffect, name)
	case err != nil:
		problems[name] = name + " " + err.Error()
	case skip || s.ours == "":
	default:
		theirs, ours := vars[s.ours]
		if !ours {
			vars[s.ours], origins[s.ours] = out, name
		} else if s.security {
			// An explicit Sluice value wins, except where it would turn security off that the
			// OpenMed setting turns on: refuse, never start open.
			secure := !s.opens
			asked, err1 := openMedBool(out)
			set, err2 := openMedBool(theirs)
			if err1 == nil && err2 == nil && asked == secure && set != secure {
				problems[name] = name + " turns on what " + s.ours + " turns off; unset one of them"
			}
		}
	}
}

// openMedTranslation is what OpenMed's variables in vars come to: vars gains the Sluice
// variables they set, origins which OpenMed variable set each (a problem with the value names
// it), problems the ones that refuse the start, and noEffect the names of the ones set without
// effect (sorted).
func openMedTranslation(vars map[string]string) (problems, origins map[string]string, noEffect []string) {
	problems, origins = map[string]string{}, map[string]string{}
	handled := map[string]bool{}
	for _, s := range openMedHonoured {
		v, set := vars[s.name]
		if !set {
			continue
		}
		handled[s.name] = true
		if s.pool && vars["SLUICE_MODELS_DIR"] == "" {
			noEffect = append(noEffect, s.name)
			continue
		}
		s.apply(s.name, v, vars, problems, origins, &noEffect)
	}
	// OpenMed's rate limit counts the whole service in one bucket unless THROTTLE_KEY says
	// otherwise: a deployment that sets the limit and not the key keeps that.
	if _, keySet := vars["OPENMED_SERVICE_THROTTLE_KEY"]; !keySet && vars["SLUICE_RATE_LIMIT_KEY"] == "" &&
		slices.ContainsFunc([]string{"OPENMED_SERVICE_RATE_LIMIT_RPS", "OPENMED_SERVICE_RATE_LIMIT_BURST",
			"OPENMED_SERVICE_RATE_LIMIT_MAX_CONCURRENCY"}, func(n string) bool { _, set := vars[n]; return set }) {
		vars["SLUICE_RATE_LIMIT_KEY"] = "global"
	}
	// Past its concurrency limit OpenMed waits 50 ms for a place before it answers busy.
	if _, set := vars["OPENMED_SERVICE_RATE_LIMIT_MAX_CONCURRENCY"]; set && vars["SLUICE_RATE_LIMIT_CONCURRENCY_WAIT_MS"] == "" {
		vars["SLUICE_RATE_LIMIT_CONCURRENCY_WAIT_MS"] = "50"
	}
	translateAuth(vars, problems, origins, &noEffect, handled)
	for name, v := range vars {
		if !strings.HasPrefix(name, "OPENMED_") || handled[name] {
			continue
		}
		if slices.ContainsFunc(openMedNotApplying, func(n struct{ prefix, why string }) bool { return strings.HasPrefix(name, n.prefix) }) {
			continue
		}
		if slices.ContainsFunc(openMedSecurity, func(p string) bool { return strings.HasPrefix(name, p) }) {
			if on, err := openMedBool(v); err == nil && !on {
				continue // switched off: nothing to give
			}
			problems[name] = name + " asks for security Sluice does not implement yet; refusing to start open (unset it, or put an authenticating proxy in front)"
			continue
		}
		noEffect = append(noEffect, name)
	}
	slices.Sort(noEffect)
	return problems, origins, noEffect
}

// translateAuth gives OpenMed's authentication settings their meaning when
// OPENMED_SERVICE_AUTH_ENABLED is true: enabled without keys or a JWKS, or with a setting
// Sluice does not know, it refuses the start (never silently open).
func translateAuth(vars, problems, origins map[string]string, noEffect *[]string, handled map[string]bool) {
	on := false
	if v, set := vars["OPENMED_SERVICE_AUTH_ENABLED"]; set {
		handled["OPENMED_SERVICE_AUTH_ENABLED"] = true
		var err error
		if on, err = openMedBool(v); err != nil {
			problems["OPENMED_SERVICE_AUTH_ENABLED"] = "OPENMED_SERVICE_AUTH_ENABLED " + err.Error()
			return
		}
	}
	for name, v := range vars {
		if !strings.HasPrefix(name, "OPENMED_SERVICE_AUTH_") || handled[name] {
			continue
		}
		handled[name] = true
		s, known := openMedAuth[name]
		switch {
		case !on:
			*noEffect = append(*noEffect, name) // OpenMed reads none of them unless enabled
			continue
		case !known:
			problems[name] = name + " is an authentication setting Sluice does not know; refusing to start open"
			continue
		}
		s.apply(name, v, vars, problems, origins, noEffect)
	}
	if on && vars["SLUICE_API_KEYS"] == "" && vars["SLUICE_API_KEYS_FILE"] == "" && vars["SLUICE_AUTH_JWKS"] == "" && vars["SLUICE_AUTH_JWKS_FILE"] == "" {
		problems["OPENMED_SERVICE_AUTH_ENABLED"] = "OPENMED_SERVICE_AUTH_ENABLED is true but no API keys or JWKS are given; refusing to start open"
	}
}
