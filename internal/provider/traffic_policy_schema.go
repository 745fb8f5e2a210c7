package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// The attributes of mesh_traffic_policy mirror trafficpolicy.Intent
// one to one (snake_case here, camelCase there); see tfjson.go.

func optString(desc string, v ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Validators: v}
}

func optInt(desc string, v ...validator.Int64) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Optional: true, Validators: v}
}

func optStrings(desc string) schema.ListAttribute {
	return schema.ListAttribute{MarkdownDescription: desc, Optional: true, ElementType: types.StringType}
}

func optMap(desc string) schema.MapAttribute {
	return schema.MapAttribute{MarkdownDescription: desc, Optional: true, ElementType: types.StringType}
}

func optObject(desc string, attrs map[string]schema.Attribute) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{MarkdownDescription: desc, Optional: true, Attributes: attrs}
}

func percent(desc string) schema.Float64Attribute {
	return schema.Float64Attribute{MarkdownDescription: desc, Optional: true, Validators: []validator.Float64{float64validator.Between(0, 100)}}
}

func headerOps(desc string) schema.SingleNestedAttribute {
	return optObject(desc, map[string]schema.Attribute{
		"set":    optMap("Headers to set, replacing any value."),
		"add":    optMap("Headers to append."),
		"remove": optStrings("Headers to remove."),
	})
}

