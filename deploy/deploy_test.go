package deploy

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The files checked, relative to this package's directory (go test runs there).
const (
	dockerfilePath = "../Dockerfile.gpu"
	fetchORTPath   = "../scripts/fetch-onnxruntime.sh"
	metricsPath    = "../docs/METRICS.md"
	serveConfig    = "../cmd/serve/config.go"
	serveMain      = "../cmd/serve/main.go"
	dashboardPath  = "grafana/sluice.json"
)

// The routes the probes must use: /livez answers while the process serves HTTP at all,
// /readyz only once the models are warm and while the decoder keeps stepping.
const (
	livePath  = "/livez"
	readyPath = "/readyz"
)

// minStartupBudgetS is the least time the startup probe must give a pod before it is
// restarted: CUDA initialisation, loading three models and warming them up on a GPU take tens
// of seconds, and a restart in the middle would only start them over.
const minStartupBudgetS = 120

// ---- the image ------------------------------------------------------------------------------

// image is what the manifests rely on from the final stage of Dockerfile.gpu.
type image struct {
	uid, gid   int64
	hasGID     bool
	env        map[string]string
	ortVersion string
}

// stage is one FROM and the instructions under it.
type stage struct {
	name, base string
	from       *parser.Node
	body       []*parser.Node
}

// TestDockerfileGPU holds Dockerfile.gpu to the rules of lintDockerfile.
func TestDockerfileGPU(t *testing.T) {
	src, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	img, problems := lintDockerfile(src, fetchORTVersion(t))
	for _, p := range problems {
		t.Errorf("%s: %s", dockerfilePath, p)
	}
	if img.uid == 0 {
		t.Fatalf("%s: no non-root USER found in the final stage", dockerfilePath)
	}
}

// TestDockerfileRulesCatchMistakes breaks a good Dockerfile one rule at a time, so that a
// rule that has stopped looking is noticed.
func TestDockerfileRulesCatchMistakes(t *testing.T) {
	good, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	ort := fetchORTVersion(t)
	if _, problems := lintDockerfile(good, ort); len(problems) != 0 {
		t.Fatalf("the Dockerfile under test must pass first: %v", problems)
	}
	cases := []struct {
		name, old, new, want string
	}{
		{"latest tag", "FROM golang:1.26.8-bookworm AS build", "FROM golang:latest AS build", "latest"},
		{"untagged base", "FROM golang:1.26.8-bookworm AS ort", "FROM golang AS ort", "no tag"},
		{"floating tag", "FROM nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04 AS runtime", "FROM nvidia/cuda:13-cudnn-runtime AS runtime", "floating"},
		{"base from an ARG", "FROM nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04 AS runtime", "ARG BASE=nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04\nFROM ${BASE} AS runtime", "ARG"},
		{"root user", "USER 10001:10001", "USER 0", "root"},
		{"named user", "USER 10001:10001", "USER sluice", "numeric"},
		{"cpu device", "ENV SLUICE_DEVICE=cuda", "ENV SLUICE_DEVICE=auto", "SLUICE_DEVICE"},
		{"health check elsewhere", "http://127.0.0.1:8080/readyz", "http://127.0.0.1:8080/livez", "/readyz"},
		{"no stop signal", "STOPSIGNAL SIGTERM", "", "STOPSIGNAL"},
		{"other port", "EXPOSE 8080", "EXPOSE 9090", "EXPOSE"},
		{"no data directory", "    SLUICE_ADDR=:8080 \\\n    SLUICE_DATA_DIR=/var/lib/sluice", "    SLUICE_ADDR=:8080", "SLUICE_DATA_DIR"},
		{"data directory not the user's", "install -d -o 10001 -g 10001 -m 0750 /var/lib/sluice", "mkdir -p /var/lib/sluice", "SLUICE_DATA_DIR"},
		{"shell form", `ENTRYPOINT ["/usr/local/bin/sluice"]`, "ENTRYPOINT /usr/local/bin/sluice", "exec form"},
		{"two processes", `ENTRYPOINT ["/usr/local/bin/sluice"]`, "ENTRYPOINT [\"/usr/local/bin/sluice\"]\nCMD [\"--help\"]", "one"},
		{"other ORT", "ARG ORT_VERSION=1.29.0", "ARG ORT_VERSION=1.30.0", "fetch-onnxruntime"},
		{"checksum with a default", "ARG ORT_SHA256\n", "ARG ORT_SHA256=0000\n", "ORT_SHA256"},
		{"no stripping", `-ldflags "-s -w -X main.version=${VERSION}"`, `-ldflags "-X main.version=${VERSION}"`, "-s -w"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Contains(good, []byte(c.old)) {
				t.Fatalf("the Dockerfile no longer contains %q: update this case", c.old)
			}
			bad := bytes.Replace(good, []byte(c.old), []byte(c.new), 1)
			_, problems := lintDockerfile(bad, ort)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("no problem mentioning %q reported; got %q", c.want, problems)
			}
		})
	}
}

