package trafficpolicy

import (
	"encoding/json"
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/translatetest"
)

// fleet is a registry of n clusters (prod-eu-west-1-c00, ...) and a virtual
// destination backed in all but the last two, every cluster its client;
// the first client does not reach the second backend (an exclusion).
func fleet(n int) (*translate.Registry, Destination) {
	var cs []translate.Cluster
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("prod-eu-west-1-c%02d", i)
		names = append(names, name)
		cs = append(cs, translate.Cluster{Name: name, Labels: map[string]string{"tier": []string{"web", "api"}[i%2]}})
	}
	backends := names[:n-2]
	dest := Destination{VirtualDestination: "user.global", VirtualDestinationName: "user", BackendClusters: backends, ClientBackends: map[string][]string{}}
	for i, c := range names {
		reached := append([]string(nil), backends...)
		if i == 0 {
			reached = append(reached[:1:1], reached[2:]...)
		}
		dest.ClientBackends[c] = reached
	}
	return translate.NewRegistry(cs...), dest
}

// fleetPolicies are policies of every kind that writes objects, on the
// fleet's destination, from overlapping sources.
func fleetPolicies(reg *translate.Registry, dest Destination) []Named {
	all := translate.Placement{Clusters: reg.Names()}
	web := translate.Placement{ClusterSelector: map[string]string{"tier": "web"}}
	api := translate.Placement{ClusterSelector: map[string]string{"tier": "api"}}
	percent := 5.0
	return []Named{
		{Policy: Intent{Name: "timeout", Sources: Sources{Placement: all}, Timeout: "3s"}, Destination: dest},
		{Policy: Intent{Name: "canary", Sources: Sources{Placement: api}, Match: []Match{{Headers: map[string]string{"x-canary": "true"}}},
			TrafficShift: []Shift{{Cluster: "prod-eu-west-1-c03", Weight: 100}}, Retries: &Retries{Attempts: 2}}, Destination: dest},
		{Policy: Intent{Name: "local", Sources: Sources{Placement: translate.Placement{Clusters: []string{"prod-eu-west-1-c02", "prod-eu-west-1-c04", "prod-eu-west-1-c06"}}},
			Match: []Match{{URIPrefix: "/v2"}}, TrafficShift: []Shift{{Local: true, Weight: 80}, {Cluster: "prod-eu-west-1-c07", Weight: 20}}}, Destination: dest},
		{Policy: Intent{Name: "mirror", Sources: Sources{Placement: web}, Match: []Match{{URIPrefix: "/v3"}}, Mirror: &Mirror{Cluster: "prod-eu-west-1-c05", Percent: &percent}}, Destination: dest},
		{Policy: Intent{Name: "pool", Sources: Sources{Placement: all}, ConnectionPool: &ConnectionPool{TCP: &TCPPool{MaxConnections: 100}}, LoadBalancer: "LEAST_REQUEST"}, Destination: dest},
	}
}

// sameComposition checks that, for every object Compose makes of
// policies, composing the contributions stored on it (restricted to its
// cluster) gives the same bytes as composing the whole contributions, and
// as Compose itself. It returns the objects checked.
func sameComposition(t *testing.T, policies []Named, reg *translate.Registry, mustCompose bool) int {
	t.Helper()
	want, err := Compose(policies, reg)
	if err != nil {
		if mustCompose {
			t.Fatal(err)
		}
		return 0 // nothing is written: there is nothing to compare
	}
	whole := map[string]string{}
	in := map[string]map[string]string{}
	parts := map[string]composition.Part{}
	writes := map[translate.Key]map[string]bool{} // which policies write each object
	for _, p := range policies {
		w, restricted, err := NewContributions(p, Writer{Workspace: "team"}, reg)
		if err != nil {
			t.Fatalf("%s: %v", p.Policy.Name, err)
		}
		whole[p.Policy.Name], in[p.Policy.Name] = w, restricted
		// A writer's own part is typed as written, never decoded.
		if parts[p.Policy.Name], err = NewPart(p, Writer{Workspace: "team"}, reg); err != nil {
			t.Fatalf("%s: %v", p.Policy.Name, err)
		}
		objs, err := Translate(p.Policy, p.Destination, reg)
		if err != nil {
			t.Fatalf("%s: %v", p.Policy.Name, err)
		}
		for _, o := range objs {
			if writes[o.Key()] == nil {
				writes[o.Key()] = map[string]bool{}
			}
			writes[o.Key()][p.Policy.Name] = true
		}
	}
	for _, o := range want {
		key := o.Key()
		fromWhole, fromRestricted := map[string]string{}, map[string]string{}
		for name := range writes[key] {
			fromWhole[name] = whole[name]
			fromRestricted[name] = whole[name]
			if r, ok := in[name][key.Cluster]; ok {
				fromRestricted[name] = r
			} else if in[name] != nil {
				t.Fatalf("%s writes %s but has no contribution restricted to %s", name, key, key.Cluster)
			}
		}
		m, err := o.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		wantYAML, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		for what, contributions := range map[string]map[string]string{"whole": fromWhole, "restricted": fromRestricted} {
			compose := ComposeContributions
			if what == "whole" {
				compose = composeWhole // whole ones may be over the size limit
			}
			got, err := compose(key, contributions, nil)
			if err != nil {
				t.Fatalf("%s from the %s contributions: %v", key, what, err)
			}
			gotYAML, err := yaml.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if string(gotYAML) != string(wantYAML) {
				t.Fatalf("%s composed from the %s contributions:\n%s\nwant:\n%s", key, what, gotYAML, wantYAML)
			}
		}
		typed := map[string]composition.Contribution{}
		for name := range writes[key] {
			typed[name] = parts[name].For(key.Cluster).Contribution
		}
		got, err := (&Composer{}).Compose(key, typed)
		if err != nil {
			t.Fatalf("%s from the writers' own typed parts: %v", key, err)
		}
		gotYAML, err := yaml.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if string(gotYAML) != string(wantYAML) {
			t.Fatalf("%s composed from the writers' own typed parts:\n%s\nwant:\n%s", key, gotYAML, wantYAML)
		}
	}
	return len(want)
}

