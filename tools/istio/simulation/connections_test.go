package simulation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
)

// What a traffic policy's connection_pool and load_balancer do: Istio
// writes them into the destination's Envoy cluster (circuit breakers,
// connect timeout, TCP keepalive, HTTP protocol options, load-balancing
// policy), which every sidecar that reaches the destination gets. The
// table shows the cluster's settings; checkConnections compares each
// setting the policy makes with what Envoy is told.

// tpConnections is the part of a traffic policy's intent these checks read.
type tpConnections struct {
	ConnectionPool *struct {
		TCP  *tcpPool  `json:"tcp"`
		HTTP *httpPool `json:"http"`
	} `json:"connectionPool"`
	LoadBalancer string `json:"loadBalancer"`
}

type tcpPool struct {
	MaxConnections uint32 `json:"maxConnections"`
	ConnectTimeout string `json:"connectTimeout"`
	Keepalive      *struct {
		Time     string `json:"time"`
		Interval string `json:"interval"`
		Probes   uint32 `json:"probes"`
	} `json:"keepalive"`
}

type httpPool struct {
	HTTP1MaxPendingRequests  uint32 `json:"http1MaxPendingRequests"`
	HTTP2MaxRequests         uint32 `json:"http2MaxRequests"`
	MaxRequestsPerConnection uint32 `json:"maxRequestsPerConnection"`
	IdleTimeout              string `json:"idleTimeout"`
}

// setsConnections reports whether the policy sets anything of the
// destination's Envoy cluster.
func (p tpConnections) setsConnections() bool {
	return p.ConnectionPool != nil || p.LoadBalancer != ""
}

// setting is one Envoy cluster setting: what Envoy is told and what the
// policy says ("" when the policy leaves it alone).
type setting struct{ name, got, want string }

// connectionSettings reads cl's settings next to the policy's.
func (p tpConnections) connectionSettings(t *testing.T, cl *clusterv3.Cluster) []setting {
	dur := func(s string) string {
		if s == "" {
			return ""
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("the policy's duration %q: %v", s, err)
		}
		return d.String()
	}
	num := func(v uint32) string {
		if v == 0 {
			return ""
		}
		return fmt.Sprint(v)
	}
	var th *clusterv3.CircuitBreakers_Thresholds
	for _, x := range cl.GetCircuitBreakers().GetThresholds() {
		th = x
	}
	opts := &httpv3.HttpProtocolOptions{}
	if a, ok := cl.GetTypedExtensionProtocolOptions()["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]; ok {
		if err := a.UnmarshalTo(opts); err != nil {
			t.Fatalf("cluster %s: HTTP protocol options: %v", cl.Name, err)
		}
	}
	ka := cl.GetUpstreamConnectionOptions().GetTcpKeepalive()
	secs := func(v uint32) string {
		if v == 0 {
			return ""
		}
		return (time.Duration(v) * time.Second).String()
	}
	var want tpConnections
	if p.ConnectionPool != nil {
		want = p
	}
	out := []setting{{name: "lb", got: cl.GetLbPolicy().String()}}
	if p.LoadBalancer != "" {
		out[0].want = p.LoadBalancer
	}
	if tcp := want.tcp(); tcp != nil {
		out = append(out,
			setting{"max connections", num(th.GetMaxConnections().GetValue()), num(tcp.MaxConnections)},
			setting{"connect timeout", cl.GetConnectTimeout().AsDuration().String(), dur(tcp.ConnectTimeout)})
		if k := tcp.Keepalive; k != nil {
			out = append(out,
				setting{"keepalive time", secs(ka.GetKeepaliveTime().GetValue()), dur(k.Time)},
				setting{"keepalive interval", secs(ka.GetKeepaliveInterval().GetValue()), dur(k.Interval)},
				setting{"keepalive probes", num(ka.GetKeepaliveProbes().GetValue()), num(k.Probes)})
		}
	}
	if h := want.http(); h != nil {
		common := opts.GetCommonHttpProtocolOptions()
		out = append(out,
			setting{"max pending", num(th.GetMaxPendingRequests().GetValue()), num(h.HTTP1MaxPendingRequests)},
			setting{"max requests", num(th.GetMaxRequests().GetValue()), num(h.HTTP2MaxRequests)},
			setting{"max requests per connection", num(common.GetMaxRequestsPerConnection().GetValue()), num(h.MaxRequestsPerConnection)},
			setting{"idle timeout", common.GetIdleTimeout().AsDuration().String(), dur(h.IdleTimeout)})
	}
	return out
}

func (p tpConnections) tcp() *tcpPool {
	if p.ConnectionPool == nil {
		return nil
	}
	return p.ConnectionPool.TCP
}

func (p tpConnections) http() *httpPool {
	if p.ConnectionPool == nil {
		return nil
	}
	return p.ConnectionPool.HTTP
}

// checkConnections describes the destination's Envoy cluster as the
// table shows it, and fails for every setting the policy makes that Envoy
// is not told; it reports whether all of them are in place.
func (p tpConnections) checkConnections(t *testing.T, row string, cl *clusterv3.Cluster) (string, bool) {
	t.Helper()
	if cl == nil {
		t.Errorf("%s: the sidecar has no Envoy cluster for the destination, so none of the policy's connection settings applies", row)
		return "NO CLUSTER", false
	}
	var parts []string
	ok := true
	for _, s := range p.connectionSettings(t, cl) {
		if s.want == "" {
			continue
		}
		parts = append(parts, s.name+" "+s.got)
		if s.got != s.want {
			ok = false
			t.Errorf("%s: Envoy's %s is %q; the policy sets %s", row, s.name, s.got, s.want)
		}
	}
	return strings.Join(parts, ", "), ok
}

// loadBalancerOf is the load-balancing policy the policies on one
// destination ask for: the one a policy sets, else Istio's default
// (LEAST_REQUEST: defaultLBAlgorithm in pilot/pkg/networking/core).
func loadBalancerOf(pds []pd) string {
	for _, x := range pds {
		if x.p.LoadBalancer != "" {
			return x.p.LoadBalancer
		}
	}
	return "LEAST_REQUEST"
}