// lintDockerfile parses a Dockerfile with BuildKit's parser and returns the final stage's
// facts and every rule it breaks.
func lintDockerfile(src []byte, ortVersion string) (image, []string) {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	res, err := parser.Parse(bytes.NewReader(src))
	if err != nil {
		return image{}, []string{"parse: " + err.Error()}
	}
	for _, w := range res.Warnings {
		bad("parser warning: %s", w.Short)
	}

	var stages []*stage
	global := map[string]string{} // ARGs before the first FROM
	for _, n := range res.AST.Children {
		n.Value = strings.ToLower(n.Value) // instructions are case-insensitive; the parser keeps their case
		if n.Value == "from" {
			s := &stage{from: n}
			args := words(n)
			if len(args) > 0 {
				s.base = args[0]
			}
			if len(args) == 3 && strings.EqualFold(args[1], "as") {
				s.name = args[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if n.Value == "arg" {
				for _, w := range words(n) {
					k, v, _ := strings.Cut(w, "=")
					global[k] = v
				}
			}
			continue
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, n)
	}
	if len(stages) < 2 {
		bad("a multi-stage build is expected (a build stage and a runtime stage); found %d stage(s)", len(stages))
		if len(stages) == 0 {
			return image{}, problems
		}
	}

	// Every base is an exact release, so that a rebuild gets the same toolchain and CUDA.
	names := map[string]bool{}
	for _, s := range stages {
		if !names[s.base] {
			if p := pinProblem(s.base); p != "" {
				bad("line %d: FROM %s: %s", s.from.StartLine, s.base, p)
			}
		}
		if s.name != "" {
			names[s.name] = true
		}
	}

	// The build stage: a stripped, trimmed cgo build of cmd/serve with the version stamped.
	var build *stage
	for _, s := range stages {
		for _, n := range s.body {
			if n.Value == "run" && strings.Contains(n.Original, "go build") && strings.Contains(n.Original, "./cmd/serve") {
				build = s
				for _, flag := range []string{"-trimpath", "-s -w", "-X main.version="} {
					if !strings.Contains(n.Original, flag) {
						bad("line %d: go build without %s", n.StartLine, flag)
					}
				}
			}
		}
	}
	final := stages[len(stages)-1]
	switch {
	case build == nil:
		bad("no stage runs go build of ./cmd/serve")
	case build == final:
		bad("the final stage is the build stage: the Go toolchain would ship in the image")
	default:
		if env := stageEnv(stages, build); env["CGO_ENABLED"] != "1" {
			bad("the build stage must set CGO_ENABLED=1 (the ONNX Runtime binding is cgo)")
		}
		if !slices.ContainsFunc(final.body, func(n *parser.Node) bool {
			return n.Value == "copy" && slices.Contains(n.Flags, "--from="+build.name)
		}) {
			bad("the final stage copies nothing from the build stage %q", build.name)
		}
	}

	// ONNX Runtime: the version the CPU build uses, from a checksum the builder supplies.
	img := image{env: stageEnv(stages, final)}
	var shaHasDefault, shaDeclared, shaChecked bool
	for _, s := range stages {
		for _, n := range s.body {
			switch n.Value {
			case "arg":
				for _, w := range words(n) {
					k, v, hasValue := strings.Cut(w, "=")
					switch k {
					case "ORT_VERSION":
						img.ortVersion = v
					case "ORT_SHA256":
						shaDeclared, shaHasDefault = true, hasValue
					}
				}
			case "run":
				if strings.Contains(n.Original, "sha256sum") && strings.Contains(n.Original, "ORT_SHA256") {
					shaChecked = true
				}
			}
		}
	}
	if img.ortVersion == "" {
		if v, ok := global["ORT_VERSION"]; ok {
			img.ortVersion = v
		}
	}
	if img.ortVersion != ortVersion {
		bad("ARG ORT_VERSION is %q, but scripts/fetch-onnxruntime.sh pins %q for its CUDA stack: the GPU image must use the release the checked CUDA provider is built for", img.ortVersion, ortVersion)
	}
	if !shaDeclared || shaHasDefault || !shaChecked {
		bad("ARG ORT_SHA256 must be declared without a default and checked with sha256sum, so that the builder supplies the checksum")
	}
	for _, lib := range []string{"libonnxruntime.so.1", "libonnxruntime_providers_shared.so", "libonnxruntime_providers_cuda.so"} {
		if !bytes.Contains(src, []byte(lib)) {
			bad("%s is not copied into the image", lib)
		}
	}

	// The final stage.
	count := map[string][]*parser.Node{}
	for _, n := range final.body {
		count[n.Value] = append(count[n.Value], n)
	}
	if us := count["user"]; len(us) == 0 {
		bad("the final stage has no USER: the server would run as root")
	} else {
		u := words(us[len(us)-1])
		uid, gid, hasGID, err := numericUser(strings.Join(u, " "))
		switch {
		case err != nil:
			bad("USER %s: %v (Kubernetes can verify runAsNonRoot only for a numeric user)", strings.Join(u, " "), err)
		case uid == 0:
			bad("USER %s is root", strings.Join(u, " "))
		default:
			img.uid, img.gid, img.hasGID = uid, gid, hasGID
		}
	}
	if img.env["SLUICE_DEVICE"] != "cuda" {
		bad("the final stage must set SLUICE_DEVICE=cuda (got %q): a GPU image that falls back to the CPU hides a broken CUDA setup", img.env["SLUICE_DEVICE"])
	}
	if lib := img.env["SLUICE_ORT_LIB"]; lib == "" {
		bad("the final stage must set SLUICE_ORT_LIB")
	} else if !slices.ContainsFunc(final.body, func(n *parser.Node) bool {
		w := words(n)
		return n.Value == "copy" && len(w) > 0 && strings.TrimSuffix(w[len(w)-1], "/") == path.Dir(lib)
	}) {
		bad("SLUICE_ORT_LIB=%s, but nothing is copied into %s", lib, path.Dir(lib))
	}
	// The embedded NATS server's store must be writable by the USER: the default, relative to
	// a working directory of /, is not.
	if dir := img.env["SLUICE_DATA_DIR"]; !path.IsAbs(dir) {
		bad("the final stage must set SLUICE_DATA_DIR to an absolute directory the USER owns (got %q)", dir)
	} else if !slices.ContainsFunc(count["run"], func(n *parser.Node) bool {
		return strings.Contains(n.Original, dir) && strings.Contains(n.Original, "-o "+strconv.FormatInt(img.uid, 10))
	}) {
		bad("SLUICE_DATA_DIR=%s, but no RUN of the final stage makes it owned by the USER (install -d -o %d)", dir, img.uid)
	}
	port, err := addrPort(img.env["SLUICE_ADDR"])
	if err != nil {
		bad("SLUICE_ADDR: %v", err)
	}
	if ex := count["expose"]; len(ex) != 1 || !(slices.Contains(words(ex[0]), strconv.Itoa(port)) || slices.Contains(words(ex[0]), strconv.Itoa(port)+"/tcp")) {
		bad("the final stage must EXPOSE the port of SLUICE_ADDR (%d), once", port)
	}
	if hc := count["healthcheck"]; len(hc) != 1 {
		bad("the final stage must have one HEALTHCHECK")
	} else {
		w := words(hc[0])
		want := fmt.Sprintf(":%d%s", port, readyPath)
		if len(w) < 2 || !strings.EqualFold(w[0], "CMD") || !slices.ContainsFunc(w[1:], func(a string) bool { return strings.Contains(a, want) }) {
			bad("HEALTHCHECK must run a command on %s (port %d): got %q", readyPath, port, w)
		}
	}
	if ss := count["stopsignal"]; len(ss) != 1 || !slices.Equal(words(ss[0]), []string{"SIGTERM"}) {
		bad("the final stage must have STOPSIGNAL SIGTERM, the signal the server drains on")
	}
	procs := append(slices.Clone(count["entrypoint"]), count["cmd"]...)
	if len(procs) != 1 {
		bad("the final stage must start one process with exactly one ENTRYPOINT or CMD; found %d", len(procs))
	}
	for _, n := range procs {
		if !n.Attributes["json"] {
			bad("line %d: %s must be in exec form (a JSON array), so the server is PID 1 and gets the stop signal", n.StartLine, strings.ToUpper(n.Value))
		}
	}
	return img, problems
}

var (
	// A tag that names one release: a full major.minor.patch, or a date stamp.
	exactTag = regexp.MustCompile(`(^|[^0-9.])\d+\.\d+\.\d+([^0-9.]|$)|\d{8}`)
	digest   = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
)

// pinProblem says why an image reference is not pinned, or "" when it is.
func pinProblem(ref string) string {
	if strings.Contains(ref, "$") {
		return "the base image comes from an ARG, so nothing pins it"
	}
	if ref == "scratch" {
		return ""
	}
	if digest.MatchString(ref) {
		return ""
	}
	repo := ref[strings.LastIndex(ref, "/")+1:]
	_, tag, ok := strings.Cut(repo, ":")
	switch {
	case !ok || tag == "":
		return "no tag: it means latest"
	case tag == "latest":
		return "the latest tag moves"
	case !exactTag.MatchString(tag):
		return "the tag " + tag + " is floating: name a full version (1.2.3) or a date"
	}
	return ""
}

// stageEnv is the environment a stage's instructions see: its own ENV over those of the
// stages it is built FROM.
func stageEnv(stages []*stage, s *stage) map[string]string {
	env := map[string]string{}
	for _, p := range stages {
		if p != s && p.name != "" && p.name == s.base {
			env = stageEnv(stages, p)
		}
	}
	for _, n := range s.body {
		if n.Value != "env" {
			continue
		}
		// ENV nodes are triples: name, value, separator.
		for k := n.Next; k != nil && k.Next != nil; {
			env[k.Value] = unquote(k.Next.Value)
			if k = k.Next.Next; k != nil {
				k = k.Next
			}
		}
	}
	return env
}

// words is an instruction's arguments.
func words(n *parser.Node) []string {
	var w []string
	for a := n.Next; a != nil; a = a.Next {
		w = append(w, a.Value)
	}
	return w
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return strings.Trim(s, "'")
}

func numericUser(u string) (uid, gid int64, hasGID bool, err error) {
	user, group, hasGID := strings.Cut(u, ":")
	if uid, err = strconv.ParseInt(user, 10, 64); err != nil {
		return 0, 0, false, fmt.Errorf("the user %q is not numeric", user)
	}
	if hasGID {
		if gid, err = strconv.ParseInt(group, 10, 64); err != nil {
			return 0, 0, false, fmt.Errorf("the group %q is not numeric", group)
		}
	}
	return uid, gid, hasGID, nil
}

func addrPort(addr string) (int, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(p)
}

// fetchORTVersion is the ONNX Runtime release of the CUDA stack scripts/fetch-onnxruntime.sh
// pins (--cuda): the one the GPU image must use.
func fetchORTVersion(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(fetchORTPath)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CUDA_ORT_VERSION="([^"]+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s: no CUDA_ORT_VERSION=\"...\" line", fetchORTPath)
	}
	return string(m[1])
}

