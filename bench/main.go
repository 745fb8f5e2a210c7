// Command bench measures the provider against the raw server-side-apply
// floor (make bench; docs/performance.md explains the numbers).
//
// It starts a local mesh, and for each M in -intents and each run:
//
//  1. the floor program (bench/floor) applies the objects of a generated
//     configuration of M intents, lists them back, records a fingerprint of
//     every object and deletes them;
//  2. real Terraform, with the provider behind a dev_overrides CLI config,
//     creates the same configuration: plan -out, apply of that plan, state
//     size, a no-op plan (refresh included; it must report no changes), a
//     plan with -refresh=false, and destroy.
//
// After apply it checks that state lists exactly the objects and digests
// the floor rendered, and that the objects in the clusters are identical
// (labels, annotations, spec, data) to what the floor wrote. The provider
// runs under bench/launcher, which records its peak RSS and CPU time.
// It prints one table of medians.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

type options struct {
	intents     []int
	runs        []int
	clusters    []string
	parallelism int
	concurrency int
	work        string
	binDir      string
	launcherDir string
	provider    string
	floor       string
	budget      time.Duration
	tfCore      bool
	kubeconfig  string // use a running mesh instead of starting one
}

func main() {
	var o options
	intents := flag.String("intents", "10,100,500", "comma-separated M values")
	runs := flag.String("runs", "3,3,3", "runs per M (comma-separated, one per M; the last repeats)")
	clusters := flag.String("clusters", "east,west,onprem", "clusters of the local mesh")
	flag.IntVar(&o.parallelism, "parallelism", 10, "terraform -parallelism")
	flag.IntVar(&o.concurrency, "concurrency", 0, "floor requests in flight per cluster (default: -parallelism)")
	flag.StringVar(&o.work, "work", ".bench", "working directory (mesh data, configurations, states, results)")
	flag.StringVar(&o.binDir, "bin-dir", os.Getenv(localmesh.EnvBinDir), "local mesh binaries (tools/build-binaries.sh)")
	flag.StringVar(&o.launcherDir, "launcher-dir", "", "directory holding bench/launcher as terraform-provider-mesh (dev_overrides)")
	flag.StringVar(&o.provider, "provider", "", "the provider binary the launcher starts")
	flag.StringVar(&o.floor, "floor", "", "the bench/floor binary")
	flag.DurationVar(&o.budget, "budget", 25*time.Minute, "stop starting runs beyond the first of each M when this much time has passed")
	flag.BoolVar(&o.tfCore, "terraform-core", true, "also measure the terraform-core reference (terraform_data with the same state)")
	flag.StringVar(&o.kubeconfig, "use-kubeconfig", "", "use the clusters of this kubeconfig instead of starting a local mesh")
	flag.Parse()
	o.intents = ints(*intents)
	o.runs = ints(*runs)
	o.clusters = strings.Split(*clusters, ",")
	if o.concurrency == 0 {
		o.concurrency = o.parallelism
	}
	for _, p := range []*string{&o.work, &o.launcherDir, &o.provider, &o.floor} {
		if *p == "" {
			fatal(fmt.Errorf("-work, -launcher-dir, -provider and -floor are required"))
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			fatal(err)
		}
		*p = abs
	}
	if err := run(o); err != nil {
		fatal(err)
	}
}

