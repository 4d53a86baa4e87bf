package identity

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Proxies are the reverse proxies in front of the server (an ingress, a load balancer) whose
// X-Forwarded-For entries are believed. Without them every request's address is its peer's:
// a client can write anything in X-Forwarded-For, so the header counts only from a peer that
// is one of these.
type Proxies struct {
	nets []netip.Prefix
}

// ParseProxies reads the trusted proxies: each an address ("10.0.0.7") or a network
// ("10.0.0.0/8", "fd00::/8"). An empty list trusts none. An IPv4 address or network written
// IPv4-mapped ("::ffff:10.0.0.0/104") is read as the IPv4 one, since peers are compared
// unmapped: kept as IPv6 it would match no peer.
func ParseProxies(list []string) (*Proxies, error) {
	p := &Proxies{}
	for i, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(s)
		if err != nil {
			addr, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("identity: trusted proxy %d is neither an address nor a network (10.0.0.7, 10.0.0.0/8)", i+1)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		if a := prefix.Addr(); a.Is4In6() && prefix.Bits() >= 96 {
			prefix = netip.PrefixFrom(a.Unmap(), prefix.Bits()-96)
		}
		p.nets = append(p.nets, prefix.Masked())
	}
	return p, nil
}

// Len is how many networks are trusted.
func (p *Proxies) Len() int {
	if p == nil {
		return 0
	}
	return len(p.nets)
}

// Trusts says whether a is one of the proxies' addresses.
func (p *Proxies) Trusts(a netip.Addr) bool {
	if p == nil {
		return false
	}
	a = a.Unmap()
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// Client is the address a request came from, given its peer's address and its
// X-Forwarded-For header values in order. A peer that is not a trusted proxy is the client. From
// a trusted one, the header is read from its right end, the entry the nearest proxy appended:
// each entry that is itself a trusted proxy passes the walk on, and the first that is not is
// the client. An entry a client wrote (to the left of what the proxies appended) is never
// reached unless every hop after it is trusted; an entry that is not an address ends the walk
// at the last proxy, which is then taken for the client.
func (p *Proxies) Client(peer string, forwardedFor [][]byte) string {
	addr, err := netip.ParseAddr(peer)
	if err != nil || p.Len() == 0 || !p.Trusts(addr) {
		return peer
	}
	client := addr
	for i := len(forwardedFor) - 1; i >= 0; i-- {
		entries := strings.Split(string(forwardedFor[i]), ",")
		for j := len(entries) - 1; j >= 0; j-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(entries[j]))
			if err != nil {
				return client.Unmap().String()
			}
			client = hop
			if !p.Trusts(hop) {
				return client.Unmap().String()
			}
		}
	}
	return client.Unmap().String()
}

// PeerKey is what an address is counted under: the address, or for IPv6 its /64, which one
// host can hand out to itself at will.
func PeerKey(peer string) string {
	ip := net.ParseIP(peer)
	if ip == nil || ip.To4() != nil {
		return peer
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
