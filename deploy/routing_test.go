package deploy

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// routingDir holds the examples for the inference gateway and KEDA, whose kinds are not in
// the Kubernetes API's Go types: each is decoded strictly into the fields its API documents.
const routingDir = "routing"

// inferencePool is the Gateway API Inference Extension's InferencePool
// (inference.networking.k8s.io/v1), the fields its API reference lists.
type inferencePool struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		TargetPorts []struct {
			Number int32 `json:"number"`
		} `json:"targetPorts"`
		AppProtocol       string `json:"appProtocol"`
		EndpointPickerRef struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
			Port struct {
				Number int32 `json:"number"`
			} `json:"port"`
			FailureMode string `json:"failureMode"`
		} `json:"endpointPickerRef"`
	} `json:"spec"`
}

// scaledObject is KEDA's ScaledObject (keda.sh/v1alpha1), the fields this example uses.
type scaledObject struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		ScaleTargetRef struct {
			Name string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicaCount *int32 `json:"minReplicaCount"`
		MaxReplicaCount *int32 `json:"maxReplicaCount"`
		PollingInterval int32  `json:"pollingInterval"`
		CooldownPeriod  int32  `json:"cooldownPeriod"`
		Triggers        []struct {
			Type       string            `json:"type"`
			MetricType string            `json:"metricType"`
			Metadata   map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
}

type objectMeta struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

func readStrict(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(routingDir, file))
	if err != nil {
		t.Fatal(err)
	}
	if err := strictYAML(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// strictYAML decodes YAML with keys as the API server reads them: case-sensitive
// (encoding/json would take "failuremode" for failureMode, which the server drops), none
// unknown, none twice.
func strictYAML(data []byte, into any) error {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	return strictJSON(js, into)
}

func strictJSON(js []byte, into any) error {
	strict, err := kjson.UnmarshalStrict(js, into, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// TestRoutingManifests decodes the InferencePool and the ScaledObject and checks them against
// the Deployment and the metrics the server exports.
func TestRoutingManifests(t *testing.T) {
	var pool inferencePool
	var scaled scaledObject
	readStrict(t, "inferencepool.yaml", &pool)
	readStrict(t, "scaledobject.yaml", &scaled)
	for _, p := range routingProblems(loadManifests(t), pool, scaled, readMetricFamilies(t)) {
		t.Error(p)
	}
}

// TestRoutingRulesCatchMistakes breaks the examples one field at a time.
func TestRoutingRulesCatchMistakes(t *testing.T) {
	m, families := loadManifests(t), readMetricFamilies(t)
	load := func() (inferencePool, scaledObject) {
		var pool inferencePool
		var scaled scaledObject
		readStrict(t, "inferencepool.yaml", &pool)
		readStrict(t, "scaledobject.yaml", &scaled)
		return pool, scaled
	}
	for name, c := range map[string]struct {
		mutate func(*inferencePool, *scaledObject)
		want   string
	}{
		"pool selects other pods": {func(p *inferencePool, _ *scaledObject) { p.Spec.Selector.MatchLabels["app.kubernetes.io/name"] = "x" }, "selector"},
		"pool on a closed port":   {func(p *inferencePool, _ *scaledObject) { p.Spec.TargetPorts[0].Number = 9999 }, "targetPorts"},
		"picker fails closed":     {func(p *inferencePool, _ *scaledObject) { p.Spec.EndpointPickerRef.FailureMode = "Maybe" }, "failureMode"},
		"scales another workload": {func(_ *inferencePool, s *scaledObject) { s.Spec.ScaleTargetRef.Name = "other" }, "scaleTargetRef"},
		"a metric not exported": {func(_ *inferencePool, s *scaledObject) {
			s.Spec.Triggers[0].Metadata["query"] = "sum(vllm:num_requests_waiting)"
		}, "no family"},
		"no threshold": {func(_ *inferencePool, s *scaledObject) { delete(s.Spec.Triggers[0].Metadata, "threshold") }, "threshold"},
		"divided twice": {func(_ *inferencePool, s *scaledObject) {
			s.Spec.Triggers[0].Metadata["query"] = "sum(sluice_admission_queue_depth) / count(count by (pod) (sluice_admission_queue_depth))"
		}, "divides again"},
	} {
		pool, scaled := load()
		c.mutate(&pool, &scaled)
		probs := routingProblems(m, pool, scaled, families)
		if !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, c.want) }) {
			t.Errorf("%s: problems %q, want one about %q", name, probs, c.want)
		}
	}
}

var familyName = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)