func run(o options) error {
	began := time.Now()
	ctrllog.SetLogger(logr.Discard())
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	kubeconfig := o.kubeconfig
	if kubeconfig == "" {
		fmt.Fprintf(os.Stderr, "bench: starting local mesh %v\n", o.clusters)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		mesh, err := localmesh.Start(ctx, localmesh.Options{Clusters: o.clusters, Dir: filepath.Join(o.work, "mesh"), BinDir: o.binDir})
		cancel()
		if err != nil {
			return fmt.Errorf("starting the local mesh: %w", err)
		}
		stop := func() {
			if err := mesh.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "bench: stopping the local mesh:", err)
			}
		}
		defer stop()
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		go func() { <-sigs; stop(); os.Exit(130) }()
		kubeconfig = mesh.Kubeconfig()
		for _, c := range o.clusters {
			d, err := dynamic.NewForConfig(mesh.RESTConfig(c))
			if err != nil {
				return err
			}
			if err := ensureNamespaces(d, gen.Generate(0, gen.Clusters(o.clusters)).Namespaces); err != nil {
				return fmt.Errorf("cluster %s: %w", c, err)
			}
		}
		fmt.Fprintf(os.Stderr, "bench: local mesh ready after %s\n", time.Since(began).Round(time.Second))
	}
	b := &bench{o: o, kubeconfig: kubeconfig, metrics: map[string]*rest.Config{}}
	for _, c := range o.clusters {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: c}).ClientConfig()
		if err != nil {
			return err
		}
		b.metrics[c] = cfg
	}
	if err := b.writeCLIConfig(); err != nil {
		return err
	}
	// Warm up the API servers (each kind's first server-side apply builds
	// its field-management type information) before anything is timed.
	if _, err := b.floorRun(o.intents[0], "apply,delete", ""); err != nil {
		return err
	}
	var rows []row
	for i, m := range o.intents {
		n := o.runs[len(o.runs)-1]
		if i < len(o.runs) {
			n = o.runs[i]
		}
		var results []runResult
		for r := 0; r < n; r++ {
			if r > 0 && time.Since(began) > o.budget {
				fmt.Fprintf(os.Stderr, "bench: M=%d: time budget %s used up, %d run(s)\n", m, o.budget, r)
				break
			}
			res, err := b.runOnce(m, r)
			if err != nil {
				return fmt.Errorf("M=%d run %d: %w", m, r+1, err)
			}
			results = append(results, res)
			fmt.Fprintf(os.Stderr, "bench: M=%d run %d: %s\n", m, r+1, res.summary())
		}
		rows = append(rows, summarize(m, results))
	}
	table := renderTable(o, rows)
	fmt.Print(table)
	raw, _ := json.MarshalIndent(rows, "", "  ")
	_ = os.WriteFile(filepath.Join(o.work, "results.json"), raw, 0o644)
	_ = os.WriteFile(filepath.Join(o.work, "results.md"), []byte(table), 0o644)
	fmt.Fprintf(os.Stderr, "bench: done in %s; results in %s\n", time.Since(began).Round(time.Second), filepath.Join(o.work, "results.md"))
	return nil
}

