package translate

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networkingapi "istio.io/api/networking/v1alpha3"
	securityapi "istio.io/api/security/v1beta1"
	typeapi "istio.io/api/type/v1beta1"
)

// viaProtojson is what protoMap stands for: protojson's text of m,
// decoded by encoding/json.
func viaProtojson(t *testing.T, m proto.Message) any {
	t.Helper()
	raw, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestProtoMapIsProtojson: protoMap gives what protojson's JSON decodes
// to, on messages with every kind of value the Istio kinds carry:
// durations with and without fractions, wrappers, doubles, 64-bit
// integers, enums, maps, lists, empty messages and oneofs
// (TestManifestIsTheObjectsJSON covers the objects the translator makes).
func TestProtoMapIsProtojson(t *testing.T) {
	msgs := []proto.Message{
		&networkingapi.DestinationRule{
			Host: "svc.global", ExportTo: []string{".", "istio-system"},
			TrafficPolicy: &networkingapi.TrafficPolicy{
				ConnectionPool: &networkingapi.ConnectionPoolSettings{
					Tcp: &networkingapi.ConnectionPoolSettings_TCPSettings{MaxConnections: 100, ConnectTimeout: durationpb.New(1500 * time.Millisecond),
						TcpKeepalive: &networkingapi.ConnectionPoolSettings_TCPSettings_TcpKeepalive{Time: durationpb.New(2 * time.Hour), Probes: 3}},
					Http: &networkingapi.ConnectionPoolSettings_HTTPSettings{H2UpgradePolicy: networkingapi.ConnectionPoolSettings_HTTPSettings_UPGRADE,
						IdleTimeout: durationpb.New(time.Microsecond), MaxRetries: 0},
				},
				OutlierDetection: &networkingapi.OutlierDetection{Consecutive_5XxErrors: wrapperspb.UInt32(0), Interval: durationpb.New(-3 * time.Second),
					BaseEjectionTime: durationpb.New(30*time.Second + 7*time.Nanosecond), MaxEjectionPercent: 50, MinHealthPercent: -1,
					SplitExternalLocalOriginErrors: true},
				LoadBalancer: &networkingapi.LoadBalancerSettings{
					LbPolicy: &networkingapi.LoadBalancerSettings_Simple{Simple: networkingapi.LoadBalancerSettings_ROUND_ROBIN},
					LocalityLbSetting: &networkingapi.LocalityLoadBalancerSetting{Enabled: wrapperspb.Bool(false),
						Distribute:       []*networkingapi.LocalityLoadBalancerSetting_Distribute{{From: "a/*", To: map[string]uint32{"a/*": 80, "b/*": 20}}},
						FailoverPriority: []string{"topology.istio.io/network"}},
				},
				Tls: &networkingapi.ClientTLSSettings{Mode: networkingapi.ClientTLSSettings_ISTIO_MUTUAL, SubjectAltNames: []string{}},
			},
			Subsets: []*networkingapi.Subset{{Name: "v1", Labels: map[string]string{"v": "1", "": "empty"}}, {}},
		},
		&networkingapi.VirtualService{
			Hosts: []string{"svc.global"},
			Http: []*networkingapi.HTTPRoute{{
				Timeout: durationpb.New(0), Retries: &networkingapi.HTTPRetry{Attempts: 3, PerTryTimeout: durationpb.New(250 * time.Millisecond), RetryOn: "5xx"},
				Fault: &networkingapi.HTTPFaultInjection{Abort: &networkingapi.HTTPFaultInjection_Abort{
					ErrorType:  &networkingapi.HTTPFaultInjection_Abort_HttpStatus{HttpStatus: 503},
					Percentage: &networkingapi.Percent{Value: 0.1}}},
				MirrorPercentage: &networkingapi.Percent{Value: 1e-7},
				Route:            []*networkingapi.HTTPRouteDestination{{Destination: &networkingapi.Destination{Host: "a", Port: &networkingapi.PortSelector{Number: 8080}}, Weight: 100}},
				Match:            []*networkingapi.HTTPMatchRequest{{Headers: map[string]*networkingapi.StringMatch{"x": {MatchType: &networkingapi.StringMatch_Exact{Exact: ""}}}}},
			}},
		},
		&networkingapi.ServiceEntry{Hosts: []string{"x"}, Location: networkingapi.ServiceEntry_Location(42), Resolution: networkingapi.ServiceEntry_STATIC,
			Endpoints: []*networkingapi.WorkloadEntry{{Address: "203.0.113.1", Ports: map[string]uint32{"http": 15443}, Weight: math.MaxUint32, Network: "n"}}},
		&securityapi.AuthorizationPolicy{Selector: &typeapi.WorkloadSelector{MatchLabels: map[string]string{"app": "a"}}, Action: securityapi.AuthorizationPolicy_DENY,
			Rules: []*securityapi.Rule{{}, {From: []*securityapi.Rule_From{{Source: &securityapi.Source{Principals: []string{"a"}}}}}}},
		&networkingapi.EnvoyFilter{ConfigPatches: []*networkingapi.EnvoyFilter_EnvoyConfigObjectPatch{{Patch: &networkingapi.EnvoyFilter_Patch{
			Value: &structpb.Struct{Fields: map[string]*structpb.Value{
				"n": structpb.NewNumberValue(0.30000000000000004), "s": structpb.NewStringValue("x"), "b": structpb.NewBoolValue(true),
				"z": structpb.NewNullValue(), "l": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(1)}}),
				"o": structpb.NewStructValue(&structpb.Struct{}),
			}}}}}},
		&networkingapi.Sidecar{},
	}
	for _, m := range msgs {
		got, err := protoMap(m.ProtoReflect())
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if want := viaProtojson(t, m); !reflect.DeepEqual(any(got), want) {
			t.Errorf("%T:\n got %#v\nwant %#v", m, got, want)
		}
	}
	// Floats of 32 bits as protojson writes them; wrappers of 64-bit
	// integers as strings.
	for _, f := range []float32{0.1, 1e-7, 3.4e38, 16777217, -0} {
		got, err := floatValue(float64(f), 32)
		if err != nil {
			t.Fatal(err)
		}
		if want := viaProtojson(t, wrapperspb.Float(f)); got != want {
			t.Errorf("float32 %v: got %v, want %v", f, got, want)
		}
	}
	for _, m := range []proto.Message{wrapperspb.Int64(-1 << 62), wrapperspb.UInt64(math.MaxUint64), wrapperspb.Bytes([]byte{0xff, 0}), wrapperspb.Double(math.Inf(-1))} {
		got, err := messageValue(m.ProtoReflect())
		if err != nil {
			t.Fatal(err)
		}
		if want := viaProtojson(t, m); got != want {
			t.Errorf("%T: got %#v, want %#v", m, got, want)
		}
	}
	// What protojson refuses, or a well-known type at the top, is left to
	// protojson.
	for _, m := range []proto.Message{durationpb.New(time.Hour), &structpb.Value{},
		&networkingapi.HTTPRoute{Timeout: &durationpb.Duration{Seconds: 1, Nanos: -1}}} {
		if _, err := protoMap(m.ProtoReflect()); !errors.Is(err, errProtoFallback) {
			t.Errorf("%T %v: %v, want errProtoFallback", m, m, err)
		}
	}
}
