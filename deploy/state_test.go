package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// stateDir holds the NATS and Redis of a fleet and the patch that points the Deployment at
// them; loadManifests leaves it out, since its kinds and names are not the Deployment's.
const stateDir = "state"

// fleetEnvFile is the strategic-merge patch of the Deployment, not an object of its own.
const fleetEnvFile = "sluice-fleet-env.yaml"

const configurationPath = "../docs/CONFIGURATION.md"

// fleet is every object under state/.
type fleet struct {
	statefulSet *appsv1.StatefulSet
	redis       *appsv1.Deployment
	pdb         *policyv1.PodDisruptionBudget
	services    map[string]*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	policies    []*networkingv1.NetworkPolicy
	// env is sluice-fleet-env.yaml: a Deployment holding only what it changes.
	env *appsv1.Deployment
}

// TestStateManifests decodes the NATS and Redis example and the fleet patch, and checks them
// against each other and against the Deployment they are for.
func TestStateManifests(t *testing.T) {
	m := loadManifests(t)
	for _, p := range fleetProblems(loadFleet(t), m, loadImage(t), readServer(t), readMetricFamilies(t)) {
		t.Error(p)
	}
}

// TestStateRulesCatchMistakes breaks the example one field at a time.
func TestStateRulesCatchMistakes(t *testing.T) {
	img, srv, families := loadImage(t), readServer(t), readMetricFamilies(t)
	if p := fleetProblems(loadFleet(t), loadManifests(t), img, srv, families); len(p) != 0 {
		t.Fatalf("the example under test must pass first: %v", p)
	}
	conf := func(old, new string) func(*testing.T, *fleet) {
		return func(t *testing.T, f *fleet) {
			cm := f.configMaps["nats-config"]
			if !strings.Contains(cm.Data["nats.conf"], old) {
				t.Fatalf("nats.conf no longer contains %q: update this case", old)
			}
			cm.Data["nats.conf"] = strings.Replace(cm.Data["nats.conf"], old, new, 1)
		}
	}
	env := func(name, value string) func(*testing.T, *fleet) {
		return func(_ *testing.T, f *fleet) { setEnv(&f.env.Spec.Template.Spec.Containers[0], name, value) }
	}
	nats := func(f *fleet) *corev1.Container { return &f.statefulSet.Spec.Template.Spec.Containers[0] }
	routes := func(old, new string) func(*testing.T, *fleet) {
		return func(t *testing.T, f *fleet) {
			c := nats(f)
			e := &c.Env[slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "NATS_ROUTES" })]
			if !strings.Contains(e.Value, old) {
				t.Fatalf("NATS_ROUTES no longer contains %q: update this case", old)
			}
			e.Value = strings.Replace(e.Value, old, new, 1)
		}
	}
	redis := func(f *fleet) *corev1.Container { return &f.redis.Spec.Template.Spec.Containers[0] }
	cases := []struct {
		name   string
		mutate func(*testing.T, *fleet)
		want   string
	}{
		{"serviceName of another Service", func(_ *testing.T, f *fleet) { f.statefulSet.Spec.ServiceName = "nats-client" }, "serviceName"},
		{"a Service with a cluster IP", func(_ *testing.T, f *fleet) { f.services["nats"].Spec.ClusterIP = "" }, "headless"},
		{"names only once ready", func(_ *testing.T, f *fleet) { f.services["nats"].Spec.PublishNotReadyAddresses = false }, "publishNotReadyAddresses"},
		{"pods one after another", func(_ *testing.T, f *fleet) {
			f.statefulSet.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
		}, "podManagementPolicy"},
		{"an even cluster", func(_ *testing.T, f *fleet) { n := int32(2); f.statefulSet.Spec.Replicas = &n }, "replicas"},
		{"routes on the client port", routes("@nats-1.nats:6222", "@nats-1.nats:4222"), "routes"},
		{"a route to no pod", routes("@nats-2.nats:6222", "@nats-3.nats:6222"), "routes"},
		{"routes through another Service", routes("@nats-0.nats:6222", "@nats-0.nats-headless:6222"), "routes"},
		{"a route without the password", routes("route:$(NATS_ROUTE_PASSWORD)@nats-1", "nats-1"), "does not give"},
		{"routes written in the file", conf("routes: $NATS_ROUTES", "routes: [nats://nats-0.nats:6222, nats://nats-1.nats:6222, nats://nats-2.nats:6222]"), "does not give"},
		{"routes open to anyone", conf("authorization {\n    user: route\n    password: $NATS_ROUTE_PASSWORD\n  }\n", ""), "cluster.authorization"},
		{"the routes' password in the ConfigMap", conf("password: $NATS_ROUTE_PASSWORD", "password: hunter2"), "cluster.authorization"},
		{"the routes' password the clients'", func(_ *testing.T, f *fleet) {
			c := nats(f)
			c.Env[slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "NATS_ROUTE_PASSWORD" })].ValueFrom.SecretKeyRef.Key = "nats-password"
		}, "every Sluice pod"},
		{"a Sluice pod given the routes' password", func(_ *testing.T, f *fleet) {
			c := &f.env.Spec.Template.Spec.Containers[0]
			c.Env[slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "NATS_PASSWORD" })].ValueFrom.SecretKeyRef.Key = "nats-route-password"
		}, "could join the cluster"},
		{"the routes listed before their password", func(_ *testing.T, f *fleet) {
			c := nats(f)
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "NATS_ROUTES" })
			r := c.Env[i]
			c.Env = slices.Insert(slices.Delete(c.Env, i, i+1), 0, r)
		}, "not listed before"},
		{"one name for every node", conf("server_name: $POD_NAME", "server_name: nats"), "server_name"},
		{"a misspelt block", conf("jetstream {", "jetsream {"), "jetsream"},
		{"the store off the volume", conf("store_dir: /data/jetstream", "store_dir: /tmp/jetstream"), "store_dir"},
		{"a store larger than its volume", conf("max_file_store: 8Gi", "max_file_store: 12Gi"), "max_file_store"},
		{"the store on a scratch volume", func(_ *testing.T, f *fleet) {
			f.statefulSet.Spec.VolumeClaimTemplates = nil
			f.statefulSet.Spec.Template.Spec.Volumes = append(f.statefulSet.Spec.Template.Spec.Volumes,
				corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}, "store_dir"},
		{"the config file elsewhere", func(_ *testing.T, f *fleet) { nats(f).Command[2] = "/etc/nats-server.conf" }, "--config"},
		{"a monitoring port the probes miss", conf("http_port: 8222", "http_port: 8223"), "http_port"},
		{"readiness off /healthz", func(_ *testing.T, f *fleet) { nats(f).ReadinessProbe.HTTPGet.Path = "/varz" }, "readinessProbe"},
		{"lame duck past the grace", conf("lame_duck_duration: 30s", "lame_duck_duration: 2m"), "terminationGracePeriodSeconds"},
		{"a drain that breaks quorum", func(_ *testing.T, f *fleet) { u := intstr.FromInt32(2); f.pdb.Spec.MaxUnavailable = &u }, "quorum"},
		{"a floating NATS image", func(_ *testing.T, f *fleet) { nats(f).Image = "nats:alpine" }, "image"},
		{"two Redis pods", func(_ *testing.T, f *fleet) { n := int32(2); f.redis.Spec.Replicas = &n }, "replicas"},
		{"Redis rolled with a surge", func(_ *testing.T, f *fleet) {
			f.redis.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
		}, "Recreate"},
		{"the Redis Service on another port", func(_ *testing.T, f *fleet) { f.services["redis"].Spec.Ports[0].TargetPort = intstr.FromInt32(6380) }, "targetPort"},
		{"the Redis Service selecting nothing", func(_ *testing.T, f *fleet) {
			f.services["redis"].Spec.Selector["app.kubernetes.io/name"] = "redis-server"
		}, "Redis"},
		{"Redis persisting to a scratch volume", func(_ *testing.T, f *fleet) {
			a := redis(f).Args
			a[slices.Index(a, "--appendonly")+1] = "yes"
		}, "appendonly"},
		{"Redis memory above its limit", func(_ *testing.T, f *fleet) {
			a := redis(f).Args
			a[slices.Index(a, "--maxmemory")+1] = "1gb"
		}, "maxmemory"},
		{"NATS URL on the cluster port", env("SLUICE_NATS_URL", "nats://nats-0.nats:6222,nats://nats-1.nats:6222,nats://nats-2.nats:6222"), "SLUICE_NATS_URL"},
		{"NATS URL naming one node", env("SLUICE_NATS_URL", "nats://nats-0.nats:4222"), "SLUICE_NATS_URL"},
		{"NATS URL to an unknown host", env("SLUICE_NATS_URL", "nats://nats-0.nats:4222,nats://nats-1.nats:4222,nats://nats-x.nats:4222"), "SLUICE_NATS_URL"},
		{"more copies than nodes", env("SLUICE_NATS_REPLICAS", "5"), "SLUICE_NATS_REPLICAS"},
		{"a share for fewer pods than the autoscaler's most", env("SLUICE_FLEET_REPLICAS", "1"), "SLUICE_FLEET_REPLICAS"},
		{"Redis evicting buckets", func(_ *testing.T, f *fleet) {
			a := redis(f).Args
			a[slices.Index(a, "--maxmemory-policy")+1] = "allkeys-lru"
		}, "maxmemory-policy"},
		{"Redis URL to another host", env("SLUICE_REDIS_URL", "redis://redis-master:6379/0"), "SLUICE_REDIS_URL"},
		{"Redis URL on another port", env("SLUICE_REDIS_URL", "redis://redis:6380/0"), "SLUICE_REDIS_URL"},
		{"NATS open to anyone", conf("authorization {\n  user: sluice\n  password: $NATS_PASSWORD\n}\n", ""), "authorization"},
		{"the NATS password in the ConfigMap", conf("password: $NATS_PASSWORD", "password: hunter2"), "authorization"},
		{"Redis open to anyone", func(_ *testing.T, f *fleet) {
			a := redis(f).Args
			i := slices.Index(a, "--requirepass")
			redis(f).Args = slices.Delete(a, i, i+2)
		}, "requirepass"},
		{"NATS URL without the password", env("SLUICE_NATS_URL", "nats://nats-0.nats:4222,nats://nats-1.nats:4222,nats://nats-2.nats:4222"), "password NATS asks for"},
		{"Redis URL without the password", env("SLUICE_REDIS_URL", "redis://redis:6379/0"), "password Redis asks for"},
		{"the NATS password from Redis's key", func(_ *testing.T, f *fleet) {
			c := &f.env.Spec.Template.Spec.Containers[0]
			c.Env[slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "NATS_PASSWORD" })].ValueFrom.SecretKeyRef.Key = "redis-password"
		}, "password NATS asks for"},
		{"a password listed after the URL that writes it in", func(_ *testing.T, f *fleet) {
			c := &f.env.Spec.Template.Spec.Containers[0]
			i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "NATS_PASSWORD" })
			pw := c.Env[i]
			c.Env = append(slices.Delete(c.Env, i, i+1), pw)
		}, "not listed before"},
		{"the patch undoing a Deployment rule", env("SLUICE_DEVICE", "auto"), "SLUICE_DEVICE"},
		{"the patch changing more than env", func(_ *testing.T, f *fleet) { f.env.Spec.Template.Spec.Containers[0].Image = "sluice:dev" }, "only"},
		{"the patch for another container", func(_ *testing.T, f *fleet) { f.env.Spec.Template.Spec.Containers[0].Name = "server" }, "container"},
		{"Redis open to every pod", func(_ *testing.T, f *fleet) {
			f.policies = slices.DeleteFunc(f.policies, func(p *networkingv1.NetworkPolicy) bool { return p.Name == "redis" })
		}, "Redis pods"},
		{"NATS open to a namespace", func(_ *testing.T, f *fleet) {
			f.policies[0].Spec.Ingress[0].From[0].NamespaceSelector = &metav1.LabelSelector{}
		}, "peers other than"},
		{"an ingress rule with no peers", func(_ *testing.T, f *fleet) { f.policies[0].Spec.Ingress[0].From = nil }, "every peer"},
		{"NATS routes cut", func(_ *testing.T, f *fleet) {
			f.policies[0].Spec.Ingress[1].Ports = f.policies[0].Spec.Ingress[1].Ports[:1]
		}, "other NATS nodes"},
		{"Sluice on a misspelt port", func(_ *testing.T, f *fleet) {
			f.policies[0].Spec.Ingress[0].Ports[0].Port = &intstr.IntOrString{Type: intstr.String, StrVal: "clinet"}
		}, "the Sluice pods to the NATS pods"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := loadFleet(t)
			c.mutate(t, f)
			problems := fleetProblems(f, loadManifests(t), img, srv, families)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("no problem mentioning %q reported; got %q", c.want, problems)
			}
		})
	}
}

