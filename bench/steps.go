package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// runResult is one run of one M. Steps: floor-apply, floor-list,
// floor-delete; engine-apply, engine-read, engine-delete (one process,
// whose CPU and requests are under "engine"); plan, apply, noop-plan,
// plan-norefresh, destroy; core-plan, core-apply, core-noop-plan,
// core-destroy.
type runResult struct {
	Load           float64 `json:"load"` // 1-minute load average at the start
	Resources      int     `json:"resources"`
	Objects        int     `json:"objects"`       // distinct objects in the clusters
	StateObjects   int     `json:"state_objects"` // inventory entries in state
	StateBytes     int     `json:"state_bytes"`
	InventoryBytes int     `json:"inventory_bytes"` // of which the objects attributes
	CoreStateBytes int     `json:"core_state_bytes"`
	// Wall time per step.
	Seconds map[string]float64 `json:"seconds"`
	// CPU seconds per step and process: terraform (without the provider),
	// provider, mesh (API servers and etcds), floor, engine.
	CPU map[string]map[string]float64 `json:"cpu_s"`
	// API requests served for our kinds, per step and verb.
	Requests map[string]map[string]int `json:"requests"`
	// Peak RSS (KiB) of the provider per Terraform step: the largest of
	// its processes.
	RSS map[string]int64 `json:"provider_maxrss_kib"`
}

func (r *runResult) cpu(step, who string, s float64) {
	if r.CPU[step] == nil {
		r.CPU[step] = map[string]float64{}
	}
	r.CPU[step][who] = s
}

func (r runResult) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "load %.1f, %d objects, state %d B", r.Load, r.StateObjects, r.StateBytes)
	for _, step := range stepOrder {
		if _, ok := r.Seconds[step]; !ok {
			continue
		}
		fmt.Fprintf(&b, "\n    %-15s %7.2fs", step, r.Seconds[step])
		if c := r.CPU[step]; c != nil {
			fmt.Fprintf(&b, "  cpu %s", formatCPU(c))
		}
		if q := r.Requests[step]; len(q) > 0 {
			fmt.Fprintf(&b, "  requests %v", q)
		}
	}
	if c := r.CPU["engine"]; c != nil {
		fmt.Fprintf(&b, "\n    engine (all)     cpu %s  requests %v", formatCPU(c), r.Requests["engine"])
	}
	return b.String()
}

var stepOrder = []string{"floor-apply", "floor-list", "floor-delete", "engine-apply", "engine-read", "engine-delete",
	"plan", "apply", "noop-plan", "plan-norefresh", "destroy", "core-plan", "core-apply", "core-noop-plan", "core-destroy"}

func formatCPU(c map[string]float64) string {
	var keys []string
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, c[k]))
	}
	return strings.Join(parts, ", ")
}

type toolResult struct {
	Objects int                `json:"objects"`
	Seconds map[string]float64 `json:"seconds"`
	Count   *int               `json:"count"`
	cpu     float64
}

