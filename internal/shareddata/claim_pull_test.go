package shareddata

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
)

// onPull delivers cluster onprem by pull, to target, as state "state-a".
type onPull struct{ target oci.Target }

func (p onPull) Pull(cluster string) (engine.PullArtifact, bool, error) {
	return engine.PullArtifact{Target: p.target, Publisher: "state-a"}, cluster == "onprem", nil
}

// newPullRegistry serves go-containerregistry's in-memory registry and
// returns onprem's artifact in it.
func newPullRegistry(t *testing.T) oci.Target {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return oci.Target{Repository: strings.TrimPrefix(srv.URL, "http://") + "/mesh/onprem", Tag: "state-a", Insecure: true}
}

// newEngineOn is a fresh process's engine whose cluster onprem pulls
// target (its API server cannot be reached).
func newEngineOn(target oci.Target) *engine.Engine {
	return &engine.Engine{Clients: enginetest.New(), FieldManager: "test", Delivery: onPull{target}}
}

// serviceEntry is an intent's object on onprem, as a plan gives it.
func serviceEntry(owner engine.Owner, name string) engine.Desired {
	m := map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
		"metadata": map[string]any{"name": name, "namespace": "istio-system", "labels": owner.Labels()},
		"spec":     map[string]any{"hosts": []any{name + ".global"}},
	}
	return engine.Desired{Entry: engine.Entry{Cluster: "onprem", APIVersion: "networking.istio.io/v1", Kind: "ServiceEntry",
		Namespace: "istio-system", Name: name, Digest: "d-" + name}, Manifest: m}
}

// Two states with the same workspace identity on a pull cluster: the
// first state's roster claim is published in the artifact, so the second
// state's plan reads it there (another token: the roster's plan error
// names it) and its roster's apply is refused there, and neither an
// intent's publish nor the first state's own refresh loses the claim.
func TestPullClaimInTheArtifactRefusesASecondState(t *testing.T) {
	target := newPullRegistry(t)
	ctx := context.Background()
	stateA := Claims{newEngineOn(target)}
	claimA := Claim{Cluster: "onprem", Identity: "team-a", Token: "token-of-a", Members: map[string]string{"id-1": "p"}}
	if err := stateA.WriteClaim(ctx, claimA); err != nil {
		t.Fatalf("state A's claim: %v", err)
	}
	owner := engine.Owner{Kind: "virtual-destination", Name: "user", ID: "id-1"}
	if _, err := stateA.Apply(ctx, owner, []engine.Desired{serviceEntry(owner, "a")}, nil); err != nil {
		t.Fatal(err)
	}
	stateB := Claims{newEngineOn(target)}
	got, errs := stateB.ReadClaims(ctx, []string{"onprem"}, "team-a")
	if len(errs) > 0 || len(got) != 1 || got[0].Token != "token-of-a" || got[0].Members["id-1"] != "p" {
		t.Fatalf("state B reads the claims %+v, %v: want state A's, from the artifact", got, errs)
	}
	err := stateB.WriteClaim(ctx, Claim{Cluster: "onprem", Identity: "team-a", Token: "token-of-b"})
	if err == nil || !strings.Contains(err.Summary, "claimed by another state") {
		t.Fatalf("state B's claim over state A's: %v, want refused", err)
	}
	listed, errs := Claims{newEngineOn(target)}.ListClaims(ctx, []string{"onprem"})
	if len(errs) > 0 || len(listed) != 1 || listed[0].Token != "token-of-a" {
		t.Errorf("claims listed in the artifact: %+v, %v", listed, errs)
	}
	if rerr := stateA.ReleaseClaim(ctx, "onprem", "", "team-a", "token-of-b"); rerr != nil {
		t.Fatal(rerr)
	}
	if got, _ := (Claims{newEngineOn(target)}).ReadClaims(ctx, []string{"onprem"}, "team-a"); len(got) != 1 {
		t.Error("releasing with another token removed state A's claim")
	}
	if rerr := stateA.ReleaseClaim(ctx, "onprem", "", "team-a", "token-of-a"); rerr != nil {
		t.Fatal(rerr)
	}
	if got, _ := (Claims{newEngineOn(target)}).ReadClaims(ctx, []string{"onprem"}, "team-a"); len(got) != 0 {
		t.Errorf("state A released its claim, the artifact still holds %+v", got)
	}
}
