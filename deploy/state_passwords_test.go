package deploy

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	corev1 "k8s.io/api/core/v1"

	"github.com/sluice-serving/sluice/fleetbudget/redistest"
	"github.com/sluice-serving/sluice/natsbox/natstest"
)

// TestStatePasswordsAdmitTheSluicePodsAlone runs the real NATS server on the example's
// nats.conf and the real redis-server on its options, each with its password from a Secret
// as Kubernetes gives it, and connects with the URLs the fleet patch gives the Sluice pods,
// as Kubernetes writes the passwords into them: those get in, the same URLs without the
// password or with another are refused. The rules of TestStateManifests hold the names to
// agree; this holds the servers to reading them as the rules think.
func TestStatePasswordsAdmitTheSluicePodsAlone(t *testing.T) {
	f := loadFleet(t)
	merged, err := mergeEnvPatch(loadManifests(t).deployment, f.env)
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[secretRef]string{{"sluice-state", "nats-password"}: password(t), {"sluice-state", "redis-password"}: password(t),
		{"sluice-state", "nats-route-password"}: password(t)}
	sluice := podEnv(t, merged.Spec.Template.Spec.Containers[0], secrets)

	t.Run("nats", func(t *testing.T) {
		// One node, no peers (the clients' check needs none).
		ns := startNATS(t, natsOptions(t, f, secrets, "nats-0"), false, nil)
		for _, raw := range strings.Split(sluice["SLUICE_NATS_URL"], ",") {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			u.Host = ns.Addr().String()
			nc, err := nats.Connect(u.String(), nats.NoReconnect())
			if err != nil {
				t.Fatalf("the pods' URL %s: %v", u.Redacted(), err)
			}
			nc.Close()
			for _, who := range []*url.Userinfo{nil, url.User(u.User.Username()), url.UserPassword(u.User.Username(), password(t))} {
				u.User = who
				if nc, err := nats.Connect(u.String(), nats.NoReconnect()); !errors.Is(err, nats.ErrAuthorization) {
					if nc != nil {
						nc.Close()
					}
					t.Errorf("%s: %v; want refused", u.Redacted(), err)
				}
			}
		}
	})

	// Two nodes on this machine, each started from nats.conf as its pod would be: the second
	// joins the first over the route the file gives it (at the first's address here), and a
	// route that gives no password, another, or the clients' (which every Sluice pod holds)
	// is refused with NATS's authorization error.
	t.Run("nats routes", func(t *testing.T) {
		first := startNATS(t, natsOptions(t, f, secrets, "nats-0"), true, nil)
		second := natsOptions(t, f, secrets, "nats-1")
		if len(second.Routes) == 0 {
			t.Fatal("nats.conf gives no routes")
		}
		route := *second.Routes[0]
		route.Host = first.ClusterAddr().String()
		joined := startNATS(t, second, true, []*url.URL{&route})
		natstest.WaitFor(t, 30*time.Second, "the second node to join the first", func() bool {
			return first.NumRoutes() > 0 && joined.NumRoutes() > 0
		})

		clientURL, err := url.Parse(strings.Split(sluice["SLUICE_NATS_URL"], ",")[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, who := range []*url.Userinfo{nil, url.User(route.User.Username()), url.UserPassword(route.User.Username(), password(t)), clientURL.User} {
			if got := routeConnect(t, first.ClusterAddr().String(), who); !strings.Contains(got, "Authorization Violation") {
				t.Errorf("a route as %q: the node answered %q; want refused", who.Username(), got)
			}
		}
	})

	t.Run("redis", func(t *testing.T) {
		c := f.redis.Spec.Template.Spec.Containers[0]
		env := podEnv(t, c, secrets)
		args := append(c.Command, c.Args...)[1:] // after redis-server
		for i := range args {
			args[i] = expand(args[i], env)
		}
		srv := redistest.StartWith(t, args...)
		u, err := url.Parse(sluice["SLUICE_REDIS_URL"])
		if err != nil {
			t.Fatal(err)
		}
		u.Host = srv.Addr
		ping := func(u *url.URL) error {
			opts, err := redis.ParseURL(u.String())
			if err != nil {
				return err
			}
			c := redis.NewClient(opts)
			defer c.Close()
			return c.Ping(context.Background()).Err()
		}
		if err := ping(u); err != nil {
			t.Fatalf("the pods' URL %s: %v", u.Redacted(), err)
		}
		for _, who := range []*url.Userinfo{nil, url.UserPassword("", password(t))} {
			u.User = who
			if err := ping(u); err == nil || !strings.Contains(err.Error(), "NOAUTH") && !strings.Contains(err.Error(), "WRONGPASS") {
				t.Errorf("%s: %v; want refused", u.Redacted(), err)
			}
		}
	})
}

// natsOptions is the example's nats.conf as node name's server reads it: in the pod's
// environment (the secrets written in, the pod's name from the Downward API).
func natsOptions(t *testing.T, f *fleet, secrets map[secretRef]string, name string) *natsserver.Options {
	t.Helper()
	for k, v := range podEnv(t, f.statefulSet.Spec.Template.Spec.Containers[0], secrets) {
		t.Setenv(k, v)
	}
	t.Setenv("POD_NAME", name)
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte(f.configMaps["nats-config"].Data["nats.conf"]), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := natsserver.ProcessConfigFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	return opts
}

// startNATS runs a node of opts on this machine, on ports of its own and with no store:
// clustered, its cluster port open and its routes these; otherwise no cluster at all.
func startNATS(t *testing.T, opts *natsserver.Options, clustered bool, routes []*url.URL) *natsserver.Server {
	t.Helper()
	opts.Host, opts.Port, opts.HTTPPort, opts.PidFile = "127.0.0.1", -1, 0, ""
	opts.Cluster.Host, opts.Cluster.Port, opts.Routes = "127.0.0.1", -1, routes
	if !clustered {
		opts.Cluster = natsserver.ClusterOpts{}
	}
	opts.JetStream, opts.NoSigs, opts.NoLog = false, true, true
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	return ns
}

// routeConnect opens a route to the NATS node at addr as who (nil: no user) and returns its
// answer: after its INFO, a route's CONNECT names the cluster and its user and password
// (NATS's route protocol), and a PING asks for the answer at once.
func routeConnect(t *testing.T, addr string, who *url.Userinfo) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second)) // a hang guard
	r := bufio.NewReader(conn)
	if info, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(info, "INFO ") {
		t.Fatalf("the route port opened with %q, %v; want its INFO", info, err)
	}
	connect := map[string]any{"verbose": false, "pedantic": false, "tls_required": false, "name": "intruder", "cluster": "sluice-state", "headers": true}
	if who != nil {
		connect["user"] = who.Username()
		if pw, ok := who.Password(); ok {
			connect["pass"] = pw
		}
	}
	body, _ := json.Marshal(connect)
	if _, err := fmt.Fprintf(conn, "CONNECT %s\r\nPING\r\n", body); err != nil {
		return err.Error()
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(line)
}

// password is a new one, as the Secret's comment in redis.yaml makes them.
func password(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// podEnv is a container's environment as Kubernetes gives it: values from the secrets, and
// each $(NAME) of a variable listed before written in. Other sources (the Downward API) are
// left out.
func podEnv(t *testing.T, c corev1.Container, secrets map[secretRef]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			out[e.Name] = expand(e.Value, out)
		case e.ValueFrom.SecretKeyRef != nil:
			v, ok := secrets[secretRef{e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key}]
			if !ok {
				t.Fatalf("container %s: %s is from a Secret this test does not make", c.Name, e.Name)
			}
			out[e.Name] = v
		}
	}
	return out
}

// expand writes in each $(NAME) of vars, as Kubernetes does; any other stays as it is.
func expand(s string, vars map[string]string) string {
	return reference.ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := vars[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

var reference = regexp.MustCompile(`\$\([A-Za-z_][A-Za-z0-9_]*\)`)