// ---- the manifests --------------------------------------------------------------------------

// manifests is every object of the YAML files here, one of each kind.
type manifests struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	pdb        *policyv1.PodDisruptionBudget
	hpa        *autoscalingv2.HorizontalPodAutoscaler
}

// TestManifests decodes the manifests and checks them against each other, the image and the
// server.
func TestManifests(t *testing.T) {
	m := loadManifests(t)
	img := loadImage(t)
	for _, p := range manifestProblems(m, img, readServer(t), readMetricFamilies(t)) {
		t.Error(p)
	}
}

// TestManifestRulesCatchMistakes breaks the manifests one field at a time.
func TestManifestRulesCatchMistakes(t *testing.T) {
	img := loadImage(t)
	srv := readServer(t)
	families := readMetricFamilies(t)
	if p := manifestProblems(loadManifests(t), img, srv, families); len(p) != 0 {
		t.Fatalf("the manifests under test must pass first: %v", p)
	}
	container := func(m manifests) *corev1.Container { return &m.deployment.Spec.Template.Spec.Containers[0] }
	cases := []struct {
		name   string
		mutate func(m manifests)
		want   string
	}{
		{"no GPU", func(m manifests) { delete(container(m).Resources.Limits, "nvidia.com/gpu") }, "nvidia.com/gpu"},
		{"liveness on readyz", func(m manifests) { container(m).LivenessProbe.HTTPGet.Path = readyPath }, "livenessProbe"},
		{"readiness on another port", func(m manifests) {
			container(m).ReadinessProbe.HTTPGet.Port = intstr.FromInt32(9090)
		}, "readinessProbe"},
		{"short startup", func(m manifests) { container(m).StartupProbe.FailureThreshold = 3 }, "startupProbe"},
		{"grace equal to the shutdown", func(m manifests) {
			g := int64(srv.shutdownS)
			m.deployment.Spec.Template.Spec.TerminationGracePeriodSeconds = &g
		}, "terminationGracePeriodSeconds"},
		{"no room to flush", func(m manifests) {
			g := int64(5 + srv.shutdownS + 1) // the preStop pause, the grace, the answer window
			m.deployment.Spec.Template.Spec.TerminationGracePeriodSeconds = &g
		}, "terminationGracePeriodSeconds"},
		{"longer shutdown", func(m manifests) { setEnv(container(m), "SLUICE_SHUTDOWN_TIMEOUT_S", "60") }, "terminationGracePeriodSeconds"},
		{"no preStop", func(m manifests) { container(m).Lifecycle = nil }, "preStop"},
		{"other UID", func(m manifests) {
			u := img.uid + 1
			m.deployment.Spec.Template.Spec.SecurityContext.RunAsUser = &u
		}, "runAsUser"},
		{"root allowed", func(m manifests) {
			f := false
			m.deployment.Spec.Template.Spec.SecurityContext.RunAsNonRoot = &f
		}, "runAsNonRoot"},
		{"CPU device", func(m manifests) { setEnv(container(m), "SLUICE_DEVICE", "auto") }, "SLUICE_DEVICE"},
		{"jobs on each pod's own store", func(m manifests) { setEnv(container(m), "SLUICE_JOBS", "true") }, "SLUICE_JOBS"},
		{"service selects nothing", func(m manifests) { m.service.Spec.Selector["app.kubernetes.io/name"] = "other" }, "Service"},
		{"service to another port", func(m manifests) { m.service.Spec.Ports[0].TargetPort = intstr.FromString("metrics") }, "targetPort"},
		{"PDB selects nothing", func(m manifests) { m.pdb.Spec.Selector.MatchLabels["app.kubernetes.io/name"] = "other" }, "PodDisruptionBudget"},
		{"HPA on another deployment", func(m manifests) { m.hpa.Spec.ScaleTargetRef.Name = "other" }, "scaleTargetRef"},
		{"HPA on an unknown metric", func(m manifests) { m.hpa.Spec.Metrics[0].Pods.Metric.Name = "sluice_queue_length" }, "sluice_queue_length"},
		{"scrape elsewhere", func(m manifests) { m.deployment.Spec.Template.Annotations["prometheus.io/port"] = "9090" }, "prometheus.io/port"},
		{"service links", func(m manifests) {
			t := true
			m.deployment.Spec.Template.Spec.EnableServiceLinks = &t
		}, "enableServiceLinks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := loadManifests(t)
			c.mutate(m)
			problems := manifestProblems(m, img, srv, families)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("no problem mentioning %q reported; got %q", c.want, problems)
			}
		})
	}
}