func ensureNamespaces(d dynamic.Interface, names []string) error {
	for _, n := range append(names, "batch") {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": n}}}
		_, err := d.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(context.Background(), ns, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

type bench struct {
	o          options
	kubeconfig string
	metrics    map[string]*rest.Config
}

// requests counts the API requests the clusters have served for the kinds
// the provider writes (Istio's groups and ConfigMaps), by verb, from each
// API server's apiserver_request_total.
func (b *bench) requests() map[string]float64 {
	out := map[string]float64{}
	for _, c := range b.o.clusters {
		cfg := b.metrics[c]
		if cfg == nil {
			continue
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			continue
		}
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if !strings.HasPrefix(line, "apiserver_request_total{") {
				continue
			}
			if !strings.Contains(line, `group="networking.istio.io"`) && !strings.Contains(line, `group="security.istio.io"`) &&
				!(strings.Contains(line, `group=""`) && strings.Contains(line, `resource="configmaps"`)) {
				continue
			}
			i := strings.Index(line, `verb="`)
			j := strings.LastIndexByte(line, ' ')
			if i < 0 || j < 0 {
				continue
			}
			verb := line[i+6:]
			verb = verb[:strings.IndexByte(verb, '"')]
			n, _ := strconv.ParseFloat(line[j+1:], 64)
			out[verb] += n
		}
	}
	return out
}

func diffRequests(after, before map[string]float64) map[string]int {
	out := map[string]int{}
	for verb, n := range after {
		if d := int(n - before[verb]); d > 0 && verb != "WATCH" {
			out[verb] = d
		}
	}
	return out
}

func (b *bench) cliConfig() string { return filepath.Join(b.o.work, "terraformrc") }

func (b *bench) writeCLIConfig() error {
	rc := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"registry.terraform.io/mesh-intent/mesh\" = %q\n  }\n  direct {}\n}\n", b.o.launcherDir)
	return os.WriteFile(b.cliConfig(), []byte(rc), 0o644)
}

// runResult is one run of one M.
type runResult struct {
	Objects       int     `json:"objects"`
	Resources     int     `json:"resources"`
	FloorApply    float64 `json:"floor_apply_s"`
	FloorList     float64 `json:"floor_list_s"`
	FloorDelete   float64 `json:"floor_delete_s"`
	Plan          float64 `json:"plan_s"`
	Apply         float64 `json:"apply_s"`
	NoopPlan      float64 `json:"noop_plan_s"`
	PlanNoRefresh float64 `json:"plan_norefresh_s"`
	Destroy       float64 `json:"destroy_s"`
	// The terraform-core reference (see terraformCore).
	CorePlan       float64 `json:"core_plan_s"`
	CoreApply      float64 `json:"core_apply_s"`
	CoreNoop       float64 `json:"core_noop_plan_s"`
	CoreDestroy    float64 `json:"core_destroy_s"`
	CoreStateBytes int     `json:"core_state_bytes"`
	StateBytes     int     `json:"state_bytes"`
	InventoryBytes int     `json:"inventory_bytes"`
	StateObjects   int     `json:"state_objects"`
	// Provider process: peak RSS (KiB) over every process of the command,
	// and CPU seconds summed over them.
	RSS map[string]int64   `json:"provider_maxrss_kib"`
	CPU map[string]float64 `json:"provider_cpu_s"`
	// CPU seconds of Terraform itself (without the provider) and of the
	// local mesh's API servers and etcds, per step; for the floor, of the
	// floor program and the mesh.
	TerraformCPU map[string]float64 `json:"terraform_cpu_s"`
	MeshCPU      map[string]float64 `json:"mesh_cpu_s"`
	FloorCPU     map[string]float64 `json:"floor_cpu_s"`
	FloorMeshCPU map[string]float64 `json:"floor_mesh_cpu_s"`
	// API requests served for our kinds, by step and verb.
	Requests map[string]map[string]int `json:"requests"`
	// The 1-minute load average when the run started: other work on the
	// machine shows here.
	Load string `json:"load"`
}

func loadAverage() string {
	raw, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

func (r runResult) summary() string {
	var cpu []string
	for _, step := range []string{"plan", "apply", "noop-plan", "plan-norefresh", "destroy"} {
		cpu = append(cpu, fmt.Sprintf("%s tf %.1f/prov %.1f/mesh %.1f", step, r.TerraformCPU[step], r.CPU[step], r.MeshCPU[step]))
	}
	for _, step := range []string{"apply", "list", "delete"} {
		cpu = append(cpu, fmt.Sprintf("floor %s %.1f/mesh %.1f", step, r.FloorCPU[step], r.FloorMeshCPU[step]))
	}
	var req []string
	for _, step := range []string{"floor-apply", "floor-list", "floor-delete", "plan", "apply", "noop-plan", "plan-norefresh", "destroy"} {
		req = append(req, fmt.Sprintf("%s %v", step, r.Requests[step]))
	}
	return fmt.Sprintf("load %s; CPU s: %s\n    requests: %s\n    ", r.Load, strings.Join(cpu, "; "), strings.Join(req, "; ")) + fmt.Sprintf("floor apply %.2fs list %.2fs delete %.2fs | plan %.2fs apply %.2fs no-op plan %.2fs (-refresh=false %.2fs) destroy %.2fs | %d objects, state %d B | provider peak RSS %d MiB | terraform-core plan %.2fs apply %.2fs no-op plan %.2fs destroy %.2fs (state %d B; CPU apply %.1f destroy %.1f)",
		r.FloorApply, r.FloorList, r.FloorDelete, r.Plan, r.Apply, r.NoopPlan, r.PlanNoRefresh, r.Destroy, r.StateObjects, r.StateBytes, maxRSS(r.RSS)/1024,
		r.CorePlan, r.CoreApply, r.CoreNoop, r.CoreDestroy, r.CoreStateBytes, r.TerraformCPU["core-apply"], r.TerraformCPU["core-destroy"])
}

func maxRSS(m map[string]int64) int64 {
	var out int64
	for _, v := range m {
		out = max(out, v)
	}
	return out
}

type floorResult struct {
	Objects int                `json:"objects"`
	Writes  int                `json:"writes"`
	Seconds map[string]float64 `json:"seconds"`
	Count   *int               `json:"count"`
	cpu     float64
}

func (b *bench) floorRun(m int, ops string, fingerprints string) (floorResult, error) {
	var res floorResult
	cmd := exec.Command(b.o.floor, "-kubeconfig", b.kubeconfig, "-clusters", strings.Join(b.o.clusters, ","),
		"-intents", strconv.Itoa(m), "-concurrency", strconv.Itoa(b.o.concurrency), "-ops", ops, "-fingerprints", fingerprints)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("floor %s: %w", ops, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return res, json.Unmarshal(out.Bytes(), &res)
}

func (b *bench) runOnce(m, r int) (runResult, error) {
	var res runResult
	dir := filepath.Join(b.o.work, fmt.Sprintf("m%d", m))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	spec := gen.Generate(m, gen.Clusters(b.o.clusters))
	rendered, err := spec.Render()
	if err != nil {
		return res, err
	}
	res.Resources = spec.Intents()

	// The floor, on empty clusters.
	floorFP := filepath.Join(dir, "floor.fingerprints")
	res.FloorCPU, res.FloorMeshCPU = map[string]float64{}, map[string]float64{}
	res.Requests = map[string]map[string]int{}
	res.Load = loadAverage()
	floorStep := func(step, ops, fingerprints string) (floorResult, error) {
		mesh0, req0 := b.meshCPU(), b.requests()
		f, err := b.floorRun(m, ops, fingerprints)
		res.Requests["floor-"+step] = diffRequests(b.requests(), req0)
		res.FloorCPU[step], res.FloorMeshCPU[step] = f.cpu, b.meshCPU()-mesh0
		return f, err
	}
	f, err := floorStep("apply", "apply", "")
	if err != nil {
		return res, err
	}
	res.Objects, res.FloorApply = f.Objects, f.Seconds["apply"]
	if f, err = floorStep("list", "list,fingerprint", floorFP); err != nil {
		return res, err
	}
	res.FloorList = f.Seconds["list"]
	if f, err = floorStep("delete", "delete,count", ""); err != nil {
		return res, err
	}
	res.FloorDelete = f.Seconds["delete"]
	if *f.Count != 0 {
		return res, fmt.Errorf("the floor left %d objects behind", *f.Count)
	}

	// Terraform, on the same empty clusters.
	for _, name := range []string{"terraform.tfstate", "terraform.tfstate.backup", "tfplan", "main.tf"} {
		_ = os.Remove(filepath.Join(dir, name))
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(spec.HCL(b.kubeconfig)), 0o644); err != nil {
		return res, err
	}
	res.RSS, res.CPU = map[string]int64{}, map[string]float64{}
	res.TerraformCPU, res.MeshCPU = map[string]float64{}, map[string]float64{}
	tf := func(step string, wantExit int, args ...string) (float64, error) {
		usage := filepath.Join(dir, fmt.Sprintf("rusage-%d-%s.jsonl", r, step))
		_ = os.Remove(usage)
		mesh0, req0 := b.meshCPU(), b.requests()
		secs, total, err := b.terraform(dir, usage, wantExit, args...)
		res.Requests[step] = diffRequests(b.requests(), req0)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", step, err)
		}
		rss, cpu, err := readUsage(usage)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", step, err)
		}
		res.RSS[step], res.CPU[step] = rss, cpu
		res.TerraformCPU[step], res.MeshCPU[step] = total-cpu, b.meshCPU()-mesh0
		return secs, nil
	}
	p := "-parallelism=" + strconv.Itoa(b.o.parallelism)
	if res.Plan, err = tf("plan", 0, "plan", "-input=false", p, "-out=tfplan"); err != nil {
		return res, err
	}
	if res.Apply, err = tf("apply", 0, "apply", "-input=false", p, "tfplan"); err != nil {
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
	// -detailed-exitcode: 0 means no changes, 2 changes.
	if res.NoopPlan, err = tf("noop-plan", 0, "plan", "-input=false", p, "-detailed-exitcode"); err != nil {
		return res, err
	}
	if res.PlanNoRefresh, err = tf("plan-norefresh", 0, "plan", "-input=false", p, "-detailed-exitcode", "-refresh=false"); err != nil {
		return res, err
	}
	if res.Destroy, err = tf("destroy", 0, "destroy", "-input=false", p, "-auto-approve"); err != nil {
		return res, err
	}
	left, err := b.floorRun(m, "count", "")
	if err != nil {
		return res, err
	}
	if *left.Count != 0 {
		return res, fmt.Errorf("destroy left %d objects behind", *left.Count)
	}
	if b.o.tfCore {
		if err := b.terraformCore(dir, r, &res); err != nil {
			return res, fmt.Errorf("terraform-core reference: %w", err)
		}
	}
	return res, nil
}

// terraformCore measures Terraform itself on the same resources and state:
// one terraform_data per resource of the provider's applied state, whose
// triggers_replace holds that resource's attributes (as a string), so about
// as many state bytes and as many resources are planned, applied and
// destroyed, with no provider process and no cluster. What the provider's times exceed it by
// is the provider's and the clusters' share.
func (b *bench) terraformCore(dir string, r int, res *runResult) error {
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
	// Each resource's attributes as one string, indented as in the
	// provider's state, so the state holds about as many bytes. (As a
	// value of its own, a terraform_data argument would be stored with its
	// type, which for HCL's tuples lists every element again.)
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
	step := func(name string, args ...string) (float64, error) {
		secs, cpu, err := b.terraform(core, filepath.Join(core, "rusage.jsonl"), 0, args...)
		res.TerraformCPU["core-"+name] = cpu
		return secs, err
	}
	p := "-parallelism=" + strconv.Itoa(b.o.parallelism)
	if _, err := step("init", "init", "-input=false"); err != nil {
		return err
	}
	if res.CorePlan, err = step("plan", "plan", "-input=false", p, "-out=tfplan"); err != nil {
		return err
	}
	if res.CoreApply, err = step("apply", "apply", "-input=false", p, "tfplan"); err != nil {
		return err
	}
	if st, err := os.Stat(filepath.Join(core, "terraform.tfstate")); err == nil {
		res.CoreStateBytes = int(st.Size())
	}
	if res.CoreNoop, err = step("noop-plan", "plan", "-input=false", p, "-detailed-exitcode"); err != nil {
		return err
	}
	if res.CoreDestroy, err = step("destroy", "destroy", "-input=false", p, "-auto-approve"); err != nil {
		return err
	}
	return nil
}

// terraform runs one command in dir and returns its wall time.
func (b *bench) terraform(dir, usage string, wantExit int, args ...string) (float64, float64, error) {
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
		// Read by bench/profprovider: one CPU profile per provider process.
		cmd.Env = append(cmd.Env, "MESH_BENCH_CPUPROFILE="+filepath.Join(d, strings.TrimSuffix(filepath.Base(usage), ".jsonl")))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	secs := time.Since(start).Seconds()
	_ = os.WriteFile(filepath.Join(dir, "last-"+args[0]+".log"), out.Bytes(), 0o644)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return 0, 0, err
	}
	// wait4's usage of terraform includes its reaped descendants: the
	// launchers and, through them, the provider processes.
	var cpu float64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	if code != wantExit {
		tail := out.String()
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		return 0, 0, fmt.Errorf("terraform %s exited %d (want %d):\n%s", strings.Join(args, " "), code, wantExit, tail)
	}
	return secs, cpu, nil
}

// meshCPU is the CPU time (s) used so far by the local mesh's processes
// (kube-apiserver and etcd of every cluster): those whose command line
// mentions the mesh directory.
func (b *bench) meshCPU() float64 {
	dir := filepath.Join(b.o.work, "mesh") + string(filepath.Separator)
	if b.o.kubeconfig != "" {
		dir = filepath.Dir(b.o.kubeconfig) + string(filepath.Separator)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var ticks int64
	for _, p := range procs {
		cmdline, err := os.ReadFile(p + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		name := string(bytes.SplitN(cmdline, []byte{0}, 2)[0])
		if !strings.HasSuffix(name, "kube-apiserver") && !strings.HasSuffix(name, "etcd") {
			continue
		}
		stat, err := os.ReadFile(p + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: utime and
		// stime are the 12th and 13th.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			st, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + st
		}
	}
	return float64(ticks) / 100 // USER_HZ
}

func readUsage(path string) (int64, float64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("no provider usage recorded (is the launcher in dev_overrides?): %w", err)
	}
	var rss int64
	var cpu float64
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var u struct {
			MaxRSS int64   `json:"maxrss_kib"`
			User   float64 `json:"user_s"`
			Sys    float64 `json:"sys_s"`
		}
		if err := json.Unmarshal(line, &u); err != nil {
			return 0, 0, err
		}
		rss = max(rss, u.MaxRSS)
		cpu += u.User + u.Sys
	}
	return rss, cpu, nil
}

// checkState compares state with the rendered inventory and measures it.
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
		for _, inst := range rs.(map[string]any)["instances"].([]any) {
			attrs := inst.(map[string]any)["attributes"].(map[string]any)
			kind := strings.TrimPrefix(rs.(map[string]any)["type"].(string), "mesh_")
			kind = strings.ReplaceAll(kind, "_", "-")
			key := kind + "/" + fmt.Sprint(attrs["name"])
			objs, _ := attrs["objects"].([]any)
			for _, o := range objs {
				switch e := o.(type) {
				case map[string]any:
					got[key] = append(got[key], fmt.Sprintf("%s %s %s/%s %s", e["cluster"], e["kind"], e["namespace"], e["name"], e["digest"]))
				case string: // an inventory of one string per object
					got[key] = append(got[key], e)
				}
				res.StateObjects++
			}
			attrs["objects"] = []any{}
		}
	}
	// The bytes the inventories take in the file: the state re-encoded as
	// Terraform writes it (two-space indentation), with and without them.
	full, _ := json.MarshalIndent(mustUnmarshal(raw), "", "  ")
	without, _ := json.MarshalIndent(state, "", "  ")
	res.InventoryBytes = len(full) - len(without)

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
			problems = append(problems[:5], fmt.Sprintf("... %d more", len(problems)-5))
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

