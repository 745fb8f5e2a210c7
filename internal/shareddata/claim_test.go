package shareddata

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// A claim is written once per state: another token never overwrites or
// releases it, and its own token updates and releases it.
func TestClaimIsOneStatesOnly(t *testing.T) {
	e, fc := newClaims("east")
	ctx := context.Background()
	mine := Claim{Cluster: "east", Identity: "default", Token: "t-mine", Members: map[string]string{"id-1": "ledger"}}
	if err := e.WriteClaim(ctx, mine); err != nil {
		t.Fatal(err)
	}
	theirs := Claim{Cluster: "east", Identity: "default", Token: "t-theirs"}
	err := e.WriteClaim(ctx, theirs)
	if err == nil || err.Summary != "Workspace identity claimed by another state" || !strings.Contains(err.Detail, `"default"`) {
		t.Fatalf("another state's write of a claimed identity: got %v, want a refusal naming the identity", err)
	}
	if err := e.ReleaseClaim(ctx, "east", "", "default", "t-theirs"); err != nil {
		t.Fatal(err)
	}
	claims, errs := e.ReadClaims(ctx, []string{"east", "west"}, "default")
	if len(claims) != 1 || claims[0].Token != "t-mine" || claims[0].Members["id-1"] != "ledger" {
		t.Fatalf("claims %+v: want this state's, untouched by the other's write and release", claims)
	}
	if len(errs) != 1 || errs[0].Cluster != "west" {
		t.Fatalf("errors %v: want the unreachable cluster west, alone", errs)
	}
	// A claim that takes over another token's: only that token's.
	if err := e.WriteClaim(ctx, Claim{Cluster: "east", Identity: "default", Token: "t-new", Replaces: "t-other"}); err == nil {
		t.Fatal("a claim replacing another token overwrote this state's claim")
	}
	if claims, errs := e.ListClaims(ctx, []string{"east"}); len(errs) > 0 || len(claims) != 1 || claims[0].Token != "t-mine" {
		t.Fatalf("listed claims %+v (errors %v): want this state's alone", claims, errs)
	}
	mine.Members["id-2"] = "calls"
	if err := e.WriteClaim(ctx, mine); err != nil {
		t.Fatalf("the state's own update of its claim: %v", err)
	}
	if claims, errs := e.ReadClaims(ctx, []string{"east"}, "default"); len(errs) > 0 || len(claims) != 1 || len(claims[0].Members) != 2 {
		t.Fatalf("claims after the update: %+v (errors %v)", claims, errs)
	}
	if claims, errs := e.ReadClaims(ctx, []string{"east"}, "other"); len(errs) > 0 || len(claims) != 0 {
		t.Fatalf("another identity's claim was found: %+v (errors %v)", claims, errs)
	}
	if err := e.ReleaseClaim(ctx, "east", "", "default", "t-mine"); err != nil {
		t.Fatal(err)
	}
	if claims, errs := e.ReadClaims(ctx, []string{"east"}, "default"); len(errs) > 0 || len(claims) != 0 {
		t.Fatalf("the released claim is still there: %+v (errors %v)", claims, errs)
	}
	en := e.ClaimEntry("east", "default")
	if _, err := fc["east"].Resource(configMaps).Namespace(en.Namespace).Get(ctx, en.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the claim ConfigMap is still in the cluster (%v)", err)
	}
}