func setEnv(c *corev1.Container, name, value string) {
	for i := range c.Env {
		if c.Env[i].Name == name {
			c.Env[i].Value = value
			return
		}
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: name, Value: value})
}

// loadManifests strictly decodes every YAML document under this directory into the
// Kubernetes API's types: an unknown or duplicated field, or a kind this package does not
// expect, fails.
func loadManifests(t *testing.T) manifests {
	t.Helper()
	decoder := strictDecoder(t)
	var m manifests
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (p == routingDir || p == stateDir) {
			return fs.SkipDir // decoded by routing_test.go, epp_test.go and state_test.go
		}
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no YAML files found")
	}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		decodeEach(t, decoder, file, f, func(obj runtime.Object, kind string) {
			dup := func() { t.Fatalf("%s: a second %s; the checks expect one of each kind", file, kind) }
			switch o := obj.(type) {
			case *appsv1.Deployment:
				if m.deployment != nil {
					dup()
				}
				m.deployment = o
			case *corev1.Service:
				if m.service != nil {
					dup()
				}
				m.service = o
			case *policyv1.PodDisruptionBudget:
				if m.pdb != nil {
					dup()
				}
				m.pdb = o
			case *autoscalingv2.HorizontalPodAutoscaler:
				if m.hpa != nil {
					dup()
				}
				m.hpa = o
			default:
				t.Fatalf("%s: %s is not checked by this package", file, kind)
			}
		})
		f.Close()
	}
	if m.deployment == nil || m.service == nil || m.pdb == nil || m.hpa == nil {
		t.Fatalf("expected a Deployment, a Service, a PodDisruptionBudget and a HorizontalPodAutoscaler; got %+v", m)
	}
	return m
}

// strictDecoder decodes the kinds of this directory and fails on unknown and duplicated
// fields, which Kubernetes itself would drop with a warning at most.
func strictDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, corev1.AddToScheme, policyv1.AddToScheme, autoscalingv2.AddToScheme,
		networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}

// decodeEach strictly decodes each document of one YAML file (blank ones skipped) and hands
// it to use with its kind; any error fails the test, naming the file.
func decodeEach(t *testing.T, decoder runtime.Decoder, file string, src io.Reader, use func(obj runtime.Object, kind string)) {
	t.Helper()
	docs := utilyaml.NewYAMLReader(bufio.NewReader(src))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if isBlankYAML(doc) {
			continue
		}
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		use(obj, gvk.Kind)
	}
}

// isBlankYAML reports a document with nothing but comments and whitespace, as a file that
// begins with "---" yields.
func isBlankYAML(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") && l != "---" {
			return false
		}
	}
	return true
}

