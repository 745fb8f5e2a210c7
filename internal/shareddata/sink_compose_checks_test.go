package shareddata

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
)

// The pull cluster's second-state check (pullComposedErrors) on what the
// cluster holds, by the one verdict, and the warnings of every way it can
// fail to look.

// liveVS creates on cluster the composed VirtualService with the given
// contribution labels and annotations (and Flux's labels when kustomization
// is set).
func liveVS(t *testing.T, fc enginetest.Clusters, cluster string, labels, annotations map[string]string) engine.Entry {
	t.Helper()
	d := enginetest.ComposedEntry()
	d.Cluster = cluster
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind, "spec": map[string]any{"routes": []any{"route"}}}}
	obj.SetNamespace(d.Namespace)
	obj.SetName(d.Name)
	l := map[string]string{engine.LabelManagedBy: engine.ManagedByValue}
	for k, v := range labels {
		l[k] = v
	}
	obj.SetLabels(l)
	obj.SetAnnotations(annotations)
	if _, err := fc[cluster].Resource(vsResource).Namespace(d.Namespace).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return d.Entry
}

// A contribution that records no workspace (a push state's without one,
// an earlier build's format: label "true") on the composed object of a
// pull cluster is a second state's: the plan fails naming it, the object
// and the cluster, and the apply publishes nothing (so Flux does not
// overwrite its routes).
func TestPullComposedContributionWithoutWorkspaceRefused(t *testing.T) {
	for _, tc := range []struct{ name, label string }{
		{"earlier build, no instance", "true"},
		{"instance, no workspace", "id-x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := newPullRegistry(t)
			e, fc := newEngine("onprem")
			e.Delivery = onPull{pr}
			ctx := context.Background()
			x := enginetest.ComposedOwner("x") // its contributions name no workspace
			en := liveVS(t, fc, "onprem", map[string]string{x.ContributionKey(): tc.label}, map[string]string{x.ContributionKey(): "route-of-x"})
			mine := enginetest.ComposedOwner("a")
			errs, _ := e.PlanErrors(ctx, mine, []engine.Entry{en})
			if len(errs) != 1 || !errors.Is(errs[0], errComposedElsewhere) || errs[0].Cluster != "onprem" ||
				!strings.Contains(errs[0].Detail, `traffic policy "x"`) || !strings.Contains(errs[0].Detail, "no workspace recorded") ||
				!strings.Contains(errs[0].Detail, en.String()) || !strings.Contains(errs[0].Detail, "by push") {
				t.Fatalf("plan errors: %v, want one naming policy x (no workspace), the object, onprem and the fix", errs)
			}
			d := composedOn(t, mine, "onprem")
			if _, err := e.Apply(ctx, mine, []engine.Desired{d}, nil); !errors.Is(err, errComposedElsewhere) {
				t.Errorf("apply: %v, want it refused before anything is published", err)
			}
			if vs := artifactVS(t, pr); vs != nil {
				t.Errorf("the artifact holds %v: published without x's routes", vs)
			}
		})
	}
}

// This state's own contributions on the cluster (this instance's, and
// another policy of this state's workspace) are no second state.
func TestPullComposedOwnContributionsOnTheClusterAllowed(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newEngine("onprem")
	e.Delivery = onPull{pr}
	mine, sibling := workspaceOwner("a", "id-a", "state-a"), workspaceOwner("b", "id-b", "state-a")
	en := liveVS(t, fc, "onprem",
		map[string]string{mine.ContributionKey(): "id-a", sibling.ContributionKey(): "id-b"},
		map[string]string{mine.ContributionKey(): "state-a:route-of-a", sibling.ContributionKey(): "state-a:route-of-b"})
	if errs, _ := e.PlanErrors(context.Background(), mine, []engine.Entry{en}); len(errs) != 0 {
		t.Errorf("plan errors on this state's own contributions: %v", errs)
	}
}

// A same-named contribution without an instance (Undecided) is not
// taken for this state's either.
func TestPullComposedSameNameWithoutInstanceRefused(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newEngine("onprem")
	e.Delivery = onPull{pr}
	mine := enginetest.ComposedOwner("a")
	en := liveVS(t, fc, "onprem", map[string]string{mine.ContributionKey(): "true"}, map[string]string{mine.ContributionKey(): "route-of-a"})
	errs, _ := e.PlanErrors(context.Background(), mine, []engine.Entry{en})
	if len(errs) != 1 || !errors.Is(errs[0], errComposedElsewhere) || !strings.Contains(errs[0].Detail, string(Undecided)) {
		t.Errorf("plan errors: %v, want one naming a's contribution without an instance", errs)
	}
}