// TestManifestSettingsAreDeclared holds every SLUICE_ variable the pods get, standalone and
// with the fleet patch, to docs/CONFIGURATION.md's table (which cmd/serve's tests hold to the
// Config structs): the server refuses to start on a SLUICE_ variable it does not know.
func TestManifestSettingsAreDeclared(t *testing.T) {
	declared := readSettings(t)
	m := loadManifests(t)
	for _, p := range undeclaredSettings("deployment.yaml", m.deployment, declared) {
		t.Error(p)
	}
	merged, _ := mergeEnvPatch(m.deployment, loadFleet(t).env)
	for _, p := range undeclaredSettings(fleetEnvFile, merged, declared) {
		t.Error(p)
	}
}

// TestSettingsRuleCatchesAMisspeltVariable keeps TestManifestSettingsAreDeclared looking.
func TestSettingsRuleCatchesAMisspeltVariable(t *testing.T) {
	d := loadManifests(t).deployment
	setEnv(&d.Spec.Template.Spec.Containers[0], "SLUICE_SHUTDOWN_TIMEOUT", "30")
	if p := undeclaredSettings("deployment.yaml", d, readSettings(t)); !slices.ContainsFunc(p, func(s string) bool {
		return strings.Contains(s, "sets SLUICE_SHUTDOWN_TIMEOUT,")
	}) {
		t.Errorf("a misspelt variable passed: %q", p)
	}
}

