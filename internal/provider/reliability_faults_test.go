package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// relVDConfig is a virtual destination with objects in all three clusters:
// each cluster is a client (ServiceEntry and DestinationRule vd-<name>) and
// a backend used from the others (vd-<name>-backend), and keeps the
// record ConfigMap.
func relVDConfig(resource, name string, port int, clients string) string {
	return fmt.Sprintf(`
resource "mesh_virtual_destination" %[1]q {
  name     = %[2]q
  hostname = "%[2]s.global"
  ports    = [{ number = %[3]d, protocol = "HTTP" }]
  backends = [
    { cluster = "east",   namespace = "users", service = "user", priority = 0 },
    { cluster = "west",   namespace = "users", service = "user", priority = 1 },
    { cluster = "onprem", namespace = "users", service = "user", priority = 2 },
  ]
  clients = { clusters = %[4]s }
}
`, resource, name, port, clients)
}

// requireStateCoversLive checks the inventory in the state file right after
// a failed apply, before anything refreshes it, against the objects in the
// clusters:
//
//   - every object the intent owns in a cluster is listed (no orphan);
//   - every listed object with a digest exists: only objects whose write
//     or delete was cut in flight, marked with the unconfirmed digest, may
//     be listed without existing;
//   - in the clusters that did not fail, state and clusters agree exactly.
func requireStateCoversLive(t *testing.T, w *relTF, addr string, owner engine.Owner, failed string) {
	t.Helper()
	state := w.mustInventory(addr)
	live := liveOwned(t, owner.Kind, owner.Name)
	isLive := map[string]bool{}
	for _, k := range live {
		isLive[k] = true
	}
	listed := map[string]bool{}
	var unconfirmed []string
	for _, e := range state {
		listed[e.Key] = true
		if e.Digest == engine.DigestUnconfirmed {
			unconfirmed = append(unconfirmed, e.Key)
			if !strings.HasPrefix(e.Key, failed+"/") {
				t.Errorf("%s is unconfirmed, but only cluster %s failed", e.Key, failed)
			}
			continue
		}
		if !isLive[e.Key] {
			t.Errorf("state lists %s with digest %s, but it does not exist", e.Key, e.Digest)
		}
	}
	for _, k := range live {
		if !listed[k] {
			t.Errorf("%s exists but state does not list it: an orphan", k)
		}
	}
	t.Logf("after the fault: %d objects exist, state lists %d, of which unconfirmed: %v", len(live), len(state), unconfirmed)
	if t.Failed() {
		t.FailNow()
	}
}

// A cluster goes away in the middle of an apply across three clusters:
// first while a virtual destination is created, then while it is updated.
// The error names the cluster; state lists every object that exists (and
// marks those whose fate the lost cluster never told); the next apply
// converges, with nothing orphaned.
func TestAccReliability_clusterGoesAwayMidApply(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	proxies := newRelProxies(t)
	owner := engine.Owner{Kind: "virtual-destination", Name: "rel-cut"}
	const addr = "mesh_virtual_destination.cut"
	w := newRelTF(t)
	relCleanup(t, w, func() { proxies.heal(t) }, owner)
	provider := providerConfigWith(t, `request_timeout = "10s"`, proxies.connection)
	onprem := proxies["onprem"]

	// 1. Create. onprem is slow, so its writes are in flight together;
	// the moment the first of them lands, onprem's connections are cut
	// and new ones reset. The responses still on their way are lost.
	w.write(provider + relVDConfig("cut", owner.Name, 8080, `["east", "west", "onprem"]`))
	onprem.SetLatency(250 * time.Millisecond)
	cut := relWatch(t, "onprem", owner, func(keys []string, _ map[string]string) bool { return len(keys) > 0 }, onprem.Drop)
	out := w.applyFails()
	if !relFired(cut) {
		t.Fatalf("the apply ended before anything reached onprem: the fault did not land mid-apply\n%s", out)
	}
	relRequireClusterError(t, out, "onprem", `is unreachable`)
	requireStateCoversLive(t, w, addr, owner, "onprem")
	if !w.inventory(addr).tainted {
		t.Error("a virtual destination whose create failed must be tainted, so the next apply replaces it")
	}

	// The cluster comes back: the next apply converges.
	proxies.heal(t)
	w.apply()
	w.requireExact(addr, owner.Kind, owner.Name)
	// Per cluster: the client ServiceEntries (hostname, cluster hosts) and
	// DestinationRules (hostname, one per backend cluster's host), the
	// backend ServiceEntries (hostname, cluster hosts) and DestinationRule,
	// and the record.
	if n := len(liveOwned(t, owner.Kind, owner.Name)); n != 30 {
		t.Fatalf("%d objects after converging, want 10 in each of 3 clusters", n)
	}
	w.planIsEmpty()
	requireNoOrphans(t, w)

	// 2. Update: a new port rewrites every object, and onprem stops being
	// a client, so its client objects are pruned. onprem goes away (its
	// port refuses connections) as soon as its first object changed.
	w.write(provider + relVDConfig("cut", owner.Name, 9090, `["east", "west"]`))
	onprem.SetLatency(250 * time.Millisecond)
	// The baseline is read before Terraform starts, so the watch compares
	// with the objects as they were, however late it first looks.
	_, baseline, err := relOwnedVersions(dyn(t, "onprem"), "onprem", owner)
	if err != nil || len(baseline) == 0 {
		t.Fatalf("reading onprem's objects before the update: %d objects, %v", len(baseline), err)
	}
	cut = relWatch(t, "onprem", owner, func(_ []string, versions map[string]string) bool {
		for k, v := range baseline {
			if versions[k] != v {
				return true
			}
		}
		return false
	}, onprem.Refuse)
	out = w.applyFails()
	if !relFired(cut) {
		t.Fatalf("the apply ended before anything changed in onprem: the fault did not land mid-apply\n%s", out)
	}
	relRequireClusterError(t, out, "onprem", `is unreachable`)
	requireStateCoversLive(t, w, addr, owner, "onprem")

	// A refresh while onprem is still away keeps onprem's entries (with a
	// warning naming it) rather than forgetting objects that exist.
	kept := relKeys(w.mustInventory(addr))
	out, code := w.run("apply", "-refresh-only", "-auto-approve")
	if code != 0 || !regexp.MustCompile(`Warning: Reading owned objects in cluster onprem`).MatchString(out) {
		t.Fatalf("refresh with onprem away: exit %d, want success with a warning naming onprem:\n%s", code, out)
	}
	if got := relKeys(w.mustInventory(addr)); strings.Join(got, " ") != strings.Join(kept, " ") {
		t.Fatalf("refresh with onprem away changed the inventory\nbefore: %v\nafter:  %v", kept, got)
	}

	proxies.heal(t)
	w.refreshOnly()
	w.requireExact(addr, owner.Kind, owner.Name)
	w.apply()
	w.requireExact(addr, owner.Kind, owner.Name)
	w.planIsEmpty()
	requireNoOrphans(t, w)
	if got := liveOwned(t, owner.Kind, owner.Name); len(got) != 24 {
		t.Fatalf("after the update: %v, want 10 objects in east and west and 4 in onprem (no client objects)", got)
	}

	w.destroy()
	if left := liveOwned(t, owner.Kind, owner.Name); len(left) > 0 {
		t.Fatalf("left after destroy: %v", left)
	}
}

