package engine

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// Backend Services that do not exist (issue 38): a virtual destination's
// backend names a Kubernetes Service in a cluster; if there is none, the
// apply succeeds (Istio accepts a host without endpoints) and requests
// routed there fail. The plan warns about each (MissingServices), where
// the cluster answers and the provider may read Services. The documented
// ClusterRole does not grant that: the API server's 403 leaves the check
// out, with a DEBUG log, and no warning.

// ServiceRef names a Kubernetes Service an intent routes to.
type ServiceRef struct {
	Cluster, Namespace, Name string
}

func (s ServiceRef) String() string { return s.Namespace + "/" + s.Name }

var gvrService = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// MissingServices asks each cluster, with a GET, for the Services refs
// name, and returns one warning per Service that does not exist: its
// Cluster, and a Detail that names the Service and the cluster and gives
// the kubectl command that lists the Services of its namespace, rendered
// for the cluster as the provider reaches it. Pull clusters, clusters
// that cannot be asked, a namespace that does not exist (the namespace
// check reports it) and a GET the provider may not make (403: reading
// Services is not among the documented permissions) are left out, the
// last with a DEBUG log.
func (e *Engine) MissingServices(ctx context.Context, owner Owner, refs []ServiceRef) Errors {
	byCluster := map[string][]ServiceRef{}
	var clusters []string
	for _, r := range refs {
		if _, ok := byCluster[r.Cluster]; !ok {
			clusters = append(clusters, r.Cluster)
		}
		byCluster[r.Cluster] = append(byCluster[r.Cluster], r)
	}
	sort.Strings(clusters)
	_, errs := perCluster(ctx, clusters, func(ctx context.Context, cluster string) ([]Entry, []*Error) {
		if _, pull, err := e.pullOf(cluster); pull || err != nil {
			return nil, nil
		}
		c, err := e.Clients.Get(cluster)
		if err != nil {
			return nil, nil
		}
		var out []*Error
		for _, r := range byCluster[cluster] {
			_, err := c.Dynamic.Resource(gvrService).Namespace(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
			switch {
			case err == nil:
			case apierrors.IsForbidden(err):
				logCluster(ctx, "backend Service not checked: the provider may not read Services", owner, cluster, "service", r.String())
			case apierrors.IsNotFound(err) && !namespaceMissing(err):
				logCluster(ctx, "backend Service missing", owner, cluster, "service", r.String())
				out = append(out, serviceMissing(r))
			default:
				logCluster(ctx, "backend Service not checked", owner, cluster, "service", r.String(), "error", err.Error())
			}
		}
		return nil, out
	})
	e.renderHints(errs) // pasted, the hint acts on the cluster it names
	errs.sort()
	return errs
}

// serviceMissing is the warning for a Service that does not exist.
func serviceMissing(r ServiceRef) *Error {
	h := kubeclient.ListServices(r.Namespace)
	render := func(command string) string {
		return fmt.Sprintf("Service %s does not exist in cluster %s: the apply will succeed, but requests routed to this backend will fail there until it does. "+
			"Create it, or name one of the Services of namespace %s (%s).", r, r.Cluster, r.Namespace, command)
	}
	return &Error{
		Cluster: r.Cluster,
		Object:  "Service " + r.String(),
		Summary: "Backend Service missing in cluster " + r.Cluster,
		Detail:  render(kubeclient.Kubectl(kubeclient.Connection{Name: r.Cluster}, h)),
		hint:    &h,
		render:  render,
	}
}
