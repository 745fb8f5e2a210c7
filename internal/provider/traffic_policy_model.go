package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// The model of mesh_traffic_policy: one Go struct per nested attribute,
// each field tagged with its attribute (the framework refuses a schema and
// a struct that disagree), and intent() below copying every field to the
// translator's trafficpolicy.Intent, checked by the compiler. Optional
// scalars are pointers: nil is an attribute left out.

type trafficPolicyModel struct {
	ID                  types.String        `tfsdk:"id"`
	Name                string              `tfsdk:"name"`
	Destination         tpDestinationModel  `tfsdk:"destination"`
	Sources             *tpSourcesModel     `tfsdk:"sources"`
	Match               []tpMatchModel      `tfsdk:"match"`
	Timeout             *string             `tfsdk:"timeout"`
	Retries             *tpRetriesModel     `tfsdk:"retries"`
	Fault               *tpFaultModel       `tfsdk:"fault"`
	TrafficShift        []tpShiftModel      `tfsdk:"traffic_shift"`
	Mirror              *tpMirrorModel      `tfsdk:"mirror"`
	Headers             *tpHeadersModel     `tfsdk:"headers"`
	CORS                *tpCORSModel        `tfsdk:"cors"`
	ConnectionPool      *tpConnectionPool   `tfsdk:"connection_pool"`
	OutlierDetection    *tpOutlierDetection `tfsdk:"outlier_detection"`
	LoadBalancer        *string             `tfsdk:"load_balancer"`
	TLSMode             *string             `tfsdk:"tls_mode"`
	ResolvedDestination types.String        `tfsdk:"resolved_destination"`
	Objects             types.Map           `tfsdk:"objects"`
	Routing             types.Map           `tfsdk:"routing"`
	Adopt               types.Bool          `tfsdk:"adopt_existing"`
	Adopted             types.Map           `tfsdk:"adopted"`
	// vd is the virtual destination the policy targets, when destination
	// looked it up; the routing statement reads its clients.
	vd *virtualdestination.Intent `tfsdk:"-"`
}

type tpDestinationModel struct {
	VirtualDestination *string `tfsdk:"virtual_destination"`
	Service            *string `tfsdk:"service"`
	Namespace          *string `tfsdk:"namespace"`
}

type tpSourcesModel struct {
	Clusters        []string          `tfsdk:"clusters"`
	ClusterSelector map[string]string `tfsdk:"cluster_selector"`
	Namespaces      []string          `tfsdk:"namespaces"`
	WorkloadLabels  map[string]string `tfsdk:"workload_labels"`
}

type tpMatchModel struct {
	URIPrefix *string           `tfsdk:"uri_prefix"`
	URIExact  *string           `tfsdk:"uri_exact"`
	URIRegex  *string           `tfsdk:"uri_regex"`
	Method    *string           `tfsdk:"method"`
	Headers   map[string]string `tfsdk:"headers"`
}

type tpRetriesModel struct {
	Attempts      int64    `tfsdk:"attempts"`
	PerTryTimeout *string  `tfsdk:"per_try_timeout"`
	RetryOn       []string `tfsdk:"retry_on"`
}

type tpFaultModel struct {
	Delay *struct {
		Percent    *float64 `tfsdk:"percent"`
		FixedDelay string   `tfsdk:"fixed_delay"`
	} `tfsdk:"delay"`
	Abort *struct {
		Percent    *float64 `tfsdk:"percent"`
		HTTPStatus int64    `tfsdk:"http_status"`
	} `tfsdk:"abort"`
}

type tpShiftModel struct {
	Cluster *string           `tfsdk:"cluster"`
	Subset  *string           `tfsdk:"subset"`
	Labels  map[string]string `tfsdk:"labels"`
	Local   *bool             `tfsdk:"local"`
	Weight  int64             `tfsdk:"weight"`
}