// Only a claim as the provider writes it is one (issue 36): a ConfigMap
// made by hand with the claim labels, under another name than its
// identity's claim name or without the owner-id label that repeats its
// token, is not listed, so it vetoes nothing.
func TestListClaimsIgnoresHandMadeConfigMaps(t *testing.T) {
	e, fc := newClaims("east")
	ctx := context.Background()
	if err := e.WriteClaim(ctx, Claim{Cluster: "east", Identity: "payments", Token: "t-pay", Members: map[string]string{"id-1": "ledger"}}); err != nil {
		t.Fatal(err)
	}
	members := `{"id-9":"checkout"}`
	handMade := func(name string, labels map[string]any, data map[string]any) {
		t.Helper()
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": e.ClaimsNamespace(), "labels": labels}, "data": data}}
		if _, err := fc["east"].Resource(configMaps).Namespace(e.ClaimsNamespace()).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	claimLabels := func(token string) map[string]any {
		l := map[string]any{engine.LabelManagedBy: engine.ManagedByValue, engine.LabelOwnerKind: intentkind.Workspace.Owner}
		if token != "" {
			l[engine.LabelOwnerID] = token
		}
		return l
	}
	// Another name than the identity's claim name.
	handMade("keep-checkout", claimLabels("t-x"), map[string]any{claimIdentityKey: "x", claimTokenKey: "t-x", claimMembersKey: members})
	// The claim name, without the owner-id label.
	handMade(ClaimName("y"), claimLabels(""), map[string]any{claimIdentityKey: "y", claimTokenKey: "t-y", claimMembersKey: members})
	// The labels only.
	handMade("labels-only", claimLabels(""), nil)
	claims, errs := e.ListClaims(ctx, []string{"east"})
	if len(errs) > 0 || len(claims) != 1 || claims[0].Identity != "payments" {
		t.Fatalf("listed claims %+v (errors %v): want the provider's claim of payments alone", claims, errs)
	}
}

// Claims are read strictly, like contributions and records: a claim the
// provider wrote in a newer format, or with a data key this build does
// not know, is listed as unreadable (its members unknown) with an error
// naming the object and the upgrade, is an error when read, and is never
// overwritten; a claim without a format key and one in format 1 are read.
func TestClaimsAreReadByFormatStrictly(t *testing.T) {
	e, fc := newClaims("east")
	ctx := context.Background()
	if err := e.WriteClaim(ctx, Claim{Cluster: "east", Identity: "payments", Token: "t-pay", Members: map[string]string{"id-1": "ledger"}}); err != nil {
		t.Fatal(err)
	}
	ri := fc["east"].Resource(configMaps).Namespace(e.ClaimsNamespace())
	setData := func(key, value string) {
		t.Helper()
		live, err := ri.Get(ctx, ClaimName("payments"), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(live.Object, value, "data", key); err != nil {
			t.Fatal(err)
		}
		if _, err := ri.Update(ctx, live, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	readable := func(why string) {
		t.Helper()
		claims, errs := e.ListClaims(ctx, []string{"east"})
		if len(errs) > 0 || len(claims) != 1 || claims[0].Unreadable != nil || claims[0].Members["id-1"] != "ledger" {
			t.Fatalf("%s: listed %+v (errors %v), want the claim read with its members", why, claims, errs)
		}
	}
	live, err := ri.Get(ctx, ClaimName("payments"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, has := live.Object["data"].(map[string]any)[claimFormatKey]; has {
		t.Fatalf("a claim in format 1 is written with a format key: %v", live.Object["data"])
	}
	readable("a claim without a format key")
	setData(claimFormatKey, "1")
	readable("a claim in format 1")

	unreadable := func(why string, want ...string) {
		t.Helper()
		claims, errs := e.ListClaims(ctx, []string{"east"})
		if len(errs) > 0 || len(claims) != 1 || claims[0].Unreadable == nil || claims[0].Members != nil ||
			claims[0].Identity != "payments" || claims[0].Token != "t-pay" {
			t.Fatalf("%s: listed %+v (errors %v), want the claim of payments listed as unreadable, without members", why, claims, errs)
		}
		text := claims[0].Unreadable.Error()
		if _, rerrs := e.ReadClaims(ctx, []string{"east"}, "payments"); len(rerrs) != 1 || rerrs[0].Error() != text {
			t.Fatalf("%s: reading the claim gave %v, want the error %q", why, rerrs, text)
		}
		for _, w := range append(want, ClaimName("payments"), "upgrade this provider") {
			if !strings.Contains(text, w) {
				t.Fatalf("%s: the error does not say %q: %s", why, w, text)
			}
		}
		// Not overwritten, not even by the token it names.
		if err := e.WriteClaim(ctx, Claim{Cluster: "east", Identity: "payments", Token: "t-pay", Members: map[string]string{}}); err == nil || !strings.Contains(err.Error(), "upgrade this provider") {
			t.Fatalf("%s: writing over the claim gave %v, want a refusal naming the upgrade", why, err)
		}
	}
	setData(claimFormatKey, "2")
	unreadable("a claim in format 2", "claim format version 2")
	setData(claimFormatKey, "1")
	setData("mac", "0123")
	unreadable("a claim with an unknown key", `"mac"`)
}

// newClaims is the claims of an engine on fake clusters (a name given is
// a cluster that answers; any other does not).
func newClaims(clusters ...string) (Claims, enginetest.Clusters) {
	fc := enginetest.New(clusters...)
	return Claims{&engine.Engine{Clients: fc, FieldManager: "test"}}, fc
}
