package runstate

import (
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// Two virtual destinations with one hostname, or with one VIP, are refused
// at plan: Istio would keep one of the hostname's objects, and sidecars
// would give both VIPs' TCP ports one listener. A virtual destination
// planned again (same name) keeps its own hostname and may change its VIP.
func TestDestinationIndexRefusesADuplicateHostnameOrVIP(t *testing.T) {
	var d DestinationIndex
	if at, _, err := d.Remember(virtualdestination.Intent{Name: "user", Hostname: "user.global", VIP: "241.0.0.1"}); err != nil {
		t.Fatalf("first virtual destination refused at %s: %v", at, err)
	}
	if _, _, err := d.Remember(virtualdestination.Intent{Name: "user", Hostname: "user.global", VIP: "241.0.0.2"}); err != nil {
		t.Fatalf("the same virtual destination planned again with another VIP is refused: %v", err)
	}
	at, summary, err := d.Remember(virtualdestination.Intent{Name: "people", Hostname: "user.global", VIP: "241.0.0.9"})
	if err == nil || at != "hostname" || !strings.Contains(err.Error(), `"user" and "people" both serve hostname user.global`) {
		t.Errorf("a second virtual destination on hostname user.global: got (%q, %q, %v), want a Duplicate hostname error at hostname naming both", at, summary, err)
	}
	at, summary, err = d.Remember(virtualdestination.Intent{Name: "orders", Hostname: "orders.global", VIP: "241.0.0.2"})
	if err == nil || at != "vip" || !strings.Contains(err.Error(), `"user" and "orders" both get VIP 241.0.0.2`) {
		t.Errorf("a second virtual destination on VIP 241.0.0.2: got (%q, %q, %v), want a Duplicate VIP error at vip naming both", at, summary, err)
	}
	if _, _, err := d.Remember(virtualdestination.Intent{Name: "orders", Hostname: "orders.global", VIP: "241.0.0.1"}); err != nil {
		t.Errorf("VIP 241.0.0.1, which user left when planned again, is refused: %v", err)
	}
}
