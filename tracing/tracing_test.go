package tracing

import (
	"strings"
	"testing"
	"time"
)

func TestConfigAsOpenMedReadsIt(t *testing.T) {
	off, on := false, true
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{Config{}, false},
		{Config{Endpoint: "http://collector:4318/v1/traces"}, true}, // an endpoint opts in
		{Config{Endpoint: "http://collector:4318/v1/traces", Enabled: &off}, false},
		{Config{Enabled: &on}, true},
	} {
		if c.cfg.On() != c.want {
			t.Errorf("%+v: on %v", c.cfg, !c.want)
		}
	}
	err := Config{Endpoint: "collector:4318", Headers: "Authorization=Bearer s3cret,novalue", Timeout: 0, BatchDelay: time.Hour}.Validate()
	for _, f := range []string{"Endpoint", "Headers", "Timeout", "BatchDelay"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("%s not reported: %v", f, err)
		}
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatal("a header's value in an error")
	}
	if tr, err := New(Config{Timeout: time.Second, BatchDelay: time.Second}, "v"); tr != nil || err != nil {
		t.Fatalf("off: %v %v", tr, err)
	}
}