func mustUnmarshal(raw []byte) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
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
	return fmt.Errorf("floor wrote %d objects, provider %d", len(xl)-1, len(yl)-1)
}

// row is the medians of the runs of one M.
type row struct {
	M              int                `json:"m"`
	Runs           int                `json:"runs"`
	Objects        int                `json:"objects"`
	StateObjects   int                `json:"state_objects"`
	Median         map[string]float64 `json:"median"`
	StateBytes     int                `json:"state_bytes"`
	InventoryBytes int                `json:"inventory_bytes"`
	RSSKiB         map[string]int64   `json:"provider_maxrss_kib"`
	CPU            map[string]float64 `json:"provider_cpu_s"`
	Raw            []runResult        `json:"raw"`
}

func summarize(m int, rs []runResult) row {
	out := row{M: m, Runs: len(rs), Median: map[string]float64{}, RSSKiB: map[string]int64{}, CPU: map[string]float64{}, Raw: rs}
	if len(rs) == 0 {
		return out
	}
	out.Objects, out.StateObjects, out.StateBytes, out.InventoryBytes = rs[0].Objects, rs[0].StateObjects, rs[0].StateBytes, rs[0].InventoryBytes
	pick := map[string]func(runResult) float64{
		"floor_apply":  func(r runResult) float64 { return r.FloorApply },
		"floor_list":   func(r runResult) float64 { return r.FloorList },
		"floor_del":    func(r runResult) float64 { return r.FloorDelete },
		"plan":         func(r runResult) float64 { return r.Plan },
		"apply":        func(r runResult) float64 { return r.Apply },
		"noop":         func(r runResult) float64 { return r.NoopPlan },
		"norefresh":    func(r runResult) float64 { return r.PlanNoRefresh },
		"destroy":      func(r runResult) float64 { return r.Destroy },
		"core_plan":    func(r runResult) float64 { return r.CorePlan },
		"core_apply":   func(r runResult) float64 { return r.CoreApply },
		"core_noop":    func(r runResult) float64 { return r.CoreNoop },
		"core_destroy": func(r runResult) float64 { return r.CoreDestroy },
	}
	for k, f := range pick {
		var vs []float64
		for _, r := range rs {
			vs = append(vs, f(r))
		}
		out.Median[k] = median(vs)
	}
	for step := range rs[0].RSS {
		var rss []float64
		var cpu []float64
		for _, r := range rs {
			rss = append(rss, float64(r.RSS[step]))
			cpu = append(cpu, r.CPU[step])
		}
		out.RSSKiB[step] = int64(median(rss))
		out.CPU[step] = median(cpu)
	}
	return out
}