// tool runs the floor or engine program with the configuration's flags.
func (b *bench) tool(path string, m int, args ...string) (toolResult, error) {
	var res toolResult
	args = append([]string{"-kubeconfig", b.kubeconfig, "-clusters", strings.Join(b.o.clusters, ","), "-intents", strconv.Itoa(m)}, args...)
	cmd := exec.Command(path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("%s %s: %w", filepath.Base(path), strings.Join(args, " "), err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return res, json.Unmarshal(out.Bytes(), &res)
}

func (b *bench) floorRun(m int, ops, fingerprints string) (toolResult, error) {
	return b.tool(b.o.floor, m, "-concurrency", strconv.Itoa(b.o.concurrency), "-ops", ops, "-fingerprints", fingerprints,
		"-rendered", b.renderedFile(m))
}

// renderedFile holds what gen.Render returned for M (runOnce writes it):
// the floor reads it instead of rendering again at every invocation.
func (b *bench) renderedFile(m int) string {
	return filepath.Join(b.o.work, fmt.Sprintf("m%d", m), "rendered.json")
}

// measured runs fn as one step: its CPU use by the clusters and the API
// requests they served.
func (b *bench) measured(res *runResult, step string, fn func() error) error {
	mesh0, req0 := b.meshCPU(), b.requests()
	err := fn()
	res.cpu(step, "mesh", b.meshCPU()-mesh0)
	res.Requests[step] = diffRequests(b.requests(), req0)
	return err
}

func (b *bench) runOnce(m, r int) (runResult, error) {
	res := runResult{Load: loadAverage(), Seconds: map[string]float64{}, CPU: map[string]map[string]float64{},
		Requests: map[string]map[string]int{}, RSS: map[string]int64{}}
	dir := filepath.Join(b.o.work, fmt.Sprintf("m%d", m))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	spec := gen.Generate(m, gen.Clusters(b.o.clusters))
	rendered, err := b.render(m)
	if err != nil {
		return res, err
	}
	res.Resources = spec.Intents()

	// 1. The floor.
	floorStep := func(step, ops, fingerprints string) (toolResult, error) {
		var f toolResult
		err := b.measured(&res, step, func() (err error) {
			f, err = b.floorRun(m, ops, fingerprints)
			return err
		})
		res.cpu(step, "floor", f.cpu)
		return f, err
	}
	floorFP := filepath.Join(dir, "floor.fingerprints")
	f, err := floorStep("floor-apply", "apply", "")
	if err != nil {
		return res, err
	}
	res.Objects, res.Seconds["floor-apply"] = f.Objects, f.Seconds["apply"]
	if f, err = floorStep("floor-list", "list,fingerprint", floorFP); err != nil {
		return res, err
	}
	res.Seconds["floor-list"] = f.Seconds["list"]
	if f, err = floorStep("floor-delete", "delete,count", ""); err != nil {
		return res, err
	}
	res.Seconds["floor-delete"] = f.Seconds["delete"]
	if *f.Count != 0 {
		return res, fmt.Errorf("the floor left %d objects behind", *f.Count)
	}

	// 2. The engine alone.
	var e toolResult
	err = b.measured(&res, "engine", func() (err error) {
		e, err = b.tool(b.o.engine, m, "-parallelism", strconv.Itoa(b.o.parallelism))
		return err
	})
	if err != nil {
		return res, err
	}
	res.cpu("engine", "engine", e.cpu)
	for _, op := range []string{"apply", "read", "delete"} {
		res.Seconds["engine-"+op] = e.Seconds[op]
	}
	if left, err := b.floorRun(m, "count", ""); err != nil || *left.Count != 0 {
		return res, fmt.Errorf("the engine left objects behind (%v)", err)
	}

	// 3. Terraform with the provider.
	for _, name := range []string{"terraform.tfstate", "terraform.tfstate.backup", "tfplan", "applied.tfstate"} {
		_ = os.Remove(filepath.Join(dir, name))
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(spec.HCL(b.kubeconfig)), 0o644); err != nil {
		return res, err
	}
	tf := func(step string, args ...string) error {
		usage := filepath.Join(dir, fmt.Sprintf("rusage-%d-%s.jsonl", r, step))
		_ = os.Remove(usage)
		return b.measured(&res, step, func() error {
			secs, total, err := b.terraform(dir, usage, step, args...)
			if err != nil {
				return fmt.Errorf("%s: %w", step, err)
			}
			rss, cpu, err := readUsage(usage)
			if err != nil {
				return fmt.Errorf("%s: %w", step, err)
			}
			res.Seconds[step], res.RSS[step] = secs, rss
			res.cpu(step, "provider", cpu)
			res.cpu(step, "terraform", total-cpu)
			return nil
		})
	}
	p := "-parallelism=" + strconv.Itoa(b.o.parallelism)
	if err := tf("plan", "plan", "-input=false", p, "-out=tfplan"); err != nil {
		return res, err
	}
	if err := tf("apply", "apply", "-input=false", p, "tfplan"); err != nil {
		return res, err
	}
	if err := b.checkState(dir, rendered, &res); err != nil {
		return res, err
	}
	if err := copyFile(filepath.Join(dir, "terraform.tfstate"), filepath.Join(dir, "applied.tfstate")); err != nil {
		return res, err
	}
	tfFP := filepath.Join(dir, "terraform.fingerprints")
	if _, err := b.floorRun(m, "fingerprint", tfFP); err != nil {
		return res, err
	}
	if err := sameFile(floorFP, tfFP); err != nil {
		return res, fmt.Errorf("the provider and the floor wrote different objects: %w", err)
	}
	// -detailed-exitcode: exit 0 is no changes, 2 is changes.
	if err := tf("noop-plan", "plan", "-input=false", p, "-detailed-exitcode"); err != nil {
		return res, err
	}
	if err := tf("plan-norefresh", "plan", "-input=false", p, "-detailed-exitcode", "-refresh=false"); err != nil {
		return res, err
	}
	if err := tf("destroy", "destroy", "-input=false", p, "-auto-approve"); err != nil {
		return res, err
	}
	if left, err := b.floorRun(m, "count", ""); err != nil || *left.Count != 0 {
		return res, fmt.Errorf("destroy left objects behind (%v)", err)
	}

	// 4. Terraform alone.
	if b.o.tfCore {
		if err := b.terraformCore(dir, &res); err != nil {
			return res, fmt.Errorf("terraform-core: %w", err)
		}
	}
	return res, nil
}

// terraform runs one command in dir, and returns its wall time and the CPU
// time of Terraform with its descendants (the launchers and through them
// the provider processes: wait4's usage includes reaped descendants).
func (b *bench) terraform(dir, usage, step string, args ...string) (float64, float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "terraform", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+b.cliConfig(),
		"TF_DATA_DIR="+filepath.Join(dir, ".terraform"),
		"TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_PLUGIN_CACHE_DIR=",
		"MESH_BENCH_PROVIDER="+b.o.provider,
		"MESH_BENCH_RUSAGE="+usage,
	)
	if d := os.Getenv("MESH_BENCH_PROFILE_DIR"); d != "" {
		// Read by bench/profprovider: a CPU profile per provider process.
		cmd.Env = append(cmd.Env, "MESH_BENCH_CPUPROFILE="+filepath.Join(d, strings.TrimSuffix(filepath.Base(usage), ".jsonl")))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	secs := time.Since(start).Seconds()
	_ = os.WriteFile(filepath.Join(dir, "last-"+step+".log"), out.Bytes(), 0o644)
	if err != nil {
		tail := out.String()
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		return 0, 0, fmt.Errorf("terraform %s: %v:\n%s", strings.Join(args, " "), err, tail)
	}
	var cpu float64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return secs, cpu, nil
}

// terraformCore measures Terraform alone on the same resources and about
// the same state: one terraform_data per resource of the provider's
// applied state, whose triggers_replace holds that resource's attributes as
// JSON text, indented as in the state file. (As a value of its own, a
// terraform_data argument would be stored with its type, which for HCL's
// tuples repeats every element's, and the state would be much larger.)
// There is no provider process and no cluster: what the provider's times
// exceed these by is the provider's and the clusters' share.
func (b *bench) terraformCore(dir string, res *runResult) error {
	raw, err := os.ReadFile(filepath.Join(dir, "applied.tfstate"))
	if err != nil {
		return err
	}
	var state struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Attributes map[string]any `json:"attributes"`
			}
		}
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		return err
	}
	resources := map[string]any{}
	for _, rs := range state.Resources {
		for _, inst := range rs.Instances {
			text, err := json.MarshalIndent(inst.Attributes, "          ", "  ")
			if err != nil {
				return err
			}
			resources[rs.Type+"__"+rs.Name] = map[string]any{"triggers_replace": string(text)}
		}
	}
	config, err := json.MarshalIndent(map[string]any{"resource": map[string]any{"terraform_data": resources}}, "", "  ")
	if err != nil {
		return err
	}
	core := filepath.Join(dir, "terraform-core")
	_ = os.RemoveAll(core)
	if err := os.MkdirAll(core, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(core, "main.tf.json"), config, 0o644); err != nil {
		return err
	}
	step := func(name string, args ...string) error {
		secs, cpu, err := b.terraform(core, filepath.Join(core, "unused.jsonl"), name, args...)
		res.Seconds[name] = secs
		res.cpu(name, "terraform", cpu)
		return err
	}
	p := "-parallelism=" + strconv.Itoa(b.o.parallelism)
	if err := step("core-init", "init", "-input=false"); err != nil {
		return err
	}
	delete(res.Seconds, "core-init")
	if err := step("core-plan", "plan", "-input=false", p, "-out=tfplan"); err != nil {
		return err
	}
	if err := step("core-apply", "apply", "-input=false", p, "tfplan"); err != nil {
		return err
	}
	if st, err := os.Stat(filepath.Join(core, "terraform.tfstate")); err == nil {
		res.CoreStateBytes = int(st.Size())
	}
	if err := step("core-noop-plan", "plan", "-input=false", p, "-detailed-exitcode"); err != nil {
		return err
	}
	return step("core-destroy", "destroy", "-input=false", p, "-auto-approve")
}