func undeclaredSettings(file string, d *appsv1.Deployment, declared map[string]bool) []string {
	var out []string
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, "SLUICE_") && !declared[e.Name] {
				out = append(out, fmt.Sprintf("%s: container %s sets %s, which docs/CONFIGURATION.md does not list: the server would refuse to start", file, c.Name, e.Name))
			}
		}
	}
	return out
}

// readSettings is the set of variables docs/CONFIGURATION.md's tables list.
func readSettings(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(configurationPath)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(SLUICE_[A-Z0-9_]+)` \\|").FindAllSubmatch(src, -1) {
		settings[string(m[1])] = true
	}
	if len(settings) == 0 {
		t.Fatalf("%s: no | `SLUICE_...` | rows", configurationPath)
	}
	return settings
}

// loadFleet strictly decodes every document under state/ into the Kubernetes API's types.
func loadFleet(t *testing.T) *fleet {
	t.Helper()
	decoder := strictDecoder(t)
	f := &fleet{services: map[string]*corev1.Service{}, configMaps: map[string]*corev1.ConfigMap{}}
	files, err := filepath.Glob(filepath.Join(stateDir, "*.y*ml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no YAML under %s: %v", stateDir, err)
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		decodeEach(t, decoder, file, bytes.NewReader(src), func(obj runtime.Object, kind string) {
			dup := func() { t.Fatalf("%s: a second %s; the checks expect one", file, kind) }
			switch o := obj.(type) {
			case *appsv1.Deployment:
				switch {
				case filepath.Base(file) == fleetEnvFile && f.env == nil:
					f.env = o
				case filepath.Base(file) != fleetEnvFile && f.redis == nil:
					f.redis = o
				default:
					dup()
				}
			case *appsv1.StatefulSet:
				if f.statefulSet != nil {
					dup()
				}
				f.statefulSet = o
			case *policyv1.PodDisruptionBudget:
				if f.pdb != nil {
					dup()
				}
				f.pdb = o
			case *corev1.Service:
				f.services[o.Name] = o
			case *corev1.ConfigMap:
				f.configMaps[o.Name] = o
			case *networkingv1.NetworkPolicy:
				f.policies = append(f.policies, o)
			default:
				t.Fatalf("%s: %s is not checked by this package", file, kind)
			}
		})
	}
	if f.statefulSet == nil || f.redis == nil || f.pdb == nil || f.env == nil {
		t.Fatalf("expected under %s a StatefulSet, a Redis Deployment, a PodDisruptionBudget and %s", stateDir, fleetEnvFile)
	}
	return f
}

func fleetProblems(f *fleet, m manifests, img image, srv server, families map[string]family) []string {
	nats, natsProblems := checkNATS(f)
	redis, redisProblems := checkRedis(f)
	out := append(natsProblems, redisProblems...)
	out = append(out, checkPolicies(f, m)...)
	return append(out, fleetEnvProblems(f, nats, redis, m, img, srv, families)...)
}

// checkPolicies holds the state's pods to NetworkPolicies that admit only the Sluice pods
// and the same component's own (a password is one wall), and
// that admit those on the ports they need: Sluice on the client ports, NATS nodes on their
// routes.
func checkPolicies(f *fleet, m manifests) []string {
	var out []string
	sluice := labels.Set(m.deployment.Spec.Template.Labels)
	type need struct {
		peer string
		from labels.Set
		port int32
	}
	nats, redis := labels.Set(f.statefulSet.Spec.Template.Labels), labels.Set(f.redis.Spec.Template.Labels)
	for _, pod := range []struct {
		name   string
		labels labels.Set
		spec   corev1.PodSpec
		needs  []need
	}{
		{"NATS", nats, f.statefulSet.Spec.Template.Spec, []need{{"the Sluice pods", sluice, 4222}, {"the other NATS nodes", nats, 6222}}},
		{"Redis", redis, f.redis.Spec.Template.Spec, []need{{"the Sluice pods", sluice, 6379}}},
	} {
		for _, n := range pod.needs {
			if !policiesAdmit(f.policies, pod.labels, pod.spec, n.from, n.port) {
				out = append(out, fmt.Sprintf("no NetworkPolicy admits %s to the %s pods on port %d", n.peer, pod.name, n.port))
			}
		}
		guarded := false
		for _, p := range f.policies {
			sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
			if err != nil || sel.Empty() || !sel.Matches(pod.labels) {
				continue
			}
			if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
				out = append(out, fmt.Sprintf("NetworkPolicy %s selects the %s pods but does not list Ingress", p.Name, pod.name))
				continue
			}
			guarded = true
			for i, rule := range p.Spec.Ingress {
				if len(rule.From) == 0 {
					out = append(out, fmt.Sprintf("NetworkPolicy %s: ingress rule %d admits every peer", p.Name, i))
				}
				for _, peer := range rule.From {
					from, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
					if peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil || err != nil || from.Empty() ||
						!(from.Matches(sluice) || from.Matches(pod.labels)) {
						out = append(out, fmt.Sprintf("NetworkPolicy %s: ingress rule %d admits peers other than the Sluice pods and the %s pods", p.Name, i, pod.name))
					}
				}
			}
		}
		if !guarded {
			out = append(out, fmt.Sprintf("no NetworkPolicy admits only the Sluice pods to the %s pods", pod.name))
		}
	}
	return out
}

// policiesAdmit says whether a policy selecting pods labelled to (running spec) has a rule
// that admits pods labelled from on port, a named port read from spec's containers.
func policiesAdmit(policies []*networkingv1.NetworkPolicy, to labels.Set, spec corev1.PodSpec, from labels.Set, port int32) bool {
	named := func(name string) int32 {
		for _, c := range spec.Containers {
			for _, p := range c.Ports {
				if p.Name == name {
					return p.ContainerPort
				}
			}
		}
		return -1
	}
	for _, p := range policies {
		if sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector); err != nil || sel.Empty() || !sel.Matches(to) {
			continue
		}
		for _, rule := range p.Spec.Ingress {
			peerOK := slices.ContainsFunc(rule.From, func(peer networkingv1.NetworkPolicyPeer) bool {
				sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
				return peer.PodSelector != nil && err == nil && sel.Matches(from)
			})
			portOK := len(rule.Ports) == 0 || slices.ContainsFunc(rule.Ports, func(pp networkingv1.NetworkPolicyPort) bool {
				switch {
				case pp.Port == nil:
					return true
				case pp.Port.Type == intstr.String:
					return named(pp.Port.StrVal) == port
				}
				return pp.Port.IntVal == port
			})
			if peerOK && portOK {
				return true
			}
		}
	}
	return false
}

// natsAddrs is what a client of the NATS cluster may use: each node's DNS name under the
// headless Service, and the Service's client port.
type natsAddrs struct {
	nodes      []string
	clientPort int32
	replicas   int32
	// user is the one a client gives, and password the Secret's key that holds its password;
	// routePassword holds the one the nodes give each other, which no client may hold.
	user          string
	password      secretRef
	routePassword secretRef
}

// redisAddr is the Redis Service's name and the port on it that reaches Redis, and the
// Secret's key that holds the password it asks for.
type redisAddr struct {
	host     string
	port     int32
	password secretRef
}

// secretRef is a key of a Secret: where a password comes from.
type secretRef struct{ name, key string }

// secretOf is the Secret's key the container's variable name comes from, if it does.
func secretOf(c corev1.Container, name string) (secretRef, bool) {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != "" {
			return secretRef{e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key}, true
		}
	}
	return secretRef{}, false
}

// listedBefore says whether the container lists the variable first before second, as
// Kubernetes needs to write $(first) into second.
func listedBefore(c corev1.Container, first, second string) bool {
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == first })
	j := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == second })
	return i >= 0 && i < j
}

// checkNATS checks the StatefulSet, its Service, its configuration file and its disruption
// budget against each other.
func checkNATS(f *fleet) (natsAddrs, []string) {
	var out []string
	bad := func(format string, args ...any) { out = append(out, "nats: "+fmt.Sprintf(format, args...)) }
	var addrs natsAddrs

	sts := f.statefulSet
	pod := sts.Spec.Template
	podLabels := labels.Set(pod.Labels)
	if sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector); err != nil || sel.Empty() || !sel.Matches(podLabels) {
		bad("StatefulSet %s: its selector does not select its own pod template", sts.Name)
	}
	addrs.replicas = 1
	if sts.Spec.Replicas != nil {
		addrs.replicas = *sts.Spec.Replicas
	}
	if addrs.replicas < 3 || addrs.replicas%2 == 0 {
		bad("StatefulSet %s: replicas %d; JetStream wants an odd number of at least 3 to keep a quorum with a node down", sts.Name, addrs.replicas)
	}
	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		bad("StatefulSet %s: podManagementPolicy %q; the nodes must start together (Parallel), since none is ready before a quorum is up", sts.Name, sts.Spec.PodManagementPolicy)
	}
	if len(pod.Spec.Containers) != 1 {
		bad("StatefulSet %s: one container expected", sts.Name)
		return addrs, out
	}
	c := pod.Spec.Containers[0]
	if p := pinProblem(c.Image); p != "" {
		bad("container %s: image %s: %s", c.Name, c.Image, p)
	}

	// The headless Service the pods are named under.
	svc := f.services[sts.Spec.ServiceName]
	switch {
	case svc == nil:
		bad("StatefulSet %s: serviceName %q names no Service here", sts.Name, sts.Spec.ServiceName)
	case svc.Spec.ClusterIP != corev1.ClusterIPNone:
		bad("Service %s: not headless (clusterIP: None); the pods get their DNS names only from a headless Service", svc.Name)
	case !svc.Spec.PublishNotReadyAddresses:
		bad("Service %s: publishNotReadyAddresses must be true: a node becomes ready only after it has reached the others by these names", svc.Name)
	}
	if svc != nil && (len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels)) {
		bad("Service %s: its selector %v does not select the StatefulSet's pods", svc.Name, svc.Spec.Selector)
	}

	// The configuration file: the one the command names, from the ConfigMap mounted there.
	args := append(slices.Clone(c.Command), c.Args...)
	var confPath string
	for i, a := range args {
		if (a == "--config" || a == "-c") && i+1 < len(args) {
			confPath = args[i+1]
		}
	}
	var confText string
	found := false
	for _, vm := range c.VolumeMounts {
		if vm.MountPath != path.Dir(confPath) {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil {
				if cm := f.configMaps[v.ConfigMap.Name]; cm != nil {
					confText, found = cm.Data[path.Base(confPath)]
				}
			}
		}
	}
	if !found {
		bad("container %s: --config %q is no key of a ConfigMap mounted in its directory", c.Name, confPath)
		return addrs, out
	}
	conf, err := parseNATSConf(confText)
	if err != nil {
		bad("%s: %v", confPath, err)
		return addrs, out
	}
	known := map[string][]string{
		"":              {"server_name", "port", "http_port", "pid_file", "lame_duck_grace_period", "lame_duck_duration", "authorization", "jetstream", "cluster"},
		"authorization": {"user", "password"},
		"jetstream":     {"store_dir", "max_file_store", "max_memory_store"},
		"cluster":       {"name", "port", "authorization", "routes"},
	}
	for block, keys := range known {
		section := conf
		if block != "" {
			section, _ = conf[block].(map[string]any)
		}
		for k := range section {
			if !slices.Contains(keys, k) {
				bad("%s: %s%s is not a key these checks know (the server refuses unknown keys)", confPath, prefixDot(block), k)
			}
		}
	}
	str := func(m map[string]any, key string) string {
		s, _ := m[key].(string)
		return s
	}
	num := func(m map[string]any, key string, def int32) int32 {
		s, ok := m[key].(string)
		if !ok {
			return def
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			bad("%s: %s %q is not a port", confPath, key, s)
		}
		return int32(n)
	}
	js, _ := conf["jetstream"].(map[string]any)
	cluster, _ := conf["cluster"].(map[string]any)
	if js == nil || cluster == nil {
		bad("%s: jetstream { } and cluster { } blocks are both needed", confPath)
		return addrs, out
	}
	clientPort, monitorPort, clusterPort := num(conf, "port", 4222), num(conf, "http_port", 0), num(cluster, "port", 0)

	// Each port the file opens is a container port, and the Service forwards the client and
	// cluster ports to it.
	portName := map[int32]string{}
	for _, p := range c.Ports {
		portName[p.ContainerPort] = p.Name
	}
	reaches := func(target intstr.IntOrString, port int32) bool {
		if target.Type == intstr.String {
			return target.StrVal != "" && target.StrVal == portName[port]
		}
		return target.IntVal == port
	}
	for _, p := range []struct {
		key  string
		port int32
	}{{"port", clientPort}, {"http_port", monitorPort}, {"cluster.port", clusterPort}} {
		if _, ok := portName[p.port]; !ok {
			bad("container %s: %s %d is not a containerPort", c.Name, p.key, p.port)
		}
	}
	if svc != nil {
		// A name under a headless Service resolves to the pod itself: clients reach the
		// container's port, so the Service's port must be the same number.
		for _, want := range []struct {
			key  string
			port int32
		}{{"port", clientPort}, {"cluster.port", clusterPort}} {
			i := slices.IndexFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool {
				target := sp.TargetPort
				if target == (intstr.IntOrString{}) {
					target = intstr.FromInt32(sp.Port)
				}
				return reaches(target, want.port) && sp.Port == want.port
			})
			if i < 0 {
				bad("Service %s: no port forwards %d (%s) to the pods", svc.Name, want.port, want.key)
			} else if want.key == "port" {
				addrs.clientPort = svc.Spec.Ports[i].Port
			}
		}
	}

	// Probes on the monitoring port's /healthz.
	probe := func(name string, p *corev1.Probe) {
		switch {
		case p == nil || p.HTTPGet == nil:
			bad("container %s: %s must be an httpGet of /healthz", c.Name, name)
		case !strings.HasPrefix(p.HTTPGet.Path, "/healthz"):
			bad("container %s: %s asks %s, want /healthz", c.Name, name, p.HTTPGet.Path)
		case !reaches(p.HTTPGet.Port, monitorPort):
			bad("container %s: %s asks port %s, but http_port is %d", c.Name, name, p.HTTPGet.Port.String(), monitorPort)
		}
	}
	probe("startupProbe", c.StartupProbe)
	probe("readinessProbe", c.ReadinessProbe)
	probe("livenessProbe", c.LivenessProbe)

	// A name per node that survives a restart: the pod's.
	env := map[string]*corev1.EnvVar{}
	for i := range c.Env {
		env[c.Env[i].Name] = &c.Env[i]
	}
	name := str(conf, "server_name")
	if v := env[strings.TrimPrefix(name, "$")]; !strings.HasPrefix(name, "$") || v == nil || v.ValueFrom == nil || v.ValueFrom.FieldRef == nil || v.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		bad("%s: server_name %q must be $VAR of an env var holding the pod's name (fieldRef metadata.name): every node needs its own, kept across restarts", confPath, name)
	}

	// Clients give a user and a password, the password from a Secret through the server's
	// environment (never written in the ConfigMap).
	auth, _ := conf["authorization"].(map[string]any)
	addrs.user = str(auth, "user")
	pw := str(auth, "password")
	if ref, ok := secretOf(c, strings.TrimPrefix(pw, "$")); addrs.user == "" || !strings.HasPrefix(pw, "$") || !ok {
		bad("%s: an authorization { user, password: $VAR } block is needed, VAR an env var of the container from a Secret: "+
			"without it anyone who reaches the client port reads the job queue and writes the audit", confPath)
	} else {
		addrs.password = ref
	}

	// Routes: a node joins with the routes' own user and password, from a Secret through the
	// environment, and one the clients do not hold (a Sluice pod could join the cluster).
	if str(cluster, "name") == "" {
		bad("%s: cluster.name is required", confPath)
	}
	routeAuth, _ := cluster["authorization"].(map[string]any)
	routeUser, routePW := str(routeAuth, "user"), strings.TrimPrefix(str(routeAuth, "password"), "$")
	if ref, ok := secretOf(c, routePW); routeUser == "" || !strings.HasPrefix(str(routeAuth, "password"), "$") || !ok {
		bad("%s: a cluster.authorization { user, password: $VAR } block is needed, VAR an env var of the container from a Secret: "+
			"without it anything that reaches the cluster port joins the cluster and reads every stream", confPath)
	} else if ref == addrs.password {
		bad("%s: the routes' password is the clients' (%s %s): every Sluice pod could join the cluster", confPath, ref.name, ref.key)
	} else {
		addrs.routePassword = ref
	}
	// Every pod of the StatefulSet, by name under its Service, on the cluster port, each URL
	// with the routes' user and password: a variable of the container, since nats.conf writes
	// no variable inside a string and Kubernetes writes the password into the variable.
	var want, got []string
	for i := range addrs.replicas {
		host := fmt.Sprintf("%s-%d.%s", sts.Name, i, sts.Spec.ServiceName)
		addrs.nodes = append(addrs.nodes, host)
		want = append(want, fmt.Sprintf("nats://%s:%d", host, clusterPort))
	}
	routesVar := strings.TrimPrefix(str(cluster, "routes"), "$")
	routes, _ := cluster["routes"].([]any)
	if v := env[routesVar]; strings.HasPrefix(str(cluster, "routes"), "$") && v != nil && v.ValueFrom == nil {
		if conf, err := parseNATSConf("routes: " + v.Value); err != nil {
			bad("container %s: %s does not parse as nats.conf's list: %v", c.Name, routesVar, err)
		} else {
			routes, _ = conf["routes"].([]any)
			if !listedBefore(c, routePW, routesVar) {
				bad("container %s: %s is not listed before %s, so Kubernetes leaves $(%s) unwritten", c.Name, routePW, routesVar, routePW)
			}
		}
	}
	for _, r := range routes {
		s, _ := r.(string)
		u, err := url.Parse(s)
		if err != nil {
			bad("%s: route %q does not parse", confPath, s)
			continue
		}
		if pw, _ := u.User.Password(); u.User.Username() != routeUser || pw != "$("+routePW+")" {
			bad("%s: route %s does not give the routes' user %q and password $(%s), so the node it names refuses it", confPath, u.Redacted(), routeUser, routePW)
		}
		u.User = nil
		got = append(got, u.String())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		bad("%s: cluster.routes %v, want every pod of StatefulSet %s under Service %s on the cluster port: %v", confPath, got, sts.Name, sts.Spec.ServiceName, want)
	}

	// JetStream's store: on the pod's own claim, and smaller than it.
	store := str(js, "store_dir")
	var mount *corev1.VolumeMount
	for i, vm := range c.VolumeMounts {
		if strings.HasPrefix(store+"/", strings.TrimSuffix(vm.MountPath, "/")+"/") && (mount == nil || len(vm.MountPath) > len(mount.MountPath)) {
			mount = &c.VolumeMounts[i]
		}
	}
	var claim *corev1.PersistentVolumeClaim
	if mount != nil {
		for i := range sts.Spec.VolumeClaimTemplates {
			if sts.Spec.VolumeClaimTemplates[i].Name == mount.Name {
				claim = &sts.Spec.VolumeClaimTemplates[i]
			}
		}
	}
	if !path.IsAbs(store) || claim == nil {
		bad("%s: jetstream.store_dir %q is not on a volume from the StatefulSet's volumeClaimTemplates: the streams would not outlive the pod", confPath, store)
	} else if max, ok := js["max_file_store"].(string); ok {
		limit, err := natsSize(max)
		size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		switch {
		case err != nil:
			bad("%s: max_file_store %q: %v", confPath, max, err)
		case limit >= size.Value():
			bad("%s: max_file_store %s is not below the volume's %s; JetStream keeps its metadata there too", confPath, max, size.String())
		}
	} else {
		bad("%s: set jetstream.max_file_store below the volume's size, or JetStream takes the disk's", confPath)
	}

	// Lame duck: the hook starts it, the termination grace waits for it.
	if str(conf, "pid_file") != "" {
		var needS float64
		for _, k := range []string{"lame_duck_grace_period", "lame_duck_duration"} {
			d, err := time.ParseDuration(str(conf, k))
			if err != nil {
				bad("%s: %s %q: %v", confPath, k, str(conf, k), err)
			}
			needS += d.Seconds()
		}
		grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
		if pod.Spec.TerminationGracePeriodSeconds != nil {
			grace = *pod.Spec.TerminationGracePeriodSeconds
		}
		if float64(grace) <= needS {
			bad("terminationGracePeriodSeconds %d must exceed lame_duck_grace_period + lame_duck_duration (%.0f s)", grace, needS)
		}
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Exec == nil ||
			!slices.Contains(c.Lifecycle.PreStop.Exec.Command, "ldm="+str(conf, "pid_file")) {
			bad("container %s: the preStop hook must signal ldm=%s", c.Name, str(conf, "pid_file"))
		}
	}

	// Voluntary evictions leave a quorum.
	pdb := f.pdb
	if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err != nil || sel.Empty() || !sel.Matches(podLabels) {
		bad("PodDisruptionBudget %s does not select the StatefulSet's pods", pdb.Name)
	}
	quorum := addrs.replicas/2 + 1
	if u := pdb.Spec.MaxUnavailable; u == nil || u.Type != intstr.Int || u.IntVal < 1 || addrs.replicas-u.IntVal < quorum {
		bad("PodDisruptionBudget %s: maxUnavailable must be a number from 1 to %d, to keep a quorum of %d of %d", pdb.Name, addrs.replicas-quorum, quorum, addrs.replicas)
	}
	return addrs, out
}

// checkRedis checks the Redis Deployment and the Service that reaches it.
func checkRedis(f *fleet) (redisAddr, []string) {
	var out []string
	bad := func(format string, args ...any) { out = append(out, "redis: "+fmt.Sprintf(format, args...)) }
	var addr redisAddr

	d := f.redis
	podLabels := labels.Set(d.Spec.Template.Labels)
	if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil || sel.Empty() || !sel.Matches(podLabels) {
		bad("Deployment %s: its selector does not select its own pod template", d.Name)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		bad("Deployment %s: replicas must be 1: each Redis pod behind the Service would keep budgets of its own", d.Name)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		bad("Deployment %s: strategy %q; Recreate, so that an update never runs two Redis pods behind the Service", d.Name, d.Spec.Strategy.Type)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		bad("Deployment %s: one container expected", d.Name)
		return addr, out
	}
	c := d.Spec.Template.Spec.Containers[0]
	if p := pinProblem(c.Image); p != "" {
		bad("container %s: image %s: %s", c.Name, c.Image, p)
	}

	// redis-server's options: --name value...
	args := append(slices.Clone(c.Command), c.Args...)
	if len(args) == 0 || args[0] != "redis-server" {
		bad("container %s: run redis-server with its options as arguments", c.Name)
		return addr, out
	}
	opts := map[string][]string{}
	var opt string
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "--") {
			opt = strings.TrimPrefix(a, "--")
			opts[opt] = []string{}
			continue
		}
		if opt == "" {
			bad("container %s: argument %q before any --option", c.Name, a)
			continue
		}
		opts[opt] = append(opts[opt], a)
	}
	// No persistence: budgets are soft state, and the pod's only volume is scratch.
	if s, ok := opts["save"]; !ok || !slices.Equal(s, []string{""}) {
		bad("container %s: --save \"\" (no snapshots) is this example's choice; got %q", c.Name, s)
	}
	if a := opts["appendonly"]; !slices.Equal(a, []string{"no"}) {
		bad("container %s: --appendonly no is this example's choice; got %q", c.Name, a)
	}
	// An evicted bucket comes back full: a budget reset. A full Redis must refuse writes
	// instead, which the pods treat as Redis out of reach.
	if p := opts["maxmemory-policy"]; !slices.Equal(p, []string{"noeviction"}) {
		bad("container %s: --maxmemory-policy %q evicts buckets (a reset budget); use noeviction", c.Name, p)
	}
	if mm := opts["maxmemory"]; len(mm) != 1 {
		bad("container %s: set --maxmemory below the memory limit, so that a full Redis evicts instead of being killed", c.Name)
	} else if n, err := redisSize(mm[0]); err != nil {
		bad("container %s: --maxmemory %q: %v", c.Name, mm[0], err)
	} else if limit, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok || n >= limit.Value() {
		bad("container %s: --maxmemory %s must be below the memory limit (%v), or the kernel kills Redis before it evicts", c.Name, mm[0], limit.String())
	}
	// A password every client must give, from a Secret (Kubernetes writes $(VAR) in).
	if pw := opts["requirepass"]; len(pw) != 1 || !strings.HasPrefix(pw[0], "$(") || !strings.HasSuffix(pw[0], ")") {
		bad("container %s: --requirepass $(VAR) is needed, VAR from a Secret: without it anyone who reaches Redis resets every budget", c.Name)
	} else if ref, ok := secretOf(c, pw[0][2:len(pw[0])-1]); !ok {
		bad("container %s: --requirepass %s is no env var of the container from a Secret", c.Name, pw[0])
	} else {
		addr.password = ref
	}
	port := int32(6379)
	if p := opts["port"]; len(p) == 1 {
		n, err := strconv.ParseInt(p[0], 10, 32)
		if err != nil {
			bad("container %s: --port %q", c.Name, p[0])
		}
		port = int32(n)
	}
	var portName string
	listed := false
	for _, p := range c.Ports {
		if p.ContainerPort == port {
			portName, listed = p.Name, true
		}
	}
	if !listed {
		bad("container %s lists no containerPort %d, the port Redis listens on", c.Name, port)
	}

	// The Service that selects the Redis pods, on Redis's port.
	var svcs []*corev1.Service
	for _, s := range f.services {
		if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
			svcs = append(svcs, s)
		}
	}
	if len(svcs) != 1 {
		bad("%d Services select the Redis pods; want one", len(svcs))
		return addr, out
	}
	svc := svcs[0]
	addr.host = svc.Name
	for _, sp := range svc.Spec.Ports {
		t := sp.TargetPort
		if t.Type == intstr.String && t.StrVal != "" && t.StrVal == portName || t.Type == intstr.Int && (t.IntVal == port || t.IntVal == 0 && sp.Port == port) {
			addr.port = sp.Port
		} else {
			bad("Service %s: port %d has targetPort %s, not Redis's %d", svc.Name, sp.Port, t.String(), port)
		}
	}
	if addr.port == 0 {
		bad("Service %s: no port reaches Redis", svc.Name)
	}
	return addr, out
}

// fleetEnvProblems merges the patch into the Deployment, checks the result as the Deployment
// itself is checked, and checks each address it sets against the Service it names.
func fleetEnvProblems(f *fleet, nats natsAddrs, redis redisAddr, m manifests, img image, srv server, families map[string]family) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fleetEnvFile+": "+fmt.Sprintf(format, args...)) }

	merged, err := mergeEnvPatch(m.deployment, f.env)
	if err != nil {
		bad("%v", err)
		return out
	}
	for _, p := range manifestProblems(manifests{deployment: merged, service: m.service, pdb: m.pdb, hpa: m.hpa}, img, srv, families) {
		bad("merged into deployment.yaml: %s", p)
	}
	sluice := merged.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range sluice.Env {
		env[e.Name] = e.Value
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil && nats.routePassword != (secretRef{}) &&
			(secretRef{ref.SecretKeyRef.Name, ref.SecretKeyRef.Key}) == nats.routePassword {
			bad("%s is the NATS routes' password (%s %s): a Sluice pod holding it could join the cluster", e.Name, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key)
		}
	}
	// password says whether a URL's password is $(VAR) of a variable from the Secret's key the
	// server's password comes from (manifestProblems checks that VAR is listed before).
	password := func(u *url.URL, want secretRef) bool {
		pw, ok := u.User.Password()
		if !ok || !strings.HasPrefix(pw, "$(") || !strings.HasSuffix(pw, ")") {
			return false
		}
		ref, ok := secretOf(sluice, pw[2:len(pw)-1])
		return ok && ref == want
	}

	// SLUICE_NATS_URL: the nodes of the StatefulSet on the client port, all of them, so that
	// a connection starts while any node is up.
	natsURL, ok := env["SLUICE_NATS_URL"]
	if !ok {
		bad("no SLUICE_NATS_URL: the pods would keep their audit in an embedded NATS")
	}
	seen := map[string]bool{}
	for _, raw := range strings.Split(natsURL, ",") {
		if nats.clientPort == 0 {
			break // the NATS problems are reported already
		}
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.Scheme != "nats" || u.Port() == "" || u.Path != "" {
			bad("SLUICE_NATS_URL: %q is not nats://host:port", raw)
			continue
		}
		if p, _ := strconv.Atoi(u.Port()); int32(p) != nats.clientPort {
			bad("SLUICE_NATS_URL: %s is on port %s, not the NATS Service's client port %d", raw, u.Port(), nats.clientPort)
		}
		if nats.user != "" && (u.User.Username() != nats.user || !password(u, nats.password)) {
			bad("SLUICE_NATS_URL: %s must give the user %s and the password NATS asks for, $(VAR) of a variable from the Secret's %s/%s",
				u.Redacted(), nats.user, nats.password.name, nats.password.key)
		}
		host := u.Hostname()
		if i := slices.IndexFunc(nats.nodes, func(n string) bool { return host == n || strings.HasPrefix(host, n+".") }); i < 0 {
			bad("SLUICE_NATS_URL: host %s is no node of the NATS StatefulSet (%v)", host, nats.nodes)
		} else {
			seen[nats.nodes[i]] = true
		}
	}
	if natsURL != "" && nats.clientPort != 0 && len(seen) != len(nats.nodes) {
		bad("SLUICE_NATS_URL names %d of the %d NATS nodes; a pod starting while one of those is down would not connect", len(seen), len(nats.nodes))
	}
	if n, err := strconv.Atoi(env["SLUICE_NATS_REPLICAS"]); err != nil || n < 1 || int32(n) > nats.replicas {
		bad("SLUICE_NATS_REPLICAS %q must be from 1 to the NATS StatefulSet's %d replicas: a stream cannot have more copies than nodes", env["SLUICE_NATS_REPLICAS"], nats.replicas)
	}

	// SLUICE_FLEET_REPLICAS: with Redis out of reach (the local failure mode), each pod keeps
	// its share, the budget divided by this; fewer than the autoscaler's most pods lets the
	// fleet admit that many times a tenant's budget during an outage.
	if n, err := strconv.Atoi(env["SLUICE_FLEET_REPLICAS"]); env["SLUICE_REDIS_FAILURE"] != "closed" &&
		(err != nil || int32(n) < m.hpa.Spec.MaxReplicas) {
		bad("SLUICE_FLEET_REPLICAS %q must be at least the HorizontalPodAutoscaler's maxReplicas (%d), or a Redis outage admits more than the budget",
			env["SLUICE_FLEET_REPLICAS"], m.hpa.Spec.MaxReplicas)
	}

	// SLUICE_REDIS_URL: the Redis Service on its port.
	redisURL, ok := env["SLUICE_REDIS_URL"]
	if !ok {
		bad("no SLUICE_REDIS_URL: each pod would keep budgets of its own")
	} else if redis.port != 0 {
		u, err := url.Parse(redisURL)
		host, port, splitErr := net.SplitHostPort(u.Host)
		switch {
		case err != nil || u.Scheme != "redis" || splitErr != nil:
			bad("SLUICE_REDIS_URL %q is not redis://host:port/db", redisURL)
		case host != redis.host && !strings.HasPrefix(host, redis.host+"."):
			bad("SLUICE_REDIS_URL: host %s is not the Redis Service %s", host, redis.host)
		case port != strconv.Itoa(int(redis.port)):
			bad("SLUICE_REDIS_URL: port %s is not the Redis Service's %d", port, redis.port)
		case redis.password != (secretRef{}) && !password(u, redis.password):
			bad("SLUICE_REDIS_URL must give the password Redis asks for, redis://:$(VAR)@..., VAR from the Secret's %s/%s",
				redis.password.name, redis.password.key)
		}
		if db := strings.TrimPrefix(u.Path, "/"); db != "" {
			if n, err := strconv.Atoi(db); err != nil || n < 0 || n > 15 {
				bad("SLUICE_REDIS_URL: database %q is not 0 to 15", db)
			}
		}
	}
	return out
}

// mergeEnvPatch applies the patch as kubectl's strategic merge would: containers by name, and
// their env entries by name. A patch that sets anything else is refused, since these checks
// would not see it.
func mergeEnvPatch(base, patch *appsv1.Deployment) (*appsv1.Deployment, error) {
	if patch.Name != base.Name {
		return nil, fmt.Errorf("patches Deployment %q, not %q", patch.Name, base.Name)
	}
	skeleton := &appsv1.Deployment{TypeMeta: patch.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: patch.Name}}
	for _, c := range patch.Spec.Template.Spec.Containers {
		skeleton.Spec.Template.Spec.Containers = append(skeleton.Spec.Template.Spec.Containers, corev1.Container{Name: c.Name, Env: c.Env})
	}
	if !equality.Semantic.DeepEqual(skeleton, patch) {
		return nil, errors.New("must set only containers' env (by container name); these checks merge nothing else")
	}
	merged := base.DeepCopy()
	for _, pc := range patch.Spec.Template.Spec.Containers {
		i := slices.IndexFunc(merged.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == pc.Name })
		if i < 0 {
			return nil, fmt.Errorf("container %q is not in Deployment %s; the patch would add a container without an image", pc.Name, base.Name)
		}
		c := &merged.Spec.Template.Spec.Containers[i]
		for _, e := range pc.Env {
			if j := slices.IndexFunc(c.Env, func(b corev1.EnvVar) bool { return b.Name == e.Name }); j >= 0 {
				c.Env[j] = e
			} else {
				c.Env = append(c.Env, e)
			}
		}
	}
	return merged, nil
}

// parseNATSConf reads the part of the NATS server's configuration format this example uses:
// key, optional ':' or '=', value; blocks in braces, arrays in brackets, bare or quoted
// strings; entries ending at a newline, ',' or ';'; comments from '#' or '//' (the latter
// only where a key may start, since URLs hold it). Every value is kept as its text.
func parseNATSConf(src string) (map[string]any, error) {
	p := &confParser{src: src}
	return p.block(false)
}

type confParser struct {
	src string
	i   int
}

func (p *confParser) errorf(format string, args ...any) error {
	line := 1 + strings.Count(p.src[:p.i], "\n")
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

// skip passes over blanks, comments, and (with separators) newlines, ',' and ';'.
func (p *confParser) skip(separators bool) {
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			p.i++
		case separators && (c == '\n' || c == ',' || c == ';'):
			p.i++
		case c == '#' || strings.HasPrefix(p.src[p.i:], "//"):
			for p.i < len(p.src) && p.src[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *confParser) block(inner bool) (map[string]any, error) {
	m := map[string]any{}
	for {
		p.skip(true)
		if p.i == len(p.src) {
			if inner {
				return nil, p.errorf("unclosed {")
			}
			return m, nil
		}
		if p.src[p.i] == '}' {
			if !inner {
				return nil, p.errorf("} without {")
			}
			p.i++
			return m, nil
		}
		start := p.i
		for p.i < len(p.src) && (unicode.IsLetter(rune(p.src[p.i])) || unicode.IsDigit(rune(p.src[p.i])) || strings.ContainsRune("_-.", rune(p.src[p.i]))) {
			p.i++
		}
		key := p.src[start:p.i]
		if key == "" {
			return nil, p.errorf("unexpected %q where a key should be", p.src[p.i])
		}
		p.skip(false)
		if p.i < len(p.src) && (p.src[p.i] == ':' || p.src[p.i] == '=') {
			p.i++
			p.skip(false)
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if _, dup := m[key]; dup {
			return nil, p.errorf("%s twice", key)
		}
		m[key] = v
	}
}

func (p *confParser) value() (any, error) {
	if p.i == len(p.src) {
		return nil, p.errorf("a value is missing")
	}
	switch c := p.src[p.i]; c {
	case '{':
		p.i++
		return p.block(true)
	case '[':
		p.i++
		var arr []any
		for {
			p.skip(true)
			if p.i == len(p.src) {
				return nil, p.errorf("unclosed [")
			}
			if p.src[p.i] == ']' {
				p.i++
				return arr, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
	case '"', '\'':
		end := strings.IndexByte(p.src[p.i+1:], c)
		if end < 0 {
			return nil, p.errorf("unterminated string")
		}
		s := p.src[p.i+1 : p.i+1+end]
		p.i += end + 2
		return s, nil
	default:
		start := p.i
		for p.i < len(p.src) && !strings.ContainsRune("\n,;}]#", rune(p.src[p.i])) {
			p.i++
		}
		s := strings.TrimSpace(p.src[start:p.i])
		if s == "" {
			return nil, p.errorf("a value is missing")
		}
		return s, nil
	}
}

func prefixDot(block string) string {
	if block == "" {
		return ""
	}
	return block + "."
}

// natsSize reads a size as the NATS server does: k, m, g, t are powers of 1000; kb, ki, kib
// (and so on) powers of 1024; the suffix in any case.
func natsSize(s string) (int64, error) {
	return sizeWithSuffix(s, map[string]int64{
		"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
		"kb": 1 << 10, "ki": 1 << 10, "kib": 1 << 10, "mb": 1 << 20, "mi": 1 << 20, "mib": 1 << 20,
		"gb": 1 << 30, "gi": 1 << 30, "gib": 1 << 30, "tb": 1 << 40, "ti": 1 << 40, "tib": 1 << 40,
	})
}

// redisSize reads a memory size as redis-server does: k, m, g powers of 1000, kb, mb, gb
// powers of 1024.
func redisSize(s string) (int64, error) {
	return sizeWithSuffix(s, map[string]int64{"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30})
}

func sizeWithSuffix(s string, units map[string]int64) (int64, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	unit, ok := units[strings.ToLower(s[i:])]
	if err != nil || !ok {
		return 0, fmt.Errorf("not a number with a known unit")
	}
	return n * unit, nil
}

// TestParseNATSConf checks the reader of nats.conf the NATS checks rely on.
func TestParseNATSConf(t *testing.T) {
	got, err := parseNATSConf("# c\nport: 4222\nhttp_port = 8222, a b\njs {\n  // c\n  dir: \"/d x\"\n}\nr: [nats://h:1, 'x'\n  y]\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"port": "4222", "http_port": "8222", "a": "b", "js": map[string]any{"dir": "/d x"}, "r": []any{"nats://h:1", "x", "y"}}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
	for _, bad := range []string{"a {\n b: 1\n", "a: 1\na: 2\n", "a: [1, 2\n", "}\n", "a:\n", "a: \"x\n"} {
		if m, err := parseNATSConf(bad); err == nil {
			t.Errorf("%q parsed as %v, want an error", bad, m)
		}
	}
}
