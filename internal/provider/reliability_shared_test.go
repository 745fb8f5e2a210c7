package provider

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// Two states sharing one composed VirtualService, on the local mesh
// (issue 36): a restore of that object without managedFields, and both
// states applying at the same moment.

// sharedOwnerState is the state that owns the destination: a virtual
// destination and a traffic policy with a timeout on it.
func sharedOwnerState(provider, timeout string) string {
	return provider + fmt.Sprintf(`
resource "mesh_virtual_destination" "d" {
  name     = "shr-d"
  hostname = "shr-d.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [{ cluster = "east", namespace = "users", service = "d" }]
  clients  = { clusters = ["east", "west"] }
}

resource "mesh_traffic_policy" "timeout" {
  name        = "shr-timeout"
  destination = { virtual_destination = mesh_virtual_destination.d.hostname }
  sources     = { clusters = ["east"] }
  timeout     = %q
}
`, timeout)
}

// sharedOtherState is another team's state: a retry policy on the first
// state's destination, found through its record.
func sharedOtherState(provider string, attempts int) string {
	return provider + fmt.Sprintf(`
resource "mesh_traffic_policy" "retries" {
  name        = "shr-retries"
  destination = { virtual_destination = "shr-d.global" }
  sources     = { clusters = ["east"] }
  retries     = { attempts = %d, per_try_timeout = "1s", retry_on = ["5xx"] }
}
`, attempts)
}

// sharedVS is what the shared VirtualService in east holds: its
// contributions (annotation names) and each route as
// name@timeout/attempts.
func sharedVS(t *testing.T) (contributions, routes []string) {
	t.Helper()
	vs := getObject(t, "east", gvrVS, "istio-system", "tp-shr-d.global")
	if vs == nil {
		return nil, nil
	}
	for k := range vs.GetAnnotations() {
		if name, ok := strings.CutPrefix(k, "traffic-policy.mesh-intent.io/"); ok {
			contributions = append(contributions, name)
		}
	}
	sort.Strings(contributions)
	http, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	for _, r := range http {
		route, _ := r.(map[string]any)
		name, _, _ := unstructured.NestedString(route, "name")
		timeout, _, _ := unstructured.NestedString(route, "timeout")
		attempts, _, _ := unstructured.NestedInt64(route, "retries", "attempts")
		routes = append(routes, fmt.Sprintf("%s@%s/%d", name, timeout, attempts))
	}
	return contributions, routes
}

// requireSharedVS fails the test unless the shared VirtualService holds
// both states' contributions, composed into one route with timeout and
// attempts.
func requireSharedVS(t *testing.T, when, timeout string, attempts int) {
	t.Helper()
	contribs, routes := sharedVS(t)
	want := fmt.Sprintf("shr-retries+shr-timeout@%s/%d", timeout, attempts)
	if strings.Join(contribs, ",") != "shr-retries,shr-timeout" || strings.Join(routes, ",") != want {
		t.Fatalf("%s: the shared VirtualService has contributions %v and routes %v; want both contributions and route %s", when, contribs, routes, want)
	}
}

