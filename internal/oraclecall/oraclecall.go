// Package oraclecall is the provider's half of Istio's oracles
// (tools/istio): it runs the translator, and computes the routing
// statement, for a case's intent and registry, and answers in JSON.
//
// The oracles call it in process (tools/istio/internal/oracle) or, when
// MESH_ORACLE_TRANSLATOR names a program built from
// tools/oracletranslate, through that program, one request per run on
// its standard input. The second way is what tools/mutate uses: the
// simulation's test binary, which links much of istiod, is built once
// per run, and a mutation of the translator only rebuilds the small
// translating program (go build -overlay), whose answers the simulation
// judges as it judges its own.
//
// Files: oraclecall.go (the request, the answer, Do and Serve).
package oraclecall

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// Env names the translating program the oracles run instead of calling
// Do in process.
const Env = "MESH_ORACLE_TRANSLATOR"

// Request asks for one case's translation (Op "translate") or routing
// statement (Op "routing").
type Request struct {
	Op string `json:"op"`
	// Intent is "cluster", "virtual-destination", "traffic-policy" or
	// "access-policy": the golden directory's intent.
	Intent string `json:"intent"`
	// Raw is the case's intent as its input file writes it; for the
	// routing statement of a traffic policy, the policy alone.
	Raw json.RawMessage `json:"raw"`
	// VD is, for the routing statement of a traffic policy on a virtual
	// destination, that destination's intent.
	VD       json.RawMessage         `json:"vd,omitempty"`
	Registry []translate.CaseCluster `json:"registry"`
}

// Response is the answer: the translator's objects per cluster (YAML
// documents, each starting with "# cluster: <name>" as the golden files
// write them) or the routing statement's structured form (routing.
// Destination, Traffic or Access, in JSON), or the error either returned.
type Response struct {
	Objects map[string][]string `json:"objects,omitempty"`
	Routing json.RawMessage     `json:"routing,omitempty"`
	Err     string              `json:"err,omitempty"`
}

// Do answers req in process.
func Do(req Request) Response {
	reg := translate.CaseRegistry(req.Registry)
	var out any
	var err error
	switch req.Op {
	case "translate":
		var objs []translate.Object
		if objs, err = translateIntent(req.Intent, req.Raw, reg); err != nil {
			return Response{Err: err.Error()}
		}
		resp := Response{Objects: map[string][]string{}}
		for _, o := range objs {
			doc, err := render(o)
			if err != nil {
				return Response{Err: "rendering: " + err.Error()}
			}
			resp.Objects[o.Cluster] = append(resp.Objects[o.Cluster], doc)
		}
		return resp
	case "routing":
		out, err = routingOf(req, reg)
	default:
		err = fmt.Errorf("unknown op %q", req.Op)
	}
	if err != nil {
		return Response{Err: err.Error()}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return Response{Err: err.Error()}
	}
	return Response{Routing: b}
}

// Serve reads one request from r and writes its answer to w.
func Serve(r io.Reader, w io.Writer) error {
	var req Request
	if err := json.NewDecoder(r).Decode(&req); err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	return json.NewEncoder(w).Encode(Do(req))
}

// render writes one object as the golden files do.
func render(o translate.Object) (string, error) {
	m, err := o.Manifest()
	if err != nil {
		return "", err
	}
	y, err := yaml.Marshal(m)
	if err != nil {
		return "", err
	}
	return "# cluster: " + o.Cluster + "\n" + string(y), nil
}

// translateIntent runs the translator of intent on a case's intent.
func translateIntent(intent string, raw json.RawMessage, reg *translate.Registry) ([]translate.Object, error) {
	switch intent {
	case "cluster":
		var in cluster.Intent
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		return cluster.Translate(in, reg)
	case "virtual-destination":
		var in virtualdestination.Intent
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		return virtualdestination.Translate(in, reg)
	case "traffic-policy":
		var in struct {
			Policy      *trafficpolicy.Intent     `json:"policy,omitempty"`
			Destination trafficpolicy.Destination `json:"destination"`
			Compose     []trafficpolicy.Named     `json:"compose,omitempty"`
		}
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		if len(in.Compose) > 0 {
			return trafficpolicy.Compose(in.Compose, reg)
		}
		if in.Policy == nil {
			return nil, errors.New("golden case has neither policy nor compose")
		}
		return trafficpolicy.Translate(*in.Policy, in.Destination, reg)
	case "access-policy":
		in, err := accessCase(raw)
		if err != nil {
			return nil, err
		}
		return accesspolicy.Translate(in.Policy, in.Destination, reg)
	}
	return nil, fmt.Errorf("no translator for intent %q", intent)
}

type accessIntent struct {
	Policy      accesspolicy.Intent      `json:"policy"`
	Destination accesspolicy.Destination `json:"destination"`
}

func accessCase(raw json.RawMessage) (accessIntent, error) {
	var in accessIntent
	err := yaml.UnmarshalStrict(raw, &in)
	return in, err
}

// routingOf is the routing statement of the request's intent.
func routingOf(req Request, reg *translate.Registry) (any, error) {
	switch req.Intent {
	case "virtual-destination":
		var in virtualdestination.Intent
		if err := yaml.UnmarshalStrict(req.Raw, &in); err != nil {
			return nil, err
		}
		return routing.VirtualDestination(in, reg)
	case "traffic-policy":
		var in trafficpolicy.Intent
		if err := yaml.UnmarshalStrict(req.Raw, &in); err != nil {
			return nil, err
		}
		var dest *virtualdestination.Intent
		if req.VD != nil {
			dest = &virtualdestination.Intent{}
			if err := yaml.UnmarshalStrict(req.VD, dest); err != nil {
				return nil, err
			}
		}
		return routing.TrafficPolicy(in, dest, reg)
	case "access-policy":
		in, err := accessCase(req.Raw)
		if err != nil {
			return nil, err
		}
		return routing.AccessPolicy(in.Policy, in.Destination, reg)
	}
	return nil, fmt.Errorf("no routing statement for intent %q", req.Intent)
}