// envRef is a reference to another variable in a container's env value, $(NAME), which
// Kubernetes expands ($$ escapes it).
var envRef = regexp.MustCompile(`(?:^|[^$])\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// manifestProblems checks the objects against each other, the image and the server.
func manifestProblems(m manifests, img image, srv server, families map[string]family) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	d := m.deployment
	pod := d.Spec.Template.Spec
	podLabels := labels.Set(d.Spec.Template.Labels)
	if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil || sel.Empty() || !sel.Matches(podLabels) {
		bad("Deployment %s: its selector does not select its own pod template", d.Name)
	}
	if d.Spec.Replicas != nil {
		bad("Deployment %s sets replicas, which every apply would reset under the HPA", d.Name)
	}
	if len(pod.Containers) != 1 {
		bad("Deployment %s: one container expected, got %d", d.Name, len(pod.Containers))
		return problems
	}
	c := pod.Containers[0]
	if p := pinProblem(c.Image); p != "" {
		bad("container %s: image %s: %s", c.Name, c.Image, p)
	}

	// What the server will read: the image's environment under the container's.
	env := map[string]string{}
	for k, v := range img.env {
		env[k] = v
	}
	listed := map[string]bool{}
	for _, e := range c.Env {
		// A secret the server does not read itself (a password a URL writes in) may come
		// from elsewhere; a setting's value must be here for these checks.
		if e.ValueFrom != nil && strings.HasPrefix(e.Name, "SLUICE_") {
			bad("container %s: %s comes from elsewhere; these checks need its value here", c.Name, e.Name)
		}
		// Kubernetes writes $(NAME) in only from a variable listed before; otherwise the
		// text stays as it is (a password of "$(NATS_PASSWORD)").
		for _, ref := range envRef.FindAllStringSubmatch(e.Value, -1) {
			if !listed[ref[1]] {
				bad("container %s: %s refers to $(%s), which is not listed before it: Kubernetes would leave it as text", c.Name, e.Name, ref[1])
			}
		}
		listed[e.Name] = true
		env[e.Name] = e.Value
	}
	if env["SLUICE_DEVICE"] != "cuda" {
		bad("container %s: SLUICE_DEVICE is %q; a GPU pod must fail rather than serve on the CPU", c.Name, env["SLUICE_DEVICE"])
	}
	// Jobs live in NATS: on each pod's own embedded server a job created on one pod is a 404
	// on the others, and without a key its texts lie unsealed in the cluster's memory.
	if on, _ := strconv.ParseBool(cmp.Or(env["SLUICE_JOBS"], "true")); on && (env["SLUICE_NATS_URL"] == "" || env["SLUICE_JOBS_KEY_FILE"] == "") {
		bad("container %s: SLUICE_JOBS is on without SLUICE_NATS_URL and SLUICE_JOBS_KEY_FILE: a fleet's jobs need a shared store and a key", c.Name)
	}
	port, err := addrPort(env["SLUICE_ADDR"])
	if err != nil {
		bad("container %s: SLUICE_ADDR %q: %v", c.Name, env["SLUICE_ADDR"], err)
	}
	var portName string
	for _, p := range c.Ports {
		if int(p.ContainerPort) == port {
			portName = p.Name
		}
	}
	if portName == "" && port != 0 {
		bad("container %s lists no containerPort %d, the port of SLUICE_ADDR", c.Name, port)
	}
	// servesOn reports whether a probe's or Service's port reaches the server.
	servesOn := func(p intstr.IntOrString) bool {
		if p.Type == intstr.String {
			return p.StrVal != "" && p.StrVal == portName
		}
		return int(p.IntVal) == port
	}

	// GPU and the other resources.
	gpu := corev1.ResourceName("nvidia.com/gpu")
	if q, ok := c.Resources.Limits[gpu]; !ok || q.Value() < 1 {
		bad("container %s has no nvidia.com/gpu limit", c.Name)
	} else if r, ok := c.Resources.Requests[gpu]; ok && r.Cmp(q) != 0 {
		bad("container %s: an nvidia.com/gpu request must equal its limit", c.Name)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[r]; !ok {
			bad("container %s requests no %s: the scheduler would place it blind", c.Name, r)
		}
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		bad("container %s has no memory limit (the server sizes its KV cache and batch budget by it)", c.Name)
	}

	// Probes.
	probe := func(name string, p *corev1.Probe, paths ...string) {
		switch {
		case p == nil:
			bad("container %s has no %s", c.Name, name)
		case p.HTTPGet == nil:
			bad("container %s: %s must be an httpGet", c.Name, name)
		case !slices.Contains(paths, p.HTTPGet.Path):
			bad("container %s: %s asks %s, want %s", c.Name, name, p.HTTPGet.Path, strings.Join(paths, " or "))
		case !servesOn(p.HTTPGet.Port):
			bad("container %s: %s asks port %s, not the server's (%d)", c.Name, name, p.HTTPGet.Port.String(), port)
		}
	}
	probe("livenessProbe", c.LivenessProbe, livePath)
	probe("readinessProbe", c.ReadinessProbe, readyPath)
	probe("startupProbe", c.StartupProbe, livePath, readyPath)
	if s := c.StartupProbe; s != nil {
		if budget := s.FailureThreshold * s.PeriodSeconds; budget < minStartupBudgetS {
			bad("container %s: the startupProbe allows %d s (failureThreshold x periodSeconds) for CUDA start and warm-up; want at least %d", c.Name, budget, minStartupBudgetS)
		}
	}

	// Shutdown: the preStop pause, then SIGTERM, the server's grace and its answer window,
	// all within the pod's termination grace.
	shutdownS := srv.shutdownS
	if v, ok := env["SLUICE_SHUTDOWN_TIMEOUT_S"]; ok {
		if shutdownS, err = strconv.Atoi(v); err != nil {
			bad("container %s: SLUICE_SHUTDOWN_TIMEOUT_S=%q is not a number", c.Name, v)
		}
	}
	preStopS, err := preStopSeconds(c.Lifecycle)
	if err != nil {
		bad("container %s: %v", c.Name, err)
	}
	needMS := int64(shutdownS+preStopS)*1000 + int64(srv.answerWindowMS+srv.flushWindowMS)
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if pod.TerminationGracePeriodSeconds != nil {
		grace = *pod.TerminationGracePeriodSeconds
	}
	if grace*1000 <= needMS {
		bad("terminationGracePeriodSeconds %d must exceed the preStop pause (%d s) + SLUICE_SHUTDOWN_TIMEOUT_S (%d s) + the server's answer window (%d ms) and flush window (%d ms)",
			grace, preStopS, shutdownS, srv.answerWindowMS, srv.flushWindowMS)
	}

	// Identity and privileges.
	psc := pod.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	csc := c.SecurityContext
	if csc == nil {
		csc = &corev1.SecurityContext{}
	}
	if !isTrue(firstBool(csc.RunAsNonRoot, psc.RunAsNonRoot)) {
		bad("container %s: runAsNonRoot must be true", c.Name)
	}
	if u := firstInt(csc.RunAsUser, psc.RunAsUser); u == nil || *u != img.uid {
		bad("container %s: runAsUser must be %d, the USER of Dockerfile.gpu (got %v)", c.Name, img.uid, deref(u))
	}
	if g := firstInt(csc.RunAsGroup, psc.RunAsGroup); img.hasGID && (g == nil || *g != img.gid) {
		bad("container %s: runAsGroup must be %d, the group of Dockerfile.gpu's USER (got %v)", c.Name, img.gid, deref(g))
	}
	if !isFalse(csc.AllowPrivilegeEscalation) {
		bad("container %s: allowPrivilegeEscalation must be false", c.Name)
	}
	if !isTrue(csc.ReadOnlyRootFilesystem) {
		bad("container %s: readOnlyRootFilesystem must be true (the server writes only to its volumes)", c.Name)
	}
	if csc.Capabilities == nil || !slices.Contains(csc.Capabilities.Drop, "ALL") {
		bad("container %s must drop ALL capabilities", c.Name)
	}

	// Scraping.
	ann := d.Spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" {
		bad("the pod template must carry prometheus.io/scrape \"true\" and prometheus.io/path /metrics")
	}
	if ann["prometheus.io/port"] != strconv.Itoa(port) {
		bad("prometheus.io/port is %q, the server listens on %d", ann["prometheus.io/port"], port)
	}

	// Service links put <SERVICE>_PORT, <SERVICE>_SERVICE_HOST, ... into the environment; a
	// Service named sluice would write into the server's own SLUICE_ settings.
	svc := m.service
	if prefix := strings.ToUpper(strings.ReplaceAll(svc.Name, "-", "_")) + "_"; prefix == "SLUICE_" && !isFalse(pod.EnableServiceLinks) {
		bad("the Service is named %s: enableServiceLinks must be false, or its variables land among the SLUICE_ settings", svc.Name)
	}

	// Service.
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
		bad("Service %s: its selector %v does not select the Deployment's pods %v", svc.Name, svc.Spec.Selector, d.Spec.Template.Labels)
	}
	if len(svc.Spec.Ports) == 0 {
		bad("Service %s has no ports", svc.Name)
	}
	for _, p := range svc.Spec.Ports {
		if !servesOn(p.TargetPort) {
			bad("Service %s: port %d has targetPort %s, not the server's port", svc.Name, p.Port, p.TargetPort.String())
		}
	}

	// PodDisruptionBudget.
	pdb := m.pdb
	if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil || sel.Empty() || !sel.Matches(podLabels) {
		bad("PodDisruptionBudget %s: its selector does not select the Deployment's pods", pdb.Name)
	}
	hpa := m.hpa
	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if pdb.Spec.MaxUnavailable.Type == intstr.Int && pdb.Spec.MaxUnavailable.IntVal < 1 {
			bad("PodDisruptionBudget %s: maxUnavailable below 1 blocks every drain", pdb.Name)
		}
	case pdb.Spec.MinAvailable != nil:
		if pdb.Spec.MinAvailable.Type == intstr.Int && pdb.Spec.MinAvailable.IntVal >= minReplicas {
			bad("PodDisruptionBudget %s: minAvailable %d with as few as %d pods blocks every drain", pdb.Name, pdb.Spec.MinAvailable.IntVal, minReplicas)
		}
	default:
		bad("PodDisruptionBudget %s sets neither maxUnavailable nor minAvailable", pdb.Name)
	}

	// HorizontalPodAutoscaler.
	ref := hpa.Spec.ScaleTargetRef
	if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || ref.Name != d.Name {
		bad("HorizontalPodAutoscaler %s: scaleTargetRef %s %s/%s is not Deployment %s", hpa.Name, ref.APIVersion, ref.Kind, ref.Name, d.Name)
	}
	if minReplicas > hpa.Spec.MaxReplicas {
		bad("HorizontalPodAutoscaler %s: minReplicas %d above maxReplicas %d", hpa.Name, minReplicas, hpa.Spec.MaxReplicas)
	}
	if len(hpa.Spec.Metrics) == 0 {
		bad("HorizontalPodAutoscaler %s has no metrics", hpa.Name)
	}
	for _, ms := range hpa.Spec.Metrics {
		var name string
		switch ms.Type {
		case autoscalingv2.PodsMetricSourceType:
			name = ms.Pods.Metric.Name
		case autoscalingv2.ObjectMetricSourceType:
			name = ms.Object.Metric.Name
		default:
			bad("HorizontalPodAutoscaler %s: a %s metric; it should scale on the server's own metrics", hpa.Name, ms.Type)
			continue
		}
		if _, ok := families[name]; !ok {
			bad("HorizontalPodAutoscaler %s: metric %s is not a family the server exports (docs/METRICS.md's table)", hpa.Name, name)
		}
	}
	return problems
}

// preStopSeconds is how long the preStop hook holds SIGTERM back: a sleep action, or an
// exec of sleep.
func preStopSeconds(l *corev1.Lifecycle) (int, error) {
	if l == nil || l.PreStop == nil {
		return 0, errors.New("no preStop hook: endpoints would still send requests to a pod that has stopped accepting them")
	}
	if s := l.PreStop.Sleep; s != nil {
		return int(s.Seconds), nil
	}
	if e := l.PreStop.Exec; e != nil {
		cmd := strings.Fields(strings.Join(e.Command, " "))
		for i, w := range cmd {
			if path.Base(w) == "sleep" && i+1 < len(cmd) {
				if n, err := strconv.ParseFloat(strings.Trim(cmd[i+1], `"'`), 64); err == nil {
					return int(math.Ceil(n)), nil
				}
			}
		}
	}
	return 0, errors.New("the preStop hook must be a sleep (action or exec) so its length is known")
}

