package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// hintingClusters are fake clusters that render hints as kubeclient.Set
// does for a cluster read from a kubeconfig.
type hintingClusters struct{ fakeClusters }

func (h hintingClusters) Kubectl(cluster string, hint kubeclient.Hint) string {
	return kubeclient.Kubectl(kubeclient.Connection{Name: cluster, ConfigPath: "/etc/mesh/kubeconfig", ConfigContext: "ctx-" + cluster}, hint)
}

// A namespace that does not exist is reported with the command that
// creates it in that cluster: kubectl with the kubeconfig and context the
// provider uses for the cluster, not the user's current context.
func TestMissingNamespaceHintNamesTheCluster(t *testing.T) {
	missing := apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "users")
	for _, tc := range []struct {
		name   string
		hinted bool
		want   string
	}{
		{"clients that render hints", true, "Create it (kubectl --kubeconfig /etc/mesh/kubeconfig --context ctx-west create namespace users), then apply again."},
		{"clients that do not", false, "Create it (kubectl --context west create namespace users), then apply again."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, fc := newFakeEngine(t, "east", "west")
			if tc.hinted {
				e.Clients = hintingClusters{fc}
			}
			failWrites(fc["west"], missing)
			_, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "a"), serviceEntry(testOwner, "west", "a")}, nil)
			var errs Errors
			if !errors.As(err, &errs) || len(errs) != 1 {
				t.Fatalf("want one error, got %v", err)
			}
			if errs[0].Cluster != "west" || !strings.Contains(errs[0].Detail, tc.want) {
				t.Errorf("detail %q, want it to hold %q", errs[0].Detail, tc.want)
			}
		})
	}
}

// unreachableWest is fake clusters where west refuses connections, as
// client-go reports it (a *url.Error).
type unreachableWest struct{ fakeClusters }

func (u unreachableWest) Get(cluster string) (*kubeclient.Clients, error) {
	if cluster == "west" {
		return nil, &url.Error{Op: "Get", URL: "https://west.example.com:6443/api", Err: errors.New("dial tcp 10.0.0.2:6443: connect: connection refused")}
	}
	return u.fakeClusters.Get(cluster)
}

// An unreachable cluster's error says that the other clusters were
// written only where they were: after an apply across clusters, not in the
// same error read at plan (issue 38: a plan-time warning said objects
// "were still applied and are recorded in state").
func TestUnreachableWordingFollowsThePhase(t *testing.T) {
	const applied = "were still applied and are recorded in state"
	refused := &url.Error{Op: "Get", URL: "https://west.example.com:6443/api", Err: errors.New("connection refused")}
	if d := clusterError("west", "Reading owned objects", refused).Detail; strings.Contains(d, applied) {
		t.Errorf("a read's error says objects were applied: %s", d)
	}
	e, fc := newFakeEngine(t, "east", "west")
	e.Clients = unreachableWest{fc}
	_, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "a"), serviceEntry(testOwner, "west", "a")}, nil)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 {
		t.Fatalf("want one error, got %v", err)
	}
	if d := errs[0].Detail; !strings.Contains(d, "Cluster west is unreachable") || !strings.Contains(d, applied) {
		t.Errorf("the apply's error: %s", d)
	}
}

// A cluster silent earlier in the run is explained once: when it went
// silent and that it is not asked again, without the same clause twice.
func TestSilentClusterExplainedOnce(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "https://west.example.com:6443/api", Err: &kubeclient.SilentError{Cluster: "west", First: errors.New("context deadline exceeded")}}
	d := clusterError("west", "Reading owned objects", err).Detail
	if strings.Count(d, "again") != 1 || !strings.Contains(d, "context deadline exceeded") {
		t.Errorf("detail %q: want the first failure and one 'again'", d)
	}
}

// A failing exec credential plugin is explained by its own command and
// stderr, as kubeclient reports it.
func TestExecPluginFailureExplained(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "https://east.example.com/api", Err: &kubeclient.ExecError{
		Command: "aws", Outcome: "exited with status 255", Stderr: "An error occurred (ExpiredToken)\n",
		Err: errors.New("getting credentials: exec: executable /usr/bin/terraform-provider-mesh failed with exit code 255"),
	}}
	d := clusterError("east", "Reading owned objects", err).Detail
	for _, want := range []string{`The exec credential plugin "aws" of cluster east exited with status 255.`, "Its stderr: An error occurred (ExpiredToken)."} {
		if !strings.Contains(d, want) {
			t.Errorf("detail %q lacks %q", d, want)
		}
	}
	if strings.Contains(d, "terraform-provider-mesh") {
		t.Errorf("detail names the provider's binary: %s", d)
	}
}

// An apply logs at INFO, per cluster, when it starts writing there and
// when it is done, with the counts: TF_LOG=INFO shows a long apply's
// progress (issue 38: an apply printed nothing per cluster).
func TestApplyLogsProgressPerClusterAtInfo(t *testing.T) {
	var out bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &out)
	e, fc := newFakeEngine(t, "east", "west")
	failWrites(fc["west"], apierrors.NewForbidden(schema.GroupResource{Group: "networking.istio.io", Resource: "serviceentries"}, "a", errors.New("denied")))
	if _, err := e.Apply(ctx, testOwner, []Desired{serviceEntry(testOwner, "east", "a"), serviceEntry(testOwner, "east", "b"), serviceEntry(testOwner, "west", "a")}, nil); err == nil {
		t.Fatal("want west's write to fail")
	}
	entries, err := tflogtest.MultilineJSONDecode(&out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, en := range entries {
		if en["@level"] != "info" {
			continue
		}
		msg, _ := en["@message"].(string)
		cluster, _ := en["cluster"].(string)
		got[cluster+" "+msg] = fmt.Sprint(en["objects"], " ", en["failures"])
	}
	want := map[string]string{
		"east engine: writing cluster": "2 <nil>",
		"east engine: cluster written": "2 0",
		"west engine: writing cluster": "1 <nil>",
		"west engine: cluster written": "0 1",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("INFO %q: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}
