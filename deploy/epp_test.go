package deploy

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// eppConfigFile is the ConfigMap holding llm-d's endpoint picker configuration, under routing/.
const eppConfigFile = "epp-config.yaml"

// eppConfigKey is the ConfigMap key the picker is started with (--config-file).
const eppConfigKey = "config.yaml"

// eppConfig is llm-d's EndpointPickerConfig (llm-d.ai/v1alpha1): the fields its API reference
// documents that this example uses. Decoded strictly, so a misspelt field fails here instead
// of being dropped by the picker.
type eppConfig struct {
	APIVersion         string        `json:"apiVersion"`
	Kind               string        `json:"kind"`
	Plugins            []eppPlugin   `json:"plugins"`
	SchedulingProfiles []eppProfile  `json:"schedulingProfiles"`
	DataLayer          *eppDataLayer `json:"dataLayer"`
}

type eppPlugin struct {
	// Name is how the rest of the configuration refers to the plugin; "" is the type.
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Parameters json.RawMessage `json:"parameters"`
}

type eppProfile struct {
	Name    string `json:"name"`
	Plugins []struct {
		PluginRef string   `json:"pluginRef"`
		Weight    *float64 `json:"weight"`
	} `json:"plugins"`
}

type eppDataLayer struct {
	// InjectDefaults (default true) has the router add its own metrics source and extractor
	// unless a source named metrics-data-source is configured.
	InjectDefaults *bool `json:"injectDefaults"`
	Sources        []struct {
		PluginRef  string `json:"pluginRef"`
		Extractors []struct {
			PluginRef string `json:"pluginRef"`
		} `json:"extractors"`
	} `json:"sources"`
}

// metricsSourceParams are metrics-data-source's parameters.
type metricsSourceParams struct {
	Scheme             string `json:"scheme"`
	Path               string `json:"path"`
	InsecureSkipVerify *bool  `json:"insecureSkipVerify"`
}

// metricsExtractorParams are core-metrics-extractor's parameters.
type metricsExtractorParams struct {
	EngineLabelKey string         `json:"engineLabelKey"`
	DefaultEngine  string         `json:"defaultEngine"`
	EngineConfigs  []engineConfig `json:"engineConfigs"`
}

type engineConfig struct {
	Name                string `json:"name"`
	QueuedRequestsSpec  string `json:"queuedRequestsSpec"`
	RunningRequestsSpec string `json:"runningRequestsSpec"`
	KVUsageSpec         string `json:"kvUsageSpec"`
	LoRASpec            string `json:"loraSpec"`
	CacheInfoSpec       string `json:"cacheInfoSpec"`
}

// The plugin types this example may use, by the slot each fills. Another type needs a line
// here, after reading what it expects of the pods.
const (
	slotSource    = "data source"
	slotExtractor = "extractor"
	slotScorer    = "scorer"
	slotPicker    = "picker"
	slotHandler   = "profile handler"
)

var eppPluginSlots = map[string]string{
	"metrics-data-source":         slotSource,
	"core-metrics-extractor":      slotExtractor,
	"queue-scorer":                slotScorer,
	"kv-cache-utilization-scorer": slotScorer,
	"max-score-picker":            slotPicker,
	"single-profile-handler":      slotHandler,
}

// The router's defaults: the pod label that names the engine, the engine of a pod without it,
// and the engines it configures itself.
const (
	defaultEngineLabelKey = "llm-d.ai/engine-type"
	defaultEngine         = "vllm"
)

var builtinEngines = []string{"vllm", "sglang", "atom", "trtllm-serve", "triton-tensorrt-llm", "triton"}

// pickerGauges is the gauge of Sluice's that answers each of the picker's questions about a
// pod. sluice_kvcache_utilization is the share of blocks held, 0 to 1, as the scorer expects.
var pickerGauges = []struct{ field, family string }{
	{"queuedRequestsSpec", "sluice_generate_queued_requests"},
	{"runningRequestsSpec", "sluice_generate_running_sequences"},
	{"kvUsageSpec", "sluice_kvcache_utilization"},
}

