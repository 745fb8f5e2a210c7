package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// row is the medians of the runs of one M.
type row struct {
	M              int                           `json:"m"`
	Runs           int                           `json:"runs"`
	Resources      int                           `json:"resources"`
	Objects        int                           `json:"objects"`
	StateObjects   int                           `json:"state_objects"`
	StateBytes     int                           `json:"state_bytes"`
	InventoryBytes int                           `json:"inventory_bytes"`
	CoreStateBytes int                           `json:"core_state_bytes"`
	Load           [2]float64                    `json:"load_min_max"`
	Seconds        map[string]float64            `json:"median_s"`
	CPU            map[string]map[string]float64 `json:"median_cpu_s"`
	RSSKiB         map[string]int64              `json:"median_provider_maxrss_kib"`
	Requests       map[string]map[string]int     `json:"requests"` // of the first run
	Raw            []runResult                   `json:"runs_raw"`
}

func summarize(m int, rs []runResult) row {
	out := row{M: m, Runs: len(rs), Seconds: map[string]float64{}, CPU: map[string]map[string]float64{}, RSSKiB: map[string]int64{}, Raw: rs}
	if len(rs) == 0 {
		return out
	}
	first := rs[0]
	out.Resources, out.Objects, out.StateObjects = first.Resources, first.Objects, first.StateObjects
	out.StateBytes, out.InventoryBytes, out.CoreStateBytes = first.StateBytes, first.InventoryBytes, first.CoreStateBytes
	out.Requests = first.Requests
	out.Load = [2]float64{first.Load, first.Load}
	for _, r := range rs {
		out.Load[0], out.Load[1] = min(out.Load[0], r.Load), max(out.Load[1], r.Load)
	}
	for step := range first.Seconds {
		out.Seconds[step] = median(rs, func(r runResult) float64 { return r.Seconds[step] })
	}
	for step, whos := range first.CPU {
		out.CPU[step] = map[string]float64{}
		for who := range whos {
			out.CPU[step][who] = median(rs, func(r runResult) float64 { return r.CPU[step][who] })
		}
	}
	for step := range first.RSS {
		out.RSSKiB[step] = int64(median(rs, func(r runResult) float64 { return float64(r.RSS[step]) }))
	}
	return out
}

func median(rs []runResult, f func(runResult) float64) float64 {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	sort.Float64s(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func renderReport(o options, rows []row, took time.Duration) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	lo, hi := 1e9, 0.0
	for _, r := range rows {
		lo, hi = min(lo, r.Load[0]), max(hi, r.Load[1])
	}
	w("\n## terraform-provider-mesh vs. the server-side-apply floor\n\n")
	w("%d clusters (%s) on one machine; terraform -parallelism=%d; the floor keeps %d requests in flight per cluster. "+
		"Medians of the runs; times in seconds. Load average at the start of runs: %.1f to %.1f. Whole benchmark: %s.\n\n",
		len(o.clusters), strings.Join(o.clusters, ", "), o.parallelism, o.concurrency, lo, hi, took.Round(time.Second))

	w("| M | runs | objects | plan | apply | floor apply | apply/floor | no-op plan | floor list | refresh/floor | destroy | floor delete | state bytes | B/object | inventory B/object | provider peak RSS MiB |\n")
	w("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		s := r.Seconds
		objs := max(r.StateObjects, 1)
		var peak int64
		for _, v := range r.RSSKiB {
			peak = max(peak, v)
		}
		w("| %d | %d | %d | %.2f | %.2f | %.2f | %.1fx | %.2f | %.2f | %.1fx | %.2f | %.2f | %d | %d | %d | %.0f |\n",
			r.M, r.Runs, r.StateObjects, s["plan"], s["apply"], s["floor-apply"], ratio(s["apply"], s["floor-apply"]),
			s["noop-plan"], s["floor-list"], ratio(s["noop-plan"], s["floor-list"]), s["destroy"], s["floor-delete"],
			r.StateBytes, r.StateBytes/objs, r.InventoryBytes/objs, float64(peak)/1024)
	}
	w("\nobjects: inventory entries in state (%s). plan: `terraform plan -out` on empty state; apply: `terraform apply` of that plan; "+
		"no-op plan: `terraform plan` after apply, refresh included (it must find no changes); destroy: `terraform destroy` (its refresh included). "+
		"floor: bench/floor, the same objects with plain client-go server-side apply; list: one LIST per cluster and kind. "+
		"B/object: state file bytes per inventory entry; inventory B/object: the bytes of the `objects` attributes alone. "+
		"provider peak RSS: the largest ru_maxrss of the provider processes of a step (bench/launcher), largest step.\n",
		distinct(rows))

	w("\n### Where the time goes\n\n")
	w("floor → engine (the provider's engine driven directly, %d intents at a time, no Terraform) → terraform-core (Terraform alone: "+
		"terraform_data resources holding about the same state) → Terraform with the provider.\n\n", o.parallelism)
	w("| M | floor apply | engine apply | terraform-core apply | apply | floor list | engine read | terraform-core no-op plan | plan -refresh=false | no-op plan | floor delete | engine delete | terraform-core destroy | destroy |\n")
	w("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		s := r.Seconds
		w("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
			r.M, s["floor-apply"], s["engine-apply"], s["core-apply"], s["apply"], s["floor-list"], s["engine-read"], s["core-noop-plan"],
			s["plan-norefresh"], s["noop-plan"], s["floor-delete"], s["engine-delete"], s["core-destroy"], s["destroy"])
	}

	w("\n### CPU seconds by process (medians) and API requests (first run)\n\n")
	w("terraform: Terraform without the provider; provider: every provider process of the step; mesh: the clusters' API servers and etcds.\n\n")
	w("| M | step | wall | terraform | provider | mesh | requests |\n|--:|---|--:|--:|--:|--:|---|\n")
	for _, r := range rows {
		for _, step := range []string{"floor-apply", "floor-list", "floor-delete", "plan", "apply", "noop-plan", "plan-norefresh", "destroy", "core-apply", "core-destroy"} {
			c := r.CPU[step]
			if c == nil {
				continue
			}
			tool := c["terraform"]
			if strings.HasPrefix(step, "floor") {
				tool = c["floor"]
			}
			w("| %d | %s | %.2f | %.1f | %.1f | %.1f | %s |\n", r.M, step, r.Seconds[step], tool, c["provider"], c["mesh"], verbs(r.Requests[step]))
		}
		if c := r.CPU["engine"]; c != nil {
			w("| %d | engine (apply+read+delete) | %.2f | %.1f | | %.1f | %s |\n", r.M,
				r.Seconds["engine-apply"]+r.Seconds["engine-read"]+r.Seconds["engine-delete"], c["engine"], c["mesh"], verbs(r.Requests["engine"]))
		}
	}
	w("\n(floor rows: the terraform column is the floor program's CPU; engine row: the engine program's.)\n")
	return b.String()
}

func distinct(rows []row) string {
	var parts []string
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("M=%d: %d resources, %d distinct objects", r.M, r.Resources, r.Objects))
	}
	return strings.Join(parts, "; ")
}

func verbs(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
