package engine

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

func createService(t *testing.T, fc fakeClusters, cluster, namespace, name string) {
	t.Helper()
	svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service"}}
	svc.SetNamespace(namespace)
	svc.SetName(name)
	if err := fc[cluster].Tracker().Create(gvrService, svc, namespace); err != nil {
		t.Fatal(err)
	}
}

// A backend Service that does not exist is one warning, for its cluster,
// naming the Service and the cluster, with the kubectl command that lists
// the Services of its namespace there; a Service that exists is none.
func TestMissingServicesNamesEachServiceThatDoesNotExist(t *testing.T) {
	e, fc := newFakeEngine(t, "east", "west", "onprem")
	createService(t, fc, "east", "users", "user")
	createService(t, fc, "onprem", "users", "user")
	refs := []ServiceRef{{"east", "users", "user"}, {"west", "users", "user"}, {"onprem", "users", "user"}, {"onprem", "users", "users"}}
	errs := e.MissingServices(context.Background(), testOwner, refs)
	var got []string
	for _, er := range errs {
		got = append(got, er.Cluster+" "+er.Object)
	}
	if strings.Join(got, ", ") != "onprem Service users/users, west Service users/user" {
		t.Fatalf("warnings for %v, want onprem's users/users and west's users/user", got)
	}
	d := errs[1].Detail
	for _, want := range []string{"Service users/user does not exist in cluster west", "(kubectl --context west get services --namespace users)"} {
		if !strings.Contains(d, want) {
			t.Errorf("the warning does not say %q: %s", want, d)
		}
	}
}

// A provider that may not read Services (the documented ClusterRole does
// not grant it) gets no warning: the check is left out, logged at DEBUG
// naming the Service and the cluster.
func TestMissingServicesLeftOutWhenServicesMayNotBeRead(t *testing.T) {
	var out bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &out)
	e, fc := newFakeEngine(t, "east")
	fc["east"].PrependReactor("get", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "user", errors.New("not granted"))
	})
	if errs := e.MissingServices(ctx, testOwner, []ServiceRef{{"east", "users", "user"}}); len(errs) > 0 {
		t.Fatalf("warnings although Services may not be read: %v", errs)
	}
	entries, err := tflogtest.MultilineJSONDecode(&out)
	if err != nil {
		t.Fatal(err)
	}
	logged := false
	for _, en := range entries {
		if en["@level"] == "debug" && en["@message"] == "engine: backend Service not checked: the provider may not read Services" && en["cluster"] == "east" && en["service"] == "users/user" {
			logged = true
		}
	}
	if !logged {
		t.Fatalf("no DEBUG log says the Service was not checked in east: %v", entries)
	}
}
