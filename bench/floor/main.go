// Command floor is the benchmark's floor: it writes the same objects the
// provider writes for a generated configuration (bench/gen: the requests
// the provider's engine sends for the objects engine.Plan planned) to the
// same clusters,
// with nothing but client-go server-side apply at a fixed concurrency, and
// lists them back. Its times are what the provider's apply and refresh are
// compared with.
//
//	floor -kubeconfig K -clusters east,west,onprem -intents 500 -concurrency 10 -ops apply,list,delete
//
// Ops, run in the order given, each timed:
//
//	apply        the engine's server-side apply requests, bodies and field
//	             managers as it sent them, clusters in parallel,
//	             -concurrency requests in flight per cluster
//	list         one LIST per cluster and kind, selecting our managed-by label
//	delete       one DELETE per object, same concurrency
//	fingerprint  (untimed) writes a digest of every owned object's labels,
//	             annotations, spec and data to -fingerprints (of what the
//	             preceding list op read, if any)
//	count        (untimed) prints how many owned objects exist
//
// It prints one JSON object: seconds per op, objects and requests.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// Result is what floor prints.
type Result struct {
	Intents  int                `json:"intents"`
	Objects  int                `json:"objects"`  // distinct objects written
	Writes   int                `json:"writes"`   // server-side applies
	Seconds  map[string]float64 `json:"seconds"`  // per op
	Requests map[string]int     `json:"requests"` // per op
	Count    *int               `json:"count,omitempty"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig with one context per cluster")
	clusterList := flag.String("clusters", "east,west,onprem", "comma-separated clusters (kubeconfig contexts)")
	intents := flag.Int("intents", 10, "M: intents in the generated configuration")
	concurrency := flag.Int("concurrency", 10, "requests in flight per cluster")
	ops := flag.String("ops", "apply,list,delete", "comma-separated ops: apply, list, delete, fingerprint, count")
	fingerprints := flag.String("fingerprints", "", "file the fingerprint op writes")
	renderedFile := flag.String("rendered", "", "the writes gen.Render returned, as JSON (gen.Rendered.Save); rendered here if empty")
	flag.Parse()

	clusters := strings.Split(*clusterList, ",")
	spec := gen.Generate(*intents, gen.Clusters(clusters))
	var rendered *gen.Rendered
	var err error
	if *renderedFile != "" {
		rendered, err = gen.Load(*renderedFile)
	} else {
		rendered, err = spec.Render()
	}
	if err != nil {
		fatal(err)
	}
	clients := map[string]dynamic.Interface{}
	for _, c := range clusters {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: *kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: c}).ClientConfig()
		if err != nil {
			fatal(err)
		}
		cfg.QPS = -1 // no client-side rate limit: the floor is the servers'
		cfg.UserAgent = "mesh-bench-floor"
		if clients[c], err = dynamic.NewForConfig(cfg); err != nil {
			fatal(err)
		}
	}
	f := &floor{clients: clients, clusters: clusters, concurrency: *concurrency, rendered: rendered}
	res := Result{Intents: spec.Intents(), Objects: len(rendered.Keys()), Writes: len(rendered.Writes),
		Seconds: map[string]float64{}, Requests: map[string]int{}}
	ctx := context.Background()
	var listed []unstructured.Unstructured // by the last list op
	for _, op := range strings.Split(*ops, ",") {
		start := time.Now()
		var n int
		switch op {
		case "apply":
			n, err = f.apply(ctx)
			listed = nil
		case "list":
			n, listed, err = f.list(ctx)
		case "delete":
			n, err = f.delete(ctx)
			listed = nil
		case "fingerprint":
			items := listed
			if items == nil {
				_, items, err = f.list(ctx)
			}
			if err == nil {
				err = writeFingerprints(*fingerprints, items)
			}
			if err != nil {
				fatal(fmt.Errorf("%s: %w", op, err))
			}
			continue
		case "count":
			var items []unstructured.Unstructured
			_, items, err = f.list(ctx)
			c := len(items)
			res.Count = &c
		default:
			err = fmt.Errorf("unknown op %q", op)
		}
		if err != nil {
			fatal(fmt.Errorf("%s: %w", op, err))
		}
		res.Seconds[op] = time.Since(start).Seconds()
		res.Requests[op] = n
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fatal(err)
	}
}

type floor struct {
	clients     map[string]dynamic.Interface
	clusters    []string
	concurrency int
	rendered    *gen.Rendered
}

func gvrOf(k translate.Key) schema.GroupVersionResource {
	return resourceOf(schema.FromAPIVersionAndKind(k.APIVersion, k.Kind))
}

func resourceOf(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	gvr, ok := engine.ResourceOf(gvk)
	if !ok {
		fatal(fmt.Errorf("kind %s is not one the engine owns", gvk))
	}
	return gvr
}

// perCluster runs fn over the items of each cluster, clusters in parallel,
// at most f.concurrency at once per cluster.
func (f *floor) perCluster(n int, clusterOf func(int) string, fn func(i int) error) error {
	byCluster := map[string][]int{}
	for i := 0; i < n; i++ {
		byCluster[clusterOf(i)] = append(byCluster[clusterOf(i)], i)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, idx := range byCluster {
		work := make(chan int)
		for w := 0; w < f.concurrency; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					if err := fn(i); err != nil {
						mu.Lock()
						if first == nil {
							first = err
						}
						mu.Unlock()
					}
				}
			}()
		}
		go func(idx []int) {
			for _, i := range idx {
				work <- i
			}
			close(work)
		}(idx)
	}
	wg.Wait()
	return first
}

// apply replays the engine's requests (gen.Render): wave by wave, each
// object's requests in the order the engine sent them, objects in
// parallel.
func (f *floor) apply(ctx context.Context) (int, error) {
	ws := f.rendered.Writes
	waves := 0
	for _, w := range ws {
		waves = max(waves, w.Wave+1)
	}
	for wave := 0; wave < waves; wave++ {
		var keys []translate.Key
		byKey := map[translate.Key][]gen.Write{}
		for _, w := range ws {
			if w.Wave != wave {
				continue
			}
			if byKey[w.Key] == nil {
				keys = append(keys, w.Key)
			}
			byKey[w.Key] = append(byKey[w.Key], w)
		}
		err := f.perCluster(len(keys), func(i int) string { return keys[i].Cluster }, func(i int) error {
			for _, w := range byKey[keys[i]] {
				ri := f.clients[w.Key.Cluster].Resource(gvrOf(w.Key)).Namespace(w.Key.Namespace)
				_, err := ri.Patch(ctx, w.Key.Name, types.ApplyPatchType, w.Body, metav1.PatchOptions{FieldManager: w.Manager, Force: &w.Force})
				if apierrors.IsConflict(err) && !w.Force && strings.HasSuffix(w.Manager, "-composer") {
					// As the composition does (internal/shareddata/compose.go):
					// fields of our own managers are taken over, forced.
					force := true
					_, err = ri.Patch(ctx, w.Key.Name, types.ApplyPatchType, w.Body, metav1.PatchOptions{FieldManager: w.Manager, Force: &force})
				}
				if err != nil {
					return fmt.Errorf("%s: %w", w.Key, err)
				}
			}
			return nil
		})
		if err != nil {
			return len(ws), err
		}
	}
	return len(ws), nil
}

func (f *floor) delete(ctx context.Context) (int, error) {
	keys := f.rendered.Keys()
	err := f.perCluster(len(keys), func(i int) string { return keys[i].Cluster }, func(i int) error {
		k := keys[i]
		err := f.clients[k.Cluster].Resource(gvrOf(k)).Namespace(k.Namespace).Delete(ctx, k.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: %w", k, err)
		}
		return nil
	})
	return len(keys), err
}

// list reads back every owned object: one LIST per cluster and kind.
func (f *floor) list(ctx context.Context) (int, []unstructured.Unstructured, error) {
	kinds := engine.Kinds()
	type job struct {
		cluster string
		gvk     schema.GroupVersionKind
	}
	var jobs []job
	for _, c := range f.clusters {
		for _, k := range kinds {
			jobs = append(jobs, job{c, k})
		}
	}
	var (
		mu  sync.Mutex
		all []unstructured.Unstructured
	)
	err := f.perCluster(len(jobs), func(i int) string { return jobs[i].cluster }, func(i int) error {
		j := jobs[i]
		gvr := resourceOf(j.gvk)
		list, err := f.clients[j.cluster].Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: engine.LabelManagedBy + "=" + engine.ManagedByValue})
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("listing %s in %s: %w", gvr.Resource, j.cluster, err)
		}
		for i := range list.Items {
			list.Items[i].SetAnnotations(withCluster(list.Items[i].GetAnnotations(), j.cluster))
		}
		mu.Lock()
		all = append(all, list.Items...)
		mu.Unlock()
		return nil
	})
	return len(jobs), all, err
}

const clusterAnnotation = "mesh-bench/cluster"

func withCluster(a map[string]string, cluster string) map[string]string {
	if a == nil {
		a = map[string]string{}
	}
	a[clusterAnnotation] = cluster
	return a
}

// writeFingerprints writes "cluster kind namespace/name digest" lines, sorted.
func writeFingerprints(path string, items []unstructured.Unstructured) error {
	var lines []string
	for _, o := range items {
		a := o.GetAnnotations()
		cluster := a[clusterAnnotation]
		delete(a, clusterAnnotation)
		// The configuration the provider keeps for import is not written
		// by the floor, which has none: compared without it, as digests are.
		delete(a, engine.AnnotationConfig)
		for k, v := range a {
			var contribution map[string]any
			if strings.Contains(k, ".mesh-intent.io/") && json.Unmarshal([]byte(v), &contribution) == nil {
				delete(contribution, trafficpolicy.ContributionConfigKey)
				canonical, err := json.Marshal(contribution)
				if err != nil {
					return err
				}
				a[k] = string(canonical)
			}
		}
		// Instance IDs are random in the provider's objects (the floor
		// derives its own): compared as present, not by value.
		labels := o.GetLabels()
		for k := range labels {
			if k == engine.LabelOwnerID || (strings.Contains(k, ".mesh-intent.io/") && labels[k] != "true") {
				labels[k] = "<instance id>"
			}
		}
		content := map[string]any{"labels": labels, "annotations": a, "spec": o.Object["spec"], "data": o.Object["data"]}
		raw, err := json.Marshal(content)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(raw)
		lines = append(lines, fmt.Sprintf("%s %s %s/%s %s", cluster, o.GetKind(), o.GetNamespace(), o.GetName(), hex.EncodeToString(sum[:8])))
	}
	sort.Strings(lines)
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "floor:", err)
	os.Exit(1)
}