func trafficPolicyAttributes() map[string]schema.Attribute {
	dur := durationValidator{}
	target := map[string]schema.Attribute{
		"cluster": optString("A backend cluster of the virtual destination."),
		"subset":  optString("Name of a subset of a service (with `labels`), e.g. a version."),
		"labels":  optMap("Pod labels of `subset`, e.g. `{ version = \"v2\" }`."),
	}
	return map[string]schema.Attribute{
		"id":             idAttribute(),
		"adopt_existing": adoptAttribute(),
		"name": schema.StringAttribute{
			MarkdownDescription: "Name of the intent; it names the routes it contributes and the errors that involve it. A DNS label.",
			Required:            true,
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			Validators:          []validator.String{dnsLabelValidator{}},
		},
		"destination": schema.SingleNestedAttribute{
			MarkdownDescription: "Where the traffic goes: a virtual destination by hostname (reference `mesh_virtual_destination.<x>.hostname` so Terraform plans it first), or a Kubernetes service and namespace.",
			Required:            true,
			Attributes: map[string]schema.Attribute{
				"virtual_destination": optString("Hostname of a `mesh_virtual_destination`."),
				"service":             optString("Name of a Kubernetes service (with `namespace`)."),
				"namespace":           optString("Namespace of `service`."),
			},
			PlanModifiers: nil,
		},
		"sources": optObject("Whose traffic the policy shapes: the clusters it is written to (default: every cluster where the destination is reachable), and, within them, namespaces and workload labels that become match conditions so that other callers are unaffected.",
			withAttributes(placementAttributes("source clusters"), map[string]schema.Attribute{
				"namespaces":      optStrings("Namespaces of the calling workloads."),
				"workload_labels": optMap("Labels of the calling workloads."),
			})),
		"match": schema.ListNestedAttribute{
			MarkdownDescription: "Requests the policy applies to; a request matches when it matches one entry. Omitted: all requests.",
			Optional:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"uri_prefix": optString("Path prefix."),
				"uri_exact":  optString("Exact path."),
				"uri_regex":  optString("Path regular expression (RE2)."),
				"method":     enumString("HTTP method.", translate.HTTPMethods),
				"headers":    optMap("Exact values of request headers."),
			}},
		},
		"timeout": optString("Timeout of a request, e.g. `2s`.", dur),
		"retries": optObject("Retries of failed requests.", map[string]schema.Attribute{
			"attempts":        schema.Int64Attribute{MarkdownDescription: "Number of retries.", Required: true, Validators: []validator.Int64{int64validator.Between(0, 100)}},
			"per_try_timeout": optString("Timeout of each try, e.g. `500ms`.", dur),
			"retry_on":        optStrings("Conditions that cause a retry: an HTTP status code (e.g. `503`) or one of " + oneOf(trafficpolicy.RetryOn) + "."),
		}),
		"fault": optObject("Faults injected to test resilience.", map[string]schema.Attribute{
			"delay": optObject("Delay some requests.", map[string]schema.Attribute{
				"percent":     percent("Share of requests delayed."),
				"fixed_delay": schema.StringAttribute{MarkdownDescription: "The delay, e.g. `100ms`.", Required: true, Validators: []validator.String{dur}},
			}),
			"abort": optObject("Fail some requests.", map[string]schema.Attribute{
				"percent":     percent("Share of requests aborted."),
				"http_status": schema.Int64Attribute{MarkdownDescription: "Status returned, e.g. `503`.", Required: true, Validators: []validator.Int64{int64validator.Between(200, 599)}},
			}),
		}),
		"traffic_shift": schema.ListNestedAttribute{
			MarkdownDescription: "Weighted split across backend clusters of a virtual destination (`cluster`, or `local` for the caller's own cluster), or across subsets of a service (`subset` with `labels`). Weights sum to 100.",
			Optional:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: withAttributes(target, map[string]schema.Attribute{
				"local":  schema.BoolAttribute{MarkdownDescription: "The caller's own cluster.", Optional: true},
				"weight": schema.Int64Attribute{MarkdownDescription: "Percent of the traffic.", Required: true, Validators: []validator.Int64{int64validator.Between(0, 100)}},
			})},
		},
		"mirror": optObject("Copy a share of the traffic to a cluster or subset; responses to copies are discarded.", withAttributes(target, map[string]schema.Attribute{
			"percent": percent("Share of requests mirrored. Default 100."),
		})),
		"headers": optObject("Header manipulation.", map[string]schema.Attribute{
			"request":  headerOps("On requests."),
			"response": headerOps("On responses."),
		}),
		"cors": optObject("CORS policy.", map[string]schema.Attribute{
			"allow_origins":     schema.ListAttribute{MarkdownDescription: "Allowed origins (exact).", Required: true, ElementType: types.StringType},
			"allow_methods":     enumStrings("Allowed methods.", trafficpolicy.CORSMethods),
			"allow_headers":     optStrings("Allowed request headers."),
			"expose_headers":    optStrings("Response headers browsers may read."),
			"max_age":           optString("How long preflight results may be cached, e.g. `24h`.", dur),
			"allow_credentials": schema.BoolAttribute{MarkdownDescription: "Whether credentials are allowed.", Optional: true},
		}),
		"connection_pool": optObject("Connection limits towards the destination.", map[string]schema.Attribute{
			"tcp": optObject("TCP settings.", map[string]schema.Attribute{
				"max_connections":         optInt("Most connections per backend host.", int64validator.AtLeast(1)),
				"connect_timeout":         optString("TCP connect timeout.", dur),
				"idle_timeout":            optString("Idle timeout of connections.", dur),
				"max_connection_duration": optString("Longest life of a connection.", dur),
				"keepalive": optObject("TCP keepalive, which keeps long cross-cluster connections through NATs and load balancers.", map[string]schema.Attribute{
					"time":     optString("Idle time before probes start.", dur),
					"interval": optString("Time between probes.", dur),
					"probes":   optInt("Unanswered probes before the connection is dropped.", int64validator.AtLeast(1)),
				}),
			}),
			"http": optObject("HTTP settings.", map[string]schema.Attribute{
				"http1_max_pending_requests":  optInt("Most queued requests.", int64validator.AtLeast(1)),
				"http2_max_requests":          optInt("Most active requests.", int64validator.AtLeast(1)),
				"max_requests_per_connection": optInt("Requests per connection before it is closed.", int64validator.AtLeast(1)),
				"max_retries":                 optInt("Most concurrent retries.", int64validator.AtLeast(0)),
				"idle_timeout":                optString("Idle timeout of upstream connections.", dur),
			}),
		}),
		"outlier_detection": optObject("Ejection of failing backend hosts (plain services only: a virtual destination's failover owns its outlier detection).", map[string]schema.Attribute{
			"consecutive_5xx_errors":     optInt("5xx responses in a row that eject a host.", int64validator.AtLeast(0)),
			"consecutive_gateway_errors": optInt("502/503/504 responses in a row that eject a host.", int64validator.AtLeast(0)),
			"interval":                   optString("Time between sweeps.", dur),
			"base_ejection_time":         optString("Minimum ejection time.", dur),
			"max_ejection_percent":       optInt("Most hosts ejected at once, in percent.", int64validator.Between(0, 100)),
			"min_health_percent":         optInt("Outlier detection stops below this share of healthy hosts.", int64validator.Between(0, 100)),
		}),
		"load_balancer": enumString("Load-balancing algorithm. `PASSTHROUGH` applies to a service destination only (on a virtual destination it would send requests to the virtual IP itself).",
			trafficpolicy.LoadBalancers),
		"tls_mode": enumString("TLS from the callers' sidecars to a service destination. A virtual destination takes `ISTIO_MUTUAL` only: east-west gateways route Istio mutual TLS by its SNI.",
			trafficpolicy.TLSModes),
		"resolved_destination": schema.StringAttribute{
			MarkdownDescription: "The destination as resolved at plan time (JSON): for a virtual destination its name, namespace and the backend clusters each client cluster can reach.",
			Computed:            true,
		},
		"objects": objectsAttribute(),
		"routing": routingAttribute("traffic_policy"),
	}
}
