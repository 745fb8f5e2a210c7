// Command engine drives the provider's engine (internal/engine, with
// internal/kubeclient's clients) directly, without Terraform: for each
// intent of a generated configuration it calls engine.Apply, then
// engine.Read, then engine.Delete, -parallelism intents at a time, as
// Terraform calls the provider's Create, Read and Delete. Its times sit
// between the floor's and Terraform's: what the engine adds to the floor,
// without Terraform's share. Used to measure engine changes on a busy
// machine, where whole Terraform runs vary too much (docs/performance.md).
//
//	engine -kubeconfig K -clusters east,west,onprem -intents 500 -parallelism 10
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig with one context per cluster")
	clusterList := flag.String("clusters", "east,west,onprem", "comma-separated clusters (kubeconfig contexts)")
	intents := flag.Int("intents", 10, "M: intents in the generated configuration")
	parallelism := flag.Int("parallelism", 10, "intents handled at once (terraform -parallelism)")
	flag.Parse()

	clusters := strings.Split(*clusterList, ",")
	spec := gen.Generate(*intents, gen.Clusters(clusters))
	reg := spec.Registry()
	translated, err := spec.Translate(reg)
	if err != nil {
		fatal(err)
	}
	conns := map[string]kubeclient.Connection{}
	for _, c := range clusters {
		conns[c] = kubeclient.Connection{ConfigPath: *kubeconfig, ConfigContext: c}
	}
	eng := &engine.Engine{Clients: kubeclient.NewSet(conns, 0), Composers: gen.Composers(reg), Shared: shareddata.Compositions{}}
	type intent struct {
		owner   engine.Owner
		desired []engine.Desired
		kinds   []schema.GroupVersionKind
		applied []engine.Entry
	}
	var all []*intent
	for _, t := range translated {
		desired, err := engine.Plan(t.Owner, t.Objects)
		if err != nil {
			fatal(err)
		}
		kinds := map[schema.GroupVersionKind]bool{}
		for _, d := range desired {
			kinds[schema.FromAPIVersionAndKind(d.APIVersion, d.Kind)] = true
		}
		in := &intent{owner: t.Owner, desired: desired}
		for k := range kinds {
			in.kinds = append(in.kinds, k)
		}
		all = append(all, in)
	}
	// Terraform orders traffic policies after the virtual destinations
	// they reference (and compose into) and destroys them first: two waves.
	var plain, composed []*intent
	for _, in := range all {
		if in.owner.Composition != nil {
			composed = append(composed, in)
		} else {
			plain = append(plain, in)
		}
	}

	ctx := context.Background()
	run := func(fn func(in *intent) error, waves ...[]*intent) float64 {
		start := time.Now()
		for _, wave := range waves {
			if err := gen.InParallel(wave, *parallelism, fn); err != nil {
				fatal(err)
			}
		}
		return time.Since(start).Seconds()
	}
	out := map[string]float64{}
	out["apply"] = run(func(in *intent) error {
		var err error
		if in.applied, err = eng.Apply(ctx, in.owner, in.desired, nil); err != nil {
			return fmt.Errorf("applying %s: %w", in.owner, err)
		}
		return nil
	}, plain, composed)
	fresh := &engine.Engine{Clients: kubeclient.NewSet(conns, 0), Composers: gen.Composers(reg), Shared: shareddata.Compositions{}} // a new process: no listings yet
	objects := 0
	var mu sync.Mutex
	out["read"] = run(func(in *intent) error {
		got, errs := fresh.Read(ctx, in.owner, in.kinds, nil, in.applied)
		mu.Lock()
		objects += len(got)
		mu.Unlock()
		if err := errs.Err(); err != nil {
			return fmt.Errorf("reading %s: %w", in.owner, err)
		}
		return nil
	}, all)
	gone := &engine.Engine{Clients: kubeclient.NewSet(conns, 0), Composers: gen.Composers(reg), Shared: shareddata.Compositions{}}
	out["delete"] = run(func(in *intent) error {
		if _, err := gone.Delete(ctx, in.owner, in.applied); err != nil {
			return fmt.Errorf("deleting %s: %w", in.owner, err)
		}
		return nil
	}, composed, plain)
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"seconds": out, "objects_read": objects})
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "engine:", err)
	os.Exit(1)
}
