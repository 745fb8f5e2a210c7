// Command publish measures issue 35's pull delivery: M intents over
// clusters that are all delivered by pull, published by the provider's
// engine (Terraform's -parallelism intents at once) to an in-process OCI
// registry, against the floor of rendering the same objects and pushing
// each cluster's artifact once with go-containerregistry alone; and the
// registry requests of a refresh per cluster. It prints a Markdown table
// of medians with the spread of the runs (docs/performance.md,
// "Publishing pull clusters").
//
//	publish -clusters east,west,onprem -intents 500 -runs 3
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
)

func main() {
	clusterList := flag.String("clusters", "east,west,onprem", "comma-separated pull clusters")
	intents := flag.Int("intents", 500, "M: intents in the generated configuration, before its traffic policies with a connection pool are left out")
	runs := flag.Int("runs", 1, "runs (medians and spread)")
	parallelism := flag.Int("parallelism", 10, "intents handled at once (terraform -parallelism)")
	flag.Parse()

	names := strings.Split(*clusterList, ",")
	var ps []*gen.Publish
	for range max(*runs, 1) {
		p, err := gen.MeasurePublish(*intents, names, *parallelism)
		if err != nil {
			fmt.Fprintln(os.Stderr, "publish:", err)
			os.Exit(1)
		}
		ps = append(ps, p)
	}
	col := func(get func(*gen.Publish) float64) (float64, string) {
		var v []float64
		for _, x := range ps {
			v = append(v, get(x))
		}
		return gen.Spread(v)
	}
	p := ps[0]
	ap, apS := col(func(p *gen.Publish) float64 { return p.Apply })
	fl, flS := col(func(p *gen.Publish) float64 { return p.Floor })
	fmt.Printf("Publishing pull clusters (issue 35): %d clusters all delivered by pull to an in-process registry (go-containerregistry's pkg/registry), M = %d (%d intents, %d of them traffic policies, composed into the artifacts' VirtualServices; those with a connection pool are left out, as it goes into the virtual destination's own DestinationRule, which a pull cluster still refuses), -parallelism %d, %d runs.\n\n",
		p.Clusters, *intents, p.Intents, p.Traffic, *parallelism, len(ps))
	fmt.Println("| clusters | intents | objects | artifact bytes | publish (engine) CPU s | floor CPU s | publish/floor (goal 2x) | registry requests per cluster: apply | pushes | floor | refresh | refresh manifest reads (goal 1) |")
	fmt.Println("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	fmt.Printf("| %d | %d | %d | %d | %s | %s | %.1fx | %d | %d | %d | %d | %d |\n\n",
		p.Clusters, p.Intents, p.Objects, p.Bytes, apS, flS, ap/fl, p.ApplyRequests, p.Pushes, p.FloorRequests, p.RefreshRequests, p.RefreshManifests)
	fmt.Println("CPU seconds of the process, the in-process registry's included: median (min to max). publish: engine.Apply of every intent, which publishes each pull cluster's artifact through its serialised writer; floor: the same artifacts (same digests, checked) rendered from the published objects and pushed once per cluster with go-containerregistry's remote.Write, clusters in parallel; requests per cluster: the most any cluster's repository received (the floor's in its own repository); refresh: engine.Read of every intent in a new engine.")
}
