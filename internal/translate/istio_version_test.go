package translate_test

import (
	"strings"
	"testing"

	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

func TestIstioMinor(t *testing.T) {
	for in, want := range map[string]string{"": translate.DefaultIstioVersion, "1.30": "1.30", "1.30.4": "1.30", "1.31.0": "1.31", translate.Unknown("x"): ""} {
		if got := (&translate.Cluster{IstioVersion: in}).IstioMinor(); got != want {
			t.Errorf("IstioMinor(%q) = %q, want %q", in, got, want)
		}
	}
}

// The shape istiod 1.30 crash-loops on (istio/istio#61857) is refused for
// a 1.30 cluster, naming the issue, and accepted on 1.31; the virtual
// destination translation never produces it, even in locality mode.
func TestCheckIstioVersionShapes(t *testing.T) {
	se := &networking.ServiceEntry{Spec: networkingapi.ServiceEntry{
		Hosts: []string{"user.global"}, Resolution: networkingapi.ServiceEntry_DNS,
		Endpoints: []*networkingapi.WorkloadEntry{{Address: "a.example", Locality: "us-east-1"}, {Address: "b.example", Locality: "us-west-2"}},
	}}
	dr := &networking.DestinationRule{Spec: networkingapi.DestinationRule{Host: "user.global", Subsets: []*networkingapi.Subset{{
		Name: "east", TrafficPolicy: &networkingapi.TrafficPolicy{LoadBalancer: &networkingapi.LoadBalancerSettings{
			LocalityLbSetting: &networkingapi.LocalityLoadBalancerSetting{FailoverPriority: []string{"x=y"}}}},
	}}}}
	objs := []translate.Object{{Cluster: "old", Resource: se}, {Cluster: "old", Resource: dr}}
	err := translate.CheckIstioVersionShapes(objs, translate.NewRegistry(translate.Cluster{Name: "old", IstioVersion: "1.30.2"}))
	if err == nil || !strings.Contains(err.Error(), "istio/istio#61857") {
		t.Errorf("1.30: got %v, want the #61857 refusal", err)
	}
	if err := translate.CheckIstioVersionShapes(objs, translate.NewRegistry(translate.Cluster{Name: "old", IstioVersion: "1.31"})); err != nil {
		t.Errorf("1.31: %v", err)
	}
	se.Spec.Endpoints[1].Locality = "us-east-1"
	if err := translate.CheckIstioVersionShapes(objs, translate.NewRegistry(translate.Cluster{Name: "old", IstioVersion: "1.30"})); err != nil {
		t.Errorf("one locality: %v", err)
	}

}
