// Command fleet measures the provider's engine at fleet scale on fake
// clusters (bench/gen's in-memory clusters, client-go's fake dynamic
// client): for each number of registered clusters, M intents planned,
// applied, refreshed and destroyed, each step against its floor on the
// same fake clusters, and the translator against engine.Plan. It prints
// a Markdown table of medians of CPU seconds with the spread of the runs, plan and apply
// time per cluster and per intent (docs/performance.md, "Fleet").
//
//	fleet -clusters 10,50 -intents 500 -runs 3
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
)

func main() {
	clusterList := flag.String("clusters", "10,50", "comma-separated numbers of registered (fake) clusters")
	intents := flag.Int("intents", 500, "M: intents in the generated configuration")
	runList := flag.String("runs", "3,1", "runs per number of clusters, in the order of -clusters (medians and spread)")
	parallelism := flag.Int("parallelism", 10, "intents handled at once (terraform -parallelism)")
	flag.Parse()

	runs := strings.Split(*runList, ",")
	fmt.Printf("Fleet on fake clusters (in-memory, client-go's fake dynamic client; no API server, no Terraform): M = %d intents, -parallelism %d.\n", *intents, *parallelism)
	fmt.Println("CPU seconds of the process (the fake clusters' work included): median (min to max). Ratios are of medians.")
	fmt.Println()
	fmt.Println("| clusters | runs | intents | objects | translate | engine.Plan | Plan/translate | floor apply | apply | apply/floor | floor list | no-op refresh | refresh/floor | floor delete | destroy | destroy/floor | plan ms per cluster | plan ms per intent | apply ms per cluster | apply ms per intent | requests apply/refresh/destroy |")
	fmt.Println("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for i, s := range strings.Split(*clusterList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("-clusters: %q is not a number of clusters", s))
		}
		r, err := strconv.Atoi(strings.TrimSpace(runs[min(i, len(runs)-1)]))
		if err != nil || r < 1 {
			fatal(fmt.Errorf("-runs: %q is not a number of runs", runs[min(i, len(runs)-1)]))
		}
		var fs []*gen.Fleet
		for range r {
			f, err := gen.MeasureFleet(*intents, n, *parallelism)
			if err != nil {
				fatal(fmt.Errorf("%d clusters: %w", n, err))
			}
			fs = append(fs, f)
		}
		col := func(get func(*gen.Fleet) float64) (float64, string) {
			var v []float64
			for _, x := range fs {
				v = append(v, get(x))
			}
			return gen.Spread(v)
		}
		f := fs[0]
		tr, trS := col(func(f *gen.Fleet) float64 { return f.Translate })
		pl, plS := col(func(f *gen.Fleet) float64 { return f.Plan })
		fa, faS := col(func(f *gen.Fleet) float64 { return f.FloorApply })
		ap, apS := col(func(f *gen.Fleet) float64 { return f.Apply })
		fl, flS := col(func(f *gen.Fleet) float64 { return f.FloorList })
		rd, rdS := col(func(f *gen.Fleet) float64 { return f.Read })
		fd, fdS := col(func(f *gen.Fleet) float64 { return f.FloorDelete })
		de, deS := col(func(f *gen.Fleet) float64 { return f.Delete })
		perObject := (pl / float64(f.Planned)) / (tr / float64(f.Objects))
		fmt.Printf("| %d | %d | %d | %d | %s | %s | %.1fx per object | %s | %s | %.1fx | %s | %s | %.1fx | %s | %s | %.1fx | %.1f | %.2f | %.0f | %.1f | %d / %d / %d |\n",
			n, len(fs), f.Intents, f.Planned, trS, plS, perObject, faS, apS, ap/fa, flS, rdS, rd/fl, fdS, deS, de/fd,
			(tr+pl)*1000/float64(n), (tr+pl)*1000/float64(f.Intents), ap*1000/float64(n), ap*1000/float64(f.Intents),
			f.ApplyRequests, f.ReadRequests, f.DeleteRequests)
	}
	fmt.Println()
	fmt.Println("objects: what engine.Plan returns (records included); translate: the translator for every intent; engine.Plan: engine.Plan for every intent (rendering, labels, digests); floor apply: the engine's own apply requests replayed as sent on new fake clusters; apply: engine.Apply of every intent (its reads included); floor list: one LIST per cluster and kind; no-op refresh: engine.Read of every intent in a new engine, which must find what apply returned; floor delete: one DELETE per object; destroy: engine.Delete of every intent in a new engine. Per cluster and per intent: plan is translate + engine.Plan.")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "fleet:", err)
	os.Exit(1)
}