type tpMirrorModel struct {
	Cluster *string           `tfsdk:"cluster"`
	Subset  *string           `tfsdk:"subset"`
	Labels  map[string]string `tfsdk:"labels"`
	Percent *float64          `tfsdk:"percent"`
}

type tpHeadersModel struct {
	Request  *tpHeaderOpsModel `tfsdk:"request"`
	Response *tpHeaderOpsModel `tfsdk:"response"`
}

type tpHeaderOpsModel struct {
	Set    map[string]string `tfsdk:"set"`
	Add    map[string]string `tfsdk:"add"`
	Remove []string          `tfsdk:"remove"`
}

type tpCORSModel struct {
	AllowOrigins     []string `tfsdk:"allow_origins"`
	AllowMethods     []string `tfsdk:"allow_methods"`
	AllowHeaders     []string `tfsdk:"allow_headers"`
	ExposeHeaders    []string `tfsdk:"expose_headers"`
	MaxAge           *string  `tfsdk:"max_age"`
	AllowCredentials *bool    `tfsdk:"allow_credentials"`
}

type tpConnectionPool struct {
	TCP *struct {
		MaxConnections        *int64  `tfsdk:"max_connections"`
		ConnectTimeout        *string `tfsdk:"connect_timeout"`
		IdleTimeout           *string `tfsdk:"idle_timeout"`
		MaxConnectionDuration *string `tfsdk:"max_connection_duration"`
		Keepalive             *struct {
			Time     *string `tfsdk:"time"`
			Interval *string `tfsdk:"interval"`
			Probes   *int64  `tfsdk:"probes"`
		} `tfsdk:"keepalive"`
	} `tfsdk:"tcp"`
	HTTP *struct {
		HTTP1MaxPendingRequests  *int64  `tfsdk:"http1_max_pending_requests"`
		HTTP2MaxRequests         *int64  `tfsdk:"http2_max_requests"`
		MaxRequestsPerConnection *int64  `tfsdk:"max_requests_per_connection"`
		MaxRetries               *int64  `tfsdk:"max_retries"`
		IdleTimeout              *string `tfsdk:"idle_timeout"`
	} `tfsdk:"http"`
}

type tpOutlierDetection struct {
	Consecutive5xxErrors     *int64  `tfsdk:"consecutive_5xx_errors"`
	ConsecutiveGatewayErrors *int64  `tfsdk:"consecutive_gateway_errors"`
	Interval                 *string `tfsdk:"interval"`
	BaseEjectionTime         *string `tfsdk:"base_ejection_time"`
	MaxEjectionPercent       *int64  `tfsdk:"max_ejection_percent"`
	MinHealthPercent         *int64  `tfsdk:"min_health_percent"`
}