// Restricting a contribution to the cluster of the object that stores it
// changes nothing of what is composed there: over every golden case and a
// 50-cluster fleet, the objects composed from restricted contributions are
// byte for byte those composed from whole ones.
func TestRestrictedContributionsComposeTheSame(t *testing.T) {
	checked := 0
	for _, c := range translatetest.Inputs(t) {
		t.Run(c.Name, func(t *testing.T) {
			var in goldenIntent
			if err := yaml.UnmarshalStrict(c.Intent, &in); err != nil {
				t.Fatal(err)
			}
			policies := in.Compose
			if in.Policy != nil {
				policies = []Named{{Policy: *in.Policy, Destination: in.Destination}}
			}
			checked += sameComposition(t, policies, c.Registry, false)
		})
	}
	reg, dest := fleet(50)
	t.Run("50 clusters", func(t *testing.T) {
		n := sameComposition(t, fleetPolicies(reg, dest), reg, true)
		if n < 100 {
			t.Fatalf("the fleet composes %d objects, want one VirtualService and DestinationRule per cluster", n)
		}
		checked += n
	})
	if checked < 120 {
		t.Fatalf("only %d objects compared", checked)
	}
}

// A one-line timeout policy on a destination backed in 48 clusters: its
// whole contribution is over the 32 KiB every reader accepts, what each
// object stores is not, and does not grow with the fleet.
func TestRestrictedContributionSizeDoesNotGrowWithTheFleet(t *testing.T) {
	sizes := map[int]int{}
	for _, n := range []int{10, 50} {
		reg, dest := fleet(n)
		p := Named{Policy: Intent{Name: "timeout", Sources: Sources{Placement: translate.Placement{Clusters: reg.Names()}}, Timeout: "3s"}, Destination: dest}
		whole, in, err := NewContributions(p, Writer{Workspace: "team"}, reg)
		if err != nil {
			t.Fatal(err)
		}
		if len(in) != n {
			t.Fatalf("%d clusters: %d restricted contributions, want one per source cluster", n, len(in))
		}
		largest := 0
		for c, raw := range in {
			if _, err := DecodeContribution(raw); err != nil {
				t.Fatalf("the contribution restricted to %s is refused: %v", c, err)
			}
			largest = max(largest, len(raw))
		}
		sizes[n] = largest
		if n == 50 && len(whole) <= MaxContributionBytes {
			t.Fatalf("the whole contribution at 50 clusters is %d bytes: the fleet is too small to show the limit", len(whole))
		}
	}
	if sizes[50] > 1024 || sizes[50] != sizes[10] {
		t.Fatalf("restricted contributions are %v bytes at 10 and 50 clusters; want the same, under 1 KiB", sizes)
	}
	t.Logf("largest restricted contribution: %d bytes at 10 clusters, %d at 50", sizes[10], sizes[50])
}

// composeWhole is ComposeContributions without the reader's checks (the
// size limit): what whole contributions compose to, however large.
func composeWhole(key translate.Key, contributions map[string]string, _ *translate.Registry) (map[string]any, error) {
	var policies []Named
	for _, raw := range contributions {
		var c Contribution
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return nil, err
		}
		policies = append(policies, c.Named)
	}
	objs, err := compose(policies, registryOf(policies), false, false)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.Key() == key {
			return o.Manifest()
		}
	}
	return nil, fmt.Errorf("no object %s", key)
}

// BenchmarkContribution is what one policy costs a writer at 10 and 50
// clusters: its contributions made (NewContributions) and, in every
// cluster, its object composed with four other policies' contributions.
// It reports the bytes of the contribution stored on one object (and of
// the whole one, for comparison); the time is per policy.
func BenchmarkContribution(b *testing.B) {
	for _, n := range []int{10, 50} {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			reg, dest := fleet(n)
			policies := fleetPolicies(reg, dest)
			stored := map[string]map[string]string{} // cluster -> policy -> contribution
			for _, p := range policies[1:] {
				_, in, err := NewContributions(p, Writer{Workspace: "team"}, reg)
				if err != nil {
					b.Fatal(err)
				}
				for c, raw := range in {
					if stored[c] == nil {
						stored[c] = map[string]string{}
					}
					stored[c][p.Policy.Name] = raw
				}
			}
			self := policies[0]
			objs, err := Translate(self.Policy, self.Destination, reg)
			if err != nil {
				b.Fatal(err)
			}
			var whole string
			largest := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w, in, err := NewContributions(self, Writer{Workspace: "team"}, reg)
				if err != nil {
					b.Fatal(err)
				}
				whole = w
				for _, o := range objs {
					k := o.Key()
					contributions := map[string]string{self.Policy.Name: in[k.Cluster]}
					for name, raw := range stored[k.Cluster] {
						contributions[name] = raw
					}
					largest = max(largest, len(in[k.Cluster]))
					if _, err := ComposeContributions(k, contributions, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(largest), "bytes/contribution")
			b.ReportMetric(float64(len(whole)), "bytes/whole")
		})
	}
}
