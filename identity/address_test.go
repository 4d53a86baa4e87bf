package identity

import (
	"net/netip"
	"testing"
)

// X-Forwarded-For counts only from a trusted proxy, read from the right: what a client wrote
// at the left is never the address when a proxy appended the real one after it.
func TestClientAddressBelievesOnlyTrustedProxies(t *testing.T) {
	p, err := ParseProxies([]string{"10.0.0.0/8", " 192.168.1.7 ", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	xff := func(values ...string) [][]byte {
		out := make([][]byte, len(values))
		for i, v := range values {
			out[i] = []byte(v)
		}
		return out
	}
	for _, c := range []struct {
		peer string
		xff  [][]byte
		want string
	}{
		{"203.0.113.9", xff("198.51.100.1"), "203.0.113.9"},                    // not a proxy: its header means nothing
		{"10.1.2.3", nil, "10.1.2.3"},                                          // a proxy that says nothing is the client
		{"10.1.2.3", xff("198.51.100.1"), "198.51.100.1"},                      // one proxy
		{"10.1.2.3", xff("6.6.6.6, 198.51.100.1"), "198.51.100.1"},             // a client's spoofed entry on the left
		{"10.1.2.3", xff("6.6.6.6", "198.51.100.1, 10.9.9.9"), "198.51.100.1"}, // two proxies, two header lines
		{"192.168.1.7", xff("10.0.0.1, 10.0.0.2"), "10.0.0.1"},                 // every hop trusted: the leftmost
		{"10.1.2.3", xff("198.51.100.1, not-an-address"), "10.1.2.3"},          // garbage ends the walk at the proxy
		{"10.1.2.3", xff("198.51.100.1, 10.0.0.5, garbage"), "10.1.2.3"},       // likewise
		{"10.1.2.3", xff("2001:db8::1"), "2001:db8::1"},                        // IPv6 client
		{"::ffff:10.1.2.3", xff("198.51.100.1"), "198.51.100.1"},               // a mapped IPv4 peer
		{"fd00::1", xff("198.51.100.1, fd12::3"), "198.51.100.1"},              // IPv6 proxies
		{"192.168.1.8", xff("198.51.100.1"), "192.168.1.8"},                    // the neighbour of a trusted address
	} {
		if got := p.Client(c.peer, c.xff); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
	var none *Proxies
	if got := none.Client("10.1.2.3", xff("198.51.100.1")); got != "10.1.2.3" {
		t.Errorf("no proxies configured: %s", got)
	}
	if _, err := ParseProxies([]string{"10.0.0.0/8", "proxy.example.org"}); err == nil {
		t.Error("a host name was taken for a proxy")
	}
}

// TestAMappedProxyIsItsIPv4Self: a proxy written IPv4-mapped (as dual-stack tools print it, and
// as the mTLS proxy list always read it) trusts the IPv4 peer it names: kept an IPv6 network,
// it matched no peer, and every client behind the proxy was the proxy, sharing its failure
// bucket and its budget.
func TestAMappedProxyIsItsIPv4Self(t *testing.T) {
	for _, spec := range []string{"::ffff:10.0.0.0/104", "::ffff:10.1.2.3/128", "::ffff:10.1.2.3"} {
		p, err := ParseProxies([]string{spec})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Client("10.1.2.3", [][]byte{[]byte("198.51.100.1")}); got != "198.51.100.1" {
			t.Errorf("proxies %q: the peer 10.1.2.3 taken for the client (%s)", spec, got)
		}
		if p.Trusts(netip.MustParseAddr("10.9.9.9")) != (spec == "::ffff:10.0.0.0/104") {
			t.Errorf("proxies %q: 10.9.9.9 trusted wrongly", spec)
		}
	}
}