// checkState compares state with the floor's rendering (every intent's
// inventory: objects and digests) and measures it.
func (b *bench) checkState(dir string, rendered *gen.Rendered, res *runResult) error {
	raw, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if err != nil {
		return err
	}
	res.StateBytes = len(raw)
	var state map[string]any
	if err := json.Unmarshal(raw, &state); err != nil {
		return err
	}
	got := map[string][]string{}
	resources, _ := state["resources"].([]any)
	for _, rs := range resources {
		rm := rs.(map[string]any)
		kind := strings.ReplaceAll(strings.TrimPrefix(rm["type"].(string), "mesh_"), "_", "-")
		for _, inst := range rm["instances"].([]any) {
			attrs := inst.(map[string]any)["attributes"].(map[string]any)
			key := kind + "/" + fmt.Sprint(attrs["name"])
			objs, _ := attrs["objects"].(map[string]any)
			for k, v := range objs {
				digest, _ := v.(string)
				e, err := engine.EntryFromStateKey(k, digest)
				if err != nil {
					return err
				}
				got[key] = append(got[key], fmt.Sprintf("%s %s %s/%s %s", e.Cluster, e.Kind, e.Namespace, e.Name, e.Digest))
				res.StateObjects++
			}
			attrs["objects"] = map[string]any{}
		}
	}
	// The bytes the inventories take in the file: the state re-encoded as
	// Terraform writes it (two-space indentation), with and without them.
	var full any
	if err := json.Unmarshal(raw, &full); err != nil {
		return err
	}
	with, _ := json.MarshalIndent(full, "", "  ")
	without, _ := json.MarshalIndent(state, "", "  ")
	res.InventoryBytes = len(with) - len(without)

	want := map[string][]string{}
	for _, o := range rendered.Inventory {
		key := o.Kind + "/" + o.Name
		for _, e := range o.Entries {
			want[key] = append(want[key], fmt.Sprintf("%s %s %s/%s %s", e.Cluster, e.Kind, e.Namespace, e.Name, e.Digest))
		}
	}
	var problems []string
	for key, w := range want {
		g := got[key]
		sort.Strings(g)
		sort.Strings(w)
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			problems = append(problems, fmt.Sprintf("%s: state %v, floor %v", key, g, w))
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			problems = append(problems, key+": in state only")
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		if len(problems) > 5 {
			problems = append(problems[:5], fmt.Sprintf("... and %d more", len(problems)-5))
		}
		return fmt.Errorf("state and the floor's rendering disagree:\n%s", strings.Join(problems, "\n"))
	}
	return nil
}

func copyFile(from, to string) error {
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, raw, 0o644)
}

func sameFile(a, b string) error {
	x, err := os.ReadFile(a)
	if err != nil {
		return err
	}
	y, err := os.ReadFile(b)
	if err != nil {
		return err
	}
	if bytes.Equal(x, y) {
		return nil
	}
	xl, yl := strings.Split(string(x), "\n"), strings.Split(string(y), "\n")
	for i := 0; i < len(xl) && i < len(yl); i++ {
		if xl[i] != yl[i] {
			return fmt.Errorf("first difference: floor %q, provider %q (diff %s %s)", xl[i], yl[i], a, b)
		}
	}
	return fmt.Errorf("the floor wrote %d objects, the provider %d", len(xl)-1, len(yl)-1)
}