func firstBool(ps ...*bool) *bool {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

func firstInt(ps ...*int64) *int64 {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

func isTrue(p *bool) bool  { return p != nil && *p }
func isFalse(p *bool) bool { return p != nil && !*p }

func deref(p *int64) any {
	if p == nil {
		return "unset"
	}
	return *p
}

// loadImage is the final stage of Dockerfile.gpu, which the manifests run.
func loadImage(t *testing.T) image {
	t.Helper()
	src, err := os.ReadFile(dockerfilePath)
	if err != nil {
		t.Fatal(err)
	}
	img, problems := lintDockerfile(src, fetchORTVersion(t))
	if img.uid == 0 {
		t.Fatalf("%s: no usable USER (%v)", dockerfilePath, problems)
	}
	return img
}

// server is what the manifests must fit from the server's own source.
type server struct {
	// shutdownS is SLUICE_SHUTDOWN_TIMEOUT_S's default.
	shutdownS int
	// answerWindowMS is how long the server takes, after its shutdown grace, to write the
	// answers the grace cut short; the pod must outlive that too.
	answerWindowMS int
	// flushWindowMS is how long, after that, the server gives its state to flush (the
	// audit's appends, NATS, jobs' webhooks, spans) before it exits by itself.
	flushWindowMS int
	// generateModel is SLUICE_GENERATE_MODEL's default: the queue label of the generation
	// gauges an endpoint picker reads.
	generateModel string
}

func readServer(t *testing.T) server {
	t.Helper()
	find := func(file, pattern string) int {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(pattern).FindSubmatch(src)
		if m == nil {
			t.Fatalf("%s: nothing matches %s; the server changed, update this test", file, pattern)
		}
		n, err := strconv.Atoi(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	src, err := os.ReadFile(serveConfig)
	if err != nil {
		t.Fatal(err)
	}
	model := regexp.MustCompile(`env:"GENERATE_MODEL" envDefault:"([^"]*)"`).FindSubmatch(src)
	if model == nil {
		t.Fatalf("%s: no GENERATE_MODEL setting; the server changed, update this test", serveConfig)
	}
	return server{
		shutdownS:      find(serveConfig, `env:"SHUTDOWN_TIMEOUT_S" envDefault:"(\d+)"`),
		answerWindowMS: find(serveMain, `(?m)^const answerWindow = (\d+) \* time\.Millisecond$`),
		flushWindowMS:  1000 * find(serveMain, `(?m)^const flushWindow = (\d+) \* time\.Second$`),
		generateModel:  string(model[1]),
	}
}

// ---- the metrics and the dashboard ----------------------------------------------------------

// family is a row of docs/METRICS.md's table.
type family struct {
	name, kind string
	labels     []string
	meaning    string
}

// readMetricFamilies is the table of docs/METRICS.md: what the server exports.
func readMetricFamilies(t *testing.T) map[string]family {
	t.Helper()
	f, err := os.Open(metricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	families := map[string]family{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "# "):
			in = line == "# Metrics"
		case in && strings.HasPrefix(line, "| `sluice_"):
			cells := strings.Split(line, "|")
			if len(cells) < 4 {
				t.Fatalf("%s: malformed metrics row %q", metricsPath, line)
			}
			name := strings.Trim(strings.TrimSpace(cells[1]), "`")
			kind := strings.TrimSpace(cells[2])
			if !slices.Contains([]string{"counter", "gauge", "histogram", "summary"}, kind) {
				t.Fatalf("%s: %s has type %q", metricsPath, name, kind)
			}
			var labels []string
			for _, l := range strings.Split(cells[3], ",") {
				if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
					labels = append(labels, l)
				}
			}
			var meaning string
			if len(cells) > 4 {
				meaning = strings.TrimSpace(cells[4])
			}
			families[name] = family{name: name, kind: kind, labels: labels, meaning: meaning}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(families) == 0 {
		t.Fatalf("%s: no sluice_ rows in the table under \"# Metrics\"", metricsPath)
	}
	return families
}

// familyOf maps a series name to the family that exports it: a histogram's _bucket, _sum
// and _count series belong to the histogram. The Go runtime and process collectors' families
// are standard and accepted by prefix.
func familyOf(series string, families map[string]family) (string, bool) {
	if strings.HasPrefix(series, "go_") || strings.HasPrefix(series, "process_") {
		return series, true
	}
	if _, ok := families[series]; ok {
		return series, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(series, suffix)
		if !ok {
			continue
		}
		if f, ok := families[base]; ok && (f.kind == "histogram" || f.kind == "summary" && suffix != "_bucket") {
			return base, true
		}
	}
	return "", false
}

// dashboard is the part of Grafana's dashboard model these checks read.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int     `json:"id"`
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // a collapsed row's
	Targets []struct {
		Expr  string `json:"expr"`
		RefID string `json:"refId"`
	} `json:"targets"`
}

// TestDashboardUsesTheServersMetrics holds the dashboard to the table of docs/METRICS.md.
func TestDashboardUsesTheServersMetrics(t *testing.T) {
	families := readMetricFamilies(t)
	src, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range dashboardProblems(src, families) {
		t.Errorf("%s: %s", dashboardPath, p)
	}
}

// TestDashboardRulesCatchMistakes changes one query of the dashboard at a time.
func TestDashboardRulesCatchMistakes(t *testing.T) {
	families := readMetricFamilies(t)
	good, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	if p := dashboardProblems(good, families); len(p) != 0 {
		t.Fatalf("the dashboard under test must pass first: %v", p)
	}
	cases := []struct{ name, old, new, want string }{
		{"a family the server does not export", "sluice_kvcache_evictions_total", "sluice_kvcache_evicted_total", "sluice_kvcache_evicted_total"},
		{"a family dropped from every panel", "rate(sluice_generate_preemptions_total", "rate(sluice_generate_tokens_total", "sluice_generate_preemptions_total"},
		{"a bucket of a counter", "sluice_batcher_batch_run_seconds_bucket", "sluice_batcher_batches_total_bucket", "sluice_batcher_batches_total_bucket"},
		{"an unknown metric in a variable", "label_values(sluice_http_requests_total, instance)", "label_values(http_requests_total, instance)", "http_requests_total"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Contains(good, []byte(c.old)) {
				t.Fatalf("the dashboard no longer contains %q: update this case", c.old)
			}
			bad := bytes.ReplaceAll(good, []byte(c.old), []byte(c.new))
			problems := dashboardProblems(bad, families)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("no problem mentioning %q reported; got %q", c.want, problems)
			}
		})
	}
}

var labelValues = regexp.MustCompile(`^\s*label_values\(\s*(?:(.+?)\s*,)?\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$`)

// dashboardProblems checks that every query names only series the server exports, and that
// every family the server exports is on some panel.
func dashboardProblems(src []byte, families map[string]family) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	var d dashboard
	if err := json.Unmarshal(src, &d); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	if d.UID == "" || d.Title == "" {
		bad("the dashboard needs a uid and a title")
	}
	used := map[string]bool{}
	check := func(where, expr string, count bool) {
		names, err := metricNames(expr)
		if err != nil {
			bad("%s: %v in %q", where, err, expr)
			return
		}
		if len(names) == 0 {
			bad("%s: the query %q reads no metric", where, expr)
		}
		for _, n := range names {
			f, ok := familyOf(n, families)
			if !ok {
				bad("%s: %s is not a series the server exports (docs/METRICS.md's table)", where, n)
				continue
			}
			if count {
				used[f] = true
			}
		}
	}

	ids := map[int]bool{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if ids[p.ID] {
				bad("panel id %d is used twice", p.ID)
			}
			ids[p.ID] = true
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if p.Title == "" {
				bad("panel %d has no title", p.ID)
			}
			if len(p.Targets) == 0 {
				bad("panel %q has no queries", p.Title)
			}
			for _, tg := range p.Targets {
				check(fmt.Sprintf("panel %q, query %s", p.Title, tg.RefID), tg.Expr, true)
			}
		}
	}
	walk(d.Panels)

	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// A query variable's query is a string, or an object holding it.
		var q string
		if err := json.Unmarshal(v.Query, &q); err != nil {
			var obj struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &obj); err != nil {
				bad("variable %s: unreadable query", v.Name)
				continue
			}
			q = obj.Query
		}
		m := labelValues.FindStringSubmatch(q)
		if m == nil || m[1] == "" {
			bad("variable %s: only label_values(<series>, <label>) is supported, got %q", v.Name, q)
			continue
		}
		check("variable "+v.Name, m[1], false)
	}

	var missing []string
	for name := range families {
		if !used[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		bad("no panel shows %s", name)
	}
	return problems
}

