package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestLongTextsLeaveMemoryWhereWarmUpPutIt: the server's resident memory after a 100,000
// character document on each endpoint stays within 1.5x of what it was when it became ready.
// A long document is hundreds of windows; run as one batch, ONNX Runtime's arena grew to its
// shape and kept it (2.1 GB from 180 MB), and Go's heap held the document's logits until its
// next collection.
func TestLongTextsLeaveMemoryWhereWarmUpPutIt(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of inference")
	}
	p := startProcess(t, "SLUICE_GENERATE_MODEL=none")
	warm := rssBytes(t, p.cmd.Process.Pid)
	body := `{"text":"` + strings.Repeat(".", 100000) + `"}`
	for _, path := range []string{"/analyze", "/pii/extract"} {
		resp, err := http.Post(p.url+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		if rss := rssBytes(t, p.cmd.Process.Pid); float64(rss) > 1.5*float64(warm) {
			t.Fatalf("after %s: RSS %d MiB, warm-up %d MiB: more than 1.5x", path, rss>>20, warm>>20)
		}
		t.Logf("after %s: RSS %d MiB (warm-up %d MiB)", path, rssBytes(t, p.cmd.Process.Pid)>>20, warm>>20)
	}
}