// intent is where mesh_traffic_policy's attributes become translator
// fields, one assignment per attribute.
func (m *trafficPolicyModel) intent() trafficpolicy.Intent {
	in := trafficpolicy.Intent{
		Name:         m.Name,
		Timeout:      deref(m.Timeout),
		LoadBalancer: deref(m.LoadBalancer),
		TLSMode:      deref(m.TLSMode),
	}
	if s := m.Sources; s != nil {
		in.Sources = trafficpolicy.Sources{
			Placement:      translate.Placement{Clusters: s.Clusters, ClusterSelector: s.ClusterSelector},
			Namespaces:     s.Namespaces,
			WorkloadLabels: s.WorkloadLabels,
		}
	}
	for _, x := range m.Match {
		in.Match = append(in.Match, trafficpolicy.Match{URIPrefix: deref(x.URIPrefix), URIExact: deref(x.URIExact), URIRegex: deref(x.URIRegex),
			Method: deref(x.Method), Headers: x.Headers})
	}
	if r := m.Retries; r != nil {
		in.Retries = &trafficpolicy.Retries{Attempts: int(r.Attempts), PerTryTimeout: deref(r.PerTryTimeout), RetryOn: r.RetryOn}
	}
	if f := m.Fault; f != nil {
		in.Fault = &trafficpolicy.Fault{}
		if d := f.Delay; d != nil {
			in.Fault.Delay = &trafficpolicy.Delay{Percent: deref(d.Percent), FixedDelay: d.FixedDelay}
		}
		if a := f.Abort; a != nil {
			in.Fault.Abort = &trafficpolicy.Abort{Percent: deref(a.Percent), HTTPStatus: int(a.HTTPStatus)}
		}
	}
	for _, s := range m.TrafficShift {
		in.TrafficShift = append(in.TrafficShift, trafficpolicy.Shift{Cluster: deref(s.Cluster), Local: deref(s.Local), Subset: deref(s.Subset),
			Labels: s.Labels, Weight: int(s.Weight)})
	}
	if x := m.Mirror; x != nil {
		in.Mirror = &trafficpolicy.Mirror{Cluster: deref(x.Cluster), Subset: deref(x.Subset), Labels: x.Labels, Percent: x.Percent}
	}
	if h := m.Headers; h != nil {
		in.Headers = &trafficpolicy.Headers{Request: h.Request.ops(), Response: h.Response.ops()}
	}
	if c := m.CORS; c != nil {
		in.CORS = &trafficpolicy.CORS{AllowOrigins: c.AllowOrigins, AllowMethods: c.AllowMethods, AllowHeaders: c.AllowHeaders,
			ExposeHeaders: c.ExposeHeaders, MaxAge: deref(c.MaxAge), AllowCredentials: c.AllowCredentials}
	}
	if cp := m.ConnectionPool; cp != nil {
		in.ConnectionPool = &trafficpolicy.ConnectionPool{}
		if t := cp.TCP; t != nil {
			in.ConnectionPool.TCP = &trafficpolicy.TCPPool{MaxConnections: intOf(t.MaxConnections), ConnectTimeout: deref(t.ConnectTimeout),
				IdleTimeout: deref(t.IdleTimeout), MaxConnectionDuration: deref(t.MaxConnectionDuration)}
			if k := t.Keepalive; k != nil {
				in.ConnectionPool.TCP.Keepalive = &trafficpolicy.Keepalive{Time: deref(k.Time), Interval: deref(k.Interval), Probes: intOf(k.Probes)}
			}
		}
		if h := cp.HTTP; h != nil {
			in.ConnectionPool.HTTP = &trafficpolicy.HTTPPool{HTTP1MaxPendingRequests: intOf(h.HTTP1MaxPendingRequests), HTTP2MaxRequests: intOf(h.HTTP2MaxRequests),
				MaxRequestsPerConnection: intOf(h.MaxRequestsPerConnection), MaxRetries: intOf(h.MaxRetries), IdleTimeout: deref(h.IdleTimeout)}
		}
	}
	if o := m.OutlierDetection; o != nil {
		in.OutlierDetection = &trafficpolicy.OutlierDetection{Consecutive5xxErrors: intPtr(o.Consecutive5xxErrors), ConsecutiveGatewayErrors: intPtr(o.ConsecutiveGatewayErrors),
			Interval: deref(o.Interval), BaseEjectionTime: deref(o.BaseEjectionTime), MaxEjectionPercent: intOf(o.MaxEjectionPercent), MinHealthPercent: intOf(o.MinHealthPercent)}
	}
	return in
}

func (h *tpHeaderOpsModel) ops() *trafficpolicy.HeaderOps {
	if h == nil {
		return nil
	}
	return &trafficpolicy.HeaderOps{Set: h.Set, Add: h.Add, Remove: h.Remove}
}

func intOf(p *int64) int {
	if p == nil {
		return 0
	}
	return int(*p)
}

func intPtr(p *int64) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}

// plain is the destination as written: a service, or the hostname of a
// virtual destination that destination() resolves.
func (d tpDestinationModel) plain() trafficpolicy.Destination {
	return trafficpolicy.Destination{VirtualDestination: deref(d.VirtualDestination), Service: deref(d.Service), Namespace: deref(d.Namespace)}
}
