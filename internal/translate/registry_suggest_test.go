package translate

import (
	"strings"
	"testing"
)

// An unknown cluster name close to a registered one (a typo, another case)
// gets "did you mean"; one close to none does not.
func TestUnknownClusterSuggestsTheClosestName(t *testing.T) {
	reg := NewRegistry(Cluster{Name: "east"}, Cluster{Name: "west"}, Cluster{Name: "onprem"})
	for name, want := range map[string]string{
		"eats":     `Did you mean "east"?`,
		"East":     `Did you mean "east"?`,
		"on-prem":  `Did you mean "onprem"?`,
		"westt":    `Did you mean "west"?`,
		"europe-1": "",
	} {
		d := reg.UnknownCluster(name)
		if !strings.HasPrefix(d, `Cluster "`+name+`" is not registered in the provider's clusters (registered: east, onprem, west).`) {
			t.Errorf("%s: %s", name, d)
		}
		if want == "" && strings.Contains(d, "Did you mean") || want != "" && !strings.Contains(d, want) {
			t.Errorf("%s: %s; want %q", name, d, want)
		}
	}
	if _, err := reg.Select(Placement{Clusters: []string{"wset"}}, Root("clients")); err == nil || !strings.Contains(err.Error(), `Did you mean "west"?`) {
		t.Errorf("Select: %v", err)
	}
}