// A slow cluster: with request_timeout = "2s" and onprem's answers held
// back by its proxy for as long as the apply runs, the apply fails naming
// onprem as the cluster that did not answer; east and west are applied,
// nothing in onprem is lost from state, and the apply converges once
// onprem answers again. No clock decides: an answer that never comes can
// be late only if requests are bounded by request_timeout, and unbounded
// ones would hang the apply until relCommandTimeout kills it, which fails
// the test.
func TestAccReliability_slowCluster(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	proxies := newRelProxies(t)
	owner := engine.Owner{Kind: "virtual-destination", Name: "rel-slow"}
	const addr = "mesh_virtual_destination.slow"
	w := newRelTF(t)
	relCleanup(t, w, func() { proxies.heal(t) }, owner)
	provider := providerConfigWith(t, `request_timeout = "2s"`, proxies.connection)

	w.write(provider + relVDConfig("slow", owner.Name, 8080, `["east", "west", "onprem"]`))
	w.apply()
	w.requireExact(addr, owner.Kind, owner.Name)

	// onprem stops answering. The refresh before the apply warns that
	// onprem did not answer and keeps its entries; the apply fails naming
	// it.
	proxies["onprem"].Hold()
	w.write(provider + relVDConfig("slow", owner.Name, 9090, `["east", "west", "onprem"]`))
	out := w.applyFails()
	if !regexp.MustCompile(`Warning: Reading owned objects in cluster onprem[\s\S]*did not answer in time`).MatchString(out) {
		t.Errorf("the refresh did not warn that onprem did not answer:\n%s", out)
	}
	relRequireClusterError(t, out, "onprem", `did not answer in time`)
	if !regexp.MustCompile(`request_timeout`).MatchString(out) {
		t.Errorf("the timeout error does not point at request_timeout:\n%s", out)
	}
	requireStateCoversLive(t, w, addr, owner, "onprem")
	// east and west have the new port, onprem still the old one, and
	// state says so: onprem's entries kept their previous digests.
	for _, e := range w.mustInventory(addr) {
		if strings.HasPrefix(e.Key, "onprem/") && e.Digest == engine.DigestUnconfirmed {
			t.Errorf("%s: nothing reached onprem, so nothing is unconfirmed", e.Key)
		}
	}
	if out, code := w.run("plan", "-detailed-exitcode", "-refresh=false"); code != 2 || !strings.Contains(out, "mesh_virtual_destination.slow will be updated") {
		t.Fatalf("after the timeout the plan must update the virtual destination again (exit %d):\n%s", code, out)
	}

	proxies.heal(t)
	w.apply()
	w.requireExact(addr, owner.Kind, owner.Name)
	w.planIsEmpty()
	requireNoOrphans(t, w)
	w.destroy()
}

// relRequireClusterError fails the test unless Terraform's output has an
// error naming the cluster with the given explanation, and no error
// naming another cluster.
func relRequireClusterError(t *testing.T, out, cluster, explanation string) {
	t.Helper()
	if !regexp.MustCompile(`Error: .* in cluster ` + cluster + `[\s\S]*Cluster ` + cluster + ` ` + explanation).MatchString(out) {
		t.Fatalf("no error naming cluster %s (%q):\n%s", cluster, explanation, out)
	}
	for _, other := range testClusters {
		if other != cluster && regexp.MustCompile(`Error: .* in cluster `+other).MatchString(out) {
			t.Fatalf("an error names cluster %s, which did not fail:\n%s", other, out)
		}
	}
	if i := strings.Index(out, "Error: "); i >= 0 {
		first, _, _ := strings.Cut(out[i:], "\n\n\n")
		t.Logf("first error:\n%s", first)
	}
}
