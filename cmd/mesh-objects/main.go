// Command mesh-objects prints, for each cluster of a kubeconfig, the objects
// that terraform-provider-mesh owns there (Istio configuration, and the
// ConfigMaps in which virtual destinations record their intent), as one
// table:
//
//	mesh-objects --kubeconfig FILE [--contexts east,west,onprem]
//
// An object is ours when it carries app.kubernetes.io/managed-by=
// terraform-provider-mesh; the OWNER column names the intent from its owner
// labels. Clusters are the kubeconfig's contexts (default: all of them, by
// name). If a cluster cannot be read, the others are still printed and the
// command exits 1 naming it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

type row struct{ cluster, kind, namespace, name, owner string }

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file (default $KUBECONFIG)")
	contexts := flag.String("contexts", "", "comma-separated contexts to read, one per cluster (default: every context of the kubeconfig)")
	timeout := flag.Duration("timeout", 10*time.Second, "timeout of each request")
	flag.Parse()
	if *kubeconfig == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: mesh-objects --kubeconfig FILE [--contexts east,west,onprem]")
		os.Exit(2)
	}

	names, err := clusterNames(*kubeconfig, *contexts)
	if err != nil {
		fatal(err)
	}
	var rows []row
	var failed []error
	for _, c := range names {
		r, err := list(*kubeconfig, c, *timeout)
		if err != nil {
			failed = append(failed, fmt.Errorf("cluster %s: %w", c, err))
			continue
		}
		rows = append(rows, r...)
	}

	if len(failed) == len(names) {
		fatal(errors.Join(failed...))
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tKIND\tNAMESPACE\tNAME\tOWNER")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.cluster, r.kind, r.namespace, r.name, r.owner)
	}
	w.Flush()
	fmt.Printf("%d objects in %d of %d clusters\n", len(rows), len(names)-len(failed), len(names))
	if len(failed) > 0 {
		fatal(errors.Join(failed...))
	}
}

// clusterNames returns the contexts to read: those given, each checked to
// exist, or every context of the kubeconfig, sorted.
func clusterNames(kubeconfig, contexts string) ([]string, error) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig: %w", err)
	}
	if contexts == "" {
		var all []string
		for name := range cfg.Contexts {
			all = append(all, name)
		}
		sort.Strings(all)
		if len(all) == 0 {
			return nil, fmt.Errorf("kubeconfig %s has no contexts", kubeconfig)
		}
		return all, nil
	}
	var names []string
	for _, c := range strings.Split(contexts, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if _, ok := cfg.Contexts[c]; !ok {
			return nil, fmt.Errorf("kubeconfig %s has no context %q", kubeconfig, c)
		}
		names = append(names, c)
	}
	return names, nil
}

// list returns our objects in one cluster, sorted by kind, namespace, name.
// It stops at the first failure: an unreachable cluster fails every request.
func list(kubeconfig, kubeContext string, timeout time.Duration) ([]row, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: kubeContext},
	).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = timeout
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	sel := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{engine.LabelManagedBy: engine.ManagedByValue}).String()}
	var rows []row
	for _, gvk := range intentkind.Written() {
		gvr, ok := engine.ResourceOf(gvk)
		if !ok {
			return nil, fmt.Errorf("the provider writes %s but the engine knows no API resource for it", gvk)
		}
		l, err := client.Resource(gvr).List(context.Background(), sel)
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s does not serve %s: are Istio's CRDs installed?", cfg.Host, gvr.GroupResource())
		}
		var unreachable *url.Error
		if errors.As(err, &unreachable) {
			return nil, fmt.Errorf("unreachable at %s: %w", cfg.Host, unreachable.Err)
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s at %s: %w", gvr.Resource, cfg.Host, err)
		}
		for _, o := range l.Items {
			rows = append(rows, row{kubeContext, o.GetKind(), o.GetNamespace(), o.GetName(), owner(o.GetLabels())})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	})
	return rows, nil
}

// owner names the intent(s) behind an object as kind/name: from the owner
// labels, or, for an object several intents compose, from their
// "<kind>.mesh-intent.io/<name>" contribution labels.
func owner(labels map[string]string) string {
	if k, n := labels[engine.LabelOwnerKind], labels[engine.LabelOwnerName]; k != "" || n != "" {
		return k + "/" + n
	}
	var owners []string
	for key, v := range labels {
		if kind, name, ok := strings.Cut(key, ".mesh-intent.io/"); ok && v == "true" {
			owners = append(owners, kind+"/"+name)
		}
	}
	if len(owners) == 0 {
		return "-"
	}
	sort.Strings(owners)
	return strings.Join(owners, ",")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mesh-objects:", err)
	os.Exit(1)
}
