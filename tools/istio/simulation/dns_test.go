package simulation

import (
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"istio.io/istio/pilot/pkg/model"
)

// A registry may give an east-west gateway by host name (a cloud load
// balancer's DNS name). istiod resolves such a gateway itself, from
// meshNetworks or from a gateway Service's load-balancer hostname
// (RESOLVE_HOSTNAME_GATEWAYS, on by default), and drops it when the name
// does not resolve: remote pods behind it become unreachable. The
// simulation answers those lookups from a DNS server of its own, which
// resolves every name to gatewayIP(name), so that hostname gateways take
// part in the mesh as in a real one, and the expectations know where a
// resolved gateway leads.

func TestMain(m *testing.M) {
	addr, stop, err := startGatewayDNS()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the simulation's DNS server for hostname gateways:", err)
		os.Exit(1)
	}
	model.NetworkGatewayTestDNSServers = []string{addr}
	code := m.Run()
	stop()
	os.Exit(code)
}

// gatewayIP is the address the simulation's DNS gives a gateway's host
// name: one of 198.18.0.0/15 (RFC 2544, never a case's address), the same
// for the same name.
func gatewayIP(name string) string {
	h := fnv.New32a()
	h.Write([]byte(strings.TrimSuffix(strings.ToLower(name), ".")))
	v := h.Sum32()
	return fmt.Sprintf("198.%d.%d.%d", 18+v>>24&1, v>>8&0xff, v&0xfe+1)
}

// startGatewayDNS serves A records (gatewayIP) for every name, and no
// other record, on a UDP port of 127.0.0.1.
func startGatewayDNS() (string, func(), error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		resp := new(dns.Msg)
		resp.SetReply(req)
		for _, q := range req.Question {
			if q.Qtype == dns.TypeA {
				resp.Answer = append(resp.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 3600},
					A:   net.ParseIP(gatewayIP(q.Name)),
				})
			}
		}
		_ = w.WriteMsg(resp) // a lost answer is a gateway istiod drops, which the expectations catch
	})}
	go func() { _ = srv.ActivateAndServe() }() // ends with Shutdown
	return pc.LocalAddr().String(), func() { _ = srv.Shutdown() }, nil
}

// gatewayAddr is the address istiod sends cross-network traffic to for
// cluster c: its gateway's IP, or what the simulation's DNS makes of its
// host name ("" without a gateway).
func (c registryCluster) gatewayAddr() string {
	if c.EastWestGateway == nil {
		return ""
	}
	if isIP(c.EastWestGateway.Address) {
		return c.EastWestGateway.Address
	}
	return gatewayIP(c.EastWestGateway.Address)
}