// TestEndpointPickerConfig decodes routing/epp-config.yaml and checks it against the
// Deployment and the metric families the server exports.
func TestEndpointPickerConfig(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(routingDir, eppConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	m := loadManifests(t)
	for _, p := range eppProblems(decodeConfigMap(t, src), m.deployment, readServer(t), readMetricFamilies(t)) {
		t.Error(p)
	}
}

// TestEndpointPickerRulesCatchMistakes breaks the configuration, or the pods it reads, one
// thing at a time.
func TestEndpointPickerRulesCatchMistakes(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(routingDir, eppConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	srv, families := readServer(t), readMetricFamilies(t)
	if p := eppProblems(decodeConfigMap(t, good), loadManifests(t).deployment, srv, families); len(p) != 0 {
		t.Fatalf("the configuration under test must pass first: %v", p)
	}
	type edit struct{ old, new string }
	const (
		queued  = `'sluice_generate_queued_requests{queue="tiny-lm"}'`
		running = `'sluice_generate_running_sequences{queue="tiny-lm"}'`
		kv      = `'sluice_kvcache_utilization{queue="tiny-lm"}'`
	)
	cases := []struct {
		name  string
		edits []edit
		pods  func(*appsv1.Deployment)
		want  string
	}{
		{name: "a spec naming vLLM's metric", edits: []edit{{queued, "vllm:num_requests_waiting"}}, want: "queuedRequestsSpec"},
		{name: "a dangling pluginRef", edits: []edit{{"pluginRef: kv-cache-utilization-scorer", "pluginRef: kv-cache-scorer"}}, want: "pluginRef"},
		{name: "pods without the engine label", pods: func(d *appsv1.Deployment) { delete(d.Spec.Template.Labels, defaultEngineLabelKey) }, want: defaultEngineLabelKey},
		{name: "pods of another engine", pods: func(d *appsv1.Deployment) { d.Spec.Template.Labels[defaultEngineLabelKey] = "vllm" }, want: defaultEngineLabelKey},
		{name: "the engine renamed", edits: []edit{{"- name: sluice\n", "- name: sluice-engine\n"}}, want: defaultEngineLabelKey},
		{name: "no series selected", edits: []edit{{kv, "sluice_kvcache_utilization"}}, want: "queue"},
		{name: "another model's series", edits: []edit{{running, `'sluice_generate_running_sequences{queue="gpt2"}'`}}, want: "queue"},
		{name: "a label the family lacks", edits: []edit{{queued, `'sluice_generate_queued_requests{queue="tiny-lm",priority="high"}'`}}, want: "priority"},
		{name: "a usage gauge that is not 0 to 1", edits: []edit{{kv, `'sluice_kvcache_blocks{queue="tiny-lm",state="used"}'`}}, want: "kvUsageSpec"},
		{name: "queued and running swapped", edits: []edit{{queued, "SWAP"}, {running, queued}, {"SWAP", running}}, want: "runningRequestsSpec"},
		{name: "a LoRA spec Sluice cannot answer", edits: []edit{{"kvUsageSpec: " + kv, "kvUsageSpec: " + kv + "\n              loraSpec: vllm:lora_requests_info"}}, want: "loraSpec"},
		{name: "a misspelt field", edits: []edit{{"kvUsageSpec:", "kvUsageSPec:"}}, want: "unknown field"},
		{name: "an unknown plugin type", edits: []edit{{"- type: max-score-picker", "- type: max-scorer-picker"}}, want: "max-scorer-picker"},
		{name: "a scorer without its weight", edits: []edit{{"            weight: 1\n", ""}}, want: "weight"},
		{name: "no picker in the profile", edits: []edit{{"          - pluginRef: max-score-picker\n", ""}}, want: "picker"},
		{name: "a source the router would double", edits: []edit{
			{"name: metrics-data-source", "name: sluice-metrics"}, {"- pluginRef: metrics-data-source", "- pluginRef: sluice-metrics"},
		}, want: "metrics-data-source"},
		{name: "the extractor left out of the data layer", edits: []edit{{"            - pluginRef: core-metrics-extractor\n", ""}}, want: "core-metrics-extractor"},
		{name: "scraped on another path", edits: []edit{{"path: /metrics", "path: /stats"}}, want: "path"},
		{name: "another API", edits: []edit{{"apiVersion: llm-d.ai/v1alpha1", "apiVersion: inference.networking.x-k8s.io/v1alpha1"}}, want: "apiVersion"},
		{name: "another file name", edits: []edit{{"  config.yaml: |", "  config.yml: |"}}, want: eppConfigKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := good
			for _, e := range c.edits {
				if !bytes.Contains(src, []byte(e.old)) {
					t.Fatalf("%s no longer contains %q: update this case", eppConfigFile, e.old)
				}
				src = bytes.Replace(src, []byte(e.old), []byte(e.new), 1)
			}
			d := loadManifests(t).deployment
			if c.pods != nil {
				c.pods(d)
			}
			problems := eppProblems(decodeConfigMap(t, src), d, srv, families)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("no problem mentioning %q reported; got %q", c.want, problems)
			}
		})
	}
}