func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func renderTable(o options, rows []row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nterraform-provider-mesh vs. the server-side-apply floor: %d clusters (%s), terraform -parallelism=%d, floor %d requests in flight per cluster; medians; times in seconds\n\n",
		len(o.clusters), strings.Join(o.clusters, ","), o.parallelism, o.concurrency)
	b.WriteString("| M | runs | objects | plan | apply | floor apply | apply/floor | no-op plan | plan -refresh=false | floor list | refresh/floor | destroy | floor delete | state bytes | B/object | inventory B/object | provider peak RSS MiB | provider CPU s (apply) |\n")
	b.WriteString("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		md := r.Median
		var peak int64
		for _, v := range r.RSSKiB {
			peak = max(peak, v)
		}
		objs := max(r.StateObjects, 1)
		fmt.Fprintf(&b, "| %d | %d | %d | %.2f | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2f | %.1fx | %.2f | %.2f | %d | %d | %d | %.0f | %.1f |\n",
			r.M, r.Runs, r.StateObjects, md["plan"], md["apply"], md["floor_apply"], ratio(md["apply"], md["floor_apply"]),
			md["noop"], md["norefresh"], md["floor_list"], ratio(md["noop"], md["floor_list"]),
			md["destroy"], md["floor_del"], r.StateBytes, r.StateBytes/objs, r.InventoryBytes/objs,
			float64(peak)/1024, r.CPU["apply"])
	}
	b.WriteString("\nobjects: owned objects in state (distinct objects in the clusters are fewer: a traffic policy's contribution to a virtual destination's DestinationRule is listed by both).\n")
	b.WriteString("plan: terraform plan -out (create). apply: terraform apply of that plan. no-op plan: terraform plan with refresh on the applied state (no changes).\n")
	b.WriteString("B/object: state file bytes / owned objects; inventory B/object: bytes of the objects attributes in the state file / owned objects.\n")
	b.WriteString("provider peak RSS: largest ru_maxrss of any provider process in the run (see bench/launcher).\n")
	fmt.Fprintf(&b, "\nper-step provider peak RSS (MiB) and CPU (s):\n")
	for _, r := range rows {
		var steps []string
		for s := range r.RSSKiB {
			steps = append(steps, s)
		}
		sort.Strings(steps)
		var parts []string
		for _, s := range steps {
			parts = append(parts, fmt.Sprintf("%s %.0f MiB / %.1f s", s, float64(r.RSSKiB[s])/1024, r.CPU[s]))
		}
		fmt.Fprintf(&b, "  M=%d: %s\n", r.M, strings.Join(parts, ", "))
	}
	return b.String()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fatal(fmt.Errorf("bad number %q", f))
		}
		out = append(out, n)
	}
	return out
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