// PromQL words that are not metric names when they are not followed by "(".
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// Aggregation operators, which may be followed by their by or without clause instead of "(".
var promqlAggregations = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// Keywords followed by a parenthesised list of label names.
var promqlLabelLists = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// metricNames returns the metric names a PromQL expression selects, sorted and distinct. It
// is a lexer, not a parser: it skips strings, label matchers ({...}), ranges and subqueries
// ([...]), Grafana variables, numbers and durations, keywords, aggregation operators, function
// names (a word before "(") and the label lists of by, without, on, ignoring and group_*;
// every other word is a metric name. An expression that does not balance is an error.
func metricNames(expr string) ([]string, error) {
	seen := map[string]bool{}
	isStart := func(c byte) bool { return c == '_' || c == ':' || 'a' <= c|0x20 && c|0x20 <= 'z' }
	isPart := func(c byte) bool { return isStart(c) || '0' <= c && c <= '9' }
	// skipTo returns the index just past the byte that closes what opens at i, skipping
	// quoted strings on the way.
	skipTo := func(i int, open, close byte) (int, error) {
		depth := 0
		for j := i; j < len(expr); j++ {
			switch c := expr[j]; c {
			case '"', '\'', '`':
				end, err := skipString(expr, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case open:
				depth++
			case close:
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unbalanced %q", string(open))
	}
	nextNonSpace := func(i int) int {
		for i < len(expr) && strings.ContainsRune(" \t\r\n", rune(expr[i])) {
			i++
		}
		return i
	}
	parens := 0
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			end, err := skipString(expr, i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '{':
			end, err := skipTo(i, '{', '}')
			if err != nil {
				return nil, err
			}
			i = end
		case c == '[':
			end, err := skipTo(i, '[', ']')
			if err != nil {
				return nil, err
			}
			i = end
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '$':
			i++
			if i < len(expr) && expr[i] == '{' {
				end, err := skipTo(i, '{', '}')
				if err != nil {
					return nil, err
				}
				i = end
			} else {
				for i < len(expr) && isPart(expr[i]) {
					i++
				}
			}
		case '0' <= c && c <= '9' || c == '.':
			// Numbers, and durations such as 5m or 1h30m.
			for i < len(expr) && (isPart(expr[i]) || expr[i] == '.') {
				i++
			}
		case isStart(c):
			j := i
			for j < len(expr) && isPart(expr[j]) {
				j++
			}
			word := expr[i:j]
			next := nextNonSpace(j)
			i = j
			lower := strings.ToLower(word)
			switch {
			case promqlLabelLists[lower] && next < len(expr) && expr[next] == '(':
				end, err := skipTo(next, '(', ')')
				if err != nil {
					return nil, err
				}
				i = end
			case promqlKeywords[lower], promqlAggregations[lower]:
			case next < len(expr) && expr[next] == '(':
				// A function or an aggregation.
			default:
				seen[word] = true
			}
		case c == '(':
			parens++
			i++
		case c == ')':
			parens--
			if parens < 0 {
				return nil, errors.New(`unbalanced ")"`)
			}
			i++
		case c == '}' || c == ']':
			return nil, fmt.Errorf("unbalanced %q", string(c))
		default:
			i++
		}
	}
	if parens != 0 {
		return nil, errors.New(`unbalanced "("`)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// skipString returns the index just past the quoted string that starts at i.
func skipString(s string, i int) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			return j + 1, nil
		}
	}
	return 0, errors.New("unterminated string")
}

// TestMetricNames checks the PromQL lexer the dashboard test relies on.
func TestMetricNames(t *testing.T) {
	cases := []struct {
		expr string
		want []string
		err  bool
	}{
		{expr: `up`, want: []string{"up"}},
		{expr: `sum by (queue, le) (rate(a_bucket{x="by (b)", y=~"$v"}[$__rate_interval]))`, want: []string{"a_bucket"}},
		{expr: `histogram_quantile(0.99, sum without (pod) (rate(h_bucket[5m] offset 1h)))`, want: []string{"h_bucket"}},
		{expr: `a / on (queue) group_left (route) b and c unless d or e > bool 1`, want: []string{"a", "b", "c", "d", "e"}},
		{expr: `max_over_time(deriv(g[10m:1m])[1h:]) * 1e3 + 0.5`, want: []string{"g"}},
		{expr: "label_replace(m, \"dst\", \"$1\", \"src\", \"(.*)\")", want: []string{"m"}},
		{expr: `sum (x) by (le)`, want: []string{"x"}},
		{expr: `topk by (route) (3, y)`, want: []string{"y"}},
		{expr: `rate(x[5m]`, err: true},
		{expr: `x{a="b"`, err: true},
		{expr: `x{a="b}`, err: true},
	}
	for _, c := range cases {
		got, err := metricNames(c.expr)
		if c.err {
			if err == nil {
				t.Errorf("metricNames(%q) = %q, want an error", c.expr, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("metricNames(%q) = %q, %v; want %q", c.expr, got, err, c.want)
		}
	}
}

// TestYAMLIsStrict keeps loadManifests' promise that a misspelt field fails.
func TestYAMLIsStrict(t *testing.T) {
	decoder := strictDecoder(t)
	good := "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  selector:\n    a: b\n"
	if _, _, err := decoder.Decode([]byte(good), nil, nil); err != nil {
		t.Fatalf("a valid Service fails: %v", err)
	}
	for _, bad := range []string{
		good + "  selectr:\n    a: b\n",            // unknown field
		good + "  selector:\n    c: d\n",           // duplicated field
		strings.Replace(good, "v1", "v2", 1),       // unknown version
		strings.Replace(good, "Service", "Pod", 1), // a kind this package does not decode
	} {
		if _, _, err := decoder.Decode([]byte(bad), nil, nil); err == nil {
			t.Errorf("decoded without error:\n%s", bad)
		}
	}
}
