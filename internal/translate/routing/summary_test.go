package routing

import (
	"fmt"
	"strings"
	"testing"
)

// A host's summary lists failover, then shifts, then access, each intent
// with its lines; clusters that state the same line share it; other
// hosts get their own summary.
func TestSummarizeGathersAHostsStatementsInOnePlace(t *testing.T) {
	got := Summarize([]Part{
		{Host: "user.global", Aspect: AspectAccess, Intent: `mesh_access_policy "account-to-user"`, Statement: Statement{"east": "allow accounts/account from east: GET /users/* port 8080"}},
		{Host: "user.global", Aspect: AspectShift, Intent: `mesh_traffic_policy "user-shift"`, Statement: Statement{"east": "east 80%, onprem 20%", "west": "east 80%, onprem 20%", "onprem": "onprem 80%, east 20%"}},
		{Host: "user.global", Aspect: AspectFailover, Intent: `mesh_virtual_destination "user"`, Statement: Statement{"west": "east > onprem", "east": "east > onprem", "onprem": "onprem > east"}},
		{Host: "billing.global", Aspect: AspectFailover, Intent: `mesh_virtual_destination "billing"`, Statement: Statement{}},
	})
	want := `failover mesh_virtual_destination "user":
  east, west: east > onprem
  onprem: onprem > east
shift mesh_traffic_policy "user-shift":
  east, west: east 80%, onprem 20%
  onprem: onprem 80%, east 20%
access mesh_access_policy "account-to-user":
  east: allow accounts/account from east: GET /users/* port 8080`
	if got["user.global"] != want {
		t.Errorf("user.global:\n%s\nwant:\n%s", got["user.global"], want)
	}
	if got["billing.global"] != "failover mesh_virtual_destination \"billing\":\n  no cluster" {
		t.Errorf("billing.global: %q", got["billing.global"])
	}
	if len(got) != 2 {
		t.Errorf("%d hosts, want 2", len(got))
	}
}

// At 4 clusters x 20 services (a virtual destination, a traffic policy
// shifting from the local cluster, an access policy each) the summary
// stays readable: at most 3 headings and 6 lines a host.
func TestSummarizeAtTwentyServices(t *testing.T) {
	clusters := []string{"east", "west", "onprem", "wine"}
	var parts []Part
	for i := 0; i < 20; i++ {
		host := fmt.Sprintf("svc%02d.global", i)
		fail, shift, access := Statement{}, Statement{}, Statement{}
		for j, c := range clusters {
			fail[c] = clusters[i%4] + " > " + clusters[(i+1)%4] + " > " + clusters[(i+2)%4]
			if i%2 == 0 {
				shift[c] = fmt.Sprintf("%s 90%%, %s 10%%; timeout 2s; retries 3", c, clusters[(j+1)%4])
			} else {
				shift[c] = "timeout 2s; retries 3"
			}
			if j < 3 {
				access[clusters[(i+j)%4]] = fmt.Sprintf("allow callers/caller-%02d from east, west, onprem, wine: GET, POST port 8080", (i+1)%20)
			}
		}
		parts = append(parts,
			Part{Host: host, Aspect: AspectFailover, Intent: fmt.Sprintf("mesh_virtual_destination %q", host), Statement: fail},
			Part{Host: host, Aspect: AspectShift, Intent: fmt.Sprintf("mesh_traffic_policy %q", host), Statement: shift},
			Part{Host: host, Aspect: AspectAccess, Intent: fmt.Sprintf("mesh_access_policy %q", host), Statement: access})
	}
	total := 0
	for host, text := range Summarize(parts) {
		n := strings.Count(text, "\n") + 1
		if n > 9 {
			t.Errorf("%s takes %d lines:\n%s", host, n, text)
		}
		total += n
	}
	t.Logf("4 clusters x 20 services: %d summary lines", total)
	if total > 20*9 {
		t.Errorf("%d lines in all", total)
	}
}
