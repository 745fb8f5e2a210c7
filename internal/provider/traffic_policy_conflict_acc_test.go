package provider

import (
	"regexp"
	"strings"
	"testing"
)

const conflictTrio = `
resource "mesh_traffic_policy" "a" {
  name        = "a"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = { clusters = ["east"] }
  timeout     = "3s"
}
resource "mesh_traffic_policy" "b" {
  name        = "b"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = { clusters = ["east"] }
  timeout     = "9s"
}
resource "mesh_traffic_policy" "c" {
  name        = "c"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = { clusters = ["east"] }
  retries     = { attempts = 2 }
}
`

var conflictAddress = regexp.MustCompile(`with (mesh_traffic_policy\.[a-z]+)`)

// Five identical plans of three policies on one destination, two of which
// set different timeouts for the same requests: every plan fails with one
// error, on a or b (whichever Terraform planned second), naming both, in
// the same words; never on c, which sets no timeout (issue 38: the error
// moved between plans, sometimes onto a third policy).
func TestAccTrafficPolicy_conflictNamedTheSameOnEveryPlan(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	w.write(providerConfig(t, "") + trafficVD)
	w.apply()
	t.Cleanup(func() {
		w.write(providerConfig(t, "") + trafficVD)
		w.destroy()
	})
	w.write(providerConfig(t, "") + trafficVD + conflictTrio)
	var detail string
	for i := range 5 {
		out, code := w.run("plan")
		if code == 0 {
			t.Fatalf("plan %d succeeded:\n%s", i+1, out)
		}
		blocks := errorBlocks(out)
		if len(blocks) != 1 || blocks[0].summary != "Conflicting traffic policies" {
			t.Fatalf("plan %d: want one error, Conflicting traffic policies; got %+v\n%s", i+1, blocks, out)
		}
		if !strings.Contains(blocks[0].detail, `Traffic policies "a" and "b" both set timeout`) {
			t.Errorf("plan %d: the error does not name a and b: %s", i+1, blocks[0].detail)
		}
		if detail == "" {
			detail = blocks[0].detail
		} else if blocks[0].detail != detail {
			t.Errorf("plan %d: the error reads\n%s\nan earlier plan's read\n%s", i+1, blocks[0].detail, detail)
		}
		addrs := conflictAddress.FindAllStringSubmatch(out, -1)
		if len(addrs) != 1 || (addrs[0][1] != "mesh_traffic_policy.a" && addrs[0][1] != "mesh_traffic_policy.b") {
			t.Errorf("plan %d: the error is on %v, want on a or b alone\n%s", i+1, addrs, out)
		}
		t.Logf("plan %d: on %s", i+1, addrs[0][1])
	}
}
