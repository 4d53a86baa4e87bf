package tracing

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-serving/sluice/settings"
)

// Config is OpenMed's tracing settings. An endpoint set turns tracing on unless Enabled says
// false, as OpenMed reads them.
type Config struct {
	Enabled *bool `env:"TRACING"`
	// Endpoint is the OTLP/HTTP traces URL (http://collector:4318/v1/traces).
	Endpoint string `env:"OTLP_ENDPOINT"`
	// Headers are sent with every export: key=value pairs separated by commas.
	Headers string        `env:"OTLP_HEADERS"`
	Timeout time.Duration `env:"OTLP_TIMEOUT_S" envDefault:"10" unit:"s"`
	// BatchDelay is the longest a finished span waits to be exported.
	BatchDelay time.Duration `env:"OTLP_BATCH_DELAY_MS" envDefault:"5000" unit:"ms"`
}

// On says whether requests are traced.
func (c Config) On() bool {
	if c.Enabled != nil {
		return *c.Enabled
	}
	return c.Endpoint != ""
}

// Validate reports every field out of range.
func (c Config) Validate() error {
	check := settings.For("tracing")
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path == "" || u.Path == "/" {
			check.Addf("Endpoint", "must be the collector's OTLP/HTTP traces URL, as http://collector:4318/v1/traces")
		}
	}
	if _, err := parseHeaders(c.Headers); err != nil {
		check.Addf("Headers", "%v", err)
	}
	if c.Timeout <= 0 || c.Timeout > 5*time.Minute {
		check.Addf("Timeout", "must be positive and at most 5 minutes, got %s", c.Timeout)
	}
	if c.BatchDelay <= 0 || c.BatchDelay > time.Minute {
		check.Addf("BatchDelay", "must be positive and at most a minute, got %s", c.BatchDelay)
	}
	return check.Err()
}

func parseHeaders(raw string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(raw, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("entries must be key=value") // never the value: it may be a token
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}

// Tracer makes the spans. A nil *Tracer makes none.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// New builds the tracer when cfg turns tracing on (nil otherwise): spans kept in the process,
// and exported when an endpoint is set.
func New(cfg Config, version string) (*Tracer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	otel.SetTextMapPropagator(propagation.TraceContext{})
	if !cfg.On() {
		return nil, nil
	}
	res := resource.NewSchemaless(attribute.String("service.name", "sluice"), attribute.String("service.version", version))
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if cfg.Endpoint != "" {
		headers, _ := parseHeaders(cfg.Headers)
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(cfg.Endpoint),
			otlptracehttp.WithHeaders(headers), otlptracehttp.WithTimeout(cfg.Timeout))
		if err != nil {
			return nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(cfg.BatchDelay)))
	}
	p := sdktrace.NewTracerProvider(opts...)
	return &Tracer{provider: p, tracer: p.Tracer("github.com/sluice-serving/sluice")}, nil
}

// Shutdown exports what is buffered and stops.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Start begins a span under ctx's.
func (t *Tracer) Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(context.Background()) // a span of nothing: ending it ends nothing
	}
	return t.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// StartServer begins a request's server span, its parent the caller's traceparent when
// header has one.
func (t *Tracer) StartServer(ctx context.Context, name string, header func(string) string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(context.Background())
	}
	ctx = otel.GetTextMapPropagator().Extract(ctx, headerCarrier(header))
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// headerCarrier reads a request's traceparent through a getter, copied (the getter's string
// may point into a buffer the server reuses while the span still holds it). The client's
// tracestate is not read: it is free text, and would be exported and sent upstream.
type headerCarrier func(string) string

func (h headerCarrier) Get(key string) string {
	if !strings.EqualFold(key, "traceparent") {
		return ""
	}
	return strings.Clone(h("traceparent"))
}
func (h headerCarrier) Set(string, string) {}
func (h headerCarrier) Keys() []string     { return []string{"traceparent"} }