func routingProblems(m manifests, pool inferencePool, scaled scaledObject, families map[string]family) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	d := m.deployment
	if pool.APIVersion != "inference.networking.k8s.io/v1" || pool.Kind != "InferencePool" {
		bad("inferencepool.yaml: %s %s, want inference.networking.k8s.io/v1 InferencePool", pool.APIVersion, pool.Kind)
	}
	// A subset: the pods carry labels of their own for other readers (the picker's engine type).
	if sel := pool.Spec.Selector.MatchLabels; len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(labels.Set(d.Spec.Template.Labels)) {
		bad("inferencepool.yaml: selector %v does not select the Deployment's pods %v", sel, d.Spec.Template.Labels)
	}
	var ports []int32
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			ports = append(ports, p.ContainerPort)
		}
	}
	if n := len(pool.Spec.TargetPorts); n < 1 || n > 8 {
		bad("inferencepool.yaml: %d targetPorts, want 1 to 8", n)
	}
	for _, p := range pool.Spec.TargetPorts {
		if !slices.Contains(ports, p.Number) {
			bad("inferencepool.yaml: targetPorts %d is not a container port (%v)", p.Number, ports)
		}
	}
	if a := pool.Spec.AppProtocol; a != "http" && a != "kubernetes.io/h2c" {
		bad("inferencepool.yaml: appProtocol %q", a)
	}
	ref := pool.Spec.EndpointPickerRef
	if ref.Name == "" || ref.Kind != "Service" || ref.Port.Number < 1 || ref.Port.Number > 65535 {
		bad("inferencepool.yaml: endpointPickerRef %+v names no Service port", ref)
	}
	if ref.FailureMode != "FailOpen" && ref.FailureMode != "FailClose" {
		bad("inferencepool.yaml: failureMode %q", ref.FailureMode)
	}
	if scaled.APIVersion != "keda.sh/v1alpha1" || scaled.Kind != "ScaledObject" {
		bad("scaledobject.yaml: %s %s, want keda.sh/v1alpha1 ScaledObject", scaled.APIVersion, scaled.Kind)
	}
	if scaled.Spec.ScaleTargetRef.Name != d.Name {
		bad("scaledobject.yaml: scaleTargetRef %q is not the Deployment %q", scaled.Spec.ScaleTargetRef.Name, d.Name)
	}
	if lo, hi := scaled.Spec.MinReplicaCount, scaled.Spec.MaxReplicaCount; lo == nil || hi == nil || *lo < 1 || *lo > *hi {
		bad("scaledobject.yaml: replicas from %v to %v", lo, hi)
	}
	if len(scaled.Spec.Triggers) == 0 {
		bad("scaledobject.yaml: no trigger")
	}
	for _, tr := range scaled.Spec.Triggers {
		if tr.Type != "prometheus" {
			bad("scaledobject.yaml: trigger %q, want prometheus", tr.Type)
			continue
		}
		if u, err := url.Parse(tr.Metadata["serverAddress"]); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("scaledobject.yaml: serverAddress %q", tr.Metadata["serverAddress"])
		}
		avg := tr.MetricType == "" || tr.MetricType == "AverageValue"
		if q := tr.Metadata["query"]; avg && strings.Contains(q, "count(") {
			bad("scaledobject.yaml: metricType AverageValue divides by the pods already; the query divides again: %s", q)
		}
		if v, err := strconv.ParseFloat(tr.Metadata["threshold"], 64); err != nil || v <= 0 {
			bad("scaledobject.yaml: threshold %q", tr.Metadata["threshold"])
		}
		named := 0
		for _, n := range familyName.FindAllString(tr.Metadata["query"], -1) {
			if strings.HasPrefix(n, "sluice_") || strings.Contains(n, ":") {
				named++
				if _, ok := families[n]; !ok {
					bad("scaledobject.yaml: the query reads %s, but the server exports no family of that name", n)
				}
			}
		}
		if named == 0 {
			bad("scaledobject.yaml: the query reads no family the server exports")
		}
	}
	return out
}
