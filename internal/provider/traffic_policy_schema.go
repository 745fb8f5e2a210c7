package provider

import (
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

// optInt is an optional integer. Ranges are the translator's to check
// (trafficpolicy.Validate), in one place, with one message.
func optInt(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Optional: true}
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

// percent is a required share of requests; the translator checks its
// range (trafficpolicy.Validate), so the schema has no validator that
// would report the same mistake a second time.
func percent(desc string) schema.Float64Attribute {
	return schema.Float64Attribute{MarkdownDescription: desc, Required: true}
}

// optFloat is an optional number; its range is the translator's to check.
func optFloat(desc string) schema.Float64Attribute {
	return schema.Float64Attribute{MarkdownDescription: desc, Optional: true}
}

func headerOps(desc string) schema.SingleNestedAttribute {
	return optObject(desc, map[string]schema.Attribute{
		"set":    optMap("Headers to set, replacing any value. Unset: none set."),
		"add":    optMap("Headers to append. Unset: none appended."),
		"remove": optStrings("Headers to remove. Unset: none removed."),
	})
}

func trafficPolicyAttributes() map[string]schema.Attribute {
	dur := durationValidator{}
	target := map[string]schema.Attribute{
		"cluster": optString("A backend cluster of the virtual destination. Unset: the target is `local` or `subset`; exactly one of them is set."),
		"subset":  optString("Name of a subset of a service (with `labels`), e.g. a version. Unset: the target is `cluster` or `local`."),
		"labels":  optMap("Pod labels of `subset`, e.g. `{ version = \"v2\" }`; required with `subset`. Unset: only without `subset`."),
	}
	return map[string]schema.Attribute{
		"id":             idAttribute(),
		"adopt_existing": adoptAttribute(),
		"adopted":        adoptedAttribute(),
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
				"virtual_destination": optString("Hostname of a `mesh_virtual_destination`. Unset: the destination is `service` in `namespace`."),
				"service":             optString("Name of a Kubernetes service (with `namespace`). Unset: the destination is `virtual_destination`."),
				"namespace":           optString("Namespace of `service`; required with it. Unset: only with a `virtual_destination`."),
			},
			PlanModifiers: nil,
		},
		"sources": optObject("Whose traffic the policy shapes: the clusters it is written to (default: every cluster where the destination is reachable), and, within them, namespaces and workload labels that become match conditions so that other callers are unaffected.",
			withAttributes(placementAttributes("source clusters", "every cluster where the destination is reachable"), map[string]schema.Attribute{
				"namespaces":      optStrings("Namespaces of the calling workloads. Unset: callers in any namespace."),
				"workload_labels": optMap("Labels of the calling workloads. Unset: any workload."),
			})),
		"match": schema.ListNestedAttribute{
			MarkdownDescription: "Requests the policy applies to; a request matches when it matches one entry. Omitted: all requests.",
			Optional:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"uri_prefix": optString("Path prefix. Set at most one of `uri_prefix`, `uri_exact` and `uri_regex`. Unset (all three): any path matches."),
				"uri_exact":  optString("Exact path. Unset: no exact path condition."),
				"uri_regex":  optString("Path regular expression (RE2). Unset: no regular expression condition."),
				"method":     enumString("HTTP method. Unset: any method.", translate.HTTPMethods),
				"headers":    optMap("Exact values of request headers. Unset: no header condition."),
			}},
		},
		"timeout": optString("Timeout of a request, e.g. `2s`, retries included. Unset: no timeout (Istio disables the route timeout by default), so a request may wait as long as the backend takes.", dur),
		"retries": optObject("Retries of failed requests. Unset: Istio's default retry policy applies: 2 retries, each on another host, on `connect-failure`, `refused-stream`, `unavailable`, `cancelled` and `retriable-status-codes` (with no status codes listed). Set `attempts = 0` to turn retries off.", map[string]schema.Attribute{
			"attempts":        schema.Int64Attribute{MarkdownDescription: "Number of retries, 0 or more. `0` turns retries off, Istio's default retries included.", Required: true},
			"per_try_timeout": optString("Timeout of each try, e.g. `500ms`. Unset: a try may take what is left of `timeout`.", dur),
			"retry_on":        optStrings("Conditions that cause a retry: an HTTP status code (e.g. `503`) or one of " + oneOf(trafficpolicy.RetryOn) + ". Unset: Istio's default conditions, `connect-failure`, `refused-stream`, `unavailable`, `cancelled` and `retriable-status-codes`."),
		}),
		"fault": optObject("Faults injected to test resilience; set `delay`, `abort` or both. Unset: no fault is injected.", map[string]schema.Attribute{
			"delay": optObject("Delay some requests. Unset: no request is delayed.", map[string]schema.Attribute{
				"percent":     percent("Share of requests delayed, in percent: above 0 (at least 0.0001) and at most 100."),
				"fixed_delay": schema.StringAttribute{MarkdownDescription: "The delay, e.g. `100ms`.", Required: true, Validators: []validator.String{dur}},
			}),
			"abort": optObject("Fail some requests. Unset: no request is aborted.", map[string]schema.Attribute{
				"percent":     percent("Share of requests aborted, in percent: above 0 (at least 0.0001) and at most 100."),
				"http_status": schema.Int64Attribute{MarkdownDescription: "Status returned, e.g. `503`, from 200 to 599.", Required: true},
			}),
		}),
		"traffic_shift": schema.ListNestedAttribute{
			MarkdownDescription: "Weighted split across backend clusters of a virtual destination (`cluster`, or `local` for the caller's own cluster), or across subsets of a service (`subset` with `labels`). Weights sum to 100. Unset: requests are not split; they go where the destination sends them (a virtual destination's backends in failover order, a service's pods).",
			Optional:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: withAttributes(target, map[string]schema.Attribute{
				"local":  schema.BoolAttribute{MarkdownDescription: "The caller's own cluster. Default `false`: the target is `cluster` or `subset`.", Optional: true},
				"weight": schema.Int64Attribute{MarkdownDescription: "Percent of the traffic, from 0 to 100.", Required: true},
			})},
		},
		"mirror": optObject("Copy a share of the traffic to a cluster or subset; responses to copies are discarded. Unset: nothing is copied.", withAttributes(target, map[string]schema.Attribute{
			"percent": optFloat("Share of requests mirrored, in percent: above 0 (at least 0.0001) and at most 100. Default: every request (Istio mirrors 100% when no share is given)."),
		})),
		"headers": optObject("Header manipulation. Unset: headers pass unchanged.", map[string]schema.Attribute{
			"request":  headerOps("On requests. Unset: requests pass unchanged."),
			"response": headerOps("On responses. Unset: responses pass unchanged."),
		}),
		"cors": optObject("CORS policy, answered by the callers' sidecars. Unset: Istio adds no CORS handling; preflight requests and CORS headers are left to the application.", map[string]schema.Attribute{
			"allow_origins":     schema.ListAttribute{MarkdownDescription: "Allowed origins (exact).", Required: true, ElementType: types.StringType},
			"allow_methods":     enumStrings("Allowed methods. Unset: no `Access-Control-Allow-Methods` header; browsers then allow only `GET`, `HEAD` and `POST`.", trafficpolicy.CORSMethods),
			"allow_headers":     optStrings("Allowed request headers. Unset: only the headers browsers always allow (CORS-safelisted)."),
			"expose_headers":    optStrings("Response headers browsers may read. Unset: only the CORS-safelisted ones."),
			"max_age":           optString("How long preflight results may be cached, e.g. `24h`; whole seconds. Unset: no `Access-Control-Max-Age` header, so each browser uses its own default.", dur),
			"allow_credentials": schema.BoolAttribute{MarkdownDescription: "Whether credentials are allowed. Unset: no `Access-Control-Allow-Credentials` header, so browsers do not expose responses to credentialed requests.", Optional: true},
		}),
		"connection_pool": optObject("Connection limits towards the destination; set `tcp`, `http` or both. Unset: Istio's defaults, which limit nothing in practice (2^32-1 connections and requests).", map[string]schema.Attribute{
			"tcp": optObject("TCP settings. Unset: Istio's defaults for each field below.", map[string]schema.Attribute{
				"max_connections":         optInt("Most connections per backend host, 0 or more. Unset or `0`: Istio's default, 2^32-1."),
				"connect_timeout":         optString("TCP connect timeout. Unset: Istio's default, `10s`.", dur),
				"idle_timeout":            optString("Idle timeout of connections. Unset: Istio's default, one hour.", dur),
				"max_connection_duration": optString("Longest life of a connection. Unset: no limit.", dur),
				"keepalive": optObject("TCP keepalive, which keeps long cross-cluster connections through NATs and load balancers. Unset: no TCP keepalive is turned on.", map[string]schema.Attribute{
					"time":     optString("Idle time before probes start. Unset: the operating system's setting (Linux: 2 hours).", dur),
					"interval": optString("Time between probes. Unset: the operating system's setting (Linux: 75s).", dur),
					"probes":   optInt("Unanswered probes before the connection is dropped, 0 or more. Unset or `0`: the operating system's setting (Linux: 9)."),
				}),
			}),
			"http": optObject("HTTP settings. Unset: Istio's defaults for each field below.", map[string]schema.Attribute{
				"http1_max_pending_requests":  optInt("Most queued requests, 0 or more. Unset or `0`: Istio's default, 2^32-1."),
				"http2_max_requests":          optInt("Most active requests, 0 or more. Unset or `0`: Istio's default, 2^32-1."),
				"max_requests_per_connection": optInt("Requests per connection before it is closed, 0 or more. Unset or `0`: no limit."),
				"max_retries":                 optInt("Most concurrent retries to the destination, 0 or more. Unset or `0`: Istio's default, 2^32-1."),
				"idle_timeout":                optString("Idle timeout of upstream connections. Unset: Istio's default, one hour.", dur),
			}),
		}),
		"outlier_detection": optObject("Ejection of failing backend hosts (plain services only: a virtual destination's failover owns its outlier detection). Unset: no host is ejected.", map[string]schema.Attribute{
			"consecutive_5xx_errors":     optInt("5xx responses in a row that eject a host, 0 or more; `0` turns this check off. Unset: Istio's default, 5."),
			"consecutive_gateway_errors": optInt("502/503/504 responses in a row that eject a host, 0 or more. Unset or `0`: this check is off (Istio's default)."),
			"interval":                   optString("Time between sweeps. Unset: Istio's default, `10s`.", dur),
			"base_ejection_time":         optString("Minimum ejection time. Unset: Istio's default, `30s`.", dur),
			"max_ejection_percent":       optInt("Most hosts ejected at once, in percent, from 0 to 100. Unset or `0`: Istio's default, 10%."),
			"min_health_percent":         optInt("Outlier detection stops below this share of healthy hosts, from 0 to 100. Unset: Istio's default, 0% (always on)."),
		}),
		"load_balancer": enumString("Load-balancing algorithm. `PASSTHROUGH` applies to a service destination only (on a virtual destination it would send requests to the virtual IP itself). Unset: Istio's default, `LEAST_REQUEST`.",
			trafficpolicy.LoadBalancers),
		"tls_mode": enumString("TLS from the callers' sidecars to a service destination. A virtual destination takes `ISTIO_MUTUAL` only: east-west gateways route Istio mutual TLS by its SNI. Unset: a service destination gets Istio's automatic mutual TLS (Istio mutual TLS to pods with a sidecar, plain text to others); a virtual destination keeps `ISTIO_MUTUAL`.",
			trafficpolicy.TLSModes),
		"resolved_destination": schema.StringAttribute{
			MarkdownDescription: "Machine data, printed on one line: the destination as resolved at plan time (`v2 ` and JSON): for a virtual destination its name, namespace and the backend clusters each client cluster can reach. Reviewers read the `routing` attribute instead.",
			Computed:            true,
		},
		"objects": objectsAttribute("for a policy on `user.global`: `east/VirtualService.networking.istio.io/istio-system/tp-user.global` in each source cluster (one object per destination, composed from every policy on it), and, for connection settings, load balancing or TLS, the virtual destination's DestinationRule `east/DestinationRule.networking.istio.io/istio-system/vd-user`, to which the policy contributes (on a service destination: `<cluster>/DestinationRule.networking.istio.io/<namespace>/tp-<service>.<namespace>.svc.cluster.local`)."),
		"routing": routingAttribute("traffic_policy"),
	}
}