// restoreWithoutManagedFields deletes the shared VirtualService and
// creates it again from its YAML with managedFields (and the other fields
// the API server sets) stripped, as a backup tool's restore does.
func restoreWithoutManagedFields(t *testing.T) {
	t.Helper()
	ri := dyn(t, "east").Resource(gvrVS).Namespace("istio-system")
	live, err := ri.Get(context.Background(), "tp-shr-d.global", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the shared VirtualService: %v", err)
	}
	backup := live.DeepCopy()
	for _, f := range []string{"managedFields", "uid", "resourceVersion", "creationTimestamp", "generation"} {
		unstructured.RemoveNestedField(backup.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(backup.Object, "status")
	uid := live.GetUID()
	if err := ri.Delete(context.Background(), live.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		t.Fatalf("deleting the shared VirtualService: %v", err)
	}
	restored, err := ri.Create(context.Background(), backup, metav1.CreateOptions{FieldManager: "velero-restore"})
	if err != nil {
		t.Fatalf("restoring the shared VirtualService: %v", err)
	}
	for _, mf := range restored.GetManagedFields() {
		if mf.Manager != "velero-restore" {
			t.Fatalf("the restored object records manager %q: not a restore without managedFields", mf.Manager)
		}
	}
}

// A restore of a composed object without its managedFields keeps every
// state's routes through the next apply of any one of them: contributions
// are trusted by content, not by who last wrote the object. After each
// restore one of the two states applies a change; both contributions and
// the composed route stay, and both plans are then empty.
func TestAccReliability_restoredComposedObject(t *testing.T) {
	ensureNamespace(t, "east", "users")
	provider := providerConfig(t, "")
	owner, other := newRelTF(t), newRelTF(t)
	relCleanup(t, owner, nil, engine.Owner{Kind: "virtual-destination", Name: "shr-d"})
	relCleanup(t, other, nil)

	owner.write(sharedOwnerState(provider, "5s"))
	owner.apply()
	other.write(sharedOtherState(provider, 2))
	other.apply()
	requireSharedVS(t, "after both applied", "5s", 2)

	restoreWithoutManagedFields(t)
	requireSharedVS(t, "restored", "5s", 2)
	other.write(sharedOtherState(provider, 3))
	other.apply()
	requireSharedVS(t, "restored, then the other state applied", "5s", 3)
	owner.planIsEmpty()
	other.planIsEmpty()

	restoreWithoutManagedFields(t)
	owner.write(sharedOwnerState(provider, "6s"))
	owner.apply()
	requireSharedVS(t, "restored, then the owning state applied", "6s", 3)
	owner.planIsEmpty()
	other.planIsEmpty()
	destroyShared(t, owner, other)
}

// destroyShared destroys the other state, then the owning one, and fails
// the test if anything of theirs is left.
func destroyShared(t *testing.T, owner, other *relTF) {
	t.Helper()
	other.destroy()
	owner.destroy()
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("left after destroying both states: %v", left)
	}
}

// Two states apply changes to their policies on one VirtualService at the
// same moment, three rounds: both applies succeed, no route is lost, and
// both plans are empty afterwards. No clock: both applies are started,
// and the test waits for both.
func TestAccReliability_concurrentStates(t *testing.T) {
	ensureNamespace(t, "east", "users")
	provider := providerConfig(t, "")
	owner, other := newRelTF(t), newRelTF(t)
	relCleanup(t, owner, nil, engine.Owner{Kind: "virtual-destination", Name: "shr-d"})
	relCleanup(t, other, nil)

	owner.write(sharedOwnerState(provider, "5s"))
	owner.apply()
	other.write(sharedOtherState(provider, 2))
	other.apply()
	requireSharedVS(t, "after both applied", "5s", 2)

	for round := 1; round <= 3; round++ {
		timeout, attempts := fmt.Sprintf("%ds", 5+round), 2+round
		owner.write(sharedOwnerState(provider, timeout))
		other.write(sharedOtherState(provider, attempts))
		type result struct {
			out  string
			err  error
			code int
		}
		results := make(chan result, 2)
		for _, w := range []*relTF{owner, other} {
			ctx, cancel := context.WithTimeout(context.Background(), relCommandTimeout)
			cmd, out := w.command(ctx, "apply", "-no-color", "-input=false", "-auto-approve")
			if err := cmd.Start(); err != nil {
				cancel()
				t.Fatalf("round %d: starting an apply: %v", round, err)
			}
			go func(out *bytes.Buffer) {
				defer cancel()
				err := cmd.Wait()
				results <- result{out: out.String(), err: err, code: cmd.ProcessState.ExitCode()}
			}(out)
		}
		for range 2 {
			r := <-results
			if r.code != 0 {
				t.Fatalf("round %d: an apply failed (exit %d, %v):\n%s", round, r.code, r.err, r.out)
			}
		}
		requireSharedVS(t, fmt.Sprintf("round %d", round), timeout, attempts)
		owner.planIsEmpty()
		other.planIsEmpty()
	}
	destroyShared(t, owner, other)
}