// wantNotChecked asserts warns is one plan warning naming cluster and
// every one of words, and that errs is empty.
func wantNotChecked(t *testing.T, errs, warns []*engine.Error, cluster string, words ...string) {
	t.Helper()
	if len(errs) != 0 {
		t.Fatalf("plan errors: %v, want none (the check could not look: a warning)", errs)
	}
	if len(warns) != 1 || !engine.IsNotChecked(warns[0]) || warns[0].Cluster != cluster || !strings.Contains(warns[0].Summary, cluster) {
		t.Fatalf("plan warnings: %v, want one naming cluster %s", warns, cluster)
	}
	for _, w := range words {
		if !strings.Contains(warns[0].Detail, w) {
			t.Errorf("warning %q does not say %q", warns[0].Detail, w)
		}
	}
}

// No connection to the pull cluster: the plan warns that the cluster was
// not checked, why, and what to do; it does not fail.
func TestPullComposedCheckWithoutConnectionWarns(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(pr) // onprem has no connection
	o := enginetest.ComposedOwner("a")
	errs, warns := e.PlanErrors(context.Background(), o, []engine.Entry{composedOn(t, o, "onprem").Entry})
	wantNotChecked(t, errs, warns, "onprem", "no connection", "read-only kubernetes connection")
}

// The cluster's listing fails (unreachable): a warning, not an error.
func TestPullComposedCheckOfAnUnreachableClusterWarns(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newEngine("onprem")
	e.Delivery = onPull{pr}
	fc["onprem"].PrependReactor("list", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	o := enginetest.ComposedOwner("a")
	errs, warns := e.PlanErrors(context.Background(), o, []engine.Entry{composedOn(t, o, "onprem").Entry})
	wantNotChecked(t, errs, warns, "onprem", "connection refused", "Plan again")
}

// The registry refuses to list the repository's tags: a warning naming
// the repository, the reason and the fix.
func TestPullComposedCheckWithoutTagListingWarns(t *testing.T) {
	pr := newPullRegistry(t)
	tg := pr
	tg.Transport = answering("/tags/list", http.StatusForbidden)
	e, _ := newEngine("onprem")
	e.Delivery = onPull{tg}
	o := enginetest.ComposedOwner("a")
	errs, warns := e.PlanErrors(context.Background(), o, []engine.Entry{composedOn(t, o, "onprem").Entry})
	wantNotChecked(t, errs, warns, "onprem", "tags of repository "+tg.Repository, "403", "list the repository's tags")
}

// Another tag of the repository cannot be read: a warning naming that
// artifact.
func TestPullComposedCheckOfAnUnreadableSiblingWarns(t *testing.T) {
	pr := newPullRegistry(t)
	other, _ := newPullEngine(pr)
	theirs := pr
	theirs.Tag = "state-b"
	other.Delivery = publishedAs{theirs, "state-b"}
	b := enginetest.ComposedOwner("b")
	if _, err := other.Apply(context.Background(), b, []engine.Desired{composedOn(t, b, "onprem")}, nil); err != nil {
		t.Fatal(err)
	}
	tg := pr
	tg.Transport = answering("/manifests/state-b", http.StatusInternalServerError)
	e, _ := newEngine("onprem")
	e.Delivery = onPull{tg}
	o := enginetest.ComposedOwner("a")
	errs, warns := e.PlanErrors(context.Background(), o, []engine.Entry{composedOn(t, o, "onprem").Entry})
	wantNotChecked(t, errs, warns, "onprem", theirs.String(), "could not be read")
}

// answering is a registry transport that answers code, with no body, to
// every request whose path ends with suffix, and passes the others on.
func answering(suffix string, code int) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		if strings.HasSuffix(r.URL.Path, suffix) {
			return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		}
		return http.DefaultTransport.RoundTrip(r)
	})
}

// roundTrip is a function as an http.RoundTripper.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A pull cluster without a kubernetes connection is the documented normal
// case ("A pull cluster needs no kubernetes connection"), yet the check
// of its composed objects warns that it could not look at every plan of
// every traffic policy on it: one state's 2 policies (or 200) on one pull
// cluster make 2 (or 200) copies of the same warning in one plan, though
// the reason (no connection) is one per cluster and run. The warning is
// the cluster's: once per cluster in a run is what the user needs.
func TestPullClusterNotCheckedWarnsOncePerClusterAndRun(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(pr) // onprem has no connection
	ctx := context.Background()
	var warnings []*engine.Error
	for _, name := range []string{"a", "b"} {
		o := enginetest.ComposedOwner(name)
		errs, warns := e.PlanErrors(ctx, o, []engine.Entry{composedOn(t, o, "onprem").Entry})
		if len(errs) != 0 {
			t.Fatalf("plan errors of %s: %v", name, errs)
		}
		warnings = append(warnings, warns...)
	}
	if len(warnings) != 1 {
		t.Errorf("%d warnings that pull cluster onprem was not read in one run of two policies, want 1: %v", len(warnings), warnings)
	}
}