// decodeConfigMap decodes one ConfigMap strictly into the Kubernetes API's type.
func decodeConfigMap(t *testing.T, src []byte) *corev1.ConfigMap {
	t.Helper()
	obj, gvk, err := strictDecoder(t).Decode(src, nil, nil)
	if err != nil {
		t.Fatalf("%s: %v", eppConfigFile, err)
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		t.Fatalf("%s: a %s, want a ConfigMap", eppConfigFile, gvk.Kind)
	}
	return cm
}

// eppProblems checks the picker's configuration: that it is one the router loads as meant,
// and that it reads from the Deployment's pods the gauges the server exports for the
// generation model they serve.
func eppProblems(cm *corev1.ConfigMap, d *appsv1.Deployment, srv server, families map[string]family) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, eppConfigFile+": "+fmt.Sprintf(format, args...)) }

	text, ok := cm.Data[eppConfigKey]
	if !ok {
		bad("ConfigMap %s has no key %s, the file the picker is started with", cm.Name, eppConfigKey)
		return out
	}
	var cfg eppConfig
	if err := strictYAML([]byte(text), &cfg); err != nil {
		bad("%s: %v", eppConfigKey, err)
		return out
	}
	if cfg.APIVersion != "llm-d.ai/v1alpha1" || cfg.Kind != "EndpointPickerConfig" {
		bad("apiVersion %q kind %q, want llm-d.ai/v1alpha1 EndpointPickerConfig", cfg.APIVersion, cfg.Kind)
	}

	// Plugins, by the name the rest of the configuration refers to them.
	slots := map[string]string{}
	var source, extractor *eppPlugin
	for i := range cfg.Plugins {
		p := &cfg.Plugins[i]
		if p.Name == "" {
			p.Name = p.Type
		}
		slot, known := eppPluginSlots[p.Type]
		if !known {
			bad("plugin %s: type %q is not one these checks know (%v)", p.Name, p.Type, sortedKeys(eppPluginSlots))
			continue
		}
		if _, dup := slots[p.Name]; dup {
			bad("two plugins are named %s", p.Name)
		}
		slots[p.Name] = slot
		switch {
		case p.Type == "metrics-data-source":
			source = p
		case p.Type == "core-metrics-extractor":
			extractor = p
		case len(p.Parameters) > 0:
			bad("plugin %s: parameters these checks do not read", p.Name)
		}
	}

	// Scheduling: every reference declared, a weight per scorer, a picker per profile.
	if len(cfg.SchedulingProfiles) == 0 {
		bad("no schedulingProfiles")
	}
	for _, prof := range cfg.SchedulingProfiles {
		pickers := 0
		for _, ref := range prof.Plugins {
			slot, ok := slots[ref.PluginRef]
			switch {
			case !ok:
				bad("profile %s: pluginRef %q names no plugin of the configuration", prof.Name, ref.PluginRef)
			case slot == slotScorer && (ref.Weight == nil || *ref.Weight <= 0):
				bad("profile %s: scorer %s needs a weight above 0 (its share of the choice)", prof.Name, ref.PluginRef)
			case slot == slotPicker:
				pickers++
			case slot != slotScorer && slot != slotPicker:
				bad("profile %s: pluginRef %s is a %s, not a scheduling plugin", prof.Name, ref.PluginRef, slot)
			}
		}
		if pickers != 1 {
			bad("profile %s: %d picker(s), want one to choose among the scored pods", prof.Name, pickers)
		}
	}
	handlers := 0
	for _, slot := range slots {
		if slot == slotHandler {
			handlers++
		}
	}
	if len(cfg.SchedulingProfiles) == 1 && handlers != 1 {
		bad("one profile wants one profile handler (single-profile-handler); got %d", handlers)
	}

	// The data layer: the metrics source feeds the extractor, and is the only one.
	if source == nil || extractor == nil {
		bad("plugins metrics-data-source and core-metrics-extractor are both needed to read the pods' gauges")
		return out
	}
	wired := false
	if cfg.DataLayer != nil {
		for _, s := range cfg.DataLayer.Sources {
			if slots[s.PluginRef] != slotSource {
				bad("dataLayer source pluginRef %q names no data source plugin", s.PluginRef)
			}
			for _, e := range s.Extractors {
				if slots[e.PluginRef] != slotExtractor {
					bad("dataLayer extractor pluginRef %q names no extractor plugin", e.PluginRef)
				}
				wired = wired || s.PluginRef == source.Name && e.PluginRef == extractor.Name
			}
		}
	}
	if !wired {
		bad("dataLayer.sources must feed %s to %s", source.Name, extractor.Name)
	}
	inject := cfg.DataLayer == nil || cfg.DataLayer.InjectDefaults == nil || *cfg.DataLayer.InjectDefaults
	if inject && source.Name != "metrics-data-source" {
		bad("the source is named %s: the router then adds its default metrics-data-source, which reads vLLM's names, beside it (name it metrics-data-source, or set dataLayer.injectDefaults: false)", source.Name)
	}
	var sp metricsSourceParams
	if err := strictJSON(orEmpty(source.Parameters), &sp); err != nil {
		bad("plugin %s: parameters: %v", source.Name, err)
	}
	if sp.Scheme != "" && sp.Scheme != "http" {
		bad("plugin %s: scheme %q; the server serves plain HTTP", source.Name, sp.Scheme)
	}
	metricsPath := d.Spec.Template.Annotations["prometheus.io/path"]
	if p := cmp.Or(sp.Path, "/metrics"); p != metricsPath {
		bad("plugin %s: path %s, but the pods serve their metrics on %s (prometheus.io/path)", source.Name, p, metricsPath)
	}

	// The engine the pods are read as, as the extractor resolves it.
	var xp metricsExtractorParams
	if err := strictJSON(orEmpty(extractor.Parameters), &xp); err != nil {
		bad("plugin %s: parameters: %v", extractor.Name, err)
		return out
	}
	labelKey := cmp.Or(xp.EngineLabelKey, defaultEngineLabelKey)
	engines := map[string]engineConfig{}
	for _, e := range xp.EngineConfigs {
		if e.Name == "" {
			bad("plugin %s: an engine config without a name", extractor.Name)
		}
		if _, dup := engines[e.Name]; dup {
			bad("plugin %s: two engine configs named %s", extractor.Name, e.Name)
		}
		engines[e.Name] = e
	}
	def := cmp.Or(xp.DefaultEngine, defaultEngine)
	if _, ok := engines[def]; !ok && !slices.Contains(builtinEngines, def) {
		bad("plugin %s: defaultEngine %q is neither configured nor built in; the router refuses it", extractor.Name, def)
	}
	engine, labelled := d.Spec.Template.Labels[labelKey]
	if !labelled {
		engine = def
	}
	cfgEngine, ok := engines[engine]
	if !ok {
		how := fmt.Sprintf("labelled %s=%s", labelKey, engine)
		if !labelled {
			how = fmt.Sprintf("without the label %s, so read as defaultEngine %s", labelKey, def)
		}
		bad("the Deployment's pods are %s, and no engine config here has that name: the picker would look for other metric names than the server's", how)
		return out
	}

	// Its specs: one series each, of the gauge the server exports for that question, for the
	// model the pods serve.
	model := srv.generateModel
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == "SLUICE_GENERATE_MODEL" {
				model = e.Value
			}
		}
	}
	if model == "" || model == "none" {
		bad("the pods serve no generation model (SLUICE_GENERATE_MODEL=%q): the picker has nothing to read", model)
	}
	specs := map[string]string{
		"queuedRequestsSpec":  cfgEngine.QueuedRequestsSpec,
		"runningRequestsSpec": cfgEngine.RunningRequestsSpec,
		"kvUsageSpec":         cfgEngine.KVUsageSpec,
	}
	for _, g := range pickerGauges {
		where := fmt.Sprintf("engine %s: %s %q", engine, g.field, specs[g.field])
		name, sel, err := parseMetricSpec(specs[g.field])
		if err != nil {
			bad("%s: %v", where, err)
			continue
		}
		f, exported := families[name]
		switch {
		case !exported:
			bad("%s: the server exports no family %s (docs/METRICS.md's table)", where, name)
			continue
		case f.kind != "gauge":
			bad("%s: %s is a %s; the picker reads a gauge's value", where, name, f.kind)
		case name != g.family:
			bad("%s: the server's answer to this is %s, not %s", where, g.family, name)
		}
		for l := range sel {
			if !slices.Contains(f.labels, l) {
				bad("%s: %s has no label %s (its labels: %v)", where, name, l, f.labels)
			}
		}
		if sel["queue"] != model {
			bad("%s: select the generation model's series, queue=%q: a pod exports one per model, and the picker keeps one", where, model)
		}
	}
	if f, ok := families[pickerGauges[2].family]; ok && !strings.Contains(f.meaning, "0 to 1") {
		bad("docs/METRICS.md no longer says %s is 0 to 1, the range the KV cache scorer expects", f.name)
	}
	for field, spec := range map[string]string{"loraSpec": cfgEngine.LoRASpec, "cacheInfoSpec": cfgEngine.CacheInfoSpec} {
		if spec != "" {
			bad("engine %s: %s %q: the server exports no such gauge; leave it empty", engine, field, spec)
		}
	}
	return out
}

var (
	metricSpec  = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?$`)
	specMatcher = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*(?:"([^"]*)"|([^",}\s]+))\s*$`)
)

// parseMetricSpec reads the router's metric spec, a PromQL selector of equality matchers:
// name, or name{label="value",...} (the quotes optional).
func parseMetricSpec(spec string) (string, map[string]string, error) {
	m := metricSpec.FindStringSubmatch(strings.TrimSpace(spec))
	if m == nil {
		return "", nil, fmt.Errorf("not a metric name with an optional {label=value,...}")
	}
	sel := map[string]string{}
	if strings.TrimSpace(m[2]) != "" {
		for _, part := range strings.Split(m[2], ",") {
			kv := specMatcher.FindStringSubmatch(part)
			if kv == nil {
				return "", nil, fmt.Errorf("matcher %q: only label=value is read", part)
			}
			if _, dup := sel[kv[1]]; dup {
				return "", nil, fmt.Errorf("label %s twice", kv[1])
			}
			sel[kv[1]] = kv[2] + kv[3]
		}
	}
	return m[1], sel, nil
}

func orEmpty(raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}")
	}
	return raw
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
